"""Voilà's kernel pool under load: no page is handed a kernel that lost its output.

The cause of the blank pages
----------------------------
Voilà pre-heats kernels (``VoilaKernelManager``, ``preheat_kernel``): each pool entry starts a
kernel and runs the notebook in it through nbclient (``NotebookRenderer._jinja_cell_generator`` →
``VoilaExecutor.execute_cell``), rendering the page's HTML with the outputs the kernel sent on its
IOPub channel; a visitor is then handed the kernel *and that HTML*. nbclient takes a cell as
finished at its ``execute_reply`` (shell channel) and then waits at most ``iopub_timeout``
(4 s by default) for the rest of the cell's IOPub messages (its outputs, up to the ``idle``
status); when they are late it logs ``Timeout waiting for IOPub output`` and carries on *without
them* (``raise_on_iopub_timeout`` False). The dashboards' one cell sends dozens of widget
messages and then the ``display_data`` of the app; while the pool fills, fifteen or more kernels
and the server compete for two cores, the server processes one IOPub message per loop turn, and
the output arrives after the 4 s. The rendered page then holds the app's widgets in the kernel but
no output that shows them: the page loads, shows nothing (``widgets: 0, outputs: 0``), and stays so.

The remedy, in three layers (configured in ``voila.json``, installed by :func:`guard_pool`):

1. nbclient waits longer for a late output (``VoilaExecutor.iopub_timeout`` 30 s: the wait ends
   as soon as the ``idle`` status comes, so a normal cell pays nothing), and a timeout is an
   error in the cell (``raise_on_iopub_timeout``) instead of a silently empty cell;
2. a pooled kernel whose rendered notebook lost its output (:func:`lost_output`) is not handed
   out: it is shut down and the page takes the next one (:func:`guard_pool`);
3. a page whose notebook still lost its output (a kernel started for the page itself, or the last
   attempt) says so and reloads itself with a fresh kernel, at most three times in a row (the
   page template asks :func:`page_end`).

>>> from nbformat.v4 import new_notebook, new_code_cell, new_output
>>> nb = new_notebook(cells=[new_code_cell("build_demo()", execution_count=1)])
>>> lost_output(nb)
'no code cell has an output'
>>> nb.cells[0].outputs = [new_output("display_data", {"text/plain": "demo"})]
>>> lost_output(nb)
''
"""

from __future__ import annotations

import asyncio
import html
import json
import logging

__all__ = [
    "lost_output",
    "page_lost_output",
    "guard_pool",
    "FillGate",
    "gate_pool_fills",
    "lecture_pools",
    "guard_page_start",
    "PAGE_NOT_STARTED",
    "HANDOUT_ATTEMPTS",
    "retry_notice",
    "page_end",
    "PAGE_RETRIES",
    "RETRY_RESET",
]

log = logging.getLogger("dpexplore.voila")

#: pooled kernels tried for one page before it is handed the last one as it is
HANDOUT_ATTEMPTS = 3


def lost_output(nb) -> str:
    """Why the executed notebook ``nb`` lacks its output ('' when it does not).

    Lost: a code cell ended with nbclient's timeout (an ``error`` output ``TimeoutError``: the
    kernel's output did not arrive in time), or every non-empty code cell has been executed and
    none has any output (the page would show nothing; a notebook of code that displays nothing
    counts as lost too: a dashboard page always shows something). Cells not executed yet are not
    judged.
    """
    code = [c for c in nb.get("cells", ()) if c.get("cell_type") == "code"]
    for cell in code:
        for out in cell.get("outputs", ()):
            if out.get("output_type") == "error" and out.get("ename") == "TimeoutError":
                return "a cell's output did not arrive in time"
    ran = [c for c in code if "".join(c.get("source", "")).strip()]
    if ran and all(_executed(c) for c in ran) and not any(c.get("outputs") for c in code):
        return "no code cell has an output"
    return ""


def _executed(cell) -> bool:
    """Whether nbclient has the cell's ``execute_reply`` (Voilà runs cells without
    ``store_history``: no execution count, but nbclient's timing record)."""
    timing = cell.get("metadata", {}).get("execution", {})
    return cell.get("execution_count") is not None or "shell.execute_reply" in timing


