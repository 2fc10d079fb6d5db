"""The privacy-profile-vs-GDP dashboard in headless Chromium, served by ``dpexplore serve``.

Every action is checked against numbers computed here with the dpexplore backend (mechanisms,
conversions) for the new setting: δ_A(ε) on the plotted ε grid, δ_μ(ε) (Liu et al. 2022 Thm 3.1), β(α) and
G_μ(α), and the GDP verdict (gdp_measure) in the readout.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpexplore.accounting import conversions as C
from dpexplore import mechanisms as M
from dpexplore.apps import profile_gdp as P

pytestmark = pytest.mark.browser

NB = "profile_gdp.ipynb"


def _open(open_app):
    """Open the dashboard and wait until BOTH figures (the hidden trade-off one too) are drawn."""
    app = open_app(NB)
    app.page.wait_for_function(
        """() => { const g = [...document.querySelectorAll('.js-plotly-plot')];
                   return g.length === 2 && g.every(d => d.data && d.data.length > 0); }""",
        timeout=60_000,
    )
    return app


def _y(trace) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in trace["y"]], dtype=float)


def _x(trace) -> np.ndarray:
    return np.asarray(trace["x"], dtype=float)


def _assert_log_curve(trace, want, loose=None) -> None:
    """A δ curve on the log axis: equal to ``want`` where positive, a gap (None) where δ = 0.

    ``loose`` marks ill-conditioned points (within a relative 1e-6 of a pure-DP mechanism's ε_max,
    where δ ∝ ε_max − ε: a one-ulp difference between the slider value the browser sends and the
    one recomputed here moves δ by up to ~1e-4 relative); they are compared at rtol 1e-3."""
    got = _y(trace)
    want = np.asarray(want, dtype=float)
    loose = np.zeros(want.shape, bool) if loose is None else loose
    pos = want > 0
    np.testing.assert_allclose(got[pos & ~loose], want[pos & ~loose], rtol=1e-9)
    np.testing.assert_allclose(got[pos & loose], want[pos & loose], rtol=1e-3)
    assert np.all(np.isnan(got[~pos & ~loose]))


def _profile(kind, *params):
    """(profile δ(ε), trade-off β(α), ε_max) of the backend for a setting."""
    if kind == "equation":
        p = C.equation_profile(*params, refined=True)
        return p.delta, None, np.inf
    m = {
        "laplace": M.Laplace,
        "gaussian": M.Gaussian,
        "pure": M.RandomizedResponse,
        "logistic": M.Logistic,
        "subbotin": M.Subbotin,
    }[kind](*params)
    return m.delta, m.tradeoff, float(m.eps_max)


def _assert_setting(app, kind, params, mus=(1.0, 2.0)) -> None:
    """Both plots show the backend's numbers for (kind, params, mus)."""
    plots = app.plots()
    prof, trade = plots[0], plots[1]
    delta, tradeoff, eps_max = _profile(kind, *params)
    eps = _x(prof[0])
    assert eps[0] == 0.0 and eps.size >= P.N_EPS
    _assert_log_curve(prof[0], delta(eps), loose=np.abs(eps - eps_max) < 1e-6 * eps_max)
    first_mu = 2 if kind == "equation" else 1  # the equation family adds the naive curve
    if kind == "equation":
        _assert_log_curve(prof[1], C.equation_profile(*params).delta(eps))
    for j, mu in enumerate(mus):
        _assert_log_curve(prof[first_mu + j], C.gdp_delta(mu, eps))
    alpha = _x(trade[0])
    np.testing.assert_allclose(alpha, P.ALPHA_GRID, rtol=0, atol=1e-15)
    if tradeoff is not None:
        np.testing.assert_allclose(_y(trade[0]), tradeoff(alpha), rtol=1e-9, atol=1e-15)
    for j, mu in enumerate(mus):
        np.testing.assert_allclose(_y(trade[first_mu + j]), C.tradeoff_gdp(mu, alpha), rtol=1e-9, atol=1e-15)


