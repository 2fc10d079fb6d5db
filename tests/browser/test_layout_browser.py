"""What every app's page looks like, in Chromium at 1280×720 and 1920×1080 (a projector and a
desktop), for every app in ``dpexplore.apps.APPS`` (apps added later are covered automatically):

* a slider and the main plot are on screen together, without scrolling;
* every visible plot is at least ``MIN_PLOT_PX`` tall, and moving each visible slider (one arrow
  key step) keeps every plot's height within ±5 %;
* tick labels are ≥ 12 px (≥ 18 px in presentation mode, where titles are ≥ 22 px and lines
  ≥ 3 px), read from the SVG text in the DOM;
* every visible plot area (the axes) is at least ``MIN_AREA_PX`` tall;
* the text boxes of one figure (title, axis titles, legend, annotations) do not overlap, and none
  reaches past the figure's sides (into the next figure);
* each tab's plots, drawn when the tab is first shown, meet the same rules;
* the plots' drawing areas (inside the axes, the part on screen, summed over the plots shown) cover
  at least ``MIN_PLOT_SHARE`` of the window in presentation mode at 1280×720 and in normal mode at
  1920×1080; presentation mode's readouts are ≥ 18 px; no title, tab title or control label is cut
  off, and nothing but plots and tables is wider than the window, also at 320 CSS px (a 400 % zoom);
* the reader's settings: a larger browser font size enlarges the page text (rem), and
  ``prefers-reduced-motion`` stops the page's transitions;
* the page text names none of the internal file names of the source documents (see
  :data:`INTERNAL`; the names are assembled from pieces so that this file does not contain them).

One server and one browser for the session (conftest), two page loads per app: normal mode (at
1280×720, then the same page resized to 1920×1080 and 320 px) and presentation mode.
"""

from __future__ import annotations

import re

import pytest

from dpexplore.apps import APPS

from conftest import PAGE_TIMEOUT_MS

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SIZES = [(1280, 720), (1920, 1080)]
#: no plot on a page may be shorter than this (the bug this guards against flattened them to 120)
MIN_PLOT_PX = 250
#: nor may its plot area (the axes, without titles, tick labels and legend) be shorter than this
MIN_AREA_PX = 150
TICK_PX, TICK_PRESENT_PX, TITLE_PRESENT_PX, LINE_PRESENT_PX = 12, 18, 22, 3
#: the least share of the window the plots' drawing areas cover (presentation mode at 1280×720,
#: normal mode at 1920×1080)
MIN_PLOT_SHARE = 0.30
READOUT_PRESENT_PX = 18
#: apps expected to miss MIN_PLOT_SHARE in presentation mode at 1280×720 (an expected failure,
#: and a failure once they meet it); none since the shell's presentation stage (a tab's own
#: controls in the side panel, its plots one at a time at full width) and the composition
#: explorer's short legend names
SHARE_GAP_PRESENT: set[str] = set()
#: (app, tab) pairs past the first tab whose plots may cover less than MIN_PLOT_SHARE in
#: presentation mode at 1280×720 (not share-checked); none since the mean estimation lab's
#: "Error against n" figure of two panels (28.4 % before) reaches the window's bottom and has its
#: legend in a panel's corner
SHARE_GAP_PRESENT_TABS: set[tuple[str, int]] = set()

#: internal labels of the source documents that must never reach a page: the five numbered file
#: labels (zero, zero, then 0 to 4) standing alone (not inside a number such as 10 500, 1,500 or
#: 0.001), and the notes' file names
_ZZ = "0" * 2
_FILES = ("NOTES" + ".md", "design" + ".md", ".." + "/shared")
INTERNAL = re.compile(
    r"(?<![0-9][\s,._\u202f\u00a0])(?<![0-9.,])\b"
    + _ZZ
    + r"[0-4]\b(?![0-9.,])|"
    + "|".join(re.escape(f) for f in _FILES)
)

NOTEBOOKS = [a[0] for a in APPS]

VISIBLE_PLOTS_DRAWN = """() => {
  const g = [...document.querySelectorAll('.dpexplore-plot')].filter(d => d.offsetParent !== null);
  return g.length > 0 && g.every(d => d.classList.contains('js-plotly-plot') && d.data &&
                                      d.data.length > 0 && Number(d.dataset.revision) > 0);
}"""

