"""Tests for dpexplore.mechanisms.discrete (the discrete Laplace and discrete Gaussian mechanisms).

Layers: δ(ε) against brute-force enumeration in mpmath (40 digits) over a wide integer range plus
an analytic bound of the rest, down to log δ ≈ −45000; a hypothesis property that δ is never below
that truth; ε(δ) round trips within 1e-9 of the smallest ε; limits (pure DP beyond eps_max, the
continuous Gaussian as σ grows); Rényi divergences against mpmath sums; the loss-model hook
``_loss_tails`` against enumeration and through dpexplore.accounting.pld; trade-off functions; a seeded Monte
Carlo check of the samplers; invalid inputs; a dp_accounting cross-check.
"""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpexplore import mechanisms
from dpexplore.mechanisms.discrete import DiscreteGaussian, DiscreteLaplace
from dpexplore.accounting.profiles import PrivacyProfile

mp.mp.dps = 40

HYP = settings(
    max_examples=40, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)


# ------------------------------------------------------------------------------------------------
# mpmath references
# ------------------------------------------------------------------------------------------------
def mp_dl_delta(t, sens, eps, span=400):
    """Σ_{|y| ≤ span} (P(y) − e^ε Q(y))₊ by enumeration, plus the rest in closed form: for y < −span
    the terms are c p^{−y}(1 − e^ε p^Δ) (a geometric series), for y > span ≥ Δ they are negative."""
    t, e = mp.mpf(t), mp.mpf(eps)
    p = mp.exp(-1 / t)
    c = (1 - p) / (1 + p)
    ee = mp.exp(e)
    tot = mp.fsum(max(mp.mpf(0), c * p ** abs(y) - ee * c * p ** abs(y - sens)) for y in range(-span, span + 1))
    tail = max(mp.mpf(0), c * (1 - ee * p**sens)) * p ** (span + 1) / (1 - p)
    return tot + tail


def mp_dg_log_z(sigma):
    """(log Z_lo, log Z_hi): Z = Σ_y e^{−y²/(2σ²)} enumerated over |y| ≤ 60σ + 60, the rest bounded."""
    s = mp.mpf(sigma)
    n = int(60 * sigma) + 60
    z = mp.fsum(mp.exp(-(mp.mpf(y) ** 2) / (2 * s * s)) for y in range(-n, n + 1))
    r = mp.exp(-(2 * n + 1) / (2 * s * s))
    rest = 2 * mp.exp(-(mp.mpf(n + 1) ** 2) / (2 * s * s)) / (1 - r)
    return mp.log(z), mp.log(z + rest)


def mp_dg_log_delta(sigma, sens, eps):
    """(lo, hi) enclosing log δ(ε) of the discrete Gaussian: Σ_{y ≤ m} P(y)(1 − e^{ε − ℓ(y)})
    enumerated from m down past the mode until the terms are e^{−100} of the largest, the rest
    bounded by the geometric series of the Gaussian factor."""
    s, e = mp.mpf(sigma), mp.mpf(eps)
    x = mp.mpf(sens) / 2 - e * s * s / sens
    m = int(mp.ceil(x)) - 1
    kap = mp.mpf(sens) / (s * s)
    two_s2 = 2 * s * s
    cut = mp.exp(-100)
    terms = []
    big = mp.mpf(0)
    y = m
    stop = min(m, 0) - int(14 * sigma) - 20
    while True:
        term = mp.exp(-(mp.mpf(y) ** 2) / two_s2) * -mp.expm1(-kap * (x - y))
        terms.append(term)
        big = max(big, term)
        if y < stop and term < big * cut:
            break
        y -= 1
    tot = mp.fsum(terms)
    # Σ_{y' < y} P ≤ P(y − 1)/(1 − ρ), ρ = e^{−(2|y|+1)/(2σ²)} (y < 0)
    rest = mp.exp(-(mp.mpf(y - 1) ** 2) / two_s2) / (1 - mp.exp(-(2 * abs(y - 1) + 1) / two_s2))
    lz_lo, lz_hi = mp_dg_log_z(sigma)
    return mp.log(tot) - lz_hi, mp.log(tot + rest) - lz_lo


def mp_dg_logpmf(sigma):
    s = mp.mpf(sigma)
    lz = mp_dg_log_z(sigma)[0]
    return lambda y: -(mp.mpf(y) ** 2) / (2 * s * s) - lz


def mp_dl_logpmf(t):
    t = mp.mpf(t)
    p = mp.exp(-1 / t)
    lc = mp.log((1 - p) / (1 + p))
    return lambda y: lc - abs(y) / t


# ------------------------------------------------------------------------------------------------
# δ(ε) against enumeration
# ------------------------------------------------------------------------------------------------
DL_CASES = [
    (1.0, 1, 0.5),
    (2.0, 3, 0.5),
    (0.5, 1, 0.1),
    (3.0, 5, 0.2),
    (10.0, 7, 0.05),
    (0.1, 2, 5.0),
    (1.0, 4, 3.99),
    (0.7, 3, 0.0),
    (2.5, 4, 1.2),
    (0.3, 9, 12.0),
    (100.0, 3, 0.01),
    (0.5, 100, 150.0),
    (2.0, 50, 10.0),
]


@pytest.mark.parametrize("t, sens, eps", DL_CASES)
def test_discrete_laplace_delta_enumeration(t, sens, eps):
    m = DiscreteLaplace(t, sens)
    ref = mp_dl_delta(t, sens, eps)
    got = m.delta(eps)
    assert got >= ref  # never below the truth
    assert got <= ref * (1 + 1e-12) + 1e-300
    assert m.log_delta(eps) >= mp.log(ref)


