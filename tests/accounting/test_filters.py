"""Privacy filters, the Rényi odometer, the adaptive analyst, sessions and the composition table
(Desfontaines 2023): the realized budget never exceeds the target (hypothesis, exact rational
arithmetic), each filter answers exactly the queries its inequality allows, the guarantees they
imply are checked with dpexplore's conversions, and the table is the post's."""

from __future__ import annotations

import contextlib
import importlib
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpexplore.accounting import filters as fl
from dpexplore.accounting.conversions import gdp_delta, rdp_to_approx, zcdp_to_approx

budgets = st.floats(1e-3, 5.0, allow_nan=False)
costs = st.lists(st.floats(0.0, 2.0, allow_nan=False), min_size=0, max_size=40)
modes = st.sampled_from(["halt", "skip"])


def _check_mask(mask, mode):
    if mode == "halt" and (~mask).any():
        assert not mask[np.argmin(mask) :].any()  # halting: nothing after the first refusal


@settings(max_examples=150, deadline=None)
@given(budgets, costs, modes)
def test_pure_filter_never_exceeds_the_budget(eps, req, mode):
    f = fl.PureDPFilter(eps)
    mask = f.run(req, mode=mode)
    _check_mask(mask, mode)
    acc = [r for r, m in zip(req, mask) if m]
    assert sum(map(Fraction, acc), Fraction(0)) <= Fraction(f.eps)  # exactly, no rounding
    # every answer fits and every refusal is justified: the refused query would have exceeded
    spent = []
    for r, m in zip(req, mask):
        if m:
            assert f.accepts(spent, r)
            spent.append(r)
        else:
            assert not f.accepts(spent, r)
            if mode == "halt":
                break


@settings(max_examples=150, deadline=None)
@given(budgets, costs, modes)
def test_gdp_filter_never_exceeds_the_budget(mu, req, mode):
    f = fl.GDPFilter(mu)
    mask = f.run(req, mode=mode)
    _check_mask(mask, mode)
    acc = [r for r, m in zip(req, mask) if m]
    assert sum((Fraction(r) ** 2 for r in acc), Fraction(0)) <= Fraction(f.mu) ** 2
    assert f.consumed(acc) <= f.mu * (1 + 1e-15)
    if mode == "skip":
        for i, r in enumerate(req):
            if not mask[i]:
                assert not f.accepts([q for q, m in zip(req[:i], mask[:i]) if m], r)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1.0), st.floats(0, 3.0)), min_size=0, max_size=30), modes)
def test_renyi_filter_never_exceeds_any_order_budget(req, mode):
    f = fl.RenyiFilter([2.0, 10.0], [1.5, 4.0])
    mask = f.run(req, mode=mode)
    _check_mask(mask, mode)
    acc = np.array([r for r, m in zip(req, mask) if m]).reshape(-1, 2)
    for j, b in enumerate(f.budgets):
        assert sum((Fraction(float(v)) for v in acc[:, j]), Fraction(0)) <= Fraction(b)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 0.5), st.sampled_from([0.0, 1e-8, 1e-7])), min_size=0, max_size=60),
    st.floats(0.2, 3.0),
    modes,
)
def test_approx_dp_filter_inequality_holds(req, eps, mode):
    """Whitehouse et al. 2023: sqrt(2 log(1/δ') Σε²) + ½ Σε² ≤ ε and Σδ_i ≤ δ'' for what it answers."""
    f = fl.ApproxDPFilter(eps, 1e-6, delta_prime=5e-7)
    mask = f.run(req, mode=mode)
    _check_mask(mask, mode)
    acc = np.array([r for r, m in zip(req, mask) if m]).reshape(-1, 2)
    sq = float(np.sum(acc[:, 0] ** 2))
    assert math.sqrt(2 * math.log(1 / 5e-7) * sq) + 0.5 * sq <= eps
    assert sum((Fraction(float(d)) for d in acc[:, 1]), Fraction(0)) <= Fraction(1e-6) - Fraction(5e-7)


def test_approx_dp_filter_is_the_zcdp_route():
    """The filter's left-hand side is the zCDP conversion ρ + 2 sqrt(ρ log(1/δ')) at ρ = ½ Σε²
    (Bun & Steinke 2016), so accepting means the answered queries are (ε, δ')-DP via zCDP."""
    f = fl.ApproxDPFilter(1.0, 1e-6)
    req = [[0.01, 0.0]] * 1000
    mask = f.run(req)
    k = int(mask.sum())
    rho = 0.5 * k * 0.01**2
    assert zcdp_to_approx(rho, 1e-6) == pytest.approx(f.consumed(np.array(req)[mask]), rel=1e-12)
    assert zcdp_to_approx(rho, 1e-6) <= 1.0 < zcdp_to_approx(0.5 * (k + 1) * 0.01**2, 1e-6)
    assert k > 100  # beats basic composition (100 queries) here


