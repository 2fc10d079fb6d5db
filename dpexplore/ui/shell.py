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
import pathlib
import re
import urllib.parse
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import anywidget
import ipywidgets as W
import traitlets

from ..bibliography.references import autolink, bibliography_html, cited_keys
from .a11y import _SR_ONLY, PAGE_CSS, PAGE_JS
from .controls import Controller
from .offstage import Offstage, track_offstage
from .plotwidget import REJOIN_JS, PlotlyWidget

__all__ = [
    "AppInfo",
    "AppShell",
    "ShellBar",
    "app_shell",
    "parse_number",
    "SHELL_CSS",
    "stacked_table",
    "MAIN_PLOT_HEIGHT",
    "TAB_PLOT_HEIGHT",
    "FILL_PLOT_HEIGHT",
]

log = logging.getLogger(__name__)

_HERE = pathlib.Path(__file__).resolve().parent

#: longest query string the shell reads (a hostile URL cannot make it parse megabytes)
MAX_QUERY = 2000
#: how much of a bad value a message echoes
ECHO = 40


@dataclass(frozen=True)
class AppInfo:
    """What an app is, for its page and the gallery.

    ``slug`` is the app's module name, which is its notebook's stem and its name in the gallery's
    registry ``dpexplore.apps.REGISTRY`` (``composition_explorer``); ``lead`` one or two sentences of
    plain HTML saying what the app shows; ``theory`` the formulas, derivations and citations
    (HTML with MathJax ``$…$``/``\\(…\\)``, citations made with
    :func:`dpexplore.bibliography.references.cite`); ``references`` the bibliography keys listed
    under the theory (default: every work the theory cites by its short form, e.g. "Mironov 2017";
    those citations become links).
    """

    slug: str
    title: str
    lead: str
    theory: str
    references: tuple[str, ...] = field(default_factory=tuple)


#: the shell's page CSS (``shell.css``; with :data:`dpexplore.ui.a11y.PAGE_CSS` in one hidden
#: ``<style>`` of every app page). The leading newline (and the toolbar's) keeps the page
#: byte for byte what it was when both were inline strings.
SHELL_CSS = "\n" + (_HERE / "shell.css").read_text(encoding="utf-8")
#: the toolbar's front end (``shell.js``; ``__MAX_QUERY__`` stands for :data:`MAX_QUERY`)
_SHELL_JS = "\n" + (_HERE / "shell.js").read_text(encoding="utf-8")


def stacked_table(
    columns: Sequence[str], rows: Iterable[tuple[str, Sequence]], *, cls: str = "", style: str = "", corner: str = ""
) -> str:
    """A table with a header row and a header cell on each row, whose rows are stacked in
    presentation mode (the shell's CSS, class ``dpexplore-stack``): the row's header, then each cell
    on a line of its own after its column's name. A table of four columns of long text is wider than
    the 26rem panel at 18 px, and scrolled sideways there (on a projector: cut off).

    ``columns`` are the column headers' HTML, after ``corner`` (the header of the row-header column);
    each row is its header's HTML and its cells, each the cell's HTML or a pair (HTML, attributes of
    the ``<td>``). Roles are explicit, as a ``display: block`` table loses its semantics in some
    browsers."""
    names = [html.escape(re.sub(r"<[^>]*>", "", c), quote=True) for c in columns]
    head = (
        f"<tr class='dpexplore-stack-head' role='row'><th role='columnheader' style='text-align:left'>{corner}</th>"
        + "".join(f"<th scope='col' role='columnheader'>{c}</th>" for c in columns)
        + "</tr>"
    )
    body = []
    for th, cells in rows:
        tds = []
        for i, cell in enumerate(cells):
            text, attrs = (cell, "") if isinstance(cell, str) else cell
            tds.append(f"<td role='cell' data-label='{names[i]}' {attrs}>{text}</td>")
        body.append(
            f"<tr role='row'><th scope='row' role='rowheader' style='text-align:left'>{th}</th>"
            + "".join(tds)
            + "</tr>"
        )
    return f"<table role='table' class='dpexplore-stack {cls}' style='{style}'>" + head + "".join(body) + "</table>"


