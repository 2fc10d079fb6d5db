"""The apps' numeric parameters, described once (:class:`Param`: range, scale, label, unit), and
the checks of a lab's parameters at its compute entry: each failure is a ``ValueError`` naming the
parameter and its value (the app shell shows it inline and keeps the last good plot).

An app lists its parameters as ``Param`` s; its spec check is :func:`check_params`, its sliders
are ``dpexplore.ui.controls.param_slider`` of the same ``Param`` s (so the range checked is the
range the slider offers, and the page's URL parsing, which reads the slider's bounds and, for a
number box, its ``Param``, follows), its spec is read from the controls by :func:`param_values`,
and its "Reproduce in Python" snippet sets its parameters with :func:`snippet_assign` (each
``Param`` by its name, as in the URL, with the value of the current spec): a new parameter is in
the snippet unless the app says why not. This module imports no widgets: the compute side uses it
without the UI.

>>> N = Param("n", 10, 3000, "log", unit="people", integer=True, what="of people")
>>> N.check(3001)
Traceback (most recent call last):
...
ValueError: n must be a whole number of people in [10, 3,000], got n = 3001
>>> Param("eps", 0.01, 10.0, "log", label="ε").check(0.0)
Traceback (most recent call last):
...
ValueError: eps = 0 is outside this lab's range [0.01, 10]
>>> Param("eps", 1e-3, 100.0, "log", accept=(0.0, None), interval="()", why="scale Δ/ε").check(0.0)
Traceback (most recent call last):
...
ValueError: eps must be > 0 (scale Δ/ε), got eps = 0.0
>>> print(snippet_assign({"eps": 0.5, "n": 300.0}, [Param("eps", 0.01, 10.0), N]), end="")
eps, n = 0.5, 300
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Param", "check_params", "params_by_name", "param_values", "snippet_assign", "SEED", "SEED_MAX"]

#: the largest seed the simulation labs accept (their seed sliders stop at 999)
SEED_MAX = 10**9

_INTERVALS = ("[]", "(]", "[)", "()")


@dataclass(frozen=True)
class Param:
    """One numeric parameter of an app (a field of its spec), described once.

    ``lo``, ``hi``: the slider's range; ``scale``: ``"log"`` or ``"linear"``; ``label`` (default
    ``name``) and ``unit``: the slider's label; ``integer``: a whole number; ``step`` (linear
    sliders; default 1 for whole numbers, 200 steps otherwise), ``steps_per_decade`` and
    ``readout_format`` (log sliders): the slider's grid and readout.

    What compute accepts is the slider's range, closed, unless ``accept`` = (lo, hi) widens it
    (``hi`` None: no upper bound; a seed slider ends at 999, compute takes any seed up to 10⁹),
    with ``interval`` one of ``"[]"``, ``"(]"``, ``"[)"``, ``"()"``. ``rel_tol`` widens the
    slider's range relatively (slider positions rounded at its ends); ``what`` follows "a whole
    number" in the message ("of people"); ``why`` (a domain reason) follows the accepted range.
    """

    name: str
    lo: float
    hi: float
    scale: str = "linear"
    label: str = ""
    unit: str = ""
    integer: bool = False
    step: float | None = None
    steps_per_decade: int = 20
    readout_format: str | None = None
    accept: tuple | None = None
    interval: str = "[]"
    rel_tol: float = 0.0
    what: str = ""
    why: str = ""

    def __post_init__(self):
        if self.scale not in ("log", "linear"):
            raise ValueError(f"scale must be 'log' or 'linear', got scale = {self.scale!r}")
        if self.interval not in _INTERVALS:
            raise ValueError(f"interval must be one of {_INTERVALS}, got interval = {self.interval!r}")
        if not self.lo < self.hi:
            raise ValueError(f"{self.name}: lo < hi needed, got [{self.lo!r}, {self.hi!r}]")

    @property
    def range(self) -> tuple:
        """The slider's range (lo, hi)."""
        return (self.lo, self.hi)

    @property
    def text(self) -> str:
        """The slider's label."""
        return self.label or self.name

    def check(self, v) -> None:
        """``v`` a value of this parameter, else a ValueError naming it and showing ``v``."""
        name = self.name
        why = f" ({self.why})" if self.why else ""
        lo, hi = self.accept if self.accept is not None else (self.lo, self.hi)
        if self.integer:
            shown = _whole_interval(lo, hi, self.interval)
            what = f" {self.what}" if self.what else ""
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not _inside(v, lo, hi, self.interval):
                raise ValueError(f"{name} must be a whole number{what} {shown}{why}, got {name} = {v!r}")
            return
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
            raise ValueError(f"{name} must be a finite number{why}, got {name} = {v!r}")
        if self.accept is None:
            t = self.rel_tol
            if not lo * (1 - t) <= v <= hi * (1 + t):
                raise ValueError(f"{name} = {v:g} is outside this lab's range [{lo:g}, {hi:g}]{why}")
        elif not _inside(v, lo, hi, self.interval):
            shown = (
                f"be {'>' if self.interval[0] == '(' else '>='} {lo:g}"
                if hi is None
                else f"lie in {self.interval[0]}{lo:g}, {hi:g}{self.interval[1]}"
            )
            raise ValueError(f"{name} must {shown}{why}, got {name} = {v!r}")

    def value(self, v):
        """``v`` (a control's value) as this parameter's type: ``int`` for a whole number, else ``float``."""
        return int(round(v)) if self.integer else float(v)

    def literal(self, v) -> str:
        """``v`` written as Python source: ``300`` for a whole number, ``repr(float(v))`` else."""
        return str(int(v)) if self.integer else repr(float(v))


