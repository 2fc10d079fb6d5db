"""The DP-SGD planner: its numbers are the backend's (dpsgd_epsilon, compose, tpr_at_fpr,
advantage), the plotted curves end at the readout's values, the σ button solves for the target ε,
and bad settings become a message with the last good plot kept."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpexplore.accounting import composition as C
from dpexplore.accounting import conversions
from dpexplore.apps import APPS, TOPICS
from dpexplore.apps import dpsgd_planner as P
from dpexplore.mechanisms import Gaussian, subsample


@pytest.mark.parametrize(
    "spec",
    [
        P.PlannerSpec(),
        P.PlannerSpec(n=100_000, batch=1024, epochs=30, sigma=0.8, delta=1e-7),
        P.PlannerSpec(n=1000, batch=4096, epochs=3, sigma=5.0, delta=1e-2),
    ],
)
def test_numbers_are_the_backends(spec):
    r = P.compute_planner(spec)
    q = min(1.0, spec.batch / spec.n)
    t = math.ceil(spec.epochs / q - 1e-9)
    assert (r.q, r.steps) == (q, t) == C.dpsgd_steps(spec.n, spec.batch, spec.epochs)
    assert r.eps_pld == C.dpsgd_epsilon(spec.sigma, q, t, spec.delta, grid_size=P.CURVE_GRID)
    assert r.eps_pld >= C.dpsgd_epsilon(spec.sigma, q, t, spec.delta) * (1 - 1e-9)  # coarser: not below
    assert r.eps_rdp == C.dpsgd_epsilon(spec.sigma, q, t, spec.delta, accountant="rdp")
    assert r.eps_gdp == C.dpsgd_epsilon(spec.sigma, q, t, spec.delta, accountant="gdp")
    assert r.eps_pld <= r.eps_rdp  # tight ≤ Rényi
    profile = C.compose(subsample(Gaussian(spec.sigma), q), t, grid_size=P.CURVE_GRID)
    assert r.tpr == tuple(float(conversions.tpr_at_fpr(profile, a)) for a in P.RISK_FPRS)
    assert r.advantage == float(conversions.advantage(profile))
    assert all(tp >= a for tp, a in zip(r.tpr, P.RISK_FPRS))
    # the curves: increasing in epochs, ending at T steps (the plotted tight curve on a coarser
    # grid: never below the readout's value, at most ~0.5 % above it)
    assert r.epochs_grid[-1] == pytest.approx(t * q)
    assert np.all(np.diff(r.eps_pld_curve) >= 0) and np.all(np.diff(r.eps_rdp_curve) >= 0)
    assert r.eps_pld_curve[-1] == pytest.approx(r.eps_pld, rel=1e-3)
    assert r.eps_rdp_curve[-1] == pytest.approx(r.eps_rdp, rel=1e-12)
    assert r.eps_gdp_curve[-1] == pytest.approx(r.eps_gdp, rel=1e-12)
    assert np.all(np.diff(r.roc_tpr) >= -1e-12) and np.all(r.roc_tpr >= r.roc_fpr * (1 - 1e-12))


def test_curve_points_follow_single_runs():
    r = P.compute_planner(P.PlannerSpec(n=20_000, batch=200, epochs=8))
    for x, e in list(zip(r.epochs_grid, r.eps_pld_curve))[::7]:
        one = C.dpsgd_epsilon(1.0, 0.01, int(round(x / 0.01)), 1e-6)
        assert one * (1 - 1e-9) <= e <= one * 1.005


def test_sigma_for_target_meets_the_target():
    spec = P.PlannerSpec(target_eps=2.0)
    s = P.sigma_for_target(spec)
    assert C.dpsgd_epsilon(s, spec.q, spec.steps, spec.delta) <= 2.0
    assert C.dpsgd_epsilon(s * 0.99, spec.q, spec.steps, spec.delta) > 2.0 * 0.97


@pytest.mark.parametrize("exact, shown", [(1.001, 1.01), (1.0, 1.0), (4.0001, 4.01), (9.9991, 10.0), (0.123456, 0.124)])
def test_sigma_for_target_rounds_up_never_down(monkeypatch, exact, shown):
    """The σ to set is the tight σ rounded UP to 3 digits: 1.001 once came out as 1.0 (rounded to
    3 digits after a 1e-3 nudge), below what the target ε needs."""
    monkeypatch.setattr(C, "dpsgd_sigma", lambda *a, **k: exact)
    assert P.sigma_for_target(P.PlannerSpec(target_eps=2.0)) == shown


def test_button_sets_sigma_and_the_plots_follow():
    app = P.build_dpsgd_planner()
    button = next(w for w in app.widgets() if getattr(w, "description", "") == "Set σ for the target ε")
    app.controller.controls["target_eps"].value = 0.8
    before = app.controller.result.eps_pld
    button.click()
    sigma = app.controller.controls["sigma"].value
    needed = P.sigma_for_target(app.controller.spec)
    assert needed <= sigma <= needed * 10 ** (1 / 20) * (1 + 1e-9)  # the next slider position up
    assert app.controller.result.eps_pld <= 0.8 < before
    assert "needs σ ≥" in app.controller.message.text
    # a target out of reach within the σ range: a note, σ unchanged
    app.controller.controls["target_eps"].value = 0.1
    app.controller.controls["epochs"].value = 100
    app.controller.controls["n"].value = 1000
    s0 = app.controller.controls["sigma"].value
    button.click()
    assert app.controller.controls["sigma"].value == s0
    assert "outside this app's range" in app.controller.message.text


def test_delta_note_says_when_delta_is_too_large():
    r = P.compute_planner(P.PlannerSpec(n=1000, delta=1e-2))
    assert "≥ 1/N" in P.PlannerController._readout_text(r)
    assert "&lt; 1/N" in P.PlannerController._readout_text(P.compute_planner(P.PlannerSpec()))


@pytest.mark.parametrize(
    "field,value",
    [("n", 10), ("batch", 20_000), ("epochs", 0), ("sigma", 0.1), ("delta", 0.5), ("target_eps", 50.0), ("n", 1500.5)],
)
def test_bad_settings_name_the_parameter(field, value):
    with pytest.raises(ValueError, match=field):
        P.compute_planner(P.PlannerSpec(**{field: value}))


def test_every_slider_end_is_a_valid_setting():
    app = P.build_dpsgd_planner()
    c = app.controller
    for name in ("n", "batch", "epochs", "sigma", "delta", "target_eps"):
        w = c.controls[name]
        base = getattr(w, "base", None)
        value = (lambda x: base**x) if base else (lambda x: x)
        for end in (w.min, w.max):
            w.value = value(end)
            assert c.last_error is None, (name, end, c.message.text)
        w.value = value((w.min + w.max) / 2)


def test_in_the_gallery():
    assert "dpsgd_planner.ipynb" in [nb for nb, _, _ in APPS]
    assert TOPICS["dpsgd_planner.ipynb"] == "Composition"
