"""Composition settings and privacy filters lab (dpexplore/apps/filters_lab.py): every plotted and
printed number against dpexplore.accounting.filters recomputed here (the filters, the seeded analyst, the
odometer, the session), the filters never letting the realized budget exceed the target (exact
rational arithmetic), seeded reproducibility, every slider corner valid, invalid settings naming
the parameter, the post's table (Desfontaines 2023), the controller and the "Reproduce in Python"
snippet against the page."""

from __future__ import annotations

import contextlib
import dataclasses
import html
import itertools
import math
import re
from fractions import Fraction

import ipywidgets as W
import numpy as np
import pytest
from snippetkit import not_shown, numbers, page_text, run
from hypothesis import given, settings
from hypothesis import strategies as st

from dpexplore.accounting import filters as fl
from dpexplore.apps import APPS, TOPICS
from dpexplore.apps import filters_lab as FL
from dpexplore.apps.filters_lab import FiltersLabSpec, build_filters_lab, compute_filters_lab
from dpexplore.accounting.conversions import gdp_delta, rdp_to_approx

SQRT2 = math.sqrt(2.0)


def _truth(seed: int, n: int) -> np.ndarray:
    """The lab's true counts, written out from its documented recipe."""
    lam = np.random.default_rng([seed, 1]).lognormal(math.log(200.0), 1.0, n)
    return np.random.default_rng([seed, 2]).poisson(lam)


def _fresh():
    """Forget every cached piece, so a computation really runs again."""
    for f in (FL.renyi_order, FL._filters, FL.true_counts, FL._runs, FL._session):
        f.cache_clear()


def _cost(key: str, std: float, alpha: float):
    """The documented cost of a sensitivity-1 query with noise std ``std`` under each filter:
    Laplace ε = √2/std (pure, (ε, δ)), Gaussian μ = 1/σ (GDP), RDP α/(2σ²) (Rényi)."""
    return {"pure": SQRT2 / std, "approx": SQRT2 / std, "gdp": 1.0 / std, "renyi": alpha / (2 * std * std)}[key]


# ------------------------------------------------------------------------------------------------
# the numbers against the backend
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "spec",
    [
        FiltersLabSpec(),
        FiltersLabSpec(eps=0.5011872336273, delta=1e-9, queries=200, rel_error=0.3, seed=5, mode="skip"),
        FiltersLabSpec(eps=10.0, delta=1e-3, queries=50, rel_error=1.0, seed=2),
    ],
    ids=["defaults", "skip", "large-eps"],
)
def test_runs_and_curves_are_the_backends(spec):
    r = compute_filters_lab(spec)
    alpha = r.alpha
    fs = fl.filters_for_target(spec.eps, spec.delta, alpha=alpha)
    truth = _truth(spec.seed, spec.queries)
    np.testing.assert_array_equal(r.truth, truth)
    assert fs["gdp"].mu == r.filters["gdp"].mu and fs["renyi"].budgets == r.filters["renyi"].budgets
    for k in FL.FILTERS:
        want = fl.simulate_adaptive_analyst(
            fs[k], truth, np.random.default_rng([spec.seed, 3]), rel_error=spec.rel_error, mode=spec.mode
        )
        got = r.runs[k]
        np.testing.assert_array_equal(got.accepted, want.accepted)
        np.testing.assert_array_equal(got.std, want.std)
        assert r.answered[k] == int(want.accepted.sum())
        assert r.refused[k] == int((~want.accepted).sum())
        # the plotted curve: the filter's own consumed quantity ÷ its limit, from the public API
        costs = [_cost(k, s, alpha) for s in want.std[want.accepted]]
        x, y = r.curves[k]
        np.testing.assert_array_equal(x, np.arange(len(costs) + 1))
        f = fs[k]
        for t in range(len(costs) + 1):
            spent = costs[:t]
            if k == "renyi":
                want_y = float(np.max(f.consumed(np.reshape(spent, (-1, 1))) / f.budget)) if t else 0.0
            elif k == "approx":
                want_y = f.consumed([[c, 0.0] for c in spent]) / f.eps if t else 0.0
            else:
                want_y = f.consumed(spent) / f.budget if t else 0.0
            assert y[t] == pytest.approx(want_y, rel=1e-12, abs=1e-300), (k, t)
        # the first refusal: where it happened and how much was used then
        if want.accepted.all():
            assert r.refusal[k] is None and r.first_refused[k] is None
        else:
            i = int(np.argmin(want.accepted))
            assert r.first_refused[k] == i + 1
            assert r.refusal[k] == (float(want.accepted[:i].sum()), pytest.approx(y[int(want.accepted[:i].sum())]))


