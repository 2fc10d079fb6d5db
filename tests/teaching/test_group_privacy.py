"""Algorithm 1 of Pujol & Desfontaines (2023) and the quadrature of its output density and Rényi
divergences: the post's figure numbers, exact moments, Monte Carlo against the density, the
Gaussian limits (r → 0; large counts), the proven ρ-zCDP bound, refinement errors, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpexplore.teaching import group_privacy as gp


def test_post_figure_numbers():
    """The post plots 10⁶ outputs for σ² = 100, r = 0.3 and a best-fit Gaussian with mean 10002.6
    and standard deviation 2995.1 (its Figure 1); it does not state the true count, and 10⁴ is
    the count its mean implies (the output is unbiased). Exact
    moments: mean 10⁴, std sqrt(100 + 0.09 (10⁸ + 100)) = 3000.02. The post's numbers lie within
    3 standard errors of these (SE of a mean of 10⁶ draws: 3.0; of a std: ≈ 2.1), and so does a
    seeded run of our sampler."""
    m = gp.algorithm1_moments(10_000, 100.0, 0.3)
    assert m["mean"] == 10_000.0 and m["std"] == pytest.approx(3000.0182, abs=1e-4)
    n = 1_000_000
    se_mean, se_std = m["std"] / math.sqrt(n), m["std"] / math.sqrt(2 * n)
    assert abs(10_002.6 - m["mean"]) < 3 * se_mean
    assert abs(2_995.1 - m["std"]) < 3 * se_std
    y = gp.algorithm1_sample(10_000, 100.0, 0.3, np.random.default_rng(2023), n)
    assert abs(y.mean() - m["mean"]) < 4 * se_mean
    assert abs(y.std() - m["std"]) < 4 * se_std
    assert gp.sigma2_from_rho(0.005) == 100.0


def test_density_matches_monte_carlo_and_moments_small_count():
    """A small count (heavy skew, log spike at 0): the density's bin masses against 4·10⁵ draws."""
    x, s2, r = 5.0, 100.0, 0.3
    edges = np.linspace(-60, 80, 71)
    fine = np.linspace(-60, 80, 70 * 40 + 1)
    fine = fine[fine != 0.0]
    p, err = gp.output_density(fine, x, s2, r)
    assert np.all(err <= 1e-3 * p.max())
    cdf = np.concatenate(([0.0], np.cumsum((p[1:] + p[:-1]) / 2 * np.diff(fine))))
    bins = np.interp(edges, fine, cdf)
    mass = np.diff(bins)
    draws = gp.algorithm1_sample(x, s2, r, np.random.default_rng(7), 400_000)
    freq = np.histogram(draws, edges)[0] / draws.size
    se = np.sqrt(mass * (1 - mass) / draws.size)
    assert np.all(np.abs(freq - mass) <= 5 * se + 2e-4)


@pytest.mark.parametrize("x", [0.0, 5.0, 300.0])
def test_density_integrates_to_one_with_the_exact_moments(x):
    s2, r = 100.0, 0.3
    m = gp.algorithm1_moments(x, s2, r)
    ys = np.concatenate(
        (
            np.linspace(x - 20 * m["std"], x + 20 * m["std"], 8001),
            np.geomspace(1e-9, 1, 400),
            -np.geomspace(1e-9, 1, 400),
        )
    )
    ys = np.unique(ys)
    p, _ = gp.output_density(ys, x, s2, r)
    w = np.diff(ys)
    total = np.sum((p[1:] + p[:-1]) / 2 * w)
    mean = np.sum(((p * ys)[1:] + (p * ys)[:-1]) / 2 * w)
    var = np.sum(((p * ys * ys)[1:] + (p * ys * ys)[:-1]) / 2 * w) - mean**2
    assert total == pytest.approx(1.0, abs=2e-3)
    assert mean == pytest.approx(x, abs=0.02 * m["std"])
    assert math.sqrt(var) == pytest.approx(m["std"], rel=5e-3)


def _gauss_renyi(a, m1, s1, m2, s2):
    sa = a * s2**2 + (1 - a) * s1**2
    return math.log(s2 / s1) + math.log(s2**2 / sa) / (2 * (a - 1)) + a * (m1 - m2) ** 2 / (2 * sa)


@pytest.mark.parametrize("x", [1_000.0, 10_000.0])
def test_large_counts_match_the_gaussian_limit(x):
    """For x ≫ σ/r the output is close to N(x, σ² + r²(x² + σ²)) (the post's figure), so D_α
    approaches the closed-form Rényi divergence between those Gaussians."""
    alphas = np.array([1.5, 2.0, 8.0, 32.0])
    d = gp.renyi_divergence(x, alphas, 100.0, 0.3)
    s1 = gp.algorithm1_moments(x, 100.0, 0.3)["std"]
    s2 = gp.algorithm1_moments(x + 1, 100.0, 0.3)["std"]
    want = np.array([_gauss_renyi(a, x, s1, x + 1, s2) for a in alphas])
    assert np.allclose(d["forward"], want, rtol=5e-3)
    assert np.all(d["error"] < 1e-3 * want)


