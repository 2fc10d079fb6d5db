"""One mechanism's privacy loss on a grid: the loss tails P(L > x), Q(L > x) of an
additive-noise mechanism (or of a loss model), the kept loss range, and the pessimistic
connect-the-dots discretization (Doroshenko et al. 2022, Algorithm 1) into a
:class:`~dpexplore.accounting.pld.DiscretePLD` (:func:`single_pld`). Part of :mod:`dpexplore.accounting.pld`, which
re-exports every name here."""

from __future__ import annotations

import functools

import numpy as np

from ._pld_dist import DiscretePLD
from .._validation import check_positive

#: single-mechanism loss tail truncated to +∞ (mechanisms with unbounded loss only)
SINGLE_TAIL_TOL = 1e-22
#: the mass beyond which a tail is carried on the coarse grid of a two-grid power
#: (:func:`dpexplore.accounting._pld_fft._power`) and discretized on coarse cells (:func:`_single_pld`)
_SPLIT_MASS = 1e-5


def _log_diff(la, lb):
    """exp(la) − exp(lb) for la ≥ lb, computed as exp(la)·(−expm1(lb − la)); 0 where la = −inf."""
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.where(np.isneginf(la), 0.0, np.exp(la) * -np.expm1(np.minimum(lb - la, 0.0)))
    return np.nan_to_num(d, nan=0.0)


def _tails(mech, x):
    """log P(L > x), log P(L ≤ x), log Q(L > x), log Q(L ≤ x) for the loss grid ``x``.

    A loss model that is not an additive-noise mechanism (one direction of a subsampled
    mechanism, :mod:`dpexplore.mechanisms.subsampled`) provides these itself as ``_loss_tails``."""
    x = np.asarray(x, dtype=np.float64)
    if hasattr(mech, "_loss_tails"):
        return mech._loss_tails(x)
    em = float(mech.eps_max)
    d = float(mech.sensitivity)
    inside = (x > -em) & (x < em)
    t = np.asarray(mech.loss_inverse(np.where(inside, x, 0.0)), dtype=np.float64)
    with np.errstate(invalid="ignore"):
        sp = np.asarray(mech.logcdf(t), dtype=np.float64)
        cp = np.asarray(mech.logsf(t), dtype=np.float64)
        sq = np.asarray(mech.logcdf(t - d), dtype=np.float64)
        cq = np.asarray(mech.logsf(t - d), dtype=np.float64)
    above = x >= em
    out = []
    for s_in, above_val, below_val in ((sp, -np.inf, 0.0), (cp, 0.0, -np.inf), (sq, -np.inf, 0.0), (cq, 0.0, -np.inf)):
        out.append(np.where(inside, s_in, np.where(above, above_val, below_val)))
    return out


def _cell_masses(mech, x, tails=None):
    """P- and Q-masses of the cells (x[i−1], x[i]] (accurate in both tails); ``tails``: the four
    tails at x if already known."""
    sp, cp, sq, cq = _tails(mech, x) if tails is None else tails
    upper = sp[:-1] < np.log(0.5)
    p = np.where(upper, _log_diff(sp[:-1], sp[1:]), _log_diff(cp[1:], cp[:-1]))
    upper_q = sq[:-1] < np.log(0.5)
    q = np.where(upper_q, _log_diff(sq[:-1], sq[1:]), _log_diff(cq[1:], cq[:-1]))
    return p, q, sp, cp, sq, cq


@functools.lru_cache(maxsize=64)
def _loss_range(mech):
    """[x_lo, x_hi]: the loss range kept for one mechanism (the support if eps_max is finite,
    else the points beyond which less than SINGLE_TAIL_TOL of P-mass lies). The points are
    searched on a geometric scale from 1e-300 (a subsampled mechanism at q = 1e-17 has losses of
    order 1e-13: a search from 1e-6 made its range 10⁷ times too wide, and its grid 10¹¹ cells)."""
    if hasattr(mech, "loss_support"):  # a loss model: its own (possibly one-sided) support
        lo_s, hi_s = (float(v) for v in mech.loss_support)
    else:
        em = float(mech.eps_max)
        lo_s, hi_s = -em, em
    if np.isfinite(lo_s) and np.isfinite(hi_s):
        return lo_s, hi_s
    xs = np.geomspace(1e-300, 1e18, 2861)
    log_tol = np.log(SINGLE_TAIL_TOL)
    hi, lo = hi_s, lo_s
    if not np.isfinite(hi_s):
        up = xs + max(lo_s, 0.0) if np.isfinite(lo_s) else xs
        sp, _, _, _ = _tails(mech, up)
        hi = up[np.argmax(sp <= log_tol)] if (sp <= log_tol).any() else up[-1]
    if not np.isfinite(lo_s):
        down = -xs + min(hi_s, 0.0) if np.isfinite(hi_s) else -xs
        _, cp, _, _ = _tails(mech, down)
        lo = down[np.argmax(cp <= log_tol)] if (cp <= log_tol).any() else down[-1]
    return lo, hi


