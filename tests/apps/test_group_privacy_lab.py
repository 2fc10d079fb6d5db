"""The group-privacy lab (dpexplore/apps/group_privacy_lab.py; Pujol & Desfontaines 2023): the
post's figure numbers (exact moments and a seeded 10⁶-draw sample), every plotted and printed
number against the backend (``dpexplore.teaching.group_privacy``), the histogram against the quadrature
density, seeded reproducibility, invalid settings, the slider ends, the controller (in-place
updates, the progress bar, messages), the snippet against the readout, the page text, the
registry and the notebook."""

from __future__ import annotations

import dataclasses
import html
from fractions import Fraction
import math
import pathlib

import ipywidgets as W
import numpy as np
import pytest
from snippetkit import not_shown, numbers, readout_text, run

from dpexplore.teaching import group_privacy as gp
from dpexplore.apps import APPS, TOPICS
from dpexplore.apps import group_privacy_lab as lab
from dpexplore.apps.group_privacy_lab import (
    GroupPrivacySpec as Spec,
    build_group_privacy_lab,
    compute_group_privacy_lab as compute,
)
from dpexplore.ui.plotwidget import PlotlyWidget

SETTINGS = [
    Spec(),
    Spec(sigma2=1.0, r=2.0, count=1, max_count=10, alpha_max=8.0, seed=999),
    Spec(sigma2=1e4, r=0.2, count=10**6, max_count=10**6, alpha_max=64.0, seed=7),
    Spec(sigma2=25.1188643150958, r=0.55, count=316, max_count=3162, alpha_max=16.0, seed=3),
]


def _clear_caches():
    lab._sample.cache_clear()
    lab._density.cache_clear()
    lab.COUNT_TABLES._d.clear()
    lab.GroupPrivacyController._cached.cache_clear()


# -- the post's figure -------------------------------------------------------------------------------
def test_post_figure_exact_moments():
    """σ² = 100, r = 0.3, x = 10⁴: E[Y] = x, Var Y = σ² + r²(x² + σ²) (law of total variance)."""
    p = lab.POST_FIGURE
    r = compute(Spec(sigma2=p["sigma2"], r=p["r"], count=p["count"]))
    assert r.mean == 10000.0
    assert r.std == pytest.approx(math.sqrt(100 + 0.09 * (1e8 + 100)), rel=1e-15)
    assert round(r.std, 1) == 3000.0
    assert r.rho == 0.005 and gp.sigma2_from_rho(r.rho) == pytest.approx(100.0, rel=1e-15)


def test_post_figure_one_million_draws():
    """The post reports a sample mean ≈ 10002.6 and standard deviation ≈ 2995.1 for x = 10⁴
    (σ² = 100, r = 0.3): a seeded 10⁶-draw sample of the backend's sampler agrees with the exact
    moments within 4 standard errors, and so do the post's numbers (≈ 0.07 s: not slow)."""
    p = lab.POST_FIGURE
    n = 10**6
    y = gp.algorithm1_sample(p["count"], p["sigma2"], p["r"], np.random.default_rng(2023), n)
    exact = gp.algorithm1_moments(p["count"], p["sigma2"], p["r"])
    se_mean = exact["std"] / math.sqrt(n)
    kurt = np.mean((y - y.mean()) ** 4) / y.var() ** 2
    se_std = exact["std"] * math.sqrt((kurt - 1) / (4 * n))
    assert abs(y.mean() - exact["mean"]) < 4 * se_mean
    assert abs(y.std() - exact["std"]) < 4 * se_std
    assert abs(p["mean"] - exact["mean"]) < 4 * se_mean
    assert abs(p["std"] - exact["std"]) < 4 * se_std
    # and the post's numbers are those of a sample of that size: within 4 standard errors of ours
    assert abs(y.mean() - p["mean"]) < 4 * math.sqrt(2) * se_mean
    assert abs(y.std() - p["std"]) < 4 * math.sqrt(2) * se_std


