"""Incomplete gamma functions in log space for the Subbotin (generalized normal) noise of
:mod:`dpexplore.mechanisms.additive`: log Q(a, x) with Legendre's continued fraction in the deep
tail, half the lower incomplete gamma (the mass near the centre), the mass of an interval, and
the difference of log Mills ratios its deep-tail δ needs."""

from __future__ import annotations

import numpy as np
from scipy import special


_U = np.finfo(float).eps  # 2^-52


def _log_gammaincc(a, x):
    """log Q(a, x), the regularized upper incomplete gamma, for 0 < a ≤ 1, x ≥ 0 (broadcast).

    For x < 30 log(scipy.special.gammaincc); beyond, Legendre's continued fraction
    Q = e^{−x} x^a / Γ(a) · 1/(x + 1 − a − 1(1−a)/(x + 3 − a − …)) by modified Lentz in log
    space (Press et al. 2007, Numerical Recipes §6.2), so it stays exact where Q underflows (x up to 1e300)."""
    a, x = np.broadcast_arrays(np.asarray(a, float), np.asarray(x, float))
    out = np.empty(a.shape)
    small = x < 30.0
    with np.errstate(divide="ignore"):
        out[small] = np.log(special.gammaincc(a[small], x[small]))
    out[np.isinf(x)] = -np.inf
    big = ~small & np.isfinite(x)
    if big.any():
        aa, xx = a[big], x[big]
        with np.errstate(over="ignore", invalid="ignore"):
            out[big] = -xx + aa * np.log(xx) - special.gammaln(aa) + np.log(_gammaincc_cf(aa, xx))
    return out


def _gammaincc_cf(a, x):
    """h(a, x) = 1/(x + 1 − a − 1(1−a)/(x + 3 − a − …)) with Q(a, x) = e^{−x} x^a h / Γ(a),
    by modified Lentz (Press et al. 2007, Numerical Recipes §6.2); for x ≥ 30, 0 < a ≤ 1 it converges in a few
    steps to a relative 1e-15 (each element stops where its own step is within 1e-15 of 1)."""
    tiny = 1e-300
    b = x + 1.0 - a
    c = np.full(np.shape(a), 1.0 / tiny)
    dd = 1.0 / b
    h = dd.copy()
    done = np.zeros(np.shape(h), dtype=bool)
    for i in range(1, 200):
        an = -i * (i - a)
        b = b + 2.0
        dd = an * dd + b
        dd = np.where(np.abs(dd) < tiny, tiny, dd)
        c = b + an / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        dd = 1.0 / dd
        delta = dd * c
        # an element stops where it converged, so its value does not depend on the others in
        # the array (a scale calibrated in a batch must meet its target when checked alone)
        h = np.where(done, h, h * delta)
        done = done | (np.abs(delta - 1.0) < 1e-15)
        if done.all():
            break
    return h


#: the bound on the relative rounding error of each term of Subbotin's δ(ε) outside its deep tail,
#: 512·2⁻⁵² (1.1e-13): scipy's gammainc / gammaincc measured against mpmath to ≤ 22 / 135 ulps
#: (a = 1/r, x from 0.5 to 30), the series of :func:`_half_lower_gamma` to a few ulps, and the
#: few ulps of |z|^r/r, log1mexp and exp; 512 keeps a factor of ~4 over their sum
_SUBBOTIN_TERM_ERR = 512.0 * _U


