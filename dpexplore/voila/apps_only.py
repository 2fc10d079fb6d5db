"""The ``dpexplore.voila.apps_only`` Jupyter server extension: a single-user server of a class
that serves the apps and nothing more.

Loaded into ``jupyterhub-singleuser`` (``deploy/singleuser/jupyter_server_config.json``; the class
configuration of ``deploy/jupyterhub_config.py``), it gives the server the hardening of
``dpexplore serve`` (:mod:`dpexplore.voila.hardening`, the same classes) behind the hub's login:

* every request is routed to a handler class on an allow-list (:data:`ALLOWED`), checked when
  the request arrives, after every extension added its routes: Voilà's render pages and their
  static assets (the packages' static folders: Voilà's widget labextensions), the plotly.js route,
  the server's version (``api``), the page's own kernel (its model at ``api/kernels/<id>``,
  its websocket, its page-close call) and the hub's OAuth callback and logout. Anything else is
  a plain 404, whichever extension registered it: JupyterLab, the tree, ``api/contents``,
  ``api/kernels`` (listing and starting kernels), ``api/sessions``, ``api/terminals``,
  ``api/kernelspecs``, ``files/``, ``nbconvert/``, ``voila/files/``, ``voila/tree``;
* the allowed classes are swapped for their bounded versions (:func:`~.hardening.hardened_class`):
  the kernel websocket that reads frames safely, accepts messages of at most 1 MiB and sends no
  traceback (an app's error reaches the page as no message, its traceback goes to the server
  log: :class:`~.hardening.PlainErrorConnection`), the page with a cap on concurrent kernels
  counted atomically (:class:`~.hardening.PageStarts`), the page-close call that works behind
  the hub's login;
* the kernel manager accepts from a websocket only the widget messages
  (:data:`~.hardening.WIDGET_MESSAGES`: no ``execute_request``, ``complete_request``, ...) and
  sends no tracebacks; Voilà's pages show none (``show_tracebacks`` off, sources stripped);
* pages are rendered with dpexplore's template (``templates/dpexplore``, as ``dpexplore serve``):
  plotly.js requested early, and the page says so when its kernel stopped (killed for its
  memory, say) or when a change is too large to send;
* ``<base_url>`` and ``voila/tree`` redirect to the gallery, the renamed apps' old page URLs to
  their new ones (:func:`~dpexplore.voila.renamed_redirects`).

What runs the server (an unprivileged account, never root) is the spawner's business:
:class:`dpexplore.hub.StudentSpawner` (each student her own account).

>>> from jupyter_server.services.contents.handlers import ContentsHandler
>>> from jupyter_server.services.kernels.handlers import MainKernelHandler
>>> ContentsHandler in ALLOWED, MainKernelHandler in ALLOWED, SafeKernelWebsocketHandler in ALLOWED
(False, False, True)
"""

from __future__ import annotations

import logging
import os

from jupyter_server.base.handlers import APIVersionHandler, FileFindHandler
from jupyter_server.services.kernels.handlers import KernelHandler
from voila.static_file_handler import MultiStaticFileHandler, TemplateStaticFileHandler
from jupyterlab_server.themes_handler import ThemesHandler

from . import (
    GALLERY,
    TEMPLATE_DIR,
    PlotlyJSHandler,
    _GalleryRedirect,
    _NotFound,
    _RenamedRedirect,
    _url_join,
    load_config,
    renamed_redirects,
    template_asset_guard,
)
from .pool import guard_page_start
from .sockets import use_private_sockets
from .hardening import (
    MAX_MESSAGE_BYTES,
    WIDGET_MESSAGES,
    CappedVoilaHandler,
    PageCloseShutdownHandler,
    SafeKernelWebsocketHandler,
    _log_limited,
    hardened_class,
)

__all__ = ["ALLOWED", "restrict_routes", "DEFAULT_MAX_KERNELS"]

log = logging.getLogger("dpexplore.voila")

