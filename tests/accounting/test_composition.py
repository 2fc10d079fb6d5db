"""Tests for dpexplore.accounting.composition and dpexplore.accounting.pld.

Layers: closed forms against mpmath at 50 digits; the exact KOV optimum against mpmath with exact
binomials; sandwiches (tight ≤ loose); the exact Gaussian / randomized-response compositions;
cross-checks of the numerical PLD composition against dp_accounting (ours ≥ its optimistic
estimate, within 0.5 % of its pessimistic one); hypothesis properties; invalid inputs.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpexplore.accounting import composition as C
from dpexplore.accounting import pld
from dpexplore.mechanisms import Exponential, Gaussian, Laplace, Logistic, RandomizedResponse, Subbotin
from dpexplore.accounting.profiles import GaussianDPProfile

mp.mp.dps = 50
REL = 1e-9


def rel(a, b):
    return abs(float(a) - float(b)) / max(abs(float(b)), 1e-300)


# ------------------------------------------------------------------------------------------------
# mpmath references
# ------------------------------------------------------------------------------------------------
def mp_kov_delta(eg, e, k, de=0.0):
    """KOV δ_total(ε_g) with exact binomials at 50 digits."""
    e, eg, de = mp.mpf(e), mp.mpf(eg), mp.mpf(de)
    s = mp.mpf(0)
    for l in range(k + 1):
        if (2 * l - k) * e > eg:
            s += mp.binomial(k, l) * (mp.exp(l * e) - mp.exp(eg + (k - l) * e))
    d = s / (1 + mp.exp(e)) ** k
    return 1 - (1 - de) ** k * (1 - d)


def mp_kov_eps(e, k, delta, de=0.0):
    """Smallest ε_g with δ_total(ε_g) ≤ delta (bisection at 50 digits)."""
    f = lambda x: mp_kov_delta(x, e, k, de) - mp.mpf(delta)
    lo, hi = mp.mpf(0), mp.mpf(k) * mp.mpf(e)
    if f(lo) <= 0:
        return lo
    for _ in range(120):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return hi


# ------------------------------------------------------------------------------------------------
# closed forms
# ------------------------------------------------------------------------------------------------
def test_basic_sums_last_axis():
    e, d = C.basic([[0.1, 0.2, 0.3], [1.0, 1.0, 1.0]], 1e-6)
    np.testing.assert_allclose(e, [0.6, 3.0], rtol=1e-15)
    np.testing.assert_allclose(d, [3e-6, 3e-6], rtol=1e-15)
    assert C.basic(0.5, 0.1) == (0.5, 0.1)
    assert C.basic([0.5] * 4, [0.4] * 4)[1] == 1.0  # capped


@pytest.mark.parametrize(
    "eps,delta,k,slack", [(0.01, 0.0, 10_000, 1e-6), (0.1, 1e-8, 100, 1e-5), (1.0, 0.0, 5, 1e-3), (2.5, 1e-9, 1, 0.5)]
)
def test_advanced_vs_mpmath(eps, delta, k, slack):
    e = mp.mpf(eps)
    ref = mp.sqrt(2 * k * mp.log(1 / mp.mpf(slack))) * e + k * e * (mp.exp(e) - 1)
    got, dtot = C.advanced(eps, delta, k, slack)
    assert rel(got, ref) < REL and got >= float(ref)
    assert dtot == pytest.approx(k * delta + slack, rel=1e-15)


def test_advanced_004_example():
    # Bassi 2019: k = 10 000, δ' = e^{-32}; ε ≤ 1/800 gives ε' ≈ 1 (the approximation drops kε(e^ε−1))
    e, _ = C.advanced(1 / 800, 0.0, 10_000, math.exp(-32))
    assert 1.0 < e < 1.0 + 10_000 * (1 / 800) * math.expm1(1 / 800) + 1e-12


@pytest.mark.parametrize("eps_list,delta", [([0.1] * 100, 1e-6), ([0.5, 0.1, 0.01, 1.0], 1e-3), ([0.02] * 1000, 1e-10)])
def test_advanced_pure_vs_mpmath(eps_list, delta):
    s2 = mp.fsum(mp.mpf(x) ** 2 for x in eps_list)
    ref = s2 / 2 + mp.sqrt(2 * mp.log(1 / mp.mpf(delta)) * s2)
    got = C.advanced_pure(eps_list, delta)
    assert rel(got, ref) < REL and got >= float(ref) * (1 - 1e-15)
    assert rel(C.advanced_pure(eps_list[0], delta, k=len(eps_list)), ref) < REL or len(set(eps_list)) > 1


def test_additive_accountants():
    np.testing.assert_allclose(C.rdp([[0.5, 1.0], [0.25, 0.5]], k=3), [2.25, 4.5], rtol=1e-14)
    assert C.zcdp([0.1, 0.2], k=2) == pytest.approx(0.6, rel=1e-14)
    assert C.gdp([0.3, 0.4], k=4) == pytest.approx(1.0, rel=1e-14)
    assert C.gdp(0.5, k=np.array([1, 4]))[1] == pytest.approx(1.0, rel=1e-14)
    # GDP composition equals the Gaussian's: √k/σ
    assert C.gdp(1 / 3.0, k=9) >= 1.0


# ------------------------------------------------------------------------------------------------
# optimal (KOV) against mpmath
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "e,k,delta", [(1.0, 10, 1e-6), (0.1, 20, 1e-3), (0.5, 7, 0.05), (0.05, 30, 1e-8), (2.0, 3, 0.3), (0.3, 1, 0.01)]
)
def test_optimal_vs_mpmath(e, k, delta):
    ref = mp_kov_eps(e, k, delta)
    got = C.optimal(e, k, delta)
    assert got >= float(ref)
    assert rel(got, ref) < REL


@pytest.mark.parametrize("eg,e,k", [(0.0, 1.0, 2), (0.5, 0.1, 25), (3.0, 0.5, 20), (1.0, 0.05, 30), (4.0, 1.0, 10)])
def test_optimal_log_delta_vs_mpmath(eg, e, k):
    ref = mp_kov_delta(eg, e, k)
    got = math.exp(C.optimal_log_delta(eg, e, k))
    assert got >= float(ref) and rel(got, ref) < REL


def test_optimal_log_delta_large_k_vs_mpmath():
    k, e, eg = 2000, 0.02, 2.0
    ref = mp.log(mp_kov_delta(eg, e, k))
    got = C.optimal_log_delta(eg, e, k)
    assert got >= float(ref) and abs(got - float(ref)) < 1e-9 * abs(float(ref)) + 1e-9


def test_optimal_with_delta_each_vs_mpmath():
    e, k, de, delta = 0.2, 15, 1e-7, 1e-4
    ref = mp_kov_eps(e, k, delta, de)
    got = C.optimal(e, k, delta, de)
    assert got >= float(ref) and rel(got, ref) < REL
    # δ_each too large for the target: impossible
    assert C.optimal(e, k, 1e-7, 1e-7) == np.inf


def test_optimal_vectorized_and_huge_k():
    es = np.linspace(0.01, 1.0, 7)
    ks = np.array([[1], [10], [100]])
    out = C.optimal(es, ks, 1e-6)
    assert out.shape == (3, 7)
    for i, k in enumerate(ks[:, 0]):
        for j, e in enumerate(es):
            assert out[i, j] == C.optimal(e, int(k), 1e-6)
    # k = 10⁶: finite, between the CLT limit (GDP of μ = 2Φ⁻¹-free approx) and advanced_pure
    big = C.optimal(0.001, 10**6, 1e-6)
    assert np.isfinite(big) and big <= C.advanced_pure(0.001, 1e-6, k=10**6)
    assert big > 0.8 * C.advanced_pure(0.001, 1e-6, k=10**6)


def test_optimal_edge_values():
    assert C.optimal(0.001, 1, 0.5) == 0.0  # δ(0) = tanh(ε/2) ≤ 0.5 already
    assert C.optimal(0.0, 10, 1e-6) == 0.0
    assert C.optimal(10.0, 5, 1e-6) <= 50.0
    ref = mp_kov_eps(1e-7, 50, 1e-9)
    got = C.optimal(1e-7, 50, 1e-9)
    assert got >= float(ref) and rel(got, ref) < 1e-8


def test_optimal_delta_zero_is_basic():
    assert C.optimal(0.3, 10, 0.0) == pytest.approx(3.0, rel=1e-11)
    assert C.optimal(0.3, 10, 0.0) >= 3.0


# ------------------------------------------------------------------------------------------------
# sandwiches and exact compositions
# ------------------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(e=st.floats(1e-3, 2.0), k=st.integers(1, 3000), logd=st.floats(-30, -1))
def test_sandwich_optimal_below_theorems(e, k, logd):
    d = math.exp(logd)
    opt = C.optimal(e, k, d)
    assert np.isfinite(opt) and opt >= 0
    assert opt <= k * e * (1 + 1e-12)
    assert opt <= C.advanced(e, 0.0, k, d)[0] * (1 + 1e-12)
    assert opt <= C.advanced_pure(e, d, k=k) * (1 + 1e-12)


@pytest.mark.parametrize("b,k", [(1.0, 10), (2.0, 50), (0.5, 3)])
def test_compose_laplace_below_optimal(b, k):
    prof = C.compose(Laplace(b), k)  # capped by KOV by construction; the raw PLD must be too
    for d in (1e-2, 1e-6, 1e-10):
        assert prof.pld.epsilon(d) <= C.optimal(1.0 / b, k, d) * (1 + 1e-9)
        assert prof.epsilon(d) == min(prof.pld.epsilon(d), C.optimal(1.0 / b, k, d))
    eps = np.linspace(0, k / b, 25)
    assert np.all(prof.delta(eps) <= C.OptimalProfile(1.0 / b, k).delta(eps) * (1 + 1e-6) + 1e-15)


@pytest.mark.parametrize("e,k", [(0.5, 20), (1.0, 7), (0.05, 400)])
def test_compose_rr_is_optimal_profile(e, k):
    prof = C.compose(RandomizedResponse(e), k)
    ref = C.OptimalProfile(e, k)
    eps = np.linspace(0, k * e, 30)
    np.testing.assert_array_equal(prof.delta(eps), ref.delta(eps))
    assert prof.epsilon(1e-6) == C.optimal(e, k, 1e-6)
    assert C.compose(Exponential(e), k).epsilon(1e-6) == prof.epsilon(1e-6)


@pytest.mark.parametrize("sigma,sens,k", [(1.0, 1.0, 10), (5.0, 2.0, 100), (0.7, 1.0, 3)])
def test_compose_gaussian_exact_gdp(sigma, sens, k):
    prof = C.compose(Gaussian(sigma, sens), k)
    mu = mp.sqrt(k) * sens / sigma
    for eps in (0.0, 0.5, 2.0, 7.0):
        e = mp.mpf(eps)
        ref = mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2)
        assert rel(prof.delta(eps), ref) < 1e-9


def test_compose_k1_is_mechanism_profile():
    m = Laplace(0.7)
    assert C.compose(m, 1).delta(0.3) == m.delta(0.3)


def test_pld_gaussian_never_below_exact():
    # the PLD machinery on a mechanism with a closed form: pessimistic and close
    for k in (1, 10, 100):
        d = pld.composed_pld(Gaussian(2.0), k)
        exact = GaussianDPProfile(math.sqrt(k) / 2.0)
        eps = np.linspace(0, 3 * math.sqrt(k), 20)
        ours, ref = d.delta(eps), exact.delta(eps)
        assert np.all(ours >= ref)
        big = ref > 1e-12
        assert np.all(ours[big] <= ref[big] * 1.001)
        for delta in (1e-3, 1e-8):
            assert 0 <= d.epsilon(delta) - exact.epsilon(delta) < 2e-4 * exact.epsilon(delta)


def test_pld_single_laplace_matches_closed_form():
    d = pld.composed_pld(Laplace(1.0), 1)
    eps = np.linspace(0, 1, 11)
    ref = np.maximum(0, 1 - np.exp((eps - 1) / 2))
    assert np.all(d.delta(eps) >= ref)
    np.testing.assert_allclose(d.delta(eps), ref, atol=1e-8)


@pytest.mark.parametrize("mech", [Logistic(1.0), Subbotin(1.0, 1.5), Laplace(0.5, 2.0)])
def test_pld_single_matches_mechanism(mech):
    d = pld.composed_pld(mech, 1)
    eps = np.linspace(0, 3, 13)
    ours, ref = d.delta(eps), mech.delta(eps)
    assert np.all(ours >= ref * (1 - 1e-12))
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-9)


@pytest.mark.parametrize("mech,k", [(Laplace(0.3), 500), (Gaussian(1.0), 100), (Logistic(0.5), 40)])
def test_discrete_pld_delta_and_epsilon_exact_for_the_discrete_law(mech, k):
    """δ̂(ε) is the hockey-stick formula of the discrete law (fsum), raised by exactly 1e-9
    relative; ε̂(δ) inverts it (ε > 745 included, where e^{−ε} underflows)."""
    d = pld.composed_pld(mech, k)
    for e in np.maximum(np.quantile(d.losses, [0.3, 0.6, 0.8, 0.95]), 0.0):
        m = d.losses > e
        brute = math.fsum(d.pmf[m] * -np.expm1(e - d.losses[m]))
        ref = brute * (1 + 1e-9) + d.inf_mass + d.extra
        assert d.delta(e) == pytest.approx(ref, rel=1e-11)
    for delta in (1e-3, 1e-6, 1e-10):
        e = d.epsilon(delta)
        assert d.delta(e) <= delta and d.delta(e - 1e-7 * e) > delta


@pytest.mark.parametrize("b,k", [(0.06798435448412177, 100), (0.5009130066684768, 10), (1.0798408271867903, 3)])
def test_pld_top_atom_not_sent_to_infinity(b, k):
    # regression: eps_max = m·h up to an ulp used to put Laplace's atom at eps_max at +∞
    d = pld.composed_pld(Laplace(b), k)
    assert d.inf_mass == 0.0
    assert d.epsilon(1e-6) <= C.optimal(1 / b, k, 1e-6) * (1 + 1e-9)


def test_default_grid_size():
    assert pld.default_grid_size(1) == 4096 and pld.default_grid_size(10**4) == 65536
    assert pld.default_grid_size(10**6) == 2**18
    assert all(pld.default_grid_size(k) <= pld.default_grid_size(k + 1) for k in range(1, 200))


def test_compose_monotone_in_k():
    eps_k = [C.compose(Laplace(1.0), k).epsilon(1e-6) for k in (1, 2, 5, 20, 100, 400)]
    assert all(a < b for a, b in zip(eps_k, eps_k[1:]))
    opt = C.optimal(0.3, np.arange(1, 200), 1e-6)
    assert np.all(np.diff(opt) >= 0)


def test_compose_logistic_and_subbotin_sane():
    for mech in (Logistic(1.0), Subbotin(1.0, 1.5)):
        p = C.compose(mech, 50)
        e = p.epsilon(1e-6)
        assert 0 < e < 50 * 1.0 + 1e-9 or not np.isfinite(mech.eps_max)
        assert p.delta(e) <= 1e-6 * (1 + 1e-9)
        d = p.delta(np.linspace(0, 100, 50))
        assert np.all(np.isfinite(d)) and np.all((d >= 0) & (d <= 1)) and np.all(np.diff(d) <= 1e-15)


def test_profile_epsilon_is_consistent_with_delta():
    p = C.compose(Laplace(1.0), 200)
    deltas = np.array([1e-1, 1e-3, 1e-6, 1e-9, 1e-12])
    eps = p.epsilon(deltas)
    assert np.all(p.delta(eps) <= deltas)
    assert np.all(p.delta(eps * (1 - 1e-6)) > deltas)  # and it is the smallest such ε (up to 1e-6)


# ------------------------------------------------------------------------------------------------
# dp_accounting cross-checks
# ------------------------------------------------------------------------------------------------
dpa = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")


def _dpa_eps(make, k, delta):
    pess = make(True).self_compose(k).get_epsilon_for_delta(delta)
    opt = make(False).self_compose(k).get_epsilon_for_delta(delta)
    return pess, opt


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("b,k,delta", [(1.0, 10, 1e-6), (2.0, 40, 1e-4), (1.0, 30, 1e-9)])
def test_laplace_vs_dp_accounting(b, k, delta):
    def make(pess):
        return dpa.from_laplace_mechanism(
            b, sensitivity=1.0, pessimistic_estimate=pess, value_discretization_interval=1e-3
        )

    pess, opt = _dpa_eps(make, k, delta)
    ours = C.compose(Laplace(b), k).epsilon(delta)
    assert ours >= opt
    assert rel(ours, pess) < 5e-3


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("sigma,k,delta", [(2.0, 10, 1e-6), (10.0, 50, 1e-5)])
def test_gaussian_vs_dp_accounting(sigma, k, delta):
    def make(pess):
        return dpa.from_gaussian_mechanism(
            sigma, sensitivity=1.0, pessimistic_estimate=pess, value_discretization_interval=1e-3
        )

    pess, opt = _dpa_eps(make, k, delta)
    ours = C.compose(Gaussian(sigma), k).epsilon(delta)
    assert ours >= opt
    assert rel(ours, pess) < 5e-3


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("e,k,delta", [(0.5, 20, 1e-6), (1.0, 8, 1e-3)])
def test_rr_vs_dp_accounting(e, k, delta):
    p = 2.0 / (1.0 + math.exp(e))  # dp_accounting: keep w.p. 1 − p, else uniform over 2 buckets

    def make(pess):
        return dpa.from_randomized_response(p, 2, pessimistic_estimate=pess, value_discretization_interval=1e-4)

    pess, opt = _dpa_eps(make, k, delta)
    ours = C.compose(RandomizedResponse(e), k).epsilon(delta)
    assert ours >= opt * (1 - 1e-9)
    assert rel(ours, pess) < 5e-3


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
def test_laplace_large_eps_vs_dp_accounting_in_delta_space():
    # ε ≈ 1338 > 745: compare δ (dp_accounting's ε search snaps to its grid there)
    ref = dpa.from_laplace_mechanism(0.3, sensitivity=1.0, value_discretization_interval=1e-3)
    refc = ref.self_compose(500)
    prof = C.compose(Laplace(0.3), 500)
    for eps in (1300.0, 1338.39, 1360.0):
        ours, theirs = prof.delta(eps), refc.get_delta_for_epsilon(eps)
        assert rel(ours, theirs) < 5e-2
    assert prof.epsilon(1e-6) <= refc.get_epsilon_for_delta(1e-6)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")
def test_laplace_k1000_vs_dp_accounting():
    ref = dpa.from_laplace_mechanism(1.0, sensitivity=1.0, value_discretization_interval=1e-3)
    pess = ref.self_compose(1000).get_epsilon_for_delta(1e-6)
    pld.clear_caches()
    ours = C.compose(Laplace(1.0), 1000).epsilon(1e-6)
    assert rel(ours, pess) < 2e-3
    assert ours >= 0.999 * pess


# ------------------------------------------------------------------------------------------------
# per-step budgets
# ------------------------------------------------------------------------------------------------
def _compose_total(theorem, eps, delta, k):
    """ε_total of k ε-DP steps under ``theorem`` at total δ (the forward direction)."""
    if theorem == "basic":
        return k * eps
    if theorem == "advanced":
        return C.advanced(eps, 0.0, k, delta)[0]
    if theorem == "advanced_pure":
        return C.advanced_pure(eps, delta, k=k)
    if theorem == "optimal":
        return C.optimal(eps, k, delta)
    rho = k * eps * math.tanh(eps / 2)
    return rho + 2 * math.sqrt(rho * math.log(1 / delta))


@settings(max_examples=50, deadline=None)
@given(E=st.floats(0.05, 10.0), logd=st.floats(-25, -2), k=st.integers(1, 5000), theorem=st.sampled_from(C.THEOREMS))
def test_per_step_budget_round_trip(E, logd, k, theorem):
    d = math.exp(logd)
    eps = C.per_step_budget(E, d, k, theorem)
    assert np.isfinite(eps) and eps > 0
    assert _compose_total(theorem, eps, d, k) <= E * (1 + 2e-12)  # optimal() rounds up by 1e-12
    # nearly tight: 1e-6 more per step would exceed (or meet) the total
    assert _compose_total(theorem, eps * (1 + 1e-6), d, k) >= E * (1 - 1e-12)


def test_per_step_budget_vectorized_over_k_and_ordered():
    ks = np.unique(np.round(np.logspace(0, 4, 30)).astype(int))
    out = {t: C.per_step_budget(1.0, 1e-6, ks, t) for t in C.THEOREMS}
    for t, v in out.items():
        assert v.shape == ks.shape and np.all(np.diff(v) <= 0), t
    assert np.all(out["optimal"] >= out["basic"])
    assert np.all(out["optimal"] >= out["advanced_pure"] * (1 - 1e-12))
    # per-step for the total (1, 1e-6) at k = 100 equals the brute-force KOV inverse
    e = out["optimal"][np.searchsorted(ks, 100)]
    assert C.optimal(e, 100, 1e-6) <= 1.0


@settings(max_examples=60, deadline=None)
@given(
    E=st.floats(1e-6, 50.0),
    logd=st.floats(-700, -0.7),
    k=st.integers(1, 10**9),
    sens=st.sampled_from([1e-3, 1.0, 7.0]),
)
def test_per_step_laplace_scale_is_steinkes_rule_and_composes_back(E, logd, k, sens):
    """b = Δ√(k/(2ρ)), ρ = ε²/(4 log(1/δ) + 4ε) (Steinke 2022, footnote 2), against mpmath; never
    below it, and k Laplace(b) steps (each (Δ/b)²/2-zCDP) convert back to at most ε_T."""
    d = math.exp(logd)
    b = C.per_step_laplace_scale(E, d, k, sens)
    with mp.workdps(40):
        rho = mp.mpf(E) ** 2 / (4 * mp.log(1 / mp.mpf(d)) + 4 * mp.mpf(E))
        want = mp.mpf(sens) * mp.sqrt(mp.mpf(k) / (2 * rho))
        assert b >= want * (1 - 1e-15) and b <= want * (1 + 1e-13)
        rho_k = k * (mp.mpf(sens) / mp.mpf(b)) ** 2 / 2
        assert rho_k + 2 * mp.sqrt(rho_k * mp.log(1 / mp.mpf(d))) <= mp.mpf(E)


def test_per_step_laplace_scale_vectorised_edges_and_errors():
    ks = np.array([1, 10, 100, 10**6])
    b = C.per_step_laplace_scale(1.0, 1e-6, ks)
    assert b.shape == ks.shape and np.allclose(b[1:] / b[:-1], np.sqrt(ks[1:] / ks[:-1]), rtol=1e-14)
    # √k against basic composition's k: the rule wins once k is large
    assert b[-1] < 10**6 / 1.0
    assert C.per_step_laplace_scale(1.0, 0.0, 10) == np.inf and C.per_step_laplace_scale(0.0, 1e-6, 10) == np.inf
    for bad, name in (((-1.0, 1e-6, 3), "total_eps"), ((1.0, 1.5, 3), "total_delta"), ((1.0, 1e-6, 0), "k")):
        with pytest.raises(ValueError, match=name):
            C.per_step_laplace_scale(*bad)
    with pytest.raises(ValueError, match="sensitivity"):
        C.per_step_laplace_scale(1.0, 1e-6, 3, 0.0)


@settings(max_examples=40, deadline=None)
@given(
    E=st.floats(1e-3, 20.0),
    logd=st.floats(-60, -0.7),
    k=st.integers(1, 10**5),
    sens=st.sampled_from([1e-3, 1.0, 7.0]),
    theorem=st.sampled_from(C.THEOREMS),
)
def test_per_step_laplace_scale_of_a_theorem_is_sensitivity_over_the_budget(E, logd, k, sens, theorem):
    """b = Δ/ε_step, ε_step = per_step_budget (never below, within 1e-14), and against closed forms
    at 40 digits where there is one: basic kΔ/ε_T; advanced from pure DP, ε_step = 2ε_T/(√k(√(2L) +
    √(2L + 2ε_T))); the scale is never below them (ε_step is rounded down)."""
    d = math.exp(logd)
    b = C.per_step_laplace_scale(E, d, k, sens, theorem=theorem)
    step = C.per_step_budget(E, d, k, theorem)
    assert b >= sens / step and b <= sens / step * (1 + 1e-14)
    with mp.workdps(40):
        L = -mp.mpf(logd)
        exact = {
            "basic": k / mp.mpf(E),
            "advanced_pure": mp.sqrt(k) * (mp.sqrt(2 * L) + mp.sqrt(2 * L + 2 * mp.mpf(E))) / (2 * mp.mpf(E)),
        }.get(theorem)
        if exact is not None:
            want = mp.mpf(sens) * exact
            assert b >= want and b <= want * (1 + 1e-13)


def test_per_step_laplace_scale_theorem_default_edges_and_errors():
    # the default is Steinke's rule (unchanged), "steinke" spelled out gives the same value
    assert C.per_step_laplace_scale(1.0, 1e-6, 100) == C.per_step_laplace_scale(1.0, 1e-6, 100, theorem="steinke")
    ks = np.array([1, 10, 100])
    b = C.per_step_laplace_scale(2.0, 1e-6, ks, 3.0, theorem="basic")
    assert b.shape == (3,) and np.all(b >= 3.0 * ks / 2.0) and np.allclose(b, 1.5 * ks, rtol=1e-14)
    assert C.per_step_laplace_scale(1.0, 0.0, 10, theorem="advanced") == np.inf  # no budget at δ = 0
    assert C.per_step_laplace_scale(0.0, 1e-6, 10, theorem="basic") == np.inf
    for bad in ("", "Basic", None, 1):
        with pytest.raises(ValueError, match="theorem"):
            C.per_step_laplace_scale(1.0, 1e-6, 3, theorem=bad)


@settings(max_examples=80, deadline=None)
@given(
    logd=st.floats(-40, -1.0),
    logdt=st.floats(-40, -0.7),
    k=st.integers(1, 10**6),
)
def test_delta_slack_never_overspends_in_exact_arithmetic(logd, logdt, k):
    """kδ + δ_s ≤ δ′ for the exact rationals of the floats (fractions), and δ_s is within
    a relative 1e-14 of δ′ − kδ when that is not a cancellation."""
    from fractions import Fraction

    d, dt = math.exp(logd), math.exp(logdt)
    s = C.delta_slack(d, dt, k)
    exact = Fraction(dt) - k * Fraction(d)
    if exact <= 0:
        assert s == 0.0
        return
    assert 0.0 <= s and Fraction(s) <= exact
    if exact > Fraction(dt) / 2:
        assert float(exact - Fraction(s)) <= 1e-14 * float(exact)


def test_delta_slack_values_and_errors():
    assert C.delta_slack(0.0, 1e-6, 10) == pytest.approx(1e-6 * (1 - 1e-15), rel=1e-16)
    assert C.delta_slack(0.0, 1e-6, 10) < 1e-6
    s = C.delta_slack(1e-8, 1e-6, np.array([1, 50, 100, 200]))
    assert s.shape == (4,) and s[2] == 0.0 and s[3] == 0.0 and s[1] == pytest.approx(5e-7, rel=1e-14)
    for bad, name in (((-1e-8, 1e-6, 3), "delta"), ((1e-8, 1.5, 3), "delta_total"), ((1e-8, 1e-6, 0), "k")):
        with pytest.raises(ValueError, match=name):
            C.delta_slack(*bad)


def test_basic_with_k_is_k_times_one_step():
    e, d = C.basic(0.1, 1e-8, k=np.array([1, 100, 10**12]))
    np.testing.assert_array_equal(e, [0.1, 10.0, 1e11])
    np.testing.assert_array_equal(d, [1e-8, 1e-6, 1.0])  # capped at 1
    assert C.basic(0.0, 0.0, k=5) == (0.0, 0.0)
    # the same total as k listed mechanisms, up to the sum's rounding
    assert C.basic(0.3, 1e-9, k=7)[0] == pytest.approx(C.basic([0.3] * 7)[0], rel=1e-15)
    with pytest.raises(ValueError, match="k"):
        C.basic(0.1, 0.0, k=0)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 10**7), batch=st.integers(1, 10**7), epochs=st.integers(1, 1000))
def test_dpsgd_steps_exact_rationals(n, batch, epochs):
    """q = min(1, B/N) (the nearest float) and T = ⌈E·N/B⌉ in exact integers (E/q within 1e-9 of an
    integer is that integer: the tolerance only absorbs the float division)."""
    from fractions import Fraction

    q, t = C.dpsgd_steps(n, batch, epochs)
    assert q == (1.0 if batch >= n else batch / n)
    exact = Fraction(epochs) / min(Fraction(1), Fraction(batch, n))
    want = math.ceil(exact)
    if exact - math.floor(exact) > Fraction(1, 10**6):  # not within rounding of an integer
        assert t == want
    else:
        assert t in (math.floor(exact), want) and t >= 1
    assert isinstance(t, int) and isinstance(q, float)


def test_dpsgd_steps_values_vectorised_and_errors():
    assert C.dpsgd_steps(100_000, 1000, 10) == (0.01, 1000)
    assert C.dpsgd_steps(60_000, 256, 1) == (256 / 60_000, 235)  # ⌈234.375⌉
    assert C.dpsgd_steps(1000, 4096, 3) == (1.0, 3)
    q, t = C.dpsgd_steps(np.array([1000, 100_000]), 100, np.array([[1], [2]]))
    assert q.shape == t.shape == (2, 2) and t.tolist() == [[10, 1000], [20, 2000]] and t.dtype == np.int64
    for args, name in (
        ((0, 10, 1), "n"),
        ((10, 0, 1), "batch"),
        ((10, 2.5, 1), "batch"),
        ((10, 1, 0), "epochs"),
        ((10**9, 1, 1e10), "epochs"),
    ):
        with pytest.raises(ValueError, match=name):
            C.dpsgd_steps(*args)


def test_per_step_budget_delta_zero():
    assert C.per_step_budget(1.0, 0.0, 10, "basic") <= 0.1
    assert C.per_step_budget(1.0, 0.0, 10, "optimal") == pytest.approx(0.1, rel=1e-12)
    assert C.per_step_budget(1.0, 0.0, 10, "advanced") == 0.0


# ------------------------------------------------------------------------------------------------
# properties
# ------------------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(e=st.floats(0.0, 3.0), k=st.integers(1, 500), eg=st.floats(0.0, 100.0))
def test_optimal_log_delta_valid(e, k, eg):
    ld = C.optimal_log_delta(eg, e, k)
    assert not np.isnan(ld) and ld <= 0.0
    assert C.optimal_log_delta(eg + 0.1, e, k) <= ld


@settings(max_examples=20, deadline=None)
@given(b=st.floats(0.2, 5.0), k=st.integers(2, 300))
def test_compose_laplace_profile_valid(b, k):
    p = C.compose(Laplace(b), k)
    eps = np.linspace(0, k / b * 1.1, 40)
    d = p.delta(eps)
    assert not np.isnan(d).any() and np.all((d >= 0) & (d <= 1))
    assert np.all(np.diff(d) <= 1e-15)
    e6 = p.epsilon(1e-6)
    assert 0 <= e6 <= k / b + 1e-9 and p.delta(e6) <= 1e-6


# ------------------------------------------------------------------------------------------------
# invalid inputs
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: C.optimal(0.1, 0, 1e-6), "k"),
        (lambda: C.optimal(0.1, 2.5, 1e-6), "k"),
        (lambda: C.optimal(float("nan"), 10, 1e-6), "eps"),
        (lambda: C.optimal(-0.1, 10, 1e-6), "eps"),
        (lambda: C.optimal(0.1, 10, 1.0), "delta"),
        (lambda: C.optimal(0.1, 10, -1e-3), "delta"),
        (lambda: C.optimal(0.1, 10, 1e-6, delta_each=1.5), "delta_each"),
        (lambda: C.advanced(0.1, 0.0, 0, 1e-6), "k"),
        (lambda: C.advanced(-1.0, 0.0, 3, 1e-6), "eps"),
        (lambda: C.advanced(0.1, 0.0, 3, 1.0), "delta_slack"),
        (lambda: C.advanced_pure([0.1, float("nan")], 1e-6), "epsilons"),
        (lambda: C.advanced_pure(0.1, 2.0, k=3), "delta"),
        (lambda: C.basic([0.1, -0.2]), "epsilons"),
        (lambda: C.basic([0.1], [1.0]), "deltas"),
        (lambda: C.rdp([[0.1, -1.0]]), "rdp_curves"),
        (lambda: C.zcdp(0.1, k=0), "k"),
        (lambda: C.gdp(float("nan")), "mus"),
        (lambda: C.compose(Laplace(1.0), 0), "k"),
        (lambda: C.compose(Laplace(1.0), 2.5), "k"),
        (lambda: C.compose(Laplace(np.array([1.0, 2.0])), 3), "mechanism"),
        (lambda: C.compose("laplace", 3), "mechanism"),
        (lambda: C.compose(Laplace(1.0), 10).epsilon(1.0), "delta"),
        (lambda: C.compose(Laplace(1.0), 10).delta(-1.0), "eps"),
        (lambda: C.per_step_budget(1.0, 1e-6, 10, "fancy"), "theorem"),
        (lambda: C.per_step_budget(-1.0, 1e-6, 10, "basic"), "total_eps"),
        (lambda: C.per_step_budget(1.0, 1.0, 10, "basic"), "total_delta"),
        (lambda: C.per_step_budget(1.0, 1e-6, 0, "basic"), "k"),
        (lambda: C.per_step_budget(1.0, float("nan"), 3, "optimal"), "total_delta"),
        (lambda: pld.composed_pld(Laplace(1.0), 3, grid_size=10), "grid_size"),
    ],
)
def test_invalid_inputs(call, name):
    with pytest.raises(ValueError, match=name):
        call()
