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
ENTRY = plotly_js_path().parents[3] / "tools" / "plotly-bundle" / "entry.js"

#: notebook → (module, builder) of each dashboard in the gallery
BUILDERS = {
    "rdp_explorer.ipynb": ("rdp_explorer", "build_rdp_explorer"),
    "profile_gdp.ipynb": ("profile_gdp", "build_profile_gdp"),
    "composition_explorer.ipynb": ("composition_explorer", "build_composition_explorer"),
    "notion_converter.ipynb": ("notion_converter", "build_notion_converter"),
    "noise_lab.ipynb": ("noise_lab", "build_noise_lab"),
    "mechanisms_lab.ipynb": ("mechanisms_lab", "build_mechanisms_lab"),
    "local_vs_central.ipynb": ("local_vs_central", "build_local_vs_central"),
    "adaptive_lab.ipynb": ("adaptive_lab", "build_adaptive_lab"),
    "audit_lab.ipynb": ("audit_lab", "build_audit_lab"),
    "dpsgd_planner.ipynb": ("dpsgd_planner", "build_dpsgd_planner"),
    "mean_estimation_lab.ipynb": ("mean_estimation_lab", "build_mean_estimation_lab"),
    "filters_lab.ipynb": ("filters_lab", "build_filters_lab"),
    "down_sensitivity_lab.ipynb": ("down_sensitivity_lab", "build_down_sensitivity_lab"),
    "group_privacy_lab.ipynb": ("group_privacy_lab", "build_group_privacy_lab"),
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


@pytest.mark.parametrize(
    "setter",
    [
        lambda w: w.update(data=[{"type": "pie", "values": [1, 2]}]),
        lambda w: setattr(w, "data", [{"x": [1]}, {"type": "scatter3d", "x": [1]}]),
        lambda w: w.update_traces(0, type="histogram"),
    ],
)
def test_a_trace_type_outside_the_bundle_is_refused(setter):
    w = PlotlyWidget(data=[{"x": [1, 2], "y": [3, 4]}])
    before = [dict(t) for t in w.data]  # as the widget holds it (its line style handed out)
    with pytest.raises(ValueError, match="not in the served plotly.js bundle"):
        setter(w)
    assert w.data == before
    with pytest.raises(ValueError, match="'pie'"):
        PlotlyWidget(data=[{"type": "pie", "values": [1]}])


# -- plot arrays on the wire (float64 buffers, plotwidget.traces_to_wire) --------------------------


def _numbers_equal(a, b) -> bool:
    """Equal lists of numbers, ``None`` (a gap) where the other has ``None``; exact otherwise."""
    return len(a) == len(b) and all(
        (x is None and y is None) or (x is not None and y is not None and float(x) == float(y)) for x, y in zip(a, b)
    )


@pytest.mark.parametrize("notebook", sorted(BUILDERS))
def test_each_dashboards_plot_state_round_trips_exactly_with_its_numbers_in_buffers(notebook):
    """What the kernel sends for ``data`` (ipywidgets' state with buffers split off) is, decoded,
    every trace exactly as the kernel holds it, and no list of ≥ 16 numbers is left in the JSON."""
    import json

    from ipywidgets.widgets.widget import _remove_buffers

    module, builder = BUILDERS[notebook]
    app = getattr(importlib.import_module(f"dpexplore.apps.{module}"), builder)()
    for fig in _plot_widgets(app):
        state, paths, buffers = _remove_buffers(fig.get_state(["data"]))
        text = json.dumps(state)
        assert not re.search(r"\[(\s*-?[\d.e+-]+\s*,){15,}", text), (notebook, text[:300])
        for path, buf in zip(paths, buffers):  # put the buffers back, as the front end does
            node = state
            for p in path[:-1]:
                node = node[p]
            node[path[-1]] = buf
        back = plotwidget.traces_from_wire(state["data"])
        assert len(back) == len(fig.data)
        for got, want in zip(back, fig.data):
            assert set(got) == set(want)
            for k, v in want.items():
                if isinstance(v, list) and v and all(type(x) in (int, float) or x is None for x in v):
                    assert _numbers_equal(got[k], v), (notebook, want.get("name"), k)
                else:
                    assert got[k] == v, (notebook, want.get("name"), k)
    W.Widget.close_all()


def test_only_plain_number_lists_become_buffers():
    nums = [0.1 * i for i in range(20)]
    wire = plotwidget.traces_to_wire(
        [
            {
                "x": nums,
                "y": [None] * 3 + [float(i) for i in range(17)],
                "z": list(range(16)),
                "text": [str(i) for i in range(20)],  # a category axis: stays JSON
                "flags": [True] * 20,  # booleans are not numbers here
                "short": [1.0, 2.0],  # below the threshold
                "rows": [[1.0] * 20, [2.0] * 20],  # rows of numbers (a heatmap's z)
                "mixed": [["a"] * 20, [1.0] * 20],
                "marker": {"size": [3.0] * 16, "color": "#0072B2"},
            }
        ]
    )[0]
    as_f64 = {k for k, v in wire.items() if isinstance(v, dict) and set(v) == {plotwidget.WIRE_F64}}
    assert as_f64 == {"x", "y", "z"}
    assert wire["text"] == [str(i) for i in range(20)] and wire["flags"] == [True] * 20
    assert wire["short"] == [1.0, 2.0] and wire["mixed"][0] == ["a"] * 20
    assert [set(r) for r in wire["rows"]] == [{plotwidget.WIRE_F64}] * 2
    assert set(wire["mixed"][1]) == {plotwidget.WIRE_F64}
    assert set(wire["marker"]["size"]) == {plotwidget.WIRE_F64} and wire["marker"]["color"] == "#0072B2"
    back = plotwidget.traces_from_wire([wire])[0]
    assert back["x"] == nums and back["y"][:3] == [None] * 3 and back["z"] == [float(i) for i in range(16)]
    assert back["rows"] == [[1.0] * 20, [2.0] * 20] and back["mixed"] == [["a"] * 20, [1.0] * 20]


def test_the_front_end_turns_the_bytes_into_the_same_numbers():
    """plotwidget.js's decoder (run in node) on the bytes the kernel sends, at an odd offset in
    its buffer: the same float64 numbers, NaN as null, nested dicts too; other values untouched."""
    import json
    import shutil
    import subprocess

    import numpy as np

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    js = (plotly_js_path().parents[1] / "plotwidget.js").read_text(encoding="utf-8")
    code = js[js.index('const WIRE_F64 = "dpexplore_f64";') : js.index("function render(")]
    ys = [0.1, -1e-300, 5e300, None, 2.0**-1074, 1 / 3] * 3
    raw = np.array([np.nan if y is None else y for y in ys], dtype="<f8").tobytes()
    script = (
        code
        + f"""
const bytes = Uint8Array.from({list(raw)});
const padded = new Uint8Array(bytes.length + 3); padded.set(bytes, 3);
const data = [{{y: {{dpexplore_f64: new DataView(padded.buffer, 3, bytes.length)}},
               marker: {{size: {{dpexplore_f64: bytes.buffer}}, color: "red"}}, name: "a", x: [1, 2],
               z: [{{dpexplore_f64: bytes.buffer}}, [1, null]]}}];
unwireTraces({{get: () => data}});
process.stdout.write(JSON.stringify(data));
"""
    )
    out = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=60, check=True)
    got = json.loads(out.stdout)[0]
    assert _numbers_equal(got["y"], ys) and _numbers_equal(got["marker"]["size"], ys)
    assert [x is None for x in got["y"]] == [y is None for y in ys]
    assert _numbers_equal(got["z"][0], ys) and got["z"][1] == [1, None]
    assert got["marker"]["color"] == "red" and got["name"] == "a" and got["x"] == [1, 2]
