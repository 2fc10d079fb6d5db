"""Log-space special functions: log(1 − e^x), log(e^a − e^b), the Gaussian mechanism's log δ far below
underflow, expm1(x) − x, and the exact Rényi divergence of ε-DP."""

from __future__ import annotations

import functools

import numpy as np
from scipy import special

from .rounding import MARGINS, _in_range, _product_residual, down, up

LOG_HALF = np.log(0.5)
SQRT2 = np.sqrt(2.0)


def log1mexp(x):
    """log(1 - exp(x)) for x <= 0, accurate for all x (Mächler 2012): -inf at x = 0."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > -np.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def log_subtract(la, lb):
    """log(exp(la) - exp(lb)) for la >= lb (-inf where they are equal)."""
    la = np.asarray(la, dtype=np.float64)
    lb = np.asarray(lb, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        diff = np.where(np.isneginf(lb), -np.inf, lb - la)
    return la + log1mexp(np.minimum(diff, 0.0))


_GL_X, _GL_W = np.polynomial.legendre.leggauss(12)

#: (lower end of a band of y, terms of the continued fraction for g(y) there): the fewest terms
#: with g within 2.2e-16 relative of mpmath on the band (measured on 400 points per band, with a
#: margin of 10 % or more terms)
_CF_TERMS = ((10.0, 20), (5.0, 30))
#: g on [1, 5): Taylor series of 20 terms about the centres of 32 intervals of width 1/8
_TAYLOR_H, _TAYLOR_N = 0.125, 20
_TAYLOR_Y0 = 1.0 + _TAYLOR_H * (np.arange(32) + 0.5)


def _cf_one_minus_y_mills(y, terms):
    """K/(y + K), K = 1/(y + 2/(y + 3/(y + …))) to ``terms`` terms (see _one_minus_y_mills)."""
    k = np.zeros_like(y)
    for j in range(terms, 1, -1):
        k = j / (y + k)
    k = 1.0 / (y + k)
    return k / (y + k)


@functools.lru_cache(maxsize=1)
def _taylor_table():
    """Taylor coefficients of g about each centre y₀ (rows): from R(y₀) (erfcx) and g(y₀) (the
    continued fraction to 2,000 terms: within 2 unit roundoffs), by the system R′ = −g,
    g′ = y g − R: (k + 1) R_{k+1} = −g_k, (k + 1) g_{k+1} = y₀ g_k + g_{k−1} − R_k."""
    y0 = _TAYLOR_Y0
    g = np.zeros((y0.size, _TAYLOR_N))
    r = np.zeros((y0.size, _TAYLOR_N))
    r[:, 0] = np.sqrt(np.pi / 2.0) * special.erfcx(y0 / SQRT2)
    g[:, 0] = _cf_one_minus_y_mills(y0, 2000)
    for k in range(_TAYLOR_N - 1):
        r[:, k + 1] = -g[:, k] / (k + 1)
        g[:, k + 1] = (y0 * g[:, k] + (g[:, k - 1] if k else 0.0) - r[:, k]) / (k + 1)
    return g


def _one_minus_y_mills(y):
    """g(y) = 1 − y·R(y) = ∫_0^∞ s e^{−ys − s²/2} ds > 0, with R(y) = Φ(−y)/φ(y) the Mills ratio
    (1-d array, y ≥ −2): 1 − y·√(π/2)·erfcx(y/√2) below y = 1 (y·R ≤ 0.66 there: ≤ 3.5 unit
    roundoffs, measured); on [1, 5) a Taylor series about the nearest of 32 centres (|y − y₀| ≤
    1/16, :func:`_taylor_table`; ≤ 4 unit roundoffs against mpmath on 3,000 points); from 5 on
    K/(y + K) with K = 1/(y + 2/(y + 3/(y + …))) the tail of Laplace's continued fraction
    R(y) = 1/(y + 1/(y + 2/(y + …))) (all terms positive: evaluated backwards without
    cancellation; ≤ 1 unit roundoff plus truncation, see ``_CF_TERMS``). ~1/y² for large y, where
    1 − y·R(y) itself loses all its digits. (The continued fraction alone needs ~450 terms near
    y = 1: ten times slower.)"""
    out = np.empty_like(y)
    low = y < 1.0
    out[low] = 1.0 - y[low] * (np.sqrt(np.pi / 2.0) * special.erfcx(y[low] / SQRT2))
    mid = (y >= 1.0) & (y < 5.0)
    if mid.any():
        ym = y[mid]
        j = np.clip(((ym - 1.0) / _TAYLOR_H).astype(np.int64), 0, _TAYLOR_Y0.size - 1)
        t = ym - _TAYLOR_Y0[j]
        coef = _taylor_table()[j]
        acc = coef[:, -1]
        for k in range(_TAYLOR_N - 2, -1, -1):
            acc = acc * t + coef[:, k]
        out[mid] = acc
    upper = np.inf
    for lo, terms in _CF_TERMS:
        band = (y >= lo) & (y < upper)
        upper = lo
        if band.any():
            out[band] = _cf_one_minus_y_mills(y[band], terms)
    return out


def _integral_log_delta(mu, c, pieces):
    """log δ_μ(ε) from c = −a = ε/μ − μ/2 (1-d arrays; μ < 1 with ``pieces`` = 1, or μ < 4 and
    c ≥ 0 with ``pieces`` = 4; c ≤ 1.5e4): see gaussian_log_delta.

    The identity e^ε φ(b) = φ(a) gives δ = φ(c)·[R(c) − R(c + μ)] (R the Mills ratio), and
    R′ = y R − 1 turns the difference into an integral of a positive function:
    δ = φ(c)·∫_c^{c+μ} g(y) dy, g = 1 − y R (:func:`_one_minus_y_mills`). So
    log δ = −c²/2 − ½ log 2π + log μ + log(mean of g over [c, c + μ]), no term a difference of
    nearly equal numbers (the earlier forms subtracted log T1 − log T2 ≈ 1/c² from terms of size
    log μ — up to 2094 ulps of log δ below the truth at ε = 1000 μ, μ tiny — or two log-Φ values
    whose difference is a few times smaller than them — 13 ulps below at μ = 0.5, ε = 2.06). The
    mean by 12-point Gauss–Legendre on each of ``pieces`` equal parts of length < 1 (g is entire
    and, for y ≥ −2, its 24th derivative is ≲ 1e22 while the 12-point rule's factor is
    (12!)⁴/(25·(24!)³) ≈ 8e-39: exact to rounding). Error of the result: c within ~1 unit
    roundoff u = 2⁻⁵³ (:func:`_half_minus_ratio`), so c²/2 within 3u; log μ, −½ log 2π, the
    mean (g within 3.5u, the rule's sum within 2u) and its log within a few u of their sizes;
    three additions: ≲ 8u·|log δ| + 10u in all, |log δ| ≥ 0.69 here (δ ≤ ½) — covered by the
    caller's rounding (measured: ≤ 2.7 ulps).
    """
    # (μ = 5e-324: the nodes c + μ(…) round to c, g is flat there)
    step = mu / pieces
    x = (np.arange(pieces)[:, None] + 0.5 * (1.0 + _GL_X[None, :])).ravel()  # nodes on [0, pieces]
    w = np.tile(0.5 * _GL_W, pieces) / pieces  # weights of the mean
    y = c[:, None] + step[:, None] * x[None, :]
    g = _one_minus_y_mills(y.ravel()).reshape(y.shape)
    mean_g = np.zeros_like(c)
    for j in range(w.size):  # (not g @ w: BLAS sums in an order that depends on the batch size)
        mean_g = mean_g + g[:, j] * w[j]
    return -0.5 * c * c - 0.5 * np.log(2.0 * np.pi) + np.log(mu) + np.log(mean_g)


def _half_minus_ratio(mu, eps):
    """a = μ/2 − ε/μ to about one unit roundoff of |a| (arrays, μ > 0): ε/μ = q + ρ with the
    remainder ρ = (ε − q·μ)/μ from Dekker's TwoProduct (ε − q·μ is exact: Sterbenz), and
    μ/2 − q by Knuth's TwoSum. The plain μ/2 − ε/μ errs by an ulp of ε/μ, which is all of a's
    digits where ε ≈ μ²/2 at large μ (μ = 1000, ε = 5e5: δ off by 1e-13 relative). Outside the
    range where TwoProduct is exact, ρ = 0 (the plain form)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        q = eps / mu
        p = q * mu
        ok = _in_range(q, mu, p) & np.isfinite(q) & (q != 0)
        res = _product_residual(np.where(ok, q, 0.0), np.where(ok, mu, 0.0), np.where(ok, p, 0.0))
        rho = np.where(ok, ((eps - p) - res) / mu, 0.0)
        h = mu / 2
        s = h - q
        bp = s - h
        t = (h - (s - bp)) + (-q - bp)  # TwoSum: h + (−q) = s + t exactly
        return np.where(ok & np.isfinite(s), s + (t - rho), s)


#: the rounding of log δ_μ(ε) by :func:`gaussian_log_delta` (the margin ``gauss_delta``): relative
#: 4·2⁻⁵² of |log δ| (4 to 8 ulps)
#: everywhere, and where a = μ/2 − ε/μ > 0, μ ≥ 1 (δ near 1, log δ ≈ −[Φ(−a) + e^ε Φ(b)]) another
#: (a² + 4)·2⁻⁵²: Φ(−a) and φ(a) in floating point err by ~a²/2 unit roundoffs relative each (the
#: rounding of a²/2 inside e^{−a²/2}). Measured against mpmath (60+ digits, 17,400 points: μ
#: from 1e-300 to 1e3 every half decade, ε from 0 to 1e5, ε/μ up to 1000, ε = μ²/2 + kμ for
#: |k| ≤ 6; and 2,600 points with 0.05 ≤ μ ≤ 40, −6 ≤ a ≤ 3), before rounding: within 2.7 ulps
#: (≤ 2·2⁻⁵² relative) where μ < 1 or a ≤ 0, μ < 4 (the bound in _integral_log_delta's docstring
#: is ~8 unit roundoffs), 2.1 ulps in the tail, and where δ is near 1 within 7 ulps plus
#: 0.9·a²·2⁻⁵³ relative (a = 15.8: 2.6e-14)
GAUSS_DELTA_REL = MARGINS["gauss_delta"].rel


def gaussian_log_delta(mu, eps, direction="up"):
    """log δ_μ(ε) = log[Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)] for μ > 0, ε ≥ 0 (broadcast).

    Near the centre the two ``log_ndtr`` terms are subtracted in log space. In the tail
    (a = μ/2 − ε/μ < −4) the identity e^ε φ(b) = φ(a) (b = a − μ) gives
    δ = ½ e^{−a²/2} [erfcx(−a/√2) − erfcx(−b/√2)], which keeps full relative accuracy where δ
    underflows a float (down to δ = 1e-5000 and beyond). μ = inf gives δ = 1.

    ``direction``: ``"up"`` (default: an upper bound on δ, the safe side of a profile) moves the
    computed value up by :data:`GAUSS_DELTA_REL` (and (a² + 4)·2⁻⁵² where a > 0, μ ≥ 1), ``"down"`` moves it
    down by as much (a lower bound on δ, for consumers that bound ε or a loss tail from below),
    ``"nearest"`` returns it unrounded (within the few ulps stated at :data:`GAUSS_DELTA_REL`).
    """
    if direction not in ("up", "down", "nearest"):
        raise ValueError(f"direction must be 'up', 'down' or 'nearest', got {direction!r}")
    mu, eps = np.broadcast_arrays(np.asarray(mu, dtype=np.float64), np.asarray(eps, dtype=np.float64))
    out = np.empty(mu.shape, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a = _half_minus_ratio(mu, eps)
        b = -mu / 2 - eps / mu
        tail = a < -4.0
        # centre: log_ndtr difference, e^ε Φ(b) as φ(a)·R(−b) (R the Mills ratio: e^ε φ(b) = φ(a)),
        # not ε + log Φ(b) (two numbers of size ε cancelling where ε ≈ μ²/2 is large)
        la = special.log_ndtr(a)
        lb = -0.5 * a * a - 0.5 * np.log(2.0 * np.pi) + np.log(np.sqrt(np.pi / 2.0) * special.erfcx(-b / SQRT2))
        centre = log_subtract(la, np.minimum(lb, la))
        # tail: erfcx form (a, b < 0 so the arguments are positive)
        xa = -a / SQRT2
        xb = -b / SQRT2
        ea = special.erfcx(xa)
        eb = special.erfcx(xb)
        # far tail (x_a > 1e4): erfcx(x) = (1 − 1/(2x²) + O(x⁻⁴)) / (x√π); subtract the two-term
        # expansions analytically (x_b − x_a = μ/√2 exactly) to avoid cancellation; the
        # neglected terms are below 1e-15 relative
        far = xa > 1e4
        xa_f = np.where(far, xa, 1.0)
        xb_f = np.where(far, xb, 2.0)
        # (xa² + xa·xb + xb²)/(xa·xb)³ written as (xa/xb + 1 + xb/xa)/(xa·xb)² to avoid overflow
        r = (xa_f / xb_f + 1.0 + xb_f / xa_f) / xa_f / xb_f
        log_diff_far = np.log(mu / SQRT2) - np.log(xa_f) - np.log(xb_f) + np.log1p(-0.5 * r) - 0.5 * np.log(np.pi)
        log_diff = np.where(far, log_diff_far, np.log(np.maximum(ea - eb, 0.0)))
        tail_val = -0.5 * a * a + LOG_HALF + log_diff
        out[...] = np.where(tail, tail_val, centre)
        # μ < 1, or μ < 4 and a ≤ 0: both forms above subtract numbers close to each other
        # (~μ relative at small μ: δ(0) came out 0 for μ < 1e-16; a few times at μ ~ 1): the
        # integral of a positive function instead (_integral_log_delta)
        ok = ~far & np.isfinite(a)
        for pieces, where in ((1, ok & (mu < 1.0)), (4, ok & (mu >= 1.0) & (mu < 4.0) & (a <= 0.0))):
            if where.any():
                out[where] = _integral_log_delta(mu[where], -a[where], pieces)
        # ε/μ overflowing (subnormal μ): a = −inf, log δ < −a²/2 is below −1e308
        out[np.isneginf(a)] = -np.inf
        out[np.isinf(mu)] = 0.0
        out[(eps == np.inf) & np.isfinite(mu)] = -np.inf
        if direction == "nearest":
            return out
        move = up if direction == "up" else down
        out = move(out, "gauss_delta")
        # (μ < 1: δ ≤ 0.38, the integral form, no such error)
        near_one = (a > 0.0) & (mu >= 1.0) & np.isfinite(out) & (out < 0.0)
        if near_one.any():
            # δ near 1: Φ(−a)'s and φ(a)'s own errors, ~a²/2 unit roundoffs each of −log δ
            # (either sign), a²·2⁻⁵³ in all, doubled; and 4·2⁻⁵² more (measured: 6.9 ulps of
            # log δ = −0.08 at μ = 3.6, a = 1.25, the log-Φ difference)
            extra = np.where(near_one, np.abs(out) * (a * a + 4.0) * 2.0**-52, 0.0)
            out = np.where(near_one, out + extra if direction == "up" else out - extra, out)
            if direction == "up":
                out = np.minimum(out, 0.0)
    return out


def expm1mx(x):
    """e^x − 1 − x without cancellation: its Taylor series Σ_{k≥2} x^k/k! for |x| < 0.7 (21 terms:
    the remainder is below 1e-23 relative), ``expm1(x) − x`` beyond (no cancellation there).
    Non-negative for every real x.

    >>> float(expm1mx(1e-8))      # x²/2 + x³/6: not 0, as expm1(x) − x gives in floating point
    5.000000016666667e-17
    >>> round(float(expm1mx(2.0)), 12)
    4.389056098931
    """
    x = np.asarray(x, dtype=np.float64)
    small = np.abs(x) < 0.7
    xs = np.where(small, x, 0.0)
    term = 0.5 * xs * xs
    total = term.copy()
    for k in range(3, 22):
        term = term * xs / k
        total = total + term
    xb = np.where(small, 0.0, x)
    with np.errstate(over="ignore"):
        big = np.expm1(xb) - xb
    return np.where(small, total, big)


def pure_rdp_exact(eps, alpha):
    """The Rényi divergence of randomized response with parameter ε at order α — the tight RDP of
    ε-DP (Steinke 2024, Theorem 4), not rounded:

        ε̂(α) = ε − log[(1 + e^{−ε}) / (1 + e^{−(2α−1)ε})] / (α − 1);  ε̂(∞) = ε.

    Evaluated as log1p[(1 − e^{−(α−1)ε})(e^{αε} − 1)/(1 + e^ε)]/(α − 1) while αε ≤ 30 (every
    factor positive: full relative accuracy for small ε and α near 1), and in the second form,
    with the difference of logs written as one log1p, beyond. Shared by
    ``conversions.pure_to_rdp`` and ``mechanisms.RandomizedResponse.rdp`` (which round it up).

    >>> round(float(pure_rdp_exact(1.0, 2.0)), 12)
    0.735325664056
    """
    eps, alpha = np.broadcast_arrays(np.asarray(eps, dtype=np.float64), np.asarray(alpha, dtype=np.float64))
    out = np.empty(eps.shape, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        am1 = alpha - 1.0
        c = am1 * eps
        ae = np.minimum(alpha * eps, 30.0)
        xa = -np.expm1(-c) * np.expm1(ae) / (1.0 + np.exp(np.minimum(eps, 30.0)))
        form_a = np.log1p(xa) / am1
        u = np.exp(-eps)
        t = 2.0 * c
        diff = np.log1p(u * (-np.expm1(-t)) / (1.0 + u * np.exp(-t)))
        form_b = eps - diff / am1
        out[...] = np.where(alpha * eps <= 30.0, form_a, form_b)
        out[np.isinf(alpha)] = eps[np.isinf(alpha)]
        out[eps == 0] = 0.0
        out[np.isinf(eps)] = np.inf
    return np.clip(out, 0.0, eps)
