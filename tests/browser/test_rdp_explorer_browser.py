"""The Rényi DP explorer in headless Chromium, served by ``dpexplore serve``.

After every action the plotted numbers are compared with what the core computes for the new
setting (``compute_rdp_explorer``, i.e. conversions.pure_to_rdp / pure_to_zcdp / rdp_to_approx,
Laplace.calibrate(ε).rdp and Gaussian.calibrate(ε, δ).rdp).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from conftest import SharedPage

from dpexplore.accounting.conversions import pure_to_rdp, rdp_to_approx
from dpexplore.apps.rdp_explorer import DELTA_RANGE, RDPSpec, compute_rdp_explorer
from dpexplore.mechanisms import Gaussian, Laplace

pytestmark = pytest.mark.browser

APP = "rdp_explorer.ipynb"
DEFAULT = RDPSpec(eps=1.0, delta=1e-6, alpha_max=100.0)
RTOL = 1e-12


def _initial_state(app) -> None:
    app.state = {"ε": DEFAULT.eps, "δ": DEFAULT.delta, "α_max": DEFAULT.alpha_max}


@pytest.fixture(scope="module")
def _shared_page(browser, served):
    """ONE page for the whole module (a page load costs seconds on a busy machine), opened again
    after a failed test (conftest.SharedPage)."""
    shared = SharedPage(browser, served, APP, on_open=_initial_state)
    try:
        yield shared
    finally:
        shared.close()


@pytest.fixture
def shared_app(_shared_page):
    """The module's page; every test first moves the sliders to the setting it needs with
    :func:`_goto`."""
    return _shared_page.get()


def _set(app, label: str, typed, value: float, **kw) -> None:
    """Type ``typed`` into slider ``label`` and record the value it lands on."""
    app.set_slider(label, typed, **kw)
    app.state[label] = value


def _goto(app, spec: RDPSpec) -> None:
    """Move the sliders that differ from ``spec`` (values on the sliders' grids)."""
    for label, v in (("ε", spec.eps), ("δ", spec.delta), ("α_max", spec.alpha_max)):
        if app.state[label] != v:
            _set(app, label, repr(v), v)
    assert app.message() == ""


def _snap(value: float, steps_per_decade: int) -> float:
    """The value a typed number lands on: log sliders snap to their step (1/steps_per_decade)."""
    return 10 ** (round(np.log10(value) * steps_per_decade) / steps_per_decade)


def _arr(values) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def _close(got, want, rtol=RTOL) -> None:
    got, want = _arr(got), np.asarray(want, dtype=float)
    shown = np.isfinite(want) & (want > 0)
    np.testing.assert_allclose(got[shown], want[shown], rtol=rtol)
    assert np.all(np.isnan(got[~shown]))  # ≤ 0 is a gap on the log axis


def _assert_page_shows(app, spec: RDPSpec, rtol=RTOL) -> None:
    """Every trace of the three plots equals the core's numbers for ``spec``."""
    r = compute_rdp_explorer(spec)
    rdp, rho, conv = app.plots()
    assert [len(rdp), len(rho), len(conv)] == [6, 4, 8]
    # panel 1: ε̂(α) — independent backend calls, not only the dashboard's own compute
    a = np.asarray(rdp[0]["x"], dtype=float)
    np.testing.assert_allclose(a, r.alphas, rtol=rtol)
    assert a[-1] == pytest.approx(spec.alpha_max, rel=rtol)
    _close(rdp[0]["y"], pure_to_rdp(spec.eps, r.alphas), rtol)
    _close(rdp[1]["y"], np.full_like(a, spec.eps), rtol)
    _close(rdp[2]["y"], pure_to_rdp(spec.eps, r.alphas, "zcdp"), rtol)
    _close(rdp[3]["y"], Laplace.calibrate(spec.eps).rdp(r.alphas), rtol)
    _close(rdp[4]["y"], Gaussian.calibrate(spec.eps, spec.delta).rdp(r.alphas), rtol)
    stack = np.stack([r.rdp_tight, r.rdp_laplace, r.rdp_gaussian])
    eps_imp, ord_imp = rdp_to_approx(r.alphas, stack, spec.delta, return_order=True)
    eps_mir, ord_mir = rdp_to_approx(r.alphas, stack, spec.delta, "mironov", return_order=True)
    np.testing.assert_allclose(rdp[5]["x"], ord_imp, rtol=rtol)
    _close(rdp[5]["y"], r.rdp_at_improved, rtol)
    # panel 2: ρ(ε) curves and the chosen-ε markers
    np.testing.assert_allclose(rho[3]["x"], [spec.eps] * 3, rtol=rtol)
    _close(rho[3]["y"], r.rho_marks, rtol)
    _close(rho[0]["y"], r.rho_tight, rtol)
    # panel 3: per-order bounds, minima marked
    for c in range(3):
        _close(conv[c]["y"], r.objective_improved[c], rtol)
        _close(conv[3 + c]["y"], r.objective_mironov[c], rtol)
    np.testing.assert_allclose(conv[6]["x"], ord_imp, rtol=rtol)
    _close(conv[6]["y"], eps_imp, rtol)
    np.testing.assert_allclose(conv[7]["x"], ord_mir, rtol=rtol)
    _close(conv[7]["y"], eps_mir, rtol)
    # the readout shows the converted ε of each curve
    text = app.page.inner_text(".dpexplore-rdp-readout")
    for c in range(3):
        assert f"{eps_imp[c]:.4g}" in text and f"{eps_mir[c]:.4g}" in text


def _eventually_shows(app, spec: RDPSpec, rtol=RTOL, timeout_s: float = 20.0) -> None:
    """:func:`_assert_page_shows`, retried while updates may still be on their way (several key
    presses in a row: the page may settle on an intermediate step first on a busy machine)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            _assert_page_shows(app, spec, rtol)
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            app.page.wait_for_timeout(250)


def test_page_loads_with_the_core_values(shared_app):
    app = shared_app
    _assert_page_shows(app, DEFAULT)
    assert app.message() == ""
    body = app.body_text()
    assert "Steinke 2024, Theorem 4" in body and "Proposition 6" in body and "calibrate" in body
    app.assert_no_traceback()
    assert not app.page.errors, app.page.errors


def test_eps_slider(shared_app):
    app = shared_app
    _goto(app, DEFAULT)
    rho_curve = app.trace(1, 0)
    _set(app, "ε", 2.5, _snap(2.5, 40))  # snaps to 10^0.4 (40 steps per decade)
    _assert_page_shows(app, RDPSpec(_snap(2.5, 40), DEFAULT.delta, DEFAULT.alpha_max), rtol=1e-9)
    assert app.trace(1, 0) == rho_curve  # the ρ(ε) curves do not depend on any slider
    app.press_slider("ε", "ArrowRight", 1)  # one keyboard step
    app.state["ε"] = 10 ** (0.4 + 1 / 40)
    _eventually_shows(app, RDPSpec(app.state["ε"], DEFAULT.delta, DEFAULT.alpha_max), rtol=1e-9)
    assert app.message() == ""


def test_delta_slider(shared_app):
    app = shared_app
    _goto(app, DEFAULT)
    _set(app, "δ", "1e-12", 1e-12)
    _assert_page_shows(app, RDPSpec(DEFAULT.eps, 1e-12, DEFAULT.alpha_max))
    app.press_slider("δ", "ArrowLeft", 2)  # 10 steps per decade
    app.state["δ"] = 10 ** (-12.2)
    _eventually_shows(app, RDPSpec(DEFAULT.eps, 10 ** (-12.2), DEFAULT.alpha_max), rtol=1e-9)
    _set(app, "δ", "1e-300", 1e-300)  # extreme but computable: computed, no message
    _assert_page_shows(app, RDPSpec(DEFAULT.eps, 1e-300, DEFAULT.alpha_max))
    assert app.message() == ""


def test_alpha_max_slider(shared_app):
    app = shared_app
    _goto(app, DEFAULT)
    _set(app, "α_max", 20, _snap(20.0, 20))  # snaps to 10^1.3 (20 steps per decade)
    _assert_page_shows(app, RDPSpec(DEFAULT.eps, DEFAULT.delta, _snap(20.0, 20)), rtol=1e-9)
    app.press_slider("α_max", "ArrowRight", 3)
    app.state["α_max"] = 10 ** (1.3 + 3 / 20)
    _eventually_shows(app, RDPSpec(DEFAULT.eps, DEFAULT.delta, app.state["α_max"]), rtol=1e-9)
    assert app.message() == ""


def test_bad_values_show_a_message_and_keep_the_plot(shared_app):
    app = shared_app
    eps = _snap(0.5, 40)  # 10^(-0.3)
    _goto(app, RDPSpec(eps, DEFAULT.delta, DEFAULT.alpha_max))
    before = app.plots()
    app.set_slider("δ", "abc", expect_change=False)
    msg = app.message()
    assert "'abc' is not a number" in msg and "δ stays at" in msg
    assert app.plots() == before
    app.assert_no_traceback()
    # past the slider's end (δ = 1 is no guarantee): set to the end, and said so
    app.set_slider("δ", 1)
    assert "above the largest δ" in app.message()
    _assert_page_shows(app, RDPSpec(eps, DELTA_RANGE[1], DEFAULT.alpha_max), rtol=1e-9)
    _set(app, "δ", "1e-8", 1e-8)  # a good value clears the message and redraws
    assert app.message() == ""
    _assert_page_shows(app, RDPSpec(eps, 1e-8, DEFAULT.alpha_max), rtol=1e-9)
    app.set_slider("α_max", 1)
    assert "below the smallest α_max" in app.message()
    app.assert_no_traceback()
    _set(app, "α_max", 1000, 1000.0)
    assert app.message() == ""
    _assert_page_shows(app, RDPSpec(eps, 1e-8, 1000.0), rtol=1e-9)
    assert not app.page.errors, app.page.errors