SHELL_CSS += ".dpexplore-app.dpexplore-present table.dpexplore-stack tr.dpexplore-stack-head { " + _SR_ONLY + " }\n"


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

    #: ``shell.js`` (the toolbar; it reads at most MAX_QUERY characters of the query string),
    #: then the page's accessibility script (``a11y.js``) and ``rejoin.js`` (plotwidget.REJOIN_JS)
    _esm = _SHELL_JS.replace("__MAX_QUERY__", str(MAX_QUERY)) + PAGE_JS + REJOIN_JS

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
        return w.base**w.min, w.base**w.max
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
    param = getattr(w, "dpexplore_param", None)  # a number box of an app parameter (the seed)
    if param is not None:
        v = parse_number(raw)
        if param.integer:
            if not v.is_integer():
                raise ValueError(f"{_excerpt(raw)!r} is not a whole number")
            v = int(v)
        param.check(v)
        return v
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
    from .controls import IntLogSlider, LogSlider

    if isinstance(w, LogSlider) and not isinstance(w, IntLogSlider) and w.continuous_update and note is None:
        # the page puts a log slider that updates while moving on its grid and sends that
        # position back: taken here, the plots are computed once, for the value the slider ends
        # at (a test read the plots of the typed 0.5 before the grid's 0.501 replaced them)
        pos = w._position(v)
        top = math.floor((w.max - w.min) / w.step + 1e-9) if w.step else -1
        if pos is not None and 0 <= pos[0] <= top:
            v = w._at(pos[0])
    if isinstance(w, IntLogSlider) and note is None:
        # the page keeps an integer log slider on its grid (it shows 501 for a typed 500 while
        # the kernel would hold 500): take the nearest position, and say so
        pos = w._position(v)
        ends = (round(w.base**w.min), round(w.base**w.max))  # always reachable
        if pos is not None and w._at(pos[0]) != round(v) and round(v) not in ends:
            at = w._at(pos[0])
            note = f"{_excerpt(text)} is between two positions of the {name} slider: set to the nearest, {_fmt(at)}"
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

    def __init__(
        self,
        info: AppInfo,
        controller: Controller,
        *,
        controls: Sequence[W.Widget],
        plots: Sequence[W.Widget] | Sequence[tuple[str, Sequence[W.Widget]]],
        readouts: Sequence[W.Widget] = (),
        notes: Sequence[W.Widget] = (),
        panel_width: str = "370px",
    ):
        self.info = info
        self.controller = controller
        self.figs = list(getattr(controller, "figs", []))
        self.bar = ShellBar()
        style = W.HTML(f"<style>{SHELL_CSS}{PAGE_CSS}</style>", layout=W.Layout(display="none"))
        title = W.HTML(
            f'<div class="dpexplore-title"><h2>{html.escape(info.title)}</h2><p>{info.lead}</p></div>',
            layout=W.Layout(flex="1 1 520px"),
        )
        head = W.HBox([title, self.bar], layout=W.Layout(flex_flow="row wrap", width="100%"))
        head.add_class("dpexplore-head")

        readout_box = W.VBox(list(readouts))
        readout_box.add_class("dpexplore-readouts")
        panel = W.VBox(
            [*controls, readout_box], layout=W.Layout(flex=f"0 1 {panel_width}", min_width="280px", max_width="100%")
        )
        panel.add_class("dpexplore-panel")
        area = self._plot_area(plots)
        main = W.VBox([controller.message, area, *notes], layout=W.Layout(flex="1 1 560px", min_width="0"))
        main.add_class("dpexplore-main")
        body = W.HBox([panel, main], layout=W.Layout(flex_flow="row wrap", width="100%"))
        body.add_class("dpexplore-body")

        keys = info.references or cited_keys(info.theory)
        refs = bibliography_html(keys) if keys else ""
        self.theory = W.Accordion(
            [W.HTMLMath(autolink(info.theory) + (f"<h4>References</h4>{refs}" if refs else ""))], selected_index=None
        )
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
                "; ".join(problems) + f" — the default is used (this app's settings: {known}).", kind="error"
            )

    def apply_typed(self, label: str, text: str, length: int = 0) -> None:
        """A value typed into the readout of the slider (or the number box) labelled ``label``
        (the page sends it here instead of letting the widget read it: ipywidgets read "20,500"
        as 20 and "5e2" in an integer field as 5, and dropped characters from number boxes).
        Thousands separators and scientific notation are accepted; past a slider's end the value
        is set to that end with a note; anything else leaves the control as it was and says so,
        echoing at most a short excerpt."""
        c = self.controller
        w = next(
            (
                w
                for w in c.controls.values()
                if re.sub(r"<[^>]+>", "", getattr(w, "description", "") or "").strip() == label.strip()
            ),
            None,
        )
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
        self.bar.state = {n: _state_value(w) for n, w in c.controls.items() if not getattr(w, "disabled", False)}
        snippet = None
        try:
            snippet = c.snippet()
        except Exception:  # noqa: BLE001 - a snippet must never break the page
            log.exception("snippet failed for %s", self.info.slug)
        if snippet:
            self._code.value = (
                "<p>The numbers in the readouts, computed with dpexplore's public API "
                '(<code>pip install dpexplore</code>):</p><pre style="font-size:13px;'
                'background:#f6f8fa;padding:8px;overflow-x:auto">'
                f"{html.escape(snippet)}</pre>"
            )
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
            self.apply_typed(
                str(content.get("label", ""))[:200],
                str(content.get("text", ""))[:200],
                int(content.get("length", 0) or 0),
            )
        elif isinstance(content, dict) and content.get("type") == "csv":
            self.bar.send({"type": "csv", "name": f"{self.info.slug}.csv", "text": figures_csv(self.figs)})


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
                chooser = W.ToggleButtons(
                    options=[(n, i) for i, n in enumerate(names)],
                    value=0,
                    description="Plot:",
                    style={"button_width": "auto"},
                )
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
        for box, ws, side, shown, (chooser, figs) in zip(
            self.tabs.children, self.normal, self.side, self.shown, self.choosers
        ):
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


def app_shell(
    info: AppInfo,
    controller: Controller,
    *,
    controls: Sequence[W.Widget] | Mapping,
    plots,
    readouts: Sequence[W.Widget] = (),
    notes: Sequence[W.Widget] = (),
    **kwargs,
) -> AppShell:
    """Build an app's page: ``controls`` (widgets, or a mapping whose values are placed in order)
    in the side panel with ``readouts`` under them; ``plots`` (figure widgets: the first is the
    main plot, further ones go into tabs; or ``[(tab title, [widgets]), …]``) beside them, the
    controller's message above; ``notes`` (small print) under the plots."""
    if isinstance(controls, Mapping):
        controls = list(controls.values())
    return AppShell(info, controller, controls=list(controls), plots=plots, readouts=readouts, notes=notes, **kwargs)
