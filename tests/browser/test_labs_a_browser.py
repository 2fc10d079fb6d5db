"""The teaching labs of issue 4 in headless Chromium (noise lab, mechanisms in action, local vs
central), served by ``dpexplore serve``.

After every action the plotted numbers are compared with the dpexplore backend / the labs'
compute functions evaluated here for the new setting (the simulations are seeded, so even the
simulated points must agree to the last digits).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpexplore.apps import local_vs_central as LC
from dpexplore.apps import mechanisms_lab as ML
from dpexplore.apps import noise_lab as NL
from dpexplore.mechanisms import Gaussian, Laplace, Logistic

pytestmark = pytest.mark.browser

RTOL = 1e-9


# ------------------------------------------------------------------------------------------------
# helpers (the Dashboard of conftest.py does the rest)
# ------------------------------------------------------------------------------------------------
def _y(trace) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in trace["y"]], dtype=float)


def _x(trace) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in trace["x"]], dtype=float)


def _close(got, want, rtol=RTOL):
    got, want = np.asarray(got, float), np.asarray(want, float)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-300, equal_nan=True)


def _snap_log(w, value) -> float:
    """The value a log slider takes for a typed ``value``: the front end snaps the exponent to
    min + k·step (ipywidgets 8); the kernel then holds that grid point's canonical number
    (dpexplore's LogSlider) or rounds it (IntLogSlider)."""
    k = round((math.log10(value) - w.min) / w.step)
    v = 10 ** (w.min + k * w.step)
    if type(w).__name__ == "IntLogSlider":
        return float(max(round(v), 1))
    return w.canonical(v)  # the kernel holds one canonical number per grid point (LogSlider)


def _open(open_app, notebook: str, n_plots: int):
    """Open a lab and wait until all its ``n_plots`` plots are drawn (the page helper returns as
    soon as the plots present so far have traces; a long page may still be adding some)."""
    app = open_app(notebook)
    app.page.wait_for_function(
        """(n) => { const g = [...document.querySelectorAll('.js-plotly-plot')];
                    return g.length === n && g.every(d => d.data && d.data.length > 0); }""",
        arg=n_plots,
        timeout=60_000,
    )
    return app


def _set_seed(app, value, *, expect_change=True) -> None:
    box = app.reveal(
        app.page.locator(".widget-text", has=app.page.locator(".widget-label", has_text="seed")).locator("input")
    )
    before = app.revisions()
    box.fill(str(value))
    box.press("Enter")
    if expect_change:
        app._wait_redrawn(before)
    else:
        app.page.wait_for_function(
            """() => [...document.querySelectorAll('.dpexplore-message')]
                      .some(e => e.offsetParent !== null && e.innerText.trim())""",
            timeout=20_000,
        )


def _select(app, label, option, *, wait_text=None) -> None:
    """Pick ``option``; wait for a redraw, or (``wait_text``) until that text is on the page
    (for a choice that leaves every plot unchanged)."""
    select = app.reveal(
        app.page.locator(".widget-dropdown", has=app.page.locator(".widget-label", has_text=label)).locator("select")
    )
    before = app.revisions()
    select.select_option(label=option)
    if wait_text is None:
        app._wait_redrawn(before)
    else:
        app.page.wait_for_function("(t) => document.body.innerText.includes(t)", arg=wait_text, timeout=20_000)


def _z(app, plot: int, trace: int = 0):
    return app.page.evaluate(
        """([p, t]) => { const d = document.querySelectorAll('.js-plotly-plot')[p].data[t];
                         return d.z.map(r => Array.from(r)); }""",
        [plot, trace],
    )


# ------------------------------------------------------------------------------------------------
# noise lab
# ------------------------------------------------------------------------------------------------
NOISE = "noise_lab.ipynb"
_NC = NL.build_noise_lab().controller.controls


def _assert_noise(app, spec: NL.NoiseSpec) -> None:
    r = NL.compute_noise_lab(spec)
    plots = app.plots()
    dens, hist, var, curve, ratio = plots
    assert len(dens) == 4 and len(hist) == 4 and len(var) == 1 and len(curve) == 5 and len(ratio) == 3
    for i in range(4):
        _close(_x(dens[i]), r.x)
        _close(_y(dens[i]), r.densities[i])
        _close(_y(hist[i]), r.hist[i])
        _close(_y(curve[i]), r.curve_scales[i])
    _close(_y(var[0]), r.variances)
    _close(_y(curve[4]), r.scales)
    _close(_x(curve[4]), [spec.delta] * 4)
    # the printed scales are the backend's calibrations
    assert r.scales[0] == Laplace.calibrate(spec.eps, spec.delta).scale
    assert r.scales[1] == Logistic.calibrate(spec.eps, spec.delta).scale
    assert r.scales[2] == pytest.approx(Gaussian.calibrate(spec.eps, spec.delta).sigma, rel=1e-9)
    _close(_x(ratio[2]), [spec.eps])
    _close(_y(ratio[2]), [spec.delta])
    table = app.page.inner_text(".dpexplore-noise-table")
    assert f"{r.scales[2]:.6g}" in table and f"{r.variances[0]:.6g}" in table


def test_noise_lab_loads_with_the_core_values(open_app):
    app = _open(open_app, NOISE, 5)
    _assert_noise(app, NL.NoiseSpec(1.0, 1e-5, 3.0, 1000, 0))
    z = np.array(_z(app, 4), dtype=float)
    _close(z, np.log10(NL.ratio_maps()["Laplace vs Gaussian"]))
    assert "withdrawn by the author" in app.body_text()
    assert app.message() == ""
    app.assert_no_traceback()
    assert not app.page.errors, app.page.errors


def test_noise_lab_every_control_redraws_with_the_core_values(open_app):
    app = _open(open_app, NOISE, 5)
    eps, delta, shape, n, seed = 1.0, 1e-5, 3.0, 1000, 0
    app.set_slider("ε", 2)
    eps = _snap_log(_NC["eps"], 2)
    _assert_noise(app, NL.NoiseSpec(eps, delta, shape, n, seed))
    app.set_slider("δ", "1e-200")  # extreme but computable
    delta = _snap_log(_NC["delta"], 1e-200)
    _assert_noise(app, NL.NoiseSpec(eps, delta, shape, n, seed))
    app.press_slider("δ", "ArrowRight", 1)  # one quarter decade
    delta = _NC["delta"].canonical(
        10 ** (_NC["delta"].min + (round((math.log10(delta) - _NC["delta"].min) / 0.25) + 1) * 0.25)
    )
    _assert_noise(app, NL.NoiseSpec(eps, delta, shape, n, seed))
    app.set_slider("Subbotin shape r", 1.5)
    shape = 1.5
    _assert_noise(app, NL.NoiseSpec(eps, delta, shape, n, seed))
    app.set_slider("samples n", 5000)
    n = int(_snap_log(_NC["n"], 5000))
    _assert_noise(app, NL.NoiseSpec(eps, delta, shape, n, seed))
    _set_seed(app, 7)
    _assert_noise(app, NL.NoiseSpec(eps, delta, shape, n, 7))
    _select(app, "ratio map", "Logistic vs Gaussian")
    z = np.array(_z(app, 4), dtype=float)
    _close(z, np.log10(NL.ratio_maps()["Logistic vs Gaussian"]))
    assert app.message() == ""
    assert not app.page.errors, app.page.errors


def test_noise_lab_bad_seed_shows_message_and_keeps_the_plots(open_app):
    app = _open(open_app, NOISE, 5)
    before = app.plots()
    _set_seed(app, -1, expect_change=False)
    msg = app.message()
    assert "seed" in msg and "last valid setting" in msg
    assert app.plots() == before
    app.assert_no_traceback()
    _set_seed(app, 3)
    assert app.message() == ""
    _assert_noise(app, NL.NoiseSpec(1.0, 1e-5, 3.0, 1000, 3))


# ------------------------------------------------------------------------------------------------
# mechanisms in action
# ------------------------------------------------------------------------------------------------
MECH = "mechanisms_lab.ipynb"
_MC = ML.build_mechanisms_lab().controller.controls


def _assert_mech(app, spec: ML.MechSpec) -> None:
    r = ML.compute_mechanisms_lab(spec)
    p = app.plots()
    assert len(p) == 7
    a, k, q, s = r["attack"], r["counting"], r["rnm"], r["svt"]
    _close(_y(p[0][0]), a["acc_exact"])
    _close(_y(p[0][1]), a["acc_sim"])
    _close(_x(p[0][3]), [spec.attack_eps])
    _close(_y(p[0][3]), [ML.attack_accuracy(spec.attack_eps)])
    _close(_y(p[1][0]), a["hist"])
    _close(_y(p[1][2]), a["dens1"])
    for j, key in enumerate(("one", "general", "disjoint")):
        _close(_y(p[2][j]), k["mean_curves"][key])
        _close(_y(p[3][j]), k["cdf"][key])
    _close(_y(p[2][3]), [k["sim_mean"][key] for key in ("one", "general", "disjoint")])
    _close(_x(p[2][3]), [spec.m] * 3)
    _close(_y(p[4][0]), q["p_exact"])
    _close(_y(p[4][1]), q["p_sim"])
    _close(_y(p[4][3]), [q["p_here"]])
    _close(_y(p[5][0]), q["probs"])
    _close(_y(p[5][1]), q["freq"])
    up = s["answers"] == 1
    _close(_y(p[6][0]), s["values"][up])
    _close(_y(p[6][1]), s["values"][~up])
    _close(_y(p[6][2]), [spec.threshold] * 2)


def test_mechanisms_lab_loads_with_the_core_values(open_app):
    app = _open(open_app, MECH, 7)
    _assert_mech(app, ML.MechSpec())
    assert "budget used" in app.body_text()
    assert app.message() == ""
    app.assert_no_traceback()
    assert not app.page.errors, app.page.errors


def test_mechanisms_lab_every_control_redraws_with_the_core_values(open_app):
    app = _open(open_app, MECH, 7)
    kw = {}
    for label, key, value in (
        ("attack ε", "attack_eps", 3),
        ("counting ε", "count_eps", 0.2),
        ("queries m", "m", 300),
        ("noisy-max ε", "rnm_eps", 1.5),
        ("SVT ε", "svt_eps", 0.5),
        ("trials", "trials", 500),
    ):
        app.set_slider(label, value)
        v = _snap_log(_MC[key], value)
        kw[key] = int(v) if key in ("m", "trials") else v
        _assert_mech(app, ML.MechSpec(**kw))
    app.set_slider("threshold T", 400)
    kw["threshold"] = 400.0
    _assert_mech(app, ML.MechSpec(**kw))
    app.set_slider("above-threshold answers c", 20)
    kw["c"] = 20
    _assert_mech(app, ML.MechSpec(**kw))
    # for c = 20 and δ = 1e-6 basic composition is still the better bound: the plots stay, the
    # readout names the new algorithm
    _select(app, "algorithm", "Sparse (δ > 0)", wait_text="Sparse (δ > 0):")
    kw["svt_variant"] = "Sparse (δ > 0)"
    _assert_mech(app, ML.MechSpec(**kw))
    app.set_slider("SVT δ", "0.01")  # now advanced composition wins: less noise
    kw["svt_delta"] = _snap_log(_MC["svt_delta"], 0.01)
    _assert_mech(app, ML.MechSpec(**kw))
    assert ML.compute_mechanisms_lab(ML.MechSpec(**kw))["svt"]["eps0"] > 0.5 / 20
    _select(app, "target person", "Bob")
    kw["target"] = "Bob"
    _assert_mech(app, ML.MechSpec(**kw))
    _set_seed(app, 42)
    kw["seed"] = 42
    _assert_mech(app, ML.MechSpec(**kw))
    assert app.message() == ""
    assert not app.page.errors, app.page.errors


def test_mechanisms_lab_bad_seed_shows_message_and_keeps_the_plots(open_app):
    app = _open(open_app, MECH, 7)
    before = app.plots()
    _set_seed(app, -5, expect_change=False)
    assert "seed" in app.message() and "last valid setting" in app.message()
    assert app.plots() == before
    app.assert_no_traceback()
    _set_seed(app, 1)
    assert app.message() == ""
    _assert_mech(app, ML.MechSpec(seed=1))


# ------------------------------------------------------------------------------------------------
# local vs central
# ------------------------------------------------------------------------------------------------
LOCAL = "local_vs_central.ipynb"
_LC = LC.build_local_vs_central().controller.controls


def _assert_local(app, spec: LC.LocalSpec) -> None:
    r = LC.compute_local_vs_central(spec)
    p = app.plots()
    assert len(p) == 3 and len(p[0]) == 5 and len(p[1]) == 4 and len(p[2]) == 3
    m, s = r["median"], r["shuffle"]
    _close(_y(p[0][0]), m["is_mean"])
    _close(_y(p[0][1]), m["lap_mean"])
    _close(_y(p[0][2]), m["is_sim"])
    _close(_y(p[0][3]), m["lap_sim"])
    _close(_y(p[1][0]), m["is_cdf"])
    _close(_y(p[1][1]), m["lap_cdf"])
    _close(_y(p[2][0]), s["eps_valid"])
    _close(_y(p[2][1]), s["eps_invalid"])
    _close(_x(p[2][2]), [spec.n_users])
    _close(_y(p[2][2]), [s["eps_here"]])


def test_local_vs_central_loads_with_the_core_values(open_app):
    app = _open(open_app, LOCAL, 3)
    _assert_local(app, LC.LocalSpec())
    assert app.message() == ""
    app.assert_no_traceback()
    assert not app.page.errors, app.page.errors


def test_local_vs_central_every_control_redraws_with_the_core_values(open_app):
    app = _open(open_app, LOCAL, 3)
    kw = {}
    for label, key, value in (
        ("median ε", "med_eps", 0.2),
        ("data spread σ", "spread", 0.3),
        ("data size n", "n_data", 1001),
        ("local ε_L", "eps_local", 4),
        ("users n", "n_users", 10**6),
        ("shuffle δ", "shuffle_delta", "1e-10"),
        ("trials", "trials", 300),
    ):
        app.set_slider(label, value)
        v = _snap_log(_LC[key], float(value))
        kw[key] = int(v) if key in ("n_data", "n_users", "trials") else v
        _assert_local(app, LC.LocalSpec(**kw))
    app.set_slider("users n", 1000)  # the validity condition fails: ε = ε_L
    kw["n_users"] = 1000
    _assert_local(app, LC.LocalSpec(**kw))
    assert LC.compute_local_vs_central(LC.LocalSpec(**kw))["shuffle"]["eps_here"] == kw["eps_local"]
    app.press_slider("users n", "ArrowRight", 1)  # keyboard: one step of 10 per decade
    kw["n_users"] = int(round(10**3.1))
    _assert_local(app, LC.LocalSpec(**kw))
    _set_seed(app, 9)
    kw["seed"] = 9
    _assert_local(app, LC.LocalSpec(**kw))
    assert app.message() == ""
    assert not app.page.errors, app.page.errors


def test_local_vs_central_bad_seed_shows_message_and_keeps_the_plots(open_app):
    app = _open(open_app, LOCAL, 3)
    before = app.plots()
    _set_seed(app, -2, expect_change=False)
    assert "seed" in app.message()
    assert app.plots() == before
    app.assert_no_traceback()
