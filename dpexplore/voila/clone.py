"""Pages cloned from one rendered page: a forked kernel that carries its app, and a copy of the
page's HTML (issue 36).

Why
---
With kernels forked from a warm template (:mod:`dpexplore.voila.forkserver`) a kernel costs the
server little, but every page still cost it ~0.45 CPU-s of its own: Voilà runs the notebook in
the new kernel through nbclient (every widget's ``comm_open`` and state on IOPub, parsed one
message per loop turn) and renders the page's HTML from the outputs. Thirty students opening one
link paid that thirty times on one thread, and the last waited for all the others.

How
---
A dashboard notebook (:func:`~dpexplore.voila.forkserver.app_of_notebook`) is the same page for
every kernel once its app is built in the template: every kernel forked from one template
generation holds the same widgets under the same model ids. So

1. the pool's first kernel of a notebook is started with the app named (the template builds it
   before forking) and its notebook is run and rendered as usual; that rendered page, whole and
   with its output, is kept as the notebook's **reference** (:meth:`Cloner.capture`), with the
   template generation it belongs to;
2. every later page of that notebook, whether the pool refills or a page finds the pool empty,
   gets a kernel forked from the **same generation** (no other may fork it) and the reference's
   HTML with the reference kernel's id replaced by the new kernel's: no notebook run, no render.
   The page's front-end loads the widgets from its kernel as for any pooled page (``comm_info``,
   then each model's state), and the query string reaches the app as usual, by a widget message
   after the page loads.

A reference is dropped when its generation is gone (the template died or the package changed; the
next pool kernel renders a new one), and a clone whose kernel cannot be forked from that
generation is not made: the page takes Voilà's usual way (a pooled kernel, or a kernel started and
rendered for it). Any notebook that is not a dashboard is served as before.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import types

from . import forkserver

__all__ = ["Cloner", "install_cloning", "CloningKernelManager", "ENV_SWITCH", "enabled"]

log = logging.getLogger("dpexplore.voila")

#: environment variable: ``0`` turns cloned pages off (``dpexplore serve --no-clone``)
ENV_SWITCH = "DPEXPLORE_CLONE_PAGES"


def enabled() -> bool:
    """Whether pages are cloned: forked kernels are on and ``DPEXPLORE_CLONE_PAGES`` is not ``0``.

    >>> import os
    >>> os.environ["DPEXPLORE_CLONE_PAGES"] = "0"; enabled()
    False
    >>> del os.environ["DPEXPLORE_CLONE_PAGES"]
    """
    return not forkserver.switched_off(ENV_SWITCH) and forkserver.enabled()


class _Reference:
    __slots__ = ("generation", "kernel_id", "html", "nb", "kernel_name", "kwargs")

    def __init__(self, generation, kernel_id, html, nb, kernel_name, kwargs):
        self.generation, self.kernel_id, self.html, self.nb = generation, kernel_id, html, nb
        self.kernel_name, self.kwargs = kernel_name, kwargs


class _ClonedRender:
    """What Voilà's pool and hand-out read of a renderer, for a cloned page: the page's HTML as
    the rendered cache, the reference's executed notebook (judged by :func:`pool.lost_output`)."""

    def __init__(self, html: str, nb):
        self.rendered_cache = [html]
        self.stop_generator = False
        self.notebook = nb
        self.executor = types.SimpleNamespace(nb=nb, kc=None)


async def _nothing_more():
    return
    yield  # pragma: no cover - an empty async generator


def _done(html: str) -> asyncio.Future:
    """A finished render task: ``(rendered, rest)`` as ``generate_content_hybrid`` returns."""
    fut = asyncio.get_event_loop().create_future()
    fut.set_result(([html], _nothing_more()))
    return fut


