"""The minimum noise scale of an additive-noise mechanism (``calibrate``): the largest d = Δ/s
whose δ(ε) meets a target, searched on the floats of log d through the class's hooks
(``_from_d``, ``_log_delta``, ``_log_delta_slope``, ``_with_scale``), so that every additive
mechanism (:mod:`dpexplore.mechanisms.additive`) is calibrated by one search. δ is
non-decreasing in d (Vinterbo 2022 Lemma 2)."""

from __future__ import annotations

import numpy as np

from .._numerics import bracket_search, grow_bracket, newton_search
from ._base import _within

__all__ = ["calibrate_d", "safe_scale"]

#: log(Δ/s) of calibrate's coarse bracket (one vectorised evaluation; beyond it the bracket grows)
_LOGD_GRID = np.linspace(-20.0, 10.0, 31)
#: calibrate's Newton steps (from a grid cell it converges in ~4; the rest are bisections) and
#: its stopping step in log d (quadratic convergence: the next iterate is good to ~1e-16)
_NEWTON_STEPS = 12
_NEWTON_ATOL = 1e-8
#: ulps of log d around Newton's iterate in calibrate's first window: every float within 16, then
#: powers of 2 to 2^16 either side (Newton's iterate is within the noise of log δ of the crossing:
#: a few ulps for the Gaussian, up to ~1e-10 relative for Subbotin at tiny ε); the next windows
#: split the gap left into 17 (at most ``_WINDOWS`` windows, then bisection)
_LADDER = 2.0 ** np.arange(5, 17)
_WINDOW = np.concatenate([-_LADDER[::-1], np.arange(-16.0, 17.0), _LADDER])
_SPLIT = np.arange(1.0, 17.0) / 17.0
_WINDOWS = 8
_TINY = np.nextafter(0.0, 1.0)  # the feasibility residual's sign: never 0
_U = np.finfo(float).eps  # 2^-52


