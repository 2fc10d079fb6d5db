"""Tests for dpexplore.teaching (and its former name dpexplore.algorithms): closed forms against
mpmath, exact probabilities against seeded simulations (tolerances of ~4.5 binomial standard
errors), properties, validation."""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpexplore import teaching as alg
from dpexplore.algorithms import advanced_composition_pure
from dpexplore.teaching import (
    AboveThreshold,
    ReportNoisyMax,
    Sparse,
    Thresholdout,
    dp_max_information_tail_bound,
    generalization_via_dp,
    inverse_sensitivity_median,
    inverse_sensitivity_median_bound,
    inverse_sensitivity_median_loss,
    inverse_sensitivity_median_probs,
    laplace_median,
    laplace_median_error_bound,
    max_information_iid,
    max_information_pure,
    max_information_tail_bound,
    report_noisy_max,
    shuffle_amplification,
    shuffle_amplification_min_n,
    shuffle_amplification_valid,
    simulate_adaptive_overfitting,
    statistical_query_epsilon,
)

mp.mp.dps = 50
RTOL = 1e-9


def rng(seed=0):
    return np.random.default_rng(seed)


def close(a, b, rtol=RTOL):
    return abs(float(a) - float(b)) <= rtol * abs(float(b)) + 1e-300


def binom_tol(p, n, z=4.5):
    return z * math.sqrt(max(p * (1 - p), 1e-12) / n)


# ------------------------------------------------------------------------------------------------
# exact helpers (mpmath)
# ------------------------------------------------------------------------------------------------
def mp_lap_pdf(x, b):
    return mp.exp(-abs(x) / b) / (2 * b)


def mp_lap_sf(x, b):
    x = mp.mpf(x)
    return mp.exp(-x / b) / 2 if x >= 0 else 1 - mp.exp(x / b) / 2


def mp_first_wins_closed(gap, b):
    """Closed form of the same probability: 1 − e^{−g/b}(1 + g/(2b))/2 for g ≥ 0, symmetric."""
    g = mp.mpf(gap)
    q = mp.exp(-abs(g) / b) * (1 + abs(g) / (2 * b)) / 2
    return 1 - q if g >= 0 else q


def mp_prob_first_wins_laplace(gap, b):
    """P[s0 + Z0 > s1 + Z1] with gap = s0 - s1, Z i.i.d. Laplace(b): ∫ f(z) P[Z1 < z + gap] dz."""
    gap = mp.mpf(gap)
    f = lambda z: mp_lap_pdf(z, b) * (1 - mp_lap_sf(z + gap, b))  # noqa: E731
    return mp.quad(f, [-mp.inf] + sorted({-gap, mp.mpf(0)}) + [mp.inf])


# ------------------------------------------------------------------------------------------------
# Report noisy max
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("monotonic, factor", [(True, 1.0), (False, 2.0)])
def test_noisy_max_scale_and_privacy(monotonic, factor):
    r = ReportNoisyMax(0.5, sensitivity=3.0, monotonic=monotonic)
    assert r.noise_scale == factor * 3.0 / 0.5
    assert r.privacy() == (0.5, 0.0)


def test_noisy_max_laplace_two_candidates_closed_form_and_simulation():
    eps, gap = 1.0, 0.7
    b = 2.0 / eps  # general (non-monotone) scale
    # closed form for the difference of two Laplace(b): P[D > t] = e^{-t/b}(1 + t/(2b))/2, t >= 0
    exact = mp_prob_first_wins_laplace(gap, b)
    assert close(exact, mp_first_wins_closed(gap, b))
    assert close(mp_prob_first_wins_laplace(-gap, b), mp_first_wins_closed(-gap, b))
    n = 200_000
    idx = report_noisy_max([gap, 0.0], eps, rng(1), size=n)
    freq = np.mean(idx == 0)
    assert abs(freq - float(exact)) < binom_tol(float(exact), n)


def test_noisy_max_exponential_two_candidates():
    eps, gap = 2.0, 0.3
    b = 1.0 / eps
    idx = report_noisy_max([gap, 0.0], eps, rng(2), noise="exponential", monotonic=True, size=200_000)
    exact = 1 - 0.5 * math.exp(-gap / b)  # E0 - E1 ~ Laplace(b)
    assert abs(np.mean(idx == 0) - exact) < binom_tol(exact, 200_000)


def test_noisy_max_gumbel_is_exponential_mechanism():
    scores = np.array([0.0, 1.0, 2.5, -1.0])
    eps = 1.0
    idx = report_noisy_max(scores, eps, rng(3), noise="gumbel", size=200_000)
    w = [mp.exp(mp.mpf(s) * eps / 2) for s in scores]  # exp(eps u / (2 Δ))
    exact = [float(x / sum(w)) for x in w]
    freq = np.bincount(idx, minlength=4) / 200_000
    for f, p in zip(freq, exact):
        assert abs(f - p) < binom_tol(p, 200_000)


@pytest.mark.parametrize("gap", [0.0, 0.5, 2.0])
def test_noisy_max_dp_ratio_exact(gap):
    """Neighbouring score vectors (each score moves by <= Δ): P ratio within e^ε (exact)."""
    eps = 1.0
    b_general = 2.0 / eps
    for g0, g1 in [(gap, gap + 1.0), (gap, gap - 1.0), (gap, gap + 2.0)]:  # gap changes by <= 2Δ
        p0 = mp_first_wins_closed(g0, b_general)
        p1 = mp_first_wins_closed(g1, b_general)
        assert p0 <= mp.e**eps * p1 * (1 + 1e-12) and p1 <= mp.e**eps * p0 * (1 + 1e-12)
    # monotone: both scores move the same way, the gap changes by <= Δ
    b_mono = 1.0 / eps
    for g1 in (gap + 1.0, gap - 1.0):
        p0 = mp_first_wins_closed(gap, b_mono)
        p1 = mp_first_wins_closed(g1, b_mono)
        assert p0 <= mp.e**eps * p1 * (1 + 1e-12)


@pytest.mark.parametrize("gap", [-1.3, 0.0, 0.3, 2.0])
def test_noisy_max_probabilities_closed_forms(gap):
    lap = ReportNoisyMax(1.0, monotonic=True).probabilities([gap, 0.0])
    assert close(lap[0], mp_first_wins_closed(gap, 1.0)) and close(lap.sum(), 1.0)
    ex = ReportNoisyMax(2.0, noise="exponential").probabilities([gap, 0.0])  # b = 1
    # E0 − E1 ~ Laplace(b): P[E1 − E0 < g] = 1 − e^{−g/b}/2 (g ≥ 0), e^{g/b}/2 (g < 0)
    ref = 1 - mp.exp(-mp.mpf(gap)) / 2 if gap >= 0 else mp.exp(mp.mpf(gap)) / 2
    assert close(ex[0], ref)


