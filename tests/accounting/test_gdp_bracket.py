"""Tests for the GDP verdicts the dashboards show: conversions.gdp_bracket (tail value and certified
bracket within an evaluation budget, with the rigorous fallback) and conversions.gdp_certified_mu
(the smaller of the measured μ and the pure-DP one), on profiles whose μ is known exactly."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpexplore import mechanisms as M
from dpexplore.accounting.conversions import (
    CertifiedMu,
    GdpBracket,
    PureDPProfile,
    equation_profile,
    gdp_bracket,
    gdp_certified_mu,
    gdp_log_delta,
    gdp_measure,
    pure_to_gdp,
)
from dpexplore.accounting.profiles import GaussianDPProfile


def _violated(profile, mu, grid):
    """μ is explicitly violated on the grid: log δ_A > log δ_μ somewhere (Liu et al. 2022, Thm 3.1)."""
    return bool(np.any(np.asarray(profile.log_delta(grid)) > np.asarray(gdp_log_delta(mu, grid))))


# ---- gdp_bracket ---------------------------------------------------------------------------------
@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
def test_gaussian_dp_profile_is_measured_around_its_mu(mu):
    b = gdp_bracket(GaussianDPProfile(mu), tol=1e-3)
    assert isinstance(b, GdpBracket) and b.method == "measured" and b.is_gdp
    assert b.lower < mu <= b.upper <= mu + 1e-3 and b.upper - b.lower <= 1e-3 + 1e-12
    assert b.mu_tail == pytest.approx(mu, rel=1e-6)


def test_measured_bracket_is_gdp_measure_itself():
    """Within the budget the bracket is gdp_measure's, to the last bit (the memo only caches)."""
    for p in (M.Laplace(1.0).profile, M.Logistic(2.0).profile, GaussianDPProfile(1.5)):
        b = gdp_bracket(p, tol=1e-3, budget=60000)
        assert (b.lower, b.upper) == gdp_measure(p, tol=1e-3)


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0])
def test_pure_dp_bracket_holds_pure_to_gdp(eps):
    # RR attains the pure ε-DP profile, whose optimal μ is exactly 2Φ⁻¹(e^ε/(1+e^ε))
    b = gdp_bracket(PureDPProfile(eps))
    assert b.method == "measured" and b.mu_tail == 0.0
    assert b.lower < pure_to_gdp(eps) <= b.upper


def test_small_budget_falls_back_to_the_pure_dp_upper_end():
    p = PureDPProfile(1.0)
    grid = np.linspace(0.0, 1.0, 50)
    b = gdp_bracket(p, budget=10, grid=grid)
    assert b.method == "fallback" and b.is_gdp and b.mu_tail == 0.0  # pure DP: μ_t = 0 costs nothing
    assert b.upper == pure_to_gdp(1.0)
    assert b.lower < b.upper and _violated(p, b.lower, grid)
    assert "pure 1-DP" in b.explanation and "all ε-DP algorithms are GDP" in b.explanation


def test_small_budget_falls_back_to_the_callers_theory_upper_end():
    # N(0, 0.5²) is exactly 2-GDP (Liu et al. 2022, Thm 3.1): the caller knows it, the budget is too small
    p = M.Gaussian(0.5).profile
    grid = np.linspace(0.0, 30.0, 241)
    b = gdp_bracket(p, budget=5, theory_upper=2.0, theory_reason="exactly Δ/σ-GDP", grid=grid)
    assert b.method == "fallback" and b.upper == 2.0 and "exactly Δ/σ-GDP" in b.explanation
    assert math.isnan(b.mu_tail)  # the tail search did not finish within 5 evaluations
    assert 1.99 < b.lower < 2.0 and _violated(p, b.lower, grid)
    # without theory: no certified upper end, still a violated lower end (searched up to 1e3)
    b = gdp_bracket(p, budget=5, grid=grid)
    assert b.method == "fallback" and b.upper is None and 1.99 < b.lower < 2.0
    assert "no certified upper end" in b.explanation


def test_the_smaller_theory_upper_end_wins():
    p = M.Laplace(1.0).profile  # pure 1-DP
    assert gdp_bracket(p, budget=5, theory_upper=5.0).upper == pure_to_gdp(1.0)
    assert gdp_bracket(p, budget=5, theory_upper=1.1).upper == 1.1


def test_default_fallback_grid_gives_a_violated_lower_end():
    b = gdp_bracket(M.Gaussian(1.0), budget=5, theory_upper=1.0)
    assert b.upper == 1.0 and 0.99 < b.lower < 1.0
    b = gdp_bracket(PureDPProfile(2.0), budget=5)
    assert b.upper == pure_to_gdp(2.0) and b.lower < b.upper


