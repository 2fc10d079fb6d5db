"""The Voilà serving layer of ``dpexplore serve``, and its configuration (``voila.json`` here).

:class:`DPExploreVoila` is Voilà 0.5's standalone app (``voila.app.Voila``) with

* its configuration read ONLY from this package (``voila.json``): sources stripped, tracebacks
  hidden, kernels preheated (a pool of one pre-executed kernel per notebook: the page's first plot
  does not wait for a kernel start and the notebook's execution), idle kernels of closed pages
  culled (``MappingKernelManager.cull_idle_timeout`` 60 s, checked every 15 s,
  ``cull_connected`` False so an open page is never culled; Voilà's own shutdown-on-unload is not
  reliable, voila#1458), bound to 127.0.0.1;
* kernels on THIS interpreter: a private kernelspec ``python3`` (ipykernel's
  ``write_kernel_spec``, ``sys.executable``) in a temporary folder searched before every other
  kernelspec folder (:func:`private_kernelspec_dir`), so a user whose own ``python3`` kernelspec
  points at another Python (without dpexplore) still gets working dashboards;
* a page template (``templates/dpexplore/index.html.j2``: Voilà's "lab" template plus a ``<script>``
  in the page head that starts loading plotly.js while Voilà's own JavaScript loads);
* plotly.js served over plain HTTP at ``<base_url>dpexplore/static/plotly.min.js`` (browser-cached
  with ``?v=<bundle version and hash>``; the file is dpexplore's own 1.3 MB bundle with the trace
  types the dashboards draw, ``ui.assets.plotly_js_path()``), loaded once per page by every
  :class:`~dpexplore.ui.plotwidget.PlotlyWidget`;
* only the endpoints a dashboard page needs: the gallery ``/`` redirects to
  ``voila/render/index.ipynb``; the file tree and ``/voila/api/contents`` are removed, and
  ``/api/kernels`` (the listing) and ``/api/contents`` do not exist. What stays: the pages, their
  static assets, ``/api/kernels/<id>`` for the page's own (unguessable) kernel id — Voilà's front
  end reads its kernel model there and fails without it — the kernel websocket (which Voilà limits
  to widget comm messages: no code execution) and Voilà's shutdown hook.

The same static route is available to any Jupyter server (JupyterLab, Notebook 7, Binder,
JupyterHub) as the server extension ``dpexplore.voila`` (:mod:`dpexplore.voila.extension`),
enabled by installing the package (``etc/jupyter/jupyter_server_config.d/dpexplore.json``);
``jupyter server extension disable dpexplore.voila`` turns it off.

>>> config_path().name
'voila.json'
>>> load_config()["VoilaConfiguration"]["show_tracebacks"]
False
"""

from __future__ import annotations

import atexit
import json
import os
import pathlib
import re
import shutil
import sys
import tempfile

from tornado import web

__all__ = [
    "CONFIG_DIR",
    "config_path",
    "load_config",
    "static_handlers",
    "PlotlyJSHandler",
    "DPExploreVoila",
    "GALLERY",
    "private_kernelspec_dir",
    "RENAMED",
    "renamed_redirects",
]

CONFIG_DIR = pathlib.Path(__file__).resolve().parent
#: our Voila template (Voila's "lab" template plus an early plotly.js request)
TEMPLATE_DIR = CONFIG_DIR / "templates" / "dpexplore"
#: the gallery notebook, relative to the served root
GALLERY = "index.ipynb"


def config_path() -> pathlib.Path:
    """The Voilà configuration file shipped with the package."""
    return CONFIG_DIR / "voila.json"


def load_config() -> dict:
    """The shipped Voilà configuration as a dict."""
    return json.loads(config_path().read_text(encoding="utf-8"))


def _url_join(*parts: str) -> str:
    out = "/".join(p.strip("/") for p in parts if p.strip("/"))
    return "/" + out


class PlotlyJSHandler(web.RequestHandler):
    """Serves the plotly.js bundle: gzip-compressed once per process (1.3 MB → 0.4 MB) and kept in
    memory, cached by browsers (immutable when requested with ``?v=``)."""

    _cache: dict = {}

    def initialize(self, path: str):
        self.path = path

    def _bodies(self):
        if self.path not in self._cache:
            import gzip
            import hashlib

            raw = pathlib.Path(self.path).read_bytes()
            self._cache[self.path] = (raw, gzip.compress(raw, 6, mtime=0), hashlib.sha1(raw).hexdigest())
        return self._cache[self.path]

    def compute_etag(self):
        return f'"{self._bodies()[2]}"'

    def get(self):
        raw, gz, _ = self._bodies()
        self.set_header("Content-Type", "application/javascript; charset=UTF-8")
        self.set_header("Vary", "Accept-Encoding")
        if self.get_query_argument("v", None):
            self.set_header("Cache-Control", "public, max-age=31536000, immutable")
        else:
            self.set_header("Cache-Control", "public, max-age=3600")
        if "gzip" in self.request.headers.get("Accept-Encoding", ""):
            self.set_header("Content-Encoding", "gzip")
            self.write(gz)
        else:
            self.write(raw)

    head = get


