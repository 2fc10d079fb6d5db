"""Tests for dpexplore.accounting.risk (re-exported by dpexplore.accounting.conversions): attack TPR at a given FPR,
advantage and posterior bound of a privacy profile — mpmath references (50 digits) for the μ-GDP,
pure-DP, (ε, δ)-DP and Laplace trade-offs, the numerical path against them (never below, within a
stated tolerance), hypothesis properties, a dp_accounting cross-check and invalid inputs."""

from __future__ import annotations

import re
import subprocess
import sys

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from dpexplore import mechanisms
from dpexplore.accounting import conversions, risk
from dpexplore.accounting.conversions import (
    ApproxDPProfile,
    PureDPProfile,
    ZCDPProfile,
    advantage,
    gdp_log_delta,
    posterior_bound,
    tpr_at_fpr,
)
from dpexplore.accounting.profiles import FunctionProfile, GaussianDPProfile

mp.mp.dps = 50
SETTINGS = settings(max_examples=30, deadline=None)
#: the documented bound on how far above the exact value a numerical-path TPR may be
GENERIC_REL = 2e-12
#: closed forms: μ-GDP is rounded up by a relative 2e-12 (its evaluation error is ≲ 9e-13),
#: the others by 1e-14
GDP_REL = 3e-12
CLOSED_REL = 1e-13
#: a few subnormal ulps (results below ~1e-307 are nudged up by 4 of them)
TINY = 1e-322


# ------------------------------------------------------------------------------------------------
# mpmath references
# ------------------------------------------------------------------------------------------------
def mp_ndtri(a):
    """Φ⁻¹(a) at 50 digits (a a float in (0, 1): its exact binary value)."""
    a = mp.mpf(a)
    if a > 0.5:
        return -mp_ndtri(1 - a)
    x0 = mp.mpf(float(special.ndtri(float(a))))
    return mp.findroot(lambda x: mp.log(mp.ncdf(x)) - mp.log(a), x0)


def mp_gdp_tpr(mu, a):
    """Φ(Φ⁻¹(α) + μ) (Dong, Roth & Su 2022, definition “μ-GDP”: TPR = 1 − G_μ(α))."""
    if a == 0 or a == 1:
        return mp.mpf(a)
    return mp.ncdf(mp_ndtri(a) + mp.mpf(mu))


def mp_approx_tpr(eps, delta, a):
    """min(1, δ + e^ε α, 1 − e^{−ε}(1 − δ − α)) (Dong, Roth & Su 2022, Proposition 2.5)."""
    e, d, a = mp.mpf(eps), mp.mpf(delta), mp.mpf(a)
    # 1 − e^{−ε}(1 − δ − α) written without cancellation (tiny ε, δ, α)
    return min(mp.mpf(1), d + mp.exp(e) * a, -mp.expm1(-e) + mp.exp(-e) * (d + a))


def mp_laplace_tpr(eps, a):
    """Neyman–Pearson TPR of Lap(0, b) vs Lap(Δ, b), ε = Δ/b (the likelihood ratio is monotone):
    e^ε α for α ≤ e^{−ε}/2, 1 − e^{−ε}/(4α) up to α = 1/2, 1 − e^{−ε}(1 − α) beyond."""
    e, a = mp.mpf(eps), mp.mpf(a)
    if a <= mp.exp(-e) / 2:
        return mp.exp(e) * a
    if a <= mp.mpf(0.5):
        return 1 - mp.exp(-e) / (4 * a)
    return 1 - mp.exp(-e) * (1 - a)


def assert_safe_and_close(got, ref, rel):
    """got ≥ ref (the safe side) and got ≤ ref (1 + rel) + a few subnormal ulps."""
    ref = mp.mpf(ref)
    assert mp.mpf(got) >= ref, (got, ref)
    assert mp.mpf(got) <= ref * (1 + mp.mpf(rel)) + mp.mpf(TINY), (got, ref)


ALPHAS = [0.0, 5e-324, 1e-310, 1e-300, 1e-100, 1e-20, 1e-9, 1e-5, 1e-3, 0.01, 0.05, 0.2, 0.5, 0.8, 0.99, 1 - 1e-9, 1.0]


