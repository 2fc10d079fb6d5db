"""The notion converter in headless Chromium, served by ``dpexplore serve``.

After every action the plotted numbers are compared with the dpexplore backend (profiles,
conversions, mechanisms) evaluated in the test for the new setting.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpexplore.accounting.conversions import (
    ApproxDPProfile,
    PureDPProfile,
    RDPProfile,
    ZCDPProfile,
    pure_to_gdp,
    pure_to_zcdp,
    tradeoff_approx,
)
from dpexplore.apps.notion_converter import NOTIONS
from dpexplore.mechanisms import Gaussian, Laplace, RandomizedResponse
from dpexplore.accounting.profiles import GaussianDPProfile

pytestmark = pytest.mark.browser

STEP = 10**0.05  # one keyboard step of a 20-steps-per-decade log slider
LABELS = {
    "pure_eps": "ε (pure DP)",
    "approx_eps": "ε₀ of (ε₀, δ₀)",
    "approx_delta": "δ₀ of (ε₀, δ₀)",
    "rho": "ρ (zCDP)",
    "mu": "μ (GDP)",
    "rdp_alpha": "α₀ (Rényi order)",
    "rdp_eps": "ε̂₀ (Rényi DP at α₀)",
    "lap_b": "Laplace scale b",
    "gauss_sigma": "Gaussian σ",
    "rr_eps": "randomized response ε",
    "delta": "target δ",
}
DEFAULTS = {
    "pure_eps": 1.0,
    "approx_eps": 1.0,
    "approx_delta": 1e-6,
    "rho": 0.5,
    "mu": 1.0,
    "rdp_alpha": 2.0,
    "rdp_eps": 1.0,
    "lap_b": 1.0,
    "gauss_sigma": 1.0,
    "rr_eps": 1.0,
}
STEPS = {"approx_delta": 10**0.1}  # 10 steps per decade


def source_profile(kind: str, p: dict):
    """The backend's profile of the source notion."""
    return {
        "pure": lambda: PureDPProfile(p["pure_eps"]),
        "approx": lambda: ApproxDPProfile(p["approx_eps"], p["approx_delta"]),
        "zcdp": lambda: ZCDPProfile(p["rho"]),
        "gdp": lambda: GaussianDPProfile(p["mu"]),
        "rdp": lambda: RDPProfile(np.array([p["rdp_alpha"]]), np.array([p["rdp_eps"]])),
        "laplace": lambda: Laplace(p["lap_b"]).profile,
        "gaussian": lambda: Gaussian(p["gauss_sigma"]).profile,
        "rr": lambda: RandomizedResponse(p["rr_eps"]).profile,
    }[kind]()


def _arr(v) -> np.ndarray:
    return np.array([np.nan if u is None else u for u in v], dtype=float)


def assert_curve(trace: dict, profile) -> None:
    x = _arr(trace["x"])
    got = _arr(trace["y"])
    want = np.asarray(profile.delta(x), dtype=float)
    pos = want > 1e-290
    assert pos.sum() >= 2
    np.testing.assert_allclose(got[pos], want[pos], rtol=1e-7)
    assert np.all(np.isnan(got[want == 0]))


def open_converter(open_app):
    """Open the dashboard; retry once if the first navigation times out (a cold Voilà server on a
    loaded 2-core machine can exceed Playwright's 30 s navigation timeout)."""
    try:
        return open_app("notion_converter.ipynb")
    except Exception as exc:  # noqa: BLE001 - playwright TimeoutError
        if "Timeout" not in type(exc).__name__:
            raise
        return open_app("notion_converter.ipynb")


def select_notion(app, key: str) -> None:
    """Choose the source notion and wait until the source curve is redrawn (its legend name
    changes); select once more if the first change event was lost on a loaded machine."""
    name0 = app.trace(0, 0)["name"]
    select = app.page.locator(".widget-dropdown select")
    for attempt in range(2):
        select.select_option(label=NOTIONS[key].label)
        try:
            app.page.wait_for_function(
                """(n) => { const d = document.querySelector('.js-plotly-plot');
                            return d && d.data && d.data[0].name !== n; }""",
                arg=name0,
                timeout=30_000,
            )
            break
        except Exception:
            if attempt:
                raise
            select.select_option(index=0 if key != "pure" else 1)
    app.page.wait_for_timeout(300)


