"""Notion converter dashboard (dpexplore/apps/notion_converter.py): the compute function's
numbers against mpmath closed forms (Steinke 2024 Thm 4/5, Liu et al. 2022 Thm 2.1/3.1, Steinke 2022 fn. 2) and the
backend; "not implied" entries; hypothesis properties (every route is ≥ the exact ε, implied
curves lie above the source's); invalid settings; the controller (in-place updates, message on
bad values, last good plot kept)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpexplore.accounting.conversions import (
    ApproxDPProfile,
    RDPProfile,
    ZCDPProfile,
    gdp_epsilon,
    gdp_to_zcdp,
    rdp_to_approx,
    tradeoff_approx,
    tradeoff_gdp,
    zcdp_to_rdp,
)
from dpexplore.apps import APPS
from dpexplore.apps.notion_converter import (
    ALPHA_GRID,
    RDP_ORDERS,
    ConverterSpec,
    NotionConverterController,
    Source,
    build_notion_converter,
    compute_notion_converter,
    parse_orders,
    source_summary,
)
from dpexplore.ui.plotwidget import PlotlyWidget
from dpexplore.mechanisms import Gaussian, Laplace, RandomizedResponse
from dpexplore.accounting.profiles import GaussianDPProfile

mp.mp.dps = 50
REL = 1e-9
SETTINGS = settings(max_examples=30, deadline=None)


def spec(kind, params, delta=1e-6, orders=(2.0, 8.0, 32.0)):
    return ConverterSpec(Source(kind, tuple(float(p) for p in params)), float(delta), orders)


# ------------------------------------------------------------------------------------------------
# mpmath references
# ------------------------------------------------------------------------------------------------
def mp_rho_pure(e):  # Steinke 2024 Thm 5: ρ = ε (e^ε − 1)/(e^ε + 1)
    e = mp.mpf(e)
    return e * (mp.e**e - 1) / (mp.e**e + 1)


def mp_mu_pure(e):  # μ = 2Φ⁻¹(e^ε/(1 + e^ε))
    e = mp.mpf(e)
    p = mp.e**e / (1 + mp.e**e)
    return 2 * mp.sqrt(2) * mp.erfinv(2 * p - 1)


def mp_rdp_pure(e, a):  # Steinke 2024 Thm 4, tight: RR's Rényi divergence
    e, a = mp.mpf(e), mp.mpf(a)
    p = mp.e**e / (1 + mp.e**e)
    q = 1 - p
    return mp.log(p**a * q ** (1 - a) + q**a * p ** (1 - a)) / (a - 1)


def mp_zcdp_eps(rho, d):  # Steinke 2022 fn. 2: ε = ρ + 2√(ρ log(1/δ))
    rho, d = mp.mpf(rho), mp.mpf(d)
    return rho + 2 * mp.sqrt(rho * mp.log(1 / d))


def mp_gdp_delta(mu, e):  # Liu et al. 2022 Thm 3.1
    mu, e = mp.mpf(mu), mp.mpf(e)
    return mp.ncdf(-e / mu + mu / 2) - mp.e**e * mp.ncdf(-e / mu - mu / 2)


def mp_pure_eps_at(e0, d):  # Liu et al. 2022 Thm 2.1 with δ₀ = 0 inverted: ε' = log(e^ε − δ(1 + e^ε))
    e0, d = mp.mpf(e0), mp.mpf(d)
    return mp.log(mp.e**e0 - d * (1 + mp.e**e0))


def close(a, b, rel=REL):
    return abs(a - float(b)) <= rel * abs(float(b)) + 1e-300


# ------------------------------------------------------------------------------------------------
# values
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["pure", "rr"])
@pytest.mark.parametrize("e", [0.01, 1.0, 5.0])
def test_pure_dp_implied_parameters_are_the_closed_forms(kind, e):
    r = compute_notion_converter(spec(kind, (e,), 1e-6, (2.0, 8.0)))
    assert r.pure_eps == e
    assert close(r.rho, mp_rho_pure(e), 1e-12)
    assert close(r.mu, mp_mu_pure(e), 1e-9)
    for a, v in r.rdp_table:
        assert close(v, mp_rdp_pure(e, a), 1e-9)
    # ε at δ: exact from the pure profile, zCDP by Steinke 2022 fn. 2, GDP by inverting Liu et al. 2022 Thm 3.1
    e_at = r.eps_at_delta
    assert close(e_at["exact"], mp_pure_eps_at(e, 1e-6), 1e-9)
    assert e_at["pure"] == e
    assert close(e_at["zcdp"], mp_zcdp_eps(mp_rho_pure(e), 1e-6), 1e-9)
    assert float(mp_gdp_delta(r.mu, e_at["gdp"])) <= 1e-6 * (1 + 1e-9)
    assert float(mp_gdp_delta(r.mu, e_at["gdp"] * (1 - 1e-6))) > 1e-6


def test_gaussian_and_gdp_sources_agree_and_are_exact():
    g = compute_notion_converter(spec("gaussian", (2.0,), 1e-5))
    m = compute_notion_converter(spec("gdp", (0.5,), 1e-5))
    for r in (g, m):
        # ρ = μ²/2 and ε̂(α) = αρ by the backend's conversions: rounded up, within 1e-15 of the exact
        assert r.mu == 0.5 and r.rho == gdp_to_zcdp(0.5) and r.pure_eps is None
        assert r.rho == 0.125  # μ²/2 rounded upward: 1/8 is a float, so exactly
        assert r.eps_at_delta["exact"] == r.summary.profile.epsilon(1e-5)
        assert r.eps_at_delta["gdp"] == gdp_epsilon(0.5, 1e-5)
        assert close(r.eps_at_delta["exact"], r.eps_at_delta["gdp"], 1e-12)
        assert close(r.eps_at_delta["zcdp"], mp_zcdp_eps(0.125, 1e-5))
        table = [v for _, v in r.rdp_table]
        assert table == [zcdp_to_rdp(gdp_to_zcdp(0.5), a) for a in (2.0, 8.0, 32.0)]
        assert table == [a * 0.125 for a in (2.0, 8.0, 32.0)]  # αρ rounded upward: exact floats here
    assert g.eps_at_delta["exact"] == Gaussian(2.0).epsilon(1e-5)  # the mechanism's own inversion
    # the Gaussian mechanism's own bisection agrees with the closed-form GDP inversion
    assert close(g.eps_at_delta["exact"], Gaussian(2.0).epsilon(1e-5), 1e-9)
    # profile curves: the source is δ_μ, checked against mpmath at a few points
    for i in (0, 20, 60):
        e = float(g.eps_grid[i])
        assert close(math.exp(g.log_delta["source"][i]), mp_gdp_delta(0.5, e), 1e-8)
    np.testing.assert_allclose(g.beta["gdp"], tradeoff_gdp(0.5, ALPHA_GRID), rtol=1e-12)


def test_zcdp_source():
    r = compute_notion_converter(spec("zcdp", (0.5,), 1e-6))
    assert r.rho == 0.5 and r.pure_eps is None
    assert r.eps_at_delta["exact"] == ZCDPProfile(0.5).epsilon(1e-6)
    assert close(r.eps_at_delta["zcdp"], mp_zcdp_eps(0.5, 1e-6))
    assert r.eps_at_delta["rdp"] == pytest.approx(
        rdp_to_approx(np.append(RDP_ORDERS, np.inf)[:-1], RDP_ORDERS * 0.5, 1e-6), rel=1e-12
    )
    # μ measured on the implied profile: above the tail value √(2ρ), certified (Liu et al. 2022, result “GDPT”)
    assert math.sqrt(2 * 0.5) < r.mu < 1.6
    # the implied GDP profile dominates the zCDP profile on the grid
    assert np.all(r.log_delta["gdp"] >= r.log_delta["zcdp"] - 1e-9)
    table = [v for _, v in r.rdp_table]
    assert table == [zcdp_to_rdp(0.5, a) for a in (2.0, 8.0, 32.0)] == [1.0, 4.0, 16.0]  # αρ rounded upward: exact


def test_laplace_source():
    r = compute_notion_converter(spec("laplace", (2.0,), 1e-3))
    assert r.pure_eps == 0.5
    assert close(r.rho, mp_rho_pure(0.5), 1e-12)
    assert r.eps_at_delta["exact"] == Laplace(2.0).epsilon(1e-3)
    # exact Laplace profile: δ(ε) = 1 − exp((ε − 1/b)/2)
    e = float(r.eps_grid[3])
    assert close(math.exp(r.log_delta["source"][3]), 1 - mp.e ** ((mp.mpf(e) - 0.5) / 2), 1e-9)
    for a, v in r.rdp_table:
        assert v == Laplace(2.0).rdp(a)
    np.testing.assert_allclose(r.beta["source"], Laplace(2.0).tradeoff(ALPHA_GRID), rtol=1e-12)
    assert r.mu <= 2 * float(mp_mu_pure(0.5))  # measured, never above the pure-DP route


def test_approx_source_implies_only_its_profile():
    r = compute_notion_converter(spec("approx", (1.0, 1e-6), 1e-5))
    s = r.summary
    assert s.pure_eps is None and s.rho is None and s.mu is None and s.rdp_orders is None
    assert all("not implied" in h for h in (s.pure_how, s.rho_how, s.mu_how, s.rdp_how))
    assert r.eps_at_delta["exact"] == ApproxDPProfile(1.0, 1e-6).epsilon(1e-5)
    assert all(r.eps_at_delta[k] is None for k in ("pure", "zcdp", "gdp", "rdp"))
    assert all(v is None for _, v in r.rdp_table)
    html = NotionConverterController.table_html(r)
    assert html.count("not implied") >= 6 and "exact" in html
    # below δ₀ nothing is implied: no number, a reason
    r2 = compute_notion_converter(spec("approx", (1.0, 1e-6), 1e-9))
    assert r2.eps_at_delta["exact"] == math.inf and r2.log_delta["approx"] is None
    assert "not implied at δ = 1e-09" in NotionConverterController.table_html(r2)


def test_rdp_source():
    r = compute_notion_converter(spec("rdp", (4.0, 1.0), 1e-6, (2.0, 4.0, 8.0)))
    assert r.eps_at_delta["exact"] == RDPProfile(np.array([4.0]), np.array([1.0])).epsilon(1e-6)
    # improved conversion at the single order
    a, d = mp.mpf(4), mp.mpf("1e-6")
    want = 1 + mp.log(1 - 1 / a) - (mp.log(d) + mp.log(a)) / (a - 1)
    assert close(r.eps_at_delta["rdp"], want, 1e-9)
    assert [v for _, v in r.rdp_table] == [1.0, 1.0, None]  # monotone in α: only α ≤ α₀
    assert r.rho is None and r.mu is None and r.pure_eps is None


def test_table_shows_losses_and_witness():
    r = compute_notion_converter(spec("pure", (1.0,), 1e-6))
    html = NotionConverterController.table_html(r)
    assert "via zCDP (Steinke 2022 fn. 2)" in html and "%" in html and "Steinke 2024, Thm 5" in html
    assert "randomized response" in r.summary.witness.lower()
    assert "Thm 4" in r.summary.witness and "Thm 5" in r.summary.witness
    assert "ε′ = 0" in r.summary.witness


def test_tradeoff_curves():
    r = compute_notion_converter(spec("rr", (1.0,), 1e-6))
    np.testing.assert_allclose(r.beta["source"], tradeoff_approx(1.0, 0.0, ALPHA_GRID), rtol=1e-12)
    np.testing.assert_allclose(r.beta["source"], RandomizedResponse(1.0).tradeoff(ALPHA_GRID), rtol=1e-12, atol=1e-15)
    # every implied trade-off lies below the source's (implied = weaker)
    for k in ("pure", "approx", "zcdp", "gdp", "rdp"):
        assert np.all(r.beta[k] <= r.beta["source"] + 1e-12), k


def test_extreme_settings_compute():
    for kind, p, d in [
        ("pure", (50.0,), 1e-300),
        ("gdp", (50.0,), 1e-6),
        ("zcdp", (100.0,), 1e-300),
        ("gaussian", (0.01,), 1e-300),
        ("rdp", (1.01, 0.001), 1e-300),
    ]:
        r = compute_notion_converter(spec(kind, p, d))
        for v in r.log_delta.values():
            assert v is None or not np.isnan(v).any()
        for v in r.beta.values():
            assert v is None or not np.isnan(v).any()
        assert math.isfinite(r.eps_at_delta["exact"])
    # zCDP with ρ = 100: δ(0) rounds to 1, the GDP measurement is refused → "not implied"
    s = source_summary(Source("zcdp", (100.0,)))
    assert s.mu is None and "not implied" in s.mu_how


# ------------------------------------------------------------------------------------------------
# properties
# ------------------------------------------------------------------------------------------------
KINDS = st.sampled_from(["pure", "zcdp", "gdp", "laplace", "gaussian", "rr"])


@SETTINGS
@given(KINDS, st.floats(0.05, 20.0), st.floats(-30.0, -1.05))
def test_every_route_is_no_better_than_exact(kind, x, logd):
    r = compute_notion_converter(spec(kind, (x,), 10.0**logd))
    ex = r.eps_at_delta["exact"]
    for k in ("pure", "zcdp", "gdp", "rdp"):
        v = r.eps_at_delta[k]
        if v is not None:
            assert v >= ex * (1 - 1e-9) - 1e-12, (k, v, ex)


@SETTINGS
@given(st.sampled_from(["pure", "gdp", "gaussian", "rr", "laplace"]), st.floats(0.05, 10.0))
def test_implied_profiles_lie_above_the_source(kind, x):
    r = compute_notion_converter(spec(kind, (x,), 1e-6))
    src = r.log_delta["source"]
    for k in ("pure", "approx", "zcdp", "gdp", "rdp"):
        v = r.log_delta[k]
        if v is not None:
            ok = (v >= src - 1e-9 * np.abs(src) - 1e-12) | np.isneginf(src)
            assert ok.all(), k


# ------------------------------------------------------------------------------------------------
# invalid input
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, name",
    [("0.5", "alpha"), ("abc", "alpha"), ("", "RDP orders"), ("1", "alpha"), ("2,3,4,5,6,7,8,9,10", "RDP orders")],
)
def test_parse_orders_rejects(text, name):
    with pytest.raises(ValueError, match=name):
        parse_orders(text)


@pytest.mark.parametrize(
    "kind, params, name",
    [
        ("pure", (-1.0,), "pure_eps"),
        ("pure", (math.nan,), "pure_eps"),
        ("approx", (1.0, 1.0), "approx_delta"),
        ("rdp", (1.0, 1.0), "alpha"),
        ("nope", (1.0,), "notion"),
        ("gdp", (1.0, 2.0), "parameters"),
    ],
)
def test_source_rejects(kind, params, name):
    with pytest.raises(ValueError, match=name):
        Source(kind, params)


@pytest.mark.parametrize("d", [0.0, 1.0, math.nan])
def test_spec_rejects_delta(d):
    with pytest.raises(ValueError, match="delta"):
        ConverterSpec(Source("pure", (1.0,)), d, (2.0,))


# ------------------------------------------------------------------------------------------------
# controller
# ------------------------------------------------------------------------------------------------
def test_dashboard_builds_non_empty_and_registered():
    box = build_notion_converter()
    c = box.controller
    assert len(c.figs) == 2 and all(isinstance(f, PlotlyWidget) for f in c.figs)
    assert len(c.figs[0].data) == 7 and len(c.figs[1].data) == 7
    assert len(c.figs[0].data[0]["y"]) > 100
    assert "notion_converter.ipynb" in [nb for nb, _, _ in APPS]
    assert c.message.text == ""
    with pytest.raises(ValueError, match="notion"):
        build_notion_converter("bogus")


def test_controller_updates_in_place_and_keeps_last_good_plot():
    box = build_notion_converter()
    c = box.controller
    fig0, fig1 = c.figs
    y0 = list(fig0.data[0]["y"])
    c.controls["pure_eps"].value = 2.0
    assert c.figs[0] is fig0 and c.figs[1] is fig1
    want = compute_notion_converter(spec("pure", (2.0,), c.spec.delta))
    got = np.array([np.nan if v is None else v for v in fig0.data[0]["y"]], dtype=float)
    exp = np.exp(want.log_delta["source"])
    np.testing.assert_allclose(got[exp > 0], exp[exp > 0], rtol=1e-12)
    assert got.tolist() != y0
    assert c.figs[0].data[6]["x"][0] == pytest.approx(want.eps_at_delta["exact"], rel=1e-12)
    # switching notion shows its sliders and redraws
    c.controls["notion"].value = "gdp"
    assert c.controls["mu"].layout.display is None and c.controls["pure_eps"].layout.display == "none"
    assert c.figs[0].data[4]["y"][1] == pytest.approx(GaussianDPProfile(1.0).delta(c.result.eps_grid[1]), rel=1e-9)
    assert "not implied" in c.figs[0].data[1]["name"]
    # a bad value: message, figures unchanged
    before = [list(t["y"]) for t in fig0.data]
    table_before = c.table.value
    c.controls["orders"].value = "0.5, 2"
    assert "alpha" in c.message.text and "last valid setting" in c.message.text
    assert [list(t["y"]) for t in fig0.data] == before and c.table.value == table_before
    # recovery
    c.controls["orders"].value = "2, 4"
    assert c.message.text == "" and "α = 4" in c.table.value
    # target δ moves the marker
    c.controls["delta"].value = 1e-10
    assert c.figs[0].data[6]["y"][0] == pytest.approx(1e-10, rel=1e-9)
    assert c.figs[0].data[6]["x"][0] == pytest.approx(gdp_epsilon(1.0, c.spec.delta), rel=1e-12)


# -- attack risk for every notion (issue 13) ----------------------------------------------------------
from dpexplore.apps import notion_converter as NC  # noqa: E402


@pytest.mark.parametrize(
    "source",
    [
        NC.Source("pure", (1.0,)),
        NC.Source("gaussian", (1.0,)),
        NC.Source("zcdp", (0.5,)),
        NC.Source("laplace", (2.0,)),
        NC.Source("gdp", (1.5,)),
        NC.Source("approx", (1.0, 1e-6)),
    ],
)
def test_risk_rows_are_the_backends_and_conversions_never_lower_them(source):
    from dpexplore.accounting.conversions import advantage, tpr_at_fpr

    s = NC.source_summary(source)
    exact = s.risk["exact"]
    assert exact == (float(tpr_at_fpr(s.profile, 0.01)), float(advantage(s.profile)))
    assert 0.01 <= exact[0] <= 1 and 0 <= exact[1] <= 1
    for route, value in s.risk.items():
        if value is not None:  # an implied notion is a weaker guarantee: never less risk
            assert value[0] >= exact[0] * (1 - 1e-9) and value[1] >= exact[1] * (1 - 1e-9), route
    r = NC.compute_notion_converter(NC.ConverterSpec(source, 1e-6, (2.0,)))
    table = NC.NotionConverterController.table_html(r)
    assert "attack: TPR at FPR 1 %" in table and "attack advantage" in table
    assert NC._fmt(exact[0]) in table
