"""The private mean estimation lab (Kamath 2023) in headless Chromium, served by ``dpexplore serve``.

ONE page for the module's tests (page loads cost seconds on a busy machine). After every action
the plotted numbers — the seeded clouds of estimates, the error ellipses, the error curves — and
the readout are compared with :func:`compute_mean_estimation_lab` evaluated here for the new
setting: the simulations are seeded, so they agree to the last digit. Moving a slider keeps
every plot's height (±5 %); a bad typed value shows the message and keeps the plot.
"""

from __future__ import annotations

import dataclasses

import pytest

from labkit import (
    close as _close,
    snap_log as _snap_log,
    type_value as _type,
    type_for_message as _type_for_message,
    shared_lab,
)

from dpexplore.apps import mean_estimation_lab as ME

pytestmark = pytest.mark.browser

NOTEBOOK = "mean_estimation_lab.ipynb"
RTOL = 1e-12

HEIGHTS = """() => [...document.querySelectorAll('.dpexplore-plot')].filter(d => d.offsetParent !== null)
    .map(d => d.getBoundingClientRect().height)"""

#: pixels per data unit of the first plot's two axes (equal scaling: the same)
AXIS_SCALES = """() => { const fl = document.querySelector('.js-plotly-plot')._fullLayout;
    const per = (ax) => ax._length / Math.abs(ax.range[1] - ax.range[0]);
    return [per(fl.xaxis), per(fl.yaxis)]; }"""


#: slider label → the default setting's value
DEFAULTS = {
    "κ [condition number]": 100,
    "angle [degrees]": 30,
    "n [samples]": 1000,
    "ε": 1,
    "δ": "1e-06",
    "seed [random seed]": 0,
}


def _reset(app) -> None:
    """Back to the default setting (the tests share one page; each starts from the defaults)."""
    for label, value in DEFAULTS.items():
        _type(app, label, value)
    _check(app, ME.MeanEstimationSpec())


def _check(app, spec: ME.MeanEstimationSpec) -> ME.MeanEstimationResult:
    r = ME.compute_mean_estimation_lab(spec)
    cloud, curves = app.plots()
    assert len(cloud) == 6 and len(curves) == 8
    for i in range(2):
        _close(cloud[i]["x"], r.estimates[i][:, 0])
        _close(cloud[i]["y"], r.estimates[i][:, 1])
        _close(cloud[2 + i]["x"], r.ellipses[i][:, 0])
        _close(cloud[2 + i]["y"], r.ellipses[i][:, 1])
    _close(cloud[4]["y"], r.sample_ellipse[:, 1])
    _close(cloud[5]["x"], [0.0])
    for panel, (ys, free, sims) in enumerate(
        ((r.curve_mahalanobis, r.nonprivate_mahalanobis, r.sim_mahalanobis), (r.curve_l2, r.nonprivate_l2, r.sim_l2))
    ):
        t = curves[4 * panel : 4 * panel + 4]
        _close(t[0]["x"], r.curve_n)
        _close(t[0]["y"], ys[0])
        _close(t[1]["y"], ys[1])
        _close(t[2]["y"], free)
        _close(t[3]["x"], [spec.n, spec.n])
        _close(t[3]["y"], sims)
    text = app.body_text()
    for v in (*r.rmse_mahalanobis, *r.rmse_l2, *r.sim_mahalanobis, *r.clip, *r.sigma):
        assert f"{v:.4g}" in text, v
    assert f"{r.ratio_mahalanobis:.3g}×" in text and f"{r.ratio_l2:.3g}×" in text
    assert f"n = {spec.n:,}" in text and f"seed {spec.seed})" in text
    assert app.message() == ""
    return r


_page = shared_lab(NOTEBOOK)


@pytest.fixture
def lab(_page):
    return _page.get()


def test_page_loads_with_the_core_values(lab):
    app = lab
    _check(app, ME.MeanEstimationSpec())
    x_px, y_px = app.page.evaluate(AXIS_SCALES)
    assert x_px == pytest.approx(y_px, rel=0.01), "the estimates plot must have equal axis scaling"
    text = app.body_text()
    assert "Kamath 2023" in text and "Brown, Hopkins & Smith 2023" in text
    assert "does not implement" in text
    assert all(h > 250 for h in app.page.evaluate(HEIGHTS))
    app.assert_no_traceback()
    assert not app.page.errors, app.page.errors


