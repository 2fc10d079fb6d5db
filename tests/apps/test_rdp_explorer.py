"""Rényi DP explorer (dpexplore/apps/rdp_explorer.py): the compute function's arrays against
mpmath references (Steinke 2024 Theorems 4, 5; Mironov 2017 Prop. 6; the RDP → (ε, δ) conversions of
), the backend and dp_accounting; hypothesis sandwiches; invalid settings; the controller
(in-place updates, message on bad values, last good plot kept)."""

from __future__ import annotations

import dataclasses
import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpexplore.accounting.conversions import pure_to_rdp, pure_to_zcdp, rdp_to_approx
from dpexplore.apps import APPS
from dpexplore.ui.plotwidget import PlotlyWidget
from dpexplore.apps.rdp_explorer import (
    ALPHA_MAX_RANGE,
    DELTA_RANGE,
    EPS_RANGE,
    N_ORDERS,
    RHO_EPS_GRID,
    RDPController,
    RDPSpec,
    build_rdp_explorer,
    compute_rdp_explorer,
    conversion_terms,
    orders,
)
from dpexplore.mechanisms import Gaussian, Laplace

mp.mp.dps = 50
SETTINGS = settings(max_examples=40, deadline=None)
REL = 1e-9


# ------------------------------------------------------------------------------------------------
# mpmath references
# ------------------------------------------------------------------------------------------------
def mp_tight_rdp(eps, alpha):
    """Steinke 2024, Theorem 4, first form: log(e^{αε}/(e^ε+1) + e^ε e^{−αε}/(e^ε+1))/(α − 1)."""
    e, a = mp.mpf(eps), mp.mpf(alpha)
    inner = mp.exp(a * e) / (mp.exp(e) + 1) + mp.exp(e) * mp.exp(-a * e) / (mp.exp(e) + 1)
    return mp.log(inner) / (a - 1)


def mp_tight_rdp_second_form(eps, alpha):
    """Steinke 2024, Theorem 4, second form: ε − log((1 + e^{−ε})/(1 + e^{−(2α−1)ε}))/(α − 1)."""
    e, a = mp.mpf(eps), mp.mpf(alpha)
    return e - mp.log((1 + mp.exp(-e)) / (1 + mp.exp(-(2 * a - 1) * e))) / (a - 1)


def mp_laplace_rdp(eps, alpha):
    """Mironov 2017, Proposition 6 (quoted in Steinke 2024), b = 1/ε."""
    e, a = mp.mpf(eps), mp.mpf(alpha)
    return mp.log(a / (2 * a - 1) * mp.exp((a - 1) * e) + (a - 1) / (2 * a - 1) * mp.exp(-a * e)) / (a - 1)


def mp_improved(rdp, alpha, delta):
    a = mp.mpf(alpha)
    return mp.mpf(rdp) + mp.log(1 - 1 / a) - (mp.log(mp.mpf(delta)) + mp.log(a)) / (a - 1)


def mp_mironov(rdp, alpha, delta):
    return mp.mpf(rdp) + mp.log(1 / mp.mpf(delta)) / (mp.mpf(alpha) - 1)


def mp_gauss_delta(sigma, eps):
    """Balle & Wang 2018, Theorem 8, Δ = 1."""
    s, e = mp.mpf(sigma), mp.mpf(eps)
    return mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s)


def _rel(got, want):
    return abs(mp.mpf(float(got)) - want) / abs(want)


# ------------------------------------------------------------------------------------------------
# the compute function equals the references and the backend
# ------------------------------------------------------------------------------------------------
SPEC = RDPSpec(eps=1.0, delta=1e-6, alpha_max=100.0)
IDX = [0, 1, 17, 60, 100, 150, N_ORDERS - 1]


