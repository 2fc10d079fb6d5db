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
* ``counting_queries``: :func:`counting_query_scales`, :func:`differencing_attack_accuracy`,
  :func:`laplace_max_error_mean`, :func:`laplace_max_error_cdf` — Bassi 2019, slides "A differencing
  attack", "ℓ₁-sensitivity".
* ``shuffling``: :func:`shuffle_amplification` — Canonne 2022, "Privacy Doona", eq. (1)
  (Feldman, McMillan & Talwar 2021).
* ``median``: :func:`inverse_sensitivity_median` and :func:`laplace_median` — Steinke 2023a,
  "Beyond Global Sensitivity via Inverse Sensitivity", eq. (4)–(5), Theorems 2 and 4, eq. (8).

``dpexplore.algorithms`` (the former single module) re-exports all of these names.

The algorithms that the labs explore at length have a module each too, loaded on first use (they
were ``dpexplore.<module>`` before; those names still work, with a DeprecationWarning):

* ``down_sensitivity``: loss and k-down sensitivity of monotone functions, the shifted inverse
  mechanism and noisy binary search (Steinke 2023b; Fang, Dong & Yi 2022);
* ``group_privacy``: Algorithm 1 of Pujol & Desfontaines 2023 and a numerical exploration of its
  group-wise Rényi divergences;
* ``mean_estimation``: clipped Gaussian mean estimators and their errors (Kamath 2023).
"""

from __future__ import annotations

from .._moved import lazy_submodules

from . import counting_queries, generalization, median, noisy_max, shuffling, sparse_vector, thresholdout

# every module's public names, listed once in the module's own __all__
from .counting_queries import *  # noqa: F403
from .generalization import *  # noqa: F403
from .median import *  # noqa: F403
from .noisy_max import *  # noqa: F403
from .shuffling import *  # noqa: F403
from .sparse_vector import *  # noqa: F403
from .thresholdout import *  # noqa: F403

__all__ = [
    *noisy_max.__all__,
    *sparse_vector.__all__,
    *thresholdout.__all__,
    *generalization.__all__,
    *shuffling.__all__,
    *counting_queries.__all__,
    *median.__all__,
]


#: the labs' algorithms, imported on first use (scipy behind some of them)
__getattr__ = lazy_submodules(__name__, ("down_sensitivity", "group_privacy", "mean_estimation"), globals())[0]
