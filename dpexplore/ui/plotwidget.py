"""A light Plotly widget for the dashboards (an anywidget, not plotly's ``FigureWidget``).

Why not ``plotly.graph_objects.FigureWidget``: with plotly ≥ 6 each FigureWidget ships ~5 MB of
JavaScript over the kernel websocket, so a three-figure Voilà page took 7–13 s to its first plot,
and a FigureWidget created empty and filled before display renders empty under Voilà.

:class:`PlotlyWidget` syncs three plain JSON traits — ``data`` (a list of trace dicts),
``plot_layout`` and ``config`` — and its front end (``plotwidget.js``) loads plotly.js **once per
page** over plain HTTP from ``<base_url>/dpexplore/static/plotly.min.js`` (served, with browser
caching, by ``dpexplore serve`` and by the ``dpexplore.voila`` Jupyter server extension). The file
is ``static/plotly-dpexplore.min.js``: plotly.js built with only the trace types of
:data:`TRACE_TYPES` (``tools/plotly-bundle``), 1.3 MB that Chromium evaluates in 0.15–0.25 s, where
plotly's full 4.8 MB bundle took 1.3–1.6 s of main-thread time on every page load. A trace of
another type is refused when it is set (it would not draw). Where that URL does not exist (a plain
JupyterLab without the extension), the front end asks the kernel for the script once through a
custom widget message and evaluates it — slower (1.3 MB over the websocket, once per page) but it
works everywhere. Then ``Plotly.newPlot`` draws, and ``Plotly.react`` redraws in place on every
change of a trait.

What goes over the wire is kept small: numpy arrays become lists of floats, NaN/±inf become
``None`` (valid JSON; plotly draws a gap), and assigning equal values sends nothing.

>>> w = PlotlyWidget(data=[{"x": [0, 1], "y": [1.0, float("nan")]}], layout={"title": {"text": "t"}})
>>> w.data[0]["y"]
[1.0, None]
>>> w.update_traces(0, y=np.array([2.0, 3.0]))
>>> w.data[0]["y"]
[2.0, 3.0]
>>> w.update_layout(yaxis={"type": "log"})
>>> w.plot_layout["yaxis"], w.plot_layout["title"]
({'type': 'log'}, {'text': 't'})
"""

from __future__ import annotations

import contextlib
import json
import math
import pathlib
from typing import Any, ClassVar, Iterable, Mapping

import anywidget
import numpy as np
import traitlets

from .a11y import PLOT_CSS, PLOT_JS
from .assets import (
    PLOTLY_STATIC_PATH,
    MissingAssetError,
    plotly_js_path,  # noqa: F401 -- public here too
    plotly_js_version,
    static_asset,
)
from .assets import plotly_version_key as _plotly_version
from .offstage import Offstage

__all__ = [
    "PlotlyWidget",
    "to_json",
    "traces_to_wire",
    "traces_from_wire",
    "saved_plot_states",
    "WIRE_F64",
    "plotly_js_path",
    "plotly_js_version",
    "PLOTLY_STATIC_PATH",
    "TRACE_TYPES",
    "tell_apart",
    "DASHES",
    "SYMBOLS",
    "PATTERNS",
    "MissingAssetError",
    "static_asset",
]

_HERE = pathlib.Path(__file__).resolve().parent

#: appended to the ESM of each dpexplore anywidget: ``dpexploreRejoin(model)``, which render calls
#: first (anywidget stops passing the kernel's messages to a model whose script was not loaded
#: within 2 s of its creation; this passes them again and asks for the state anew)
REJOIN_JS = (_HERE / "rejoin.js").read_text(encoding="utf-8")


#: the plotly trace types in the served bundle (``tools/plotly-bundle/entry.js``: plotly.js core,
#: which holds ``scatter``, plus ``bar``, ``heatmap`` and ``contour``)
TRACE_TYPES = frozenset({"scatter", "bar", "heatmap", "contour"})


