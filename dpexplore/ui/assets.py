"""The built files the dashboards load (plotly.js, the offline widget bundle) and the URL path the
servers serve plotly.js at; light to import (no numpy, no widget library), so that a Jupyter
server process (``dpexplore serve``, a student's apps-only server) finds them without importing
what only a kernel needs (:mod:`dpexplore.ui.plotwidget` re-exports these names).
"""

from __future__ import annotations

import functools
import hashlib
import pathlib
import re

__all__ = [
    "MissingAssetError",
    "static_asset",
    "plotly_js_path",
    "plotly_js_version",
    "plotly_version_key",
    "PLOTLY_STATIC_PATH",
]

_HERE = pathlib.Path(__file__).resolve().parent

#: URL path (relative to the server's base_url) where plotly.js is served over HTTP
PLOTLY_STATIC_PATH = "dpexplore/static/plotly.min.js"


class MissingAssetError(FileNotFoundError):
    """A built JavaScript file of the package is not there: dpexplore was installed from a source
    tree whose assets were not built (``tools/build_js.py``). The message says how to build them."""


def static_asset(name: str) -> pathlib.Path:
    """The path of a built file in ``dpexplore/ui/static/``; :class:`MissingAssetError` (naming
    the fix) when it is not there, so that a source install without its JavaScript build fails
    where an asset is first needed, with a message, and not at the import of a module.

    >>> static_asset("plotly-dpexplore.min.js").is_file()
    True
    >>> try:
    ...     static_asset("nothing.js")
    ... except MissingAssetError as e:
    ...     print("nothing.js is missing" in str(e), "make setup" in str(e))
    True True
    """
    path = _HERE / "static" / name
    if not path.is_file():
        raise MissingAssetError(
            f"{path} is missing: this dpexplore was installed from a source tree whose JavaScript "
            f"assets were not built. In that checkout run `make setup` (or `python "
            f"tools/build_js.py`; both need Node.js and npm), then reinstall unless the install "
            f"is editable (`pip install -e .`); or install dpexplore from a wheel or an sdist, "
            f"which carry the built files."
        )
    return path


def plotly_js_path() -> pathlib.Path:
    """The plotly.js bundle the dashboards load: ``static/plotly-dpexplore.min.js``, plotly.js
    with only :data:`TRACE_TYPES` (built by ``tools/plotly-bundle``; MIT license alongside).
    :class:`MissingAssetError` when it was not built.

    >>> plotly_js_path().name
    'plotly-dpexplore.min.js'
    """
    return static_asset("plotly-dpexplore.min.js")


def plotly_js_version() -> str:
    """The plotly.js version of the bundle, read from its first line (``/* plotly.js vX.Y.Z ...``).

    >>> plotly_js_version().count(".")
    2
    """
    with plotly_js_path().open(encoding="utf-8") as f:
        head = f.read(200)
    m = re.match(r"/\* plotly\.js v(\d+\.\d+\.\d+)", head)
    if not m:
        raise RuntimeError(f"{plotly_js_path()} does not start with a plotly.js version banner")
    return m.group(1)


@functools.lru_cache(maxsize=1)
def plotly_version_key() -> str:
    """Cache key of the served bundle (``?v=``): a new bundle gets a new URL. Read when the first
    plot is made or the first page is rendered, not at import (a missing bundle is then a
    :class:`MissingAssetError` there)."""
    return f"{plotly_js_version()}-{hashlib.sha1(plotly_js_path().read_bytes()).hexdigest()[:10]}"
