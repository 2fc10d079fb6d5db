"""Checks of a lab's parameters at its compute entry: each failure is a ``ValueError`` naming the
parameter and its value (the app shell shows it inline and keeps the last good plot)."""
from __future__ import annotations

import math

import numpy as np


def check_numbers(spec, ranges, rel_tol: float = 0.0) -> None:
    """Each ``(name, (lo, hi))`` of ``ranges``: ``spec.name`` is a finite real number in [lo, hi]
    (widened by the relative ``rel_tol``, for slider positions rounded at the ends)."""
    for name, (lo, hi) in ranges:
        v = getattr(spec, name)
        if isinstance(v, bool) or not isinstance(v, (int, float, np.floating)) or not math.isfinite(v):
            raise ValueError(f"{name} must be a finite number, got {name} = {v!r}")
        if not lo * (1 - rel_tol) <= v <= hi * (1 + rel_tol):
            raise ValueError(f"{name} = {v:g} is outside this lab's range [{lo:g}, {hi:g}]")


def check_whole(spec, name: str, lo: int, hi: int, what: str = "", sep: str = ",") -> None:
    """``spec.name`` is a whole number (not a bool) in [lo, hi]; ``what`` follows "a whole number"
    in the message ("of people"), ``sep`` is the thousands separator of the bounds shown."""
    v = getattr(spec, name)
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= v <= hi:
        what = f" {what}" if what else ""
        raise ValueError(f"{name} must be a whole number{what} in [{lo:{sep}}, {hi:{sep}}], "
                         f"got {name} = {v!r}")