#: kernels (app pages) one student may hold at once (``DPExploreAppsOnly.max_kernels`` in the
#: server's config): with ~150 MiB per kernel, five fit the 1 GiB per student of the hub
DEFAULT_MAX_KERNELS = 5


def _hub_handlers() -> tuple:
    try:
        from jupyterhub.singleuser.extension import JupyterHubLogoutHandler, JupyterHubOAuthCallbackHandler
    except ImportError:  # not on a hub: nothing to add
        return ()
    return (JupyterHubOAuthCallbackHandler, JupyterHubLogoutHandler)


#: the handler classes an apps-only server routes to (after :func:`~.hardening.hardened_class`)
ALLOWED = frozenset(
    {
        CappedVoilaHandler,
        PageCloseShutdownHandler,
        SafeKernelWebsocketHandler,  # page, kernel
        KernelHandler,  # the page reads its own kernel's model (unguessable id)
        TemplateStaticFileHandler,
        MultiStaticFileHandler,
        ThemesHandler,  # Voilà's static assets
        FileFindHandler,  # static folders of packages (Voilà's widget labextensions)
        APIVersionHandler,  # ``api``: the server's version, which Voilà's page asks
        PlotlyJSHandler,
        _GalleryRedirect,
        _NotFound,
        _RenamedRedirect,  # dpexplore's routes
        *_hub_handlers(),  # the hub's OAuth callback and logout
    }
)


def restrict_routes(web_app, allowed=ALLOWED) -> None:
    """Route every request of ``web_app`` (a tornado Application) to the hardened version of its
    handler class if that is in ``allowed``, else to a plain 404.

    Checked per request in ``web_app.find_handler``, so routes that extensions add later (or in
    another order) are covered too.
    """
    find = web_app.find_handler

    def find_handler(request, **kwargs):
        delegate = find(request, **kwargs)
        cls = hardened_class(delegate.handler_class)
        if cls in allowed:
            delegate.handler_class = cls
            return delegate
        _log_limited(
            f"dpexplore apps-only: refused {request.method} {request.path[:200]} ({delegate.handler_class.__name__})"
        )
        return web_app.get_handler_delegate(request, _NotFound)

    web_app.find_handler = find_handler


def page_app(request_url: str, root_dir) -> str | None:
    """The app (``module:builder``, :func:`~.forkserver.app_of_notebook`) of the dashboard a page
    request renders (Voilà's ``VOILA_REQUEST_URL``: ``…/voila/render/<notebook>``, under
    ``root_dir``), else ``None``: another notebook, a path with a ``..`` segment, no such file.

    >>> import tempfile, pathlib, shutil
    >>> from dpexplore.cli import default_root
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = shutil.copy(default_root() / "rdp_explorer.ipynb", root)
    >>> page_app("http://h/user/ann/voila/render/rdp_explorer.ipynb?eps=2", root)
    'dpexplore.apps.rdp_explorer:build_rdp_explorer'
    >>> [page_app(u, root) for u in ("http://h/voila/render/../rdp_explorer.ipynb",
    ...                              "http://h/voila/render/missing.ipynb", "http://h/voila/tree")]
    [None, None, None]
    >>> shutil.rmtree(root)
    """
    from urllib.parse import unquote, urlsplit

    from .forkserver import app_of_notebook

    path = unquote(urlsplit(request_url or "").path)
    _, marker, rest = path.partition("/voila/render/")
    parts = rest.split("/")
    if not marker or not rest.endswith(".ipynb") or any(p in ("", ".", "..") for p in parts):
        return None
    notebook = os.path.join(str(root_dir), *parts)
    return app_of_notebook(notebook) if os.path.isfile(notebook) else None


