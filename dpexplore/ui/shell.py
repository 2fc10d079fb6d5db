"""The app shell: the one page layout every dpexplore app uses.

::

    ┌ title ─ one- or two-sentence lead ──────── [Presentation] [Link to this view] [CSV] ┐
    │ ┌ controls ──────┐ ┌ message (errors, in plain words) ───────────────────────────┐ │
    │ │ sliders …      │ │ main plot            (further plots: tabs, or a grid)       │ │
    │ │ readouts       │ │                                                             │ │
    │ └────────────────┘ └─────────────────────────────────────────────────────────────┘ │
    │ ▸ Theory: formulas, derivations, citations (closed)                                 │
    │ ▸ Reproduce in Python (closed): the public-API calls behind the readouts            │
    └─────────────────────────────────────────────────────────────────────────────────────┘

The controls sit beside the plots on wide screens and above them below ~900 px (a wrapping flex
row). Presentation mode (the toggle, or ``present=1`` in the page URL) enlarges text and lines in
every plot and in the page, and gives the plots the screen: a one-line lead beside the toolbar,
legends inside the axes, plots sized to the window (on a 1280×720 projector their drawing areas
cover ≥ 30 % of it); a tab's own controls and text move into the side panel and a tab with
several plots shows one at a time, chosen with buttons above it (``_PresentStage``); readout
tables wrap to the panel's width. Text sizes are in rem (the browser's font size); :data:`SHELL_CSS` also
follows ``prefers-reduced-motion`` and ``prefers-contrast: more`` and reflows to one column below
480 px. Every control can be set from the page URL's query string
(``…/composition_explorer.ipynb?eps=0.5&k=1000``), and "Link to this view" gives the URL of the
current state; a bad or unknown query value shows the usual inline message and keeps the default.
"CSV" downloads the plotted data; the plot toolbar saves PNG and SVG.

The shell owns no computation: an app hands it its :class:`~dpexplore.ui.controls.Controller` (one
per app), the widgets to place, and an :class:`AppInfo` (title, lead, theory).

>>> from dpexplore.apps.demo import build_demo
>>> app = build_demo()
>>> isinstance(app, AppShell), app.info.slug
(True, 'demo')
>>> app.apply_query("?mu=2&eps=0.5")
>>> app.controller.spec
DemoSpec(eps=0.5, mu=2.0)
>>> app.apply_query("mu=abc&zeta=1")
>>> app.controller.message.text.split(";")[0]
"mu: 'abc' is not a number"
>>> app.link_query()
'eps=0.5&mu=2.0'
"""
from __future__ import annotations

import csv
import decimal
import html
import io
import logging
import math
import re
import urllib.parse
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import anywidget
import ipywidgets as W
import traitlets

from ..references import autolink, bibliography_html, cited_keys
from .a11y import _SR_ONLY, PAGE_CSS, PAGE_JS
from .controls import Controller
from .offstage import Offstage, track_offstage
from .plotwidget import PlotlyWidget

__all__ = ["AppInfo", "AppShell", "ShellBar", "app_shell", "parse_number", "SHELL_CSS", "stacked_table",
           "MAIN_PLOT_HEIGHT", "TAB_PLOT_HEIGHT", "FILL_PLOT_HEIGHT"]

log = logging.getLogger(__name__)

#: longest query string the shell reads (a hostile URL cannot make it parse megabytes)
MAX_QUERY = 2000
#: how much of a bad value a message echoes
ECHO = 40


@dataclass(frozen=True)
class AppInfo:
    """What an app is, for its page and the gallery.

    ``slug`` is the notebook's stem (``composition_explorer``); ``lead`` one or two sentences of
    plain HTML saying what the app shows; ``theory`` the formulas, derivations and citations
    (HTML with MathJax ``$…$``/``\\(…\\)``, citations made with :func:`dpexplore.references.cite`);
    ``references`` the bibliography keys listed under the theory (default: every work the
    theory cites by its short form, e.g. "Mironov 2017"; those citations become links).
    """

    slug: str
    title: str
    lead: str
    theory: str
    references: tuple[str, ...] = field(default_factory=tuple)