def to_json(value: Any) -> Any:
    """``value`` made JSON-safe and small: arrays → lists, NaN/±inf → ``None``, numpy scalars →
    Python numbers, recursively through dicts, lists and tuples.

    Plain Python floats, ints, strings, lists and dicts take a fast path (exact type checks: an
    ``isinstance(x, Mapping)`` per float was most of the kernel's time on a slider step).

    >>> to_json({"y": np.array([1.0, np.inf, np.nan]), "n": np.int64(3)})
    {'y': [1.0, None, None], 'n': 3}
    >>> to_json([1.5, float("-inf"), (2, "a"), True, None])
    [1.5, None, [2, 'a'], True, None]
    """
    t = type(value)
    if t is float:
        return value if math.isfinite(value) else None
    if t is int or t is str or t is bool or value is None:
        return value
    if t is list or t is tuple:
        return [to_json(v) for v in value]
    if t is dict:
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            arr = np.asarray(value, dtype=np.float64)
            if arr.ndim != 1:
                return [to_json(row) for row in arr]
            if np.isfinite(arr).all():
                return arr.tolist()
            return [x if math.isfinite(x) else None for x in arr.tolist()]
        return to_json(value.tolist())
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return f if math.isfinite(f) else None
    return value


#: key of a number array sent as raw float64 bytes (:func:`traces_to_wire`)
WIRE_F64 = "dpexplore_f64"
#: shorter number lists stay JSON (a buffer costs a path and an offset in the message)
_WIRE_MIN_LEN = 16
_NUMBER_TYPES = frozenset({float, int, type(None)})


def traces_to_wire(data: list, _widget=None) -> list:
    """The ``data`` trait as sent to the front end: every list of ≥ 16 plain numbers (float,
    int, ``None``) that is a value of a trace, or of a dict in one (``marker``…), becomes
    ``{"dpexplore_f64": <its float64 bytes>}`` (``None`` → NaN; a list of such lists, a heatmap's
    ``z``, row by row), which ipywidgets sends as a
    binary buffer; ``plotwidget.js`` turns it back into the same numbers (NaN → ``null``, a gap).

    On a slider step the kernel then neither writes ~17 characters per number as JSON nor walks
    the list element by element looking for buffers, and the server relays bytes instead of
    parsing and re-writing ~100 kB of JSON: with 30 sessions on 2 cores, that CPU is what the
    moves wait for. The numbers are exact (float64 both ways; ints up to 2^53, as in JSON).
    Lists holding anything else (strings of a category axis, booleans, nested lists) stay JSON.

    >>> w = traces_to_wire([{"x": list(range(16)), "y": [0.5] * 15 + [None], "name": "a"}])
    >>> np.frombuffer(w[0]["y"][WIRE_F64], dtype="<f8")[-2:], w[0]["name"]
    (array([0.5, nan]), 'a')
    >>> traces_from_wire(w)[0]["y"][-2:], traces_from_wire(w)[0]["x"][:3]
    ([0.5, None], [0.0, 1.0, 2.0])
    """

    def pack(v):
        if type(v) is list and len(v) >= _WIRE_MIN_LEN and set(map(type, v)) <= _NUMBER_TYPES:
            return {WIRE_F64: memoryview(np.array(v, dtype="<f8"))}
        if type(v) is dict:
            return {k: pack(x) for k, x in v.items()}
        if type(v) is list and v and all(type(r) is list for r in v):  # rows: a heatmap's z
            return [pack(r) for r in v]
        return v

    return [{k: pack(v) for k, v in t.items()} for t in data]


def traces_from_wire(data: list, _widget=None) -> list:
    """Inverse of :func:`traces_to_wire` (NaN → ``None``): what a front end sends back for
    ``data`` becomes plain lists again before validation."""

    def unpack(v):
        if type(v) is dict:
            if set(v) == {WIRE_F64}:
                return to_json(np.frombuffer(bytes(v[WIRE_F64]), dtype="<f8"))
            return {k: unpack(x) for k, x in v.items()}
        if type(v) is list:
            return [unpack(x) for x in v]
        return v

    return [{k: unpack(v) for k, v in t.items()} if isinstance(t, dict) else t for t in data]