def test_orders_grid():
    a = orders(100.0)
    assert len(a) == N_ORDERS and a[-1] == 100.0 and a[0] == pytest.approx(1.001, rel=1e-15)
    assert np.all(np.diff(a) > 0)
    np.testing.assert_allclose(np.diff(np.log(a)), np.log(100.0 / 1.001) / (N_ORDERS - 1), rtol=1e-9)
    small = orders(1.01)
    assert small[0] == pytest.approx(1.001) and small[-1] == 1.01
    tiny = orders(1.0 + 1e-6)
    assert tiny[0] == pytest.approx(1.0 + 5e-7, rel=1e-12) and np.all(tiny > 1)


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_rdp_curves_match_mpmath(eps):
    r = compute_rdp_explorer(RDPSpec(eps=eps, delta=1e-6, alpha_max=100.0))
    rho = mp.mpf(eps) * mp.tanh(mp.mpf(eps) / 2)
    for i in IDX:
        a = float(r.alphas[i])
        want = mp_tight_rdp(eps, a)
        assert _rel(r.rdp_tight[i], want) < REL
        assert _rel(r.rdp_tight[i], mp_tight_rdp_second_form(eps, a)) < REL
        assert r.rdp_trivial[i] == eps
        assert _rel(r.rdp_zcdp[i], a * rho) < REL
        assert _rel(r.rdp_laplace[i], mp_laplace_rdp(eps, a)) < 1e-8
    assert float(r.rho_tight_at_eps) == pytest.approx(float(rho), rel=REL)
    # the curves are the backend's numbers exactly
    np.testing.assert_array_equal(r.rdp_tight, pure_to_rdp(eps, r.alphas))
    np.testing.assert_array_equal(r.rdp_zcdp, pure_to_rdp(eps, r.alphas, "zcdp"))
    np.testing.assert_array_equal(r.rdp_laplace, Laplace.calibrate(eps).rdp(r.alphas))


def test_gaussian_is_calibrated_to_eps_delta():
    r = compute_rdp_explorer(SPEC)
    g = Gaussian.calibrate(1.0, 1e-6)
    assert r.gaussian_sigma == g.sigma
    # the calibrated σ gives δ(ε) ≤ δ, and only just (σ is the smallest one, rounded up)
    d = mp_gauss_delta(r.gaussian_sigma, 1.0)
    assert d <= mp.mpf(1e-6) and d >= mp.mpf(1e-6) * (1 - 1e-6)
    for i in IDX:
        a = mp.mpf(float(r.alphas[i]))
        assert _rel(r.rdp_gaussian[i], a / (2 * mp.mpf(r.gaussian_sigma) ** 2)) < REL


def test_rho_panel_matches_mpmath():
    r = compute_rdp_explorer(SPEC)
    np.testing.assert_array_equal(r.rho_eps_grid, RHO_EPS_GRID)
    for i in (0, 30, 60, 90, len(RHO_EPS_GRID) - 1):
        e = mp.mpf(float(RHO_EPS_GRID[i]))
        assert _rel(r.rho_tight[i], e * (mp.exp(e) - 1) / (mp.exp(e) + 1)) < REL
        assert _rel(r.rho_quadratic[i], e * e / 2) < REL
        assert r.rho_trivial[i] == RHO_EPS_GRID[i]
    assert list(r.rho_marks) == [pure_to_zcdp(1.0), pure_to_zcdp(1.0, "quadratic"), 1.0]