def start_pages_with_their_app(km, root_dir) -> None:
    """A page's kernel (Voilà starts it with the request's URL in its environment) asks the fork
    template for its dashboard's app, built there once (:data:`~.forkserver.ENV_APP`): Voilà then
    runs the notebook as usual, and its builder returns that app. The kernel builds nothing, and
    holds ~19 MiB of its own instead of ~24 after its page (``benchmarks/bench_kernel_start.py``:
    ``app`` against ``forked``). Pages are still rendered each for its student, not cloned."""
    from jupyter_core.utils import ensure_async

    from .forkserver import ENV_APP

    start = km.start_kernel

    async def start_kernel(*args, **kwargs):
        env = kwargs.get("env")
        if isinstance(env, dict) and ENV_APP not in env:
            spec = page_app(env.get("VOILA_REQUEST_URL", ""), root_dir)
            if spec:
                kwargs["env"] = {**env, ENV_APP: spec}
        return await ensure_async(start(*args, **kwargs))

    km.start_kernel = start_kernel


def _jupyter_server_extension_points():
    return [{"module": "dpexplore.voila.apps_only"}]


def _load_jupyter_server_extension(serverapp) -> None:
    web_app = serverapp.web_app
    base = web_app.settings.get("base_url", "/")
    # Voilà's configuration is read when its extension loads (after this one: "dpexplore" sorts
    # before "voila"); the kernel manager's filter is read per message
    serverapp.config.VoilaConfiguration.show_tracebacks = False
    serverapp.config.VoilaConfiguration.strip_sources = True
    serverapp.config.VoilaConfiguration.progressive_rendering = False
    # dpexplore's page template, as in dpexplore serve: plotly.js requested early, the page's
    # notices (its kernel stopped, a message refused as too large, an output lost)
    from ..ui.assets import PLOTLY_STATIC_PATH, plotly_version_key

    web_app.settings["dpexplore_template_dir"] = str(TEMPLATE_DIR)
    resources = serverapp.config.VoilaConfiguration.get("resources")
    resources = dict(resources) if isinstance(resources, dict) else {}
    resources.setdefault("dpexplore_plotly_path", f"{PLOTLY_STATIC_PATH}?v={plotly_version_key()}")
    resources.setdefault("dpexplore_max_message_bytes", MAX_MESSAGE_BYTES)
    serverapp.config.VoilaConfiguration.resources = resources
    filters = serverapp.config.VoilaExporter.get("filters")
    filters = dict(filters) if isinstance(filters, dict) else {}
    filters.update(load_config()["VoilaExporter"]["filters"])  # the template's filters
    serverapp.config.VoilaExporter.filters = filters
    km = serverapp.kernel_manager
    guard_page_start()  # a kernel that dies at start ends its page with a message
    use_private_sockets(km, serverapp.log)  # no TCP port a classmate could reach
    km.allowed_message_types = list(WIDGET_MESSAGES)
    km.allow_tracebacks = False
    # the kernels it starts serve pages: hidden tabs' plots are sent when shown (ui.offstage)
    os.environ.setdefault("DPEXPLORE_DEFER_HIDDEN", "1")
    from .forkserver import enable as fork_kernels

    # the app kernels fork from a template run by this account, started with the first kernel
    # (not now: the spawns of a class logging in together do not wait for it)
    fork_kernels(serverapp.log, start=False)
    start_pages_with_their_app(km, serverapp.root_dir)
    cap = serverapp.config.get("DPExploreAppsOnly", {}).get("max_kernels", DEFAULT_MAX_KERNELS)
    web_app.settings["dpexplore_max_kernels"] = int(cap)
    web_app.settings["terminals_available"] = False
    gallery = _url_join(base, "voila/render", GALLERY)
    web_app.add_handlers(
        ".*$",
        [
            (_url_join(base).rstrip("/") + "/?", _GalleryRedirect, {"target": gallery}),
            (_url_join(base, "voila") + r"(?:/tree(?:/.*)?)?/?", _GalleryRedirect, {"target": gallery}),
            template_asset_guard(base),
            *renamed_redirects(base, serverapp.root_dir),  # the renamed apps' old links
        ],
    )
    restrict_routes(web_app)
    serverapp.log.info(
        "dpexplore: apps-only server (widget messages only, %d kernels at most; everything but the apps answers 404)",
        cap,
    )


load_jupyter_server_extension = _load_jupyter_server_extension
