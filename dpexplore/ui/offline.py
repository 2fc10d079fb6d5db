"""A static HTML export of a notebook that draws its dashboards' plots offline.

``jupyter nbconvert --to dpexplore_html --execute app.ipynb`` writes ``app.html``: nbconvert's
"lab" page (the stored widget state included, as ``--to html --execute`` does) with every script
the widgets need INLINED, where a plain ``--to html`` page loads require.js, the widget manager,
anywidget's front end and (through PlotlyWidget) plotly.js from public CDNs and stays blank
offline. Opened from disk with no network, every plot draws (sliders are inert: there is no kernel).

Inlined, once per page (4.3 MB; the page's own widget state comes on top):

* ``static/plotly-dpexplore.min.js``, dpexplore's plotly.js bundle (1.3 MB), before anything
  else: it sets ``window.Plotly``, which PlotlyWidget's front end uses as is;
* ``static/jupyter-widgets-offline.js`` (3.0 MB, generated from pinned npm packages by
  ``tools/widgets-offline/vendor.py``, which ``make setup`` runs: it is in the wheel, not in git;
  licenses in ``static/LICENSE-jupyter-widgets-offline.txt``): require.js, anywidget's front end
  as the AMD module ``anywidget``, the @jupyter-widgets/html-manager embed bundle and Font
  Awesome's solid font (the widgets' icons) as a data: URL.

The exporter is registered with nbconvert by the entry point ``nbconvert.exporters`` (name
``dpexplore_html``); its template, ``templates/dpexplore_offline`` next to this module, extends
nbconvert's ``lab`` template. MathJax still comes from its CDN (offline, formulas stay TeX).

>>> OfflineHTMLExporter().template_name
'dpexplore_offline'
>>> sorted(inline_scripts())
['plotly_js', 'widgets_js']
"""

from __future__ import annotations

import functools
import pathlib
import re

from nbconvert.exporters import HTMLExporter
from traitlets import default

from .plotwidget import plotly_js_path, static_asset

__all__ = ["OfflineHTMLExporter", "TEMPLATES", "widgets_js_path", "inline_scripts"]

_HERE = pathlib.Path(__file__).resolve().parent
#: the folder holding the ``dpexplore_offline`` nbconvert template
TEMPLATES = _HERE / "templates"


def widgets_js_path() -> pathlib.Path:
    """require.js + anywidget + the widget manager's embed bundle, in one script.

    >>> widgets_js_path().name
    'jupyter-widgets-offline.js'
    """
    return static_asset("jupyter-widgets-offline.js")


def _inline(path: pathlib.Path) -> str:
    """A script's text, safe inside ``<script>...</script>`` (no early end tag)."""
    return re.sub(r"</(script)", r"<\\/\1", path.read_text(encoding="utf-8"), flags=re.I)


@functools.lru_cache(maxsize=1)
def inline_scripts() -> dict[str, str]:
    """The scripts the template inlines, by the name it uses."""
    return {"plotly_js": _inline(plotly_js_path()), "widgets_js": _inline(widgets_js_path())}


class OfflineHTMLExporter(HTMLExporter):
    """nbconvert's HTML exporter with the ``dpexplore_offline`` template: the widgets render from
    the stored state with no network (see the module docstring)."""

    export_from_notebook = "HTML, offline widgets (dpexplore)"

    @default("template_name")
    def _template_name_default(self) -> str:
        return "dpexplore_offline"

    @default("extra_template_basedirs")
    def _default_extra_template_basedirs(self) -> list[str]:
        return [*super()._default_extra_template_basedirs(), str(TEMPLATES)]

    def _init_resources(self, resources):
        resources = super()._init_resources(resources)
        resources["dpexplore_offline"] = inline_scripts()
        return resources

    def from_notebook_node(self, nb, resources=None, **kw):
        html, resources = super().from_notebook_node(nb, resources, **kw)  # runs --execute first
        if "application/vnd.jupyter.widget-state+json" not in html:
            self.log.warning(
                "dpexplore_html: the notebook holds no widget state, so the page "
                "shows no widgets; export with --execute (widget state is stored "
                "by default) or save the notebook with its widget state"
            )
        return html, resources
