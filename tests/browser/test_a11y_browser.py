"""Accessibility in the browser (WCAG 2.1 level AA), on the gallery and every app of
``dpexplore.apps.APPS`` (apps added later are covered automatically):

* **axe-core** (the npm package pinned in ``tests/browser/axe/package-lock.json``, installed by
  ``make axe``, injected from that file: nothing is fetched while the tests run) finds no violation
  of its WCAG 2.0 / 2.1 A and AA rules, in normal and presentation mode, at 1280×720 and 320 px
  wide (a 400 % zoom of 1280 px: the same page, its window narrowed); the Theory and Reproduce
  sections and the first plot's data table are opened and every tab is shown in turn, so that what
  they hold is checked too (one page load per page and mode: the suite's time is mostly page loads);
* **keyboard only**: from the top of the page, Tab reaches a slider whose arrow keys change a plot
  and that plot's description; the skip link comes first; Home/End/PageUp/PageDown move a slider;
  the Theory section opens with Enter and a tab is chosen with the arrow keys;
* **plots a screen reader can read**: every plot is a figure named by its title whose description
  holds the values the readout shows; its "Data table" button shows the plotted values.
"""

from __future__ import annotations

import os
import re

import pytest

from dpexplore.apps import APPS

from conftest import ALL_PLOTS_HAVE_TRACES, PAGE_TIMEOUT_MS, REPO, STEP_TIMEOUT_MS

pytestmark = [pytest.mark.browser]

AXE = REPO / "tests" / "browser" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
NOTEBOOKS = [a[0] for a in APPS]
PAGES = ["index.ipynb", *NOTEBOOKS]
SIZES = {"1280x720": (1280, 720), "320px": (320, 640)}

READY = """() => document.querySelector('.dpexplore-cards') !== null || (""" + ALL_PLOTS_HAVE_TRACES + """)()"""

# every plot on screen has been described since its traces last changed
DESCRIBED = """() => [...document.querySelectorAll('.dpexplore-figure')].filter(f => f.offsetParent !== null)
  .every(f => f.getAttribute('aria-label') && f.querySelector('.dpexplore-plot-desc').textContent.length > 0)"""


def _axe_source() -> str:
    if not AXE.exists():
        msg = f"{AXE} is missing: run `make axe` (npm ci in tests/browser/axe)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return AXE.read_text(encoding="utf-8")


def _open(browser, served, nb, size, query=""):
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = ctx.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.goto(served.url(nb) + query)
    page.wait_for_function(READY, timeout=PAGE_TIMEOUT_MS)
    return ctx, page


def _quiet(page, ms=300, rounds=30):
    """Wait until the plots stop redrawing (revisions unchanged for ``ms``)."""
    js = "() => [...document.querySelectorAll('.dpexplore-plot')].map(d => d.dataset.revision).join()"
    last = page.evaluate(js)
    for _ in range(rounds):
        page.wait_for_timeout(ms)
        now = page.evaluate(js)
        if now == last:
            return
        last = now


def _violations(page, source, context="document"):
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(content=source)
    # a selector, or several: each element they match (a tab's own controls in the side panel too)
    res = page.evaluate(
        "([ctx, tags]) => axe.run(ctx === 'document' ? document :"
        " {include: ctx.split(', ').flatMap(s => [...document.querySelectorAll(s)]).filter(e => e.offsetParent !== null)},"
        " {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})",
        [context, TAGS],
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — "
        + "; ".join(f"{n['target']} {n['html'][:120]}" for n in v["nodes"][:5])
        + (f" … {len(v['nodes'])} elements" if len(v["nodes"]) > 5 else "")
        for v in res["violations"]
    ]


