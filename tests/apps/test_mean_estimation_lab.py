"""Private mean estimation lab (dpexplore/apps/mean_estimation_lab.py; Kamath 2023): the printed
errors, noise and clip radii against the backend (``dpexplore.teaching.mean_estimation``) and closed forms,
every simulated estimate against the backend estimators on its dataset, the error curves against
``output_covariance`` at every n, seeded reproducibility, the Monte Carlo against the exact
covariances, invalid settings, the controller (in-place updates, messages), the snippet, the
registry and the notebook."""

from __future__ import annotations

import dataclasses
import functools
import html
import itertools
import math
import pathlib

import numpy as np
import pytest
from snippetkit import not_shown, numbers, readout_text, run
from scipy import stats

from dpexplore.teaching import mean_estimation as me
from dpexplore.apps import APPS, TOPICS
from dpexplore.apps import mean_estimation_lab as lab
from dpexplore.apps.mean_estimation_lab import (
    MeanEstimationSpec as Spec,
    build_mean_estimation_lab,
    compute_mean_estimation_lab as compute,
)
from dpexplore.mechanisms import Gaussian
from dpexplore.ui.plotwidget import PlotlyWidget

SETTINGS = [
    Spec(),
    Spec(kappa=1.0, angle=0.0, n=10, eps=0.01, delta=1e-12, seed=7),
    Spec(kappa=1000.0, angle=180.0, n=10000, eps=10.0, delta=1e-2, seed=999),
    Spec(kappa=31.6227766016838, angle=75.0, n=316, eps=0.3, delta=1e-9, seed=3),
]


def _clear_caches():
    for obj in vars(lab).values():
        if isinstance(obj, functools._lru_cache_wrapper):
            obj.cache_clear()


def _sqrtm(cov):
    w, v = np.linalg.eigh(cov)
    return (v * np.sqrt(w)) @ v.T


# -- the numbers against the backend and closed forms ----------------------------------------------
@pytest.mark.parametrize("spec", SETTINGS, ids=range(len(SETTINGS)))
def test_exact_numbers_are_the_backends(spec):
    r = compute(spec)
    cov = me.gaussian_covariance(spec.kappa, 1.0, math.radians(spec.angle))
    np.testing.assert_array_equal(r.cov, cov)
    np.testing.assert_allclose(np.linalg.eigvalsh(cov), [1.0, spec.kappa], rtol=1e-12)
    for i, method in enumerate(lab.METHODS):
        clip = me.default_clip(cov, method, beta=0.01)
        out = me.output_covariance(cov, spec.n, spec.eps, spec.delta, clip, method=method)
        assert r.clip[i] == clip
        assert r.sigma[i] == out["sigma"] == me.noise_sigma(spec.eps, spec.delta, clip, spec.n)
        np.testing.assert_array_equal(r.output_cov[i], out["cov"])
        assert r.rmse_mahalanobis[i] == math.sqrt(out["mahalanobis_mse"])
        assert r.rmse_l2[i] == math.sqrt(out["l2_mse"])
        np.testing.assert_array_equal(r.ellipses[i], me.ellipse_points(out["cov"], (0.0, 0.0), 0.95))
    np.testing.assert_array_equal(r.sample_ellipse, me.ellipse_points(cov / spec.n, (0.0, 0.0), 0.95))
    assert r.ratio_mahalanobis == r.rmse_mahalanobis[0] / r.rmse_mahalanobis[1]
    assert r.ratio_l2 == r.rmse_l2[0] / r.rmse_l2[1]