def test_noisy_max_probabilities_match_simulation():
    scores = np.array([1.0, 0.0, 2.0, 1.5])
    rnm = ReportNoisyMax(1.5)
    p = rnm.probabilities(scores)
    n = 100_000
    freq = np.bincount(rnm.run(scores, rng(4), size=n), minlength=4) / n
    assert abs(p.sum() - 1) < 1e-9
    assert np.all(np.abs(freq - p) < [binom_tol(x, n) for x in p])


@settings(max_examples=15, deadline=None)
@given(
    s=st.lists(st.floats(-3, 3), min_size=2, max_size=4),
    shift=st.lists(st.floats(-1, 1), min_size=4, max_size=4),
    noise=st.sampled_from(["laplace", "exponential", "gumbel"]),
)
def test_noisy_max_probabilities_are_eps_dp(s, shift, noise):
    """General (non-monotone) scale 2Δ/ε: every neighbour (|s' − s|∞ ≤ Δ) keeps all selection
    probabilities within a factor e^ε (up to the quadrature error)."""
    eps = 1.0
    rnm = ReportNoisyMax(eps, noise=noise)
    s = np.array(s)
    p = rnm.probabilities(s)
    q = rnm.probabilities(s + np.array(shift[: s.size]))
    assert np.all(p <= np.exp(eps) * q + 1e-9) and np.all(q <= np.exp(eps) * p + 1e-9)


def test_noisy_max_shapes_and_determinism():
    s = np.zeros((3, 5))
    assert report_noisy_max(s, 1.0, rng(0)).shape == (3,)
    assert report_noisy_max(s, 1.0, rng(0), size=7).shape == (7, 3)
    a = report_noisy_max([1.0, 2.0, 3.0], 1.0, rng(5), size=50)
    b = report_noisy_max([1.0, 2.0, 3.0], 1.0, rng(5), size=50)
    assert np.array_equal(a, b)
    assert isinstance(report_noisy_max([1.0, 2.0], 1.0, rng(0)), int)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(eps=0.0), "eps"),
        (dict(eps=-1.0), "eps"),
        (dict(eps=float("nan")), "eps"),
        (dict(eps=1.0, sensitivity=0.0), "sensitivity"),
        (dict(eps=1.0, noise="cauchy"), "noise"),
    ],
)
def test_noisy_max_invalid(kwargs, name):
    with pytest.raises(ValueError, match=name):
        ReportNoisyMax(**kwargs)


@pytest.mark.parametrize(
    "scores, r, name",
    [
        ([], rng(), "scores"),
        ([1.0, float("nan")], rng(), "scores"),
        ([1.0, 2.0], 0, "rng"),
    ],
)
def test_noisy_max_invalid_run(scores, r, name):
    with pytest.raises(ValueError, match=name):
        report_noisy_max(scores, 1.0, r)


# ------------------------------------------------------------------------------------------------
# Sparse vector
# ------------------------------------------------------------------------------------------------
def test_advanced_composition_mpmath():
    for e0, k, d in [(0.1, 100, 1e-6), (0.5, 10, 1e-3), (0.01, 10000, 1e-9)]:
        e0m = mp.mpf(e0)
        ref = min(k * e0m, mp.sqrt(2 * k * mp.log(1 / mp.mpf(d))) * e0m + k * e0m * mp.expm1(e0m))
        with pytest.warns(DeprecationWarning, match="composition.advanced"):
            assert close(advanced_composition_pure(e0, k, d), ref)
    with pytest.warns(DeprecationWarning):
        assert advanced_composition_pure(0.3, 7, 0.0) == pytest.approx(2.1, rel=1e-15)


def test_above_threshold_scales():
    at = AboveThreshold(0.5, threshold=3.0, sensitivity=2.0)
    assert (at.threshold_scale, at.query_scale) == (8.0, 16.0)
    assert at.privacy() == (0.5, 0.0)
    assert close(at.accuracy(100, 0.05), 8 * 2.0 * (math.log(100) + math.log(40)) / 0.5)


def test_above_threshold_single_query_probability():
    """P[⊤] for one query at value v: P[ν − γ ≥ T − v], ν ~ Lap(4/ε), γ ~ Lap(2/ε) (mpmath)."""
    eps, T, v = 1.0, 2.0, 1.0
    bg, bn = 2 / eps, 4 / eps
    exact = mp.quad(lambda g: mp_lap_pdf(g, bg) * mp_lap_sf(T - v + g, bn), [-mp.inf, -(T - v), 0, mp.inf])
    at = AboveThreshold(eps, T)
    r = rng(11)
    n = 20_000
    hits = sum(at.start(r).answer(v) for _ in range(n))
    assert abs(hits / n - float(exact)) < binom_tol(float(exact), n)


def test_above_threshold_accuracy_guarantee():
    """Dwork & Roth Thm 3.24: queries ≥ α from T are all classified correctly w.p. ≥ 1 − β."""
    eps, T, k, beta = 2.0, 0.0, 50, 0.1
    at = AboveThreshold(eps, T)
    a = at.accuracy(k, beta)
    values = np.full(k, T - a)
    values[-1] = T + a
    r = rng(12)
    trials = 2000
    ok = sum(np.array_equal(at.run(values, r).answers, np.r_[np.zeros(k - 1), 1]) for _ in range(trials))
    assert ok / trials >= 1 - beta - binom_tol(1 - beta, trials, 3.0)


def test_stepwise_session():
    s = AboveThreshold(1.0, 0.0).start(rng(0))
    assert s.answer(-100.0) is False
    assert s.answer(100.0) is True
    assert s.halted and s.remaining == 0 and s.answer(100.0) is None
    sp = Sparse(c=2, eps=1.0, threshold=0.0).start(rng(0))
    out = [sp.answer(v) for v in (1e3, -1e3, 1e3, 1e3)]
    assert out == [True, False, True, None] and sp.above == [0, 2]


def test_sparse_batch_halts_after_c():
    sp = Sparse(c=3, eps=1.0, threshold=0.0)
    vals = np.where(np.arange(40) % 4 == 0, 1e4, -1e4)
    r = sp.run(vals, rng(1))
    assert r.count == 3 and r.halted
    assert r.above.tolist() == [0, 4, 8]
    assert (r.answers[9:] == -1).all() and r.n_answered == 9


def test_sparse_pure_noise():
    sp = Sparse(c=5, eps=0.5, threshold=1.0, sensitivity=2.0)
    assert sp.sigma == pytest.approx(2 * 5 * 2.0 / 0.5, rel=1e-14) and sp.sigma >= sp.sigma_slide
    assert sp.privacy()[0] <= 0.5 and sp.privacy() == pytest.approx((0.5, 0.0), rel=1e-14)
    assert close(sp.accuracy(10, 0.1), 4 * sp.sigma * (math.log(10) + math.log(100)))


