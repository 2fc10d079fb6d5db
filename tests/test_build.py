"""The JavaScript build step of the package build, and a package without its built assets.

* ``tools/build_js.py`` (run by ``setup.py`` before ``build`` and ``sdist``, and by ``make
  setup``) decides from its record of SHA-256s what to build: here on a small synthetic tree with
  ``npm`` and ``vendor.py`` replaced by a stand-in that writes the outputs (the real builds, npm
  and all, run in ``tests/browser/test_install_browser.py``'s clean-clone tests);
* a copy of the package without the built files imports ``dpexplore.ui.controls`` and an app
  module, and the first plot, export script or served bundle asked for raises
  ``MissingAssetError`` naming the fix (it was a ``FileNotFoundError`` at import).
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import toolkit

REPO = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture
def build_js(tmp_path, monkeypatch):
    """tools/build_js.py pointed at a synthetic tree in ``tmp_path`` whose inputs exist and whose
    builds are a stand-in (``calls`` lists the commands run)."""
    mod = toolkit.load_tool("build_js", "build_js_under_test")
    for inputs, _, _ in mod.ASSETS.values():
        for rel in inputs:
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_text(f"source of {rel}\n")
    (tmp_path / "dpexplore/ui/static").mkdir(parents=True)
    monkeypatch.setattr(mod, "REPO", tmp_path)
    monkeypatch.setattr(mod, "STATIC", tmp_path / "dpexplore/ui/static")
    monkeypatch.setattr(mod, "RECORD", tmp_path / "dpexplore/ui/static/built-from.json")
    monkeypatch.setattr(mod, "_npm", lambda: "/usr/bin/npm")
    calls: list[tuple[str, ...]] = []

    def fake_run(cmd, cwd):
        calls.append((pathlib.Path(cwd).name, *map(str, cmd[1:])))
        name = pathlib.Path(cwd).name  # the folder is named after its asset
        if cmd[1:] != ["ci", "--silent", "--no-audit", "--no-fund"]:  # npm ci writes no output
            for rel in mod.ASSETS[name][1]:
                (tmp_path / rel).write_text(f"built from {len(calls)}\n")
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(mod.subprocess, "run", fake_run)
    mod.calls = calls
    return mod


def test_builds_what_is_missing_then_only_what_changed(build_js, tmp_path):
    logs: list[str] = []
    assert build_js.status("plotly-bundle") == build_js.status("widgets-offline") == "missing"
    assert build_js.build(log=logs.append) == ["plotly-bundle", "widgets-offline"]
    assert build_js.calls == [
        ("plotly-bundle", "ci", "--silent", "--no-audit", "--no-fund"),
        ("plotly-bundle", "run", "build", "--silent"),
        ("widgets-offline", "vendor.py"),
    ]
    record = json.loads(build_js.RECORD.read_text())
    assert set(record) == {"plotly-bundle", "widgets-offline"}
    assert set(record["plotly-bundle"]["inputs"]) == {
        "tools/plotly-bundle/entry.js",
        "tools/plotly-bundle/build.js",
        "tools/plotly-bundle/package.json",
        "tools/plotly-bundle/package-lock.json",
    }
    # nothing changed: nothing is rebuilt
    del build_js.calls[:]
    assert build_js.build(log=logs.append) == [] and build_js.calls == []
    assert "dpexplore: plotly-bundle is up to date (plotly-dpexplore.min.js)" in logs
    # a changed input rebuilds that asset only; so does an output edited by hand
    (tmp_path / "tools/plotly-bundle/entry.js").write_text("another trace type\n")
    assert build_js.status("plotly-bundle") == "stale"
    assert build_js.status("widgets-offline") == "up to date"
    assert build_js.build(log=logs.append) == ["plotly-bundle"]
    (tmp_path / "dpexplore/ui/static/jupyter-widgets-offline.js").write_text("edited\n")
    assert build_js.build(log=logs.append) == ["widgets-offline"]
    assert build_js.build(force=True, log=logs.append) == ["plotly-bundle", "widgets-offline"]


def test_an_sdist_without_node_uses_the_files_it_carries(build_js, tmp_path, monkeypatch):
    build_js.build(log=lambda _: None)
    monkeypatch.setattr(build_js, "_npm", lambda: None)
    del build_js.calls[:]
    # what an sdist holds (inputs, outputs and record) is up to date: nothing to run, no Node
    logs: list[str] = []
    assert build_js.build(log=logs.append) == [] and build_js.calls == []
    # outputs and record without the inputs (a tree that ships only the package) too
    shutil.rmtree(tmp_path / "tools")
    assert build_js.status("plotly-bundle") == "up to date"
    # stale but not rebuildable here: the files present are used, with a warning
    (tmp_path / "dpexplore/ui/static/plotly-dpexplore.min.js").write_text("edited\n")
    assert build_js.build(log=logs.append) == []
    assert any(
        "WARNING: plotly-bundle may be out of date" in line and "sources are not here" in line for line in logs
    ), logs


def test_a_missing_asset_without_node_stops_the_build_saying_what_to_install(build_js, tmp_path, monkeypatch):
    monkeypatch.setattr(build_js, "_npm", lambda: None)
    with pytest.raises(build_js.BuildError) as e:
        build_js.build(log=lambda _: None)
    msg = str(e.value)
    assert "dpexplore/ui/static/plotly-dpexplore.min.js missing" in msg
    assert "no Node.js/npm on PATH" in msg and "install Node.js >= 18 with npm" in msg
    assert build_js.calls == []
    assert build_js.main(["--check"]) == 1


def test_a_package_without_its_built_assets_imports_and_says_how_to_build_them(tmp_path):
    """A copy of ``dpexplore/`` without the three built files (what ``pip install .`` gave before
    the build step): the UI modules import; the first use of an asset says what to run."""
    built = {
        "plotly-dpexplore.min.js",
        "jupyter-widgets-offline.js",
        "LICENSE-jupyter-widgets-offline.txt",
        "built-from.json",
    }
    shutil.copytree(
        REPO / "dpexplore",
        tmp_path / "dpexplore",
        ignore=lambda d, names: [n for n in names if n in built or n == "__pycache__"],
    )
    assert not (tmp_path / "dpexplore/ui/static/plotly-dpexplore.min.js").exists()
    code = """
import dpexplore.ui.controls, dpexplore.ui.offline, dpexplore.apps.rdp_explorer
from dpexplore.ui.plotwidget import MissingAssetError, PlotlyWidget, plotly_js_path
print(dpexplore.ui.controls.__file__)
for use in (lambda: PlotlyWidget(data=[{"x": [0, 1], "y": [1, 2]}]),
            dpexplore.ui.offline.widgets_js_path, plotly_js_path):
    try:
        use()
    except MissingAssetError as e:
        print("MissingAssetError:", e)
    else:
        print("no error")
"""
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    first, *errors = r.stdout.strip().splitlines()
    assert first.startswith(str(tmp_path / "dpexplore")), first
    assert len(errors) == 3 and all(e.startswith("MissingAssetError: ") for e in errors), errors
    assert "plotly-dpexplore.min.js is missing" in errors[0]
    assert "jupyter-widgets-offline.js is missing" in errors[1]
    for e in errors:
        assert "`make setup`" in e and "tools/build_js.py" in e and "Node.js and npm" in e
