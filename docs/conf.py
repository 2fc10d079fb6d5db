"""Sphinx configuration of dpexplore's documentation site (``make docs``).

MyST Markdown pages (myst_nb: the worked examples are executed at build time, an error in one
fails the build), the API reference from the docstrings (autodoc), pydata-sphinx-theme as
Voilà's and JupyterHub's sites use.
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpexplore._version import __version__  # noqa: E402

project = "dpexplore"
author = "the dpexplore authors"
copyright = "the dpexplore authors, MIT licence"
version = release = __version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
]
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
source_suffix = {".md": "myst-nb"}

myst_enable_extensions = ["colon_fence", "dollarmath", "deflist", "attrs_inline"]
myst_heading_anchors = 3

# the worked examples run at every build; a cell that raises fails the build
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_timeout = 300
nb_merge_streams = True

autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "signature"
autodoc_preserve_defaults = True

html_theme = "pydata_sphinx_theme"
html_title = f"dpexplore {version}"
html_static_path = ["_static"]
html_js_files = ["a11y.js"]
html_theme_options = {
    "navigation_with_keys": True,
    "show_toc_level": 2,
    # axe-core (WCAG 2.1 A/AA), as the apps are held to: the theme's wide search field is named
    # "Search" while it shows "Search Ctrl+K" (label-content-name-mismatch), and its sidebar's
    # expand toggles are <summary> elements without a name (summary-name). The search icon
    # button passes; _static/a11y.js names the toggles that collapse_navigation leaves.
    "navbar_persistent": [],
    "navbar_end": ["search-button", "theme-switcher", "navbar-icon-links"],
    "collapse_navigation": True,
}


def _bibliography_targets(app, docname, source):
    """docs/references.md marks each work with an HTML anchor (``<a id="key"></a>``, as GitHub
    shows it); for Sphinx the same anchor becomes a MyST target, so its ``(#key)`` links resolve
    and are checked."""
    if docname == "references":
        source[0] = re.sub(r'<a id="([\w-]+)"></a>', r"[]{#\1}", source[0])


_LITERAL = re.compile(r"(``.*?``)")


def _plain_bars(app, what, name, obj, options, lines):
    """The docstrings write absolute values and set sizes as mathematicians do, ``|x|``, which
    reStructuredText would read as substitutions: outside literals, doctests and literal blocks
    a ``|`` is escaped so that it shows as written."""
    literal_indent = None
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if literal_indent is not None:
            if not stripped or indent > literal_indent:
                continue
            literal_indent = None
        if stripped.startswith((">>>", "...")):
            continue
        if "|" in line:
            parts = _LITERAL.split(line)
            lines[i] = "".join(p if p.startswith("``") else p.replace("|", r"\|") for p in parts)
        if line.rstrip().endswith("::"):
            literal_indent = indent


def setup(app):
    app.connect("source-read", _bibliography_targets)
    app.connect("autodoc-process-docstring", _plain_bars)
