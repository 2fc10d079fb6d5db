"""Composition: what running k differentially private mechanisms on the same data costs.

From the loosest to the tightest (Steinke 2022, Bassi 2019):

* :func:`basic` — (Σε_j, Σδ_j) (Bassi 2019, slide "Composition of several DP mechanisms"; Steinke 2022);
* :func:`advanced` — Dwork, Rothblum & Vadhan 2010 (Bassi 2019, slide "Advanced adaptive composition"):
  k-fold (ε, δ)-DP is (√(2k ln(1/δ')) ε + k ε (e^ε − 1), kδ + δ')-DP;
* :func:`advanced_pure` — from pure DP (Steinke 2022, Theorem "Advanced Composition Starting from Pure DP"):
  ε = ½ Σε_j² + √(2 log(1/δ) Σε_j²);
* :func:`optimal` — the exact optimum for k-fold (ε, δ)-DP (Kairouz, Oh & Viswanath 2015,
  Theorem 3.3; randomized response is the worst case), computed in log space;
* :func:`rdp`, :func:`zcdp`, :func:`gdp` — the additive accountants (Mironov 2017, Proposition 1; Bun & Steinke 2016, result “composition of zCDP”; Dong, Roth & Su 2022, Corollary 3.3);
* :func:`compose` — the tight profile of k runs of one concrete mechanism: exact for the Gaussian
  (√k Δ/σ-GDP) and randomized response / exponential (Kairouz, Oh & Viswanath 2015), numerical and pessimistic (privacy loss
  distribution, :mod:`dpexplore.accounting.pld`) for Laplace, Logistic and Subbotin noise;
* :func:`per_step_budget` — the inverse question: how much ε each of k steps may spend;
  :func:`per_step_laplace_scale` — the Laplace noise of k steps (Steinke's Θ(√k) rule, or Δ over a
  theorem's per-step budget); :func:`delta_slack` — what k per-step δ's leave of a total δ′.

>>> basic([0.5, 0.5, 1.0])
(2.0, 0.0)
>>> optimal(0.1, 100, 1e-6) < advanced(0.1, 0.0, 100, 1e-6)[0] < 10.0
True

The package, by idea (every name is imported from here):

* :mod:`.theorems` — the closed-form theorems, the exact optimum and the per-step budgets;
* :mod:`.tight` — :func:`compose`, :func:`compose_all`, :func:`compose_epsilon` and the
  profiles they return;
* :mod:`.dpsgd` — DP-SGD planning: :func:`dpsgd_epsilon`, :func:`dpsgd_sigma`, :func:`dpsgd_steps`.
"""

from __future__ import annotations

from .dpsgd import (  # noqa: F401  (the private ones: the tests' and benchmarks' way in)
    ACCOUNTANTS,
    RDP_ORDERS,
    _checked_pld,
    _dpsgd_pld_epsilons,
    _dpsgd_rdp_epsilon,
    _one_step_rdp,
    dpsgd_epsilon,
    dpsgd_gdp_mu,
    dpsgd_sigma,
    dpsgd_steps,
)
from .theorems import (
    THEOREMS,
    OptimalProfile,
    advanced,
    advanced_pure,
    basic,
    delta_slack,
    gdp,
    optimal,
    optimal_log_delta,
    per_step_budget,
    per_step_laplace_scale,
    rdp,
    zcdp,
)
from .tight import _Directions, compose, compose_all, compose_epsilon  # noqa: F401  (_Directions: the tests)

__all__ = [
    "basic",
    "advanced",
    "advanced_pure",
    "optimal",
    "optimal_log_delta",
    "OptimalProfile",
    "rdp",
    "zcdp",
    "gdp",
    "compose",
    "compose_epsilon",
    "compose_all",
    "dpsgd_epsilon",
    "dpsgd_sigma",
    "dpsgd_steps",
    "ACCOUNTANTS",
    "per_step_budget",
    "per_step_laplace_scale",
    "delta_slack",
    "THEOREMS",
]
