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
    iso = me._clip_rows(x, clip).mean(0) - me._clip_rows(x2, clip).mean(0)
    assert np.linalg.norm(iso) <= 2 * clip / n * (1 + 1e-12)
    _, inv_half = me._sqrtm(cov)
    mah = me._clip_rows(x @ inv_half, clip).mean(0) - me._clip_rows(x2 @ inv_half, clip).mean(0)
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
    c = me._clip_rows(z, clip)
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
    iso_base = me._clip_rows(x, 2.5).mean(0)
    iso_mapped = me._clip_rows(x @ a.T, 2.5).mean(0)
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