def test_clip_radii_and_noise_closed_forms():
    """r_β² is the χ²₂ quantile at 1 − β = −2 log β; isotropic C = sqrt(κ) r_β; σ is the least
    Gaussian σ for sensitivity 2C/n (Balle & Wang 2018, Theorem 8)."""
    spec = Spec(kappa=400.0, n=500, eps=0.5, delta=1e-7)
    r = compute(spec)
    rb = math.sqrt(-2 * math.log(0.01))
    assert r.clip[1] == pytest.approx(rb, rel=1e-13)
    assert r.clip[0] == pytest.approx(20.0 * rb, rel=1e-13)
    for c, s in zip(r.clip, r.sigma):
        assert Gaussian(s, 2 * c / spec.n).delta(spec.eps) <= spec.delta
        assert Gaussian(s * (1 - 1e-9), 2 * c / spec.n).delta(spec.eps) > spec.delta


@pytest.mark.parametrize("kappa", [1.0, 10.0, 1000.0])
def test_mahalanobis_estimator_closed_form_and_affine_invariance(kappa):
    """With Mahalanobis clipping, E‖Σ^{-1/2}(μ̂ − μ)‖² = m₂/n + d σ², m₂ = d F_{χ²_{d+2}}(C²) +
    C² (1 − F_{χ²_d}(C²)): the same for every κ and angle."""
    r = compute(Spec(kappa=kappa, angle=65.0, n=200, eps=2.0, delta=1e-5))
    c2 = r.clip[1] ** 2
    m2 = 2 * stats.chi2.cdf(c2, 4) + c2 * stats.chi2.sf(c2, 2)
    assert r.rmse_mahalanobis[1] ** 2 == pytest.approx(m2 / 200 + 2 * r.sigma[1] ** 2, rel=1e-12)
    ref = compute(Spec(kappa=1.0, angle=0.0, n=200, eps=2.0, delta=1e-5))
    assert r.rmse_mahalanobis[1] == pytest.approx(ref.rmse_mahalanobis[1], rel=1e-12)


def test_isotropic_noise_costs_sqrt_kappa_in_mahalanobis_not_in_l2():
    """The noise parts of the two errors differ by sqrt((κ+1)/2) in the Mahalanobis distance and
    by sqrt(2κ/(κ+1)) in ℓ₂ (both σ proportional to their C, C_iso = sqrt(κ) C_Mah)."""
    kappa = 250.0
    r = compute(Spec(kappa=kappa, angle=10.0, n=100, eps=0.1, delta=1e-8))
    inv = np.linalg.inv(r.cov)
    noise_iso, noise_mah = r.sigma[0] ** 2 * np.eye(2), r.sigma[1] ** 2 * r.cov
    assert math.sqrt(np.trace(inv @ noise_iso) / np.trace(inv @ noise_mah)) == pytest.approx(
        math.sqrt((kappa + 1) / 2), rel=1e-9
    )
    assert math.sqrt(np.trace(noise_iso) / np.trace(noise_mah)) == pytest.approx(
        math.sqrt(2 * kappa / (kappa + 1)), rel=1e-9
    )
    # here the noise dominates: the readout's ratios are close to those factors
    assert r.ratio_mahalanobis == pytest.approx(math.sqrt((kappa + 1) / 2), rel=0.02)
    assert r.ratio_l2 < math.sqrt(2)
    # κ = 1: both estimators clip the same ball and add the same noise
    one = compute(Spec(kappa=1.0, n=100, eps=0.1, delta=1e-8))
    assert one.ratio_mahalanobis == pytest.approx(1.0, rel=1e-12)
    assert one.ratio_l2 == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("kappa, angle, eps, delta", [(100.0, 30.0, 1.0, 1e-6), (3.0, 135.0, 0.05, 1e-11)])
