"""The app shell: the one page layout every dpexplore app uses.

An app module says *what it shows* — an :class:`AppInfo` (title, the question it answers, a lead
of one or two sentences, the theory), a :class:`~dpexplore.ui.controls.Controller` (controls →
compute → figures) and which figures and readouts to show — and :func:`build_app` lays it out::

    ┌ title ─────────────────────────────── [Presentation] [Link to this view] [CSV] ┐
    │ lead: one or two sentences                                                      │
    ├ controls panel ──┬ message · main plot (further plots in tabs or a grid) ──────┤
    │ sliders …        │                                                              │
    │ readouts         │                                                              │
    ├──────────────────┴──────────────────────────────────────────────────────────────┤
    │ ▸ Theory (formulas, derivations, citations)                                     │
    │ ▸ Reproduce in Python (follows every step)                                      │
    └─────────────────────────────────────────────────────────────────────────────────┘

On screens narrower than ~900 px the controls panel sits above the plots. The main plot's height
follows the window (CSS ``MAIN_PLOT_HEIGHT``), so at 1280×720 and at 1920×1080 the controls and the
main plot are on screen together without scrolling.

The browser side of the shell is one small anywidget, :class:`ShellBridge`: it reads the page's
query string (``?eps=0.5&k=1000``; Voilà preheats kernels, so the kernel cannot read it at build
time), builds the "Link to this view" URL from the current control values, switches presentation
mode (``present=1``: larger text and lines in every plot, applied by the plot widgets in the
browser) and downloads the plotted data as CSV (:func:`figures_csv`).

>>> from dpexplore.apps.demo import INFO, build_demo
>>> app = build_demo()
>>> isinstance(app, AppShell), app.info.slug
(True, 'demo')
>>> app.bridge.apply_query("eps=0.5&mu=2")
>>> app.controller.controls["eps"].value, app.controller.controls["mu"].value
(0.5, 2.0)
>>> "eps=0.5" in app.bridge.view_query and "mu=2" in app.bridge.view_query
True
>>> app = build_demo()
>>> app.bridge.apply_query("eps=abc&mu=3&colour=red")
>>> app.controller.controls["eps"].value, app.controller.controls["mu"].value
(1.0, 3.0)
>>> print(app.controller.message.text)
Link: eps = abc is not a number; the default is used; colour is not a control of this app (known: eps, mu).
"""
from __future__ import annotations

import csv
import html
import io
import math
import pathlib
import urllib.parse
from dataclasses import dataclass
from typing import Mapping, Sequence

import anywidget
import ipywidgets as W
import traitlets

from .controls import Controller
from .plotwidget import PlotlyWidget

__all__ = ["AppInfo", "AppShell", "ShellBridge", "build_app", "figures_csv", "query_string",
           "MAIN_PLOT_HEIGHT", "TAB_PLOT_HEIGHT", "TOPICS"]

_HERE = pathlib.Path(__file__).resolve().parent

#: gallery topics, in gallery order
TOPICS = ("notions and conversions", "composition", "mechanisms", "labs")

#: CSS height of the main plot: the window's height less the title, lead and page margins, at
#: least 300 px (1280×720: 470 px; 1920×1080: 760 px → 700 px)
MAIN_PLOT_HEIGHT = "clamp(300px, calc(100vh - 250px), 700px)"
#: CSS height of each plot of a tab (or grid cell) holding several plots
TAB_PLOT_HEIGHT = "clamp(260px, calc(100vh - 290px), 640px)"


@dataclass(frozen=True)
class AppInfo:
    """What an app is, for its page and the gallery.

    ``slug``: the notebook's stem (``demo`` → ``demo.ipynb``); ``title``: the page title;
    ``question``: the one-line question the app answers (gallery card); ``lead``: one or two
    sentences (HTML) under the title; ``topic``: one of :data:`TOPICS`; ``theory``: HTML with
    MathJax (``$…$``, ``$$…$$``) — formulas, derivations and citations, shown in the closed
    "Theory" section.
    """

    slug: str
    title: str
    question: str
    lead: str
    topic: str
    theory: str = ""

    def __post_init__(self):
        if self.topic not in TOPICS:
            raise ValueError(f"topic must be one of {TOPICS}, got {self.topic!r}")

    @property
    def notebook(self) -> str:
        return f"{self.slug}.ipynb"