SHELL_CSS = """
.dpexplore-app { max-width: 1900px; box-sizing: border-box; }
.dpexplore-app .dpexplore-head { align-items: flex-start; gap: 0.5rem 1rem; }
.dpexplore-app .dpexplore-title h2 { margin: 2px 0 2px; font-size: 1.375rem; line-height: 1.2; }
.dpexplore-app .dpexplore-title p { margin: 0 0 4px; font-size: 0.9375rem; line-height: 1.35; max-width: 1100px; }
.dpexplore-app .dpexplore-body { gap: 0.5rem 1rem; align-items: flex-start; }
.dpexplore-app .dpexplore-panel { background: #f6f8fa; border-radius: 6px; padding: 6px 8px; }
.dpexplore-app .dpexplore-panel .widget-readout { min-width: 4.5em; }
.dpexplore-app .widget-html-content, .dpexplore-app .widget-htmlmath-content { line-height: 1.4; }
.dpexplore-app .dpexplore-readouts { font-size: 0.875rem; line-height: 1.4; }
.dpexplore-app .dpexplore-readouts table td, .dpexplore-app .dpexplore-readouts table th { padding: 2px 4px; }
.dpexplore-app .dpexplore-readouts table { font-size: 0.8125rem; }
.dpexplore-app .dpexplore-note { font-size: 0.8125rem; color: #444; }
.dpexplore-app .dpexplore-panel { overflow-x: hidden; }
.dpexplore-app .dpexplore-readouts, .dpexplore-app .dpexplore-readouts > * { max-width: 100%; min-width: 0; }
.dpexplore-app .dpexplore-readouts .widget-html-content { overflow-x: auto; }
.dpexplore-app .lm-TabBar-tab, .dpexplore-app .p-TabBar-tab { flex: 0 0 auto !important; max-width: none !important; }
.dpexplore-app .dpexplore-panel .widget-readout { overflow: hidden; text-overflow: ellipsis; }
/* the toolbar's room is kept before its script draws it (the head would grow under plots that
   measure their height from their place on the page: FILL_PLOT_HEIGHT) */
@media (min-width: 700px) {
  .dpexplore-app:not(.dpexplore-present) .dpexplore-head > :nth-child(2) { min-width: 22.5rem; min-height: 30px; }
}
/* a dropdown and a text box show their whole value: the select is as wide as its longest option
   and the text box at least 8rem, each under its label when the row has no room for both (a long
   label beside them left "Laplac" of "Laplace, …" in the composition explorer) */
.dpexplore-app .widget-dropdown, .dpexplore-app .widget-text { flex-wrap: wrap; height: auto !important;
  max-width: 100%; row-gap: 2px; }
.dpexplore-app .widget-dropdown > select { flex: 0 0 auto !important; width: auto !important; min-width: 0; max-width: 100%; }
.dpexplore-app .widget-text > input { flex: 1 0 8rem !important; min-width: 8rem; max-width: 100%; }
.dpexplore-app .widget-dropdown > .widget-label, .dpexplore-app .widget-text > .widget-label { max-width: 100%; }
/* presentation mode: what a projector needs. The title on one or two lines and the lead on one
   (the whole lead shows on hover), text of the controls and readouts >= 18 px (at the browser's
   default 16 px), every tab title on screen (the tab bar wraps), the plots take the rest */
.dpexplore-app.dpexplore-present { --dpexplore-chrome: 120px; --dpexplore-chrome-tab: 160px; }
.dpexplore-app.dpexplore-present .dpexplore-head { gap: 0 1rem; position: relative; }
.dpexplore-app.dpexplore-present .dpexplore-head > :first-child { flex: 1 1 100% !important; min-width: 0; }
.dpexplore-app.dpexplore-present .dpexplore-head .widget-html-content { min-width: 0; max-width: 100%; }
.dpexplore-app.dpexplore-present .dpexplore-title h2 { font-size: 1.5rem; margin: 0; }
.dpexplore-app.dpexplore-present .dpexplore-title p { font-size: 1.125rem; margin: 0 0 2px; max-width: none;
  white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.dpexplore-app.dpexplore-present .dpexplore-title p:hover { white-space: normal; }
@media (min-width: 900px) {
  /* the toolbar beside the lead's line, not on a line of its own */
  .dpexplore-app.dpexplore-present .dpexplore-head > :nth-child(2) { position: absolute; right: 0; bottom: 0; }
  .dpexplore-app.dpexplore-present .dpexplore-title p { margin-right: 25rem; }
  .dpexplore-app.dpexplore-present .dpexplore-panel { flex: 0 1 26rem !important; max-width: 26rem !important; }
}
.dpexplore-app.dpexplore-present .dpexplore-panel .widget-label,
.dpexplore-app.dpexplore-present .dpexplore-panel .widget-readout,
.dpexplore-app.dpexplore-present .dpexplore-panel label,
.dpexplore-app.dpexplore-present .dpexplore-panel select,
.dpexplore-app.dpexplore-present .dpexplore-main .widget-label,
.dpexplore-app.dpexplore-present .dpexplore-main .widget-readout,
.dpexplore-app.dpexplore-present .dpexplore-readouts { font-size: 1.125rem; }
.dpexplore-app.dpexplore-present .dpexplore-panel .widget-label,
.dpexplore-app.dpexplore-present .dpexplore-panel .widget-label-basic { white-space: normal; overflow: visible; }
/* a text box's or dropdown's label on its own row grows with its lines: with the row's fixed
   height the second line of "RDP orders α for the table (comma-separated)" went under the box */
.dpexplore-app.dpexplore-present .dpexplore-panel .widget-text > .widget-label,
.dpexplore-app.dpexplore-present .dpexplore-panel .widget-dropdown > .widget-label { height: auto; line-height: 1.3; }
/* a checkbox whose larger label wraps grows with it (its fixed row height let the second line run
   into the next control) */
.dpexplore-app.dpexplore-present .dpexplore-panel .widget-checkbox { height: auto; min-height: var(--jp-widgets-inline-height, 28px); }
.dpexplore-app.dpexplore-present .dpexplore-panel .widget-checkbox .widget-label-basic { line-height: 1.3; }
.dpexplore-app.dpexplore-present .dpexplore-readouts :not(sub):not(sup),
.dpexplore-app.dpexplore-present .dpexplore-readouts table { font-size: 1.125rem !important; }
/* readout tables fit the 26rem panel where they can: the table takes the panel's width and cells
   wrap at spaces; words are never broken (a header broken letter by letter cannot be read), so a
   table with many columns (the noise lab's) scrolls sideways inside its focusable region instead */
.dpexplore-app.dpexplore-present .dpexplore-readouts table { width: 100%; max-width: 100%; border-spacing: 2px !important; }
.dpexplore-app.dpexplore-present .dpexplore-readouts table td,
.dpexplore-app.dpexplore-present .dpexplore-readouts table th { padding: 1px 2px !important; white-space: normal !important; }
.dpexplore-app.dpexplore-present .dpexplore-main .widget-html-content,
.dpexplore-app.dpexplore-present .dpexplore-main .widget-htmlmath-content { font-size: 1.125rem; }
.dpexplore-app.dpexplore-present .dpexplore-main .widget-html-content :not(sub):not(sup) { font-size: inherit !important; }
.dpexplore-app.dpexplore-present .dpexplore-note { font-size: 1rem; }
.dpexplore-app.dpexplore-present .lm-TabBar-tab, .dpexplore-app.dpexplore-present .p-TabBar-tab { font-size: 1rem; }
.dpexplore-app .lm-TabBar-content, .dpexplore-app .p-TabBar-content { flex-wrap: wrap; }
.dpexplore-app .lm-TabBar, .dpexplore-app .p-TabBar { min-height: fit-content; height: auto !important; }
/* a tab's plots one at a time (_PresentStage): the buttons that choose one wrap, whole titles */
.dpexplore-app .dpexplore-chooser { height: auto !important; align-items: center; }
.dpexplore-app .dpexplore-chooser .widget-toggle-buttons { flex-wrap: wrap; height: auto; min-width: 0; gap: 2px 0; }
.dpexplore-app .dpexplore-chooser .widget-toggle-button { width: auto !important; max-width: 100%; height: auto;
  min-height: 30px; white-space: normal; overflow: visible; font-size: 1rem; }
.dpexplore-app .dpexplore-chooser .widget-label { width: auto !important; font-size: 1rem; }
.dpexplore-app .dpexplore-tab-controls { border-top: 1px solid #c8ccd0; margin-top: 4px; padding-top: 4px; }
.dpexplore-app.dpexplore-present .dpexplore-tab-controls .widget-html-content,
.dpexplore-app.dpexplore-present .dpexplore-tab-controls .widget-htmlmath-content { font-size: 1.125rem; }
.dpexplore-app.dpexplore-present .dpexplore-tab-controls .widget-html-content :not(sub):not(sup) { font-size: inherit !important; }
.dpexplore-app .dpexplore-tab-controls .widget-html-content { overflow-x: auto; max-width: 100%; }
.dpexplore-app .dpexplore-tab-controls .widget-html-content span { max-width: 100% !important; }
/* a slider whose (larger) label is long keeps a usable track: the label wraps onto a second line
   rather than shrink the track below 8rem (the row grows with it) */
.dpexplore-app.dpexplore-present .dpexplore-panel .widget-slider { height: auto !important; min-height: 32px;
  align-items: center; margin-bottom: 2px; }
.dpexplore-app.dpexplore-present .dpexplore-panel .widget-slider > .widget-label { flex: 0 1 auto; min-width: min-content;
  height: auto !important; line-height: 1.25 !important; }
.dpexplore-app.dpexplore-present .dpexplore-panel .widget-slider > .slider-container { flex: 1 0 8rem; min-width: 8rem; }
.dpexplore-app.dpexplore-present .widget-tab > .widget-tab-contents,
.dpexplore-app.dpexplore-present .jupyter-widget-tab > .widget-tab-contents { padding: 4px; }
/* a table of long cells (stacked_table): in presentation mode its rows come one after another,
   each cell on a line of its own after its column's name; the header row stays for screen readers
   (visually hidden: the rule after this string, with the page's screen-reader-only style)
   (the name has empty alternative text, not to be read twice; a browser without that syntax keeps
   the first content) */
.dpexplore-app.dpexplore-present table.dpexplore-stack,
.dpexplore-app.dpexplore-present table.dpexplore-stack > tbody,
.dpexplore-app.dpexplore-present table.dpexplore-stack tr,
.dpexplore-app.dpexplore-present table.dpexplore-stack td,
.dpexplore-app.dpexplore-present table.dpexplore-stack th { display: block; width: auto; text-align: left !important;
  border: 0 !important; }
.dpexplore-app.dpexplore-present table.dpexplore-stack tr + tr { border-top: 1px solid #c8ccd0 !important;
  padding-top: 2px; margin-top: 2px; }
.dpexplore-app.dpexplore-present table.dpexplore-stack [data-label]::before {
  content: attr(data-label) ": "; content: attr(data-label) ": " / ""; font-weight: bold; }
/* the reader's settings: no animated transitions, more contrast */
@media (prefers-reduced-motion: reduce) {
  .dpexplore-app *, .dpexplore-app *::before, .dpexplore-app *::after {
    transition: none !important; animation: none !important; scroll-behavior: auto !important; }
}
@media (prefers-contrast: more) {
  .dpexplore-app, .dpexplore-app .dpexplore-note, .dpexplore-app .widget-label,
  .dpexplore-app .lm-TabBar-tab, .dpexplore-app .p-TabBar-tab { color: #000 !important; }
  .dpexplore-app .dpexplore-panel { background: #fff; border: 2px solid #000; }
  .dpexplore-app .lm-TabBar-tab, .dpexplore-app .p-TabBar-tab { border-color: #000 !important; }
  .dpexplore-app .dpexplore-bar-button { border: 2px solid #000; color: #000; background: #fff; }
}
/* 320 CSS px wide (a 400 % zoom): one column, nothing wider than the window but plots and tables */
@media (max-width: 480px) {
  .dpexplore-app .dpexplore-panel { min-width: 0 !important; flex-basis: 100% !important; }
  .dpexplore-app .dpexplore-main { flex-basis: 100% !important; }
  .dpexplore-app .widget-hbox > .widget-box, .dpexplore-app .widget-hbox > .jupyter-widgets { min-width: 0 !important; max-width: 100%; }
  .dpexplore-app .widget-hbox > :has(.dpexplore-plot) { min-width: 0 !important; width: 100% !important; }
  .dpexplore-app .widget-slider, .dpexplore-app .widget-inline-hbox { flex-wrap: wrap; max-width: 100%; height: auto !important; }
  .dpexplore-app .widget-slider > .widget-label, .dpexplore-app .widget-inline-hbox > .widget-label {
    flex: 1 1 100%; max-width: 100% !important; width: auto !important; }
  .dpexplore-app .widget-slider > .slider-container { min-height: 28px; }
  .dpexplore-app .widget-label, .dpexplore-app .widget-label-basic { white-space: normal; }
  .dpexplore-app .widget-html-content, .dpexplore-app .widget-htmlmath-content { overflow-x: auto; max-width: 100%; }
  .dpexplore-app .lm-TabBar-tab, .dpexplore-app .p-TabBar-tab { flex: 0 1 auto !important; max-width: 100% !important; height: auto !important; }
  .dpexplore-app .lm-TabBar-tabLabel, .dpexplore-app .p-TabBar-tabLabel { white-space: normal !important; overflow-wrap: anywhere; height: auto !important; }
  .dpexplore-app .dpexplore-title h2, .dpexplore-app .dpexplore-title p { overflow-wrap: anywhere; }
}
"""


