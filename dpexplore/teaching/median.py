"""The median by inverse sensitivity and by the Laplace mechanism (Steinke 2023a, "Beyond Global
Sensitivity via Inverse Sensitivity")."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._validation import as_array, check_positive, scalar_out
from ._common import _check_rng, _delta_open, _int, _pos, _real, _scalar, _values

__all__ = [
    "inverse_sensitivity_median",
    "inverse_sensitivity_median_loss",
    "inverse_sensitivity_median_probs",
    "inverse_sensitivity_median_bound",
    "inverse_sensitivity_median_error_cdf",
    "inverse_sensitivity_median_mean_error",
    "laplace_median",
    "laplace_median_error_bound",
    "laplace_median_error_cdf",
    "laplace_median_mean_error",
]


def _bounds(lower, upper) -> tuple[float, float]:
    lo = _real(lower, "lower")
    hi = _real(upper, "upper")
    if not hi > lo:
        raise ValueError(f"upper must be > lower, got lower={lower!r}, upper={upper!r}")
    return lo, hi


def _median_inputs(data, lower, upper):
    x = _values(data, "data").ravel()
    if x.size == 0:
        raise ValueError(f"data must be non-empty, got {data!r}")
    lo, hi = _bounds(lower, upper)
    return np.sort(x), lo, hi


def _grid(grid, lo, hi) -> np.ndarray:
    if isinstance(grid, numbers.Integral) and not isinstance(grid, bool):
        return np.linspace(lo, hi, _int(grid, "grid", minimum=2))
    g = _values(grid, "grid").ravel()
    if g.size < 1:
        raise ValueError(f"grid must be non-empty, got {grid!r}")
    return np.sort(g)


def inverse_sensitivity_median_loss(data, grid):
    """Inverse-sensitivity loss of the median (Steinke 2023a, "Beyond Global Sensitivity", eq. (4)): the
    number of data points that must be replaced so that y becomes the median. With the
    median x_(m), m = ⌈n/2⌉ (the usual median for odd n, the lower median for even n),
    L(y) = #{x_i < y}, G(y) = #{x_i > y}::

        ℓ(x, y) = max(0, L(y) − m + 1) + max(0, G(y) − (n − m))

    (at most one term is non-zero). Its sensitivity is 1 (Steinke 2023a, Lemma 1).

    >>> inverse_sensitivity_median_loss([1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 3.0, 3.5, 5.0]).tolist()
    [3, 0, 1, 2]
    """
    x = np.sort(_values(data, "data").ravel())
    g = as_array(grid, "grid", allow_inf=False)
    n = x.size
    m = (n + 1) // 2
    less = np.searchsorted(x, g, side="left")
    greater = n - np.searchsorted(x, g, side="right")
    return np.maximum(0, less - m + 1) + np.maximum(0, greater - (n - m))


def inverse_sensitivity_median_probs(data, eps, lower, upper, grid=1001):
    """Output distribution of the inverse sensitivity mechanism for the median (Steinke 2023a, eq. (5)):
    P[M(x) = y] ∝ exp(−ε ℓ(x, y)/2) over the finite grid Y (``grid`` points on
    [lower, upper], or an explicit array). Returns ``(grid, probs)``. ε-DP (Steinke 2023a, Theorem 2).

    >>> g, p = inverse_sensitivity_median_probs([0.2, 0.5, 0.8], 2.0, 0.0, 1.0, grid=3)
    >>> g.tolist(), p.round(6).tolist()     # losses 2, 0, 2
    ([0.0, 0.5, 1.0], [0.106507, 0.786986, 0.106507])
    """
    x, lo, hi = _median_inputs(data, lower, upper)
    e = _pos(eps, "eps")
    g = _grid(grid, lo, hi)
    loss = inverse_sensitivity_median_loss(x, g)
    logw = -0.5 * e * loss
    logw -= logw.max()
    w = np.exp(logw)
    return g, w / w.sum()


def inverse_sensitivity_median(data, eps, lower, upper, rng, grid=1001, size=None):
    """ε-DP median by the inverse sensitivity mechanism (Steinke 2023a, "Beyond Global Sensitivity via
    Inverse Sensitivity", eq. (4)–(5), Theorem 2): the exponential mechanism over a finite output
    grid with the loss ℓ(x, y) of :func:`inverse_sensitivity_median_loss`,
    P[M(x) = y] ∝ exp(−ε ℓ(x, y)/2), sampled from these probabilities. Utility: see
    :func:`inverse_sensitivity_median_bound`.

    >>> x = np.random.default_rng(0).normal(0.5, 0.1, 1001)
    >>> m = inverse_sensitivity_median(x, 1.0, 0.0, 1.0, np.random.default_rng(1))
    >>> bool(abs(m - np.median(x)) < 0.05)
    True
    """
    rng = _check_rng(rng)
    g, p = inverse_sensitivity_median_probs(data, eps, lower, upper, grid)
    shape = None if size is None else (_int(size, "size"),)
    return scalar_out(np.asarray(rng.choice(g, size=shape, p=p)))


def inverse_sensitivity_median_bound(data, eps, beta, lower, upper, grid=1001):
    """Utility of the inverse sensitivity median (Steinke 2023a, Lemma 3 and Theorem 4): with probability
    ≥ 1 − β the output has loss ≤ k = ⌊(2/ε) ln(|Y|/β)⌋, hence lies in
    [x_(m−k), x_(m+k)] (order statistics clipped to [lower, upper]), so
    |M(x) − median| ≤ LS^k(x) (Steinke 2023a eq. (3)). Returns ``(k, lo, hi)``.

    >>> inverse_sensitivity_median_bound(np.arange(1, 100.0), 1.0, 0.1, 0.0, 100.0, grid=101)
    (13, 37.0, 63.0)
    """
    x, lo, hi = _median_inputs(data, lower, upper)
    e = _pos(eps, "eps")
    b = _scalar(_delta_open(beta, "beta"), "beta", beta)
    size = _grid(grid, lo, hi).size
    n = x.size
    # k ≥ n already gives the whole range (tiny ε: 2/ε·log(size/β) may overflow to inf)
    k = int(math.floor(min(2.0 / e * math.log(size / b), n + 1.0)))
    m = (n + 1) // 2
    left = x[m - k - 1] if m - k >= 1 else lo
    right = x[m + k - 1] if m + k <= n else hi
    return k, float(max(left, lo)), float(min(right, hi))


def _is_median_errors(data, eps, lower, upper, grid):
    """The exact output law of the inverse sensitivity median at one ε and its errors
    |y − x_(m)|, m = ⌈n/2⌉ (the data's median, as in the loss)."""
    g, p = inverse_sensitivity_median_probs(data, eps, lower, upper, grid)
    x = np.sort(_values(data, "data").ravel())
    return np.abs(g - x[(x.size + 1) // 2 - 1]), p


def inverse_sensitivity_median_mean_error(data, eps, lower, upper, grid=1001):
    """E|M(x) − x_(m)| for :func:`inverse_sensitivity_median` (Steinke 2023a, "Beyond Global Sensitivity
    via Inverse Sensitivity", eq. (5)), exactly, from its finite output law p_y ∝ exp(−ε ℓ(x, y)/2)
    (:func:`inverse_sensitivity_median_probs`) on the grid Y::

        E|M(x) − x_(m)| = Σ_{y ∈ Y} p_y |y − x_(m)|,

    x_(m), m = ⌈n/2⌉, the data's median (as in :func:`inverse_sensitivity_median_loss`). Vectorised
    over ``eps`` (one output law per ε).

    >>> round(inverse_sensitivity_median_mean_error([0.2, 0.5, 0.8], 2.0, 0.0, 1.0, grid=3), 6)  # 2·0.106507·0.5
    0.106507
    """
    e = check_positive(eps, "eps")
    out = np.empty(e.shape)
    for i, ei in np.ndenumerate(e):
        err, p = _is_median_errors(data, float(ei), lower, upper, grid)
        out[i] = float(np.dot(p, err))
    return scalar_out(out)


def inverse_sensitivity_median_error_cdf(t, data, eps, lower, upper, grid=1001):
    """P[|M(x) − x_(m)| ≤ t] for :func:`inverse_sensitivity_median` (Steinke 2023a, eq. (5)), exactly:
    the output law p_y (:func:`inverse_sensitivity_median_probs`) summed over the grid points within
    t of the data's median x_(m), m = ⌈n/2⌉::

        CDF(t) = Σ_{y ∈ Y, |y − x_(m)| ≤ t} p_y

    (a cumulative sum of p sorted by error, read at t; capped at 1 against rounding). Vectorised
    over ``t``; ``eps`` is one ε.

    >>> inverse_sensitivity_median_error_cdf([-1.0, 0.0, 0.4, 0.5], [0.2, 0.5, 0.8], 2.0, 0.0, 1.0, grid=3).round(6).tolist()
    [0.0, 0.786986, 0.786986, 1.0]
    """
    tt = as_array(t, "t", allow_inf=True)
    e = _pos(eps, "eps")
    err, p = _is_median_errors(data, e, lower, upper, grid)
    order = np.argsort(err, kind="stable")
    cdf = np.concatenate([[0.0], np.minimum(np.cumsum(p[order]), 1.0)])
    return scalar_out(cdf[np.searchsorted(err[order], tt, side="right")])


def laplace_median(data, eps, lower, upper, rng, size=None):
    """Laplace-mechanism median, the global-sensitivity baseline (Steinke 2023a, eq. (8)): clip the data
    to [lower, upper]; the median x_(⌈n/2⌉) then has global sensitivity GS = upper − lower under
    replacement of one point (half the points at ``lower``, the rest at ``upper``: moving one
    flips the median), so M(x) = median + Lap(GS/ε) is ε-DP; the output is clipped to
    [lower, upper] (post-processing).

    >>> laplace_median([0.4, 0.5, 0.6], 1e6, 0.0, 1.0, np.random.default_rng(0)) - 0.5 < 1e-5
    True
    """
    rng = _check_rng(rng)
    x, lo, hi = _median_inputs(data, lower, upper)
    e = _pos(eps, "eps")
    x = np.clip(x, lo, hi)
    med = x[(x.size + 1) // 2 - 1]
    shape = None if size is None else (_int(size, "size"),)
    out = np.clip(med + rng.laplace(0.0, (hi - lo) / e, shape), lo, hi)
    return scalar_out(out)


def laplace_median_error_bound(eps, lower, upper, beta):
    """|M(x) − median| ≤ (GS/ε) ln(1/β) with probability ≥ 1 − β, GS = upper − lower, since
    P[|Lap(b)| > t] = e^{−t/b}. (Steinke 2023a eq. (8) prints ln(1/(2β)), which holds with probability
    1 − 2β; the safe ln(1/β) is used here.)

    >>> round(laplace_median_error_bound(1.0, 0.0, 1.0, 0.05), 6)
    2.995732
    """
    e = check_positive(eps, "eps")
    lo, hi = _bounds(lower, upper)
    b = _delta_open(beta, "beta")
    with np.errstate(over="ignore"):  # beyond float max: inf (still valid)
        return scalar_out((hi - lo) / e * np.log(1.0 / b))


def _laplace_median_inputs(eps, median, lower, upper):
    e = check_positive(eps, "eps")
    lo, hi = _bounds(lower, upper)
    m = _real(median, "median")
    if not lo <= m <= hi:
        raise ValueError(f"median must lie in [lower, upper] = [{lo!r}, {hi!r}], got median={median!r}")
    with np.errstate(over="ignore"):  # ε below ~1e-308·(upper − lower): b = inf
        b = (hi - lo) / e
    return b, m, lo, hi


def laplace_median_error_cdf(t, eps, median, lower, upper):
    """P[|M(x) − median| ≤ t] for :func:`laplace_median` M = clip(median + L, lower, upper),
    L ~ Lap(b), b = (upper − lower)/ε (Steinke 2023a, eq. (8)). Each side of the median has mass ½
    and is cut off at its distance to the bound (a = upper − median, c = median − lower), where
    clipping puts the rest of that side's mass::

        CDF(t) = ½ [1 if t ≥ a else 1 − e^{−t/b}] + ½ [1 if t ≥ c else 1 − e^{−t/b}],  t ≥ 0,

    computed with expm1 (no cancellation for t ≪ b). Vectorised over ``t`` and ``eps``.

    >>> round(laplace_median_error_cdf(0.1, 1.0, 0.5, 0.0, 1.0), 12)      # 1 − e^{−0.1}
    0.095162581964
    """
    tt = as_array(t, "t", allow_inf=True)
    b, m, lo, hi = _laplace_median_inputs(eps, median, lower, upper)
    tt, b = np.broadcast_arrays(tt, b)
    with np.errstate(invalid="ignore", under="ignore"):  # t = b = inf: the side is cut off anyway
        base = -np.expm1(-np.maximum(tt, 0.0) / b)
    out = 0.5 * np.where(tt >= hi - m, 1.0, base) + 0.5 * np.where(tt >= m - lo, 1.0, base)
    return scalar_out(np.where(tt < 0, 0.0, out))


def laplace_median_mean_error(eps, median, lower, upper):
    """E|M(x) − median| for :func:`laplace_median` (Steinke 2023a, eq. (8)): each side of the median
    has mass ½ and is an exponential of mean b cut off at its distance to the bound, and
    E min(Exp(b), a) = b(1 − e^{−a/b}), so::

        E|M(x) − median| = ½ b(1 − e^{−a/b}) + ½ b(1 − e^{−c/b}),

    b = (upper − lower)/ε, a = upper − median, c = median − lower (expm1: no cancellation for large
    b). Vectorised over ``eps``.

    >>> round(laplace_median_mean_error(1.0, 0.5, 0.0, 1.0), 12)           # 1 − e^{−1/2}
    0.393469340287
    """
    b, m, lo, hi = _laplace_median_inputs(eps, median, lower, upper)

    def side(d):  # E min(Exp(b), d); d as b → inf
        with np.errstate(invalid="ignore", under="ignore"):
            return np.where(np.isinf(b), d, b * -np.expm1(-d / b))

    return scalar_out(0.5 * side(hi - m) + 0.5 * side(m - lo))