# Everything measured in one go, for the plots now visible.
MEASURE = """() => {
  const vis = e => e && e.getBoundingClientRect().width > 0 && e.getBoundingClientRect().height > 0;
  const box = e => { const r = e.getBoundingClientRect();
                     return {x0: r.left, y0: r.top, x1: r.right, y1: r.bottom}; };
  const px = e => parseFloat(getComputedStyle(e).fontSize);
  const plots = [...document.querySelectorAll('.dpexplore-plot')].filter(d => d.offsetParent !== null);
  return plots.map((d, i) => {
    const ticks = [...d.querySelectorAll('.xaxislayer-above text, .yaxislayer-above text')]
      .filter(t => vis(t) && t.textContent.trim());
    const texts = [];
    const add = (kind, el) => { if (vis(el) && (el.textContent || '').trim()) texts.push({kind, ...box(el)}); };
    d.querySelectorAll('.g-gtitle text.gtitle').forEach(e => add('title', e));
    d.querySelectorAll('[class^="g-x"][class$="title"] text, [class^="g-y"][class$="title"] text')
      .forEach(e => add('axis title', e));
    d.querySelectorAll('.legend').forEach(e => {
      const bg = e.querySelector('rect.bg'); if (bg && vis(bg)) texts.push({kind: 'legend', ...box(bg)}); });
    d.querySelectorAll('.annotation').forEach(e => add('annotation', e));
    const lines = [...d.querySelectorAll('.scatterlayer path.js-line')].filter(vis)
      .map(p => parseFloat(getComputedStyle(p).strokeWidth));
    const r = d.getBoundingClientRect();
    const stale = Number(d.dataset.changeAt || 0) > Number(d.dataset.drawEnd || 0);
    return {i, stale, top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height,
            title: (d.querySelector('.gtitle') || {}).textContent || '',
            minTick: ticks.length ? Math.min(...ticks.map(px)) : null,
            smallTicks: ticks.filter(t => px(t) < 100).map(t => [t.textContent, px(t)]).slice(0, 200),
            titlePx: [...d.querySelectorAll('.g-gtitle text.gtitle')].map(px),
            minLine: lines.length ? Math.min(...lines) : null,
            area: d._fullLayout && d._fullLayout._size ? d._fullLayout._size.h : null,
            texts};
  });
}"""

SLIDERS = """() => [...document.querySelectorAll('.widget-slider')].map((s, i) => [s, i]).filter(([s]) =>
  s.offsetParent !== null && !s.querySelector('[disabled]') && !s.classList.contains('mod-disabled'))
  .map(([s, i]) => i)"""

REVISIONS = "() => [...document.querySelectorAll('.dpexplore-plot')].map(d => Number(d.dataset.revision))"


def _overlaps(texts, tol=1.0):
    out = []
    for a in range(len(texts)):
        for b in range(a + 1, len(texts)):
            s, t = texts[a], texts[b]
            w = min(s["x1"], t["x1"]) - max(s["x0"], t["x0"])
            h = min(s["y1"], t["y1"]) - max(s["y0"], t["y0"])
            if w > tol and h > tol:
                out.append((s["kind"], t["kind"], round(w), round(h)))
    return out


def _settle(page, rounds=25):
    last = None
    for _ in range(rounds):
        now = page.evaluate(REVISIONS)
        if now == last:
            return
        last = now
        page.wait_for_timeout(200)