def stacked_table(columns: Sequence[str], rows: Iterable[tuple[str, Sequence]], *, cls: str = "",
                  style: str = "", corner: str = "") -> str:
    """A table with a header row and a header cell on each row, whose rows are stacked in
    presentation mode (the shell's CSS, class ``dpexplore-stack``): the row's header, then each cell
    on a line of its own after its column's name. A table of four columns of long text is wider than
    the 26rem panel at 18 px, and scrolled sideways there (on a projector: cut off).

    ``columns`` are the column headers' HTML, after ``corner`` (the header of the row-header column);
    each row is its header's HTML and its cells, each the cell's HTML or a pair (HTML, attributes of
    the ``<td>``). Roles are explicit, as a ``display: block`` table loses its semantics in some
    browsers."""
    names = [html.escape(re.sub(r"<[^>]*>", "", c), quote=True) for c in columns]
    head = (f"<tr class='dpexplore-stack-head' role='row'><th role='columnheader' style='text-align:left'>{corner}</th>"
            + "".join(f"<th scope='col' role='columnheader'>{c}</th>" for c in columns) + "</tr>")
    body = []
    for th, cells in rows:
        tds = []
        for i, cell in enumerate(cells):
            text, attrs = (cell, "") if isinstance(cell, str) else cell
            tds.append(f"<td role='cell' data-label='{names[i]}' {attrs}>{text}</td>")
        body.append(f"<tr role='row'><th scope='row' role='rowheader' style='text-align:left'>{th}</th>"
                    + "".join(tds) + "</tr>")
    return (f"<table role='table' class='dpexplore-stack {cls}' style='{style}'>" + head + "".join(body)
            + "</table>")


