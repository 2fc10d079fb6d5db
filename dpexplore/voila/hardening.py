"""Bounds on what one browser can make the server do (used by :class:`DPExploreVoila`).

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

import json

from tornado import web
from voila.shutdown_kernel_handler import VoilaShutdownKernelHandler
from voila.tornado.kernel_websocket_handler import VoilaKernelWebsocketHandler

__all__ = ["SafeKernelWebsocketHandler", "PageCloseShutdownHandler", "read_v1_header", "v1_frame",
           "V1_SUBPROTOCOL", "MAX_PARTS"]

#: the subprotocol name of jupyter_server's v1 kernel websocket protocol
V1_SUBPROTOCOL = "v1.kernel.websocket.jupyter.org"
#: a v1 frame has channel, header, parent header, metadata, content and its buffers: a frame that
#: claims more parts than this is not parsed
MAX_PARTS = 64


def read_v1_header(frame: bytes) -> dict | None:
    """The header of a v1 binary frame, or ``None`` if the frame is not a well-formed v1 frame.

    A v1 frame starts with n (8 bytes, little-endian), then n offsets (8 bytes each); part 1
    (between offsets 1 and 2) is the JSON header. Work is bounded by :data:`MAX_PARTS` whatever
    the frame says.
    """
    size = len(frame)
    if size < 8:
        return None
    n = int.from_bytes(frame[:8], "little")
    if not 3 <= n <= MAX_PARTS or 8 * (n + 1) > size:
        return None
    offsets = [int.from_bytes(frame[8 * (i + 1):8 * (i + 2)], "little") for i in range(n)]
    if any(not (0 <= a <= b <= size) for a, b in zip(offsets, offsets[1:])):
        return None
    try:
        header = json.loads(frame[offsets[1]:offsets[2]].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return header if isinstance(header, dict) else None


def v1_frame(header: dict, channel: str = "iopub") -> bytes:
    """A minimal v1 frame (for tests and doctests): channel, header, and empty parent header,
    metadata and content."""
    parts = [channel.encode(), json.dumps(header).encode(), b"{}", b"{}", b"{}"]
    n = len(parts)
    offsets, pos = [], 8 * (n + 1)
    for p in parts:
        offsets.append(pos)
        pos += len(p)
    return (n.to_bytes(8, "little") + b"".join(o.to_bytes(8, "little") for o in offsets)
            + b"".join(parts))


class SafeKernelWebsocketHandler(VoilaKernelWebsocketHandler):
    """Voilà's kernel websocket handler, with the outgoing header read safely (module docstring)."""

    def write_message(self, message, binary: bool = False):
        if isinstance(message, bytes):
            v1 = getattr(self, "selected_subprotocol", None) == V1_SUBPROTOCOL
            header = read_v1_header(message) if v1 else None
        elif isinstance(message, dict):
            header = message.get("header")
        else:
            header = None
        if isinstance(header, dict) and header.get("msg_type") == "execute_input":
            return None  # as Voilà: the page never sees the code its kernel runs
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
        origin = self.request.headers.get("Origin")
        if origin is not None and not self.check_origin(origin):
            raise web.HTTPError(403, "cross-origin kernel shutdown")

    async def post(self, kernel_id):
        if kernel_id not in self.kernel_manager:
            raise web.HTTPError(404)
        await super().post(kernel_id)
