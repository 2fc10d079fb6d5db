"""The searches, once each, with their safe end and stopping rule: :func:`bracket_search`
(bisection), :func:`grow_bracket`, :func:`newton_search`, :func:`illinois` (regula falsi),
:func:`golden_min`, :func:`step_up_until_ok`, and δ(ε) = target by :func:`epsilon_by_bisection`."""

from __future__ import annotations

import math

import numpy as np

from .rounding import _FMAX, MARGINS, Margin, _margin, _ulp, down, up  # noqa: F401


def step_up_until_ok(value, is_bad, cap, steps: int = 64, floor=None):
    """Raise ``value`` where ``is_bad(value)`` holds, by doubling steps (4, 8, 16, ... ulps, at
    least ``floor``, by default one ulp of ``cap``), never above ``cap``; for closed forms whose
    own rounding can land a few ulps on the unsafe side (callers make ``is_bad`` false at
    ``cap``). Stopping rule: no element is bad, or ``steps`` steps (then some may still be)."""
    value = np.array(value, dtype=np.float64)
    for i in range(steps):
        bad = is_bad(value)
        if not bad.any():
            break
        with np.errstate(over="ignore"):  # an inf step is capped below
            step = np.maximum(np.spacing(value) * 2.0 ** (i + 2), np.spacing(cap) if floor is None else floor)
        value = np.where(bad, np.minimum(value + step, cap), value)
    return value


_BISECT_STEPS = 80  # bracketing bisection steps (relative width 2^-80 ≪ ulp)
_MAX_DOUBLINGS = 1100  # enough to reach 2^1100 > float max from 1


def within(log_delta, delta):
    """log δ ≤ log target *and* exp(log δ) ≤ target: the computed δ itself must not exceed the
    target (exp(log x) can round above x), and the log test covers values that underflow."""
    log_delta = np.asarray(log_delta, dtype=float)
    delta = np.asarray(delta, dtype=float)
    with np.errstate(divide="ignore"):
        return (log_delta <= np.log(delta)) & (np.exp(log_delta) <= delta)


def epsilon_by_bisection(log_delta_capped, delta, eps_max, shape, points: int = 1):
    """The smallest ε ≥ 0 with δ(ε) ≤ ``delta`` (rounded up to the float where the computed δ
    meets the target), for a non-increasing ``log_delta_capped`` (log δ, −inf from ``eps_max`` on),
    element-wise over ``delta`` broadcast to ``shape``: 0 where δ(0) already meets it,
    ``eps_max`` where ``delta`` is 0. The bracket grows by doubling, then squaring once above 4
    (ε ~ 1e300 in ~12 steps; float max is tried before inf, so a finite root is never skipped),
    then bisects (geometric midpoints while it spans more than a factor 2) to 2 ulps.

    ``points`` > 1: a (points + 1)-ary search instead of the bisection, for a ``log_delta_capped``
    that takes any 1-d array of ε (one δ per ε, whatever the array's length) and costs little
    more for many points than for one (a discrete mechanism's windowed sums: 221 calls made its
    card take ~1 s). Each call evaluates ``points`` ε per unresolved element, spaced evenly
    (geometrically while the bracket spans more than a factor 2), and keeps the sub-interval
    where δ crosses the target, so ~6 calls reach 2 ulps instead of ~60. The same invariant as
    the bisection (δ(hi) meets the target, δ(lo) does not) gives the same answer to 2 ulps."""
    delta = np.broadcast_to(np.asarray(delta, dtype=float), shape)
    eps_max = np.broadcast_to(np.asarray(eps_max, dtype=float), shape)
    at0 = np.broadcast_to(log_delta_capped(np.zeros(shape)), shape)
    done = within(at0, delta) | (delta == 0)  # answered: 0 or eps_max
    # grow hi until δ(hi) ≤ delta
    lo, hi = grow_bracket(
        lambda e: within(log_delta_capped(e), delta),
        np.zeros(shape),
        np.where(np.isfinite(eps_max), eps_max, 1.0),
        grow="square",
        active=~done,
    )
    active = ~done & np.isfinite(hi)
    if points > 1:
        lo, hi = _kary_bracket(log_delta_capped, delta, lo, hi, active, int(points))
        res = np.where(within(at0, delta), 0.0, hi)
        return np.where(delta == 0, eps_max, res)
    # keeps δ(hi) ≤ delta, δ(lo) > delta; geometric midpoints while the bracket spans > 2×
    hi = bracket_search(
        lambda e: within(log_delta_capped(e), delta), lo, hi, safe="hi", mid="geo", ulps=2.0, active=active
    )
    res = np.where(within(at0, delta), 0.0, hi)
    return np.where(delta == 0, eps_max, res)