SHELL_CSS += (".dpexplore-app.dpexplore-present table.dpexplore-stack tr.dpexplore-stack-head { "
              + _SR_ONLY + " }\n")


#: CSS height of a main plot alone in the plot area: the window less the title, lead and margins
#: (1280×720: 470 px; 1920×1080: 760 px), within [300, 780] px; presentation mode's smaller
#: title and one-line lead leave more (``--dpexplore-chrome`` in :data:`SHELL_CSS`)
MAIN_PLOT_HEIGHT = "clamp(300px, calc(100vh - var(--dpexplore-chrome, 250px)), 780px)"
#: the same under a tab bar
TAB_PLOT_HEIGHT = "clamp(300px, calc(100vh - var(--dpexplore-chrome-tab, 290px)), 760px)"
#: CSS height of plots under controls or text of their own (two plots side by side in a tab): from
#: the plot's top to the window's bottom, within [300, 760] px (presentation mode: [470, 760]),
#: measured by the page per window size and mode (``plotwidget.js``), never on a slider step
FILL_PLOT_HEIGHT = "fill"


def _plot_widgets(w) -> list[PlotlyWidget]:
    """The PlotlyWidgets in ``w`` (itself, or inside its boxes), in order."""
    if isinstance(w, PlotlyWidget):
        return [w]
    return [f for c in (getattr(w, "children", None) or ()) for f in _plot_widgets(c)]


class _SnippetHTML(Offstage, W.HTML):
    """The "Reproduce in Python" text: on a page, sent when its section is opened."""


class ShellBar(anywidget.AnyWidget):
    """The shell's toolbar, and its link to the browser's address bar.

    The front end sends the page's query string (a custom message, repeated until the kernel
    acknowledges it; Voilà runs the notebook before the page is requested, so the kernel cannot read
    the URL itself), shows the presentation toggle
    (``present``), builds "Link to this view" from ``state`` (control name → value) and asks the
    kernel for the CSV (a custom message; the kernel answers with the text).
    """

    _esm = """
function render({ model, el }) {
  const bar = document.createElement("div");
  bar.className = "dpexplore-bar";
  bar.style.cssText = "display:flex;flex-wrap:wrap;gap:6px;align-items:center;justify-content:flex-end";
  const btn = (label, title) => {
    const b = document.createElement("button");
    b.className = "jupyter-button dpexplore-bar-button"; b.textContent = label; b.title = title;
    b.style.cssText = "height:30px;padding:0 10px;cursor:pointer";
    bar.appendChild(b); return b;
  };
  const present = btn("", "Larger text and lines for a projector (or add present=1 to the page URL)");
  const showPresent = () => {
    present.textContent = model.get("present") ? "Presentation mode: on" : "Presentation mode";
    present.setAttribute("aria-pressed", model.get("present") ? "true" : "false");
  };
  showPresent();
  present.onclick = () => { model.set("present", !model.get("present")); model.save_changes(); };
  model.on("change:present", showPresent);
  const link = btn("Link to this view", "The page URL with every control's current value");
  const box = document.createElement("input");
  box.className = "dpexplore-link"; box.readOnly = true;
  box.style.cssText = "display:none;width:min(60vw,520px);height:26px;font-size:13px";
  link.onclick = () => {
    const q = new URLSearchParams(model.get("state") || {});
    if (model.get("present")) q.set("present", "1");
    const url = location.origin + location.pathname + (q.toString() ? "?" + q.toString() : "");
    box.value = url; box.style.display = ""; box.select();
    if (navigator.clipboard) navigator.clipboard.writeText(url).catch(() => {});
  };
  const csv = btn("Data (CSV)", "Download the plotted data as CSV");
  csv.onclick = () => model.send({ type: "csv" });
  model.on("msg:custom", (msg) => {
    if (!msg || msg.type !== "csv") return;
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([msg.text], { type: "text/csv" }));
    a.download = msg.name; document.body.appendChild(a); a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  });
  bar.appendChild(box);
  el.appendChild(bar);
  dpexploreA11y(el);   // slider names, skip link, live readouts (a11y.js)
  // Typed values: a slider's readout or a number box sends what was typed to the kernel, which
  // reads it as a person means it (ipywidgets read "20,500" as 20, "5e2" as 5 in an integer
  // field, and dropped characters such as "x" from number boxes as they were typed).
  // (number boxes become text inputs on focus: a type="number" input blocks or drops what the
  // browser does not take for a number, so the kernel would never see it to say so)
  const editable = (t) => t && t.closest && t.closest(".dpexplore-app") &&
    ((t.matches("[contenteditable=true]") && t.closest(".widget-slider")) ||
     (t.matches("input") && (t.type === "number" || t.dataset.dpexploreNumber === "1")));
  const textOf = (t) => (t.matches("input") ? t.value : t.textContent) || "";
  const setText = (t, v) => { if (t.matches("input")) t.value = v; else t.textContent = v; };
  const commit = (t) => {
    const raw = textOf(t), before = t.dataset.dpexploreBefore;
    if (before === undefined || raw.trim() === before.trim()) return false;
    const wrap = t.closest(".widget-slider, .widget-text, .widget-inline-hbox");
    const label = wrap && wrap.querySelector(".widget-label");
    setText(t, before);   // the kernel sets the new value (the view then shows it)
    model.send({ type: "typed", label: label ? label.textContent : "", text: raw.slice(0, 200),
                 length: raw.length });
    return true;
  };
  const hook = () => {
    const app = el.closest(".dpexplore-app");
    if (!app) { if (hook.n++ < 300) setTimeout(hook, 100); return; }
    if (app.dataset.dpexploreTyped) return;
    app.dataset.dpexploreTyped = "1";
    // number boxes are text inputs from the moment they are drawn (changing the type on focus
    // moved the caret to the start and lost a select-all, so "7" typed over "0" became "70")
    const textify = (root) => {
      for (const t of root.querySelectorAll('input[type="number"]')) {
        t.dataset.dpexploreNumber = "1"; t.type = "text"; t.inputMode = "decimal";
      }
    };
    textify(app);
    // (a plot's redraw adds thousands of SVG nodes a step: those records are passed over)
    new MutationObserver((records) => {
      if (records.some((r) => r.addedNodes.length && r.target.namespaceURI !== "http://www.w3.org/2000/svg" &&
                              !(r.target.closest && r.target.closest(".dpexplore-plot")))) textify(app);
    }).observe(app, { childList: true, subtree: true });
    // what the control showed before this edit (after an Enter the kernel may have changed it);
    // a paste or an input method changes the text without a keydown, hence beforeinput
    const remember = (t) => { if (t.dataset.dpexploreBefore === undefined) t.dataset.dpexploreBefore = textOf(t); };
    app.addEventListener("focusin", (e) => {
      const t = e.target;
      if (!editable(t)) return;
      if (t.matches("input") && t.type === "number") textify(app);
      t.dataset.dpexploreBefore = textOf(t);
    }, true);
    app.addEventListener("beforeinput", (e) => { if (editable(e.target)) remember(e.target); }, true);
    app.addEventListener("keydown", (e) => {
      if (!editable(e.target)) return;
      remember(e.target);
      if (e.key === "Enter") {
        e.preventDefault(); e.stopPropagation();
        commit(e.target);
        delete e.target.dataset.dpexploreBefore;
      } else if (e.target.matches("input")) {
        e.stopPropagation();   // ipywidgets' number box filters keys as they are typed
      }
    }, true);
    for (const type of ["keypress", "keyup", "input", "change"]) {
      app.addEventListener(type, (e) => { if (editable(e.target) && e.target.matches("input")) e.stopPropagation(); }, true);
    }
    app.addEventListener("blur", (e) => {
      if (!editable(e.target)) return;
      commit(e.target);
      e.stopPropagation();
      delete e.target.dataset.dpexploreBefore;
    }, true);
  };
  hook.n = 0;
  hook();
  // The page's query string, sent until the kernel acknowledges it: with a preheated kernel
  // (Voila's pool) the widgets render before the kernel connection is live, and a message sent
  // then is lost.
  const q = (location.search || "").slice(0, %d);
  if (q.length > 1) {
    let acked = false;
    model.on("msg:custom", (msg) => { if (msg && msg.type === "query-ack") acked = true; });
    const send = (n) => {
      if (acked || n > 40) return;
      try { model.send({ type: "query", query: q }); } catch (e) { /* not connected yet */ }
      setTimeout(() => send(n + 1), 500);
    };
    send(0);
  }
}
export default { render };
""" % MAX_QUERY + PAGE_JS

    present = traitlets.Bool(False).tag(sync=True)
    #: the query string the page was opened with, once received (read only: set by the kernel)
    query = traitlets.Unicode("").tag(sync=True)
    state = traitlets.Dict().tag(sync=True)


