"""Generalization via differential privacy and max-information bounds (Bassi 2019, slides
"Generalization via differential privacy", "The max-information of DP algorithms")."""

from __future__ import annotations

import math

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