def test_renyi_from_target_implies_the_target():
    for eps, delta, alpha in [(1.0, 1e-6, 16.0), (3.0, 1e-8, 8.0), (0.5, 1e-5, 40.0)]:
        f = fl.RenyiFilter.from_target(eps, delta, alpha)
        assert rdp_to_approx([alpha], [f.budgets[0]], delta) <= eps
        assert rdp_to_approx([alpha], [f.budgets[0] * 1.001], delta) > eps


ORDERS = (1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 64.0, 128.0, 512.0, 4096.0)


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(0.01, 30.0), logd=st.floats(-30.0, -1.0))
def test_renyi_best_order_maximises_the_budget_per_order_mpmath(eps, logd):
    """B_α = ε − log(1 − 1/α) + (log δ + log α)/(α − 1) (Balle et al. 2020, Theorem 21 solved for B) at 40 digits:
    the order returned has the largest B_α/α (to the budget's rounding), and a Gaussian analyst
    at a fixed σ gets at least as many answers from its filter as from any other order's."""
    import mpmath as mp

    delta = math.exp(logd)
    rates = {}
    with mp.workdps(40):
        for a in ORDERS:
            ma = mp.mpf(a)
            b = mp.mpf(eps) - mp.log(1 - 1 / ma) + (mp.log(mp.mpf(delta)) + mp.log(ma)) / (ma - 1)
            if b > 0:
                rates[a] = b / ma
    if not rates:
        with pytest.raises(ValueError, match="eps"):
            fl.RenyiFilter.best_order(eps, delta, ORDERS)
        return
    try:
        best = fl.RenyiFilter.best_order(eps, delta, ORDERS)
    except ValueError:  # only where the best B_α is positive by less than its rounding
        assert max(rates.values()) * max(rates, key=rates.get) < 1e-12
        return
    assert rates[best] >= max(rates.values()) * (1 - 1e-12)
    for sigma in (3.0, 30.0):
        cost = lambda a: [a / (2 * sigma * sigma)] * 400  # noqa: E731
        n_best = int(fl.RenyiFilter.from_target(eps, delta, best).run([[c] for c in cost(best)]).sum())
        for a in rates:
            with contextlib.suppress(ValueError):
                n = int(fl.RenyiFilter.from_target(eps, delta, a).run([[c] for c in cost(a)]).sum())
                assert n_best >= n or rates[a] >= rates[best] * (1 - 1e-12), (best, a, n_best, n)


def test_renyi_best_order_values_and_errors():
    assert fl.RenyiFilter.best_order(1.0, 1e-6, ORDERS) == 24.0
    assert fl.RenyiFilter.best_order(1.0, 1e-6, [16.0]) == 16.0
    assert fl.RenyiFilter.best_order(1.0, 1e-6, np.array([16.0, 24.0])) == 24.0
    for args, name in (
        ((0.0, 1e-6, ORDERS), "eps"),
        ((1.0, 0.0, ORDERS), "delta"),
        ((1.0, 1e-6, [1.0, 2.0]), "orders"),
        ((1.0, 1e-6, []), "orders"),
        ((1.0, 1e-6, [2.0, math.inf]), "orders"),
        ((0.01, 1e-9, [2.0]), "eps"),  # no order gives a positive budget
    ):
        with pytest.raises(ValueError, match=name):
            fl.RenyiFilter.best_order(*args)


def test_filters_for_target_all_imply_the_same_guarantee():
    fs = fl.filters_for_target(1.0, 1e-6)
    assert fs["pure"].eps == 1.0
    assert gdp_delta(fs["gdp"].mu, 1.0) <= 1e-6 < gdp_delta(fs["gdp"].mu * 1.0001, 1.0)
    assert rdp_to_approx([16.0], [fs["renyi"].budgets[0]], 1e-6) <= 1.0
    assert (fs["approx"].eps, fs["approx"].delta) == (1.0, 1e-6)


def test_zcdp_filters():
    f = fl.ZCDPFilter(0.5)
    assert f.run([0.25, 0.25, 1e-300]).tolist() == [True, True, False]
    g = fl.ApproxZCDPFilter(0.5, 1e-6)
    assert g.run([[0.25, 5e-7], [0.25, 5e-7], [0.0, 1e-300]]).tolist() == [True, True, False]
    assert g.consumed([[0.25, 5e-7]]) == (0.25, 5e-7)