@pytest.mark.parametrize("c, eps, delta", [(100, 1.0, 1e-6), (10, 0.3, 1e-9), (1000, 5.0, 1e-5), (2, 1.0, 0.1)])
def test_sparse_approx_is_rigorous_and_tight(c, eps, delta):
    sp = Sparse(c=c, eps=eps, delta=delta)
    e, d = sp.privacy()
    assert d == delta and e <= eps and e >= eps * (1 - 1e-9)
    # recompute the bound with mpmath at the chosen per-instance ε0
    e0 = mp.mpf(2) / mp.mpf(sp.sigma)
    ref = min(c * e0, mp.sqrt(2 * c * mp.log(1 / mp.mpf(delta))) * e0 + c * e0 * mp.expm1(e0))
    assert ref <= eps * (1 + 1e-12)
    # the slide's σ drops the second-order term: it is (slightly) too small
    assert sp.sigma >= sp.sigma_slide * (1 - 1e-12) or c * 2 / sp.sigma_slide <= eps


@settings(max_examples=40, deadline=None)
@given(c=st.integers(1, 500), eps=st.floats(0.01, 10), ld=st.floats(-20, -1))
def test_sparse_privacy_never_exceeds_target(c, eps, ld):
    sp = Sparse(c=c, eps=eps, delta=10.0**ld)
    e, _ = sp.privacy()
    assert e <= eps
    assert Sparse(c=c, eps=eps).privacy()[0] <= eps
    # more δ allowed -> no more noise
    assert Sparse(c=c, eps=eps, delta=10.0**ld).sigma <= Sparse(c=c, eps=eps).sigma * (1 + 1e-12)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(c=0, eps=1.0), "c"),
        (dict(c=1.5, eps=1.0), "c"),
        (dict(c=2, eps=0.0), "eps"),
        (dict(c=2, eps=1.0, delta=1.0), "delta"),
        (dict(c=2, eps=1.0, delta=-0.1), "delta"),
        (dict(c=2, eps=1.0, threshold=float("nan")), "threshold"),
        (dict(c=2, eps=1.0, sensitivity=-1), "sensitivity"),
    ],
)
def test_sparse_invalid(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Sparse(**kwargs)


@pytest.mark.parametrize(
    "args, name", [((0.0, 1.0), "eps"), ((1.0, float("inf")), "threshold"), ((float("nan"), 1.0), "eps")]
)
def test_above_threshold_invalid(args, name):
    with pytest.raises(ValueError, match=name):
        AboveThreshold(*args)


def test_svt_invalid_inputs():
    at = AboveThreshold(1.0, 0.0)
    with pytest.raises(ValueError, match="rng"):
        at.start(42)
    with pytest.raises(ValueError, match="value"):
        at.start(rng()).answer(float("nan"))
    with pytest.raises(ValueError, match="beta"):
        at.accuracy(10, 0.0)
    with pytest.raises(ValueError, match="k"):
        at.accuracy(0, 0.1)


# ------------------------------------------------------------------------------------------------
# Thresholdout
# ------------------------------------------------------------------------------------------------
def test_thresholdout_privacy_values():
    to = Thresholdout(threshold=0.04, sigma=0.01, budget=100, n=10_000)
    assert close(to.privacy()[0], 2 * 100 / (0.01 * 10_000))
    d = 1e-6
    e0 = 1 / (mp.mpf("0.01") * 10_000)
    rig = min(2 * 100 * e0, 2 * (mp.sqrt(2 * 100 * mp.log(2 / mp.mpf(d))) * e0 + 100 * e0 * mp.expm1(e0)))
    assert close(to.privacy(d)[0], rig) and to.privacy(d)[1] == d
    assert close(to.privacy_published(d)[0], mp.sqrt(32 * 100 * mp.log(2 / mp.mpf(d))) / (mp.mpf("0.01") * 10_000))
    assert close(to.privacy_slide(d)[0], 2 * mp.sqrt(2 * 100 * mp.log(2 / mp.mpf(d))) / (mp.mpf("0.01") * 10_000))
    # the slide keeps only the first-order term: the rigorous value is above it
    assert to.privacy(d)[0] >= to.privacy_slide(d)[0]


@settings(max_examples=40, deadline=None)
@given(b=st.integers(1, 1000), sigma=st.floats(1e-4, 1.0), n=st.integers(10, 10**6), ld=st.floats(-15, -1))
def test_thresholdout_privacy_properties(b, sigma, n, ld):
    to = Thresholdout(0.05, sigma, b, n)
    e_pure = to.privacy()[0]
    e_approx = to.privacy(10.0**ld)[0]
    assert e_approx <= e_pure
    assert Thresholdout(0.05, sigma, b + 1, n).privacy(10.0**ld)[0] >= e_approx  # more budget, more ε


def test_thresholdout_mechanics():
    to = Thresholdout(threshold=0.05, sigma=1e-4, budget=2, n=1000)
    t = np.array([0.5, 0.9, 0.5, 0.9, 0.9, 0.2])
    h = np.array([0.5, 0.1, 0.5, 0.1, 0.1, 0.2])
    r = to.run(t, h, rng(0))
    assert r.used_holdout.tolist() == [False, True, False, True, False, False]
    assert r.answered.tolist() == [True] * 4 + [False] * 2
    assert np.allclose(r.answers[[1, 3]], 0.1, atol=0.01)
    assert np.array_equal(r.answers[[0, 2, 4, 5]], t[[0, 2, 4, 5]])


def test_thresholdout_over_probability():
    """P[use holdout] for one query with gap g: P[g > T + γ + η], γ ~ Lap(2σ), η ~ Lap(4σ)."""
    T, s, g = 0.05, 0.02, 0.08
    exact = mp.quad(
        lambda x: mp_lap_pdf(x, 2 * s) * (1 - mp_lap_sf(g - T - x, 4 * s)),
        [-mp.inf] + sorted([mp.mpf(g - T), mp.mpf(0)]) + [mp.inf],
    )
    to = Thresholdout(T, s, budget=1, n=100)
    r = rng(21)
    n = 20_000
    hits = sum(bool(to.run([0.5], [0.5 + g], r).used_holdout[0]) for _ in range(n))
    assert abs(hits / n - float(exact)) < binom_tol(float(exact), n)


def test_adaptive_overfitting_experiment():
    naive = simulate_adaptive_overfitting(2000, 4000, 10, rng(0), "naive")
    to = simulate_adaptive_overfitting(2000, 4000, 10, rng(0), "thresholdout")
    for r in (naive, to):
        assert r.k.tolist() == list(range(10, 101, 10))
        # no signal: true accuracy 1/2, fresh data says so (sampling s.e. ≈ 0.011)
        assert np.all(np.abs(r.fresh - 0.5) < 0.05)
        assert r.train[-1] > 0.6  # training accuracy overfits in both cases
    # naive reuse: the holdout is fooled; Thresholdout: the holdout estimate stays honest
    naive_gap = naive.holdout[-5:] - naive.fresh[-5:]
    to_gap = to.holdout[-5:] - to.fresh[-5:]
    assert naive_gap.mean() > 0.08
    assert abs(to_gap.mean()) < 0.05 and abs(to_gap.mean()) < naive_gap.mean() / 2
    assert naive.holdout_queries_over == 0 and to.holdout_queries_over > 0


def test_adaptive_overfitting_with_signal():
    r = simulate_adaptive_overfitting(1000, 1000, 4, rng(3), "thresholdout", n_signal=20, signal=0.3)
    assert r.fresh.max() > 0.7


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(threshold=-0.1, sigma=0.1, budget=1, n=10), "threshold"),
        (dict(threshold=0.1, sigma=0, budget=1, n=10), "sigma"),
        (dict(threshold=0.1, sigma=0.1, budget=0, n=10), "budget"),
        (dict(threshold=0.1, sigma=0.1, budget=1, n=2.5), "n"),
    ],
)
def test_thresholdout_invalid(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Thresholdout(**kwargs)


def test_thresholdout_invalid_values():
    to = Thresholdout(0.1, 0.1, 1, 10)
    with pytest.raises(ValueError, match="holdout_values"):
        to.run([0.5], [1.5], rng())
    with pytest.raises(ValueError, match="delta"):
        to.privacy(1.0)
    with pytest.raises(ValueError, match="method"):
        simulate_adaptive_overfitting(10, 10, 2, rng(), "magic")
    with pytest.raises(ValueError, match="rounds"):
        simulate_adaptive_overfitting(10, 10, 0, rng())


# ------------------------------------------------------------------------------------------------
# Generalization and max-information
# ------------------------------------------------------------------------------------------------
def test_generalization_closed_forms():
    n, beta = 5000, 1e-3
    e, f = generalization_via_dp(n, beta)
    assert close(e, mp.sqrt(mp.log(1 / mp.mpf(beta)) / (2 * n))) and close(f, 3 * mp.sqrt(mp.mpf(beta)))
    tau = 0.05
    e2, f2 = statistical_query_epsilon(tau, n)
    assert close(e2, mp.sqrt(mp.mpf(tau) ** 2 - mp.log(2) / (2 * n)))
    assert close(f2, 3 * mp.sqrt(2) * mp.exp(-n * mp.mpf(tau) ** 2))
    # the corollary is the theorem at β = 2 exp(−2nτ²)
    e3, f3 = generalization_via_dp(n, 2 * math.exp(-2 * n * tau**2))
    assert close(e3, e2, 1e-9) and close(f3, f2, 1e-9)
    assert close(max_information_pure(0.1, 50), 0.1 * 50 / mp.log(2))
    ref = (mp.mpf("0.02") ** 2 * 1000 / 2 + mp.mpf("0.02") * mp.sqrt(1000 * mp.log(2 / mp.mpf("0.01")) / 2)) / mp.log(2)
    assert close(max_information_iid(0.02, 1000, 0.01), ref)
    ref = 2 ** mp.mpf(3) * 2 * mp.exp(-2 * mp.mpf("0.1") ** 2 / (1000 * mp.mpf("0.001") ** 2)) + mp.mpf("0.01")
    assert close(max_information_tail_bound(3.0, 0.1, 1000, 1e-3, 0.01), ref)


@pytest.mark.parametrize("x", [5.0, 10.0, 30.0])
def test_take2_tail_bound_identity(x):
    n = 400
    c = 1 / n
    tau = math.sqrt(x * n) * c
    p = dp_max_information_tail_bound(tau / (n * c), tau, n, c, 2 * math.exp(-x))
    xm = mp.mpf(x)
    ref = 2 * mp.exp((1 / mp.sqrt(2) - mp.mpf(3) / 2) * xm) + 2 * mp.exp(-xm)
    assert close(p, ref, 1e-9)
    if x >= 10:  # the slide's simplified form, "for large τ²/(nc²)"
        assert p <= 2 * math.exp(-0.75 * x)


@settings(max_examples=40, deadline=None)
@given(tau=st.floats(1e-3, 0.7), logn=st.floats(0.5, 9.0), beta=st.floats(1e-15, 0.5))
def test_generalization_bounds_route_by_route(tau, logn, beta):
    """generalization_bounds is the five routes of Bassi 2019, each the one-result function (or its
    closed form) at the route's ε and β: vectorised over n, bit for bit at each n."""
    ns = np.array([10**logn, 2 * 10**logn])
    g = alg.generalization_bounds(tau, ns, beta)
    for i, n in enumerate(ns):
        x = n * tau * tau
        ok = tau * tau > math.log(2) / (2 * n)
        assert g.sq_ok[i] == ok
        if ok:
            assert (g.sq_eps[i], g.sq_fail[i]) == alg.statistical_query_epsilon(tau, n)
        else:
            assert (g.sq_eps[i], g.sq_fail[i]) == (0.0, 1.0)
        bits = alg.max_information_pure(tau * tau, n)
        assert g.pure_bits[i] == bits and g.pure_fail[i] == alg.max_information_tail_bound(bits, tau, n, 1 / n, 0.0)
        b2 = min(max(2 * math.exp(-x), alg.TAKE2_BETA_FLOOR), 0.5)
        assert g.take2_beta[i] == pytest.approx(b2, rel=1e-15)
        assert g.take2_fail[i] == pytest.approx(alg.dp_max_information_tail_bound(tau, tau, n, 1 / n, b2), rel=1e-14)
        assert (g.gen_eps[i], g.gen_fail[i]) == alg.generalization_via_dp(n, beta)
        assert g.hoeffding[i] == pytest.approx(min(2 * math.exp(-2 * x), 1.0), rel=1e-15)
    # the adaptive routes never promise more than a fixed query gets
    assert np.all(g.pure_fail >= g.hoeffding * (1 - 1e-12))


def test_generalization_bounds_at_the_slides_numbers_and_errors():
    g = alg.generalization_bounds(0.05, 10_000, 1e-3)
    x = mp.mpf(10_000) * mp.mpf(0.05) ** 2
    assert g.sq_eps == pytest.approx(float(mp.sqrt(mp.mpf(0.05) ** 2 - mp.log(2) / 20_000)), rel=1e-14)
    # take 2 at β′ = 2e^{−nτ²} is the slide's 2exp((1/√2 − 3/2)nτ²) + 2e^{−nτ²}
    want = 2 * mp.exp((1 / mp.sqrt(2) - mp.mpf(3) / 2) * x) + 2 * mp.exp(-x)
    assert g.take2_fail == pytest.approx(float(want), rel=1e-9)
    for args, name in (((0.0, 10, 0.1), "tau"), ((0.1, 0, 0.1), "n"), ((0.1, 10, 0.0), "beta")):
        with pytest.raises(ValueError, match=name):
            alg.generalization_bounds(*args)


@settings(max_examples=50, deadline=None)
@given(n=st.integers(1, 10**7), lb=st.floats(-50, -0.01))
def test_generalization_monotone(n, lb):
    beta = math.exp(lb)
    e, f = generalization_via_dp(n, beta)
    e2, _ = generalization_via_dp(n + 1, beta)
    assert e2 <= e and 0 <= f <= 1
    assert max_information_iid(0.1, n, beta) >= max_information_iid(0.05, n, beta)


@pytest.mark.parametrize(
    "fn, args, name",
    [
        (generalization_via_dp, (0, 0.1), "n"),
        (generalization_via_dp, (10, 0.0), "beta"),
        (statistical_query_epsilon, (0.001, 100), "tau"),
        (statistical_query_epsilon, (-1.0, 100), "tau"),
        (max_information_pure, (-0.1, 10), "eps"),
        (max_information_iid, (0.1, 10, 1.0), "beta"),
        (max_information_tail_bound, (1.0, 0.1, 10, 0.0, 0.1), "c"),
        (max_information_iid, (float("nan"), 10, 0.1), "eps"),
    ],
)
def test_generalization_invalid(fn, args, name):
    with pytest.raises(ValueError, match=name):
        fn(*args)


# ------------------------------------------------------------------------------------------------
# Shuffling
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("eL, n, d", [(1.0, 10_000, 1e-6), (0.1, 10**6, 1e-8), (3.0, 10**5, 1e-5)])
def test_shuffle_eq1_mpmath(eL, n, d):
    e = mp.mpf(eL)
    ref = mp.log(1 + 16 * (mp.e**e - 1) / (mp.e**e + 1) * mp.sqrt(mp.e**e * mp.log(4 / mp.mpf(d)) / n))
    assert shuffle_amplification_valid(eL, n, d)
    assert close(shuffle_amplification(eL, n, d), min(ref, e))


def test_shuffle_condition_and_strict():
    # condition ε_L ≤ ln(n / (16 ln(4/δ)))
    n, d = 10_000, 1e-6
    edge = math.log(n / (16 * math.log(4 / d)))
    assert shuffle_amplification_valid(edge * 0.999, n, d) and not shuffle_amplification_valid(edge * 1.001, n, d)
    assert shuffle_amplification(edge * 1.001, n, d) == edge * 1.001
    with pytest.raises(ValueError, match="n"):
        shuffle_amplification(edge * 1.001, n, d, strict=True)
    # small n: no amplification claimed
    assert shuffle_amplification(0.5, 10, 1e-6) == 0.5
    out = shuffle_amplification(np.array([0.5, 1.0, 2.0]), 10**6, 1e-6)
    assert out.shape == (3,) and np.all(np.diff(out) > 0)


def test_shuffle_min_n_is_the_condition_solved_for_n():
    # n_min = 16 log(4/δ) e^{ε_L} (mpmath), and the condition holds just above it, fails just below
    e, d = np.array([0.01, 1.0, 3.0, 10.0]), np.array([1e-15, 1e-6, 1e-5, 0.01])
    got = shuffle_amplification_min_n(e, d)
    ref = [16 * mp.log(4 / mp.mpf(float(di))) * mp.exp(mp.mpf(float(ei))) for ei, di in zip(e, d)]
    np.testing.assert_allclose(got, [float(r) for r in ref], rtol=1e-14)
    assert np.all(shuffle_amplification_valid(e, got * (1 + 1e-9), d))
    assert not np.any(shuffle_amplification_valid(e, got * (1 - 1e-9), d))
    assert shuffle_amplification_min_n(800.0, 1e-6) == math.inf
    for args, name in (((-1.0, 1e-6), "eps_local"), ((1.0, 1.0), "delta"), ((1.0, 0.0), "delta")):
        with pytest.raises(ValueError, match=name):
            shuffle_amplification_min_n(*args)


def fmt21_refined(n, e0, d):
    """FMT21's refined closed form as evaluated by the authors' reference implementation
    (apple/ml-shuffling-amplification): with a = 8 sqrt(e^{ε0} ln(4/δ)/n), c = 8 e^{ε0}/n,
    ε1 = ln(1 + a + c): ε = ln(1 + (1 − e^{−ε0}) / (1 + e^{−ε0−ε1}) · (a + c))."""
    e0 = mp.mpf(e0)
    a = 8 * mp.sqrt(mp.e**e0 * mp.log(4 / mp.mpf(d)) / n)
    c = 8 * mp.e**e0 / n
    e1 = mp.log(1 + a + c)
    return mp.log(1 + (1 - mp.e**-e0) / (1 + mp.e ** (-e0 - e1)) * (a + c))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(10**3, 10**9), ld=st.floats(-12, -2), frac=st.floats(0.001, 1.0))