def _check_figures(measured, where, present=False):
    problems = []
    for m in measured:
        name = f"{where} plot {m['i']} ({m['title'][:40]!r})"
        if m["height"] < MIN_PLOT_PX:
            problems.append(f"{name}: {m['height']:.0f} px tall < {MIN_PLOT_PX}")
        floor = TICK_PRESENT_PX if present else TICK_PX
        if m["minTick"] is not None and m["minTick"] < floor - 0.01:
            small = [t for t in m["smallTicks"] if t[1] < floor - 0.01][:4]
            problems.append(f"{name}: tick labels {small} below {floor} px")
        if present:
            if any(p < TITLE_PRESENT_PX - 0.01 for p in m["titlePx"]):
                problems.append(f"{name}: title {m['titlePx']} px < {TITLE_PRESENT_PX}")
            if m["minLine"] is not None and m["minLine"] < LINE_PRESENT_PX - 0.01:
                problems.append(f"{name}: a line {m['minLine']} px < {LINE_PRESENT_PX}")
        if m["stale"]:
            problems.append(f"{name}: stale (a change from the kernel arrived after its last redraw)")
        ov = _overlaps(m["texts"])
        if ov:
            problems.append(f"{name}: overlapping text boxes {ov}")
        # text past its own figure's sides runs into the next figure (or is cut off)
        out = [
            (t["kind"], round(t["x0"] - m["left"]), round(m["right"] - t["x1"]))
            for t in m["texts"]
            if t["x0"] < m["left"] - 2 or t["x1"] > m["right"] + 2
        ]
        if out:
            problems.append(f"{name}: text past the figure's sides (kind, left gap, right gap) {out}")
        if m["area"] is not None and m["area"] < MIN_AREA_PX:
            problems.append(f"{name}: plot area {m['area']:.0f} px tall < {MIN_AREA_PX}")
    return problems


def _open(browser, served, nb, size, present=False):
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = ctx.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.goto(served.url(nb) + ("?present=1" if present else ""))
    page.wait_for_function(VISIBLE_PLOTS_DRAWN, timeout=PAGE_TIMEOUT_MS)
    _settle(page)
    return ctx, page


def _press(page, index, key="ArrowRight"):
    before = page.evaluate(REVISIONS)
    handle = page.locator(".widget-slider").nth(index).locator(".noUi-handle")
    handle.focus()
    handle.press(key)
    try:
        page.wait_for_function(
            "(b) => { const r = [...document.querySelectorAll('.dpexplore-plot')]"
            ".map(d => Number(d.dataset.revision)); return r.some((v, i) => v > b[i]); }",
            arg=before,
            timeout=15_000,
        )
    except Exception:  # noqa: BLE001 - a step may legitimately change no plot (an error message)
        pass
    _settle(page)


def _tabs(page):
    return page.locator(".dpexplore-main .lm-TabBar-tab, .dpexplore-main .p-TabBar-tab")


def _first_on_screen(page, size):
    """A slider and the main plot on screen together, without scrolling."""
    problems = []
    w, h = size
    if page.evaluate("() => window.scrollY") != 0:
        problems.append("the page is scrolled")
    first = page.evaluate("""() => {
      const s = [...document.querySelectorAll('.widget-slider')].find(s => s.offsetParent !== null);
      const p = [...document.querySelectorAll('.dpexplore-plot')].find(d => d.offsetParent !== null);
      const r = e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
      return {slider: s ? r(s) : null, plot: p ? r(p) : null};
    }""")
    for what in ("slider", "plot"):
        b = first[what]
        if b is None:
            if what == "plot":
                problems.append("no visible plot")
            continue  # an app without sliders
        if not (b[0] >= -1 and b[1] >= -1 and b[2] <= w + 1 and b[3] <= h + 1):
            problems.append(f"the first {what} is not fully on screen at {w}x{h}: box {[round(v) for v in b]}")
    return problems


def _every_tab(page, where, present=False, nb=None):
    """Each tab's plots (drawn when first shown) meet the figure rules, and in presentation mode
    cover ``MIN_PLOT_SHARE`` of the window; the first tab is shown at the end."""
    tabs = _tabs(page)
    n = tabs.count()
    if n == 0:
        return _check_figures(page.evaluate(MEASURE), f"{where}:", present=present)
    problems = []
    for i, t in enumerate([*range(n), 0] if n > 1 else range(n)):
        tabs.nth(t).click()
        page.wait_for_function(VISIBLE_PLOTS_DRAWN, timeout=30_000)
        _settle(page)
        if i < n:  # back on the first tab at the end: checked already
            problems += _check_figures(page.evaluate(MEASURE), f"{where} tab {t}:", present=present)
            m = page.evaluate(SHARE)
            share = m["share"] if present and t and (nb, t) not in SHARE_GAP_PRESENT_TABS else 1.0
            if present and m["scrolled"]:
                problems.append(f"{where} tab {t}: a table scrolls sideways: {m['scrolled']}")
            if share < MIN_PLOT_SHARE:
                problems.append(f"{where} tab {t}: plots cover {share:.1%} of the window < {MIN_PLOT_SHARE:.0%}")
    return problems