@pytest.mark.parametrize("name", ["pure", "gdp", "renyi", "approx"])
@pytest.mark.parametrize("mode", ["skip", "halt"])
def test_adaptive_analyst_stays_within_budget(name, mode):
    f = fl.filters_for_target(1.0, 1e-6)[name]
    truth = np.random.default_rng(0).poisson(200, 80)
    run = fl.simulate_adaptive_analyst(f, truth, np.random.default_rng(5), mode=mode)
    again = fl.simulate_adaptive_analyst(f, truth, np.random.default_rng(5), mode=mode)
    np.testing.assert_array_equal(run.answers, again.answers)  # seeded
    assert np.all(np.diff(run.consumed) >= 0)
    budget = 1.0 if name == "renyi" else float(np.max(f.budget))
    assert run.consumed[-1] <= budget * (1 + 1e-12)
    assert np.isnan(run.answers[~run.accepted]).all() and not np.isnan(run.answers[run.accepted]).any()
    # the budgets were data-dependent: the requested noise follows the previous noisy answer
    acc = np.flatnonzero(run.accepted)
    for i, j in zip(acc[:-1], acc[1:]):
        if j == i + 1:
            assert run.std[j] == pytest.approx(np.clip(0.1 * abs(run.answers[i]), 5.0, 1e3))
    if mode == "halt":
        _check_mask(run.accepted, "halt")
    # the filter itself agrees with the simulation
    costs = [fl._costs_for(f, s) for s in run.std[run.accepted]]
    assert f.run(costs).all()


def test_gdp_answers_more_than_pure_for_the_same_target():
    fs = fl.filters_for_target(1.0, 1e-6)
    truth = np.random.default_rng(0).poisson(200, 60)
    n = {k: fl.simulate_adaptive_analyst(f, truth, np.random.default_rng(1)).accepted.sum() for k, f in fs.items()}
    assert n["gdp"] > n["pure"] and n["renyi"] > n["pure"]


def test_renyi_odometer_formula():
    od = fl.RenyiOdometer([4.0, 16.0], 1e-6)
    want = min(0.1 + math.log(2 / 1e-6) / 3, 0.4 + math.log(2 / 1e-6) / 15)
    assert od.epsilon([[0.1, 0.4]]) == pytest.approx(want, rel=1e-14)
    assert od.epsilon([[0.1, 0.4]]) >= want
    traj = od.trajectory([[0.02, 0.08]] * 50)
    assert np.all(np.diff(traj) > 0) and traj[-1] == pytest.approx(od.epsilon([[0.02, 0.08]] * 50))
    # the price of an odometer: above a filter's conversion at the same final totals
    total = np.array([0.02, 0.08]) * 50
    assert traj[-1] > min(rdp_to_approx([a], [b], 1e-6) for a, b in zip(od.alphas, total))


def test_renyi_odometer_is_time_uniform_monte_carlo():
    """An adaptive Gaussian interaction: the analyst picks σ_t from the last answer; the exact loss
    between D (answers shifted by 1) and D' is L_t = Σ (y_i − 1/2)/σ_i² with y_i ~ N(1, σ_i²) under D.
    The fraction of runs where L_t exceeds ε̂_t at SOME t must be ≤ δ (up to Monte Carlo error)."""
    rng = np.random.default_rng(2024)
    alphas = np.array([2.0, 4.0, 8.0])
    delta = 0.05
    od = fl.RenyiOdometer(alphas, delta)
    runs, steps = 20_000, 40
    sigma = np.full(runs, 2.0)
    loss = np.zeros(runs)
    tot = np.zeros((runs, alphas.size))
    bad = np.zeros(runs, bool)
    for _ in range(steps):
        y = 1.0 + sigma * rng.standard_normal(runs)
        loss += (y - 0.5) / sigma**2
        tot += alphas[None, :] / (2 * sigma[:, None] ** 2)
        bad |= loss > od._eps(tot)
        sigma = np.clip(np.abs(y), 1.0, 6.0)  # fully adaptive budgets
    assert bad.mean() <= delta + 3 * math.sqrt(delta / runs)
    assert bad.mean() > 0  # the event is not vacuous here


def test_parallel_composition_and_sessions():
    assert fl.parallel_composition([1.0, 0.3, 0.7]) == 1.0
    assert fl.parallel_composition([[0.1, 0.5], [0.4, 0.2]], notion="renyi").tolist() == [0.4, 0.5]
    root = fl.Session(3.0)
    root, kids = root.partition(1.0, 2)  # the post's example: 3 → 2 left, two parts of 1
    assert root.remaining == 2.0 and [k.remaining for k in kids] == [1.0, 1.0]
    k0 = kids[0].spend(0.6)
    assert k0.accepts(0.4) and not k0.accepts(0.41)
    with pytest.raises(ValueError, match="eps"):
        k0.spend(0.5)
    root = root.spend(2.0)
    assert root.total_spent() == 3.0 and not root.accepts(1e-300)
    assert kids[0].spent == 0.0  # immutable


