"""Down sensitivity lab (dpexplore/apps/down_sensitivity_lab.py; Steinke 2023b, Fang, Dong & Yi
2022): Figure 1's numbers, the loss and the down sensitivity against exact enumeration of every
sub-dataset on small inputs, τ and the exponential mechanism's distribution against their closed
forms, the binary search's distribution against an independent recursion over the search tree,
the accuracy guarantees of Theorems 4 and 5, the Laplace baselines in closed form, seeded
reproducibility, invalid settings, the controller (in-place updates, messages), the snippet,
the kernel time of a step, the registry and the notebook."""

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

from dpexplore.teaching import down_sensitivity as ds
from dpexplore.apps import APPS, TOPICS
from dpexplore.apps import down_sensitivity_lab as lab
from dpexplore.apps.down_sensitivity_lab import (
    DownSensitivitySpec as Spec,
    build_down_sensitivity_lab,
    compute_down_sensitivity_lab as compute,
)
from dpexplore.ui.plotwidget import PlotlyWidget

SETTINGS = [
    Spec(),
    Spec(shape="outlier"),
    Spec(query="user_sum"),
    Spec(query="user_sum", shape="outlier", n=3000, spread=300.0, seed=999, eps=10.0, beta=1e-6, bound=1000.0),
    Spec(shape="exponential", n=10, spread=1.0, seed=7, eps=0.01, beta=0.5, bound=1.0),
    Spec(query="user_sum", shape="uniform", n=316, spread=75.0, seed=3, eps=0.3, beta=0.01, bound=31.6227766017),
]


def _clear_caches():
    for obj in vars(lab).values():
        if isinstance(obj, functools._lru_cache_wrapper):
            obj.cache_clear()
    lab.DownSensitivityController._cached.cache_clear()


def _f(query, values) -> float:
    """f of a sub-dataset, raw (the maximum of nothing is 0, the grid's floor)."""
    values = np.asarray(values, float)
    if query == "max":
        return float(values.max()) if values.size else 0.0
    return float(values.sum())


def _enumerated_loss(query, x, grid):
    """ℓ(x, y) = min{dist(x, x̃) : x̃ ⊆ x, f(x̃) ≤ y} by enumerating every sub-dataset (eq. (4)),
    with f capped at the top of the grid (the backend's convention)."""
    n = len(x)
    fs, sizes = [], []
    for mask in range(1 << n):
        keep = [x[i] for i in range(n) if mask >> i & 1]
        fs.append(min(_f(query, keep), grid[-1]))
        sizes.append(n - len(keep))
    fs, sizes = np.array(fs), np.array(sizes)
    order = np.argsort(fs, kind="stable")
    best = np.minimum.accumulate(sizes[order])  # fewest removals among f ≤ fs[order][i]
    idx = np.searchsorted(fs[order], grid, side="right") - 1
    return best[idx]


def _enumerated_down_sensitivity(query, x, grid, k):
    """DS^k on the grid (eq. (1)): the largest drop of f (taken on Y) over the sub-datasets at
    distance ≤ k, by enumeration."""

    def on_grid(v):
        return grid[min(np.searchsorted(grid, v), grid.size - 1)]

    fx = on_grid(_f(query, x))
    worst = 0.0
    for r in range(0, min(k, len(x)) + 1):
        for removed in itertools.combinations(range(len(x)), r):
            keep = [x[i] for i in range(len(x)) if i not in removed]
            worst = max(worst, fx - on_grid(_f(query, keep)))
    return worst


# -- Steinke 2023b, Figure 1 ---------------------------------------------------------------------
def test_figure1_numbers_and_trace():
    """x = (0, 1×5, 2×10, 3×10, 4×5, 5): 32 items shaped like Binomial(5, ½); ℓ(x, y) = #{x_i > y}
    = 31, 26, 16, 6, 1, 0 at y = 0, …, 5, and the true maximum is 5."""
    x = lab.FIGURE1_X
    assert x.size == 32
    counts = np.bincount(x.astype(int))
    np.testing.assert_array_equal(counts, [32 * math.comb(5, k) / 32 for k in range(6)])
    assert lab.FIGURE1_LOSS.tolist() == [31, 26, 16, 6, 1, 0]
    assert [int((x > y).sum()) for y in range(6)] == [31, 26, 16, 6, 1, 0]
    # exact enumeration on the figure's histogram: removing the items above y is optimal
    assert _enumerated_loss("max", [0, 1, 2, 2, 5], np.arange(6.0)).tolist() == [4, 3, 1, 1, 1, 0]
    app = build_down_sensitivity_lab()
    fig = app.controller.fig_figure1
    step, marks, line = fig.data
    assert step["x"] == list(range(-1, 7)) and step["y"] == [32, 31, 26, 16, 6, 1, 0, 0]
    assert step["line"]["shape"] == "hv"  # ℓ holds from each y to the next
    assert marks["x"] == [0, 1, 2, 3, 4, 5] and marks["text"] == ["31", "26", "16", "6", "1", "0"]
    assert line["x"] == [5.0, 5.0] and "maximum = 5" in line["name"]
    assert "Figure 1" in fig.plot_layout["title"]["text"] and "Binomial(5, ½)" in fig.plot_layout["title"]["text"]