# -- the numbers against the backend -----------------------------------------------------------------
@pytest.mark.parametrize("spec", SETTINGS, ids=range(len(SETTINGS)))
def test_every_number_is_the_backends(spec):
    r = compute(spec)
    m = gp.algorithm1_moments(spec.count, spec.sigma2, spec.r)
    assert (r.mean, r.std) == (m["mean"], m["std"])
    assert r.rho == gp.rho_from_sigma2(spec.sigma2)
    assert Fraction(r.rho) >= 1 / (2 * Fraction(spec.sigma2)) and r.rho <= np.nextafter(1 / (2 * spec.sigma2), np.inf)
    # the seeded sample is the backend sampler's
    y = gp.algorithm1_sample(spec.count, spec.sigma2, spec.r, np.random.default_rng(spec.seed), lab.N_SAMPLES)
    assert y.shape == (lab.N_SAMPLES,)
    assert r.sample_mean == float(y.mean()) and r.sample_std == float(y.std())
    lo, hi = r.mean - 4 * r.std, r.mean + 4 * r.std
    hist, edges = np.histogram(y, bins=lab.N_BINS, range=(lo, hi))
    np.testing.assert_allclose(r.hist_centres, 0.5 * (edges[1:] + edges[:-1]), rtol=1e-15)
    np.testing.assert_allclose(r.hist_density, hist / (lab.N_SAMPLES * (hi - lo) / lab.N_BINS), rtol=1e-12)
    # the density line is output_density on its grid
    p, err = gp.output_density(r.density_y, spec.count, spec.sigma2, spec.r)
    np.testing.assert_array_equal(r.density, p)
    assert r.density_error == float(err.max())
    assert r.density_y[0] == pytest.approx(lo) and r.density_y[-1] == pytest.approx(hi)
    # the curve is zcdp_like_curve on the counts at the orders <= alpha_max
    orders = tuple(a for a in lab.ORDERS if a <= spec.alpha_max)
    np.testing.assert_array_equal(r.orders, orders)
    c = gp.zcdp_like_curve(r.counts, spec.sigma2, spec.r, alphas=orders)
    np.testing.assert_allclose(r.rho_hat, c["rho_hat"], rtol=1e-12, atol=0)
    np.testing.assert_allclose(r.rho_hat_error, c["error"], rtol=1e-9, atol=1e-30)
    np.testing.assert_array_equal(r.argmax_alpha, c["argmax_alpha"])
    assert c["rho_proven"] == r.rho
    # the chosen count: renyi_divergence at every order, and its zcdp_like_curve value
    d = gp.renyi_divergence(spec.count, list(lab.ORDERS), spec.sigma2, spec.r)
    np.testing.assert_allclose(r.forward_x, d["forward"], rtol=1e-12, atol=0)
    np.testing.assert_allclose(r.reverse_x, d["reverse"], rtol=1e-12, atol=0)
    np.testing.assert_allclose(r.divergence_error_x, d["error"], rtol=1e-9, atol=1e-30)
    one = gp.zcdp_like_curve([spec.count], spec.sigma2, spec.r, alphas=orders)
    assert r.rho_hat_x == pytest.approx(float(one["rho_hat"][0]), rel=1e-12, abs=0)
    assert r.argmax_alpha_x == float(one["argmax_alpha"][0])
    # the comparison line: 1/(2 Var Y) at its counts
    np.testing.assert_allclose(
        r.reference,
        1 / (2 * np.asarray(gp.algorithm1_moments(r.reference_counts, spec.sigma2, spec.r)["std"]) ** 2),
        rtol=1e-13,
    )


def test_curve_counts_and_their_grid():
    assert lab.curve_counts(10).tolist() == [1, 3, 10]
    assert lab.curve_counts(10**4).tolist() == [1, 3, 10, 32, 100, 316, 1000, 3162, 10000]
    assert lab.curve_counts(5000).tolist() == [1, 3, 10, 32, 100, 316, 1000, 3162, 5000]
    assert lab.curve_counts(10**6).size == 13


def test_what_is_proven_and_what_is_found():
    """ρ̂(x) ≤ ρ at every count (post-processing cannot increase a Rényi divergence: the
    quadrature respects the proven bound up to its estimated error); near x = 0 it is close to
    ρ; it falls at large counts, where the Gaussian of the same variance, 1/(2 Var Y), is of the
    same order; the larger the order set, the larger ρ̂."""
    r = compute(Spec())
    assert np.all(r.rho_hat <= r.rho * (1 + 1e-9) + r.rho_hat_error)
    assert r.rho_hat[0] / r.rho == pytest.approx(0.934, abs=0.001)
    assert np.all(np.diff(r.rho_hat) <= r.rho_hat_error[1:] + r.rho_hat_error[:-1])
    assert r.rho_hat[-1] < 1e-4 * r.rho and np.all(r.rho_hat_error < 1e-4 * r.rho)
    big = r.counts >= 1000
    ref = 1 / (2 * np.asarray(gp.algorithm1_moments(r.counts[big], 100.0, 0.3)["std"]) ** 2)
    assert np.all((r.rho_hat[big] / ref > 0.5) & (r.rho_hat[big] / ref < 3))
    small = compute(Spec(alpha_max=8.0))
    assert np.all(small.rho_hat <= r.rho_hat) and small.rho_hat[-1] < r.rho_hat[-1]
    # at the largest count the maximum is at the largest order used: the readout says so
    assert r.argmax_alpha[-1] == 32.0 and "larger ones may give more" in lab.readout_html(r)