def test_shuffle_eq1_dominates_refined_form(n, ld, frac):
    """Where the condition holds, eq. (1) is never below the theorem's refined closed form."""
    d = 10.0**ld
    edge = math.log(n / (16 * math.log(4 / d)))
    if edge <= 0:
        return
    e0 = frac * edge
    assert shuffle_amplification(e0, n, d) >= min(float(fmt21_refined(n, e0, d)), e0) * (1 - 1e-12)


@settings(max_examples=60, deadline=None)
@given(eL=st.floats(0.0, 20.0), n=st.integers(1, 10**9), ld=st.floats(-30, -1))
def test_shuffle_properties(eL, n, ld):
    d = 10.0**ld
    e = shuffle_amplification(eL, n, d)
    assert 0.0 <= e <= eL
    assert shuffle_amplification(eL, n * 2, d) <= e  # more users, more privacy


@pytest.mark.parametrize(
    "args, name",
    [
        ((-1.0, 100, 1e-6), "eps_local"),
        ((1.0, 0, 1e-6), "n"),
        ((1.0, 100, 0.0), "delta"),
        ((1.0, 100, 1.0), "delta"),
        ((float("nan"), 100, 1e-6), "eps_local"),
    ],
)
def test_shuffle_invalid(args, name):
    with pytest.raises(ValueError, match=name):
        shuffle_amplification(*args)


