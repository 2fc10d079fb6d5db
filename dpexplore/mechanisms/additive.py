"""Additive symmetric log-concave noise: Laplace, Gaussian, Logistic and Subbotin, with their
exact privacy profiles (Vinterbo 2022, Lemma 1), Rényi DP, trade-off functions and
calibration (see :mod:`dpexplore.mechanisms`).
"""

from __future__ import annotations

import math  # noqa: F401  (the doctests use it)
from dataclasses import dataclass

import numpy as np
from scipy import special

from .._numerics import (
    LOG_HALF,
    down,
    epsilon_by_bisection,
    expm1mx,
    half_square_up,
    gaussian_log_delta,
    log1mexp,
    log_subtract,
    rdp_of_zcdp_up,
    up,
)
from .._validation import as_array, check_alpha, check_positive, scalar_out
from ._calibration import _TINY, calibrate_d, safe_scale
from ._gamma import _SUBBOTIN_TERM_ERR, _U, _half_lower_gamma, _log_gammaincc, _log_mills_diff, _subbotin_interval_mass
from ..accounting.conversions import gdp_to_zcdp
from ._base import (
    _SHAPE_MAX,
    _store,
    _check_sensitivity,
    _check_ratio,
    _rng,
    _size,
    _validate_calibration,
    _GaussianParameters,
    _Mechanism,
)


__all__ = ["AdditiveNoiseMechanism", "Laplace", "Gaussian", "Logistic", "Subbotin"]


