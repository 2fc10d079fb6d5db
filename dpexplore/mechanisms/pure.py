"""Pure ε-DP mechanisms with finite outputs: binary randomized response and the exponential
mechanism; their profile is the tight pure-DP profile δ(ε') = (e^ε − e^{ε'})₊ / (1 + e^ε)
(Kairouz, Oh & Viswanath 2015).
"""

from __future__ import annotations

import math  # noqa: F401  (the doctests use it)
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..accounting import conversions
from .._validation import as_array, check_alpha, check_positive, scalar_out
from ._base import (
    _store,
    _check_eps_param,
    _rng,
    _size,
    _pure_log_delta,
    _pure_epsilon,
    _pure_tradeoff,
    _pure_rdp,
    _validate_calibration,
    _Mechanism,
)


__all__ = ["RandomizedResponse", "Exponential"]


# ------------------------------------------------------------------------------------------------
# pure-DP mechanisms
# ------------------------------------------------------------------------------------------------
class _AtomLoss:
    """The privacy loss of an ε-DP randomized response, ±ε with P(L = ε) = e^ε/(1 + e^ε), as a loss
    model for :mod:`dpexplore.accounting.pld` (the worst case of every ε-DP mechanism: Kairouz, Oh &
    Viswanath 2015)."""

    def __init__(self, eps: float):
        self.eps = float(eps)
        self.loss_support = (-self.eps, self.eps)
        self.eps_max = self.eps

    def __eq__(self, other):
        return isinstance(other, _AtomLoss) and other.eps == self.eps

    def __hash__(self):
        return hash(("atom", self.eps))

    def __repr__(self):
        return f"RR({self.eps!r})"

    def _loss_tails(self, x):
        x = np.asarray(x, dtype=np.float64)
        e = self.eps
        lp_top = -np.logaddexp(0.0, -e)  # log e^ε/(1 + e^ε)
        lp_bot = -np.logaddexp(0.0, e)  # log 1/(1 + e^ε)
        mid = (x >= -e) & (x < e)
        below = x < -e
        sp = np.where(below, 0.0, np.where(mid, lp_top, -np.inf))
        cp = np.where(below, -np.inf, np.where(mid, lp_bot, 0.0))
        sq = np.where(below, 0.0, np.where(mid, lp_bot, -np.inf))
        cq = np.where(below, -np.inf, np.where(mid, lp_top, 0.0))
        return sp, cp, sq, cq


class _PureMechanism(_Mechanism):
    """A mechanism with the profile of ε-DP randomized response (parameter ``eps``): δ(ε'),
    ε(δ) and the trade-off are the tight pure-DP ones; k runs compose as k-fold ε-DP (Kairouz,
    Oh & Viswanath 2015), and in a mix its loss is ±ε (:class:`_AtomLoss`)."""

    def __post_init__(self):
        _store(self, "eps", _check_eps_param(self.eps, "eps"))

    @property
    def eps_max(self):
        return self.eps

    def _log_delta(self, eps):
        return _pure_log_delta(self.eps, eps)

    def _epsilon(self, delta):
        return _pure_epsilon(self.eps, delta)

    def _tradeoff(self, alpha):
        return _pure_tradeoff(np.asarray(self.eps, float), alpha)

    def _pure_eps(self) -> float:
        return float(self.eps)

    def _pld_losses(self) -> tuple:
        return (_AtomLoss(float(self.eps)),)


@dataclass(frozen=True)
class RandomizedResponse(_PureMechanism):
    """Binary randomized response: report the true bit with probability p = e^ε/(1 + e^ε).

    Its privacy loss takes the values ±ε (``loss_atoms``), so its profile is the tight pure-DP one
    δ(ε') = (e^ε − e^{ε'})₊ / (1 + e^ε) (Kairouz, Oh & Viswanath 2015), its RDP is
    Steinke 2024 Theorem 4 (tight), its trade-off is β(α) = max(0, 1 − e^ε α, e^{−ε}(1 − α)).

    >>> m = RandomizedResponse(1.0)
    >>> round(m.delta(0.0), 12), m.eps_max
    (0.46211715726, 1.0)
    """

    eps: float

    @property
    def p_truth(self):
        """P[report the true bit] = e^ε/(1 + e^ε).

        >>> round(RandomizedResponse(math.log(3.0)).p_truth, 12)
        0.75
        """
        return scalar_out(special.expit(np.asarray(self.eps, float)))

    def loss_atoms(self):
        """Privacy-loss distribution (true bit 1 vs 0, output drawn under bit 1):
        losses [ε, −ε] with probabilities [e^ε/(1+e^ε), 1/(1+e^ε)] (Kairouz, Oh & Viswanath 2015).

        >>> RandomizedResponse(0.5).loss_atoms()[0]
        array([ 0.5, -0.5])
        """
        e = np.asarray(self.eps, float)
        return (np.stack([e, -e]), np.stack([special.expit(e), special.expit(-e)]))

    @property
    def variance(self):
        """Variance of the debiased estimate b̂ = (R − (1 − p))/(2p − 1) of one bit from its
        response R: p(1 − p)/(2p − 1)² = e^ε/(e^ε − 1)² = 1/(4 sinh²(ε/2)) (inf at ε = 0).

        >>> round(RandomizedResponse(math.log(3.0)).variance, 12)     # 3/4
        0.75
        """
        e = np.asarray(self.eps, float)
        with np.errstate(divide="ignore", over="ignore"):  # inf at ε = 0, 0 for huge ε
            return scalar_out(0.25 / np.sinh(e / 2.0) ** 2)

    def _card_closed_forms(self) -> dict:
        """The closed forms of its notebook card (:mod:`dpexplore.display`): its profile is that
        of ε-DP, so ρ = ε·tanh(ε/2) (:func:`dpexplore.accounting.conversions.pure_to_zcdp`) and
        μ = 2Φ⁻¹(e^ε/(1 + e^ε)) (:func:`dpexplore.accounting.conversions.pure_to_gdp`), both exact.

        >>> round(RandomizedResponse(1.0)._card_closed_forms()["rho"][0], 6)
        0.462117
        """
        eps = float(self.eps)
        return {
            "rho": (float(conversions.pure_to_zcdp(eps)), "exact"),
            "mu": (float(conversions.pure_to_gdp(eps)), "exact: conversions.pure_to_gdp"),
        }

    def rdp(self, alpha):
        """Tight RDP (Steinke 2024 Theorem 4): ε̂(α) = ε − log[(1 + e^{−ε})/(1 + e^{−(2α−1)ε})]/(α − 1).

        >>> round(RandomizedResponse(1.0).rdp(2.0), 12)
        0.735325664056
        """
        a = check_alpha(alpha, "alpha")
        return scalar_out(_pure_rdp(self.eps, a))

    def sample(self, size=None, rng=None, bit=1):
        """Responses (0/1 ints) to the true ``bit``: the bit itself w.p. e^ε/(1 + e^ε)."""
        if bit not in (0, 1):
            raise ValueError(f"bit must be 0 or 1, got {bit!r}")
        keep = _rng(rng).random(_size(size)) < self.p_truth
        return np.where(keep, bit, 1 - bit).astype(np.int64)

    @classmethod
    def calibrate(cls, eps, delta=0.0, sensitivity=1.0):
        """RR(ε) itself (it has no scale); δ and sensitivity are accepted and ignored beyond validation."""
        e, _, _ = _validate_calibration(eps, delta, sensitivity)
        return cls(scalar_out(e))

    def _label(self):
        return f"RR(ε={self.eps!r})"


