"""``dpexplore.explore(*objects)``: the objects' views in the app shell, the sliders redraw, the
readouts equal the public API's values, errors are inline messages, "Reproduce in Python" runs."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import dpexplore
from dpexplore.accounting import risk
from dpexplore.accounting.composition import compose
from dpexplore.accounting.conversions import gdp_delta
from dpexplore.display import format_up, profile_of
from dpexplore.accounting.filters import GDPFilter
from dpexplore.mechanisms import Gaussian, Laplace, subsample
from dpexplore.ui.explore import MAX_OBJECTS, explore
from dpexplore.ui.shell import AppShell

SGD = compose(subsample(Gaussian(1.0), 0.01), 2000)


@pytest.fixture(scope="module")
def app():
    return dpexplore.explore(SGD, Laplace(1.0), GDPFilter(0.5))


def test_explore_is_an_app_with_four_views(app):
    assert isinstance(app, AppShell)
    assert [t for t, _ in app.controller.tabs] == ["Privacy profile", "Trade-off", "Rényi DP", "Attack risk"]
    prof, trade, rdp, attack = app.controller.figs
    names = [t["name"] for t in prof.data if "name" in t]
    assert names[0].startswith("compose(PoissonSubsampled(Gaussian(1.0, 1.0), 0.01), 2000)")
    # each object's curve is its profile's delta on the plotted grid
    p = profile_of(SGD)
    x = np.array(prof.data[0]["x"], dtype=float)
    y = np.array([np.nan if v is None else v for v in prof.data[0]["y"]], dtype=float)
    ok = ~np.isnan(y)
    np.testing.assert_array_equal(y[ok], np.asarray(p.delta(x))[ok])
    # the RDP view: all three have a known Rényi DP (the DP-SGD run: summed over its steps)
    assert len(rdp.data) == 3
    assert len(trade.data) == 4 and len(attack.data) == 1 + 2 * 3


def test_readouts_equal_the_api_and_a_slider_redraws(app):
    c = app.controller
    before = [list(t["x"]) for t in c.figs[0].data if t["mode"] == "markers"]
    c.controls["delta"].value = 1e-7
    assert c.message.text == ""
    r = c.result
    assert r.delta == pytest.approx(1e-7)
    for obj, e, t in zip((SGD, Laplace(1.0), GDPFilter(0.5)), r.eps_at_delta, r.tpr_at):
        p = profile_of(obj)
        assert e == p.epsilon(r.delta) and t == risk.tpr_at_fpr(p, r.fpr)
        assert format_up(e) in c.readout.value
    after = [list(t["x"]) for t in c.figs[0].data if t["mode"] == "markers"]
    assert after != before  # the ε(δ) markers moved
    # the DP-SGD run's GDP curve passes through its (ε(δ), δ); the filter's μ is exact
    assert r.mu_how[0].startswith("through") and r.mu_how[1] == "certified" and r.mu_how[2] == "exact"
    assert gdp_delta(r.mus[0], r.eps_at_delta[0]) == pytest.approx(r.delta, rel=1e-3)
    assert gdp_delta(r.mus[0], r.eps_at_delta[0]) >= r.delta
    assert r.mus[2] == 0.5


def test_reproduce_in_python_rebuilds_the_objects_and_prints_the_readouts(app):
    c = app.controller
    code = c.snippet()
    assert "compose(PoissonSubsampled(mechanism=Gaussian(sigma=1.0, sensitivity=1.0), q=0.01), 2000)," in code
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code, {})  # noqa: S102 - our own snippet
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and lines[1].startswith("Laplace(scale=1.0, sensitivity=1.0) eps =")
    assert f"eps = {c.result.eps_at_delta[0]!r}" in lines[0]
    assert "Reproduce in Python" == app.code.get_title(0) and "PoissonSubsampled" in app._code.value


def test_bad_arguments_name_objects():
    with pytest.raises(ValueError, match="objects must be 1 to"):
        explore()
    with pytest.raises(ValueError, match="objects must be 1 to"):
        explore(*[Gaussian(float(s)) for s in range(1, MAX_OBJECTS + 2)])
    with pytest.raises(ValueError, match="privacy profile"):
        from dpexplore.accounting.filters import RenyiOdometer

        explore(RenyiOdometer([4.0], 1e-6))
    with pytest.raises(ValueError, match=r"objects\[0\] must be a dpexplore privacy object"):
        explore("Gaussian")
    with pytest.raises(ValueError, match=r"objects\[1\] must be a dpexplore privacy object, got in"):
        explore(Gaussian(1.0), 1)
    with pytest.raises(ValueError, match=r"objects\[0\] must be an instance, got the class Gaus"):
        explore(Gaussian)


def test_the_apps_draw_with_the_same_views(app):
    """explore(), the Notion converter and the Composition explorer's k-runs tabs are built by the
    shared views: the same axis titles and the same reference lines."""
    from dpexplore.apps.composition_explorer import build_composition_explorer
    from dpexplore.apps.notion_converter import build_notion_converter

    prof, trade, _, attack = app.controller.figs
    nc = build_notion_converter("gaussian").controller.figs
    ce = build_composition_explorer().controller.k_runs_figs

    def axes(fig):
        return (
            fig.plot_layout["xaxis"]["title"]["text"],
            fig.plot_layout["yaxis"]["title"]["text"],
            fig.plot_layout["yaxis"].get("type"),
        )

    assert axes(prof) == axes(nc[0]) == axes(ce[0]) == ("ε [nats]", "δ(ε)  (log scale)", "log")
    assert axes(trade) == axes(nc[1]) == axes(ce[1]) == ("type I error α", "type II error β(α)", None)
    assert axes(attack) == axes(ce[2]) == ("false-positive rate", "true-positive rate", "log")
    diag = [t for t in trade.data if t["name"].startswith("β = 1 − α")]
    assert diag == [t for t in nc[1].data if t["name"].startswith("β = 1 − α")] == [ce[1].data[0]]
    assert attack.data[0] == ce[2].data[0] and attack.data[0]["name"] == "random guess (TPR = FPR)"


def test_tradeoff_envelope_is_the_safe_side():
    """β from δ(ε) on a grid (the k-runs tabs' attack curve) is at most the β of
    risk.tpr_at_fpr (which refines ε per α), and equals the (ε, δ)-DP trade-off for one pair."""
    from dpexplore.accounting.conversions import tradeoff_approx
    from dpexplore.ui.views import profile_curves, tradeoff_envelope

    a = np.linspace(0.0, 1.0, 11)
    np.testing.assert_array_equal(tradeoff_envelope([1.0], [1e-3], a), tradeoff_approx(1.0, 1e-3, a))
    assert np.all(tradeoff_envelope([0.0, 1.0], [1.0, 1.0], a) == 0.0)  # δ = 1: no privacy
    p = compose(Laplace(1.0), 10)
    c = profile_curves(p, "ten runs")
    exact = np.asarray(risk.tpr_at_fpr(p, c.fpr))
    assert np.all(c.tpr >= exact - 1e-15) and np.all(c.tpr <= 1.0)
    i = np.searchsorted(c.fpr, 0.01)
    assert c.tpr[i] < 3 * exact[i]  # a bound, but not a useless one
    np.testing.assert_array_equal(c.delta, np.asarray(p.delta(c.eps)))


def test_an_object_without_a_gdp_bound_draws_no_gdp_curve():
    """(ε, δ)-DP with δ > 0 has no μ (its card says "not defined"): explore draws the GDP curve
    through its (ε(δ), δ), as for any object without an exact μ, with no message (it once read the
    first letter of "not defined" as an exact μ)."""
    from dpexplore.accounting.conversions import ApproxDPProfile
    from dpexplore.ui.views import object_curves

    assert object_curves(ApproxDPProfile(1.0, 1e-6)).mu is None
    c = explore(ApproxDPProfile(1.0, 1e-6), Laplace(1.0)).controller
    assert c.message.text == ""
    r = c.result
    assert r.mu_how[0].startswith("through") and isinstance(r.mus[0], float), (r.mus, r.mu_how)
    assert gdp_delta(r.mus[0], r.eps_at_delta[0]) >= r.delta
    names = [t.get("name", "") for t in c.figs[0].data]
    assert sum("GDP" in n for n in names) == 2, names