def saved_plot_states(notebook) -> list[dict]:
    """The states of the plot widgets saved in a notebook's metadata (nbformat's widget state, as
    JupyterLab or nbclient's ``store_widget_state`` write it), with their traces as plain lists:
    the float64 buffers (:func:`traces_to_wire`), saved apart as base64, are put back and decoded.

    >>> saved_plot_states({"metadata": {}})
    []
    """
    import base64

    meta = notebook["metadata"] if isinstance(notebook, Mapping) else notebook.metadata
    saved = meta.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    out = []
    for model in saved.get("state", {}).values():
        state = model.get("state", {})
        if "_plotly_path" not in state:
            continue
        state = json.loads(json.dumps(state))  # a copy in plain JSON types
        for buf in model.get("buffers", []):
            *head, last = buf["path"]
            node = state
            for key in head:
                node = node[key]
            node[last] = base64.b64decode(buf["data"])
        state["data"] = traces_from_wire(state.get("data", []))
        out.append(state)
    return out


#: what tells curves of different colours apart without colour (a greyscale projector, a
#: colour-blind reader: Okabe & Ito 2008 advise redundant coding): dash patterns of lines, symbols
#: of markers, fill patterns of bars, each handed out in this order
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "star", "triangle-down")
PATTERNS = ("", "/", "x", ".", "\\", "+", "-", "|")


def _colour_key(trace: Mapping, i: int):
    """What colour ``trace`` draws in: its line's or marker's colour, or (no colour given, or one
    colour per point) its own index, for plotly gives such a trace a colour of its own."""
    for part in ("line", "marker"):
        c = (trace.get(part) or {}).get("color")
        if isinstance(c, str):
            return c.lower()
    return i


def _style_kind(trace: Mapping) -> tuple[str, ...]:
    """Which of a trace's styles :func:`tell_apart` hands out: ``dash`` (lines), ``symbol``
    (markers), ``pattern`` (bars); none for heatmaps and contours."""
    kind = trace.get("type", "scatter")
    if kind == "bar":
        return ("pattern",)
    if kind != "scatter":
        return ()
    mode = trace.get("mode") or "lines"
    return (("dash",) if "lines" in mode else ()) + (("symbol",) if "markers" in mode else ())


def tell_apart(traces: list) -> list:
    """``traces`` with a dash pattern, marker symbol or bar pattern on each trace that sets none,
    so that curves of different colours differ in more than colour.

    Each style is handed out per colour, in trace order, skipping those the figure's traces set
    themselves: the first colour's lines stay solid, the next are dashed, dotted, …
    (:data:`DASHES`); markers get :data:`SYMBOLS`, bars :data:`PATTERNS`. Traces of one colour
    share a style (one curve drawn in pieces); a style an app sets is kept (its meaning may need
    it). The result depends only on the traces' colours and order, so a curve keeps its dash from
    one slider step to the next. Traces are copied where changed, never modified in place.

    >>> t = tell_apart([{"x": [0], "y": [0], "line": {"color": "#0072B2"}},
    ...                 {"x": [0], "y": [1], "line": {"color": "#E69F00", "width": 2}},
    ...                 {"x": [0], "y": [2], "line": {"color": "#009E73", "dash": "dash"}},
    ...                 {"mode": "markers", "x": [0], "y": [3], "marker": {"color": "#0072B2"}}])
    >>> [(d.get("line") or {}).get("dash") for d in t], t[3]["marker"]["symbol"]
    (['solid', 'dot', 'dash', None], 'circle')
    """
    given = {"dash": set(), "symbol": set(), "pattern": set()}
    kinds = [_style_kind(t) for t in traces]
    for t, ks in zip(traces, kinds):
        if "dash" in ks and (t.get("line") or {}).get("dash"):
            given["dash"].add(t["line"]["dash"])
        if "symbol" in ks and isinstance((t.get("marker") or {}).get("symbol"), str):
            given["symbol"].add(t["marker"]["symbol"])
        if "pattern" in ks and ((t.get("marker") or {}).get("pattern") or {}).get("shape"):
            given["pattern"].add(t["marker"]["pattern"]["shape"])
    order = {"dash": DASHES, "symbol": SYMBOLS, "pattern": PATTERNS}
    chosen: dict = {"dash": {}, "symbol": {}, "pattern": {}}
    out = []
    for i, (t, ks) in enumerate(zip(traces, kinds)):
        key = _colour_key(t, i)
        for style in ks:
            part, attr = ("line", "dash") if style == "dash" else ("marker", style)
            have = (
                (t.get(part) or {}).get(attr)
                if style != "pattern"
                else ((t.get("marker") or {}).get("pattern") or {}).get("shape")
            )
            if have is not None:
                continue
            if key not in chosen[style]:
                free = [v for v in order[style] if v not in given[style]]
                pick = free[0] if free else order[style][len(chosen[style]) % len(order[style])]
                chosen[style][key] = pick
                given[style].add(pick)
            pick = chosen[style][key]
            t = dict(t)
            if style == "pattern":
                t["marker"] = {**(t.get("marker") or {}), "pattern": {"shape": pick}}
            else:
                t[part] = {**(t.get(part) or {}), attr: pick}
        out.append(t)
    return out