@dataclass(frozen=True)
class Exponential(_PureMechanism):
    """The exponential mechanism with privacy parameter ε: samples an index i ∝ exp(ε u_i / (2Δ)).

    It is ε-DP and ε²/8-zCDP (Steinke 2024, inverse-sensitivity post; Cesar & Rogers 2021, bounded range).
    Profile, ε(δ) and trade-off: the tight pure ε-DP ones (the RR profile; a valid upper bound on
    δ for every score function, not the exact bounded-range profile of Dong, Durfee & Rogers 2020).
    RDP: min(Steinke 2024 Theorem 4, α ε²/8).

    >>> m = Exponential(1.0)
    >>> m.delta(0.3) == RandomizedResponse(1.0).delta(0.3), m.rdp(2.0)
    (True, 0.25)
    """

    eps: float

    def loss_atoms(self):
        """The worst-case privacy-loss distribution of an ε-DP mechanism, that of randomized
        response (Kairouz, Oh & Viswanath 2015): losses [ε, −ε] with probabilities
        [e^ε/(1+e^ε), 1/(1+e^ε)] — consistent with this class's (pure-DP) profile.

        >>> Exponential(1.0).loss_atoms()[0]
        array([ 1., -1.])
        """
        return RandomizedResponse(self.eps).loss_atoms()

    @property
    def variance(self):
        """Undefined (the output is an index); raises NotImplementedError."""
        raise NotImplementedError("the exponential mechanism outputs an index: it has no noise variance")

    def _card_closed_forms(self) -> dict:
        """The closed forms of its notebook card (:mod:`dpexplore.display`): ρ ≤ ε·tanh(ε/2), the
        zCDP of ε-DP (:func:`dpexplore.accounting.conversions.pure_to_zcdp`), an upper bound.

        >>> round(Exponential(1.0)._card_closed_forms()["rho"][0], 6)
        0.462117
        """
        return {"rho": (float(conversions.pure_to_zcdp(float(self.eps))), "upper bound")}

    def rdp(self, alpha):
        """ε̂(α) = min(tight pure-DP RDP (Steinke 2024 Theorem 4), α ε²/8 (bounded range ⇒ ε²/8-zCDP))."""
        a = check_alpha(alpha, "alpha")
        e = np.asarray(self.eps, float)
        with np.errstate(invalid="ignore", over="ignore"):  # α = inf, ε = 0: 0
            zc = np.where(e == 0, 0.0, a * e * e / 8.0)
        return scalar_out(np.minimum(_pure_rdp(e, a), zc))

    def sample(self, size=None, rng=None, *, scores, sensitivity=1.0):
        """Indices i drawn with probability ∝ exp(ε · scores[i] / (2 · sensitivity))."""
        sc = as_array(scores, "scores", allow_inf=False)
        if sc.ndim != 1 or sc.size == 0:
            raise ValueError(f"scores must be a non-empty 1-d array, got shape {sc.shape}")
        sens = float(check_positive(sensitivity, "sensitivity"))
        if np.ndim(self.eps) != 0:
            raise ValueError("sample needs a scalar eps")
        # shift by the max first (logits ≤ 0; an overflow is −inf, i.e. probability 0)
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            shifted = (sc - sc.max()) / sens
            logits = np.where(shifted == 0, 0.0, (self.eps / 2.0) * shifted)
        p = np.exp(logits - special.logsumexp(logits))
        return _rng(rng).choice(sc.size, size=_size(size), p=p / p.sum())

    @classmethod
    def calibrate(cls, eps, delta=0.0, sensitivity=1.0):
        """Exponential(ε) itself (no scale to calibrate)."""
        e, _, _ = _validate_calibration(eps, delta, sensitivity)
        return cls(scalar_out(e))

    def _label(self):
        return f"Exponential(ε={self.eps!r})"