def _axe_all(page, source, where):
    """axe on the whole page, then on each further tab of the main area (shown in turn) with the
    controls and readouts it shows in the side panel, then the first tab again: what every tab holds
    is checked."""
    found = [f"{where}: {v}" for v in _violations(page, source)]
    tabs = page.locator(".dpexplore-main .lm-TabBar-tab")
    n = tabs.count()
    for t in [*range(1, n), 0] if n > 1 else []:
        tabs.nth(t).click()
        page.wait_for_function(ALL_PLOTS_HAVE_TRACES, timeout=PAGE_TIMEOUT_MS)
        _quiet(page)
        if t:
            found += [
                f"{where}, tab {t}: {v}" for v in _violations(page, source, ".dpexplore-main, .dpexplore-tab-controls")
            ]
    return found


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["normal", "present"])
@pytest.mark.parametrize("nb", PAGES)
def test_no_axe_violation(browser, served, nb, mode):
    """axe at 1280×720 (as loaded; then with the Theory and Reproduce sections and the first plot's
    data table open, every tab in turn), then the same page narrowed to 320 px (the window resized,
    as a reader zooming to 400 % does). In normal mode also: every visible plot is a figure named
    by its title with a description naming its axes with numbers, and its Data table button opens
    (aria-expanded) a table with a header and rows."""
    source = _axe_source()
    ctx, page = _open(browser, served, nb, SIZES["1280x720"], "?present=1" if mode == "present" else "")
    try:
        _quiet(page)
        found = [f"1280x720 loaded: {v}" for v in _violations(page, source)]
        if mode == "normal" and nb != "index.ipynb":
            _check_named_figures(page)
        heads = page.locator(".jupyter-widget-Collapse-header")
        for i in range(heads.count()):
            heads.nth(i).click()
        table = page.locator(".dpexplore-figure .dpexplore-table-button").first
        if table.count() and table.is_visible():
            table.click()  # the first plot's data table too
            if mode == "normal":
                _check_data_table(page, table)
        page.wait_for_timeout(300)
        found += _axe_all(page, source, "1280x720, sections and data table open")
        page.set_viewport_size({"width": SIZES["320px"][0], "height": SIZES["320px"][1]})
        page.wait_for_function("() => document.documentElement.clientWidth <= 320", timeout=STEP_TIMEOUT_MS)
        page.wait_for_timeout(300)  # the plots follow the window
        _quiet(page)
        found += _axe_all(page, source, "320px")
        assert not page.errors, page.errors
        assert not found, f"{nb} ({mode}):\n  " + "\n  ".join(found)
    finally:
        ctx.close()


# -- keyboard -----------------------------------------------------------------------------------
FOCUSED = """() => { const e = document.activeElement; if (!e) return null;
  const s = e.closest('.widget-slider');
  return {role: e.getAttribute('role'), cls: String(e.className), text: (e.textContent || '').trim().slice(0, 40),
          name: e.getAttribute('aria-label') || (e.getAttribute('aria-labelledby') &&
                 (document.getElementById(e.getAttribute('aria-labelledby')) || {}).textContent) || null,
          valuetext: e.getAttribute('aria-valuetext'), now: e.getAttribute('aria-valuenow'),
          min: e.getAttribute('aria-valuemin'), max: e.getAttribute('aria-valuemax'),
          readout: s ? s.querySelector('.widget-readout').textContent.trim() : null,
          outline: getComputedStyle(e).outlineStyle + ' ' + getComputedStyle(e).outlineWidth}; }"""

# per visible plot: traces (what is drawn) and description
SEEN = """() => [...document.querySelectorAll('.dpexplore-figure')].filter(f => f.offsetParent !== null)
  .map(f => ({data: JSON.stringify((f.querySelector('.js-plotly-plot') || {}).data ?
                                   f.querySelector('.js-plotly-plot').data.map(t => [t.x, t.y, t.z]) : null),
              desc: f.querySelector('.dpexplore-plot-desc').textContent}))"""


def _tab_to_slider(page, max_tabs=80, skip=0):
    """Press Tab until a slider handle has the focus (``skip`` sliders passed first); its state."""
    seen = 0
    for _ in range(max_tabs):
        page.keyboard.press("Tab")
        f = page.evaluate(FOCUSED)
        if f and f["role"] == "slider":
            if seen == skip:
                return f
            seen += 1
    return None