def _resize(page, size):
    """Resize the window and wait until every visible plot has followed it (its SVG as wide as its box)."""
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.wait_for_function(f"() => document.documentElement.clientWidth <= {size[0]}", timeout=15_000)
    page.wait_for_function(
        """() => [...document.querySelectorAll('.dpexplore-plot')].filter(d => d.offsetParent !== null)
      .every(d => { const s = d.querySelector('svg.main-svg');
                    return s && Math.abs(Number(s.getAttribute('width')) - d.getBoundingClientRect().width) <= 2; })""",
        timeout=15_000,
    )
    _settle(page)


@pytest.mark.parametrize("nb", NOTEBOOKS)
def test_page_layout(browser, served, nb):
    """Normal mode, one page load: at 1280×720 (a projector) the layout rules, each visible slider
    moved once, every tab; the window enlarged to 1920×1080 (a desktop): the layout rules and the
    plots' share of the window; narrowed to 320 CSS px (1280 px at 400 % zoom): one column, nothing
    but plots and tables wider than the window, no title, tab title or label cut off."""
    small = SIZES[0]
    ctx, page = _open(browser, served, nb, small)
    try:
        problems = _first_on_screen(page, small)
        before = page.evaluate(MEASURE)
        problems += _check_figures(before, "1280x720 loaded:")
        heights = {m["i"]: m["height"] for m in before}

        # move each visible slider once: every plot keeps its height
        for idx in page.evaluate(SLIDERS):
            _press(page, idx)
            after = page.evaluate(MEASURE)
            label = page.locator(".widget-slider").nth(idx).locator(".widget-label").inner_text()
            for m in after:
                h0 = heights.get(m["i"])
                if h0 and abs(m["height"] - h0) > 0.05 * h0:
                    problems.append(f"after moving slider {label!r}: plot {m['i']} {h0:.0f} → {m['height']:.0f} px")
                if m["height"] < MIN_PLOT_PX:
                    problems.append(f"after moving slider {label!r}: plot {m['i']} is {m['height']:.0f} px")
        problems += _every_tab(page, "1280x720")  # (without tabs: the figures again, sliders moved)
        cut = page.evaluate(SHARE)["cut"]
        if cut:
            problems.append(f"1280x720: text cut off: {cut}")

        text = page.inner_text("body")
        for m in INTERNAL.finditer(text):
            problems.append(f"internal file name on the page: …{text[max(0, m.start() - 30) : m.end() + 30]!r}…")

        large = SIZES[1]
        _resize(page, large)
        problems += [f"1920x1080: {p}" for p in _first_on_screen(page, large)]
        problems += _share_problems(page.evaluate(SHARE), large, present=False)
        problems += _every_tab(page, "1920x1080")

        _resize(page, (320, 640))
        m = page.evaluate(SHARE)
        if m["pageWidth"] > 321 or m["wide"]:
            problems.append(f"320 px: wider than the window ({m['pageWidth']} px): {m['wide']}")
        if m["cut"]:
            problems.append(f"320 px: text cut off: {m['cut']}")
        assert not page.errors, page.errors
        assert not problems, f"{nb}:\n  " + "\n  ".join(problems)
    finally:
        ctx.close()


