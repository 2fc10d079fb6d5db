"""Mechanisms: exact privacy profiles, Rényi DP, trade-off functions and calibration.

Every mechanism is a frozen dataclass (a hashable parameter spec when its parameters are scalars;
) validated in ``__post_init__``. Parameters may also be numpy arrays: every
query then broadcasts them against its argument (``Gaussian(np.array([1, 2])).delta(1.0)``).

Additive symmetric log-concave noise (Laplace, Gaussian, Logistic, Subbotin) share
:class:`AdditiveNoiseMechanism`, which implements the exact profile of Vinterbo 2022 Lemma 1:
with f = exp(−g) the noise density of scale s, the privacy loss of an output y when the true
answer is 0 versus Δ is

    ℓ(y) = log f(y) − log f(y − Δ) = g((y − Δ)/s) − g(y/s)      (non-increasing in y),

and with F the noise CDF and t the solution of ℓ(t) = ε,

    δ(ε) = F(t) − e^ε F(t − Δ),       δ(ε) = 0 for ε ≥ eps_max = sup ℓ.

It is evaluated in log space (log F(t) and ε + log F(t − Δ) subtracted with
``_numerics.log_subtract``) so ``log_delta`` stays accurate where δ underflows a float (checked
against mpmath to 1e-9 relative down to δ = 1e-5000 and, via a log-Mills-ratio form, to
|log δ| ~ 1e15). Evaluating the formula at a root t that is off by τ lowers δ by O(τ²·f) only
(t maximises F(t) − e^ε F(t − Δ)); the roots here are exact to a few ulp, so this is far below
float rounding.

Safe-side rounding: ``epsilon`` and ``calibrate`` end on the side where the *computed* δ(ε) is
≤ the target (scales rounded up by ≤ a few ulp); Laplace/RR RDP values are rounded up by 16 ulp;
trade-off values β(α) are rounded down by 8 ulp. Scalar-parameter mechanisms are hashable; with
array parameters they compute fine but are not hashable and have no ``profile``.

RandomizedResponse and Exponential are pure ε-DP; their profile is the tight pure-DP profile
δ(ε') = (e^ε − e^{ε'})₊ / (1 + e^ε) (Kairouz, Oh & Viswanath 2015).

>>> Laplace(1.0).delta(0.5)                  # 1 − exp((ε − Δ/b)/2)
0.22119921692859512
>>> round(Gaussian(1.0).delta(1.0), 6)       # Balle & Wang 2018, Theorem 8
0.126937

The package, by concept:

* :mod:`.additive` — :class:`AdditiveNoiseMechanism` and Laplace, Gaussian, Logistic, Subbotin;
* :mod:`.pure` — RandomizedResponse, Exponential;
* :mod:`.discrete` — DiscreteLaplace (:mod:`.discrete_laplace`) and DiscreteGaussian
  (:mod:`.discrete_gaussian`) (Canonne, Kamath & Steinke 2020), on the shared exact integer sums of
  :mod:`._discrete`;
* :mod:`.subsampled` — :func:`subsample`: Poisson and fixed-size subsampling (privacy
  amplification; the PLD machinery of :mod:`dpexplore.accounting.pld`);
* :mod:`._base` — the shared checks, closed forms and :class:`MechanismProfile`, and the hooks
  through which :func:`dpexplore.accounting.composition.compose` and the notebook card see every mechanism
  (how it composes, its privacy loss, its card's facts), so that a new mechanism is one class.
"""

from __future__ import annotations

from ._base import MechanismProfile
from .additive import AdditiveNoiseMechanism, Gaussian, Laplace, Logistic, Subbotin
from .discrete import DiscreteGaussian, DiscreteLaplace
from .pure import Exponential, RandomizedResponse
from .subsampled import FixedSubsampled, PoissonSubsampled, subsample

__all__ = [
    "AdditiveNoiseMechanism",
    "Laplace",
    "Gaussian",
    "Logistic",
    "Subbotin",
    "RandomizedResponse",
    "Exponential",
    "MechanismProfile",
    "subsample",
    "PoissonSubsampled",
    "FixedSubsampled",
    "DiscreteLaplace",
    "DiscreteGaussian",
]