# ------------------------------------------------------------------------------------------------
# additive noise
# ------------------------------------------------------------------------------------------------
class AdditiveNoiseMechanism(_Mechanism):
    """Base for M(x) = q(x) + Z with Z symmetric log-concave of scale ``scale`` (Vinterbo 2022, Lemma 1).

    Subclasses provide the standardized noise (scale 1): ``_std_logcdf(z)``, ``_std_logpdf(z)``,
    ``_std_ppf(p)``, the standardized loss ``_std_loss(z, d)`` = g(z − d) − g(z) and its inverse
    ``_std_loss_inverse(eps, d)`` for 0 ≤ eps < d-dependent bound, with d = Δ/s. The base class
    builds δ(ε) = F(t) − e^ε F(t − Δ), ℓ(t) = ε, in log space (Vinterbo 2022 Lemma 1), and the
    Neyman–Pearson trade-off β(α) = F(F⁻¹(1 − α) − Δ) of the monotone likelihood ratio.

    >>> m = Logistic(1.0)
    >>> t = m.loss_inverse(0.3)
    >>> d = math.exp(m.logcdf(t)) - math.exp(0.3 + m.logcdf(t - m.sensitivity))
    >>> abs(d - m.delta(0.3)) < 1e-15
    True
    """

    def __post_init__(self):
        self._store_parameters("scale")

    def _store_parameters(self, scale: str) -> None:
        """Validate and store the noise parameter (field ``scale``) and the sensitivity; Δ/s must
        be a positive float (``_check_ratio``)."""
        _store(self, scale, check_positive(getattr(self, scale), scale))
        _store(self, "sensitivity", _check_sensitivity(self.sensitivity))
        _check_ratio(self)

    # subclass interface (and a ``scale`` field or property) ---------------------------------
    def _std_logcdf(self, z):  # pragma: no cover - abstract
        raise NotImplementedError

    def _std_logpdf(self, z):  # pragma: no cover - abstract
        raise NotImplementedError

    def _std_ppf(self, p):  # pragma: no cover - abstract
        raise NotImplementedError

    def _std_loss(self, z, d):  # pragma: no cover - abstract
        raise NotImplementedError

    def _std_loss_inverse(self, eps, d):  # pragma: no cover - abstract
        raise NotImplementedError

    # public noise functions ---------------------------------------------------------------------
    @property
    def _d(self):
        with np.errstate(over="ignore"):  # Δ/s beyond float max: inf (δ = 1 where it matters)
            return np.asarray(self.sensitivity, float) / np.asarray(self.scale, float)

    def logcdf(self, x):
        """log P[Z ≤ x] of the noise (centred at 0), accurate in both tails.

        >>> round(Laplace(1.0).logcdf(-700.0), 6)        # log(e^{−700}/2)
        -700.693147
        """
        x = as_array(x, "x")
        with np.errstate(over="ignore"):  # x/s beyond float range: ±inf
            return scalar_out(self._std_logcdf(x / np.asarray(self.scale, float)))

    def logsf(self, x):
        """log P[Z > x] = log P[Z ≤ −x] (the noise is symmetric).

        >>> Gaussian(1.0).logsf(0.0) == Gaussian(1.0).logcdf(0.0)
        True
        """
        x = as_array(x, "x")
        with np.errstate(over="ignore"):  # x/s beyond float range: ±inf
            return scalar_out(self._std_logcdf(-x / np.asarray(self.scale, float)))

    def logpdf(self, x):
        """log f(x) of the noise density.

        >>> round(Laplace(2.0).logpdf(0.0), 12) == round(-math.log(4.0), 12)
        True
        """
        x = as_array(x, "x")
        s = np.asarray(self.scale, float)
        with np.errstate(over="ignore", under="ignore"):  # |x/s| beyond float range: −inf
            return scalar_out(self._std_logpdf(x / s) - np.log(s))

    def loss(self, y):
        """Privacy loss ℓ(y) = log f(y) − log f(y − Δ) of output y (true answer 0 vs Δ);
        non-increasing in y, with values in [−eps_max, eps_max] (Vinterbo 2022 Lemma 1, Remark 4).

        >>> Laplace(1.0).loss([-5.0, 0.25, 5.0])
        array([ 1. ,  0.5, -1. ])
        """
        y = as_array(y, "y")
        s = np.asarray(self.scale, float)
        with np.errstate(over="ignore", under="ignore"):  # losses beyond float range: ±inf
            return scalar_out(self._std_loss(y / s, self._d))

    def loss_inverse(self, eps):
        """t with ℓ(t) = eps, for −eps_max < eps < eps_max (vectorized). By the symmetry
        ℓ(Δ − t) = −ℓ(t), t(−ε) = Δ − t(ε). Closed forms for Laplace, Gaussian and Logistic;
        a safeguarded Newton search for Subbotin (ℓ(t) = ε to ~2e-15 relative). Where t
        overflows (Subbotin with r → 1 and huge ε) it is ±inf.

        >>> Gaussian(1.0).loss_inverse(1.0)            # Δ/2 − εσ²/Δ
        -0.5
        """
        e = as_array(eps, "eps", allow_inf=False)
        em = np.asarray(self.eps_max, float)
        if (np.abs(e) >= em).any():
            raise ValueError(f"eps must satisfy |eps| < eps_max = {self.eps_max!r}, got {eps!r}")
        s = np.asarray(self.scale, float)
        d = self._d
        with np.errstate(over="ignore"):  # t beyond float range: ±inf
            z = self._std_loss_inverse(np.abs(e), d)
            z = np.where(e < 0, d - z, z)
        with np.errstate(over="ignore"):  # t beyond float range: ±inf
            return scalar_out(s * z)

    # profile --------------------------------------------------------------------------------------
    def _log_delta(self, eps):
        eps = np.asarray(eps, float)
        shape = np.broadcast_shapes(eps.shape, self._param_shape())
        eps = np.broadcast_to(eps, shape)
        d = np.broadcast_to(self._d, shape)
        em = np.broadcast_to(np.asarray(self.eps_max, float), eps.shape)
        live = eps < em
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            e_in = np.where(live, eps, 0.0)
            z = self._std_loss_inverse(e_in, d)
            la = self._std_logcdf(z)
            lb = e_in + self._std_logcdf(z - d)
            out = log_subtract(la, np.minimum(lb, la))
        return np.where(live, out, -np.inf)

    def _tradeoff(self, alpha):
        d = self._d
        alpha, d = np.broadcast_arrays(alpha, d)
        # q = F⁻¹(1 − α) computed from the accurate side: −F⁻¹(α) for α < ½
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(
                alpha < 0.5, -self._std_ppf(np.minimum(alpha, 0.5)), self._std_ppf(np.clip(1.0 - alpha, 0.0, 0.5))
            )
            beta = np.exp(self._std_logcdf(q - d))
        beta = down(beta, "tradeoff")  # safe side: a smaller β claims less privacy
        beta = np.where(alpha <= 0, 1.0, np.where(alpha >= 1, 0.0, beta))
        return beta

    # sampling -------------------------------------------------------------------------------------
    def sample(self, size=None, rng=None):
        """Noise samples Z (centred at 0) of the given ``size``; ``rng`` a Generator or seed.
        Subbotin: Z = s·sign·(r G)^{1/r}, G ~ Gamma(1/r) (Vinterbo 2022 Section 2.1).

        >>> Laplace(1.0).sample(3, rng=0).shape
        (3,)
        """
        return self._sample(_size(size), _rng(rng))

    # calibration ----------------------------------------------------------------------------------
    def _log_delta_and_root(self, eps):
        """(log δ(ε), z): the profile and the root z of ℓ = ε in standard units (t/s), which the
        slope of :meth:`_log_delta_slope` needs. Here ``_log_delta`` and ``_std_loss_inverse``
        (closed forms for Laplace, Gaussian, Logistic); Subbotin, whose δ solves for the root
        itself, overrides it to solve it once."""
        eps = np.asarray(eps, float)
        shape = np.broadcast_shapes(eps.shape, self._param_shape())
        e = np.broadcast_to(eps, shape)
        d = np.broadcast_to(self._d, shape)
        live = e < np.broadcast_to(np.asarray(self.eps_max, float), shape)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            z = self._std_loss_inverse(np.where(live, e, 0.0), d)
        return self._log_delta(eps), z

    def _log_delta_slope(self, eps):
        """(log δ(ε), ∂ log δ/∂ log d) at d = Δ/s. By the envelope theorem (t maximises
        F(t) − e^ε F(t − d), the root of ℓ(t) = ε: Vinterbo 2022 Lemma 1) ∂δ/∂d = e^ε f(z − d),
        so ∂ log δ/∂ log d = d e^ε f(z − d)/δ (standard units; not finite where δ = 0)."""
        ld, z = self._log_delta_and_root(eps)
        d = self._d
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            slope = np.exp(np.log(d) + eps + self._std_logpdf(z - d) - ld)
        return ld, slope

    @classmethod
    def _calibrate_d(cls, eps, delta, **shape):
        """The largest d = Δ/s with δ(ε) ≤ δ_target: :func:`._calibration.calibrate_d` (grid
        bracket, Newton, windows of floats; the safe end)."""
        return calibrate_d(cls, eps, delta, **shape)

    @classmethod
    def _safe_scale(cls, scale, eps, delta, sensitivity, **shape):
        """A computed scale nudged up until δ(ε) ≤ δ_target holds: :func:`._calibration.safe_scale`."""
        return safe_scale(cls, scale, eps, delta, sensitivity, **shape)

    @classmethod
    def _with_scale(cls, scale, sensitivity, **shape):
        """The mechanism with this scale and sensitivity (array parameters allowed)."""
        return cls(scale, sensitivity)

    @classmethod
    def _from_d(cls, d, **shape):  # pragma: no cover - overridden
        """A mechanism with sensitivity 1 and scale 1/d (δ depends on Δ/s only)."""
        raise NotImplementedError

    def rdp(self, alpha):
        """Rényi DP ε̂(α); implemented where a closed form exists (Laplace, Gaussian)."""
        raise NotImplementedError(f"{type(self).__name__} has no closed-form Renyi DP")

    def _compose_pld(self, k: int, how):
        """k runs: its own profile at k = 1, else the k-th power of its privacy loss distribution
        (``how.pld_power``: refined to the error target, capped by the Kairouz–Oh–Viswanath bound
        where the loss is bounded)."""
        return self.profile if k == 1 else how.pld_power(self, k)

    def _label(self):
        return f"{type(self).__name__}(scale={self.scale!r}, Δ={self.sensitivity!r})"


class _BoundedLoss(AdditiveNoiseMechanism):
    """Noise of scale ``scale`` whose log-density is 1-Lipschitz in standard units (Laplace,
    logistic): the privacy loss g((y − Δ)/s) − g(y/s) lies within ±Δ/s and reaches it in the
    tails, so the mechanism is Δ/s-DP."""

    @property
    def eps_max(self):
        """sup ℓ = Δ/s (Δ/b for Laplace)."""
        return scalar_out(self._d)