#: the seed of every simulation (a number box: any whole number in [0, 10⁹] is a seed)
SEED = Param("seed", 0, SEED_MAX, integer=True)


def _inside(v, lo, hi, interval: str) -> bool:
    above = v > lo if interval[0] == "(" else v >= lo
    below = hi is None or (v < hi if interval[1] == ")" else v <= hi)
    return above and below


def _whole_interval(lo, hi, interval: str) -> str:
    if hi is None:
        return f"> {lo:,}" if interval[0] == "(" else f">= {lo:,}"
    return f"in {interval[0]}{lo:,}, {hi:,}{interval[1]}"


def params_by_name(*params: Param) -> dict:
    """``{p.name: p}`` of ``params``, in their order."""
    return {p.name: p for p in params}


def _params(params):
    return list(params.values()) if isinstance(params, dict) else list(params)


def param_values(controls, params) -> dict:
    """``{name: value}`` of ``params`` read from ``controls`` (widgets by name; :meth:`Param.value`),
    what a spec is built from (``Spec(**param_values(controls, PARAMS), mechanism=...)``)."""
    return {p.name: p.value(controls[p.name].value) for p in _params(params)}


def snippet_assign(values, params, skip=(), width: int = 100) -> str:
    """Python lines that set each of ``params`` (but the names in ``skip``) to its value in
    ``values`` (a spec, read by attribute, or a mapping): ``eps, delta = 0.5, 1e-06``, a line per
    at most ``width`` characters. The "Reproduce in Python" snippets start with it, so their
    variables are the parameters' names (as in the URL) and every parameter is there unless the
    app leaves it out on purpose (``skip``)."""
    get = values.__getitem__ if isinstance(values, dict) else lambda name: getattr(values, name)
    pairs = [(p.name, p.literal(get(p.name))) for p in _params(params) if p.name not in skip]
    lines, group = [], []
    for pair in pairs:
        trial = group + [pair]
        if group and len(", ".join(n for n, _ in trial)) + 3 + len(", ".join(v for _, v in trial)) > width:
            lines.append(group)
            trial = [pair]
        group = trial
    if group:
        lines.append(group)
    return "".join(f"{', '.join(n for n, _ in g)} = {', '.join(v for _, v in g)}\n" for g in lines)


def check_params(spec, params) -> None:
    """Each of ``params`` (``Param`` s, or a ``{name: Param}``) checked on ``getattr(spec, name)``."""
    for p in _params(params):
        p.check(getattr(spec, p.name))
