"""Builds dpexplore's two JavaScript assets into ``dpexplore/ui/static/`` when they are missing or
out of date; the one entry point of ``make setup``, of the package build (``setup.py``'s
``build_js`` step, run by ``pip install .``, ``pip install -e .``, ``python -m build``) and of a
person at a shell::

    python tools/build_js.py [--force] [--check]

The assets (neither is committed; both are package data, so wheels and sdists carry them):

* ``plotly-dpexplore.min.js``: plotly.js with only the dashboards' trace types, built by
  ``tools/plotly-bundle`` (``npm ci && npm run build``: plotly.js and esbuild pinned in its
  ``package-lock.json``); its license ``LICENSE-plotly.js.txt`` is committed;
* ``jupyter-widgets-offline.js`` and ``LICENSE-jupyter-widgets-offline.txt``: the offline widget
  bundle, made by ``tools/widgets-offline/vendor.py`` from pinned npm packages (``npm pack``).

Up to date means: ``static/built-from.json`` (written after each build, shipped with the assets)
records the SHA-256 of every input file and of every output, and they all still match. So an
sdist, which holds the inputs, the outputs and that record, installs without Node.js: nothing is
rebuilt. Where an asset is stale but there are no inputs or no npm to rebuild it (an sdist without
Node whose files were edited, say), the files present are used and a warning says so. Where an
asset is missing and cannot be built, the build stops with a message that says what to install.
``DPEXPLORE_SKIP_JS=1`` skips this step (the package then says, when an app first needs an asset,
how to build it).

Standard library only: it runs in pip's isolated build environment.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
STATIC = REPO / "dpexplore" / "ui" / "static"
RECORD = STATIC / "built-from.json"

#: name -> (input files, output files, command run in its folder)
ASSETS = {
    "plotly-bundle": (
        [
            "tools/plotly-bundle/entry.js",
            "tools/plotly-bundle/build.js",
            "tools/plotly-bundle/package.json",
            "tools/plotly-bundle/package-lock.json",
        ],
        ["dpexplore/ui/static/plotly-dpexplore.min.js"],
        "tools/plotly-bundle",
    ),
    "widgets-offline": (
        ["tools/widgets-offline/vendor.py", "tools/widgets-offline/OFL-1.1.txt"],
        ["dpexplore/ui/static/jupyter-widgets-offline.js", "dpexplore/ui/static/LICENSE-jupyter-widgets-offline.txt"],
        "tools/widgets-offline",
    ),
}

HOW = (
    "dpexplore's JavaScript assets are built with Node.js and npm (the npm registry is "
    "reached for the pinned packages): install Node.js >= 18 with npm, then install again (or "
    "run `make setup` or `python tools/build_js.py` in the checkout); or install dpexplore "
    "from an sdist or a wheel, which carry the built files. DPEXPLORE_SKIP_JS=1 installs "
    "without them (the apps then cannot draw)"
)


class BuildError(RuntimeError):
    """An asset is missing and cannot be built here."""


def _sha256(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _hashes(rels: list[str]) -> dict[str, str | None]:
    return {r: _sha256(REPO / r) if (REPO / r).is_file() else None for r in rels}


def _record() -> dict:
    try:
        return json.loads(RECORD.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def status(name: str) -> str:
    """``"up to date"``, ``"missing"`` (an output absent) or ``"stale"`` (present, but the record
    does not match the inputs and outputs on disk, or there is no record)."""
    inputs, outputs, _ = ASSETS[name]
    if not all((REPO / o).is_file() for o in outputs):
        return "missing"
    rec = _record().get(name)
    if (
        rec
        and rec.get("outputs") == _hashes(outputs)
        and (rec.get("inputs") == _hashes(inputs) or not all((REPO / i).is_file() for i in inputs))
    ):
        return "up to date"
    return "stale"


def _npm() -> str | None:
    return shutil.which("npm") if shutil.which("node") else None


def _run(name: str, npm: str, log) -> None:
    inputs, outputs, folder = ASSETS[name]
    cwd = REPO / folder
    if name == "plotly-bundle":
        cmds = [[npm, "ci", "--silent", "--no-audit", "--no-fund"], [npm, "run", "build", "--silent"]]
    else:
        cmds = [[sys.executable, "vendor.py"]]
    for cmd in cmds:
        shown = " ".join([pathlib.Path(cmd[0]).name, *cmd[1:]])
        log(f"dpexplore: building {name} in {folder}: {shown}")
        r = subprocess.run(cmd, cwd=cwd)
        if r.returncode != 0:
            raise BuildError(f"{name}: `{' '.join(cmd)}` in {folder} failed (exit {r.returncode})")
    missing = [o for o in outputs if not (REPO / o).is_file()]
    if missing:
        raise BuildError(f"{name}: the build did not write {', '.join(missing)}")
    rec = _record()
    rec[name] = {"inputs": _hashes(inputs), "outputs": _hashes(outputs)}
    RECORD.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def build(force: bool = False, log=print) -> list[str]:
    """Build every asset that is missing or stale (all with ``force``); returns the names built.
    Raises :class:`BuildError` when an asset is missing and cannot be built."""
    built = []
    for name, (inputs, outputs, _) in ASSETS.items():
        state = "stale" if force else status(name)
        if state == "up to date":
            names = ", ".join(pathlib.Path(o).name for o in outputs)
            log(f"dpexplore: {name} is up to date ({names})")
            continue
        npm = _npm()
        have_inputs = all((REPO / i).is_file() for i in inputs)
        if npm and have_inputs:
            _run(name, npm, log)
            built.append(name)
        elif state == "stale":
            why = "no Node.js/npm on PATH" if have_inputs else "its sources are not here"
            log(f"dpexplore: WARNING: {name} may be out of date but cannot be rebuilt ({why}); using the files present")
        else:
            why = "no Node.js/npm on PATH" if have_inputs else "its sources are not here"
            raise BuildError(f"{', '.join(outputs)} missing and cannot be built ({why}). {HOW}.")
    return built


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--force", action="store_true", help="rebuild even when up to date")
    ap.add_argument("--check", action="store_true", help="build nothing; exit 1 unless every asset is up to date")
    a = ap.parse_args(argv)
    if a.check:
        states = {n: status(n) for n in ASSETS}
        for n, s in states.items():
            print(f"{n}: {s}")
        return 0 if set(states.values()) == {"up to date"} else 1
    try:
        build(force=a.force)
    except BuildError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