# ------------------------------------------------------------------------------------------------
# Median: inverse sensitivity vs Laplace
# ------------------------------------------------------------------------------------------------
def brute_loss(x, y):
    """Fewest replacements so that the lower median x̃_(⌈n/2⌉) equals y (replacement values
    from {y, far below, far above} suffice)."""
    n = len(x)
    m = (n + 1) // 2
    far = (min(min(x), y) - 1, max(max(x), y) + 1)
    for r in range(n + 1):
        for idx in itertools.combinations(range(n), r):
            for vals in itertools.product((y, *far), repeat=r):
                z = list(x)
                for i, v in zip(idx, vals):
                    z[i] = v
                if sorted(z)[m - 1] == y:
                    return r
    raise AssertionError


@settings(max_examples=40, deadline=None)
@given(x=st.lists(st.integers(0, 6), min_size=1, max_size=6))
def test_inverse_sensitivity_loss_brute_force(x):
    grid = np.arange(0, 7, 0.5)
    got = inverse_sensitivity_median_loss(np.array(x, float), grid)
    assert got.tolist() == [brute_loss(x, float(y)) for y in grid]


@settings(max_examples=40, deadline=None)
@given(
    x=st.lists(st.floats(0, 1), min_size=1, max_size=30),
    i=st.integers(0, 29),
    new=st.floats(0, 1),
    eps=st.floats(0.05, 5),
)
def test_inverse_sensitivity_is_eps_dp(x, i, new, eps):
    x = np.array(x)
    x2 = x.copy()
    x2[i % x.size] = new
    _, p = inverse_sensitivity_median_probs(x, eps, 0.0, 1.0, grid=41)
    _, q = inverse_sensitivity_median_probs(x2, eps, 0.0, 1.0, grid=41)
    assert np.all(p <= np.exp(eps) * q * (1 + 1e-12)) and np.all(q <= np.exp(eps) * p * (1 + 1e-12))
    assert abs(p.sum() - 1) < 1e-12