def _bin_probabilities(r, spec, nodes=24):
    """The output's probability of each histogram bin: the backend's quadrature density integrated
    by Gauss–Legendre over the bin (split at y = 0, its logarithmic singularity)."""
    w = r.bin_width
    edges = np.concatenate((r.hist_centres - w / 2, [r.hist_centres[-1] + w / 2]))
    gx, gw = np.polynomial.legendre.leggauss(nodes)
    pieces = []
    for a, b in zip(edges[:-1], edges[1:]):
        pieces.append([(a, 0.0), (0.0, b)] if a < 0.0 < b else [(a, b)])
    flat = [ab for ps in pieces for ab in ps]
    mids = np.array([(a + b) / 2 for a, b in flat])
    halves = np.array([(b - a) / 2 for a, b in flat])
    ys = (mids[:, None] + halves[:, None] * gx[None, :]).ravel()
    dens, _ = gp.output_density(ys, spec.count, spec.sigma2, spec.r)
    mass = (dens.reshape(len(flat), nodes) @ gw) * halves
    out, k = [], 0
    for ps in pieces:
        out.append(mass[k : k + len(ps)].sum())
        k += len(ps)
    return np.array(out)


@pytest.mark.parametrize(
    "spec", [Spec(), Spec(sigma2=1.0, r=2.0, count=1), Spec(count=3, r=0.75)], ids=["post", "count 1", "count 3"]
)
def test_histogram_agrees_with_the_quadrature_density(spec):
    """Each bin's share of the seeded draws against the bin's probability under the quadrature
    density: within 5 binomial standard errors; the plotted density line is that density."""
    r = compute(spec)
    prob = _bin_probabilities(r, spec)
    share = r.hist_density * r.bin_width
    se = np.sqrt(np.maximum(prob * (1 - prob), 1e-12) / lab.N_SAMPLES)
    assert np.all(np.abs(share - prob) < 5 * se + 1 / lab.N_SAMPLES), np.max(np.abs(share - prob) / se)
    assert prob.sum() == pytest.approx(1.0, abs=0.01)  # ± 4 sd hold nearly all of the output
    assert share.sum() == pytest.approx(prob.sum(), abs=5 * math.sqrt(0.01 / lab.N_SAMPLES))


def test_seeded_reproducibility():
    spec = Spec(sigma2=50.1187233627273, r=0.45, count=2512, seed=42)
    a = compute(spec)
    _clear_caches()
    b = compute(spec)
    assert a is not b
    np.testing.assert_array_equal(a.hist_density, b.hist_density)
    assert a.sample_mean == b.sample_mean and a.sample_std == b.sample_std
    np.testing.assert_array_equal(a.rho_hat, b.rho_hat)
    np.testing.assert_array_equal(a.density, b.density)
    other = compute(dataclasses.replace(spec, seed=43))
    assert other.sample_mean != a.sample_mean
    np.testing.assert_array_equal(other.rho_hat, a.rho_hat)  # the seed moves only the sample


