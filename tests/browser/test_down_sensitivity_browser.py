"""The down sensitivity lab (Steinke 2023b; Fang, Dong & Yi 2022) in headless Chromium, served by
``dpexplore serve``.

ONE page for the module's tests (page loads cost seconds on a busy machine). After every action
the plotted numbers — the exact distributions of the estimates, the loss and the shifted loss,
Figure 1 — and the readout are compared with :func:`compute_down_sensitivity_lab` evaluated here
for the new setting (everything is exact or seeded, so they agree to the last digit). Moving a
slider keeps every plot's height (±5 %); a bad typed value shows the message and keeps the plot.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from labkit import (
    close as _close,
    snap_log as _snap_log,
    type_value as _type,
    type_for_message as _type_for_message,
    shared_lab,
)

from dpexplore.apps import down_sensitivity_lab as DS

pytestmark = pytest.mark.browser

NOTEBOOK = "down_sensitivity_lab.ipynb"
RTOL = 1e-12
FLOOR = 1e-7  # the estimate plot draws probabilities below its log axis's floor here

HEIGHTS = """() => [...document.querySelectorAll('.dpexplore-plot')].filter(d => d.offsetParent !== null)
    .map(d => d.getBoundingClientRect().height)"""


def _choose(app, description: str, label: str) -> None:
    """Pick ``label`` in the dropdown ``description`` and wait for a redraw (ipywidgets write
    the options' spaces as no-break spaces)."""
    box = app.page.locator(".widget-dropdown").filter(has=app.page.locator(".widget-label", has_text=description))
    shown = label.replace(" ", "\xa0")
    if box.locator("select").evaluate("s => s.options[s.selectedIndex].text") == shown:
        return
    before = app.revisions()
    box.locator("select").select_option(label=shown)
    app._wait_redrawn(before)


#: slider label → the default setting's value
DEFAULTS = {
    "n [people]": 1000,
    "spread [units]": 30,
    "seed [random seed]": 0,
    "ε": 1,
    "β [failure probability]": 0.1,
    "B [naive clip bound]": 100,
}


def _reset(app) -> None:
    """Back to the default setting (the tests share one page; each starts from the defaults)."""
    _choose(app, "query f", "maximum")
    _choose(app, "data", "normal bulk")
    for label, value in DEFAULTS.items():
        _type(app, label, value)
    _check(app, DS.DownSensitivitySpec())


def _check(app, spec: DS.DownSensitivitySpec) -> DS.DownSensitivityResult:
    r = DS.compute_down_sensitivity_lab(spec)
    est, loss, fig1 = app.plots()
    assert len(est) == 6 and len(loss) == 4 and len(fig1) == 3
    lo, hi = r.window
    keep = (r.grid >= lo) & (r.grid <= hi)
    step = float(r.grid[1] - r.grid[0])
    _close(est[0]["x"], r.grid[keep])
    _close(est[0]["y"], np.maximum(r.pmf_em[keep], FLOOR))
    _close(est[1]["x"], r.grid[keep])
    _close(est[1]["y"], np.maximum(r.pmf_bs[keep], FLOOR))
    t = DS.curve_x(r)
    _close(est[2]["x"], t)
    _close(est[2]["y"], np.maximum(r.clip.pdf(t) * step, FLOOR))
    _close(est[3]["y"], np.maximum(r.glob.pdf(t) * step, FLOOR))
    _close(est[4]["x"], [r.f_value, r.f_value])
    _close(est[5]["x"], [r.low, r.low])
    i0, i1 = r.loss_window
    _close(loss[0]["x"], r.grid[i0:i1])
    _close(loss[0]["y"], r.loss[i0:i1])
    _close(loss[1]["y"], r.shifted[i0:i1])
    _close(loss[2]["y"], [r.tau, r.tau])
    _close(fig1[0]["y"], [32, 31, 26, 16, 6, 1, 0, 0])
    _close(fig1[1]["y"], [31, 26, 16, 6, 1, 0])
    text = app.body_text()
    fmt = DS.FORMAT[spec.query]
    assert f"f(x) = {r.f_value:{fmt}}" in text and f"τ = {r.tau}," in text
    assert f"exactly {r.acc_em:.4f}" in text and f"{r.acc_bs:.4f})" in text
    for st in r.stats:
        for v in (st.median, st.q05, st.q95, st.rmse):
            assert f"{v:{fmt}}" in text, v
    assert f"({spec.n:,} " in text
    assert app.message() == ""
    return r


_page = shared_lab(NOTEBOOK)


@pytest.fixture
def lab(_page):
    return _page.get()


def test_page_loads_with_the_core_values(lab):
    app = lab
    _check(app, DS.DownSensitivitySpec())
    text = app.body_text()
    assert "Steinke 2023b" in text and "Fang, Dong & Yi 2022" in text and "Theorem 4" in text
    assert all(h > 250 for h in app.page.evaluate(HEIGHTS))
    app.assert_no_traceback()
    assert not app.page.errors, app.page.errors


def test_every_slider_redraws_with_the_core_values_and_keeps_the_heights(lab):
    app = lab
    _reset(app)
    spec = DS.DownSensitivitySpec()
    heights = app.page.evaluate(HEIGHTS)
    assert heights and all(h > 250 for h in heights)

    def same_heights(what):
        now = app.page.evaluate(HEIGHTS)
        assert len(now) == len(heights)
        for h0, h in zip(heights, now):
            assert abs(h - h0) <= 0.05 * h0, f"after {what}: plot height {h0:.0f} → {h:.0f} px"

    steps = [
        ("n [people]", "n", int(_snap_log(250, DS.N_RANGE[0], 10, True))),
        ("spread [units]", "spread", 75.0),
        ("seed [random seed]", "seed", 5),
        ("ε", "eps", _snap_log(0.5, DS.EPS_RANGE[0], 20)),
        ("β [failure probability]", "beta", _snap_log(0.01, DS.BETA_RANGE[0], 5)),
        ("B [naive clip bound]", "bound", _snap_log(316.0, DS.BOUND_RANGE[0], 10)),
    ]
    for label, field, value in steps:
        _type(app, label, repr(value) if isinstance(value, float) and not value.is_integer() else value)
        spec = dataclasses.replace(spec, **{field: value})
        _check(app, spec)
        same_heights(label)
    # keyboard steps: the spread one grid step (1 unit) right, ε one step (1/20 decade) left
    app.press_slider("spread [units]", "ArrowRight")
    spec = dataclasses.replace(spec, spread=76.0)
    _check(app, spec)
    same_heights("an arrow key on spread")
    app.press_slider("ε", "ArrowLeft")
    spec = dataclasses.replace(spec, eps=_snap_log(10**-0.35, DS.EPS_RANGE[0], 20))
    _check(app, spec)
    same_heights("an arrow key on ε")
    # the dropdowns: the user-level sum, with one huge outlier
    _choose(app, "query f", "user-level sum")
    spec = dataclasses.replace(spec, query="user_sum")
    _check(app, spec)
    same_heights("the query")
    _choose(app, "data", "normal bulk + one huge outlier")
    spec = dataclasses.replace(spec, shape="outlier")
    r = _check(app, spec)
    assert r.f_value >= 100_000 and "true sum" in app.body_text()
    same_heights("the data")
    # the other tabs: their plots are drawn when shown, at a full height, and redraw on a step
    for tab in ("Loss of the data", "Figure 1"):
        app.page.locator(".dpexplore-main .lm-TabBar-tab", has_text=tab).click()
        app.page.wait_for_function(
            "() => [...document.querySelectorAll('.dpexplore-plot')]"
            ".filter(d => d.offsetParent !== null).every(d => d.classList.contains('js-plotly-plot'))"
        )
        app.settle()
        tab_heights = app.page.evaluate(HEIGHTS)
        assert len(tab_heights) == 1 and tab_heights[0] > 250
        if tab == "Loss of the data":
            _type(app, "n [people]", 1000)
            spec = dataclasses.replace(spec, n=1000)
            _check(app, spec)
            after = app.page.evaluate(HEIGHTS)
            assert abs(after[0] - tab_heights[0]) <= 0.05 * tab_heights[0]
    app.page.locator(".dpexplore-main .lm-TabBar-tab", has_text="Estimates").click()
    app.settle()
    assert not app.page.errors, app.page.errors


def test_bad_values_show_the_message_and_keep_the_plot(lab):
    app = lab
    _reset(app)
    before = app.plots()
    msg = _type_for_message(app, "ε", "abc", "not a number")
    assert "ε stays at 1" in msg
    assert app.plots() == before
    msg = _type_for_message(app, "n [people]", "12.5", "whole number")
    assert "n stays at 1,000" in msg
    assert app.plots() == before
    assert app.readout("n [people]") == "1,000" and app.readout("ε") == "1.00"
    app.assert_no_traceback()
    # beyond a slider's end: set to the end, with a note; then a good value clears the message
    _type(app, "B [naive clip bound]", "5000")
    assert "above the largest B (1,000): set to 1,000" in app.message()
    r = DS.compute_down_sensitivity_lab(DS.DownSensitivitySpec(bound=1000.0))
    _close(app.plots()[0][2]["y"], np.maximum(r.clip.pdf(DS.curve_x(r)), FLOOR))
    _type(app, "B [naive clip bound]", 100)
    _check(app, DS.DownSensitivitySpec())
    assert not app.page.errors, app.page.errors