# The plots' drawing areas on screen, as a share of the window; text cut off or wider than the
# window; the smallest readout text (sub- and superscripts aside).
SHARE = """() => {
  const W = innerWidth, H = innerHeight;
  let area = 0;
  const plots = [];
  for (const d of document.querySelectorAll('.dpexplore-plot')) {
    if (d.offsetParent === null || !d._fullLayout || !d._fullLayout._size) continue;
    const r = d.getBoundingClientRect(), s = d._fullLayout._size;
    // each panel's axes (a figure of several panels: the gaps between them are not drawing area)
    for (const p of Object.values(d._fullLayout._plots || {})) {
      const xa = p.xaxis, ya = p.yaxis;
      if (!xa || !ya) continue;
      const x0 = Math.max(0, r.left + xa._offset), y0 = Math.max(0, r.top + ya._offset);
      const x1 = Math.min(W, r.left + xa._offset + xa._length), y1 = Math.min(H, r.top + ya._offset + ya._length);
      area += Math.max(0, x1 - x0) * Math.max(0, y1 - y0);
    }
    plots.push([Math.round(s.w), Math.round(s.h), Math.round(r.top)]);
  }
  const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const cut = [];
  const sel = '.dpexplore-title h2, .lm-TabBar-tabLabel, .p-TabBar-tabLabel, .dpexplore-panel .widget-label, ' +
              '.dpexplore-panel .widget-label-basic, .dpexplore-main .widget-label';
  for (const e of document.querySelectorAll(sel)) {
    if (!shown(e) || !e.textContent.trim()) continue;
    const r = e.getBoundingClientRect();
    if (e.scrollWidth > e.clientWidth + 1 || r.right > W + 1 || r.left < -1) cut.push(e.textContent.trim().slice(0, 40));
  }
  // a dropdown or text box that shows less than its whole value (a select's scrollWidth does not
  // see its text: the value is measured in the control's font, against its width inside the
  // padding, where a select's arrow is)
  const pen = document.createElement('canvas').getContext('2d');
  for (const e of document.querySelectorAll('.dpexplore-app select, .dpexplore-app input[type=text]')) {
    if (!shown(e)) continue;
    const cs = getComputedStyle(e);
    const text = e.tagName === 'SELECT' ? ((e.selectedOptions[0] || {}).text || '') : e.value;
    pen.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
    const room = e.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    if (pen.measureText(text).width > room + 1 || e.scrollWidth > e.clientWidth + 1)
      cut.push(`${e.tagName.toLowerCase()} "${text.slice(0, 30)}" (${Math.round(pen.measureText(text).width)} px in ${Math.round(room)})`);
  }
  const wide = [...document.querySelectorAll('.dpexplore-app *')].filter(e => {
    // plots and tables may scroll; the lead is one line in presentation mode (an ellipsis, whole on hover)
    if (!shown(e) || e.closest('.dpexplore-plot, table') || e.closest('.dpexplore-present .dpexplore-title p')) return false;
    const r = e.getBoundingClientRect();
    return r.right > W + 1 || r.left < -1;
  });
  // a table that scrolls sideways inside its text (on a projector its last columns are cut off;
  // the data-table view behind its button may scroll)
  const scrolled = [...document.querySelectorAll('.dpexplore-app table')].filter(t => {
    if (!shown(t) || t.closest('.dpexplore-data, .dpexplore-plot')) return false;
    const box = t.closest('.widget-html-content, .widget-htmlmath-content');
    return box && box.scrollWidth > box.clientWidth + 1;
  }).map(t => `${Math.round(t.getBoundingClientRect().width)} px in ${t.closest('.widget-html-content, .widget-htmlmath-content').clientWidth}: ` +
              t.textContent.trim().slice(0, 30));
  const readouts = [...document.querySelectorAll('.dpexplore-readouts *')].filter(e => shown(e) &&
    !e.closest('sub, sup') && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()));
  const px = readouts.map(e => [e.textContent.trim().slice(0, 30), parseFloat(getComputedStyle(e).fontSize)]);
  const c = document.querySelector('.dpexplore-panel .widget-slider, .dpexplore-panel .jupyter-widgets');
  const cb = c ? c.getBoundingClientRect() : null;
  return {share: area / (W * H), plots, cut, pageWidth: document.documentElement.scrollWidth,
          control: cb ? [cb.left, cb.top, cb.right, cb.bottom] : null,
          wide: wide.filter(e => !wide.includes(e.parentElement)).slice(0, 5)
                    .map(e => (e.className.toString() + ' ' + (e.textContent || '').slice(0, 30))),
          scrolled, smallReadouts: px.filter(([, v]) => v < 18 - 0.01).slice(0, 5), readouts: px.length};
}"""


