"""The offline static HTML export (``jupyter nbconvert --to dpexplore_html``, dpexplore.ui.offline)
as HTML text; ``tests/browser/test_install_browser.py`` opens it from disk with the network off."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import nbformat
import pytest

from dpexplore.ui import offline
from dpexplore.ui.plotwidget import plotly_js_path

STATE = "application/vnd.jupyter.widget-state+json"


def _notebook(with_widgets: bool):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# An app")])
    if with_widgets:
        nb.metadata["widgets"] = {STATE: {"version_major": 2, "version_minor": 0, "state": {}}}
    return nb


def _script_srcs(html: str) -> list[str]:
    return re.findall(r"<script[^>]*\ssrc=\"([^\"]+)\"", html)


def test_registered_with_nbconvert():
    from nbconvert.exporters import get_exporter

    assert get_exporter("dpexplore_html") is offline.OfflineHTMLExporter


def test_page_inlines_plotly_and_the_widget_scripts_and_fetches_none():
    html, _ = offline.OfflineHTMLExporter().from_notebook_node(_notebook(True))
    # nothing from a CDN but MathJax (optional: offline, formulas stay TeX)
    assert [u for u in _script_srcs(html) if "mathjax" not in u] == []
    assert "/dist/embed-amd.js" not in html and "require.min.js" not in html
    plotly = offline.inline_scripts()["plotly_js"]
    widgets = offline.inline_scripts()["widgets_js"]
    # inlined unchanged (nbconvert's HTML post-processing keeps script text as is), plotly.js
    # first: it must set window.Plotly before require.js defines `define`
    assert html.index(plotly) < html.index(widgets)
    assert html.count('define("@jupyter-widgets/html-manager"') == 1
    assert 'window.define("anywidget"' in html
    assert STATE in html


def test_scripts_cannot_end_their_script_element_early():
    for text in offline.inline_scripts().values():
        assert not re.search(r"</script", text, re.I)
    assert offline.widgets_js_path().with_name("LICENSE-jupyter-widgets-offline.txt").is_file()
    assert plotly_js_path().is_file()


def test_a_notebook_without_widgets_gets_the_plain_lab_page():
    html, _ = offline.OfflineHTMLExporter().from_notebook_node(_notebook(False))
    assert "require.min.js" in html  # the lab template's own block
    assert offline.inline_scripts()["plotly_js"] not in html


@pytest.mark.slow
def test_command_line_export_warns_without_widget_state(tmp_path):
    nb = tmp_path / "plain.ipynb"
    nb.write_text(json.dumps(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("x")])))
    r = subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "dpexplore_html", str(nb)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "plain.html").is_file()
    assert "no widget state" in r.stderr