def test_default_values():
    """The default setting, as the doctest and the page show it (seeded: exact)."""
    r = compute_filters_lab(FiltersLabSpec())
    assert r.answered == {"pure": 28, "gdp": 51, "renyi": 51, "approx": 17}
    assert r.alpha == 24.0
    assert r.filters["gdp"].mu == pytest.approx(0.2367, abs=1e-4)  # Dong, Roth & Su 2022, Cor. 2.13
    assert gdp_delta(r.filters["gdp"].mu, 1.0) <= 1e-6


def test_renyi_order_is_the_best_of_the_orders():
    for eps, delta in [(1.0, 1e-6), (0.01, 1e-12), (20.0, 1e-2), (0.01, 1e-2), (20.0, 1e-12)]:
        a = FL.renyi_order(eps, delta)
        rates = {}
        for b in FL.ORDERS:
            with contextlib.suppress(ValueError):
                rates[b] = fl.RenyiFilter.from_target(eps, delta, b).budgets[0] / b
        assert a == max(rates, key=rates.get) == fl.RenyiFilter.best_order(eps, delta, FL.ORDERS)
        # its budget converts back to at most ε (Balle et al. 2020, Theorem 21)
        f = fl.RenyiFilter.from_target(eps, delta, a)
        assert rdp_to_approx(np.array([a]), np.array(f.budgets), delta) <= eps * (1 + 1e-12)


# ------------------------------------------------------------------------------------------------
# the filters never let the realized budget exceed the target
# ------------------------------------------------------------------------------------------------
def _check_never_exceeds(r: FL.FiltersLabResult) -> None:
    s = r.spec
    f = r.filters
    for k in FL.FILTERS:
        run = r.runs[k]
        costs = [_cost(k, sd, r.alpha) for sd in run.std[run.accepted]]
        if k == "pure":
            assert sum(map(Fraction, costs), Fraction(0)) <= Fraction(s.eps)
        elif k == "gdp":
            assert sum((Fraction(c) ** 2 for c in costs), Fraction(0)) <= Fraction(f["gdp"].mu) ** 2
            assert gdp_delta(f["gdp"].mu, s.eps) <= s.delta  # μ-GDP ⇒ (ε, δ)-DP
        elif k == "renyi":
            assert sum(map(Fraction, costs), Fraction(0)) <= Fraction(f["renyi"].budgets[0])
            assert rdp_to_approx(np.array([r.alpha]), np.array(f["renyi"].budgets), s.delta) <= s.eps * (1 + 1e-12)
        else:
            sq = float(sum((Fraction(c) ** 2 for c in costs), Fraction(0)))
            assert math.sqrt(2 * math.log(1 / s.delta) * sq) + 0.5 * sq <= s.eps
        # the plotted share of the budget stays at or below 100 %
        assert np.all(r.curves[k][1] <= 1.0 + 1e-12) and r.used[k] <= 1.0 + 1e-12
    # the sub-sessions too: each spends at most its budget, exactly
    for kid, run in zip(r.session.parts, r.session.runs):
        costs = [SQRT2 / sd for sd in run.std[run.accepted]]
        assert sum(map(Fraction, costs), Fraction(0)) <= Fraction(kid.budget)
        assert kid.spent <= kid.budget


