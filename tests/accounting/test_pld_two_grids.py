"""Tests for the fast paths of DP-SGD accounting: two-grid PLD powers (a fine bulk and coarse
tails), single PLDs with coarse tail cells, the add direction composed first on a coarse grid,
and Rényi orders summed only where they can win. Each is checked against the plain computation
it replaces: the same guarantees (never below the truth), the same or nearly the same values.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from dpexplore.accounting import composition as C
from dpexplore.accounting import pld
from dpexplore.accounting.conversions import rdp_to_approx
from dpexplore.mechanisms import Gaussian, subsample

mp.mp.dps = 40


def true_delta_remove(sigma, q, eps):
    """δ(ε) of one Poisson-subsampled Gaussian step, remove direction (P = (1−q)N(0,σ²) + qN(1,σ²),
    Q = N(0,σ²)), in mpmath."""
    s, q, e = mp.mpf(sigma), mp.mpf(q), mp.mpf(eps)
    y = s**2 * mp.log((mp.e**e - 1 + q) / q) + mp.mpf(1) / 2
    tail = lambda z: 1 - mp.ncdf(z)  # noqa: E731
    return (1 - q) * tail(y / s) + q * tail((y - 1) / s) - mp.e**e * tail(y / s)


def test_single_pld_with_coarse_tails_never_below_the_truth():
    remove = subsample(Gaussian(1.0), 0.01)._directions()[0]
    lo, hi = pld._loss_range(remove)
    h = (hi - lo) / 2**15
    fine, coarse = pld._single_pld(remove, h), pld._single_pld(remove, h, 16)
    assert np.count_nonzero(coarse.pmf) < 0.5 * np.count_nonzero(fine.pmf)  # the tails are coarse
    assert float(coarse.pmf.sum()) + coarse.inf_mass == pytest.approx(1.0, abs=1e-12)
    for eps in (0.0, 0.01, 0.1, 0.5, 1.0, 2.0, 3.0):
        truth = float(true_delta_remove(1.0, 0.01, eps))
        got = float(coarse.delta(eps))
        assert got >= truth * (1 - 1e-12)
        assert got <= max(truth * 1.01, truth + 1e-13)  # and close to it
        assert got == pytest.approx(float(fine.delta(eps)), rel=1e-3, abs=1e-14)


@pytest.mark.parametrize("sigma,q,k", [(1.0, 0.01, 3000), (0.8, 0.004, 20000), (2.0, 0.1, 1000)])
def test_two_grid_powers_match_one_grid(monkeypatch, sigma, q, k):
    m = subsample(Gaussian(sigma), q)
    deltas = np.array([1e-3, 1e-6, 1e-9])
    two = [pld.composed_pld_many([(d, k)]) for d in m._directions()]
    pld.clear_caches()
    monkeypatch.setattr(pld, "_SPLIT_LEVELS", 0)  # one grid, coarse tails off
    one = [pld.composed_pld_many([(d, k)]) for d in m._directions()]
    pld.clear_caches()
    for a, b in zip(two, one):
        assert float(a.pmf.sum()) + a.inf_mass == pytest.approx(1.0, abs=1e-10)
        assert a.inf_mass < 1e-12
        np.testing.assert_allclose(a.epsilon(deltas), b.epsilon(deltas), rtol=2e-5)


def test_two_grids_are_used_where_they_pay():
    remove = subsample(Gaussian(1.0), 0.01)._directions()[0]
    h = pld._grid_h(((remove, 10_000),), pld._many_grid_size(10_000, True))
    start = pld._start_single(remove, h, 10_000, 10_000)
    assert pld._two_grids(h, start.h)
    assert np.count_nonzero(start.pmf) < 0.3 * start.pmf.size  # tails on every 16th point
    # few runs: the tails' grid would be coarser than the final one, so one grid
    h10 = pld._grid_h(((remove, 10),), pld._many_grid_size(10, True))
    assert not pld._two_grids(h10, pld._start_single(remove, h10, 10, 10).h)


def test_add_direction_on_a_coarse_grid_first_gives_the_full_answer():
    m = subsample(Gaussian(1.0), 0.01)
    ks = np.array([100, 2000, 10_000])
    # a curve: both directions' series on the grid the refinement stops at (that of the largest
    # count; here the first one it checks)
    n = pld.refine_start([(m._directions()[0], int(ks[-1]))])
    full = np.max(
        [
            [float(pld.PLDProfile(p).epsilon(1e-5)) for p in pld.composed_pld_series(d, ks, grid_size=n)]
            for d in m._directions()
        ],
        axis=0,
    )
    np.testing.assert_array_equal(C._dpsgd_pld_epsilons(m, ks, 1e-5), full)
    # one count: as compose() gives it
    one = float(C.compose(m, 10_000).epsilon(1e-5))
    np.testing.assert_array_equal(C._dpsgd_pld_epsilons(m, ks[-1:], 1e-5), [one])

    class Swapped:  # the larger direction in the coarse-first slot: it must be recomputed
        def _directions(self):
            return m._directions()[::-1]

    np.testing.assert_array_equal(C._dpsgd_pld_epsilons(Swapped(), ks, 1e-5), full)


def test_compose_refines_the_add_direction_only_where_it_could_be_the_larger():
    """compose() of a subsampled mechanism reads the add direction's ε off the grid it has and
    refines it only where that exceeds the remove direction's: the same ε as refining both, and
    no AccuracyWarning for a direction that does not set it (σ 0.149, q 2.08e-7, 52205 steps,
    δ 8.9e-4 warned that the add direction had not converged in 2²⁰ points)."""
    import warnings

    m = subsample(Gaussian(0.149), 2.08e-7)
    with warnings.catch_warnings():
        warnings.simplefilter("error", pld.AccuracyWarning)
        prof = C.compose(m, 52_205)
        e = prof.epsilon([8.9e-4, 1e-5])
    remove, add = prof.profiles
    assert e[0] == remove.epsilon(8.9e-4) and add.epsilon_upper(8.9e-4) <= e[0]
    assert e[0] == C.dpsgd_epsilon(0.149, 2.08e-7, 52_205, 8.9e-4)
    # in the other slot the larger direction is refined: the same ε
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pld.AccuracyWarning)  # the add direction's own grid
        assert C._Directions([add, remove], name="swapped").epsilon(8.9e-4) == e[0]


def test_rdp_orders_summed_lazily_give_the_full_curves_epsilon():
    rng = np.random.default_rng(3)
    for _ in range(25):
        sigma = float(np.exp(rng.uniform(np.log(0.3), np.log(30.0))))
        q = float(np.exp(rng.uniform(np.log(1e-4), 0.0)))
        curve = np.asarray(subsample(Gaussian(sigma), q).rdp(C.RDP_ORDERS))
        for steps in (1, 100, 10_000, 10**6):
            for delta in (1e-12, 1e-5, 1e-3):
                want = float(rdp_to_approx(C.RDP_ORDERS, steps * curve, delta))
                assert C._dpsgd_rdp_epsilon(sigma, q, steps, delta) == want


def test_refinement_stops_where_a_finer_grid_rises():
    """Refining nested connect-the-dots grids can only lower ε; where ε rose by more than a
    quarter of the target on two finer grids in a row, FFT round-off limits the accuracy and
    finer grids do not help: the smallest ε so far, not converged, without building the finer
    grids. One rise alone refines on (the start grids of a subsampled mechanism's powers are not
    nested across sizes: σ 0.3, q 1e-5, 10⁴ steps, add direction, δ 1e-5 gave 0.0568 on 2¹⁰
    points, 0.0579 on 2¹², then 0.0563, 0.0555, 0.0554)."""
    asked = []
    values = {1024: 2763.0, 4096: 2849.0, 16384: 7898.0, 65536: 9000.0}

    def eps_at(n):
        asked.append(n)
        return np.array([values[n]])

    eps, ok, n = pld.refine_epsilon(eps_at, 4096)
    assert eps[0] == 2763.0 and not ok[0] and n == 16384 and asked == [1024, 4096, 16384]
    # one rise, then falling values: refined to the target
    asked.clear()
    values.update({1024: 0.0568, 4096: 0.0579, 16384: 0.0563, 65536: 0.0555, 262144: 0.0554})
    eps, ok, n = pld.refine_epsilon(eps_at, 4096)
    assert ok[0] and n == 262144 and eps[0] == 0.0554 and asked == [1024, 4096, 16384, 65536, 262144]
    # falling values refine as before
    asked.clear()
    values.update({1024: 10.0, 4096: 9.0, 16384: 8.99, 65536: 8.9899})
    eps, ok, n = pld.refine_epsilon(eps_at, 4096)
    assert ok[0] and n == 16384 and eps[0] == 8.99 and asked == [1024, 4096, 16384]


@pytest.mark.parametrize("k", [2, 16, 256])
@pytest.mark.parametrize("eps", [0.1, 0.5, 2.0])
def test_tiny_rate_composition_is_first_order_exact(k, eps):
    """At q = 1e-10 two large steps have probability ~k²q²/2, far below what is asserted, so
    the k-step δ(ε) is k times the exact one-step δ(ε) (:class:`OneStepProfile`) to 1e-6: never
    below it (the FFT product once lost 7 % of the mass between the bulk and the rare large
    losses, 0.07 % of δ(0.1) at 16 steps, when the bulk sat in one cell), and not above it."""
    m = subsample(Gaussian(0.1), 1e-10)
    remove, _ = m._directions()
    one = float(m.profile.delta(eps))
    composed = float(pld.composed_pld_many([(remove, k)], grid_size=2**14).delta(eps))
    assert composed / (k * one) == pytest.approx(1.0, abs=1e-6)


def test_narrow_head_product_matches_a_direct_convolution():
    """The direct head cells plus the FFT of the rest (:func:`dpexplore.accounting.pld._head_product`)
    give the full convolution, cell by cell, to 1e-12 relative where the mass is above 1e-14
    (the ends below it are cut at τ = 1e-16, the cut mass moved up or to +∞; the lowest cell
    also takes the rounding of the total, ~1e-16)."""
    rng = np.random.default_rng(0)
    a = np.concatenate([[1.0], rng.random(300) * 1e-8, 1e-10 * rng.random(200)])
    b = np.concatenate([rng.random(50) * 1e-9, [0.5, 0.5], rng.random(100) * 1e-7])
    a, b = a / a.sum(), b / b.sum()
    assert pld._narrow_head(a) is not None and pld._narrow_head(b) is not None
    h, off, pmf, inf, _ = pld._convolve((0.01, -3, a, 0.0, 0.0), (0.01, 5, b, 0.0, 0.0))
    exact = np.convolve(a, b)
    got = np.zeros_like(exact)
    got[off - 2 : off - 2 + pmf.size] = pmf
    keep = exact > 1e-14
    keep[0] = False
    assert np.allclose(got[keep], exact[keep], rtol=1e-12, atol=0)
