"""Down sensitivity and the shifted inverse sensitivity mechanism (Steinke 2023b; Fang, Dong & Yi 2022):
closed forms, brute-force enumeration of the loss, exact privacy ratios on neighbouring datasets,
the accuracy guarantees of Theorems 4 and 5, and Monte Carlo against the exact distributions."""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpexplore.teaching import down_sensitivity as ds

FIG1 = [0] + [1] * 5 + [2] * 10 + [3] * 10 + [4] * 5 + [5]


def test_figure1_binomial_loss():
    """Steinke 2023b, Figure 1: the Binomial(5, 1/2) dataset (32 items); ℓ(x, y) is a step function
    dropping at each value by that value's count: 32 below 0, 31 on [0, 1), …, 1 on [4, 5), 0 from 5."""
    assert len(FIG1) == 32 and [FIG1.count(v) for v in range(6)] == [math.comb(5, v) for v in range(6)]
    ys = np.array([-0.5, 0, 0.5, 1, 1.5, 2, 2.99, 3, 3.5, 4, 4.99, 5, 7])
    want = [32, 31, 31, 26, 26, 16, 16, 6, 6, 1, 1, 0, 0]
    assert ds.loss_max(FIG1, ys).tolist() == want
    # closed form: ℓ(x, v) = Σ_{j > v} C(5, j)
    for v in range(6):
        assert ds.loss_max(FIG1, v) == sum(math.comb(5, j) for j in range(v + 1, 6))


def _brute_loss(items, y, f):
    """min #removed so that f(subset) ≤ y, by enumerating all subsets (Steinke 2023b, eq. (4))."""
    n = len(items)
    for k in range(n + 1):
        for removed in itertools.combinations(range(n), k):
            keep = [items[i] for i in range(n) if i not in removed]
            if f(keep) <= y:
                return k
    raise AssertionError


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=0, max_size=7), st.integers(-1, 7))
def test_loss_max_matches_enumeration(items, y):
    f = lambda s: max(s) if s else -math.inf
    assert ds.loss_max(items, y) == _brute_loss(items, y, f)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=0, max_size=7), st.integers(0, 40))
def test_loss_user_sum_matches_enumeration(totals, y):
    assert ds.loss_user_sum(totals, y) == _brute_loss(totals, y, sum)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=7), st.integers(0, 8))
def test_down_sensitivity_max_matches_enumeration(items, k):
    """DS^k = max over subsets removing ≤ k items of f(x) − f(x') (eq. (1)), f(∅) = min item."""
    fx = max(items)
    worst = 0
    n = len(items)
    for r in range(min(k, n) + 1):
        for removed in itertools.combinations(range(n), r):
            keep = [items[i] for i in range(n) if i not in removed]
            worst = max(worst, fx - (max(keep) if keep else min(items)))
    assert ds.down_sensitivity_max(items, k) == worst
    grid = np.arange(min(items), 7)
    if grid.size >= 2:
        lo = ds.grid_losses_max(items, grid)
        assert ds.down_sensitivity(lo, grid, k) == worst


def test_grid_losses_and_value():
    grid = np.arange(0, 6)
    lo = ds.grid_losses_max(FIG1, grid)
    assert lo.tolist() == [31, 26, 16, 6, 1, 0]
    assert ds.value_from_losses(lo, grid) == 5.0
    # an outlier above the grid is capped at the top: f = y_max, loss 0 there
    lo2 = ds.grid_losses_max([1, 2, 1e9], grid)
    assert lo2.tolist() == [3, 2, 1, 1, 1, 0] and ds.value_from_losses(lo2, grid) == 5.0
    tot = ds.user_totals([1, 2, 1, 3], [2.0, 1.0, 3.0, 0.5])
    assert tot.tolist() == [5.0, 1.0, 0.5]
    assert ds.grid_losses_user_sum(tot, [0, 1, 2, 6, 7]).tolist() == [3, 2, 1, 1, 0]


