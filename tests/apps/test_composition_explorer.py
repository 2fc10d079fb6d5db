"""Composition explorer: the compute function returns the backend's numbers (checked against mpmath
closed forms and the backend functions), the theorems are ordered as they must be, bad settings
raise ValueError naming the parameter, and the controller updates its figures in place."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dpexplore.accounting import composition as C
from dpexplore.accounting import conversions as CV
from dpexplore.apps import APPS
from dpexplore.apps.composition_explorer import (
    ALPHAS,
    K_GRID,
    K_TIGHT_PLD,
    NOISE_CURVES,
    THEOREMS,
    CompositionSpec,
    build_composition_explorer,
    compute_composition,
    make_mechanism,
)
from dpexplore.mechanisms import Gaussian, Laplace, RandomizedResponse

mp.mp.dps = 50
DEFAULT = CompositionSpec()  # Laplace, ε = 0.1, δ = 0, k = 100, δ′ = 1e-6, ε_T = 1


def rel(a, b):
    return abs(a - b) / abs(b)


def mp_advanced(eps, k, slack):
    e, k = mp.mpf(eps), mp.mpf(k)
    return mp.sqrt(2 * k * mp.log(1 / mp.mpf(slack))) * e + k * e * mp.expm1(e)


def mp_advanced_pure(eps, k, slack):
    s2 = mp.mpf(k) * mp.mpf(eps) ** 2
    return s2 / 2 + mp.sqrt(2 * mp.log(1 / mp.mpf(slack)) * s2)


def mp_zcdp(eps, k, slack):
    e = mp.mpf(eps)
    rho = mp.mpf(k) * e * mp.tanh(e / 2)
    return rho + 2 * mp.sqrt(rho * mp.log(1 / mp.mpf(slack)))


@pytest.fixture(scope="module")
def default_result():
    return compute_composition(DEFAULT)


# ------------------------------------------------------------------------------------------------
# values
# ------------------------------------------------------------------------------------------------
def test_grid_is_the_k_slider_positions():
    positions = np.unique(np.round(10.0 ** (np.arange(41) / 10.0)))
    assert np.array_equal(K_GRID, positions) and K_GRID[0] == 1 and K_GRID[-1] == 10_000
    assert 30 <= K_GRID.size <= 60


@pytest.mark.parametrize(
    "spec", [DEFAULT, CompositionSpec(eps=0.5, delta=1e-9, delta_total=1e-5)], ids=["pure", "approx"]
)
def test_closed_forms_match_mpmath(spec):
    r = compute_composition(spec)
    for name, ref in (("advanced", mp_advanced), ("advanced_pure", mp_advanced_pure), ("zcdp", mp_zcdp)):
        ks, vals = r.curves[name]
        for i in (0, 7, 17, 27):
            k = int(ks[i])
            slack = mp.mpf(spec.delta_total) - k * mp.mpf(spec.delta)
            assert vals[i] >= float(ref(spec.eps, k, slack)) * (1 - 1e-14), (name, k)
            assert rel(vals[i], float(ref(spec.eps, k, slack))) < 1e-9, (name, k)
    ks, basic = r.curves["basic"]
    assert np.allclose(basic, ks * spec.eps, rtol=1e-15, atol=0)


def test_curves_equal_backend(default_result):
    r, s = default_result, DEFAULT
    mech = make_mechanism("laplace", s.eps, 0.0)
    assert mech == Laplace.calibrate(0.1)
    for i in (0, 9, 20, 37):
        k = int(K_GRID[i])
        assert r.curves["optimal"][1][i] == pytest.approx(C.optimal(s.eps, k, s.delta_total), rel=1e-12)
        ref_adv, dtot = C.advanced(s.eps, 0.0, k, s.delta_total * (1 - 1e-15))
        assert r.curves["advanced"][1][i] == pytest.approx(ref_adv, rel=1e-13) and dtot <= s.delta_total
        rdp = CV.rdp_to_approx(ALPHAS, k * np.asarray(mech.rdp(ALPHAS)), s.delta_total)
        assert r.curves["rdp"][1][i] == pytest.approx(rdp, rel=1e-12)
    ks, tight = r.curves["tight"]
    assert np.array_equal(ks, K_TIGHT_PLD)
    for i in (0, 2, 4, 8):
        ref = C.compose(mech, int(ks[i])).epsilon(s.delta_total)
        kov = C.optimal(float(mech.eps_max), int(ks[i]), s.delta_total)
        assert tight[i] == pytest.approx(min(ref, kov), rel=1e-12)
    # the numbers at k = 100 (doctest values of the backend)
    assert r.at_k["basic"] == 10.0
    assert r.at_k["optimal"] == pytest.approx(4.774568, abs=1e-6)
    assert r.at_k["tight"] == pytest.approx(C.compose(mech, 100).epsilon(1e-6), rel=1e-12)


@pytest.mark.parametrize("mechanism,k", [("gaussian", 1), ("gaussian", 251), ("rr", 40), ("rr", 10_000)])
def test_tight_equals_compose(mechanism, k):
    spec = CompositionSpec(eps=0.3, delta=1e-8, k=k, delta_total=1e-5, mechanism=mechanism)
    r = compute_composition(spec)
    mech = make_mechanism(mechanism, 0.3, 1e-8)
    assert isinstance(mech, Gaussian if mechanism == "gaussian" else RandomizedResponse)
    ref = C.compose(mech, k).epsilon(1e-5)
    assert r.at_k["tight"] == pytest.approx(ref, rel=1e-9)
    ks, vals = r.curves["tight"]
    assert np.array_equal(ks, K_GRID)
    assert vals[list(ks).index(k)] == r.at_k["tight"]


def test_off_grid_k_is_computed_exactly():
    r = compute_composition(CompositionSpec(k=37))
    assert 37 not in K_GRID
    assert r.at_k["optimal"] == pytest.approx(C.optimal(0.1, 37, 1e-6), rel=1e-12)
    assert r.at_k["basic"] == pytest.approx(3.7, rel=1e-15)
    assert rel(r.at_k["advanced_pure"], float(mp_advanced_pure(0.1, 37, 1e-6))) < 1e-9
    mech = Laplace.calibrate(0.1)
    assert r.at_k["tight"] == pytest.approx(
        min(C.compose(mech, 37).epsilon(1e-6), C.optimal(float(mech.eps_max), 37, 1e-6)), rel=1e-12
    )
    assert r.noise_at_k["optimal"] == pytest.approx(1.0 / C.per_step_budget(1.0, 1e-6, 37, "optimal"), rel=1e-12)


def test_crossovers_match_closed_form(default_result):
    # DRV beats basic iff √(2L/k) < 2 − e^ε, i.e. k > 2L/(2 − e^ε)² (δ = 0)
    L = mp.log(mp.mpf(10) ** 6)
    k_star = int(mp.floor(2 * L / (2 - mp.e ** mp.mpf("0.1")) ** 2)) + 1
    cross = {THEOREMS[name]: k for name, k, _ in default_result.crossovers}
    assert cross[THEOREMS["advanced"]] == k_star == 35
    # Steinke 2022 form: ½kε² + √(2Lk)ε < kε  ⇔  √(2L/k) < 1 − ε/2
    k_pure = int(mp.floor(2 * L / (1 - mp.mpf("0.05")) ** 2)) + 1
    assert cross[THEOREMS["advanced_pure"]] == k_pure
    for _label, k, y in default_result.crossovers:
        assert y == pytest.approx(0.1 * k, rel=1e-15)


def test_noise_curves(default_result):
    r = default_result
    assert list(r.noise) == list(r.noise_at_k) == list(NOISE_CURVES)  # the legend order
    assert list(r.curves) == list(r.at_k) == list(THEOREMS)
    ks, basic = r.noise["basic"]
    assert np.allclose(basic, ks / 1.0, rtol=1e-14)
    ks, st_ = r.noise["steinke"]
    rho = mp.mpf(1) / (4 * mp.log(mp.mpf(10) ** 6) + 4)
    for i in (0, 20, 37):
        assert rel(st_[i], float(mp.sqrt(int(ks[i]) / (2 * rho)))) < 1e-9
    for name in ("advanced", "advanced_pure", "zcdp"):
        ks, vals = r.noise[name]
        assert np.allclose(vals, 1.0 / np.asarray(C.per_step_budget(1.0, 1e-6, ks, name)), rtol=1e-14)
    for name in NOISE_CURVES:  # the app draws the backend's scales (rounded up), nothing of its own
        ks, vals = r.noise[name]
        np.testing.assert_array_equal(vals, C.per_step_laplace_scale(1.0, 1e-6, ks, theorem=name))
        if name != "steinke":
            assert np.all(vals >= 1.0 / np.asarray(C.per_step_budget(1.0, 1e-6, ks, name)))
    ks, vals = r.noise["optimal"]
    assert np.array_equal(ks, K_TIGHT_PLD)
    assert vals[4] == pytest.approx(1.0 / C.per_step_budget(1.0, 1e-6, 100, "optimal"), rel=1e-12)
    # Θ(k) against Θ(√k): from k = 100 to 10⁴ basic grows 100×, the others about 10×
    assert r.noise["basic"][1][-1] / r.noise["basic"][1][17] == pytest.approx(100.0)
    assert 8 < r.noise["advanced_pure"][1][-1] / r.noise["advanced_pure"][1][17] < 12


def test_budget_exhausted_gives_gaps_not_errors():
    r = compute_composition(CompositionSpec(eps=0.2, delta=1e-7, k=126, delta_total=1e-5, mechanism="gaussian"))
    ks, adv = r.curves["advanced"]
    assert np.all(np.isinf(adv[ks * 1e-7 >= 1e-5])) and np.all(np.isfinite(adv[ks < 50]))
    assert np.all(np.isinf(r.curves["basic"][1][ks > 100]))
    assert np.all(np.isfinite(r.curves["tight"][1])) and np.all(np.isfinite(r.curves["rdp"][1]))
    assert math.isinf(r.at_k["advanced"]) and math.isinf(r.at_k["basic"]) and math.isinf(r.at_k["optimal"])
    assert math.isfinite(r.at_k["tight"]) and "no slack" in r.delta_spent["advanced"]
    # the slack of the closed forms is the backend's delta_slack (0 from k = 100 on)
    ok = ks < 100
    np.testing.assert_array_equal(adv[ok], C.advanced(0.2, 0.0, ks[ok], C.delta_slack(1e-7, 1e-5, ks[ok]))[0])
    assert r.notes and "beyond k = 100" in r.notes[0]


@pytest.mark.parametrize(
    "spec",
    [
        CompositionSpec(eps=50.0, k=10_000, mechanism="rr"),
        CompositionSpec(eps=50.0, delta=1e-12, mechanism="gaussian"),
        CompositionSpec(eps=0.1, delta_total=1e-300, mechanism="rr", eps_budget=0.01),
        CompositionSpec(eps=1e-3, delta=1e-15, delta_total=1e-15, mechanism="gaussian"),
    ],
    ids=["eps50", "gauss-eps50", "delta1e-300", "tiny"],
)
def test_extreme_settings_are_computed(spec):
    r = compute_composition(spec)
    for name, (_ks, vals) in r.curves.items():
        assert not np.any(np.isnan(vals)) and np.all(vals >= 0), name
    for name, v in r.at_k.items():
        assert not math.isnan(v) and v >= 0, name
    for _ks, vals in r.noise.values():
        assert not np.any(np.isnan(vals)) and np.all(vals > 0)


@settings(max_examples=15, deadline=None)
@given(
    eps=st.floats(1e-3, 5.0),
    delta=st.sampled_from([0.0, 1e-12, 1e-9]),
    delta_total=st.floats(1e-12, 1e-2),
    mechanism=st.sampled_from(["gaussian", "rr"]),
)
def test_theorems_are_ordered(eps, delta, delta_total, mechanism):
    if mechanism == "gaussian" and delta == 0.0:
        delta = 1e-12
    if delta > delta_total:
        return
    r = compute_composition(CompositionSpec(eps=eps, delta=delta, delta_total=delta_total, mechanism=mechanism))
    c = {n: v for n, (_, v) in r.curves.items()}
    for loose in ("basic", "advanced", "advanced_pure", "zcdp"):
        assert np.all(c["optimal"] <= c[loose] * (1 + 1e-9) + 1e-300), loose  # KOV is optimal for the class
    # (+1e-300: KOV rounds an exact 0 up to a few denormals)
    assert np.all(c["tight"] <= c["optimal"] * (1 + 1e-9) + 1e-300)  # the mechanism is in the class
    assert np.all(c["tight"] <= c["rdp"] * (1 + 1e-9) + 1e-300)  # RDP is a bound for it
    assert np.all(np.diff(c["basic"][np.isfinite(c["basic"])]) > 0)


# ------------------------------------------------------------------------------------------------
# invalid settings
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,name",
    [
        ({"eps": 0.0}, "eps"),
        ({"eps": -1.0}, "eps"),
        ({"eps": float("nan")}, "eps"),
        ({"delta": 1.0}, "delta"),
        ({"delta": -1e-9}, "delta"),
        ({"delta_total": 1.0}, "delta_total"),
        ({"k": 0}, "k"),
        ({"k": 2.5}, "k"),
        ({"k": 10_001}, "k"),
        ({"eps_budget": 0.0}, "eps_budget"),
        ({"mechanism": "cauchy"}, "mechanism"),
        ({"mechanism": "gaussian", "delta": 0.0}, "delta"),
        ({"delta": 1e-3, "delta_total": 1e-6}, "delta_total"),
    ],
    ids=lambda x: str(x),
)
def test_invalid_settings_raise(kwargs, name):
    with pytest.raises(ValueError, match=name):
        compute_composition(CompositionSpec(**kwargs))


# ------------------------------------------------------------------------------------------------
# the controller and the app
# ------------------------------------------------------------------------------------------------
def test_figures_constructed_non_empty():
    box = build_composition_explorer()
    main, noise = box.controller.figs[:2]
    assert len(main.data) == len(THEOREMS) + 2 and len(noise.data) == len(NOISE_CURVES) + 1
    for fig in (main, noise):
        assert fig.plot_layout["title"]["text"] and fig.plot_layout["xaxis"]["type"] == "log"
        assert fig.plot_layout["yaxis"]["type"] == "log" and fig.plot_layout["xaxis"]["title"]["text"]
        for t in fig.data:
            assert t["x"] and t["y"] and len(t["x"]) == len(t["y"]) and t["name"]
            assert any(v is not None for v in t["y"])
    assert [n for n, _, _ in APPS].count("composition_explorer.ipynb") == 1


def test_controller_updates_in_place_and_shows_errors():
    box = build_composition_explorer()
    ctrl = box.controller
    c = ctrl.controls
    main, noise = ctrl.figs[:2]
    ids = (id(main), id(noise))
    basic_before = list(main.data[0]["y"])
    c["eps"].value = 0.2
    assert (id(ctrl.figs[0]), id(ctrl.figs[1])) == ids
    assert main.data[0]["y"] != basic_before
    assert main.data[0]["y"][-1] == pytest.approx(2000.0)  # basic: kε at k = 10⁴
    assert main.data[5]["y"][17] == pytest.approx(C.optimal(0.2, 100, 1e-6), rel=1e-12)
    # k moves the marker and the vertical line, read from the cached arrays
    c["k"].value = 1000
    assert main.data[-2]["x"][0] == 1000 and main.plot_layout["shapes"][0]["x0"] == 1000
    assert main.data[-2]["y"][0] == pytest.approx(200.0)
    assert "At k = 1,000" in ctrl.readout.value
    # a bad combination: per-step δ above the total budget → message, plots unchanged
    c["pure"].value = False  # δ = 1e-9 per step: valid
    assert ctrl.spec.delta == pytest.approx(1e-9) and ctrl.message.text == ""
    snapshot = [list(t["y"]) for t in main.data]
    c["delta"].value = 1e-2
    assert "not even one step fits" in ctrl.message.text and "Traceback" not in ctrl.message.text
    assert [list(t["y"]) for t in main.data] == snapshot
    # Gaussian with δ = 0 → message too
    c["delta"].value = 1e-9
    assert ctrl.message.text == ""
    c["pure"].value = True
    c["mechanism"].value = "gaussian"
    assert "impossible for the Gaussian" in ctrl.message.text
    c["pure"].value = False
    assert ctrl.message.text == "" and ctrl.spec.mechanism == "gaussian"
    # the noise plot follows ε_T
    c["eps_budget"].value = 2.0
    assert noise.data[0]["y"][-1] == pytest.approx(5000.0, rel=1e-12)


def test_k_runs_tabs_show_one_and_k_runs_through_the_shared_views():
    """The three k-runs tabs: drawn at build, skipped while closed, redrawn when opened; one run's
    and k runs' δ(ε) are the profiles' values, the ε(δ′) marker of k runs is the readout's tight ε,
    the Gaussian's GDP curves have the exact μ = Δ/σ and √k Δ/σ."""
    import ipywidgets as W

    from dpexplore.display import format_up
    from dpexplore.ui.views import matched_mu

    box = build_composition_explorer()
    ctrl = box.controller
    tabs = next(w for w in box.widgets() if isinstance(w, W.Tab))
    assert [tabs.get_title(i) for i in range(5)] == [
        "Total ε against k",
        "Noise per query",
        "k runs: privacy profile",
        "k runs: trade-off",
        "k runs: attack risk",
    ]
    prof, trade, attack = ctrl.k_runs_figs
    assert ctrl.figs[2:] == ctrl.k_runs_figs
    r = ctrl.result
    mech = r.mechanism
    many = C.compose(mech, 100)
    names = [t["name"] for t in prof.data]
    assert names[0].startswith("one run: Laplace with scale b = 10") and names[3].startswith("k = 100 runs")
    for i, p in ((0, mech.profile), (3, many)):
        x = np.array(prof.data[i]["x"], dtype=float)
        y = np.array([np.nan if v is None else v for v in prof.data[i]["y"]], dtype=float)
        want = np.asarray(p.delta(x), dtype=float)
        np.testing.assert_array_equal(y[~np.isnan(y)], want[~np.isnan(y)])
        assert np.all(want[np.isnan(y)] == 0.0)  # gaps only where δ = 0
    assert prof.data[5]["x"][0] == r.at_k["tight"] and prof.data[5]["y"][0] == 1e-6
    mu = matched_mu(r.at_k["tight"], 1e-6)
    assert names[4] == f"μ = {format_up(mu)} GDP (through ε(δ′ = 1e-06))"
    assert len(trade.data) == 3 and len(attack.data) == 3
    # closed tabs: a step of k leaves them as they are; opening one draws the current k
    before = [list(t["y"]) for t in prof.data]
    ctrl.controls["k"].value = 1000
    assert [list(t["y"]) for t in prof.data] == before
    tabs.selected_index = 2
    assert ctrl.k_runs_open and prof.data[3]["name"].startswith("k = 1,000 runs")
    assert prof.data[5]["x"][0] == ctrl.result.at_k["tight"]
    # while open, every step redraws them: the Gaussian's exact μ
    ctrl.controls["pure"].value = False
    ctrl.controls["mechanism"].value = "gaussian"
    assert ctrl.message.text == ""
    m = ctrl.result.mechanism
    mu1 = 1.0 / float(m.sigma)
    assert [t["name"] for t in prof.data if t["name"].startswith("μ")] == [
        f"μ = {format_up(mu1)} GDP (exact)",
        f"μ = {format_up(math.sqrt(1000) * mu1)} GDP (exact)",
    ]
    tabs.selected_index = 0
    assert not ctrl.k_runs_open