def test_error_curves_are_output_covariance_at_every_n(kappa, angle, eps, delta):
    r = compute(Spec(kappa=kappa, angle=angle, eps=eps, delta=delta))
    assert r.curve_n[0] == 10 and r.curve_n[-1] == 10**6 and np.all(np.diff(r.curve_n) > 0)
    for i, method in enumerate(lab.METHODS):
        clip = me.default_clip(r.cov, method, 0.01)
        for j in range(0, r.curve_n.size, 5):
            out = me.output_covariance(r.cov, int(r.curve_n[j]), eps, delta, clip, method=method)
            assert r.curve_mahalanobis[i][j] == pytest.approx(math.sqrt(out["mahalanobis_mse"]), rel=1e-12)
            assert r.curve_l2[i][j] == pytest.approx(math.sqrt(out["l2_mse"]), rel=1e-12)
    np.testing.assert_allclose(r.nonprivate_mahalanobis, np.sqrt(2 / r.curve_n), rtol=1e-15)
    np.testing.assert_allclose(r.nonprivate_l2, np.sqrt((kappa + 1) / r.curve_n), rtol=1e-12)
    # the private errors approach the non-private ones as n grows (clipping at the true mean even
    # shrinks the sampling part a little), the isotropic one's Mahalanobis error far later
    if eps < 1:
        return  # at ε = 0.05 the noise still counts at n = 10⁶
    for curves, free in ((r.curve_mahalanobis, r.nonprivate_mahalanobis), (r.curve_l2, r.nonprivate_l2)):
        assert curves[0][-1] == pytest.approx(free[-1], rel=0.05) and curves[1][-1] == pytest.approx(free[-1], rel=0.05)
        assert curves[0][0] > 5 * free[0] and curves[1][0] > 5 * free[0]
    gap = r.curve_mahalanobis[0] / r.curve_mahalanobis[1]
    assert gap[0] == pytest.approx(math.sqrt((kappa + 1) / 2), rel=0.05) and gap[-1] < gap[0]


# -- the simulation --------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", SETTINGS[:3], ids=range(3))
def test_every_run_is_the_backend_estimator_on_its_dataset(spec):
    """Run t: the backend estimators on dataset(spec, t), whose noise draw is replaced by the
    lab's (isotropic: + σ ξ; Mahalanobis: + σ Σ^{1/2} ξ)."""
    r = compute(spec)
    xi = lab.noise_draws(spec.seed)
    half = _sqrtm(r.cov)
    for t in (0, 1, 57, lab.TRIALS - 1):
        x = lab.dataset(spec, t)
        assert x.shape == (spec.n, 2)
        g = np.random.default_rng(1234).standard_normal(2)
        iso = me.isotropic_clipped_mean(x, spec.eps, spec.delta, r.clip[0], np.random.default_rng(1234))
        want = iso - r.sigma[0] * g + r.sigma[0] * xi[0, t]
        np.testing.assert_allclose(r.estimates[0][t], want, rtol=1e-9, atol=1e-12 * r.clip[0])
        mah = me.mahalanobis_clipped_mean(x, r.cov, spec.eps, spec.delta, r.clip[1], np.random.default_rng(1234))
        want = mah - r.sigma[1] * g @ half + r.sigma[1] * xi[1, t] @ half
        np.testing.assert_allclose(r.estimates[1][t], want, rtol=1e-9, atol=1e-12 * r.clip[0])
    assert [e.shape for e in r.estimates] == [(lab.TRIALS, 2)] * 2
    np.testing.assert_allclose(
        r.sim_mahalanobis,
        [math.sqrt(np.mean(me.mahalanobis_error(e, [0, 0], r.cov) ** 2)) for e in r.estimates],
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        r.sim_l2, [math.sqrt(np.mean(me.l2_error(e, [0, 0]) ** 2)) for e in r.estimates], rtol=1e-12
    )


def test_datasets_are_gaussian_with_covariance_sigma_and_grow_with_n():
    spec = Spec(kappa=9.0, angle=60.0, n=10000, seed=11)
    x = np.concatenate([lab.dataset(spec, t) for t in range(20)])
    cov = me.gaussian_covariance(9.0, 1.0, math.radians(60.0))
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.1)
    small = lab.dataset(dataclasses.replace(spec, n=700), 3)
    np.testing.assert_array_equal(small, lab.dataset(spec, 3)[:700])
    with pytest.raises(ValueError, match="trial"):
        lab.dataset(spec, lab.TRIALS)