def test_composition_table_is_the_posts():
    t = fl.COMPOSITION_TABLE
    assert tuple(t) == fl.NOTIONS and all(tuple(row) == fl.SETTINGS for row in t.values())
    labels = {n: [t[n][s].refs for s in fl.SETTINGS] for n in fl.NOTIONS}
    assert labels == {
        "eps-DP": [("DMNS06",), ("DKMMN06",), ("RRUV16",), ("VW21",)],
        "(eps, delta)-DP": [("KOV15",), ("KOV15",), ("WRRW22",), ("WRRW22", "Lyu22")],
        "Gaussian DP": [("DRS22",), ("DRS22",), ("ST22",), ("VZ22",)],
        "f-DP": [("DRS22",), ("DRS22",), (), ("VZ22",)],
        "(alpha, eps)-Renyi DP": [("Mir17",), ("Mir17",), ("FZ21",), ("Lyu22",)],
        "rho-zCDP": [("BS16",), ("BS16",), ("FZ21",), ("Lyu22",)],
        "delta-approx. rho-zCDP": [("BS16",), ("BS16",), ("WRRW22",), ()],
    }
    opens = [(n, s) for n in fl.NOTIONS for s in fl.SETTINGS if t[n][s].status == "open"]
    assert opens == [("f-DP", "fully adaptive"), ("delta-approx. rho-zCDP", "concurrent")]
    assert "asymptotically" in t["(eps, delta)-DP"]["fully adaptive"].note
    # every implementation named exists
    for n in fl.NOTIONS:
        for s in fl.SETTINGS:
            impl = t[n][s].implementation
            if impl:
                mod, name = impl.rsplit(".", 1)
                assert hasattr(importlib.import_module(mod), name), impl
    # every label resolves to a bibliography entry
    from dpexplore.bibliography.references import get

    for key in fl.TABLE_REFERENCES.values():
        get(key)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: fl.PureDPFilter(0.0), "eps"),
        (lambda: fl.PureDPFilter(1.0).run([-0.1]), "requests"),
        (lambda: fl.PureDPFilter(1.0).run([0.1], mode="stop"), "mode"),
        (lambda: fl.GDPFilter(float("nan")), "mu"),
        (lambda: fl.RenyiFilter([1.0], [1.0]), "alphas"),
        (lambda: fl.RenyiFilter([2.0, 3.0], [1.0]), "alphas and budgets"),
        (lambda: fl.RenyiFilter([2.0], [1.0]).run([[0.1, 0.2]]), "requests"),
        (lambda: fl.RenyiFilter.from_target(0.01, 1e-9, 2.0), "eps"),
        (lambda: fl.ApproxDPFilter(1.0, 0.0), "delta"),
        (lambda: fl.ApproxDPFilter(1.0, 1e-6, delta_prime=1e-5), "delta_prime"),
        (lambda: fl.ApproxDPFilter(1.0, 1e-6).run([[0.1, 1.5]]), "requests"),
        (lambda: fl.RenyiOdometer([2.0], 0.0), "delta"),
        (lambda: fl.RenyiOdometer([2.0], 0.1).epsilon([[0.1, 0.2]]), "spent"),
        (lambda: fl.simulate_adaptive_analyst(fl.PureDPFilter(1.0), [1.0], 3), "rng"),
        (lambda: fl.simulate_adaptive_analyst("pure", [1.0], np.random.default_rng()), "filt"),
        (lambda: fl.parallel_composition([1.0], notion="f"), "notion"),
        (lambda: fl.PureDPFilter(1.0).run(np.zeros(200_001)), "requests"),
        (lambda: fl.simulate_adaptive_analyst(fl.PureDPFilter(1.0), np.ones(20_000), np.random.default_rng()), "truth"),
        (lambda: fl.Session(1.0).partition(0.5, 0), "parts"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 0.6), st.sampled_from([0.0, 1e-9, 3e-7])), min_size=0, max_size=30),
    st.floats(0.05, 3.0),
    modes,
)
def test_zcdp_filters_never_exceed_their_budgets(req, rho, mode):
    z = fl.ZCDPFilter(rho)
    mask = z.run([r[0] for r in req], mode=mode)
    _check_mask(mask, mode)
    assert sum((Fraction(r[0]) for r, m in zip(req, mask) if m), Fraction(0)) <= Fraction(z.rho)
    a = fl.ApproxZCDPFilter(rho, 1e-6)
    mask = a.run(req, mode=mode)
    _check_mask(mask, mode)
    acc = [r for r, m in zip(req, mask) if m]
    assert sum((Fraction(r[0]) for r in acc), Fraction(0)) <= Fraction(a.rho)
    assert sum((Fraction(r[1]) for r in acc), Fraction(0)) <= Fraction(a.delta)
    # with skipping, every refused request would have broken one of the two budgets
    if mode == "skip":
        for i, r in enumerate(req):
            if not mask[i]:
                assert not a.accepts([q for q, m in zip(req[:i], mask[:i]) if m] or np.zeros((0, 2)), [r])