def test_delta_zero_rounding_to_one():
    # N(0, 0.01²): δ(0) = 2Φ(50) − 1 rounds to 1; exactly 100-GDP from theory
    p = M.Gaussian(0.01).profile
    b = gdp_bracket(p, budget=60000)
    assert not b.is_gdp and b.method == "delta0" and b.upper is None and "16.6" in b.explanation
    b = gdp_bracket(p, budget=60000, theory_upper=100.0, grid=np.linspace(0.0, 5000.0, 241))
    assert b.is_gdp and b.method == "fallback" and b.upper == 100.0 and 99.0 < b.lower < 100.0
    # a naively inverted equation with B ≥ 1 has δ(0) = 1 exactly (Liu et al. 2022, Fig. 1): not GDP
    b = gdp_bracket(equation_profile(20.0, 100.0, 0.02))
    assert not b.is_gdp and b.method == "delta0"


def test_heavy_tail_is_not_gdp():
    b = gdp_bracket(M.Subbotin(1.0, 4.0))  # log δ ~ −ε^{4/3}: heavier than Gaussian
    assert not b.is_gdp and b.method == "tail" and b.mu_tail == math.inf
    assert b.lower is None and b.upper is None


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"tol": 0.0}, "tol"),
        ({"tol": -1.0}, "tol"),
        ({"tol": math.nan}, "tol"),
        ({"tol": "a"}, "tol"),
        ({"tol": [1e-3, 1e-2]}, "tol"),
        ({"budget": 0}, "budget"),
        ({"budget": 1.5}, "budget"),
        ({"budget": True}, "budget"),
        ({"budget": math.inf}, "budget"),
        ({"theory_upper": 0.0}, "theory_upper"),
        ({"theory_upper": -1.0}, "theory_upper"),
        ({"theory_upper": math.inf}, "theory_upper"),
        ({"theory_reason": 3}, "theory_reason"),
        ({"grid": [-1.0, 1.0]}, "grid"),
        ({"grid": [[0.0, 1.0]]}, "grid"),
        ({"grid": []}, "grid"),
        ({"grid": [0.0, math.inf]}, "grid"),
    ],
)
def test_gdp_bracket_rejects(kwargs, name):
    with pytest.raises(ValueError, match=name):
        gdp_bracket(GaussianDPProfile(1.0), **kwargs)


@pytest.mark.parametrize("profile", ["x", None, 1.0, np.array([1.0])])
def test_gdp_bracket_rejects_a_non_profile(profile):
    with pytest.raises(ValueError, match="profile"):
        gdp_bracket(profile)


# ---- gdp_certified_mu ----------------------------------------------------------------------------
def test_laplace_measured_beats_pure_dp():
    c = gdp_certified_mu(M.Laplace(1.0), tol=1e-3)
    assert isinstance(c, CertifiedMu) and c.route == "measured"
    assert c.mu == c.measured == gdp_measure(M.Laplace(1.0).profile, tol=1e-3)[1]
    assert c.pure == pure_to_gdp(1.0) and c.mu < c.pure


def test_pure_dp_wins_where_the_measurement_cannot_beat_it():
    # RR attains 2Φ⁻¹(e^ε/(1+e^ε)): the measured upper end is at least that
    c = gdp_certified_mu(PureDPProfile(1.0))
    assert c.route == "pure" and c.mu == pure_to_gdp(1.0) and c.measured >= c.pure
    # Laplace with a large scale: the measured value carries the tolerance, the closed form does not
    c = gdp_certified_mu(M.Laplace(100.0).profile, tol=1e-3)
    assert c.route == "pure" and c.mu == pure_to_gdp(0.01) < c.measured


def test_not_pure_dp_is_measured_or_none():
    c = gdp_certified_mu(GaussianDPProfile(1.0))
    assert c.route == "measured" and c.pure is None and 1.0 <= c.mu <= 1.0 + 1e-3
    c = gdp_certified_mu(equation_profile(20.0, 100.0, 0.02))  # δ(0) = 1: not GDP
    assert c == CertifiedMu(None, "none", None, None)


@pytest.mark.parametrize("tol", [0.0, -1.0, math.nan, "a", None, [1e-3]])
def test_gdp_certified_mu_rejects(tol):
    with pytest.raises(ValueError, match="tol"):
        gdp_certified_mu(GaussianDPProfile(1.0), tol=tol)
    with pytest.raises(ValueError, match="profile"):
        gdp_certified_mu("x")