@pytest.mark.parametrize(
    "spec",
    [SPEC, RDPSpec(0.3, 1e-10, 1e3), RDPSpec(3.0, 1e-3, 30.0), RDPSpec(50.0, 1e-300, 1e4), RDPSpec(1e-3, 1e-300, 1e4)],
)
def test_conversion_is_the_minimum_over_orders(spec):
    r = compute_rdp_explorer(spec)
    stack = np.stack([r.rdp_tight, r.rdp_laplace, r.rdp_gaussian])
    for bound, eps_arr, ord_arr, obj in (
        ("improved", r.eps_improved, r.order_improved, r.objective_improved),
        ("mironov", r.eps_mironov, r.order_mironov, r.objective_mironov),
    ):
        want, want_ord = rdp_to_approx(r.alphas, stack, spec.delta, bound, return_order=True)
        np.testing.assert_array_equal(eps_arr, want)
        np.testing.assert_array_equal(ord_arr, want_ord)
        ref = mp_improved if bound == "improved" else mp_mironov
        for c in range(3):
            # the per-order terms against mpmath (built on the curve values), and their minimum
            j = int(np.argmin(obj[c]))
            assert r.alphas[j] == ord_arr[c]
            for i in {0, j, N_ORDERS // 2, N_ORDERS - 1}:
                assert _rel(obj[c, i], ref(stack[c, i], r.alphas[i], spec.delta)) < 1e-9
            assert eps_arr[c] >= obj[c, j] and eps_arr[c] <= obj[c, j] * (1 + 1e-14)
    # the optimal-order markers sit on the RDP curves
    np.testing.assert_array_equal(
        r.rdp_at_improved, [stack[c, np.searchsorted(r.alphas, r.order_improved[c])] for c in range(3)]
    )


def test_conversion_reference_values():
    r = compute_rdp_explorer(SPEC)
    np.testing.assert_allclose(r.eps_improved, [1.0798, 1.0760, 1.0779], atol=5e-5)
    assert np.all(r.eps_improved < r.eps_mironov)
    # exact ε(δ): randomized response ε + log(1 − δ(1 + e^{−ε})), Laplace ε + 2 log(1 − δ)
    e, d = mp.mpf(1), mp.mpf(1e-6)
    assert _rel(r.exact_eps[0], e + mp.log(1 - d * (1 + mp.exp(-e)))) < REL
    assert _rel(r.exact_eps[1], e + 2 * mp.log(1 - d)) < REL
    assert r.exact_eps[2] == 1.0


def test_cross_check_dp_accounting():
    from dp_accounting.rdp import rdp_privacy_accountant as rpa

    for spec in (SPEC, RDPSpec(0.3, 1e-10, 1e3), RDPSpec(4.0, 1e-5, 300.0)):
        r = compute_rdp_explorer(spec)
        for i in IDX:
            a = float(r.alphas[i])
            assert r.rdp_laplace[i] == pytest.approx(rpa._laplace_rdp(spec.eps, a), rel=1e-9)
        stack = (r.rdp_tight, r.rdp_laplace, r.rdp_gaussian)
        for c in range(3):
            ref, ref_order = rpa.compute_epsilon(r.alphas, stack[c], spec.delta)
            if ref > 0:  # dp_accounting shortcuts to 0 via KL when δ is large
                assert r.eps_improved[c] == pytest.approx(ref, rel=1e-9)
                assert r.order_improved[c] == ref_order


# ------------------------------------------------------------------------------------------------
# properties
# ------------------------------------------------------------------------------------------------
eps_st = st.floats(EPS_RANGE[0], EPS_RANGE[1])
delta_st = st.floats(1e-300, 0.5).filter(lambda d: d > 0)
alpha_max_st = st.floats(1.01, ALPHA_MAX_RANGE[1])


@SETTINGS
@given(eps_st, delta_st, alpha_max_st)
def test_sandwiches_and_valid_bounds(eps, delta, alpha_max):
    r = compute_rdp_explorer(RDPSpec(eps, delta, alpha_max))
    # Laplace (ε-DP) ≤ worst case (RR) ≤ min(trivial, zCDP)
    assert np.all(r.rdp_laplace <= r.rdp_tight)
    assert np.all(r.rdp_tight <= np.minimum(r.rdp_trivial, r.rdp_zcdp))
    assert np.all(r.rdp_tight > 0)
    # improved ≤ Mironov; a conversion never claims less than the mechanism's exact ε(δ)
    assert np.all(r.eps_improved <= r.eps_mironov)
    assert np.all(r.eps_improved >= r.exact_eps * (1 - 1e-12) - 1e-300)
    # the Gaussian's exact ε(δ) ≤ ε (σ rounded up), so its converted ε ≥ its true ε(δ)
    assert r.eps_improved[2] >= Gaussian(r.gaussian_sigma).epsilon(delta) * (1 - 1e-12)
    # ρ: tight ≤ quadratic and ≤ trivial
    assert r.rho_marks[0] <= min(r.rho_marks[1], r.rho_marks[2])
    for arr in (r.objective_improved, r.objective_mironov):
        assert not np.isnan(arr).any()


@SETTINGS
@given(eps_st, st.floats(1e-200, 1e-2), st.floats(1.5, 10.0), alpha_max_st)
def test_conversion_monotone_in_delta(eps, delta, factor, alpha_max):
    lo = compute_rdp_explorer(RDPSpec(eps, delta, alpha_max))
    hi = compute_rdp_explorer(RDPSpec(eps, min(delta * factor, 0.5), alpha_max))
    # a larger δ never needs a larger ε (same curve for the pure-DP ones)
    assert np.all(hi.eps_improved[:2] <= lo.eps_improved[:2])
    assert np.all(hi.eps_mironov[:2] <= lo.eps_mironov[:2])


def test_conversion_terms_min_equals_backend():
    a = orders(1e3)
    rdp = pure_to_rdp(0.7, a)
    for bound in ("improved", "mironov"):
        t = conversion_terms(a, rdp, 1e-8, bound)
        got = rdp_to_approx(a, rdp, 1e-8, bound)
        assert t.min() <= got <= t.min() * (1 + 1e-14)
    with pytest.raises(ValueError, match="bound"):
        conversion_terms(a, rdp, 1e-8, "tight")


# ------------------------------------------------------------------------------------------------
# invalid settings
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "spec,name",
    [
        pytest.param(RDPSpec(0.0, 1e-6, 100.0), "eps", id="eps-zero"),
        pytest.param(RDPSpec(-1.0, 1e-6, 100.0), "eps", id="eps-negative"),
        pytest.param(RDPSpec(float("nan"), 1e-6, 100.0), "eps", id="eps-nan"),
        pytest.param(RDPSpec(float("inf"), 1e-6, 100.0), "eps", id="eps-inf"),
        pytest.param(RDPSpec(1.0, 0.0, 100.0), "delta", id="delta-zero"),
        pytest.param(RDPSpec(1.0, 1.0, 100.0), "delta", id="delta-one"),
        pytest.param(RDPSpec(1.0, 2.0, 100.0), "delta", id="delta-two"),
        pytest.param(RDPSpec(1.0, -1e-3, 100.0), "delta", id="delta-negative"),
        pytest.param(RDPSpec(1.0, float("nan"), 100.0), "delta", id="delta-nan"),
        pytest.param(RDPSpec(1.0, 1e-6, 1.0), "alpha_max", id="alpha-max-one"),
        pytest.param(RDPSpec(1.0, 1e-6, 0.5), "alpha_max", id="alpha-max-below-one"),
        pytest.param(RDPSpec(1.0, 1e-6, float("nan")), "alpha_max", id="alpha-max-nan"),
        pytest.param(RDPSpec(1.0, 1e-6, float("inf")), "alpha_max", id="alpha-max-inf"),
    ],
)
def test_invalid_settings_raise(spec, name):
    with pytest.raises(ValueError, match=name):
        compute_rdp_explorer(spec)