def test_inverse_sensitivity_probs_mpmath_and_sampler():
    x = np.array([0.1, 0.35, 0.4, 0.42, 0.9])
    eps = 1.5
    g, p = inverse_sensitivity_median_probs(x, eps, 0.0, 1.0, grid=21)
    loss = inverse_sensitivity_median_loss(x, g)
    w = [mp.exp(-mp.mpf(eps) * int(l) / 2) for l in loss]
    ref = [wi / sum(w) for wi in w]
    assert all(close(a, b) for a, b in zip(p, ref))
    n = 100_000
    s = inverse_sensitivity_median(x, eps, 0.0, 1.0, rng(7), grid=21, size=n)
    freq = np.array([np.mean(np.isclose(s, gi)) for gi in g])
    assert np.all(np.abs(freq - p) < [binom_tol(pi, n) + 1e-9 for pi in p])


def test_inverse_sensitivity_utility_bound():
    r = rng(8)
    x = r.normal(0.5, 0.05, 301)
    eps, beta = 0.5, 0.1
    k, lo, hi = inverse_sensitivity_median_bound(x, eps, beta, 0.0, 1.0, grid=1001)
    assert k == math.floor(2 / eps * math.log(1001 / beta))
    xs = np.sort(x)
    assert (lo, hi) == (xs[151 - k - 1], xs[151 + k - 1])
    s = inverse_sensitivity_median(x, eps, 0.0, 1.0, r, size=4000)
    assert np.mean((s >= lo) & (s <= hi)) >= 1 - beta
    # the exact probability of the interval is at least 1 - β too
    g, p = inverse_sensitivity_median_probs(x, eps, 0.0, 1.0)
    assert p[(g >= lo) & (g <= hi)].sum() >= 1 - beta


def test_laplace_median_baseline_and_comparison():
    r = rng(9)
    x = r.normal(0.5, 0.05, 301)
    eps = 0.5
    med = np.sort(x)[150]
    lap = laplace_median(x, eps, 0.0, 1.0, r, size=20_000)
    assert lap.min() >= 0.0 and lap.max() <= 1.0
    bound = laplace_median_error_bound(eps, 0.0, 1.0, 0.2)
    assert close(bound, math.log(5) / eps)
    assert np.mean(np.abs(lap - med) <= bound) >= 0.8
    # unclipped check of the Laplace scale GS/ε: P[|err| > t] = e^{-tε/GS} for t < distance to the clip
    t = 0.1
    assert abs(np.mean(np.abs(lap - med) > t) - math.exp(-t * eps)) < binom_tol(math.exp(-t * eps), 20_000)
    inv = inverse_sensitivity_median(x, eps, 0.0, 1.0, r, size=5000)
    assert np.mean(np.abs(inv - med)) < np.mean(np.abs(lap - med)) / 5  # concentrated data: local sensitivity wins


@pytest.mark.parametrize(
    "fn, args, name",
    [
        (inverse_sensitivity_median_probs, ([0.5], 0.0, 0.0, 1.0), "eps"),
        (inverse_sensitivity_median_probs, ([0.5], 1.0, 1.0, 0.0), "upper"),
        (inverse_sensitivity_median_probs, ([float("nan")], 1.0, 0.0, 1.0), "data"),
        (inverse_sensitivity_median_probs, ([0.5], 1.0, 0.0, 1.0, 1), "grid"),
        (inverse_sensitivity_median_bound, ([0.5], 1.0, 0.0, 0.0, 1.0), "beta"),
        (laplace_median_error_bound, (0.0, 0.0, 1.0, 0.1), "eps"),
        (laplace_median, ([0.5], 1.0, 0.0, 1.0, "seed"), "rng"),
        (inverse_sensitivity_median, ([0.5], -1.0, 0.0, 1.0, np.random.default_rng()), "eps"),
    ],
)
def test_median_invalid(fn, args, name):
    with pytest.raises(ValueError, match=name):
        fn(*args)


def test_module_exports_exist():
    for name in alg.__all__:
        assert hasattr(alg, name), name


def test_the_former_module_re_exports_the_same_objects():
    """dpexplore.algorithms (the former single module) serves every name of dpexplore.teaching,
    the very same objects, plus the deprecated advanced_composition_pure."""
    import dpexplore.algorithms as old

    assert set(old.__all__) == set(alg.__all__) | {"advanced_composition_pure"}
    for name in alg.__all__:
        assert getattr(old, name) is getattr(alg, name), name
    assert old.LOG2E == 1.0 / math.log(2.0)


def _plain_corr(x, y):
    """y·x / n as the simulation computed it before: float32 matrix products in column blocks."""
    n, d = x.shape
    yf = y.astype(np.float32)
    return np.concatenate([yf @ x[:, j : j + 2048].astype(np.float32) for j in range(0, d, 2048)]) / n


@pytest.mark.parametrize("n, d, seed", [(1, 1, 0), (7, 5000, 1), (1000, 2000, 2), (4097, 300, 3)])
def test_pm1_corr_equals_the_float32_product_bit_for_bit(n, d, seed):
    from dpexplore.teaching.thresholdout import _pm1_corr

    g = np.random.default_rng(seed)
    x = (g.integers(0, 2, (n, d), dtype=np.int8) * 2 - 1).astype(np.int8)
    y = (g.integers(0, 2, n, dtype=np.int8) * 2 - 1).astype(np.int8)
    fast, plain = _pm1_corr(x, y), _plain_corr(x, y)
    assert fast.dtype == plain.dtype == np.float32
    assert np.array_equal(fast, plain)
    assert fast.view(np.uint32).tolist() == plain.view(np.uint32).tolist()


