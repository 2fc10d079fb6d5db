"""The plotly.js bundle the dashboards load (``tools/plotly-bundle``) against what they draw.

The bundle holds only some trace types (``plotwidget.TRACE_TYPES``); a trace of another type would
not draw. These tests tie the three together: the bundle file, ``TRACE_TYPES`` and every trace each
dashboard builds. (tests/browser/test_demo_browser.py draws each type in Chromium.)
"""
from __future__ import annotations

import importlib
import re

import ipywidgets as W
import pytest

from dpexplore.apps import APPS
from dpexplore.ui import plotwidget
from dpexplore.ui.plotwidget import TRACE_TYPES, PlotlyWidget, plotly_js_path

BUNDLE = plotly_js_path().read_text(encoding="utf-8")
ENTRY = (plotly_js_path().parents[3] / "tools" / "plotly-bundle" / "entry.js")

#: notebook → (module, builder) of each dashboard in the gallery
BUILDERS = {
    "rdp_explorer.ipynb": ("rdp_explorer", "build_rdp_explorer"),
    "profile_vs_gdp.ipynb": ("profile_gdp", "build_profile_gdp"),
    "composition_explorer.ipynb": ("composition_explorer", "build_composition_explorer"),
    "notion_converter.ipynb": ("notion_converter", "build_notion_converter"),
    "noise_lab.ipynb": ("noise_lab", "build_noise_lab"),
    "mechanisms_in_action.ipynb": ("mechanisms_lab", "build_mechanisms_lab"),
    "local_vs_central.ipynb": ("mechanisms_lab", "build_local_vs_central"),
    "adaptive_data_analysis.ipynb": ("adaptive_lab", "build_adaptive_lab"),
    "auditing_lab.ipynb": ("audit_lab", "build_audit_lab"),
    "dpsgd_planner.ipynb": ("dpsgd_planner", "build_dpsgd_planner"),
    "mean_estimation.ipynb": ("mean_estimation_lab", "build_mean_estimation_lab"),
    "filters_lab.ipynb": ("filters_lab", "build_filters_lab"),
    "down_sensitivity.ipynb": ("down_sensitivity_lab", "build_down_sensitivity_lab"),
    "group_privacy.ipynb": ("group_privacy_lab", "build_group_privacy_lab"),
    "demo.ipynb": ("demo", "build_demo"),
}


def _plot_widgets(widget) -> list[PlotlyWidget]:
    if isinstance(widget, PlotlyWidget):
        return [widget]
    out = []
    for child in getattr(widget, "children", ()):
        out += _plot_widgets(child)
    return out


def test_the_bundle_registers_exactly_the_trace_types():
    registered = set(re.findall(r'moduleType:"trace",name:"(\w+)"', BUNDLE))
    assert registered == set(TRACE_TYPES)


def test_the_bundle_banner_names_its_plotly_version_and_licence():
    assert re.match(r"/\* plotly\.js v\d+\.\d+\.\d+ \(MIT license", BUNDLE)
    assert plotwidget.plotly_js_version() in plotwidget._PLOTLY_VERSION
    licence = plotly_js_path().with_name("LICENSE-plotly.js.txt").read_text(encoding="utf-8")
    assert "Plotly" in licence and "Permission is hereby granted" in licence


def test_the_bundle_is_small():
    # the point of the custom bundle: plotly's full plotly.min.js is 4.8 MB
    assert len(BUNDLE.encode()) < 1_600_000


@pytest.mark.skipif(not ENTRY.exists(), reason="tools/ is not in an installed package")
def test_the_build_entry_lists_the_same_trace_types():
    required = set(re.findall(r"require\('plotly\.js/lib/(\w+)'\)", ENTRY.read_text()))
    registered = (required - {"core"}) | {"scatter"}  # scatter is in plotly.js core
    assert registered == set(TRACE_TYPES)


def test_every_app_has_a_builder():
    assert set(BUILDERS) == {nb for nb, _, _ in APPS}


@pytest.mark.parametrize("notebook", sorted(BUILDERS))
def test_each_dashboard_draws_only_bundled_trace_types(notebook):
    module, builder = BUILDERS[notebook]
    app = getattr(importlib.import_module(f"dpexplore.apps.{module}"), builder)()
    figs = _plot_widgets(app)
    assert figs, f"{notebook}: no PlotlyWidget found"
    for fig in figs:
        for trace in fig.data:
            assert trace.get("type", "scatter") in TRACE_TYPES, (notebook, trace.get("name"))
    W.Widget.close_all()


@pytest.mark.parametrize("setter", [
    lambda w: w.update(data=[{"type": "pie", "values": [1, 2]}]),
    lambda w: setattr(w, "data", [{"x": [1]}, {"type": "scatter3d", "x": [1]}]),
    lambda w: w.update_traces(0, type="histogram"),
])
def test_a_trace_type_outside_the_bundle_is_refused(setter):
    w = PlotlyWidget(data=[{"x": [1, 2], "y": [3, 4]}])
    before = [dict(t) for t in w.data]   # as the widget holds it (its line style handed out)
    with pytest.raises(ValueError, match="not in the served plotly.js bundle"):
        setter(w)
    assert w.data == before
    with pytest.raises(ValueError, match="'pie'"):
        PlotlyWidget(data=[{"type": "pie", "values": [1]}])