def test_small_r_is_the_gaussian_mechanism():
    """r → 0: Y → X, so D_α → α/(2σ²) (the proven bound is then tight)."""
    alphas = np.array([2.0, 8.0])
    d = gp.renyi_divergence(0.0, alphas, 100.0, 0.05)
    assert np.allclose(d["forward"], alphas / 200.0, rtol=1e-2)
    assert np.allclose(d["reverse"], alphas / 200.0, rtol=1e-2)


@pytest.mark.parametrize("x", [0.0, 3.0, 20.0, 100.0])
def test_quadrature_respects_the_proven_bound(x):
    """Data processing: D_α(P_x‖P_{x+1}) ≤ D_α(N(x, σ²)‖N(x + 1, σ²)) = α/(2σ²) — the quadrature
    must agree within its stated error."""
    alphas = np.array([1.5, 3.0, 10.0, 40.0])
    d = gp.renyi_divergence(x, alphas, 100.0, 0.3)
    assert np.all(d["forward"] - d["error"] <= d["proven"])
    assert np.all(d["reverse"] - d["error"] <= d["proven"])
    assert np.all(d["error"] < 1e-3 * d["proven"])


def test_refinement_shrinks_the_error():
    e1 = gp.renyi_divergence(5.0, [4.0], 100.0, 0.3)["error"]
    e2 = gp.renyi_divergence(5.0, [4.0], 100.0, 0.3, refine=2)["error"]
    assert e2 < e1


def test_zcdp_like_curve():
    c = gp.zcdp_like_curve([0, 10, 100, 1000, 10_000], 100.0, 0.3, alphas=(2, 8, 32))
    assert c["rho_proven"] == 0.005
    assert np.all(c["rho_hat"] - c["error"] <= c["rho_proven"])
    assert np.all(np.diff(c["rho_hat"][1:]) < 0)  # larger groups: smaller ρ̂ (numerically)
    assert c["rho_hat"][-1] < 1e-3 * c["rho_proven"]
    again = gp.zcdp_like_curve([0, 10, 100, 1000, 10_000], 100.0, 0.3, alphas=(2, 8, 32))
    assert np.array_equal(again["rho_hat"], c["rho_hat"])
    # the full tables agree with renyi_divergence, and rho_hat is their max over α of D/α
    d = gp.renyi_divergence(10, [2, 8, 32], 100.0, 0.3)
    assert np.allclose(c["forward"][1], d["forward"]) and np.allclose(c["reverse"][1], d["reverse"])
    assert c["rho_hat"][1] == pytest.approx(max(np.max(d["forward"] / [2, 8, 32]), np.max(d["reverse"] / [2, 8, 32])))


def test_rho_hat_is_the_max_over_orders_by_enumeration():
    """rho_hat against a plain loop over the orders, row by row (and zcdp_like_curve uses it)."""
    rng = np.random.default_rng(3)
    alphas = np.array([1.5, 2.0, 3.0, 8.0, 64.0])
    fwd, rev = rng.uniform(0, 0.1, (4, 5)), rng.uniform(0, 0.1, (4, 5))
    err = rng.uniform(0, 1e-6, (4, 5))
    got = gp.rho_hat(fwd, rev, err, alphas)
    for i in range(4):
        vals = [(max(float(fwd[i, j]), float(rev[i, j])) / float(a), j) for j, a in enumerate(alphas)]
        best, j = max(vals, key=lambda v: v[0])
        assert got["rho_hat"][i] == best and got["argmax_alpha"][i] == alphas[j]
        assert got["error"][i] == float(err[i, j]) / float(alphas[j])
        one = gp.rho_hat(fwd[i], rev[i], err[i], alphas)  # one row: floats
        assert one == {"rho_hat": best, "error": float(err[i, j]) / float(alphas[j]), "argmax_alpha": float(alphas[j])}
    # the Gaussian mechanism: D_α = α/(2σ²) at every order, so ρ̂ = 1/(2σ²) exactly, at any order
    g = gp.rho_hat(alphas / 200.0, alphas / 200.0, np.zeros(5), alphas)
    assert g["rho_hat"] == gp.rho_from_sigma2(100.0) == 0.005
    c = gp.zcdp_like_curve([0, 10, 1000], 100.0, 0.3, alphas=(2, 8, 32))
    again = gp.rho_hat(c["forward"], c["reverse"], c["divergence_error"], c["alphas"])
    assert all(np.array_equal(c[k], again[k]) for k in ("rho_hat", "error", "argmax_alpha"))


