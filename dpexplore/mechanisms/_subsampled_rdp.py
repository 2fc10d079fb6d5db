"""Rényi DP of the subsampled Gaussian, for :mod:`dpexplore.mechanisms.subsampled`: Poisson
sampling (Mironov, Talwar & Zhang 2019, Section 3.3: exact at integer orders, the chord between
them) and sampling without replacement under substitution (Wang, Balle & Kasiviswanathan 2019,
Theorem 9, the bound dp_accounting implements, with Corollary 10's chord at fractional orders).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

from .._validation import scalar_out
from .._numerics import bracket_search


def _chord(al, lo, la_lo, la_hi):
    """log A at a fractional order α on the chord between its integer neighbours ⌊α⌋, ⌈α⌉ (an
    upper bound: log A_α is convex in α)."""
    return la_lo + (al - lo) * (la_hi - la_lo)


def _rdp_by_order(a, log_a_int, log_a_frac):
    """ε̂(α) = log A_α/(α − 1) for each order in the checked array ``a``: ``log_a_int(n)`` at an
    integer order (each computed once per call: a fractional order needs both neighbours),
    ``log_a_frac(α, ⌊α⌋, log A_⌊α⌋, log A_⌈α⌉)`` between two (log A_1 = 0), inf at α = ∞; clipped
    at 0 and rounded up by 8 ulps."""
    flat = np.asarray(a, dtype=np.float64).ravel()
    out = np.empty_like(flat)
    memo: dict = {}

    def log_a(n: int) -> float:
        if n not in memo:
            memo[n] = log_a_int(n)
        return memo[n]

    for i, al in enumerate(flat):
        if np.isinf(al):
            out[i] = np.inf
            continue
        lo, hi = np.floor(al), np.ceil(al)
        if lo == hi:
            out[i] = log_a(int(al)) / (al - 1.0)
        else:
            la_lo = log_a(int(lo)) if lo >= 2 else 0.0
            out[i] = log_a_frac(al, lo, la_lo, log_a(int(hi))) / (al - 1.0)
    out = np.maximum(out, 0.0)
    fin = np.isfinite(out)
    out[fin] = out[fin] + 8 * np.spacing(out[fin])
    return scalar_out(out.reshape(np.shape(a)))


_MAX_INT_ORDER = 100_000


def _logsumexp(a) -> float:
    """log Σ e^{a_i}, as scipy.special.logsumexp for a 1-d array but without its per-call overhead
    (~0.1 ms: hundreds of calls made one DP-SGD RDP curve take ~60 ms)."""
    a = np.asarray(a, dtype=np.float64)
    if a.size == 0:
        return -np.inf
    k = int(np.argmax(a))
    m = float(a[k])
    if not np.isfinite(m):
        return m
    # m + log1p(Σ_{i≠k} e^{a_i − m}): full relative accuracy when the sum is tiny (as scipy)
    w = np.exp(a - m)
    w[k] = 0.0
    return m + float(np.log1p(np.sum(w)))


def _log_a_int(alpha: int, q: float, s2: float) -> float:
    """log A_α for an integer α ≥ 2 (Mironov, Talwar & Zhang 2019, Section 3.3), in log space."""
    if alpha > _MAX_INT_ORDER:
        raise ValueError(f"alpha must be at most {_MAX_INT_ORDER} for the subsampled Gaussian, got {alpha!r}")
    if q == 1.0:
        return (alpha * alpha - alpha) / (2.0 * s2)
    j = np.arange(alpha + 1, dtype=np.float64)
    logc = special.gammaln(alpha + 1.0) - special.gammaln(j + 1.0) - special.gammaln(alpha - j + 1.0)
    terms = logc + (alpha - j) * np.log1p(-q) + j * np.log(q) + (j * j - j) / (2.0 * s2)
    return float(_logsumexp(terms))


def _log_a_frac(alpha: float, q: float, s2: float) -> float:
    """log A_α at a fractional order α > 1 (Mironov, Talwar & Zhang 2019, Section 3.3): the
    integral of E_Q[(P/Q)^α] split at z₀ = σ̃² log(1/q − 1) + ½ into two absolutely convergent
    binomial series (summed until the terms fall below e^{−30} of the first; the signed sum is
    raised by 1e-12 of its terms' total against cancellation), A_α = Σ_i C(α, i) [q^i (1−q)^{α−i} e^{(i²−i)/(2σ̃²)} Φ((z₀ − i)/σ̃)
    + q^{α−i} (1−q)^i e^{((α−i)²−(α−i))/(2σ̃²)} Φ((α − i − z₀)/σ̃)], with signed binomials."""
    sig = float(np.sqrt(s2))
    if q >= 1.0:
        return (alpha * alpha - alpha) / (2.0 * s2)
    z0 = s2 * np.log(1.0 / q - 1.0) + 0.5
    lq, l1q = np.log(q), np.log1p(-q)
    # the terms i = 0, 1, … in blocks (numpy; the same terms, in the same order, as a loop that
    # stops at the first i past α whose larger term is below e^{−30} of the first, or at a zero
    # binomial coefficient)
    n = int(np.ceil(alpha)) + 64
    while True:
        i = np.arange(n, dtype=np.float64)
        coef = special.binom(alpha, i)
        j = alpha - i
        with np.errstate(divide="ignore"):
            lc = np.log(np.abs(coef))
        ls0 = lc + i * lq + j * l1q + (i * i - i) / (2.0 * s2) + special.log_ndtr((z0 - i) / sig)
        ls1 = lc + j * lq + i * l1q + (j * j - j) / (2.0 * s2) + special.log_ndtr((j - z0) / sig)
        top = np.maximum(ls0, ls1)
        zero = np.nonzero(coef == 0)[0]
        stop = np.nonzero((i > alpha) & (top < top[0] - 30.0))[0]
        end = min(int(zero[0]) if zero.size else n, int(stop[0]) + 1 if stop.size else n)
        if end < n or n >= 100_000:
            break
        n = min(2 * n, 100_000)
    both = np.stack([ls0[:end], ls1[:end]], axis=1).ravel()  # ls0, ls1 of each i, in turn
    sign = np.repeat(coef[:end] > 0, 2)
    pos, neg = both[sign], both[~sign]
    lp = _logsumexp(pos)
    ln = _logsumexp(neg) if neg.size else -np.inf
    if not ln < lp:
        return np.inf  # cannot happen for a valid order; inf keeps the bound safe
    # the signed sum cancels (A_α ≈ 1 near α = 1 while single terms are ~1): raise it by
    # 1e-12 of the terms' total size, far above the summation's round-off
    r = np.exp(ln - lp)
    return float(lp + np.log1p(-r + 1e-12 * (1.0 + r)))


#: orders up to which the forward-difference terms enter (dp_accounting's ``max_alpha``)
_WOR_FD_MAX = 256
#: relative safety factor on the moments M_n (their quadrature error is ~1e-15)
_WOR_FD_MARGIN = 1e-12
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(16)


def _log_expm1(x):
    """log(e^x − 1) for x ≥ 0 (−inf at 0), without overflow."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", over="ignore"):
        small = np.log(np.expm1(np.minimum(x, 1.0)))
        large = x + np.log(-np.expm1(-np.maximum(x, 1.0)))
    return np.where(x > 1.0, large, small)


