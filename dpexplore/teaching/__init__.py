"""Teaching algorithms: simulatable DP algorithms of the references, with their privacy parameters.

Everything here is a pure function or a small frozen spec; randomness comes only from an
explicit ``rng: numpy.random.Generator`` argument, so every simulation is seeded and
reproducible. No widget imports.

One module per idea (the source and its slide or theorem in each docstring):

* ``noisy_max``: :class:`ReportNoisyMax` / :func:`report_noisy_max` — Bassi 2019, slide
  "Report Noisy Max".
* ``sparse_vector``: :class:`AboveThreshold`, :class:`Sparse` — Bassi 2019, slide
  "AboveThreshold algorithm", "Sparse vector mechanism"; Dwork & Roth 2014, Algorithms 1–2,
  Theorems 3.23–3.26.
* ``thresholdout``: :class:`Thresholdout` and :func:`simulate_adaptive_overfitting` — Bassi 2019,
  slide "Reusable holdout"; Dwork, Feldman, Hardt, Pitassi, Reingold & Roth 2015.
* ``generalization``: generalization and max-information calculators — Bassi 2019, slide
  "Generalization via differential privacy", "The max-information of DP algorithms",
  "Generalization via max-information".
* ``shuffling``: :func:`shuffle_amplification` — Canonne 2022, "Privacy Doona", eq. (1)
  (Feldman, McMillan & Talwar 2021).
* ``median``: :func:`inverse_sensitivity_median` and :func:`laplace_median` — Steinke 2023a,
  "Beyond Global Sensitivity via Inverse Sensitivity", eq. (4)–(5), Theorems 2 and 4, eq. (8).

``dpexplore.algorithms`` (the former single module) re-exports all of these names.
"""
from __future__ import annotations

from .generalization import (
    dp_max_information_tail_bound,
    generalization_via_dp,
    max_information_iid,
    max_information_pure,
    max_information_tail_bound,
    statistical_query_epsilon,
)
from .median import (
    inverse_sensitivity_median,
    inverse_sensitivity_median_bound,
    inverse_sensitivity_median_loss,
    inverse_sensitivity_median_probs,
    laplace_median,
    laplace_median_error_bound,
)
from .noisy_max import ReportNoisyMax, report_noisy_max
from .shuffling import shuffle_amplification, shuffle_amplification_valid
from .sparse_vector import AboveThreshold, Sparse, SVTResult, SVTSession
from .thresholdout import (
    OverfittingResult,
    Thresholdout,
    ThresholdoutResult,
    ThresholdoutSession,
    simulate_adaptive_overfitting,
)

__all__ = [
    "ReportNoisyMax",
    "report_noisy_max",
    "AboveThreshold",
    "Sparse",
    "SVTSession",
    "SVTResult",
    "Thresholdout",
    "ThresholdoutSession",
    "ThresholdoutResult",
    "OverfittingResult",
    "simulate_adaptive_overfitting",
    "generalization_via_dp",
    "statistical_query_epsilon",
    "max_information_pure",
    "max_information_iid",
    "max_information_tail_bound",
    "dp_max_information_tail_bound",
    "shuffle_amplification",
    "shuffle_amplification_valid",
    "inverse_sensitivity_median",
    "inverse_sensitivity_median_loss",
    "inverse_sensitivity_median_probs",
    "inverse_sensitivity_median_bound",
    "laplace_median",
    "laplace_median_error_bound",
]