def test_discrete_laplace_closed_form_near_eps_max():
    """ε within 1e-9 of Δ/t: δ ≈ (Δ/t − ε)/(1 + p), kept to full relative accuracy (the rational
    difference, not the float Δ/t), for a scale whose Δ/t is not a float."""
    m = DiscreteLaplace(0.01)  # Δ/t = 99.99999999999999792…
    eps = 99.999999999
    ref = mp_dl_delta(0.01, 1, eps, span=50)
    assert ref < m.delta(eps) <= ref * (1 + 1e-12)


def test_discrete_laplace_sensitivity_one_is_randomized_response():
    """Δ = 1: the loss takes the values ±1/t, the randomized-response profile (Kairouz, Oh &
    Viswanath 2015) (e^{1/t} − e^ε)/(1 + e^{1/t})."""
    eps = np.linspace(0.0, 1.2, 13)
    for t in (0.3, 1.0, 4.0):
        rr = mechanisms.RandomizedResponse(1.0 / t)
        np.testing.assert_allclose(DiscreteLaplace(t).delta(eps), rr.delta(eps), rtol=1e-12, atol=0)


DG_CASES = [
    (1.0, 1, 1.0),
    (2.0, 1, 0.5),
    (0.3, 1, 0.2),
    (5.0, 3, 1.0),
    (1.0, 1, 10.0),
    (3.0, 2, 0.0),
    (0.7, 4, 2.0),
    (10.0, 1, 0.01),
    (0.05, 1, 30.0),
    (0.2, 1, 40.0),
    (20.0, 1, 1.6),
    (4.0, 6, 0.75),
    (50.0, 1, 0.3),
    (0.5, 1, 0.5),
]


@pytest.mark.parametrize("sigma, sens, eps", DG_CASES)
def test_discrete_gaussian_delta_enumeration(sigma, sens, eps):
    m = DiscreteGaussian(sigma, sens)
    lo, hi = mp_dg_log_delta(sigma, sens, eps)
    got = m.log_delta(eps)
    assert got >= lo  # never below the truth
    assert got <= hi + 1e-12 * (1 + abs(hi))
    # the documented margin: a relative 7e-15·(40 + |log δ|)
    assert m.delta(eps) == pytest.approx(float(mp.exp(lo)), rel=1e-14 * (40 + abs(float(lo))), abs=1e-300)


@pytest.mark.parametrize(
    "sigma, sens, eps",
    [(1.0, 1, 37.0), (1.0, 1, 40.0), (1.0, 1, 60.0), (2.0, 1, 150.0), (5.0, 2, 40.0), (20.0, 1, 3.0), (0.3, 2, 400.0)],
)
def test_discrete_gaussian_log_delta_deep_tail(sigma, sens, eps):
    """log δ near −700 and far below (δ ≈ 1e-19600 at σ = 2, ε = 150): exact in log space."""
    lo, hi = mp_dg_log_delta(sigma, sens, eps)
    got = DiscreteGaussian(sigma, sens).log_delta(eps)
    assert float(lo) < -680
    assert lo <= got <= hi + 1e-12 * abs(hi)


def test_discrete_gaussian_large_sigma_paths_match_enumeration():
    """σ in the hundreds (the Euler–Maclaurin path in the bulk, windowed sums in the tails): still
    within 1e-11 of the exact sum and never below it."""
    for sigma, sens, eps in [(300.0, 2, 0.02), (600.0, 1, 0.0005), (600.0, 1, 0.012)]:
        lo, hi = mp_dg_log_delta(sigma, sens, eps)
        got = DiscreteGaussian(sigma, sens).log_delta(eps)
        assert lo <= got <= hi + 1e-11 * (1 + abs(hi)), (sigma, sens, eps)


def test_euler_maclaurin_path_matches_the_exact_window(monkeypatch):
    """σ = 1000–5000: the Euler–Maclaurin evaluation (used where the window of terms would exceed
    2¹²) against the exact windowed sum forced on: at most 1e-12 above it, never below."""
    import dpexplore.mechanisms.discrete_gaussian as dmod

    cases = [(s, d, z) for s in (1000.0, 5000.0) for d in (1, 3) for z in (0.0, 0.3, 1.0, 2.5, 5.0)]
    fast = [DiscreteGaussian(s, d).log_delta(z * d / s) for s, d, z in cases]
    monkeypatch.setattr(dmod, "_MAX_WINDOW", 2**22)
    exact = [DiscreteGaussian(s, d).log_delta(z * d / s) for s, d, z in cases]
    for (s, d, z), a, b in zip(cases, fast, exact):
        assert b <= a <= b + 1e-12, (s, d, z, a, b)


def test_vectorized_over_eps_and_scalar_out():
    m = DiscreteGaussian(1.5, 2)
    e = np.array([[0.0, 0.5], [1.0, 3.0]])
    out = m.delta(e)
    assert out.shape == (2, 2)
    assert out[1, 0] == m.delta(1.0) and isinstance(m.delta(1.0), float)
    assert isinstance(DiscreteLaplace(1.0).log_delta(0.2), float)
    assert np.all(np.diff(m.delta(np.linspace(0, 5, 50))) <= 0)


# ------------------------------------------------------------------------------------------------
# the property: never below the truth
# ------------------------------------------------------------------------------------------------
@HYP
@given(t=st.floats(0.05, 20.0), sens=st.integers(1, 8), frac=st.floats(0.0, 1.2))
def test_discrete_laplace_never_below_truth(t, sens, frac):
    m = DiscreteLaplace(t, sens)
    eps = frac * m.eps_max
    ref = mp_dl_delta(t, sens, eps, span=60 + int(40 * t))
    got = m.delta(eps)
    assert got >= ref
    assert got <= ref * (1 + 1e-12) + 1e-300