@pytest.mark.parametrize("method", ["naive", "thresholdout"])
def test_adaptive_simulation_unchanged_by_the_faster_correlations(method, monkeypatch):
    """The whole experiment (the adaptive lab's n-rows slider reruns it) gives the same numbers
    with the counting correlations as with the plain float32 products."""
    import dpexplore.teaching.thresholdout as alg

    fast = [
        alg.simulate_adaptive_overfitting(n, d, 5, rng(s), method)
        for n, d, s in [(1000, 2000, 0), (501, 3000, 4), (300, 600, 7)]
    ]
    monkeypatch.setattr(alg, "_pm1_corr", _plain_corr)
    plain = [
        alg.simulate_adaptive_overfitting(n, d, 5, rng(s), method)
        for n, d, s in [(1000, 2000, 0), (501, 3000, 4), (300, 600, 7)]
    ]
    for a, b in zip(fast, plain):
        assert a.n_selected == b.n_selected and a.holdout_queries_over == b.holdout_queries_over
        for f in ("k", "train", "holdout", "fresh"):
            assert np.array_equal(getattr(a, f), getattr(b, f)), f


# ------------------------------------------------------------------------------------------------
# Laplace noise on counting queries (Bassi 2019)
# ------------------------------------------------------------------------------------------------
def test_counting_queries_closed_forms_against_mpmath():
    from dpexplore.teaching import counting_queries as cq

    for e in (0.01, 0.5, 1.0, 4.0, 30.0):
        me = mp.mpf(e)
        assert close(cq.differencing_attack_accuracy(e), 1 - (1 + me / 4) * mp.exp(-me / 2) / 2)
        for x in (0.0, -0.7, 3.0):
            a = me * abs(mp.mpf(x))
            assert close(cq.laplace_difference_density(x, e), me / 4 * (1 + a) * mp.exp(-a))
    assert cq.differencing_attack_accuracy(0.0) == 0.5 and cq.differencing_attack_accuracy(math.inf) == 1.0
    # the density integrates to 1 and is 0 at ±inf
    xs = np.linspace(-60.0, 60.0, 200_001)
    assert np.trapezoid(cq.laplace_difference_density(xs, 0.8), xs) == pytest.approx(1.0, abs=1e-6)
    assert cq.laplace_difference_density(math.inf, 1.0) == 0.0
    # H_m: the running sum, and ψ(m + 1) + γ beyond 10⁶ (continuous across the switch)
    for m in (1, 7, 1000, 10**6, 10**6 + 1, 10**9):
        assert close(cq.harmonic_number(m), mp.harmonic(m))
    assert cq.harmonic_number(math.inf) == math.inf
    assert close(cq.laplace_max_error_mean(137, 2.5), 2.5 * mp.harmonic(137))
    for t, m, b in ((0.3, 1, 1.0), (5.0, 100, 0.5), (40.0, 1000, 10.0)):
        assert close(cq.laplace_max_error_cdf(t, m, b), (1 - mp.exp(-mp.mpf(t) / b)) ** m)
    assert cq.laplace_max_error_cdf(-1.0, 3, 1.0) == 0.0 and cq.laplace_max_error_cdf(math.inf, 3, 1.0) == 1.0


@settings(max_examples=60, deadline=None)
@given(e=st.floats(1e-6, 1e3), m=st.integers(1, 10**7))
def test_counting_query_scales_are_sensitivity_over_eps_never_below(e, m):
    """b = Δf/ε with Δf = 1 (one, disjoint) and m (general), against exact rationals: never below
    Δf/ε (the scale is rounded up), within a relative 1e-14; the scales of Laplace.calibrate."""
    from fractions import Fraction

    from dpexplore.mechanisms import Laplace
    from dpexplore.teaching import counting_query_scales

    b = counting_query_scales(e, m)
    for key, sens in (("one", 1), ("general", m), ("disjoint", 1)):
        want = Fraction(sens) / Fraction(e)
        assert Fraction(b[key]) >= want and float(Fraction(b[key]) / want - 1) <= 1e-14, (key, e, m)
    assert b["general"] == Laplace.calibrate(e, sensitivity=m).scale and b["one"] == Laplace.calibrate(e).scale


def test_counting_query_scales_vectorised_and_errors():
    from dpexplore.teaching import counting_query_scales

    b = counting_query_scales(np.array([[0.5], [2.0]]), np.array([1, 10, 100]))
    assert {k: v.shape for k, v in b.items()} == {"one": (2, 3), "general": (2, 3), "disjoint": (2, 3)}
    np.testing.assert_allclose(b["general"], [[2.0, 20.0, 200.0], [0.5, 5.0, 50.0]], rtol=1e-15)
    np.testing.assert_array_equal(b["one"], b["disjoint"])
    assert isinstance(counting_query_scales(1.0, 3)["general"], float)
    for bad, name in (
        ((0.0, 3), "eps"),
        ((-1.0, 3), "eps"),
        ((math.inf, 3), "eps"),
        ((1.0, 0), "m"),
        ((1.0, 2.5), "m"),
    ):
        with pytest.raises(ValueError, match=name):
            counting_query_scales(*bad)


@pytest.mark.parametrize(
    "name, call",
    [
        ("eps", lambda cq: cq.differencing_attack_accuracy(-0.1)),
        ("eps", lambda cq: cq.laplace_difference_density(0.0, 0.0)),
        ("x", lambda cq: cq.laplace_difference_density(math.nan, 1.0)),
        ("m", lambda cq: cq.harmonic_number(2.5)),
        ("m", lambda cq: cq.harmonic_number(0)),
        ("scale", lambda cq: cq.laplace_max_error_mean(3, 0.0)),
        ("m", lambda cq: cq.laplace_max_error_cdf(1.0, 0.0, 1.0)),
        ("scale", lambda cq: cq.laplace_max_error_cdf(1.0, 2, -1.0)),
    ],
)
def test_counting_queries_reject_bad_arguments_by_name(name, call):
    from dpexplore.teaching import counting_queries as cq

    with pytest.raises(ValueError, match=name):
        call(cq)


# ------------------------------------------------------------------------------------------------
# the Laplace median's error law (Steinke 2023a, eq. (8)), against quadrature and simulation
# ------------------------------------------------------------------------------------------------
def _mp_laplace_median_mean(eps, med, lo, hi):
    b = (mp.mpf(hi) - mp.mpf(lo)) / mp.mpf(eps)
    a, c = mp.mpf(hi) - mp.mpf(med), mp.mpf(med) - mp.mpf(lo)
    f = lambda x: mp.exp(-abs(x) / b) / (2 * b)  # noqa: E731
    return mp.quad(lambda x: min(abs(x), a if x > 0 else c) * f(x), [-mp.inf, -c, 0, a, mp.inf])