@settings(max_examples=25, deadline=None)
@given(
    eps=st.sampled_from([0.01, 0.1, 0.316227766017, 1.0, 3.16227766017, 20.0]),
    delta=st.sampled_from([1e-12, 1e-8, 1e-6, 1e-2]),
    queries=st.sampled_from([10, 60, 150, 300]),
    rel=st.sampled_from([0.05, 0.2, 0.6, 1.0]),
    seed=st.integers(0, 999),
    mode=st.sampled_from(["halt", "skip"]),
    parts=st.integers(1, 8),
    share=st.sampled_from([0.05, 0.3, 1.0]),
)
def test_filters_never_exceed_the_target(eps, delta, queries, rel, seed, mode, parts, share):
    _check_never_exceeds(compute_filters_lab(FiltersLabSpec(eps, delta, queries, rel, seed, mode, parts, share)))


def test_every_slider_corner_is_valid():
    """Every slider position is a valid setting: the corners of every range, both modes."""
    for eps, delta, queries, rel, parts, share, mode in itertools.product(
        FL.EPS_RANGE, FL.DELTA_RANGE, FL.QUERIES_RANGE, FL.REL_RANGE, FL.PARTS_RANGE, FL.SHARE_RANGE, FL.MODES
    ):
        r = compute_filters_lab(FiltersLabSpec(eps, delta, queries, rel, 0, mode, parts, share))
        assert all(len(r.curves[k][0]) >= 1 for k in FL.FILTERS)
        assert len(r.odo_t) >= 1 and len(r.session.parts) == parts


# ------------------------------------------------------------------------------------------------
# seeds, the odometer, the session
# ------------------------------------------------------------------------------------------------
def test_seeded_reproducibility():
    spec = FiltersLabSpec(queries=200, mode="skip", seed=11)
    _fresh()
    a = compute_filters_lab(spec)
    _fresh()
    b = compute_filters_lab(spec)
    assert a is not b
    for k in FL.FILTERS:
        np.testing.assert_array_equal(a.runs[k].answers, b.runs[k].answers)
        np.testing.assert_array_equal(a.curves[k][1], b.curves[k][1])
    np.testing.assert_array_equal(a.odo_eps, b.odo_eps)
    assert [k.spent for k in a.session.parts] == [k.spent for k in b.session.parts]
    other = compute_filters_lab(dataclasses.replace(spec, seed=12))
    assert not np.array_equal(other.truth, a.truth)
    # more queries extend the same interaction: the first answers are the same
    longer = compute_filters_lab(dataclasses.replace(spec, queries=300))
    np.testing.assert_array_equal(longer.truth[:200], a.truth)
    np.testing.assert_array_equal(longer.runs["pure"].answers[:200], a.runs["pure"].answers)


def test_odometer_is_the_backends_and_above_the_filter():
    spec = FiltersLabSpec(rel_error=1.0, queries=200, mode="skip")
    r = compute_filters_lab(spec)
    run = r.runs["renyi"]
    sigma = run.std[run.accepted]
    a = np.array(FL.ORDERS)
    rdp = a[None, :] / (2 * sigma[:, None] ** 2)
    odo = fl.RenyiOdometer(FL.ORDERS, spec.delta)
    np.testing.assert_allclose(r.odo_eps[1:], odo.trajectory(rdp), rtol=1e-15)
    assert r.odo_eps[0] == odo.epsilon(np.zeros((0, a.size)))
    np.testing.assert_allclose(r.odo_fixed[1:], rdp_to_approx(a, np.cumsum(rdp, axis=0), spec.delta), rtol=1e-15)
    # the RDP spent is the backend's: Gaussian(σ).rdp summed by composition.rdp (rounded up)
    from dpexplore.accounting import composition
    from dpexplore.mechanisms import Gaussian

    g = np.asarray(Gaussian(sigma[:, None]).rdp(a), float)
    np.testing.assert_array_equal(r.odo_eps[1:], odo.trajectory(g))
    t = sigma.size // 2
    assert r.odo_fixed[t + 1] == rdp_to_approx(a, composition.rdp(g[: t + 1]), spec.delta)
    # composition.rdp rounds its sum upward exactly; np.cumsum rounds to nearest (ulps either side)
    assert np.all(r.odo_fixed[1:] >= rdp_to_approx(a, np.cumsum(rdp, axis=0), spec.delta) * (1 - 1e-14))
    assert np.all(np.diff(r.odo_eps) >= 0) and np.all(np.diff(r.odo_fixed) >= -1e-15)
    # an odometer pays for fixing no budget: its bound is above the fixed-budget filter's
    assert np.all(r.odo_eps >= r.odo_fixed)
    # and the filter's own guarantee, the target ε, covers what it answered
    assert r.odo_fixed[-1] <= spec.eps * (1 + 1e-12)