def _neighbours(items, extra):
    return items, items + [extra]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 9), min_size=0, max_size=12),
    st.integers(0, 9),
    st.sampled_from([0.3, 1.0, 3.0]),
    st.integers(1, 6),
)
def test_theorem4_is_eps_dp_exactly(items, extra, eps, tau):
    """Exact pmf ratio between neighbours (one item added) is at most e^ε (Theorem 4)."""
    grid = np.arange(0, 10)
    x, x2 = _neighbours(items, extra)
    p = ds.shifted_inverse_pmf(ds.grid_losses_max(x, grid), eps, tau)
    q = ds.shifted_inverse_pmf(ds.grid_losses_max(x2, grid), eps, tau)
    assert np.all(np.abs(np.log(p) - np.log(q)) <= eps * (1 + 1e-12) + 1e-12)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 20), min_size=0, max_size=8),
    st.integers(0, 30),
    st.sampled_from([0.3, 1.0, 3.0]),
    st.integers(1, 5),
)
def test_theorem4_user_sum_is_eps_dp_exactly(totals, extra, eps, tau):
    """Adding one person (any total) to a user-level sum: pmf ratio ≤ e^ε."""
    grid = np.linspace(0, 120, 13)
    x, x2 = _neighbours(totals, extra)
    p = ds.shifted_inverse_pmf(ds.grid_losses_user_sum(x, grid), eps, tau)
    q = ds.shifted_inverse_pmf(ds.grid_losses_user_sum(x2, grid), eps, tau)
    assert np.all(np.abs(np.log(p) - np.log(q)) <= eps * (1 + 1e-12) + 1e-12)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 20), min_size=0, max_size=8),
    st.integers(0, 30),
    st.sampled_from([0.5, 2.0]),
    st.sampled_from([5, 8, 13]),
)
def test_binary_search_is_T_over_sigma_dp_exactly(totals, extra, sigma, m):
    grid = np.linspace(0, 200, m)
    x, x2 = _neighbours(totals, extra)
    p = ds.binary_search_pmf(ds.grid_losses_user_sum(x, grid), sigma, 2.0)
    q = ds.binary_search_pmf(ds.grid_losses_user_sum(x2, grid), sigma, 2.0)
    eps = ds.binary_search_privacy(m, sigma)["eps"]
    both = (p > 0) & (q > 0)
    assert np.array_equal(p > 0, q > 0)
    assert np.all(np.abs(np.log(p[both]) - np.log(q[both])) <= eps + 1e-9)


