"""Every notebook in notebooks/ runs headlessly and its saved widget state holds the plotted traces.

Parametrized over the files on disk, so dashboards added later are covered automatically. The
gallery registry ``dpexplore.apps.APPS`` must list every app notebook, and notebooks are
committed without outputs.
"""

from __future__ import annotations

import pathlib

import nbformat
import pytest
from nbclient import NotebookClient

from dpexplore.apps import APPS
from dpexplore.ui.plotwidget import saved_plot_states

NB_DIR = pathlib.Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(p.name for p in NB_DIR.glob("*.ipynb"))
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _plotly_widgets(nb) -> list[dict]:
    """States of the PlotlyWidgets saved in the notebook metadata."""
    return saved_plot_states(nb)


def _execute(name: str):
    nb = nbformat.read(NB_DIR / name, as_version=4)
    client = NotebookClient(
        nb, timeout=120, kernel_name="python3", store_widget_state=True, resources={"metadata": {"path": str(NB_DIR)}}
    )
    client.execute()
    return nb


def test_registry_lists_every_app_notebook():
    registered = [nb for nb, _, _ in APPS]
    assert len(set(registered)) == len(registered)
    for nb, title, desc in APPS:
        assert (NB_DIR / nb).is_file(), nb
        assert title.strip() and desc.strip()
    assert set(NOTEBOOKS) - {"index.ipynb"} == set(registered)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_without_outputs(name):
    nb = nbformat.read(NB_DIR / name, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, name
    assert WIDGET_STATE not in nb.metadata.get("widgets", {}), name


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_executes_and_saves_traces(name):
    nb = _execute(name)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.output_type != "error", f"{name}: {out.get('ename')}: {out.get('evalue')}"
            if out.output_type == "stream":
                assert "Traceback" not in out.text, name
    plots = _plotly_widgets(nb)
    if name == "index.ipynb":
        html = "".join(o.get("data", {}).get("text/html", "") for c in nb.cells for o in c.get("outputs", []))
        for app, _title, _ in APPS:
            assert f'href="{app}"' in html, app
        return
    assert plots, f"{name}: no PlotlyWidget in the saved widget state"
    for state in plots:
        assert state["data"], f"{name}: a PlotlyWidget without traces"
        for trace in state["data"]:
            xs, ys = trace.get("x"), trace.get("y")
            assert xs and ys and len(xs) == len(ys), f"{name}: trace without x/y data: {trace.get('name')}"
            assert any(v is not None for v in ys), f"{name}: trace with no finite y: {trace.get('name')}"


@pytest.mark.slow
def test_demo_traces_are_the_core_values():
    """The demo's saved curve is GaussianDPProfile(1).delta on its grid, to the last bit."""
    import numpy as np

    from dpexplore.apps import demo
    from dpexplore.accounting.profiles import GaussianDPProfile

    nb = _execute("demo.ipynb")
    (state,) = _plotly_widgets(nb)
    curve, marker = state["data"]
    x = np.array(curve["x"])
    np.testing.assert_array_equal(x, np.linspace(0, demo.EPS_PLOT_MAX, demo.N_POINTS))
    want = GaussianDPProfile(1.0).delta(x)
    got = np.array([np.nan if v is None else v for v in curve["y"]])
    np.testing.assert_array_equal(got[want > 0], want[want > 0])
    assert marker["y"][0] == pytest.approx(GaussianDPProfile(1.0).delta(marker["x"][0]), rel=1e-15)
