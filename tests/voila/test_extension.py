"""The ``dpexplore.voila`` Jupyter server extension: declared, wired, and light to import.

A Jupyter server imports the extension at every start, so its import path must stay small: only
the standard library, tornado (which the server has already loaded) and ``dpexplore``'s own
package ``__init__`` files; never the widget stack (anywidget, ipywidgets), Voilà's app, numpy or
scipy. The install-time behaviour (enabled by installing the wheel, ``jupyter server extension
disable`` works, the route serves plotly.js in JupyterLab and Notebook 7) is tested on the
installed wheel in ``tests/browser/test_install_browser.py``.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
HEAVY = (
    "anywidget",
    "ipywidgets",
    "voila",
    "numpy",
    "scipy",
    "plotly",
    "IPython",
    "ipykernel",
    "jupyter_server",
    "nbconvert",
    "dpexplore.ui",
    "dpexplore.apps",
)

PROBE = r"""
import json, sys, time
import tornado.web  # a Jupyter server has it loaded before it imports its extensions
t0 = time.perf_counter(); import dpexplore; t1 = time.perf_counter()
before = set(sys.modules)
import dpexplore.voila.extension as ext
t2 = time.perf_counter()
ext.handlers("/")
print(json.dumps({"package": t1 - t0, "extension": t2 - t1, "new": sorted(set(sys.modules) - before),
                  "all": sorted(sys.modules)}))
"""


def _probe() -> dict:
    r = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _heavy(mods) -> list[str]:
    return [m for m in mods if m.split(".")[0] in HEAVY or m.startswith(HEAVY)]


def test_extension_points_and_config_file():
    import dpexplore.voila as dv
    from dpexplore.voila import extension

    assert dv._jupyter_server_extension_points() == [{"module": "dpexplore.voila.extension"}]
    assert callable(extension._load_jupyter_server_extension)
    cfg = json.loads((REPO / "jupyter-config/jupyter_server_config.d/dpexplore.json").read_text())
    assert cfg == {"ServerApp": {"jpserver_extensions": {"dpexplore.voila": True}}}
    # the data file is what the wheel installs into etc/jupyter/jupyter_server_config.d
    text = (REPO / "pyproject.toml").read_text()
    assert '"etc/jupyter/jupyter_server_config.d" = ["jupyter-config/jupyter_server_config.d/dpexplore.json"]' in text
    from dpexplore.ui.plotwidget import plotly_js_path

    assert extension.plotly_js_file() == plotly_js_path()


def test_extension_adds_nothing_heavy_to_the_package_import():
    """What ``import dpexplore.voila.extension`` adds to ``import dpexplore``: tornado and the
    standard library only (its time is measured in benchmarks/bench_core.py, section 6)."""
    out = _probe()
    assert not _heavy(out["new"]), _heavy(out["new"])
    assert all(
        m.split(".")[0] in ("dpexplore", "tornado", "__mp_main__") or m.split(".")[0] in sys.stdlib_module_names
        for m in out["new"]
    ), out["new"]


def test_extension_import_is_light_from_scratch():
    """From a fresh interpreter: nothing heavy at all (needs ``import dpexplore`` to be lazy)."""
    out = _probe()
    if "scipy" in out["all"] and "scipy" not in out["new"]:
        pytest.xfail(
            "`import dpexplore` itself still imports the backend eagerly (scipy); "
            "the extension adds nothing heavy (test above)"
        )
    assert not _heavy(out["all"]), _heavy(out["all"])