def test_seeded_reproducibility():
    spec = Spec(kappa=50.0, angle=20.0, n=800, eps=0.7, delta=1e-6, seed=42)
    a = compute(spec)
    _clear_caches()
    b = compute(spec)
    assert a is not b
    for ea, eb in zip(a.estimates, b.estimates):
        np.testing.assert_array_equal(ea, eb)
    assert a.sim_mahalanobis == b.sim_mahalanobis and a.inside == b.inside
    other = compute(dataclasses.replace(spec, seed=43))
    assert not np.array_equal(other.estimates[0], a.estimates[0])
    # the same datasets and noise draws at another ε: only σ changes
    c = compute(dataclasses.replace(spec, eps=3.0))
    xi = lab.noise_draws(42)
    np.testing.assert_allclose(
        c.estimates[0] - c.sigma[0] * xi[0], a.estimates[0] - a.sigma[0] * xi[0], rtol=1e-10, atol=1e-13
    )


def test_monte_carlo_agrees_with_the_exact_covariance():
    """Pooled over 5 seeds (1000 runs): the mean squared errors within 5 standard errors of the
    exact ones, the runs inside the 95 % ellipse within 5 binomial standard errors of 95 %."""
    base = Spec(kappa=100.0, angle=30.0, n=1000, eps=1.0, delta=1e-6)
    runs = [compute(dataclasses.replace(base, seed=s)) for s in range(5)]
    r0 = runs[0]
    for i in range(2):
        est = np.concatenate([r.estimates[i] for r in runs])
        for sq, exact in (
            (me.mahalanobis_error(est, [0, 0], r0.cov) ** 2, r0.rmse_mahalanobis[i] ** 2),
            (me.l2_error(est, [0, 0]) ** 2, r0.rmse_l2[i] ** 2),
        ):
            se = sq.std(ddof=1) / math.sqrt(sq.size)
            assert abs(sq.mean() - exact) < 5 * se, (i, sq.mean(), exact, se)
        inside = np.mean([r.inside[i] for r in runs])
        assert abs(inside - 0.95) < 5 * math.sqrt(0.95 * 0.05 / est.shape[0])
        # the lab's count is the ellipse's definition: v^T Cov^{-1} v <= -2 log(1 - 0.95)
        q = np.einsum("ti,ij,tj->t", r0.estimates[i], np.linalg.inv(r0.output_cov[i]), r0.estimates[i])
        assert r0.inside[i] == np.mean(q <= -2 * math.log(0.05))


# -- validity ---------------------------------------------------------------------------------------
def test_every_slider_corner_is_a_valid_setting():
    app = build_mean_estimation_lab()
    c = app.controller.controls
    ends = {}
    for name in ("kappa", "n", "eps", "delta"):
        w = c[name]
        ends[name] = (w.base**w.min, w.base**w.max)
    assert ends["kappa"] == pytest.approx(lab.KAPPA_RANGE) and ends["n"] == pytest.approx(lab.N_RANGE)
    assert ends["eps"] == pytest.approx(lab.EPS_RANGE) and ends["delta"] == pytest.approx(lab.DELTA_RANGE)
    assert (c["angle"].min, c["angle"].max) == lab.ANGLE_RANGE and (c["seed"].min, c["seed"].max) == lab.SEED_RANGE
    for kappa, n, eps, delta in itertools.product(*(ends[k] for k in ("kappa", "n", "eps", "delta"))):
        spec = Spec(
            kappa=float(f"{kappa:.12g}"),
            angle=180.0,
            n=int(round(n)),
            eps=float(f"{eps:.12g}"),
            delta=float(f"{delta:.12g}"),
            seed=999,
        )
        r = compute(spec)
        for arr in (*r.estimates, *r.ellipses, *r.curve_mahalanobis, *r.curve_l2):
            assert np.all(np.isfinite(arr))
        assert all(math.isfinite(v) and v > 0 for v in (*r.rmse_mahalanobis, *r.rmse_l2, *r.sigma))


