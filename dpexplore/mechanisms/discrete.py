"""Integer-valued noise for integer queries: the discrete Laplace and discrete Gaussian mechanisms.

A counting query q(x) ∈ ℤ with sensitivity Δ ∈ {1, 2, …} is released as q(x) + Y with Y integer
noise (Canonne, Kamath & Steinke 2020): no floating-point noise, no rounding attacks. With P the
noise law centred at 0 and Q the same law centred at Δ, the privacy loss of an output y is

    ℓ(y) = log P(y) − log Q(y),        non-increasing in y,

and the exact privacy profile is δ(ε) = Σ_y (P(y) − e^ε Q(y))₊ = Σ_{y ≤ m} P(y)(1 − e^{ε − ℓ(y)}),
m the largest integer with ℓ(m) > ε (Canonne, Kamath & Steinke 2020, Theorem 7 for the discrete
Gaussian; the same half-line sum for any monotone likelihood ratio).

* :class:`DiscreteLaplace` — P(y) ∝ e^{−|y|/t}: pure ε-DP with ε = Δ/t; δ(ε) and the Rényi
  divergence in closed form (geometric series), ``_loss_tails`` on the Δ + 1 loss atoms.
* :class:`DiscreteGaussian` — P(y) ∝ e^{−y²/(2σ²)}: ρ-zCDP with ρ = Δ²/(2σ²) (Canonne, Kamath &
  Steinke 2020, result “the discrete Gaussian is ρ-zCDP”); δ(ε) by a log-space sum over the log-concave terms with a rigorous
  geometric bound of the omitted tails; the Rényi divergence exactly, through the theta function
  θ(c) = Σ_y e^{−(y − c)²/(2σ²)}.

Safe side: every δ(ε) is rounded *up* (the omitted tails are added as bounds, then a relative
margin of 7e-15·(40 + |log δ|) — 7e-15·(8 + |log δ|) for the discrete Laplace — covers the float
rounding), ``epsilon`` ends where the computed δ is ≤ the target, ``rdp`` values are rounded up,
trade-off values rounded down.

Both classes are frozen dataclasses (hashable: they key the PLD caches) with scalar parameters,
and offer ``loss_support`` and ``_loss_tails`` — the loss-model interface of
:mod:`dpexplore.accounting.pld` — so they compose tightly with the other mechanisms.

>>> round(DiscreteLaplace(1.0).delta(0.5), 14)   # Δ = 1: the randomized-response profile of ε = 1
0.28764913664499
>>> round(DiscreteGaussian(1.0).delta(1.0), 6)    # the continuous Gaussian: 0.126937
0.141351
"""

from __future__ import annotations

from ._discrete import _DiscreteMechanism  # noqa: F401 -- the shared base, for subclasses and tests
from .discrete_gaussian import DiscreteGaussian
from .discrete_laplace import DiscreteLaplace

__all__ = ["DiscreteLaplace", "DiscreteGaussian"]