# ------------------------------------------------------------------------------------------------
# closed forms against mpmath
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mu", [1e-6, 0.01, 0.5, 1.0, 3.0, 10.0, 38.0])
def test_gdp_tpr_matches_mpmath(mu):
    got = tpr_at_fpr(GaussianDPProfile(mu), np.array(ALPHAS))
    for a, g in zip(ALPHAS, got):
        assert_safe_and_close(g, mp_gdp_tpr(mu, a), GDP_REL)


@given(mu=st.floats(1e-3, 40.0), log_a=st.floats(-320.0, 0.0))
@SETTINGS
def test_gdp_tpr_matches_mpmath_hypothesis(mu, log_a):
    a = 10.0**log_a
    assert_safe_and_close(tpr_at_fpr(GaussianDPProfile(mu), a), mp_gdp_tpr(mu, a), GDP_REL)


def test_gdp_tpr_is_one_minus_tradeoff_gdp():
    a = np.linspace(0.0, 1.0, 101)
    got = tpr_at_fpr(GaussianDPProfile(1.3), a)
    # tradeoff_gdp is rounded down by a relative 1e-14 (β), tpr_at_fpr up by 1e-12 (TPR)
    ref = 1.0 - conversions.tradeoff_gdp(1.3, a)
    assert np.all(got >= ref - 2e-14) and np.all(got <= ref * (1 + 3e-12) + 2e-14)
    assert tpr_at_fpr(GaussianDPProfile(1.0), 0.05) == pytest.approx(0.2595110228, abs=1e-10)


@pytest.mark.parametrize("eps", [0.0, 1e-8, 0.1, 1.0, 3.0, 20.0, 700.0])
def test_pure_dp_tpr_matches_mpmath(eps):
    got = tpr_at_fpr(PureDPProfile(eps), np.array(ALPHAS))
    for a, g in zip(ALPHAS, got):
        assert_safe_and_close(g, mp_approx_tpr(eps, 0.0, a), CLOSED_REL)


@given(eps=st.floats(0.0, 50.0), delta=st.floats(0.0, 0.5), log_a=st.floats(-320.0, 0.0))
@SETTINGS
def test_approx_dp_tpr_matches_mpmath(eps, delta, log_a):
    a = 10.0**log_a
    ref = mp_approx_tpr(eps, delta, a)
    assert_safe_and_close(tpr_at_fpr(ApproxDPProfile(eps, delta), a), ref, CLOSED_REL)


def test_randomized_response_and_exponential_use_the_pure_closed_form():
    a = np.array(ALPHAS)
    ref = tpr_at_fpr(PureDPProfile(1.5), a)
    for obj in (mechanisms.RandomizedResponse(1.5), mechanisms.Exponential(1.5).profile):
        assert risk._classify(obj) == ("approx", 1.5, 0.0)
        np.testing.assert_array_equal(tpr_at_fpr(obj, a), ref)
    assert tpr_at_fpr(PureDPProfile(1.0), 0.1) == pytest.approx(np.e * 0.1, rel=1e-13)


@pytest.mark.parametrize("mu", [1e-8, 0.1, 1.0, 5.0, 40.0])
def test_gdp_advantage_matches_mpmath(mu):
    ref = 2 * mp.ncdf(mp.mpf(mu) / 2) - 1
    got = advantage(GaussianDPProfile(mu))
    assert mp.mpf(got) >= ref and got <= ref * (1 + mp.mpf(1e-13)) + mp.mpf(1e-300)


@pytest.mark.parametrize("eps0, delta0", [(0.0, 0.0), (1e-6, 0.0), (1.0, 0.0), (2.0, 1e-5), (30.0, 0.1)])
def test_approx_advantage_matches_mpmath(eps0, delta0):
    ref = mp.mpf(delta0) + (1 - mp.mpf(delta0)) * mp.tanh(mp.mpf(eps0) / 2)
    got = advantage(ApproxDPProfile(eps0, delta0))
    assert mp.mpf(got) >= ref and mp.mpf(got) <= ref * (1 + mp.mpf(1e-14)) + mp.mpf(1e-300)


