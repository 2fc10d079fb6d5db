"""Bounds on what one browser can make the server do: the one hardening of both entry points,
``dpexplore serve`` (:class:`DPExploreVoila`, a standalone Voilà) and the apps-only single-user
server of a JupyterHub class (:mod:`dpexplore.voila.apps_only`, a Jupyter server extension).
:func:`hardened_class` maps each Voilà / Jupyter server handler class to its bounded version
below; :data:`WIDGET_MESSAGES` are the only kernel messages a page may send.

:class:`SafeKernelWebsocketHandler` replaces Voilà 0.5's kernel websocket handler. Voilà's
``write_message`` parses every outgoing binary frame as a frame of the v1 kernel-websocket
protocol to find its header (it drops ``execute_input`` messages). For a client that connected
without a subprotocol (the older plain-JSON protocol) the frames are not v1: it read the first 8
bytes of a legacy frame as a buffer count (~8.6e17) and built a list that long on the server's
only event-loop thread. One widget message with a binary buffer froze every page of every visitor
and ran the memory up by gigabytes. Here the header is read only from v1 frames, with every count
and offset checked against the frame's length; a frame that does not parse has no header (and is
forwarded as it is: ``execute_input``, the only message Voilà filters, never carries buffers).

>>> frame = v1_frame({"msg_type": "comm_msg"})
>>> read_v1_header(frame)["msg_type"]
'comm_msg'
>>> read_v1_header((8 * 10**17).to_bytes(8, "little") + b"x" * 100) is None
True
"""

from __future__ import annotations

import contextvars
import inspect
import json
import logging
import re
import time

from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection
from jupyter_server.services.kernels.websocket import KernelWebsocketHandler
from tornado import web
from voila.shutdown_kernel_handler import VoilaShutdownKernelHandler
from voila.tornado.handler import TornadoVoilaHandler
from voila.tornado.kernel_websocket_handler import VoilaKernelWebsocketHandler

__all__ = [
    "SafeKernelWebsocketHandler",
    "PageCloseShutdownHandler",
    "CappedVoilaHandler",
    "hardened_class",
    "WIDGET_MESSAGES",
    "PageStarts",
    "page_starts",
    "default_max_kernels",
    "default_max_pages",
    "open_pages",
    "PAGES_PER_CPU",
    "leaks",
    "read_v1_header",
    "read_v1_part",
    "kernel_text",
    "v1_frame",
    "V1_SUBPROTOCOL",
    "MAX_PARTS",
    "KERNEL_MIB",
    "LOG_CHARS",
    "PlainErrorConnection",
    "MAX_MESSAGE_BYTES",
]

#: the subprotocol name of jupyter_server's v1 kernel websocket protocol
V1_SUBPROTOCOL = "v1.kernel.websocket.jupyter.org"
#: a v1 frame has channel, header, parent header, metadata, content and its buffers: a frame that
#: claims more parts than this is not parsed
MAX_PARTS = 64
#: the kernel messages a dashboard page may send (widget comms, kernel info, its own shutdown):
#: Voilà's standalone list (``voila.app``), set on the kernel manager of the apps-only server too;
#: anything else (``execute_request``, ``complete_request``, ...) is dropped by jupyter_server
#: before it reaches the kernel
WIDGET_MESSAGES = (
    "comm_open",
    "comm_close",
    "comm_msg",
    "comm_info_request",
    "kernel_info_request",
    "shutdown_request",
)


def read_v1_header(frame: bytes) -> dict | None:
    """The header of a v1 binary frame, or ``None`` if the frame is not a well-formed v1 frame.

    A v1 frame starts with n (8 bytes, little-endian), then n offsets (8 bytes each); part 1
    (between offsets 1 and 2) is the JSON header. Work is bounded by :data:`MAX_PARTS` whatever
    the frame says.
    """
    return read_v1_part(frame, 1)