def static_handlers(base_url: str = "/") -> list:
    """Tornado handlers serving the dashboards' plotly.js bundle at
    ``<base_url>dpexplore/static/plotly.min.js`` (long cache when requested with ``?v=``).

    >>> static_handlers("/user/x/")[0][0]
    '/user/x/dpexplore/static/plotly\\\\.min\\\\.js'
    """
    from ..ui.assets import plotly_js_path

    return [
        (
            _url_join(base_url, "dpexplore/static") + r"/plotly\.min\.js",
            PlotlyJSHandler,
            {"path": str(plotly_js_path())},
        )
    ]


class _NotFound(web.RequestHandler):
    """A plain 404 for paths that have nothing to serve (Voilà answered some of them with a 500)."""

    def prepare(self):
        raise web.HTTPError(404)


def template_asset_guard(base_url: str = "/") -> tuple:
    """The route answering a plain 404 under ``<base_url>voila/templates/`` for anything but a
    template asset (``<template>/static/<path>``) or for a path with a ``..`` segment (Voilà's
    handler raised on it: 500).

    >>> import re
    >>> pattern = template_asset_guard("/")[0]
    >>> bool(re.fullmatch(pattern, "/voila/templates/lab/static/voila.js"))
    False
    >>> bool(re.fullmatch(pattern, "/voila/templates/lab/static/../x.py"))
    True
    """
    return (_url_join(base_url, "voila/templates") + r"/(?!\w+/static/(?!.*\.\.)[\w./-]+$).*", _NotFound)


class _GalleryRedirect(web.RequestHandler):
    def initialize(self, target: str):
        self.target = target

    def get(self):
        self.redirect(self.target)

    head = get


#: app notebooks renamed to their module's name (``adaptive_data_analysis.ipynb`` is
#: ``dpexplore/apps/adaptive_lab.py``): old file name -> new one. The servers redirect an old page
#: URL to the new one, query string kept (:func:`renamed_redirects`), so bookmarks, shared links
#: ("Link to this view") and course pages keep working
RENAMED: dict[str, str] = {
    "profile_vs_gdp.ipynb": "profile_gdp.ipynb",
    "mechanisms_in_action.ipynb": "mechanisms_lab.ipynb",
    "adaptive_data_analysis.ipynb": "adaptive_lab.ipynb",
    "auditing_lab.ipynb": "audit_lab.ipynb",
    "mean_estimation.ipynb": "mean_estimation_lab.ipynb",
    "down_sensitivity.ipynb": "down_sensitivity_lab.ipynb",
    "group_privacy.ipynb": "group_privacy_lab.ipynb",
}


class _RenamedRedirect(web.RequestHandler):
    """A permanent redirect of a renamed notebook's page to its new name, query string kept."""

    def initialize(self, target: str):
        self.target = target

    def get(self):
        query = self.request.query
        self.redirect(self.target + ("?" + query if query else ""), permanent=True)

    head = get


def renamed_redirects(base_url: str, root_dir) -> list:
    """Routes redirecting ``<base_url>voila/render/[<folder>/]<old>.ipynb`` to the new name of a
    renamed app notebook (:data:`RENAMED`), for the notebooks served from ``root_dir`` or one of its
    folders (``notebooks/`` of the repository on Binder, ``apps/`` in a hub student's home).

    Only where the new notebook is there and the old one is not: a notebook of one's own under an
    old name is served as before.

    >>> import tempfile, re
    >>> with tempfile.TemporaryDirectory() as t:
    ...     _ = (pathlib.Path(t) / "audit_lab.ipynb").write_text("{}")
    ...     routes = renamed_redirects("/user/x/", t)
    >>> [(r[0], r[2]["target"]) for r in routes]
    [('/user/x/voila/render/auditing_lab\\\\.ipynb', '/user/x/voila/render/audit_lab.ipynb')]
    """
    root = pathlib.Path(root_dir).expanduser()
    folders = [""]
    try:
        folders += sorted(e.name for e in os.scandir(root) if re.fullmatch(r"\w[\w-]*", e.name) and e.is_dir())
    except OSError:
        pass
    routes = []
    for folder in folders:
        for old, new in RENAMED.items():
            if (root / folder / new).is_file() and not (root / folder / old).exists():
                prefix = _url_join(base_url, "voila/render", folder)
                routes.append((prefix + "/" + re.escape(old), _RenamedRedirect, {"target": prefix + "/" + new}))
    return routes


