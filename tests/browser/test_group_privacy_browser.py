"""The group-privacy lab (Pujol & Desfontaines 2023) in headless Chromium, served by ``dpexplore serve``.

ONE page for the module's tests (page loads cost seconds on a busy machine). After every action
the plotted numbers — the seeded histogram of Algorithm 1's output and its quadrature density,
the per-count ρ̂ curve against the proven ρ, D_α/α against α — and the readouts are compared with
:func:`compute_group_privacy_lab` evaluated here for the new setting (the sample is seeded and the
quadrature deterministic, so they agree to the last digit). Moving a slider keeps every plot's
height (±5 %); a bad typed value shows the message and keeps the plot.
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

from dpexplore.apps import group_privacy_lab as GP

pytestmark = pytest.mark.browser

NOTEBOOK = "group_privacy_lab.ipynb"
RTOL = 1e-12

HEIGHTS = """() => [...document.querySelectorAll('.dpexplore-plot')].filter(d => d.offsetParent !== null)
    .map(d => d.getBoundingClientRect().height)"""

SIGMA2 = "σ² [Gaussian noise variance]"
R = "r [relative noise]"
COUNT = "x [true count]"
MAX_COUNT = "curve up to [largest count]"
SEED = "seed [random seed]"
ALPHA = "largest order α"


def _positive(a):
    a = np.asarray(a, dtype=float)
    return np.where(a > 0, a, np.nan)


def _select(app, option: str) -> None:
    select = app.reveal(
        app.page.locator(".widget-dropdown", has=app.page.locator(".widget-label", has_text=ALPHA)).locator("select")
    )
    if select.evaluate("(s) => s.options[s.selectedIndex].text") == option:
        return
    before = app.revisions()
    select.select_option(label=option)
    app._wait_redrawn(before)


#: slider label → the default setting's value
DEFAULTS = {SIGMA2: 100, R: 0.3, COUNT: 10000, MAX_COUNT: 10000, SEED: 0}


def _reset(app) -> None:
    for label, value in DEFAULTS.items():
        _type(app, label, value)
    _select(app, "32")
    _check(app, GP.GroupPrivacySpec())


def _check(app, spec: GP.GroupPrivacySpec) -> GP.GroupPrivacyResult:
    r = GP.compute_group_privacy_lab(spec)
    output, curve, orders = app.plots()
    assert len(output) == 3 and len(curve) == 4 and len(orders) == 3
    _close(output[0]["x"], r.hist_centres)
    _close(output[0]["y"], r.hist_density)
    _close(output[1]["x"], r.density_y)
    _close(output[1]["y"], r.density)
    _close(output[2]["x"], [r.mean - r.std, r.mean, r.mean + r.std])
    _close(curve[0]["x"], r.counts)
    _close(curve[0]["y"], _positive(r.rho_hat))
    _close(curve[1]["y"], [r.rho, r.rho])
    _close(curve[2]["y"], r.reference)
    _close(curve[3]["x"], [spec.count])
    _close(curve[3]["y"], _positive([r.rho_hat_x]))
    al = np.asarray(GP.ORDERS)
    _close(orders[0]["x"], al)
    _close(orders[0]["y"], _positive(r.forward_x / (al * r.rho)))
    _close(orders[1]["y"], _positive(r.reverse_x / (al * r.rho)))
    _close(orders[2]["x"], [r.argmax_alpha_x])
    _close(orders[2]["y"], _positive([r.rho_hat_x / r.rho]))
    text = app.body_text()
    for s in (
        f"{r.mean:,.1f}",
        f"{r.std:,.1f}",
        f"{r.sample_mean:,.1f}",
        f"{r.sample_std:,.1f}",
        f"{r.rho:.4g}",
        f"{r.rho_hat_x:.4g}",
        f"± {r.rho_hat_x_error:.2g}",
        f"{r.rho_hat_x / r.rho:.4g}",
        f"α = {r.argmax_alpha_x:g}",
        f"x = {spec.count:,}",
        f"(seed {spec.seed})",
    ):
        assert s in text, s
    assert app.message() == ""
    return r


_page = shared_lab(NOTEBOOK)


@pytest.fixture
def lab(_page):
    return _page.get()


def test_page_loads_with_the_core_values(lab):
    app = lab
    r = _check(app, GP.GroupPrivacySpec())
    assert f"{r.mean:,.1f}" == "10,000.0" and f"{r.std:,.1f}" == "3,000.0"
    text = app.body_text()
    assert "Pujol & Desfontaines 2023" in text and "open problem" in text
    assert "not a privacy guarantee" in text and "Not a guarantee." in text
    assert all(h > 250 for h in app.page.evaluate(HEIGHTS))
    app.assert_no_traceback()
    assert not app.page.errors, app.page.errors


def test_every_control_redraws_with_the_core_values_and_keeps_the_heights(lab):
    app = lab
    _reset(app)
    spec = GP.GroupPrivacySpec()
    heights = app.page.evaluate(HEIGHTS)
    assert heights and all(h > 250 for h in heights)

    def same_heights(what):
        now = app.page.evaluate(HEIGHTS)
        assert len(now) == len(heights)
        for h0, h in zip(heights, now):
            assert abs(h - h0) <= 0.05 * h0, f"after {what}: plot height {h0:.0f} → {h:.0f} px"

    steps = [
        (SIGMA2, "sigma2", _snap_log(10.0, GP.SIGMA2_RANGE[0], 10)),
        (R, "r", 0.5),
        (COUNT, "count", int(_snap_log(1000, GP.COUNT_RANGE[0], 20, True))),
        (MAX_COUNT, "max_count", int(_snap_log(100000, GP.MAX_COUNT_RANGE[0], 2, True))),
        (SEED, "seed", 5),
    ]
    for label, field, value in steps:
        _type(app, label, repr(value) if isinstance(value, float) and not value.is_integer() else value)
        spec = dataclasses.replace(spec, **{field: value})
        _check(app, spec)
        same_heights(label)
    _select(app, "64")
    spec = dataclasses.replace(spec, alpha_max=64.0)
    _check(app, spec)
    same_heights("the largest order")
    # keyboard steps: the seed one step right, σ² one grid step (1/10 decade) left, r one step right
    app.press_slider(SEED, "ArrowRight")
    spec = dataclasses.replace(spec, seed=6)
    _check(app, spec)
    same_heights("an arrow key on the seed")
    app.press_slider(SIGMA2, "ArrowLeft")
    spec = dataclasses.replace(spec, sigma2=_snap_log(10**0.9, GP.SIGMA2_RANGE[0], 10))
    _check(app, spec)
    same_heights("an arrow key on σ²")
    app.press_slider(R, "ArrowRight")
    spec = dataclasses.replace(spec, r=0.55)
    _check(app, spec)
    same_heights("an arrow key on r")
    # the other tabs: their plots are drawn when shown, at a full height, and redraw on a step
    for title in ("ρ̂ against the count", "By order α"):
        app.page.locator(".dpexplore-main .lm-TabBar-tab", has_text=title).click()
        app.page.wait_for_function(
            "() => [...document.querySelectorAll('.dpexplore-plot')]"
            ".filter(d => d.offsetParent !== null).every(d => d.classList.contains('js-plotly-plot'))"
        )
        app.settle()
        tab_heights = app.page.evaluate(HEIGHTS)
        assert len(tab_heights) == 1 and tab_heights[0] > 250
        value = 3162 if spec.count != 3162 else 1000
        _type(app, COUNT, value)
        spec = dataclasses.replace(spec, count=value)
        _check(app, spec)
        after = app.page.evaluate(HEIGHTS)
        assert abs(after[0] - tab_heights[0]) <= 0.05 * tab_heights[0]
    app.page.locator(".dpexplore-main .lm-TabBar-tab", has_text="Output at x").click()
    app.settle()
    assert not app.page.errors, app.page.errors


def test_bad_values_show_the_message_and_keep_the_plot(lab):
    app = lab
    _reset(app)
    before = app.plots()
    msg = _type_for_message(app, R, "abc", "not a number")
    assert "r stays at 0.3" in msg
    assert app.plots() == before
    msg = _type_for_message(app, COUNT, "12.5", "whole number")
    assert "x stays at 10,000" in msg
    assert app.plots() == before
    assert app.readout(COUNT) == "10,000" and float(app.readout(R)) == 0.3
    app.assert_no_traceback()
    # beyond a slider's end: set to the end, with a note; then a good value clears the message
    _type(app, R, "7")
    assert "above the largest r (2): set to 2" in app.message()
    r = GP.compute_group_privacy_lab(GP.GroupPrivacySpec(r=2.0))
    _close(app.plots()[1][0]["y"], _positive(r.rho_hat))
    _type(app, R, 0.3)
    _check(app, GP.GroupPrivacySpec())
    assert not app.page.errors, app.page.errors
