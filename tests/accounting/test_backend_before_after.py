"""Issue 37, point 1: privacy numbers moved from the UI and the apps into the backend give the
same numbers or safer ones. The code they replace is kept here, private, as the "before".

* μ from (ε, δ): ``filters.filters_for_target`` (a scalar bisection from μ = 1e-9) and
  ``ui.views.matched_mu`` (four rounds of a 64-point log grid) now both call
  ``conversions.approx_to_gdp`` (one vectorized bracket search, ``side`` naming the safe end).
* ``algorithms.advanced_composition_pure`` (deprecated) and the ε₀ of ``Sparse`` and
  ``Thresholdout``: ``composition.advanced`` and ``composition.per_step_budget`` instead of a
  closed form without rounding and a private bisection.
* ``ui.views.tradeoff_envelope`` (a profile's trade-off curve from points of it) is now
  ``conversions.tradeoff_envelope`` (same numbers; its arguments checked at entry).
"""

from __future__ import annotations

import numpy as np
import pytest

from dpexplore.accounting import conversions
from dpexplore.accounting.composition import compose
from dpexplore.accounting.conversions import approx_to_gdp, gdp_delta, gdp_log_delta, tradeoff_approx
from dpexplore.mechanisms import Gaussian, Laplace, RandomizedResponse
from dpexplore.accounting.filters import filters_for_target
from dpexplore.ui.views import matched_mu

EPS = [1e-3, 0.1, 0.5, 1.0, 2.0, 4.8866, 10.0, 30.0]
DELTAS = [1e-12, 1e-9, 1e-6, 1e-5, 1e-3, 0.1, 0.5]


def _before_filters_mu(e, d):
    """filters_for_target's μ on main before the move (verbatim but for the return)."""
    lo, hi = 1e-9, 1.0
    while gdp_delta(hi, e) <= d:
        hi *= 2
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        if gdp_delta(mid, e) <= d:
            lo = mid
        else:
            hi = mid
    return lo


def _before_matched_mu(eps, delta):
    """ui.views.matched_mu on main before the move (verbatim)."""
    if not np.isfinite(eps) or eps <= 0 or not 0 < delta < 1:
        return None
    lo, hi = -6.0, 4.0
    target = np.log(delta)
    for _ in range(4):
        grid = np.linspace(lo, hi, 64)
        ld = np.asarray(gdp_log_delta(10.0**grid, eps), dtype=np.float64)
        above = np.nonzero(ld >= target)[0]
        if above.size == 0:
            return None
        j = int(above[0])
        if j == 0:
            return float(10.0 ** grid[0])
        lo, hi = float(grid[j - 1]), float(grid[j])
    return float(10.0**hi)


@pytest.mark.parametrize("e", EPS)
def test_filters_for_target_mu_is_the_same_or_smaller_and_still_meets_the_target(e):
    for d in DELTAS:
        new = approx_to_gdp(e, d)
        old = _before_filters_mu(e, d)
        assert gdp_delta(new, e) <= d  # the filter's promise holds
        assert new <= old  # never less safe than before
        assert old - new <= 1.1e-13 * old  # and as tight (the 1e-13 margin)
        try:
            fs = filters_for_target(e, d)
        except ValueError as exc:  # its Rényi filter has no budget
            assert "too small" in str(exc)
            continue
        assert fs["gdp"].mu == new


def test_the_bracket_is_not_floored_at_1e_9():
    """The old bisection started at μ = 1e-9, so a target below δ_{1e-9}(ε) got μ = 1e-9, whose δ
    exceeds the target (the unsafe side; filters_for_target refuses such targets anyway, at its
    Rényi filter); the bracket search goes below and meets the target."""
    e, d = 1e-12, 1e-13
    old = _before_filters_mu(e, d)
    assert old == 1e-9 and gdp_delta(old, e) > d
    new = approx_to_gdp(e, d)
    assert 0 < new < 1e-9 and gdp_delta(new, e) <= d


def test_matched_mu_stays_on_the_upper_side_and_agrees_with_before():
    for e in EPS:
        for d in DELTAS:
            old, new = _before_matched_mu(e, d), matched_mu(e, d)
            assert old is not None and new is not None
            # the curve passes through the point or above it
            assert gdp_delta(new, e) > d or gdp_log_delta(new, e) > np.log(d)
            assert new <= old * (1 + 1.1e-13)  # the grid's end was 1.5e-6 wide
            assert old <= new * (1 + 2e-6)
            assert new == approx_to_gdp(e, d, side="up")
    # none where no GDP curve is drawn, as before; a sequence gives one μ per ε
    assert matched_mu(0.0, 1e-6) is None and matched_mu(np.inf, 1e-6) is None
    assert matched_mu(1.0, 0.0) is None
    assert matched_mu([1.0, np.inf, 2.0], 1e-6) == (matched_mu(1.0, 1e-6), None, matched_mu(2.0, 1e-6))


