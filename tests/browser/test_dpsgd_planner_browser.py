"""The DP-SGD planner in headless Chromium, served by ``dpexplore serve``: the plotted curves and the
attack-risk plot are the planner's compute values for each setting, the σ button solves for the
target ε, plots keep their size, and a bad value leaves the plots as they were."""

from __future__ import annotations

import numpy as np
import pytest

from dpexplore.apps import dpsgd_planner as P

pytestmark = pytest.mark.browser

NB = "dpsgd_planner.ipynb"


def _y(trace) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in trace["y"]], dtype=float)


def _assert_planner(app, spec: P.PlannerSpec) -> None:
    r = P.compute_planner(spec)
    eps, risk = app.plots()
    assert [t["name"] for t in eps][:3] == ["tight (PLD)", "Rényi DP", "GDP approximation (not a guarantee)"]
    np.testing.assert_allclose(np.asarray(eps[0]["x"], float), r.epochs_grid, rtol=1e-12)
    for trace, want in zip(eps[:3], (r.eps_pld_curve, r.eps_rdp_curve, r.eps_gdp_curve)):
        np.testing.assert_allclose(_y(trace), want, rtol=1e-9)
    assert eps[3]["x"] == [spec.epochs] and eps[3]["y"][0] == pytest.approx(r.eps_pld, rel=1e-12)
    np.testing.assert_allclose(_y(risk[0]), r.roc_tpr, rtol=1e-9)
    np.testing.assert_allclose(_y(risk[2]), r.tpr, rtol=1e-12)
    text = app.body_text()
    assert f"T = {r.steps:,} steps" in text and f"{r.eps_pld:.4g}" in text


def _heights(app) -> list[float]:
    return app.page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')]
        .filter(d => d.offsetParent !== null).map(d => d.getBoundingClientRect().height)""")


def test_sliders_and_button_redraw_with_the_planners_values(open_app):
    app = open_app(NB)
    spec = P.PlannerSpec()
    _assert_planner(app, spec)
    h0 = _heights(app)
    assert h0 and min(h0) > 300
    app.set_slider("epochs", 20)
    spec = P.PlannerSpec(epochs=20)
    _assert_planner(app, spec)
    app.press_slider("σ", "ArrowRight", 1)  # one of 20 steps a decade: 10^(1/20)
    spec = P.PlannerSpec(epochs=20, sigma=float(f"{10 ** (1 / 20):.13g}"))
    _assert_planner(app, spec)
    app.set_slider("N", "1,000,000")
    spec = P.PlannerSpec(n=1_000_000, epochs=20, sigma=spec.sigma)
    _assert_planner(app, spec)
    h1 = _heights(app)
    assert len(h1) == len(h0) and all(abs(a - b) <= 0.05 * b for a, b in zip(h1, h0)), (h0, h1)
    # the button: the smallest slider σ that meets the target ε (here 1.0)
    readout = app.slider("target ε").locator(".widget-readout")
    readout.click()
    app.page.keyboard.press("Control+A")
    app.page.keyboard.type("1")
    app.page.keyboard.press("Enter")
    before = app.revisions()
    app.page.get_by_role("button", name="Set σ for the target ε").click()
    app._wait_redrawn(before)
    app.page.wait_for_function("() => document.body.innerText.includes('needs σ ≥')", timeout=30_000)
    sigma = float(app.readout("σ"))
    needed = P.sigma_for_target(P.PlannerSpec(n=1_000_000, epochs=20, target_eps=1.0))
    assert needed <= sigma * (1 + 1e-3) and sigma <= needed * 10 ** (1 / 20) * (1 + 1e-2)
    assert not app.page.errors, app.page.errors


def test_bad_value_shows_message_and_keeps_the_plots(open_app):
    app = open_app(NB)
    before = app.plots()
    app.set_slider("σ", "lots", expect_change=False)
    assert "'lots' is not a number" in app.message()
    assert app.plots() == before
    app.assert_no_traceback()
    app.set_slider("epochs", 5)
    assert app.message() == ""
    _assert_planner(app, P.PlannerSpec(epochs=5))