def test_the_ellipses_are_described_as_closed_curves(lab):
    """An error ellipse is not a function of the first coordinate: its description gives its
    extent ("a closed curve: first coordinate from … to …"), never a start and an end nor one
    value "at first coordinate = 0" (where it has two)."""
    app = lab
    r = ME.compute_mean_estimation_lab(ME.MeanEstimationSpec())
    desc = app.page.evaluate(
        "() => [...document.querySelectorAll('.dpexplore-plot-desc')]"
        ".map(d => d.textContent).find(t => t.includes('ellipse'))"
    )
    for i, name in enumerate(("isotropic", "Mahalanobis (Σ known)")):
        said = f"{name}: 95 % ellipse, a closed curve: first coordinate from "
        assert said in desc, desc
        lo = float(desc.split(said)[1].split(" to ")[0])
        assert lo == pytest.approx(r.ellipses[i][:, 0].min(), rel=5e-3), desc
    assert "ellipse from" not in desc and "95 % ellipse 0." not in desc, desc
    assert "Marked (true mean): at first coordinate = 0, second coordinate = 0." in desc, desc


def test_every_slider_redraws_with_the_core_values_and_keeps_the_heights(lab):
    app = lab
    _reset(app)
    spec = ME.MeanEstimationSpec()
    heights = app.page.evaluate(HEIGHTS)
    assert heights and all(h > 250 for h in heights)

    def same_heights(what):
        now = app.page.evaluate(HEIGHTS)
        assert len(now) == len(heights)
        for h0, h in zip(heights, now):
            assert abs(h - h0) <= 0.05 * h0, f"after {what}: plot height {h0:.0f} → {h:.0f} px"

    steps = [
        ("κ [condition number]", "kappa", _snap_log(10.0, ME.KAPPA_RANGE[0], 20)),
        ("angle [degrees]", "angle", 75.0),
        ("n [samples]", "n", int(_snap_log(250, ME.N_RANGE[0], 10, True))),
        ("ε", "eps", _snap_log(0.5, ME.EPS_RANGE[0], 20)),
        ("δ", "delta", _snap_log(1e-9, ME.DELTA_RANGE[0], 4)),
        ("seed [random seed]", "seed", 5),
    ]
    for label, field, value in steps:
        _type(app, label, repr(value) if isinstance(value, float) and not value.is_integer() else value)
        spec = dataclasses.replace(spec, **{field: value})
        _check(app, spec)
        same_heights(label)
        assert app.page.evaluate(AXIS_SCALES)[0] == pytest.approx(app.page.evaluate(AXIS_SCALES)[1], rel=0.01)
    # keyboard steps: the angle one grid step (5°) right, κ one step (1/20 decade) left
    app.press_slider("angle [degrees]", "ArrowRight")
    spec = dataclasses.replace(spec, angle=80.0)
    _check(app, spec)
    same_heights("an arrow key on angle")
    app.press_slider("κ [condition number]", "ArrowLeft")
    spec = dataclasses.replace(spec, kappa=_snap_log(10**0.95, ME.KAPPA_RANGE[0], 20))
    _check(app, spec)
    same_heights("an arrow key on κ")
    # the second tab: its plot is drawn when shown, at a full height, and redraws on a step
    app.page.locator(".dpexplore-main .lm-TabBar-tab", has_text="Error against n").click()
    app.page.wait_for_function(
        "() => [...document.querySelectorAll('.dpexplore-plot')]"
        ".filter(d => d.offsetParent !== null).every(d => d.classList.contains('js-plotly-plot'))"
    )
    app.settle()
    tab_heights = app.page.evaluate(HEIGHTS)
    assert len(tab_heights) == 1 and tab_heights[0] > 250
    _type(app, "n [samples]", 1000)
    spec = dataclasses.replace(spec, n=1000)
    _check(app, spec)
    after = app.page.evaluate(HEIGHTS)
    assert abs(after[0] - tab_heights[0]) <= 0.05 * tab_heights[0]
    app.page.locator(".dpexplore-main .lm-TabBar-tab", has_text="Estimates").click()
    app.settle()
    assert not app.page.errors, app.page.errors


def test_bad_values_show_the_message_and_keep_the_plot(lab):
    app = lab
    _reset(app)
    before = app.plots()
    msg = _type_for_message(app, "ε", "abc", "not a number")
    assert "ε stays at 1" in msg
    assert app.plots() == before
    msg = _type_for_message(app, "n [samples]", "12.5", "whole number")
    assert "n stays at 1,000" in msg
    assert app.plots() == before
    assert app.readout("n [samples]") == "1,000" and app.readout("ε") == "1.00"
    app.assert_no_traceback()
    # beyond a slider's end: set to the end, with a note; then a good value clears the message
    _type(app, "κ [condition number]", "5000")
    assert "above the largest κ (1,000): set to 1,000" in app.message()
    r = ME.compute_mean_estimation_lab(ME.MeanEstimationSpec(kappa=1000.0))
    _close(app.plots()[0][0]["x"], r.estimates[0][:, 0])
    _type(app, "κ [condition number]", 100)
    _check(app, ME.MeanEstimationSpec())
    assert not app.page.errors, app.page.errors
