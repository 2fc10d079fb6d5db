"""Log-space special functions used by several modules, and the package's numerics policy (no
validation here: callers validate).

The policy: a computed bound is moved to its safe side by :func:`up` or :func:`down` with a margin
named in :data:`MARGINS` (upper bounds on ε, δ, ρ, μ and TPRs go up; trade-off values, budgets and
lower bounds go down), and a monotone function is inverted by :func:`bracket_search` (or, for
δ(ε) = target, by :func:`epsilon_by_bisection`, which uses it), which keeps the end on the safe
side of the predicate; a bracket is found by :func:`grow_bracket`. The other searches are here
once each, with their safe end and stopping rule: :func:`newton_search`, :func:`illinois`
(regula falsi), :func:`golden_min`, :func:`step_up_until_ok`. The documentation page
"Numerical guarantees" lists which guarantee each public function gives."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import special

LOG_HALF = np.log(0.5)
SQRT2 = np.sqrt(2.0)


def log1mexp(x):
    """log(1 - exp(x)) for x <= 0, accurate for all x (Mächler 2012): -inf at x = 0."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > -np.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


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


_FMAX = np.finfo(float).max
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


# ------------------------------------------------------------------------------------------------
# The numerics policy: every safe-side rounding goes through up()/down() with a margin named in
# MARGINS, and every monotone inversion by bisection through bracket_search().
# ------------------------------------------------------------------------------------------------
_U = np.finfo(np.float64).eps  # 2^-52: the spacing of floats in [1, 2)
_SUBNORMAL = np.nextafter(0.0, 1.0)  # 5e-324: the smallest positive float


class Margin(NamedTuple):
    """A safety margin: a result x is moved to the safe side by ``rel``·|x| (relative), then by
    ``ulps`` units in the last place, then (positive x only) by ``tiny`` subnormal ulps (5e-324
    each: the only margin that still acts where x is subnormal and a relative one rounds away)."""

    rel: float = 0.0
    ulps: float = 0.0
    tiny: float = 0.0