def _log_abs_expm1(u):
    """log|e^u − 1| for any real u (−inf at 0), without overflow."""
    u = np.asarray(u, dtype=np.float64)
    with np.errstate(divide="ignore"):
        neg = np.log(-np.expm1(np.minimum(u, 0.0)))
    return np.where(u > 0, _log_expm1(np.maximum(u, 0.0)), neg)


def _log_moment_quad(n: np.ndarray, s: float) -> np.ndarray:
    """log E[(X − 1)ⁿ], X = e^{sZ − s²/2}, Z ~ N(0, 1), for even orders ``n`` (an array), by
    quadrature: the integrand φ(z)|e^{u} − 1|ⁿ, u = s(z − s/2), has one log-concave lobe on each
    side of z = s/2 (its log has second derivative ≤ −1), so each lobe lies within ±12 of its
    mode up to e^{−72} of its peak. The modes are found by bisection on u, each window is cut into
    panels of width 1/4 with 16 Gauss–Legendre nodes."""
    n = np.asarray(n, dtype=np.float64)
    z0 = 0.5 * s
    lobes = []
    for side in (1.0, -1.0):
        # the mode in u: d/dz log integrand = −z + n s e^u/(e^u − 1) (u > 0),
        # −z − n s/(e^{−u} − 1) (u < 0)
        near = 1e-6 * min(1.0, s)
        far = s * (n * s + np.sqrt(n) + 1.0) if side > 0 else s * (np.sqrt(n) + 10.0 + 1.5 * s)
        a = np.full_like(n, near)  # |u| at which the slope is positive (right) / negative (left)
        b = far.copy()

        def not_beyond(m, side=side):  # the mode lies at most |u| = m from z0
            u = side * m
            z = z0 + u / s
            with np.errstate(over="ignore"):
                slope = (-z + n * s / -np.expm1(-u)) if side > 0 else (-z - n * s / np.expm1(-u))
            return ~((slope > 0) if side > 0 else (slope < 0))

        # bisection (geometric on the right) to a relative width 1e-13; the window is centred
        # on the bracket's midpoint
        mid = (lambda lo, hi: np.sqrt(lo * hi)) if side > 0 else "arith"
        a, b = bracket_search(not_beyond, a, b, safe="hi", mid=mid, rtol=1e-13, ulps=0.0, steps=200, ends=True)
        um = side * 0.5 * (a + b)
        zm = z0 + um / s
        # the window [zm − 12, zm + 12] on this side of z0, in panels of 1/4
        if side > 0:
            lo_z, hi_z = np.maximum(z0, zm - 12.0), zm + 12.0
        else:
            lo_z, hi_z = zm - 12.0, np.minimum(z0, zm + 12.0)
        panels = 96
        edges = lo_z[:, None] + (hi_z - lo_z)[:, None] * np.linspace(0.0, 1.0, panels + 1)[None, :]
        mid = 0.5 * (edges[:, 1:] + edges[:, :-1])
        half = 0.5 * (edges[:, 1:] - edges[:, :-1])
        zz = mid[:, :, None] + half[:, :, None] * _GL_NODES[None, None, :]
        ww = half[:, :, None] * _GL_WEIGHTS[None, None, :]
        nn = n[:, None, None]
        logf = -0.5 * zz * zz + nn * _log_abs_expm1(s * (zz - z0))
        peak = -0.5 * zm * zm + n * _log_abs_expm1(um)
        with np.errstate(under="ignore"):
            tot = np.sum(ww * np.exp(logf - peak[:, None, None]), axis=(1, 2))
        lobes.append(peak + np.log(tot))
    return np.logaddexp(lobes[0], lobes[1]) - 0.5 * np.log(2.0 * np.pi)