@pytest.mark.slow
@pytest.mark.parametrize("nb", NOTEBOOKS)
def test_keyboard_moves_a_slider_and_the_plot_and_its_description_follow(browser, served, nb):
    """Keyboard only: the first Tab reaches the skip link; further Tabs reach a named slider with a
    visible focus ring; its arrow keys change a visible plot and that plot's description (an app's
    first slider may act on a plot in another tab: then the next slider is tried)."""
    ctx, page = _open(browser, served, nb, (1280, 720))
    try:
        _quiet(page)
        page.wait_for_function(DESCRIBED, timeout=STEP_TIMEOUT_MS)
        page.keyboard.press("Tab")
        first = page.evaluate(FOCUSED)
        assert first["text"] == "Skip to plots", first
        n_sliders = page.evaluate("() => document.querySelectorAll('.widget-slider').length")
        if n_sliders == 0:
            pytest.skip(f"{nb} has no slider")
        problems = []
        for skip in range(min(n_sliders, 6)):
            page.focus(".dpexplore-skip")  # back to the top of the page: the Tab order starts again
            f = _tab_to_slider(page, skip=skip)
            if f is None:
                break
            assert f["name"] and f["name"].strip(), f"{nb}: a slider handle without a name: {f}"
            assert f["valuetext"] == f["readout"], f"{nb}: announced {f['valuetext']!r}, shown {f['readout']!r}"
            assert f["outline"].startswith("solid") and float(f["outline"].split()[1][:-2]) >= 2, f
            before = page.evaluate(SEEN)
            key = "ArrowLeft" if f["now"] == f["max"] else "ArrowRight"
            page.keyboard.press(key)
            try:
                page.wait_for_function(
                    "(b) => { const s = (" + SEEN + ")(); return s.length === b.length &&"
                    " s.some((p, i) => p.data !== b[i].data && p.desc !== b[i].desc); }",
                    arg=before,
                    timeout=STEP_TIMEOUT_MS,
                )
            except Exception:  # noqa: BLE001 - this slider changes no visible plot: try the next
                problems.append(f"slider {f['name']!r} ({key}) changed no visible plot and description")
                continue
            after = page.evaluate(FOCUSED)
            assert after["role"] == "slider" and after["name"] == f["name"], "the focus left the slider"
            assert after["readout"] != f["readout"] and after["valuetext"] == after["readout"], (f, after)
            break
        else:
            pytest.fail(f"{nb}: no slider moved a plot: {problems}")
        assert not page.errors, page.errors
    finally:
        ctx.close()