def test_binary_search_steps_are_the_real_depth():
    """T = ⌈log₂(m − 1)⌉ is the deepest path of the loop (enumerated)."""

    def depth(a, b):
        return 0 if a + 1 >= b else 1 + max(depth(a, (a + b) // 2), depth((a + b) // 2, b))

    for m in range(2, 70):
        assert ds.binary_search_steps(m) == depth(0, m - 1)


@pytest.mark.parametrize("eps,beta", [(1.0, 0.1), (0.5, 0.05), (2.0, 0.2)])
def test_theorem4_accuracy_guarantee(eps, beta):
    rng = np.random.default_rng(3)
    grid = np.arange(0, 201)
    for data in (FIG1, list(rng.integers(0, 150, 400)), [3] * 50 + [190]):
        lo = ds.grid_losses_max(data, grid)
        tau = ds.shifted_inverse_tau(eps, beta, grid.size)
        p = ds.shifted_inverse_pmf(lo, eps, tau)
        assert ds.accuracy_probability(p, lo, grid, tau) >= 1 - beta
        # the output never exceeds... only with small probability; the guarantee is the event above
        assert p[grid > ds.value_from_losses(lo, grid)].sum() <= beta


@pytest.mark.parametrize("rho,beta", [(0.5, 0.1), (0.1, 0.05)])
def test_theorem5_accuracy_guarantee(rho, beta):
    grid = np.linspace(0, 1e6, 1025)
    rng = np.random.default_rng(4)
    totals = np.concatenate((rng.exponential(100.0, 2000), [5e5]))
    lo = ds.grid_losses_user_sum(totals, grid)
    sigma, tau = ds.binary_search_params(grid.size, beta, rho=rho)
    assert ds.binary_search_privacy(grid.size, sigma)["rho"] == pytest.approx(rho)
    p = ds.binary_search_pmf(lo, sigma, tau)
    assert ds.accuracy_probability(p, lo, grid, tau) >= 1 - beta


def test_theorem5_params_match_the_post_for_powers_of_two():
    """|Y| = 2^j: T = log₂|Y|, so σ = sqrt(log₂|Y|/(2ρ)), τ = σ log(log₂|Y|/β) exactly as stated."""
    sigma, tau = ds.binary_search_params(2**12, 0.1, rho=0.25)
    assert sigma == pytest.approx(math.sqrt(12 / 0.5))
    assert tau == pytest.approx(sigma * math.log(12 / 0.1))
    sigma, tau = ds.binary_search_params(2**12, 0.1, eps=2.0)
    assert sigma == pytest.approx(6.0)


def test_samplers_match_exact_distributions():
    rng = np.random.default_rng(12345)
    grid = np.arange(0, 12)
    lo = ds.grid_losses_max(FIG1 + [9], grid)
    n = 200_000
    for pmf, draws in (
        (ds.shifted_inverse_pmf(lo, 1.0, 3), ds.shifted_inverse_sample(lo, grid, 1.0, 3, rng, n)),
        (ds.binary_search_pmf(lo, 1.5, 3.0), ds.binary_search_sample(lo, grid, 1.5, 3.0, rng, n)),
    ):
        freq = np.bincount(draws.astype(int), minlength=grid.size) / n
        se = np.sqrt(pmf * (1 - pmf) / n)
        assert np.all(np.abs(freq - pmf) <= 5 * se + 1e-4)


def test_laplace_baselines():
    est = ds.laplace_clipped_max([1.0, 5.0, 1e6], 0.0, 10.0, 2.0)
    assert (est.center, est.scale) == (10.0, 5.0)  # biased: the outlier is clipped away
    assert est.cdf(10.0) == 0.5 and est.pdf(10.0) == pytest.approx(0.1)
    s = est.sample(np.random.default_rng(0), 100_000)
    assert abs(s.mean() - 10.0) < 0.1 and abs(np.median(np.abs(s - 10)) - 5 * math.log(2)) < 0.1
    u = ds.laplace_clipped_user_sum([10.0, 1.0, 2.0], 5.0, 0.5)
    assert (u.center, u.scale) == (8.0, 10.0)
    assert ds.laplace_clipped_max([], 0.0, 1.0, 1.0).center == 0.0


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: ds.check_grid([0, 0, 1]), "grid"),
        (lambda: ds.shifted_inverse_pmf([3, 1, 0], -1.0, 2), "eps"),
        (lambda: ds.shifted_inverse_pmf([3, 1, 0], 1.0, 0), "tau"),
        (lambda: ds.shifted_inverse_pmf([1, 3, 0], 1.0, 2), "loss"),
        (lambda: ds.shifted_inverse_pmf([3, 1, 1], 1.0, 2), "loss"),
        (lambda: ds.shifted_inverse_tau(1.0, 1.5, 10), "beta"),
        (lambda: ds.shifted_inverse_tau(1.0, 0.1, 1), "grid_size"),
        (lambda: ds.binary_search_params(16, 0.1), "eps or rho"),
        (lambda: ds.binary_search_pmf([3, 1, 0], 0.0, 1.0), "sigma"),
        (lambda: ds.shifted_inverse_sample([3, 1, 0], [0, 1, 2], 1.0, 1, 42), "rng"),
        (lambda: ds.shifted_inverse_sample([3, 1, 0], [0, 1, 2], 1.0, 1, np.random.default_rng(), 0), "size"),
        (lambda: ds.user_totals([1, 2], [1.0, -1.0]), "values"),
        (lambda: ds.loss_user_sum([-1.0], 0), "totals"),
        (lambda: ds.loss_max([float("nan")], 0), "x"),
        (lambda: ds.down_sensitivity_max([1, 2], -1), "k"),
        (lambda: ds.laplace_clipped_max([1], 2.0, 1.0, 1.0), "bound"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_large_sample_path_matches_the_pmf():
    """Beyond 10⁷ Gumbel draws the sampler uses the inverse CDF; same distribution."""
    grid = np.linspace(0, 1000, 2001)
    lo = ds.grid_losses_max(np.random.default_rng(0).exponential(100, 3000), grid)
    pmf = ds.shifted_inverse_pmf(lo, 0.5, 20)
    n = 6000
    draws = ds.shifted_inverse_sample(lo, grid, 0.5, 20, np.random.default_rng(8), n)  # 1.2e7 > 1e7
    idx = np.searchsorted(grid, draws)
    mean_exact = float(pmf @ grid)
    sd = math.sqrt(float(pmf @ (grid - mean_exact) ** 2))
    assert abs(grid[idx].mean() - mean_exact) < 5 * sd / math.sqrt(n)
    with pytest.raises(ValueError, match="size"):
        ds.shifted_inverse_sample(lo, grid, 0.5, 20, np.random.default_rng(8), 10**8)


def test_laplace_estimate_quantile_inverts_its_cdf_and_rmse_is_bias_plus_variance():
    est = ds.LaplaceEstimate(120.0, 35.0)
    p = np.array([1e-12, 0.05, 0.3, 0.5, 0.7, 0.95, 1 - 1e-9])
    q = est.quantile(p)
    assert np.all(np.diff(q) > 0) and est.quantile(0.5) == 120.0
    np.testing.assert_allclose(est.cdf(q), p, rtol=1e-6)
    with mp.workdps(30):
        for pi, qi in zip(p[1:-1], q[1:-1]):  # Laplace quantile, exactly
            z = mp.log(2 * mp.mpf(pi)) if pi < 0.5 else -mp.log(2 - 2 * mp.mpf(pi))
            assert qi == pytest.approx(float(120 + 35 * z), rel=1e-13, abs=1e-12)
    x = est.sample(np.random.default_rng(8), 400_000)
    assert est.rmse(100.0) == pytest.approx(math.sqrt(20.0**2 + 2 * 35.0**2), rel=1e-15)
    assert abs(np.sqrt(np.mean((x - 100.0) ** 2)) / est.rmse(100.0) - 1) < 0.01
    for bad in (0.0, 1.0, float("nan")):
        with pytest.raises(ValueError, match="p"):
            est.quantile(bad)
    with pytest.raises(ValueError, match="target"):
        est.rmse(float("inf"))


def test_grid_estimate_quantile_and_rmse_against_fractions_and_sampling():
    """GridEstimate: the quantile is the smallest grid point whose exact (rational) CDF reaches p,
    the RMSE the exact second moment about the target; both against draws from the law."""
    from fractions import Fraction

    grid = np.arange(0.0, 12.0)
    lo = ds.grid_losses_max(FIG1 + [9], grid)
    for pmf in (ds.shifted_inverse_pmf(lo, 1.0, 3), ds.binary_search_pmf(lo, 1.5, 3.0)):
        est = ds.GridEstimate(grid, pmf)
        ps = [0.005, 0.05, 0.3, 0.5, 0.95, 0.999]
        q = est.quantile(ps)
        for p, qi in zip(ps, q):
            cdf = list(itertools.accumulate(Fraction(float(v)) for v in pmf))
            j = next(i for i, c in enumerate(cdf) if c >= Fraction(p))
            assert qi == grid[j] and est.quantile(p) == qi
        for target in (0.0, 4.5, 11.0):
            exact = sum(Fraction(float(w)) * (Fraction(float(y)) - Fraction(target)) ** 2 for w, y in zip(pmf, grid))
            assert est.rmse(target) == pytest.approx(math.sqrt(exact), rel=1e-14)
        assert est.rmse([0.0, 4.5]).tolist() == [est.rmse(0.0), est.rmse(4.5)]
        draws = np.random.default_rng(4).choice(grid, size=200_000, p=pmf / pmf.sum())
        assert abs(np.sqrt(np.mean((draws - 4.5) ** 2)) / est.rmse(4.5) - 1) < 0.01
        assert np.quantile(draws, 0.5, method="inverted_cdf") == est.quantile(0.5)
    # a cumulative sum a rounding short of 1: the last grid point, never past the grid
    assert ds.GridEstimate([0.0, 1.0], [0.5, 0.5 - 1e-12]).quantile(1 - 1e-13) == 1.0


def test_accuracy_range_matches_enumeration():
    """[f(x) − DS^{⌊2τ⌋}, f(x)] by enumerating the subsets (Steinke 2023b, eq. (1)), and the
    accuracy probability is the pmf's mass on it."""
    items = [0, 1, 1, 3, 4, 4, 6]
    grid = np.arange(0.0, 8.0)
    lo = ds.grid_losses_max(items, grid)
    for tau in (0.5, 1.0, 1.7, 2.0, 3.2, 10.0):
        k = math.floor(2 * tau)
        worst = 0
        for r in range(min(k, len(items)) + 1):
            for removed in itertools.combinations(range(len(items)), r):
                keep = [items[i] for i in range(len(items)) if i not in removed]
                worst = max(worst, 6 - (max(keep) if keep else 0))
        assert ds.accuracy_range(lo, grid, tau) == (6.0 - worst, 6.0, float(worst))
        pmf = ds.shifted_inverse_pmf(lo, 1.0, max(1, round(tau)))
        assert ds.accuracy_probability(pmf, lo, grid, tau) == pmf[(grid >= 6.0 - worst) & (grid <= 6.0)].sum()


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: ds.GridEstimate([0, 0, 1], [0.5, 0.25, 0.25]), "grid"),
        (lambda: ds.GridEstimate([0, 1, 2], [0.5, 0.5]), "pmf"),
        (lambda: ds.GridEstimate([0, 1], [0.5, 0.6]), "pmf"),
        (lambda: ds.GridEstimate([0, 1], [1.5, -0.5]), "pmf"),
        (lambda: ds.GridEstimate([0, 1], [0.5, 0.5]).quantile(1.0), "p"),
        (lambda: ds.GridEstimate([0, 1], [0.5, 0.5]).rmse(float("nan")), "target"),
        (lambda: ds.accuracy_range([3, 1, 0], [0, 1, 2], 0.0), "tau"),
        (lambda: ds.accuracy_range([3, 1, 0], [0, 1], 1.0), "grid"),
        (lambda: ds.accuracy_range([1, 3, 0], [0, 1, 2], 1.0), "loss"),
    ],
)
def test_grid_estimate_and_accuracy_range_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