@pytest.mark.parametrize("prior", [1e-9, 0.01, 0.5, 0.9, 1 - 1e-9])
@pytest.mark.parametrize("eps", [0.0, 0.5, 1.0, 5.0, 800.0])
def test_pure_posterior_matches_mpmath(eps, prior):
    p, e = mp.mpf(prior), mp.mpf(eps)
    ref = p * mp.exp(e) / (p * mp.exp(e) + 1 - p)
    got = posterior_bound(PureDPProfile(eps), prior)
    assert mp.mpf(got) >= ref and mp.mpf(got) <= ref * (1 + mp.mpf(2e-13))
    # restricting to FPR ≥ a changes nothing while e^ε a ≤ 1 (the ratio TPR/FPR is e^ε there)
    if eps <= 5.0:
        assert posterior_bound(PureDPProfile(eps), prior, fpr=1e-4) == pytest.approx(got, rel=1e-12)


@pytest.mark.parametrize("prior", [5e-324, 1e-320, 1e-305, 1e-300, 1e-200])
@pytest.mark.parametrize("eps", [10.0, 720.0])
def test_posterior_with_subnormal_prior_is_still_safe(eps, prior):
    """(1 − π)/π overflows for π < 5.6e-309: that range is evaluated in log space."""
    p, e = mp.mpf(prior), mp.mpf(eps)
    ref = p * mp.exp(e) / (p * mp.exp(e) + 1 - p)
    got = posterior_bound(PureDPProfile(eps), prior)
    assert mp.mpf(got) >= ref and mp.mpf(got) <= ref * (1 + mp.mpf(2e-12)) + mp.mpf(TINY)


@pytest.mark.parametrize(
    "mu, prior, a", [(0.5, 0.5, 1e-3), (1.0, 0.01, 0.01), (2.0, 0.3, 1e-6), (1.0, 0.5, 1e-300), (6.0, 0.9, 0.2)]
)
def test_gdp_posterior_with_fpr_matches_mpmath(mu, prior, a):
    t = mp_gdp_tpr(mu, a)
    p = mp.mpf(prior)
    ref = p * t / (p * t + (1 - p) * mp.mpf(a))
    got = posterior_bound(GaussianDPProfile(mu), prior, fpr=a)
    assert mp.mpf(got) >= ref and mp.mpf(got) <= ref * (1 + mp.mpf(3e-12))


def test_posterior_unbounded_loss_is_one_and_bounded_loss_is_finite():
    for prof in (GaussianDPProfile(0.1), mechanisms.Gaussian(5.0), ApproxDPProfile(1.0, 1e-9)):
        assert posterior_bound(prof, 0.2) == 1.0
        assert posterior_bound(prof, 0.2, fpr=0.0) == 1.0
    # Laplace (ε = Δ/b = 2 at most) and a function profile whose δ reaches 0 at ε = 2
    ref = 0.2 * np.exp(2.0) / (0.2 * np.exp(2.0) + 0.8)
    lap = posterior_bound(mechanisms.Laplace(0.5), 0.2)
    toy = posterior_bound(FunctionProfile(lambda e: np.log(np.clip(1 - e / 2, 0, 1))), 0.2)
    for got in (lap, toy):
        assert got >= ref and got == pytest.approx(ref, rel=1e-12)


# ------------------------------------------------------------------------------------------------
# the numerical path
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sigma", [100.0, 3.0, 1.0, 0.25, 0.05])
def test_generic_path_on_the_gaussian_mechanism_is_safe_and_close(sigma):
    prof = mechanisms.Gaussian(sigma).profile
    assert type(prof).__name__ == "MechanismProfile" and not isinstance(prof, GaussianDPProfile)
    assert risk._classify(prof)[0] == "generic"
    got = tpr_at_fpr(prof, np.array(ALPHAS))
    for a, g in zip(ALPHAS, got):
        assert_safe_and_close(g, mp_gdp_tpr(1.0 / sigma, a), GENERIC_REL)


@given(mu=st.floats(0.01, 20.0), log_a=st.floats(-300.0, 0.0))
@SETTINGS
def test_generic_path_on_a_function_gdp_profile_hypothesis(mu, log_a):
    """A μ-GDP profile that is not a GaussianDPProfile (a plain function of ε)."""
    a = 10.0**log_a
    prof = FunctionProfile(lambda e: gdp_log_delta(mu, e))
    assert_safe_and_close(tpr_at_fpr(prof, a), mp_gdp_tpr(mu, a), GENERIC_REL)