# -- the loss and the down sensitivity against enumeration ------------------------------------------
@pytest.mark.parametrize("query", ["max", "user_sum"])
@pytest.mark.parametrize("shape, seed", [("normal", 0), ("outlier", 4), ("exponential", 11), ("uniform", 2)])
def test_loss_and_down_sensitivity_by_enumeration(query, shape, seed):
    spec = Spec(query=query, shape=shape, n=10, spread=40.0, seed=seed, eps=2.0, beta=0.2)
    r = compute(spec)
    x = r.data.tolist()
    np.testing.assert_array_equal(r.loss, _enumerated_loss(query, x, r.grid))
    grid_f = r.grid[min(np.searchsorted(r.grid, _f(query, x)), r.grid.size - 1)]
    assert r.f_value == grid_f
    for k in (0, 1, 2, 5):
        assert float(ds.down_sensitivity(r.loss, r.grid, k)) == _enumerated_down_sensitivity(query, x, r.grid, k)
    assert r.ds2tau == _enumerated_down_sensitivity(query, x, r.grid, 2 * r.tau)


@pytest.mark.parametrize("spec", SETTINGS, ids=range(len(SETTINGS)))
def test_numbers_are_the_backends_and_closed_forms(spec):
    r = compute(spec)
    x = r.data
    assert x.shape == (spec.n,) and np.all(x == np.ceil(x)) and x.min() >= 0
    grid = r.grid
    lo, hi, step = lab.GRID[spec.query]
    assert grid[0] == lo and grid[-1] == hi and np.all(np.diff(grid) == step)
    if spec.query == "max":
        np.testing.assert_array_equal(r.loss, ds.grid_losses_max(x, grid))
        # the max's loss counts the items above y; its down sensitivity is a gap of order statistics
        np.testing.assert_array_equal(r.loss[:-1], [(x > y).sum() for y in grid[:-1]])
        assert r.f_value == x.max()
        if 2 * r.tau < spec.n:
            assert r.ds2tau == np.sort(x)[-1] - np.sort(x)[-1 - 2 * r.tau]
    else:
        np.testing.assert_array_equal(r.loss, ds.grid_losses_user_sum(x, grid))
        assert r.f_value == min(math.ceil(x.sum() / step) * step, hi)
    # Theorem 4's τ and the exponential mechanism P ∝ exp(−ε ℓ*/2), ℓ* = max(ℓ − τ, τ − ℓ̄)
    assert r.tau == math.ceil(2 / spec.eps * math.log(grid.size / spec.beta))
    strict = np.concatenate(([np.inf], r.loss[:-1].astype(float)))
    shifted = np.maximum(r.loss - r.tau, r.tau - strict)
    np.testing.assert_array_equal(r.shifted, shifted)
    w = np.exp(-spec.eps * (shifted - shifted.min()) / 2)
    np.testing.assert_allclose(r.pmf_em, w / w.sum(), rtol=1e-9, atol=1e-300)
    np.testing.assert_array_equal(r.pmf_em, ds.shifted_inverse_pmf(r.loss, spec.eps, r.tau))
    # the ε-DP binary search: σ = T/ε, τ = σ log(T/β)
    steps = math.ceil(math.log2(grid.size - 1))
    assert r.steps_bs == steps
    assert r.sigma_bs == pytest.approx(steps / spec.eps, rel=1e-12)
    assert r.tau_bs == pytest.approx(steps / spec.eps * math.log(steps / spec.beta), rel=1e-12)
    assert ds.binary_search_privacy(grid.size, r.sigma_bs)["eps"] == pytest.approx(spec.eps, rel=1e-12)
    # the accuracy events, exactly
    for pmf, tau, dsk in ((r.pmf_em, r.tau, r.ds2tau), (r.pmf_bs, r.tau_bs, r.ds_bs)):
        inside = (grid <= r.f_value) & (grid >= r.f_value - dsk)
        assert float(pmf[inside].sum()) == pytest.approx(ds.accuracy_probability(pmf, r.loss, grid, tau), abs=1e-12)
    assert r.ds_bs == float(ds.down_sensitivity(r.loss, grid, math.floor(2 * r.tau_bs)))