# -- query strings ---------------------------------------------------------------------------
def _format_value(v) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        return f"{v:.12g}"
    return str(v)


def _control_value(w) -> object:
    """The value a control shows, as a URL value (a Dropdown's option label when it has one)."""
    v = w.value
    labels = getattr(w, "_options_labels", None)
    values = getattr(w, "_options_values", None)
    if labels is not None and values is not None:
        for lab, val in zip(labels, values):
            if val == v:
                return lab
    return v


def query_string(controls: Mapping[str, W.ValueWidget]) -> str:
    """The current values of ``controls`` as a URL query string (without ``?``), in order.

    >>> from dpexplore.ui.controls import log_slider
    >>> query_string({"eps": log_slider("ε", 0.5, 0.01, 10), "k": W.IntSlider(3)})
    'eps=0.5&k=3'
    """
    return urllib.parse.urlencode([(k, _format_value(_control_value(w))) for k, w in controls.items()],
                                  safe=",")


def _parse_for(w, raw: str):
    """``raw`` (a URL value) as a value of control ``w``; ValueError in plain words if it is not."""
    labels = getattr(w, "_options_labels", None)
    if labels is not None:
        values = list(getattr(w, "_options_values", labels))
        for lab, val in zip(labels, values):
            if raw == lab or raw == str(val):
                return val
        low = raw.strip().lower()
        for lab, val in zip(labels, values):
            if low == str(lab).lower() or low == str(val).lower():
                return val
        raise ValueError(f"is not one of {', '.join(map(str, labels))}")
    if isinstance(w, (W.Checkbox, W.ToggleButton)):
        low = raw.strip().lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise ValueError("is not 0 or 1")
    if isinstance(w.value, (int, float)) and not isinstance(w.value, bool):
        try:
            x = float(raw.replace(",", "").replace("_", "").strip())
        except ValueError:
            raise ValueError("is not a number") from None
        if not math.isfinite(x):
            raise ValueError("is not a finite number")
        if isinstance(w, W.FloatLogSlider):
            lo, hi = w.base ** w.min, w.base ** w.max
        else:
            lo, hi = getattr(w, "min", None), getattr(w, "max", None)
        if lo is not None and hi is not None and not (lo * (1 - 1e-12) <= x <= hi * (1 + 1e-12)):
            raise ValueError(f"is outside [{lo:.6g}, {hi:.6g}]")
        if isinstance(w.value, int):
            if not x.is_integer():
                raise ValueError("is not a whole number")
            return int(x)
        return min(max(x, lo), hi) if lo is not None and hi is not None else x
    return raw


# -- CSV -------------------------------------------------------------------------------------
def _title(fig: PlotlyWidget, i: int) -> str:
    t = fig.plot_layout.get("title")
    text = t.get("text") if isinstance(t, Mapping) else t
    return str(text) if text else f"plot {i + 1}"


def figures_csv(figs: Sequence[PlotlyWidget]) -> str:
    """The plotted data of ``figs`` as one long CSV: plot, trace, point, x, y (and z for heatmaps
    and contours, one row per cell). Gaps (None) stay empty cells.

    >>> f = PlotlyWidget(data=[{"name": "a", "x": [1, 2], "y": [3.0, None]}], layout={"title": {"text": "T"}})
    >>> print(figures_csv([f]).strip())
    plot,trace,point,x,y,z
    T,a,0,1,3.0,
    T,a,1,2,,
    """
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["plot", "trace", "point", "x", "y", "z"])
    for i, fig in enumerate(figs):
        title = _title(fig, i)
        for j, t in enumerate(fig.data):
            name = t.get("name") or f"trace {j + 1}"
            x, y, z = t.get("x"), t.get("y"), t.get("z")
            if z is not None and isinstance(z, list) and z and isinstance(z[0], list):
                for r, row in enumerate(z):
                    for c, val in enumerate(row):
                        xv = x[c] if isinstance(x, list) and c < len(x) else c
                        yv = y[r] if isinstance(y, list) and r < len(y) else r
                        w.writerow([title, name, f"{r},{c}", xv, yv, "" if val is None else val])
                continue
            n = max(len(x) if isinstance(x, list) else 0, len(y) if isinstance(y, list) else 0)
            for p in range(n):
                xv = x[p] if isinstance(x, list) and p < len(x) else ""
                yv = y[p] if isinstance(y, list) and p < len(y) else ""
                w.writerow([title, name, p, "" if xv is None else xv, "" if yv is None else yv, ""])
    return out.getvalue()


