"""The composition settings and privacy filters lab in headless Chromium, served by
``dpexplore serve``.

One page for the module's tests (page loads cost seconds on a busy machine). After every action the
plotted numbers are compared with :func:`dpexplore.apps.filters_lab.compute_filters_lab` evaluated
here for the new setting: the analyst is seeded, so the plotted points agree to the last digit.
Every plot keeps its height (±5 %) after each move; a value that is not a number shows the inline
message and leaves the plots as they were.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from labkit import close as _close, shared_lab

from dpexplore.apps import filters_lab as FL
from dpexplore.ui.controls import log_slider

pytestmark = pytest.mark.browser

RTOL = 1e-12
HEIGHTS = """() => [...document.querySelectorAll('.dpexplore-plot')].map(
    d => d.offsetParent === null ? null : d.getBoundingClientRect().height)"""


def _snap_log(value: float, lo: float, steps_per_decade: int) -> float:
    """The log slider's grid point nearest to ``value``, as the kernel holds it (canonical)."""
    e0 = math.log10(lo)
    k = round((math.log10(value) - e0) * steps_per_decade)
    v = 10 ** (e0 + k / steps_per_decade)
    return log_slider("x", lo, lo, 10 ** (e0 + 40), steps_per_decade=steps_per_decade).canonical(v)


_page = shared_lab("filters_lab.ipynb")


@pytest.fixture
def lab(_page):
    return _page.get()


def _check(app, spec: FL.FiltersLabSpec) -> FL.FiltersLabResult:
    """Every plotted number and the readouts are the compute function's for ``spec``."""
    r = FL.compute_filters_lab(spec)
    plots = app.plots()
    assert [len(p) for p in plots] == [6, 3, 4]
    main, odo, session = plots
    for i, k in enumerate(FL.FILTERS):
        _close(main[i]["x"], r.curves[k][0])
        _close(main[i]["y"], r.curves[k][1])
    _close(main[4]["x"], [r.refusal[k][0] if r.refusal[k] else None for k in FL.FILTERS])
    _close(main[4]["y"], [r.refusal[k][1] if r.refusal[k] else None for k in FL.FILTERS])
    _close(odo[0]["x"], r.odo_t)
    _close(odo[0]["y"], r.odo_eps)
    _close(odo[1]["y"], r.odo_fixed)
    _close(odo[2]["y"], [spec.eps, spec.eps])
    ss = r.session
    assert session[0]["x"] == ["all data"] + [f"part {j + 1}" for j in range(spec.parts)]
    _close(session[0]["y"], [ss.parallel] + [0.0] * spec.parts)
    _close(session[1]["y"], [0.0] + [k.spent for k in ss.parts])
    _close(session[3]["y"], [ss.sequential])
    text = app.body_text()
    assert f"of the {spec.queries} the analyst asks" in text and f"seed {spec.seed}" in text
    for k in FL.FILTERS:
        first = f"#{r.first_refused[k]}" if r.first_refused[k] else "none"
        assert f"{r.answered[k]}{first}" in text.replace(" ", ""), (k, r.answered[k], first)
    assert app.message() == ""
    return r


def _heights(app) -> list:
    return app.page.evaluate(HEIGHTS)


def _same_heights(before: list, after: list) -> None:
    for h0, h1 in zip(before, after):
        if h0 and h1:
            assert abs(h1 - h0) <= 0.05 * h0, (before, after)


def _type(app, label: str, value, *, wait_text: str | None = None) -> None:
    """Type ``value`` into the slider's readout and wait for the redraw, or for ``wait_text`` on
    the page (a setting that changes only a readout: more queries after the analyst stopped);
    nothing to do when the slider already shows ``value``."""
    try:
        if float(app.readout(label).replace(",", "")) == float(value):
            return
    except ValueError:
        pass
    if wait_text is None:
        app.set_slider(label, value)
        return
    readout = app.slider(label).locator(".widget-readout")
    readout.click()
    app.page.keyboard.press("Control+A")
    app.page.keyboard.type(str(value))
    app.page.keyboard.press("Enter")
    app.page.wait_for_function("(t) => document.body.innerText.includes(t)", arg=wait_text, timeout=30_000)
    app.settle()


def _select(app, label: str, option: str) -> None:
    select = app.reveal(
        app.page.locator(".widget-dropdown", has=app.page.locator(".widget-label", has_text=label)).locator("select")
    )
    before = app.revisions()
    select.select_option(label=option)
    app._wait_redrawn(before)


