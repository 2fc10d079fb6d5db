"""Lab-step benchmark of the backends of the four newer posts' labs (down sensitivity, privacy
filters, group privacy, mean estimation): what a lab calls per slider step, each timed as the
best of N repeats and printed with its ratio to the named 100 ms slider-step budget (≤ 1 meets
it). Cold and warm are separated where the backend caches (group privacy).

Run:  .venv/bin/python benchmarks/bench_sources.py

Not a test module (no ``test_`` functions); pytest does not collect it.
"""

from __future__ import annotations

import time

import numpy as np

from dpexplore.teaching import down_sensitivity as ds
from dpexplore.accounting import filters as fl
from dpexplore.teaching import group_privacy as gp
from dpexplore.teaching import mean_estimation as me

BUDGET = 0.100  # seconds: the slider-step budget (the named baseline)


def best_of(fn, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def line(label: str, seconds: float) -> None:
    print(f"  {label:<62s} {seconds * 1e3:9.2f} ms   {seconds / BUDGET:6.3f} × 100 ms step budget")


def main() -> int:
    rng = np.random.default_rng(0)
    print("down sensitivity (n = 10^5 items with a 10^7 outlier, |Y| = 10^4)")
    x = np.concatenate((rng.exponential(100, 100_000), [1e7]))
    grid = np.linspace(0, 2e7, 10_001)
    lo = ds.grid_losses_max(x, grid)

    def ds_step():
        losses = ds.grid_losses_max(x, grid)
        ds.shifted_inverse_pmf(losses, 1.0, ds.shifted_inverse_tau(1.0, 0.1, grid.size))
        s, t = ds.binary_search_params(grid.size, 0.1, rho=0.5)
        ds.binary_search_pmf(losses, s, t)
        ds.laplace_clipped_max(x, 0.0, 1000.0, 1.0)

    line("losses + both exact pmfs + baseline", best_of(ds_step))
    line(
        "10^4 seeded draws (inverse CDF: 10^8 > 10^7 Gumbel cap)",
        best_of(lambda: ds.shifted_inverse_sample(lo, grid, 1.0, 20, rng, 10_000)),
    )

    print("privacy filters (200 adaptive queries; 1000 requests)")
    fs = fl.filters_for_target(1.0, 1e-6)
    truth = rng.poisson(200, 200)
    line(
        "analyst simulation, all four filters",
        best_of(lambda: [fl.simulate_adaptive_analyst(f, truth, np.random.default_rng(1)) for f in fs.values()]),
    )
    line("ApproxDPFilter.run over 1000 requests", best_of(lambda: fs["approx"].run(np.full((1000, 2), [1e-3, 0.0]))))

    print("group privacy (sigma^2 = 100, r = 0.3)")
    line("Algorithm 1, 10^6 seeded draws", best_of(lambda: gp.algorithm1_sample(10_000, 100.0, 0.3, rng, 10**6), 3))
    gp._log_densities.cache_clear()
    line(
        "renyi_divergence, new count (cold)",
        best_of(lambda: (gp._log_densities.cache_clear(), gp.renyi_divergence(5.0, [2, 8], 100.0, 0.3)), 2),
    )
    gp.renyi_divergence(5.0, [2, 8], 100.0, 0.3)
    line(
        "renyi_divergence, same count, new orders (warm)", best_of(lambda: gp.renyi_divergence(5.0, [3, 9], 100.0, 0.3))
    )
    counts = (0, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
    t0 = time.perf_counter()
    gp.zcdp_like_curve(counts, 100.0, 0.3)
    line("zcdp_like_curve over 10 counts (first call; precompute)", time.perf_counter() - t0)
    line("zcdp_like_curve, same parameters (cached)", best_of(lambda: gp.zcdp_like_curve(counts, 100.0, 0.3)))

    print("mean estimation (2-D, kappa = 100, n = 1000)")
    cov = me.gaussian_covariance(100.0, 1.0, 0.5)
    line(
        "both error ellipses (exact output covariances)",
        best_of(
            lambda: (
                me.output_covariance(cov, 1000, 1.0, 1e-6, method="isotropic"),
                me.output_covariance(cov, 1000, 1.0, 1e-6, method="mahalanobis"),
            )
        ),
    )
    line(
        "200 seeded trials, both estimators",
        best_of(
            lambda: [
                me.simulate_errors(1000, cov, 1.0, 1e-6, np.random.default_rng(0), trials=200, method=m)
                for m in ("isotropic", "mahalanobis")
            ],
            3,
        ),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