def calibrate_d(cls, eps, delta, **shape):
    """The largest d = Δ/s with log δ(ε) ≤ log δ_target and δ ≤ δ_target (``within``), δ
    non-decreasing in d (Vinterbo 2022 Lemma 2), searched on the floats of x = log d:

    1. bracket: one vectorised evaluation on ``_LOGD_GRID`` (the last feasible point before
       the first infeasible one, and that one), grown by ``grow_bracket`` where the crossing
       lies outside the grid (down to e^-708: beyond, ValueError; up to e^700);
    2. ``newton_search`` on log δ(x) − log δ_target from the secant point of the grid cell,
       with the slope of :meth:`_log_delta_slope`; the residual's sign is the feasibility
       test's, so the bracket's lower end stays feasible and its upper end infeasible;
    3. one evaluation on a window of floats around Newton's last iterate (``_WINDOW`` ulps of
       x, at least 2⁻⁵⁴: below an ulp of d): the new upper end is the *lowest* infeasible
       point of the window and the bracket, the lower end the point below it; where they are
       not adjacent floats (one ulp; 2⁻⁵⁴ for |x| < ¼), windows of 16 points split the gap
       (``bracket_search``, bisection, after ``_WINDOWS`` of them).

    Returns e^lo, lo the feasible end: which end moves is decided by the feasibility test with
    the full δ formula, so the result is on the safe side whatever the rounding of log δ or of
    the steps; and it lies below every infeasible point the search evaluated (it is the largest
    feasible point evaluated under the lowest infeasible one), so where the computed δ is not
    monotone in its last digits it ends under the lowest crossing seen, not at the largest
    feasible d (above an infeasible one) that a search may happen to find."""
    # ε, δ and shape parameters broadcast together (an array of shapes with one ε, δ too)
    eps, delta, *params = np.broadcast_arrays(*(np.asarray(v, float) for v in (eps, delta, *shape.values())))
    out_shape = eps.shape
    e, dl = eps.ravel(), delta.ravel()
    extra = {k: v.ravel() for k, v in zip(shape, params)}
    with np.errstate(divide="ignore"):
        target = np.log(dl)

    def unit(x):
        """The mechanism with d = e^x (x of shape (n,) or (n, k)) and the ε, δ to match."""
        ax = (slice(None), None) if np.ndim(x) == 2 else slice(None)
        return cls._from_d(np.exp(x), **{k: v[ax] for k, v in extra.items()}), e[ax], dl[ax]

    def feasible(x):
        m, ee, dd = unit(x)
        return _within(m._log_delta(ee), dd)

    # 1. coarse bracket: the first infeasible grid point and the one before it
    grid = np.broadcast_to(_LOGD_GRID, (e.size, _LOGD_GRID.size))
    m, ee, dd = unit(grid)
    lgrid = m._log_delta(ee)
    ok = _within(lgrid, dd)
    first_bad = np.where(ok.all(axis=1), grid.shape[1], np.argmin(ok, axis=1))
    rows = np.arange(e.size)
    i_lo, i_hi = np.maximum(first_bad - 1, 0), np.minimum(first_bad, grid.shape[1] - 1)
    lo, hi = grid[rows, i_lo], grid[rows, i_hi]
    with np.errstate(invalid="ignore", divide="ignore"):  # the secant point of the cell
        g_lo, g_hi = lgrid[rows, i_lo] - target, lgrid[rows, i_hi] - target
        x0 = lo - g_lo * (hi - lo) / (g_hi - g_lo)
    below, above = first_bad == 0, first_bad == grid.shape[1]
    if below.any():  # infeasible at the grid's smallest d: grow down (d = e^-708 at most)
        hi = np.where(below, grid[0, 0], hi)
        lo = np.where(below, 2.0 * grid[0, 0] - 1.0, lo)
        hi, lo = grow_bracket(
            feasible,
            hi,
            lo,
            grow=lambda x: np.maximum(2.0 * x - 1.0, -708.0),
            stop=lambda x: x <= -708.0,
            active=below,
            fill=-1.0,
        )
        at_floor = below & (lo <= -708.0)
        if (at_floor & ~feasible(np.where(at_floor, -708.0, -1.0))).any():
            # d = Δ/s below e^-708: s beyond the float range
            raise ValueError(f"eps = {eps!r} with delta = {delta!r} needs a noise scale beyond the float range")
    if above.any():  # feasible at the grid's largest d: grow up (to e^700)
        lo = np.where(above, grid[0, -1], lo)
        hi = np.where(above, 2.0 * grid[0, -1] + 1.0, hi)
        lo, hi = grow_bracket(
            lambda x: ~feasible(x),
            lo,
            hi,
            grow=lambda x: np.minimum(2.0 * x + 1.0, 700.0),
            stop=lambda x: x >= 700.0,
            active=above,
            fill=1.0,
        )
    x0 = np.where(np.isfinite(x0) & (x0 > lo) & (x0 < hi), x0, 0.5 * (lo + hi))

    # 2. safeguarded Newton; the residual's sign is the feasibility test's
    def residual(x):
        m, ee, dd = unit(x)
        ld, slope = m._log_delta_slope(ee)
        with np.errstate(invalid="ignore"):  # log δ = target = −inf: 0 (the sign decides)
            g = np.nan_to_num(ld - target, nan=0.0, posinf=np.inf, neginf=-np.inf)
        return np.where(_within(ld, dd), np.minimum(g, -_TINY), np.maximum(g, _TINY)), slope

    x, lo, hi = newton_search(residual, x0, lo, hi, steps=_NEWTON_STEPS, atol=_NEWTON_ATOL, freeze=True)

    # 3. windows: first floats around the iterate (every one within 16 ulps, a ladder of
    # powers of 2 beyond), then evenly spaced points in the gap left; each keeps the lowest
    # infeasible point (of the window and the bracket) as hi, the point below it as lo
    u = np.maximum(np.spacing(np.abs(x)), 2.0**-54)
    pts = x[:, None] + _WINDOW[None, :] * u[:, None]
    wide = np.ones(e.size, dtype=bool)
    for _ in range(_WINDOWS):
        pts = np.clip(np.where(wide[:, None], pts, lo[:, None]), lo[:, None], hi[:, None])
        # a point clipped to an end takes that end's side
        ok = (feasible(pts) | (pts <= lo[:, None])) & (pts < hi[:, None])
        allp = np.concatenate([lo[:, None], pts, hi[:, None]], axis=1)
        ok = np.concatenate([np.ones((e.size, 1), bool), ok, np.zeros((e.size, 1), bool)], axis=1)
        j = np.argmin(ok, axis=1)  # the lowest infeasible point (≥ 1: lo is feasible)
        lo, hi = allp[rows, j - 1], allp[rows, j]
        wide = hi - lo > 1.5 * np.maximum(np.spacing(np.maximum(np.abs(lo), np.abs(hi))), 2.0**-54)
        if not wide.any():
            break
        pts = lo[:, None] + (hi - lo)[:, None] * _SPLIT[None, :]
    else:  # a gap left after the windows (not seen on the test grids): bisection
        lo = bracket_search(feasible, lo, hi, safe="lo", ulps=1.0, atol=2.0**-54, active=wide, freeze=True)
    return np.exp(lo).reshape(out_shape)


def safe_scale(cls, scale, eps, delta, sensitivity, **shape):
    """Nudge a computed scale up (by ulps) until log δ(ε) ≤ log δ_target holds."""
    scale = np.array(scale, dtype=float)
    if not np.isfinite(scale).all():
        raise ValueError(
            f"eps = {eps!r} with delta = {delta!r} needs a noise scale beyond the "
            f"float range for sensitivity = {sensitivity!r}"
        )
    for i in range(300):  # the step doubles each time: always ends on the safe side
        # the mechanism that will be returned (Δ/s recomputed exactly as it will compute it;
        # rebuilding it from d = Δ/s would overflow 1/d for subnormal d)
        m = cls._with_scale(scale, sensitivity, **shape)
        bad = ~_within(m._log_delta(np.asarray(eps, float)), delta)
        if not bad.any():
            break
        # at least one ulp (subnormal scales: a relative step would round back)
        up = np.maximum(scale * (1 + 8 * np.finfo(float).eps * 2.0 ** min(i, 200)), np.nextafter(scale, np.inf))
        scale = np.where(bad, up, scale)
    return scale