@pytest.mark.parametrize("b", [0.05, 0.5, 1.0, 4.0])
def test_generic_path_on_laplace_matches_its_exact_tradeoff(b):
    eps = 1.0 / b
    got = tpr_at_fpr(mechanisms.Laplace(b), np.array(ALPHAS))
    for a, g in zip(ALPHAS, got):
        assert_safe_and_close(g, mp_laplace_tpr(eps, a), GENERIC_REL)
    # and 1 − the mechanism's own trade-off (rounded the safe way by 8 ulps, ~2e-15 absolute)
    grid = np.linspace(0.0, 1.0, 201)
    got = tpr_at_fpr(mechanisms.Laplace(b), grid)
    ref = 1.0 - mechanisms.Laplace(b).tradeoff(grid)
    assert np.all(got >= ref - 4e-15) and np.all(got <= ref * (1 + 1.1e-12) + 4e-15)
    assert np.all(np.diff(got) >= 0)


@pytest.mark.parametrize("eps0, delta0", [(1.0, 0.0), (2.0, 1e-6), (0.1, 0.01)])
def test_generic_path_on_a_kinked_function_profile(eps0, delta0):
    """(ε₀, δ₀)-DP given as a plain function: the minimum sits at a kink (piecewise-linear in t)."""
    ap = ApproxDPProfile(eps0, delta0)
    prof = FunctionProfile(lambda e: np.asarray(ap.log_delta(e)))
    got = tpr_at_fpr(prof, np.array(ALPHAS))
    for a, g in zip(ALPHAS, got):
        assert_safe_and_close(g, mp_approx_tpr(eps0, delta0, a), GENERIC_REL)


def test_the_search_certificate_is_tight_on_smooth_profiles():
    a = np.concatenate([np.logspace(-12, -1, 12), np.linspace(0.1, 0.99, 10)])
    for m in (mechanisms.Gaussian(0.7), mechanisms.Laplace(1.0), mechanisms.Subbotin(1.0, 1.5)):
        kind = risk._classify(m)
        upper, gap = risk._generic_tpr(kind[1], kind[2], a)
        assert np.all(gap <= 1e-12 * upper), np.max(gap / upper)


def test_zcdp_profile_is_an_upper_bound_of_the_gaussian():
    """ρ-zCDP bounds the Gaussian mechanism with ρ = μ²/2, so its implied TPR is larger."""
    a = np.logspace(-12, 0, 25)
    z = tpr_at_fpr(ZCDPProfile(0.5), a)
    g = tpr_at_fpr(GaussianDPProfile(1.0), a)
    assert np.all(z >= g) and np.all(z <= 1.0) and np.all(np.diff(z) >= 0)
    # the advantage also uses the (ε, δ(ε)) pairs with ε > 0: tighter than δ(0) for this bound
    assert advantage(GaussianDPProfile(1.0)) <= advantage(ZCDPProfile(0.5)) < ZCDPProfile(0.5).delta(0.0)


def test_degenerate_and_nan_profiles():
    # δ ≡ 0: no test beats guessing
    for prof in (ZCDPProfile(0.0), PureDPProfile(0.0)):
        np.testing.assert_allclose(tpr_at_fpr(prof, [0.0, 0.3, 1.0]), [0.0, 0.3, 1.0], rtol=1.1e-12, atol=0)
        assert advantage(prof) == 0.0
        assert posterior_bound(prof, 0.3) == pytest.approx(0.3, rel=1e-12)
    # δ ≡ 1, or a profile returning NaN (read as δ = 1, the safe side): certainty
    for fn in (lambda e: np.zeros(np.shape(e)), lambda e: np.full(np.shape(e), np.nan)):
        prof = FunctionProfile(fn)
        np.testing.assert_array_equal(tpr_at_fpr(prof, [0.0, 1e-9, 1.0]), [1.0, 1.0, 1.0])
        assert advantage(prof) == 1.0 and posterior_bound(prof, 0.1) == 1.0


def test_tpr_at_zero_fpr_is_the_limit_of_delta():
    assert tpr_at_fpr(mechanisms.Gaussian(0.01), 0.0) == 0.0  # μ = 100: needs ε ≫ 745
    ap = ApproxDPProfile(1.0, 1e-6)
    fn = FunctionProfile(lambda e: np.asarray(ap.log_delta(e)))
    assert tpr_at_fpr(fn, 0.0) == pytest.approx(1e-6, rel=1e-11)