def _check_mechanism(mechanism):
    """An additive-noise mechanism with scalar parameters (hashable, for the caches), or a loss
    model (one with ``_loss_tails``). Checked by interface, not by class: this module imports no
    mechanism (the subsampled mechanisms import it)."""
    if not (callable(getattr(mechanism, "loss_inverse", None)) or hasattr(mechanism, "_loss_tails")):
        raise ValueError(f"mechanism must be an additive-noise mechanism of dpexplore.mechanisms, got {mechanism!r}")
    try:
        hash(mechanism)
    except TypeError as exc:
        raise ValueError(f"mechanism parameters must be scalars, got {mechanism!r}") from exc
    return mechanism


#: most grid cells a single PLD may have (a smaller h would exhaust memory)
_MAX_CELLS = 2**24


def single_pld(mechanism, h: float) -> DiscretePLD:
    """The pessimistic (connect-the-dots) discrete PLD of one additive-noise mechanism on the
    grid hℤ (Doroshenko et al. 2022, Algorithm 1; the continuous loss law is
    P(L > x) = F(t(x)), Q(L > x) = F(t(x) − Δ)). Cached per (mechanism, h).

    Each cell ((i−1)h, ih] with masses (p, q) puts p_b = (p − q e^{(i−1)h})/(1 − e^{−h}) at ih and
    p − p_b at (i−1)h (p_b is raised by 1e-13·p against rounding, the safe side). Losses above
    the kept range go to +∞ (``inf_mass``), those below go to the lowest grid point.

    >>> from dpexplore.mechanisms import Laplace
    >>> d = single_pld(Laplace(1.0), 0.25)
    >>> round(float(d.pmf.sum()), 12), round(d.delta(0.0), 6)   # TV distance 1 − e^{−1/2}
    (1.0, 0.393469)
    """
    mechanism = _check_mechanism(mechanism)
    ha = check_positive(h, "h")
    if ha.ndim:
        raise ValueError(f"h must be a scalar, got {h!r}")
    h = float(ha)
    lo, hi = _loss_range(mechanism)
    if (hi - lo) / h > _MAX_CELLS:
        raise ValueError(
            f"h = {h!r} is too small: the loss range [{lo:g}, {hi:g}] would need more than {_MAX_CELLS} cells"
        )
    return _single_pld(mechanism, h)


@functools.lru_cache(maxsize=8)
def _single_pld(mechanism, h: float, coarse: int = 1) -> DiscretePLD:
    """:func:`single_pld` without validation (cached). With ``coarse`` > 1, the cells of a tail
    that reaches to ±∞ (a subsampled mechanism's) are ``coarse`` times wider beyond the points
    where at most _SPLIT_MASS of mass lies further out (connect-the-dots with cells of any width
    is as pessimistic: the masses still land on grid points, those of the tails on every
    ``coarse``-th one; see :func:`_power`, which carries them on a coarse grid)."""
    lo, hi = _loss_range(mechanism)
    # a bound within 1e-9 h of a grid point IS that grid point (eps_max = m·h up to rounding)
    i0 = int(np.floor(lo / h + 1e-9))
    i1 = int(np.ceil(hi / h - 1e-9))
    if i1 - i0 > _MAX_CELLS:
        raise ValueError(
            f"h = {h!r} is too small for the loss range [{lo:g}, {hi:g}]: the PLD would "
            f"need {i1 - i0 + 1} cells, more than the {_MAX_CELLS} that fit in memory"
        )
    idx, tails = np.arange(i0, i1 + 1), None
    if coarse > 1:
        idx, tails = _coarse_tail_points(mechanism, h, i0, i1, coarse, lo, hi)
        i0 = int(idx[0])
    x = _grid_points(idx, h, lo, hi)
    p, q, sp, cp, sq, cq = _cell_masses(mechanism, x, tails)
    # connect the dots: split each cell's mass between its end points
    width = np.diff(idx) * h
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        qa = np.exp(np.log(np.maximum(q, 0.0)) + x[:-1]) if q.size else q
        # each cell mass is a difference of two tail values, exact to a few ulps of the tail
        # used; p − q·e^x cancels in a fine cell, and dividing by 1 − e^{−h} magnifies what is
        # left: the split is moved up by that error bound (more mass at the upper end, δ only
        # rises), so δ never falls below the truth however fine the grid
        err = (
            16
            * np.finfo(float).eps
            * (np.exp(np.minimum(sp[:-1], cp[1:])) + np.exp(np.minimum(sq[:-1], cq[1:]) + x[:-1]))
        )
    pb = (p - qa + err) / -np.expm1(-width)
    pb = np.clip(np.nan_to_num(pb, nan=0.0) + 1e-13 * p, 0.0, p)
    pa = p - pb
    pmf = np.zeros(int(idx[-1] - idx[0]) + 1)
    pos = idx - idx[0]
    pmf[pos[1:]] += pb
    pmf[pos[:-1]] += pa
    # tails outside [x_0, x_n]: below → lowest point; above → +∞
    pmf[0] += np.exp(cp[0])
    inf_mass = float(np.exp(sp[-1]))
    return DiscretePLD(h, i0, pmf, inf_mass, eps_max=float(mechanism.eps_max))