# Laplace -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Laplace(_BoundedLoss):
    """Laplace mechanism q(x) + Lap(b): density exp(−|x|/b)/(2b).

    Exact profile (Vinterbo 2022 Theorem 3; Liu et al. 2022): δ(ε) = max(0, 1 − exp((ε − Δ/b)/2)), so the
    mechanism is Δ/b-DP (eps_max = Δ/b) and ε(δ) = Δ/b + 2 log(1 − δ) clipped at 0.

    >>> m = Laplace(2.0)
    >>> m.eps_max, m.delta(0.5), m.epsilon(0.0)
    (0.5, 0.0, 0.5)
    >>> round(Laplace.calibrate(1.0).scale, 12)   # b = Δ/ε, rounded up by a few ulp
    1.0
    """

    scale: float
    sensitivity: float = 1.0

    @property
    def variance(self):
        """Var Z = 2b²."""
        with np.errstate(over="ignore"):  # huge scale: inf
            return scalar_out(2.0 * np.asarray(self.scale, float) ** 2)

    def _std_logcdf(self, z):
        with np.errstate(divide="ignore", over="ignore"):
            neg = LOG_HALF + np.minimum(z, 0.0)
            return np.where(z < 0, neg, np.log1p(-0.5 * np.exp(-np.maximum(z, 0.0))))

    def _std_logpdf(self, z):
        return LOG_HALF - np.abs(z)

    def _std_ppf(self, p):
        with np.errstate(divide="ignore"):
            return np.where(p < 0.5, np.log(2 * p), -np.log(2 * (1 - p)))

    def _std_loss(self, z, d):
        # |z − d| − |z| = clip(d − 2z, −d, d), without the rounding of |z − d| for large |z|
        return np.clip(d - 2.0 * z, -d, d)

    def _std_loss_inverse(self, eps, d):
        return (d - eps) / 2.0

    def _log_delta(self, eps):
        d = self._d
        with np.errstate(divide="ignore"):
            x = np.minimum((np.asarray(eps, float) - d) / 2.0, 0.0)
            return log1mexp(x)

    def _epsilon(self, delta):
        d = self._d
        delta = np.asarray(delta, float)
        val = d + 2.0 * np.log1p(-delta)
        val = np.maximum(val, 0.0)
        # d + 2 log1p(−δ) cancels when ε ≪ d: its error is a few ulps of d, not of the result
        with np.errstate(over="ignore"):  # spacing(float max) = inf: capped at d just below
            val = np.where(val > 0, np.minimum(val + 4 * np.spacing(np.maximum(val, d)), d), 0.0)
        return np.broadcast_to(val, np.broadcast_shapes(np.shape(d), delta.shape)).copy()

    def _card_closed_forms(self) -> dict:
        """The closed forms of its notebook card (:mod:`dpexplore.display`): ρ exactly, the
        supremum over α of D_α/α. With e = Δ/b, D_α = log(α/(2α−1) e^{(α−1)e} +
        (α−1)/(2α−1) e^{−αe})/(α − 1) (Mironov 2017, Proposition 6); D_α/α falls with α, so the
        supremum is the limit α → 1, the KL divergence e + e^{−e} − 1 (Laplace(1): 0.3679, where
        the bound from pure ε, ε·tanh(ε/2), gives 0.4621), rounded up.

        >>> round(Laplace(1.0)._card_closed_forms()["rho"][0], 4)
        0.3679
        """
        e = float(self.sensitivity) / float(self.scale)
        if e >= 1.0:  # no cancellation
            kl = e + math.expm1(-e)
        else:  # Σ_{n≥2} (−e)ⁿ/n!, alternating, smallest terms first
            terms = [(-e) ** n / math.factorial(n) for n in range(2, 30)]
            kl = math.fsum(reversed(terms))
        return {
            "rho": (
                float(up(kl, "kl")),
                "exact: sup over α of D_α/α, the KL divergence Δ/b + e^{−Δ/b} − 1 (Mironov 2017, "
                "Proposition 6, at α → 1)",
            )
        }

    def rdp(self, alpha):
        """Tight RDP (Mironov 2017, Proposition 6; quoted in Steinke 2024), with d = Δ/b::

            ε̂(α) = log[α/(2α−1) e^{(α−1)d} + (α−1)/(2α−1) e^{−αd}]/(α − 1)
                 = d + log1p[(α−1)(e^{−(2α−1)d} − 1)/(2α−1)]/(α − 1);  ε̂(∞) = d.

        >>> round(Laplace(1.0).rdp(2.0), 8)
        0.61912363
        """
        a = check_alpha(alpha, "alpha")
        d = self._d
        with np.errstate(over="ignore", invalid="ignore"):
            inner = np.log1p((a - 1.0) * np.expm1(-(2 * a - 1.0) * d) / (2 * a - 1.0))
            far = d + inner / (a - 1.0)
            # near α = 1 (x = (α−1)d < 1): the bracket is 1 + [α e^x + (α−1) e^{−αd} − (2α−1)]/(2α−1),
            # whose first-order terms α x and −(α−1)αd cancel exactly: written with
            # g(y) = e^y − 1 − y ≥ 0 it is 1 + [α g(x) + (α−1) g(−αd)]/(2α−1), a sum of
            # non-negative terms (full relative accuracy for small d and α near 1)
            x = (a - 1.0) * d
            near = np.log1p((a * expm1mx(x) + (a - 1.0) * expm1mx(-a * d)) / (2 * a - 1.0)) / (a - 1.0)
            val = np.where(x < 1.0, near, far)
        val = np.where(np.isinf(a), d, val)
        # round up by 16 ulp of ε̂ (the forms above carry a few ulp), never above d
        val = val + 16 * np.spacing(np.abs(val))
        return scalar_out(np.clip(val, 0.0, d))

    def _sample(self, size, rng):
        return rng.laplace(0.0, self.scale, size)

    @classmethod
    def _from_d(cls, d, **_):
        return cls(1.0 / np.asarray(d, float))

    @classmethod
    def calibrate(cls, eps, delta=0.0, sensitivity=1.0):
        """Minimum scale (Vinterbo 2022 Theorem 3): b = Δ/(ε − 2 log(1 − δ)), rounded up so that
        δ(ε) ≤ delta holds in floating point. ε = 0 needs δ > 0.

        >>> Laplace.calibrate(1.0, 0.1).delta(1.0) <= 0.1
        True
        """
        e, dl, s = _validate_calibration(eps, delta, sensitivity)
        denom = e - 2.0 * np.log1p(-dl)
        if (denom <= 0).any():
            raise ValueError(f"eps = 0 with delta = 0 needs infinite Laplace noise; got eps={eps!r}, delta={delta!r}")
        with np.errstate(over="ignore"):  # beyond float max: rejected in _safe_scale
            b = s / denom
            b = b * (1 + 4 * np.finfo(float).eps)
        b = cls._safe_scale(b, e, dl, s)
        return cls(scalar_out(b), scalar_out(s))