def _share_problems(m, size, present):
    """What ``SHARE`` measured, against the rules: plots cover ≥ ``MIN_PLOT_SHARE`` of the window,
    nothing cut off or wider than the window, the first control on screen, (presentation mode)
    readouts ≥ 18 px."""
    where = f"{'present ' if present else ''}{size[0]}x{size[1]}"
    problems = []
    if m["share"] < MIN_PLOT_SHARE:
        problems.append(
            f"{where}: plots cover {m['share']:.1%} of the window < {MIN_PLOT_SHARE:.0%} (axes w, h, top: {m['plots']})"
        )
    if m["cut"]:
        problems.append(f"{where}: text cut off: {m['cut']}")
    if m["pageWidth"] > size[0] + 1 or m["wide"]:
        problems.append(f"{where}: wider than the window ({m['pageWidth']} px): {m['wide']}")
    if present and m["scrolled"]:
        problems.append(f"{where}: a table wider than its place (it scrolls sideways): {m['scrolled']}")
    if present and m["smallReadouts"]:
        problems.append(f"{where}: readouts below {READOUT_PRESENT_PX} px: {m['smallReadouts']}")
    box = m["control"]
    if box and not (box[0] >= -1 and box[1] >= -1 and box[2] <= size[0] + 1 and box[3] <= size[1] + 1):
        problems.append(f"{where}: the first control is not on screen: {[round(v) for v in box]}")
    return problems


@pytest.mark.parametrize("nb", NOTEBOOKS)
def test_presentation_mode(browser, served, nb):
    """``present=1`` in the URL at 1280×720 (a projector): the plots' drawing areas cover ≥ 30 %
    of the window (on every tab), nothing is cut off or wider than the window, the first control is on screen,
    every readout is ≥ 18 px and no table scrolls sideways; on every tab tick labels ≥ 18 px, titles ≥ 22 px, lines ≥ 3 px, no
    overlaps. The apps of ``SHARE_GAP_PRESENT`` are expected to miss the 30 % (and only that):
    an expected failure, and a failure once they meet it, so that the set is kept true."""
    size = SIZES[0]
    ctx, page = _open(browser, served, nb, size, present=True)
    try:
        assert page.locator(".dpexplore-app.dpexplore-present").count() == 1, "present=1 did not switch it on"
        m = page.evaluate(SHARE)
        problems = _share_problems(m, size, present=True)
        gap = [p for p in problems if "plots cover" in p]
        if nb in SHARE_GAP_PRESENT:
            problems = [p for p in problems if p not in gap]
        problems += _every_tab(page, "present", present=True, nb=nb)
        _resize(page, SIZES[1])  # the same page on a larger screen: no control cut off there either
        cut = page.evaluate(SHARE)["cut"]
        if cut:
            problems.append(f"present 1920x1080: text cut off: {cut}")
        assert not page.errors, page.errors
        assert not problems, f"{nb} in presentation mode:\n  " + "\n  ".join(problems)
        if nb in SHARE_GAP_PRESENT:
            if gap:
                pytest.xfail(f"a known gap (SHARE_GAP_PRESENT): {gap[0]}")
            pytest.fail(
                f"{nb} now covers {m['share']:.1%} ≥ {MIN_PLOT_SHARE:.0%} in presentation mode: "
                "take it out of SHARE_GAP_PRESENT"
            )
    finally:
        ctx.close()