@functools.lru_cache(maxsize=64)
def _log_moments(s2: float) -> np.ndarray:
    """log M_n for n = 0..256 (even n only are filled; odd entries are nan), M_n = E[(X − 1)ⁿ] =
    Δⁿ[e^{(ℓ−1)ℓ/(2s2)}](0), raised by the relative margin. Where the signed binomial sum does not
    cancel (its terms' total within a factor 10 of the result) it is taken directly; otherwise by
    :func:`_log_moment_quad`."""
    out = np.full(_WOR_FD_MAX + 1, np.nan)
    out[0] = 0.0
    evens = np.arange(2, _WOR_FD_MAX + 1, 2)
    if s2 == np.inf:  # no signal: X = 1
        out[evens] = -np.inf
        out.setflags(write=False)
        return out
    s = 1.0 / np.sqrt(s2)
    direct = np.empty(evens.size)
    ratio = np.empty(evens.size)
    for i, n in enumerate(evens):
        k = np.arange(n + 1, dtype=np.float64)
        lt = (
            special.gammaln(n + 1.0)
            - special.gammaln(k + 1.0)
            - special.gammaln(n - k + 1.0)
            + k * (k - 1.0) / (2.0 * s2)
        )
        lp = _logsumexp(lt[0::2])  # n even: the terms with even k are positive
        ln = _logsumexp(lt[1::2])
        r = np.exp(ln - lp)
        direct[i] = lp + np.log1p(-r) if r < 1.0 else -np.inf
        ratio[i] = np.logaddexp(lp, ln) - direct[i]
    use_quad = ~(ratio < np.log(10.0))
    out[evens] = direct
    if use_quad.any():
        out[evens[use_quad]] = _log_moment_quad(evens[use_quad], s)
    out[evens] = out[evens] + np.log1p(_WOR_FD_MARGIN)
    out.setflags(write=False)
    return out