def test_slider_keys_log_values_sections_and_tabs(browser, served):
    """Home/End/PageUp/PageDown on a log slider (noise lab's ε, 0.01 … 50): the handle announces
    the values shown (not the exponents); the Theory section opens with Enter; the plot tabs are
    chosen with the arrow keys; the skip link moves the focus to the plots."""
    ctx, page = _open(browser, served, "noise_lab.ipynb", (1280, 720))
    try:
        _quiet(page)
        h = page.locator(".widget-slider", has=page.locator(".widget-label", has_text="ε")).first.locator(
            ".noUi-handle"
        )
        h.focus()
        f = page.evaluate(FOCUSED)
        assert f["name"] == "ε" and f["valuetext"] == f["readout"] == "1.00", f
        assert float(f["now"]) == 1.0 and float(f["min"]) == pytest.approx(0.01), f
        lo, hi = float(f["min"]), float(f["max"])
        assert hi > 1, f
        for key, want in (("End", hi), ("Home", lo)):
            shown = page.evaluate(FOCUSED)["valuetext"]
            page.keyboard.press(key)
            page.wait_for_function(
                f"() => document.activeElement.getAttribute('aria-valuetext') !== {shown!r}", timeout=STEP_TIMEOUT_MS
            )
            now = page.evaluate(FOCUSED)
            # the value shown (3 significant digits) at the end of the range
            assert abs(float(now["now"]) - want) <= 0.005 * want and now["valuetext"] == now["readout"], (key, now)
        readout = page.evaluate(FOCUSED)["readout"]
        page.keyboard.press("PageUp")  # a big step: several arrow steps at once
        page.wait_for_function(
            f"() => document.activeElement.getAttribute('aria-valuetext') !== {readout!r}", timeout=STEP_TIMEOUT_MS
        )
        big = float(page.evaluate(FOCUSED)["now"])
        page.keyboard.press("ArrowRight")
        page.wait_for_function(
            f"() => Number(document.activeElement.getAttribute('aria-valuenow')) > {big}", timeout=STEP_TIMEOUT_MS
        )
        small = float(page.evaluate(FOCUSED)["now"]) / big
        assert big / lo > small**2, (lo, big, small)  # PageUp moved farther than two arrow steps

        theory = page.locator(".jupyter-widget-Collapse-header").first
        assert theory.get_attribute("role") == "button" and theory.get_attribute("aria-expanded") == "false"
        theory.focus()
        page.keyboard.press("Enter")
        page.wait_for_function(
            "() => document.querySelector('.jupyter-widget-Collapse-header').getAttribute('aria-expanded') === 'true'",
            timeout=STEP_TIMEOUT_MS,
        )
        assert page.locator(".jupyter-widget-Collapse-contents").first.is_visible()

        tab = page.locator(".dpexplore-main .lm-TabBar-tab.lm-mod-current")
        first_tab = tab.inner_text()
        tab.focus()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("Enter")
        page.wait_for_function(
            f"() => document.querySelector('.dpexplore-main .lm-TabBar-tab.lm-mod-current')"
            f".innerText !== {first_tab!r}",
            timeout=STEP_TIMEOUT_MS,
        )

        page.focus(".dpexplore-skip")
        page.keyboard.press("Enter")
        assert page.evaluate("() => document.activeElement.classList.contains('dpexplore-main')")
    finally:
        ctx.close()


# -- plots a screen reader can read ---------------------------------------------------------------
def _figures(page):
    page.wait_for_function(DESCRIBED, timeout=STEP_TIMEOUT_MS)
    return page.evaluate("""() => [...document.querySelectorAll('.dpexplore-figure')].filter(f => f.offsetParent !== null)
      .map(f => ({role: f.getAttribute('role'), name: f.getAttribute('aria-label'),
                  desc: document.getElementById(f.getAttribute('aria-describedby')).textContent}))""")


def test_composition_plot_description_holds_the_readout_values(browser, served):
    """The composition explorer at k = 100: each plot's description says, at k = 100, the value
    of every curve its readout table lists (the total ε of each composition theorem; the noise
    scale per query), rounded as a student reads them off; each plot is a figure named by its
    title."""
    ctx, page = _open(browser, served, "composition_explorer.ipynb", (1280, 720), "?k=100&eps=0.1")
    try:
        page.wait_for_function(
            "() => [...document.querySelectorAll('.widget-readout')].some(e => e.textContent.trim() === '100')",
            timeout=STEP_TIMEOUT_MS,
        )
        _quiet(page)
        page.wait_for_function(DESCRIBED, timeout=STEP_TIMEOUT_MS)
        # every plot, the one in the closed tab too (its description follows its data)
        figs = page.evaluate("""() => [...document.querySelectorAll('.dpexplore-figure')].map(f => ({
            role: f.getAttribute('role'), name: f.getAttribute('aria-label'),
            desc: document.getElementById(f.getAttribute('aria-describedby')).textContent}))""")
        tables = page.evaluate("""() => [...document.querySelectorAll('.dpexplore-readouts table')].map(t =>
            [...t.querySelectorAll('tr')].map(r => [...r.querySelectorAll('td')].map(c => c.textContent.trim()))
            .filter(c => c.length >= 3))""")
        # the main and noise plots have the two readout tables; the three k-runs plots follow them
        assert len(figs) == 5 and len(tables) == 2, (figs, tables)
        assert all(f["role"] == "figure" and f["name"] and f["desc"] for f in figs[2:]), figs[2:]
        for fig, rows in zip(figs[:2], tables):
            assert fig["role"] == "figure" and fig["name"], fig
            m = re.search(r"At k = 100: (.*?)\.(?:\s|$)", fig["desc"])
            assert m, fig["desc"]
            at = m.group(1)
            checked = 0
            for cells in rows:
                try:
                    value = float(cells[2].replace(",", ""))
                except ValueError:
                    continue
                # the number said right after the curve's name (its legend entry may say more:
                # "(at 9 k)")
                said = re.search(re.escape(cells[1]) + r"[^,]*? (-?[\d.]+(?:e-?\d+)?)(?:,|$)", at)
                assert said, f"readout {cells[1]!r} not in the description {at!r}"
                # 3 significant digits of the readout's 4 (at most a unit in the third digit apart)
                assert abs(float(said.group(1)) - value) <= 0.006 * abs(value), (cells, said.group(0))
                checked += 1
            assert checked >= 5, rows
    finally:
        ctx.close()