# Gaussian ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Gaussian(_GaussianParameters, AdditiveNoiseMechanism):
    """Gaussian mechanism q(x) + N(0, σ²).

    Exact profile (Balle & Wang 2018, Theorem 8; Vinterbo 2022 Theorem 5): with μ = Δ/σ,
    δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ), the μ-GDP profile (Dong, Roth & Su 2022, Corollary 2.13; restated as Liu et al. 2022, Theorem 3.1); computed
    by ``_numerics.gaussian_log_delta`` (accurate down to δ = 1e-5000; rounded up by a few ulps of log δ,
    never below the truth). eps_max = inf.

    >>> m = Gaussian(2.0)
    >>> round(m.delta(0.0), 12), m.rdp(3.0), m.variance
    (0.197412651366, 0.375, 4.0)
    """

    sigma: float
    sensitivity: float = 1.0

    def __post_init__(self):
        self._store_parameters("sigma")

    @property
    def variance(self):
        """Var Z = σ²."""
        with np.errstate(over="ignore"):  # huge σ: inf
            return scalar_out(np.asarray(self.sigma, float) ** 2)

    def _std_logcdf(self, z):
        return special.log_ndtr(z)

    def _std_logpdf(self, z):
        return -0.5 * z * z - 0.5 * np.log(2 * np.pi)

    def _std_ppf(self, p):
        return special.ndtri(p)

    def _std_loss(self, z, d):
        return d * (d - 2.0 * z) / 2.0

    def _std_loss_inverse(self, eps, d):
        return d / 2.0 - eps / d

    def _log_delta(self, eps):
        d = self._d
        # Δ/σ underflowing to 0 (σ = 1e300, Δ = 1e-300): no privacy loss, δ = 0 (μ = 0 is outside
        # gaussian_log_delta's domain: 0/0)
        out = np.where(d == 0, -np.inf, gaussian_log_delta(np.where(d == 0, 1.0, d), eps))
        # where the erfcx difference in _numerics cancels completely (|log δ| ≳ 1e12), fall back
        # to the log-Mills-ratio tail form of Subbotin(σ, r = 2), the same distribution
        bad = np.isneginf(out) & np.isfinite(eps) & (d != 0)
        if bad.any():
            alt = Subbotin(self.sigma, 2.0, self.sensitivity)._log_delta(eps)
            out = np.where(bad, alt, out)
        return out

    def _epsilon_lower(self, delta):
        """The smallest ε whose LOWER bound on δ(ε) (``gaussian_log_delta(…, "down")``, the
        computed value moved down by as much as ``_log_delta`` moves it up) is at most ``delta``:
        at most the true ε(δ), up to the float at or above it — for lower bounds on ε
        (:func:`~dpexplore.mechanisms.subsampled.one_shifted_step_lower_epsilon`), which the
        upper-bound ε of :meth:`_epsilon` would move the unsafe way."""
        delta = np.asarray(delta, float)
        shape = np.broadcast_shapes(delta.shape, self._param_shape())
        return epsilon_by_bisection(self._log_delta_lower, delta, np.asarray(np.inf), shape)

    def _log_delta_lower(self, eps):
        """A LOWER bound on log δ(ε) (``gaussian_log_delta(…, "down")``, at most 0), for the
        lower bounds on ε and δ built on this mechanism's δ (:meth:`_epsilon_lower`; the check of a
        subsampled composition against one shifted step)."""
        d = self._d
        out = np.where(d == 0, -np.inf, gaussian_log_delta(np.where(d == 0, 1.0, d), eps, "down"))
        return np.minimum(out, 0.0)

    def _tradeoff(self, alpha):
        """G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) (Liu et al. 2022; Dong, Roth & Su 2022)."""
        return super()._tradeoff(alpha)

    @property
    def mu(self):
        """μ = Δ/σ: the Gaussian mechanism is exactly μ-GDP (Dong, Roth & Su 2022, definition
        “μ-GDP”: its pair of output distributions is N(0, 1) vs N(μ, 1) rescaled). Broadcasts
        array parameters.

        >>> Gaussian(4.0, 2.0).mu
        0.5
        """
        return scalar_out(self._d)

    @property
    def rho(self):
        """ρ = Δ²/(2σ²) = μ²/2: the Gaussian mechanism is ρ-zCDP (Bun & Steinke 2016, Proposition
        1.6), by :func:`~dpexplore.accounting.conversions.gdp_to_zcdp` (rounded upward: exact where
        μ²/2 is a float).

        >>> Gaussian(2.0).rho, Gaussian(3.0).rho >= 1 / 18
        (0.125, True)
        """
        return gdp_to_zcdp(self._d)

    def _gdp_mu(self) -> float:
        """μ = Δ/σ (:attr:`mu`), so k runs are exactly √k·μ-GDP (Dong, Roth & Su 2022, Corollary 3.3).

        >>> Gaussian(4.0, 2.0)._gdp_mu()
        0.5
        """
        return float(self.mu)

    def _card_closed_forms(self) -> dict:
        """The closed forms of its notebook card (:mod:`dpexplore.display`): exactly μ = Δ/σ-GDP
        (:attr:`mu`) and ρ = Δ²/(2σ²)-zCDP (:attr:`rho`, rounded up).

        >>> Gaussian(2.0)._card_closed_forms()["mu"]
        (0.5, 'exact: Δ/σ')
        """
        return {"mu": (float(self.mu), "exact: Δ/σ"), "rho": (float(self.rho), "exact: Δ²/(2σ²)")}

    def rdp(self, alpha):
        """ε̂(α) = αΔ²/(2σ²) = αρ (Mironov 2017, Proposition 7); ε̂(∞) = inf. Rounded upward, as
        :func:`~dpexplore.accounting.conversions.zcdp_to_rdp` of :attr:`rho` (exact where it is a
        float; the smallest positive float where (Δ/σ)² underflows).

        >>> Gaussian(1.0).rdp(2.0), Gaussian(2.0).rdp([2.0, 32.0]).tolist()
        (1.0, [0.25, 4.0])
        """
        a = check_alpha(alpha, "alpha")
        return scalar_out(rdp_of_zcdp_up(half_square_up(self._d), a))

    def _sample(self, size, rng):
        return rng.normal(0.0, self.sigma, size)

    @classmethod
    def _from_d(cls, d, **_):
        return cls(1.0 / np.asarray(d, float))

    @classmethod
    def calibrate(cls, eps, delta=0.0, sensitivity=1.0):
        """Minimum σ with δ(ε) ≤ delta (Balle & Wang 2018; Vinterbo 2022 Lemma 2 monotonicity): a
        grid bracket, a safeguarded Newton search on log(Δ/σ) (slope by the envelope theorem) and
        a window of floats around its root, ending on the feasible side (``_calibrate_d``), so σ
        is rounded up by ~1 ulp of log(Δ/σ). δ = 0 is impossible (the Gaussian is not pure DP).

        >>> m = Gaussian.calibrate(1.0, 1e-5)
        >>> round(m.sigma, 6), m.delta(1.0) <= 1e-5
        (3.730632, True)
        """
        e, dl, s = _validate_calibration(eps, delta, sensitivity)
        if (dl == 0).any():
            raise ValueError(
                "delta = 0 is impossible for the Gaussian mechanism: its privacy "
                f"loss is unbounded, so every sigma has delta(eps) > 0; got delta={delta!r}"
            )
        dmax = cls._calibrate_d(e, dl)
        with np.errstate(over="ignore", divide="ignore"):  # rejected in _safe_scale
            sigma = s / dmax
        sigma = cls._safe_scale(sigma, e, dl, s)
        return cls(scalar_out(sigma), scalar_out(s))