#: The named safety margins (the only ones in the package). Each covers the rounding error of the
#: computation it is applied to, measured or bounded; the size is a small multiple of that error.
#:
#: ``ulps`` — 4 ulps: closed forms of a few correctly rounded operations (conversions, profiles,
#: mechanisms' closed forms); each operation errs by ≤ ½ ulp, 4 covers ~8 of them.
#: ``closed`` — relative 4·2^-52 (4 to 8 ulps): the composition theorems' closed forms (sqrt,
#: log, expm1, a product with k).
#: ``budget`` — relative 8·2^-52: a per-step budget from a closed form, rounded down so that the
#: theorem maps it back to at most the total (the forward form is itself rounded up by ``closed``).
#: ``budget_zcdp`` — relative 32·2^-52: the zCDP per-step budget goes through two conversions
#: rounded up (zcdp_to_approx of k·pure_to_zcdp) on the way back.
#: ``zcdp_down`` — 16 ulps: approx_to_zcdp, so that zcdp_to_approx (rounded up by 4) maps the
#: result back to at most ε.
#: ``tradeoff`` — relative 8·2^-52: trade-off values β(α) from closed forms (exp, Φ, a
#: quantile); β is rounded down.
#: ``tradeoff_table`` — relative 1e-11: trade-off values of discrete mechanisms, summed from CDF
#: tables (the sums' error is ~1e-13 relative; 1e-11 keeps a factor ~100).
#: ``filter`` — relative 8·2^-52: a filter's running totals and its conversion to ε (sqrt, log
#: and one addition after an exact sum).
#: ``filter_budget`` — relative 32·2^-52: a Rényi filter's budget from a target (ε, δ) (four
#: rounded logs and a division).
#: ``risk_gdp`` — relative 2e-12 plus 4 subnormal ulps: the μ-GDP TPR Φ(Φ⁻¹(α) + μ); Φ⁻¹'s
#: error (≤ 3e-16 relative, measured) is amplified by |Φ⁻¹(α)|·|Φ⁻¹(α) + μ| ≲ 38², ≲ 9e-13 in all
#: (measured against mpmath: ≤ 6e-13).
#: ``risk_closed`` — relative 1e-14 plus 4 subnormal ulps: the other closed-form TPRs
#: (exp/expm1/erf/expit: a few ulps).
#: ``risk_numerical`` — relative 1e-12 plus 4 subnormal ulps: TPRs from a profile's δ(ε) by a
#: minimisation certified to 1e-13 relative (its own rounding, and the profile's δ error).
#: ``risk_posterior`` — relative 1e-13 plus 4 subnormal ulps: the posterior 1/(1 + ((1 − π)/π)·w)
#: from a rounded-up TPR (four correctly rounded operations).
#: ``refined`` — relative 1e-12, then 4 ulps: a minimum over ε₀ found by golden section
#: (1e-12 covers its stopping tolerance); each result is re-checked against the profile as well.
#: ``kl`` — relative 1e-14, then 4 ulps: the KL divergence of Laplace noise by a Taylor series
#: or e + expm1(−e) (error ≤ 1e-15 relative).
#: ``pld`` — relative 1e-9: the privacy loss distribution's δ (an FFT convolution of ~1e5
#: terms; the error bound of its log-space sums is ≪ 1e-9 relative).
#: ``gdp_mu`` — relative 1e-13: μ from the bracket of δ_μ(ε) = δ (the bracket ends are adjacent
#: floats, but δ_μ's own error, ~1e-14 relative in μ, can put the crossing a few ulps off).
#: ``gdp_mu_pure`` — relative 1e-14: μ of pure ε-DP from erfinv / ndtri_exp (a few ulps).
#: ``tradeoff_gdp`` — relative 1e-14: G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) (rounded down).
#: ``optimal`` — relative 1e-12, then 4 ulps: the optimal composition's ε_g, solved in log
#: space on its piece of the KOV sum (whose log-space error is ≲ 1e-13 relative); each result is
#: re-checked term by term and raised where the check fails.
#: ``gdp_eps`` — relative 1e-13: ε of μ-GDP at δ (:func:`gdp_epsilon_core`), the Newton iterate
#: moved up (its stopping tolerance is 1e-13 relative) and checked to meet δ.
#: ``rare_moment`` — relative 1e-12: the Bernstein moments and shifts of the rare-event profile
#: (log-space moments of a few Φ values and exponentials, ≲ 1e-14 relative).
#: ``rare_tail`` — relative 1e-15, then 1 ulp: C(k, 2)·π² (+ η), a product of four rounded factors.
#: ``tail_prob`` — relative 1e-9: a loss tail P(L > x) from a subsampled mechanism's log-space tails.
#: ``lower_eps`` — relative 1e-9 (down): a lower bound on ε from a profile's ε(δ) (bisected to 2
#: ulps) and a log1p/expm1 (``one_shifted_step_lower_epsilon``).
#: ``rdp_sum`` — relative 32·2^-52 (64 unit roundoffs): a discrete mechanism's RDP summed over its loss atoms
#: (a long sum, log1p and a division).
#: ``rdp_closed`` — relative 8·2^-52 (16 unit roundoffs): a discrete mechanism's RDP from a closed form (a few logs).
#: ``em_gap`` — relative 1e-12 (down): the discrete Gaussian's Euler–Maclaurin δ, the integral
#: over its gap (Gauss–Legendre, subtracted from the total, so rounded down).
#:
#: Every non-zero margin also moves x by at least one float, so none is lost to rounding.
MARGINS = {
    "ulps": Margin(ulps=4.0),
    "closed": Margin(rel=4 * _U),
    "budget": Margin(rel=8 * _U),
    "budget_zcdp": Margin(rel=32 * _U),
    "zcdp_down": Margin(ulps=16.0),
    "tradeoff": Margin(rel=8 * _U),
    "tradeoff_table": Margin(rel=1e-11),
    "filter": Margin(rel=8 * _U),
    "filter_budget": Margin(rel=32 * _U),
    "risk_gdp": Margin(rel=2e-12, tiny=4.0),
    "risk_closed": Margin(rel=1e-14, tiny=4.0),
    "risk_numerical": Margin(rel=1e-12, tiny=4.0),
    "risk_posterior": Margin(rel=1e-13, tiny=4.0),
    "refined": Margin(rel=1e-12, ulps=4.0),
    "kl": Margin(rel=1e-14, ulps=4.0),
    "pld": Margin(rel=1e-9),
    "gdp_mu": Margin(rel=1e-13),
    "gdp_mu_pure": Margin(rel=1e-14),
    "tradeoff_gdp": Margin(rel=1e-14),
    "optimal": Margin(rel=1e-12, ulps=4.0),
    "gdp_eps": Margin(rel=1e-13),
    "rare_moment": Margin(rel=1e-12),
    "rare_tail": Margin(rel=1e-15, ulps=1.0),
    "tail_prob": Margin(rel=1e-9),
    "lower_eps": Margin(rel=1e-9),
    "rdp_sum": Margin(rel=32 * _U),
    "rdp_closed": Margin(rel=8 * _U),
    "em_gap": Margin(rel=1e-12),
}