# -- the browser side ------------------------------------------------------------------------
class ShellBridge(anywidget.AnyWidget):
    """The shell's toolbar and its link to the page: query string in, link out, presentation
    mode, CSV download (see the module docstring). ``query`` is what the page's URL asked for
    (set once by the browser); ``view_query`` the current state as a query string."""

    _esm = (_HERE / "shell.js").read_text(encoding="utf-8")
    _css = (_HERE / "shell.css").read_text(encoding="utf-8")

    query = traitlets.Unicode("").tag(sync=True)
    view_query = traitlets.Unicode("").tag(sync=True)
    present = traitlets.Bool(False).tag(sync=True)
    slug = traitlets.Unicode("").tag(sync=True)

    def __init__(self, controller: Controller, figs: Sequence[PlotlyWidget], slug: str = "", **kwargs):
        super().__init__(slug=slug, **kwargs)
        self._controller = controller
        self._figs = list(figs)
        self.view_query = query_string(controller.controls)
        self.on_msg(self._on_custom)

    @traitlets.observe("query")
    def _on_query(self, change) -> None:
        self.apply_query(change["new"])

    def refresh(self) -> None:
        """The current state → ``view_query`` (after each step)."""
        self.view_query = query_string(self._controller.controls)

    def apply_query(self, query: str) -> None:
        """Set the controls named in ``query`` (``eps=0.5&k=1000``, with or without ``?``); a bad
        or unknown value leaves that control at its default and shows the inline message."""
        pairs = urllib.parse.parse_qsl(query.lstrip("?"), keep_blank_values=True)
        controls = self._controller.controls
        values, problems = {}, []
        for key, raw in pairs:
            if key in ("present",):
                continue
            if key not in controls:
                if key.startswith("voila") or key in ("token",):
                    continue
                problems.append(f"{key} is not a control of this app (known: {', '.join(controls)})")
                continue
            try:
                values[key] = _parse_for(controls[key], raw)
            except ValueError as exc:
                problems.append(f"{key} = {raw} {exc}; the default is used")
        if values:
            self._controller.set_values(values)
        if problems:
            self._controller.message.show("Link: " + "; ".join(problems) + ".", kind="error")
        self.refresh()

    def _on_custom(self, _widget, content, _buffers) -> None:
        if isinstance(content, dict) and content.get("type") == "dpexplore:csv":
            data = figures_csv(self._figs).encode("utf-8")
            self.send({"type": "dpexplore:csv", "name": f"{self.slug or 'dpexplore'}.csv"}, buffers=[data])


# -- the page ---------------------------------------------------------------------------------
def _as_list(x) -> list:
    if x is None:
        return []
    if isinstance(x, W.Widget):
        return [x]
    return list(x)


def _plot_box(widgets: Sequence[W.Widget], height: str, grid: bool) -> W.Box:
    for w in widgets:
        if isinstance(w, PlotlyWidget) and not w.css_height:
            w.css_height = height
    if grid and len(widgets) > 1:
        box = W.GridBox(list(widgets))
        box.add_class("dpx-grid")
        return box
    box = W.VBox(list(widgets))
    box.add_class("dpx-stack")
    return box