_CONTROLS = P._controls("laplace", "1, 2")
_LABELS = {
    "Laplace scale b": "lap_b",
    "Gaussian σ": "gauss_sigma",
    "pure ε": "rr_eps",
    "Logistic scale s": "logi_s",
    "Subbotin scale s": "sub_s",
    "equation A": "eq_A",
    "equation B": "eq_B",
    "equation σ": "eq_sigma",
}


def _snap(label, value) -> float:
    """The value a log slider takes for a typed ``value``: with continuous_update the front end
    snaps the exponent to min + k·step (ipywidgets 8 FloatLogSlider, observed); sliders that
    update on release only (Subbotin, equation) keep the typed value; the kernel then holds a
    grid point's canonical number (dpexplore's LogSlider.canonical)."""
    w = _CONTROLS[_LABELS[label]]
    if not w.continuous_update:
        return w.canonical(float(value))
    k = round((np.log10(value) - w.min) / w.step)
    return w.canonical(10 ** (w.min + k * w.step))


def _verdict_text(app) -> str:
    return app.page.inner_text(".dpexplore-gdp-verdict")


def _select_mechanism(app, key) -> None:
    label = P.FAMILIES[key].label
    before = app.revisions()
    app.page.locator(".widget-dropdown select").select_option(label=label)
    app._wait_redrawn(before)


def _set_mus(app, text, *, expect_change=True) -> None:
    before = app.revisions()
    old = app.message()
    box = app.page.locator(".widget-text input")
    box.fill(text)
    box.press("Enter")
    if expect_change:
        app._wait_redrawn(before)
    else:  # wait for a new message text
        app.page.wait_for_function(
            """(old) => { const t = [...document.querySelectorAll('.dpexplore-message')]
                      .filter(e => e.offsetParent !== null).map(e => e.innerText.trim()).join('\\n');
                      return t !== '' && t !== old; }""",
            arg=old,
            timeout=20_000,
        )


def _visible(app, cls) -> bool:
    return app.page.evaluate(f"() => document.querySelector('.{cls}').offsetParent !== null")


def test_page_loads_with_the_core_values(open_app):
    app = _open(open_app)
    plots = app.plots()
    assert len(plots) == 2
    assert len(plots[0]) == 4  # Laplace, μ = 1, μ = 2, dashed μ_upper
    _assert_setting(app, "laplace", (1.0,))
    lo, hi = C.gdp_measure(M.Laplace(1.0).profile, tol=P.MEASURE_TOL)
    eps = _x(plots[0][0])
    _assert_log_curve(plots[0][3], C.gdp_delta(hi, eps))
    text = _verdict_text(app)
    assert "GDP" in text and f"{hi:.6g}" in text and "μ_t = 0" in text
    assert "μ = 2: μ-GDP" in text and "μ = 1: not μ-GDP" in text
    assert _visible(app, "dpexplore-profile-plot") and not _visible(app, "dpexplore-tradeoff-plot")
    assert app.message() == ""
    app.assert_no_traceback()
    assert not app.page.errors, app.page.errors


def test_laplace_slider_typed_and_keyboard(open_app):
    app = _open(open_app)
    app.set_slider("Laplace scale b", 2)
    b = _snap("Laplace scale b", 2)  # 10^0.3
    assert b == pytest.approx(10**0.3, rel=1e-12)
    _assert_setting(app, "laplace", (b,))
    app.press_slider("Laplace scale b", "ArrowRight", 1)  # one step of 20 per decade
    _assert_setting(app, "laplace", (_CONTROLS["lap_b"].canonical(10**0.35),))
    assert app.message() == ""


@pytest.mark.parametrize(
    "kind, label, value",
    [
        ("gaussian", "Gaussian σ", 0.5),
        ("pure", "pure ε", 3),
        ("logistic", "Logistic scale s", 0.5),
    ],
)
def test_each_one_parameter_slider(open_app, kind, label, value):
    app = _open(open_app)
    _select_mechanism(app, kind)
    _assert_setting(app, kind, (1.0,))
    app.set_slider(label, value)
    v = _snap(label, value)
    _assert_setting(app, kind, (v,))
    if kind == "gaussian":  # exactly 1/σ-GDP
        lo, hi = C.gdp_measure(M.Gaussian(v).profile, tol=P.MEASURE_TOL)
        assert f"{hi:.6g}" in _verdict_text(app)
    assert app.message() == ""
    app.assert_no_traceback()