# Logistic ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Logistic(_BoundedLoss):
    """Logistic mechanism: noise density e^{−x/s} / (s (1 + e^{−x/s})²), F(x) = 1/(1 + e^{−x/s}).

    With d = Δ/s the privacy loss is ℓ(y) = 2 log(cosh(d/2) − tanh(y/(2s)) sinh(d/2)) ∈ (−d, d),
    and Vinterbo 2022 Theorem 4 (closed form re-derived from Lemma 1) gives

        δ(ε) = (1 − e^{−(d − ε)/2})² / (1 − e^{−d})   for ε < d,   0 for ε ≥ d = eps_max,

        ε(δ) = d + 2 log(1 − sqrt(δ (1 − e^{−d}))),  clipped at 0.

    At ε = 0 this is tanh(d/4), the total variation distance F(Δ/2) − F(−Δ/2).

    >>> m = Logistic(1.0)
    >>> round(m.delta(0.0), 15) == round(math.tanh(0.25), 15), m.eps_max
    (True, 1.0)
    """

    scale: float
    sensitivity: float = 1.0

    @property
    def variance(self):
        """Var Z = π² s² / 3."""
        with np.errstate(over="ignore"):  # huge scale: inf
            return scalar_out(np.pi**2 * np.asarray(self.scale, float) ** 2 / 3.0)

    def _std_logcdf(self, z):
        return special.log_expit(z)

    def _std_logpdf(self, z):
        a = np.abs(z)
        return -a - 2.0 * np.log1p(np.exp(-a))

    def _std_ppf(self, p):
        return special.logit(p)

    def _std_loss(self, z, d):
        # ℓ = 2 log(cosh(d/2) − tanh(z/2) sinh(d/2)) = 2 log(e^{d/2} σ(−z) + e^{−d/2} σ(z)),
        # σ the logistic function: a log-sum-exp of log-expits, accurate for every z
        val = 2.0 * np.logaddexp(d / 2.0 + special.log_expit(-z), -d / 2.0 + special.log_expit(z))
        return np.clip(val, -d, d)

    def _std_loss_inverse(self, eps, d):
        # tanh(z/2) = (cosh(d/2) − e^{ε/2}) / sinh(d/2)  ⇒
        # z = (d − ε)/2 + log(1 − e^{(ε−d)/2}) − log(1 − e^{−(ε+d)/2})
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (d - eps) / 2.0 + log1mexp(np.minimum((eps - d) / 2.0, 0.0)) - log1mexp(-(eps + d) / 2.0)
        # ε = 0: z = d/2 by symmetry (the formula is −inf + inf for subnormal d)
        return np.where(eps == 0, d / 2.0, z)

    def _log_delta(self, eps):
        d = self._d
        with np.errstate(divide="ignore", invalid="ignore"):
            x = np.minimum((np.asarray(eps, float) - d) / 2.0, 0.0)
            return 2.0 * log1mexp(x) - log1mexp(-d)

    def _epsilon(self, delta):
        d = self._d
        delta = np.asarray(delta, float)
        with np.errstate(divide="ignore", invalid="ignore"):
            root = np.sqrt(delta * -np.expm1(-d))
            val = d + 2.0 * np.log1p(-root)
        val = np.maximum(np.where(np.isfinite(val), val, 0.0), 0.0)
        val = np.where(val > 0, np.minimum(val + 8 * np.spacing(d), d), 0.0)
        return np.broadcast_to(val, np.broadcast_shapes(np.shape(d), delta.shape)).copy()

    def _sample(self, size, rng):
        return rng.logistic(0.0, self.scale, size)

    @classmethod
    def _from_d(cls, d, **_):
        return cls(1.0 / np.asarray(d, float))

    @classmethod
    def calibrate(cls, eps, delta=0.0, sensitivity=1.0):
        """Minimum scale (Vinterbo 2022 Theorem 4): with c = e^{ε/2}, x = e^{−d/2} solves
        (1 − c x)² = δ (1 − x²), x = (c − sqrt(δ(c² − 1 + δ))) / (c² + δ), d = −2 log x,
        s = Δ/d rounded up until δ(ε) ≤ delta holds in floating point.

        >>> round(Logistic.calibrate(1.0).scale, 12)     # δ = 0: s = Δ/ε
        1.0
        """
        e, dl, s = _validate_calibration(eps, delta, sensitivity)
        if ((e == 0) & (dl == 0)).any():
            raise ValueError(f"eps = 0 with delta = 0 needs infinite Logistic noise; got eps={eps!r}, delta={delta!r}")
        # log x = log(c − r) − log(c² + δ) with c = e^{ε/2}, r = sqrt(δ(c² − 1 + δ)), written
        # −ε/2 + log1p(−u) − log1p(δ e^{−ε}) with u = r/c = sqrt(δ(1 − e^{−ε} + δ e^{−ε})): the
        # logs of numbers near 1 lost ~1e-10 relative at ε = 1e-6 (an unsafe scale)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            em = np.exp(-e)
            u = np.sqrt(dl * (-np.expm1(-e) + dl * em))
            logx = -e / 2.0 + np.log1p(-u) - np.log1p(dl * em)
            # δ → 0: log x = −ε/2 exactly
            logx = np.where(dl == 0, -e / 2.0, logx)
        d = np.where(dl == 0, e, -2.0 * logx)  # (−ε/2)·(−2) would round ε = 5e-324 to 0
        with np.errstate(over="ignore", divide="ignore"):  # rejected in _safe_scale
            scale = s / d * (1 + 4 * np.finfo(float).eps)
        scale = cls._safe_scale(scale, e, dl, s)
        return cls(scalar_out(scale), scalar_out(s))