# ------------------------------------------------------------------------------------------------
# the accepted arguments, shapes, the re-export
# ------------------------------------------------------------------------------------------------
class _DeltaOnly:
    def delta(self, eps):
        return mechanisms.Laplace(1.0).delta(eps)


class _LogDeltaOnly:
    eps_max = 1.0

    def log_delta(self, eps):
        return mechanisms.Laplace(1.0).log_delta(eps)


def test_every_accepted_profile_form_gives_the_same_answer():
    a = np.array([0.0, 1e-6, 0.05, 0.5, 1.0])
    ref = tpr_at_fpr(mechanisms.Laplace(1.0).profile, a)
    for obj in (mechanisms.Laplace(1.0), _DeltaOnly(), _LogDeltaOnly()):
        np.testing.assert_allclose(tpr_at_fpr(obj, a), ref, rtol=1e-13)
        assert advantage(obj) == pytest.approx(1 - np.exp(-0.5), rel=1e-11)
        assert posterior_bound(obj, 0.5) == pytest.approx(np.e / (1 + np.e), rel=1e-12)


def test_scalars_give_floats_and_arrays_keep_their_shape():
    g = GaussianDPProfile(1.0)
    assert isinstance(tpr_at_fpr(g, 0.1), float) and isinstance(tpr_at_fpr(g, np.float64(0.1)), float)
    assert isinstance(advantage(mechanisms.Gaussian(1.0)), float)
    assert isinstance(posterior_bound(g, 0.5, fpr=0.1), float)
    assert tpr_at_fpr(mechanisms.Gaussian(1.0), np.full((2, 3), 0.1)).shape == (2, 3)
    assert tpr_at_fpr(g, [0.1, 0.2]).shape == (2,)
    out = posterior_bound(PureDPProfile(1.0), np.array([0.1, 0.5, 0.9]), fpr=np.array([[0.0], [0.01]]))
    assert out.shape == (2, 3)  # pure DP: TPR/FPR = e^ε for every FPR ≤ e^{−ε}/2
    np.testing.assert_allclose(out[0], out[1], rtol=1e-13)