def test_approx_to_gdp_brackets_the_crossing_by_adjacent_floats():
    e = np.array(EPS)[:, None]
    d = np.array(DELTAS)[None, :]
    lo, hi = approx_to_gdp(e, d), approx_to_gdp(e, d, side="up")
    assert lo.shape == (len(EPS), len(DELTAS))
    assert np.all(gdp_delta(lo, e) <= d) and np.all(gdp_delta(hi, e) > d)
    np.testing.assert_allclose(hi / lo, 1.0, rtol=3e-13)  # the bracket, moved out by 1e-13
    assert np.all(hi / lo > 1.0 + 1.9e-13)
    # the Gaussian mechanism's ε(δ) maps back to its μ = 1 (Dong, Roth & Su 2022, Corollary 2.13)
    assert approx_to_gdp(4.886554117462214, 1e-6, side="up") == pytest.approx(1.0, rel=1e-12)
    assert approx_to_gdp(1.0, 0.0) == 0.0 and approx_to_gdp(np.inf, 1e-6) == np.inf
    with pytest.raises(ValueError, match="side must be"):
        approx_to_gdp(1.0, 1e-6, side="safe")
    with pytest.raises(ValueError, match="delta"):
        approx_to_gdp(1.0, 1.5)
    with pytest.raises(ValueError, match="eps"):
        approx_to_gdp(-1.0, 1e-6)


def _before_tradeoff_envelope(eps, delta, alpha):
    """ui.views.tradeoff_envelope on main before the move (verbatim)."""
    alpha = np.asarray(alpha, dtype=np.float64)
    d = np.minimum(np.asarray(delta, dtype=np.float64), 1.0 - 1e-16)
    eps = np.asarray(eps, dtype=np.float64)
    keep = (d < 1.0 - 1e-16) & np.isfinite(eps)
    if not keep.any():
        return np.zeros_like(alpha)
    f = tradeoff_approx(eps[keep][:, None], np.maximum(d[keep], 0.0)[:, None], alpha[None, :])
    return np.max(f, axis=0)


@pytest.mark.parametrize(
    "obj", [Gaussian(1.0), Laplace(0.5), RandomizedResponse(2.0), compose(Laplace(3.0), 20)], ids=repr
)
def test_tradeoff_envelope_in_the_backend_gives_the_same_numbers(obj):
    from dpexplore.ui import views

    assert views.tradeoff_envelope is conversions.tradeoff_envelope  # the old name still works
    eps = np.concatenate([[0.0], np.linspace(0.0, 12.0, 61), [np.inf]])
    delta = np.asarray(obj.delta(eps), dtype=np.float64)
    alpha = np.concatenate([[0.0], np.logspace(-6, 0, 40)])
    np.testing.assert_array_equal(
        conversions.tradeoff_envelope(eps, delta, alpha), _before_tradeoff_envelope(eps, delta, alpha)
    )
    np.testing.assert_array_equal(conversions.tradeoff_envelope(eps, np.ones_like(eps), alpha), 0.0)
    with pytest.raises(ValueError, match="delta"):
        conversions.tradeoff_envelope([1.0], [1.5], alpha)
    with pytest.raises(ValueError, match="eps and delta must be 1-D of one length"):
        conversions.tradeoff_envelope([1.0, 2.0], [0.1], alpha)


def _before_advanced_composition_pure(eps0, k, delta):
    """algorithms.advanced_composition_pure on main before the move (verbatim, scalar)."""
    e0, kk = float(eps0), float(k)
    basic = kk * e0
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_inv = -np.log(delta) if delta > 0 else np.inf
        adv = np.sqrt(2 * kk * log_inv) * e0 + kk * e0 * np.expm1(e0)
        adv = np.inf if np.isnan(adv) else adv
    return min(basic, adv)


def _before_solve_eps0(eps, k, delta):
    """algorithms._solve_eps0 on main before the move (verbatim)."""
    if delta == 0.0:
        return eps / k
    lo, hi = eps / k, eps
    f = lambda e0: _before_advanced_composition_pure(e0, k, delta)  # noqa: E731
    if f(hi) <= eps:
        return hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(mid) <= eps:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 4 * np.spacing(hi):
            break
    return lo