@HYP
@given(sigma=st.floats(0.1, 8.0), sens=st.integers(1, 5), eps=st.floats(0.0, 30.0))
def test_discrete_gaussian_never_below_truth(sigma, sens, eps):
    m = DiscreteGaussian(sigma, sens)
    lo, hi = mp_dg_log_delta(sigma, sens, eps)
    got = m.log_delta(eps)
    if lo < -745:  # below the float range: compare in log space only
        assert got >= lo
    else:
        assert m.delta(eps) >= mp.exp(lo) * (1 - 1e-15)
        assert got >= lo
    assert got <= hi + 1e-12 * (1 + abs(hi))


# ------------------------------------------------------------------------------------------------
# ε(δ)
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "mech",
    [
        DiscreteLaplace(1.0),
        DiscreteLaplace(0.7, 3),
        DiscreteGaussian(1.0),
        DiscreteGaussian(0.4, 2),
        DiscreteGaussian(6.0, 1),
    ],
)
@pytest.mark.parametrize("target", [0.3, 1e-3, 1e-10, 1e-100, 1e-300])
def test_epsilon_round_trip(mech, target):
    """ε(δ) has δ(ε) ≤ δ and is the smallest such ε to 1e-9: the exact δ just below it exceeds δ."""
    e = mech.epsilon(target)
    if isinstance(mech, DiscreteLaplace) and target < mech.delta(mech.eps_max * (1 - 1e-15)):
        assert e == pytest.approx(mech.eps_max, rel=1e-12)
        return
    assert mech.delta(e) <= target
    below = e * (1 - 1e-9) - 1e-12
    if below <= 0:
        return
    if isinstance(mech, DiscreteLaplace):
        assert mp_dl_delta(mech.scale, mech.sensitivity, below, span=120) > target
    else:
        lo, _ = mp_dg_log_delta(mech.sigma, mech.sensitivity, below)
        assert lo > mp.log(target)


def test_epsilon_limits_and_vectorized():
    m = DiscreteLaplace(0.5, 2)
    assert m.epsilon(0.0) == m.eps_max == 4.0
    assert DiscreteGaussian(1.0).epsilon(0.0) == math.inf
    assert m.epsilon(0.99) == 0.0  # δ(0) < 0.99
    out = DiscreteGaussian(2.0).epsilon(np.array([1e-3, 1e-6]))
    assert out.shape == (2,) and out[0] < out[1]


@pytest.mark.parametrize(
    "eps, delta, sens",
    [(1.0, 0.0, 1), (0.5, 0.0, 2), (0.3, 1e-6, 2), (0.0, 0.1, 1), (2.0, 0.5, 5), (1e-5, 1e-300, 3), (5.0, 0.9999, 2)],
)
def test_discrete_laplace_calibrate(eps, delta, sens):
    """The smallest scale with δ(ε) ≤ delta: met, and a scale 1e-12 smaller misses it."""
    m = DiscreteLaplace.calibrate(eps, delta, sens)
    assert m.sensitivity == sens and m.delta(eps) <= delta
    smaller = DiscreteLaplace(m.scale * (1 - 1e-12), sens)
    assert smaller.delta(eps) > delta
    if delta == 0:
        assert m.eps_max <= eps and m.scale == pytest.approx(sens / eps, rel=1e-15)


def test_discrete_laplace_calibrate_rejects():
    with pytest.raises(ValueError, match="eps = 0 with delta = 0"):
        DiscreteLaplace.calibrate(0.0, 0.0)
    with pytest.raises(ValueError, match="eps"):
        DiscreteLaplace.calibrate(-1.0, 0.1)
    with pytest.raises(ValueError, match="sensitivity"):
        DiscreteLaplace.calibrate(1.0, 0.1, 0.5)
    with pytest.raises(ValueError, match="beyond the float range"):
        DiscreteLaplace.calibrate(5e-324, 0.0)


def test_discrete_gaussian_delta_not_monotone_in_sigma():
    """Unlike the continuous Gaussian, δ(ε) of the discrete Gaussian can grow with σ (here where
    the loss atom ℓ(0) = 1/(2σ²) crosses ε = 1): why it has no bisection ``calibrate``."""
    lo, hi = 0.7077695972323564, 0.710796432901007
    a, b = mp_dg_log_delta(lo, 1, 1.0), mp_dg_log_delta(hi, 1, 1.0)
    assert b[0] > a[1]  # exact: δ rises with σ here
    m_lo, m_hi = DiscreteGaussian(lo), DiscreteGaussian(hi)
    assert m_hi.delta(1.0) > m_lo.delta(1.0)
    assert not hasattr(DiscreteGaussian, "calibrate")


# ------------------------------------------------------------------------------------------------
# limits
# ------------------------------------------------------------------------------------------------
def test_discrete_laplace_pure_dp_beyond_eps_max():
    for t, sens in [(1.0, 1), (3.0, 2), (0.1, 7), (1.0 / 3.0, 2)]:
        m = DiscreteLaplace(t, sens)
        exact = mp.mpf(sens) / mp.mpf(t)
        assert m.eps_max >= exact and m.eps_max <= exact * (1 + 2**-52)
        e = np.array([m.eps_max, m.eps_max * 1.5, np.inf])
        np.testing.assert_array_equal(m.delta(e), 0.0)
        assert np.all(np.isneginf(m.log_delta(e)))
        below = m.eps_max * (1 - 1e-9)
        assert m.delta(below) > 0
        assert m.delta(below) >= mp_dl_delta(t, sens, below, span=40)
        assert m.profile.epsilon(0.0) == m.eps_max


