"""The ``dpexplore.voila`` Jupyter server extension: plotly.js over HTTP in any Jupyter server.

It adds the route ``<base_url>dpexplore/static/plotly.min.js`` (the dashboards' plotly.js bundle,
gzip-compressed and browser-cached, :class:`dpexplore.voila.PlotlyJSHandler`), so that every
:class:`~dpexplore.ui.plotwidget.PlotlyWidget` on a JupyterLab, Notebook 7, Voilà-on-Jupyter or
JupyterHub page loads plotly.js once over HTTP instead of through the kernel, and the redirects
of the renamed app notebooks' old page URLs (:func:`dpexplore.voila.renamed_redirects`).

Installing the package enables it: the wheel installs
``etc/jupyter/jupyter_server_config.d/dpexplore.json`` (``{"ServerApp": {"jpserver_extensions":
{"dpexplore.voila": true}}}``) into the environment's prefix, and ``jupyter server extension
disable dpexplore.voila`` / ``enable dpexplore.voila`` switch it off and on (the user-level
setting wins over the installed one).

Server start pays for importing this module: it imports only the standard library and tornado
(already loaded by the server), and finds the bundle by its path, without importing the widget
module (anywidget, numpy) or the backend (scipy).

>>> _jupyter_server_extension_points()
[{'module': 'dpexplore.voila.extension'}]
>>> handlers("/user/x/")[0][0]
'/user/x/dpexplore/static/plotly\\\\.min\\\\.js'
>>> pathlib.Path(handlers()[0][2]["path"]).is_file()
True
"""

from __future__ import annotations

import pathlib

__all__ = ["handlers", "plotly_js_file"]


def plotly_js_file() -> pathlib.Path:
    """The plotly.js bundle served (the same file as ``ui.assets.plotly_js_path()``)."""
    return pathlib.Path(__file__).resolve().parent.parent / "ui" / "static" / "plotly-dpexplore.min.js"


def handlers(base_url: str = "/") -> list:
    """The tornado handler of ``<base_url>dpexplore/static/plotly.min.js`` (``?v=`` ignored
    except for caching)."""
    from . import PlotlyJSHandler

    prefix = "/" + "/".join(p for p in base_url.strip("/").split("/") if p)
    prefix = prefix.rstrip("/") + "/dpexplore/static"
    return [(prefix + r"/plotly\.min\.js", PlotlyJSHandler, {"path": str(plotly_js_file())})]


def _jupyter_server_extension_points():
    return [{"module": "dpexplore.voila.extension"}]


def _load_jupyter_server_extension(serverapp) -> None:
    web_app = serverapp.web_app
    base_url = web_app.settings.get("base_url", "/")
    web_app.add_handlers(".*$", handlers(base_url))
    from . import renamed_redirects

    # old links of the app notebooks renamed to their module's name (on Binder, in a lab's apps/)
    web_app.add_handlers(".*$", renamed_redirects(base_url, serverapp.root_dir))
    serverapp.log.info("dpexplore: serving plotly.js at %sdpexplore/static/plotly.min.js", base_url)


# jupyter_server < 2 names
load_jupyter_server_extension = _load_jupyter_server_extension
