"""Kernel messages as they travel over a page's websocket (for clients outside a browser: the
test suite and the load benchmarks).

Two protocols. The browser's page (JupyterLab's services, in Voilà's page) asks for
jupyter_server's v1 protocol (:data:`V1_SUBPROTOCOL`): every frame is binary, the part count n
(8 bytes, little-endian), n offsets (8 bytes each), then the channel, the JSON header, parent header,
metadata and content, and the buffers (:func:`encode_v1`, :func:`decode_v1`); the server relays
these frames without parsing the messages. A client that asks for no subprotocol gets the older
one: a message without buffers is a JSON text frame; a message with buffers (the plots' float64
arrays, :func:`dpexplore.ui.plotwidget.traces_to_wire`) is Jupyter's binary frame: the part count
n, n offsets (uint32, big-endian), then the message's JSON and its buffers (the server parses
and re-serialises every message for it).
"""

from __future__ import annotations

import json

__all__ = ["decode_frame", "decode_v1", "encode_v1", "V1_SUBPROTOCOL"]

#: the subprotocol name of jupyter_server's v1 kernel websocket protocol
V1_SUBPROTOCOL = "v1.kernel.websocket.jupyter.org"
_V1_PARTS = ("header", "parent_header", "metadata", "content")


def encode_v1(msg: dict, channel: str | None = None) -> bytes:
    """The v1 frame of a kernel message (``msg["channel"]`` unless ``channel`` is given; its
    ``buffers``, if any, as the last parts), as jupyter_server's ``serialize_msg_to_ws_v1``.

    >>> decode_v1(encode_v1({"header": {"msg_type": "comm_msg"}, "content": {"a": 1}}, "shell"))
    {'channel': 'shell', 'header': {'msg_type': 'comm_msg'}, 'parent_header': {}, 'metadata': {}, 'content': {'a': 1}, 'msg_type': 'comm_msg'}
    """
    parts = [(channel or msg.get("channel") or "shell").encode()]
    parts += [json.dumps(msg.get(k) or {}).encode() for k in _V1_PARTS]
    parts += [bytes(b) for b in msg.get("buffers") or ()]
    offsets = [8 * (len(parts) + 2)]
    for p in parts:
        offsets.append(offsets[-1] + len(p))
    return len(offsets).to_bytes(8, "little") + b"".join(o.to_bytes(8, "little") for o in offsets) + b"".join(parts)


def decode_v1(frame: bytes) -> dict:
    """The kernel message of a v1 frame: channel, header, parent header, metadata, content and
    ``msg_type`` (its buffers are left out)."""
    n = int.from_bytes(frame[:8], "little")
    if not 6 <= n <= 8 * 1024 or 8 * (n + 1) > len(frame):
        raise ValueError(f"not a v1 frame (part count {n}, {len(frame)} bytes)")
    offsets = [int.from_bytes(frame[8 * (i + 1) : 8 * (i + 2)], "little") for i in range(n)]
    parts = [frame[a:b] for a, b in zip(offsets[:5], offsets[1:6])]
    msg = {"channel": parts[0].decode()}
    msg.update({k: json.loads(p) for k, p in zip(_V1_PARTS, parts[1:])})
    msg["msg_type"] = msg["header"].get("msg_type")
    return msg


def decode_frame(frame: str | bytes, v1: bool = False) -> dict:
    """The kernel message of a websocket frame (its buffers are left out); ``v1``: the connection
    speaks the v1 protocol (:func:`decode_v1`).

    >>> decode_frame('{"msg_type": "status"}')
    {'msg_type': 'status'}
    >>> body = b'{"msg_type": "comm_msg"}'
    >>> decode_frame((2).to_bytes(4, "big") + (12).to_bytes(4, "big")
    ...              + (12 + len(body)).to_bytes(4, "big") + body + bytes(8))
    {'msg_type': 'comm_msg'}
    """
    if v1:
        return decode_v1(frame)
    if isinstance(frame, str):
        return json.loads(frame)
    n = int.from_bytes(frame[:4], "big")
    if n < 1:
        raise ValueError(f"frame holds no message part (part count {n})")
    offsets = [int.from_bytes(frame[4 + 4 * i : 8 + 4 * i], "big") for i in range(n)]
    return json.loads(frame[offsets[0] : offsets[1] if n > 1 else None])