class Cloner:
    """The references of one Voilà kernel manager ``km`` (its notebooks relative to
    ``root_dir``), and the cloned pages made from them."""

    def __init__(self, km, root_dir: str):
        self.km = km
        self.log = getattr(km, "log", None) or log  # the server's log
        self.root_dir = root_dir
        # the kernel manager's own start, taken before the page cap wraps it
        # (hardening.page_starts): a pool kernel cloned while a page's GET runs is no page
        self._start_kernel = km.start_kernel
        self.refs: dict = {}
        #: notebook → future done when its reference render under way ends (captured or not)
        self.rendering: dict = {}
        self._apps: dict = {}  # notebook → (mtime, app spec or None)

    # -- which notebooks -------------------------------------------------------------------------
    def app(self, notebook_name: str) -> str | None:
        """The app of the notebook (``module:builder``) if it is a dashboard, else ``None``."""
        path = os.path.join(self.root_dir, notebook_name)
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            return None
        known = self._apps.get(notebook_name)
        if known is None or known[0] != mtime:
            known = self._apps[notebook_name] = (mtime, forkserver.app_of_notebook(path))
            self.refs.pop(notebook_name, None)  # the notebook changed: its page too
        return known[1]

    def reference(self, notebook_name: str):
        """The notebook's reference if pages can be cloned from it now, else ``None``."""
        ref = self.refs.get(notebook_name)
        if ref is None:
            return None
        if self.app(notebook_name) is None or ref.generation != forkserver.template().current():
            self.refs.pop(notebook_name, None)
            self.log.info("dpexplore: the page of %s is rendered anew (its kernel template is gone)", notebook_name)
            if self.lean(notebook_name):  # no pool kernel will come by itself: render one
                self._fill(delay=0, notebook_name=notebook_name)
            return None
        return ref

    def lean(self, notebook_name: str) -> bool:
        """Whether the notebook's pool keeps no kernel once its pages are cloned: its pool size
        is Voilà's default of one (a clone is made for each page in a fraction of a second, so a
        kernel kept ready per dashboard, ~30 MiB each, buys nothing). A larger pool (lecture mode:
        ``--expect``, or ``--pool-size``) is kept full, of clones."""
        config = getattr(self.km, "kernel_pools_config", None) or {}
        default = config.get("default", {})
        size = config.get(notebook_name, default).get("pool_size", default.get("pool_size", 1))
        return size <= 1

    # -- the reference ---------------------------------------------------------------------------
    def with_app(self, notebook_name: str, kwargs: dict) -> dict:
        """``kwargs`` of a pool kernel start, asking the template to build the notebook's app."""
        spec = self.app(notebook_name)
        if spec is None:
            return kwargs
        env = dict(kwargs.get("env") or os.environ)
        env[forkserver.ENV_APP] = spec
        return {**kwargs, "env": env}

    def capture(self, notebook_name: str, entry: dict, kwargs: dict) -> None:
        """Keep the page rendered in pool entry ``entry`` as the notebook's reference, if it is
        whole (the notebook ran to its end with its output, the render was not cut short by a
        hand-out) and its kernel carries the app built in the running template."""
        from .pool import lost_output

        task, renderer, kernel_id = entry["task"], entry["renderer"], entry["kernel_id"]
        if task.cancelled() or task.exception() is not None or renderer.stop_generator:
            return
        rendered, _ = task.result()
        html = "".join(rendered)
        try:
            km = self.km.get_kernel(kernel_id)
        except KeyError:
            return
        generation = getattr(km.provisioner, "app_generation", 0)
        nb = renderer.executor.nb
        if (
            not generation
            or generation != forkserver.template().current()
            or lost_output(nb)
            or html.count(kernel_id) != 1
            or not html.rstrip().endswith("</html>")
        ):
            return
        kwargs = {k: v for k, v in kwargs.items() if k in ("path", "env")}
        self.refs[notebook_name] = _Reference(
            generation, kernel_id, html, nb, renderer.notebook.metadata.kernelspec.name, kwargs
        )
        self.log.info(
            "dpexplore: the pages of %s are cloned from one rendered page (template generation %d)",
            notebook_name,
            generation,
        )
        if self.lean(notebook_name):
            asyncio.ensure_future(self._retire(notebook_name, kernel_id))

    async def _retire(self, notebook_name: str, kernel_id: str) -> None:
        """Shut down the reference's kernel if it still waits in the pool (a lean pool keeps
        none: the next page is a clone)."""
        pool = getattr(self.km, "_pools", {}).get(notebook_name) or []
        for task in list(pool):
            if task.done() and not task.exception() and task.result().get("kernel_id") == kernel_id:
                pool.remove(task)
                try:
                    await self.km.shutdown_kernel(kernel_id)
                except Exception:  # noqa: BLE001 - already gone
                    pass
                return

    # -- a clone ---------------------------------------------------------------------------------
    async def clone(self, notebook_name: str, extra_env: dict | None = None) -> dict | None:
        """A new page of the notebook: ``{"task", "renderer", "kernel_id"}`` as a pool entry, or
        ``None`` when it cannot be cloned now (no reference, or its template generation gone)."""
        ref = self.reference(notebook_name)
        if ref is None:
            return None
        env = dict(ref.kwargs.get("env") or os.environ)
        env.update(extra_env or {})
        env[forkserver.ENV_APP] = self.app(notebook_name)
        env[forkserver.ENV_GENERATION] = str(ref.generation)
        t0 = time.monotonic()
        try:
            kernel_id = await self._start_kernel(kernel_name=ref.kernel_name, path=ref.kwargs.get("path"), env=env)
        except Exception as e:  # noqa: BLE001 - the page is rendered as usual
            self.log.info("dpexplore: no clone of %s (%s: %s); rendering the page", notebook_name, type(e).__name__, e)
            self.refs.pop(notebook_name, None)
            return None
        provisioner = self.km.get_kernel(kernel_id).provisioner
        if getattr(provisioner, "app_generation", 0) != ref.generation:
            self.log.info("dpexplore: no clone of %s (its kernel lacks the app); rendering the page", notebook_name)
            self.refs.pop(notebook_name, None)
            await self.km.shutdown_kernel(kernel_id)
            return None
        data = getattr(self.km, "notebook_data", {}).get(notebook_name)
        if data is not None:
            data["kernel_ids"].add(kernel_id)
        html = ref.html.replace(ref.kernel_id, kernel_id)
        self.log.debug(
            "dpexplore: page of %s cloned in kernel %s (%.0f ms)",
            notebook_name,
            kernel_id,
            1000 * (time.monotonic() - t0),
        )
        return {"task": _done(html), "renderer": _ClonedRender(html, ref.nb), "kernel_id": kernel_id}


