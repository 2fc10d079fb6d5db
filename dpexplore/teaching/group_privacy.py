"""Better privacy for larger groups? A numerical exploration of an open problem (Pujol & Desfontaines 2023).

Pujol & Desfontaines (2023), "Open problem – Better privacy guarantees for larger groups", ask for
a counting mechanism whose error is about a fraction r of each count while people in larger groups
get a stronger, *group-wise* zCDP guarantee (their Definition: for a record added to group i,
D_α(M(D) ‖ M(D')) ≤ α·v(D)_i and D_α(M(D') ‖ M(D)) ≤ α·v(D)_i for all α > 1). Their Algorithm 1 (Pujol & Desfontaines 2023, Algorithm 1):

    σ² = 1/(2ρ);  X ~ N(x, σ²);  Y ~ N(X, (rX)²);  release Y.

It is ρ-zCDP (the Gaussian mechanism, then post-processing), and that is all that is proven. Whether
it is better for large x is OPEN: Pujol & Desfontaines could not prove it. **Everything below the
samplers is a numerical exploration of that open problem, not a privacy guarantee**: quadrature
values with an estimated (not proven) numerical error, for the one-count pair (x, x + 1).

Numerics. Writing Y = X·V with V = 1 + rW, W ~ N(0, 1) independent of X (Y | X ~ N(X, (rX)²) and
W is symmetric), the output density is the product-distribution integral

    p_x(y) = ∫ φ_σ(t − x) φ_r(y/t − 1) / |t| dt,

evaluated by composite Gauss–Legendre quadrature (4 nodes per panel) on fixed t-panels: uniform
over x ± 14σ, merged with log-spaced panels in |t| whose ratio step is r/0.75, which resolve the
spike of φ_r(y/t − 1)/|t| near t ≈ y at every scale; p_x has a logarithmic singularity at y = 0
(p_x(y) ~ −2 φ_σ(x) φ_r(1) log|y|, with φ_s the N(0, s²) density), which log-spaced y-panels
resolve. The Rényi divergence D_α(P_x ‖ P_{x+1}) = log ∫ p_x^α p_{x+1}^{1−α} dy / (α − 1) is
then a Gauss–Legendre sum in log space over the merged y-panels, each density normalised on its
panels. The error reported is the change when every grid is refined (twice the panels): an
estimate, not a bound — the tests find it above the actual error (against adaptive quadrature
for the density, ≈ 1e-8 relative; and the Gaussian limits for the divergences).

A lab step: :func:`algorithm1_sample` (10⁶ draws ≈ 50 ms), :func:`output_density` (≈ 2 ms for
10 points), :func:`renyi_divergence` for one count and any orders (the first call for a count
≈ 4–15 ms; its densities are then cached, so moving the order α costs ~1 ms), and
:func:`zcdp_like_curve` over a grid of counts (cached per parameters; ≈ 15 ms per count the first
time — precompute it for the lab's count grid when the lab starts).

>>> m = algorithm1_moments(10000, 100.0, 0.3)
>>> m["mean"], round(m["std"], 1)
(10000.0, 3000.0)
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import logsumexp

from .._numerics import div_up
from .._validation import as_array, check_alpha, scalar_out
from .._validation import check_rng as _rng

__all__ = [
    "sigma2_from_rho",
    "rho_from_sigma2",
    "algorithm1_sample",
    "algorithm1_moments",
    "output_density",
    "renyi_divergence",
    "rho_hat",
    "zcdp_like_curve",
]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_L = 14.0  # half-width of the uniform grids, in standard deviations
_N_UNI = 40  # uniform panels at refine = 1 (the density)
_PER_R = 0.75  # log-spaced panels per relative step r (ratio step r/_PER_R at refine = 1)
#: the divergences' grids are half as fine: their refined values agree with the fine grids' to
#: ~1e-11 and the refinement change (the error reported) stays far above that, at a quarter of
#: the cost of a count (what a lab's slider step pays)
_DIV_COARSEN = 2
_N_GL = 4  # Gauss–Legendre nodes per panel
_FLOOR = 1e-10  # smallest |t|, |y| on the log-spaced grids, relative to the largest
_MAX_COUNTS = 200  # bounds on what one call may cost (a lab is reachable by any client)
_MAX_ORDERS = 64
_MAX_POINTS = 100000


def _scalar(x, name: str, *, positive: bool = False, allow_zero: bool = False) -> float:
    arr = as_array(x, name, allow_inf=False)
    if arr.ndim:
        raise ValueError(f"{name} must be a scalar, got shape {arr.shape}")
    v = float(arr)
    if positive and (v < 0 or (v == 0 and not allow_zero)):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {x!r}")
    return v


def _r(r) -> float:
    v = _scalar(r, "r")
    if not 0.05 <= v <= 5.0:
        raise ValueError(
            f"r (relative noise) must lie in [0.05, 5] for the quadrature (its grids grow like 1/r), got {r!r}"
        )
    return v


def sigma2_from_rho(rho) -> float:
    """σ² = 1/(2ρ), the first step of Pujol & Desfontaines 2023, Algorithm 1 (the Gaussian mechanism for a count is ρ-zCDP with
    ρ = 1/(2σ²); Bun & Steinke 2016, Proposition 1.6). Rounded upward (more noise: the safe side;
    exact where 1/(2ρ) is a float).

    >>> sigma2_from_rho(0.005)
    100.0
    """
    return float(div_up(1.0, 2.0 * _scalar(rho, "rho", positive=True)))


def rho_from_sigma2(sigma2):
    """ρ = 1/(2σ²): the Gaussian mechanism N(x, σ²) for a count (sensitivity 1) is ρ-zCDP (Bun &
    Steinke 2016, Proposition 1.6) — the proven guarantee of Pujol & Desfontaines 2023, Algorithm 1
    (post-processing keeps it), the inverse of :func:`sigma2_from_rho`. Vectorised over ``sigma2``;
    rounded upward (exact where 1/(2σ²) is a float).

    >>> rho_from_sigma2(100.0)
    0.005
    """
    s2 = as_array(sigma2, "sigma2", allow_inf=False)
    if (s2 <= 0).any():
        raise ValueError(f"sigma2 must be > 0, got {sigma2!r}")
    return scalar_out(div_up(1.0, 2.0 * s2))


def algorithm1_sample(counts, sigma2, r, rng, size: int = 1) -> np.ndarray:
    """Seeded draws of Algorithm 1 of Pujol & Desfontaines (2023): for each true count x_i,
    X_i ~ N(x_i, σ²) then Y_i ~ N(X_i, (r X_i)²). Returns an array of shape (size,) + shape(counts).

    >>> y = algorithm1_sample([10, 10000], 100.0, 0.3, np.random.default_rng(0), 5)
    >>> y.shape
    (5, 2)
    """
    c = as_array(counts, "counts", allow_inf=False)
    s2 = _scalar(sigma2, "sigma2", positive=True)
    rr = _scalar(r, "r", positive=True, allow_zero=True)
    g = _rng(rng)
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"size must be an integer >= 1, got {size!r}")
    if int(size) * max(c.size, 1) > 20_000000:
        raise ValueError(f"size * number of counts must be at most 2e7 (memory), got size={size!r} for {c.size} counts")
    shape = (int(size),) + c.shape
    x = c + math.sqrt(s2) * g.standard_normal(shape)
    return x + rr * np.abs(x) * g.standard_normal(shape)


def algorithm1_moments(x, sigma2, r) -> dict:
    """Exact mean and standard deviation of the output of Pujol & Desfontaines 2023, Algorithm 1, for the true count x:
    E[Y] = x and Var[Y] = Var[X] + E[(rX)²] = σ² + r²(x² + σ²) (law of total variance).

    >>> algorithm1_moments(0, 4.0, 0.5)
    {'mean': 0.0, 'std': 2.23606797749979}
    """
    xv = as_array(x, "x", allow_inf=False)
    s2 = _scalar(sigma2, "sigma2", positive=True)
    rr = _scalar(r, "r", positive=True, allow_zero=True)
    return {"mean": scalar_out(xv * 1.0), "std": scalar_out(np.sqrt(s2 + rr * rr * (xv * xv + s2)))}


# -- quadrature -----------------------------------------------------------------------------------
def _log_grid(lo_abs: float, hi_abs: float, step: float) -> np.ndarray:
    n = max(int(math.ceil((math.log(hi_abs) - math.log(lo_abs)) / step)), 2)
    return np.exp(np.linspace(math.log(lo_abs), math.log(hi_abs), n + 1))


_GL_X, _GL_W = np.polynomial.legendre.leggauss(_N_GL)


def _panels(edges: np.ndarray):
    """Composite Gauss–Legendre nodes and weights on the panels between consecutive ``edges``."""
    a, b = edges[:-1], edges[1:]
    mid, half = 0.5 * (a + b), 0.5 * (b - a)
    nodes = (mid[:, None] + half[:, None] * _GL_X[None, :]).ravel()
    weights = (half[:, None] * _GL_W[None, :]).ravel()
    return nodes, weights


def _t_grid(x0: float, x1: float, sigma: float, r: float, refine: int, coarsen: int = 1):
    """Panel edges in t — uniform over x ± 14σ merged with log-spaced |t| (ratio step r/_PER_R),
    both ``coarsen`` times coarser — and the Gauss–Legendre nodes and weights on them."""
    lo, hi = min(x0, x1) - _L * sigma, max(x0, x1) + _L * sigma
    uni = np.linspace(lo, hi, _N_UNI * refine // coarsen + 1)
    top = max(abs(lo), abs(hi))
    lg = _log_grid(top * _FLOOR, top, coarsen * r / (_PER_R * refine))
    both = np.concatenate((uni, lg, -lg))
    both = np.unique(both[(both >= lo) & (both <= hi)])
    return _panels(both)


def _y_grid(x0: float, x1: float, sigma: float, r: float, refine: int, coarsen: int = 1):
    s = math.sqrt(sigma * sigma + r * r * (max(abs(x0), abs(x1)) ** 2 + sigma * sigma))
    lo, hi = min(x0, x1) - _L * s, max(x0, x1) + _L * s
    uni = np.linspace(lo, hi, _N_UNI * refine // coarsen + 1)
    top = (max(abs(x0), abs(x1)) + _L * sigma) * (1.0 + _L * r)
    lg = _log_grid(top * _FLOOR, top, coarsen * r / (_PER_R * refine))
    return _panels(np.unique(np.concatenate((uni, lg, -lg))))


def _log_density(y: np.ndarray, x: float, sigma: float, r: float, tg) -> np.ndarray:
    """log p_x(y) by composite Gauss–Legendre over the t-panels, in log space, chunked over y."""
    t, w = tg
    lw = (
        np.log(w)
        - np.log(np.abs(t))
        - 0.5 * ((t - x) / sigma) ** 2
        - math.log(sigma)
        - _LOG_SQRT_2PI
        - math.log(r)
        - _LOG_SQRT_2PI
    )
    out = np.empty(y.shape)
    inv_t = 1.0 / t
    step = max(1, 2_000000 // t.size)
    for i in range(0, y.size, step):
        z = y[i : i + step, None] * (inv_t / r)[None, :] - 1.0 / r
        z *= z
        z *= -0.5
        z += lw[None, :]
        m = z.max(axis=1)
        np.exp(z - m[:, None], out=z)
        with np.errstate(divide="ignore"):
            out[i : i + step] = m + np.log(z.sum(axis=1))
    return out


def _refine(refine) -> int:
    if isinstance(refine, bool) or not isinstance(refine, (int, np.integer)) or not 1 <= refine <= 8:
        raise ValueError(f"refine must be an integer in [1, 8], got {refine!r}")
    return int(refine)


def _check_x(x, name="x") -> float:
    return _scalar(x, name)


def output_density(y, x, sigma2, r, *, refine: int = 1) -> tuple:
    """Density of the output of Pujol & Desfontaines 2023, Algorithm 1, for the true count x, at the points ``y``, by quadrature of
    p_x(y) = ∫ φ_σ(t − x) φ_r(y/t − 1)/|t| dt (see the module docstring). Returns
    ``(density, error_estimate)``: the error is |p(refine) − p(2·refine)|, an estimate, not a bound.
    A numerical tool for exploring the open problem of Pujol & Desfontaines (2023).

    >>> p, err = output_density([10000.0], 10000, 100.0, 0.3)
    >>> round(float(p[0]) * 3000 * math.sqrt(2 * math.pi), 3), bool(err[0] < 1e-9)
    (1.0, True)
    """
    ys = as_array(y, "y", allow_inf=False)
    if ys.size > _MAX_POINTS:
        raise ValueError(f"y must hold at most {_MAX_POINTS} points, got {ys.size}")
    xv = _check_x(x)
    sigma = math.sqrt(_scalar(sigma2, "sigma2", positive=True))
    rr = _r(r)
    refine = _refine(refine)
    shape = ys.shape
    flat = ys.ravel()
    dens = []
    for k in (refine, 2 * refine):
        t = _t_grid(xv, xv, sigma, rr, k)
        dens.append(np.exp(_log_density(flat, xv, sigma, rr, t)))
    return dens[1].reshape(shape), np.abs(dens[1] - dens[0]).reshape(shape)


@functools.lru_cache(maxsize=256)
def _log_densities(x: float, sigma: float, r: float, refine: int):
    """(log quadrature weights, log p_x, log p_{x+1}) on the y-nodes, each density normalised on the
    grid; cached so that a lab moving only the order α re-uses them (a sum over the y-grid)."""
    tg = _t_grid(x, x + 1.0, sigma, r, refine, _DIV_COARSEN)
    y, wy = _y_grid(x, x + 1.0, sigma, r, refine, _DIV_COARSEN)
    lw = np.log(wy)
    lp = _log_density(y, x, sigma, r, tg)
    lq = _log_density(y, x + 1.0, sigma, r, tg)
    # normalise each density on the grid: the discretisation errors of the two masses would
    # otherwise enter D_α at first order (α·e_p + (1 − α)·e_q) and swamp D_α for large counts
    lp = lp - logsumexp(lw + lp)
    lq = lq - logsumexp(lw + lq)
    for a in (lw, lp, lq):
        a.setflags(write=False)
    return lw, lp, lq


def _divergences(x: float, sigma: float, r: float, alphas: np.ndarray, refine: int):
    """(D_α(P_x‖P_{x+1}), D_α(P_{x+1}‖P_x)) for all α, on one grid resolution."""
    lw, lp, lq = _log_densities(float(x), float(sigma), float(r), int(refine))
    a = alphas[:, None]
    fwd = logsumexp(lw + a * lp + (1 - a) * lq, axis=1) / (alphas - 1)
    rev = logsumexp(lw + a * lq + (1 - a) * lp, axis=1) / (alphas - 1)
    return np.maximum(fwd, 0.0), np.maximum(rev, 0.0)


def renyi_divergence(x, alpha, sigma2, r, *, refine: int = 1) -> dict:
    """Rényi divergences between the outputs of Pujol & Desfontaines 2023, Algorithm 1, for the counts x and x + 1, both directions,
    by quadrature (vectorized over the orders ``alpha`` > 1):

        D_α(P_x ‖ P_{x+1}) = log ∫ p_x(y)^α p_{x+1}(y)^{1−α} dy / (α − 1).

    Returns ``{"forward", "reverse", "error", "proven"}``: ``error`` is the largest change of either
    direction when all grids are refined (an estimate, not a bound); ``proven`` = α/(2σ²), the bound
    that Pujol & Desfontaines 2023, Algorithm 1 provably satisfies (ρ-zCDP; post-processing of the Gaussian mechanism). The
    quadrature values are a numerical exploration of an open problem (Pujol & Desfontaines 2023),
    NOT a privacy guarantee.

    >>> d = renyi_divergence(20, [2.0, 8.0], 100.0, 0.3)
    >>> bool(np.all(d["forward"] <= d["proven"])), bool(np.all(d["error"] < 1e-4))
    (True, True)
    """
    xv = _check_x(x)
    al = check_alpha(alpha)
    if np.isinf(al).any() or al.size > _MAX_POINTS:
        raise ValueError(f"alpha must be finite orders > 1 (at most {_MAX_POINTS}), got {alpha!r}")
    sigma = math.sqrt(_scalar(sigma2, "sigma2", positive=True))
    rr = _r(r)
    refine = _refine(refine)
    flat = np.atleast_1d(al).ravel()
    f1, r1 = _divergences(xv, sigma, rr, flat, refine)
    f2, r2 = _divergences(xv, sigma, rr, flat, 2 * refine)
    err = np.maximum(np.abs(f2 - f1), np.abs(r2 - r1))
    shape = np.shape(al)
    return {
        "forward": scalar_out(f2.reshape(shape)),
        "reverse": scalar_out(r2.reshape(shape)),
        "error": scalar_out(err.reshape(shape)),
        "proven": scalar_out(al / (2 * sigma * sigma)),
    }


def rho_hat(forward, reverse, error, alphas) -> dict:
    """The "zCDP-like" value of one pair of counts from its Rényi divergences at finitely many orders
    (Pujol & Desfontaines 2023, their group-wise zCDP definition, at the listed orders only)::

        ρ̂ = max over α of max(D_α(P_x‖P_{x+1}), D_α(P_{x+1}‖P_x)) / α,

    with the error of the maximizing order divided by α, and that order. ``forward``, ``reverse``
    and ``error`` hold one value per order along their last axis (e.g. one row per count, as
    :func:`zcdp_like_curve` tabulates them); the reduction is over that axis. Returns
    ``{"rho_hat", "error", "argmax_alpha"}``. A NUMERICAL EXPLORATION, NOT A GUARANTEE (finitely many orders).

    >>> rho_hat([0.02, 0.03], [0.025, 0.02], [1e-9, 2e-9], [2.0, 4.0])
    {'rho_hat': 0.0125, 'error': 5e-10, 'argmax_alpha': 2.0}
    """
    al = check_alpha(alphas, "alphas")
    if al.ndim != 1 or al.size == 0 or np.isinf(al).any():
        raise ValueError(f"alphas must be a one-dimensional array of finite orders > 1, got {alphas!r}")
    tables = []
    for v, name in ((forward, "forward"), (reverse, "reverse"), (error, "error")):
        arr = as_array(v, name)
        if arr.ndim == 0 or arr.shape[-1] != al.size:
            raise ValueError(
                f"{name} must hold one value per order ({al.size}) along its last axis, got shape {arr.shape}"
            )
        if (arr < 0).any():
            raise ValueError(f"{name} must be >= 0, got {v!r}")
        tables.append(arr)
    fwd, rev, err = tables
    if not fwd.shape == rev.shape == err.shape:
        raise ValueError(
            f"forward, reverse and error must have the same shape, got {fwd.shape}, {rev.shape}, {err.shape}"
        )
    per_alpha = np.maximum(fwd, rev) / al
    k = np.argmax(per_alpha, axis=-1)[..., None]
    return {
        "rho_hat": scalar_out(np.take_along_axis(per_alpha, k, axis=-1)[..., 0]),
        "error": scalar_out(np.take_along_axis(err, k, axis=-1)[..., 0] / al[k[..., 0]]),
        "argmax_alpha": scalar_out(al[k[..., 0]]),
    }


@functools.lru_cache(maxsize=64)
def _curve_cached(counts: tuple, sigma: float, r: float, alphas: tuple):
    al = np.asarray(alphas)
    fwd, rev, err = [], [], []
    for x in counts:
        f1, r1 = _divergences(x, sigma, r, al, 1)
        f2, r2 = _divergences(x, sigma, r, al, 2)
        fwd.append(f2)
        rev.append(r2)
        err.append(np.maximum(np.abs(f2 - f1), np.abs(r2 - r1)))
    out = tuple(np.array(v) for v in (fwd, rev, err))
    for v in out:
        v.setflags(write=False)
    return out


def zcdp_like_curve(counts, sigma2, r, alphas=(1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)) -> dict:
    """The per-group "zCDP-like" parameter of Pujol & Desfontaines 2023, Algorithm 1 against the count, by quadrature:

        ρ̂(x) = max over the given orders α of max(D_α(P_x‖P_{x+1}), D_α(P_{x+1}‖P_x)) / α,

    next to the proven ρ = 1/(2σ²). A group-wise ρ̂(x) ≤ v(x) is what the definition of Pujol & Desfontaines 2023 asks
    (for the neighbouring pair x ↔ x + 1 only, at the listed orders only). Returns
    ``{"counts", "rho_hat", "error", "argmax_alpha", "rho_proven", "alphas", "forward", "reverse",
    "divergence_error"}``: ``error`` is the refinement estimate divided by α; the last three are the
    full tables D_α(P_x‖P_{x+1}), D_α(P_{x+1}‖P_x) and their error, shape (counts, alphas), so a lab
    slider over the count or the order only indexes them. Cached per (counts, σ², r, alphas): a lab re-drawing the same slider
    position pays nothing. THIS IS A NUMERICAL EXPLORATION OF AN OPEN PROBLEM (Pujol & Desfontaines
    2023), NOT A GUARANTEE: a finite set of orders and one pair of counts, with estimated error.

    >>> c = zcdp_like_curve([5, 500], 100.0, 0.3, alphas=(2, 4))
    >>> bool(c["rho_hat"][1] < c["rho_hat"][0] <= c["rho_proven"])
    True
    """
    cs = as_array(counts, "counts", allow_inf=False)
    if cs.ndim != 1 or cs.size == 0 or cs.size > _MAX_COUNTS:
        raise ValueError(
            f"counts must be a one-dimensional array of 1 to {_MAX_COUNTS} counts (each costs "
            f"~0.015 s the first time), got shape {cs.shape}"
        )
    s2 = _scalar(sigma2, "sigma2", positive=True)
    rr = _r(r)
    al = check_alpha(alphas)
    if al.ndim != 1 or np.isinf(al).any() or al.size > _MAX_ORDERS:
        raise ValueError(
            f"alphas must be a one-dimensional array of at most {_MAX_ORDERS} finite orders > 1, got {alphas!r}"
        )
    fwd, rev, err = _curve_cached(tuple(float(c) for c in cs), math.sqrt(s2), rr, tuple(float(a) for a in al))
    best = rho_hat(fwd, rev, err, al)
    return {
        "counts": cs,
        "rho_hat": best["rho_hat"],
        "error": best["error"],
        "argmax_alpha": best["argmax_alpha"],
        "rho_proven": rho_from_sigma2(s2),
        "alphas": al,
        "forward": fwd.copy(),
        "reverse": rev.copy(),
        "divergence_error": err.copy(),
    }