def test_rho_from_sigma2_against_the_gaussian_renyi_divergence():
    """ρ = sup_α D_α(N(0, σ²)‖N(1, σ²))/α, the divergence by mpmath quadrature (Bun & Steinke
    2016, Proposition 1.6); vectorised; the inverse of sigma2_from_rho."""
    import mpmath as mp

    for s2 in (0.5, 3.0, 100.0):
        a = mp.mpf(3)
        pdf = lambda x, m: mp.exp(-((x - m) ** 2) / (2 * s2)) / mp.sqrt(2 * mp.pi * s2)  # noqa: E731
        d = mp.log(mp.quad(lambda x: pdf(x, 0) ** a * pdf(x, 1) ** (1 - a), [-mp.inf, 0, 1, mp.inf])) / (a - 1)
        assert gp.rho_from_sigma2(s2) == pytest.approx(float(d / a), rel=1e-12)
        assert gp.sigma2_from_rho(gp.rho_from_sigma2(s2)) == pytest.approx(s2, rel=1e-15)
    assert gp.rho_from_sigma2(np.array([0.5, 2.0])).tolist() == [1.0, 0.25]


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: gp.algorithm1_sample(10, -1.0, 0.3, np.random.default_rng()), "sigma2"),
        (lambda: gp.algorithm1_sample(10, 1.0, 0.3, 5), "rng"),
        (lambda: gp.algorithm1_sample(10, 1.0, 0.3, np.random.default_rng(), 0), "size"),
        (lambda: gp.renyi_divergence(10, 1.0, 100.0, 0.3), "alpha"),
        (lambda: gp.renyi_divergence(10, 2.0, 100.0, 0.001), "r"),
        (lambda: gp.renyi_divergence(float("nan"), 2.0, 100.0, 0.3), "x"),
        (lambda: gp.output_density([1.0], 10, 0.0, 0.3), "sigma2"),
        (lambda: gp.sigma2_from_rho(0), "rho"),
        (lambda: gp.rho_from_sigma2(0.0), "sigma2"),
        (lambda: gp.rho_from_sigma2([1.0, float("inf")]), "sigma2"),
        (lambda: gp.rho_hat([0.1], [0.1], [0.0], [1.0]), "alphas"),
        (lambda: gp.rho_hat([0.1, 0.2], [0.1], [0.0], [2.0]), "forward"),
        (lambda: gp.rho_hat([0.1], [float("nan")], [0.0], [2.0]), "reverse"),
        (lambda: gp.rho_hat([0.1], [0.1], [-1.0], [2.0]), "error"),
        (lambda: gp.rho_hat([[0.1]], [0.1], [0.0], [2.0]), "same shape"),
        (lambda: gp.renyi_divergence(10, 2.0, 100.0, 0.3, refine=100), "refine"),
        (lambda: gp.zcdp_like_curve([], 100.0, 0.3), "counts"),
        (lambda: gp.zcdp_like_curve(np.arange(1000.0), 100.0, 0.3), "counts"),
        (lambda: gp.zcdp_like_curve([1.0], 100.0, 0.3, alphas=np.linspace(2, 100, 100)), "alphas"),
        (lambda: gp.output_density(np.zeros(200_001), 10, 100.0, 0.3), "y"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("x", [0.0, 5.0, 60.0])
def test_density_against_adaptive_quadrature(x):
    """An independent evaluation of p_x(y) = ∫ φ_σ(t − x) φ_{r|t|}(y − t) dt (Y | X = t ~ N(t, (rt)²)):
    scipy's adaptive quad in u = log|t| for each sign of t (which resolves the spike of width r|y|
    at t ≈ y and the approach to t = 0), with break points around log|y|, at points including the
    logarithmic spike near y = 0 and the tails. The difference must lie within the stated error."""
    from scipy import integrate, stats

    s2, r, sigma = 100.0, 0.3, 10.0
    ys = np.array([-40.0, -3.0, -1e-3, 2e-4, 0.5, 7.0, x + 0.1, x + 25.0, 90.0])
    got, err = gp.output_density(ys, x, s2, r)

    for y, g, e in zip(ys, got, err):

        def h(u, sgn):
            t = sgn * math.exp(u)
            return stats.norm.pdf(t, x, sigma) * stats.norm.pdf(y, t, r * abs(t)) * abs(t)

        ref = 0.0
        top = math.log(abs(x) + 15 * sigma)
        for sgn in (1.0, -1.0):
            mids = sorted(math.log(abs(y)) + d for d in (-1.0, -0.3, 0.0, 0.3, 1.0))
            edges = [math.log(1e-12)] + [m for m in mids if math.log(1e-12) < m < top] + [top]
            ref += sum(
                integrate.quad(h, a, b, args=(sgn,), epsabs=0.0, epsrel=1e-12, limit=500)[0]
                for a, b in zip(edges[:-1], edges[1:])
            )
        assert abs(g - ref) <= e + 1e-12 * ref + 1e-15, (y, g, ref, e)
        assert abs(g - ref) <= 1e-3 * ref + 1e-15