def test_demo_description_follows_the_readout(browser, served):
    """The demo's readout "δ(ε = 1) = 0.1269" is in its plot's description ("At ε = 1: δ_μ(ε)
    0.127"), and after an arrow key on ε both say the new ε and δ."""
    ctx, page = _open(browser, served, "demo.ipynb", (1280, 720))
    try:
        _quiet(page)
        for step in range(2):
            page.wait_for_function(DESCRIBED, timeout=STEP_TIMEOUT_MS)
            readout = page.inner_text(".dpexplore-readouts")
            m = re.search(r"δ\(ε = ([\d.]+)\) = ([\d.e-]+)", readout)
            assert m, readout
            eps, delta = float(m.group(1).rstrip(".")), float(m.group(2).rstrip("."))
            page.wait_for_function(
                "(e) => document.querySelector('.dpexplore-plot-desc').textContent.includes('At ε = ' + e + ':')",
                arg=f"{eps:.3g}",
                timeout=STEP_TIMEOUT_MS,
            )
            desc = page.evaluate("() => document.querySelector('.dpexplore-plot-desc').textContent")
            said = re.search(r"At ε = ([\d.]+): δ_μ\(ε\) ([\d.e-]+)", desc)
            assert said and float(said.group(1)) == pytest.approx(eps, rel=5e-3), desc
            assert float(said.group(2).rstrip(".")) == pytest.approx(delta, rel=6e-3), (readout, desc)
            if step == 0:
                page.locator(".widget-slider", has=page.locator(".widget-label", has_text="ε")).first.locator(
                    ".noUi-handle"
                ).focus()
                page.keyboard.press("ArrowRight")
                page.wait_for_function(
                    "(r) => document.querySelector('.dpexplore-readouts').innerText !== r",
                    arg=readout,
                    timeout=STEP_TIMEOUT_MS,
                )
    finally:
        ctx.close()


def _check_named_figures(page):
    """Every visible plot: role figure, its title as its name, a description naming its axes with
    numbers."""
    figs = _figures(page)
    assert figs, "no visible plot"
    for f in figs:
        assert f["role"] == "figure" and f["name"] and f["name"].strip(), f
        assert " against " in f["desc"] or " map " in f["desc"], f
        assert re.search(r"\d", f["desc"]), f


def _check_data_table(page, btn):
    """The Data table button just clicked opened (aria-expanded) a table with a header and rows."""
    table = page.locator(".dpexplore-figure .dpexplore-data table").first
    table.wait_for(state="visible", timeout=STEP_TIMEOUT_MS)
    assert btn.get_attribute("aria-expanded") == "true"
    assert table.locator("thead th").count() >= 2
    assert table.locator("tbody tr").count() >= 1


def _fmt3(v) -> str:
    """A number as the page writes it for a student (3 significant digits: 0.127, 9.81e-23)."""
    return f"{float(f'{v:.3g}'):g}".replace("e-0", "e-").replace("e+0", "e").replace("e+", "e")


