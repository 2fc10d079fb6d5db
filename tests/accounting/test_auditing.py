"""Tests for dpexplore.accounting.auditing: Clopper–Pearson against mpmath and scipy, the ε lower bounds in
closed form, audits of a correct Laplace mechanism (never above ε, up to the stated confidence)
and of a mis-calibrated one (exposed), one-run auditing, validation."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from dpexplore.accounting.auditing import (
    LaplaceAuditPair,
    MechanismAuditPair,
    RandomizedResponseAuditPair,
    audit_mechanism,
    clopper_pearson,
    corner_error_rate,
    empirical_epsilon,
    expected_empirical_epsilon,
    ideal_epsilon_lower_bound,
    laplace_audit_pair,
    miscalibrated_laplace,
    one_run_audit,
    one_run_epsilon_lower_bound,
    one_run_p_value,
    trials_needed,
)

from dpexplore.mechanisms import Gaussian, RandomizedResponse

mp.mp.dps = 30


def rng(seed=0):
    return np.random.default_rng(seed)


def close(a, b, rtol=1e-9):
    return abs(float(a) - float(b)) <= rtol * abs(float(b)) + 1e-300


def _bisect(f, lo=mp.mpf(0), hi=mp.mpf(1), it=64):
    for _ in range(it):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


def mp_cp_upper(k, n, a):
    """p with P[Bin(n, p) ≤ k] = a, i.e. I_p(k + 1, n − k) = 1 − a."""
    if k == n:
        return mp.mpf(1)
    return _bisect(lambda p: mp.betainc(k + 1, n - k, 0, p, regularized=True) - (1 - mp.mpf(a)))


def mp_cp_upper_real(k, n, a):
    """Clopper–Pearson upper bound for a real-valued count k (beta quantile)."""
    return _bisect(lambda p: mp.betainc(k + 1, n - k, 0, p, regularized=True) - (1 - mp.mpf(a)))


def mp_cp_lower(k, n, a):
    """p with P[Bin(n, p) ≥ k] = a, i.e. I_p(k, n − k + 1) = a."""
    if k == 0:
        return mp.mpf(0)
    return _bisect(lambda p: mp.betainc(k, n - k + 1, 0, p, regularized=True) - mp.mpf(a))


# ------------------------------------------------------------------------------------------------
# Clopper–Pearson
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k, n, c", [(5, 100, 0.95), (0, 30, 0.9), (30, 30, 0.99), (517, 1000, 0.95), (1, 2, 0.5)])
def test_clopper_pearson_mpmath_and_scipy(k, n, c):
    lo, hi = clopper_pearson(k, n, c)
    a = (1 - c) / 2
    assert close(lo, mp_cp_lower(k, n, a)) if k > 0 else lo == 0.0
    assert close(hi, mp_cp_upper(k, n, a)) if k < n else hi == 1.0
    ci = stats.binomtest(k, n).proportion_ci(c, "exact")
    assert lo == pytest.approx(ci.low, rel=1e-9, abs=1e-15) and hi == pytest.approx(ci.high, rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 5000), frac=st.floats(0, 1), c=st.floats(0.5, 0.999))
def test_clopper_pearson_properties(n, frac, c):
    k = int(round(frac * n))
    lo, hi = clopper_pearson(k, n, c)
    assert 0 <= lo <= k / n <= hi <= 1
    lo2, hi2 = clopper_pearson(k, n, min(c + 0.0005, 0.9995))
    assert lo2 <= lo and hi2 >= hi  # more confidence, wider interval


def test_clopper_pearson_vectorized():
    lo, hi = clopper_pearson(np.array([0, 5, 10]), 10)
    assert lo.shape == hi.shape == (3,) and lo[0] == 0 and hi[2] == 1


# ------------------------------------------------------------------------------------------------
# empirical ε
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fp, fn, n0, n1, delta, c",
    [
        (50, 500, 1000, 1000, 0.0, 0.95),
        (10, 300, 5000, 2000, 1e-3, 0.9),
        (300, 20, 1000, 1000, 0.0, 0.99),
    ],
)
def test_empirical_epsilon_mpmath(fp, fn, n0, n1, delta, c):
    a = (1 - c) / 2
    fpr, fnr = mp_cp_upper(fp, n0, a), mp_cp_upper(fn, n1, a)
    terms = [mp.mpf(0)]
    for num, den in ((1 - delta - fnr, fpr), (1 - delta - fpr, fnr)):
        if num > 0:
            terms.append(mp.log(num / den))
    assert close(empirical_epsilon(fp, fn, n0, n1, delta, c), max(terms))


@settings(max_examples=60, deadline=None)
@given(fp=st.integers(0, 500), fn=st.integers(0, 500), extra=st.integers(1, 50))
def test_empirical_epsilon_monotone(fp, fn, extra):
    e = empirical_epsilon(fp, fn, 1000, 1000)
    assert e >= 0
    assert empirical_epsilon(fp + extra, fn, 1000, 1000) <= e  # more errors, weaker evidence
    assert empirical_epsilon(fp, fn, 1000, 1000, delta=0.01) <= e
    assert empirical_epsilon(fp, fn, 1000, 1000, confidence=0.99) <= e


def test_empirical_epsilon_trivial_and_perfect():
    assert empirical_epsilon(500, 500, 1000, 1000) == 0.0
    # a perfect attack on n trials certifies at most log((1 − U)/U) with U = 1 − (α/2)^{1/n}
    n, c = 1000, 0.95
    u = 1 - ((1 - c) / 2) ** (1 / n)
    assert close(empirical_epsilon(0, 0, n, n, 0.0, c), math.log((1 - u) / u))


# ------------------------------------------------------------------------------------------------
# Laplace pairs
# ------------------------------------------------------------------------------------------------
def test_laplace_pair_error_rates_closed_form():
    p = laplace_audit_pair(1.5, sensitivity=2.0)
    b = 2.0 / 1.5
    for t in (-1.0, 0.0, 0.7, 2.0, 3.5):
        fpr, fnr = p.error_rates(t)
        assert close(fpr, mp_lap_sf(t, b)) and close(fnr, 1 - mp_lap_sf(t - 2.0, b))
    # the optimal-test corner: (1 − FNR)/FPR = e^ε for every t ≥ Δ
    fpr, fnr = p.error_rates(2.5)
    assert close((1 - fnr) / fpr, math.exp(1.5))


def mp_lap_sf(x, b):
    x = mp.mpf(x)
    return mp.exp(-x / b) / 2 if x >= 0 else 1 - mp.exp(x / b) / 2


def test_miscalibrated_pair_against_dp_accounting():
    from dp_accounting.pld import privacy_loss_distribution as pld

    bug = miscalibrated_laplace(1.0, sensitivity=1.0, bug_factor=2.0)
    assert (bug.eps_claimed, bug.eps_actual, bug.scale) == (1.0, 2.0, 0.5)
    dist = pld.from_laplace_mechanism(bug.scale, sensitivity=1.0, value_discretization_interval=1e-4)
    assert dist.get_epsilon_for_delta(1e-9) == pytest.approx(bug.eps_actual, abs=1e-3)
    good = laplace_audit_pair(1.0)
    dist = pld.from_laplace_mechanism(good.scale, sensitivity=1.0, value_discretization_interval=1e-4)
    assert dist.get_epsilon_for_delta(1e-9) == pytest.approx(1.0, abs=1e-3)


def test_audit_correct_laplace_never_exceeds_eps():
    """ε_lb ≤ ε must hold with probability ≥ 95 % per audit; over 30 seeded audits allow the
    binomial 99.9 % quantile of Binomial(30, 0.05) exceedances, and demand the typical audit to be
    reasonably tight."""
    pair = laplace_audit_pair(1.0)
    lbs = np.array([audit_mechanism(pair.sample_0, pair.sample_1, 20_000, rng(s)).eps_lb for s in range(30)])
    assert np.sum(lbs > 1.0) <= stats.binom.ppf(0.999, 30, 0.05)
    assert np.median(lbs) > 0.85


def test_audit_exposes_miscalibrated_laplace():
    bug = miscalibrated_laplace(1.0)
    for s in range(5):
        r = audit_mechanism(bug.sample_0, bug.sample_1, 20_000, rng(100 + s))
        assert r.eps_lb > bug.eps_claimed  # the claimed ε is refuted with 95 % confidence
        assert r.eps_lb < bug.eps_actual * 1.1


def test_audit_fixed_threshold_matches_exact_rates():
    pair = laplace_audit_pair(1.0)
    n = 50_000
    r = audit_mechanism(pair.sample_0, pair.sample_1, n, rng(3), threshold=1.0)
    fpr, fnr = pair.error_rates(1.0)
    tol = lambda p: 4.5 * math.sqrt(p * (1 - p) / n)  # noqa: E731
    assert abs(r.fpr_at_threshold - fpr) < tol(fpr) and abs(r.fnr_at_threshold - fnr) < tol(fnr)
    assert r.eps_lb == empirical_epsilon(r.fp, r.fn, n, n)
    assert np.all(np.diff(r.fpr) <= 0) and np.all(np.diff(r.fnr) >= 0)  # the (α, β) curve
    assert r.thresholds.shape == r.fpr.shape == r.fnr.shape


def test_audit_reversed_direction_and_statistic():
    pair = laplace_audit_pair(1.0)
    # swap the inputs: outputs on input 1 are now lower; the audit picks direction −1
    r = audit_mechanism(pair.sample_1, pair.sample_0, 20_000, rng(4))
    assert r.direction == -1 and 0.5 < r.eps_lb <= 1.0
    r2 = audit_mechanism(pair.sample_0, pair.sample_1, 20_000, rng(4), statistic=lambda z: -z)
    assert r2.direction == -1 and 0.5 < r2.eps_lb <= 1.0


def test_audit_deterministic_with_seed():
    pair = laplace_audit_pair(1.0)
    a = audit_mechanism(pair.sample_0, pair.sample_1, 2000, rng(9))
    b = audit_mechanism(pair.sample_0, pair.sample_1, 2000, rng(9))
    assert a.eps_lb == b.eps_lb and a.threshold == b.threshold


# ------------------------------------------------------------------------------------------------
# trials needed
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("eps, frac", [(1.0, 0.9), (3.0, 0.8)])
def test_trials_needed_is_minimal(eps, frac):
    n = trials_needed(eps, 0.95, frac)
    p = 1 / (1 + math.exp(eps))

    def lb(m):  # the certified ε at the (non-integer) expected counts m·p
        u = special.betaincinv(m * p + 1, m - m * p, 0.975)
        return math.log((1 - u) / u)

    assert lb(n) >= frac * eps > lb(n - 1)
    u = mp_cp_upper_real(n * p, n, 0.025)  # one high-precision confirmation
    assert float(mp.log((1 - u) / u)) >= frac * eps * (1 - 1e-12)
    # at integer counts the certified value agrees with empirical_epsilon
    k = round(n * p)
    assert abs(empirical_epsilon(k, k, n, n) - lb(n)) < 0.1


@pytest.mark.parametrize(
    "eps, n, c, delta", [(1.0, 1982, 0.95, 0.0), (2.0, 924, 0.95, 0.0), (0.3, 50, 0.9, 1e-5), (5.0, 3000, 0.99, 0.0)]
)
def test_ideal_epsilon_lower_bound_mpmath(eps, n, c, delta):
    """max(log((1 − δ − U)/U), 0), U the Clopper–Pearson bound at the (real) count n·p, p = 1/(1 + e^ε),
    against a 30-digit beta quantile."""
    p = 1 / (1 + mp.e ** mp.mpf(eps))
    u = mp_cp_upper_real(n * p, n, (1 - c) / 2)
    want = max(mp.log((1 - delta - u) / u), 0)
    assert close(ideal_epsilon_lower_bound(eps, n, c, delta), want, rtol=1e-9)
    # expected_empirical_epsilon at FPR = FNR = p is the same number
    assert ideal_epsilon_lower_bound(eps, n, c, delta) == expected_empirical_epsilon(
        float(corner_error_rate(eps)), float(corner_error_rate(eps)), n, c, delta
    )


@pytest.mark.parametrize("eps", [0.3, 0.5, 1.0, 2.0, 3.0, 5.0])
@pytest.mark.parametrize("frac", [0.5, 0.9])
def test_trials_needed_is_where_the_ideal_curve_reaches_the_fraction(eps, frac):
    """The marker and the curve of one model: the curve is ≥ fraction·ε at trials_needed, below
    it one trial earlier (the audit lab draws both)."""
    n = trials_needed(eps, 0.95, frac)
    lb = ideal_epsilon_lower_bound(eps, np.array([n - 1, n]), 0.95)
    assert lb[1] >= frac * eps > lb[0]
    ns = np.unique(np.round(np.logspace(0, 6, 200))).astype(np.int64)
    curve = ideal_epsilon_lower_bound(eps, ns)
    assert np.all(np.diff(curve) >= 0)  # unrounded counts: rises with n (no sawtooth)
    assert np.array_equal(curve >= frac * eps, ns >= n)


def test_expected_empirical_epsilon_is_empirical_epsilon_at_integer_counts():
    n = np.array([100, 1000, 20000])
    for fpr, fnr in ((0.05, 0.5), (0.1, 0.1), (0.0, 0.25), (0.37, 0.01)):
        got = expected_empirical_epsilon(fpr, fnr, n)
        want = empirical_epsilon(np.round(n * fpr), np.round(n * fnr), n, n)
        np.testing.assert_allclose(got, want, rtol=1e-12)  # n·FPR, n·FNR are whole numbers here
    b = expected_empirical_epsilon(np.array([[0.1], [0.2]]), 0.1, n, 0.9, 1e-6)
    assert b.shape == (2, 3) and np.all(b[0] >= b[1])


def test_trials_needed_orders():
    assert trials_needed(1.0, fraction=0.5) < trials_needed(1.0, fraction=0.9) < trials_needed(1.0, fraction=0.95)
    assert trials_needed(1.0, confidence=0.9) < trials_needed(1.0, confidence=0.99)
    assert trials_needed(0.1) > 100_000  # small ε needs a lot of trials


# ------------------------------------------------------------------------------------------------
# one-run auditing
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("v, r, c", [(900, 1000, 0.95), (60, 100, 0.9), (730, 1000, 0.99)])
def test_one_run_bound_mpmath(v, r, c):
    """At ε_lb, P[Binomial(r, e^ε/(1+e^ε)) ≥ v] = 1 − confidence."""
    e = one_run_epsilon_lower_bound(v, r, c)
    p = mp.e ** mp.mpf(e) / (1 + mp.e ** mp.mpf(e))
    tail = mp.betainc(v, r - v + 1, 0, p, regularized=True)  # P[Bin(r, p) ≥ v]
    assert close(tail, 1 - c, 1e-8)


def mp_one_run_p_value(v, r, eps, delta, m):
    q = mp.e ** mp.mpf(eps) / (1 + mp.e ** mp.mpf(eps))
    pmf = lambda k: mp.binomial(r, k) * q**k * (1 - q) ** (r - k)  # noqa: E731
    tail = mp.fsum(pmf(k) for k in range(v, r + 1))
    best, acc = mp.mpf(0), mp.mpf(0)
    for i in range(1, v + 1):
        acc += pmf(v - i)
        best = max(best, acc / i)
    return min(tail + 2 * m * mp.mpf(delta) * best, 1)


@pytest.mark.parametrize(
    "v, r, eps, delta, m",
    [(60, 100, 0.3, 0.0, 100), (60, 100, 0.3, 1e-4, 500), (140, 200, 0.5, 1e-6, 1000), (5, 10, 0.0, 1e-3, 10)],
)
def test_one_run_p_value_mpmath(v, r, eps, delta, m):
    assert close(one_run_p_value(v, r, eps, delta, m), mp_one_run_p_value(v, r, eps, delta, m), 1e-8)


@settings(max_examples=30, deadline=None)
@given(frac=st.floats(0.5, 1.0), ld=st.floats(-12, -3))
def test_one_run_delta_bound(frac, ld):
    r, m = 400, 1000
    v = int(round(frac * r))
    d = 10.0**ld
    e0 = one_run_epsilon_lower_bound(v, r)
    e = one_run_epsilon_lower_bound(v, r, delta=d, m=m)
    assert 0.0 <= e <= e0 + 1e-9  # δ > 0 can only weaken the conclusion
    assert one_run_epsilon_lower_bound(v, r, delta=d * 10, m=m) <= e + 1e-9
    if e > 0:  # rejected at ε_lb, not rejected just above
        assert one_run_p_value(v, r, e, d, m) < 0.05 <= one_run_p_value(v, r, e + 1e-6, d, m)


def test_one_run_bound_trivial_cases():
    assert one_run_epsilon_lower_bound(0, 10) == 0.0
    assert one_run_epsilon_lower_bound(5, 10) == 0.0
    # all correct: p_lo = (1 − c)^{1/r}
    r, c = 200, 0.95
    p = (1 - c) ** (1 / r)
    assert close(one_run_epsilon_lower_bound(r, r, c), math.log(p / (1 - p)))


def test_one_run_audit_correct_mechanisms():
    for mech, guesses in (("randomized_response", None), ("laplace", 2000)):
        lbs = [one_run_audit(10_000, 1.0, rng(s), mechanism=mech, guesses=guesses).eps_lb for s in range(20)]
        assert sum(lb > 1.0 for lb in lbs) <= stats.binom.ppf(0.999, 20, 0.05)
        assert np.median(lbs) > 0.8


def test_one_run_audit_exposes_bug():
    for s in range(5):
        r = one_run_audit(10_000, 1.0, rng(50 + s), mechanism="randomized_response", true_eps=2.0)
        assert r.eps_lb > 1.0 and r.true_eps == 2.0
    r = one_run_audit(10_000, 1.0, rng(60), mechanism="laplace", true_eps=2.0, guesses=2000)
    assert r.eps_lb > 1.0


def test_one_run_expected_correct_count():
    m = 20_000
    r = one_run_audit(m, 1.5, rng(7))
    p = math.exp(1.5) / (1 + math.exp(1.5))
    assert abs(r.correct / m - p) < 4.5 * math.sqrt(p * (1 - p) / m)


# ------------------------------------------------------------------------------------------------
# validation
# ------------------------------------------------------------------------------------------------
def _s(rng, size):
    return rng.random(size)


@pytest.mark.parametrize(
    "fn, args, name",
    [
        (clopper_pearson, (5, 0), "trials"),
        (clopper_pearson, (11, 10), "successes"),
        (clopper_pearson, (-1, 10), "successes"),
        (clopper_pearson, (1.5, 10), "successes"),
        (clopper_pearson, (1, 10, 1.0), "confidence"),
        (clopper_pearson, (float("nan"), 10), "successes"),
        (empirical_epsilon, (1, 1, 10, 10, 1.0), "delta"),
        (empirical_epsilon, (11, 1, 10, 10), "fp"),
        (empirical_epsilon, (1, 1, 0, 10), "trials_neg"),
        (empirical_epsilon, (1, 20, 10, 10), "fn"),
        (trials_needed, (0.0,), "eps"),
        (trials_needed, (1.0, 0.95, 1.5), "fraction"),
        (trials_needed, (float("nan"),), "eps"),
        (ideal_epsilon_lower_bound, (-1.0, 10), "eps"),
        (ideal_epsilon_lower_bound, (1.0, 0), "trials"),
        (ideal_epsilon_lower_bound, (1.0, 10.5), "trials"),
        (ideal_epsilon_lower_bound, (1.0, 10, 1.0), "confidence"),
        (ideal_epsilon_lower_bound, (1.0, 10, 0.95, 1.0), "delta"),
        (expected_empirical_epsilon, (1.5, 0.1, 10), "fpr"),
        (expected_empirical_epsilon, (0.1, -0.1, 10), "fnr"),
        (expected_empirical_epsilon, (0.1, 0.1, 0), "trials"),
        (one_run_epsilon_lower_bound, (5, 3), "correct"),
        (one_run_audit, (0, 1.0, np.random.default_rng()), "m"),
        (one_run_audit, (10, -1.0, np.random.default_rng()), "eps"),
        (one_run_audit, (10, 1.0, 7), "rng"),
        (audit_mechanism, (_s, _s, 0, np.random.default_rng()), "trials"),
        (audit_mechanism, (_s, _s, 10, None), "rng"),
        (miscalibrated_laplace, (1.0, 1.0, 0.0), "bug_factor"),
        (LaplaceAuditPair, (0.0,), "eps_claimed"),
    ],
)
def test_invalid(fn, args, name):
    with pytest.raises(ValueError, match=name):
        fn(*args)


def test_invalid_kwargs_one_run():
    with pytest.raises(ValueError, match="m "):
        one_run_epsilon_lower_bound(9, 10, delta=1e-5)
    with pytest.raises(ValueError, match="m must be"):
        one_run_p_value(9, 10, 1.0, 1e-5, m=5)
    with pytest.raises(ValueError, match="eps"):
        one_run_p_value(9, 10, -1.0)
    with pytest.raises(ValueError, match="delta"):
        one_run_audit(10, 1.0, rng(), delta=1.5)


def test_invalid_kwargs():
    with pytest.raises(ValueError, match="mechanism"):
        one_run_audit(10, 1.0, rng(), mechanism="gaussian")
    with pytest.raises(ValueError, match="guesses"):
        one_run_audit(10, 1.0, rng(), guesses=11)
    with pytest.raises(ValueError, match="sample_fn_0"):
        audit_mechanism(lambda r, n: r.random(n - 1), _s, 10, rng())
    with pytest.raises(ValueError, match="confidence"):
        audit_mechanism(_s, _s, 10, rng(), confidence=0.0)


# ------------------------------------------------------------------------------------------------
# auditing the mechanisms module
# ------------------------------------------------------------------------------------------------
def test_audit_gaussian_mechanism_with_delta():
    """Audits of an (ε(δ), δ)-DP Gaussian never certify more than ε(δ) (typically), and a
    doubled shift (sensitivity bug) is exposed."""
    mechanisms = pytest.importorskip("dpexplore.mechanisms")
    g = mechanisms.Gaussian(1.0)
    d = 1e-3
    claimed = g.epsilon(d)
    pair = MechanismAuditPair(g)
    lbs = [audit_mechanism(pair.sample_0, pair.sample_1, 20_000, rng(s), delta=d).eps_lb for s in range(10)]
    assert sum(lb > claimed for lb in lbs) <= 2 and min(lbs) > 0.5
    bug = MechanismAuditPair(g, shift=3.0)  # true sensitivity 3× the analysed one
    r = audit_mechanism(bug.sample_0, bug.sample_1, 20_000, rng(99), delta=d)
    assert r.eps_lb > claimed


def test_mechanism_pair_matches_laplace_pair():
    mechanisms = pytest.importorskip("dpexplore.mechanisms")
    a = MechanismAuditPair(mechanisms.Laplace(0.5))
    b = laplace_audit_pair(2.0)
    ra = audit_mechanism(a.sample_0, a.sample_1, 20_000, rng(5), threshold=1.0)
    rb = audit_mechanism(b.sample_0, b.sample_1, 20_000, rng(5), threshold=1.0)
    n = 20_000
    for x, y in ((ra.fp, rb.fp), (ra.fn, rb.fn)):
        p = y / n
        assert abs(x - y) / n < 6.5 * math.sqrt(max(p * (1 - p), 1e-4) / n)


def test_mechanism_pair_invalid():
    with pytest.raises(ValueError, match="mechanism"):
        MechanismAuditPair(object())
    with pytest.raises(ValueError, match="shift"):
        MechanismAuditPair(_Noise(), shift=-1.0)
    with pytest.raises(ValueError, match="shift"):
        MechanismAuditPair(type("NoSens", (), {"sample": lambda self, size=None, rng=None: rng.random(size)})())


class _Noise:
    sensitivity = 1.0

    def sample(self, size=None, rng=None):
        return rng.laplace(0.0, 1.0, size)


# ------------------------------------------------------------------------------------------------
# exact error rates of the audit pairs, and the corner rate 1/(1 + e^ε)
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("eps", [0.0, 1e-12, 1e-3, 0.5, 1.0, 7.0, 36.0, 300.0, 699.0, 710.0, 745.0])
def test_corner_error_rate_against_mpmath(eps):
    got = corner_error_rate(eps)
    want = 1 / (1 + mp.e ** mp.mpf(eps))
    assert got == pytest.approx(float(want), rel=1e-14, abs=1e-322)  # subnormal beyond ε ≈ 708


def test_corner_error_rate_is_trials_neededs_model_and_vectorised():
    e = np.linspace(0.0, 699.0, 4001)
    # bitwise the rate trials_needed used before it called this function
    assert np.array_equal(corner_error_rate(e), np.array([1.0 / (1.0 + math.exp(x)) for x in e]))
    assert corner_error_rate(800.0) == 0.0 and corner_error_rate(np.inf) == 0.0
    with pytest.raises(ValueError, match="eps"):
        corner_error_rate(-0.1)
    with pytest.raises(ValueError, match="eps"):
        corner_error_rate(float("nan"))


@pytest.mark.parametrize("sigma, shift", [(1.0, 1.0), (3.73, 1.0), (0.2, 2.5)])
def test_gaussian_pair_error_rates_are_phi(sigma, shift):
    pair = MechanismAuditPair(Gaussian(sigma), shift)
    t = np.array([-4.0, -0.3, 0.0, 0.4, 1.0, 6.0])
    fpr, fnr = pair.error_rates(t)
    for ti, a, b in zip(t, fpr, fnr):
        assert a == pytest.approx(float(mp.ncdf(-mp.mpf(ti) / sigma)), rel=1e-13)
        assert b == pytest.approx(float(mp.ncdf((mp.mpf(ti) - shift) / sigma)), rel=1e-13)
    # far tail: the log-space noise law keeps the rate instead of rounding it to 0 early
    assert pair.error_rates(40.0 * sigma)[0] == pytest.approx(float(mp.ncdf(-40)), rel=1e-12)


def test_mechanism_pair_error_rates_need_a_noise_law():
    class Bare:
        sensitivity = 1.0

        def sample(self, size=None, rng=None):
            return rng.normal(size=size)

    with pytest.raises(ValueError, match="logsf and logcdf"):
        MechanismAuditPair(Bare()).error_rates(0.0)


def test_randomized_response_pair_rates_and_samples():
    eps = 1.5
    pair = RandomizedResponseAuditPair(RandomizedResponse(eps))
    q = float(1 / (1 + mp.e ** mp.mpf(eps)))
    assert pair.error_rates(0.0) == pytest.approx((q, q), rel=1e-15)
    assert pair.error_rates(0.999) == pytest.approx((q, q), rel=1e-15)
    assert pair.error_rates(1.0) == (0.0, 1.0) and pair.error_rates(-0.5) == (1.0, 0.0)
    fpr, fnr = pair.error_rates(np.array([-1.0, 0.5, 2.0]))
    assert fpr.tolist() == [1.0, pytest.approx(q), 0.0] and fnr.tolist() == [0.0, pytest.approx(q), 1.0]
    n = 200_000
    x0, x1 = pair.sample_0(rng(5), n), pair.sample_1(rng(6), n)
    assert x0.dtype == x1.dtype == np.float64 and set(np.unique(x0)) <= {0.0, 1.0}
    tol = 5 * math.sqrt(q * (1 - q) / n)
    assert abs(np.mean(x0 > 0.5) - q) < tol and abs(np.mean(x1 <= 0.5) - q) < tol
    # an audit of it approaches ε from below (the corner of the ε-DP trade-off curve)
    r = audit_mechanism(pair.sample_0, pair.sample_1, 50_000, rng(7), threshold=0.5)
    assert 1.2 < r.eps_lb <= eps
    for bad in (object(), RandomizedResponse([0.5, 1.0])):
        with pytest.raises(ValueError, match="mechanism"):
            RandomizedResponseAuditPair(bad)