def _tree_pmf(loss, sigma, tau):
    """The noisy binary search's output distribution by plain recursion over the search tree
    (independent of the backend's level-by-level propagation)."""
    out = np.zeros(loss.size)

    def down(k):  # P[ℓ(x, y_k) + Laplace(σ) < τ]
        return stats.laplace.cdf(tau - loss[k], scale=sigma)

    def walk(a, b, w):
        if w == 0.0:
            return
        if a + 1 >= b:
            out[b] += w
            return
        k = (a + b) // 2
        p = down(k)
        walk(a, k, w * p)
        walk(k, b, w * (1 - p))

    walk(0, loss.size - 1, 1.0)
    return out


@pytest.mark.parametrize("spec", [Spec(), Spec(shape="outlier", eps=0.3, beta=0.01), Spec(n=40, eps=5.0)], ids=range(3))
def test_binary_search_distribution_by_recursion(spec):
    r = compute(spec)
    np.testing.assert_allclose(r.pmf_bs, _tree_pmf(r.loss, r.sigma_bs, r.tau_bs), rtol=1e-9, atol=1e-15)
    assert r.pmf_bs.sum() == pytest.approx(1.0, abs=1e-12) and r.pmf_bs[0] == 0.0


@pytest.mark.parametrize(
    "spec",
    SETTINGS
    + [
        Spec(shape=s, query=q, eps=e, beta=b)
        for s in lab.SHAPES
        for q in lab.QUERIES
        for e, b in ((0.1, 0.05), (3.0, 1e-3))
    ],
)
def test_theorems_4_and_5_accuracy_hold_exactly(spec):
    """P[f(x) ≥ M(x) ≥ f(x) − DS^{2τ}_f(x)] ≥ 1 − β for both mechanisms (Steinke 2023b,
    Theorems 4 and 5), computed from their exact distributions."""
    r = compute(spec)
    assert r.acc_em >= 1 - spec.beta - 1e-12
    assert r.acc_bs >= 1 - spec.beta - 1e-12
    # an underestimate: the mass above f(x) is at most β
    assert r.pmf_em[r.grid > r.f_value].sum() <= spec.beta + 1e-12


def test_the_post_s_story_outlier_and_guessed_bound():
    """With a normal bulk the shifted inverse estimate sits a few removals below the maximum; one
    huge outlier makes DS^{2τ} huge and the estimate reports the bulk; clipping at a guessed bound
    below the data is biased by the gap, and global-sensitivity noise has RMS error sqrt(2)·top/ε."""
    bulk = compute(Spec())
    assert bulk.f_value - bulk.ds2tau <= bulk.stats[0].median <= bulk.f_value
    assert bulk.stats[0].q95 <= bulk.f_value
    out = compute(Spec(shape="outlier"))
    assert out.f_value == 1000.0 and out.ds2tau > 600
    assert out.stats[0].median == bulk.stats[0].median  # the same bulk: the outlier is ignored
    assert bulk.clip.center == 100.0 and bulk.stats[2].rmse > bulk.f_value - 100.0
    assert bulk.stats[3].rmse == pytest.approx(math.sqrt(2) * 1000.0, rel=1e-12)
    good = compute(Spec(bound=316.227766017))  # a bound above the data: no bias
    assert good.clip.center == good.f_value