def parse_number(text: str) -> float:
    """A number as a person types it: thousands separators (``12,345``, ``12 345``, ``12345``),
    scientific notation (``1e-6``, ``5E2``), a leading ``+``; ``ValueError`` otherwise.

    >>> parse_number("12,345"), parse_number(" 5e2 "), parse_number("1_234.5")
    (12345.0, 500.0, 1234.5)
    >>> parse_number("0x10")
    Traceback (most recent call last):
    ...
    ValueError: '0x10' is not a number
    """
    s = str(text).strip()
    cleaned = re.sub(r"(?<=\d)[,_ ](?=\d{3}(\D|$))", "", s)
    if not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?inf(inity)?", cleaned, re.I):
        raise ValueError(f"{_excerpt(s)!r} is not a number")
    return float(cleaned)


def _excerpt(text: str) -> str:
    text = str(text)
    return text if len(text) <= ECHO else text[:ECHO] + "…"


def _slider_bounds(w) -> tuple[float, float] | None:
    if isinstance(w, W.FloatLogSlider):
        return w.base ** w.min, w.base ** w.max
    if isinstance(w, (W.FloatSlider, W.IntSlider)):
        return w.min, w.max
    return None


def _control_value(w, raw: str):
    """The value ``raw`` (from a URL) means for control ``w``; ``ValueError`` in plain words."""
    if isinstance(w, W.Checkbox):
        low = raw.strip().lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"{_excerpt(raw)!r} is not on/off (use 1 or 0)")
    if isinstance(w, (W.Dropdown, W.RadioButtons, W.ToggleButtons)):
        for label, value in w.options if isinstance(w.options[0], tuple) else [(o, o) for o in w.options]:
            if raw == str(value) or raw == str(label):
                return value
        raise ValueError(f"{_excerpt(raw)!r} is not one of the choices")
    if isinstance(w, (W.Text, W.Textarea)):
        if len(raw) > 200:
            raise ValueError(f"{_excerpt(raw)!r} is too long")
        return raw
    bounds = _slider_bounds(w)
    if bounds is not None:
        v = parse_number(raw)
        lo, hi = bounds
        if not (lo * (1 - 1e-12) <= v <= hi * (1 + 1e-12)):
            raise ValueError(f"{v:g} is outside {lo:g} … {hi:g}")
        v = min(max(v, lo), hi)
        return int(round(v)) if isinstance(w, W.IntSlider) else v
    raise ValueError("cannot be set from the URL")


def _whole(w) -> bool:
    from .controls import IntLogSlider

    return isinstance(w, (W.IntSlider, W.IntText, W.BoundedIntText, IntLogSlider))


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if float(v).is_integer() and abs(v) < 1e15 else f"{v:.6g}"


def _short_name(w) -> str:
    """A control's description without tags or its ``[unit]``: "δ" for "δ [probability]"."""
    text = re.sub(r"<[^>]+>", "", getattr(w, "description", "") or "").strip()
    return re.sub(r"\s*\[[^\]]*\]$", "", text) or "this setting"