E0S, KS = [0.0, 1e-4, 0.01, 0.1, 0.5, 1.0, 3.0], [1, 2, 10, 100, 10**4]
ADV_DELTAS = [0.0, 1e-9, 1e-5]


def test_advanced_composition_pure_is_the_same_or_larger_and_deprecated():
    from dpexplore import algorithms

    for e0 in E0S:
        for k in KS:
            for d in ADV_DELTAS:
                old = _before_advanced_composition_pure(e0, k, d)
                with pytest.warns(DeprecationWarning, match="composition.advanced"):
                    new = algorithms.advanced_composition_pure(e0, k, d)
                assert old <= new <= old * (1 + 1e-15)  # rounded up by 4 ulps, or identical
    with pytest.warns(DeprecationWarning):
        grid = algorithms.advanced_composition_pure(np.array(E0S)[:, None], 100, 1e-6)
    assert grid.shape == (len(E0S), 1)


def test_sparse_and_thresholdout_noise_is_the_same_or_larger():
    from dpexplore import algorithms

    for eps in [0.1, 1.0, 5.0]:
        for c in [1, 3, 30, 1000]:
            for d in ADV_DELTAS:
                old_e0 = _before_solve_eps0(eps, c, d)
                new_e0 = algorithms._solve_eps0(eps, c, d)
                assert new_e0 <= old_e0 and new_e0 >= old_e0 * (1 - 1e-12)
                sp = algorithms.Sparse(c=c, eps=eps, delta=d)
                assert sp.privacy()[0] <= eps
                assert sp.sigma >= 2.0 / old_e0 * (1 - 1e-15)  # never less noise than before
    assert algorithms.Sparse(c=3, eps=1.0).sigma == 6.0  # δ = 0: basic composition, unchanged


def _before_tight_values(mechanism, ks, delta_total):
    """apps/composition_explorer._tight_values on main before the move: its own dispatch (GDP
    closed form, optimal for RR, one PLD per k otherwise, re-composed on a 2¹⁶ − 64 grid when
    the PLD carried +∞ mass, then capped by KOV)."""
    from dpexplore.accounting import composition as C
    from dpexplore.accounting.conversions import gdp_epsilon

    if isinstance(mechanism, Gaussian):
        mu = float(mechanism.sensitivity) / float(mechanism.sigma)
        return np.asarray(gdp_epsilon(np.sqrt(ks.astype(np.float64)) * mu, delta_total))
    if isinstance(mechanism, RandomizedResponse):
        return np.asarray(C.optimal(float(mechanism.eps), ks, delta_total))
    out = []
    for k in ks:
        prof = C.compose(mechanism, int(k))
        pld = getattr(prof, "pld", None)
        if pld is not None and pld.inf_mass > 0 and np.isfinite(float(mechanism.eps_max)):
            prof = C.compose(mechanism, int(k), grid_size=2**16 - 64)
        out.append(prof.epsilon(delta_total))
    out = np.array(out, dtype=float)
    em = float(mechanism.eps_max)
    if np.isfinite(em):
        out = np.minimum(out, np.asarray(C.optimal(em, ks, delta_total)))
    return out


@pytest.mark.parametrize("name", ["laplace", "gaussian", "rr"])
def test_compose_epsilon_over_k_gives_the_composition_explorers_numbers(name):
    from dpexplore.apps import composition_explorer as A
    from dpexplore.accounting.composition import compose_epsilon

    ks = A.K_TIGHT_PLD if name == "laplace" else A.K_GRID
    for e in [0.01, 1.0, 5.0]:
        m = A.make_mechanism(name, e, 1e-9 if name == "gaussian" else 0.0)
        for dt in [1e-12, 1e-6, 1e-3]:
            new = np.asarray(compose_epsilon(m, ks, dt))
            np.testing.assert_array_equal(new, _before_tight_values(m, ks, dt))
            np.testing.assert_array_equal(A._tight_values(m, ks, dt), new)


def test_the_pld_has_no_spurious_mass_at_infinity_for_laplace():
    """The explorer re-composed a Laplace PLD on another grid when it carried mass at +∞ (the
    top grid point an ulp below eps_max sent the atom at eps_max there); pld._grid_points snaps
    the grid's ends to ±eps_max, so over the explorer's ε slider and k grid there is none."""
    from dpexplore.apps import composition_explorer as A
    from dpexplore.accounting.composition import compose

    for e in 10.0 ** (np.arange(-60, 35, 7) / 20.0):  # ε from 1e-3 to ~50, as the slider
        m = A.make_mechanism("laplace", float(e), 0.0)
        for k in A.K_TIGHT_PLD[1:]:
            assert compose(m, int(k)).pld.inf_mass == 0.0