def _grid_points(idx, h: float, lo: float, hi: float):
    """The losses idx·h of grid indices, the support's ends put exactly where they are: a bound
    within 1e-9 h of a grid point IS that grid point (otherwise i·h may fall an ulp below eps_max
    and the atom at eps_max (Laplace) would be sent to +∞)."""
    x = idx * h
    if abs(x[-1] - hi) <= 1e-9 * h:
        x[-1] = max(x[-1], hi)
    if abs(x[0] - lo) <= 1e-9 * h:
        x[0] = min(x[0], lo)
    return x


def _coarse_tail_points(mechanism, h: float, i0: int, i1: int, coarse: int, lo: float, hi: float):
    """(indices, tails): the grid indices of a single PLD's cell ends for :func:`_single_pld` with
    coarse tails, and the four tails (:func:`_tails`) there: every index in the bulk, every
    ``coarse``-th (multiples of ``coarse``) in a tail that reaches to ±∞ beyond the point where at
    most _SPLIT_MASS of P-mass lies further out (found from the cell masses on the coarse grid,
    whose tails are kept)."""
    lo_s, hi_s = getattr(mechanism, "loss_support", None) or (-float(mechanism.eps_max), float(mechanism.eps_max))
    c0 = -(-i0 // coarse) * coarse if np.isinf(lo_s) else i0  # coarse points inside [i0, i1]
    c1 = (i1 // coarse) * coarse if np.isinf(hi_s) else i1
    if c1 - c0 < 4 * coarse:
        return np.arange(i0, i1 + 1), None
    pts = np.unique(np.concatenate([[i0], np.arange(c0, c1 + 1, coarse), [c1, i1]]))
    tails = _tails(mechanism, _grid_points(pts, h, lo, hi))
    p = _cell_masses(mechanism, None, tails)[0]
    a, _ = _head_cut(p, _SPLIT_MASS) if np.isinf(lo_s) else (0, 0.0)
    b, _ = _head_cut(p, _SPLIT_MASS, from_end=True) if np.isinf(hi_s) else (0, 0.0)
    if a + b >= p.size:
        return np.arange(i0, i1 + 1), None
    ka, kb = a, pts.size - 1 - b  # the bulk [pts[ka], pts[kb]], fine
    bulk = np.arange(int(pts[ka]), int(pts[kb]) + 1)
    fine = _tails(mechanism, _grid_points(bulk, h, lo, hi))
    idx = np.concatenate([pts[:ka], bulk, pts[kb + 1 :]])
    return idx, [np.concatenate([t[:ka], f, t[kb + 1 :]]) for t, f in zip(tails, fine)]


_CUT_BLOCK = 512


def _head_cut(pmf, tau: float, from_end: bool = False):
    """(i, low): the first i entries of ``pmf`` (the last i with ``from_end``) sum to low ≤ τ and
    the first i + 1 to more (i = pmf.size if all of it sums to ≤ τ). Summed by blocks of 512,
    then entry by entry inside the block where the sum passes τ: the tails cut by
    :func:`_truncate` are short, the arrays long."""
    n = pmf.size
    nb = n // _CUT_BLOCK
    start, base = 0, 0.0
    if nb >= 4:
        body = pmf[n - nb * _CUT_BLOCK :] if from_end else pmf[: nb * _CUT_BLOCK]
        sums = body.reshape(nb, _CUT_BLOCK).sum(axis=1)
        cum = np.cumsum(sums[::-1] if from_end else sums)
        k = int(np.searchsorted(cum, tau, side="right"))  # whole blocks within τ
        if k:
            start, base = k * _CUT_BLOCK, float(cum[k - 1])
    while True:  # entry by entry from there (one block, unless the block sums' rounding differs)
        end = min(n, start + _CUT_BLOCK)
        part = pmf[n - end : n - start][::-1] if from_end else pmf[start:end]
        c = np.cumsum(part) + base
        j = int(np.searchsorted(c, tau, side="right"))
        if j < c.size or end == n:
            return start + j, (float(c[j - 1]) if j else base)
        start, base = end, float(c[-1])