def test_the_readers_settings(browser, served):
    """The browser's font size (24 px instead of 16) enlarges the page text by 1.5; with
    ``prefers-reduced-motion: reduce`` nothing on the page is animated; ``prefers-contrast: more``
    darkens the small print."""

    def sizes(page):
        return page.evaluate("""() => ['.dpexplore-title h2', '.dpexplore-title p', '.dpexplore-readouts']
            .map(s => parseFloat(getComputedStyle(document.querySelector(s)).fontSize))""")

    ctx, page = _open(browser, served, "demo.ipynb", (1280, 720))
    try:
        normal = sizes(page)
        cdp = ctx.new_cdp_session(page)
        cdp.send("Page.setFontSizes", {"fontSizes": {"standard": 24}})
        page.wait_for_timeout(300)
        larger = sizes(page)
        assert all(abs(b / a - 1.5) < 0.02 for a, b in zip(normal, larger)), (normal, larger)
    finally:
        ctx.close()
    ctx = browser.new_context(viewport={"width": 1280, "height": 720}, reduced_motion="reduce")
    page = ctx.new_page()
    try:
        page.goto(served.url("composition_explorer.ipynb"))
        page.wait_for_function(VISIBLE_PLOTS_DRAWN, timeout=PAGE_TIMEOUT_MS)
        moving = page.evaluate("""() => [...document.querySelectorAll('.dpexplore-app *')].filter(e => {
            const cs = getComputedStyle(e);
            return cs.transitionDuration.split(',').some(d => parseFloat(d) > 0) ||
                   (cs.animationName !== 'none' && cs.animationDuration.split(',').some(d => parseFloat(d) > 0)); })
            .map(e => e.className.toString().slice(0, 40)).slice(0, 5)""")
        assert moving == [], moving
        page.emulate_media(contrast="more")
        colour = page.evaluate("() => getComputedStyle(document.querySelector('.dpexplore-app .widget-label')).color")
        assert colour == "rgb(0, 0, 0)", colour
    finally:
        ctx.close()


def test_internal_label_pattern():
    bad = [f"see {_ZZ}0 Theorem 4", f"({_ZZ}1)", f"{_ZZ}2 Thm 3.1", f"Bassi 2019/{_ZZ}3", *_FILES]
    fine = ["k = 10 000", "1,000 steps", "δ = 0.001", "n = 100000", "1e-300", "10\u202f000"]
    assert all(INTERNAL.search(s) for s in bad), [s for s in bad if not INTERNAL.search(s)]
    assert not any(INTERNAL.search(s) for s in fine), [s for s in fine if INTERNAL.search(s)]


def test_plots_follow_the_window_and_export(browser, served):
    """The main plot follows a window resize (width and height); the plot toolbar offers PNG and
    SVG and no upload to Plotly Cloud; "Data (CSV)" downloads the plotted data."""
    ctx, page = _open(browser, served, "demo.ipynb", (1280, 720))
    try:
        box = (
            "() => { const d = document.querySelector('.dpexplore-plot'); const s = d.querySelector('svg.main-svg');"
            " return [d.getBoundingClientRect().width, d.getBoundingClientRect().height,"
            " s ? Number(s.getAttribute('width')) : 0, s ? Number(s.getAttribute('height')) : 0]; }"
        )
        w0, h0, sw0, sh0 = page.evaluate(box)
        assert abs(sw0 - w0) <= 2 and abs(sh0 - h0) <= 2, (w0, h0, sw0, sh0)
        page.set_viewport_size({"width": 1920, "height": 1080})
        page.wait_for_function(f"() => ({box})()[2] > {sw0 + 100} && ({box})()[3] > {sh0 + 100}", timeout=15_000)
        w1, h1, sw1, sh1 = page.evaluate(box)
        assert abs(sw1 - w1) <= 2 and abs(sh1 - h1) <= 2, (w1, h1, sw1, sh1)
        page.set_viewport_size({"width": 1280, "height": 720})
        page.wait_for_function(f"() => Math.abs(({box})()[3] - {sh0}) <= 2", timeout=15_000)

        page.hover(".dpexplore-plot")
        titles = page.evaluate(
            "() => [...document.querySelectorAll('.modebar-btn')].map(b => b.getAttribute('data-title'))"
        )
        assert any("png" in (t or "").lower() for t in titles), titles
        assert "Download plot as SVG" in titles, titles
        # no button that uploads the figure to Plotly Cloud (plotly.js 4 shows one by default)
        assert not any("share" in (t or "").lower() or "cloud" in (t or "").lower() for t in titles), titles
        with page.expect_download(timeout=20_000) as dl:
            page.get_by_role("button", name="Data (CSV)").click()
        path = dl.value.path()
        text = open(path, encoding="utf-8").read()
        assert text.splitlines()[0].startswith("figure,trace,x,y") and len(text.splitlines()) > 100
    finally:
        ctx.close()
