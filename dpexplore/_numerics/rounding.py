"""The safe side of every computed bound: margins named in :data:`MARGINS` moved by :func:`up` and
:func:`down`, directed (upward) rounding of closed forms by error-free transformations, and
rounding up to significant digits."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

# ------------------------------------------------------------------------------------------------
# The numerics policy: every safe-side rounding goes through up()/down() with a margin named in
# MARGINS, and every monotone inversion by bisection through bracket_search().
# ------------------------------------------------------------------------------------------------
_U = np.finfo(np.float64).eps  # 2^-52: the spacing of floats in [1, 2)
_FMAX = np.finfo(float).max
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
#: ``gauss_delta`` — relative 4·2^-52 (4 to 8 ulps): the Gaussian mechanism's / μ-GDP log δ_μ(ε)
#: (``gaussian_log_delta``), computed to within 2.7 ulps of log δ (measured against mpmath), up
#: for an upper bound on δ, down for a lower one (where δ is near 1 a further (a² + 4)·2^-52).
#: ``slack`` — relative 1e-15 (down): the δ slack δ′ − kδ left to advanced composition
#: (:func:`~dpexplore.accounting.composition.delta_slack`).
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
    "slack": Margin(rel=1e-15),
    "gauss_delta": Margin(rel=4 * _U),
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


# ------------------------------------------------------------------------------------------------
# directed rounding of closed forms: the float at or above the exact result, exact results kept
# ------------------------------------------------------------------------------------------------
_SPLIT = 134217729.0  # 2^27 + 1 (Veltkamp)
#: where the error-free transformations below are exact: operands of magnitude in
#: [2^-960, 2^995] (no overflow in the split) and products from 2^-960 to just below the largest
#: float (no underflow in the partial products, about 2^-54 of the product, no overflow in them)
_EFT_LO, _EFT_HI, _EFT_PMAX = 2.0**-960, 2.0**995, float(np.finfo(np.float64).max) * (1.0 - 2.0**-24)


def _split(a):
    t = _SPLIT * a
    hi = t - (t - a)
    return hi, a - hi


def _product_residual(a, b, p):
    """a·b − p exactly (Dekker's TwoProduct with Veltkamp's split), where a, b and p lie in the
    exact range; elsewhere meaningless (callers mask it)."""
    ah, al = _split(a)
    bh, bl = _split(b)
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _in_range(a, b, p):
    """Where a·b = p + residual is exact for :func:`_product_residual`."""
    aa, ab, ap = np.abs(a), np.abs(b), np.abs(p)
    ops = (aa <= _EFT_HI) & (ab <= _EFT_HI) & (aa >= _EFT_LO) & (ab >= _EFT_LO)
    return (ops & (ap >= _EFT_LO) & (ap <= _EFT_PMAX)) | (aa == 0) | (ab == 0)


def mul_up(a, b, margin="closed"):
    """a·b rounded upward (a, b ≥ 0 arrays): the product itself where it is exact or above the
    exact value, the next float up where it is below (TwoProduct's sign) — the float at or above
    a·b nearest to it. Outside the exact range (magnitudes beyond 2^-960 … 2^995) ``up(a·b, margin)``,
    and at least the next float (so an underflowed product of positive numbers is positive).

    >>> float(mul_up(0.5, 0.25)), float(mul_up(1.0 / 3.0, 3.0)), float(mul_up(0.1, 0.3)) > 0.1 * 0.3
    (0.125, 1.0, True)
    """
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        p = a * b
        ok = _in_range(a, b, p)
        res = np.where(ok, _product_residual(np.where(ok, a, 0.0), np.where(ok, b, 0.0), np.where(ok, p, 0.0)), 0.0)
        # outside the exact range: the margin, and at least the next float (a subnormal or
        # underflowed product is within half its spacing of the exact one)
        outside = np.where((a > 0) & (b > 0), np.maximum(up(p, margin), np.nextafter(p, np.inf)), p)
        out = np.where(ok, np.where(res > 0, np.nextafter(p, np.inf), p), outside)
    return out


def sum_up(x, axis=-1):
    """Σ x along ``axis`` rounded upward (x ≥ 0): exact sums are returned exactly; otherwise the
    compensated sum (Knuth's TwoSum errors added back) moved up one float, which is at or above
    the exact sum for any practical number of terms (the compensated sum is within half a float
    of it). Non-finite sums are returned as they are.

    >>> float(sum_up([0.5, 0.25, 0.125])), float(sum_up([0.1, 0.2])) >= 0.30000000000000004
    (0.875, True)
    """
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    s = np.zeros(x.shape[:-1])
    err = np.zeros(x.shape[:-1])
    inexact = np.zeros(x.shape[:-1], bool)
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(x.shape[-1]):
            v = x[..., i]
            t = s + v
            bp = t - s
            e = (s - (t - bp)) + (v - bp)  # TwoSum: s + v = t + e exactly
            inexact |= np.isfinite(t) & (e != 0)
            err = err + np.where(np.isfinite(e), e, 0.0)
            s = t
        comp = s + err
        out = np.where(inexact, np.nextafter(comp, np.inf), s)
    return out


def half_square_up(x):
    """x²/2 rounded upward (x ≥ 0, :func:`mul_up` twice: the float at or above it, exact where it
    is a float; the smallest positive float where it underflows, inf where it overflows): the one
    implementation of ε²/2 and μ²/2 (``conversions.gdp_to_zcdp``, ``pure_to_zcdp(…, "quadratic")``).

    >>> float(half_square_up(0.5)), float(half_square_up(1e-200))
    (0.125, 5e-324)
    """
    x = np.asarray(x, np.float64)
    with np.errstate(over="ignore", under="ignore"):
        out = mul_up(mul_up(x, x, "ulps"), 0.5, "ulps")
    return np.where((out == 0) & (x > 0), np.nextafter(0.0, 1.0), out)


def rdp_of_zcdp_up(rho, alpha):
    """αρ rounded upward (ρ ≥ 0, α > 1 or inf: inf where ρ > 0, 0 where ρ = 0; the smallest
    positive float where it underflows): the one implementation of ρ-zCDP's Rényi curve
    (``conversions.zcdp_to_rdp``).

    >>> float(rdp_of_zcdp_up(0.5, 2.0)), float(rdp_of_zcdp_up(0.0, np.inf))
    (1.0, 0.0)
    """
    r, a = np.broadcast_arrays(np.asarray(rho, np.float64), np.asarray(alpha, np.float64))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        out = np.where(np.isinf(a), np.inf, mul_up(np.where(np.isinf(a), 1.0, a), r, "ulps"))
        out = np.where(r == 0, 0.0, out)
    return np.where((out == 0) & (r > 0), np.nextafter(0.0, 1.0), out)


def sqrt_up(x):
    """√x rounded upward (x ≥ 0): the root where its square is at or above x (checked exactly
    with TwoProduct), the next float up otherwise; outside the exact range ``up(√x, "closed")``.

    >>> float(sqrt_up(0.25)), float(sqrt_up(2.0)) ** 2 >= 2.0
    (0.5, True)
    """
    x = np.asarray(x, np.float64)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        r = np.sqrt(x)
        p = r * r
        ok = _in_range(r, r, p) & np.isfinite(x) & (x > 0)
        res = np.where(ok, _product_residual(np.where(ok, r, 0.0), np.where(ok, r, 0.0), np.where(ok, p, 0.0)), 0.0)
        below = (p - x) + res < 0  # r² − x, exact: p and x are within a factor 2 (Sterbenz)
        outside = np.where(x > 0, np.maximum(up(r, "closed"), np.nextafter(r, np.inf)), r)
        out = np.where(ok, np.where(below, np.nextafter(r, np.inf), r), outside)
    return out


def div_up(a, b):
    """a/b rounded upward (a ≥ 0, b > 0 arrays): the quotient where the remainder a − q·b (exact by
    TwoProduct, and a − p exact by Sterbenz) shows it is at or above a/b, the next float up
    otherwise; outside the exact range ``up(q, "closed")`` and at least the next float. Exact where
    a/b is a float.

    >>> float(div_up(1.0, 200.0)), float(div_up(1.0, 3.0)) * 3.0 >= 1.0, float(div_up(10.0, 10.0))
    (0.005, True, 1.0)
    """
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        q = a / b
        p = q * b
        ok = _in_range(q, b, p) & np.isfinite(q) & (q > 0)
        res = np.where(ok, _product_residual(np.where(ok, q, 0.0), np.where(ok, b, 0.0), np.where(ok, p, 0.0)), 0.0)
        below = (a - p) - res > 0  # a − q·b > 0: q < a/b
        outside = np.where((a > 0) & np.isfinite(q), np.maximum(up(q, "closed"), np.nextafter(q, np.inf)), q)
        out = np.where(ok, np.where(below, np.nextafter(q, np.inf), q), outside)
    return out


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
