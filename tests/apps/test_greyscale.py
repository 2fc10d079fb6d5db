"""Curves are told apart by more than colour (a greyscale projector, a colour-blind reader): in
every figure of every app in ``dpexplore.apps.APPS``, two legend entries of different colours
differ in their dash pattern, marker symbol or bar pattern as well. The styles are handed out
centrally (:func:`dpexplore.ui.plotwidget.tell_apart`, applied to every ``PlotlyWidget``'s
traces); an app sets a style itself only where its meaning needs one.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from dpexplore.apps import APPS
from dpexplore.ui.plotwidget import PlotlyWidget, _colour_key, tell_apart

NB_DIR = pathlib.Path(__file__).resolve().parents[2] / "dpexplore" / "apps" / "notebooks"

#: figures whose meaning gives one style to curves of several colours, and why
BY_MEANING = {
    # dash = the conversion (improved solid, Mironov dotted), colour = the mechanism; each
    # mechanism's minimum is marked with its own symbol (diamond, square, circle)
    ("rdp_explorer.ipynb", "RDP → (ε, δ)"),
    # dotted = simulated, the exact curve of the same colour beside it solid, dashed or
    # dash-dotted: each simulated curve follows its exact one
    ("mechanisms_lab.ipynb", "Distribution of the largest error"),
    ("local_vs_central.ipynb", "Median: distribution of |error|"),
    # dashed = the closest μ-GDP curve of the curve of the same colour (the shared profile view,
    # as in explore()); the one-run and k-run curves themselves differ in dash (solid, dotted), and
    # each GDP curve runs beside its own
    ("composition_explorer.ipynb", "One run and k runs of the mechanism: privacy profile"),
}


def _build(nb: str):
    """The app a gallery notebook builds (its one cell: imports, then the build call)."""
    src = "".join(json.loads((NB_DIR / nb).read_text())["cells"][0]["source"]).strip().splitlines()
    ns: dict = {}
    exec("\n".join(src[:-1]), ns)  # noqa: S102 - the package's own notebook
    return eval(src[-1], ns)  # noqa: S307


def _look(trace: dict) -> tuple:
    """What a trace looks like without its colour."""
    kind = trace.get("type", "scatter")
    if kind == "bar":
        return ("bar", ((trace.get("marker") or {}).get("pattern") or {}).get("shape"))
    mode = trace.get("mode") or "lines"
    return (
        kind,
        (trace.get("line") or {}).get("dash", "solid") if "lines" in mode else None,
        str((trace.get("marker") or {}).get("symbol", "circle")) if "markers" in mode else None,
    )


def look_alikes(data: list[dict]) -> list[tuple[str, str]]:
    """Pairs of legend entries that differ only in colour."""
    shown = [
        (i, t)
        for i, t in enumerate(data)
        if t.get("showlegend", True) is not False
        and t.get("name")
        and t.get("visible", True) is True
        and t.get("type", "scatter") in ("scatter", "bar")
    ]
    out = []
    for a, (i, s) in enumerate(shown):
        for j, t in shown[a + 1 :]:
            if _colour_key(s, i) != _colour_key(t, j) and _look(s) == _look(t):
                out.append((s["name"], t["name"]))
    return out


def test_tell_apart_hands_out_styles_per_colour():
    blue, orange, green = "#0072B2", "#E69F00", "#009E73"
    data = [
        {"name": "a", "line": {"color": blue}},
        {"name": "b", "line": {"color": orange}},
        {"name": "a, again", "line": {"color": blue}},
        {"name": "c", "line": {"color": green, "dash": "solid"}},
        {"name": "p", "type": "bar", "marker": {"color": blue}},
        {"name": "q", "type": "bar", "marker": {"color": orange}},
        {"name": "m", "mode": "markers", "marker": {"color": orange, "symbol": "circle"}},
        {"name": "n", "mode": "markers", "marker": {"color": green}},
    ]
    out = tell_apart(data)
    assert [t["line"]["dash"] for t in out[:4]] == ["dash", "dot", "dash", "solid"]
    assert [t["marker"]["pattern"]["shape"] for t in out[4:6]] == ["", "/"]
    assert [t["marker"]["symbol"] for t in out[6:]] == ["circle", "square"]
    assert data[0] == {"name": "a", "line": {"color": blue}}  # the caller's traces are not changed
    assert look_alikes(out) == []
    assert look_alikes(data) != []


def test_a_widget_keeps_the_styles_through_updates():
    w = PlotlyWidget(
        data=[
            {"name": "a", "x": [0], "y": [0], "line": {"color": "#0072B2"}},
            {"name": "b", "x": [0], "y": [1], "line": {"color": "#E69F00"}},
        ]
    )
    assert [t["line"]["dash"] for t in w.data] == ["solid", "dash"]
    w.update_traces(1, line={"color": "#E69F00", "width": 3})
    assert w.data[1]["line"] == {"color": "#E69F00", "width": 3, "dash": "dash"}


@pytest.mark.parametrize("nb", [a[0] for a in APPS])
def test_every_figure_tells_its_curves_apart_without_colour(nb):
    app = _build(nb)
    problems = []
    for fig in app.figs:
        title = str((fig.plot_layout.get("title") or {}).get("text", ""))
        if any(nb == n and title.startswith(t) for n, t in BY_MEANING):
            continue
        same = look_alikes(fig.data)
        if same:
            problems.append(f"{title[:50]!r}: {same}")
    assert not problems, f"{nb}: legend entries that differ only in colour:\n  " + "\n  ".join(problems)