#: ulps of the default margin (``MARGINS["ulps"]``)
ULPS = MARGINS["ulps"].ulps


def _ulp(y):
    """ulp(|y|) for finite y (2^971 at the float max, where np.spacing gives inf), 0 for ±inf."""
    ay = np.abs(y)
    with np.errstate(invalid="ignore"):
        s = np.where(ay >= _FMAX, 2.0**971, np.spacing(np.minimum(ay, _FMAX)))
    return np.where(np.isfinite(y), s, 0.0)


def _margin(margin) -> Margin:
    if isinstance(margin, Margin):
        return margin
    try:
        return MARGINS[margin]
    except (KeyError, TypeError):
        raise ValueError(f"margin must be a Margin or one of {sorted(MARGINS)}, got {margin!r}") from None


def up(x, margin="ulps"):
    """x moved up (towards +inf) by ``margin`` (a :class:`Margin` or a name in :data:`MARGINS`):
    the larger of x·(1 + rel) and x + rel·|x| (both one rounding of the same real number; the
    larger is kept so that either form used before is never undercut), plus ``ulps`` ulps of that
    value, plus ``tiny`` subnormal ulps where x > 0, and at least to the next float (a relative
    margin that rounds away, at subnormal x, still moves x). Vectorised; 0, ±inf and NaN are unchanged;
    a finite x can overflow to inf (the safe side of an upper bound). ``up(x) ≥ x`` always."""
    m = _margin(margin)
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    with np.errstate(over="ignore", invalid="ignore"):
        y = x
        if m.rel:
            y = np.maximum(x * np.where(x >= 0, 1.0 + m.rel, 1.0 - m.rel), x + m.rel * ax)
        if m.ulps:
            y = y + m.ulps * _ulp(y)
        if m.tiny:
            y = np.where(x > 0, y + m.tiny * _SUBNORMAL, y)
        if m != Margin():  # at least one float up: a margin never rounds away
            y = np.maximum(y, np.nextafter(x, np.inf))
        return np.where(np.isfinite(x) & (x != 0), y, x)


def down(x, margin="ulps"):
    """x moved down (towards −inf) by ``margin``, the mirror image of :func:`up`, except that a
    non-negative x stays non-negative (a budget, a probability or a trade-off value is never
    pushed below 0). Vectorised; 0, ±inf and NaN are unchanged. ``down(x) ≤ x`` always."""
    x = np.asarray(x, dtype=np.float64)
    y = -up(-x, margin)  # exact: negation commutes with every rounding up() does
    with np.errstate(invalid="ignore"):
        return np.where(x > 0, np.maximum(y, 0.0), y)


def round_up_ulps(x, ulps: float = ULPS):
    """``up(x)`` by ``ulps`` ulps (default: the ``"ulps"`` margin)."""
    return up(x, Margin(ulps=ulps))


