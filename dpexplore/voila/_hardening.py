"""Handlers that bound what one visitor of ``dpexplore serve`` can cost the server.

* :class:`SafeKernelWebsocketHandler` replaces Voilà 0.5's ``VoilaKernelWebsocketHandler``, whose
  ``write_message`` parses every outgoing binary frame as a v1-protocol frame
  (``voila.tornado.kernel_websocket_handler.read_header_from_binary_message``): a client that
  opens the websocket with no subprotocol (the legacy format, a 4-byte big-endian count) made it
  read the first 8 bytes of a frame as a count (~8.6e17) and build a list that long on the
  server's only event-loop thread — the whole server froze and its memory grew without bound.
  Here the header is read with the format of the connection's protocol, and a count larger than
  the frame could hold is rejected before anything is allocated.
* :class:`CappedVoilaHandler` (the page handler) refuses a page with HTTP 503 and a plain
  sentence when the server already runs ``max_kernels`` kernels, and sets the ``_xsrf`` cookie
  that Voilà's page-close beacon (``POST voila/api/shutdown/<id>``) sends back: without it the
  beacon got ``403 '_xsrf' argument missing`` and the closed page's kernel stayed until the culler.
* :class:`NotFoundTemplateStaticHandler` answers 404 (not 500) to malformed template paths.
"""
from __future__ import annotations

import json
import logging
import os
import struct
import time

from tornado import web

__all__ = ["read_frame_header", "default_max_kernels", "SafeKernelWebsocketHandler",
           "CappedVoilaHandler", "NotFoundTemplateStaticHandler", "V1_PROTOCOL"]

V1_PROTOCOL = "v1.kernel.websocket.jupyter.org"
#: a kernel of one dashboard page, measured (RSS of a pre-executed app kernel)
KERNEL_MB = 160

log = logging.getLogger("dpexplore.voila")


def read_frame_header(frame: bytes, v1: bool):
    """The message header of an outgoing binary kernel-websocket frame, or ``None``.

    ``v1``: the v1 protocol's frame (8-byte little-endian count, then 8-byte offsets of channel,
    header, parent header, metadata, content, buffers); otherwise the legacy frame
    (``jupyter_server``'s ``serialize_binary_message``: 4-byte big-endian count, 4-byte offsets,
    the whole message as JSON first). Never allocates more than the frame's size allows.

    >>> read_frame_header(b"\\x00" * 4 + b"x" * 100, v1=True) is None
    True
    >>> msg = json.dumps({"header": {"msg_type": "comm_msg"}}).encode()
    >>> legacy = struct.pack("!III", 2, 12, 12 + len(msg)) + msg + b"BUF"
    >>> read_frame_header(legacy, v1=False)["msg_type"], read_frame_header(legacy, v1=True)
    ('comm_msg', None)
    """
    n = len(frame)
    try:
        if v1:
            if n < 8:
                return None
            count = int.from_bytes(frame[:8], "little")
            if count < 3 or 8 * (count + 1) > n:
                return None
            offsets = [int.from_bytes(frame[8 * (i + 1):8 * (i + 2)], "little") for i in range(3)]
            start, stop = offsets[1], offsets[2]
            if not 0 <= start <= stop <= n:
                return None
            return json.loads(frame[start:stop].decode("utf-8"))
        if n < 4:
            return None
        count = struct.unpack("!I", frame[:4])[0]
        if count < 1 or 4 * (count + 1) > n:
            return None
        offsets = struct.unpack("!" + "I" * min(count, 2), frame[4:4 + 4 * min(count, 2)])
        start = offsets[0]
        stop = offsets[1] if count > 1 else n
        if not 0 <= start <= stop <= n:
            return None
        return json.loads(frame[start:stop].decode("utf-8")).get("header")
    except (ValueError, UnicodeDecodeError, AttributeError, struct.error):
        return None


_LOG_STATE = {"t": 0.0, "n": 0}


def _log_limited(text: str, every: float = 10.0) -> None:
    """Log ``text`` at most once per ``every`` seconds (with the count of the suppressed ones)."""
    now = time.monotonic()
    _LOG_STATE["n"] += 1
    if now - _LOG_STATE["t"] >= every:
        log.warning("%s (%d times)", text, _LOG_STATE["n"])
        _LOG_STATE["t"], _LOG_STATE["n"] = now, 0