def test_slider_ranges():
    box = build_rdp_explorer()
    c = box.controller.controls
    assert (10 ** c["eps"].min, 10 ** c["eps"].max) == pytest.approx(EPS_RANGE)
    assert (10 ** c["delta"].min, 10 ** c["delta"].max) == pytest.approx(DELTA_RANGE)
    assert (10 ** c["alpha_max"].min, 10 ** c["alpha_max"].max) == pytest.approx(ALPHA_MAX_RANGE)
    for w in c.values():
        assert "[" in w.description and "]" in w.description  # label with a unit


# ------------------------------------------------------------------------------------------------
# controller and figures
# ------------------------------------------------------------------------------------------------
def _ys(trace):
    return np.array([np.nan if v is None else v for v in trace["y"]], dtype=float)


def test_figures_constructed_with_the_core_values():
    box = build_rdp_explorer()
    ctrl = box.controller
    assert len(ctrl.figs) == 3 and all(isinstance(f, PlotlyWidget) for f in ctrl.figs)
    assert [len(f.data) for f in ctrl.figs] == [6, 4, 8]
    for f in ctrl.figs:
        assert f.plot_layout["title"]["text"] and f.plot_layout["xaxis"]["title"]["text"]
        assert f.plot_layout["yaxis"]["type"] == "log" and f.plot_layout["showlegend"]
        for t in f.data:
            assert t["x"] and len(t["x"]) == len(t["y"]) and any(v is not None for v in t["y"])
    r = compute_rdp_explorer(SPEC)
    rdp = ctrl.figs[0].data
    np.testing.assert_array_equal(rdp[0]["x"], r.alphas)
    for k, arr in enumerate((r.rdp_tight, r.rdp_trivial, r.rdp_zcdp, r.rdp_laplace, r.rdp_gaussian)):
        np.testing.assert_array_equal(_ys(rdp[k]), arr)
    np.testing.assert_array_equal(rdp[5]["x"], r.order_improved)
    np.testing.assert_array_equal(_ys(ctrl.figs[1].data[3]), r.rho_marks)
    np.testing.assert_array_equal(_ys(ctrl.figs[2].data[6]), r.eps_improved)
    np.testing.assert_array_equal(_ys(ctrl.figs[2].data[7]), r.eps_mironov)
    # the conversion panel's y range keeps every minimum in view
    lo, hi = ctrl.figs[2].plot_layout["yaxis"]["range"]
    for v in np.concatenate([r.eps_improved, r.eps_mironov]):
        assert lo < math.log10(v) < hi
    # coinciding minima stay visible: one marker shape per curve
    assert ctrl.figs[0].data[5]["marker"]["symbol"] == ["diamond", "square", "circle"]
    html = ctrl.readout.value
    assert f"{r.eps_improved[2]:.4g}" in html and f"{r.order_improved[0]:.3g}" in html