def _half_lower_gamma(z, r):
    """G(z) = sign(z)·P[0 ≤ Z ≤ |z|] = sign(z)·½P(1/r, |z|^r/r) for standard Subbotin noise
    (P the regularized lower incomplete gamma), with full relative accuracy at every |z|: for
    x = |z|^r/r ≤ 1 from the series P(a, x) = x^a/Γ(1 + a)·Σ_k a(−x)^k/(k!(a + k)) (the
    incomplete gamma function's power series), its factor x^a written as |z|·r^{−1/r} (exact where x
    underflows: |z| = 1e-300), 30 terms (remainder < 1/30! for x ≤ 1); beyond, scipy's gammainc."""
    z, r = np.broadcast_arrays(np.asarray(z, float), np.asarray(r, float))
    a = 1.0 / r
    az = np.abs(z)
    with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
        x = np.exp(r * np.log(az) - np.log(r))
        xs = np.where(x <= 1.0, x, 0.0)
        term = np.ones(z.shape)
        total = np.ones(z.shape)
        for k in range(1, 31):
            term = term * -xs / k
            total = total + term * a / (a + k)
        series = az * np.exp(-np.log(r) / r - special.gammaln(1.0 + a) - np.log(2.0)) * total
        big = 0.5 * special.gammainc(a, np.where(x <= 1.0, 1.0, x))
    return np.sign(z) * np.where(x <= 1.0, series, big)


_GL16_X, _GL16_W = np.polynomial.legendre.leggauss(16)


def _subbotin_interval_mass(z1, d, r):
    """P[z1 − d < Z ≤ z1] for standard Subbotin noise (1-d arrays, z1 ≤ −d < 0), by 16-point
    Gauss–Legendre on the density C·exp(−|t|^r/r), C = 1/(2 r^{1/r} Γ(1 + 1/r)): no cancellation
    for short intervals (d ≪ |z1|), where the difference of the two CDFs loses ~|z1|/d digits."""
    h = d / 2.0
    t = (z1 - h)[:, None] + h[:, None] * _GL16_X[None, :]
    rr = r[:, None]
    with np.errstate(over="ignore", under="ignore"):
        # (e^{r log|t| − log r}: numpy's exp and log give the same bits for an element alone or
        # in an array, its pow does not; the error, ~u·|log g| relative in g, is in the caller's bound)
        g = np.exp(rr * np.log(np.abs(t)) - np.log(rr))
        logc = -np.log(r) / r - special.gammaln(1.0 + 1.0 / r) - np.log(2.0)
        return h * np.exp(logc) * np.sum(_GL16_W[None, :] * np.exp(-g), axis=1)


def _log_mills_diff(a, x1, eps):
    """log S(x1 + ε) − log S(x1) for S(x) = x h(a, x) = Q(a, x) Γ(a) e^x x^{1−a} (x ≥ 30).

    For x1 ≥ 1000 from log S(x) = k1/x + k2/x² + k3/x³ + O(x⁻⁴), k1 = a−1, k2 = (a−1)(a−3)/2,
    k3 = c3 − c1c2 + c1³/3 (c_j the asymptotic-series coefficients (a−1)…(a−j)), relative error
    ≤ 1e-9 of a term that is itself ≤ 1/x1 of the result; below, as a difference of two
    continued fractions (each stops at a step within 1e-15 of 1: absolute error ≲ 2e-15)."""
    x2 = x1 + eps
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        c1 = a - 1.0
        c2 = c1 * (a - 2.0)
        c3 = c2 * (a - 3.0)
        k2 = c1 * (a - 3.0) / 2.0
        k3 = c3 - c1 * c2 + c1**3 / 3.0
        # 1/x2 − 1/x1, 1/x2² − 1/x1², 1/x2³ − 1/x1³ without cancellation
        d1 = -eps / (x1 * x2)
        d2 = d1 * (1.0 / x1 + 1.0 / x2)
        d3 = d1 * (1.0 / (x1 * x1) + 1.0 / (x1 * x2) + 1.0 / (x2 * x2))
        series = c1 * d1 + k2 * d2 + k3 * d3
        big = x1 >= 1e3
        xs1 = np.where(big, 1e3, x1)
        xs2 = np.where(big, 2e3, x2)
        direct = np.log(xs2 * _gammaincc_cf(a, xs2)) - np.log(xs1 * _gammaincc_cf(a, xs1))
    return np.where(big, series, direct)