def typed_value(w, raw: str):
    """What a person typed into a slider's readout or a number box, read as a person means it.

    Returns ``(value, note)``: thousands separators and scientific notation are accepted
    (:func:`parse_number`); a value past the slider's end is set to that end and ``note`` says so
    in plain words (else ``note`` is ``None``). ``ValueError`` (echoing at most a short excerpt)
    when the text is not a number, or not a whole number where one is needed.

    >>> s = W.IntSlider(value=5, min=1, max=12345, description="m")
    >>> typed_value(s, "5e2"), typed_value(s, "2,500")
    ((500, None), (2500, None))
    >>> typed_value(s, "20,500")
    (12345, '20,500 is above the largest m (12,345): set to 12,345')
    >>> typed_value(W.IntText(description="seed"), "1e-400")
    Traceback (most recent call last):
    ...
    ValueError: '1e-400' is not a whole number
    """
    text = str(raw).strip()
    v = parse_number(text)
    if not math.isfinite(v):
        raise ValueError(f"{_excerpt(text)!r} is not a finite number")
    whole = _whole(w)
    exact = decimal.Decimal(re.sub(r"(?<=\d)[,_ ](?=\d{3}(\D|$))", "", text))
    if whole and exact != exact.to_integral_value():
        raise ValueError(f"{_excerpt(text)!r} is not a whole number")
    name = _short_name(w)
    note = None
    bounds = _slider_bounds(w)
    if bounds is None and isinstance(w, (W.BoundedIntText, W.BoundedFloatText)):
        bounds = (w.min, w.max)
    if bounds is not None:
        lo, hi = bounds
        if v > hi * (1 + 1e-12) if hi > 0 else v > hi:
            note = f"{_excerpt(text)} is above the largest {name} ({_fmt(hi)}): set to {_fmt(hi)}"
        elif v < lo * (1 - 1e-12) if lo > 0 else v < lo:
            note = f"{_excerpt(text)} is below the smallest {name} ({_fmt(lo)}): set to {_fmt(lo)}"
        v = min(max(v, lo), hi)
    from .controls import IntLogSlider

    if isinstance(w, IntLogSlider) and note is None:
        # the page keeps an integer log slider on its grid (it shows 501 for a typed 500 while
        # the kernel would hold 500): take the nearest position, and say so
        pos = w._position(v)
        ends = (round(w.base ** w.min), round(w.base ** w.max))  # always reachable
        if pos is not None and w._at(pos[0]) != round(v) and round(v) not in ends:
            at = w._at(pos[0])
            note = (f"{_excerpt(text)} is between two positions of the {name} slider: "
                    f"set to the nearest, {_fmt(at)}")
            v = at
    return (int(round(v)) if whole and not isinstance(w, W.FloatLogSlider) else v), note


def _state_value(w) -> str:
    v = w.value
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return repr(v) if not float(v).is_integer() or abs(v) >= 1e16 else repr(float(v))
    return str(v)


def _figure_title(fig: PlotlyWidget, i: int) -> str:
    """The figure's title, or ``meta.name`` (a figure of titled panels draws no title of its own;
    ``plot_a11y.js`` names it by the same rule), or "Plot i+1"."""
    t = fig.plot_layout.get("title")
    text = t.get("text") if isinstance(t, dict) else t
    if not text and isinstance(fig.plot_layout.get("meta"), dict):
        text = fig.plot_layout["meta"].get("name")
    text = re.sub(r"<[^>]+>", "", str(text or "")).strip()
    return text or f"Plot {i + 1}"


def figures_csv(figs: Sequence[PlotlyWidget]) -> str:
    """The plotted data of ``figs`` as CSV: one row per point (figure, trace, x, y).

    >>> f = PlotlyWidget(data=[{"name": "a", "x": [0, 1], "y": [2.0, None]}], layout={"title": {"text": "T"}})
    >>> print(figures_csv([f]).strip())
    figure,trace,x,y
    T,a,0,2.0
    T,a,1,
    """
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["figure", "trace", "x", "y"])
    for i, fig in enumerate(figs):
        title = _figure_title(fig, i)
        for j, tr in enumerate(fig.data):
            xs, ys = tr.get("x"), tr.get("y")
            if not isinstance(xs, list) or not isinstance(ys, list):
                continue
            name = tr.get("name") or f"trace {j + 1}"
            for x, y in zip(xs, ys):
                w.writerow([title, name, "" if x is None else x, "" if y is None else y])
    return out.getvalue()