def page_lost_output(nb) -> str:
    """:func:`lost_output`, logged for the operator when the page's output is lost (the page
    template's filter :func:`page_end` asks it)."""
    reason = lost_output(nb)
    if reason:
        log.warning(
            "dpexplore: a page was rendered without its output (%s); the page retries with a fresh kernel", reason
        )
    return reason


async def _discard(km, kernel_id: str, renderer, render_task) -> None:
    """Shut down a pooled kernel that will not be handed out, with the renderer's client."""
    try:
        _, rest = render_task.result()
        await rest.aclose()
    except Exception:  # noqa: BLE001 - best effort: the kernel goes anyway
        pass
    try:
        renderer.executor.kc.stop_channels()
    except Exception:  # noqa: BLE001
        pass
    try:
        await km.shutdown_kernel(kernel_id)
    except Exception:  # noqa: BLE001 - already gone
        pass


#: how many times in a row a page that came up without its dashboard reloads itself (counted per
#: page address in the browser tab's sessionStorage)
PAGE_RETRIES = 3

_NOTICE_STYLE = (
    "position:fixed;top:0;left:0;right:0;z-index:10000;padding:1em 2em;background:#fff4ce;"
    "color:#222;border-bottom:2px solid #c19c00;font:16px/1.5 system-ui,sans-serif"
)


def retry_notice(message: str, shutdown_url_js: str = "") -> str:
    """The end of a page that came up without its dashboard: an alert saying ``message`` (plain
    text) and that the page retries, then a reload (a fresh kernel) after 3 s, at most
    :data:`PAGE_RETRIES` times in a row; after that the alert asks the visitor to reload later.

    ``shutdown_url_js``, a JavaScript expression, is the URL the page beacons before reloading to
    shut its useless kernel down now (the culler would, a minute later). The alert stays on top of
    Voila's front end, which replaces the body's children by its own shell. The page that has its
    output resets the count (:data:`RETRY_RESET`).
    """
    shutdown = f"\n    try {{ navigator.sendBeacon({shutdown_url_js}); }} catch (e) {{}}" if shutdown_url_js else ""
    return f"""<div id="dpexplore-lost-output" role="alert" style="{_NOTICE_STYLE}">{html.escape(message)}
<span id="dpexplore-retry-note"></span></div>
<script>(function () {{
  var box = document.getElementById("dpexplore-lost-output");
  var key = "dpexplore-retry:" + location.pathname, n = {PAGE_RETRIES}, store = null, k = 0;
  try {{ store = window.sessionStorage; k = Number(store.getItem(key) || 0); }} catch (e) {{ store = null; }}
  var again = store !== null && k < n;  // no count kept: no automatic reload
  document.getElementById("dpexplore-retry-note").textContent = again
    ? "Retrying with a fresh one… (" + (k + 1) + " of " + n + ")"
    : "It did not work after " + n + " tries: please reload this page in a minute.";
  if (document.body) {{
    var show = function () {{ if (!document.body.contains(box)) document.body.appendChild(box); }};
    show();
    new MutationObserver(show).observe(document.body, {{ childList: true }});
  }}
  console.warn("dpexplore: the page has no output" + (again ? "; reloading" : ""));
  try {{ if (again) store.setItem(key, k + 1); else if (store) store.removeItem(key); }} catch (e) {{}}
  if (again) setTimeout(function () {{{shutdown}
    location.reload();
  }}, 3000);
}})();</script>
"""


#: the end of a page that has its dashboard: it resets :func:`retry_notice`'s count
RETRY_RESET = """<script>(function () {
  try { sessionStorage.removeItem("dpexplore-retry:" + location.pathname); } catch (e) {}
})();</script>
"""