@pytest.mark.parametrize(
    "name,value,changed",
    [
        ("eps", 2.0, (0, 1, 2)),
        ("delta", 1e-9, (0, 2)),
        ("alpha_max", 20.0, (0, 2)),
    ],
)
def test_controller_updates_in_place(name, value, changed):
    box = build_rdp_explorer()
    ctrl = box.controller
    figs = list(ctrl.figs)
    before = [list(f.data) for f in figs]
    ctrl.controls[name].value = value
    assert ctrl.message.text == ""
    assert [id(f) for f in ctrl.figs] == [id(f) for f in figs]
    spec = RDPSpec(**{**SPEC.__dict__, name: value})
    assert ctrl.spec == spec
    r = compute_rdp_explorer(spec)
    for i in changed:
        assert figs[i].data != before[i]
    np.testing.assert_array_equal(_ys(figs[0].data[4]), r.rdp_gaussian)
    np.testing.assert_array_equal(_ys(figs[2].data[6]), r.eps_improved)
    np.testing.assert_array_equal(figs[0].data[0]["x"], r.alphas)
    lo, hi = figs[2].plot_layout["yaxis"]["range"]
    assert lo < math.log10(r.eps_improved.min()) and math.log10(r.eps_mironov.max()) < hi


@pytest.mark.parametrize(
    "label,typed,end",
    [("δ [probability]", "1", DELTA_RANGE[1]), ("α_max [largest Rényi order]", "1", ALPHA_MAX_RANGE[0])],
)
def test_every_slider_position_is_valid(label, typed, end):
    """Issue 11 (6): δ = 1 and α_max = 1 were slider ends that were always refused. Now the
    sliders end where the theory does; typing past an end sets the end and says so."""
    box = build_rdp_explorer()
    box.apply_typed(label, typed)
    ctrl = box.controller
    assert ctrl.last_error is None
    assert "set to" in ctrl.message.text and ctrl.message.layout.display is None
    got = ctrl.spec.delta if label.startswith("δ") else ctrl.spec.alpha_max
    assert got == pytest.approx(end, rel=1e-12)


@pytest.mark.parametrize(
    "name,value,needle",
    [
        ("delta", 1.0, "delta must lie in (0, 1)"),
        ("alpha_max", 1.0, "alpha_max must be > 1"),
    ],
)
def test_bad_value_shows_message_and_keeps_the_plot(name, value, needle):
    box = build_rdp_explorer()
    ctrl = box.controller
    ctrl.controls["eps"].value = 0.5
    good = [list(f.data) for f in ctrl.figs]
    good_readout = ctrl.readout.value
    # a value the sliders cannot reach (a notebook user can still set it from Python)
    ctrl.controls[name].max, ctrl.controls[name].min = (0.0, -300.0) if name == "delta" else (4.0, 0.0)  # exponents
    ctrl.controls[name].value = value
    assert needle in ctrl.message.text and "last valid setting" in ctrl.message.text
    assert ctrl.message.layout.display is None
    assert isinstance(ctrl.last_error, ValueError)
    assert [list(f.data) for f in ctrl.figs] == good and ctrl.readout.value == good_readout
    ctrl.controls[name].value = 1e-3 if name == "delta" else 50.0
    assert ctrl.message.text == "" and ctrl.message.layout.display == "none"
    assert [list(f.data) for f in ctrl.figs] != good


def test_extreme_but_computable_settings_are_computed():
    box = build_rdp_explorer()
    ctrl = box.controller
    ctrl.controls["eps"].value = 50.0
    ctrl.controls["delta"].value = 1e-300
    ctrl.controls["alpha_max"].value = 1e4
    assert ctrl.message.text == ""
    assert ctrl.spec == RDPSpec(50.0, 1e-300, 1e4)
    r = ctrl.result
    assert np.all(np.isfinite(r.eps_improved)) and np.all(r.eps_improved >= 50.0 * (1 - 1e-12))


def test_large_delta_gap_is_explained():
    r = compute_rdp_explorer(RDPSpec(0.01, 0.5, 100.0))
    assert r.eps_improved[0] == 0.0
    assert "ε = 0 means" in RDPController.readout_html(r)
    lo, hi = RDPController._yaxis_range(r)["range"]
    for v in np.concatenate([r.eps_improved, r.eps_mironov]):
        assert v == 0 or lo < math.log10(v) < hi
    zeros = dataclasses.replace(r, eps_improved=np.zeros(3), eps_mironov=np.zeros(3))
    assert RDPController._yaxis_range(zeros) == {"autorange": True}


def test_registered_in_gallery():
    assert any(nb == "rdp_explorer.ipynb" for nb, _, _ in APPS)
