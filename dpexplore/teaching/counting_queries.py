"""Laplace noise on counting queries (Bassi 2019, slides "A differencing attack", "ℓ₁-sensitivity",
"Laplace mechanism"): the Laplace scales of one, m general and m disjoint counting queries, the
exact accuracy of the differencing attacker, and the exact law of the largest error over m noisy
counts."""

from __future__ import annotations

import numpy as np

from .._validation import as_array, check_k, check_nonneg, check_positive, scalar_out
from ..mechanisms import Laplace

__all__ = [
    "counting_query_scales",
    "differencing_attack_accuracy",
    "laplace_difference_density",
    "harmonic_number",
    "laplace_max_error_mean",
    "laplace_max_error_cdf",
]

#: up to this m, H_m is the running sum of 1/k (exact to rounding); above it ψ(m + 1) + γ
_HARMONIC_SUM_MAX = 10**6


def counting_query_scales(eps, m=1):
    """The Laplace scales that make counting queries ε-DP (Bassi 2019, slides "ℓ₁-sensitivity",
    "Laplace mechanism"; Dwork, McSherry, Nissim & Smith 2006): Lap(Δf/ε) on each answer, with
    the ℓ₁-sensitivity Δf of the answers released together:

    * ``"one"``: one counting query, Δf = 1, b = 1/ε;
    * ``"general"``: m counting queries answered together, one person can change each of them by
      1, Δf = m, b = m/ε;
    * ``"disjoint"``: m counting queries on disjoint parts of the data (a histogram), one person
      changes one of them, Δf = 1, b = 1/ε.

    Each is ``Laplace.calibrate(eps, sensitivity=Δf).scale`` (b = Δf/ε rounded UP by a few ulps:
    never less noise than ε needs). Returns a dict of the three; vectorised over ``eps`` (> 0,
    finite) and ``m`` (integer ≥ 1), which broadcast.

    >>> {k: round(float(v), 12) for k, v in counting_query_scales(0.5, 100).items()}
    {'one': 2.0, 'general': 200.0, 'disjoint': 2.0}
    >>> counting_query_scales(0.5, 0)
    Traceback (most recent call last):
    ...
    ValueError: m must be an integer >= 1, got 0
    """
    e = check_positive(eps, "eps")
    mm = check_k(m, "m").astype(np.float64)
    e, mm = np.broadcast_arrays(e, mm)
    one = np.asarray(Laplace.calibrate(e).scale, dtype=np.float64)
    general = np.asarray(Laplace.calibrate(e, sensitivity=mm).scale, dtype=np.float64)
    return {"one": scalar_out(one), "general": scalar_out(general), "disjoint": scalar_out(one.copy())}


def differencing_attack_accuracy(eps):
    """P[the differencing attacker guesses the target's bit right] with Lap(1/ε) on both counts
    (Bassi 2019, slide "A differencing attack"): D − bit = Z₁ − Z₂ with Z₁, Z₂ i.i.d. Lap(b),
    b = 1/ε, P[Z₁ − Z₂ > t] = ½(1 + t/(2b))e^{−t/b}; guessing 1 iff D > ½ is right with

        P[correct] = 1 − ½(1 + ε/4) e^{−ε/2}      (ε = 0: ½; ε → ∞: 1).

    Vectorized over ``eps`` (≥ 0, inf allowed).

    >>> differencing_attack_accuracy(np.array([0.0, 4.0])).round(6).tolist()
    [0.5, 0.864665]
    >>> differencing_attack_accuracy(-1.0)
    Traceback (most recent call last):
    ...
    ValueError: eps must be >= 0, got [-1.]
    """
    e = check_nonneg(eps, "eps")
    with np.errstate(invalid="ignore"):
        out = 1.0 - 0.5 * (1.0 + e / 4.0) * np.exp(-e / 2.0)
    return scalar_out(np.where(np.isinf(e), 1.0, out))


