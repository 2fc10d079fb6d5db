"""Log-space special functions: log(1 − e^x), log(e^a − e^b), the Gaussian mechanism's log δ far below
underflow, expm1(x) − x, and the exact Rényi divergence of ε-DP."""

from __future__ import annotations


import numpy as np
from scipy import special

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


_GL_X, _GL_W = np.polynomial.legendre.leggauss(8)


def _logsumexp_rows(x, w):
    """log Σ_j w_j e^{x_ij} per row, for finite x and positive weights w (max-shifted, as
    scipy.special.logsumexp does; ~10× faster than it on small arrays, where its generic
    array-API handling dominated calibrations that evaluate δ dozens of times)."""
    m = np.max(x, axis=1)
    return m + np.log(np.sum(w * np.exp(x - m[:, None]), axis=1))


def _small_mu_log_delta(mu, eps):
    """log δ_μ(ε) for μ < 1, ε ≤ 2 (1-d arrays, ε/μ finite): see gaussian_log_delta.

    δ = T1 − T2 with T1 = Φ(a) − Φ(b) = φ(z)·I, I = ∫_{−h}^{h} e^{z t − t²/2} dt and
    T2 = expm1(ε) Φ(b), z = ε/μ, h = μ/2, b = −z − h. log T1 − log T2 is formed from
    moderate-size pieces (Φ(b) = ½ erfcx((z + h)/√2) e^{−(z+h)²/2}, so the z²/2 cancel
    analytically) and log δ = log T1 + log(1 − e^{−(log T1 − log T2)}).
    """
    z = eps / mu
    h = mu / 2.0
    t = h[:, None] * _GL_X[None, :]
    # log I = log h + log Σ w_i e^{z t_i − t_i²/2}  (z·t ≤ ε/2: moderate)
    # (log h as log μ − log 2: μ/2 rounds to 0 for μ = 5e-324)
    log_int = np.log(mu) - np.log(2.0) + _logsumexp_rows(z[:, None] * t - 0.5 * t * t, _GL_W[None, :])
    log_t1 = -0.5 * z * z - 0.5 * np.log(2.0 * np.pi) + log_int
    # log T1 − log T2 = z h + h²/2 − ½ log 2π + log I − log expm1(ε) − log(½ erfcx((z + h)/√2))
    gap = (
        z * h
        + 0.5 * h * h
        - 0.5 * np.log(2.0 * np.pi)
        + log_int
        - np.log(np.expm1(eps))
        - np.log(0.5 * special.erfcx((z + h) / SQRT2))
    )
    return log_t1 + log1mexp(-np.maximum(gap, 0.0))


def gaussian_log_delta(mu, eps):
    """log δ_μ(ε) = log[Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)] for μ > 0, ε ≥ 0 (broadcast).

    Near the centre the two ``log_ndtr`` terms are subtracted in log space. In the tail
    (a = μ/2 − ε/μ < −4) the identity e^ε φ(b) = φ(a) (b = a − μ) gives
    δ = ½ e^{−a²/2} [erfcx(−a/√2) − erfcx(−b/√2)], which keeps full relative accuracy where δ
    underflows a float (down to δ = 1e-5000 and beyond). μ = inf gives δ = 1.
    """
    mu, eps = np.broadcast_arrays(np.asarray(mu, dtype=np.float64), np.asarray(eps, dtype=np.float64))
    out = np.empty(mu.shape, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a = mu / 2 - eps / mu
        b = -mu / 2 - eps / mu
        tail = a < -4.0
        # centre: log_ndtr difference
        la = special.log_ndtr(a)
        lb = eps + special.log_ndtr(b)
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
        # μ < 1, ε ≤ 2: both forms above subtract numbers equal to ~μ relative (δ(0) came out 0
        # for μ < 1e-16, and δ(ε) was not monotone at 1e-14 relative for μ ~ 0.01); use
        # δ = [Φ(a) − Φ(b)] − expm1(ε) Φ(b) with
        # Φ(a) − Φ(b) = φ(z)·∫_{−h}^{h} e^{z t − t²/2} dt (z = ε/μ, h = μ/2; 8-point
        # Gauss–Legendre, exact to rounding here) — the two terms differ by ~1/z² relative only
        small = (mu < 1.0) & ~far & np.isfinite(a) & (eps <= 2.0)  # ε ≤ 2: quadrature exact
        if small.any():
            out[small] = _small_mu_log_delta(mu[small], eps[small])
        # ε/μ overflowing (subnormal μ): a = −inf, log δ < −a²/2 is below −1e308
        out[np.isneginf(a)] = -np.inf
        out[np.isinf(mu)] = 0.0
        out[(eps == np.inf) & np.isfinite(mu)] = -np.inf
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