def _tab(app, title: str) -> None:
    tab = app.page.locator(".dpexplore-main .lm-TabBar-tab, .dpexplore-main .p-TabBar-tab", has_text=title).first
    tab.click()
    app.settle()


def test_page_loads_with_the_core_values(lab):
    app = lab
    _check(app, FL.FiltersLabSpec())
    text = app.body_text()
    assert "Desfontaines 2023" in text and "Whitehouse et al. 2023" in text
    assert "fully adaptive" in text and "open" in text
    assert "from dpexplore.accounting import filters" in text  # Reproduce in Python
    heights = [h for h in _heights(app) if h]
    assert heights and min(heights) >= 250
    app.assert_no_traceback()
    assert not app.page.errors, app.page.errors


def test_every_control_redraws_with_the_core_values(lab):
    app = lab
    _tab(app, "Budget used")
    spec = FL.FiltersLabSpec()
    h0 = _heights(app)
    v = _snap_log(0.5, FL.EPS_RANGE[0], 20)
    _type(app, "ε [total]", repr(v))
    spec = dataclasses.replace(spec, eps=v)
    _check(app, spec)
    _same_heights(h0, _heights(app))
    _type(app, "δ [total]", "1e-9")
    spec = dataclasses.replace(spec, delta=1e-9)
    _check(app, spec)
    # the analyst stopped at a refusal long before query 100: more queries change the readout only
    _type(app, "queries [asked]", 200, wait_text="of the 200 the analyst asks")
    spec = dataclasses.replace(spec, queries=200)
    _check(app, spec)
    _type(app, "relative error [wanted]", 0.3)
    spec = dataclasses.replace(spec, rel_error=0.3)
    _check(app, spec)
    _type(app, "seed", 5)
    spec = dataclasses.replace(spec, seed=5)
    _check(app, spec)
    _select(app, "after a refusal", FL.MODES["skip"])
    spec = dataclasses.replace(spec, mode="skip")
    r = _check(app, spec)
    assert "refused in all" in app.body_text()
    assert any(r.refused[k] > 1 for k in FL.FILTERS)  # skip: refusals, and the analyst went on
    _same_heights(h0, _heights(app))
    # the session's sliders sit in their tab
    _tab(app, "Sessions")
    h1 = _heights(app)
    _type(app, "partitions [disjoint]", 5)
    spec = dataclasses.replace(spec, parts=5)
    _check(app, spec)
    _type(app, "ε_p / ε [each partition's share]", 0.5)
    spec = dataclasses.replace(spec, share=0.5)
    r = _check(app, spec)
    assert "charges it" in app.body_text() and f"{r.session.sequential:.4g}" in app.body_text()
    _same_heights(h1, _heights(app))
    # the keyboard too: one arrow-key step of the partition slider
    app.press_slider("partitions [disjoint]", "ArrowLeft")
    spec = dataclasses.replace(spec, parts=4)
    _check(app, spec)
    _same_heights(h1, _heights(app))
    _tab(app, "Known results")
    h2 = _heights(app)
    assert any(h2) and app.page.locator(".dpexplore-composition-table").is_visible()
    assert app.page.locator(".dpexplore-composition-table .dpexplore-open").count() == 2
    _tab(app, "Budget used")
    app.press_slider("ε [total]", "ArrowRight")
    spec = dataclasses.replace(spec, eps=_snap_log(0.56, FL.EPS_RANGE[0], 20))
    _check(app, spec)
    _same_heights(h0, _heights(app))
    assert not app.page.errors, app.page.errors


def test_bad_value_shows_the_message_and_keeps_the_plot(lab):
    app = lab
    _tab(app, "Budget used")
    before = app.plots()
    h0 = _heights(app)
    app.set_slider("ε [total]", "abc", expect_change=False)
    msg = app.message()
    assert "not a number" in msg and "ε stays at" in msg
    app.settle()
    assert app.plots() == before
    assert _heights(app) == h0
    app.assert_no_traceback()
    # a value past the slider's end is set to the end, with a note, and drawn
    app.set_slider("ε [total]", "50")
    assert "above the largest ε" in app.message()
    assert float(app.readout("ε [total]")) == 20.0 and app.plots() != before
    _same_heights(h0, _heights(app))
    app.set_slider("ε [total]", "1")
    assert app.message() == ""
    assert not app.page.errors, app.page.errors
