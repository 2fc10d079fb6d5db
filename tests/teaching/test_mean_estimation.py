"""Clipped Gaussian mean estimators (isotropic vs Mahalanobis clipping; Kamath 2023): sensitivity and
calibration, exact clipped covariances, Monte Carlo against the exact output covariance, the
sqrt(κ) growth of the isotropic estimator's Mahalanobis error, affine invariance, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpexplore.teaching import mean_estimation as me
from dpexplore.mechanisms import Gaussian


def test_noise_sigma_is_the_calibrated_gaussian():
    sigma = me.noise_sigma(0.5, 1e-6, 3.0, 100)
    assert Gaussian(sigma, 6.0 / 100).delta(0.5) <= 1e-6
    assert Gaussian(sigma * (1 - 1e-6), 6.0 / 100).delta(0.5) > 1e-6  # least such σ


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 30), st.integers(0, 10_000), st.floats(0.1, 10.0), st.floats(1.0, 50.0))
def test_clipped_means_have_sensitivity_2c_over_n(n, seed, clip, kappa):
    """Replacing one point moves the (whitened) clipped mean by at most 2C/n in ℓ₂: the
    sensitivity the calibration uses."""
    rng = np.random.default_rng(seed)
    cov = me.gaussian_covariance(kappa, 1.0, rng.uniform(0, math.pi))
    x = rng.normal(scale=20.0, size=(n, 2))
    x2 = x.copy()
    x2[rng.integers(n)] = rng.normal(scale=1e3, size=2)
    iso = me.clipped_average(x, clip) - me.clipped_average(x2, clip)
    assert np.linalg.norm(iso) <= 2 * clip / n * (1 + 1e-12)
    _, inv_half = me._sqrtm(cov)
    mah = me.clipped_average(x @ inv_half, clip) - me.clipped_average(x2 @ inv_half, clip)
    assert np.linalg.norm(mah) <= 2 * clip / n * (1 + 1e-12)


@pytest.mark.parametrize("d,clip", [(1, 0.7), (2, 1.5), (3, 2.0), (2, 50.0)])
def test_mahalanobis_clipped_covariance_closed_form(d, clip):
    """m₂ = E[min(‖Z‖², C²)] against direct 1-D quadrature over the χ_d radius."""
    r = np.linspace(0, clip, 200_001)
    pdf = stats.chi.pdf(r, d)
    m2 = np.trapezoid(r * r * pdf, r) + clip * clip * stats.chi.sf(clip, d)
    cov = np.diag(np.arange(1.0, d + 1.0))
    got = me.clipped_covariance(cov, clip, "mahalanobis")
    assert np.allclose(got, (m2 / d) * cov, rtol=1e-6)


def test_isotropic_clipped_covariance_equals_mahalanobis_when_spherical():
    for clip in (0.5, 1.2, 3.0):
        a = me.clipped_covariance(np.eye(2), clip, "isotropic")
        b = me.clipped_covariance(np.eye(2), clip, "mahalanobis")
        assert np.allclose(a, b, rtol=1e-12)
    # 1-D: isotropic clipping at C of N(0, λ) is whitened clipping at C/sqrt(λ)
    assert np.allclose(
        me.clipped_covariance([[4.0]], 3.0, "isotropic"), me.clipped_covariance([[4.0]], 1.5, "mahalanobis"), rtol=1e-14
    )


def test_isotropic_clipped_covariance_against_monte_carlo():
    cov = me.gaussian_covariance(25.0, 1.0, 0.4)
    clip = 3.0
    exact = me.clipped_covariance(cov, clip, "isotropic")
    z = np.random.default_rng(5).multivariate_normal(np.zeros(2), cov, size=1_000_000)
    c = z * np.minimum(1.0, clip / np.linalg.norm(z, axis=1, keepdims=True))  # clip_C, point by point
    mc = c.T @ c / len(c)
    assert np.allclose(exact, mc, atol=4e-3 * np.abs(exact).max())
    # and against a brute-force 2-D quadrature on a fine grid in the eigenbasis
    lam = np.linalg.eigvalsh(cov)
    u = np.linspace(-9, 9, 3001)
    g1, g2 = np.meshgrid(u * math.sqrt(lam[0]), u * math.sqrt(lam[1]), indexing="ij")
    w = np.exp(-0.5 * (g1**2 / lam[0] + g2**2 / lam[1]))
    w /= w.sum()
    shrink = np.minimum(1.0, clip**2 / np.maximum(g1**2 + g2**2, 1e-300))
    brute = np.array([np.sum(w * g1**2 * shrink), np.sum(w * g2**2 * shrink)])
    assert np.allclose(np.sort(np.linalg.eigvalsh(exact)), np.sort(brute), rtol=2e-4)


@pytest.mark.parametrize("method", ["isotropic", "mahalanobis"])
def test_simulation_matches_the_exact_output_covariance(method):
    cov = me.gaussian_covariance(16.0, 2.0, 0.3)
    n, eps, delta = 200, 1.0, 1e-5
    sim = me.simulate_errors(
        n, cov, eps, delta, np.random.default_rng(11), trials=4000, mean=[5.0, -3.0], method=method
    )
    exact = me.output_covariance(cov, n, eps, delta, method=method)
    est_cov = np.cov(sim["estimates"].T)
    assert np.allclose(est_cov, exact["cov"], rtol=0.1, atol=0.05 * np.abs(exact["cov"]).max())
    mse = np.mean(sim["mahalanobis"] ** 2)
    assert mse == pytest.approx(exact["mahalanobis_mse"], rel=0.08)
    assert np.mean(sim["l2"] ** 2) == pytest.approx(exact["l2_mse"], rel=0.08)
    assert np.allclose(sim["estimates"].mean(0), [5.0, -3.0], atol=4 * math.sqrt(est_cov.max() / 4000))


def test_condition_number_hurts_only_isotropic_clipping():
    """With the default clips (covering 99% of the mass), the Mahalanobis estimator's error does not
    depend on Σ at all (affine invariance), while the isotropic one's grows like sqrt(κ)."""
    n, eps, delta = 1000, 1.0, 1e-6
    mah = [
        me.output_covariance(me.gaussian_covariance(k), n, eps, delta, method="mahalanobis")["mahalanobis_mse"]
        for k in (1.0, 10.0, 100.0, 1000.0)
    ]
    iso = [
        me.output_covariance(me.gaussian_covariance(k), n, eps, delta, method="isotropic")["mahalanobis_mse"]
        for k in (1.0, 10.0, 100.0, 1000.0)
    ]
    assert np.allclose(mah, mah[0], rtol=1e-9)
    assert iso[0] == pytest.approx(mah[0], rel=1e-12)
    assert np.all(np.diff(iso) > 0) and iso[-1] > 100 * mah[-1]
    # exactly: the isotropic noise σ² I with σ ∝ C = sqrt(λ_max) r_β costs σ² tr(Σ⁻¹) in
    # Mahalanobis MSE; with λ = (κ, 1) that is σ₁² κ (1/κ + 1) = σ₁² (1 + κ), σ₁ the κ = 1 value / sqrt 1
    s1 = me.output_covariance(np.eye(2), n, eps, delta, method="isotropic")["sigma"]
    for k in (10.0, 1000.0):
        out = me.output_covariance(me.gaussian_covariance(k), n, eps, delta, method="isotropic")
        assert out["sigma"] == pytest.approx(s1 * math.sqrt(k), rel=1e-9)
        noise_part = np.trace(np.linalg.inv(me.gaussian_covariance(k)) @ out["noise_cov"])
        assert noise_part == pytest.approx(s1**2 * (1 + k), rel=1e-9)