def private_kernelspec_dir(parent: pathlib.Path | None = None) -> pathlib.Path:
    """A kernelspec folder holding one kernelspec, ``python3``, that runs ipykernel on the
    interpreter running this code (``sys.executable``: the one dpexplore is installed in).

    Voilà starts a notebook's kernel from the kernelspec the notebook names (``python3`` for the
    shipped apps), looked up in the Jupyter data folders, where a user's own ``python3`` (say,
    ``~/.local/share/jupyter/kernels/python3`` from another environment) wins over the
    interpreter serving the page: its kernels then lack dpexplore and every app fails. ``dpexplore
    serve`` puts this folder first in its kernel search path. Without ``parent``, a new
    temporary folder, removed when the process exits.

    >>> import json, sys, tempfile
    >>> with tempfile.TemporaryDirectory() as t:
    ...     d = private_kernelspec_dir(pathlib.Path(t))
    ...     json.loads((d / "python3" / "kernel.json").read_text())["argv"][0] == sys.executable
    True
    """
    from ipykernel.kernelspec import KERNEL_NAME, write_kernel_spec

    if parent is None:
        parent = pathlib.Path(tempfile.mkdtemp(prefix="dpexplore-kernels-"))
        atexit.register(shutil.rmtree, parent, True)
    write_kernel_spec(parent / KERNEL_NAME, overrides={"display_name": f"Python 3 ({pathlib.Path(sys.executable)})"})
    return parent


def _protect_handed_out_kernels(km) -> None:
    """Give a page its kernel with a fresh idle clock.

    Voilà's kernel pool shields its kernels from the idle culler only while they sit in the pool
    (``VoilaKernelManager.cull_kernel_if_idle``). A kernel handed to a page keeps the
    ``last_activity`` of its notebook run, and a pooled kernel may have waited longer than
    ``cull_idle_timeout``; until the page's websocket connects (the browser first loads Voilà's
    JavaScript, 1-3 s) nothing else protects it, so a cull check in that window shut the kernel
    down and the page never showed its widgets. This was the intermittent "page never shows its
    plots" of the browser benchmark and of the browser tests' reruns: it hit apps whose pooled
    kernel had idled more than a minute. Here the hand-out resets ``last_activity``: the page has
    a whole ``cull_idle_timeout`` to connect (a connected page is never culled, ``cull_connected``
    False), and a page that never connects is culled as before.
    """
    orig = getattr(km, "get_rendered_notebook", None)
    if orig is None:  # no kernel pool (preheat_kernel off)
        return
    from jupyter_server._tz import utcnow

    async def get_rendered_notebook(*args, **kwargs):
        out = await orig(*args, **kwargs)
        kernel_id = out[2]
        try:
            km.get_kernel(kernel_id).last_activity = utcnow()
        except KeyError:  # already gone: Voilà reports it to the page
            pass
        return out

    km.get_rendered_notebook = get_rendered_notebook