@pytest.mark.parametrize(
    "field, value, name",
    [
        ("kappa", 0.5, "kappa"),
        ("kappa", float("nan"), "kappa"),
        ("kappa", 5000.0, "kappa"),
        ("angle", -5.0, "angle"),
        ("angle", 181.0, "angle"),
        ("angle", float("inf"), "angle"),
        ("n", 5, "n"),
        ("n", 20000, "n"),
        ("n", 100.5, "n"),
        ("n", True, "n"),
        ("eps", 0.0, "eps"),
        ("eps", 20.0, "eps"),
        ("eps", "1", "eps"),
        ("delta", 0.0, "delta"),
        ("delta", 0.5, "delta"),
        ("seed", -1, "seed"),
        ("seed", 1.5, "seed"),
        ("seed", 10**10, "seed"),
    ],
)
def test_invalid_settings_raise_naming_the_parameter(field, value, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        compute(dataclasses.replace(Spec(), **{field: value}))


# -- the controller and the page -----------------------------------------------------------------
def test_controller_updates_in_place_and_keeps_the_plot_on_error():
    app = build_mean_estimation_lab()
    c = app.controller
    figs = list(c.figs)
    assert len(figs) == 2 and all(isinstance(f, PlotlyWidget) and f.data for f in figs)
    assert figs[0].plot_layout["yaxis"]["scaleanchor"] == "x"  # equal axis scaling
    c.controls["kappa"].value = 10.0
    assert [id(f) for f in c.figs] == [id(f) for f in figs]
    r = compute(Spec(kappa=10.0))
    np.testing.assert_array_equal(c.fig_cloud.data[0]["x"], r.estimates[0][:, 0])
    np.testing.assert_array_equal(c.fig_cloud.data[3]["y"], r.ellipses[1][:, 1])
    np.testing.assert_array_equal(c.fig_curves.data[0]["y"], r.curve_mahalanobis[0])
    np.testing.assert_array_equal(c.fig_curves.data[5]["y"], r.curve_l2[1])
    assert c.fig_curves.data[7]["x"] == [1000, 1000] and c.fig_curves.data[7]["y"] == list(r.sim_l2)
    assert f"{r.rmse_mahalanobis[0]:.4g}" in c.readout.value and f"{r.ratio_mahalanobis:.3g}×" in c.readout.value
    assert c.message.text == ""
    good = [f.data for f in c.figs]
    # a typed value that is not a number: the shell's message, the plot stays
    app.apply_typed("ε", "abc")
    assert "not a number" in c.message.text and [f.data for f in c.figs] == good
    app.apply_typed("n [samples]", "12.5")
    assert "whole number" in c.message.text and [f.data for f in c.figs] == good
    # a bad setting from the compute function: its message, the plot stays
    c.read_spec = lambda: Spec(eps=0.0)
    c.update()
    assert "eps" in c.message.text and "last valid setting" in c.message.text
    assert [f.data for f in c.figs] == good
    del c.read_spec
    c.controls["seed"].value = 5
    assert c.message.text == "" and c.fig_cloud.data[0]["x"] != good[0][0]["x"]


def test_query_string_and_defaults_on_the_grids():
    app = build_mean_estimation_lab()
    assert app.controller.spec == Spec()
    app.apply_query("?kappa=10&n=100&angle=45&seed=3")
    assert app.controller.spec == Spec(kappa=10.0, angle=45.0, n=100, seed=3)
    assert app.controller.last_error is None
    assert "kappa=10.0" in app.link_query() and "n=100" in app.link_query()


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"kappa": 1000.0, "angle": 90.0, "n": 10, "eps": 0.01, "delta": 1e-12},
        {"kappa": 1.0, "n": 10000, "eps": 10.0, "delta": 0.01, "seed": 9},
        {"kappa": 3.16227766017, "angle": 5.0, "n": 251, "eps": 0.316227766017},
    ],
)
def test_snippet_prints_the_readout(settings):
    """As tests/apps/test_snippets.py: every number the snippet prints is a number of the readout."""
    app = build_mean_estimation_lab()
    c = app.controller
    for k, v in settings.items():
        c.controls[k].value = v
    assert c.last_error is None, c.message.text
    code = c.snippet()
    assert "dpexplore" in code and "print" in code and "mean_estimation" in code
    printed, readout = run(code), readout_text(app)
    got = numbers(printed)
    assert len(got) == 10, printed
    missing = not_shown(printed, readout)
    assert not missing, f"printed {missing} not in the readout\n{printed}\n{readout}"
    assert html.escape(code.splitlines()[0]) in app._code.value