def test_mahalanobis_clipping_is_affine_equivariant():
    """Data mapped by x ↦ Ax + b with Σ = AAᵀ: the noiseless Mahalanobis-clipped mean maps the same
    way (Σ^{-1/2}A is orthogonal and ℓ₂ clipping commutes with rotations), and the noise N(0, σ²Σ)
    is the image of N(0, σ²I) — so the Mahalanobis error's law does not depend on Σ."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(300, 2)) * [1.0, 3.0]
    a = np.array([[3.0, 1.0], [0.0, 0.5]])
    b = np.array([10.0, -4.0])
    cov = a @ a.T
    base = me._mahalanobis_clipped_average(x, np.eye(2), 2.5, np.zeros(2))
    mapped = me._mahalanobis_clipped_average(x @ a.T + b, cov, 2.5, b)
    assert np.allclose(mapped, base @ a.T + b, rtol=1e-12, atol=1e-12)
    # the isotropic estimator is NOT equivariant once clipping is active
    iso_base = me.clipped_average(x, 2.5)
    iso_mapped = me.clipped_average(x @ a.T, 2.5)
    assert not np.allclose(iso_mapped, iso_base @ a.T, rtol=1e-3)
    # seeded: same seed, same draw of the whitened noise
    e0 = me.mahalanobis_clipped_mean(x, np.eye(2), 1.0, 1e-5, 2.5, np.random.default_rng(9), center=np.zeros(2))
    e1 = me.mahalanobis_clipped_mean(x @ a.T + b, cov, 1.0, 1e-5, 2.5, np.random.default_rng(9), center=b)
    sigma = me.noise_sigma(1.0, 1e-5, 2.5, 300)
    z = np.random.default_rng(9).standard_normal(2)
    assert np.allclose(e0, base + sigma * z)
    half, _ = me._sqrtm(cov)
    assert np.allclose(e1, mapped + sigma * z @ half)


def test_error_curve_falls_with_n_and_matches_the_exact_rmse():
    cov = me.gaussian_covariance(50.0, 1.0, 0.2)
    out = me.error_curve([50, 200, 1000], cov, 1.0, 1e-6, np.random.default_rng(4), trials=400, method="isotropic")
    assert np.all(np.diff(out["rmse_mahalanobis"]) < 0)
    # E‖e‖ ≤ sqrt(E‖e‖²) (Jensen) and is close to it for a 2-D Gaussian error
    assert np.all(out["mc_mahalanobis"] <= out["rmse_mahalanobis"] + 4 * out["mc_mahalanobis_se"])
    assert np.all(out["mc_mahalanobis"] >= 0.7 * out["rmse_mahalanobis"])


def test_ellipse_points_hold_the_stated_mass():
    cov = me.gaussian_covariance(9.0, 1.5, 0.7)
    pts = me.ellipse_points(cov, center=[1.0, -2.0], level=0.9)
    inv = np.linalg.inv(cov)
    d = pts - [1.0, -2.0]
    assert np.allclose(np.einsum("ij,jk,ik->i", d, inv, d), stats.chi2.ppf(0.9, 2))
    z = np.random.default_rng(1).multivariate_normal([1.0, -2.0], cov, 200_000) - [1.0, -2.0]
    inside = np.einsum("ij,jk,ik->i", z, inv, z) <= stats.chi2.ppf(0.9, 2)
    assert inside.mean() == pytest.approx(0.9, abs=3e-3)


def test_covering_radius_and_default_clip():
    assert me.covering_radius(1, 0.05) == pytest.approx(1.959963985, rel=1e-9)
    z = np.random.default_rng(0).normal(size=(200_000, 2))
    assert np.mean(np.linalg.norm(z, axis=1) > me.covering_radius(2, 0.01)) == pytest.approx(0.01, abs=1e-3)
    assert me.default_clip(np.diag([9.0, 1.0]), "isotropic") == pytest.approx(3 * me.covering_radius(2, 0.01))


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: me.noise_sigma(0.0, 0.0, 1.0, 10), "delta"),
        (lambda: me.noise_sigma(1.0, 1e-5, -1.0, 10), "clip"),
        (lambda: me.noise_sigma(1.0, 1e-5, 1.0, 0), "n"),
        (lambda: me.isotropic_clipped_mean(np.ones(3), 1.0, 1e-5, 1.0, np.random.default_rng()), "x"),
        (
            lambda: me.mahalanobis_clipped_mean(
                np.ones((3, 2)), [[1, 2], [2, 1]], 1.0, 1e-5, 1.0, np.random.default_rng()
            ),
            "cov",
        ),
        (
            lambda: me.mahalanobis_clipped_mean(np.ones((3, 2)), np.eye(3), 1.0, 1e-5, 1.0, np.random.default_rng()),
            "cov",
        ),
        (lambda: me.output_covariance(np.eye(2), 10, 1.0, 1e-5, method="l2"), "method"),
        (lambda: me.gaussian_covariance(0.5), "kappa"),
        (lambda: me.simulate_errors(10, np.eye(2), 1.0, 1e-5, 3), "rng"),
        (lambda: me.simulate_errors(10**6, np.eye(2), 1.0, 1e-5, np.random.default_rng(), trials=100), "trials"),
        (lambda: me.covering_radius(2, 1.0), "beta"),
        (lambda: me.ellipse_points(np.eye(3)), "cov"),
        (lambda: me.ellipse_points(np.eye(2), level=1.0), "level"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("method", ["mahalanobis", "isotropic"])
def test_exact_rmse_is_output_covariance_at_every_n(method):
    cov = me.gaussian_covariance(9.0, 1.0, 30.0)
    ns = np.array([10, 57, 1000, 10**6])
    ex = me.exact_rmse(ns, cov, 0.8, 1e-6, method=method)
    assert ex["ns"].tolist() == ns.tolist()
    for i, n in enumerate(ns):
        o = me.output_covariance(cov, int(n), 0.8, 1e-6, method=method)
        assert ex["sigma"][i] == o["sigma"]
        assert ex["rmse_mahalanobis"][i] == pytest.approx(math.sqrt(o["mahalanobis_mse"]), rel=1e-14)
        assert ex["rmse_l2"][i] == pytest.approx(math.sqrt(o["l2_mse"]), rel=1e-14)
    # the Mahalanobis estimator's error does not depend on the condition number; more data helps
    assert np.all(np.diff(ex["rmse_mahalanobis"]) < 0)


def test_exact_rmse_checks_its_arguments():
    for bad in ([], [0], [2.5], [float("inf")]):
        with pytest.raises(ValueError, match="ns"):
            me.exact_rmse(bad, np.eye(2), 1.0, 1e-5)
    with pytest.raises(ValueError, match="clip"):
        me.exact_rmse([10], np.eye(2), 1.0, 1e-5, clip=-1.0)
    with pytest.raises(ValueError, match="method"):
        me.exact_rmse([10], np.eye(2), 1.0, 1e-5, method="l1")


# -- the estimators' two steps, the ellipse test, the non-private baseline --------------------------
def test_clipped_average_against_a_loop_and_vectorised_over_trials():
    """(1/n) Σ clip_C(x_i − c), clip_C(z) = z min(1, C/‖z‖), against a plain Python loop (math.hypot),
    for each trial of a (trials, n, d) stack; a point at the centre stays 0."""
    rng = np.random.default_rng(21)
    x = rng.normal(scale=3.0, size=(5, 40, 2))
    x[0, 0] = [1.0, -2.0]  # exactly at the centre
    c, clip = np.array([1.0, -2.0]), 2.5
    got = me.clipped_average(x, clip, c)
    assert got.shape == (5, 2)
    for t in range(5):
        acc = [0.0, 0.0]
        for p in x[t]:
            z = p - c
            r = math.hypot(*z)
            f = 1.0 if r <= clip else clip / r
            acc = [acc[0] + f * z[0], acc[1] + f * z[1]]
        np.testing.assert_allclose(got[t], np.array(acc) / 40, rtol=1e-13, atol=1e-15)
        assert np.array_equal(got[t], me.clipped_average(x[t], clip, c))
    # 3-D points, no clipping active: the plain mean
    y = rng.normal(size=(30, 3))
    np.testing.assert_allclose(me.clipped_average(y, 1e6), y.mean(0), rtol=1e-13, atol=1e-16)


def test_noisy_clipped_mean_is_the_estimators_noise_step():
    """The estimators are clipped_average then noisy_clipped_mean with their rng's draws; the noise
    law is N(0, σ² I) (isotropic) or N(0, σ² Σ) (Mahalanobis): sampled covariance within 5 %."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=(200, 2)) * [4.0, 1.0]
    cov = me.gaussian_covariance(16.0, 1.0, 0.3)
    ctr = np.array([0.3, -0.2])
    sigma = me.noise_sigma(1.0, 1e-6, 2.0, 200)
    xi = np.random.default_rng(7).standard_normal(2)
    iso = me.isotropic_clipped_mean(x, 1.0, 1e-6, 2.0, np.random.default_rng(7), center=ctr)
    assert np.array_equal(iso, ctr + me.clipped_average(x, 2.0, ctr) + sigma * xi)
    assert np.array_equal(
        iso, me.noisy_clipped_mean(me.clipped_average(x, 2.0, ctr), 200, 1.0, 1e-6, 2.0, xi, center=ctr)
    )
    mah = me.mahalanobis_clipped_mean(x, cov, 1.0, 1e-6, 2.0, np.random.default_rng(7), center=ctr)
    half, inv_half = me._sqrtm(cov)
    np.testing.assert_allclose(
        mah, ctr + (me.clipped_average((x - ctr) @ inv_half, 2.0) + sigma * xi) @ half, rtol=1e-14
    )
    # the noise law, vectorised over 200 000 draws
    xis = np.random.default_rng(8).standard_normal((200_000, 2))
    for kw, want in (({}, sigma**2 * np.eye(2)), ({"cov": cov}, sigma**2 * cov)):
        out = me.noisy_clipped_mean(np.zeros(2), 200, 1.0, 1e-6, 2.0, xis, **kw)
        np.testing.assert_allclose(np.cov(out.T), want, rtol=0.05, atol=0.05 * sigma**2)