class AppShell(W.VBox):
    """One app's page (see the module docstring). Build it with :func:`app_shell`.

    Attributes: ``controller`` (the app's one :class:`Controller`), ``info``, ``bar`` (the
    toolbar), ``figs`` (every plot), ``theory`` and ``code`` (the two closed sections).
    """

    def __init__(self, info: AppInfo, controller: Controller, *, controls: Sequence[W.Widget],
                 plots: Sequence[W.Widget] | Sequence[tuple[str, Sequence[W.Widget]]],
                 readouts: Sequence[W.Widget] = (), notes: Sequence[W.Widget] = (),
                 panel_width: str = "370px"):
        self.info = info
        self.controller = controller
        self.figs = list(getattr(controller, "figs", []))
        self.bar = ShellBar()
        style = W.HTML(f"<style>{SHELL_CSS}{PAGE_CSS}</style>", layout=W.Layout(display="none"))
        title = W.HTML(f'<div class="dpexplore-title"><h2>{html.escape(info.title)}</h2>'
                       f"<p>{info.lead}</p></div>", layout=W.Layout(flex="1 1 520px"))
        head = W.HBox([title, self.bar], layout=W.Layout(flex_flow="row wrap", width="100%"))
        head.add_class("dpexplore-head")

        readout_box = W.VBox(list(readouts))
        readout_box.add_class("dpexplore-readouts")
        panel = W.VBox([*controls, readout_box],
                       layout=W.Layout(flex=f"0 1 {panel_width}", min_width="280px", max_width="100%"))
        panel.add_class("dpexplore-panel")
        area = self._plot_area(plots)
        main = W.VBox([controller.message, area, *notes],
                      layout=W.Layout(flex="1 1 560px", min_width="0"))
        main.add_class("dpexplore-main")
        body = W.HBox([panel, main], layout=W.Layout(flex_flow="row wrap", width="100%"))
        body.add_class("dpexplore-body")

        keys = info.references or cited_keys(info.theory)
        refs = bibliography_html(keys) if keys else ""
        self.theory = W.Accordion(
            [W.HTMLMath(autolink(info.theory) + (f"<h4>References</h4>{refs}" if refs else ""))],
            selected_index=None)
        self.theory.set_title(0, "Theory: formulas, derivations and references")
        self._code = _SnippetHTML()
        self.code = W.Accordion([self._code], selected_index=None)
        self.code.set_title(0, "Reproduce in Python")
        super().__init__([style, head, body, self.theory, self.code], layout=W.Layout(width="100%"))
        self.add_class("dpexplore-app")
        # how many plots the page will hold: a page is complete for tests and benchmarks only
        # when all are drawn (the plot views come in one by one)
        self.add_class(f"dpexplore-nplots-{len(_plot_widgets(self))}")

        self._panel, self._panel_items = panel, [*controls, readout_box]
        self._stage = _PresentStage(area, plots) if plots and isinstance(plots[0], tuple) else None
        if self._stage is not None:
            area.observe(self._on_tab, names="selected_index")
        self.bar.observe(self._on_present, names="present")
        self.bar.on_msg(self._on_bar_msg)
        controller.on_update(self._after_update)
        self._after_update()
        track_offstage(self)  # on a page: plots of hidden tabs and the closed snippet wait

    def widgets(self):
        """Every widget on the page, depth first (tests look things up in it).

        >>> from dpexplore.apps.demo import build_demo
        >>> app = build_demo()
        >>> app.controller.readout in list(app.widgets())
        True
        """
        stack = [self]
        while stack:
            w = stack.pop()
            yield w
            stack.extend(reversed(getattr(w, "children", ()) or ()))

    # -- layout -------------------------------------------------------------------------------
    @staticmethod
    def _plot_area(plots) -> W.Widget:
        AppShell._fit_window(plots)
        if plots and isinstance(plots[0], tuple):
            tabs = W.Tab([W.VBox(list(ws)) for _, ws in plots])
            for i, (name, _) in enumerate(plots):
                tabs.set_title(i, name)
            return tabs
        plots = list(plots)
        if len(plots) <= 1:
            return W.VBox(plots)
        tabs = W.Tab([W.VBox([p]) for p in plots])
        for i, p in enumerate(plots):
            name = _figure_title(p, i) if isinstance(p, PlotlyWidget) else f"Plot {i + 1}"
            tabs.set_title(i, name.split(":")[0].strip())
        return tabs

    @staticmethod
    def _fit_window(plots) -> None:
        """A plot that is alone in the plot area or in its tab fills the window's height
        (:data:`MAIN_PLOT_HEIGHT`, or :data:`TAB_PLOT_HEIGHT` under a tab bar); plots that share
        their tab with other plots or with controls and text reach from their top to the window's
        bottom (:data:`FILL_PLOT_HEIGHT`: two plots side by side used to keep their layout
        heights and leave half of a large screen empty). A plot whose app set its ``css_height``
        keeps it."""
        tabbed = bool(plots) and (isinstance(plots[0], tuple) or len(plots) > 1)
        groups = [list(ws) for _, ws in plots] if plots and isinstance(plots[0], tuple) else [[p] for p in plots]
        for ws in groups:
            figs = [f for w in ws for f in _plot_widgets(w)]
            alone = len(figs) == 1 and len(ws) == 1 and ws[0] is figs[0]
            for f in figs:
                if not f.css_height:
                    f.css_height = (TAB_PLOT_HEIGHT if tabbed else MAIN_PLOT_HEIGHT) if alone else FILL_PLOT_HEIGHT

    # -- presentation mode ----------------------------------------------------------------------
    def _on_present(self, change) -> None:
        on = bool(change["new"])
        (self.add_class if on else self.remove_class)("dpexplore-present")
        for f in self.figs:
            f.present = on
        if self._stage is not None:
            self._stage.arrange(on)
            self._on_tab()

    def _on_tab(self, _change=None) -> None:
        """The panel holds the shell's controls and, in presentation mode, the controls and text
        of the tab shown (:class:`_PresentStage`), above the readouts."""
        extra = self._stage.panel_part() if self._stage is not None else []
        items = [*self._panel_items[:-1], *extra, self._panel_items[-1]]
        if list(self._panel.children) != items:
            self._panel.children = items

    # -- URL state ------------------------------------------------------------------------------
    def apply_query(self, query: str) -> None:
        """Set the controls from a URL query string (``?eps=0.5&k=1000``); ``present=1`` turns
        presentation mode on. Unknown names and bad values are reported in the message area (each
        with a short excerpt) and leave their controls at the default."""
        query = (query or "")[:MAX_QUERY].lstrip("?")
        if not query:
            return
        problems = []
        controls = self.controller.controls
        for name, raw in urllib.parse.parse_qsl(query, keep_blank_values=True)[:50]:
            if name == "present":
                self.bar.present = raw.strip().lower() in ("1", "true", "yes", "on")
                continue
            w = controls.get(name)
            if w is None:
                problems.append(f"{_excerpt(name)!r} is not a setting of this app")
                continue
            try:
                value = _control_value(w, raw)
            except ValueError as exc:
                problems.append(f"{name}: {exc}")
                continue
            if getattr(w, "disabled", False):
                continue
            w.value = value
        if problems:
            known = ", ".join(sorted(controls))
            self.controller.message.show(
                "; ".join(problems) + f" — the default is used (this app's settings: {known}).",
                kind="error")

    def apply_typed(self, label: str, text: str, length: int = 0) -> None:
        """A value typed into the readout of the slider (or the number box) labelled ``label``
        (the page sends it here instead of letting the widget read it: ipywidgets read "20,500"
        as 20 and "5e2" in an integer field as 5, and dropped characters from number boxes).
        Thousands separators and scientific notation are accepted; past a slider's end the value
        is set to that end with a note; anything else leaves the control as it was and says so,
        echoing at most a short excerpt."""
        c = self.controller
        w = next((w for w in c.controls.values()
                  if re.sub(r"<[^>]+>", "", getattr(w, "description", "") or "").strip() == label.strip()),
                 None)
        if w is None or getattr(w, "disabled", False):
            return
        shown = text if length <= len(text) else text + "…"
        name = _short_name(w)
        if length > len(text):  # a long paste, cut by the page: never a number
            c.message.show(f"{_excerpt(shown)!r} is not a number: {name} stays at {_fmt(w.value)}.")
            return
        try:
            value, note = typed_value(w, text)
        except ValueError as exc:
            c.message.show(f"{exc}: {name} stays at {_fmt(w.value)}.", kind="error")
            return
        if value != w.value:
            w.value = value
        if note and c.last_error is None:
            c.message.show(note + ".", kind="info")

    def link_query(self) -> str:
        """The query string of the current state (what "Link to this view" appends)."""
        return urllib.parse.urlencode(self.bar.state)

    # -- after every update: link state and the Python snippet ----------------------------------
    def _after_update(self) -> None:
        c = self.controller
        self.bar.state = {n: _state_value(w) for n, w in c.controls.items()
                          if not getattr(w, "disabled", False)}
        snippet = None
        try:
            snippet = c.snippet()
        except Exception:  # noqa: BLE001 - a snippet must never break the page
            log.exception("snippet failed for %s", self.info.slug)
        if snippet:
            self._code.value = (
                "<p>The numbers in the readouts, computed with dpexplore's public API "
                "(<code>pip install dpexplore</code>):</p><pre style=\"font-size:13px;"
                "background:#f6f8fa;padding:8px;overflow-x:auto\">"
                f"{html.escape(snippet)}</pre>")
            self.code.layout.display = None
        else:
            self.code.layout.display = "none"

    def _on_bar_msg(self, _widget, content, _buffers) -> None:
        if isinstance(content, dict) and content.get("type") == "query":
            query = str(content.get("query", ""))[:MAX_QUERY]
            if not self.bar.query:  # once per page (the front end repeats it until acknowledged)
                self.bar.query = query or "?"
                self.apply_query(query)
            self.bar.send({"type": "query-ack"})
        elif isinstance(content, dict) and content.get("type") == "typed":
            self.apply_typed(str(content.get("label", ""))[:200], str(content.get("text", ""))[:200],
                             int(content.get("length", 0) or 0))
        elif isinstance(content, dict) and content.get("type") == "csv":
            self.bar.send({"type": "csv", "name": f"{self.info.slug}.csv",
                           "text": figures_csv(self.figs)})


