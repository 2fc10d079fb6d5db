"""Tests for dpexplore.accounting.conversions: mpmath references (≥ 40 digits), sandwiches, round trips,
hypothesis properties, dp_accounting cross-checks, GDP identification/measurement, invalid inputs."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpexplore.accounting.conversions import (
    ApproxDPProfile,
    EquationProfile,
    PureDPProfile,
    RDPProfile,
    ZCDPProfile,
    approx_to_zcdp,
    equation_profile,
    gdp_delta,
    gdp_epsilon,
    gdp_identify,
    gdp_log_delta,
    gdp_measure,
    gdp_to_zcdp,
    implied_delta,
    pure_to_gdp,
    pure_to_rdp,
    pure_to_zcdp,
    rdp_to_approx,
    tradeoff_approx,
    tradeoff_gdp,
    zcdp_to_approx,
    zcdp_to_rdp,
)
from dpexplore.accounting.profiles import FunctionProfile, GaussianDPProfile, PrivacyProfile

mp.mp.dps = 50
REL = 1e-9
SETTINGS = settings(max_examples=40, deadline=None)

eps_st = st.floats(0.0, 50.0, allow_nan=False)
pos_eps_st = st.floats(1e-6, 50.0, allow_nan=False)
alpha_st = st.floats(1.0 + 1e-6, 1e4, allow_nan=False)
delta_st = st.floats(1e-300, 0.999, allow_nan=False)
mu_st = st.floats(0.01, 20.0, allow_nan=False)
rho_st = st.floats(1e-4, 20.0, allow_nan=False)


def rel_close(got, ref, rel=REL):
    ref = mp.mpf(ref)
    if ref == 0:
        return abs(got) <= 1e-300
    return abs((mp.mpf(got) - ref) / ref) <= rel


# ------------------------------------------------------------------------------------------------
# mpmath references
# ------------------------------------------------------------------------------------------------
def mp_rr_renyi(eps, alpha):
    """Rényi divergence of randomized response P = (e^ε, 1)/(1 + e^ε) from Q = (1, e^ε)/(1 + e^ε)."""
    e, a = mp.mpf(eps), mp.mpf(alpha)
    p = mp.exp(e) / (1 + mp.exp(e))
    q = 1 / (1 + mp.exp(e))
    return mp.log(p**a * q ** (1 - a) + q**a * p ** (1 - a)) / (a - 1)


def mp_log_gdp_delta(mu, eps):
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    return mp.log(mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2))


def mp_rr_profile(eps0, eps):
    e0, e = mp.mpf(eps0), mp.mpf(eps)
    return max(mp.mpf(0), (mp.exp(e0) - mp.exp(e)) / (1 + mp.exp(e0)))


@pytest.mark.parametrize("eps", [1e-8, 1e-3, 0.1, 1.0, 5.0, 30.0, 200.0])
@pytest.mark.parametrize("alpha", [1 + 1e-7, 1.5, 2.0, 10.0, 1e3, 1e6])
def test_pure_to_rdp_tight_equals_rr_renyi_divergence(eps, alpha):
    # Steinke 2024 Theorem 4 is attained by randomized response: equality with its Rényi divergence
    with mp.workdps(80):
        ref = mp_rr_renyi(eps, alpha)
    assert rel_close(pure_to_rdp(eps, alpha), ref)


def test_pure_to_rdp_second_form_and_limits():
    eps, alpha = 0.7, 3.5
    e, a = mp.mpf(eps), mp.mpf(alpha)
    ref = e - mp.log((1 + mp.exp(-e)) / (1 + mp.exp(-(2 * a - 1) * e))) / (a - 1)
    assert rel_close(pure_to_rdp(eps, alpha), ref)
    assert pure_to_rdp(0.7, np.inf) == 0.7
    assert pure_to_rdp(0.0, 5.0) == 0.0
    assert pure_to_rdp(np.inf, 5.0) == np.inf
    # alpha -> 1: KL divergence of RR = ε tanh(ε/2)
    assert rel_close(pure_to_rdp(0.7, 1 + 1e-12), mp.mpf(0.7) * mp.tanh(mp.mpf(0.35)), 1e-9)
    assert pure_to_rdp(2.0, 3.0, bound="trivial") == 2.0
    assert rel_close(pure_to_rdp(2.0, 3.0, bound="zcdp"), 3 * 2 * mp.tanh(1))
    out = pure_to_rdp(np.array([[0.5], [1.0]]), np.array([2.0, 3.0, np.inf]))
    assert out.shape == (2, 3)


@pytest.mark.parametrize("eps", [1e-9, 1e-4, 0.3, 1.0, 7.0, 40.0, 1e3])
def test_pure_to_zcdp_closed_forms(eps):
    e = mp.mpf(eps)
    assert rel_close(pure_to_zcdp(eps), e * (mp.exp(e) - 1) / (mp.exp(e) + 1))
    assert rel_close(pure_to_zcdp(eps, bound="quadratic"), e * e / 2)
    assert pure_to_zcdp(eps, bound="trivial") == eps


def mp_gauss_renyi(mu, alpha):
    """D_α(N(μ, 1) ‖ N(0, 1)) by quadrature: log ∫ p^α q^{1−α} dx / (α − 1) (independent of the
    closed form αμ²/2)."""
    m, a = mp.mpf(mu), mp.mpf(alpha)

    def integrand(x):
        return mp.exp(-a * (x - m) ** 2 / 2 - (1 - a) * x**2 / 2) / mp.sqrt(2 * mp.pi)

    return mp.log(mp.quad(integrand, [-mp.inf, a * m, mp.inf])) / (a - 1)


@pytest.mark.parametrize("mu", [1e-3, 0.3, 1.0, 2.5])
@pytest.mark.parametrize("alpha", [1.5, 2.0, 8.0])
def test_gdp_to_zcdp_and_zcdp_to_rdp_are_the_gaussian_renyi_divergence(mu, alpha):
    """ρ = μ²/2 and ε̂(α) = αρ reproduce D_α(N(μ, 1) ‖ N(0, 1)) computed by quadrature, from above
    and within 2e-15 relative (two conversions, each rounded up by 4 ulps)."""
    ref = mp_gauss_renyi(mu, alpha)
    got = zcdp_to_rdp(gdp_to_zcdp(mu), alpha)
    assert mp.mpf(got) >= ref * (1 - mp.mpf(10) ** -30)  # the quadrature's own error is ~1e-40
    assert rel_close(got, ref, 2e-15)


@pytest.mark.parametrize("mu", [5e-324, 1e-200, 1e-8, 0.1, 1.0, 3.0, 1e100, 1e154])
def test_gdp_to_zcdp_mpmath_safe_and_tight(mu):
    """ρ = μ²/2: never below the exact value, at most 4 ulps (+ rounding) above it; underflow gives
    the smallest positive float, not 0."""
    exact = mp.mpf(mu) ** 2 / 2
    got = gdp_to_zcdp(mu)
    assert isinstance(got, float) and got > 0
    assert mp.mpf(got) >= exact
    if exact > mp.mpf("1e-290"):
        assert rel_close(got, exact, 1.2e-15)


def test_gdp_to_zcdp_and_zcdp_to_rdp_edges_and_shapes():
    assert gdp_to_zcdp(0.0) == 0.0 and gdp_to_zcdp(math.inf) == math.inf
    assert gdp_to_zcdp(1e200) == math.inf  # μ² overflows: inf, the safe side
    assert gdp_to_zcdp(1.0) == pure_to_zcdp(1.0, "quadratic")  # the same formula, one implementation
    out = gdp_to_zcdp(np.array([[0.5, 1.0], [2.0, 4.0]]))
    assert out.shape == (2, 2) and (out >= np.array([[0.125, 0.5], [2.0, 8.0]])).all()
    assert zcdp_to_rdp(0.5, math.inf) == math.inf and zcdp_to_rdp(0.0, math.inf) == 0.0
    assert zcdp_to_rdp(0.0, 2.0) == 0.0 and zcdp_to_rdp(math.inf, 2.0) == math.inf
    assert zcdp_to_rdp(1e-320, 1.5) > 0
    rdp = zcdp_to_rdp(np.array([0.1, 0.5])[:, None], np.array([2.0, 8.0, 32.0]))
    assert rdp.shape == (2, 3)
    for (i, j), v in np.ndenumerate(rdp):
        exact = mp.mpf([0.1, 0.5][i]) * [2.0, 8.0, 32.0][j]
        assert mp.mpf(v) >= exact and rel_close(v, exact, 1e-15)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: gdp_to_zcdp(-1.0), "mu"),
        (lambda: gdp_to_zcdp(math.nan), "mu"),
        (lambda: zcdp_to_rdp(-0.1, 2.0), "rho"),
        (lambda: zcdp_to_rdp(0.5, 1.0), "alpha"),
        (lambda: zcdp_to_rdp(0.5, math.nan), "alpha"),
    ],
)
def test_gdp_to_zcdp_and_zcdp_to_rdp_reject_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_gaussian_mu_and_rho_are_the_conversions():
    from dpexplore.mechanisms import Gaussian

    g = Gaussian(4.0, 2.0)
    assert g.mu == 0.5 and g.rho == gdp_to_zcdp(0.5) and g.rho >= 0.125
    assert g._gdp_mu() == g.mu and g._card_closed_forms()["rho"][0] == g.rho
    arr = Gaussian(np.array([1.0, 2.0]))
    assert np.array_equal(arr.mu, [1.0, 0.5]) and np.array_equal(arr.rho, gdp_to_zcdp(np.array([1.0, 0.5])))


@pytest.mark.parametrize("rho", [1e-6, 0.01, 0.5, 3.0, 100.0])
@pytest.mark.parametrize("delta", [1e-300, 1e-12, 1e-5, 0.1, 0.9])
def test_zcdp_approx_closed_forms(rho, delta):
    r, d = mp.mpf(rho), mp.mpf(delta)
    assert rel_close(zcdp_to_approx(rho, delta), r + 2 * mp.sqrt(r * mp.log(1 / d)))
    eps = rho  # reuse the grid as ε values
    e = mp.mpf(eps)
    assert rel_close(approx_to_zcdp(eps, delta), e * e / (4 * mp.log(1 / d) + 4 * e))


def test_zcdp_delta_zero_conventions():
    assert zcdp_to_approx(0.5, 0.0) == np.inf
    assert zcdp_to_approx(0.0, 0.0) == 0.0
    assert approx_to_zcdp(1.0, 0.0) == 0.0
    assert approx_to_zcdp(0.0, 1e-5) == 0.0


@pytest.mark.parametrize("mu", [0.05, 0.3, 1.0, 3.0, 20.0])
@pytest.mark.parametrize("log10_delta", [-1, -20, -300, -1000, -3000, -5000])
def test_gdp_log_delta_mpmath_deep_tail(mu, log10_delta):
    # ε where δ_μ(ε) is about 10**log10_delta
    eps = mu * math.sqrt(2 * math.log(10) * -log10_delta) + mu * mu / 2
    ref = mp_log_gdp_delta(mu, eps)
    got = gdp_log_delta(mu, eps)
    assert rel_close(got, ref)
    if log10_delta <= -300:
        assert ref < -600  # really beyond float underflow


@pytest.mark.parametrize("mu", [0.1, 1.0, 4.0])
@pytest.mark.parametrize("eps", [0.0, 0.5, 2.0, 10.0])
def test_gdp_delta_mpmath(mu, eps):
    ref = mp.exp(mp_log_gdp_delta(mu, eps))
    if ref < 1e-300:  # underflows a float: log_delta carries the value (tested above)
        assert gdp_delta(mu, eps) == 0.0
        return
    assert rel_close(gdp_delta(mu, eps), ref)
    assert rel_close(GaussianDPProfile(mu).delta(eps), ref)


def test_gdp_mu_limits():
    assert gdp_delta(0.0, 1.0) == 0.0
    assert gdp_log_delta(0.0, 0.0) == -np.inf
    assert gdp_delta(np.inf, 3.0) == 1.0
    assert gdp_epsilon(0.0, 1e-5) == 0.0
    assert gdp_epsilon(1.0, 0.0) == np.inf
    assert gdp_epsilon(1.0, 0.9) == 0.0  # δ ≥ δ_μ(0)


@pytest.mark.parametrize("mu", [0.01, 0.5, 1.0, 5.0, 50.0])
@pytest.mark.parametrize("delta", [1e-300, 1e-50, 1e-10, 1e-5, 1e-3])
def test_gdp_epsilon_mpmath_safe_and_tight(mu, delta):
    e = gdp_epsilon(mu, delta)
    d = mp.mpf(delta)
    assert mp_log_gdp_delta(mu, e) <= mp.log(d)  # safe: δ_μ(ε) ≤ δ
    assert mp_log_gdp_delta(mu, e * (1 - 1e-9)) > mp.log(d)  # tight: rounded up by < 1e-9


def test_gdp_epsilon_vectorized_over_mu_and_delta():
    mu = np.array([0.5, 1.0, 2.0])[:, None]
    d = np.array([1e-8, 1e-5, 1e-2])[None, :]
    out = gdp_epsilon(mu, d)
    assert out.shape == (3, 3)
    # (the Newton iteration behind it stops when every element has converged, so an element of an
    # array may take a step more than alone: equal to its tolerance, 1e-13 relative, not exactly)
    for i in range(3):
        for j in range(3):
            assert out[i, j] == pytest.approx(gdp_epsilon(float(mu[i, 0]), float(d[0, j])), rel=2e-13, abs=0)


def mp_pure_to_gdp(eps):
    # solve Φ(−μ/2) = 1/(1 + e^ε) in log space
    e = mp.mpf(eps)
    target = -mp.log1p(mp.exp(e))
    x0 = 2 * mp.sqrt(2 * e) if eps > 2 else 2 * mp.sqrt(2) * mp.erfinv(mp.tanh(e / 2))
    return mp.findroot(lambda m: mp.log(mp.ncdf(-m / 2)) - target, x0)


@pytest.mark.parametrize("eps", [1e-9, 1e-3, 0.5, 1.0, 1.5, 10.0, 100.0, 800.0])
def test_pure_to_gdp_mpmath(eps):
    with mp.workdps(60):
        ref = mp_pure_to_gdp(eps)
    got = pure_to_gdp(eps)
    assert rel_close(got, ref)
    assert got >= ref  # rounded up


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_pure_to_gdp_dominates_rr_profile_with_equality_at_zero(eps):
    mu = pure_to_gdp(eps)
    with mp.workdps(50):
        # equality at ε' = 0: δ_μ(0) = 2Φ(μ/2) − 1 = tanh(ε/2)
        assert rel_close(mp.exp(mp_log_gdp_delta(mu, 0)), mp_rr_profile(eps, 0), 1e-12)
        for e1 in np.linspace(0, eps * 1.2, 25)[1:]:
            assert mp.exp(mp_log_gdp_delta(mu, e1)) >= mp_rr_profile(eps, e1)
        # and μ is the smallest such: slightly smaller μ fails at ε' = 0
        assert mp.exp(mp_log_gdp_delta(mu * (1 - 1e-8), 0)) < mp_rr_profile(eps, 0)


@pytest.mark.parametrize(
    "eps0,delta0,eps",
    [
        (1.0, 0.0, 0.0),
        (1.0, 0.0, 0.5),
        (1.0, 1e-5, 0.2),
        (3.0, 0.1, 2.999),
        (1.0, 1e-5, 2.0),
        (1e-6, 0.0, 0.0),
        (40.0, 1e-9, 1.0),
    ],
)
def test_implied_delta_mpmath(eps0, delta0, eps):
    e0, d0, e = mp.mpf(eps0), mp.mpf(delta0), mp.mpf(eps)
    ref = d0 + (1 - d0) * max(mp.mpf(0), mp.exp(e0) - mp.exp(e)) / (1 + mp.exp(e0))
    got = implied_delta(eps0, delta0, eps)
    assert rel_close(got, ref)
    assert got >= ref  # safe side
    p = ApproxDPProfile(eps0, delta0)
    assert rel_close(p.delta(eps), ref)
    assert p.delta(eps) >= ref


@pytest.mark.parametrize("eps,delta,alpha", [(1.0, 0.0, 0.1), (0.5, 1e-3, 0.0), (2.0, 0.01, 0.5), (1.0, 0.1, 0.95)])
def test_tradeoff_approx_mpmath(eps, delta, alpha):
    e, d, a = mp.mpf(eps), mp.mpf(delta), mp.mpf(alpha)
    ref = max(mp.mpf(0), 1 - d - mp.exp(e) * a, mp.exp(-e) * (1 - d - a))
    got = tradeoff_approx(eps, delta, alpha)
    assert abs(got - ref) <= 2e-15
    assert got <= ref  # rounded down: never claims more privacy


@pytest.mark.parametrize("mu,alpha", [(1.0, 0.05), (0.1, 1e-10), (3.0, 0.5), (2.0, 0.999), (1.0, 1e-300)])
def test_tradeoff_gdp_mpmath(mu, alpha):
    m, a = mp.mpf(mu), mp.mpf(alpha)
    ref = mp.ncdf(-mp.sqrt(2) * mp.erfinv(2 * a - 1) - m) if alpha > 1e-200 else mp.mpf(1)
    got = tradeoff_gdp(mu, alpha)
    assert rel_close(got, ref, 1e-9) or abs(got - ref) < 1e-15
    assert got <= ref
    assert tradeoff_gdp(mu, 0.0) == 1.0
    assert tradeoff_gdp(mu, 1.0) == 0.0
    assert tradeoff_gdp(0.0, 0.3) == pytest.approx(0.7, abs=1e-15)


def test_tradeoff_gdp_is_dual_of_gdp_profile():
    # δ_μ(ε) = 1 + f*(−e^ε): check δ_μ(ε) = sup_α [1 − e^ε α − G_μ(α)] on a fine grid
    mu, eps = 1.2, 0.7
    a = np.linspace(0, 1, 200001)
    sup = np.max(1 - np.exp(eps) * a - tradeoff_gdp(mu, a))
    assert sup == pytest.approx(gdp_delta(mu, eps), abs=1e-8)


# ------------------------------------------------------------------------------------------------
# RDP -> (ε, δ)
# ------------------------------------------------------------------------------------------------
def mp_rdp_to_approx(alphas, rdp, delta, improved=True):
    best = mp.inf
    d = mp.mpf(delta)
    for a, r in zip(alphas, rdp):
        a, r = mp.mpf(a), mp.mpf(r)
        if improved:
            e = r + mp.log(1 - 1 / a) - (mp.log(d) + mp.log(a)) / (a - 1)
        else:
            e = r + mp.log(1 / d) / (a - 1)
        best = min(best, e)
    return max(best, mp.mpf(0))


@pytest.mark.parametrize("rho", [0.01, 0.5, 5.0])
@pytest.mark.parametrize("delta", [1e-300, 1e-10, 1e-5, 0.3])
def test_rdp_to_approx_mpmath(rho, delta):
    alphas = np.concatenate([1 + np.logspace(-3, 0, 20), np.linspace(2.5, 300, 80)])
    rdp = rho * alphas
    for bound, imp in (("improved", True), ("mironov", False)):
        got = rdp_to_approx(alphas, rdp, delta, bound=bound)
        assert rel_close(got, mp_rdp_to_approx(alphas, rdp, delta, imp))


def test_rdp_to_approx_shapes_orders_and_inf():
    alphas = np.array([2.0, 8.0, 32.0, np.inf])
    rdp = np.array([[0.1, 0.4, 1.6, 10.0], [0.1, 0.2, 0.3, 0.35]])
    out = rdp_to_approx(alphas, rdp, np.array([1e-5, 1e-9])[:, None, None][..., 0])
    assert out.shape == (2, 2)
    eps, order = rdp_to_approx(alphas, rdp[1], 0.0, return_order=True)
    assert order == np.inf and eps == pytest.approx(0.35)
    assert rdp_to_approx(alphas[:3], rdp[1, :3], 0.0) == np.inf
    assert rdp_to_approx(alphas, np.zeros(4), 1e-5) == 0.0  # clipped at 0


@SETTINGS
@given(st.floats(1e-3, 10), delta_st)
def test_rdp_improved_le_mironov_and_cross_check_dp_accounting(rho, delta):
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    alphas = np.array([1.5, 2.0, 3.0, 5.0, 8.0, 16.0, 32.0, 64.0, 256.0])
    rdp = rho * alphas
    imp = rdp_to_approx(alphas, rdp, delta)
    mir = rdp_to_approx(alphas, rdp, delta, bound="mironov")
    assert imp <= mir
    ref, _ = compute_epsilon(alphas, rdp, delta)
    if ref > 0:  # dp_accounting returns 0 via a KL shortcut when δ is large
        assert imp == pytest.approx(ref, rel=1e-9)


def test_rdp_cross_check_rdp_accountant_gaussian():
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant as rpa

    sigma = 1.7
    acc = rpa.RdpAccountant()
    acc.compose(dp_accounting.GaussianDpEvent(sigma), 10)
    orders = np.array(rpa.DEFAULT_RDP_ORDERS, dtype=float)
    for delta in (1e-5, 1e-9):
        ref = acc.get_epsilon(delta)
        got = rdp_to_approx(orders, 10 * orders / (2 * sigma**2), delta)
        assert got == pytest.approx(ref, rel=1e-9)
        # compute_delta ↔ RDPProfile
        dref, _ = rpa.compute_delta(orders, 10 * orders / (2 * sigma**2), got)
        p = RDPProfile(orders, 10 * orders / (2 * sigma**2))
        assert p.delta(got) == pytest.approx(min(dref, 1.0), rel=1e-6) or p.delta(got) <= dref


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_pure_to_rdp_cross_check_dp_accounting_rr_and_laplace(eps):
    from dp_accounting.rdp import rdp_privacy_accountant as rpa

    p = 2.0 / (1.0 + math.exp(eps))  # binary RR with ln((1 - p/2)/(p/2)) = ε
    for a in (1.5, 2.0, 7.0, 64.0):
        rr = rpa._randomized_response_rdp_replace_one(p, 2, a)
        assert pure_to_rdp(eps, a) == pytest.approx(rr, rel=1e-9)
        # Laplace with b = 1/ε is ε-DP, so its RDP is below the tight pure-DP bound
        assert rpa._laplace_rdp(eps, a) <= pure_to_rdp(eps, a)


# ------------------------------------------------------------------------------------------------
# sandwiches and hypothesis properties
# ------------------------------------------------------------------------------------------------
@SETTINGS
@given(eps_st, alpha_st)
def test_pure_to_rdp_sandwich(eps, alpha):
    tight = pure_to_rdp(eps, alpha)
    assert 0.0 <= tight <= min(pure_to_rdp(eps, alpha, "trivial"), pure_to_rdp(eps, alpha, "zcdp"))
    assert not math.isnan(tight)


@SETTINGS
@given(eps_st)
def test_pure_to_zcdp_sandwich(eps):
    tight = pure_to_zcdp(eps)
    assert 0.0 <= tight <= min(pure_to_zcdp(eps, "quadratic"), pure_to_zcdp(eps, "trivial"))
    # tight ρ is sup_α ε̂(α)/α, approached as α → 1 (Steinke 2024 Theorem 5 proof)
    for a in (1.0001, 2.0, 10.0):
        assert pure_to_rdp(eps, a) <= a * tight * (1 + 1e-12)


@SETTINGS
@given(pos_eps_st, alpha_st, st.floats(1.0, 10.0))
def test_pure_to_rdp_monotone(eps, alpha, factor):
    assert pure_to_rdp(eps, alpha * factor) >= pure_to_rdp(eps, alpha) * (1 - 1e-13)
    assert pure_to_rdp(min(eps * factor, 1e3), alpha) >= pure_to_rdp(eps, alpha) * (1 - 1e-13)


@SETTINGS
@given(mu_st, st.floats(0.0, 200.0))
def test_gdp_round_trip(mu, eps):
    d = gdp_delta(mu, eps)
    if d <= 0.0 or d >= 1.0:
        return
    back = gdp_epsilon(mu, d)
    assert gdp_delta(mu, back) <= d
    if d < np.finfo(float).tiny:
        # a subnormal δ keeps a few digits: the ε of the stored d can lie below eps (μ 1.5, ε 58.5:
        # δ 7.8378e-322 is stored as 7.86e-322, whose ε is 58.4999108 by mpmath; we return that)
        return
    assert back >= eps * (1 - 1e-12)
    # close: δ at the returned ε is within a relative 1e-9 of the target
    assert gdp_delta(mu, back) >= d * (1 - 1e-9)


@SETTINGS
@given(mu_st, delta_st, st.floats(1.01, 5.0))
def test_gdp_epsilon_monotone(mu, delta, factor):
    e = gdp_epsilon(mu, delta)
    assert not math.isnan(e) and e >= 0
    assert gdp_epsilon(mu * factor, delta) >= e
    assert gdp_epsilon(mu, delta / factor) >= e


@SETTINGS
@given(pos_eps_st, delta_st)
def test_zcdp_round_trip(eps, delta):
    rho = approx_to_zcdp(eps, delta)
    assert zcdp_to_approx(rho, delta) <= eps


@SETTINGS
@given(rho_st, st.floats(0.0, 100.0))
def test_zcdp_profile_sandwich(rho, eps):
    # the Gaussian with μ = √(2ρ) is ρ-zCDP, so the zCDP-implied δ is above its exact profile;
    # the continuous minimum over α is below any finite set of orders (RDPProfile)
    z = ZCDPProfile(rho).delta(eps)
    assert 0.0 <= z <= 1.0
    assert z >= gdp_delta(math.sqrt(2 * rho), eps) * (1 - 1e-9)
    alphas = np.array([1.1, 1.5, 2.0, 4.0, 8.0, 16.0, 64.0, 256.0])
    assert z <= RDPProfile(alphas, rho * alphas).delta(eps) * (1 + 1e-9) + 1e-300


@pytest.mark.parametrize("rho", [0.01, 0.5, 4.0])
@pytest.mark.parametrize("eps", [0.0, 0.5, 3.0, 30.0])
def test_zcdp_profile_mpmath(rho, eps):
    r, e = mp.mpf(rho), mp.mpf(eps)

    def f(a):
        return (a - 1) * (a * r - e + mp.log(1 - 1 / a)) - mp.log(a)

    # stationary point (2α − 1)ρ − ε + log(1 − 1/α) = 0, solved by bisection in mpmath
    lo, hi = mp.mpf(1) + mp.mpf(10) ** -30, mp.mpf(10) ** 6
    for _ in range(300):
        m = (lo + hi) / 2
        if (2 * m - 1) * r - e + mp.log(1 - 1 / m) < 0:
            lo = m
        else:
            hi = m
    ref = min(f((lo + hi) / 2), mp.mpf(0))
    got = ZCDPProfile(rho).log_delta(eps)
    assert rel_close(got, ref) or abs(got - ref) < 1e-12
    assert got >= ref - 1e-12 * abs(ref)  # never below the exact minimum


@SETTINGS
@given(rho_st, delta_st)
def test_zcdp_profile_round_trip(rho, delta):
    p = ZCDPProfile(rho)
    e = p.epsilon(delta)
    assert p.delta(e) <= delta * (1 + 1e-12)
    # the profile's ε(δ) is at least as good as the simple zCDP conversion
    assert e <= zcdp_to_approx(rho, delta) * (1 + 1e-12)


@SETTINGS
@given(st.floats(0.0, 20.0), st.floats(0.0, 0.5), st.floats(0.0, 40.0), st.floats(0.0, 40.0))
def test_approx_profile_properties(eps0, delta0, e1, e2):
    p = ApproxDPProfile(eps0, delta0)
    lo, hi = sorted((e1, e2))
    d_lo, d_hi = p.delta(lo), p.delta(hi)
    assert 0.0 <= d_hi <= d_lo <= 1.0
    assert d_hi >= delta0
    target = max(d_hi, delta0)
    if target < p.delta(0.0):
        e = p.epsilon(target)
        assert p.delta(e) <= target * (1 + 1e-12) + 1e-300


def test_pure_dp_profile_is_rr_and_eps_max():
    p = PureDPProfile(1.0)
    assert p.eps_max == 1.0
    assert p.delta(1.0) == 0.0 and p.delta(5.0) == 0.0
    assert rel_close(p.delta(0.0), mp.tanh(mp.mpf(0.5)))
    assert p.epsilon(0.0) == 1.0
    assert ApproxDPProfile(1.0, 1e-6).eps_max == np.inf
    assert ApproxDPProfile(1.0, 1e-6).epsilon(1e-7) == np.inf
    e = p.epsilon(0.2)
    ref = mp.log(mp.e - mp.mpf(0.2) * (1 + mp.e))  # solve (e − e^x)/(1 + e) = 0.2
    assert rel_close(e, ref) and e >= ref


def test_rdp_profile_mpmath_and_consistency():
    alphas = np.array([1.5, 2.0, 4.0, 8.0, 32.0])
    rdp = 0.3 * alphas
    p = RDPProfile(alphas, rdp)
    for eps in (0.5, 2.0, 8.0):
        ref = min(
            (mp.mpf(a) - 1) * (mp.mpf(r) - eps + mp.log(1 - 1 / mp.mpf(a))) - mp.log(a) for a, r in zip(alphas, rdp)
        )
        assert rel_close(p.log_delta(eps), min(ref, mp.mpf(0)))
    for d in (1e-3, 1e-8, 1e-40):
        e = p.epsilon(d)
        assert e == rdp_to_approx(alphas, rdp, d)
        assert p.delta(e) <= d * (1 + 1e-12)
    q = RDPProfile(np.array([2.0, np.inf]), np.array([0.2, 1.0]))
    assert q.eps_max == 1.0 and q.delta(1.0) == 0.0


# ------------------------------------------------------------------------------------------------
# trade-off equation profiles (Liu et al. 2022 Figure 1 left)
# ------------------------------------------------------------------------------------------------
def test_equation_profile_naive_mpmath_and_inverse():
    p = equation_profile(2.0, 1.5, 2.0)
    for eps in (0.0, 0.3, 1.0, 5.0, 40.0):
        ref = min(mp.mpf(0), mp.log(mp.mpf(1.5)) - (mp.mpf(2.0) * eps / 2) ** 2)
        assert rel_close(p.log_delta(eps), ref) or abs(p.log_delta(eps) - ref) < 1e-15
    for d in (1e-3, 1e-100):
        e = p.epsilon(d)
        ref = mp.sqrt(mp.log(mp.mpf(1.5) / d))  # σ = A√log(B/δ)/ε with A = σ = 2
        assert rel_close(e, ref) and e >= ref


@pytest.mark.parametrize("A,B,sigma", [(2.0, 1.0, 2.0), (1.0, 1.25, 0.5), (3.0, 10.0, 1.0)])
def test_equation_profile_refined(A, B, sigma):
    from scipy.optimize import minimize_scalar

    naive = equation_profile(A, B, sigma)
    ref_p = equation_profile(A, B, sigma, refined=True)
    c = (sigma / A) ** 2
    for eps in (0.0, 0.2, 1.0, 2.0, 4.0):

        def h(x):
            d0 = min(1.0, B * math.exp(-c * x * x))
            return d0 + (1 - d0) * max(0.0, math.exp(x) - math.exp(eps)) / (1 + math.exp(x))

        xs = np.linspace(eps, eps + 20, 40001)
        dense = min(h(x) for x in xs[::50])
        k = int(np.argmin([h(x) for x in xs[::50]]))
        r = minimize_scalar(
            h,
            bounds=(max(eps, xs[::50][max(k - 1, 0)]), xs[::50][min(k + 1, 800)]),
            method="bounded",
            options={"xatol": 1e-12},
        )
        best = min(dense, r.fun, naive.delta(eps))
        got = ref_p.delta(eps)
        assert got <= best + 1e-12  # as tight as a dense search
        assert got <= naive.delta(eps) + 1e-15  # refinement only helps
    # for (A, B, σ) = (2, 1, 2) (Liu et al. 2022's "SGD"): refined δ(0) < 1 while naive δ(0) = 1
    if (A, B, sigma) == (2.0, 1.0, 2.0):
        assert naive.delta(0.0) == 1.0 and ref_p.delta(0.0) < 0.7
    # in the tail the refinement coincides with the naive profile
    assert ref_p.log_delta(30.0) == naive.log_delta(30.0)
    e = ref_p.epsilon(1e-6)
    assert ref_p.delta(e) <= 1e-6 and e <= naive.epsilon(1e-6)


@SETTINGS
@given(st.floats(0.1, 5), st.floats(0.5, 20), st.floats(0.1, 5), eps_st, eps_st)
def test_equation_profile_refined_monotone_valid(A, B, sigma, e1, e2):
    p = EquationProfile(A, B, sigma, refined=True)
    lo, hi = sorted((e1, e2))
    d_lo, d_hi = p.delta(lo), p.delta(hi)
    assert 0.0 <= d_hi <= d_lo * (1 + 1e-9) + 1e-15
    assert d_lo <= 1.0


# ------------------------------------------------------------------------------------------------
# GDP identification and measurement
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mu", [0.1, 0.7, 1.0, 3.0, 10.0])
def test_gdp_identify_gaussian(mu):
    assert gdp_identify(GaussianDPProfile(mu)) == pytest.approx(mu, rel=1e-3)


class _Mech:
    def __init__(self, p):
        self.profile = p


class _LogDeltaOnly:
    def log_delta(self, eps):
        return gdp_log_delta(2.0, eps)


def test_gdp_identify_conventions():
    # pure DP: δ hits 0 at a finite ε → μ_t = 0
    assert gdp_identify(PureDPProfile(1.0)) == 0.0
    # δ(ε) = e^{−ε}: heavier than Gaussian tail → not GDP
    assert gdp_identify(FunctionProfile(lambda e: -np.asarray(e, dtype=float))) == np.inf
    assert gdp_identify(FunctionProfile(lambda e: -(np.asarray(e, dtype=float) ** 1.5))) == np.inf
    # mechanism-like object and bare .log_delta
    assert gdp_identify(_Mech(GaussianDPProfile(0.5))) == pytest.approx(0.5, rel=1e-3)
    assert gdp_identify(_LogDeltaOnly()) == pytest.approx(2.0, rel=1e-3)
    # equation profile: log δ = log B − (σε/A)² → μ_t = A/(σ√2)
    assert gdp_identify(equation_profile(2.0, 1.0, 2.0, refined=True)) == pytest.approx(
        2.0 / (2.0 * math.sqrt(2.0)), rel=1e-6
    )
    # zCDP-implied profile of ρ: Gaussian-like tail with μ_t = √(2ρ)
    assert gdp_identify(ZCDPProfile(0.5)) == pytest.approx(1.0, rel=1e-2)


@pytest.mark.parametrize("mu", [0.5, 1.3, 4.0])
def test_gdp_measure_gaussian_brackets(mu):
    lo, hi = gdp_measure(GaussianDPProfile(mu), tol=1e-3)
    assert lo < mu <= hi and hi - lo <= 1e-3 + 1e-12
    # μ_lower is violated by the profile (a GDP profile with smaller μ is below it everywhere)
    assert gdp_delta(lo, 1.0) < gdp_delta(mu, 1.0)


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_gdp_measure_pure_dp_brackets_pure_to_gdp(eps):
    tol = 1e-4
    lo, hi = gdp_measure(PureDPProfile(eps), tol=tol)
    mu = pure_to_gdp(eps)
    assert lo < mu <= hi and hi - lo <= tol + 1e-12
    # certificate checked independently in mpmath on a dense grid
    for e1 in np.linspace(0, eps, 400):
        assert mp.exp(mp_log_gdp_delta(hi, e1)) >= mp_rr_profile(eps, e1)
    assert mp.exp(mp_log_gdp_delta(lo, 0)) < mp_rr_profile(eps, 0)


def test_gdp_measure_other_profiles_and_errors():
    p = equation_profile(2.0, 1.0, 2.0, refined=True)
    lo, hi = gdp_measure(p, tol=1e-3)
    assert hi - lo <= 1e-3 + 1e-12
    grid = np.linspace(0, 30, 3001)
    assert np.all(gdp_log_delta(hi, grid) >= p.log_delta(grid))
    assert np.any(gdp_log_delta(lo, grid) < p.log_delta(grid))
    with pytest.raises(ValueError, match="not GDP"):
        gdp_measure(FunctionProfile(lambda e: -np.asarray(e, dtype=float)))
    with pytest.raises(ValueError, match="tol"):
        gdp_measure(GaussianDPProfile(1.0), tol=0.0)
    with pytest.raises(ValueError, match="profile"):
        gdp_identify(42)


# ------------------------------------------------------------------------------------------------
# profile contract and performance
# ------------------------------------------------------------------------------------------------
PROFILES = [
    ApproxDPProfile(1.0, 1e-6),
    PureDPProfile(2.0),
    ZCDPProfile(0.3),
    RDPProfile(np.array([1.5, 2.0, 8.0, 64.0]), 0.2 * np.array([1.5, 2.0, 8.0, 64.0])),
    equation_profile(2.0, 1.0, 2.0),
    equation_profile(2.0, 1.0, 2.0, refined=True),
]


@pytest.mark.parametrize("p", PROFILES, ids=lambda p: type(p).__name__)
def test_profile_contract(p):
    assert isinstance(p, PrivacyProfile)
    eps = np.linspace(0, 20, 300)
    d = p.delta(eps)
    assert d.shape == eps.shape and np.all((d >= 0) & (d <= 1)) and not np.isnan(d).any()
    assert np.all(np.diff(d) <= 1e-12)
    ld = p.log_delta(eps)
    assert np.all(ld <= 0) and not np.isnan(ld).any()
    for delta in (1e-2, 1e-6, 1e-12):
        e = p.epsilon(delta)
        assert e >= 0 and not math.isnan(e)
        if np.isfinite(e):
            assert p.delta(e) <= delta * (1 + 1e-12)
    assert isinstance(p.delta(0.5), float)


# ------------------------------------------------------------------------------------------------
# invalid inputs
# ------------------------------------------------------------------------------------------------
A2 = np.array([2.0, 4.0])
INVALID = [
    ("eps", lambda: pure_to_rdp(-1.0, 2.0)),
    ("alpha", lambda: pure_to_rdp(1.0, 1.0)),
    ("alpha", lambda: pure_to_rdp(1.0, 0.5)),
    ("eps", lambda: pure_to_rdp(float("nan"), 2.0)),
    ("bound", lambda: pure_to_rdp(1.0, 2.0, bound="loose")),
    ("eps", lambda: pure_to_zcdp(-0.1)),
    ("bound", lambda: pure_to_zcdp(1.0, bound="tight!")),
    ("alphas", lambda: rdp_to_approx(np.array([1.0, 2.0]), A2, 1e-5)),
    ("rdp_eps", lambda: rdp_to_approx(A2, np.array([-1.0, 1.0]), 1e-5)),
    ("rdp_eps", lambda: rdp_to_approx(A2, np.array([1.0, 1.0, 1.0]), 1e-5)),
    ("delta", lambda: rdp_to_approx(A2, A2, 1.0)),
    ("delta", lambda: rdp_to_approx(A2, A2, -1e-3)),
    ("bound", lambda: rdp_to_approx(A2, A2, 1e-5, bound="other")),
    ("rho", lambda: zcdp_to_approx(-1.0, 1e-5)),
    ("delta", lambda: zcdp_to_approx(1.0, 1.5)),
    ("rho", lambda: zcdp_to_approx(float("nan"), 1e-5)),
    ("eps", lambda: approx_to_zcdp(-1.0, 1e-5)),
    ("delta", lambda: approx_to_zcdp(1.0, 1.0)),
    ("mu", lambda: gdp_delta(-1.0, 1.0)),
    ("eps", lambda: gdp_delta(1.0, -1.0)),
    ("mu", lambda: gdp_log_delta(float("nan"), 1.0)),
    ("delta", lambda: gdp_epsilon(1.0, 1.0)),
    ("mu", lambda: gdp_epsilon(-0.5, 1e-5)),
    ("eps", lambda: pure_to_gdp(-1.0)),
    ("eps0", lambda: implied_delta(-1.0, 0.0, 1.0)),
    ("delta0", lambda: implied_delta(1.0, 1.0, 1.0)),
    ("eps", lambda: implied_delta(1.0, 0.0, -2.0)),
    ("alpha", lambda: tradeoff_approx(1.0, 0.0, 1.5)),
    ("delta", lambda: tradeoff_approx(1.0, -0.1, 0.5)),
    ("mu", lambda: tradeoff_gdp(-1.0, 0.5)),
    ("alpha", lambda: tradeoff_gdp(1.0, float("nan"))),
    ("eps0", lambda: ApproxDPProfile(-1.0, 0.0)),
    ("delta0", lambda: ApproxDPProfile(1.0, 1.0)),
    ("eps", lambda: PureDPProfile(-2.0)),
    ("rho", lambda: ZCDPProfile(-0.1)),
    ("alphas", lambda: RDPProfile(np.array([0.5, 2.0]), A2)),
    ("A", lambda: equation_profile(0.0, 1.0, 1.0)),
    ("B", lambda: equation_profile(1.0, -1.0, 1.0)),
    ("sigma", lambda: equation_profile(1.0, 1.0, float("nan"))),
    ("eps", lambda: ZCDPProfile(0.5).delta(-1.0)),
]


@pytest.mark.parametrize("name,call", INVALID, ids=[f"{n}-{i}" for i, (n, _) in enumerate(INVALID)])
def test_invalid_inputs(name, call):
    with pytest.raises(ValueError, match=name):
        call()


# ------------------------------------------------------------------------------------------------
# extremes found by fuzzing
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rho", [1e-8, 1e-3, 1e4])
def test_zcdp_profile_extreme_rho(rho):
    p = ZCDPProfile(rho)
    eps = np.concatenate([[0.0, 1e-300, 1e-20], np.logspace(-12, 4, 200)])
    d = p.delta(eps)
    assert not np.isnan(d).any() and np.all((d >= 0) & (d <= 1))
    assert np.all(np.diff(d) <= 1e-15)
    deltas = np.array([1 - 1e-16, 0.5, 1e-5, 1e-100, 1e-299])
    e = p.epsilon(deltas)
    assert not np.isnan(e).any()
    assert np.all(p.log_delta(e) <= np.log(deltas) + 1e-12)


def test_rdp_profile_orders_near_one():
    alphas = np.array([1 + 1e-12, 1 + 1e-6, 1.5, 4.0])
    rdp = 0.5 * alphas
    p = RDPProfile(alphas, rdp)
    for eps in (0.0, 0.1, 3.0):
        ref = min(
            mp.mpf(0),
            min(
                (mp.mpf(a) - 1) * (mp.mpf(r) - eps + mp.log(1 - 1 / mp.mpf(a))) - mp.log(mp.mpf(a))
                for a, r in zip(alphas, rdp)
            ),
        )
        got = p.log_delta(eps)
        assert abs(got - ref) <= 1e-9 * max(1.0, abs(ref))


@pytest.mark.parametrize("A,B,sigma", [(2.0, 1.0, 2.0), (1.0, 5.0, 0.3)])
def test_equation_profile_refined_epsilon_matches_bisection(A, B, sigma):
    p = equation_profile(A, B, sigma, refined=True)
    d = np.logspace(-15, -0.01, 60)
    fast = p.epsilon(d)
    slow = PrivacyProfile._epsilon(p, d)
    assert np.allclose(fast, slow, rtol=1e-9, atol=1e-12)
    assert np.all(p.delta(fast) <= d)


def test_gdp_measure_rejects_trivial_head_and_fine_tol():
    # naive inversion of σ = 2√log(1/δ)/ε has δ(0) = 1: no finite μ (Liu et al. 2022 Figure 1 discussion)
    with pytest.raises(ValueError, match="not GDP"):
        gdp_measure(equation_profile(2.0, 1.0, 2.0))
    lo, hi = gdp_measure(PureDPProfile(0.5), tol=1e-7)
    assert lo < pure_to_gdp(0.5) <= hi and hi - lo <= 1e-7 + 1e-15
    lo, hi = gdp_measure(_Mech(ZCDPProfile(0.5)), tol=1e-3)
    # the zCDP-implied profile lies above the exact Gaussian profile with μ = 1
    assert lo >= 1.0 and hi - lo <= 1e-3 + 1e-12


def test_gdp_identify_and_measure_on_mechanisms():
    mech = pytest.importorskip("dpexplore.mechanisms")
    # Gaussian mechanism σ = 2 (Δ = 1) is exactly 0.5-GDP
    g = mech.Gaussian(2.0)
    assert gdp_identify(g) == pytest.approx(0.5, rel=1e-3)
    lo, hi = gdp_measure(g, tol=1e-3)
    assert lo < 0.5 <= hi
    # Laplace b = 1 is 1-DP: μ_t = 0, and its μ is at most pure_to_gdp(1) (RR is the worst case)
    lap = mech.Laplace(1.0)
    assert gdp_identify(lap) == 0.0
    lo, hi = gdp_measure(lap, tol=1e-3)
    assert hi <= pure_to_gdp(1.0) + 1e-3 and hi - lo <= 1e-3 + 1e-12


@pytest.mark.parametrize("mu", [30.0, 60.0])
def test_gdp_measure_large_mu_head_close_to_one(mu):
    # δ_μ(0) = 1 − 1e-50 … : the certificate works in relative log terms
    lo, hi = gdp_measure(GaussianDPProfile(mu), tol=1e-3)
    assert lo < mu <= hi and hi - lo <= 1e-3 + 1e-12


# ------------------------------------------------------------------------------------------------
# whole-domain properties (inf, tiny and huge values included)
# ------------------------------------------------------------------------------------------------
any_eps = st.one_of(st.floats(0.0, 1e300), st.just(float("inf")), st.floats(0.0, 1e-300))
any_alpha = st.one_of(st.floats(1.0, 1e300, exclude_min=True), st.just(float("inf")))
any_delta = st.one_of(st.floats(0.0, 1.0, exclude_max=True), st.floats(0.0, 1e-300))
any_mu = st.one_of(st.floats(0.0, 1e6), st.just(float("inf")))


@SETTINGS
@given(any_eps, any_alpha, any_delta, any_mu)
def test_whole_domain_no_nan_and_ranges(eps, alpha, delta, mu):
    for b in ("tight", "trivial", "zcdp"):
        r = pure_to_rdp(eps, alpha, b)
        assert not math.isnan(r) and r >= 0
    assert pure_to_rdp(eps, alpha) <= eps
    for b in ("tight", "quadratic", "trivial"):
        r = pure_to_zcdp(eps, b)
        assert not math.isnan(r) and r >= 0
    for v in (zcdp_to_approx(eps, delta), approx_to_zcdp(eps, delta), pure_to_gdp(eps), gdp_epsilon(mu, delta)):
        assert not math.isnan(v) and v >= 0
    for v in (
        gdp_delta(mu, eps),
        implied_delta(eps, min(delta, 0.99), 1.0),
        tradeoff_approx(eps, delta, 0.3),
        tradeoff_gdp(mu, min(delta, 1.0)),
    ):
        assert not math.isnan(v) and 0.0 <= v <= 1.0
    assert gdp_log_delta(mu, eps) <= 0.0


@SETTINGS
@given(st.floats(1e-6, 30.0), st.floats(0.0, 1.0))
def test_pure_to_gdp_in_tradeoff_space(eps, a):
    # ε-DP ⇒ μ-GDP means G_μ ≤ f_{ε,0} everywhere, with equality at α = 1/(1 + e^ε)
    mu = pure_to_gdp(eps)
    assert tradeoff_gdp(mu, a) <= tradeoff_approx(eps, 0.0, a) + 1e-12
    a_star = 1.0 / (1.0 + math.exp(eps))
    # (1 − e^ε α) loses relative accuracy by cancellation: absolute agreement 1e-15
    assert tradeoff_gdp(mu, a_star) == pytest.approx(tradeoff_approx(eps, 0.0, a_star), rel=1e-9, abs=2e-15)


def test_gdp_identify_zero_profile():
    assert gdp_identify(FunctionProfile(lambda e: np.full(np.shape(e), -np.inf))) == 0.0
    assert gdp_measure(ZCDPProfile(0.0), tol=1e-3) == (0.0, 1e-3)
