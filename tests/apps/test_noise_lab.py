"""Noise lab (dpexplore/apps/noise_lab.py): the printed scales and variances against mpmath
closed forms (Vinterbo 2022 Theorems 3, 4; Balle & Wang 2018 Thm 8) and the backend calibrations (which
``min_scale`` only dispatches to), Vinterbo 2022 Theorem 6 (Gaussian scale unbounded as δ → 0, Laplace
and Logistic bounded), Figure 1 ratio maps, seeded sample histograms against the exact CDF,
invalid settings, and the controller (in-place updates, message on bad values)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from dpexplore.apps import APPS
from dpexplore.apps import noise_lab as nl
from dpexplore.apps.noise_lab import NoiseSpec, build_noise_lab, compute_noise_lab, min_scale
from dpexplore.ui.plotwidget import PlotlyWidget
from dpexplore.mechanisms import Gaussian, Laplace, Logistic, Subbotin

mp.mp.dps = 50
REL = 1e-9


def mp_laplace_scale(eps, delta):
    """Vinterbo 2022 Theorem 3: b = Δ/(ε − 2 log(1 − δ))."""
    return 1 / (mp.mpf(eps) - 2 * mp.log(1 - mp.mpf(delta)))


def mp_logistic_scale(eps, delta):
    """Vinterbo 2022 Theorem 4: x = (c − sqrt(δ(c² − 1 + δ)))/(c² + δ), c = e^{ε/2}, s = Δ/(−2 log x)."""
    e, d = mp.mpf(eps), mp.mpf(delta)
    c = mp.exp(e / 2)
    x = (c - mp.sqrt(d * (c * c - 1 + d))) / (c * c + d)
    return 1 / (-2 * mp.log(x))


def mp_gauss_delta(sigma, eps):
    """Balle & Wang 2018, Theorem 8 (Δ = 1)."""
    s, e = mp.mpf(sigma), mp.mpf(eps)
    return mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s)


def mp_gauss_scale(eps, delta):
    return mp.exp(
        mp.findroot(
            lambda ls: mp.log(mp_gauss_delta(mp.exp(ls), eps)) - mp.log(delta),
            mp.log(Gaussian.calibrate(eps, delta).sigma),
        )
    )


@pytest.mark.parametrize("eps, delta", [(1.0, 1e-5), (0.1, 1e-10), (5.0, 0.3), (0.01, 0.5)])
def test_printed_scales_and_variances_match_closed_forms(eps, delta):
    r = compute_noise_lab(NoiseSpec(eps, delta, 3.0, 500, 0))
    b, s, sigma, sub = (mp.mpf(x) for x in r.scales)
    assert abs(b / mp_laplace_scale(eps, delta) - 1) < REL
    assert abs(s / mp_logistic_scale(eps, delta) - 1) < REL
    assert abs(sigma / mp_gauss_scale(eps, delta) - 1) < REL
    assert mp_gauss_delta(r.scales[2], eps) <= delta * (1 + 1e-12)
    # variances: 2b², π²s²/3, σ², s² r^{2/r} Γ(3/r)/Γ(1/r)
    rr = mp.mpf(3)
    want = [2 * b**2, mp.pi**2 * s**2 / 3, sigma**2, sub**2 * rr ** (2 / rr) * mp.gamma(3 / rr) / mp.gamma(1 / rr)]
    for got, w in zip(r.variances, want):
        assert abs(mp.mpf(got) / w - 1) < REL
    # every printed scale is the backend's calibration
    assert r.scales[0] == Laplace.calibrate(eps, delta).scale
    assert r.scales[1] == Logistic.calibrate(eps, delta).scale
    assert r.scales[2] == Gaussian.calibrate(eps, delta).sigma
    assert r.scales[3] == Subbotin.calibrate(eps, delta, shape=3.0).scale
    # the ratio at the chosen point is the pair's variance ratio
    assert r.ratio_here == pytest.approx(r.variances[0] / r.variances[2], rel=1e-15)


def test_min_scale_is_the_backend_calibration():
    """min_scale only dispatches: the numbers are calibrate's, scalar or array (its safety and
    tightness are tested with the mechanisms, tests/mechanisms/test_calibrate_grid.py)."""
    d = nl.CURVE_DELTA
    assert min_scale("Gaussian", 0.3, 1e-7) == Gaussian.calibrate(0.3, 1e-7).sigma
    assert min_scale("Subbotin", 0.3, 1e-7, 2.5) == Subbotin.calibrate(0.3, 1e-7, shape=2.5).scale
    np.testing.assert_array_equal(min_scale("Gaussian", 1.0, d), Gaussian.calibrate(1.0, d).sigma)
    np.testing.assert_array_equal(min_scale("Subbotin", 1.0, d, 3.0), Subbotin.calibrate(1.0, d, shape=3.0).scale)
    # the table's scalar and the curve's point at the same δ are one number
    assert min_scale("Subbotin", 1.0, d[30], 3.0) == min_scale("Subbotin", 1.0, d, 3.0)[30]
    assert isinstance(min_scale("Gaussian", 1.0, 1e-5), float)
    # mixed shapes: r = 1 is Laplace's closed form, the others Subbotin's search
    got = min_scale("Subbotin", 0.7, 1e-3, np.array([1.0, 3.0]))
    assert got.tolist() == [Laplace.calibrate(0.7, 1e-3).scale, Subbotin.calibrate(0.7, 1e-3, shape=3.0).scale]


def test_subbotin_shape_one_is_laplace():
    assert min_scale("Subbotin", 0.7, 1e-3, 1.0) == Laplace.calibrate(0.7, 1e-3).scale


def test_theorem6_gaussian_unbounded_laplace_logistic_bounded():
    r = compute_noise_lab(NoiseSpec(1.0, 1e-5, 2.5, 500, 0))
    lap, logi, gau, sub = r.curve_scales
    assert r.curve_delta[0] == 1e-300 and np.all(np.diff(r.curve_delta) > 0)
    # Laplace and Logistic below Δ/ε everywhere, Gaussian and Subbotin grow as δ → 0
    assert np.all(lap <= 1.0 + 1e-12) and np.all(logi <= 1.0 + 1e-12)
    assert np.all(np.diff(gau) < 0) and np.all(np.diff(sub) < 0)
    assert gau[0] > 30 and sub[0] > 30
    # Gaussian tail: σ ~ sqrt(2 log(1/δ))/ε for δ → 0 (within 10 % at δ = 1e-300)
    assert gau[0] == pytest.approx(math.sqrt(2 * 300 * math.log(10)), rel=0.1)
    # every curve point is the backend's calibration
    np.testing.assert_array_equal(gau, Gaussian.calibrate(1.0, r.curve_delta).sigma)
    np.testing.assert_array_equal(sub, Subbotin.calibrate(1.0, r.curve_delta, shape=2.5).scale)
    np.testing.assert_array_equal(lap, Laplace.calibrate(1.0, r.curve_delta).scale)


def test_ratio_maps_are_figure1():
    maps = nl.ratio_maps()
    E, D = np.meshgrid(nl.GRID_EPS, nl.GRID_DELTA)
    i, j = 17, 23
    e, d = float(E[i, j]), float(D[i, j])
    b, s, g = mp_laplace_scale(e, d), mp_logistic_scale(e, d), mp_gauss_scale(e, d)
    va, vl, vg = 2 * b**2, mp.pi**2 * s**2 / 3, g**2
    assert abs(maps["Laplace vs Logistic"][i, j] / (va / vl) - 1) < 1e-8
    assert abs(maps["Laplace vs Gaussian"][i, j] / (va / vg) - 1) < 1e-8
    assert abs(maps["Logistic vs Gaussian"][i, j] / (vl / vg) - 1) < 1e-8
    # Vinterbo 2022 §3.4: Laplace beats the Gaussian for small δ (ratio → 0 as δ → 0), loses for large δ, small ε
    assert maps["Laplace vs Gaussian"][0].max() < 1
    assert maps["Laplace vs Gaussian"][-1, 0] > 1
    # Vinterbo 2022 Corollary 1 (Laplace vs Logistic): for δ = 0 the ratio is 6/π² < 1
    assert maps["Laplace vs Logistic"][0, 0] == pytest.approx(6 / math.pi**2, rel=1e-3)


def test_sample_histograms_match_the_exact_cdf():
    """Seeded: the histogram mass in [−a, a] equals F(a) − F(−a) within 5 standard errors."""
    n = 20_000
    r = compute_noise_lab(NoiseSpec(1.0, 1e-3, 3.0, n, 7))
    w = r.bin_centers[1] - r.bin_centers[0]
    mechs = nl._mechs(r.scales, 3.0)
    for h, out, m in zip(r.hist, r.outside, mechs):
        mass = h.sum() * w
        assert mass + out == pytest.approx(1.0, abs=1e-12)
        half = r.bin_centers[-1] + w / 2
        k = np.abs(r.bin_centers) < half / 4
        lo, hi = r.bin_centers[k][0] - w / 2, r.bin_centers[k][-1] + w / 2
        p = math.exp(m.logcdf(hi)) - math.exp(m.logcdf(lo))
        got = h[k].sum() * w
        assert abs(got - p) < 5 * math.sqrt(p * (1 - p) / n)
    # reproducible with the same seed, different with another
    again = (
        compute_noise_lab.__wrapped__(NoiseSpec(1.0, 1e-3, 3.0, n, 7))
        if hasattr(compute_noise_lab, "__wrapped__")
        else compute_noise_lab(NoiseSpec(1.0, 1e-3, 3.0, n, 7))
    )
    np.testing.assert_array_equal(again.hist[2], r.hist[2])
    other = compute_noise_lab(NoiseSpec(1.0, 1e-3, 3.0, n, 8))
    assert not np.array_equal(other.hist[2], r.hist[2])


def test_densities_are_the_backend_pdfs():
    r = compute_noise_lab(NoiseSpec(0.5, 1e-6, 1.5, 500, 0))
    for dens, m in zip(r.densities, nl._mechs(r.scales, 1.5)):
        np.testing.assert_allclose(dens, np.exp(m.logpdf(r.x)), rtol=1e-15)
    assert np.trapezoid(r.densities[2], r.x) == pytest.approx(1.0, abs=1e-5)


def test_extreme_but_computable_settings():
    r = compute_noise_lab(NoiseSpec(50.0, 1e-300, 4.0, 100, 0))
    assert all(np.isfinite(r.scales)) and all(s > 0 for s in r.scales)
    assert Gaussian(r.scales[2]).delta(50.0) <= 1e-300
    r = compute_noise_lab(NoiseSpec(0.01, 1e-300, 1.0, 100, 0))
    assert r.scales[3] == r.scales[0]  # r = 1 is Laplace


@pytest.mark.parametrize(
    "field, value, name",
    [
        ("eps", -1.0, "eps"),
        ("eps", float("nan"), "eps"),
        ("eps", 100.0, "eps"),
        ("delta", 0.0, "delta"),
        ("delta", 0.7, "delta"),
        ("shape", 0.5, "shape"),
        ("n", 10, "n"),
        ("seed", -1, "seed"),
        ("pair", "Gaussian vs Laplace", "pair"),
    ],
)
def test_invalid_settings_raise_naming_the_parameter(field, value, name):
    kw = dict(eps=1.0, delta=1e-5, shape=3.0, n=500, seed=0)
    kw[field] = value
    with pytest.raises(ValueError, match=name):
        compute_noise_lab(NoiseSpec(**kw))


@pytest.mark.parametrize(
    "kind, eps, delta, shape, name",
    [
        ("Gaussian", 1.0, 0.0, 2.0, "delta"),
        ("Subbotin", 1.0, 0.0, 3.0, "delta"),
        ("Gaussian", -1.0, 0.1, 2.0, "eps"),
        ("Subbotin", 1.0, 0.1, 0.5, "shape"),
        ("Cauchy", 1.0, 0.1, 2.0, "kind"),
    ],
)
def test_min_scale_invalid(kind, eps, delta, shape, name):
    with pytest.raises(ValueError, match=name):
        min_scale(kind, eps, delta, shape)


def test_controller_updates_in_place_and_keeps_plot_on_error():
    box = build_noise_lab()
    c = box.controller
    figs = list(c.figs)
    assert len(figs) == 5 and all(isinstance(f, PlotlyWidget) and f.data for f in figs)
    before = [f.data for f in figs]
    c.controls["delta"].value = 1e-20
    assert [id(f) for f in c.figs] == [id(f) for f in figs]
    assert c.fig_curve.data[4]["x"][0] == pytest.approx(1e-20)
    assert c.fig_curve.data[4]["y"][2] == Gaussian.calibrate(1.0, 1e-20).sigma
    assert c.fig_density.data != before[0]
    assert c.message.text == ""
    good = [f.data for f in c.figs]
    c.controls["n"].value = 5.0  # below the range: the slider clamps to 100, still valid
    c.controls["pair"].value = "Laplace vs Logistic"
    assert c.fig_map.plot_layout["title"]["text"] == "Var(Laplace) / Var(Logistic), Vinterbo 2022"
    good = [f.data for f in c.figs]
    c.controls["shape"].value = 1.0  # Subbotin r = 1 is Laplace: computable
    assert c.result.scales[3] == c.result.scales[0]
    good = [f.data for f in c.figs]
    # a bad combination injected through read_spec: message, plots unchanged
    c.controls["seed"].value = 3
    seed_data = [f.data for f in c.figs]
    assert seed_data[1] != good[1]
    c.read_spec = lambda: NoiseSpec(1.0, 0.9, 3.0, 500, 0)
    c.update()
    assert "delta" in c.message.text and "last valid setting" in c.message.text
    assert [f.data for f in c.figs] == seed_data


def test_table_prints_the_computed_numbers():
    box = build_noise_lab(eps=2.0, delta=1e-8)
    r = box.controller.result
    html = box.controller.table.value
    for s, v in zip(r.scales, r.variances):
        assert f"{s:.6g}" in html and f"{v:.6g}" in html
    assert any(
        "withdrawn by the author" in getattr(w, "value", "")
        for w in box.widgets()
        if isinstance(getattr(w, "value", None), str)
    )


def test_registered_in_gallery():
    assert "noise_lab.ipynb" in [nb for nb, _, _ in APPS]


def test_negative_seed_typed_in_the_box_shows_a_message():
    c = build_noise_lab().controller
    good = [f.data for f in c.figs]
    c.controls["seed"].value = -1
    assert "seed" in c.message.text and "last valid setting" in c.message.text
    assert [f.data for f in c.figs] == good
    c.controls["seed"].value = 2
    assert c.message.text == "" and c.fig_hist.data != good[1]
