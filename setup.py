"""The package build runs ``tools/build_js.py`` first (everything else is in pyproject.toml).

A ``build_js`` step is added in front of setuptools' ``build`` sub-commands, which ``pip install .``
(a wheel), ``pip install -e .`` (an editable wheel) and ``python -m build --wheel`` all run, and in
front of ``sdist``, so that an sdist carries the built assets and installs without Node.js.
It builds only what is missing or out of date (see tools/build_js.py); ``DPEXPLORE_SKIP_JS=1``
skips it.
"""

import os
import pathlib
import sys

from setuptools import Command, setup
from setuptools.command.build import build
from setuptools.command.sdist import sdist

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "tools"))
import build_js  # noqa: E402


class BuildJS(Command):
    description = "build dpexplore's JavaScript assets (tools/build_js.py) when missing or stale"
    user_options = []
    editable_mode = False

    def initialize_options(self):
        pass

    def finalize_options(self):
        pass

    def run(self):
        if os.environ.get("DPEXPLORE_SKIP_JS") == "1":
            print("dpexplore: DPEXPLORE_SKIP_JS=1: the JavaScript assets are not built")
            return
        try:
            build_js.build()
        except build_js.BuildError as e:
            raise SystemExit(f"error: {e}") from None

    # the outputs are package data in the source tree, which build_py copies (or, for an
    # editable install, leaves where they are): nothing of this step's own to map
    def get_outputs(self):
        return []

    def get_output_mapping(self):
        return {}

    def get_source_files(self):
        return []


class BuildWithJS(build):
    sub_commands = [("build_js", None), *build.sub_commands]


class SdistWithJS(sdist):
    def run(self):
        self.run_command("build_js")
        super().run()


setup(cmdclass={"build_js": BuildJS, "build": BuildWithJS, "sdist": SdistWithJS})