def laplace_difference_density(x, eps):
    """Density of Z₁ − Z₂ for Z₁, Z₂ i.i.d. Lap(1/ε) (the differencing attack's D − bit; Bassi
    2019, slide "A differencing attack"): f(x) = (ε/4)(1 + ε|x|) e^{−ε|x|}, the derivative of
    P[Z₁ − Z₂ > t] = ½(1 + εt/2)e^{−εt}. Vectorized over ``x`` (±inf give 0) and ``eps`` (> 0, finite);
    where the product overflows, it is evaluated as exp(log(ε/4) + log1p(ε|x|) − ε|x|).

    >>> round(laplace_difference_density(0.0, 2.0), 12)
    0.5
    """
    xa = as_array(x, "x")
    e = check_positive(eps, "eps")
    with np.errstate(invalid="ignore", over="ignore", under="ignore", divide="ignore"):
        a = np.abs(xa) * e
        out = e / 4.0 * (1.0 + a) * np.exp(-a)
        far = np.exp(np.log(e / 4.0) + np.log1p(a) - a)
    return scalar_out(np.where(np.isnan(out), np.where(np.isinf(a), 0.0, far), out))


def harmonic_number(m):
    """H_m = Σ_{k ≤ m} 1/k for integer m ≥ 1, vectorized (the running sum up to m = 10⁶, beyond
    it ψ(m + 1) + γ, equal to rounding; m = inf gives inf).

    >>> harmonic_number(np.array([1, 2, 4])).tolist()
    [1.0, 1.5, 2.083333333333333]
    >>> harmonic_number(0)
    Traceback (most recent call last):
    ...
    ValueError: m must be an integer >= 1, got 0
    """
    mm = as_array(m, "m")
    with np.errstate(invalid="ignore"):
        bad = ~(mm >= 1) | (np.isfinite(mm) & (mm != np.floor(mm)))
    if bad.any():
        raise ValueError(f"m must be an integer >= 1, got {m!r}")
    small = mm <= _HARMONIC_SUM_MAX
    top = int(mm[small].max()) if small.any() else 1
    h = np.cumsum(1.0 / np.arange(1, top + 1))
    out = h[np.where(small, mm, 1).astype(int) - 1]
    if not small.all():
        from scipy import special  # only for m > 10⁶

        out = np.where(small, out, special.digamma(mm + 1.0) + np.euler_gamma)
    return scalar_out(out)


def laplace_max_error_mean(m, scale):
    """E[max_{i ≤ m} |Y_i|] = b·H_m for i.i.d. Y_i ~ Lap(b) (Bassi 2019, slide "ℓ₁-sensitivity", the
    Laplace mechanism: |Y| ~ Exp(b), and the maximum of m i.i.d. Exp(b) has mean b·H_m, H_m the harmonic number —
    :func:`harmonic_number`). m counting queries: b = m/ε (general), 1/ε (disjoint).

    >>> laplace_max_error_mean(4, 2.0)
    4.166666666666666
    """
    b = check_positive(scale, "scale", allow_inf=True)
    with np.errstate(over="ignore"):
        return scalar_out(b * np.asarray(harmonic_number(m)))


def laplace_max_error_cdf(t, m, scale):
    """P[max_{i ≤ m} |Y_i| ≤ t] = (1 − e^{−t/b})^m for i.i.d. Y_i ~ Lap(b) (Bassi 2019, slide
    "ℓ₁-sensitivity", the Laplace mechanism: |Y| ~ Exp(b)); computed as exp(m log(−expm1(−t/b))), t < 0 read as 0.
    Vectorized over ``t``, ``m`` (> 0) and ``scale`` b (> 0).

    >>> round(laplace_max_error_cdf(1.0, 1, 1.0), 12)      # 1 − e^{−1}
    0.632120558829
    """
    ta = as_array(t, "t")
    mm = check_positive(m, "m")
    b = check_positive(scale, "scale")
    with np.errstate(divide="ignore", over="ignore"):
        return scalar_out(np.exp(mm * np.log(-np.expm1(-np.maximum(ta, 0.0) / b))))