def _leaks(message) -> bool:
    """Whether an outgoing stream/error message carries a Python traceback or a file path.

    >>> _leaks('{"content": {"name": "stderr", "text": "Traceback (most recent call last)"}}')
    True
    >>> _leaks('{"content": {"name": "stdout", "text": "hello"}}')
    False
    """
    if isinstance(message, (bytes, bytearray, memoryview)):
        message = bytes(message).decode("utf-8", "replace")
    if not isinstance(message, str):
        return False
    return any(s in message for s in ("Traceback", '"traceback"', "site-packages", 'File \\"',
                                      "stderr"))


def default_max_kernels() -> int:
    """Default cap on concurrent kernels: half the machine's memory at ``KERNEL_MB`` per kernel,
    at least 4.

    >>> default_max_kernels() >= 4
    True
    """
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 16
    return max(4, int(total * 0.5 / (KERNEL_MB * 2 ** 20)))


def _make_handlers():
    from voila.tornado.kernel_websocket_handler import VoilaKernelWebsocketHandler
    from voila.tornado.handler import TornadoVoilaHandler
    from voila.static_file_handler import TemplateStaticFileHandler

    class SafeKernelWebsocketHandler(VoilaKernelWebsocketHandler):
        """Voilà's kernel websocket with a bounded, protocol-aware reading of outgoing frames."""

        def write_message(self, message, binary: bool = False):
            if isinstance(message, (bytes, bytearray, memoryview)):
                header = read_frame_header(bytes(message),
                                           v1=self.selected_subprotocol == V1_PROTOCOL)
            elif isinstance(message, dict):
                header = message.get("header")
            else:
                header = None
            if isinstance(message, str) and ('"msg_type": "stream"' in message[:800]
                                             or '"msg_type": "error"' in message[:800]):
                try:
                    header = json.loads(message).get("header")
                except ValueError:
                    header = None
            kind = header.get("msg_type") if isinstance(header, dict) else None
            if kind == "execute_input":
                return None
            if kind in ("error", "stream") and _leaks(message):
                # a hostile comm message made the kernel print a traceback (server paths)
                _log_limited("dpexplore: a kernel traceback was not sent to the page")
                return None
            # skip Voilà's own (unbounded) parser: go straight to jupyter_server's handler
            return super(VoilaKernelWebsocketHandler, self).write_message(message, binary)

    class CappedVoilaHandler(TornadoVoilaHandler):
        """The page handler: a cap on concurrent kernels (503 past it) and the ``_xsrf`` cookie
        Voilà's page-close beacon needs."""

        max_kernels = 0  # set by DPExploreVoila (0: no cap)
        _last_full_log = 0.0

        async def prepare(self):
            await super().prepare()
            self.xsrf_token  # noqa: B018 - sets the _xsrf cookie read by the shutdown beacon
            cap = type(self).max_kernels
            if cap and len(self.kernel_manager.list_kernel_ids()) >= cap:
                now = time.monotonic()
                if now - CappedVoilaHandler._last_full_log > 10:
                    CappedVoilaHandler._last_full_log = now
                    log.warning("dpexplore: %d kernels running (cap %d): pages refused with 503",
                                len(self.kernel_manager.list_kernel_ids()), cap)
                self.set_status(503)
                self.set_header("Content-Type", "text/html; charset=UTF-8")
                self.set_header("Retry-After", "30")
                self.finish("<!DOCTYPE html><html><head><meta charset='utf-8'><title>Server full"
                            "</title></head><body><h1>The server is full</h1><p>Too many "
                            "dashboards are open on this server right now. Please try again in "
                            "a minute; pages already open keep working.</p></body></html>")

    class NotFoundTemplateStaticHandler(TemplateStaticFileHandler):
        """Voilà's template static files; a malformed path is a 404, not a 500."""

        def parse_url_path(self, path):
            try:
                return super().parse_url_path(path)
            except (AssertionError, ValueError):
                raise web.HTTPError(404) from None

        @classmethod
        def get_absolute_path(cls, root, path):
            try:
                return super().get_absolute_path(root, path)
            except (AssertionError, ValueError):
                raise web.HTTPError(404) from None

    return SafeKernelWebsocketHandler, CappedVoilaHandler, NotFoundTemplateStaticHandler


def __getattr__(name):
    if name in ("SafeKernelWebsocketHandler", "CappedVoilaHandler",
                "NotFoundTemplateStaticHandler"):
        classes = dict(zip(("SafeKernelWebsocketHandler", "CappedVoilaHandler",
                            "NotFoundTemplateStaticHandler"), _make_handlers()))
        globals().update(classes)
        return classes[name]
    raise AttributeError(name)