def test_audio_trace_walks_the_curve(browser, served):
    """The demo's "Listen" button: Enter turns the audio trace on; the arrow keys move along the
    δ(ε) curve and each point is announced with the values the trace holds ("ε = …, δ(ε) = …") and
    played as a tone whose pitch follows δ (lower δ, lower tone); End reaches the curve's end;
    Escape turns it off."""
    ctx, page = _open(browser, served, "demo.ipynb", (1280, 720))
    try:
        _quiet(page)
        curve = page.evaluate(
            "() => { const t = document.querySelector('.js-plotly-plot').data[0];"
            " return {x: Array.from(t.x), y: Array.from(t.y)}; }"
        )
        said = "() => document.querySelector('.dpexplore-listen-said').textContent"
        listen = page.locator(".dpexplore-listen").first
        listen.focus()
        page.keyboard.press("Enter")
        assert listen.get_attribute("aria-pressed") == "true"

        def point(i):
            return f"ε = {_fmt3(curve['x'][i])}"

        assert point(0) in page.evaluate(said) and "(start)" in page.evaluate(said), page.evaluate(said)
        hz0 = listen.get_attribute("data-hz")
        page.keyboard.press("ArrowRight")
        text = page.evaluate(said)
        assert point(1) in text and f"δ(ε) = {_fmt3(curve['y'][1])}" in text, (text, curve["x"][1], curve["y"][1])
        page.keyboard.press("End")
        text = page.evaluate(said)
        assert "(end)" in text and point(len(curve["x"]) - 1) in text, text
        hz_end = listen.get_attribute("data-hz")
        if hz0 is not None:  # Web Audio present: δ falls along the curve, and so does the pitch
            assert int(hz_end) < int(hz0), (hz0, hz_end)
        page.keyboard.press("Escape")
        assert listen.get_attribute("aria-pressed") == "false"
        assert not page.errors, page.errors
    finally:
        ctx.close()


# -- keyboard walk: disabled sliders, text boxes, linear sliders' values ---------------------------
def _tab_until(page, pred_js, max_tabs=40):
    """Press Tab until ``pred_js(document.activeElement)`` holds; the focused element's state."""
    for _ in range(max_tabs):
        page.keyboard.press("Tab")
        if page.evaluate(f"() => ({pred_js})(document.activeElement)"):
            return page.evaluate(FOCUSED)
    return None


def test_disabled_slider_is_skipped_by_tab_until_enabled(browser, served):
    """The composition explorer opens with "δ = 0 per step" ticked, which disables the "δ per step"
    slider: Tab goes from the tick box to the next slider (the disabled handle, whose keys do
    nothing, was a Tab stop announced as an operable slider), the handle says aria-disabled; Space
    unticks the box, and then Tab reaches the δ slider, whose arrow keys move it."""
    ctx, page = _open(browser, served, "composition_explorer.ipynb", (1280, 720))
    try:
        _quiet(page)
        delta = page.locator(".widget-slider", has=page.locator(".widget-label", has_text="δ per step")).first
        handle = delta.locator(".noUi-handle")
        assert handle.get_attribute("aria-disabled") == "true" and handle.get_attribute("tabindex") == "-1"
        box = page.locator(".widget-checkbox input").first
        assert box.is_checked()
        box.focus()
        f = _tab_until(page, "(e) => e.getAttribute('role') === 'slider' || e.tagName === 'INPUT'", 3)
        assert f and f["role"] == "slider" and f["name"] == "k [steps]", f
        page.keyboard.press("Shift+Tab")
        assert page.evaluate("() => document.activeElement.type") == "checkbox"
        page.keyboard.press("Space")
        page.wait_for_function(
            "(h) => !h.hasAttribute('aria-disabled') && h.getAttribute('tabindex') === '0'",
            arg=handle.element_handle(),
            timeout=STEP_TIMEOUT_MS,
        )
        page.keyboard.press("Tab")
        f = page.evaluate(FOCUSED)
        assert f["role"] == "slider" and f["name"] == "δ per step [probability]", f
        page.keyboard.press("ArrowRight")
        page.wait_for_function(
            f"() => document.activeElement.getAttribute('aria-valuetext') !== {f['valuetext']!r}",
            timeout=STEP_TIMEOUT_MS,
        )
        after = page.evaluate(FOCUSED)
        assert after["valuetext"] == after["readout"] != f["readout"], (f, after)
        # ticked again: out of the Tab order again
        box.focus()
        page.keyboard.press("Space")
        page.wait_for_function(
            "(h) => h.getAttribute('aria-disabled') === 'true'", arg=handle.element_handle(), timeout=STEP_TIMEOUT_MS
        )
        assert not page.errors, page.errors
    finally:
        ctx.close()