# -- validity ---------------------------------------------------------------------------------------
def test_every_slider_end_is_a_valid_setting():
    app = build_group_privacy_lab()
    c = app.controller.controls
    ends = {n: (c[n].base ** c[n].min, c[n].base ** c[n].max) for n in ("sigma2", "count", "max_count")}
    assert ends["sigma2"] == pytest.approx(lab.SIGMA2_RANGE) and ends["count"] == pytest.approx(lab.COUNT_RANGE)
    assert ends["max_count"] == pytest.approx(lab.MAX_COUNT_RANGE)
    assert (c["r"].min, c["r"].max) == lab.R_RANGE and (c["seed"].min, c["seed"].max) == lab.SEED_RANGE
    assert [v for _, v in c["alpha_max"].options] == list(lab.ALPHA_MAX_CHOICES)
    specs = [
        Spec(**{name: v})
        for name, vals in (
            ("sigma2", lab.SIGMA2_RANGE),
            ("r", lab.R_RANGE),
            ("count", lab.COUNT_RANGE),
            ("max_count", lab.MAX_COUNT_RANGE),
            ("alpha_max", (8.0, 64.0)),
            ("seed", lab.SEED_RANGE),
        )
        for v in vals
    ]
    specs.append(Spec(sigma2=1e4, r=0.2, count=1, max_count=10**6, alpha_max=64.0, seed=999))
    for spec in specs:
        r = compute(spec)
        for arr in (r.hist_density, r.density, r.rho_hat, r.rho_hat_error, r.reference, r.forward_x, r.reverse_x):
            assert np.all(np.isfinite(arr)), spec
        assert np.all(r.rho_hat <= r.rho * (1 + 1e-6) + r.rho_hat_error), spec
        assert math.isfinite(r.rho_hat_x) and 0 <= r.rho_hat_x <= r.rho * (1 + 1e-6) + r.rho_hat_x_error


@pytest.mark.parametrize(
    "field, value, name",
    [
        ("sigma2", 0.5, "sigma2"),
        ("sigma2", 2e4, "sigma2"),
        ("sigma2", float("nan"), "sigma2"),
        ("sigma2", "100", "sigma2"),
        ("r", 0.1, "r"),
        ("r", 3.0, "r"),
        ("r", float("inf"), "r"),
        ("r", True, "r"),
        ("count", 0, "count"),
        ("count", 2 * 10**6, "count"),
        ("count", 10.5, "count"),
        ("max_count", 5, "max_count"),
        ("max_count", 10**7, "max_count"),
        ("max_count", 100.0, "max_count"),
        ("alpha_max", 10.0, "alpha_max"),
        ("alpha_max", 128, "alpha_max"),
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
    app = build_group_privacy_lab()
    c = app.controller
    figs = list(c.figs)
    assert len(figs) == 3 and all(isinstance(f, PlotlyWidget) and f.data for f in figs)
    c.controls["r"].value = 0.5
    assert [id(f) for f in c.figs] == [id(f) for f in figs]
    r = compute(Spec(r=0.5))
    np.testing.assert_array_equal(c.fig_output.data[0]["y"], r.hist_density)
    np.testing.assert_array_equal(c.fig_output.data[1]["y"], r.density)
    np.testing.assert_array_equal(c.fig_curve.data[0]["x"], r.counts)
    np.testing.assert_array_equal(c.fig_curve.data[0]["y"], r.rho_hat)
    assert c.fig_curve.data[1]["y"] == [r.rho, r.rho]
    np.testing.assert_array_equal(c.fig_orders.data[0]["y"], r.forward_x / (np.asarray(lab.ORDERS) * r.rho))
    assert c.fig_orders.data[2]["y"] == [r.rho_hat_x / r.rho]
    assert f"{r.rho_hat_x:.4g}" in c.readout.value and f"{r.std:,.1f}" in c.readout.value
    assert c.message.text == ""
    good = [f.data for f in c.figs]
    app.apply_typed("r [relative noise]", "abc")
    assert "not a number" in c.message.text and [f.data for f in c.figs] == good
    app.apply_typed("x [true count]", "12.5")
    assert "whole number" in c.message.text and [f.data for f in c.figs] == good
    c.read_spec = lambda: Spec(r=0.1)
    c.update()
    assert c.message.text.startswith("r = 0.1 is outside") and "last valid setting" in c.message.text
    assert [f.data for f in c.figs] == good
    del c.read_spec
    c.controls["seed"].value = 5
    assert c.message.text == "" and c.fig_output.data[0]["y"] != good[0][0]["y"]
    # a value typed past a slider's end: set to the end, with a note
    app.apply_typed("r [relative noise]", "7")
    assert c.spec.r == 2.0 and "above the largest r (2): set to 2" in c.message.text


def test_progress_bar_shows_for_new_expensive_counts(monkeypatch):
    _clear_caches()
    app = build_group_privacy_lab()
    c = app.controller
    shown = []
    c.progress.observe(lambda ch: shown.append((ch["new"], c.progress.description)), names="value")
    monkeypatch.setattr(lab.GroupPrivacyController, "PROGRESS_AFTER", 0.0)
    displays = []
    c.progress.layout.observe(lambda ch: displays.append(ch["new"]), names="display")
    c.controls["sigma2"].value = 158.489319246111
    spec = c.spec
    todo = lab.curve_counts(spec.max_count)
    assert [v for v, _ in shown] == list(range(1, todo.size + 1))  # one step per count
    assert shown[0][1] == "quadrature, x = 1" and shown[-1][1] == "quadrature, x = 10,000"
    assert displays == [None, "none"]  # shown, then hidden
    # cached counts: no stage runs again
    shown.clear()
    c.controls["count"].value = 3162.0
    assert shown == []


def test_query_string_and_defaults_on_the_grids():
    app = build_group_privacy_lab()
    assert app.controller.spec == Spec()
    app.apply_query("?sigma2=10&r=0.5&count=100&max_count=1000&alpha_max=64&seed=3")
    assert app.controller.spec == Spec(sigma2=10.0, r=0.5, count=100, max_count=1000, alpha_max=64.0, seed=3)
    assert app.controller.last_error is None
    q = app.link_query()
    assert "sigma2=10.0" in q and "alpha_max=64" in q and "count=100" in q
    app.apply_query("?alpha_max=10")
    assert "alpha_max" in app.controller.message.text and app.controller.spec.alpha_max == 64.0


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"sigma2": 1.0, "r": 2.0, "count": 1.0, "max_count": 10.0, "alpha_max": 8, "seed": 999},
        {"sigma2": 10000.0, "r": 0.2, "count": 1000000.0, "alpha_max": 64},
        {"sigma2": 25.1188643150958, "r": 0.55, "count": 316.0, "seed": 12},
    ],
)
def test_snippet_prints_the_readout(settings):
    """As tests/apps/test_snippets.py: every number the snippet prints is a number of the readout."""
    app = build_group_privacy_lab()
    c = app.controller
    for k, v in settings.items():
        c.controls[k].value = v
    assert c.last_error is None, c.message.text
    code = c.snippet()
    assert "dpexplore" in code and "print" in code and "group_privacy" in code and "zcdp_like_curve" in code
    printed, readout = run(code), readout_text(app)
    got = numbers(printed)
    assert len(got) == 12, printed
    missing = not_shown(printed, readout)
    assert not missing, f"printed {missing} not in the readout\n{printed}\n{readout}"
    assert html.escape(code.splitlines()[0]) in app._code.value


