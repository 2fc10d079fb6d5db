"""An app's current figures, for slides and papers: plotly ``Figure`` objects or one standalone
HTML file.

Every dashboard draws with :class:`~dpexplore.ui.plotwidget.PlotlyWidget`, whose ``data`` and
``plot_layout`` are plain plotly JSON. :func:`to_plotly_figures` hands them to the user as
``plotly.graph_objects.Figure`` objects (restyle, ``write_image``, combine with one's own traces);
:func:`write_html` writes them to one self-contained HTML file that opens offline (plotly.js
embedded once: dpexplore's bundle, 1.3 MB). Both take an app (what ``build_<name>()`` returns),
a controller (anything with ``figs``), a PlotlyWidget, any widget holding PlotlyWidgets, or a
list of those, and read the figures as they are now (after the user's slider moves).

The plotly Python package is needed only here and is imported on first use: ``pip install
"dpexplore[export]"`` (or ``pip install plotly``).

>>> from dpexplore.ui.plotwidget import PlotlyWidget
>>> w = PlotlyWidget(data=[{"type": "scatter", "x": [0, 1], "y": [1, 2], "name": "a"}],
...                  layout={"title": {"text": "demo"}})
>>> [f.layout.title.text for f in to_plotly_figures(w)]
['demo']
>>> to_plotly_figures(w)[0].data[0].name
'a'
"""

from __future__ import annotations

import html
import json
import pathlib
from typing import Any

from .plotwidget import PLOT_CONFIG, PlotlyWidget, plotly_js_path

__all__ = ["plotly_widgets", "to_plotly_figures", "write_html"]


def plotly_widgets(obj: Any) -> list[PlotlyWidget]:
    """Every :class:`PlotlyWidget` in ``obj`` (an app, a controller, a widget tree or a list of
    them), in page order, each once.

    >>> from dpexplore.ui.plotwidget import PlotlyWidget
    >>> import ipywidgets as W
    >>> a = PlotlyWidget(data=[{"x": [0], "y": [0]}]); b = PlotlyWidget(data=[{"x": [1], "y": [1]}])
    >>> plotly_widgets(W.VBox([a, W.HBox([b, a])])) == [a, b]
    True
    """
    out: list[PlotlyWidget] = []
    seen: set[int] = set()

    def walk(o):
        if isinstance(o, PlotlyWidget):
            if id(o) not in seen:
                seen.add(id(o))
                out.append(o)
            return
        figs = getattr(o, "figs", None)  # an app shell or a controller: its own figure order
        if figs:
            for f in figs:
                walk(f)
            return
        children = getattr(o, "children", None)
        if children is not None:
            for c in children:
                walk(c)
            return
        if isinstance(o, (list, tuple)):
            for c in o:
                walk(c)

    walk(obj)
    if not out:
        raise ValueError(
            f"obj holds no PlotlyWidget (an app, a controller with figs, a widget or "
            f"a list of them), got {type(obj).__name__}"
        )
    return out


def _plotly():
    try:
        import plotly.graph_objects as go
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError('exporting figures needs the plotly package: pip install "dpexplore[export]"') from exc
    return go


def to_plotly_figures(obj: Any) -> list:
    """The current figures of ``obj`` as ``plotly.graph_objects.Figure`` objects (copies: changing
    them does not change the app)."""
    go = _plotly()
    figs = []
    for w in plotly_widgets(obj):
        spec = json.loads(json.dumps({"data": w.data, "layout": w.plot_layout}))
        figs.append(go.Figure(spec, skip_invalid=True))
    return figs


def write_html(obj: Any, path, *, title: str = "dpexplore figures") -> pathlib.Path:
    """Write the current figures of ``obj`` to ``path``: one standalone HTML page (plotly.js
    embedded once, so it opens offline), the figures one below the other, each interactive
    (zoom, hover, PNG/SVG download). Returns the path.

    >>> import tempfile, os
    >>> from dpexplore.ui.plotwidget import PlotlyWidget
    >>> w = PlotlyWidget(data=[{"x": [0, 1], "y": [1, 2]}])
    >>> p = write_html(w, os.path.join(tempfile.mkdtemp(), "fig.html"))
    >>> text = p.read_text(encoding="utf-8")
    >>> text.count("Plotly.newPlot"), "<script src=" in text  # plotly.js is inline
    (1, False)
    """
    figs = to_plotly_figures(obj)
    parts = [f.to_html(full_html=False, include_plotlyjs=False, config=PLOT_CONFIG) for f in figs]
    js = plotly_js_path().read_text(encoding="utf-8").replace("</script", "<\\/script")
    page = (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>\n<script>{js}</script></head>\n<body>\n"
        + "\n".join(parts)
        + "\n</body></html>\n"
    )
    path = pathlib.Path(path)
    path.write_text(page, encoding="utf-8")
    return path