def _kary_bracket(log_delta_capped, delta, lo, hi, active, points: int):
    """Shrink [lo, hi] (δ(hi) meets ``delta``, δ(lo) does not, where ``active``) to 2 ulps by a
    (points + 1)-ary search: see :func:`epsilon_by_bisection`. Flat arrays of ε are passed."""
    lo, hi = lo.astype(float).ravel(), hi.astype(float).ravel()
    d = np.broadcast_to(delta, active.shape).ravel()
    act = active.ravel().copy()
    frac = np.arange(1, points + 1, dtype=float) / (points + 1)
    for _ in range(_BISECT_STEPS + 12):
        ulp = np.spacing(np.minimum(hi, _FMAX / 2.0))
        act &= hi - lo > 2 * ulp
        idx = np.flatnonzero(act)
        if idx.size == 0:
            break
        a, b = lo[idx, None], hi[idx, None]
        wide = (a > 0) & (b / 2.0 > a)
        with np.errstate(divide="ignore", invalid="ignore"):
            geo = np.exp(np.log(a) + frac[None, :] * (np.log(b) - np.log(a)))
        pts = np.where(wide, geo, a + frac[None, :] * (b - a))
        pts = np.minimum(np.maximum(pts, a), b)  # within the bracket despite rounding
        ok = within(np.asarray(log_delta_capped(pts.ravel()), dtype=float).reshape(pts.shape), d[idx, None])
        first = np.where(ok.any(axis=1), ok.argmax(axis=1), points)  # the first that meets δ
        rows = np.arange(idx.size)
        new_hi = np.where(first < points, pts[rows, np.minimum(first, points - 1)], hi[idx])
        new_lo = np.where(first > 0, pts[rows, np.maximum(first - 1, 0)], lo[idx])
        stuck = (new_hi == hi[idx]) & (new_lo == lo[idx])
        hi[idx], lo[idx] = new_hi, new_lo
        act[idx[stuck]] = False  # no float left strictly inside
    return lo.reshape(active.shape), hi.reshape(active.shape)