class AppShell(W.VBox):
    """The page of one app (an ipywidgets ``VBox``: display it). Attributes: ``info``,
    ``controller``, ``bridge`` (:class:`ShellBridge`), ``figs`` (every plot, main first),
    ``snippet_box`` (the "Reproduce in Python" HTML, or None)."""

    def __init__(self, info: AppInfo, controller: Controller, plots, readouts=None, controls=None,
                 extra=None, grid: bool = False):
        self.info = info
        self.controller = controller
        if isinstance(plots, Mapping):
            tabs = {str(k): _as_list(v) for k, v in plots.items()}
        else:
            plots = _as_list(plots)
            tabs = {"": plots} if len(plots) <= 1 or grid else {_tab_name(p, i): [p] for i, p in enumerate(plots)}
        if not tabs or not any(tabs.values()):
            raise ValueError(f"plots must hold at least one widget, got {plots!r}")
        figs = [w for ws in tabs.values() for w in ws if isinstance(w, PlotlyWidget)]
        self.figs = figs
        if figs:
            figs[0].add_class("dpx-main-plot")
        single = len(tabs) == 1
        height = MAIN_PLOT_HEIGHT if single and len(next(iter(tabs.values()))) == 1 else TAB_PLOT_HEIGHT
        boxes = [_plot_box(ws, height, grid) for ws in tabs.values()]
        if single:
            plots_area = boxes[0]
        else:
            plots_area = W.Tab(boxes, titles=tuple(tabs))
            plots_area.add_class("dpx-tabs")

        self.bridge = ShellBridge(controller, figs, slug=info.slug)
        self.bridge.add_class("dpx-toolbar")
        head = W.HTML(f'<h2 class="dpx-title">{html.escape(info.title)}</h2>')
        head.add_class("dpx-title-box")
        header = W.HBox([head, self.bridge])
        header.add_class("dpx-header")
        lead = W.HTMLMath(f'<div class="dpx-lead-text">{info.lead}</div>')
        lead.add_class("dpx-lead")

        ctrl_widgets = _as_list(controls) if controls is not None else list(controller.controls.values())
        readout_widgets = _as_list(readouts)
        for r in readout_widgets:
            r.add_class("dpx-readout")
        panel_children = list(ctrl_widgets)
        if readout_widgets:
            rbox = W.VBox(readout_widgets)
            rbox.add_class("dpx-readouts")
            panel_children.append(rbox)
        panel_children += _as_list(extra)
        panel = W.VBox(panel_children)
        panel.add_class("dpx-panel")
        main = W.VBox([controller.message, plots_area])
        main.add_class("dpx-main")
        body = W.HBox([panel, main])
        body.add_class("dpx-body")

        sections = []
        if info.theory:
            theory = W.HTMLMath(f'<div class="dpx-theory-text">{info.theory}</div>')
            acc = W.Accordion([theory], titles=("Theory",), selected_index=None)
            acc.add_class("dpx-theory")
            sections.append(acc)
        self.snippet_box = None
        if controller.snippet() is not None:
            self.snippet_box = W.HTML()
            acc = W.Accordion([self.snippet_box], titles=("Reproduce in Python",), selected_index=None)
            acc.add_class("dpx-snippet")
            sections.append(acc)
        self._refresh_snippet()
        controller.on_update(self._after_step)
        super().__init__([header, lead, body, *sections])
        self.add_class("dpx-shell")
        self.add_class(f"dpx-app-{info.slug}")

    def _refresh_snippet(self) -> None:
        if self.snippet_box is None:
            return
        code = self.controller.snippet()
        self.snippet_box.value = (
            '<pre class="dpx-code"><code>' + html.escape(code or "") + "</code></pre>")

    def _after_step(self) -> None:
        self.bridge.refresh()
        self._refresh_snippet()


def _tab_name(fig, i: int) -> str:
    if isinstance(fig, PlotlyWidget):
        return _title(fig, i)
    return f"plot {i + 1}"


def build_app(info: AppInfo, controller: Controller, plots=None, readouts=None, *, controls=None,
              extra=None, grid: bool = False) -> AppShell:
    """The page of one app.

    ``plots``: the figures (default ``controller.figs``): one widget (the main plot), a list
    (first = main; the others in tabs titled by their plot titles, or all in one grid with
    ``grid=True``) or a mapping ``{tab title: widget or list of widgets}`` (first tab = main);
    ``readouts``: widgets shown under the controls, beside the plots; ``controls``: the widgets of
    the controls panel (default: ``controller.controls`` in order; give it to group or add labels);
    ``extra``: further widgets at the end of the panel (buttons, notes).
    """
    return AppShell(info, controller, controller.figs if plots is None else plots, readouts,
                    controls, extra, grid)
