"""Unit tests of the privacy-profile-vs-GDP dashboard (dpexplore/apps/profile_gdp.py).

Reference values: mpmath at 50 digits for the closed forms (Laplace profile, δ_μ of Liu et al. 2022 Thm 3.1,
G_μ, randomized response's μ* = 2Φ⁻¹(e^ε/(1 + e^ε))); the backend (mechanisms, conversions) for
everything the dashboard only re-plots.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpexplore.accounting import conversions as C
from dpexplore import mechanisms as M
from dpexplore.apps import profile_gdp as P
from dpexplore.ui.plotwidget import PlotlyWidget

mp.mp.dps = 50


def _spec(kind, params, mus=(1.0, 2.0)):
    return P.ProfileGdpSpec(P.MechSpec(kind, tuple(float(p) for p in params)), tuple(mus))


def _mp_gdp_delta(mu, eps):
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


def _mp_g(mu, alpha):
    if alpha == 0:
        return mp.mpf(1)
    if alpha == 1:
        return mp.mpf(0)
    # Φ⁻¹(1 − α) = −√2 erfinv(2α − 1)... with mpmath: solve via erfinv
    q = mp.sqrt(2) * mp.erfinv(1 - 2 * mp.mpf(alpha))
    return mp.ncdf(q - mu)


def _rel(a, b):
    return abs(float((mp.mpf(a) - b) / b)) if b != 0 else abs(float(a))


def _y(trace):
    return np.array([np.nan if v is None else v for v in trace["y"]], dtype=float)


# ------------------------------------------------------------------------------------------------
# compute: values equal the closed forms / the backend
# ------------------------------------------------------------------------------------------------
def test_laplace_profile_and_gdp_curves_are_the_closed_forms():
    r = P.compute_profile_gdp(_spec("laplace", (0.8,), (1.0, 2.5)))
    s = r.summary
    assert r.eps.size == P.N_EPS + 12 and r.eps[0] == 0.0  # + 12 points approaching ε_max
    assert np.all(np.diff(r.eps) > 0) and np.any((r.eps < 1.25) & (r.eps > 1.25 * (1 - 1e-11)))
    assert s.eps_max == pytest.approx(1.25, rel=1e-15)
    # the plotted range reaches where δ_1 (the smallest μ) falls to DELTA_FLOOR
    assert r.eps[-1] == pytest.approx(1.15 * C.gdp_epsilon(1.0, P.DELTA_FLOOR), rel=1e-12)
    for i in range(0, r.eps.size, 7):
        e = mp.mpf(float(r.eps[i]))
        want = max(mp.mpf(0), 1 - mp.exp((e - mp.mpf(1) / mp.mpf(0.8)) / 2))
        if want > 0:
            assert _rel(r.delta[i], want) < 1e-9
        else:
            assert r.delta[i] == 0.0
        for j, mu in enumerate((1.0, 2.5)):
            assert _rel(r.delta_mu[j, i], _mp_gdp_delta(mu, e)) < 1e-9
    np.testing.assert_array_equal(r.delta, M.Laplace(0.8).delta(r.eps))
    np.testing.assert_array_equal(s.delta, M.Laplace(0.8).delta(s.eps))
    np.testing.assert_array_equal(s.beta, M.Laplace(0.8).tradeoff(P.ALPHA_GRID))


def test_tradeoff_gdp_curves_are_g_mu():
    r = P.compute_profile_gdp(_spec("gaussian", (1.0,), (0.5, 3.0)))
    for j, mu in enumerate((0.5, 3.0)):
        for i in range(0, P.ALPHA_GRID.size, 13):
            a = float(P.ALPHA_GRID[i])
            want = _mp_g(mu, a)
            got = r.g_mu[j, i]
            assert abs(got - float(want)) <= 1e-9 * float(want) + 1e-15
    # the Gaussian mechanism N(0, 1) is exactly 1-GDP: its trade-off is G_1
    np.testing.assert_allclose(r.summary.beta, C.tradeoff_gdp(1.0, P.ALPHA_GRID), rtol=1e-9, atol=1e-15)


def test_gaussian_verdict_is_delta_over_sigma():
    v = P.mechanism_summary(P.MechSpec("gaussian", (0.5,))).verdict
    assert v.is_gdp and v.method.startswith("measured")
    assert v.mu_t == pytest.approx(2.0, rel=1e-6)
    assert v.mu_lower < 2.0 <= v.mu_upper and v.mu_upper - v.mu_lower <= P.MEASURE_TOL + 1e-12
    assert v.status(2.0 + 2e-3) == "yes" and v.status(1.99) == "no"


def test_laplace_verdict_equals_backend_measurement():
    v = P.mechanism_summary(P.MechSpec("laplace", (1.0,))).verdict
    lo, hi = C.gdp_measure(M.Laplace(1.0).profile, tol=P.MEASURE_TOL)
    assert (v.mu_lower, v.mu_upper) == (lo, hi)
    assert v.mu_t == 0.0 == C.gdp_identify(M.Laplace(1.0).profile)
    # Liu et al. 2022 Fig. 1 right: Laplace (b = 1) is 2-GDP but not 1-GDP
    assert v.status(2.0) == "yes" and v.status(1.0) == "no"


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_randomized_response_bracket_holds_the_exact_mu(eps):
    v = P.mechanism_summary(P.MechSpec("pure", (eps,))).verdict
    e = mp.mpf(eps)
    # μ* = 2Φ⁻¹(e^ε/(1 + e^ε)) for randomized response (Liu et al. 2022, result “all ε-DP algorithms are GDP”; binding at ε' = 0)
    exact = 2 * mp.sqrt(2) * mp.erfinv(2 * mp.exp(e) / (1 + mp.exp(e)) - 1)
    assert v.mu_lower < float(exact) <= v.mu_upper


def test_subbotin_heavy_tail_is_not_gdp_and_light_tail_is():
    heavy = P.compute_profile_gdp(_spec("subbotin", (1.0, 3.0)))
    assert not heavy.verdict.is_gdp and heavy.verdict.mu_t == math.inf
    assert heavy.delta_upper is None and heavy.g_upper is None
    assert {heavy.verdict.status(m) for m in (0.5, 5.0, 50.0)} == {"no"}
    light = P.mechanism_summary(P.MechSpec("subbotin", (1.0, 1.0)))  # r = 1: Laplace(1)
    assert light.verdict.is_gdp and light.verdict.mu_upper == pytest.approx(1.031, abs=2e-3)
    np.testing.assert_allclose(light.delta, M.Subbotin(1.0, 1.0).delta(light.eps), rtol=0, atol=0)
    r = P.compute_profile_gdp(_spec("subbotin", (1.0, 1.5)))
    np.testing.assert_array_equal(r.delta, M.Subbotin(1.0, 1.5).delta(r.eps))


def test_equation_naive_and_refined_follow_002_figure_1():
    r = P.compute_profile_gdp(_spec("equation", (2.0, 1.0, 2.0)))
    s = r.summary
    naive = C.equation_profile(2.0, 1.0, 2.0)
    refined = C.equation_profile(2.0, 1.0, 2.0, refined=True)
    np.testing.assert_array_equal(s.delta_naive, naive.delta(s.eps))
    np.testing.assert_allclose(s.delta, refined.delta(s.eps), rtol=1e-12)
    np.testing.assert_array_equal(r.delta_naive, naive.delta(r.eps))
    np.testing.assert_allclose(r.delta, refined.delta(r.eps), rtol=1e-12)
    # naive: δ(0) = B = 1, so not GDP for any μ; refined: δ(0) < 1 (Theorem 2.1) and GDP
    assert s.delta_naive[0] == 1.0 and s.delta[0] < 0.65
    assert not s.verdict_naive.is_gdp and "δ(0) = 1" in s.verdict_naive.reason
    assert s.verdict.is_gdp and s.verdict.mu_t == pytest.approx(1 / math.sqrt(2), rel=1e-6)
    # tail: log δ = −(σε/A)² ⇒ μ_t = A/(σ√2); the measured μ* is larger (the head binds)
    assert s.verdict.mu_upper > s.verdict.mu_t
    # trade-off: the envelope of f_{ε, δ(ε)} over the grid (Dong, Roth & Su Proposition 2.5)
    ok = s.delta < 1
    env = np.max(C.tradeoff_approx(s.eps[ok][:, None], s.delta[ok][:, None], P.ALPHA_GRID[None, :]), axis=0)
    np.testing.assert_array_equal(s.beta, env)
    assert np.all(s.beta_naive <= s.beta + 1e-15)  # refined claims at least as much privacy


def test_extreme_gaussian_falls_back_to_theory_with_a_violated_lower_end():
    s = P.mechanism_summary(P.MechSpec("gaussian", (0.05,)))  # μ = 20
    v = s.verdict
    assert v.is_gdp and v.mu_upper is not None
    assert v.mu_upper >= 20.0 * (1 - 1e-12)
    if v.method == "fallback":
        assert v.mu_upper == 20.0
        # μ_lower is explicitly violated on the plotted grid
        assert np.any(np.log(s.delta) > C.gdp_log_delta(v.mu_lower, s.eps) + 1e-9)
    assert v.mu_lower < 20.0


@settings(max_examples=15, deadline=None)
@given(st.floats(0.05, 20.0))
def test_certified_upper_curve_lies_above_the_profile(b):
    r = P.compute_profile_gdp(_spec("laplace", (b,)))
    assert r.delta_upper is not None
    assert np.all(r.delta <= r.delta_upper * (1 + 1e-9))
    assert np.all(r.summary.delta <= C.gdp_delta(r.verdict.mu_upper, r.summary.eps) * (1 + 1e-9))


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(0.01, 50.0), min_size=1, max_size=P.MAX_MUS))
def test_gdp_curves_increase_with_mu(mus):
    mus = sorted(mus)
    r = P.compute_profile_gdp(_spec("pure", (1.0,), tuple(mus)))
    assert np.all(np.diff(r.delta_mu, axis=0) >= -1e-15)
    assert np.all(np.diff(r.g_mu, axis=0) <= 1e-15)
    assert np.all((r.delta_mu >= 0) & (r.delta_mu <= 1))


# ------------------------------------------------------------------------------------------------
# invalid input
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, match",
    [
        ("", "mu"),
        ("  ,  ", "mu"),
        ("a", "mu"),
        ("1, b", "mu"),
        ("0", "mu"),
        ("-1", "mu"),
        ("nan", "mu"),
        ("inf", "mu"),
        ("1,2,3,4,5,6,7", "mu"),
    ],
    ids=["empty", "commas", "word", "mixed", "zero", "negative", "nan", "inf", "too-many"],
)
def test_parse_mus_rejects(text, match):
    with pytest.raises(ValueError, match=match):
        P.parse_mus(text)


def test_parse_mus_accepts():
    assert P.parse_mus("1, 2") == (1.0, 2.0)
    assert P.parse_mus("0.5;4 ,") == (0.5, 4.0)


@pytest.mark.parametrize(
    "kind, params, match",
    [
        ("laplace", (0.0,), "scale"),
        ("laplace", (-1.0,), "scale"),
        ("gaussian", (0.0,), "sigma"),
        ("pure", (-0.5,), "eps"),
        ("logistic", (float("nan"),), "scale"),
        ("subbotin", (1.0, 0.5), "shape"),
        ("equation", (2.0, 0.0, 2.0), "B"),
        ("equation", (0.0, 1.0, 2.0), "A"),
        ("equation", (2.0, 1.0, -2.0), "sigma"),
    ],
    ids=lambda x: str(x),
)
def test_backend_rejects_bad_parameters(kind, params, match):
    with pytest.raises(ValueError, match=match):
        P.compute_profile_gdp(_spec(kind, params))


@pytest.mark.parametrize(
    "kind, params, match",
    [
        ("cauchy", (1.0,), "mechanism"),
        ("laplace", (1.0, 2.0), "params"),
    ],
)
def test_mechspec_rejects(kind, params, match):
    with pytest.raises(ValueError, match=match):
        P.MechSpec(kind, params)


def test_compute_rejects_bad_mus():
    with pytest.raises(ValueError, match="mu"):
        P.compute_profile_gdp(_spec("laplace", (1.0,), (1.0, -2.0)))


# ------------------------------------------------------------------------------------------------
# controller: figures built non-empty, updated in place, errors become a message
# ------------------------------------------------------------------------------------------------
@pytest.fixture
def app():
    return P.build_profile_gdp()


def test_figures_are_constructed_non_empty(app):
    ctrl = app.controller
    prof, trade = ctrl.figs
    assert isinstance(prof, PlotlyWidget) and isinstance(trade, PlotlyWidget)
    # Laplace(1), μ = 1, 2, dashed μ_upper
    assert [t["name"][:6] for t in prof.data] == ["δ_A(ε)", "δ_μ(ε)", "δ_μ(ε)", "δ_μ(ε)"]
    assert "μ_upper" in prof.data[-1]["name"] and prof.data[-1]["line"]["dash"] == "dash"
    assert prof.plot_layout["yaxis"]["type"] == "log"
    assert prof.plot_layout["title"]["text"] and prof.plot_layout["xaxis"]["title"]["text"] == "ε"
    assert trade.plot_layout["xaxis"]["title"]["text"] == "type I error α"
    for fig in (prof, trade):
        for t in fig.data:
            assert t["x"] and len(t["x"]) == len(t["y"]) and any(v is not None for v in t["y"])
    assert prof.layout.display is None and trade.layout.display == "none"
    assert "GDP" in ctrl.readout.value and "1.031" in ctrl.readout.value
    assert ctrl.message.text == ""


def test_slider_updates_the_same_figures_in_place(app):
    ctrl = app.controller
    figs = list(ctrl.figs)
    ctrl.controls["lap_b"].value = 2.0
    assert ctrl.figs[0] is figs[0] and ctrl.figs[1] is figs[1]
    eps = np.asarray(figs[0].data[0]["x"], dtype=float)
    want = M.Laplace(2.0).delta(eps)
    got = _y(figs[0].data[0])
    np.testing.assert_array_equal(got[want > 0], want[want > 0])
    assert np.all(np.isnan(got[want == 0]))  # δ = 0 is a gap on the log axis
    np.testing.assert_allclose(_y(figs[0].data[1]), C.gdp_delta(1.0, eps), rtol=1e-12)
    np.testing.assert_array_equal(_y(figs[1].data[0]), M.Laplace(2.0).tradeoff(P.ALPHA_GRID))


def test_switching_mechanism_and_parameters(app):
    ctrl = app.controller
    c = ctrl.controls
    c["mechanism"].value = "subbotin"
    assert c["sub_s"].layout.display is None and c["sub_r"].layout.display is None
    assert c["lap_b"].layout.display == "none"
    eps = np.asarray(ctrl.figs[0].data[0]["x"], dtype=float)
    np.testing.assert_array_equal(_y(ctrl.figs[0].data[0]), M.Subbotin(1.0, 1.5).delta(eps))
    c["sub_r"].value = 3.0
    assert "not GDP" in ctrl.readout.value and "heavier than Gaussian" in ctrl.readout.value
    assert not any("μ_upper" in t["name"] for t in ctrl.figs[0].data)
    c["mechanism"].value = "equation"
    names = [t["name"] for t in ctrl.figs[0].data]
    assert any("naive" in n for n in names)
    assert "Naive inversion: not GDP" in ctrl.readout.value


def test_view_toggle_switches_figures_without_recomputing(app):
    ctrl = app.controller
    before = [list(f.data) for f in ctrl.figs]
    hits = P.ProfileGdpController._cached.cache_info().hits
    ctrl.controls["view"].value = "tradeoff"
    assert ctrl.figs[0].layout.display == "none" and ctrl.figs[1].layout.display is None
    assert [list(f.data) for f in ctrl.figs] == before
    assert P.ProfileGdpController._cached.cache_info().hits == hits + 1  # same spec: cache hit
    ctrl.controls["view"].value = "profile"
    assert ctrl.figs[0].layout.display is None and ctrl.figs[1].layout.display == "none"


def test_bad_mu_text_shows_message_and_keeps_the_plot(app):
    ctrl = app.controller
    before = [list(f.data) for f in ctrl.figs]
    ctrl.controls["mus"].value = "1, banana"
    assert "mu values must be numbers" in ctrl.message.text
    assert "last valid setting" in ctrl.message.text
    assert [list(f.data) for f in ctrl.figs] == before
    ctrl.controls["mus"].value = "0.5, 1, 3"
    assert ctrl.message.text == ""
    names = [t["name"] for t in ctrl.figs[0].data]
    assert sum(n.startswith("δ_μ(ε), μ = ") for n in names) == 3
    eps = np.asarray(ctrl.figs[0].data[0]["x"], dtype=float)
    np.testing.assert_allclose(_y(ctrl.figs[0].data[3]), C.gdp_delta(3.0, eps), rtol=1e-12)


def test_extreme_but_computable_settings_show_no_error(app):
    c = app.controller.controls
    c["rr_eps"].value = 50.0
    c["mechanism"].value = "pure"
    assert app.controller.message.text == ""
    assert app.controller.result.summary.verdict.mu_upper is not None
    c["mus"].value = "1000"
    assert app.controller.message.text == ""


def test_delta0_rounding_to_one_uses_theory_or_says_not_gdp():
    # N(0, 0.01²) is exactly 100-GDP, but δ(0) = 2Φ(50) − 1 rounds to 1: theory gives μ_upper
    v = P.mechanism_summary(P.MechSpec("gaussian", (0.01,))).verdict
    assert v.is_gdp and v.method == "fallback" and v.mu_upper == 100.0
    assert v.status(100.0) == "yes" and v.status(10.0) == "no"
    assert v.mu_lower is not None and v.mu_lower < 100.0
    # a naive equation profile with B ≥ 1 has δ(0) = 1 exactly: not GDP for any μ (Liu et al. 2022 Fig. 1)
    s = P.mechanism_summary(P.MechSpec("equation", (20.0, 100.0, 0.02)))
    assert not s.verdict_naive.is_gdp and "δ(0) = 1" in s.verdict_naive.reason
    assert s.verdict_naive.status(5.0) == "no"


def test_theory_upper_is_the_gaussians_own_mu():
    """The fallback's certified μ for the Gaussian is the mechanism's Δ/σ (Gaussian.mu), with the
    sensitivity it is given (it was 1/σ whatever Δ), and pure_to_gdp(ε) for pure DP."""
    assert P._theory_upper("gaussian", (2.0,))[0] == 0.5
    assert P._theory_upper("gaussian", (4.0, 2.0))[0] == 0.5  # Δ = 2, σ = 4
    assert P._theory_upper("subbotin", (1.0, 3.0)) == (None, "")
    # pure ε-DP: the backend reads it from the profile (the fallback of RR with δ(0) rounding to 1)
    v = P.mechanism_summary(P.MechSpec("pure", (40.0,))).verdict
    assert v.method == "fallback" and v.mu_upper == C.pure_to_gdp(40.0)