def test_inside_ellipse_against_the_chi2_quantile_and_sampling():
    """vᵀ Cov⁻¹ v ≤ χ²₂(level) with scipy's χ²₂ quantile; and ``level`` of Gaussian draws fall inside;
    the boundary drawn by ellipse_points is on the edge."""
    cov = me.gaussian_covariance(9.0, 1.0, 0.6)
    ctr = np.array([2.0, -1.0])
    pts = np.random.default_rng(5).multivariate_normal(ctr, cov, size=100_000)
    for level in (0.5, 0.9, 0.95):
        inside = me.inside_ellipse(pts, cov, ctr, level)
        v = pts - ctr
        q = np.einsum("ti,ij,tj->t", v, np.linalg.inv(cov), v)
        assert np.array_equal(inside, q <= stats.chi2.ppf(level, 2))  # no draw within ulps of the edge
        assert abs(inside.mean() - level) < 5 * math.sqrt(level * (1 - level) / pts.shape[0])
        edge = me.ellipse_points(cov, ctr, level, points=37)
        assert me.inside_ellipse(ctr + 0.999 * (edge - ctr), cov, ctr, level).all()
        assert not me.inside_ellipse(ctr + 1.001 * (edge - ctr), cov, ctr, level).any()
    assert me.inside_ellipse(ctr, cov, ctr, 0.5).shape == ()