def read_v1_part(frame: bytes, index: int) -> dict | None:
    """Part ``index`` of a v1 binary frame as a JSON object (1: header, 4: content), or ``None``
    if the frame is not a well-formed v1 frame (bounded as :func:`read_v1_header`).

    >>> read_v1_part(v1_frame({"msg_type": "stream"}, content={"text": "hi"}), 4)
    {'text': 'hi'}
    """
    size = len(frame)
    if size < 8:
        return None
    n = int.from_bytes(frame[:8], "little")
    if not 3 <= n <= MAX_PARTS or not 0 <= index < n - 1 or 8 * (n + 1) > size:
        return None
    offsets = [int.from_bytes(frame[8 * (i + 1) : 8 * (i + 2)], "little") for i in range(n)]
    if any(not (0 <= a <= b <= size) for a, b in zip(offsets, offsets[1:])):
        return None
    try:
        part = json.loads(frame[offsets[index] : offsets[index + 1]].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return part if isinstance(part, dict) else None


def v1_frame(header: dict, channel: str = "iopub", content: dict | None = None) -> bytes:
    """A v1 frame as jupyter_server writes it (for tests and doctests): the offsets of channel,
    header, parent header, metadata and content, and of the frame's end."""
    parts = [channel.encode(), json.dumps(header).encode(), b"{}", b"{}", json.dumps(content or {}).encode()]
    offsets = [8 * (len(parts) + 2)]
    for p in parts:
        offsets.append(offsets[-1] + len(p))
    return len(offsets).to_bytes(8, "little") + b"".join(o.to_bytes(8, "little") for o in offsets) + b"".join(parts)


_LOG_STATE: dict = {}
log = logging.getLogger("dpexplore.voila")


def _allow(key: str, every: float, burst: int) -> int | None:
    """Rate limit of the log lines of one ``key``: ``None`` when a line now would be past
    ``burst`` lines per ``every`` seconds, else the count of lines left out before it."""
    now = time.monotonic()
    if len(_LOG_STATE) > 4096:  # one key per kernel: forget the quiet ones
        for k in [k for k, v in _LOG_STATE.items() if now - v["t"] >= 3600]:
            del _LOG_STATE[k]
    state = _LOG_STATE.setdefault(key, {"t": now - every, "n": 0, "sent": 0})
    state["n"] += 1
    if now - state["t"] >= every:
        state["t"], state["sent"] = now, 0
    if state["sent"] >= burst:
        return None
    state["sent"] += 1
    skipped, state["n"] = state["n"] - 1, 0
    return skipped


def _log_limited(text: str, every: float = 10.0, key: str | None = None, burst: int = 1) -> None:
    """Log ``text`` at most ``burst`` times per ``every`` seconds for lines of the same ``key``
    (default: the text itself), with the count of the ones not logged (a client sending a
    thousand hostile messages made a thousand log lines)."""
    skipped = _allow(key if key is not None else text, every, burst)
    if skipped is not None:
        log.warning("%s%s", text, f" ({skipped} such lines not logged before this one)" if skipped else "")


#: characters of one kernel message kept off the page that go to the server log
LOG_CHARS = 3000
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def kernel_text(content: dict | None, limit: int = LOG_CHARS) -> str:
    """The text of a ``stream`` or ``error`` message's content, for the server log: the stream's
    text, or the error's traceback (colour codes removed), truncated to ``limit`` characters.

    >>> kernel_text({"ename": "ValueError", "evalue": "bad", "traceback": ["\x1b[31mValueError\x1b[0m: bad"]})
    'ValueError: bad'
    >>> kernel_text({"name": "stderr", "text": "x" * 10}, limit=4)
    'xxxx… (10 characters)'
    """
    if not isinstance(content, dict):
        return "(unreadable message)"
    if isinstance(content.get("traceback"), list) and content["traceback"]:
        text = "\n".join(str(t) for t in content["traceback"][:200])
    elif "text" in content:
        text = str(content["text"])
    else:
        text = f"{content.get('ename', '')}: {content.get('evalue', '')}"
    text = _ANSI.sub("", text).rstrip()
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def _content(message, v1: bool) -> dict | None:
    """The content of an outgoing kernel message (v1 frame, dict or legacy JSON text)."""
    if isinstance(message, bytes):
        return read_v1_part(message, 4) if v1 else None
    if isinstance(message, dict):
        return message.get("content")
    try:
        return json.loads(message).get("content")
    except (ValueError, AttributeError, TypeError):
        return None


def leaks(message) -> bool:
    """Whether an outgoing ``stream``/``error`` message carries a Python traceback, a server path
    or anything written to stderr (a hostile comm message made the kernel print its traceback,
    with the server's file paths, to the page).

    >>> leaks('{"content": {"name": "stderr", "text": "Traceback (most recent call last)"}}')
    True
    >>> leaks('{"content": {"name": "stdout", "text": "hello"}}')
    False
    """
    if isinstance(message, (bytes, bytearray, memoryview)):
        message = bytes(message).decode("utf-8", "replace")
    elif isinstance(message, dict):
        message = json.dumps(message, default=str)
    if not isinstance(message, str):
        return False
    return any(s in message for s in ("Traceback", '"traceback"', "site-packages", 'File \\"', "stderr"))


def _legacy_header(message: str) -> dict | None:
    """The header of a legacy-protocol (plain JSON) message, parsed only when it is a stream or
    error message (the only ones filtered), from a bounded prefix test."""
    head = message[:800]
    if '"msg_type": "stream"' not in head and '"msg_type": "error"' not in head:
        return None
    try:
        header = json.loads(message).get("header")
    except (ValueError, AttributeError):
        return None
    return header if isinstance(header, dict) else None


def _log_kernel_output(kernel_id, kind: str, content) -> None:
    """Log a kernel's ``stream``/``error`` output that was kept off its page: at most 5 messages
    a minute per kernel and 30 in all, each cut at :data:`LOG_CHARS` characters, with the count
    of those left out. ``content`` may be a function that returns it (read only if logged)."""
    skipped = _allow(f"kernel-output:{kernel_id}", 60.0, 5)
    if skipped is not None and _allow("kernel-output", 60.0, 30) is not None:
        log.warning(
            "dpexplore: kernel %s %s output kept off the page%s:\n%s",
            kernel_id,
            kind,
            f" ({skipped} more from it not logged)" if skipped else "",
            kernel_text(content() if callable(content) else content),
        )


#: the ``ename`` of a kernel error whose traceback :class:`PlainErrorConnection` replaced (and
#: logged)
PLAIN_ENAME = "ExecutionError"


class PlainErrorConnection(ZMQChannelsWebsocketConnection):
    """jupyter_server's kernel websocket connection, whose "no tracebacks" mode works.

    With the kernel manager's ``allow_tracebacks`` off (the apps-only server, ``dpexplore
    serve``), jupyter_server 2 replaces an ``error`` message's traceback by reading
    ``traceback_replacement_message`` from the kernel's own manager (``ServerKernelManager``),
    which has no such attribute: the ``AttributeError`` was raised in the kernel's IOPub callback
    of every page connected to the kernel. That page's output channel stopped: any error in an
    app (a widget value the app refuses, a 5 MB string sent as a slider's value) left the page
    dead, its slider moves unanswered. Here the message is read from the kernel manager that has
    it (the multi-kernel manager, configurable there), and the error's real traceback goes to the
    server log (rate-limited, as :class:`SafeKernelWebsocketHandler` logs kernel output).
    """

    def _on_error(self, channel, msg, msg_list):
        mkm = self.multi_kernel_manager
        if getattr(mkm, "allow_tracebacks", True) or channel != "iopub":
            return
        header = self.get_part("header", msg["header"], msg_list)
        msg["header"] = header
        if not isinstance(header, dict) or header.get("msg_type") != "error":
            return
        content = self.get_part("content", msg["content"], msg_list)
        _log_kernel_output(self.kernel_id, "error", content)
        content = {
            **(content if isinstance(content, dict) else {}),
            "ename": PLAIN_ENAME,
            "evalue": "Execution error",
            "traceback": [
                getattr(mkm, "traceback_replacement_message", "An error occurred; it is in the server's log.")
            ],
        }
        msg["content"] = content
        if self.subprotocol == V1_SUBPROTOCOL:
            msg_list[3] = self.session.pack(content)


#: the largest message a page may send over its kernel websocket (bytes). A dashboard sends widget
#: updates of a few hundred bytes; tornado's default (10 MiB) let one client make its kernel parse
#: and answer megabytes per message. A larger message closes that client's websocket (code 1009,
#: "message too big"); the page says so (``templates/dpexplore/index.html.j2``).
MAX_MESSAGE_BYTES = 1 << 20


class SafeKernelWebsocketHandler(VoilaKernelWebsocketHandler):
    """Voilà's kernel websocket handler, with the outgoing header read safely (module docstring),
    and no kernel traceback sent to the page: its text goes to the server log instead (at most 5
    messages a minute per kernel and 30 in all, each cut at :data:`LOG_CHARS` characters, with the
    count of those left out). Messages from the page are bounded (:data:`MAX_MESSAGE_BYTES`,
    ``dpexplore_max_message_bytes`` in the application settings), and the kernel connection is a
    :class:`PlainErrorConnection` (unless the server uses another kind than jupyter_server's
    default, a gateway say)."""

    @property
    def max_message_size(self) -> int:
        return int(self.settings.get("dpexplore_max_message_bytes") or MAX_MESSAGE_BYTES)

    @property
    def kernel_websocket_connection_class(self):
        cls = self.settings.get("kernel_websocket_connection_class")
        return PlainErrorConnection if cls in (None, ZMQChannelsWebsocketConnection) else cls

    def write_message(self, message, binary: bool = False):
        if isinstance(message, bytes):
            v1 = getattr(self, "selected_subprotocol", None) == V1_SUBPROTOCOL
            header = read_v1_header(message) if v1 else None
        elif isinstance(message, dict):
            header = message.get("header")
        elif isinstance(message, str):
            header = _legacy_header(message)
        else:
            header = None
        kind = header.get("msg_type") if isinstance(header, dict) else None
        if kind == "execute_input":
            return None  # as Voilà: the page never sees the code its kernel runs
        if kind in ("stream", "error") and leaks(message):
            # kept off the page; the operator reads it in the server log
            v1 = isinstance(message, bytes) and header is not None
            if kind == "error":
                content = _content(message, v1)
                if isinstance(content, dict) and content.get("ename") == PLAIN_ENAME:
                    return None  # its traceback was logged by PlainErrorConnection
            _log_kernel_output(getattr(self, "kernel_id", "?"), kind, lambda: _content(message, v1))
            return None
        # skip VoilaKernelWebsocketHandler.write_message (the unsafe parse), not the base class
        return super(VoilaKernelWebsocketHandler, self).write_message(message, binary)


class PageCloseShutdownHandler(VoilaShutdownKernelHandler):
    """Voilà's "shut my kernel down" call, made by the page when it closes, that works.

    The page sends it without an ``_xsrf`` token, so Voilà 0.5 answered 403 and every closed tab
    held its kernel (~140 MB) until the idle culler came, 60–75 s later. The call is accepted
    without the token when it comes from the page's own origin (a cross-site request is refused):
    a kernel id is an unguessable UUID that only its page knows, and the call can only shut that
    kernel down. An unknown id answers 404. The culler stays as the backstop.
    """

    def check_xsrf_cookie(self):
        # Called twice: by the authentication, before the user is known (JupyterHub's cookie
        # check asks it), then by jupyter_server's ``prepare`` once it is. ``check_origin`` asks
        # the identity provider whether the request was token-authenticated, which reads
        # ``self.current_user``: before the user is known that ran the deprecated
        # ``get_current_user()``, which raises, and under the hub every page close answered 500
        # (kernels of left pages stayed, a student's page cap filled up). The check waits for the
        # second call, as jupyter_server's own ``check_xsrf_cookie`` does.
        if not hasattr(self, "_jupyter_current_user"):
            return
        origin = self.request.headers.get("Origin")
        if origin is not None and not self.check_origin(origin):
            raise web.HTTPError(403, "cross-origin kernel shutdown")

    async def post(self, kernel_id):
        if kernel_id not in self.kernel_manager:
            raise web.HTTPError(404)
        await super().post(kernel_id)


#: memory of one app kernel, MiB (measured per app: 72–151 MiB RSS), rounded up for the cap
KERNEL_MIB = 160

SERVER_FULL = """<!doctype html><html><head><meta charset="utf-8"><title>The server is full</title></head>
<body style="font-family:system-ui,sans-serif;max-width:40em;margin:4em auto;line-height:1.5">
<h1>The server is full</h1><p>Every app page runs its own computation on this server, and it is
already running as many as it can hold ({cap}). Pages that are open keep working. Please try again
in a minute, or close a tab you no longer use.</p></body></html>"""


def default_max_kernels(meminfo: str = "/proc/meminfo") -> int:
    """The default cap on concurrent kernels: half the machine's memory (MemTotal) divided by
    :data:`KERNEL_MIB`, at least 8 (a machine without /proc/meminfo gets 32).

    >>> default_max_kernels("/nonexistent")
    32
    """
    try:
        with open(meminfo, encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    total_mib = int(line.split()[1]) / 1024
                    return max(8, int(total_mib * 0.5 / KERNEL_MIB))
    except OSError:
        pass
    return 32


#: open pages per core that keep a slider answered: on the 2-core test machine 30 pages moving a
#: slider once a second each are the most it answers in time (docs/results.md, "A class arriving at
#: once"); past that every page open is slowed, so the default page cap stops there
PAGES_PER_CPU = 15


def default_max_pages(cpus: int | None = None) -> int:
    """The default cap on open pages: :data:`PAGES_PER_CPU` per core (``os.cpu_count()``), at
    least 8. The kernel cap (:func:`default_max_kernels`) bounds memory; this one bounds CPU: a
    class larger than the machine can answer gets the "server is full" page for the pages past it,
    and the pages already open keep their speed.

    >>> default_max_pages(2), default_max_pages(1), default_max_pages(16)
    (30, 15, 240)
    """
    import os

    if cpus is None:
        cpus = os.cpu_count() or 2
    if cpus < 1:
        raise ValueError(f"cpus must be >= 1, got {cpus}")
    return max(8, PAGES_PER_CPU * cpus)


def open_pages(km) -> int:
    """Kernels that pages hold. Once pages have been served (:func:`page_starts` installed): the
    running kernels that a page's GET was given (:attr:`PageStarts.pages`). Before: every kernel
    of ``km`` except the pooled ones not yet handed out (``km.dpexplore_pooled``, kept by
    :func:`dpexplore.voila.pool.gate_pool_fills`).

    Counting the kernels given to pages, not all kernels but the pool's, matters in a burst: a
    pool kernel being started is listed by the kernel manager before the pool marks it as pooled,
    and counted as a page meanwhile, so the 30th of 30 students got "server full" at a cap of 30.

    >>> class KM:
    ...     dpexplore_pooled = {"b"}
    ...     def list_kernel_ids(self): return ["a", "b", "c"]
    >>> open_pages(KM())
    2
    >>> km = KM(); km.dpexplore_page_starts = PageStarts(); km.dpexplore_page_starts.pages = {"a", "x"}
    >>> open_pages(km)   # "x" has ended
    1
    """
    starts = getattr(km, "dpexplore_page_starts", None)
    if starts is not None:
        starts.pages.intersection_update(km.list_kernel_ids())  # forget the ended ones
        return len(starts.pages)
    pooled = getattr(km, "dpexplore_pooled", None) or ()
    return len(set(km.list_kernel_ids()).difference(pooled))


#: the page start that the running coroutine (a page's GET) reserved, if any
_RESERVATION: contextvars.ContextVar = contextvars.ContextVar("dpexplore_page_start", default=None)


class PageStarts:
    """The page starts under way: a cap counted atomically.

    A page's GET starts (or takes from the pool) its kernel several awaits after it arrives, and
    the kernel is listed by the kernel manager only once it has started. Counting the kernels
    when a GET arrives let every GET of a burst pass: ten pages requested at the same moment got
    ten kernels where the cap was 5. Here a GET that passes the caps reserves a place at once,
    before any await (:meth:`reserve`), and every later GET counts the places reserved as well as
    the kernels listed. A place is given back when the page's kernel is listed (the kernel
    manager's ``start_kernel`` or the pool's ``get_rendered_notebook`` returned it: from then on
    the kernel itself is counted, until it is shut down) or when the GET ends without one (the
    kernel start failed, the client went away). Installed on the kernel manager on first use
    (:func:`page_starts`), for both entry points.

    >>> class KM:
    ...     def list_kernel_ids(self): return ["a"]
    >>> starts = PageStarts()
    >>> starts.refusal(KM(), max_kernels=2, max_pages=0) is None
    True
    >>> token = starts.reserve()
    >>> starts.refusal(KM(), max_kernels=2, max_pages=0)
    (2, 'kernels running')
    >>> starts.release(token); starts.refusal(KM(), max_kernels=2, max_pages=0) is None
    True
    """

    def __init__(self):
        self.pending: set = set()
        #: the kernels given to pages (those still running are the open pages: :func:`open_pages`)
        self.pages: set = set()

    def refusal(self, km, max_kernels: int, max_pages: int) -> tuple[int, str] | None:
        """``(cap, what)`` when one more page would pass a cap (0: none), else ``None``."""
        n = len(self.pending)
        if max_kernels and len(km.list_kernel_ids()) + n >= max_kernels:
            return max_kernels, "kernels running"
        if max_pages and open_pages(km) + n >= max_pages:
            return max_pages, "pages open"
        return None

    def reserve(self) -> object:
        """A place for the page being started (no await between :meth:`refusal` and this)."""
        token = object()
        self.pending.add(token)
        return token

    def release(self, token) -> None:
        self.pending.discard(token)


def page_starts(km) -> PageStarts:
    """The :class:`PageStarts` of kernel manager ``km``, installed on first call: its
    ``start_kernel`` and (with a pool) ``get_rendered_notebook`` give the calling page's
    reservation back when they return its kernel."""
    starts = getattr(km, "dpexplore_page_starts", None)
    if starts is not None:
        return starts
    starts = km.dpexplore_page_starts = PageStarts()

    def releasing(method):
        async def wrapper(*args, **kwargs):
            out = method(*args, **kwargs)
            if inspect.isawaitable(out):
                out = await out
            token = _RESERVATION.get()
            if token is not None:  # the kernel is listed now: it counts for itself
                kernel_id = out[2] if isinstance(out, tuple) else out
                if isinstance(kernel_id, str):
                    starts.pages.add(kernel_id)
                starts.release(token)
            return out

        return wrapper

    for name in ("start_kernel", "get_rendered_notebook"):
        method = getattr(km, name, None)
        if method is not None:
            setattr(km, name, releasing(method))
    return starts


class CappedVoilaHandler(TornadoVoilaHandler):
    """Voilà's page handler with two caps, each 0 for none: on concurrent kernels
    (``dpexplore_max_kernels`` in the application settings: each page GET starts, or takes from
    the pool, which then refills, a kernel of ~150 MB, so without a cap plain GETs could exhaust
    the machine's memory) and on open pages (``dpexplore_max_pages``: kernels that pages hold,
    the pool's ready kernels not counted; each open page's slider moves cost CPU, and past what the
    cores answer every page is slowed). Past either cap a page answers 503 in plain words; pages
    already open keep their kernels. The pages being started count too (:class:`PageStarts`): a
    burst of requests cannot pass a cap."""

    def initialize(self, **kwargs):
        super().initialize(**kwargs)
        # dpexplore's page template (templates/dpexplore) first, on a server that asks for it
        # (the apps-only server: dpexplore serve puts it in its app's template paths)
        extra = self.settings.get("dpexplore_template_dir")
        if extra and extra not in self.template_paths:
            self.template_paths = [extra, *self.template_paths]

    def _full(self, cap: int, what: str) -> None:
        self.set_status(503)
        self.set_header("Retry-After", "60")
        self.set_header("Content-Type", "text/html; charset=UTF-8")
        self.finish(SERVER_FULL.format(cap=cap))
        _log_limited(f"dpexplore: {cap} {what} (the cap): a page was refused with 503")

    async def get(self, path=None):
        starts = page_starts(self.kernel_manager)
        refusal = starts.refusal(
            self.kernel_manager,
            self.settings.get("dpexplore_max_kernels") or 0,
            self.settings.get("dpexplore_max_pages") or 0,
        )
        if refusal is not None:
            self._full(*refusal)
            return
        token = starts.reserve()  # before any await: the next GET counts this page
        context = _RESERVATION.set(token)
        try:
            # the _xsrf cookie that Voila's page-close beacon sends back (PageCloseShutdownHandler
            # accepts a same-origin call without it too)
            self.xsrf_token  # noqa: B018 - reading it sets the cookie
            page = super().get(path)  # None when tornado's @authenticated redirected to a login
            if page is not None:
                await page
        finally:
            starts.release(token)
            _RESERVATION.reset(context)


#: handler class -> its bounded version (the kernel websocket of a standalone Voilà and of a
#: Jupyter server, Voilà's page and its page-close call)
_HARDENED = {
    VoilaKernelWebsocketHandler: SafeKernelWebsocketHandler,
    KernelWebsocketHandler: SafeKernelWebsocketHandler,
    TornadoVoilaHandler: CappedVoilaHandler,
    VoilaShutdownKernelHandler: PageCloseShutdownHandler,
}


def hardened_class(cls):
    """The bounded version of a Voilà / Jupyter server handler class (``cls`` itself if it has
    none): what both ``dpexplore serve`` and the apps-only single-user server route to.

    >>> hardened_class(KernelWebsocketHandler) is SafeKernelWebsocketHandler
    True
    >>> hardened_class(web.RequestHandler) is web.RequestHandler
    True
    """
    return _HARDENED.get(cls, cls)