def install_cloning(km, root_dir: str) -> Cloner | None:
    """Clone the pages of the dashboard notebooks of Voilà's pooled kernel manager ``km`` (a no-op
    without a pool or without forked kernels): the pool's fills (``_initialize``) become clones
    once a notebook has its reference, and a page that finds no pool kernel ready gets a clone
    instead of a kernel started and rendered for it, or of waiting for a pool kernel still being
    started (``get_pool_size`` counts one ready page for a notebook with a reference;
    ``get_rendered_notebook`` makes it)."""
    initialize = getattr(km, "_initialize", None)
    handout = getattr(km, "get_rendered_notebook", None)
    pool_size = getattr(km, "get_pool_size", None)
    if initialize is None or handout is None or pool_size is None or not enabled():
        return None
    cloner = km.dpexplore_cloner = Cloner(km, root_dir)
    fill = getattr(km, "fill_if_needed", None)
    cloner._fill = fill or (lambda **_: None)

    async def _initialize(notebook_path, kernel_id=None, **kwargs):
        if kernel_id is not None or cloner.app(notebook_path) is None:
            return await initialize(notebook_path, kernel_id, **kwargs)
        entry = await cloner.clone(notebook_path)
        under_way = cloner.rendering.get(notebook_path)
        if entry is None and under_way is not None and not under_way.done():
            # another fill renders the reference (a lecture pool fills many at once): wait
            try:
                await asyncio.wait_for(asyncio.shield(under_way), 120)
            except asyncio.TimeoutError:
                pass
            entry = await cloner.clone(notebook_path)
        if entry is not None:
            pooled = getattr(km, "dpexplore_pooled", None)
            if pooled is not None:  # a pool kernel: not a page until it is handed out
                pooled.add(entry["kernel_id"])
            return entry
        # this fill renders the notebook's reference page
        done = asyncio.get_event_loop().create_future()
        cloner.rendering[notebook_path] = done
        kwargs = cloner.with_app(notebook_path, kwargs)
        try:
            entry = await initialize(notebook_path, kernel_id, **kwargs)
        except BaseException:
            done.set_result(None)
            raise

        def rendered(_task):
            try:
                cloner.capture(notebook_path, entry, kwargs)
            finally:
                if not done.done():
                    done.set_result(None)

        entry["task"].add_done_callback(rendered)
        return entry

    def fill_if_needed(*args, notebook_name=None, **kwargs):
        if notebook_name is not None and cloner.lean(notebook_name) and cloner.reference(notebook_name) is not None:
            return  # a lean pool: every page is a clone made for it
        return fill(*args, notebook_name=notebook_name, **kwargs)

    def get_pool_size(notebook_name):
        n = pool_size(notebook_name)
        if n == 0 and cloner.reference(notebook_name) is not None:
            return 1  # a clone is made for the page (get_rendered_notebook)
        return n

    async def get_rendered_notebook(notebook_name, extra_kernel_env_variables=None, **kwargs):
        extra = extra_kernel_env_variables or {}
        pool = getattr(km, "_pools", {}).get(notebook_name) or ()
        if not any(task.done() for task in pool):  # none ready: a clone now beats waiting
            entry = await cloner.clone(notebook_name, extra)
            if entry is not None:
                return entry["task"], entry["renderer"].rendered_cache, entry["kernel_id"]
            if not getattr(km, "_pools", {}).get(notebook_name):
                # the reference went since get_pool_size counted it: the pool renders the page
                km.fill_if_needed(delay=0, notebook_name=notebook_name, extra_kernel_env_variables=extra)
        return await handout(notebook_name, extra_kernel_env_variables=extra, **kwargs)

    km._initialize = _initialize
    if fill is not None:
        km.fill_if_needed = fill_if_needed
    km.get_pool_size = get_pool_size
    km.get_rendered_notebook = get_rendered_notebook
    return cloner


try:
    from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
except ImportError:  # pragma: no cover - jupyter_server is a dependency
    AsyncMappingKernelManager = object


class CloningKernelManager(AsyncMappingKernelManager):
    """Jupyter server's kernel manager, with :func:`install_cloning` once it exists: Voilà builds
    its pooled kernel manager on this class (``VoilaConfiguration.multi_kernel_manager_class``),
    and its ``__init__`` starts the pool's first kernels, which must already be started with
    their app named (the first page of each notebook becomes its reference)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        parent = getattr(self, "parent", None)
        root = getattr(parent, "root_dir", None) or getattr(self, "root_dir", None) or os.getcwd()
        install_cloning(self, str(root))