def test_nonprivate_rmse_against_sampling():
    """sqrt(d/n) and sqrt(tr Σ / n), against the RMS errors of simulated empirical means."""
    cov = np.array([[5.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]])
    ns = np.array([4.0, 50.0])
    out = me.nonprivate_rmse(ns, cov)
    np.testing.assert_allclose(out["mahalanobis"], np.sqrt(3 / ns), rtol=1e-15)
    np.testing.assert_allclose(out["l2"], np.sqrt(8.0 / ns), rtol=1e-15)
    rng = np.random.default_rng(6)
    _, inv_half = me._sqrtm(cov)
    for n, m, l2 in zip(ns.astype(int), out["mahalanobis"], out["l2"]):
        means = rng.multivariate_normal(np.zeros(3), cov, size=(20_000, n)).mean(axis=1)
        assert np.sqrt(np.mean(np.sum((means @ inv_half) ** 2, axis=1))) == pytest.approx(m, rel=0.02)
        assert np.sqrt(np.mean(np.sum(means**2, axis=1))) == pytest.approx(l2, rel=0.02)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: me.clipped_average(np.zeros(3), 1.0), "x"),
        (lambda: me.clipped_average(np.zeros((2, 2)), 0.0), "clip"),
        (lambda: me.clipped_average(np.zeros((2, 2)), 1.0, [0.0]), "center"),
        (lambda: me.noisy_clipped_mean([0.0, 0.0], 10, 1.0, 1e-6, 1.0, [0.0]), "noise"),
        (lambda: me.noisy_clipped_mean([0.0, float("nan")], 10, 1.0, 1e-6, 1.0, [0.0, 0.0]), "average"),
        (lambda: me.noisy_clipped_mean([0.0, 0.0], 0, 1.0, 1e-6, 1.0, [0.0, 0.0]), "n"),
        (lambda: me.noisy_clipped_mean([0.0, 0.0], 10, -1.0, 1e-6, 1.0, [0.0, 0.0]), "eps"),
        (lambda: me.noisy_clipped_mean([0.0, 0.0], 10, 1.0, 1e-6, 1.0, [0.0, 0.0], cov=np.eye(3)), "cov"),
        (lambda: me.inside_ellipse([0.0, 0.0], np.eye(2), level=1.0), "level"),
        (lambda: me.inside_ellipse([0.0, 0.0, 0.0], np.eye(2)), "points"),
        (lambda: me.inside_ellipse([0.0, 0.0], np.eye(3)), "cov"),
        (lambda: me.nonprivate_rmse([0.5], np.eye(2)), "ns"),
        (lambda: me.nonprivate_rmse([10.0], [[1.0, 2.0], [2.0, 1.0]]), "cov"),
    ],
)
def test_new_helpers_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