class _PresentStage:
    """Presentation mode for tabs that hold controls, text and several plots (two plots side by
    side under their own sliders left each plot a third of a 1280×720 projector): there the
    tab's controls and text go into the side panel (under the shell's controls, while the tab is
    shown) and the tab shows one plot at a time, the full width of the plot area, with a row of
    buttons above it to choose the plot. Normal mode keeps the app's own layout."""

    def __init__(self, tabs: W.Tab, plots: Sequence[tuple[str, Sequence[W.Widget]]]):
        self.tabs = tabs
        self.normal = [list(ws) for _, ws in plots]
        self.side, self.shown, self.choosers, self.widths, self.heights = [], [], [], {}, {}
        for ws in self.normal:
            figs = [f for w in ws for f in _plot_widgets(w)]
            self.side.append([w for w in ws if not _plot_widgets(w)])
            self.shown.append([w for w in ws if _plot_widgets(w)])
            chooser = None
            if len(figs) > 1:
                titles = [_figure_title(f, i) for i, f in enumerate(figs)]
                heads = [t.split(":")[0].strip() for t in titles]
                names = heads if len(set(heads)) == len(heads) else titles
                chooser = W.ToggleButtons(options=[(n, i) for i, n in enumerate(names)], value=0,
                                          description="Plot:", style={"button_width": "auto"})
                chooser.add_class("dpexplore-chooser")
                chooser.observe(lambda ch, figs=figs: self._show(figs, ch["new"]), names="value")
            self.choosers.append((chooser, figs))
        # one box per tab, made once (a tab switch only changes which one the panel holds)
        self.boxes = [W.VBox(side) if side else None for side in self.side]
        for b in self.boxes:
            if b is not None:
                b.add_class("dpexplore-tab-controls")
        self.on = False

    def _show(self, figs, index) -> None:
        for i, f in enumerate(figs):
            if self.on:
                self.widths.setdefault(f.model_id, f.layout.width)
                f.layout.width = "100%"
                f.layout.display = None if i == index else "none"
            else:
                f.layout.width = self.widths.get(f.model_id, f.layout.width)
                f.layout.display = None

    def arrange(self, on: bool) -> None:
        """Lay the tabs out for presentation mode (``on``) or the app's own layout."""
        if on == self.on:
            return
        self.on = on
        for box, ws, side, shown, (chooser, figs) in zip(self.tabs.children, self.normal, self.side,
                                                         self.shown, self.choosers):
            if not side and chooser is None:
                continue
            box.children = ([c for c in (chooser,) if c is not None] + shown) if on else ws
            self._show(figs, chooser.value if chooser is not None else 0)
            if side:
                self._fill(figs, on)

    def _fill(self, figs, on: bool) -> None:
        """A plot of fixed height (its app's ``css_height`` in px: in the app's layout, text that
        changes length with the sliders sits above it) fills the window's height while its tab's
        text is in the side panel (:data:`FILL_PLOT_HEIGHT`: nothing above it changes any more)."""
        for f in figs:
            if on and f.css_height.endswith("px"):
                self.heights.setdefault(f.model_id, f.css_height)
                f.css_height = FILL_PLOT_HEIGHT
            elif not on and f.model_id in self.heights:
                f.css_height = self.heights.pop(f.model_id)

    def panel_part(self) -> list[W.Widget]:
        """What the side panel holds for the tab shown (presentation mode)."""
        i = self.tabs.selected_index
        if not self.on or i is None or not (0 <= i < len(self.boxes)) or self.boxes[i] is None:
            return []
        return [self.boxes[i]]


def app_shell(info: AppInfo, controller: Controller, *, controls: Sequence[W.Widget] | Mapping,
              plots, readouts: Sequence[W.Widget] = (), notes: Sequence[W.Widget] = (),
              **kwargs) -> AppShell:
    """Build an app's page: ``controls`` (widgets, or a mapping whose values are placed in order)
    in the side panel with ``readouts`` under them; ``plots`` (figure widgets: the first is the
    main plot, further ones go into tabs; or ``[(tab title, [widgets]), …]``) beside them, the
    controller's message above; ``notes`` (small print) under the plots."""
    if isinstance(controls, Mapping):
        controls = list(controls.values())
    return AppShell(info, controller, controls=list(controls), plots=plots, readouts=readouts,
                    notes=notes, **kwargs)