@pytest.mark.parametrize("spec", SETTINGS, ids=range(len(SETTINGS)))
def test_baselines_and_summaries_in_closed_form(spec):
    r = compute(spec)
    x, f = r.data, r.f_value
    top = lab.GRID[spec.query][1]
    if spec.query == "max":
        assert r.clip.center == min(x.max(), spec.bound) and r.glob.center == x.max()
    else:
        assert r.clip.center == pytest.approx(np.minimum(x, spec.bound).sum(), rel=1e-12)
        assert r.glob.center == pytest.approx(x.sum(), rel=1e-12)
    assert r.clip.scale == pytest.approx(spec.bound / spec.eps, rel=1e-12)
    assert r.glob.scale == pytest.approx(top / spec.eps, rel=1e-12)
    for st, est in ((r.stats[2], r.clip), (r.stats[3], r.glob)):
        lap = stats.laplace(loc=est.center, scale=est.scale)
        assert st.median == est.center
        assert st.q05 == pytest.approx(lap.ppf(0.05), rel=1e-12, abs=1e-9)
        assert st.q95 == pytest.approx(lap.ppf(0.95), rel=1e-12, abs=1e-9)
        assert st.rmse == pytest.approx(math.sqrt((est.center - f) ** 2 + lap.var()), rel=1e-12)
    for st, pmf in ((r.stats[0], r.pmf_em), (r.stats[1], r.pmf_bs)):
        cdf = np.cumsum(pmf)
        for q, p in ((st.q05, 0.05), (st.median, 0.5), (st.q95, 0.95)):
            j = np.flatnonzero(r.grid == q)[0]
            assert cdf[j] >= p - 1e-12 and (j == 0 or cdf[j - 1] < p)
        assert st.rmse == pytest.approx(math.sqrt(np.sum(pmf * (r.grid - f) ** 2)), rel=1e-12)


# -- the dataset, reproducibility --------------------------------------------------------------------
def test_datasets_follow_their_shapes():
    n = 3000
    normal = lab.dataset("max", "normal", n, 50.0, 1)
    assert abs(normal.mean() - 200.5) < 5 * 50 / math.sqrt(n) and normal.std() == pytest.approx(50, rel=0.08)
    expo = lab.dataset("max", "exponential", n, 80.0, 1)
    assert abs(expo.mean() - 80.5) < 5 * 80 / math.sqrt(n)
    uni = lab.dataset("user_sum", "uniform", n, 100.0, 1)
    assert uni.min() >= 0 and uni.max() <= 200
    for query in lab.QUERIES:
        out = lab.dataset(query, "outlier", n, 50.0, 1)
        assert out[-1] == lab.OUTLIER[query]
        np.testing.assert_array_equal(out[:-1], normal[:-1])
    big = lab.dataset("max", "uniform", 100, 300.0, 5)
    assert big.max() <= lab.ITEM_TOP


def test_seeded_reproducibility():
    spec = Spec(query="user_sum", shape="exponential", n=500, spread=120.0, seed=42, eps=0.5)
    a = compute(spec)
    _clear_caches()
    b = compute(spec)
    assert a is not b
    np.testing.assert_array_equal(a.data, b.data)
    np.testing.assert_array_equal(a.pmf_em, b.pmf_em)
    np.testing.assert_array_equal(a.pmf_bs, b.pmf_bs)
    assert a.stats == b.stats
    other = compute(dataclasses.replace(spec, seed=43))
    assert not np.array_equal(other.data, a.data)
    # ε and β move only the mechanisms: the same data
    np.testing.assert_array_equal(compute(dataclasses.replace(spec, eps=3.0, beta=0.01)).data, a.data)


# -- validity ---------------------------------------------------------------------------------------
def test_every_slider_corner_is_a_valid_setting():
    app = build_down_sensitivity_lab()
    c = app.controller.controls
    ends = {}
    for name in ("n", "eps", "beta", "bound"):
        w = c[name]
        ends[name] = (w.base**w.min, w.base**w.max)
    assert ends["n"] == pytest.approx(lab.N_RANGE) and ends["eps"] == pytest.approx(lab.EPS_RANGE)
    assert ends["beta"] == pytest.approx(lab.BETA_RANGE) and ends["bound"] == pytest.approx(lab.BOUND_RANGE)
    assert (c["spread"].min, c["spread"].max) == lab.SPREAD_RANGE
    assert (c["seed"].min, c["seed"].max) == lab.SEED_RANGE
    ends["spread"] = lab.SPREAD_RANGE
    for query, shape in itertools.product(lab.QUERIES, ("outlier", "uniform")):
        for n, spread, eps, beta, bound in itertools.product(
            *(ends[k] for k in ("n", "spread", "eps", "beta", "bound"))
        ):
            spec = Spec(
                query=query,
                shape=shape,
                n=int(round(n)),
                spread=float(spread),
                seed=999,
                eps=float(f"{eps:.12g}"),
                beta=float(f"{beta:.12g}"),
                bound=float(f"{bound:.12g}"),
            )
            r = compute(spec)
            for arr in (r.pmf_em, r.pmf_bs, r.shifted):
                assert np.all(np.isfinite(arr))
            assert r.pmf_em.sum() == pytest.approx(1.0, abs=1e-9) and r.pmf_bs.sum() == pytest.approx(1.0, abs=1e-9)
            assert all(math.isfinite(v) for st in r.stats for v in dataclasses.astuple(st))
            assert math.isfinite(r.window[0]) and r.window[0] < r.window[1]
            assert r.loss_window[0] < r.loss_window[1]