def test_text_box_link_box_choice_buttons_and_linear_slider_value(browser, served):
    """Keyboard only on the profile-GDP app: Tab reaches the "μ values" text box, which shows the
    3 px focus ring (ipywidgets' own rule took every outline away from text boxes); Enter on "Link
    to this view" moves the focus to the link box, which has a name (it had none); the "view"
    buttons say which is chosen (aria-pressed; only their shade did) and Space chooses; on the demo, μ
    (a linear slider, step 0.05) announces the value it shows as aria-valuenow after ArrowRight and
    PageUp (noUiSlider wrote 1.0 for 1.05 and 1.3 for 1.25)."""
    ctx, page = _open(browser, served, "profile_gdp.ipynb", (1280, 720))
    try:
        _quiet(page)
        page.focus(".dpexplore-skip")
        f = _tab_until(page, "(e) => e.tagName === 'INPUT' && e.type === 'text'")
        assert f is not None, "no text box reached with Tab"
        style, width = f["outline"].split()
        assert style == "solid" and float(width[:-2]) >= 2, f
        # "Link to this view" with Enter: the focus moves to the link box, which has a name
        page.focus(".dpexplore-skip")
        assert _tab_until(page, "(e) => e.textContent === 'Link to this view'", 5)
        page.keyboard.press("Enter")
        page.wait_for_function(
            "() => document.activeElement.classList.contains('dpexplore-link')", timeout=STEP_TIMEOUT_MS
        )
        box = page.evaluate(FOCUSED)
        assert box["name"] and box["name"].startswith("Link to this view") and box["outline"].startswith("solid"), box
        # the "view" choice: each button says whether it is the chosen one, and Space chooses
        pressed = (
            "() => [...document.querySelectorAll('.widget-toggle-button')].map(b => b.getAttribute('aria-pressed'))"
        )
        assert page.evaluate(pressed) == ["true", "false"], page.evaluate(pressed)
        assert _tab_until(page, "(e) => e.textContent.startsWith('trade-off')")
        page.keyboard.press("Space")
        page.wait_for_function(pressed + ".join() === 'false,true'", timeout=STEP_TIMEOUT_MS)
    finally:
        ctx.close()
    ctx, page = _open(browser, served, "demo.ipynb", (1280, 720))
    try:
        _quiet(page)
        page.focus(".dpexplore-skip")
        f = _tab_until(
            page,
            "(e) => e.getAttribute('role') === 'slider' && e.closest('.widget-slider')"
            ".querySelector('.widget-label').textContent.trim() === 'μ'",
        )
        assert f is not None and f["now"] == "1" and f["readout"] == "1.00", f
        for key, want in (("ArrowRight", "1.05"), ("PageUp", "1.30")):
            page.keyboard.press(key)
            page.wait_for_function(
                f"() => document.activeElement.getAttribute('aria-valuetext') === {want!r}", timeout=STEP_TIMEOUT_MS
            )
            now = page.evaluate(FOCUSED)
            assert float(now["now"]) == float(want) and now["min"] == "0.1" and float(now["max"]) == 8, now
        assert not page.errors, page.errors
    finally:
        ctx.close()