def _merge(base: Mapping, update: Mapping) -> dict:
    """Deep merge of two layout dicts (``update`` wins; nested dicts are merged, not replaced)."""
    out = dict(base)
    for k, v in update.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def __getattr__(name: str):
    if name == "_PLOTLY_VERSION":  # the module constant it was (read on first use)
        return _plotly_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: the plot configuration every dpexplore figure gets (widget and HTML export): plotly.js 4 shows a
#: "Share chart..." button (``showSendToCloud``, on by default) that uploads the figure's data to
#: Plotly Cloud. Nothing on a course server should send a student's data to another site, and a
#: button that leaves the page is one more Tab stop in every plot's toolbar: off
PLOT_CONFIG = {"displaylogo": False, "showSendToCloud": False}
_DEFAULT_CONFIG = {**PLOT_CONFIG, "responsive": False}  # the front end follows the div (ResizeObserver)
_DEFAULT_LAYOUT = {
    "height": 380,
    "margin": {"l": 60, "r": 20, "t": 40, "b": 50},
    # Every axis (x, x2, ..., y, y2, ...) draws its tick labels with ticklabeloverflow "allow".
    # plotly.js's default, "hide past div", measures every tick label's box once per label drawn
    # (quadratic in the number of labels): 35-45 % of each Plotly.react on a slider step here
    # (measured on the Rényi DP and composition figures in headless Chromium).
    "template": {"layout": {"xaxis": {"ticklabeloverflow": "allow"}, "yaxis": {"ticklabeloverflow": "allow"}}},
}


