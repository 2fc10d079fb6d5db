"""Mechanisms in action (Bassi 2019, dpexplore/apps/mechanisms_lab.py) and local vs central
(Steinke 2023a, dpexplore/apps/local_vs_central.py): every printed number against mpmath /
closed forms / the backend, the seeded simulations against the exact values with honest
tolerances (5 standard errors), invalid settings, and the controllers (in-place updates, message
on bad values, last good plot kept)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpexplore.apps import APPS, local_vs_central
from dpexplore.apps import _simulation as sim
from dpexplore.apps import mechanisms_lab as ml
from dpexplore.apps.local_vs_central import (
    LocalSpec,
    build_local_vs_central,
    compute_local_vs_central,
)
from dpexplore.teaching import (
    inverse_sensitivity_median_error_cdf,
    inverse_sensitivity_median_mean_error,
    laplace_max_error_mean,
    laplace_median_mean_error,
)
from dpexplore.apps.mechanisms_lab import (
    MechSpec,
    attack_accuracy,
    build_mechanisms_lab,
    compute_mechanisms_lab,
    harmonic,
    max_error_cdf,
    svt_queries,
)
from dpexplore.teaching import AboveThreshold, ReportNoisyMax, Sparse, inverse_sensitivity_median_probs
from dpexplore.ui.plotwidget import PlotlyWidget

mp.mp.dps = 40
REL = 1e-9


def _within(sim, exact, se, k=5.0):
    return abs(sim - exact) <= k * se + 1e-12


# ------------------------------------------------------------------------------------------------
# differencing attack
# ------------------------------------------------------------------------------------------------
def mp_attack(eps):
    """P[W > −½] for W = Z₁ − Z₂, Z_i ~ Lap(1/ε), by integrating the density (ε/4)(1+ε|w|)e^{−ε|w|}."""
    e = mp.mpf(eps)
    f = lambda w: e / 4 * (1 + e * abs(w)) * mp.exp(-e * abs(w))
    return mp.quad(f, [-0.5, 0, mp.inf])


@pytest.mark.parametrize("eps", [0.01, 0.3, 1.0, 4.0, 10.0])
def test_attack_closed_form_vs_mpmath(eps):
    assert abs(mp.mpf(attack_accuracy(eps)) / mp_attack(eps) - 1) < REL


def test_attack_simulation_matches_the_closed_form():
    r = compute_mechanisms_lab(MechSpec(attack_eps=0.5, trials=4000, seed=11))["attack"]
    np.testing.assert_allclose(r["acc_exact"], attack_accuracy(ml.ATTACK_EPS_FINE), rtol=0)
    se = np.sqrt(r["acc_exact"][::8] * (1 - r["acc_exact"][::8]) / r["trials_grid"])
    assert np.all(np.abs(r["acc_sim"] - attack_accuracy(ml.ATTACK_EPS)) <= 5 * se + 1e-12)
    assert r["acc_here"] == attack_accuracy(0.5)
    assert _within(r["acc_here_sim"], r["acc_here"], math.sqrt(0.25 / 4000))
    # the histogram of D has total mass ≈ 1 and the exact densities integrate to ≈ 1
    w = r["centers"][1] - r["centers"][0]
    assert r["hist"].sum() * w == pytest.approx(1.0, abs=0.01)
    assert np.trapezoid(r["dens1"], r["xs"]) == pytest.approx(1.0, abs=2e-3)


def test_attack_without_noise_limit_and_bits():
    assert attack_accuracy(0.0) == 0.5
    assert attack_accuracy(60.0) == pytest.approx(1.0, abs=1e-11)
    for person, bit in zip(ml.PEOPLE, ml.BITS):
        assert compute_mechanisms_lab(MechSpec(target=person, trials=100))["attack"]["bit"] == bit


@settings(max_examples=40, deadline=None)
@given(a=st.floats(0.0, 20.0), b=st.floats(0.0, 20.0))
def test_attack_accuracy_is_monotone(a, b):
    lo, hi = sorted((a, b))
    assert attack_accuracy(lo) <= attack_accuracy(hi) + 1e-15


# ------------------------------------------------------------------------------------------------
# counting queries
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("m, eps", [(1, 1.0), (10, 2.0), (137, 0.1), (1000, 5.0)])
def test_counting_exact_numbers(m, eps):
    r = compute_mechanisms_lab(MechSpec(m=m, count_eps=eps, trials=200))["counting"]
    hm = mp.harmonic(m)
    assert abs(mp.mpf(r["exact_mean"]["general"]) / (m / mp.mpf(eps) * hm) - 1) < REL
    assert abs(mp.mpf(r["exact_mean"]["disjoint"]) / (hm / mp.mpf(eps)) - 1) < REL
    assert r["exact_mean"]["one"] == pytest.approx(1 / eps, rel=1e-15)
    # CDF (1 − e^{−t/b})^m
    for key, mm, b in (("general", m, m / eps), ("disjoint", m, 1 / eps), ("one", 1, 1 / eps)):
        for j in (0, 70, 140, 199):
            t = mp.mpf(r["t"][j])
            want = (1 - mp.exp(-t / b)) ** mm
            got = r["cdf"][key][j]
            assert abs(got - want) <= 1e-12 * max(want, mp.mpf(1e-300)) + 1e-300
    # the curve vs m is b H_m at every grid point
    np.testing.assert_allclose(r["mean_curves"]["general"], ml.M_GRID / eps * harmonic(ml.M_GRID), rtol=1e-14)


def test_counting_scales_and_pair_budget_come_from_the_backend():
    from dpexplore.accounting import composition as C
    from dpexplore.teaching import counting_query_scales

    r = compute_mechanisms_lab(MechSpec(m=37, count_eps=0.3, attack_eps=0.7, trials=100))
    assert r["counting"]["scales"] == counting_query_scales(0.3, 37)
    assert r["counting"]["scales"]["general"] >= 37 / 0.3  # never less noise than ε needs
    np.testing.assert_array_equal(
        r["counting"]["mean_curves"]["general"],
        laplace_max_error_mean(ml.M_GRID, counting_query_scales(0.3, ml.M_GRID)["general"]),
    )
    assert r["attack"]["pair_eps"] == C.basic([0.7, 0.7])[0] == 1.4


def test_counting_simulation_matches_the_exact_law():
    m, eps = 50, 1.0
    r = compute_mechanisms_lab(MechSpec(m=m, count_eps=eps, trials=4000, seed=5))["counting"]
    n = r["trials_used"]
    for key, b, mm in (("general", m / eps, m), ("disjoint", 1 / eps, m), ("one", 1 / eps, 1)):
        sd = b * math.sqrt(sum(1.0 / k**2 for k in range(1, mm + 1)))  # sd of the max of mm Exp(b)
        assert _within(r["sim_mean"][key], r["exact_mean"][key], sd / math.sqrt(n))
        x, y = r["ecdf"][key]
        for q in (0.1, 0.5, 0.9):
            t = float(np.quantile(x, q))
            p = max_error_cdf(t, mm, b)
            assert _within(np.mean(x <= t), p, math.sqrt(p * (1 - p) / n) + 1.0 / n)


def test_harmonic_and_cdf_helpers():
    assert harmonic(1) == 1.0 and harmonic(4) == pytest.approx(25 / 12, rel=1e-15)
    assert max_error_cdf(0.0, 5, 1.0) == 0.0
    with pytest.raises(ValueError, match="m"):
        harmonic(0)


# ------------------------------------------------------------------------------------------------
# report noisy max
# ------------------------------------------------------------------------------------------------
def mp_rnm_first(eps):
    """P[index 0 wins] = ∫ f(z − s₀) Π_{j≠0} F(z − s_j) dz for Lap(1/ε), by mpmath quadrature."""
    b = 1 / mp.mpf(eps)
    s = [mp.mpf(v) for v in ml.SCORES]
    f = lambda x: mp.exp(-abs(x) / b) / (2 * b)
    F = lambda x: mp.exp(x / b) / 2 if x < 0 else 1 - mp.exp(-x / b) / 2
    g = lambda z: f(z - s[0]) * mp.fprod(F(z - v) for v in s[1:])
    return mp.quad(g, [-mp.inf] + sorted(s) + [mp.inf])


def test_rnm_exact_and_simulated():
    r = compute_mechanisms_lab(MechSpec(rnm_eps=0.3, trials=3000, seed=2))["rnm"]
    assert abs(mp.mpf(r["p_here"]) / mp_rnm_first(0.3) - 1) < 1e-8
    np.testing.assert_allclose(r["probs"], ReportNoisyMax(0.3, monotonic=True).probabilities(ml.SCORES), rtol=0)
    assert r["probs"].sum() == pytest.approx(1.0, abs=1e-9)
    j = 20
    assert abs(mp.mpf(r["p_exact"][j]) / mp_rnm_first(ml.RNM_EPS_FINE[j]) - 1) < 1e-8
    exact_on_sim = np.interp(np.log(ml.RNM_EPS), np.log(ml.RNM_EPS_FINE), r["p_exact"])
    assert np.allclose(exact_on_sim[::4], r["p_exact"][::16])  # grids nest
    se = np.sqrt(exact_on_sim * (1 - exact_on_sim) / r["trials_grid"])
    assert np.all(np.abs(r["p_sim"] - exact_on_sim) <= 5 * se + 1e-12)
    assert np.all(np.abs(r["freq"] - r["probs"]) <= 5 * np.sqrt(r["probs"] * (1 - r["probs"]) / 3000) + 1e-12)
    assert np.all(np.diff(r["p_exact"]) > 0)  # more privacy budget, more often right


# ------------------------------------------------------------------------------------------------
# sparse vector
# ------------------------------------------------------------------------------------------------
def test_svt_queries_are_adaptive_and_true():
    alg = Sparse(c=4, eps=1.0, threshold=300.0)
    cuts, vals, ans = svt_queries(alg, np.random.default_rng(3))
    assert cuts[0] == 95
    for j in range(1, cuts.size):
        assert cuts[j] == (cuts[j - 1] + 10 if ans[j - 1] == 1 else max(cuts[j - 1] - 2, 0))
    np.testing.assert_array_equal(vals, [np.count_nonzero(ml.AGES >= a) for a in cuts])
    assert ans.sum() <= 4 and (ans.sum() == 4 or cuts.size == ml.SVT_MAX_QUERIES)


@pytest.mark.parametrize(
    "variant, c, delta", [("AboveThreshold", 3, 1e-6), ("Sparse (δ = 0)", 3, 1e-6), ("Sparse (δ > 0)", 5, 1e-9)]
)
def test_svt_numbers_are_the_backend(variant, c, delta):
    s = compute_mechanisms_lab(
        MechSpec(svt_variant=variant, c=c, svt_delta=delta, svt_eps=2.0, threshold=250.0, trials=100)
    )["svt"]
    if variant == "AboveThreshold":
        alg = AboveThreshold(eps=2.0, threshold=250.0)
        assert s["c"] == 1 and s["eps0"] == 2.0
    else:
        alg = Sparse(c=c, eps=2.0, delta=0.0 if variant == "Sparse (δ = 0)" else delta, threshold=250.0)
        assert s["c"] == c and s["eps0"] == alg.eps0
    assert s["privacy"] == alg.privacy()
    assert s["privacy"][0] <= 2.0
    assert s["alpha"] == alg.accuracy(ml.SVT_MAX_QUERIES, 0.05)
    assert (s["threshold_scale"], s["query_scale"]) == (alg.threshold_scale, alg.query_scale)
    assert s["n_above"] == int(s["answers"].sum()) <= s["c"]


def test_svt_accuracy_theorem_holds_statistically():
    """Dwork & Roth Thm 3.24/3.26: w.p. ≥ 0.95 no answer is wrong on queries ≥ α from T."""
    wrong = 0
    runs = 200
    for seed in range(runs):
        s = ml._svt("Sparse (δ = 0)", 2.0, 1e-6, 300.0, 3, seed)
        far_up = s["values"] >= 300.0 + s["alpha"]
        far_down = s["values"] <= 300.0 - s["alpha"]
        wrong += bool(np.any(s["answers"][far_up] == 0) or np.any(s["answers"][far_down] == 1))
    assert wrong / runs <= 0.05 + 5 * math.sqrt(0.05 * 0.95 / runs)


# ------------------------------------------------------------------------------------------------
# local vs central: median and shuffling
# ------------------------------------------------------------------------------------------------
def test_median_exact_and_simulated():
    spec = LocalSpec(med_eps=0.5, spread=0.05, n_data=201, trials=3000, seed=4)
    m = compute_local_vs_central(spec)["median"]
    x = local_vs_central._median_data(0.05, 201, 4)
    med = float(np.sort(x)[100])
    assert m["median"] == med
    g, p = inverse_sensitivity_median_probs(x, 0.5, 0.0, 1.0, local_vs_central.MEDIAN_GRID)
    assert m["is_mean_here"] == pytest.approx(float(np.dot(p, np.abs(g - med))), rel=1e-14)
    assert m["is_mean_here"] == inverse_sensitivity_median_mean_error(x, 0.5, 0.0, 1.0, local_vs_central.MEDIAN_GRID)
    cdf = inverse_sensitivity_median_error_cdf(m["t"], x, 0.5, 0.0, 1.0, local_vs_central.MEDIAN_GRID)
    assert np.array_equal(m["is_cdf"], cdf)
    assert m["lap_mean_here"] == pytest.approx(laplace_median_mean_error(0.5, med, 0.0, 1.0), rel=1e-15)
    # exact CDF of the IS error at the t grid
    for j in (0, 100, 150, 199):
        assert m["is_cdf"][j] == pytest.approx(p[np.abs(g - med) <= m["t"][j]].sum(), abs=1e-12)
    # simulations within 5 s.e. (sd ≤ 1 on [0, 1])
    assert _within(m["lap_sim_here"], m["lap_mean_here"], 0.5 / math.sqrt(3000))
    sd_is = math.sqrt(float(np.dot(p, (g - med) ** 2)))
    assert _within(m["is_sim_here"], m["is_mean_here"], sd_is / math.sqrt(3000))
    assert np.all(np.abs(m["lap_sim"] - m["lap_mean"]) <= 5 * 0.5 / math.sqrt(m["trials_grid"]))
    # Steinke 2023a: concentrated data → inverse sensitivity is far more accurate than Laplace
    assert m["is_mean_here"] < m["lap_mean_here"] / 10


@pytest.mark.parametrize(
    "eps_l, n, delta", [(1.0, 10_000, 1e-6), (0.1, 100, 1e-3), (3.0, 10**8, 1e-12), (5.0, 10**4, 1e-6)]
)
def test_shuffle_numbers_vs_eq1(eps_l, n, delta):
    s = compute_local_vs_central(LocalSpec(eps_local=eps_l, n_users=n, shuffle_delta=delta))["shuffle"]
    e, nn, d = mp.mpf(eps_l), mp.mpf(n), mp.mpf(delta)
    valid = e <= mp.log(nn / (16 * mp.log(4 / d)))
    want = (
        min(e, mp.log(1 + 16 * (mp.exp(e) - 1) / (mp.exp(e) + 1) * mp.sqrt(mp.exp(e) * mp.log(4 / d) / nn)))
        if valid
        else e
    )
    assert s["valid_here"] == bool(valid)
    assert abs(mp.mpf(s["eps_here"]) / want - 1) < REL
    assert s["n_min"] == pytest.approx(float(16 * mp.log(4 / d) * mp.exp(e)), rel=1e-13)
    # the curve: valid part decreasing in n, invalid part at ε_L, and they split at n_min
    v = ~np.isnan(s["eps_valid"])
    n_grid = local_vs_central.N_GRID
    assert np.all(n_grid[v] >= s["n_min"] * (1 - 1e-12)) and np.all(n_grid[~v] < s["n_min"] * (1 + 1e-12))
    assert np.all(s["eps_invalid"][~v] == eps_l)
    assert np.all(np.diff(s["eps_valid"][v]) <= 1e-15)


# ------------------------------------------------------------------------------------------------
# invalid settings
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "field, value",
    [
        ("attack_eps", -1.0),
        ("attack_eps", float("nan")),
        ("count_eps", 50.0),
        ("rnm_eps", 0.0),
        ("svt_eps", 100.0),
        ("svt_delta", 0.5),
        ("threshold", -5.0),
        ("m", 0),
        ("m", 2.5),
        ("c", 0),
        ("trials", 10),
        ("seed", -1),
        ("target", "Mallory"),
        ("svt_variant", "Sparse"),
    ],
)
def test_invalid_mech_settings(field, value):
    with pytest.raises(ValueError, match=field):
        compute_mechanisms_lab(MechSpec(**{field: value}))


@pytest.mark.parametrize(
    "field, value",
    [
        ("med_eps", 0.0),
        ("spread", 5.0),
        ("n_data", 1),
        ("trials", 10**6),
        ("eps_local", -1.0),
        ("n_users", 5),
        ("shuffle_delta", 0.0),
        ("shuffle_delta", float("nan")),
        ("seed", 0.5),
    ],
)
def test_invalid_local_settings(field, value):
    with pytest.raises(ValueError, match=field):
        compute_local_vs_central(LocalSpec(**{field: value}))


# ------------------------------------------------------------------------------------------------
# controllers
# ------------------------------------------------------------------------------------------------
def test_mechanisms_controller_in_place_and_errors():
    box = build_mechanisms_lab()
    c = box.controller
    figs = list(c.figs)
    assert len(figs) == 7 and all(isinstance(f, PlotlyWidget) and f.data for f in figs)
    before = [f.data for f in figs]
    c.controls["attack_eps"].value = 2.0
    assert [id(f) for f in c.figs] == [id(f) for f in figs]
    assert c.fig_attack.data[3]["y"][0] == pytest.approx(attack_accuracy(2.0), rel=1e-15)
    assert c.fig_attack.data[3]["x"][0] == pytest.approx(2.0)
    assert c.fig_count_mean.data == before[2]  # other sections untouched
    c.controls["m"].value = 10
    assert c.fig_count_mean.data[3]["x"] == [10, 10, 10]
    c.controls["svt_variant"].value = "AboveThreshold"
    assert sum(len(t["x"]) for t in c.fig_svt.data[:1]) <= 1
    assert "budget used" in c.readouts["svt"].value
    good = [f.data for f in c.figs]
    c.read_spec = lambda: MechSpec(svt_delta=0.9)
    c.update()
    assert "svt_delta" in c.message.text and "last valid setting" in c.message.text
    assert [f.data for f in c.figs] == good


def test_local_controller_in_place_and_errors():
    box = build_local_vs_central()
    c = box.controller
    figs = list(c.figs)
    assert len(figs) == 3 and all(f.data for f in figs)
    c.controls["n_users"].value = 1000
    assert c.fig_shuffle.data[2]["x"] == [1000]
    assert c.fig_shuffle.data[2]["y"][0] == pytest.approx(
        compute_local_vs_central(LocalSpec(n_users=1000))["shuffle"]["eps_here"], rel=1e-15
    )
    assert [id(f) for f in c.figs] == [id(f) for f in figs]
    c.controls["med_eps"].value = 3.0
    assert c.fig_med_mean.data[4]["x"][0] == pytest.approx(3.0)
    good = [f.data for f in c.figs]
    c.read_spec = lambda: LocalSpec(spread=10.0)
    c.update()
    assert "spread" in c.message.text
    assert [f.data for f in c.figs] == good


def test_seeded_reproducible():
    a = ml._attack.__wrapped__(0.7, "Alice", 500, 9)
    b = ml._attack.__wrapped__(0.7, "Alice", 500, 9)
    np.testing.assert_array_equal(a["acc_sim"], b["acc_sim"])
    c = ml._attack.__wrapped__(0.7, "Alice", 500, 10)
    assert not np.array_equal(a["acc_sim"], c["acc_sim"])


def test_registered_in_gallery():
    names = [nb for nb, _, _ in APPS]
    assert "mechanisms_lab.ipynb" in names and "local_vs_central.ipynb" in names


@pytest.mark.parametrize("build", [build_mechanisms_lab, build_local_vs_central])
def test_negative_seed_typed_in_the_box_shows_a_message(build):
    c = build().controller
    good = [f.data for f in c.figs]
    c.controls["seed"].value = -3
    assert "seed" in c.message.text and "last valid setting" in c.message.text
    assert [f.data for f in c.figs] == good
    c.controls["seed"].value = 1
    assert c.message.text == "" and [f.data for f in c.figs] != good


def test_progress_bar_shows_on_slow_steps_and_hides_after(monkeypatch):
    box = build_local_vs_central()
    c = box.controller
    seen = []
    monkeypatch.setattr(sim, "PROGRESS_AFTER", 0.0)  # every step counts as slow
    c.progress.bar.observe(lambda ch: seen.append(ch["new"]), names="value")
    c.controls["spread"].value = 0.2
    assert seen and max(seen) == 1.0  # it moved to completion
    assert c.progress.bar.layout.display == "none"  # and is hidden again
    assert c.progress.bar in list(box.widgets())
    assert sim._PROGRESS[0] is None


def test_a_fast_step_leaves_the_hidden_progress_bar_alone():
    """Under PROGRESS_AFTER the bar is never touched: each change of a hidden bar was a widget
    message to the page (~28 a step in the local vs central lab)."""
    c = build_local_vs_central().controller
    seen = []
    c.progress.bar.observe(lambda ch: seen.append(ch["name"]), names=["value", "description"])
    c.progress.bar.layout.observe(lambda ch: seen.append(ch["name"]), names="display")
    c.controls["spread"].value = 0.2
    assert c.spec.spread == 0.2 and seen == []


def test_svt_delta_is_greyed_out_unless_the_algorithm_uses_it():
    """SVT δ matters for 'Sparse (δ > 0)' only; the other algorithms show it disabled."""
    box = build_mechanisms_lab(trials=100)
    c = box.controller.controls
    assert c["svt_variant"].value == "Sparse (δ = 0)" and c["svt_delta"].disabled
    c["svt_variant"].value = "Sparse (δ > 0)"
    assert not c["svt_delta"].disabled
    c["svt_variant"].value = "AboveThreshold"
    assert c["svt_delta"].disabled


def test_the_old_module_still_serves_the_local_vs_central_app():
    """local vs central lived in mechanisms_lab: the names it exported there (notebooks and code
    import them by name) are the very objects of dpexplore.apps.local_vs_central."""
    for name in local_vs_central.__all__:
        assert name in ml.__all__ and getattr(ml, name) is getattr(local_vs_central, name), name
    assert ml.SIM_BUDGET == sim.SIM_BUDGET == 200000
    for name in ("LOCAL_INFO", "LOWER", "UPPER", "MEDIAN_GRID"):  # public, outside __all__
        assert getattr(ml, name) is getattr(local_vs_central, name), name