def test_subbotin_scale_and_shape_sliders(open_app):
    app = _open(open_app)
    _select_mechanism(app, "subbotin")
    _assert_setting(app, "subbotin", (1.0, 1.5))
    app.set_slider("Subbotin scale s", 2)
    s = _snap("Subbotin scale s", 2)
    _assert_setting(app, "subbotin", (s, 1.5))
    app.set_slider("Subbotin shape r", 3)
    _assert_setting(app, "subbotin", (s, 3.0))
    assert "not GDP" in _verdict_text(app) and "heavier than Gaussian" in _verdict_text(app)
    assert len(app.plots()[0]) == 3  # no certified μ_upper curve
    app.press_slider("Subbotin shape r", "ArrowLeft", 1)  # step 0.05
    _assert_setting(app, "subbotin", (s, 2.95))


def test_equation_sliders_naive_and_refined(open_app):
    app = _open(open_app)
    _select_mechanism(app, "equation")
    _assert_setting(app, "equation", (2.0, 1.0, 2.0))
    text = _verdict_text(app)
    assert "Naive inversion: not GDP" in text and "Refined profile: GDP" in text
    app.set_slider("equation σ", 20)  # on the step grid: exact
    _assert_setting(app, "equation", (2.0, 1.0, 20.0))
    app.set_slider("equation A", 5)
    a = _snap("equation A", 5)
    _assert_setting(app, "equation", (a, 1.0, 20.0))
    app.set_slider("equation B", 0.1)
    _assert_setting(app, "equation", (a, 0.1, 20.0))
    assert "Naive inversion: GDP" in _verdict_text(app)


def test_mu_values_and_view_toggle(open_app):
    app = _open(open_app)
    _set_mus(app, "0.5, 3, 4")
    _assert_setting(app, "laplace", (1.0,), (0.5, 3.0, 4.0))
    app.page.locator(".widget-toggle-buttons button", has_text="trade-off").click()
    app.page.wait_for_function(
        "() => document.querySelector('.dpexplore-tradeoff-plot').offsetParent !== null", timeout=20_000
    )
    # the μ values changed while the trade-off plot was hidden: it redraws a frame after it is
    # shown (reading it in between saw the old μ curves once in CI)
    app.wait_shown_current()
    assert not _visible(app, "dpexplore-profile-plot")
    _assert_setting(app, "laplace", (1.0,), (0.5, 3.0, 4.0))
    app.set_slider(0, 0.1)  # sliders still drive the (now visible) trade-off plot
    _assert_setting(app, "laplace", (0.1,), (0.5, 3.0, 4.0))


def test_bad_value_shows_message_and_keeps_the_plot(open_app):
    app = _open(open_app)
    before = app.plots()
    _set_mus(app, "1, banana", expect_change=False)
    msg = app.message()
    assert "mu values must be numbers" in msg and "last valid setting" in msg
    assert app.plots() == before
    app.assert_no_traceback()
    _set_mus(app, "-2", expect_change=False)
    assert "mu must be a finite number > 0" in app.message()
    assert app.plots() == before
    # the page still works: a good value clears the message and redraws
    _set_mus(app, "1.5")
    assert app.message() == ""
    _assert_setting(app, "laplace", (1.0,), (1.5,))
    # an extreme but computable setting: pure ε = 50 draws, with a verdict and no message
    _select_mechanism(app, "pure")
    app.set_slider("pure ε", 50)
    _assert_setting(app, "pure", (_snap("pure ε", 50),), (1.5,))
    assert app.message() == ""
    assert "GDP" in _verdict_text(app)
    app.assert_no_traceback()
    assert not app.page.errors, app.page.errors