def test_discrete_laplace_total_variation():
    """δ(0) = TV(P, Q) = P[Y ≤ ⌈Δ/2⌉ − 1] − P[Y ≤ ⌈Δ/2⌉ − 1 − Δ]; Δ = 1: tanh(1/(2t))."""
    for t in (0.5, 1.0, 7.0):
        assert DiscreteLaplace(t).delta(0.0) == pytest.approx(math.tanh(0.5 / t), rel=1e-13)


def test_discrete_gaussian_approaches_continuous_gaussian():
    """Sandwich: the terms a(y) = P̃(y)(1 − e^{ε − ℓ(y)}), P̃ = e^{−y²/(2σ²)}/Z, are unimodal on
    y ≤ m, so their sum is within max_y a(y) of ∫ a = (√(2π)σ/Z)·δ_N(ε) (μ = Δ/σ) up to the sliver
    ∫_m^x a ≤ max a: δ_N·√(2π)σ/Z − 2·max a ≤ δ ≤ δ_N + max a, and max a = O(δ/σ)."""
    for sigma in (30.0, 300.0, 3000.0):
        m = DiscreteGaussian(sigma)
        g = mechanisms.Gaussian(sigma)
        z_ratio = 1.0 / (1.0 + 2.0 * math.exp(-2 * math.pi**2 * sigma**2))
        for z in (0.0, 0.5, 1.0, 2.0, 4.0, 6.0):
            eps = z / sigma
            x = 0.5 - eps * sigma**2
            mm = math.ceil(x) - 1
            y = np.arange(mm - int(12 * sigma) - 10, mm + 1, dtype=float)
            a = np.exp(-((y / sigma) ** 2) / 2 - m._log_z) * -np.expm1(-(x - y) / sigma**2)
            amax = 1.5 * float(a.max())
            d, dn = m.delta(eps), g.delta(eps)
            assert dn * z_ratio - 2 * amax <= d <= dn + amax, (sigma, z)
            assert abs(d / dn - 1) <= 10.0 / sigma, (sigma, z)


# ------------------------------------------------------------------------------------------------
# Rényi DP and zCDP
# ------------------------------------------------------------------------------------------------
def mp_dl_rdp(t, sens, a):
    t, a = mp.mpf(t), mp.mpf(a)
    p = mp.exp(-1 / t)
    c = (1 - p) / (1 + p)
    tot = c * p ** ((1 - a) * sens) / (1 - p) + c * p ** (a * sens) / (1 - p)
    tot += mp.fsum(c * p ** (a * y + (1 - a) * (sens - y)) for y in range(1, sens))
    return mp.log(tot) / (a - 1)


def mp_dg_rdp(sigma, sens, a):
    s, a = mp.mpf(sigma), mp.mpf(a)
    n = int(50 * sigma) + 50 + sens * 40
    z = mp.fsum(mp.exp(-(mp.mpf(y) ** 2) / (2 * s * s)) for y in range(-n, n + 1))
    tot = mp.fsum(
        mp.exp(-(a * mp.mpf(y) ** 2 + (1 - a) * mp.mpf(y - sens) ** 2) / (2 * s * s)) for y in range(-n, n + 1)
    )
    return mp.log(tot / z) / (a - 1)


@pytest.mark.parametrize("t", [0.05, 0.3, 1.0, 4.0, 50.0])
@pytest.mark.parametrize("sens", [1, 2, 5, 30])
def test_discrete_laplace_rdp_mpmath(t, sens):
    m = DiscreteLaplace(t, sens)
    alphas = [1.0000001, 1.001, 1.5, 2.0, 3.7, 20.0, 300.0]
    got = m.rdp(alphas)
    for a, v in zip(alphas, got):
        ref = mp_dl_rdp(t, sens, a)
        assert v >= ref and v <= ref * (1 + 1e-12), (a, v, ref)
        assert v <= m.eps_max
    assert m.rdp(np.inf) == m.eps_max


def test_discrete_laplace_rdp_sensitivity_one_is_randomized_response():
    for t in (0.2, 1.0, 9.0):
        a = np.array([1.01, 2.0, 7.5])
        np.testing.assert_allclose(DiscreteLaplace(t).rdp(a), mechanisms.RandomizedResponse(1 / t).rdp(a), rtol=1e-12)