@pytest.mark.parametrize("parts, share", [(1, 1.0), (3, 0.3), (8, 0.05), (8, 0.5)])
def test_session_uses_parallel_composition(parts, share):
    spec = FiltersLabSpec(eps=3.16227766017, parts=parts, share=share, seed=4)
    r = compute_filters_lab(spec)
    ss = r.session
    eps_p = share * spec.eps
    assert ss.eps_part == eps_p and ss.parallel == eps_p  # McSherry 2009: the max, not the sum
    assert ss.sequential == pytest.approx(parts * eps_p, rel=1e-15)
    from dpexplore.accounting import composition

    assert ss.sequential == composition.basic([k.budget for k in ss.parts])[0]  # basic composition's sum
    assert ss.parent.total_spent() == eps_p and ss.parent.remaining == pytest.approx(spec.eps - eps_p)
    assert len(ss.parts) == parts and all(k.budget == eps_p for k in ss.parts)
    split = np.random.default_rng([4, 4]).multinomial(_truth(4, spec.queries), np.full(parts, 1 / parts))
    np.testing.assert_array_equal(split.sum(axis=1), r.truth)
    for j, (kid, kid_run) in enumerate(zip(ss.parts, ss.runs)):
        want = fl.simulate_adaptive_analyst(
            fl.PureDPFilter(eps_p),
            split[:, j],
            np.random.default_rng([4, 5, j]),
            rel_error=spec.rel_error,
            mode=spec.mode,
        )
        np.testing.assert_array_equal(kid_run.accepted, want.accepted)
        assert kid.spent == float(want.consumed[-1]) <= eps_p


