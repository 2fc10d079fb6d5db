"""The teaching labs B of issue 4 in headless Chromium (adaptive data analysis, auditing),
served by ``dpexplore serve``.

Each lab gets ONE page for its module's tests (page loads cost seconds on a busy machine). After
every action the plotted numbers are compared with the lab's compute function evaluated here for
the new setting: the simulations are seeded, so the simulated points agree to the last digit.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from conftest import SharedPage

from dpexplore.ui.controls import log_slider

from dpexplore.apps import adaptive_lab as AL
from dpexplore.apps import audit_lab as AU

pytestmark = pytest.mark.browser

RTOL = 1e-12


def _close(got, want, rtol=RTOL):
    got = np.array([np.nan if v is None else v for v in got], dtype=float)
    want = np.asarray(want, dtype=float)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-300, equal_nan=True)


def _snap_log(value: float, lo: float, steps_per_decade: int, integer: bool = False) -> float:
    """The grid point of a log slider nearest to ``value``: 10^(log10(lo) + k/steps_per_decade),
    rounded for an IntLogSlider, as the kernel holds it. The tests type grid points (in full
    precision), so the value is the same whether or not the front end snaps a typed value."""
    e0 = math.log10(lo)
    k = round((math.log10(value) - e0) * steps_per_decade)
    v = 10 ** (e0 + k / steps_per_decade)
    if integer:
        return float(max(round(v), 1))
    # the kernel holds one canonical number per grid point (dpexplore's LogSlider)
    return log_slider("x", lo, lo, 10 ** (e0 + 40), steps_per_decade=steps_per_decade).canonical(v)


def _type(app, label: str, value, *, wait_text: str | None = None, bad: bool = False) -> None:
    """Type into a slider's readout; wait for a redraw, for ``wait_text`` on the page (settings
    that change only a readout) or for the message (``bad``). Nothing to wait for when the
    slider already shows ``value``."""
    try:
        if float(app.readout(label).replace(",", "")) == float(value):
            return
    except ValueError:
        pass
    if wait_text is None:
        app.set_slider(label, value, expect_change=not bad)
        return
    readout = app.slider(label).locator(".widget-readout")
    readout.click()
    app.page.keyboard.press("Control+A")
    app.page.keyboard.type(str(value))
    app.page.keyboard.press("Enter")
    app.page.wait_for_function("(t) => document.body.innerText.includes(t)", arg=wait_text, timeout=30_000)


def _select(app, label: str, option: str) -> None:
    select = app.reveal(
        app.page.locator(".widget-dropdown", has=app.page.locator(".widget-label", has_text=label)).locator("select")
    )
    before = app.revisions()
    select.select_option(label=option)
    app._wait_redrawn(before)


def _shared(browser, served, notebook) -> SharedPage:
    return SharedPage(browser, served, notebook, viewport={"width": 1300, "height": 1000})


# ------------------------------------------------------------------------------------------------
# adaptive data analysis
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def _adaptive_page(browser, served):
    shared = _shared(browser, served, "adaptive_lab.ipynb")
    try:
        yield shared
    finally:
        shared.close()


@pytest.fixture
def adaptive(_adaptive_page):
    return _adaptive_page.get()


def _check_adaptive(app, spec: AL.AdaptiveSpec) -> None:
    r = AL.compute_adaptive(spec)
    plots = app.plots()
    assert [len(p) for p in plots] == [8, 5, 5]
    for first, res in ((0, r.naive), (4, r.thresholdout)):  # one figure, a panel per run
        _close(plots[0][first]["x"], res.k)
        _close(plots[0][first]["y"], res.train)
        _close(plots[0][first + 1]["y"], res.holdout)
        _close(plots[0][first + 2]["y"], res.fresh)
    _close(plots[1][0]["y"], r.curves["sq_eps"])
    _close(plots[1][3]["y"], r.curves["gen_eps"])
    _close(plots[1][4]["x"], [spec.gen_n] * 4)
    _close(
        plots[1][4]["y"],
        [r.calc.sq_eps if r.calc.sq_eps else np.nan, r.calc.pure_eps, r.calc.take2_eps, r.calc.gen_eps],
    )
    pf = r.curves["pure_fail"]
    _close(plots[2][1]["y"], np.where(pf < 1, pf, np.nan))
    text = app.body_text()
    assert f"answered {r.budget_used}" in text
    assert f"n = {spec.n:,} rows" in text and f"seed {spec.seed}" in text
    assert app.message() == ""


def test_adaptive_page_loads_with_the_core_values(adaptive):
    app = adaptive
    _check_adaptive(app, AL.AdaptiveSpec())
    assert "Thresholdout" in app.body_text() and "Bassi 2019" in app.body_text()
    app.assert_no_traceback()
    assert not app.page.errors, app.page.errors


def test_adaptive_every_slider_redraws_with_the_core_values(adaptive):
    app = adaptive
    spec = AL.AdaptiveSpec()
    _type(app, "seed", 5)
    spec = dataclasses.replace(spec, seed=5)
    _check_adaptive(app, spec)
    v = int(_snap_log(500, AL.N_RANGE[0], 10, True))
    _type(app, "n [rows per set]", v)
    spec = dataclasses.replace(spec, n=v)
    _check_adaptive(app, spec)
    v = int(_snap_log(1000, AL.D_RANGE[0], 10, True))
    _type(app, "d [features]", v)
    spec = dataclasses.replace(spec, d=v)
    _check_adaptive(app, spec)
    _type(app, "rounds", 8)
    spec = dataclasses.replace(spec, rounds=8)
    _check_adaptive(app, spec)
    # δ changes only Thresholdout's (ε, δ) readout
    _type(app, "Thresholdout's δ", "1e-8", wait_text="1e-08)-DP")
    spec = dataclasses.replace(spec, delta=1e-8)
    r = AL.compute_adaptive(spec)
    assert f"{r.spec.delta:.3g})-DP" in app.body_text()
    _check_adaptive(app, spec)
    v = _snap_log(0.05, AL.TAU_RANGE[0], 20)
    _type(app, "τ [tolerance]", repr(v))
    spec = dataclasses.replace(spec, tau=v)
    _check_adaptive(app, spec)
    v = int(_snap_log(3000, AL.GEN_N_RANGE[0], 10, True))
    _type(app, "n_gen [samples]", v)
    spec = dataclasses.replace(spec, gen_n=v)
    assert "no ε works" not in app.body_text()
    _check_adaptive(app, spec)
    v = _snap_log(1e-6, AL.BETA_RANGE[0], 4)
    _type(app, "β [probability]", repr(v))
    spec = dataclasses.replace(spec, beta=v)
    _check_adaptive(app, spec)
    assert not app.page.errors, app.page.errors


def test_adaptive_bad_value_shows_message_and_keeps_the_plot(adaptive):
    app = adaptive
    _type(app, "rounds", 8)
    before = app.plots()
    _type(app, "d [features]", 200, bad=True)  # rounds 8 > d // 40 = 5
    msg = app.message()
    assert "rounds" in msg and "last valid setting" in msg
    assert app.plots() == before
    app.assert_no_traceback()
    # a value on the slider's grid (200·10^(k/10)): an off-grid value such as 1000 is set to the
    # nearest position with a note, which would keep the message box busy
    _type(app, "d [features]", 2000)
    assert app.message() == ""
    assert not app.page.errors, app.page.errors


# ------------------------------------------------------------------------------------------------
# auditing
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def _audit_page(browser, served):
    shared = _shared(browser, served, "audit_lab.ipynb")
    try:
        yield shared
    finally:
        shared.close()


@pytest.fixture
def audit(_audit_page):
    return _audit_page.get()


def _check_audit(app, spec: AU.AuditSpec) -> AU.AuditLabResult:
    r = AU.compute_audit(spec)
    plots = app.plots()
    assert [len(p) for p in plots][:1] == [5] and len(plots[2]) == 3
    t = plots[0]
    _close(t[0]["y"], r.true_beta)
    _close(t[1]["y"], r.claimed_beta)
    _close(t[2]["y"], r.certified_beta)
    _close(t[3]["x"], r.audit.fpr)
    _close(t[3]["y"], r.audit.fnr)
    _close(t[4]["y"], [r.audit.fnr_at_threshold])
    tr = plots[1]
    _close(tr[0]["y"], r.ideal_lb)
    _close(tr[1]["y"], r.test_lb)
    _close(tr[3]["x"], [spec.trials])
    _close(tr[3]["y"], [r.audit.eps_lb])
    assert len(tr) == (5 if r.trials_needed is not None else 4)
    one = plots[2]
    _close(one[0]["x"], r.one_run_m)
    _close(one[0]["y"], r.one_run_lb)
    text = app.body_text()
    assert ("BUG EXPOSED" in text) == (r.exposed or r.one_run_exposed)
    assert f"ε_lb = {r.audit.eps_lb:.4g}" in text
    assert app.message() == ""
    return r


def test_audit_page_loads_and_exposes_the_bug(audit):
    app = audit
    r = _check_audit(app, AU.AuditSpec())
    assert r.exposed and "BUG EXPOSED" in app.body_text()
    app.assert_no_traceback()
    assert not app.page.errors, app.page.errors


def test_audit_every_control_redraws_with_the_core_values(audit):
    app = audit
    spec = AU.AuditSpec()
    v = _snap_log(2, AU.EPS_RANGE[0], 20)
    _type(app, "ε [claimed]", repr(v))
    spec = dataclasses.replace(spec, eps=v)
    _check_audit(app, spec)
    _type(app, "bug factor", 3)
    spec = dataclasses.replace(spec, bug=3.0)
    _check_audit(app, spec)
    v = int(_snap_log(20000, AU.TRIALS_RANGE[0], 10, True))
    _type(app, "trials [per input]", v)
    spec = dataclasses.replace(spec, trials=v)
    _check_audit(app, spec)
    _type(app, "confidence", 0.9)
    spec = dataclasses.replace(spec, confidence=0.9)
    _check_audit(app, spec)
    _type(app, "seed", 3)
    spec = dataclasses.replace(spec, seed=3)
    _check_audit(app, spec)
    v = int(_snap_log(5000, AU.M_RANGE[0], 10, True))
    _type(app, "m [canaries]", v)
    spec = dataclasses.replace(spec, m=v)
    _check_audit(app, spec)
    v = _snap_log(0.5, AU.GUESS_RANGE[0], 10)
    _type(app, "guesses r/m", repr(v))
    spec = dataclasses.replace(spec, guess_frac=v)
    _check_audit(app, spec)
    _select(app, "mechanism", "Gaussian")
    spec = dataclasses.replace(spec, mechanism="Gaussian")
    _check_audit(app, spec)
    v = _snap_log(1e-6, AU.DELTA_RANGE[0], 4)
    _type(app, "δ [Gaussian only]", repr(v))
    spec = dataclasses.replace(spec, delta=v)
    _check_audit(app, spec)
    _select(app, "mechanism", "Randomized response")
    spec = dataclasses.replace(spec, mechanism="Randomized response")
    _check_audit(app, spec)
    _select(app, "mechanism", "Laplace")
    spec = dataclasses.replace(spec, mechanism="Laplace")
    r = _check_audit(app, spec)
    assert not r.exposed
    assert not app.page.errors, app.page.errors


def test_audit_bad_value_shows_message_and_keeps_the_plot(audit):
    app = audit
    _select(app, "mechanism", "Gaussian")
    before = app.plots()
    _type(app, "m [canaries]", 1_000_000, bad=True)  # Gaussian one-run limit
    msg = app.message()
    assert "m = 1,000,000" in msg and "last valid setting" in msg
    assert app.plots() == before
    app.assert_no_traceback()
    _type(app, "m [canaries]", 1000)
    assert app.message() == ""
    assert not app.page.errors, app.page.errors