@pytest.mark.parametrize(
    "field, value, name",
    [
        ("query", "min", "query"),
        ("shape", "cauchy", "shape"),
        ("n", 5, "n"),
        ("n", 5000, "n"),
        ("n", 100.5, "n"),
        ("n", True, "n"),
        ("spread", 0.5, "spread"),
        ("spread", float("nan"), "spread"),
        ("spread", 301.0, "spread"),
        ("eps", 0.0, "eps"),
        ("eps", 20.0, "eps"),
        ("eps", "1", "eps"),
        ("eps", float("inf"), "eps"),
        ("beta", 0.0, "beta"),
        ("beta", 0.9, "beta"),
        ("bound", 0.5, "bound"),
        ("bound", 2000.0, "bound"),
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
    app = build_down_sensitivity_lab()
    c = app.controller
    figs = list(c.figs)
    assert len(figs) == 3 and all(isinstance(f, PlotlyWidget) and f.data for f in figs)
    c.controls["eps"].value = 0.5
    assert [id(f) for f in c.figs] == [id(f) for f in figs]
    r = compute(Spec(eps=0.5))
    lo, hi = r.window
    keep = (r.grid >= lo) & (r.grid <= hi)
    np.testing.assert_array_equal(c.fig_est.data[0]["x"], r.grid[keep])
    np.testing.assert_array_equal(c.fig_est.data[0]["y"], np.maximum(r.pmf_em[keep], 1e-7))
    np.testing.assert_array_equal(c.fig_est.data[1]["y"], np.maximum(r.pmf_bs[keep], 1e-7))
    assert c.fig_est.data[4]["x"] == [r.f_value, r.f_value] and c.fig_est.data[5]["x"] == [r.low, r.low]
    i0, i1 = r.loss_window
    np.testing.assert_array_equal(c.fig_loss.data[0]["y"], r.loss[i0:i1])
    np.testing.assert_array_equal(c.fig_loss.data[1]["y"], r.shifted[i0:i1])
    assert c.fig_loss.data[2]["y"] == [r.tau, r.tau]
    assert f"τ = <b>{r.tau}</b>" in c.readout.value and f"{r.acc_em:.4f}" in c.readout.value
    assert c.message.text == ""
    good = [f.data for f in c.figs]
    # typed values that are not valid: the shell's message, the plot stays
    app.apply_typed("ε", "abc")
    assert "not a number" in c.message.text and [f.data for f in c.figs] == good
    app.apply_typed("n [people]", "12.5")
    assert "whole number" in c.message.text and [f.data for f in c.figs] == good
    # a bad setting from the compute function: its message, the plot stays
    c.read_spec = lambda: Spec(beta=0.9)
    c.update()
    assert "beta" in c.message.text and "last valid setting" in c.message.text
    assert [f.data for f in c.figs] == good
    del c.read_spec
    c.controls["query"].value = "user_sum"
    assert c.message.text == "" and c.spec.query == "user_sum"
    assert c.fig_est.data[0]["x"] != good[0][0]["x"] and "true sum" in c.readout.value
    assert c.fig_figure1.data == good[2]  # Figure 1 is fixed


def test_query_string_and_defaults_on_the_grids():
    app = build_down_sensitivity_lab()
    assert app.controller.spec == Spec()
    for name in ("n", "eps", "beta", "bound", "spread"):
        w = app.controller.controls[name]
        assert w.canonical(w.value) == w.value
        assert w.neighbours()[0] is not None or w.neighbours()[1] is not None
    app.apply_query("?query=user_sum&shape=outlier&n=100&eps=0.1&seed=3")
    assert app.controller.spec == Spec(query="user_sum", shape="outlier", n=100, eps=0.1, seed=3)
    assert app.controller.last_error is None
    assert "query=user_sum" in app.link_query() and "n=100" in app.link_query()


@pytest.mark.parametrize(
    "settings",
    [
        {},
        {"shape": "outlier", "eps": 0.1, "beta": 1e-6, "bound": 1000.0},
        {"query": "user_sum", "shape": "exponential", "n": 3000, "spread": 300.0, "seed": 9, "eps": 10.0},
        {"query": "user_sum", "shape": "outlier", "n": 10, "spread": 1.0, "beta": 0.5, "bound": 1.0},
        {"shape": "uniform", "n": 251, "spread": 77.0, "eps": 0.316227766017, "bound": 25.1188643151},
    ],
)
def test_snippet_prints_the_readout(settings):
    """As tests/apps/test_snippets.py: every number the snippet prints is a number of the readout."""
    app = build_down_sensitivity_lab()
    c = app.controller
    for k, v in settings.items():
        c.controls[k].value = v
    assert c.last_error is None, c.message.text
    code = c.snippet()
    assert "dpexplore" in code and "print" in code and "down_sensitivity" in code
    printed, readout = run(code), readout_text(app)
    got = numbers(printed)
    assert len(got) == 24, printed
    missing = not_shown(printed, readout)
    assert not missing, f"printed {missing} not in the readout\n{printed}\n{readout}"
    assert html.escape(code.splitlines()[0]) in app._code.value


def test_page_text_cites_and_states_the_theorems():
    app = build_down_sensitivity_lab()
    theory = app.theory.children[0].value
    for short in (
        "Steinke 2023b, eq. (1)",
        "Steinke 2023b, eq. (4) and Figure 1",
        "Steinke 2023b, Proposition 3",
        "Steinke 2023b, Theorem 4",
        "Steinke 2023b, Theorem 5",
        "Fang, Dong &amp; Yi 2022",
        "Asi &amp; Duchi 2020",
        "Steinke 2023a",
        "McSherry &amp; Talwar 2007",
        "Dwork et al. 2006",
    ):
        assert short in theory, short
    assert r"\mathsf{DS}^{2\tau}_f(x)\big]\ \ge\ 1-\beta" in theory
    assert r"\tau=\lceil\frac2\varepsilon\log\frac{|\mathcal Y|}{\beta}\rceil" in theory
    assert "31, 26, 16, 6, 1, 0" in theory
    assert "dpexplore-bibliography" in theory
    assert "down sensitivity" in lab.INFO.lead
    tabs = app.children[2].children[1].children[1]
    assert [tabs.get_title(i) for i in range(3)] == ["Estimates", "Loss of the data", "Steinke 2023b, Figure 1"]


def test_registered_in_the_gallery():
    entry = [a for a in APPS if a[0] == "down_sensitivity_lab.ipynb"]
    assert len(entry) == 1 and entry[0][1] == "Down sensitivity"
    names = [a[0] for a in APPS]
    assert names.index("down_sensitivity_lab.ipynb") < names.index("demo.ipynb") == len(APPS) - 1
    assert TOPICS["down_sensitivity_lab.ipynb"] == "Mechanisms"
    nb = pathlib.Path(lab.__file__).parent / "notebooks" / "down_sensitivity_lab.ipynb"
    assert "build_down_sensitivity_lab()" in nb.read_text(encoding="utf-8")


@pytest.mark.slow
def test_notebook_executes_and_saves_the_core_values():
    import nbformat
    from nbclient import NotebookClient

    nb_dir = pathlib.Path(lab.__file__).parent / "notebooks"
    nb = nbformat.read(nb_dir / "down_sensitivity_lab.ipynb", as_version=4)
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
    lo, hi = r.window
    keep = (r.grid >= lo) & (r.grid <= hi)
    est = next(p for p in plots if p["plot_layout"]["title"]["text"].startswith("Distribution"))
    assert est["data"][0]["x"] == r.grid[keep].tolist()
    assert est["data"][0]["y"] == np.maximum(r.pmf_em[keep], 1e-7).tolist()
    fig1 = next(p for p in plots if "Figure 1" in p["plot_layout"]["title"]["text"])
    assert fig1["data"][1]["y"] == [31.0, 26.0, 16.0, 6.0, 1.0, 0.0]