def page_end(nb, base_url: str = "/") -> str:
    """The page template's last words (Jinja filter ``dpexplore_page_end``, set in
    ``voila.json``): :func:`retry_notice` when the executed notebook ``nb`` lacks its output
    (:func:`page_lost_output`, which logs it), with a beacon that shuts the page's kernel down,
    else :data:`RETRY_RESET`."""
    reason = page_lost_output(nb)
    if not reason:
        return RETRY_RESET
    prefix = json.dumps(base_url + "voila/api/shutdown/").replace("<", "\\u003c")  # no "</script>"
    kernel_url = prefix + " + JSON.parse(document.getElementById('jupyter-config-data').textContent).kernelId"
    return retry_notice(
        "This page came up without its dashboard: the server was too busy to finish preparing it.", kernel_url
    )


#: the end of a page whose notebook could not run (its kernel died at start): says so and reloads
#: the page, which starts a fresh kernel (:func:`retry_notice`)
PAGE_NOT_STARTED = retry_notice("This page could not start its dashboard: the server was too busy.")


async def _shut_down_page_kernel(handler, kernel_id) -> None:
    """Shut down kernel ``kernel_id`` of the page ``handler`` serves, if it is still listed (its
    restarter stops with it); any failure is logged, the page ends all the same."""
    km = getattr(handler, "kernel_manager", None)
    if km is None or not kernel_id:
        return
    try:
        if kernel_id in km:
            await km.shutdown_kernel(kernel_id, now=True)
    except Exception as e:  # noqa: BLE001 - best effort: the culler is the backstop
        log.warning(
            "dpexplore: the kernel of a page that could not start was not shut down (%s: %s)", type(e).__name__, e
        )


def guard_page_start() -> None:
    """A page whose kernel dies before the notebook runs ends with :data:`PAGE_NOT_STARTED`.

    Voilà renders a page from ``NotebookRenderer.generate_content_generator`` in a background task
    (``put_html`` in ``VoilaHandler.get``) that puts the page's pieces in a queue and a ``None``
    at the end. When the kernel died at start (a kernel port taken by another kernel starting at
    the same moment: ``Kernel died before replying to kernel_info``) the task raised, the ``None``
    never came, and the page's GET stayed open for ever, sending a heartbeat every 10 s: a blank
    page that never finished loading. Here the generator's error is logged for the operator and
    the page gets its end, which says so and reloads. Patched once, for every renderer.

    The page's kernel is shut down there: the page reloads with a fresh one, and the kernel
    server's restarter would otherwise bring the dead kernel back (a few seconds later, on new
    ports) as a kernel no page holds, which no page close reaches: it held its memory and a place
    under the page cap until the idle culler came (10 minutes on the hub's apps-only server).
    """
    from voila.notebook_renderer import NotebookRenderer

    orig = NotebookRenderer.generate_content_generator
    if getattr(orig, "dpexplore_guarded", False):
        return

    def generate_content_generator(self, *args, **kwargs):
        inner = orig(self, *args, **kwargs)
        kernel_id = kwargs.get("kernel_id", args[0] if args else None)

        async def guarded():
            try:
                async for item in inner:
                    yield item
            except Exception as e:  # noqa: BLE001 - the page must end whatever failed
                log.warning(
                    "dpexplore: a page's notebook could not run (%s: %s); the page says so and reloads",
                    type(e).__name__,
                    str(e)[:300],
                )
                await _shut_down_page_kernel(getattr(self, "request_handler", None), kernel_id)
                yield PAGE_NOT_STARTED, None

        return guarded()

    generate_content_generator.dpexplore_guarded = True
    NotebookRenderer.generate_content_generator = generate_content_generator