@pytest.mark.parametrize(
    "eps, med, lo, hi", [(0.05, 0.5, 0.0, 1.0), (1.0, 0.3, 0.0, 1.0), (8.0, 0.9, 0.0, 1.0), (0.7, -3.0, -10.0, 25.0)]
)
def test_laplace_median_error_law_closed_forms(eps, med, lo, hi):
    got = alg.laplace_median_mean_error(eps, med, lo, hi)
    assert abs(mp.mpf(got) / _mp_laplace_median_mean(eps, med, lo, hi) - 1) < 1e-12
    b = (mp.mpf(hi) - lo) / eps
    ts = np.array([0.01, 0.2, 0.6, 0.95, 3.0, 40.0]) * (hi - lo)
    cdf = alg.laplace_median_error_cdf(ts, eps, med, lo, hi)
    for t, c in zip(ts, cdf):
        half = lambda d: mp.mpf(1) / 2 if t >= d else (1 - mp.exp(-t / b)) / 2  # noqa: E731
        assert abs(c - (half(hi - med) + half(med - lo))) < 1e-14
    assert alg.laplace_median_error_cdf(-1.0, eps, med, lo, hi) == 0.0


def test_laplace_median_error_law_matches_the_sampler():
    eps, med, lo, hi, n = 2.0, 0.8, 0.0, 1.0, 200_000
    data = np.full(5, med)
    err = np.abs(alg.laplace_median(data, eps, lo, hi, np.random.default_rng(3), size=n) - med)
    assert abs(err.mean() - alg.laplace_median_mean_error(eps, med, lo, hi)) < 5 * err.std() / math.sqrt(n)
    for t in (0.05, 0.2, 0.5):
        p = alg.laplace_median_error_cdf(t, eps, med, lo, hi)
        assert abs(np.mean(err <= t) - p) < 5 * math.sqrt(p * (1 - p) / n)


def test_laplace_median_error_law_vectorised_limits_and_errors():
    eps = np.array([1e-320, 1e-3, 1.0, 1e300])
    m = alg.laplace_median_mean_error(eps, 0.25, 0.0, 1.0)
    # almost no noise: the mean of Exp(b), b = 1e-300; infinite noise: the clipped halves, ½·0.75 + ½·0.25
    assert m[-1] == pytest.approx(1e-300, rel=1e-12) and m[0] == 0.5 and np.all(np.diff(m) <= 0)
    assert alg.laplace_median_error_cdf(0.1, eps, 0.25, 0.0, 1.0).shape == (4,)
    for args, name in (
        ((0.0, 0.5, 0.0, 1.0), "eps"),
        ((1.0, 1.5, 0.0, 1.0), "median"),
        ((1.0, 0.5, 1.0, 0.0), "upper"),
    ):
        with pytest.raises(ValueError, match=name):
            alg.laplace_median_mean_error(*args)
    with pytest.raises(ValueError, match="t"):
        alg.laplace_median_error_cdf(float("nan"), 1.0, 0.5, 0.0, 1.0)


# ------------------------------------------------------------------------------------------------
# the inverse sensitivity median's error law (Steinke 2023a, eq. (5)), against brute force and sampling
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "x, eps, grid",
    [([1, 2, 2, 5], 1.0, np.arange(0, 7, 0.5)), ([0, 3, 4, 4, 6], 0.3, np.arange(-1, 8, 0.25)), ([3], 2.0, 9)],
)
def test_inverse_sensitivity_median_error_law_brute_force(x, eps, grid):
    """Exact mean error and CDF against the output law rebuilt in mpmath from the brute-force loss
    (the fewest replacements making y the median)."""
    lo, hi = -1.0, 8.0
    g = np.linspace(lo, hi, grid) if isinstance(grid, int) else grid
    med = sorted(x)[(len(x) + 1) // 2 - 1]
    w = [mp.exp(-mp.mpf(eps) * brute_loss(x, float(y)) / 2) for y in g]
    p = [wi / sum(w) for wi in w]
    mean = sum(pi * abs(mp.mpf(float(y)) - med) for pi, y in zip(p, g))
    got = alg.inverse_sensitivity_median_mean_error(np.array(x, float), eps, lo, hi, grid)
    assert abs(mp.mpf(got) / mean - 1) < 1e-13
    ts = np.array([-0.5, 0.0, 0.25, 0.5, 1.0, 2.75, 100.0, np.inf])
    cdf = alg.inverse_sensitivity_median_error_cdf(ts, np.array(x, float), eps, lo, hi, grid)
    for t, c in zip(ts, cdf):
        assert abs(c - sum(pi for pi, y in zip(p, g) if abs(float(y) - med) <= t)) < 1e-14
    assert abs(cdf[-1] - 1.0) < 1e-15 and cdf[0] == 0.0
    # vectorised over ε: one output law each
    es = np.array([eps, 2 * eps, 10 * eps])
    v = alg.inverse_sensitivity_median_mean_error(np.array(x, float), es, lo, hi, grid)
    assert v.shape == (3,) and v[0] == got
    assert v.tolist() == [alg.inverse_sensitivity_median_mean_error(np.array(x, float), e, lo, hi, grid) for e in es]


def test_inverse_sensitivity_median_error_law_matches_the_sampler():
    x = rng(5).normal(0.5, 0.1, 101)
    eps, n = 0.4, 200_000
    med = np.sort(x)[50]
    err = np.abs(inverse_sensitivity_median(x, eps, 0.0, 1.0, rng(6), grid=201, size=n) - med)
    mean = alg.inverse_sensitivity_median_mean_error(x, eps, 0.0, 1.0, grid=201)
    assert abs(err.mean() - mean) < 5 * err.std() / math.sqrt(n)
    for t in (0.01, 0.05, 0.2):
        p = alg.inverse_sensitivity_median_error_cdf(t, x, eps, 0.0, 1.0, grid=201)
        assert 0 < p < 1 and abs(np.mean(err <= t) - p) < 5 * math.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: alg.inverse_sensitivity_median_mean_error([0.5], 0.0, 0.0, 1.0), "eps"),
        (lambda: alg.inverse_sensitivity_median_mean_error([0.5], [1.0, -1.0], 0.0, 1.0), "eps"),
        (lambda: alg.inverse_sensitivity_median_mean_error([], 1.0, 0.0, 1.0), "data"),
        (lambda: alg.inverse_sensitivity_median_mean_error([0.5], 1.0, 1.0, 0.0), "upper"),
        (lambda: alg.inverse_sensitivity_median_mean_error([0.5], 1.0, 0.0, 1.0, grid=1), "grid"),
        (lambda: alg.inverse_sensitivity_median_error_cdf(float("nan"), [0.5], 1.0, 0.0, 1.0), "t"),
        (lambda: alg.inverse_sensitivity_median_error_cdf(0.1, [0.5], [1.0, 2.0], 0.0, 1.0), "eps"),
        (lambda: alg.inverse_sensitivity_median_error_cdf(0.1, [np.nan], 1.0, 0.0, 1.0), "data"),
    ],
)
def test_inverse_sensitivity_median_error_law_errors_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