def round_down_ulps(x, ulps: float = ULPS):
    """``down(x)`` by ``ulps`` ulps, never below 0 (default: the ``"ulps"`` margin)."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(np.isfinite(x), np.maximum(down(x, Margin(ulps=ulps)), 0.0), x)


def ceil_significant(x: float, digits: int):
    """``x`` rounded UP (toward +inf) to ``digits`` significant decimal digits, as a
    ``decimal.Decimal``: the float's shortest decimal form (its ``repr``) is rounded with
    ROUND_CEILING, re-quantized when the rounding adds a digit (9.9996 → 10.00). Callers pass a
    finite nonzero x. The one rounding of printed upper bounds (cards' numbers, a σ to set).

    >>> str(ceil_significant(1.001, 3)), str(ceil_significant(9.9996, 4)), str(ceil_significant(-1.234, 2))
    ('1.01', '10.00', '-1.2')
    """
    from decimal import ROUND_CEILING, Decimal

    d = Decimal(repr(float(x)))
    exp = d.adjusted()
    q = d.quantize(Decimal(1).scaleb(exp - digits + 1), rounding=ROUND_CEILING)
    if q.adjusted() != exp:
        exp = q.adjusted()
        q = q.quantize(Decimal(1).scaleb(exp - digits + 1), rounding=ROUND_CEILING)
    return q


def round_up_significant(x: float, digits: int) -> float:
    """The float of :func:`ceil_significant`: never below ``x`` (the decimal is ≥ x's repr, and the
    float nearest to it is ≥ x, since x is a float). 0 and ±inf are returned as they are.

    >>> round_up_significant(1.001, 3), round_up_significant(3.7306, 3), round_up_significant(2.0, 3)
    (1.01, 3.74, 2.0)
    """
    x = float(x)
    if x == 0.0 or not math.isfinite(x):
        return x
    return float(ceil_significant(x, digits))


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


def gdp_mu_bracket(eps, delta, points: int = 64):
    """The μ with δ_μ(ε) = δ, bracketed (the core of :func:`dpexplore.accounting.conversions.approx_to_gdp`):
    element-wise ``(lo, hi)`` with computed δ_lo(ε) ≤ δ (:func:`within`: the log and the exp test)
    and δ_hi(ε) > δ, adjacent floats once converged. δ_μ(ε) rises with μ, so ``lo`` is the safe
    end when μ must guarantee (ε, δ)-DP and ``hi`` when μ describes a point (ε, δ) of a profile.
    Ends: δ = 0 gives (0, 0); ε = inf or δ ≥ 1 gives (inf, inf). The bracket starts at [0, 1] and
    grows by factors 2^16; each round then evaluates ``points`` points inside it at once
    (spaced by powers of 2^-34 below ``hi`` while ``lo`` is 0, geometrically while the bracket
    spans more than a factor 2, else evenly) and keeps the two around the crossing: about ten
    rounds reach adjacent floats."""
    e, d = np.broadcast_arrays(np.asarray(eps, dtype=np.float64), np.asarray(delta, dtype=np.float64))
    shape = e.shape
    e, d = e.ravel(), d.ravel()
    top = (d >= 1.0) | np.isinf(e)
    active = ~top & (d > 0.0)
    lo, hi = np.zeros_like(e), np.ones_like(e)
    ea, da = np.where(active, e, 0.0)[:, None], np.where(active, d, 1.0)[:, None]

    def ok(mu):  # mu: (n, k)
        return within(gdp_log_delta_core(np.where(active[:, None], mu, 0.0), ea), da)

    lo, hi = grow_bracket(lambda mu: ~ok(mu[:, None])[:, 0], lo, hi, grow=65536.0, active=active)  # to δ_hi(ε) > δ
    j = np.arange(1, points + 1, dtype=np.float64)[None, :]
    for _ in range(200):  # keeps δ_lo ≤ δ < δ_hi
        live = active & np.isfinite(hi) & (np.nextafter(lo, np.inf) < hi)
        if not live.any():
            break
        L, H = lo[:, None], hi[:, None]
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            below = H * np.exp2(-34.0 * j)
            geo = np.exp(np.log(L) + (np.log(H) - np.log(L)) * j / (points + 1))
            even = L + (H - L) * (j / (points + 1))
            grid = np.where(L == 0.0, below, np.where(H / 2.0 > L, geo, even))
        grid = np.where((grid > L) & (grid < H), grid, L)  # a point off the bracket: lo again
        good = ok(grid) | (grid == L)
        # δ rises with μ: the good points are the smallest ones (all of them if ever non-monotone
        # noise made a later one good, the bracket keeps the first bad point, still valid)
        new_lo = np.max(np.where(good, grid, L), axis=1)
        new_hi = np.min(np.where(~good & (grid > new_lo[:, None]), grid, H), axis=1)
        lo = np.where(live, new_lo, lo)
        hi = np.where(live, new_hi, hi)
    lo = np.where(top, np.inf, lo)
    hi = np.where(top, np.inf, np.where(active, hi, 0.0))
    return lo.reshape(shape), hi.reshape(shape)


# -- μ-GDP: log δ_μ(ε) and its inverse (dpexplore.accounting.conversions.gdp_log_delta / gdp_epsilon) --
def gdp_log_delta_core(mu, eps):
    mu, eps = np.broadcast_arrays(np.asarray(mu, dtype=np.float64), np.asarray(eps, dtype=np.float64))
    safe_mu = np.where(mu > 0, mu, 1.0)
    out = gaussian_log_delta(safe_mu, eps)
    return np.where(mu > 0, np.minimum(out, 0.0), -np.inf)


def _gdp_dlogdelta(mu, eps, logd):
    """d log δ_μ/dε = −e^ε Φ(−ε/μ − μ/2)/δ_μ(ε) (< 0)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return -np.exp(eps + special.log_ndtr(-eps / mu - mu / 2.0) - logd)


def gdp_epsilon_core(mu, delta):
    """Vectorized inverse of δ_μ (Liu et al. 2022, Theorem 3.1;
    :func:`dpexplore.accounting.conversions.gdp_epsilon`): smallest ε with log δ_μ(ε) ≤ log δ
    (mu > 0 finite, 0 < δ)."""
    mu, delta = np.broadcast_arrays(np.asarray(mu, dtype=np.float64), np.asarray(delta, dtype=np.float64))
    shape = mu.shape
    m = mu.ravel().copy()
    d = delta.ravel().copy()
    out = np.zeros_like(m)
    with np.errstate(divide="ignore"):
        target = np.log(d)
    # aim slightly below log δ so that exp(log δ_μ(ε)) ≤ δ also holds after rounding of exp
    target = down(target, "ulps") - 4e-16  # 4 ulps, and 4e-16 for δ near 1 (log δ near 0)
    ok = (m > 0) & np.isfinite(m) & (d > 0)
    out[(d == 0) & (m > 0)] = np.inf
    out[np.isinf(m)] = np.inf
    if ok.any():
        mm, tt = m[ok], target[ok]
        at0 = gdp_log_delta_core(mm, 0.0)
        need = tt < at0
        res = np.zeros_like(mm)
        if need.any():
            mu_, t_ = mm[need], tt[need]
            # upper bracket: δ_μ(ε) ≤ Φ(μ/2 − ε/μ), so Φ(μ/2 − ε/μ) = δ gives δ_μ(ε) ≤ δ
            with np.errstate(over="ignore"):  # huge μ: the bracket is inf, Newton bisects
                hi = mu_ * (mu_ / 2.0 - special.ndtri(np.exp(t_)))
                hi = np.where(np.isfinite(hi), hi, mu_ * mu_ / 2.0 + mu_ * np.sqrt(2.0 * -t_))
            hi = hi * (1.0 + 1e-12) + 1e-300
            # log δ_μ is concave in ε (Prékopa: (1 − e^{ε−ℓ})₊ and the Gaussian density are
            # log-concave), so Newton from the right stays to the right of the root. Residual
            # t − log δ_μ(ε) (increasing in ε); g underflowing to 0 or f = −inf gives a
            # non-finite step, bisected instead; huge μ: x = inf (the answer)

            def residual(x):
                f = gdp_log_delta_core(mu_, x)
                return t_ - f, -_gdp_dlogdelta(mu_, x, f)

            x, lo, hi = newton_search(residual, hi, np.zeros_like(hi), hi, steps=60, rtol=1e-13, floor=1e-6)
            # the returned value is checked: δ_μ(ε) ≤ δ holds at it (safe side)
            cand = up(x, "gdp_eps") + 1e-300
            fc = gdp_log_delta_core(mu_, cand)
            res_need = np.where(fc <= t_, np.minimum(cand, hi), hi)
            res[need] = res_need
        out[ok] = res
    return out.reshape(shape)