def _make_app_class():
    from voila.app import Voila
    from traitlets import Integer, Unicode, default

    class DPExploreVoila(Voila):
        """Voilà with dpexplore's configuration, static route and reduced endpoint set."""

        name = "dpexplore-voila"
        description = "Serve the dpexplore dashboards with Voila."

        @default("config_file_paths")
        def _config_file_paths_default(self):
            return [str(CONFIG_DIR)]

        def initialize(self, argv=None):
            super().initialize(argv)
            from ..ui.assets import PLOTLY_STATIC_PATH, plotly_version_key
            from .hardening import MAX_MESSAGE_BYTES

            # resources for our template (read by voila.notebook_renderer from the config)
            res = self.config.VoilaConfiguration.get("resources")
            res = dict(res) if isinstance(res, dict) else {}
            res.setdefault("dpexplore_plotly_path", f"{PLOTLY_STATIC_PATH}?v={plotly_version_key()}")
            res.setdefault("dpexplore_max_message_bytes", MAX_MESSAGE_BYTES)  # the page's bound
            self.config.VoilaConfiguration.resources = res

        #: cap on concurrent kernels (``dpexplore serve --max-kernels``; 0 = no cap)
        max_kernels = Integer(0, config=True, help="cap on concurrent kernels (0: none)")
        #: cap on open pages, the pool's ready kernels not counted (``dpexplore serve
        #: --max-pages``; 0 = no cap)
        max_pages = Integer(0, config=True, help="cap on open pages (0: none)")

        #: pool fills (kernel start + notebook run) at once (``dpexplore serve --fill-slots``;
        #: 0 = one per two cores)
        fill_slots = Integer(0, config=True, help="pool fills at once (0: one per two cores)")
        #: lecture mode (``dpexplore serve --expect N --apps a,b``): students expected at once
        expect = Integer(0, config=True, help="students expected at once (0: no lecture mode)")
        expect_apps = Unicode("", config=True, help="comma-separated notebooks the class will open (with expect)")

        def init_settings(self):
            from .pool import FillGate, gate_pool_fills, guard_page_start, guard_pool, lecture_pools
            from .sockets import use_private_sockets

            if self.expect:  # before Voila creates the kernel manager, which starts the fill
                apps = [a.strip() for a in self.expect_apps.split(",") if a.strip()]
                self.config.VoilaKernelManager.kernel_pools_config = lecture_pools(
                    self.expect, apps, self.voila_configuration.default_pool_size
                )
                self.log.info("dpexplore: lecture mode: %d students expected on %s", self.expect, ", ".join(apps))
            from .forkserver import enable as fork_kernels

            if fork_kernels(self.log):  # before the kernel manager starts the pools' kernels
                from . import clone

                if clone.enabled():  # a dashboard's pages cloned from one rendered page
                    self.voila_configuration.multi_kernel_manager_class = clone.CloningKernelManager
                    self.log.info(
                        "dpexplore: a dashboard's pages are cloned from its first rendered page (%s=0 turns this off)",
                        clone.ENV_SWITCH,
                    )
            settings = super().init_settings()
            settings["dpexplore_max_kernels"] = int(self.max_kernels)
            settings["dpexplore_max_pages"] = int(self.max_pages)
            # kernels run on this interpreter (the kernel manager holds this same spec manager)
            ksm = self.kernel_spec_manager
            ksm.kernel_dirs = [str(private_kernelspec_dir()), *ksm.kernel_dirs]
            km = self.kernel_manager
            # an app's error reaches no page (hardening.PlainErrorConnection logs its traceback),
            # as on the apps-only server
            km.allow_tracebacks = False
            _protect_handed_out_kernels(km)
            # refills wait their turn (pool.FillGate); no kernel without its output is handed out
            gate_pool_fills(km, FillGate(slots=self.fill_slots or None))
            guard_pool(km)
            guard_page_start()  # a kernel that dies at start ends its page with a message
            use_private_sockets(km, self.log)  # Unix sockets in a private folder, no TCP port
            return settings

        def setup_template_dirs(self):
            super().setup_template_dirs()
            if self.voila_configuration.template == "lab":
                # our index.html.j2 extends lab's and starts the plotly.js request early
                self.template_paths.insert(0, str(TEMPLATE_DIR))

        def init_handlers(self):
            from .hardening import hardened_class

            handlers = super().init_handlers()
            keep = []
            for h in handlers:
                pattern, cls = h[0], h[1]
                name = getattr(cls, "__name__", "")
                if name in ("VoilaContentsHandler", "TornadoVoilaTreeHandler"):
                    continue
                # the kernel websocket, the page and its page-close call: their bounded versions
                keep.append((pattern, hardened_class(cls), *h[2:]))
            gallery = _url_join(self.server_url, "voila/render", GALLERY)
            extra = static_handlers(self.server_url)
            # answered 500 (an exception in Voila's handler) where nothing is there: plain 404s
            extra.append((_url_join(self.server_url) + r"(?:login|logout)/?", _NotFound))
            extra.append(template_asset_guard(self.server_url))
            if not self.notebook_path:
                extra.append((_url_join(self.server_url).rstrip("/") + "/?", _GalleryRedirect, {"target": gallery}))
                extra.append((_url_join(self.server_url, "voila/tree") + r"/?", _GalleryRedirect, {"target": gallery}))
                extra += renamed_redirects(self.server_url, self.root_dir)  # old app links
            return extra + keep

    return DPExploreVoila


def __getattr__(name):  # lazy: importing voila.app is slow and not needed by the dashboards
    if name == "DPExploreVoila":
        cls = _make_app_class()
        globals()["DPExploreVoila"] = cls
        return cls
    raise AttributeError(name)


# -- Jupyter server extension (JupyterLab, Notebook 7, Binder, JupyterHub): the plotly.js route ---
def _jupyter_server_extension_points():
    """``jpserver_extensions: {"dpexplore.voila": true}`` loads :mod:`dpexplore.voila.extension`
    (installed enabled; see there)."""
    return [{"module": "dpexplore.voila.extension"}]