def test_link_box_in_presentation_mode_leaves_the_lead_readable(browser, served):
    """Presentation mode keeps the toolbar beside the one-line lead; Enter on "Link to this view"
    opens the link box (focused, with its focus ring), and the toolbar, then ~55rem wide, covered
    half the lead: it now takes a line of its own under the lead, which has the whole width."""
    ctx, page = _open(browser, served, "demo.ipynb", (1280, 720), "?present=1")
    try:
        _quiet(page)
        page.focus(".dpexplore-skip")
        assert _tab_until(page, "(e) => e.textContent === 'Link to this view'", 5)
        page.keyboard.press("Enter")
        page.wait_for_function(
            "() => document.activeElement.classList.contains('dpexplore-link')", timeout=STEP_TIMEOUT_MS
        )
        assert page.evaluate(FOCUSED)["outline"].startswith("solid")
        boxes = page.evaluate("""() => [document.querySelector('.dpexplore-title p'),
            document.querySelector('.dpexplore-bar'),
            document.querySelector('.dpexplore-link')].map(e => { const r = e.getBoundingClientRect();
            return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; })""")
        lead, bar, link = boxes
        assert bar["top"] >= lead["bottom"] - 1 or bar["left"] >= lead["right"], boxes  # no overlap
        assert link["right"] <= 1280 and lead["right"] > 1000, boxes  # the lead has the width again
        assert not page.errors, page.errors
    finally:
        ctx.close()


def test_plot_toolbar_is_one_tab_stop(browser, served):
    """plotly's toolbar (download, zoom, pan … 10 buttons on the demo's plot) was 10 Tab stops on
    the way from the plot's own buttons to the Theory section: it is one toolbar now, reached with
    one Tab, its buttons named, the arrow keys (and Home/End) moving along it with a visible focus
    ring, the next Tab leaving it; Shift+Tab comes back to the button last used."""
    ctx, page = _open(browser, served, "demo.ipynb", (1280, 720))
    try:
        _quiet(page)
        page.wait_for_function(DESCRIBED, timeout=STEP_TIMEOUT_MS)
        page.wait_for_function(
            "() => document.querySelector('.modebar[role=toolbar]') !== null", timeout=STEP_TIMEOUT_MS
        )
        page.focus(".dpexplore-skip")
        assert _tab_until(page, "(e) => e.textContent === 'Listen'", 12)
        page.keyboard.press("Tab")
        tool = (
            "() => { const e = document.activeElement; const t = e.closest('[role=toolbar]'); return t && "
            "{bar: t.getAttribute('aria-label'), name: e.getAttribute('data-title'), "
            "i: [...t.querySelectorAll('.modebar-btn')].indexOf(e), n: t.querySelectorAll('.modebar-btn').length}; }"
        )
        first = page.evaluate(tool)
        assert first and first["bar"] == "Plot tools" and first["i"] == 0 and first["n"] >= 5 and first["name"], first
        page.keyboard.press("ArrowRight")
        second = page.evaluate(tool)
        assert second["i"] == 1 and second["name"] and second["name"] != first["name"], second
        page.wait_for_timeout(400)  # plotly fades its toolbar in on focus (0.3 s)
        f = page.evaluate(FOCUSED)
        assert f["outline"].startswith("solid"), f
        page.keyboard.press("End")
        assert page.evaluate(tool)["i"] == first["n"] - 1
        page.keyboard.press("Home")
        page.keyboard.press("ArrowLeft")  # wraps round to the last button
        assert page.evaluate(tool)["i"] == first["n"] - 1
        page.keyboard.press("ArrowLeft")
        last_used = page.evaluate(tool)
        page.keyboard.press("Tab")
        after = page.evaluate(FOCUSED)
        assert after["role"] == "button" and after["text"].startswith("Theory"), after
        page.keyboard.press("Shift+Tab")
        assert page.evaluate(tool) == last_used
        assert not page.errors, page.errors
    finally:
        ctx.close()