@pytest.mark.parametrize("sigma", [0.05, 0.2, 0.29, 0.31, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("sens", [1, 2, 5])
def test_discrete_gaussian_rdp_mpmath(sigma, sens):
    """D_α = αρ + log(θ(c)/θ(0))/(α − 1) ≤ αρ, equal at integer α (Canonne, Kamath & Steinke 2020,
    Theorem 4 gives αρ)."""
    m = DiscreteGaussian(sigma, sens)
    rho = sens**2 / (2 * sigma**2)
    assert m.rho == pytest.approx(rho, rel=1e-15) and m.rho >= mp.mpf(sens) ** 2 / (2 * mp.mpf(sigma) ** 2)
    for a in [1.0000001, 1.001, 1.5, 2.25, 3.7]:
        ref = mp_dg_rdp(sigma, sens, a)
        v = m.rdp(a)
        assert v >= ref and v <= ref * (1 + 1e-12), (a, v, ref)
        assert v <= a * m.rho * (1 + 1e-15)
    for a in (2.0, 3.0, 10.0):  # αρ exactly at integer orders (rounded up)
        v = m.rdp(a)
        assert v >= mp.mpf(a) * mp.mpf(sens) ** 2 / (2 * mp.mpf(sigma) ** 2)
        assert v in (a * m.rho, np.nextafter(a * m.rho, np.inf))
    assert m.rdp(np.inf) == math.inf


# ------------------------------------------------------------------------------------------------
# loss model (the hook for dpexplore.accounting.pld)
# ------------------------------------------------------------------------------------------------
def enum_tails(logpmf, loss, sens, x, span):
    """log P(L > x), log P(L ≤ x), log Q(L > x), log Q(L ≤ x) by enumeration over |y| ≤ span."""
    sp = cp = sq = cq = mp.mpf(0)
    for y in range(-span, span + 1):
        pm, qm = mp.exp(logpmf(y)), mp.exp(logpmf(y - sens))
        if loss(y) > x:
            sp += pm
            sq += qm
        else:
            cp += pm
            cq += qm
    return [mp.log(v) if v > 0 else -mp.inf for v in (sp, cp, sq, cq)]


def check_tails(mech, logpmf, loss, xs, span):
    got = mech._loss_tails(np.array(xs, dtype=float))
    for i, x in enumerate(xs):
        ref = enum_tails(logpmf, loss, mech.sensitivity, mp.mpf(x), span)
        for j in range(4):
            if ref[j] == -mp.inf:
                assert got[j][i] == -np.inf, (x, j)
            else:
                assert abs(got[j][i] - ref[j]) <= 1e-12 * (1 + abs(ref[j])), (x, j, got[j][i], ref[j])


@pytest.mark.parametrize("t, sens", [(1.0, 1), (0.7, 3), (2.5, 4)])
def test_discrete_laplace_loss_tails_enumeration(t, sens):
    m = DiscreteLaplace(t, sens)
    tt = mp.mpf(t)
    atoms = [float((sens - 2 * k) / tt) for k in range(sens + 1)]
    xs = [-10.0, 0.0, 0.3, 10.0] + atoms + [a + 1e-12 for a in atoms] + [a - 1e-12 for a in atoms]
    check_tails(m, mp_dl_logpmf(t), lambda y: (abs(y - sens) - abs(y)) / tt, xs, 120 + int(60 * t))
    lo, hi = m.loss_support
    assert lo == -m.eps_max and hi == m.eps_max
    sp, cp, sq, cq = m._loss_tails(np.array([lo, hi]))
    assert sp[1] == -np.inf and sq[1] == -np.inf and cp[1] == 0.0 and cq[1] == 0.0


@pytest.mark.parametrize("sigma, sens", [(1.0, 1), (0.4, 2), (3.0, 3), (40.0, 1)])
def test_discrete_gaussian_loss_tails_enumeration(sigma, sens):
    m = DiscreteGaussian(sigma, sens)
    s = mp.mpf(sigma)
    loss = lambda y: mp.mpf(sens) * (sens - 2 * y) / (2 * s * s)  # noqa: E731
    atoms = [float(loss(y)) for y in (-5, -2, -1, 0, 1, 3)]
    xs = [-3.0, 0.0, 0.1, 7.0] + atoms + [a + 1e-9 for a in atoms]
    if sigma > 10:
        xs = [0.0, 0.002, -0.004, 0.05]
    check_tails(m, mp_dg_logpmf(sigma), loss, xs, int(30 * sigma) + 40)
    assert m.loss_support == (-np.inf, np.inf)
    # far tails stay finite and monotone
    sp, cp, _, _ = m._loss_tails(np.array([1e3, 1e6, 1e18]))
    assert np.all(np.isfinite(sp)) and np.all(np.diff(sp) < 0) and np.all(cp == 0.0)


def test_loss_tails_are_complementary():
    for m in (DiscreteLaplace(0.8, 3), DiscreteGaussian(2.0, 2)):
        x = np.linspace(-6, 6, 41)
        sp, cp, sq, cq = m._loss_tails(x)
        np.testing.assert_allclose(np.exp(sp) + np.exp(cp), 1.0, rtol=1e-13)
        np.testing.assert_allclose(np.exp(sq) + np.exp(cq), 1.0, rtol=1e-13)
        assert np.all(np.diff(np.exp(sp)) <= 0) and np.all(np.diff(np.exp(sq)) <= 0)


def test_pld_composition_uses_the_hook():
    """dpexplore.accounting.pld composes the discrete mechanisms through loss_support/_loss_tails (its
    loss-model path, composed_pld_many): one step reproduces the profile; three steps of
    DiscreteLaplace(1) (randomized response, ε = 1) are within 1e-3 of the exact binomial
    composition and never below it."""
    from dpexplore.accounting import pld

    e = np.array([0.0, 0.4, 1.0, 2.0])
    for m in (DiscreteLaplace(1.0), DiscreteGaussian(1.0)):
        one = pld.single_pld(m, 1e-3).delta(e)
        np.testing.assert_allclose(one, m.delta(e), rtol=2e-3, atol=1e-12)
        assert np.all(one >= m.delta(e) * (1 - 1e-9))
    k = 3
    pk = mp.e / (1 + mp.e)
    exact = []
    for eps in e:
        tot = mp.mpf(0)
        for j in range(k + 1):
            loss = 2 * j - k
            prob = mp.binomial(k, j) * pk**j * (1 - pk) ** (k - j)
            tot += prob * max(mp.mpf(0), 1 - mp.exp(eps - loss))
        exact.append(float(tot))
    got = pld.composed_pld_many([(DiscreteLaplace(1.0), k)]).delta(e)
    assert np.all(got >= np.array(exact) * (1 - 1e-12))
    np.testing.assert_allclose(got, exact, rtol=1e-3, atol=1e-12)


# ------------------------------------------------------------------------------------------------
# noise law, trade-off, sampling
# ------------------------------------------------------------------------------------------------
def test_pmf_cdf_against_mpmath():
    for m, lp in (
        (DiscreteLaplace(1.7, 2), mp_dl_logpmf(1.7)),
        (DiscreteGaussian(2.3), mp_dg_logpmf(2.3)),
        (DiscreteGaussian(0.35), mp_dg_logpmf(0.35)),
    ):
        ys = np.arange(-60, 61)
        got = m.logpmf(ys)
        ref = np.array([float(lp(int(y))) for y in ys])
        np.testing.assert_allclose(got, ref, rtol=1e-14)
        assert math.fsum(np.exp(got)) == pytest.approx(1.0, abs=1e-14)
        assert m.logpmf(0.5) == -math.inf
        for k in (-40, -7, -1, 0, 2, 9):
            below = mp.fsum(mp.exp(lp(y)) for y in range(-400, k + 1))
            above = mp.fsum(mp.exp(lp(y)) for y in range(k + 1, 400))
            assert m.logcdf(k + 0.25) == pytest.approx(float(mp.log(below)), rel=1e-13, abs=1e-15)
            assert m.logsf(k) == pytest.approx(float(mp.log(above)), rel=1e-13, abs=1e-15)
    assert DiscreteLaplace(1.0).logcdf(-700.0) == pytest.approx(-700 - math.log1p(math.exp(-1)), rel=1e-15)


def test_variance():
    for t in (0.3, 1.0, 12.0):
        p = mp.exp(-1 / mp.mpf(t))
        ref = mp.fsum(2 * y * y * (1 - p) / (1 + p) * p**y for y in range(1, 4000))
        assert DiscreteLaplace(t).variance == pytest.approx(float(ref), rel=1e-13)
    for sigma in (0.2, 0.45, 0.6, 1.0, 4.0):
        lp = mp_dg_logpmf(sigma)
        ref = mp.fsum(y * y * mp.exp(lp(y)) for y in range(-200, 201))
        v = DiscreteGaussian(sigma).variance
        assert v == pytest.approx(float(ref), rel=1e-13) and v <= sigma**2


def mp_tradeoff(logpmf, sens, alpha, span):
    """β(α) of the Neyman–Pearson test of P against Q (reject Y > k, randomize at k), in mpmath."""
    alpha = mp.mpf(alpha)
    pm = {y: mp.exp(logpmf(y)) for y in range(-span, span + 1)}
    sf = mp.mpf(0)
    for k in range(span, -span - 1, -1):  # P[Y > k] grows as k decreases
        if sf + pm[k] > alpha:
            gamma = (alpha - sf) / pm[k]
            qle = mp.fsum(pm[y - sens] for y in range(-span + sens, k))
            return qle + (1 - gamma) * pm[k - sens]
        sf += pm[k]
    return mp.mpf(0)


def test_tradeoff_mpmath_and_duality():
    for m, lp, span in (
        (DiscreteLaplace(1.3, 2), mp_dl_logpmf(1.3), 120),
        (DiscreteGaussian(1.5, 1), mp_dg_logpmf(1.5), 40),
    ):
        for a in (1e-6, 0.01, 0.1, 0.37, 0.5, 0.9):
            ref = mp_tradeoff(lp, m.sensitivity, a, span)
            got = m.tradeoff(a)
            assert got <= ref and got >= ref * (1 - 1e-10) - 1e-15, (m, a, got, ref)
        alphas = np.linspace(0, 1, 41)
        beta = m.tradeoff(alphas)
        assert beta[0] == 1.0 and beta[-1] == 0.0 and np.all(np.diff(beta) <= 0)
        assert np.all(beta <= 1 - alphas + 1e-15)
        for eps in (0.0, 0.3, 1.0, 2.0):  # f-DP ⇒ (ε, δ(ε))-DP: β ≥ 1 − δ(ε) − e^ε α
            assert np.all(beta >= 1 - m.delta(eps) - math.exp(eps) * alphas - 1e-12)
    rr = mechanisms.RandomizedResponse(1.0)
    a = np.linspace(0.01, 0.99, 9)
    np.testing.assert_allclose(DiscreteLaplace(1.0).tradeoff(a), rr.tradeoff(a), rtol=1e-12)


@pytest.mark.parametrize(
    "mech",
    [
        DiscreteLaplace(1.5),
        DiscreteLaplace(0.4, 3),
        DiscreteGaussian(2.0),
        DiscreteGaussian(0.6),
        DiscreteGaussian(9.0),
    ],
)
def test_sampling_matches_pmf(mech):
    from scipy import stats

    n = 200_000
    y = mech.sample(n, rng=12345)
    assert y.dtype == np.int64 and y.shape == (n,)
    lo, hi = int(np.percentile(y, 0.5)) - 1, int(np.percentile(y, 99.5)) + 1
    ys = np.arange(lo, hi + 1)
    p = np.exp(mech.logpmf(ys))
    p_out = 1 - p.sum()
    counts = np.array([np.sum(y == v) for v in ys])
    obs = np.append(counts, n - counts.sum())
    exp_ = np.append(p, p_out) * n
    keep = exp_ >= 5
    chi = np.sum((obs[keep] - exp_[keep]) ** 2 / exp_[keep])
    assert stats.chi2.sf(chi, keep.sum() - 1) > 1e-4
    assert abs(y.mean()) < 5 * math.sqrt(mech.variance / n)
    assert y.var() == pytest.approx(mech.variance, rel=0.03)
    assert np.array_equal(mech.sample(5, rng=7), mech.sample(5, rng=7))
    assert isinstance(mech.sample(rng=1), int)
    assert mech.sample((2, 3), rng=1).shape == (2, 3)


# ------------------------------------------------------------------------------------------------
# the dataclasses, the profile, the module
# ------------------------------------------------------------------------------------------------
def test_frozen_hashable_and_profile():
    a, b = DiscreteLaplace(1, 2.0), DiscreteLaplace(1.0, 2)
    assert a == b and hash(a) == hash(b) and {a: 1}[b] == 1
    assert isinstance(a.sensitivity, int) and isinstance(a.scale, float)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.scale = 2.0
    assert DiscreteGaussian(np.float64(2.0), np.int64(3)) == DiscreteGaussian(2.0, 3)
    for m in (DiscreteLaplace(0.8, 2), DiscreteGaussian(1.2)):
        p = m.profile
        assert isinstance(p, PrivacyProfile) and p.eps_max == m.eps_max
        assert p.delta(0.4) == m.delta(0.4) and p.epsilon(1e-6) == m.epsilon(1e-6)
        # the profile calls _log_delta on every ε, inf and ε ≥ eps_max included
        np.testing.assert_array_equal(p.delta(np.array([np.inf, 1e300])), 0.0)
        assert p.log_delta(np.inf) == -math.inf


def test_reexported_from_mechanisms():
    from dpexplore.mechanisms import discrete

    assert mechanisms.DiscreteLaplace is discrete.DiscreteLaplace
    assert mechanisms.DiscreteGaussian is discrete.DiscreteGaussian
    assert {"DiscreteLaplace", "DiscreteGaussian"} <= set(mechanisms.__all__)


def test_module_imports_light():
    """dpexplore.mechanisms (with its discrete module) does not import scipy.stats or the PLD
    machinery at import time."""
    code = (
        "import sys, dpexplore.mechanisms.discrete\n"
        "print('scipy.stats' in sys.modules, 'dpexplore.accounting.pld' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout.split()
    assert out == ["False", "False"]


# ------------------------------------------------------------------------------------------------
# invalid inputs
# ------------------------------------------------------------------------------------------------
INVALID = [
    ("scale 0", lambda: DiscreteLaplace(0.0), "scale", "0.0"),
    ("scale negative", lambda: DiscreteLaplace(-1.0), "scale", "-1.0"),
    ("scale nan", lambda: DiscreteLaplace(float("nan")), "scale", "nan"),
    ("scale inf", lambda: DiscreteLaplace(float("inf")), "scale", "inf"),
    ("scale str", lambda: DiscreteLaplace("a"), "scale", "'a'"),
    ("scale None", lambda: DiscreteLaplace(None), "scale", "None"),
    ("scale array", lambda: DiscreteLaplace([1.0, 2.0]), "scale", "[1.0, 2.0]"),
    ("scale subnormal", lambda: DiscreteLaplace(5e-324), "scale", "5e-324"),
    ("sensitivity 0", lambda: DiscreteLaplace(1.0, 0), "sensitivity", "0"),
    ("sensitivity negative", lambda: DiscreteGaussian(1.0, -2), "sensitivity", "-2"),
    ("sensitivity fractional", lambda: DiscreteLaplace(1.0, 1.5), "sensitivity", "1.5"),
    ("sensitivity bool", lambda: DiscreteGaussian(1.0, True), "sensitivity", "True"),
    ("sensitivity str", lambda: DiscreteLaplace(1.0, "1"), "sensitivity", "'1'"),
    ("sensitivity huge", lambda: DiscreteLaplace(1.0, 2**60), "sensitivity", str(2**60)),
    ("sensitivity nan", lambda: DiscreteGaussian(1.0, float("nan")), "sensitivity", "nan"),
    ("sigma 0", lambda: DiscreteGaussian(0.0), "sigma", "0.0"),
    ("sigma inf", lambda: DiscreteGaussian(float("inf")), "sigma", "inf"),
    ("sigma tiny", lambda: DiscreteGaussian(1e-200), "sigma", "1e-200"),
    ("sigma huge", lambda: DiscreteGaussian(1e200), "sigma", "1e+200"),
    ("sigma array", lambda: DiscreteGaussian(np.array([1.0, 2.0])), "sigma", "array([1., 2.])"),
    ("eps negative", lambda: DiscreteLaplace(1.0).delta(-0.1), "eps", "-0.1"),
    ("eps nan", lambda: DiscreteGaussian(1.0).log_delta(float("nan")), "eps", "nan"),
    ("delta one", lambda: DiscreteGaussian(1.0).epsilon(1.0), "delta", "1."),
    ("delta negative", lambda: DiscreteLaplace(1.0).epsilon(-1e-3), "delta", "-0.001"),
    ("alpha one", lambda: DiscreteGaussian(1.0).rdp(1.0), "alpha", "1."),
    ("alpha below one", lambda: DiscreteLaplace(1.0).rdp(0.5), "alpha", "0.5"),
    ("tradeoff alpha", lambda: DiscreteLaplace(1.0).tradeoff(1.5), "alpha", "1.5"),
    ("sample size", lambda: DiscreteGaussian(1.0).sample(-1, 0), "size", "-1"),
    ("sample rng", lambda: DiscreteLaplace(1.0).sample(2, "abc"), "rng", "'abc'"),
    ("logpmf y", lambda: DiscreteLaplace(1.0).logpmf("a"), "y", "'a'"),
    ("logcdf x", lambda: DiscreteGaussian(1.0).logcdf(float("nan")), "x", "nan"),
]


@pytest.mark.parametrize("label, fn, name, value", INVALID, ids=[c[0] for c in INVALID])
def test_invalid_inputs_name_the_parameter(label, fn, name, value):
    with pytest.raises(ValueError) as info:
        fn()
    msg = str(info.value)
    assert name in msg and value in msg, msg


# ------------------------------------------------------------------------------------------------
# dp_accounting
# ------------------------------------------------------------------------------------------------
def test_dp_accounting_cross_check():
    """dp_accounting's PLDs (loss grid 1e-4): ours is never below its optimistic estimate, never
    above its pessimistic one, and within 1e-3 of it (its stated discretization accuracy)."""
    dpa_pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    for t, sens in [(1.0, 1), (0.5, 2), (2.0, 3)]:
        m = DiscreteLaplace(t, sens)
        pess = dpa_pld.from_discrete_laplace_mechanism(1.0 / t, sensitivity=sens, pessimistic_estimate=True)
        opt = dpa_pld.from_discrete_laplace_mechanism(1.0 / t, sensitivity=sens, pessimistic_estimate=False)
        for eps in (0.0, 0.3, 1.0, 0.9 * m.eps_max):
            ours, hi, lo = m.delta(eps), pess.get_delta_for_epsilon(eps), opt.get_delta_for_epsilon(eps)
            assert lo * (1 - 1e-9) - 1e-15 <= ours <= hi * (1 + 1e-9) + 1e-15, (t, sens, eps)
            assert ours == pytest.approx(hi, rel=1e-3, abs=1e-12)
    for sigma, sens in [(1.0, 1), (2.5, 2)]:
        m = DiscreteGaussian(sigma, sens)
        pess = dpa_pld.from_discrete_gaussian_mechanism(sigma, sensitivity=sens, pessimistic_estimate=True)
        opt = dpa_pld.from_discrete_gaussian_mechanism(sigma, sensitivity=sens, pessimistic_estimate=False)
        for eps in (0.0, 0.5, 1.5, 3.0):
            ours, hi, lo = m.delta(eps), pess.get_delta_for_epsilon(eps), opt.get_delta_for_epsilon(eps)
            assert lo * (1 - 1e-9) - 1e-15 <= ours <= hi * (1 + 1e-9) + 1e-15, (sigma, sens, eps)
            assert ours == pytest.approx(hi, rel=1e-3, abs=1e-12)


# -- composition (composition.compose / compose_all through the privacy loss distribution) ---------
@pytest.mark.parametrize(
    "mech", [DiscreteLaplace(1.0), DiscreteLaplace(2.5, 2), DiscreteGaussian(1.0), DiscreteGaussian(2.0, 3)]
)
def test_two_fold_composition_against_enumeration(mech):
    from dpexplore.accounting import composition as C

    y = np.arange(-80, 81)
    p = np.exp(mech.logpmf(y))
    q = np.exp(mech.logpmf(y - mech.sensitivity))
    joint_p, joint_q = np.outer(p, p).ravel(), np.outer(q, q).ravel()
    prof = C.compose(mech, 2)
    for eps in (0.0, 0.3, 1.0, 2.0):
        truth = float(np.sum(np.maximum(joint_p - np.exp(eps) * joint_q, 0.0)))
        got = float(prof.delta(eps))
        assert got >= truth * (1 - 1e-9) - 1e-15, (mech, eps, got, truth)
        assert got <= truth * (1 + 1e-3) + 1e-12, (mech, eps, got, truth)


def test_mixed_composition_with_discrete_mechanisms():
    from dpexplore.accounting import composition as C
    from dpexplore.mechanisms import Gaussian

    mixed = C.compose_all([(DiscreteLaplace(1.0), 2), (Gaussian(2.0), 3)])
    alone = C.compose(DiscreteLaplace(1.0), 2)
    for eps in (0.0, 1.0, 3.0):
        assert mixed.delta(eps) >= alone.delta(eps) * (1 - 1e-9)
    assert C.compose(DiscreteGaussian(1.0), 1).delta(0.5) == DiscreteGaussian(1.0).delta(0.5)


@pytest.mark.parametrize(
    "mech",
    [
        DiscreteGaussian(2.0),
        DiscreteGaussian(0.5),
        DiscreteGaussian(20.0, 3),
        DiscreteLaplace(1.0, 3),
        DiscreteLaplace(0.3),
    ],
)
def test_many_point_search_gives_the_bisections_epsilon(mech):
    """The discrete mechanisms' ε comes from a 33-ary search (a windowed sum costs about as much
    for 32 ε as for one): the same ε as the bisection to 2 ulps, δ(ε) within the target, and
    the float just below 2 ulps down not (the smallest ε, not merely a valid one)."""
    from dpexplore._numerics import epsilon_by_bisection

    deltas = np.array([0.0, 1e-300, 1e-12, 1e-5, 1e-2, 0.3, 0.999])
    eps_max = float(mech.eps_max)
    one = epsilon_by_bisection(mech._log_delta_capped, deltas, eps_max, deltas.shape)
    many = epsilon_by_bisection(mech._log_delta_capped, deltas, eps_max, deltas.shape, points=32)
    np.testing.assert_array_equal(np.asarray(mech.profile.epsilon(deltas)), many)
    fin = np.isfinite(one) & (one > 0)
    assert np.all(np.abs(many[fin] - one[fin]) <= 2 * np.spacing(one[fin]))
    np.testing.assert_array_equal(many[~fin], one[~fin])
    inner = fin & (many < eps_max)
    assert np.all(np.exp(mech._log_delta(many[inner])) <= deltas[inner])
    below = many[inner] - 3 * np.spacing(many[inner])
    assert np.all(np.exp(mech._log_delta(below)) > deltas[inner])