def test_reexported_from_conversions_and_no_import_cycle():
    for name in ("tpr_at_fpr", "advantage", "posterior_bound"):
        assert name in conversions.__all__
        assert getattr(conversions, name) is getattr(risk, name)
    # importing dpexplore.accounting.risk first (before conversions) must work too
    code = (
        "import dpexplore.accounting.risk as r, dpexplore.accounting.conversions as c; "
        "assert c.tpr_at_fpr is r.tpr_at_fpr; print(r.advantage(c.PureDPProfile(1.0)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) == pytest.approx(np.tanh(0.5), rel=1e-14)


@pytest.mark.parametrize("fn", [risk.tpr_at_fpr, risk.advantage, risk.posterior_bound])
def test_docstrings_state_formula_source_and_example(fn):
    doc = fn.__doc__
    assert ">>>" in doc and "Kairouz, Oh & Viswanath 2015, Theorem 2.1" in doc
    assert re.search(r"Dong, Roth & Su 2022, ((Proposition|Definition|Corollary) 2\.\d+|(result|definition) “)", doc)


# ------------------------------------------------------------------------------------------------
# hypothesis properties
# ------------------------------------------------------------------------------------------------
PROFILES = {
    "gdp": lambda x: GaussianDPProfile(0.05 + 5 * x),
    "pure": lambda x: PureDPProfile(8 * x),
    "approx": lambda x: ApproxDPProfile(4 * x, 1e-3 * x),
    "gaussian_mech": lambda x: mechanisms.Gaussian(0.2 + 5 * x),
    "laplace_mech": lambda x: mechanisms.Laplace(0.1 + 3 * x),
    "zcdp": lambda x: ZCDPProfile(0.01 + 2 * x),
}
prof_st = st.tuples(st.sampled_from(sorted(PROFILES)), st.floats(0.0, 1.0))
fpr_st = st.one_of(st.floats(0.0, 1.0), st.floats(-320.0, 0.0).map(lambda x: 10.0**x))


def _make(spec):
    return PROFILES[spec[0]](spec[1])


@given(spec=prof_st, fprs=st.lists(fpr_st, min_size=1, max_size=12))
@SETTINGS
def test_tpr_properties(spec, fprs):
    """Within [fpr, 1], never NaN, non-decreasing in fpr (exactly within a call, to 1e-12 between
    calls), TPR(1) = 1."""
    prof = _make(spec)
    a = np.array(fprs)
    t = tpr_at_fpr(prof, a)
    assert not np.isnan(t).any()
    assert np.all(t >= a) and np.all(t <= 1.0)
    order = np.argsort(a)
    assert np.all(np.diff(t[order]) >= 0)
    lo, hi = min(fprs), max(fprs)
    assert tpr_at_fpr(prof, lo) <= tpr_at_fpr(prof, hi) * (1 + 1e-12)
    assert tpr_at_fpr(prof, 1.0) == 1.0


def _max_tpr_minus_fpr(prof):
    """max_α TPR(α) − α (a concave function of α): 201-point grids zooming 100× around the best
    point, six times (the last cell is ~1e-13 wide: enough also at the kink of pure DP)."""
    lo, hi, best = 0.0, 1.0, -1.0
    for _ in range(6):
        grid = np.linspace(lo, hi, 201)
        vals = tpr_at_fpr(prof, grid) - grid
        k = int(np.argmax(vals))
        best = max(best, float(vals[k]))
        lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    return best


@given(spec=prof_st.filter(lambda s: s[0] != "zcdp"))
@settings(max_examples=15, deadline=None)
def test_advantage_is_the_largest_tpr_minus_fpr(spec):
    """For the exact profile of a mechanism (and the closed forms) advantage = δ(0) =
    max_α TPR(α) − α."""
    prof = _make(spec)
    adv = advantage(prof)
    best = _max_tpr_minus_fpr(prof)
    assert best <= adv + 4e-12
    assert best >= adv - 1e-9
    delta0 = float(np.clip(getattr(prof, "profile", prof).delta(0.0), 0.0, 1.0))
    assert adv == pytest.approx(delta0, rel=1e-11, abs=1e-300)


@given(spec=prof_st)
@settings(max_examples=10, deadline=None)
def test_advantage_bounds_tpr_minus_fpr_for_every_profile(spec):
    """Also for the zCDP bound (not convex in e^ε): max_α TPR − α ≤ advantage (minimax)."""
    prof = _make(spec)
    a = np.linspace(0.0, 1.0, 201)
    assert np.max(tpr_at_fpr(prof, a) - a) <= advantage(prof) + 4e-12


@given(
    spec=prof_st, priors=st.lists(st.floats(1e-12, 1 - 1e-12), min_size=1, max_size=8), fpr=st.one_of(st.none(), fpr_st)
)
@SETTINGS
def test_posterior_properties(spec, priors, fpr):
    prof = _make(spec)
    p = np.array(priors)
    post = posterior_bound(prof, p, fpr=fpr)
    assert not np.isnan(post).any()
    assert np.all(post >= p) and np.all(post <= 1.0)
    order = np.argsort(p)
    assert np.all(np.diff(post[order]) >= 0)  # exactly monotone, also between calls:
    assert posterior_bound(prof, float(p.min()), fpr=fpr) <= posterior_bound(prof, float(p.max()), fpr=fpr)
    # restricting the tests (a larger minimum FPR) can only lower the bound (checked above the
    # subnormal range: there T carries the 4-subnormal-ulp nudge, a larger relative margin)
    if fpr is not None and fpr > 1e-300:
        t = tpr_at_fpr(prof, fpr)
        pr = float(p[0])
        assert post[0] == pytest.approx(pr * t / (pr * t + (1 - pr) * fpr), rel=1e-12)
        assert post[0] <= posterior_bound(prof, pr) * (1 + 1e-12)
        assert posterior_bound(prof, pr, fpr=min(1.0, 2 * fpr)) <= post[0] * (1 + 1e-11)


# ------------------------------------------------------------------------------------------------
# cross-check: dp_accounting's privacy loss distributions (pessimistic: δ at least the true one)
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sigma", [0.8, 2.0])
def test_cross_check_dp_accounting_gaussian_pld(sigma):
    from dp_accounting.pld import privacy_loss_distribution as pld_mod

    pld = pld_mod.from_gaussian_mechanism(sigma, value_discretization_interval=1e-4)
    eps = np.linspace(0.0, 15.0, 1501)
    d = np.asarray(pld.get_delta_for_epsilon(eps), dtype=float)
    a = np.array([1e-6, 1e-4, 1e-3, 1e-2, 0.1, 0.5])
    # the same formula on dp_accounting's δ(ε) (an upper bound, on a finite ε grid: larger)
    theirs = np.min(
        np.minimum(d[None] + np.exp(eps)[None] * a[:, None], 1 - np.exp(-eps)[None] * (1 - d[None] - a[:, None])),
        axis=1,
    )
    ours = tpr_at_fpr(mechanisms.Gaussian(sigma), a)
    assert np.all(ours <= theirs * (1 + 1e-12))
    np.testing.assert_allclose(ours, theirs, rtol=2e-4)
    assert advantage(mechanisms.Gaussian(sigma)) == pytest.approx(pld.get_delta_for_epsilon(0.0), abs=1e-9)
    lap = pld_mod.from_laplace_mechanism(0.7, value_discretization_interval=1e-4)
    assert advantage(mechanisms.Laplace(0.7)) == pytest.approx(lap.get_delta_for_epsilon(0.0), abs=1e-9)


# ------------------------------------------------------------------------------------------------
# invalid inputs: ValueError naming the parameter (and showing the value)
# ------------------------------------------------------------------------------------------------
G = GaussianDPProfile(1.0)


@pytest.mark.parametrize(
    "call, name, shown",
    [
        (lambda: tpr_at_fpr(G, -0.1), "fpr", "-0.1"),
        (lambda: tpr_at_fpr(G, 1.5), "fpr", "1.5"),
        (lambda: tpr_at_fpr(G, float("nan")), "fpr", "nan"),
        (lambda: tpr_at_fpr(G, [0.1, float("nan")]), "fpr", "nan"),
        (lambda: tpr_at_fpr(G, float("inf")), "fpr", "inf"),
        (lambda: tpr_at_fpr(G, "0.1"), "fpr", "0.1"),
        (lambda: tpr_at_fpr(mechanisms.Laplace(1.0), None), "fpr", "None"),
        (lambda: tpr_at_fpr(1.0, 0.1), "profile", "1.0"),
        (lambda: tpr_at_fpr(None, 0.1), "profile", "None"),
        (lambda: tpr_at_fpr("gdp", 0.1), "profile", "gdp"),
        (lambda: tpr_at_fpr(mechanisms.Gaussian, 0.1), "profile", "Gaussian"),
        (lambda: tpr_at_fpr(mechanisms.Gaussian(np.array([1.0, 2.0])), 0.1), "profile", "Gaussian"),
        (lambda: advantage(0.5), "profile", "0.5"),
        (lambda: advantage([1.0]), "profile", "1.0"),
        (lambda: posterior_bound(G, 0.0), "prior", "0."),
        (lambda: posterior_bound(G, 1.0), "prior", "1."),
        (lambda: posterior_bound(G, -0.2), "prior", "-0.2"),
        (lambda: posterior_bound(G, float("nan")), "prior", "nan"),
        (lambda: posterior_bound(G, [0.5, 2.0]), "prior", "2."),
        (lambda: posterior_bound(G, 0.5, fpr=1.2), "fpr", "1.2"),
        (lambda: posterior_bound(G, 0.5, fpr=float("nan")), "fpr", "nan"),
        (lambda: posterior_bound(object(), 0.5), "profile", "object"),
    ],
)
def test_invalid_inputs(call, name, shown):
    with pytest.raises(ValueError, match=name) as exc:
        call()
    assert shown in str(exc.value)


def test_restricting_the_tests_never_raises_the_posterior_at_the_ulp_level():
    """Found by the property test above: for Laplace noise the restricted bound at FPR 1e-6 came
    out 1e-12 (relative) above the unrestricted one, from the two paths' separate rounding."""
    from dpexplore.mechanisms import Laplace

    m = Laplace(0.2875)
    for prior in (1e-12, 1e-6, 0.01, 0.5):
        for fpr in (1e-9, 1e-6, 1e-3):
            assert posterior_bound(m, prior, fpr=fpr) <= posterior_bound(m, prior)