def test_page_text_says_open_problem_not_a_guarantee_and_cites():
    app = build_group_privacy_lab()
    lead = lab.INFO.lead
    assert "open problem" in lead and "not a privacy guarantee" in lead and "numerical" in lead
    theory = app.theory.children[0].value
    for short in (
        "Pujol &amp; Desfontaines 2023",
        "Bun &amp; Steinke 2016, Proposition 1.6",
        "Bun &amp; Steinke 2016, Definition 1.1",
        "Mironov 2017, Definition 3",
        "Dwork &amp; Roth 2014, Theorem 2.2",
    ):
        assert short in theory, short
    assert "dpexplore-bibliography" in theory and "not a guarantee" in theory
    notes = [w.value for w in app.widgets() if isinstance(w, W.HTML) and "Not a guarantee" in w.value]
    assert len(notes) == 1 and "open problem" in notes[0]
    assert "not a privacy guarantee" in app.controller.readout.value


def test_registered_in_the_gallery():
    entry = [a for a in APPS if a[0] == "group_privacy_lab.ipynb"]
    assert len(entry) == 1 and entry[0][1] == "Privacy for larger groups (open problem)"
    assert TOPICS["group_privacy_lab.ipynb"] == "Labs"
    assert [a[0] for a in APPS][-1] == "demo.ipynb"
    nb = pathlib.Path(lab.__file__).parent / "notebooks" / "group_privacy_lab.ipynb"
    assert "build_group_privacy_lab()" in nb.read_text(encoding="utf-8")


@pytest.mark.slow
def test_notebook_executes_and_saves_the_core_values():
    import nbformat
    from nbclient import NotebookClient

    nb_dir = pathlib.Path(lab.__file__).parent / "notebooks"
    nb = nbformat.read(nb_dir / "group_privacy_lab.ipynb", as_version=4)
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
    assert len(plots) == 3
    r = compute(Spec())
    out = next(p for p in plots if p["data"][0].get("type") == "bar")
    assert out["data"][0]["y"] == r.hist_density.tolist()
    curve = next(p for p in plots if "true count" in p["plot_layout"]["xaxis"]["title"]["text"])
    assert curve["data"][0]["y"] == r.rho_hat.tolist()
