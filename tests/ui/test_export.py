"""dpexplore.ui.export: an app's current figures as plotly Figures and as one offline HTML file."""

from __future__ import annotations

import pytest

pytest.importorskip("plotly")

from dpexplore.apps.demo import build_demo  # noqa: E402
from dpexplore.apps.rdp_explorer import build_rdp_explorer  # noqa: E402
from dpexplore.ui.export import plotly_widgets, to_plotly_figures, write_html  # noqa: E402


def test_figures_follow_the_app_state():
    app = build_rdp_explorer()
    figs = to_plotly_figures(app)
    assert len(figs) == len(app.figs) >= 2
    for fig, w in zip(figs, app.figs):
        assert len(fig.data) == len(w.data)
        assert list(fig.data[0].x) == w.data[0]["x"]
        ys = [v for v in fig.data[0].y if v is not None]
        assert ys and ys == [v for v in w.data[0]["y"] if v is not None]
    # a copy: changing the exported figure does not touch the app
    figs[0].data[0].name = "changed"
    assert app.figs[0].data[0].get("name") != "changed"


def test_controller_and_app_give_the_same_figures():
    app = build_demo()
    assert plotly_widgets(app) == plotly_widgets(app.controller) == app.figs


def test_write_html_is_standalone(tmp_path):
    app = build_demo()
    p = write_html(app, tmp_path / "demo.html", title="demo <figures>")
    text = p.read_text(encoding="utf-8")
    assert "<script src=" not in text  # plotly.js embedded: opens offline
    assert text.count("Plotly.newPlot") == len(app.figs)
    assert "demo &lt;figures&gt;" in text
    # each figure's config turns off plotly.js 4's upload to Plotly Cloud ("Share chart...")
    assert text.count('"showSendToCloud": false') == len(app.figs)
    assert text.count('"displaylogo": false') == len(app.figs)


def test_no_figures_is_a_clear_error():
    with pytest.raises(ValueError, match="no PlotlyWidget"):
        to_plotly_figures([])
