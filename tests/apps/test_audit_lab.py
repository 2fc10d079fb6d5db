"""Auditing lab (dpexplore/apps/audit_lab.py): the printed numbers against mpmath closed forms
(Clopper–Pearson bounds, the error-rate ε bound, exact error rates, trade-off curves), the
simulations against the backend bit for bit, fixed-seed statistical checks (a correct mechanism
is not accused, the mis-calibrated Laplace is exposed), invalid inputs and the controller."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats
from hypothesis import given, settings
from hypothesis import strategies as st

from dpexplore.accounting import auditing
from dpexplore.accounting.conversions import tradeoff_approx
from dpexplore.apps import audit_lab as A
from dpexplore.ui.staged import StagedController
from dpexplore.mechanisms import Gaussian, Laplace, RandomizedResponse

mp.mp.dps = 45

FAST = dict(trials=2000, m=1000)


def _beta_root(a, b, level):
    """u with I_u(a, b) = level (regularized incomplete beta), by Newton's method in mpmath
    (I_u' = u^(a−1)(1 − u)^(b−1)/B(a, b)) from scipy's float value; residual checked."""
    a, b, level = mp.mpf(a), mp.mpf(b), mp.mpf(level)
    u = mp.mpf(float(stats.beta.ppf(float(level), float(a), float(b))))
    lbeta = mp.log(mp.beta(a, b))
    for _ in range(8):
        f = mp.betainc(a, b, 0, u, regularized=True) - level
        u = u - f / mp.exp((a - 1) * mp.log(u) + (b - 1) * mp.log1p(-u) - lbeta)
    assert abs(mp.betainc(a, b, 0, u, regularized=True) - level) < mp.mpf(10) ** -30
    return u


def _cp_upper(k, n, conf):
    """One-sided Clopper–Pearson upper bound at level 1 − (1 − conf)/2 (1 if k = n)."""
    if k >= n:
        return mp.mpf(1)
    return _beta_root(k + 1, n - k, 1 - (1 - mp.mpf(conf)) / 2)


def _eps_lb(fp, fn, n, delta, conf):
    u0, u1 = _cp_upper(fp, n, conf), _cp_upper(fn, n, conf)
    vals = [mp.mpf(0)]
    for a, b in ((u1, u0), (u0, u1)):
        if 1 - delta - a > 0:
            vals.append(mp.log((1 - delta - a) / b))
    return max(vals)


# ------------------------------------------------------------------------------------------------
# closed forms
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mech", A.MECHANISMS)
def test_audit_numbers_are_the_clopper_pearson_bound(mech):
    r = A.compute_audit(A.AuditSpec(mechanism=mech, eps=1.0, delta=1e-5, **FAST))
    a = r.audit
    want = _eps_lb(a.fp, a.fn, a.trials_pos, mp.mpf(a.delta), 0.95)
    assert a.eps_lb == pytest.approx(float(want), rel=1e-9, abs=1e-12)
    html = A.verdict_html(r)
    assert f"{a.eps_lb:.4g}" in html and f"FP = {a.fp:,}" in html


def test_exact_error_rates():
    t = 0.3
    lap = A.subject("Laplace", 2.0, 0.0, 1.0)  # b = 1/2
    b = mp.mpf(0.5)
    fpr, fnr = lap.error_rates(t)
    assert fpr == pytest.approx(float(mp.exp(-t / b) / 2), rel=1e-12)
    assert fnr == pytest.approx(float(mp.exp((t - 1) / b) / 2), rel=1e-12)
    mis = A.subject("Mis-calibrated Laplace", 1.0, 0.0, 2.5)  # b = 1/(2.5·1)
    assert mis.eps_true == pytest.approx(2.5, rel=1e-15)
    assert mis.error_rates(t)[0] == pytest.approx(float(mp.exp(-t * mp.mpf(2.5)) / 2), rel=1e-12)
    g = A.subject("Gaussian", 1.0, 1e-5, 1.0)
    s = mp.mpf(g.mechanism.sigma)
    fpr, fnr = g.error_rates(t)
    assert fpr == pytest.approx(float(mp.ncdf(-t / s)), rel=1e-12)
    assert fnr == pytest.approx(float(mp.ncdf((t - 1) / s)), rel=1e-12)
    rr = A.subject("Randomized response", 1.5, 0.0, 1.0)
    q = float(1 / (1 + mp.e ** mp.mpf(1.5)))
    assert rr.error_rates(0.0) == pytest.approx((q, q), rel=1e-12)
    assert rr.error_rates(1.0) == (0.0, 1.0) and rr.error_rates(-0.5) == (1.0, 0.0)


def test_subjects_and_true_eps():
    g = A.subject("Gaussian", 1.0, 1e-5, 1.0)
    assert g.mechanism.sigma == Gaussian.calibrate(1.0, 1e-5).sigma
    assert g.eps_true <= 1.0 + 1e-9 and g.delta == 1e-5
    # the Gaussian profile at the calibrated σ: Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) ≤ δ (Balle & Wang)
    mu = 1 / mp.mpf(g.mechanism.sigma)
    dl = mp.ncdf(mu / 2 - 1 / mu) - mp.e * mp.ncdf(-mu / 2 - 1 / mu)
    assert dl <= mp.mpf(1e-5) * (1 + mp.mpf(1e-9))
    assert A.subject("Laplace", 0.7, 0, 1).eps_true == pytest.approx(0.7, rel=1e-15)
    assert A.subject("Randomized response", 0.7, 0, 1).eps_true == 0.7


@pytest.mark.parametrize("mech", A.MECHANISMS)
def test_curves_equal_backend_and_closed_forms(mech):
    r = A.compute_audit(A.AuditSpec(mechanism=mech, eps=1.0, delta=1e-5, **FAST))
    s = A.subject(mech, 1.0, 1e-5, 2.0)
    np.testing.assert_array_equal(r.true_beta, s.mechanism.tradeoff(A.ALPHA_GRID))
    np.testing.assert_array_equal(r.claimed_beta, tradeoff_approx(1.0, s.delta, A.ALPHA_GRID))
    np.testing.assert_array_equal(r.certified_beta, tradeoff_approx(r.audit.eps_lb, s.delta, A.ALPHA_GRID))
    # f_{ε,δ}(α) = max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)) at a few α (Dong, Roth & Su, Proposition 2.5)
    for i in (10, 50, 150):
        a = mp.mpf(A.ALPHA_GRID[i])
        d = mp.mpf(s.delta)
        want = max(0, 1 - d - mp.e * a, (1 - d - a) / mp.e)
        assert r.claimed_beta[i] == pytest.approx(float(want), rel=1e-12, abs=1e-15)
    if mech == "Laplace":  # Laplace(1) trade-off: β(α) = 1 − e·α for α < e^{-1}/2 (NP test)
        a = mp.mpf(A.ALPHA_GRID[10])
        assert r.true_beta[10] == pytest.approx(float(1 - mp.e * a), rel=1e-12)


def test_trials_curves_closed_forms():
    r = A.compute_audit(A.AuditSpec(mechanism="Laplace", eps=1.0, **FAST))
    assert r.trials_needed == auditing.trials_needed(1.0, 0.95, 0.9, 0.0) == 1982
    p = 1 / (1 + mp.e)
    for i in (20, 25):  # at the expected (unrounded) counts n·p: trials_needed's model
        n = int(A.TRIALS_GRID[i])
        k = n * p
        assert r.ideal_lb[i] == pytest.approx(float(_eps_lb(k, k, n, 0, 0.95)), rel=1e-9, abs=1e-12)
    np.testing.assert_array_equal(r.ideal_lb, auditing.ideal_epsilon_lower_bound(1.0, A.TRIALS_GRID, 0.95, 0.0))
    # the marker and the curve agree: ≥ 0.9 ε exactly from trials_needed on
    assert np.array_equal(r.ideal_lb >= 0.9, A.TRIALS_GRID >= r.trials_needed)
    # the audit's own test at expected counts: exact Laplace error rates at its threshold
    t = r.audit.threshold
    fpr = float(mp.exp(-t) / 2) if t >= 0 else float(1 - mp.exp(t) / 2)
    fnr = float(mp.exp(t - 1) / 2) if t <= 1 else float(1 - mp.exp(1 - t) / 2)
    n = int(A.TRIALS_GRID[25])
    want = _eps_lb(n * mp.mpf(fpr), n * mp.mpf(fnr), n, 0, 0.95)
    assert r.test_lb[25] == pytest.approx(float(want), rel=1e-9, abs=1e-12)
    # more trials never hurt the ideal bound much, and it approaches ε from below
    assert np.all(r.ideal_lb <= 1.0 + 1e-12) and r.ideal_lb[-1] > 0.95


def test_simulations_are_the_backends_with_the_seed():
    spec = A.AuditSpec(mechanism="Laplace", eps=1.0, seed=7, **FAST)
    r = A.compute_audit(spec)
    pair = auditing.laplace_audit_pair(1.0)
    want = auditing.audit_mechanism(pair.sample_0, pair.sample_1, 2000, np.random.default_rng([7, 0]))
    assert (r.audit.fp, r.audit.fn, r.audit.eps_lb) == (want.fp, want.fn, want.eps_lb)
    np.testing.assert_array_equal(r.audit.fpr, want.fpr)
    ms = A.m_grid(1000)
    np.testing.assert_array_equal(r.one_run_m, ms)
    for m, lb in zip(ms, r.one_run_lb):
        w = auditing.one_run_audit(
            int(m), 1.0, np.random.default_rng([7, 1, int(m)]), mechanism="laplace", true_eps=1.0
        )
        assert lb == w.eps_lb
    # randomized response: guesses = all m uses the exact path
    rr = A.compute_audit(A.AuditSpec(mechanism="Randomized response", eps=2.0, seed=7, **FAST))
    w = auditing.one_run_audit(1000, 2.0, np.random.default_rng([7, 1, 1000]))
    assert rr.one_run_lb[-1] == w.eps_lb


def test_one_run_closed_form():
    """δ = 0: ε_lb = logit(p_lo), p_lo the one-sided Clopper–Pearson lower bound (mpmath)."""
    r = auditing.one_run_audit(1000, 2.0, np.random.default_rng([3, 1, 1000]))
    v, n = r.correct, r.guesses
    lo = _beta_root(v, n - v + 1, mp.mpf(0.05))
    spec = A.AuditSpec(mechanism="Randomized response", eps=2.0, seed=3, **FAST)
    assert A.compute_audit(spec).one_run_lb[-1] == pytest.approx(float(mp.log(lo / (1 - lo))), rel=1e-9)


def test_gaussian_one_run_uses_delta():
    spec = A.AuditSpec(mechanism="Gaussian", eps=2.0, delta=1e-5, m=2000, trials=2000)
    r = A.compute_audit(spec)
    assert np.all(r.one_run_lb >= 0) and np.all(r.one_run_lb <= 2.0 + 0.5)
    rng = np.random.default_rng([0, 1, 2000])
    g = Gaussian.calibrate(2.0, 1e-5)
    s = rng.integers(0, 2, 2000) * 2 - 1
    view = (s > 0) * 1.0 + rng.normal(0.0, g.sigma, 2000)
    o = np.argsort(view)
    correct = int(np.sum(s[o[1000:]] == 1) + np.sum(s[o[:1000]] == -1))
    assert r.one_run_lb[-1] == auditing.one_run_epsilon_lower_bound(correct, 2000, 0.95, delta=1e-5, m=2000)


# ------------------------------------------------------------------------------------------------
# statistics with fixed seeds
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mech", ["Laplace", "Gaussian", "Randomized response"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_correct_mechanisms_are_not_accused(mech, seed):
    """Each ε_lb ≤ ε holds with probability ≥ 0.95; these fixed seeds are all below."""
    r = A.compute_audit(A.AuditSpec(mechanism=mech, eps=1.0, delta=1e-5, trials=20_000, m=1000, seed=seed))
    assert r.audit.eps_lb <= 1.0
    # and the audit is not vacuous at 20k trials (the Gaussian's δ-slack makes its audit weaker)
    assert r.audit.eps_lb > (0.2 if mech == "Gaussian" else 0.5)
    assert not r.exposed


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_miscalibrated_laplace_is_exposed(seed):
    """bug factor 2 at ε = 1: true ε = 2; 10⁴ trials certify ≈ 1.7 > 1 (ideal curve: trials
    needed for 90 % of 2 is ~1.3·10⁴), and one run with 10⁴ canaries (all guessed) too."""
    r = A.compute_audit(
        A.AuditSpec(mechanism="Mis-calibrated Laplace", eps=1.0, bug=2.0, trials=10_000, m=10_000, seed=seed)
    )
    assert r.eps_true == 2.0
    assert 1.0 < r.audit.eps_lb <= 2.0
    assert r.exposed
    html = A.verdict_html(r)
    assert "BUG EXPOSED" in html and "dpexplore-audit-bug" in html


def test_correct_verdict_text():
    r = A.compute_audit(A.AuditSpec(mechanism="Laplace", eps=1.0, trials=20_000, m=1000))
    html = A.verdict_html(r)
    assert "Consistent with the claim" in html and "BUG" not in html


def test_empirical_points_follow_the_true_tradeoff():
    """Laplace, 10⁵ trials: by the DKW inequality each empirical error rate is within
    sqrt(ln(2/0.001)/(2n)) = 0.0062 of its expectation (prob. ≥ 0.998), so the threshold tests'
    (α, β) are within 0.0062 (1 + e^ε) < 0.03 of the true trade-off curve at ε = 1."""
    r = A.compute_audit(A.AuditSpec(mechanism="Laplace", eps=1.0, trials=100_000, m=1000))
    a = r.audit
    gap = np.abs(a.fnr - Laplace(1.0).tradeoff(a.fpr))
    assert gap.max() < 0.03


@settings(max_examples=30, deadline=None)
@given(eps=st.floats(0.05, 10.0), conf=st.floats(0.5, 0.999))
def test_ideal_curve_properties(eps, conf):
    lb, need = A._ideal_curve(eps, 0.0, conf)
    assert np.all(lb >= 0) and np.all(lb <= eps + 1e-9)  # expected counts never exceed ε
    if need is not None:
        assert need == auditing.trials_needed(eps, conf, 0.9, 0.0, max_trials=A.MAX_TRIALS)


# ------------------------------------------------------------------------------------------------
# invalid inputs
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "change,name",
    [
        (dict(eps=0.0), "eps"),
        (dict(eps=float("nan")), "eps"),
        (dict(mechanism="Gaussian", delta=0.0), "delta"),
        (dict(mechanism="Mis-calibrated Laplace", bug=0.5), "bug"),
        (dict(trials=5), "trials"),
        (dict(m=1), "m"),
        (dict(mechanism="Gaussian", m=500_000), "m"),
        (dict(confidence=1.0), "confidence"),
        (dict(guess_frac=0.0), "guess_frac"),
        (dict(mechanism="Exponential"), "mechanism"),
        (dict(seed=-2), "seed"),
    ],
    ids=["eps0", "epsnan", "delta0", "bug", "trials", "m1", "m_gauss", "conf", "guess", "mech", "seed"],
)
def test_invalid_inputs(change, name):
    with pytest.raises(ValueError, match=name):
        A.compute_audit(A.AuditSpec(**{**dict(FAST), **change}))


# ------------------------------------------------------------------------------------------------
# controller
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def app():
    return A.build_audit_lab(trials=2000, m=1000)


def test_figures_constructed_non_empty(app):
    ctrl = app.controller
    assert len(ctrl.figs) == 3
    for f in ctrl.figs:
        assert f.data and all(t["x"] and t["y"] for t in f.data)
        assert f.plot_layout["title"]["text"]
    assert "BUG EXPOSED" in ctrl.verdict.value


def test_controls_update_in_place(app):
    ctrl = app.controller
    fig = ctrl.fig_tradeoff
    ctrl.controls["mechanism"].value = "Laplace"
    assert ctrl.fig_tradeoff is fig and ctrl.figs[0] is fig
    np.testing.assert_allclose(fig.data[0]["y"], Laplace(1.0).tradeoff(A.ALPHA_GRID), rtol=0, atol=0)
    ctrl.controls["eps"].value = 2.0
    np.testing.assert_allclose(fig.data[1]["y"], tradeoff_approx(2.0, 0.0, A.ALPHA_GRID), rtol=0, atol=0)
    assert "Consistent" in ctrl.verdict.value or "BUG" in ctrl.verdict.value
    ctrl.controls["m"].value = 2000
    assert ctrl.fig_one_run.data[0]["x"][-1] == 2000
    assert ctrl.message.text == ""


def test_bad_value_shows_message_and_keeps_plot(app):
    ctrl = app.controller
    ctrl.controls["mechanism"].value = "Gaussian"
    before = [f.data for f in ctrl.figs]
    ctrl.controls["m"].value = 1_000_000
    assert "m = 1,000,000" in ctrl.message.text and "last valid setting" in ctrl.message.text
    assert [f.data for f in ctrl.figs] == before
    ctrl.controls["m"].value = 1000
    assert ctrl.message.text == ""


def test_progress_bar_for_long_runs(app):
    ctrl = app.controller
    shown = []
    ctrl.progress.layout.observe(lambda ch: shown.append(ch["new"]), names="display")
    ctrl.PROGRESS_AFTER = 0.0
    try:
        ctrl.controls["seed"].value = 11
    finally:
        ctrl.PROGRESS_AFTER = StagedController.PROGRESS_AFTER
    assert shown[:1] == [None] and shown[-1] == "none"
    assert ctrl.progress.value == ctrl.progress.max == 1 + len(A.m_grid(int(ctrl.controls["m"].value)))


def test_randomized_response_samples_are_its_law():
    rr = A.subject("Randomized response", math.log(3.0), 0.0, 1.0)
    x1 = rr.sample_1(np.random.default_rng(0), 40_000)
    assert set(np.unique(x1)) <= {0.0, 1.0}
    # P[1 | bit 1] = 3/4; 4.5 std of a mean over 40k draws = 0.0098
    assert abs(x1.mean() - 0.75) < 0.0098
    assert RandomizedResponse(math.log(3.0)).p_truth == pytest.approx(0.75, rel=1e-12)


def test_trials_to_expose_the_bug():
    r = A.compute_audit(A.AuditSpec(mechanism="Mis-calibrated Laplace", eps=1.0, bug=2.0, **FAST))
    assert r.expose_trials == auditing.trials_needed(2.0, 0.95, 0.5, 0.0)
    assert f"{r.expose_trials:,}" in A.verdict_html(r)
    assert A.compute_audit(A.AuditSpec(mechanism="Laplace", eps=1.0, **FAST)).expose_trials is None


def test_sliders_of_other_mechanisms_are_greyed_out():
    """δ matters for the Gaussian only, the bug factor for the mis-calibrated Laplace only: the
    other mechanisms show them disabled (moving them would change nothing)."""
    box = A.build_audit_lab(trials=1000, m=1000)
    c = box.controller.controls
    assert c["delta"].disabled and not c["bug"].disabled  # default: mis-calibrated Laplace
    for mech, delta_off, bug_off in (
        ("Gaussian", False, True),
        ("Laplace", True, True),
        ("Randomized response", True, True),
        ("Mis-calibrated Laplace", True, False),
    ):
        c["mechanism"].value = mech
        assert (c["delta"].disabled, c["bug"].disabled) == (delta_off, bug_off), mech
