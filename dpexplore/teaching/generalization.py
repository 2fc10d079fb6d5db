"""Generalization via differential privacy and max-information bounds (Bassi 2019, slides
"Generalization via differential privacy", "The max-information of DP algorithms"), one function
per result, and :func:`generalization_bounds`: every route at a tolerance τ and sample size n side
by side (the adaptive data analysis lab's calculator)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import check_delta, check_nonneg, check_positive, scalar_out
from ._common import _delta_open

__all__ = [
    "generalization_via_dp",
    "statistical_query_epsilon",
    "max_information_pure",
    "max_information_iid",
    "max_information_tail_bound",
    "dp_max_information_tail_bound",
    "GeneralizationBounds",
    "generalization_bounds",
    "TAKE2_BETA_FLOOR",
]

LOG2E = 1.0 / math.log(2.0)


def generalization_via_dp(n, beta):
    """Bassi 2019, slide "Generalization via DP for i.i.d. datasets": if every fixed output y is bad with
    probability ≤ β, an ε-DP algorithm with ε ≤ sqrt(ln(1/β)/(2n)) outputs a bad y with
    probability ≤ 3√β. Returns ``(eps_max, failure)`` = (sqrt(ln(1/β)/(2n)), 3√β) (closed form).

    >>> generalization_via_dp(1000, 1e-4)
    (0.06786140424415112, 0.03)
    """
    nn = check_positive(n, "n")
    b = _delta_open(beta, "beta")
    with np.errstate(over="ignore"):  # subnormal n: eps = inf (no constraint), not a warning
        eps = np.sqrt(-np.log(b) / (2.0 * nn))
    return scalar_out(eps), scalar_out(np.minimum(3.0 * np.sqrt(b), 1.0) + 0.0 * nn)


def statistical_query_epsilon(tau, n):
    """Bassi 2019, slide "Corollary for statistical queries": an ε-DP algorithm that outputs a statistical
    query φ: X → [0, 1] with ε ≤ sqrt(τ² − ln 2/(2n)) ensures
    P[|P[φ] − E_S[φ]| > τ] ≤ 3√2 exp(−nτ²). Returns ``(eps_max, failure)``; needs
    τ² > ln 2/(2n) (ValueError naming ``tau`` otherwise).

    >>> eps, fail = statistical_query_epsilon(0.1, 1000)
    >>> round(eps, 6), round(fail, 8)
    (0.098252, 0.00019262)
    """
    t = check_positive(tau, "tau")
    nn = check_positive(n, "n")
    t, nn = np.broadcast_arrays(t, nn)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        # subnormal n: ln 2/(2n) = inf (rejected); τ² = inf as well: τ wins (slack inf)
        slack = np.where(np.isinf(t * t), np.inf, t * t - math.log(2.0) / (2.0 * nn))
    if (slack <= 0).any():
        raise ValueError(f"tau must satisfy tau**2 > ln(2)/(2n), got tau={tau!r}, n={n!r}")
    with np.errstate(over="ignore", under="ignore"):  # nτ² overflowing: failure 0
        fail = np.minimum(3.0 * math.sqrt(2.0) * np.exp(-nn * t * t), 1.0)
    return scalar_out(np.sqrt(slack)), scalar_out(fail)


def max_information_pure(eps, n):
    """Bassi 2019, slide "Pure max-information of pure DP algorithms": I_∞(A, n) ≤ (log₂ e) ε n bits.

    >>> round(max_information_pure(0.01, 100), 6)
    1.442695
    """
    e = check_nonneg(eps, "eps", allow_inf=False)
    nn = check_positive(n, "n")
    with np.errstate(over="ignore"):  # the bound overflows to inf (still valid)
        return scalar_out(LOG2E * e * nn)


def max_information_iid(eps, n, beta):
    """Bassi 2019, slide "Approx. max-information of DP algorithms for i.i.d. datasets": for ε-DP A and
    β > 0, I_∞^β(A, n) ≤ (log₂ e)(ε² n/2 + ε sqrt(n ln(2/β)/2)) bits.

    >>> round(max_information_iid(0.01, 10000, 0.05), 6)
    2.680674
    """
    e = check_nonneg(eps, "eps", allow_inf=False)
    nn = check_positive(n, "n")
    b = _delta_open(beta, "beta")
    with np.errstate(over="ignore", invalid="ignore"):  # the bound overflows to inf (still valid)
        # log(2/β) as log 2 − log β: 2/β overflows for β = 5e-324 (then 0·inf = NaN at ε = 0)
        out = LOG2E * (e * e * nn / 2.0 + e * np.sqrt(nn * (math.log(2.0) - np.log(b)) / 2.0))
        return scalar_out(np.where(e == 0, 0.0, out))


def max_information_tail_bound(k_bits, tau, n, c, beta):
    """Bassi 2019, slide "Usefulness of max-information" + McDiarmid: if I_∞^β(A, n) ≤ k bits and A outputs
    a c-sensitive f: X^n → R, then P[|f(S) − P^n[f]| ≥ τ] ≤ 2^k · 2 exp(−2τ²/(n c²)) + β
    (capped at 1; evaluated in log space).

    >>> round(max_information_tail_bound(0.0, 0.05, 1000, 1e-3, 0.0), 8)
    0.01347589
    """
    k = check_nonneg(k_bits, "k_bits", allow_inf=False)
    t = check_positive(tau, "tau")
    nn = check_positive(n, "n")
    cc = check_positive(c, "c")
    b = check_delta(beta, "beta", allow_one=True)
    # 2τ²/(n c²) as 2 (τ/c/√n)²: no inf/inf (NaN) for huge τ, n, c; overflow is +inf (δ → β)
    with np.errstate(over="ignore", under="ignore"):
        r = t / cc / np.sqrt(nn)
        log_term = k * math.log(2.0) + math.log(2.0) - 2.0 * r * r
    return scalar_out(np.minimum(np.exp(np.minimum(log_term, 0.0)) + b, 1.0))


def dp_max_information_tail_bound(eps, tau, n, c, beta):
    """Generalization of an ε-DP algorithm's c-sensitive output via max-information (Bassi 2019,
    "Generalization via max-information for i.i.d. datasets (take 2)"): combine
    :func:`max_information_iid` (k bits at β) with :func:`max_information_tail_bound`::

        P ≤ exp(ε²n/2 + ε sqrt(n ln(2/β)/2)) · 2 exp(−2τ²/(nc²)) + β.

    With ε = τ/(nc) and β = 2 exp(−τ²/(nc²)) this is Bassi's slide's
    2 exp((1/√2 − 3/2) τ²/(nc²)) + 2 exp(−τ²/(nc²)).

    >>> x = 20.0; n = 1000; c = 1 / n; tau = (x * n * c * c) ** 0.5
    >>> p = dp_max_information_tail_bound(tau / (n * c), tau, n, c, 2 * np.exp(-x))
    >>> bool(abs(p - (2 * np.exp((2 ** -0.5 - 1.5) * x) + 2 * np.exp(-x))) < 1e-15)
    True
    """
    k = max_information_iid(eps, n, beta)
    return max_information_tail_bound(k, tau, n, c, beta)


#: the floor of "take 2"'s β′ = 2e^{−nτ²} in :func:`generalization_bounds` (the max-information
#: bound holds for every β′ > 0; a larger β′ only loosens it, so the floor errs on the safe side)
TAKE2_BETA_FLOOR = 1e-300


@dataclass(frozen=True)
class GeneralizationBounds:
    """What each route of Bassi 2019 promises at tolerance ``tau``, sample size ``n`` and, for the
    general theorem, bad-set probability ``beta`` (fields broadcast over the three inputs).

    ``sq_ok`` is where the statistical-query corollary applies (τ² > ln 2/(2n)); elsewhere no
    ε works and ``sq_eps`` = 0, ``sq_fail`` = 1 (no guarantee). ``pure_*``: ε = τ² through pure
    max-information; ``take2_*``: ε = τ through approximate max-information at
    β′ = ``take2_beta``; ``gen_*``: the general theorem's ε at β and the max-information of
    that ε-DP algorithm (pure and at β); ``hoeffding``: a fixed, non-adaptive query."""

    tau: object
    n: object
    beta: object
    sq_ok: object
    sq_eps: object
    sq_fail: object
    pure_eps: object
    pure_bits: object
    pure_fail: object
    take2_eps: object
    take2_beta: object
    take2_bits: object
    take2_fail: object
    gen_eps: object
    gen_fail: object
    gen_bits_pure: object
    gen_bits_iid: object
    hoeffding: object


def generalization_bounds(tau, n, beta) -> GeneralizationBounds:
    """Every generalization route of Bassi 2019 for a statistical query (sensitivity c = 1/n) at
    tolerance τ and n samples, vectorised over ``tau``, ``n`` and ``beta``:

    * via DP, Bassi 2019, slide "Corollary for statistical queries" (:func:`statistical_query_epsilon`):
      ε ≤ √(τ² − ln 2/(2n)) ⇒ P ≤ 3√2 e^{−nτ²}, where τ² > ln 2/(2n);
    * via pure max-information (:func:`max_information_pure`, :func:`max_information_tail_bound`):
      ε = τ² ⇒ I_∞ ≤ (log₂ e) nτ² bits ⇒ P ≤ 2 e^{−nτ²};
    * via approximate max-information, "take 2" (:func:`dp_max_information_tail_bound`): ε = τ,
      β′ = 2e^{−nτ²} (floored at :data:`TAKE2_BETA_FLOOR`, capped at ½) ⇒
      P ≤ 2 exp((1/√2 − 3/2) nτ²) + 2 e^{−nτ²};
    * the general theorem at β, Bassi 2019, slide "Generalization via DP for i.i.d. datasets"
      (:func:`generalization_via_dp`): ε ≤ √(ln(1/β)/(2n)) ⇒ P[bad] ≤ 3√β, with that ε-DP
      algorithm's pure and β-approximate max-information;
    * a fixed query (Hoeffding): P ≤ 2 e^{−2nτ²}.

    Failure probabilities are capped at 1.

    >>> g = generalization_bounds(0.05, 10000, 1e-3)
    >>> round(float(g.sq_eps), 6), round(float(g.pure_bits), 4), round(float(g.gen_eps), 6)
    (0.049652, 36.0674, 0.018585)
    >>> generalization_bounds(0.005, [10, 10**6], 1e-3).sq_ok
    array([False,  True])
    """
    t = check_positive(tau, "tau")
    nn = check_positive(n, "n")
    b = _delta_open(beta, "beta")
    t, nn, b = np.broadcast_arrays(t, nn, b)
    t, nn, b = (np.asarray(a, dtype=np.float64) for a in (t, nn, b))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        x = nn * t * t
        ok = np.where(np.isinf(t * t), True, t * t > math.log(2.0) / (2.0 * nn))
    sq_eps, sq_fail = np.zeros(t.shape), np.ones(t.shape)
    if ok.any():
        e, f = statistical_query_epsilon(t[ok], nn[ok])
        sq_eps[ok], sq_fail[ok] = e, f
    pure_eps = t * t
    pure_bits = np.asarray(max_information_pure(pure_eps, nn))
    pure_fail = np.asarray(max_information_tail_bound(pure_bits, t, nn, 1.0 / nn, 0.0))
    with np.errstate(under="ignore"):
        take2_beta = np.clip(2.0 * np.exp(-x), TAKE2_BETA_FLOOR, 0.5)
        hoeffding = np.minimum(2.0 * np.exp(-2.0 * x), 1.0)
    take2_bits = np.asarray(max_information_iid(t, nn, take2_beta))
    take2_fail = np.asarray(dp_max_information_tail_bound(t, t, nn, 1.0 / nn, take2_beta))
    gen_eps, gen_fail = (np.asarray(a) for a in generalization_via_dp(nn, b))
    return GeneralizationBounds(
        *(
            scalar_out(a)
            for a in (
                t,
                nn,
                b,
                ok,
                sq_eps,
                sq_fail,
                pure_eps,
                pure_bits,
                pure_fail,
                t,
                take2_beta,
                take2_bits,
                take2_fail,
                gen_eps,
                gen_fail,
                max_information_pure(gen_eps, nn),
                max_information_iid(gen_eps, nn, b),
                hoeffding,
            )
        )
    )