def guard_pool(km, attempts: int = HANDOUT_ATTEMPTS) -> None:
    """Make ``km.get_rendered_notebook`` (Voilà's hand-out of a pooled kernel) hand out only a
    kernel whose notebook has its output.

    The pooled notebook run is awaited (the page waited for it anyway, right after the part of the
    page already rendered) and judged by :func:`lost_output`; a kernel that lost its output is
    shut down and the next pool entry is taken (the pool refills itself as each entry is taken).
    After ``attempts`` tries the last kernel is handed out as it is: the page then says so and
    retries by itself. A no-op without a kernel pool.
    """
    orig = getattr(km, "get_rendered_notebook", None)
    if orig is None:
        return

    async def get_rendered_notebook(notebook_name, *args, **kwargs):
        for attempt in range(1, attempts + 1):
            pool = getattr(km, "_pools", {}).get(notebook_name) or []
            entry = pool[0] if pool else None
            out = await orig(notebook_name, *args, **kwargs)
            render_task, _, kernel_id = out
            try:
                renderer = entry.result()["renderer"]
                await asyncio.shield(render_task)
                reason = lost_output(renderer.executor.nb)
            except Exception:  # noqa: BLE001 - not judged: Voila's handler reports its failure
                return out
            if not reason:
                return out
            if attempt == attempts:
                log.warning(
                    "dpexplore: pooled kernel %s for %s lost its output (%s); tried %d "
                    "kernels, handing it out (the page retries)",
                    kernel_id,
                    notebook_name,
                    reason,
                    attempts,
                )
                return out
            log.warning(
                "dpexplore: pooled kernel %s for %s lost its output (%s): discarded, the page takes the next one",
                kernel_id,
                notebook_name,
                reason,
            )
            await _discard(km, kernel_id, renderer, render_task)
        return out  # pragma: no cover - the loop returns

    km.get_rendered_notebook = get_rendered_notebook