def bracket_search(
    ok,
    lo,
    hi,
    *,
    safe: str,
    steps: int = _BISECT_STEPS + 12,
    mid: str = "arith",
    rtol: float = 0.0,
    ulps: float = 2.0,
    atol: float = 0.0,
    ratio: float = 0.0,
    active=None,
    fill: float = 0.0,
    ends: bool = False,
    grow=None,
    grow_stop=None,
    freeze: bool = False,
):
    """Bisection for a monotone predicate, element-wise over numpy arrays: ``ok(x)`` (a boolean
    array, x of the bracket's shape) holds on the ``safe`` side of a threshold x*, and the
    bracket [lo, hi] must start with x* inside it: ``safe="hi"`` for ``ok`` true at ``hi`` and
    false at ``lo`` (e.g. δ(ε) ≤ target: the smallest ε), ``safe="lo"`` for the reverse (e.g.
    cost(x) ≤ budget: the largest x). Returns the safe end (``ends=True``: both ends).

    Invariant: every step evaluates ``ok`` at the midpoint and replaces the end on the same side,
    so the safe end always satisfies ``ok`` if it did at the start, however early the search
    stops — stopping earlier can only leave it farther from x*, i.e. safer.

    Midpoints: ``mid="arith"`` (lo + hi)/2; ``mid="geo"`` the geometric mean √lo·√hi while
    hi > 2·lo > 0 (a bracket spanning decades shrinks by a factor per step, not by a width),
    lo + (hi − lo)/2 after; ``mid="int"`` ⌊(lo + hi)/2⌋ for integer ends (an element whose
    bracket is at most 1 wide is left as it is, and the search stops when all are). Stopping
    rule otherwise: all ``active`` elements (default: all) have
    hi − lo ≤ max(``rtol``·m, ``ulps``·ulp(m), ``atol``), m = max(|lo|, |hi|) (capped at half the float
    max), or ``steps`` steps were taken. Accuracy: the safe end is within that width of x*
    (2 ulps by default: the float nearest x* on the safe side, or its neighbour). Elements not
    ``active`` are evaluated at ``fill`` and left unchanged. ``mid`` may also be a callable
    (lo, hi) → midpoint, and ``ratio`` > 0 adds a relative stop hi/lo ≤ 1 + ``ratio`` (positive
    brackets: ``dpsgd_sigma``'s √(lo·hi) to relative ``rtol``).

    ``grow`` (a factor, ``"square"`` or a callable; see :func:`grow_bracket`): the bracket need not
    hold x* yet: its unsafe end (``hi``; for ``safe="lo"`` also ``hi``, the end where ``ok`` must
    fail) is first moved out by :func:`grow_bracket` until it does, stopping where
    ``grow_stop(hi)`` holds.

    ``freeze=True``: an element stops moving once its own bracket meets the stopping rule (else
    it is bisected on until all have), so its result does not depend on the other elements."""
    if safe not in ("hi", "lo"):
        raise ValueError(f"safe must be 'hi' or 'lo', got {safe!r}")
    if not callable(mid) and mid not in ("arith", "geo", "int"):
        raise ValueError(f"mid must be 'arith', 'geo', 'int' or a callable, got {mid!r}")
    lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64))
    lo, hi = lo.copy(), hi.copy()
    act = np.ones(lo.shape, dtype=bool) if active is None else np.broadcast_to(active, lo.shape)
    if grow is not None:
        beyond = ok if safe == "hi" else (lambda x: ~np.asarray(ok(x), dtype=bool))
        lo, hi = grow_bracket(beyond, lo, hi, grow=grow, stop=grow_stop, active=act, fill=fill)
    frozen = np.zeros(lo.shape, dtype=bool)
    for _ in range(steps):
        live = act & ~frozen
        if callable(mid):
            m = mid(lo, hi)
        elif mid == "geo":
            wide = (lo > 0) & (hi / 2.0 > lo)
            m = np.where(wide, np.sqrt(lo) * np.sqrt(hi), lo + 0.5 * (hi - lo))
        elif mid == "int":
            m = np.floor(0.5 * (lo + hi))
            live = live & (hi - lo > 1.0)
        else:
            m = 0.5 * (lo + hi)
        good = np.asarray(ok(np.where(act, m, fill)), dtype=bool)
        if safe == "hi":
            hi = np.where(live & good, m, hi)
            lo = np.where(live & ~good, m, lo)
        else:
            lo = np.where(live & good, m, lo)
            hi = np.where(live & ~good, m, hi)
        if mid == "int":
            tol = 1.0
        else:
            big = np.where(act, np.minimum(np.maximum(np.abs(lo), np.abs(hi)), _FMAX / 2.0), 1.0)
            tol = np.maximum(np.maximum(rtol * big, ulps * np.spacing(big)), atol)
        done = hi - lo <= tol
        if ratio:
            with np.errstate(divide="ignore", invalid="ignore"):
                done |= hi / lo <= 1.0 + ratio
        if freeze:
            frozen |= done
        if np.all(~act | done):
            break
    if ends:
        return lo, hi
    return hi if safe == "hi" else lo