# Subbotin ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Subbotin(AdditiveNoiseMechanism):
    """Subbotin (generalized normal) mechanism: density exp(−|x/s|^r / r) / (2 s r^{1/r} Γ(1 + 1/r)),
    shape 1 ≤ r ≤ 20 (Vinterbo 2022 Section 2.1). r = 1 is Laplace(b = s); r = 2 is Gaussian(σ = s).

    CDF: F(x) = ½ Q(1/r, |x/s|^r / r) for x < 0 (Q the regularized upper incomplete gamma, in log
    space via a continued fraction in the deep tail). Privacy loss with d = Δ/s, u = d/2 − y/s:
    ℓ = sign(u) φ(|u|), φ(u) = ((u + d/2)^r − |u − d/2|^r)/r; the root of φ(u) = ε is bracketed
    in [max(0, c − d/2), c + d/2], c = (ε/d)^{1/(r−1)}, and found by safeguarded Newton on log φ.
    eps_max = d for r = 1 and inf for r > 1. The profile is Vinterbo 2022 Lemma 1 (general formula).

    >>> g, s = Gaussian(1.0).delta(1.0), Subbotin(1.0, 2.0).delta(1.0)   # s: moved up by its error bound
    >>> 0 <= s - g < 1e-12
    True
    >>> abs(Subbotin(2.0, 1.0).delta(0.2) - Laplace(2.0).delta(0.2)) < 1e-14
    True
    """

    scale: float
    shape: float
    sensitivity: float = 1.0

    def __post_init__(self):
        _store(self, "scale", check_positive(self.scale, "scale"))
        r = as_array(self.shape, "shape", allow_inf=False)
        if ((r < 1) | (r > _SHAPE_MAX)).any():
            raise ValueError(
                f"shape must lie in [1, {_SHAPE_MAX:g}] (log-concave; the numerics are "
                f"not reliable beyond), got {self.shape!r}"
            )
        _store(self, "shape", r)
        _store(self, "sensitivity", _check_sensitivity(self.sensitivity))
        _check_ratio(self)

    @property
    def eps_max(self):
        """Δ/s for r = 1 (Laplace), inf for r > 1 (MLR-unbounded, Vinterbo 2022 Definition 3)."""
        r = np.asarray(self.shape, float)
        return scalar_out(np.where(r == 1, self._d, np.inf))

    @property
    def variance(self):
        """Var Z = s² r^{2/r} Γ(3/r) / Γ(1/r)."""
        r = np.asarray(self.shape, float)
        s = np.asarray(self.scale, float)
        with np.errstate(over="ignore"):  # huge scale: inf
            return scalar_out(s * s * np.exp(2.0 / r * np.log(r) + special.gammaln(3.0 / r) - special.gammaln(1.0 / r)))

    @property
    def _r(self):
        return np.asarray(self.shape, float)

    def _std_logcdf(self, z):
        r = self._r
        z, r = np.broadcast_arrays(np.asarray(z, float), r)
        with np.errstate(divide="ignore", over="ignore"):
            x = np.exp(r * np.log(np.abs(z)) - np.log(r))
        lq = LOG_HALF + _log_gammaincc(1.0 / r, x)
        return np.where(z < 0, lq, log1mexp(np.minimum(lq, LOG_HALF)))

    def _std_logpdf(self, z):
        r = self._r
        with np.errstate(divide="ignore", over="ignore"):
            g = np.exp(r * np.log(np.abs(z)) - np.log(r))
        return -g - np.log(2.0) - np.log(r) / r - special.gammaln(1.0 + 1.0 / r)

    def _std_ppf(self, p):
        r = self._r
        p, r = np.broadcast_arrays(np.asarray(p, float), r)
        lo = np.minimum(p, 1.0 - p)
        with np.errstate(divide="ignore", over="ignore"):
            x = special.gammainccinv(1.0 / r, 2.0 * lo)
            mag = np.exp((np.log(r) + np.log(x)) / r)
        return np.where(p < 0.5, -mag, mag)

    @staticmethod
    def _log_phi(u, h, r):
        """log φ(u), φ(u) = ((u + h)^r − |u − h|^r)/r for u ≥ 0, without cancellation:
        φ = a^r (1 − (1 − m/a)^r)/r, a = u + h, m = 2 min(u, h)."""
        a = u + h
        m = 2.0 * np.minimum(u, h)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return r * np.log(a) + np.log(-np.expm1(r * np.log1p(-m / a))) - np.log(r)

    def _std_loss(self, z, d):
        r = self._r
        h = d / 2.0
        u = h - z
        val = np.exp(self._log_phi(np.abs(u), h, r))
        val = np.where(np.isinf(u), np.where(r == 1, d, np.inf), val)
        val = np.where(h == 0, 0.0, val)  # Δ/(2s) underflowed to 0: |loss| ≤ 5e-324
        return np.where(u < 0, -val, val)

    def _std_loss_inverse(self, eps, d):
        r = self._r
        eps, d, r = np.broadcast_arrays(np.asarray(eps, float), np.asarray(d, float), r)
        h = d / 2.0
        lap = r == 1.0
        r1 = np.where(lap, 2.0, r)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            c = np.exp((np.log(eps) - np.log(d)) / (r1 - 1.0))
            lo = np.maximum(0.0, c - h)
            hi = c + h
            lo = np.where(eps == 0, 0.0, lo)
            hi = np.where(eps == 0, 0.0, hi)
            target = np.log(eps)
            flo = self._log_phi(lo, h, r1) - target
            fhi = self._log_phi(hi, h, r1) - target
            # start: the linearisation at 0 (φ'(0) = 2h^{r−1}) when the root lies below h, else c
            small = target <= r1 * np.log(d) - np.log(r1)  # ε ≤ φ(h) = d^r / r
            u0 = np.where(small, eps / (2.0 * np.exp((r1 - 1.0) * np.log(h))), c)
            u = np.clip(u0, lo, hi)
            done = (eps == 0) | ~np.isfinite(hi) | lap
            for _ in range(100):
                f = self._log_phi(u, h, r1) - target
                below, above = f <= 0, f >= 0
                lo, flo = np.where(below, u, lo), np.where(below, f, flo)
                hi, fhi = np.where(above, u, hi), np.where(above, f, fhi)
                # Newton on log φ: d/du log φ = ((u+h)^{r−1} − sign(u−h)|u−h|^{r−1}) / φ
                dphi = np.exp((r1 - 1) * np.log(u + h)) - np.sign(u - h) * np.exp((r1 - 1) * np.log(np.abs(u - h)))
                newton = u - f * np.exp(self._log_phi(u, h, r1)) / dphi
                ok_n = np.isfinite(newton) & (newton > lo) & (newton < hi)
                # fallback: false position on the bracket, then bisection
                fp = lo - flo * (hi - lo) / (fhi - flo)
                ok_fp = np.isfinite(fp) & (fp > lo) & (fp < hi)
                new = np.where(ok_n, newton, np.where(ok_fp, fp, 0.5 * (lo + hi)))
                conv = (
                    (np.abs(f) <= 2e-15)
                    | (hi - lo <= 4 * np.spacing(hi))
                    | (np.isfinite(newton) & (np.abs(newton - u) <= 2 * np.spacing(u)))
                )
                done = done | conv
                u = np.where(done, u, new)
                if done.all():
                    break
        u = np.where(eps == 0, 0.0, u)
        u = np.where(lap, eps / 2.0, u)  # Laplace: z = (d − ε)/2
        return h - u

    def _log_delta(self, eps):
        """Vinterbo 2022 Lemma 1 with a deep-tail form: see :meth:`_log_delta_and_root`."""
        return self._log_delta_and_root(eps)[0]

    def _log_delta_and_root(self, eps):
        """(log δ(ε), z1), z1 the root of ℓ = ε in standard units: Vinterbo 2022 Lemma 1,
        δ = F(z1) − e^ε F(z1 − d) in three forms, each moved up by a bound on its rounding error (the
        safe side; the bounds are listed in docs/api/numerics.md), the smallest result kept:

        1. *log CDFs*: log_subtract(log F(z1), ε + log F(z1 − d)), as in the base class. It
           cancels where z1 and z1 − d are near the centre (small d: both logs ≈ log ½), where
           its bound is ~2⁻⁴³·F(z1)/δ relative.
        2. *interval*: δ = P[z1 − d < Z ≤ z1] − expm1(ε)·F(z1 − d), the mass from the regularized
           lower incomplete gamma (``_half_lower_gamma``: a sum of two positive halves where the
           interval straddles 0), or, for an interval at least its width d below 0 with ε ≤ 2, by
           16-point Gauss–Legendre on the density (``_subbotin_interval_mass``). No cancellation
           at small d (it was δ = 0 for d ≤ 1e-16 in form 1).
        3. *deep tail* (z1 < 0, x1 = |z1|^r/r ≥ 30, r > 1): x2 = x1 + ε (= |z1 − d|^r/r at the
           root), F(z) = ½Q(1/r, x) and the log Mills ratio M = log F − log f = (1 − r) log|z| +
           log S(x) give

               ε + log F(z1 − d) − log F(z1) = (1 − r) log1p(d/|z1|) + log S(x2) − log S(x1),

           so log δ = log F(z1) + log(1 − e^{that}) keeps its relative accuracy where log F(z1)
           is so large (|log δ| ≳ 1e8) that log F(z1) and ε + log F(z1 − d) round to the same
           float.

        r = 1 (Laplace) is the closed form δ = 1 − e^{(ε − d)/2} (Vinterbo 2022 Theorem 3)."""
        eps = np.asarray(eps, float)
        shape = np.broadcast_shapes(eps.shape, self._param_shape())
        eps = np.broadcast_to(eps, shape)
        d = np.broadcast_to(self._d, shape)
        r = np.broadcast_to(self._r, shape)
        live = eps < np.where(r == 1, d, np.inf)
        u = _U
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            e_in = np.where(live, eps, 0.0)
            z1 = self._std_loss_inverse(e_in, d)
            z2 = z1 - d
            la = self._std_logcdf(z1)
            lb = e_in + self._std_logcdf(z2)
            x1 = np.exp(r * np.log(np.abs(z1)) - np.log(r))
            x2 = np.exp(r * np.log(np.abs(z2)) - np.log(r))
            # relative error of exp(−x) from x's own rounding (x = e^{r log|z| − log r}: ~u·|log x|
            # relative), and of the root z1 (ℓ(z1) = ε to 2e-15 relative, so |z1| to 2e-15) where
            # a form is first-order in it (form 3: x2 = x1 + ε holds only at the root)
            ex1 = np.where(x1 > 0, 4.0 * u * x1 * (np.abs(np.log(x1)) + 4.0), 0.0)
            ex2 = np.where(x2 > 0, 4.0 * u * x2 * (np.abs(np.log(x2)) + 4.0), 0.0)
            # 1. log CDFs, in log space: log δ = log F(z1) + log(1 − e^D), D = ε + log F(z1 − d) −
            # log F(z1). Each log CDF errs by ≤ min(1, 2|log F|)·(_SUBBOTIN_TERM_ERR + e(x)) (Q to
            # _SUBBOTIN_TERM_ERR relative; F = 1 − Q/2 above 0, so log F = −Q/2 there) plus its ulps;
            # an error E in D is E·e^D/(1 − e^D) relative in δ (relative accuracy kept near δ = 1)
            lf1 = lb - e_in
            err_a = np.minimum(1.0, 2.0 * np.abs(la)) * (_SUBBOTIN_TERM_ERR + ex1) + 4.0 * u * np.abs(la)
            err_b = np.minimum(1.0, 2.0 * np.abs(lf1)) * (_SUBBOTIN_TERM_ERR + ex2) + 4.0 * u * np.abs(lb)
            dd1 = np.minimum(lb - la, 0.0)
            l1m = log1mexp(dd1)
            out1 = la + err_a + l1m + np.log1p((err_a + err_b) * np.exp(dd1 - l1m))
            out1 = np.where(np.isfinite(l1m), out1, np.inf)
            # 2. interval: the gamma halves to _SUBBOTIN_TERM_ERR of their sizes; the quadrature to
            # 8u plus its exponent's rounding; expm1(ε)·F(z1 − d) to _SUBBOTIN_TERM_ERR, x2's
            # rounding and exp's (u·|log F|)
            g1 = _half_lower_gamma(z1, r)
            g2 = _half_lower_gamma(z2, r)
            mass = g1 - g2
            err_m = _SUBBOTIN_TERM_ERR * (np.abs(g1) + np.abs(g2))
            quad = live & (z1 <= -d) & (e_in <= 2.0) & np.isfinite(z1)
            if quad.any():
                zq, dq = np.where(quad, z1, -1.0), np.where(quad, d, 0.5)
                qm = _subbotin_interval_mass(zq.ravel(), dq.ravel(), r.ravel()).reshape(zq.shape)
                # (+ 4 subnormal ulps: the mass may be subnormal at d ~ 1e-308)
                # the quadrature's exponents g = |t|^r/r to e(x2) (x2 the largest of them)
                qerr = qm * (8.0 * u + np.expm1(np.where(quad, ex2, 0.0))) + 4.0 * _TINY
                # (where the density underflows, x2 > 700, its relative error is not bounded)
                use_q = quad & (qerr < err_m) & (x2 < 700.0)
                mass, err_m = np.where(use_q, qm, mass), np.where(use_q, qerr, err_m)
            # expm1(ε)·F(z1 − d), z1 − d < 0: F = ½Q(1/r, x2)
            lf2 = LOG_HALF + _log_gammaincc(1.0 / r, x2)
            t2 = np.expm1(e_in) * np.exp(lf2)
            err2 = err_m + t2 * np.expm1(_SUBBOTIN_TERM_ERR + ex2 + u * np.abs(lf2))
            with np.errstate(divide="ignore"):
                out2 = np.log(np.maximum(mass - t2, 0.0) + err2)
            out2 = np.where(err2 > 0, out2, np.inf)  # a bound that underflowed bounds nothing
            # 3. deep tail: log F(z1) to _SUBBOTIN_TERM_ERR + x1's rounding + the root's error
            # (this form uses x2 = x1 + ε, exact only at the root); the exponent D from log1p and
            # _log_mills_diff (series: 1e-9 of a term ≤ 1/x1 of it; continued fractions: each log
            # to the CF's stopping tolerance, 1e-15 relative, so 4e-15 for the difference), an error
            # E in D is E·e^D/(1 − e^D) relative in δ
            tail = live & (z1 < 0) & (x1 >= 30.0) & np.isfinite(x1) & (r > 1)
            out3 = np.full(shape, np.inf)
            if tail.any():
                rt, zt, et, xt = r[tail], z1[tail], e_in[tail], x1[tail]
                t_a = (1.0 - rt) * np.log1p(d[tail] / np.abs(zt))
                t_b = _log_mills_diff(1.0 / rt, xt, et)
                diff = np.minimum(t_a + t_b, 0.0)
                e_diff = 4.0 * u * (np.abs(t_a) + np.abs(t_b)) + np.where(xt >= 1e3, 1e-9 / xt * np.abs(t_b), 4e-15)
                # the root: ℓ(z1) = ε to 2e-15 relative (``_std_loss_inverse``'s stopping rule) plus the
                # rounding of its log φ (8u·(|log ε| + 8)); |Δu/u| ≤ that/min(1, r − 1) (u φ'/φ ≥
                # min(1, r − 1)), so x1 is off by ≤ r·x1·|Δu/u| and so is log F(z1) (a bound fixed by
                # ε and r: the same for an element alone or in an array)
                eta = (4e-15 + 8.0 * u * (np.abs(np.log(et)) + 8.0)) / np.minimum(1.0, rt - 1.0)
                e_la = _SUBBOTIN_TERM_ERR + ex1[tail] + rt * xt * (eta + 4.0 * u) + 4.0 * u * np.abs(la[tail])
                with np.errstate(divide="ignore", invalid="ignore"):
                    rel = e_diff * np.exp(diff - log1mexp(diff))
                    val = la[tail] + log1mexp(diff) + e_la + np.log1p(rel)
                    # |D| < 1e-300 (subnormal or 0): log(1 − e^D) ≈ log(−D) ≤ log(−t_a) (t_b ≥ 0
                    # here, ~1/x1 of t_a), log(−t_a) = log(r − 1) + log(d) − log|z1| (log1p(y) ≤ y)
                    log_ta = np.log(rt - 1.0) + np.log(d[tail]) - np.log(np.abs(zt))
                    val = np.where(diff > -1e-300, la[tail] + log_ta + e_la + 8.0 * u, val)
                    out3[tail] = val
            # 0. δ ≤ F(z1), to its rounding (where |z1|^r/r overflows, F(z1) = 0 and log δ < −1e308:
            # −inf, as the float answer δ = 0)
            out0 = np.where(np.isneginf(la), -np.inf, la + _SUBBOTIN_TERM_ERR + ex1 + 4.0 * u * np.abs(la))
            # each form, moved up by its bound, is an upper bound on δ: the smallest is kept
            forms = np.stack(np.broadcast_arrays(out0, out1, out2, out3))
            out = np.min(np.where(np.isnan(forms), np.inf, forms), axis=0)
            # and by 4 ulps of log δ: its own rounding (½ ulp, 5.7e-14 relative in δ at δ = 1e-300)
            out = up(out, "ulps")
            # r = 1 is the Laplace distribution: its closed form, exact to a few ulps
            out = np.where(r == 1.0, log1mexp(np.minimum((e_in - d) / 2.0, 0.0)), out)
            out = np.minimum(out, 0.0)
        return np.where(live, out, -np.inf), z1

    def _sample(self, size, rng):
        r = self.shape
        g = rng.gamma(1.0 / r, 1.0, size)
        sign = rng.choice([-1.0, 1.0], size)
        return sign * self.scale * (r * g) ** (1.0 / r)

    def rdp(self, alpha):
        """Closed form only for r = 1 (Laplace, Mironov 2017, Prop. 6) and r = 2 (Gaussian)."""
        a = check_alpha(alpha, "alpha")
        r = self.shape
        if np.ndim(r) == 0 and r == 1.0:
            return Laplace(self.scale, self.sensitivity).rdp(a)
        if np.ndim(r) == 0 and r == 2.0:
            return Gaussian(self.scale, self.sensitivity).rdp(a)
        raise NotImplementedError("Subbotin RDP has a closed form only for shape 1 and 2")

    @classmethod
    def _with_scale(cls, scale, sensitivity, shape=2.0, **_):
        return cls(scale, shape, sensitivity)

    @classmethod
    def _from_d(cls, d, shape=2.0, **_):
        return cls(1.0 / np.asarray(d, float), shape)

    @classmethod
    def calibrate(cls, eps, delta=0.0, sensitivity=1.0, shape=2.0):
        """Minimum scale s with δ(ε) ≤ delta (Vinterbo 2022 Lemma 1–2): a grid bracket, a safeguarded
        Newton search on log(Δ/s) (slope by the envelope theorem) and a window of floats around its
        root, ending on the feasible side (``_calibrate_d``; s rounded up by ~1 ulp of log(Δ/s)).
        δ = 0 is impossible for r > 1 (unbounded privacy loss); for r = 1 it gives s = Δ/ε.

        >>> m = Subbotin.calibrate(1.0, 1e-5, shape=2.0)
        >>> abs(m.scale - Gaussian.calibrate(1.0, 1e-5).sigma) < 1e-9
        True
        """
        e, dl, s = _validate_calibration(eps, delta, sensitivity)
        r = as_array(shape, "shape", allow_inf=False)
        if ((r < 1) | (r > _SHAPE_MAX)).any():
            raise ValueError(f"shape must lie in [1, {_SHAPE_MAX:g}], got {shape!r}")
        if ((dl == 0) & (r > 1)).any():
            raise ValueError(
                "delta = 0 is impossible for Subbotin noise with shape > 1: its privacy "
                f"loss is unbounded; got delta={delta!r}, shape={shape!r}"
            )
        if ((dl == 0) & (e == 0)).any():
            raise ValueError(f"eps = 0 with delta = 0 needs infinite noise; got eps={eps!r}")
        dmax = cls._calibrate_d(e, dl, shape=r)
        with np.errstate(over="ignore", divide="ignore"):  # rejected in _safe_scale
            scale = s / dmax
        scale = cls._safe_scale(scale, e, dl, s, shape=r)
        return cls(scalar_out(scale), scalar_out(r), scalar_out(s))