class FillGate:
    """Refilling the pool never starves the open pages.

    Voilà starts every missing pool kernel at once (a pool of 30 handed out to a class started 30
    kernels and 30 notebook runs together, and the pages that had just opened waited behind them:
    every slider move went unanswered). Here a pool entry's kernel start and notebook run wait
    for one of ``slots`` places (one place per two cores by default), and while pages are in use
    (:meth:`pages_busy`: a kernel handed to a page had IOPub traffic, e.g. a slider move, in the
    last ``quiet`` seconds) refills start at most one per ``max_wait`` seconds (a notebook's first
    fill only waits for a place): a class that has
    just arrived gets the CPU, and the pool fills up again when it pauses. An entry a page is
    waiting for (:meth:`demand`) goes at once, without a place. Pages that start their own kernel
    (an empty pool) are not gated.

    Lowering the fills' CPU priority instead is not possible unprivileged: a kernel niced (or put
    in ``SCHED_IDLE``) for its pool run cannot be given its priority back when a page takes it,
    without ``CAP_SYS_NICE`` (Linux ``can_nice``, ``RLIMIT_NICE`` 0 by default).

    >>> FillGate(slots=0)
    Traceback (most recent call last):
    ...
    ValueError: slots must be >= 1, got 0
    """

    def __init__(self, slots: int | None = None, quiet: float = 2.0, max_wait: float = 30.0, clock=None):
        import os
        import time

        if slots is None:
            slots = max(1, (os.cpu_count() or 2) // 2)
        if slots < 1:
            raise ValueError(f"slots must be >= 1, got {slots}")
        self.slots, self.quiet, self.max_wait = slots, quiet, max_wait
        self._clock = clock or time.monotonic
        self.running = 0
        self.last_start = -1e9
        #: whether pages are in use (set by :func:`gate_pool_fills`; never, by default)
        self.pages_busy = lambda: False
        self._demanded: set = set()
        self._holders: set = set()

    def demand(self, entry) -> None:
        """A page waits for pool entry ``entry`` (its task): it goes without waiting."""
        if entry is not None and not entry.done():
            self._demanded.add(entry)
            entry.add_done_callback(self._demanded.discard)

    async def acquire(self, entry, refill: bool = True) -> None:
        """Wait for a place (or for a page demanding ``entry``); :meth:`release` gives it back.
        A first fill (``refill`` False: the notebook's pool never gave a kernel out) does not
        wait for the pages to be quiet."""
        while entry not in self._demanded:
            if self.running < self.slots and (
                not refill or self._clock() - self.last_start >= self.max_wait or not self.pages_busy()
            ):
                self.running += 1
                self.last_start = self._clock()
                self._holders.add(entry)
                return
            await asyncio.sleep(0.25)

    def release(self, entry) -> None:
        if entry in self._holders:
            self._holders.discard(entry)
            self.running -= 1


def gate_pool_fills(km, gate: FillGate) -> None:
    """Make Voilà's pool fills (``VoilaKernelManager._initialize``: renderer, kernel start,
    notebook run) wait at ``gate``. The fill's first step, ``renderer.initialize()``, waits for a
    place; the place is given back when the notebook run ends (``generate_content_hybrid``), or
    when the fill fails before it. Hand-outs (``get_rendered_notebook``) demand the entry they
    take. Pages are busy when a kernel not in the pool had IOPub activity (jupyter_server's
    ``last_activity``) in the last ``gate.quiet`` seconds. A no-op without a kernel pool."""
    factory = getattr(km, "_notebook_renderer_factory", None)
    handout = getattr(km, "get_rendered_notebook", None)
    if factory is None or handout is None:
        return
    import datetime

    pooled: set = set()  # kernels started by a fill and not handed out
    km.dpexplore_pooled = pooled  # read by hardening.open_pages: the page cap counts pages only
    cache = {"t": -1e9, "busy": False}

    def pages_busy() -> bool:
        now = gate._clock()
        if now - cache["t"] >= 0.5:  # checked at most twice a second
            since = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=gate.quiet)
            busy, ids = False, list(km.list_kernel_ids())
            pooled.intersection_update(ids)  # forget the kernels shut down
            for kid in ids:
                if kid in pooled:
                    continue
                try:
                    last = km.get_kernel(kid).last_activity
                except (KeyError, AttributeError):
                    continue
                if last is not None and last >= since:
                    busy = True
                    break
            cache.update(t=now, busy=busy)
        return cache["busy"]

    gate.pages_busy = pages_busy

    def _release_if_failed(task):
        if task.cancelled() or task.exception() is not None:
            gate.release(task)  # no notebook run will give the place back

    handed: set = set()  # notebooks whose pool gave a kernel out: their fills are refills

    def gated_factory(notebook_path=None, *args, **kwargs):
        renderer = factory(notebook_path, *args, **kwargs)
        init, generate = renderer.initialize, renderer.generate_content_hybrid
        entry = None

        async def initialize(*a, **kw):
            nonlocal entry
            entry = asyncio.current_task()
            await gate.acquire(entry, refill=notebook_path in handed)
            entry.add_done_callback(_release_if_failed)
            return await init(*a, **kw)

        async def generate_content_hybrid(kernel_id=None, *a, **kw):
            pooled.add(kernel_id)
            try:
                return await generate(kernel_id, *a, **kw)
            finally:
                gate.release(entry)

        renderer.initialize = initialize
        renderer.generate_content_hybrid = generate_content_hybrid
        return renderer

    async def get_rendered_notebook(notebook_name, *args, **kwargs):
        pool = getattr(km, "_pools", {}).get(notebook_name) or []
        if pool:
            gate.demand(pool[0])
        handed.add(notebook_name)
        out = await handout(notebook_name, *args, **kwargs)
        pooled.discard(out[2])  # a page's kernel from now on
        return out

    km._notebook_renderer_factory = gated_factory
    km.get_rendered_notebook = get_rendered_notebook


def lecture_pools(expect: int, apps: list[str], default_pool_size: int = 1) -> dict:
    """Voilà's ``VoilaKernelManager.kernel_pools_config`` for a host who knows a class of
    ``expect`` students will open ``apps`` (notebook names) together (``dpexplore serve --expect
    30 --apps rdp_explorer,composition_explorer``): each of those apps keeps ``ceil(expect /
    len(apps))`` kernels ready (at least the default pool size), filled before the class comes and
    refilled one at a time after it (:class:`FillGate`); every other notebook keeps the default.

    >>> lecture_pools(30, ["rdp_explorer.ipynb", "demo.ipynb"])["demo.ipynb"]
    {'pool_size': 15}
    >>> lecture_pools(0, ["demo.ipynb"])
    Traceback (most recent call last):
    ...
    ValueError: expect must be >= 1, got 0
    """
    if expect < 1:
        raise ValueError(f"expect must be >= 1, got {expect}")
    if not apps:
        raise ValueError(f"apps must name at least one notebook, got {apps!r}")
    per = max(-(-expect // len(apps)), default_pool_size)
    return {"default": {"pool_size": max(default_pool_size, 0)}, **{name: {"pool_size": per} for name in apps}}