def _log_a_wor_int(alpha: int, q: float, s2: float) -> float:
    """log A_α for an integer α ≥ 2, sampling without replacement (see :meth:`FixedSubsampled.rdp`),
    in log space."""
    if alpha > _MAX_INT_ORDER:
        raise ValueError(f"alpha must be at most {_MAX_INT_ORDER} for the subsampled Gaussian, got {alpha!r}")
    if s2 == 0.0:
        return np.inf
    if q == 1.0:
        return (alpha * alpha - alpha) / (2.0 * s2)
    e2 = 1.0 / s2
    j = np.arange(2, alpha + 1, dtype=np.float64)
    logc, logc_err = _log_binomials(alpha)
    logc, logc_err = logc[2:], logc_err[2:]
    cgf = j * (j - 1.0) / (2.0 * s2)  # (j − 1) ε(j)
    t = np.log(2.0) + cgf
    t[0] = min(np.log(4.0) + float(_log_expm1(e2)), e2 + np.log(2.0))
    if alpha <= _WOR_FD_MAX and alpha >= 3:
        lm = _log_moments(float(s2))
        jj = np.arange(3, alpha + 1)
        fd = np.log(4.0) + 0.5 * (lm[2 * (jj // 2)] + lm[2 * ((jj + 1) // 2)])
        t[1:] = np.minimum(t[1:], fd)
    terms = logc + j * np.log(q) + t
    # each log-term is a sum of parts with a few ulps of error each: raise it by a bound on that
    # error (and the log-binomials by theirs), so that the sum stays above the exact bound
    terms = (
        terms
        + logc_err
        + 8
        * np.finfo(float).eps
        * (np.abs(logc) + np.abs(j * np.log(q)) + np.abs(np.where(np.isfinite(t), t, 0.0)) + 1.0)
    )
    return float(np.logaddexp(0.0, _logsumexp(terms)))


@functools.lru_cache(maxsize=32)
def _log_binomials(alpha: int):
    """(log C(α, j) for j = 0..α, a bound on each one's absolute error). Up to α = 4096 from the
    exact integers (error: a rounding); beyond, from gammaln, whose difference of three large
    values loses up to ~16 ulps of gammaln(α + 1) (measured 6.5e-13 at α = 300)."""
    eps = np.finfo(float).eps
    if alpha <= 4096:
        row, c = [], 1
        for j in range(alpha + 1):  # C(α, j + 1) = C(α, j)(α − j)/(j + 1), exactly
            row.append(math.log(c))
            c = c * (alpha - j) // (j + 1)
        vals = np.array(row)
        err = 2 * eps * (np.abs(vals) + 1.0)
    else:
        j = np.arange(alpha + 1, dtype=np.float64)
        gj, gk = special.gammaln(j + 1.0), special.gammaln(alpha - j + 1.0)
        ga = float(special.gammaln(alpha + 1.0))
        vals = ga - gj - gk
        err = 64 * eps * (ga + gj + gk + 1.0)
    vals.setflags(write=False)
    err.setflags(write=False)
    return vals, err