# ------------------------------------------------------------------------------------------------
# invalid settings
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "change, name",
    [
        (dict(eps=0.0), "eps"),
        (dict(eps=float("nan")), "eps"),
        (dict(eps=50.0), "eps"),
        (dict(delta=0.0), "delta"),
        (dict(delta=0.5), "delta"),
        (dict(queries=5), "queries"),
        (dict(queries=100.5), "queries"),
        (dict(queries=301), "queries"),
        (dict(rel_error=0.0), "rel_error"),
        (dict(rel_error=2.0), "rel_error"),
        (dict(seed=-1), "seed"),
        (dict(seed=1.5), "seed"),
        (dict(mode="stop"), "mode"),
        (dict(parts=0), "parts"),
        (dict(parts=9), "parts"),
        (dict(share=0.0), "share"),
        (dict(share=1.5), "share"),
    ],
)
def test_invalid_spec_raises_naming_the_parameter(change, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        compute_filters_lab(dataclasses.replace(FiltersLabSpec(), **change))


# ------------------------------------------------------------------------------------------------
# the post's table
# ------------------------------------------------------------------------------------------------
def test_table_is_the_posts():
    t = FL.table_html()
    assert t.count("<tr ") == 1 + len(fl.NOTIONS)
    assert t.count("<td") == len(fl.NOTIONS) * len(fl.SETTINGS)
    assert t.count(">open<") == sum(c.status == "open" for row in fl.COMPOSITION_TABLE.values() for c in row.values())
    for row in fl.COMPOSITION_TABLE.values():
        for cell in row.values():
            if cell.implementation:
                assert cell.implementation.removeprefix("dpexplore.") in t
                assert FL._RULES[cell.implementation] in t  # the rule it implements
    for key in fl.TABLE_REFERENCES.values():
        from dpexplore.bibliography.references import get

        ref = get(key)
        assert html.escape(ref.short) in t and html.escape(ref.url, quote=True) in t
    assert "Only asymptotically optimal" in t


# ------------------------------------------------------------------------------------------------
# the app
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def app():
    return build_filters_lab()


def test_figures_and_readouts(app):
    c = app.controller
    r = compute_filters_lab(FiltersLabSpec())
    assert [len(f.data) for f in c.figs] == [6, 3, 4]
    for k, tr in zip(FL.FILTERS, c.fig_main.data):
        assert tr["x"] == r.curves[k][0].tolist() and tr["y"] == r.curves[k][1].tolist()
    marks = c.fig_main.data[4]
    assert marks["x"] == [r.refusal[k][0] for k in FL.FILTERS]
    text = html.unescape(re.sub(r"<[^>]+>", " ", c.readout.value))
    for k in FL.FILTERS:
        assert f" {r.answered[k]} " in text and f"#{r.first_refused[k]}" in text
    assert "of the 100 the analyst asks" in text
    assert "parallel composition" in c.session_readout.value
    assert any(isinstance(w, W.HTML) and "dpexplore-composition-table" in w.value for w in app.widgets())


def test_sliders_update_in_place_and_a_bad_value_keeps_the_plot(app):
    c = app.controller
    figs = list(c.figs)
    session_before = c.fig_session.data
    c.controls["delta"].value = 1e-9
    r = compute_filters_lab(dataclasses.replace(FiltersLabSpec(), delta=1e-9))
    assert [id(f) for f in c.figs] == [id(f) for f in figs]
    assert c.fig_main.data[1]["y"] == r.curves["gdp"][1].tolist()
    assert c.fig_session.data == session_before  # δ does not touch the (pure-DP) session
    c.controls["parts"].value = 5
    assert c.fig_session.data[0]["x"] == ["all data"] + [f"part {j}" for j in range(1, 6)]
    good = [f.data for f in c.figs]
    c.read_spec = lambda: dataclasses.replace(FiltersLabSpec(), share=2.0)
    try:
        c.update()
    finally:
        del c.read_spec
    assert "share" in c.message.text and "last valid setting" in c.message.text
    assert [f.data for f in c.figs] == good
    c.controls["seed"].value = 3
    assert c.message.text == "" and c.fig_main.data != good[0]


def test_typed_nonsense_shows_the_message(app):
    c = app.controller
    good = [f.data for f in c.figs]
    app.apply_typed("ε [total]", "abc")
    assert "not a number" in c.message.text and [f.data for f in c.figs] == good
    app.apply_typed("queries [asked]", "20,000")  # past the end: set to the end, with a note
    assert c.controls["queries"].value == 300 and "300" in c.message.text


@pytest.mark.parametrize(
    "settings_",
    [
        {},
        {"mode": "skip", "rel_error": 0.3, "queries": 300},
        {"eps": 0.01, "delta": 1e-12, "parts": 8, "share": 1.0},
        {"eps": 20.0, "delta": 0.01, "rel_error": 1.0, "seed": 999, "parts": 1},
    ],
    ids=["defaults", "skip", "tiny-eps", "large-eps"],
)
def test_filters_lab_snippet_prints_the_readout(settings_):
    """As tests/apps/test_snippets.py checks every lab: the snippet, run as pasted, prints only numbers
    the page shows."""
    app = build_filters_lab()
    c = app.controller
    for name, value in settings_.items():
        c.controls[name].value = value
    assert c.last_error is None, c.message.text
    code = c.snippet()
    assert "from dpexplore.accounting import filters" in code and "print" in code
    printed = run(code)
    assert len(numbers(printed)) >= 8
    missing = not_shown(printed, page_text(app))
    assert not missing, f"printed {missing} not on the page.\n{printed}"
    assert html.escape(code.splitlines()[0]) in app._code.value
    for k in FL.FILTERS:
        assert f"{k}: {c.result.answered[k]} answered of {c.spec.queries}" in printed


def test_registered_in_the_gallery():
    assert "filters_lab.ipynb" in [nb for nb, _, _ in APPS]
    assert TOPICS["filters_lab.ipynb"] == "Composition"