def test_page_text_cites_and_says_what_is_not_implemented():
    app = build_mean_estimation_lab()
    theory = app.theory.children[0].value
    for short in (
        "Kamath 2023",
        "Brown, Hopkins &amp; Smith 2023",
        "Duchi, Haque &amp; Kuditipudi 2023",
        "Karwa &amp; Vadhan 2018",
        "Kamath et al. 2019",
        "Balle &amp; Wang 2018, Theorem 8",
    ):
        assert short in theory, short
    assert "does not implement" in theory and "O(d) samples" in theory
    assert "(ε, δ)-DP" in theory and "2C/n" in theory
    assert "dpexplore-bibliography" in theory
    assert "Mahalanobis" in lab.INFO.lead and "√κ" in lab.INFO.lead
    layout = app.controller.fig_curves.plot_layout
    titles = [layout[a]["title"]["text"] for a in ("yaxis", "yaxis2")]
    assert "Σ<sup>−½</sup>(μ̂ − μ)" in titles[0] and titles[1] == "RMS ‖μ̂ − μ‖"
    # one figure of two panels, each titled by its error (plotwidget.js: PANEL_TITLE)
    panels = {a["xref"]: a["text"] for a in layout["annotations"] if a.get("name") == "dpexplore-panel-title"}
    assert panels == {"x domain": "Mahalanobis error", "x2 domain": "ℓ₂ error"}
    assert layout["grid"] == {"rows": 1, "columns": 2, "pattern": "independent", "xgap": 0.22}
    assert "title" not in layout and layout["meta"]["name"]


def test_registered_in_the_gallery():
    entry = [a for a in APPS if a[0] == "mean_estimation_lab.ipynb"]
    assert len(entry) == 1 and entry[0][1] == "Private mean estimation"
    assert TOPICS["mean_estimation_lab.ipynb"] == "Labs"
    nb = pathlib.Path(lab.__file__).parent / "notebooks" / "mean_estimation_lab.ipynb"
    assert "build_mean_estimation_lab()" in nb.read_text(encoding="utf-8")


@pytest.mark.slow
def test_notebook_executes_and_saves_the_core_values():
    import nbformat
    from nbclient import NotebookClient

    nb_dir = pathlib.Path(lab.__file__).parent / "notebooks"
    nb = nbformat.read(nb_dir / "mean_estimation_lab.ipynb", as_version=4)
    for cell in nb.cells:
        assert cell.get("outputs", []) == []
    NotebookClient(
        nb, timeout=120, kernel_name="python3", store_widget_state=True, resources={"metadata": {"path": str(nb_dir)}}
    ).execute()
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.output_type != "error", f"{out.get('ename')}: {out.get('evalue')}"
    from dpexplore.ui.plotwidget import saved_plot_states

    plots = saved_plot_states(nb)
    assert len(plots) == 2
    r = compute(Spec())
    cloud = next(p for p in plots if p["plot_layout"].get("yaxis", {}).get("scaleanchor") == "x")
    assert cloud["data"][0]["x"] == r.estimates[0][:, 0].tolist()
    assert cloud["data"][1]["y"] == r.estimates[1][:, 1].tolist()