class PlotlyWidget(Offstage, anywidget.AnyWidget):
    """A Plotly figure as a small widget: construct it WITH its traces, then change them in place.

    ``data`` is a list of plotly trace dicts, ``plot_layout`` and ``config`` plotly dicts (the
    constructor's ``layout`` argument is the plotly layout; the trait is named ``plot_layout``
    because ``layout`` is ipywidgets' DOM layout, passed here as ``widget_layout``). Change them by
    ``update(data=..., layout=...)``, ``update_traces(i, **props)``, ``update_layout(**props)`` or
    by assigning ``data``; group several changes into one message with ``with w.batch_update():``.
    Traces are stored in the widget state, so a saved notebook (``store_widget_state=True``)
    contains them. On a served page, a plot in a tab not shown sends its changes when its tab is
    opened (:mod:`dpexplore.ui.offstage`).

    >>> w = PlotlyWidget(data=[{"type": "scatter", "x": [1, 2], "y": [3, 4]}])
    >>> with w.batch_update():
    ...     w.update_traces(0, y=[5, 6])
    ...     w.update_layout(title={"text": "demo"})
    >>> w.data[0]["y"], w.plot_layout["title"]["text"]
    ([5, 6], 'demo')
    """

    #: ``plotwidget.js``, the plot's accessibility script (``plot_a11y.js``) and ``rejoin.js``
    #: (a model anywidget gave up on under load receives the kernel's messages again)
    _esm = (_HERE / "plotwidget.js").read_text(encoding="utf-8") + PLOT_JS + REJOIN_JS
    _css = ".dpexplore-plot { width: 100%; min-height: 120px; }" + PLOT_CSS
    #: sent at once from a closed tab too: the front end then draws the plot in the page's mode
    #: and height as soon as its tab is opened, not first in the previous ones (Offstage)
    always_sent = frozenset({"present", "css_height"})

    #: the traces, plain JSON lists in Python; numeric lists go over the wire as float64
    #: buffers (:func:`traces_to_wire`)
    data = traitlets.List(trait=traitlets.Dict()).tag(sync=True, to_json=traces_to_wire, from_json=traces_from_wire)
    #: the plotly layout (``layout`` itself is ipywidgets' DOM layout of the widget)
    plot_layout = traitlets.Dict().tag(sync=True)
    config = traitlets.Dict().tag(sync=True)
    #: presentation mode (set by the app shell): larger text and thicker lines, drawn by the front
    #: end from the same data (nothing is recomputed)
    present = traitlets.Bool(False).tag(sync=True)
    #: CSS height of the plot's div (the app shell sets ``"clamp(300px, calc(100vh - 250px),
    #: 720px)"`` on a main plot: it fits the window); the plot is drawn at the div's height.
    #: "" = the layout's ``height``.
    css_height = traitlets.Unicode("").tag(sync=True)
    _plotly_path = traitlets.Unicode().tag(sync=True)

    @traitlets.default("_plotly_path")
    def _default_plotly_path(self) -> str:
        return f"{PLOTLY_STATIC_PATH}?v={_plotly_version()}"

    def __init__(
        self,
        data: Iterable[Mapping],
        layout: Mapping | None = None,
        config: Mapping | None = None,
        *,
        widget_layout=None,
        **kwargs,
    ):
        data = to_json(list(data))
        if not data:
            raise ValueError(
                f"data must hold at least one trace (an empty figure renders empty under Voila), got {data!r}"
            )
        super().__init__(
            data=data,
            plot_layout=to_json(_merge(_DEFAULT_LAYOUT, layout or {})),
            config=to_json(_merge(_DEFAULT_CONFIG, config or {})),
            **({"layout": widget_layout} if widget_layout is not None else {}),
            **kwargs,
        )
        self.on_msg(self._on_custom_msg)

    @traitlets.validate("data")
    def _check_trace_types(self, proposal):
        for i, trace in enumerate(proposal["value"]):
            kind = trace.get("type", "scatter")
            if kind not in TRACE_TYPES:
                raise ValueError(
                    f"data[{i}]: trace type {kind!r} is not in the served plotly.js "
                    f"bundle (TRACE_TYPES: {sorted(TRACE_TYPES)}); add it in "
                    f"tools/plotly-bundle/entry.js and rebuild"
                )
        return tell_apart(proposal["value"])

    # -- Python API -------------------------------------------------------------------------
    @contextlib.contextmanager
    def batch_update(self):
        """Send all trait changes made inside the block as one message."""
        with self.hold_sync():
            yield self

    def update(self, data: Iterable[Mapping] | None = None, layout: Mapping | None = None) -> None:
        """Replace the traces (if given) and deep-merge ``layout`` (if given), in one message."""
        with self.hold_sync():
            if data is not None:
                new = to_json(list(data))
                if not new:
                    raise ValueError(f"data must hold at least one trace, got {new!r}")
                self.data = new
            if layout:
                self.plot_layout = _merge(self.plot_layout, to_json(layout))

    def update_traces(self, index: int | None = None, **props) -> None:
        """Set ``props`` on trace ``index`` (all traces if ``None``); arrays are converted."""
        props = to_json(props)
        new = [dict(t) for t in self.data]
        targets = range(len(new)) if index is None else [index]
        for i in targets:
            new[i].update(props)
        self.data = new

    def update_layout(self, layout: Mapping | None = None, **props) -> None:
        """Deep-merge ``layout`` and ``props`` into the layout."""
        self.plot_layout = _merge(self.plot_layout, to_json({**(layout or {}), **props}))

    # -- fallback: serve plotly.js through the kernel --------------------------------------
    #: the bundle has been sent through this kernel (once per kernel: a page loads plotly.js once)
    _plotly_sent: ClassVar[bool] = False

    def _on_custom_msg(self, _widget, content, _buffers) -> None:
        """The fallback for a front end without the HTTP route: plotly.js through the kernel, at
        most once per kernel. A client that asks again (each request is answered with 1.3 MB) is
        told no: one page cannot make the kernel queue megabytes per message it sends."""
        if isinstance(content, dict) and content.get("type") == "dpexplore:need-plotly":
            if PlotlyWidget._plotly_sent:
                self.send({"type": "dpexplore:plotly-js", "error": "already sent to this page"})
                return
            PlotlyWidget._plotly_sent = True
            self.send({"type": "dpexplore:plotly-js"}, buffers=[plotly_js_path().read_bytes()])