def test_page_loads_with_the_core_values(open_app):
    app = open_converter(open_app)
    plots = app.plots()
    assert len(plots) == 2 and len(plots[0]) == 7 and len(plots[1]) == 7
    e = 1.0
    assert_curve(plots[0][0], PureDPProfile(e))
    assert_curve(plots[0][3], ZCDPProfile(pure_to_zcdp(e)))  # Steinke 2024 Thm 5
    assert_curve(plots[0][4], GaussianDPProfile(pure_to_gdp(e)))
    marker = plots[0][6]
    assert marker["x"][0] == pytest.approx(PureDPProfile(e).epsilon(1e-6), rel=1e-9)
    assert marker["y"][0] == pytest.approx(1e-6, rel=1e-9)
    np.testing.assert_allclose(
        _arr(plots[1][0]["y"]), tradeoff_approx(e, 0.0, _arr(plots[1][0]["x"])), rtol=1e-9, atol=1e-15
    )
    text = app.body_text()
    assert f"ρ = {pure_to_zcdp(e):.4g}" in text and f"μ = {pure_to_gdp(e):.4g}" in text
    assert "Tightness witness" in text and "Steinke 2024, Thm 5" in text
    assert app.message() == ""
    app.assert_no_traceback()
    assert not app.page.errors, app.page.errors


@pytest.mark.parametrize("kind", list(NOTIONS))
def test_each_slider_redraws_with_the_core_values(open_app, kind):
    app = open_converter(open_app)
    if kind != "pure":
        select_notion(app, kind)
    p = dict(DEFAULTS)
    assert_curve(app.trace(0, 0), source_profile(kind, p))
    for name in NOTIONS[kind].params:
        app.press_slider(LABELS[name], "ArrowRight", 1)
        p[name] *= STEPS.get(name, STEP)
        assert_curve(app.trace(0, 0), source_profile(kind, p))
    # the target δ slider moves the (ε, δ) marker to the source's ε(δ)
    app.press_slider(LABELS["delta"], "ArrowRight", 1)
    d = 1e-6 * 10**0.1
    prof = source_profile(kind, p)
    e_want = prof.epsilon(d)
    marker = app.trace(0, 6)
    if math.isfinite(e_want):
        assert marker["y"][0] == pytest.approx(d, rel=1e-9)
        assert marker["x"][0] == pytest.approx(e_want, rel=1e-6)
    else:
        assert marker["x"] == [None]
    assert app.message() == ""
    app.assert_no_traceback()


def test_not_implied_is_said_not_drawn(open_app):
    app = open_converter(open_app)
    select_notion(app, "approx")
    names = [t["name"] for t in app.plots()[0]]
    for i in (1, 3, 4, 5):  # pure, zCDP, GDP, RDP: not implied by (ε, δ)-DP with δ > 0
        assert "not implied" in names[i]
        assert app.trace(0, i)["y"] == [None]
    assert app.body_text().count("not implied") >= 6
    app.assert_no_traceback()


def test_bad_orders_show_message_and_keep_the_plot(open_app):
    app = open_converter(open_app)
    before = app.plots()
    box = app.page.locator(".widget-text input")
    box.fill("0.5, 2")
    box.press("Enter")
    app.page.wait_for_function(
        """() => [...document.querySelectorAll('.dpexplore-message')]
                  .some(e => e.offsetParent !== null && e.innerText.trim())""",
        timeout=20_000,
    )
    msg = app.message()
    assert "alpha" in msg and "0.5" in msg and "last valid setting" in msg
    assert app.plots() == before
    app.assert_no_traceback()
    box.fill("2, 4")
    box.press("Enter")
    app.page.wait_for_function(
        """() => [...document.querySelectorAll('.dpexplore-message')]
                  .every(e => e.offsetParent === null)""",
        timeout=20_000,
    )
    assert "α = 4" in app.body_text()
    # the page still works
    app.press_slider(LABELS["pure_eps"], "ArrowRight", 1)
    assert_curve(app.trace(0, 0), PureDPProfile(STEP))
    assert not app.page.errors, app.page.errors