def _grow_step(grow):
    """The map x → next x of :func:`grow_bracket`'s ``grow``."""
    if callable(grow):
        return grow
    if grow == "square":

        def square(x):  # ×2 below 4, x² from 4 on; float max is tried before inf
            with np.errstate(over="ignore"):
                nx = np.where(x >= 4.0, x * x, x * 2.0)
            return np.where(np.isfinite(nx) | (x >= _FMAX), nx, _FMAX)

        return square
    factor = float(grow)
    if not (factor > 0.0 and factor != 1.0 and np.isfinite(factor)):
        raise ValueError(f"grow must be a factor > 0 other than 1, 'square' or a callable, got {grow!r}")

    def scale(x):
        with np.errstate(over="ignore"):
            return x * factor

    return scale


def grow_bracket(beyond, inner, outer, *, grow=2.0, stop=None, active=None, fill=0.0, steps: int = _MAX_DOUBLINGS):
    """Find a bracket by moving its far end out: while ``beyond(outer)`` is false, ``inner`` takes
    the value of ``outer`` and ``outer`` moves to ``grow(outer)`` — ``grow`` a factor (2.0 doubles,
    0.5 halves: a bracket can grow up or down), ``"square"`` (×2 below 4, squared from 4 on, float
    max tried before inf: 1 to 1e300 in ~12 steps) or a callable. Returns ``(inner, outer)``:
    ``beyond`` holds at ``outer`` and, if ``inner`` moved, fails at ``inner`` — the bracket for
    :func:`bracket_search` (which calls this itself when given ``grow``).

    An element stops moving where ``stop(outer)`` holds (checked before ``beyond`` is evaluated
    there: a cap, whose caller then decides), where ``outer`` is not finite, or after ``steps``
    moves; callers check ``beyond``/``stop`` at the ends they get where that matters. Scalars
    (Python floats, no ``active``): ``beyond`` and ``stop`` get floats, one element, as a
    ``while`` loop would. Arrays: element-wise, ``beyond`` evaluated on an array of the bracket's
    shape (``fill`` where an element no longer moves; ``None``: ``outer`` itself)."""
    step = _grow_step(grow)
    if active is None and np.ndim(inner) == 0 and np.ndim(outer) == 0:
        inner, outer = float(inner), float(outer)
        for _ in range(steps):
            if not math.isfinite(outer) or (stop is not None and stop(outer)) or beyond(outer):
                break
            inner, outer = outer, float(step(np.float64(outer)))
        return inner, outer
    inner, outer = np.broadcast_arrays(np.asarray(inner, dtype=np.float64), np.asarray(outer, dtype=np.float64))
    inner, outer = inner.copy(), outer.copy()
    act = np.ones(outer.shape, dtype=bool) if active is None else np.broadcast_to(active, outer.shape)
    for _ in range(steps):
        live = act & np.isfinite(outer)
        if stop is not None:
            live &= ~np.asarray(stop(outer), dtype=bool)
        move = live & ~np.asarray(beyond(outer if fill is None else np.where(live, outer, fill)), dtype=bool)
        if not move.any():
            break
        inner = np.where(move, outer, inner)
        outer = np.where(move, step(outer), outer)
    return inner, outer


