"""The accuracy policy of a composed ε (:func:`refine_epsilon`): the grid of a privacy loss
distribution is refined until ε on two successive grids agrees to a quarter of the target
max(``RTOL``·ε, ``ATOL``); :class:`AccuracyWarning` where it cannot. Part of :mod:`dpexplore.accounting.pld`,
which re-exports every name here."""

from __future__ import annotations

import numpy as np

#: the accuracy a composed ε aims at: at most max(RTOL·ε, ATOL) above the true ε (never below it)
RTOL = 1e-2
ATOL = 1e-3
#: the largest grid the refinement may reach (a few seconds at 10⁶ runs; ~0.1 GB of arrays)
REFINE_MAX_GRID = 2**20


class AccuracyWarning(UserWarning):
    """A composed ε is a safe upper bound, but its grid could not be refined to the accuracy
    target (:func:`refine_epsilon`): it may be more than 1 % above the true ε."""


def warn_unconverged(what: str, deltas) -> None:
    """Issue an :class:`AccuracyWarning` naming ``what`` and the δ values concerned."""
    import warnings

    ds = ", ".join(f"{float(d):g}" for d in np.atleast_1d(deltas))
    warnings.warn(
        f"{what}: at δ = {ds} the grid could not be refined to within 1 % of the true ε "
        f"in {REFINE_MAX_GRID} points; the ε returned is a safe upper bound that may be "
        f"looser",
        AccuracyWarning,
        stacklevel=3,
    )


#: the grid refinement factor of one step (the error of connect-the-dots falls ~16-fold)
_REFINE_STEP = 4


def tolerance(eps, rtol: float = RTOL, atol: float = ATOL):
    """max(rtol·ε, atol): the accuracy target of a composed ε (elementwise)."""
    return np.maximum(rtol * np.asarray(eps, dtype=np.float64), atol)


def refine_epsilon(eps_at, grid_size: int, *, rtol: float = RTOL, atol: float = ATOL, max_grid: int = REFINE_MAX_GRID):
    """(ε, converged, grid): ε from ``eps_at(n)`` — the ε (an array) of a pessimistic PLD
    composed on a grid of n points, never below the truth — on the grid chosen from the error
    target: n = ``grid_size`` first, then 4n, 16n, … up to ``max_grid``, until the value on n and
    on n/4 differ by at most a quarter of max(rtol·ε, atol) at every entry.

    Why that suffices: refining the grid is a refinement of the connect-the-dots spread, so ε
    falls towards the truth (Doroshenko et al. 2022; the coarser PLD is a mean-preserving spread of
    the finer one), with an error of second order in the grid spacing: the error on n is about
    1/15 of the difference between n/4 and n (and 1/3 of it even at first order), so the accepted
    ε is within ~tol/12 of the limit. This is an estimate, not a proof (a grid too coarse to see a
    feature of the loss distribution on both grids would hide it); the sweep test checks it
    against dp_accounting over σ ∈ [0.05, 100], q ∈ [1e-17, 1], k ∈ [1, 10⁶], δ ∈ [1e-12, 1e-2].
    Every returned ε is an upper bound either way. ``converged`` is False where ``max_grid`` was
    reached first, or where ε rose by more than a quarter of the target on two finer grids in a
    row (refining nested grids cannot raise ε; one rise can come from start grids that are not
    nested, two mean the FFT's round-off limits the accuracy, and finer grids do not help): the
    ε returned is then the smallest computed (safe, maybe loose).
    A grid too fine for the loss range (:func:`single_pld`'s ValueError) stops the refinement."""
    n = int(grid_size)
    coarse_n = max(n // _REFINE_STEP, 2**10)
    prev = np.asarray(eps_at(coarse_n), dtype=np.float64) if coarse_n < n else None
    cur = np.asarray(eps_at(n), dtype=np.float64)
    best = cur if prev is None else np.minimum(cur, prev)  # every grid's ε is an upper bound
    rose_before = False
    while True:
        if prev is None:
            gap = np.full(cur.shape, np.inf)
        else:
            with np.errstate(invalid="ignore"):
                gap = np.where(np.isinf(prev) & np.isinf(cur), np.inf, np.abs(prev - cur))
        with np.errstate(invalid="ignore"):
            ok = gap <= 0.25 * tolerance(np.maximum(cur - gap, 0.0), rtol, atol)
        if ok.all() or n * _REFINE_STEP > max_grid:
            return best, ok, n
        rose = prev is not None and np.any(~ok & (cur > prev + 0.25 * tolerance(prev, rtol, atol)))
        if rose and rose_before:
            # refining a connect-the-dots grid lowers ε where the grids are nested (see above):
            # two rises in a row mean the FFT's round-off, not the spacing, limits the accuracy
            # there, and finer grids only cost more (σ 0.05, q 1e-4, 10⁴ steps, δ 1e-12: 2751 on
            # 2¹⁰ points, 2761 on 2¹², 2841 on 2¹⁴, 11182 on 2¹⁸; the truth is 2740.5–2741.5).
            # One rise alone is not enough: the start grids of a subsampled mechanism's powers
            # are not nested across sizes (σ 0.3, q 1e-5, 10⁴ steps, add direction, δ 1e-5:
            # 0.0568 on 2¹⁰, 0.0579 on 2¹², then 0.0563, 0.0555, 0.0554)
            return best, ok, n
        rose_before = rose
        try:
            nxt = np.asarray(eps_at(n * _REFINE_STEP), dtype=np.float64)
        except (ValueError, MemoryError):
            return best, ok, n
        prev, cur, n = cur, nxt, n * _REFINE_STEP
        best = np.minimum(best, cur)
