"""The demo dashboard in headless Chromium, served by ``dpexplore serve``.

Checks the plotted numbers against the core (dpexplore.GaussianDPProfile) after every action.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import numpy as np
import pytest

from dpexplore.apps import APPS, demo
from dpexplore.accounting.profiles import GaussianDPProfile

pytestmark = pytest.mark.browser

GRID = np.linspace(0.0, demo.EPS_PLOT_MAX, demo.N_POINTS)


def _assert_curve_is_gdp(trace: dict, mu: float) -> None:
    x = np.asarray(trace["x"], dtype=float)
    np.testing.assert_allclose(x, GRID, rtol=0, atol=1e-12)
    want = GaussianDPProfile(mu).delta(x)
    got = np.array([np.nan if v is None else v for v in trace["y"]], dtype=float)
    pos = want > 0
    np.testing.assert_allclose(got[pos], want[pos], rtol=1e-9)
    assert np.all(np.isnan(got[~pos]))


def _assert_marker(trace: dict, eps: float, mu: float) -> None:
    assert trace["x"][0] == pytest.approx(eps, rel=1e-9)
    assert trace["y"][0] == pytest.approx(GaussianDPProfile(mu).delta(eps), rel=1e-9)


def test_page_loads_with_the_core_values(open_app):
    app = open_app("demo.ipynb")
    plots = app.plots()
    assert len(plots) == 1 and len(plots[0]) == 2
    _assert_curve_is_gdp(plots[0][0], 1.0)
    _assert_marker(plots[0][1], 1.0, 1.0)
    assert app.message() == ""
    app.assert_no_traceback()
    assert not app.page.errors, app.page.errors


def test_sliders_redraw_with_the_core_values(open_app):
    app = open_app("demo.ipynb")
    app.press_slider("ε", "ArrowRight", 1)
    eps = 10 ** (1 / 50)  # one step of the log slider (50 steps per decade) from ε = 1
    _assert_marker(app.trace(0, 1), eps, 1.0)
    _assert_curve_is_gdp(app.trace(0, 0), 1.0)  # the curve does not depend on ε
    app.press_slider("ε", "ArrowLeft", 2)
    _assert_marker(app.trace(0, 1), 10 ** (-1 / 50), 1.0)
    # typed values: μ redraws the curve and the marker
    app.set_slider("μ", 2.5)
    _assert_curve_is_gdp(app.trace(0, 0), 2.5)
    _assert_marker(app.trace(0, 1), 10 ** (-1 / 50), 2.5)
    app.press_slider("μ", "ArrowRight", 1)  # step 0.05
    _assert_curve_is_gdp(app.trace(0, 0), 2.55)
    app.set_slider("ε", 3)
    # a log slider snaps typed values to its grid: 10^(j/50), 50 steps per decade
    _assert_marker(app.trace(0, 1), 10 ** (round(np.log10(3) * 50) / 50), 2.55)
    assert app.message() == ""


#: per trace of the first plot: plotly's visibility of it ("legendonly" when hidden from its legend)
_VISIBLE = "() => document.querySelector('.dpexplore-plot').data.map(t => t.visible === undefined ? true : t.visible)"


def _click_legend(app, i: int, want: list) -> None:
    """Click legend entry ``i`` and wait until the traces' visibility is ``want`` (plotly takes
    two clicks on the legend within its double-click delay for one double click: one at a time)."""
    app.page.locator(".dpexplore-plot .legendtoggle").nth(i).click()
    text = json.dumps(want, separators=(",", ":"))  # as JSON.stringify writes it
    app.page.wait_for_function(f"() => JSON.stringify(({_VISIBLE})()) === {json.dumps(text)}")
    app.page.wait_for_timeout(400)  # past plotly's double-click delay (300 ms)


def test_traces_hidden_from_the_legend_stay_hidden_after_a_step(open_app):
    """A trace hidden by a click on its legend entry stays hidden when a slider moves, whether its
    data changed or not: before, the step brought back the marker (a new trace: ε moved) and left
    the curve (unchanged) hidden."""
    app = open_app("demo.ipynb")
    assert app.page.locator(".dpexplore-plot .legendtoggle").count() == 2
    _click_legend(app, 0, ["legendonly", True])
    _click_legend(app, 1, ["legendonly", "legendonly"])
    app.press_slider("ε", "ArrowRight", 1)  # the marker's data change, the curve's do not
    assert app.page.evaluate(_VISIBLE) == ["legendonly", "legendonly"]
    app.set_slider("μ", 2.0)  # both change
    assert app.page.evaluate(_VISIBLE) == ["legendonly", "legendonly"]
    _click_legend(app, 1, ["legendonly", True])  # the marker shown again: and it stays shown
    app.press_slider("ε", "ArrowLeft", 1)
    assert app.page.evaluate(_VISIBLE) == ["legendonly", True]
    _click_legend(app, 0, [True, True])  # as the module's page was
    assert not app.page.errors, app.page.errors


def test_bad_value_shows_message_and_keeps_the_plot(open_app):
    app = open_app("demo.ipynb")
    app.set_slider("μ", 2.0)
    before = app.plots()
    app.set_slider("μ", "nine", expect_change=False)
    msg = app.message()
    assert "'nine' is not a number" in msg and "μ stays at 2" in msg
    assert app.plots() == before
    app.assert_no_traceback()
    # the page still works: a good value clears the message and redraws
    app.set_slider("μ", 3)
    assert app.message() == ""
    _assert_curve_is_gdp(app.trace(0, 0), 3.0)
    assert not app.page.errors, app.page.errors


def test_gallery_lists_the_apps_and_links_work(open_app, page, served):
    page.goto(served.base)  # / redirects to the gallery
    page.wait_for_selector(".dpexplore-gallery", timeout=60_000)
    assert page.url.endswith("/voila/render/index.ipynb")
    for nb, title, question in APPS:
        card = page.locator(f'.dpexplore-gallery a.dpexplore-card[href="{nb}"]')
        assert card.locator("b").inner_text().strip() == title
        assert card.locator("span").inner_text().strip() == question
    page.locator('.dpexplore-gallery a[href="demo.ipynb"]').click()
    page.wait_for_url("**/voila/render/demo.ipynb")
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length > 0", timeout=60_000)


@pytest.mark.parametrize(
    "path",
    [
        "api/kernels",
        "api/contents",
        "voila/api/contents/",
        "voila/api/contents/demo.ipynb",
        "api/sessions",
        "voila/files/demo.ipynb",
    ],
)
def test_admin_endpoints_are_not_exposed(served, path):
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(served.base + path, timeout=10)
    assert err.value.code in (403, 404, 405)


def test_plotly_js_is_served_compressed_and_cacheable(served):
    req = urllib.request.Request(
        served.base + "dpexplore/static/plotly.min.js?v=1", headers={"Accept-Encoding": "gzip"}
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        body = r.read()
        assert r.headers["Content-Encoding"] == "gzip"
        assert "immutable" in r.headers["Cache-Control"]
    assert 0 < len(body) < 2_500_000


# One small figure per trace type of the served bundle, and what plotly.js draws for it.
_DRAW_EACH_TYPE = """async () => {
  const specs = {
    scatter: [{type: "scatter", x: [1, 10, 100], y: [1e-3, 1e-2, 1e-1]}, ".scatterlayer .trace path.js-line"],
    bar: [{type: "bar", x: ["a", "b"], y: [2, 3]}, ".barlayer .trace .point path"],
    heatmap: [{type: "heatmap", z: [[1, 2], [3, 4]]}, ".heatmaplayer image"],
    contour: [{type: "contour", z: [[1, 2, 3], [2, 3, 4], [3, 4, 5]]}, ".contourlayer path"],
  };
  const out = {version: Plotly.version};
  for (const [kind, [trace, selector]] of Object.entries(specs)) {
    const div = document.createElement("div");
    document.body.appendChild(div);
    try {
      await Plotly.newPlot(div, [trace], {xaxis: {type: kind === "scatter" ? "log" : "-"},
                                          yaxis: {type: kind === "scatter" ? "log" : "-"}});
      out[kind] = [div._fullData[0].type, div.querySelectorAll(selector).length];
    } catch (e) {
      out[kind] = ["error: " + e, 0];
    }
    Plotly.purge(div);
    div.remove();
  }
  return out;
}"""


def test_the_served_bundle_draws_every_dashboard_trace_type(open_app):
    from dpexplore.ui.plotwidget import TRACE_TYPES, plotly_js_version

    app = open_app("demo.ipynb")
    got = app.page.evaluate(_DRAW_EACH_TYPE)
    assert got.pop("version") == plotly_js_version()
    assert set(got) == set(TRACE_TYPES)
    for kind, (full_type, drawn) in got.items():
        assert full_type == kind and drawn > 0, (kind, full_type, drawn)
    assert not app.page.errors, app.page.errors