def newton_search(
    residual,
    x,
    lo,
    hi,
    *,
    steps: int = 60,
    slack: float = np.inf,
    atol: float = 0.0,
    rtol: float = 0.0,
    floor: float = 0.0,
    freeze: bool = False,
):
    """Safeguarded Newton iteration for the root of an increasing ``residual`` (``residual(x)``
    returns (r, dr/dx), element-wise), keeping the bracket [lo, hi] with r(lo) < 0 ≤ r(hi): each
    step updates the bracket from the sign of r at x (hi where r ≥ 0, the safe end for a caller
    that needs r ≥ 0), then proposes x − r/r' clipped to the bracket; a proposal that is not
    finite, or more than ``slack`` outside the bracket, is replaced by the bracket's midpoint.
    Stopping rule: every element moved by at most max(``atol``, ``rtol``·max(x, ``floor``)),
    or ``steps`` steps. Returns ``(x, lo, hi)``: the last iterate (its side of the root is not
    guaranteed: callers check it, e.g. :func:`gdp_epsilon_core`) and the bracket.

    ``freeze=True``: an element whose step met the tolerance keeps that step's iterate and its
    bracket (else it is iterated on until all have), so its result does not depend on the other
    elements (a scalar call and an array call give the same numbers)."""
    lo, hi, x = np.array(lo, dtype=np.float64), np.array(hi, dtype=np.float64), np.array(x, dtype=np.float64)
    done = np.zeros(x.shape, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(steps):
            r, dr = residual(x)
            lo = np.where(~done & (r < 0), x, lo)
            hi = np.where(~done & (r >= 0), x, hi)
            nx = x - r / dr
            far = ~np.isfinite(nx) | (nx < lo - slack) | (nx > hi + slack)
            nx = np.where(far, 0.5 * (lo + hi), np.clip(nx, lo, hi))
            small = np.abs(nx - x) <= np.maximum(atol, rtol * np.maximum(x, floor))
            if freeze:
                nx = np.where(done, x, nx)
                done = done | small
            x = nx
            if np.all(small | done):
                break
    return x, lo, hi


def illinois(g, lo, hi, g_lo, g_hi, *, steps: int = 100, rtol: float = 1e-12, inset: float = 1e-3):
    """The largest x with g(x) ≤ 0 for an increasing ``g``, from a bracket with g(lo) ≤ 0 < g(hi)
    (``g_lo``, ``g_hi`` its values), by the Illinois variant of regula falsi (an end kept twice in
    a row has its g halved): the secant point (bisection where it is not finite or not inside),
    kept at least ``inset`` of the width from either end. Which end moves is decided by g(x) ≤ 0
    alone, so ``lo`` — returned — always has g ≤ 0 (the feasible end). Stopping rule: every
    element has hi − lo ≤ ``rtol``·hi, or ``steps`` steps."""
    side = np.zeros(np.shape(lo))
    for _ in range(steps):
        if np.all(hi - lo <= rtol * hi):
            break
        with np.errstate(invalid="ignore", divide="ignore"):
            x = (lo * g_hi - hi * g_lo) / (g_hi - g_lo)
        x = np.where(np.isfinite(x) & (x > lo) & (x < hi), x, 0.5 * (lo + hi))
        w = hi - lo
        x = np.clip(x, lo + inset * w, hi - inset * w)
        gx = g(x)
        ok = gx <= 0
        lo = np.where(ok, x, lo)
        g_lo = np.where(ok, gx, np.where(side == -1, 0.5 * g_lo, g_lo))
        hi = np.where(ok, hi, x)
        g_hi = np.where(ok, np.where(side == 1, 0.5 * g_hi, g_hi), gx)
        side = np.where(ok, 1, -1)
    return lo


def golden_min(fn, lo, hi, n_grid: int = 32, n_golden: int = 36):
    """Vectorized minimum of fn over [lo_i, hi_i] (one interval per row): an ``n_grid``-point
    grid, then ``n_golden`` golden-section steps (a fixed count: the stopping rule) in the two
    cells around the best grid point. Returns the smallest value evaluated — so, for a function
    whose every value is a valid upper bound, the result is one whatever the shape of fn (the
    safe side: stopping early only leaves it larger). ``fn`` takes a 2-d (rows × points) or 1-d
    (rows) array."""
    t = np.linspace(0.0, 1.0, n_grid)
    xs = lo[:, None] + (hi - lo)[:, None] * t[None, :]
    vals = fn(xs)
    rows = np.arange(lo.size)
    k = np.argmin(vals, axis=1)
    best = vals[rows, k]
    step = (hi - lo) / (n_grid - 1)
    a = np.maximum(lo, xs[rows, k] - step)
    b = np.minimum(hi, xs[rows, k] + step)
    g = (np.sqrt(5.0) - 1.0) / 2.0
    for _ in range(n_golden):
        c = b - g * (b - a)
        d = a + g * (b - a)
        fc, fd = fn(c), fn(d)
        best = np.minimum(best, np.minimum(fc, fd))
        left = fc < fd
        b = np.where(left, d, b)
        a = np.where(left, a, c)
    return best
