"""Kernel messages as they travel over a page's websocket (for clients outside a browser: the
test suite and the load benchmarks).

A message without buffers is a JSON text frame; a message with buffers (the plots' float64
arrays, :func:`dpexplore.ui.plotwidget.traces_to_wire`) is Jupyter's binary frame: the part count
n, n offsets (uint32, big-endian), then the message's JSON and its buffers.
"""
from __future__ import annotations

import json

__all__ = ["decode_frame"]


def decode_frame(frame: str | bytes) -> dict:
    """The kernel message of a websocket frame (its buffers are left out).

    >>> decode_frame('{"msg_type": "status"}')
    {'msg_type': 'status'}
    >>> body = b'{"msg_type": "comm_msg"}'
    >>> decode_frame((2).to_bytes(4, "big") + (12).to_bytes(4, "big")
    ...              + (12 + len(body)).to_bytes(4, "big") + body + bytes(8))
    {'msg_type': 'comm_msg'}
    """
    if isinstance(frame, str):
        return json.loads(frame)
    n = int.from_bytes(frame[:4], "big")
    if n < 1:
        raise ValueError(f"frame holds no message part (part count {n})")
    offsets = [int.from_bytes(frame[4 + 4 * i:8 + 4 * i], "big") for i in range(n)]
    return json.loads(frame[offsets[0]:offsets[1] if n > 1 else None])
