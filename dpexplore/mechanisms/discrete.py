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

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import special

from .._numerics import (
    bracket_search,
    down,
    epsilon_by_bisection,
    expm1mx,
    grow_bracket,
    log1mexp,
    pure_rdp_exact,
    up,
    within,
)
from .._validation import as_array, check_alpha, check_delta, check_nonneg, check_probability, scalar_out
from ._base import MechanismProfile, _GaussianParameters, _PrivacyMechanism, _rng, _size
from .additive import Gaussian

__all__ = ["DiscreteLaplace", "DiscreteGaussian"]

_U = 2.0**-53  # unit roundoff
_TINY = np.nextafter(0.0, 1.0)
_LOG_2PI = math.log(2.0 * math.pi)
_MAX_SENSITIVITY = 2**53
#: log-concave sums stop where the terms are e^{-_DROP} times the largest (the rest is bounded)
_DROP = 50.0
#: longest window of terms summed for one ε (beyond: Euler–Maclaurin with a remainder bound)
_MAX_WINDOW = 2**12
#: elements per 2-d work array (memory guard)
_CHUNK = 2**20
#: integers beyond this are not handled exactly (float spacing > 1/8)
_BIG = 2.0**50
#: discrete Gaussian: CDF tables up to this σ; beyond, the Euler–Maclaurin form
_TABLE_SIGMA = 2.0**15
#: safety margin on log δ: 2⁻⁴⁷·(|log δ| + 40) — 64 ulp per unit of |log δ| (the terms'
#: exponents carry a few ulp of relative error each) plus ~2.8e-13 for the sums' rounding
_LOG_MARGIN = 2.0**-47
#: safety margin of the continuous-Gaussian δ used by the large-σ bound (relative)
_CONT_MARGIN = 1e-9
_GL_X, _GL_W = np.polynomial.legendre.leggauss(8)


# ------------------------------------------------------------------------------------------------
# validation
# ------------------------------------------------------------------------------------------------
def _check_scale(x, name: str) -> float:
    """A single finite number > 0 (ValueError naming ``name`` otherwise)."""
    arr = as_array(x, name, allow_inf=False)
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a single number, got {x!r}")
    v = float(arr)
    if not v > 0:
        raise ValueError(f"{name} must be > 0, got {x!r}")
    return v


def _check_sensitivity(x) -> int:
    """An integer sensitivity Δ with 1 ≤ Δ ≤ 2**53 (integral floats such as 2.0 are accepted)."""
    if isinstance(x, (bool, np.bool_)):
        raise ValueError(f"sensitivity must be a positive integer, got {x!r}")
    if isinstance(x, (int, np.integer)):
        v = int(x)
    else:
        arr = as_array(x, "sensitivity", allow_inf=False)
        if arr.ndim != 0 or not float(arr).is_integer():
            raise ValueError(f"sensitivity must be a positive integer, got {x!r}")
        v = int(float(arr))
    if not 1 <= v <= _MAX_SENSITIVITY:
        raise ValueError(f"sensitivity must be a positive integer <= 2**53, got {x!r}")
    return v


_within = within


def _round_up_log(ld, offset: float = 40.0):
    """log δ plus the safety margin 2⁻⁴⁷·(offset + |log δ|) (a relative 7e-15·(offset + |log δ|)
    on δ), which covers the float rounding of the formulas."""
    ld = np.asarray(ld, dtype=float)
    with np.errstate(invalid="ignore"):
        up = ld + _LOG_MARGIN * (offset + np.abs(ld))
    return np.where(np.isfinite(ld), np.minimum(up, 0.0), ld)


def _log_geometric_tail(la_edge, la_next):
    """log of a_edge·ρ/(1 − ρ), ρ = a_next/a_edge < 1: the bound on Σ_{k≥1} a_edge ρ^k of a
    log-concave sequence beyond its edge (ratios non-increasing away from the mode)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        lr = np.minimum(la_next - la_edge, 0.0)
        out = la_next - log1mexp(lr)
    # ρ = 1 cannot happen past the mode; if rounding says so, +inf flags the element (caller)
    return np.where(np.isneginf(la_next), -np.inf, np.where(lr < 0, out, np.inf))


# ------------------------------------------------------------------------------------------------
# shared queries
# ------------------------------------------------------------------------------------------------
class _DiscreteMechanism(_PrivacyMechanism):
    """Public queries shared by the two mechanisms (validation, scalar_out, ε(δ) bisection)."""

    # subclass interface: _log_delta_live(eps), _log_cdf_int(k), _log_pmf_int(y), eps_max, _label

    # δ(ε) -----------------------------------------------------------------------------------
    def log_delta(self, eps):
        """log δ(ε), rounded up; exact in log space where δ underflows a float; −inf where δ(ε) = 0
        (Canonne, Kamath & Steinke 2020, Theorem 7: δ(ε) = Σ_y (P(y) − e^ε Q(y))₊).

        >>> round(DiscreteGaussian(1.0).log_delta(300.0))      # δ ≈ 1e-19544
        -45002
        >>> DiscreteLaplace(1.0).log_delta(1.0)
        -inf
        """
        e = check_nonneg(eps, "eps")
        return scalar_out(self._log_delta_capped(e))

    def delta(self, eps):
        """δ(ε) ∈ [0, 1], the smallest δ for which the mechanism is (ε, δ)-DP (Liu et al. 2022,
        Section 2), never below the truth.

        >>> DiscreteLaplace(2.0, 2).delta([0.0, 1.0])
        array([0.39346934, 0.        ])
        """
        return scalar_out(np.clip(np.exp(np.asarray(self.log_delta(eps))), 0.0, 1.0))

    def epsilon(self, delta):
        """The smallest ε ≥ 0 with δ(ε) ≤ ``delta``, rounded up: a vectorized bracketing bisection
        that ends where the computed (rounded-up) δ(ε) ≤ delta, at most ~2 ulp above the root.
        ε(0) = ``eps_max`` (inf for the discrete Gaussian).

        >>> m = DiscreteGaussian(2.0)
        >>> e = m.epsilon(1e-5); round(e, 6), m.delta(e) <= 1e-5
        (2.01134, True)
        >>> DiscreteLaplace(0.5).epsilon(0.0)
        2.0
        """
        d = check_delta(delta, "delta")
        return scalar_out(self._epsilon(d))

    @property
    def profile(self):
        """The mechanism's privacy profile, a :class:`~dpexplore.accounting.profiles.PrivacyProfile` with the
        mechanism's δ(ε), ε(δ) and ``eps_max`` (Liu et al. 2022, Section 2).

        >>> DiscreteLaplace(1.0, 3).profile.epsilon(0.0)
        3.0
        """
        return MechanismProfile(self)

    def _scalar_params(self) -> bool:
        return True

    def _param_shape(self):
        return ()

    def _log_delta(self, eps):
        """log δ(ε) on a validated array (any ε ≥ 0, inf included: −inf from eps_max on)."""
        e = np.asarray(eps, dtype=float)
        live = (e < self.eps_max) & np.isfinite(e)
        out = np.full(e.shape, -np.inf)
        if live.any():
            out[live] = np.minimum(np.asarray(self._log_delta_live(e[live]), dtype=float), 0.0)
        return out

    def _log_delta_capped(self, e):
        return self._log_delta(e)

    def _epsilon(self, delta):
        delta = np.asarray(delta, dtype=float)
        # (the windowed sums cost little more for 32 ε than for one: a 33-ary search)
        return epsilon_by_bisection(self._log_delta_capped, delta, float(self.eps_max), delta.shape, points=32)

    # noise law -------------------------------------------------------------------------------
    def logpmf(self, y):
        """log P[Y = y] of the noise (centred at 0); −inf off the integers.

        >>> round(DiscreteLaplace(1.0).logpmf(0), 12) == round(math.log(math.tanh(0.5)), 12)
        True
        """
        y = as_array(y, "y")
        integral = np.isfinite(y) & (np.floor(y) == y)
        out = np.full(y.shape, -np.inf)
        if integral.any():
            out[integral] = self._log_pmf_int(y[integral])
        return scalar_out(out)

    def logcdf(self, x):
        """log P[Y ≤ x] of the noise (centred at 0), accurate in both tails.

        >>> round(DiscreteLaplace(1.0).logcdf(-700.0), 6)       # log(e^{−700}/(1 + e^{−1}))
        -700.313262
        """
        x = as_array(x, "x")
        with np.errstate(invalid="ignore"):
            k = np.floor(x)
        return scalar_out(self._log_cdf_int(k))

    def logsf(self, x):
        """log P[Y > x] = log P[Y ≤ −⌊x⌋ − 1] (the noise is symmetric).

        >>> DiscreteGaussian(1.0).logsf(-1.0) == DiscreteGaussian(1.0).logcdf(0.0)
        True
        """
        x = as_array(x, "x")
        with np.errstate(invalid="ignore"):
            k = -np.floor(x) - 1.0
        return scalar_out(self._log_cdf_int(k))

    def tradeoff(self, alpha):
        """The f-DP trade-off β(α): the type II error of the most powerful level-α test of P
        (centred at 0) against Q (centred at Δ) (Dong, Roth & Su 2022, Definition 2.1; Liu et al. 2022).
        By the monotone likelihood ratio the Neyman–Pearson test rejects for Y > k and rejects
        Y = k with probability γ: with k the smallest integer with P[Y > k] ≤ α and
        γ = (α − P[Y > k])/P[Y = k],

            β(α) = Q[Y ≤ k − 1] + (1 − γ) Q[Y = k],

        piecewise linear in α. Rounded down (the safe side) by 8 ulp for the discrete Laplace
        (closed forms) and by 1e-11 relative for the discrete Gaussian (CDF tables).

        >>> DiscreteLaplace(1.0).tradeoff(0.0), DiscreteLaplace(1.0).tradeoff(1.0)
        (1.0, 0.0)
        >>> round(DiscreteLaplace(1.0).tradeoff(0.5), 9)     # Δ = 1: randomized response, ε = 1
        0.183939721
        """
        a = check_probability(alpha, "alpha")
        return scalar_out(np.clip(self._tradeoff(a), 0.0, 1.0))

    def _tradeoff(self, alpha):
        alpha = np.asarray(alpha, dtype=float)
        flat = alpha.ravel()
        out = np.ones(flat.shape)
        inner = (flat > 0) & (flat < 1)
        out[flat >= 1] = 0.0
        if inner.any():
            out[inner] = self._tradeoff_inner(flat[inner])
        return out.reshape(alpha.shape)

    def _tradeoff_inner(self, a):
        """β for 0 < α < 1 by an integer bisection for k on log P[Y > k] = log F(−k − 1)."""
        with np.errstate(divide="ignore"):
            la = np.log(a)
        lo, hi = self._quantile_bracket()
        lo = np.full(a.shape, lo)  # P[Y > lo] > α for every α < 1 is not guaranteed: checked below
        hi = np.full(a.shape, hi)
        # make sure P[Y > hi] ≤ α and P[Y > lo] > α (widen by doubling if needed)
        _, hi = grow_bracket(
            lambda x: self._log_cdf_int(-x - 1.0) <= la,
            hi,
            hi,
            grow=lambda x: x + (np.abs(x) + 1.0),
            fill=None,
            steps=200,
        )
        _, lo = grow_bracket(
            lambda x: self._log_cdf_int(-x - 1.0) > la,
            lo,
            lo,
            grow=lambda x: x - (np.abs(x) + 1.0),
            fill=None,
            steps=200,
        )
        big = (np.abs(hi) > _BIG) | (np.abs(lo) > _BIG)
        # integer bisection: P[Y > hi] ≤ α < P[Y > lo]
        k = bracket_search(lambda x: self._log_cdf_int(-x - 1.0) <= la, lo, hi, safe="hi", mid="int", steps=120)
        d = float(self.sensitivity)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            sf_k = np.exp(self._log_cdf_int(-k - 1.0))  # P[Y > k] ≤ α
            pmf_k = np.exp(self._log_pmf_int(k))  # P[Y = k]
            gamma = np.clip(np.where(pmf_k > 0, (a - sf_k) / pmf_k, 1.0), 0.0, 1.0)
            beta = np.exp(self._log_cdf_int(k - 1.0 - d)) + (1.0 - gamma) * np.exp(self._log_pmf_int(k - d))
        beta = down(beta, self._round_down)
        # quantiles beyond 2^50: fall back on the total-variation bound β ≥ 1 − α − δ(0)
        if big.any():
            tv = float(np.exp(self._log_delta_capped(np.zeros(1))[0]))
            beta = np.where(big, np.maximum(1.0 - a - tv, 0.0) * (1.0 - 1e-9), beta)
        return beta

    def sample(self, size=None, rng=None):
        """Integer noise samples Y (int64, centred at 0) of the given ``size``; ``rng`` a numpy
        Generator or a seed. Discrete Laplace: ⌊E₁t⌋ − ⌊E₂t⌋ with E₁, E₂ ~ Exp(1) independent
        (a difference of two geometric variables); discrete Gaussian: the rejection sampler of
        Canonne, Kamath & Steinke 2020 (proposals from the discrete Laplace with t = ⌊σ⌋ + 1).

        >>> DiscreteGaussian(3.0).sample(4, rng=0).dtype
        dtype('int64')
        """
        size = _size(size)
        gen = _rng(rng)
        out = self._sample(1 if size is None else size, gen)
        return int(np.asarray(out).ravel()[0]) if size is None else out

    def _label(self) -> str:  # pragma: no cover - overridden
        return type(self).__name__

    def _compose_pld(self, k: int, how):
        """k runs: its own profile at k = 1, else its lattice privacy loss (``_loss_tails``)
        composed by ``how.pld``."""
        return self.profile if k == 1 else how.pld([(self, k)])


def _w_expm1mx(log_w, z):
    """w·(e^z − 1 − z) for w = e^{log_w} ≤ 1 without overflow: w·expm1mx(z) for z < 0.7, else
    e^{log_w + z} − w(1 + z) (cancellation there costs at most a factor 6.5, under one digit)."""
    log_w, z = np.broadcast_arrays(np.asarray(log_w, dtype=float), np.asarray(z, dtype=float))
    w = np.exp(log_w)
    small = z < 0.7
    with np.errstate(over="ignore", invalid="ignore"):
        big = np.exp(log_w + z) - w * (1.0 + z)
    return np.where(small, w * expm1mx(np.where(small, z, 0.0)), big)


def _dlap_sample(t: float, size, rng) -> np.ndarray:
    """⌊E₁t⌋ − ⌊E₂t⌋, E ~ Exp(1): P[⌊Et⌋ ≥ k] = e^{−k/t}, so each is geometric and the difference
    is discrete Laplace with parameter t."""
    if t * 60.0 > 2.0**62:
        raise ValueError(f"scale must be at most 2**56 to sample 64-bit integers, got {t!r}")
    e1 = rng.standard_exponential(size)
    e2 = rng.standard_exponential(size)
    return (np.floor(e1 * t) - np.floor(e2 * t)).astype(np.int64)


# ------------------------------------------------------------------------------------------------
# discrete Laplace
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DiscreteLaplace(_DiscreteMechanism):
    """Discrete Laplace (two-sided geometric) mechanism: q(x) + Y, Y ∈ ℤ with
    P[Y = y] = (1 − p)/(1 + p)·p^{|y|}, p = e^{−1/t}, for an integer query of sensitivity Δ (the
    integer analogue of Dwork et al. 2006; the proposal of the sampler of Canonne, Kamath &
    Steinke 2020).

    Privacy loss: ℓ(y) = (|y − Δ| − |y|)/t ∈ {Δ/t, (Δ − 2)/t, …, −Δ/t} (Δ + 1 atoms), so the
    mechanism is ε-DP with ε = Δ/t (``eps_max``, rounded up to the float above Δ/t when inexact).
    With m the largest integer in [0, Δ − 1] with (Δ − 2m)/t > ε, the exact profile is the geometric
    sum

        δ(ε) = [1 − e^{ε − Δ/t} + (1 − p^m)·p·(1 − e^{ε − (Δ − m − 1)/t})] / (1 + p),

    a sum of two non-negative terms (no cancellation); for Δ = 1 it is the randomized-response
    profile (e^{1/t} − e^ε)/(1 + e^{1/t}) (Kairouz, Oh & Viswanath 2015).

    >>> m = DiscreteLaplace(2.0, 3)
    >>> m.eps_max, round(m.delta(0.5), 12), m.delta(1.5)
    (1.5, 0.393469340287, 0.0)
    """

    scale: float
    sensitivity: int = 1

    def __post_init__(self):
        t = _check_scale(self.scale, "scale")
        s = _check_sensitivity(self.sensitivity)
        with np.errstate(over="ignore", divide="ignore"):
            u, d = 1.0 / t, s / t
        if not (math.isfinite(u) and u > 0 and math.isfinite(d) and d > 0):
            raise ValueError(
                f"sensitivity/scale and 1/scale must be within the float range (> 0, "
                f"finite), got sensitivity={self.sensitivity!r}, scale={self.scale!r}"
            )
        object.__setattr__(self, "scale", t)
        object.__setattr__(self, "sensitivity", s)

    # parameters ----------------------------------------------------------------------------
    @functools.cached_property
    def _u(self) -> float:
        """1/t (its rounding is covered by the relative margin)."""
        return 1.0 / self.scale

    @functools.cached_property
    def eps_max(self) -> float:
        """Δ/t rounded up (the float at or above the exact ratio): the mechanism is eps_max-DP, as
        P(y)/Q(y) = e^{(|y − Δ| − |y|)/t} ≤ e^{Δ/t} (Dwork et al. 2006, Proposition 1, on ℤ), and
        δ(ε) = 0 exactly from there on.

        >>> DiscreteLaplace(3.0).eps_max > 1 / 3
        True
        """
        d = self.sensitivity / self.scale
        if Fraction(d) < Fraction(self.sensitivity) / Fraction(self.scale):
            d = float(np.nextafter(d, np.inf))
        return d

    @property
    def loss_support(self):
        """(smallest, largest) privacy loss: (−Δ/t, Δ/t), the ends rounded outwards.

        >>> DiscreteLaplace(0.5, 2).loss_support
        (-4.0, 4.0)
        """
        return (-self.eps_max, self.eps_max)

    @property
    def variance(self):
        """Var Y = 2p/(1 − p)², p = e^{−1/t} (the second moment of a difference of two independent
        geometric variables; Canonne, Kamath & Steinke 2020 compare it with the discrete Gaussian's).

        >>> round(DiscreteLaplace(1.0).variance, 12)       # 2e/(e − 1)²
        1.841347188416
        """
        h = np.float64(self._u) / 2.0
        with np.errstate(over="ignore", divide="ignore", under="ignore"):  # huge scale: inf
            return float(0.5 / np.sinh(h) ** 2)  # = 2p/(1 − p)²

    @functools.cached_property
    def _log1p_p(self) -> float:
        return float(np.logaddexp(0.0, -self._u))  # log(1 + p)

    @functools.cached_property
    def _log_c(self) -> float:
        return float(log1mexp(-self._u)) - self._log1p_p  # log((1 − p)/(1 + p))

    def _atom(self, k):
        """The loss atoms ℓ_k = (Δ − 2k)/t for integer k ∈ [0, Δ] (float), the ends ±eps_max."""
        k = np.asarray(k, dtype=float)
        d = float(self.sensitivity)
        with np.errstate(invalid="ignore"):
            mid = (d - 2.0 * k) / self.scale
        return np.where(k <= 0, self.eps_max, np.where(k >= d, -self.eps_max, mid))

    def loss(self, y):
        """Privacy loss ℓ(y) = (|y − Δ| − |y|)/t = clip((Δ − 2y)/t, −Δ/t, Δ/t) of an integer output y
        (true answer 0 versus Δ); non-increasing in y.

        >>> DiscreteLaplace(1.0, 2).loss([-3, 1, 5])
        array([ 2.,  0., -2.])
        """
        y = as_array(y, "y")
        with np.errstate(invalid="ignore", over="ignore"):
            val = (float(self.sensitivity) - 2.0 * y) / self.scale
        return scalar_out(np.clip(val, -self.eps_max, self.eps_max))

    # δ(ε) -----------------------------------------------------------------------------------
    def _log_delta_live(self, eps):
        """log δ(ε) for 0 ≤ ε < eps_max: the largest of the partial sums G(m) at the three integers
        around the float estimate of m (G(m) = Σ_{y ≤ m} (P − e^ε Q)(y) ≤ δ for every m, = δ at the
        true m), rounded up."""
        e = np.asarray(eps, dtype=float)
        t, u, dd = self.scale, self._u, float(self.sensitivity)
        d_up = self.eps_max
        # first term: Σ_{y ≤ 0} = (1 − e^{ε − Δ/t})/(1 + p): ε − Δ/t rounded down (a larger 1 − e^x)
        with np.errstate(divide="ignore", invalid="ignore"):
            x1 = self._diff_down(e, dd, np.nextafter(np.minimum(e - d_up, 0.0), -np.inf))
            t1 = log1mexp(np.minimum(x1, 0.0))
        best = np.full(e.shape, -np.inf)
        with np.errstate(invalid="ignore", over="ignore"):
            m0 = np.ceil((dd - e * t) / 2.0) - 1.0
        for shift in (-1.0, 0.0, 1.0):
            m = np.clip(m0 + shift, 0.0, dd - 1.0)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                # ε − (Δ − m − 1)/t rounded down: (Δ − m − 1)/t rounded up, the difference down
                v = np.nextafter((dd - m - 1.0) / t, np.inf)
                x3 = self._diff_down(e, dd - m - 1.0, np.nextafter(e - v, -np.inf))
                t2 = np.where(m >= 1, log1mexp(-m * u) - u + log1mexp(np.minimum(x3, 0.0)), -np.inf)
                t2 = np.where(x3 < 0, t2, -np.inf)  # a negative second part: G(m) ≤ G(0)
                g = np.logaddexp(t1, t2)
            best = np.maximum(best, g)
        return _round_up_log(best - self._log1p_p, 8.0)

    def _diff_down(self, e, n, approx):
        """ε − n/t rounded down (n ≥ 0 integral): ``approx`` (already a lower bound) where it is
        far from 0; where it cancels (|approx| < 2⁻²⁰ n/t) the exact rational difference, rounded
        down — so that ε → Δ/t keeps full relative accuracy."""
        n = np.broadcast_to(np.asarray(n, dtype=float), e.shape)
        with np.errstate(over="ignore", invalid="ignore"):
            near = np.abs(approx) < 2.0**-20 * (n / self.scale)
        if not near.any():
            return approx
        out = np.array(approx, dtype=float)
        ft = Fraction(self.scale)
        for i in zip(*np.nonzero(near)):
            exact = Fraction(float(e[i])) - Fraction(int(n[i])) / ft
            v = float(exact)
            if Fraction(v) > exact:
                v = float(np.nextafter(v, -np.inf))
            out[i] = v
        return out

    # loss model for dpexplore.accounting.pld --------------------------------------------------------------
    def _loss_index(self, x):
        """K(x) = the largest k ∈ [0, Δ] whose exact loss (Δ − 2k)/t exceeds x (−1 if none): the
        float estimate ⌈(Δ − xt)/2⌉ − 1, decided in rational arithmetic where it is near a tie."""
        x = np.asarray(x, dtype=float)
        dd = float(self.sensitivity)
        with np.errstate(invalid="ignore", over="ignore"):
            r = (dd - x * self.scale) / 2.0
            k = np.ceil(r) - 1.0
            near = np.isfinite(r) & (np.abs(r - np.round(r)) <= 1e-9 * (1.0 + np.abs(r))) & (np.abs(r) <= dd + 2.0)
        if near.any():
            ft = Fraction(self.scale)
            for i in zip(*np.nonzero(near)):
                re = (Fraction(self.sensitivity) - Fraction(float(x[i])) * ft) / 2
                k[i] = float(math.ceil(re) - 1)
        k = np.where(np.isnan(x), -1.0, k)
        return np.clip(np.nan_to_num(k, nan=-1.0, posinf=dd, neginf=-1.0), -1.0, dd)

    def _loss_tails(self, x):
        """log P(L > x), log P(L ≤ x), log Q(L > x), log Q(L ≤ x) for the privacy loss
        L = ℓ(Y) with Y ~ P (noise at 0) or Y ~ Q (noise at Δ): with K the largest atom index
        whose loss exceeds x, P(L > x) = P[Y ≤ K] = 1 − p^{K+1}/(1 + p) and
        Q(L > x) = P[Y ≤ K − Δ] = p^{Δ−K}/(1 + p) for 0 ≤ K < Δ (0 for K = −1, 1 for K = Δ).

        >>> [round(float(v[0]), 6) for v in DiscreteLaplace(1.0)._loss_tails(np.array([0.0]))]
        [-0.313262, -1.313262, -1.313262, -0.313262]
        """
        x = np.asarray(x, dtype=float)
        k = self._loss_index(x)
        dd = float(self.sensitivity)
        u, l1p = self._u, self._log1p_p
        kk = np.clip(k, 0.0, dd - 1.0)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lp_le = -(kk + 1.0) * u - l1p  # log P[Y ≥ K + 1]
            lq_gt = -(dd - kk) * u - l1p  # log P[Y ≤ K − Δ]
            sp, cp = log1mexp(lp_le), lp_le
            sq, cq = lq_gt, log1mexp(lq_gt)
        none, all_ = k < 0, k >= dd
        out = []
        for v, at_none, at_all in ((sp, -np.inf, 0.0), (cp, 0.0, -np.inf), (sq, -np.inf, 0.0), (cq, 0.0, -np.inf)):
            out.append(np.where(none, at_none, np.where(all_, at_all, v)))
        return out

    # noise law -----------------------------------------------------------------------------------
    def _log_pmf_int(self, y):
        y = np.asarray(y, dtype=float)
        with np.errstate(invalid="ignore", over="ignore"):
            return np.where(np.isfinite(y), self._log_c - np.abs(y) * self._u, -np.inf)

    def _log_cdf_int(self, k):
        """log P[Y ≤ k] (k integral or ±inf): p^{|k|}/(1 + p) for k < 0, 1 − p^{k+1}/(1 + p) else."""
        k = np.asarray(k, dtype=float)
        u, l1p = self._u, self._log1p_p
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            neg = k * u - l1p
            pos = log1mexp(-(np.maximum(k, 0.0) + 1.0) * u - l1p)
            out = np.where(k < 0, neg, pos)
        return np.where(np.isneginf(k), -np.inf, np.where(np.isposinf(k), 0.0, out))

    _round_down = "tradeoff"  # β from closed forms (see _numerics.MARGINS)

    def _quantile_bracket(self):
        r = math.ceil(min(self.scale * 800.0, 2.0**52)) + 2.0
        return -r, r

    def _sample(self, size, rng):
        return _dlap_sample(self.scale, size, rng)

    # Rényi DP ----------------------------------------------------------------------------------
    def rdp(self, alpha):
        """Exact Rényi divergence D_α(P‖Q) = log Σ_y P(y)^α Q(y)^{1−α}/(α − 1) (Mironov 2017,
        Definition 3), rounded up. P and Q are mirror images, so D_α(P‖Q) = D_α(Q‖P).

        With d = Δ/t and r = p^{2α−1}, the geometric series give

            A = Σ_y P^α Q^{1−α} = [e^{(α−1)d} + e^{−αd}]/(1 + p)
                                  + (1 − p)/(1 + p)·e^{(α−1)d}·r(1 − r^{Δ−1})/(1 − r),

        evaluated as a log-sum-exp of the three terms when (α − 1)d ≥ 1; below, A − 1 is summed over
        the Δ + 1 loss atoms as E_P[expm1mx((α−1)L) + (α−1)·expm1mx(−L)] (non-negative terms, since
        E_P[e^{−L}] = 1), which keeps full relative accuracy as α → 1 or d → 0. For Δ > 2²⁰ with
        (α − 1)d < 1 the atoms are not enumerated and the tight RDP of a d-DP mechanism (Steinke
        2024, Theorem 4) is returned instead — an upper bound. D_α ≤ D_∞ = d (Rényi divergences
        increase with α); Δ = 1 is randomized response with ε = 1/t.

        >>> round(DiscreteLaplace(1.0).rdp(2.0), 12)          # = randomized response, ε = 1
        0.735325664056
        """
        a = check_alpha(alpha, "alpha")
        flat = a.ravel()
        out = np.array([self._rdp_one(float(v)) for v in flat]) if flat.size else np.zeros(0)
        return scalar_out(out.reshape(a.shape))

    def _rdp_one(self, a: float) -> float:
        u, dd, t = self._u, self.sensitivity, self.scale
        d = dd / t
        d_up = self.eps_max
        if math.isinf(a):
            return d_up
        am1 = a - 1.0
        x = am1 * d
        l1p = self._log1p_p
        if x < 1.0:
            if dd > 2**20:
                val = float(pure_rdp_exact(d_up, a))
                return min(float(up(val, "rdp_sum")), d_up)
            # atoms: y ≤ 0 → d; y ≥ Δ → −d; 1 ≤ y ≤ Δ − 1 → (Δ − 2y)/t; log-probabilities lw
            total = float(_w_expm1mx(-l1p, am1 * d) + am1 * _w_expm1mx(-l1p, -d))
            total += float(_w_expm1mx(-d - l1p, -am1 * d) + am1 * _w_expm1mx(-d - l1p, d))
            for start in range(1, dd, 2**18):
                y = np.arange(start, min(dd, start + 2**18), dtype=float)
                ell = (dd - 2.0 * y) / t
                lw = self._log_c - y * u
                total += float(np.sum(_w_expm1mx(lw, am1 * ell) + am1 * _w_expm1mx(lw, -ell)))
            val = math.log1p(total) / am1
            val = float(up(val, "rdp_sum"))
        else:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                t1 = am1 * d - l1p
                t2 = -a * d - l1p
                terms = [t1, t2]
                if dd >= 2:
                    lr = -(2.0 * a - 1.0) * u
                    t3 = self._log_c + am1 * d + lr + float(log1mexp((dd - 1) * lr)) - float(log1mexp(lr))
                    terms.append(t3)
                finite = [v for v in terms if math.isfinite(v)]
                if len(finite) < len([v for v in terms if not (math.isinf(v) and v < 0)]):
                    return d_up  # an exponent beyond the float range: D_α ≤ d
                log_a = float(special.logsumexp(finite))
                # absolute rounding of the log-sum-exp, spread over α − 1
                err = 16 * _U * (1.0 + max(abs(v) for v in finite))
                val = (log_a + err) / am1
                val = float(up(val, "rdp_closed"))
        if not math.isfinite(val):
            return d_up
        return float(min(max(val, 0.0), d_up))

    @classmethod
    def calibrate(cls, eps, delta=0.0, sensitivity=1):
        """The smallest scale t with δ(ε) ≤ ``delta`` (rounded up, the safe side): t = Δ/ε for
        δ = 0 (pure DP); else a bisection on log t, valid because δ(ε) is non-increasing in t —
        for t₂ > t₁, DLap(t₂) is DLap(t₁) plus independent integer noise (the ratio of their
        characteristic functions, (1 + p₁² − 2p₁cos θ)/(1 + p₂² − 2p₂cos θ) up to a constant, has
        non-negative Fourier coefficients), so the privacy profile can only shrink
        (post-processing; Dwork et al. 2006). ε = 0 needs δ > 0.

        >>> DiscreteLaplace.calibrate(0.5, 0.0, 2).scale
        4.0
        >>> m = DiscreteLaplace.calibrate(1.0, 1e-3); m.delta(1.0) <= 1e-3 < DiscreteLaplace(m.scale * (1 - 1e-12)).delta(1.0)
        True
        """
        e = check_nonneg(eps, "eps", allow_inf=False)
        dl = check_delta(delta, "delta")
        if e.ndim or dl.ndim:
            raise ValueError(f"eps and delta must be single numbers, got eps={eps!r}, delta={delta!r}")
        e, dl = float(e), float(dl)
        sens = _check_sensitivity(sensitivity)
        if e == 0.0 and dl == 0.0:
            raise ValueError(f"eps = 0 with delta = 0 needs infinite noise; got eps={eps!r}, delta={delta!r}")

        def make(t):
            try:
                return cls(t, sens)
            except ValueError:
                raise ValueError(
                    f"eps = {eps!r} with delta = {delta!r} needs a scale beyond the float "
                    f"range for sensitivity = {sensitivity!r}"
                ) from None

        def feasible(t):
            return bool(_within(make(t)._log_delta(np.array([e]))[0], dl))

        with np.errstate(over="ignore", divide="ignore"):
            hi = sens / e if e > 0 else 1.0
        if not math.isfinite(hi):
            make(math.inf)
        for i in range(64):  # Δ/ε rounded up until eps_max ≤ ε (then δ(ε) = 0)
            if e == 0 or make(hi).eps_max <= e:
                break
            hi = float(np.nextafter(hi, np.inf)) if i < 8 else hi * (1 + 2.0 ** (i - 60))
        if dl == 0.0:
            return make(hi)
        _, hi = grow_bracket(feasible, hi, hi, grow=2.0)  # ε = 0: grow until the total variation is ≤ δ
        if not math.isfinite(hi):
            make(hi)  # the scale is beyond the float range: its ValueError
        hi, lo = grow_bracket(lambda x: not feasible(x), hi, hi / 2.0, grow=0.5, stop=lambda x: x < 1e-300)
        if lo < 1e-300 and feasible(lo):
            return make(lo)
        if hi - lo > 2 * np.spacing(hi):  # feasible(hi), not feasible(lo): to 2 ulps
            hi = float(bracket_search(lambda x: feasible(float(x)), lo, hi, safe="hi", mid="geo", steps=200, ulps=2.0))
        return make(hi)

    def _label(self):
        return f"DiscreteLaplace(scale={self.scale!r}, Δ={self.sensitivity!r})"


# ------------------------------------------------------------------------------------------------
# discrete Gaussian
# ------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=8)
def _dg_cdf_table(sigma: float, log_z: float):
    """log P[Y ≤ k] for k = −B, …, 0 (B ≈ 39σ, where P(k) < e^{−760}), by a cumulative log-sum-exp
    from the rigorous window value at −B (relative accuracy ~1e-12)."""
    b = int(math.ceil(sigma * math.sqrt(2.0 * 760.0))) + 2
    ks = np.arange(-b, 1, dtype=float)
    lp = -(ks * ks) / (2.0 * sigma * sigma) - log_z
    start = _dg_log_cdf_window(np.array([-float(b) - 1.0]), sigma, log_z)[0]
    lp[0] = np.logaddexp(lp[0], start)
    table = np.logaddexp.accumulate(lp)
    table.setflags(write=False)
    return b, table


def _dg_log_cdf_window(k, sigma: float, log_z: float):
    """log Σ_{y ≤ k} P(y) for integral k ≤ 0 (1-d array): the terms decrease away from k; they are
    summed over y ∈ [k − J, k] with (2|k|J + J²)/(2σ²) ≥ 50 and the rest bounded by a geometric
    series (the ratios P(y − 1)/P(y) decrease as y decreases)."""
    k = np.asarray(k, dtype=float)
    out = np.empty(k.shape)
    s2 = 2.0 * sigma * sigma
    ak = np.abs(k)
    # deep tails beyond exact integers: the geometric bound from k itself
    huge = ak > _BIG
    if huge.any():
        kk = ak[huge]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            la = -(kk / sigma) * (kk / sigma) / 2.0 - log_z
            lr = -(2.0 * kk + 1.0) / s2
            out[huge] = la - log1mexp(np.minimum(lr, -1e-300))
    rest = np.flatnonzero(~huge)
    if rest.size:
        kr = ak[rest]
        with np.errstate(over="ignore"):
            # J = √(k² + 100σ²) − |k| written without cancellation
            jw = np.ceil(_DROP * s2 / (np.sqrt(kr * kr + _DROP * s2) + kr)) + 2.0
        order = np.argsort(jw)
        i = 0
        while i < order.size:
            width = int(jw[order[i]])
            rows = max(1, _CHUNK // max(width, 1))
            sel = order[i : i + rows]
            width = int(jw[sel].max())
            j = np.arange(width + 1, dtype=float)
            kk = kr[sel][:, None]
            y = kk + j[None, :]  # |y| = |k| + j
            la = -(y * y) / s2
            mask = j[None, :] <= jw[sel][:, None]
            la = np.where(mask, la, -np.inf)
            mx = la[:, 0]
            ssum = np.sum(np.exp(la - mx[:, None]), axis=1)
            # geometric tail beyond the window: past the edge |k| + J the ratio of consecutive
            # terms is at most ρ = e^{−(2(|k| + J) + 1)/(2σ²)}, so the rest is ≤ P(edge)·ρ/(1 − ρ)
            edge = kr[sel] + jw[sel]
            lrho = -(2.0 * edge + 1.0) / s2
            lt = -(edge * edge) / s2 + lrho - log1mexp(lrho)
            with np.errstate(over="ignore"):
                ssum = ssum + np.exp(lt - mx)
            out[rest[sel]] = mx + np.log(ssum) - log_z
            i += rows
    return out


@dataclass(frozen=True)
class DiscreteGaussian(_GaussianParameters, _DiscreteMechanism):
    """Discrete Gaussian mechanism q(x) + Y with P[Y = y] = e^{−y²/(2σ²)}/Z, Y ∈ ℤ, for an integer
    query of sensitivity Δ (Canonne, Kamath & Steinke 2020, definition “discrete Gaussian”).

    * ρ-zCDP with ρ = Δ²/(2σ²) (Canonne, Kamath & Steinke 2020, result “the discrete Gaussian is ρ-zCDP”; Bun & Steinke 2016,
      Definition 1.1), RDP D_α = αρ + log(θ(c)/θ(0))/(α − 1) ≤ αρ with c = (α − 1)Δ (exact).
    * Exact profile (Canonne, Kamath & Steinke 2020, Theorem 7): with x = Δ/2 − εσ²/Δ, m the largest
      integer below x, κ = Δ/σ²,

          δ(ε) = P[Y ≤ m] − e^ε P[Y ≤ m − Δ] = Σ_{j ≥ 0} P(m − j)·(1 − e^{−κ(x − m + j)}),

      summed in log space over the log-concave terms around their mode (x − m computed exactly
      in rational arithmetic), the omitted tails added as geometric bounds. Where more than 2¹²
      terms would be needed (σ ≳ 200 in the bulk) the sum is instead the continuous-Gaussian
      integral (Balle & Wang 2018, Theorem 8, μ = Δ/σ) plus Euler–Maclaurin corrections to fifth
      order and a bound of the remainder (checked within 1e-12 of the exact sum); for absurd ε
      (|m| > 2⁵⁰) the bound δ ≤ δ_N(ε) + max term.
    * Z = Σ_y e^{−y²/(2σ²)} to full precision: √(2π)σ·(1 + 2Σ_k e^{−2π²σ²k²}) (Poisson summation)
      for σ ≥ 1/2, the direct sum below.
    * No ``calibrate``: unlike the continuous Gaussian, δ(ε) is not monotone in σ (for σ ≲ 1 it
      rises slightly where a loss atom Δ(Δ − 2y)/(2σ²) crosses ε — e.g. Δ = 1, ε = 1 near
      σ = 0.71, confirmed in mpmath), so "the smallest σ" is not a bisection target.

    >>> m = DiscreteGaussian(2.0, 1)
    >>> m.rho, m.rdp(2.0), round(m.delta(0.5), 12)
    (0.125, 0.25, 0.054007223694)
    """

    sigma: float
    sensitivity: int = 1

    def __post_init__(self):
        s = _check_scale(self.sigma, "sigma")
        if not 1e-150 <= s <= 1e150:
            raise ValueError(
                f"sigma must lie in [1e-150, 1e150] (σ² and 1/σ² must be normal floats), got {self.sigma!r}"
            )
        object.__setattr__(self, "sigma", s)
        object.__setattr__(self, "sensitivity", _check_sensitivity(self.sensitivity))

    # parameters ----------------------------------------------------------------------------------
    @property
    def loss_support(self):
        """(−inf, inf): every real loss value has mass in either tail.

        >>> DiscreteGaussian(1.0).loss_support
        (-inf, inf)
        """
        return (-np.inf, np.inf)

    @functools.cached_property
    def rho(self) -> float:
        """ρ = Δ²/(2σ²), rounded up: the mechanism is ρ-zCDP (Canonne, Kamath & Steinke 2020,
        result “the discrete Gaussian is ρ-zCDP”; Bun & Steinke 2016, Definition 1.1), exactly as the continuous Gaussian.

        >>> DiscreteGaussian(1.0, 2).rho
        2.0
        """
        d = float(self.sensitivity)
        r = (d * d) / (2.0 * self.sigma * self.sigma)
        exact = Fraction(self.sensitivity) ** 2 / (2 * Fraction(self.sigma) ** 2)
        if Fraction(r) < exact:
            r = float(np.nextafter(r, np.inf))
        return r

    @functools.cached_property
    def _kappa(self) -> float:
        """κ = Δ/σ², the spacing of the loss atoms."""
        return float(self.sensitivity) / (self.sigma * self.sigma)

    @functools.cached_property
    def _s2(self) -> float:
        return 2.0 * self.sigma * self.sigma

    @functools.cached_property
    def _poisson_terms(self):
        """q_k = e^{−2π²σ²k²}, k = 1…8 (σ ≥ 0.3: the omitted k ≥ 9 are below e^{−140} relative)."""
        k = np.arange(1, 9, dtype=float)
        return k, np.exp(-2.0 * math.pi**2 * self.sigma**2 * k * k)

    @functools.cached_property
    def _log_z(self) -> float:
        """log Z, Z = Σ_y e^{−y²/(2σ²)}: Poisson summation for σ ≥ 1/2, the direct sum below."""
        s = self.sigma
        if s >= 0.5:
            _, q = self._poisson_terms
            return 0.5 * _LOG_2PI + math.log(s) + math.log1p(2.0 * float(np.sum(q)))
        y = np.arange(1, 13, dtype=float)
        return math.log1p(2.0 * float(np.sum(np.exp(-(y * y) / self._s2))))

    @property
    def variance(self):
        """Var Y = Σ_y y² P(y) < σ²: by Poisson summation σ² − 8π²σ⁴ Σ_k k² e^{−2π²σ²k²}/θ₀ with
        θ₀ = 1 + 2Σ_k e^{−2π²σ²k²} for σ ≥ 1/2, the direct sum below (Canonne, Kamath & Steinke
        2020 compare it with σ²).

        >>> round(DiscreteGaussian(1.0).variance, 12)
        0.999999788768
        """
        s = self.sigma
        if s >= 0.5:
            k, q = self._poisson_terms
            theta0 = 1.0 + 2.0 * float(np.sum(q))
            return float(s * s - 8.0 * math.pi**2 * s**4 * float(np.sum(k * k * q)) / theta0)
        y = np.arange(1, 13, dtype=float)
        w = np.exp(-(y * y) / self._s2)
        return float(2.0 * np.sum(y * y * w) / (1.0 + 2.0 * np.sum(w)))

    def loss(self, y):
        """Privacy loss ℓ(y) = log P(y) − log Q(y) = Δ(Δ − 2y)/(2σ²) of an output y (true answer 0
        versus Δ; Canonne, Kamath & Steinke 2020, proof of Theorem 7); decreasing in y.

        >>> DiscreteGaussian(1.0).loss([0, 1])
        array([ 0.5, -0.5])
        """
        y = as_array(y, "y")
        d = float(self.sensitivity)
        with np.errstate(over="ignore", invalid="ignore"):
            out = d * (d - 2.0 * y) / self._s2
        return scalar_out(out)

    # noise law -----------------------------------------------------------------------------------
    def _log_pmf_int(self, y):
        y = np.asarray(y, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            out = -(y / self.sigma) * (y / self.sigma) / 2.0 - self._log_z
        return np.where(np.isfinite(y), out, -np.inf)

    def _log_cdf_neg(self, k):
        """log P[Y ≤ k] for integral k ≤ 0 (finite): the table where it applies, else the window."""
        k = np.asarray(k, dtype=float)
        out = np.empty(k.shape)
        todo = np.ones(k.shape, dtype=bool)
        if self.sigma <= _TABLE_SIGMA:
            b, table = _dg_cdf_table(self.sigma, self._log_z)
            inside = k >= -b
            out[inside] = table[(k[inside] + b).astype(np.int64)]
            todo = ~inside
        else:
            em = np.abs(k) <= _BIG
            out[em] = self._log_cdf_em(k[em])
            todo = ~em
        if todo.any():
            out[todo] = _dg_log_cdf_window(k[todo], self.sigma, self._log_z)
        return out

    def _log_cdf_em(self, k):
        """log P[Y ≤ k] for σ > 2¹⁵ by the midpoint Euler–Maclaurin form
        Φ(u) + φ(u)[u/(24σ²) − 7(u³ − 3u)/(5760σ⁴)], u = (k + ½)/σ (Z = √(2π)σ to 1e-300; the
        next term is O(σ⁻⁶))."""
        s = self.sigma
        u = (np.asarray(k, dtype=float) + 0.5) / s
        lphi = -0.5 * u * u - 0.5 * _LOG_2PI
        lcdf = special.log_ndtr(u)
        corr = u / (24.0 * s * s) - 7.0 * (u**3 - 3.0 * u) / (5760.0 * s**4)
        with np.errstate(over="ignore", invalid="ignore"):
            rel = np.exp(lphi - lcdf) * corr
        return lcdf + np.log1p(np.maximum(rel, -0.5))

    def _log_cdf_int(self, k):
        """log P[Y ≤ k] for integral k (or ±inf); k > 0 through 1 − P[Y ≤ −k − 1]."""
        k = np.asarray(k, dtype=float)
        out = np.empty(k.shape)
        fin = np.isfinite(k)
        out[~fin] = np.where(k[~fin] > 0, 0.0, -np.inf)
        kf = k[fin]
        neg = kf <= 0
        vals = np.empty(kf.shape)
        if neg.any():
            vals[neg] = self._log_cdf_neg(kf[neg])
        if (~neg).any():
            vals[~neg] = log1mexp(np.minimum(self._log_cdf_neg(-kf[~neg] - 1.0), LOG_HALF_SAFE))
        out[fin] = vals
        return out

    _round_down = "tradeoff_table"  # β from CDF tables (see _numerics.MARGINS)

    def _quantile_bracket(self):
        r = math.ceil(min(self.sigma * 40.0, 2.0**52)) + 2.0
        return -r, r

    def _sample(self, size, rng):
        """Rejection from the discrete Laplace with t = ⌊σ⌋ + 1: accept Y with probability
        exp(−(|Y| − σ²/t)²/(2σ²)) (Canonne, Kamath & Steinke 2020)."""
        s = self.sigma
        if s > 2.0**50:
            raise ValueError(f"sigma must be at most 2**50 to sample 64-bit integers, got {s!r}")
        t = math.floor(s) + 1.0
        n = int(np.prod(size)) if isinstance(size, tuple) else int(size)
        out = np.empty(n, dtype=np.int64)
        filled = 0
        while filled < n:
            need = n - filled
            batch = max(16, int(need * 2.5))
            y = _dlap_sample(t, batch, rng)
            ay = np.abs(y).astype(float)
            accept = rng.random(batch) < np.exp(-((ay - s * s / t) ** 2) / (2.0 * s * s))
            got = y[accept][:need]
            out[filled : filled + got.size] = got
            filled += got.size
        return out.reshape(size)

    # δ(ε) -----------------------------------------------------------------------------------
    def _thresholds(self, eps):
        """(m, θ, exact-ok) per ε (any finite float): x = Δ/2 − εσ²/Δ = m + θ with m integer,
        θ ∈ (0, 1], computed in exact rational arithmetic (θ to 1 ulp); exact-ok is False where
        |m| > 2⁵⁰."""
        dd = self.sensitivity
        sn, sd = self.sigma.as_integer_ratio()
        a_num, b_den = sn * sn, sd * sd
        ms = np.empty(eps.shape)
        th = np.empty(eps.shape)
        ok = np.ones(eps.shape, dtype=bool)
        for i, e in enumerate(eps.tolist()):
            en, ed = float(e).as_integer_ratio()
            num = dd * dd * ed * b_den - 2 * en * a_num
            den = 2 * ed * b_den * dd
            m = -((-num) // den) - 1  # the largest integer < x
            if abs(m) > _BIG:
                ok[i] = False
                ms[i] = float(m) if abs(m) < 1e300 else math.copysign(1e300, m)
                th[i] = 0.5
                continue
            ms[i] = float(m)
            th[i] = max((num - m * den) / den, _TINY)
        return ms, th, ok

    def _log_terms(self, y, m, theta):
        """log a_y (without −log Z) = −y²/(2σ²) + log(1 − e^{−κ(θ + m − y)}) for y ≤ m."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            s = self._kappa * (theta + (m - y))
            return -(y / self.sigma) * (y / self.sigma) / 2.0 + log1mexp(-s)

    def _mode(self, m, theta):
        """The real maximiser y* ≤ x of the log-concave term a(y): the root of
        y + Δ/expm1(κ(x − y)) (increasing in y), bracketed in [min(x, 0) − σ − 1, min(x, 0)]."""
        x = m + theta
        top = np.minimum(x, 0.0)
        lo = top - self.sigma - 1.0
        hi = top.copy()
        dd = float(self.sensitivity)

        # to 1e-3: the mode only centres the summation window (it is rounded to an integer, and
        # the window's radii are searched from it), so the 60 halvings to an ulp cost ~5× the time
        def past_mode(y):
            with np.errstate(over="ignore", divide="ignore"):
                return y + dd / np.expm1(self._kappa * (theta + (m - y))) > 0

        lo, hi = bracket_search(past_mode, lo, hi, safe="hi", steps=60, ulps=0.0, atol=1e-3, ends=True)
        return 0.5 * (lo + hi)

    def _radius(self, start, step, limit, m, theta, top_value):
        """The smallest r ∈ [1, limit] (per element) with log a(start + step·r) ≤ top − 50, by
        bisection (log a is concave, so it keeps decreasing away from the mode)."""

        def low(r):
            return self._log_terms(start + step * r, m, theta) <= top_value - _DROP

        return bracket_search(low, np.zeros(start.shape), limit.astype(float), safe="hi", mid="int", steps=64)

    def _log_delta_live(self, eps):
        """log δ(ε) for finite ε ≥ 0 (1-d): the exact windowed sum, Euler–Maclaurin where the window
        would be too long, the large-|m| bound beyond 2⁵⁰."""
        e = np.asarray(eps, dtype=float)
        out = np.empty(e.shape)
        flat = e.ravel()
        res = np.empty(flat.shape)
        m, theta, ok = self._thresholds(flat)
        exact_idx = np.flatnonzero(ok)
        bound_idx = np.flatnonzero(~ok)
        if exact_idx.size:
            vals, fine = self._log_delta_sum(m[exact_idx], theta[exact_idx])
            res[exact_idx] = vals
            em_idx = exact_idx[~fine]
            if em_idx.size:
                res[em_idx] = self._log_delta_em(flat[em_idx], m[em_idx], theta[em_idx])
        if bound_idx.size:
            res[bound_idx] = self._log_delta_bound(flat[bound_idx])
        out[...] = res.reshape(e.shape)
        return out

    def _log_delta_sum(self, m, theta):
        """Exact log δ by the windowed log-space sum (+ geometric tail bounds), rounded up; the
        second result flags the elements done here (False: the window would exceed 2¹² terms)."""
        ystar = self._mode(m, theta)
        yc = np.minimum(np.round(ystar), m)
        top = self._log_terms(yc, m, theta)
        cap = math.ceil(self.sigma * math.sqrt(2.0 * _DROP)) + 3.0
        r_lo = self._radius(yc, -1.0, np.full(m.shape, cap), m, theta, top)
        room = m - yc
        r_hi = np.where(room > 0, self._radius(yc, 1.0, np.maximum(np.minimum(room, cap), 1.0), m, theta, top), 0.0)
        r_hi = np.minimum(r_hi, room)
        width = r_lo + r_hi + 1.0
        fine = width <= _MAX_WINDOW
        out = np.full(m.shape, np.nan)
        idx = np.flatnonzero(fine)
        order = idx[np.argsort(width[idx])]
        i = 0
        while i < order.size:
            w0 = int(width[order[i]])
            rows = max(1, _CHUNK // w0)
            sel = order[i : i + rows]
            w = int(width[sel].max())
            j = np.arange(w, dtype=float)
            y_bot = yc[sel] - r_lo[sel]
            y_top = yc[sel] + r_hi[sel]
            y = y_bot[:, None] + j[None, :]
            mm, th = m[sel][:, None], theta[sel][:, None]
            la = self._log_terms(y, mm, th)
            la = np.where(y <= y_top[:, None], la, -np.inf)
            mx = np.max(la, axis=1)
            ssum = np.sum(np.exp(la - mx[:, None]), axis=1)
            # geometric bounds of the omitted tails: below y_bot, and between y_top and m
            lt_lo = _log_geometric_tail(
                self._log_terms(y_bot, m[sel], theta[sel]), self._log_terms(y_bot - 1.0, m[sel], theta[sel])
            )
            has_hi = y_top < m[sel]
            lt_hi = np.where(
                has_hi,
                _log_geometric_tail(
                    self._log_terms(y_top, m[sel], theta[sel]),
                    self._log_terms(np.minimum(y_top + 1.0, m[sel]), m[sel], theta[sel]),
                ),
                -np.inf,
            )
            with np.errstate(over="ignore"):
                ssum = ssum + np.exp(lt_lo - mx) + np.exp(lt_hi - mx)
            out[sel] = mx + np.log(ssum) - self._log_z
            i += rows
        bad = fine & ~np.isfinite(out) & ~np.isneginf(out)
        fine = fine & ~bad
        return _round_up_log(np.where(fine, out, 0.0)), fine

    def _log_delta_em(self, eps, m, theta):
        """log δ where the window would exceed 2¹² terms (σ ≳ 200 in the bulk), rounded up: Euler–Maclaurin
        for the entire function a(y) = f(y) − e^ε f(y − Δ) = f(y)(1 − e^{−κ(x − y)}),
        f(y) = e^{−y²/(2σ²)}, summed over y ≤ m:

            Σ_{y ≤ m} a(y) = ∫_{−∞}^{m} a + a(m)/2 + a′(m)/12 − a‴(m)/720 + a⁽⁵⁾(m)/30240 + R,
            |R| ≤ 2ζ(6)/(2π)⁶ · ∫_{−∞}^{m} (|f⁽⁶⁾| + e^ε|f⁽⁶⁾(· − Δ)|),

        with ∫_{−∞}^{x} a = √(2π)σ·δ_N(ε) (the continuous-Gaussian profile, μ = Δ/σ: Balle & Wang
        2018, Theorem 8), ∫_m^x a by 8-point Gauss–Legendre, the derivatives in closed form
        (f⁽ⁿ⁾(y) = (−1)ⁿ Heₙ(y/σ) f(y)/σⁿ, the cancelling differences Heₙ(u) − Heₙ(u − μ) expanded)
        and ∫|f⁽⁶⁾| = |f⁽⁵⁾(m)| beyond the last root of He₆, else ≤ √(2π)·√720/σ⁵. Everything is
        relative to f(m)."""
        s, dd, kap = self.sigma, float(self.sensitivity), self._kappa
        u = m / s
        mu = dd / s
        e = np.asarray(eps, dtype=float)
        lcont = np.asarray(Gaussian(s, dd)._log_delta(e), dtype=float)
        lcont = lcont + 2.0**-46 * (8.0 + np.abs(lcont))  # its rounding, upwards
        with np.errstate(over="ignore", invalid="ignore"):
            i_cont = np.exp(lcont + 0.5 * _LOG_2PI + math.log(s) + 0.5 * u * u)
            wm = -np.expm1(-kap * theta)
            # ∫_m^x a / f(m) = ∫_0^θ e^{−(2mv + v²)/(2σ²)} (1 − e^{−κ(θ − v)}) dv
            v = 0.5 * theta[:, None] * (_GL_X[None, :] + 1.0)
            integrand = np.exp(-(2.0 * m[:, None] * v + v * v) / self._s2) * -np.expm1(-kap * (theta[:, None] - v))
            i_gap = 0.5 * theta * np.sum(_GL_W[None, :] * integrand, axis=1)
            um = u - mu
            # a⁽ⁿ⁾(m)/f(m) = (−1)ⁿ σ⁻ⁿ [Heₙ(u) − Heₙ(u − μ) + w Heₙ(u − μ)]
            diff1 = mu
            diff3 = mu * (3.0 * u * u - 3.0 * u * mu + mu * mu - 3.0)
            diff5 = (
                mu * (5.0 * u**4 - 10.0 * u**3 * mu + 10.0 * u * u * mu * mu - 5.0 * u * mu**3 + mu**4)
                - 10.0 * mu * (3.0 * u * u - 3.0 * u * mu + mu * mu)
                + 15.0 * mu
            )
            he3m = um**3 - 3.0 * um
            he5m = um**5 - 10.0 * um**3 + 15.0 * um
            d1 = -(diff1 + wm * (um)) / s
            d3 = -(diff3 + wm * he3m) / s**3
            d5 = -(diff5 + wm * he5m) / s**5
            corr = wm / 2.0 + d1 / 12.0 - d3 / 720.0 + d5 / 30240.0
            # the remainder: 2ζ(6)/(2π)⁶ = 2/(945·64)
            c6 = 2.0 / (945.0 * 64.0)
            root6 = 3.3242574335521193  # the largest zero of He₆
            glob = math.sqrt(2.0 * math.pi) * math.sqrt(720.0) / s**5
            he5u = np.abs(u**5 - 10.0 * u**3 + 15.0 * u)
            bf = np.where(u <= -root6, he5u / s**5, glob * np.exp(0.5 * u * u))
            bg = np.where(um <= -root6, (1.0 - wm) * np.abs(he5m) / s**5, glob * np.exp(e + 0.5 * u * u))
            rem = c6 * (bf + bg)
            total = i_cont - down(i_gap, "em_gap") + corr + np.abs(corr) * 1e-10 + rem
            out = -0.5 * u * u + np.log(total) - self._log_z
        bad = ~np.isfinite(out) | ~(total > 0)
        if bad.any():
            out[bad] = self._log_delta_bound(np.asarray(eps, dtype=float)[bad])
        return _round_up_log(out)

    def _log_delta_bound(self, eps):
        """Rigorous upper bound for |m| > 2⁵⁰ (astronomically small δ, where integers are not exact
        floats): δ ≤ (√(2π)σ/Z)·δ_N(ε) + a_max ≤ δ_N(ε) + a_max: the terms
        a(y) = P̃(y)(1 − e^{−κ(x − y)}) are unimodal on y ≤ x, so their sum over the integers
        exceeds ∫_{−∞}^{x} a ≤ √(2π)σ δ_N(ε)/Z by at most max a ≤ max P̃(y)·min(1, κ(x − y))
        (closed form: y = min(0, x − 1/κ) or y = (x − √(x² + 4σ²))/2)."""
        e = np.asarray(eps, dtype=float)
        s, dd, kap = self.sigma, float(self.sensitivity), self._kappa
        cont = np.asarray(Gaussian(s, dd)._log_delta(e), dtype=float)
        cont = cont + math.log1p(_CONT_MARGIN)
        lz = 0.5 * _LOG_2PI + math.log(s)  # log Z ≥ log(√(2π)σ)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            x = dd / 2.0 - e * (s / dd) * s
            y1 = np.minimum(0.0, x - 1.0 / kap)
            b1 = -(y1 / s) * (y1 / s) / 2.0 - lz
            root = np.hypot(x, 2.0 * s)
            y2 = np.where(x > 0, -2.0 * s * s / (x + root), (x - root) / 2.0)
            b2 = -(y2 / s) * (y2 / s) / 2.0 - lz + np.log(kap * (x - y2))
            b2 = np.where(y2 > x - 1.0 / kap, b2, -np.inf)
            amax = np.maximum(b1, b2)
            amax = np.where(np.isnan(amax), -np.inf, amax)
            out = np.logaddexp(cont, amax + 1e-12)
        return _round_up_log(np.where(np.isnan(out), 0.0, out))

    # loss model for dpexplore.accounting.pld --------------------------------------------------------------
    def _loss_index(self, x):
        """K(x) = the largest integer y whose exact loss Δ(Δ − 2y)/(2σ²) exceeds x, i.e. the
        largest integer below Δ/2 − xσ²/Δ (in rational arithmetic near ties); ±inf beyond 2⁵⁰."""
        x = np.asarray(x, dtype=float)
        dd = float(self.sensitivity)
        with np.errstate(over="ignore", invalid="ignore"):
            c = dd / 2.0 - x * (self.sigma / dd) * self.sigma
            k = np.ceil(c) - 1.0
            near = np.isfinite(c) & (np.abs(c) <= _BIG) & (np.abs(c - np.round(c)) <= 1e-9 * (1.0 + np.abs(c)))
        if near.any():
            ms, _, _ = self._thresholds(x[near])
            k[near] = ms
        return np.where(np.isnan(k), -np.inf, k)

    def _loss_tails(self, x):
        """log P(L > x), log P(L ≤ x), log Q(L > x), log Q(L ≤ x) for L = Δ(Δ − 2Y)/(2σ²) with
        Y ~ P (noise at 0) or Y ~ Q (noise at Δ): with K the largest integer whose loss exceeds x,
        P(L > x) = P[Y ≤ K], P(L ≤ x) = P[Y ≤ −K − 1], Q(L > x) = P[Y ≤ K − Δ],
        Q(L ≤ x) = P[Y ≤ Δ − K − 1] (symmetry), from CDF tables (σ ≤ 2¹⁵; relative accuracy
        ~1e-12), windowed sums in the far tails.

        >>> [round(float(v[0]), 6) for v in DiscreteGaussian(1.0)._loss_tails(np.array([0.0]))]
        [-0.357431, -1.202211, -1.202211, -0.357431]
        """
        x = np.asarray(x, dtype=float)
        k = self._loss_index(x)
        dd = float(self.sensitivity)
        with np.errstate(invalid="ignore"):
            sp = self._log_cdf_int(k)
            cp = self._log_cdf_int(-k - 1.0)
            sq = self._log_cdf_int(k - dd)
            cq = self._log_cdf_int(dd - k - 1.0)
        return [sp, cp, sq, cq]

    # Rényi DP ----------------------------------------------------------------------------------
    def _card_closed_forms(self) -> dict:
        """The closed forms of its notebook card (:mod:`dpexplore.display`): ρ = Δ²/(2σ²)
        (:attr:`rho`, rounded up), an upper bound.

        >>> DiscreteGaussian(1.0, 2)._card_closed_forms()
        {'rho': (2.0, 'upper bound: Δ²/(2σ²)')}
        """
        return {"rho": (float(self.rho), "upper bound: Δ²/(2σ²)")}

    def rdp(self, alpha):
        """Exact Rényi divergence (Mironov 2017, Definition 3), rounded up: with ρ = Δ²/(2σ²),
        c = (α − 1)Δ and θ(c) = Σ_y e^{−(y − c)²/(2σ²)} (1-periodic and even in c),

            D_α(P‖Q) = αρ + log(θ(c)/θ(0))/(α − 1) ≤ αρ,

        with equality at integer α (Canonne, Kamath & Steinke 2020, result “the discrete Gaussian is ρ-zCDP” gives the bound αρ).
        θ(c)/θ(0) is 1 − 4Σ_k e^{−2π²σ²k²} sin²(πkc)/θ₀ by Poisson summation (σ ≥ 0.3) or the
        direct symmetric sum (σ < 0.3); the distance of c to the nearest integer is exact
        (rational arithmetic). D_∞ = inf.

        >>> m = DiscreteGaussian(0.5)
        >>> m.rdp(2.0), round(m.rdp(1.5), 9)
        (4.0, 2.942460965)
        """
        a = check_alpha(alpha, "alpha")
        flat = a.ravel()
        out = np.array([self._rdp_one(float(v)) for v in flat]) if flat.size else np.zeros(0)
        return scalar_out(out.reshape(a.shape))

    def _rdp_one(self, a: float) -> float:
        if math.isinf(a):
            return math.inf
        rho = self.rho
        with np.errstate(over="ignore"):
            prod = float(np.float64(a) * rho)
        if not math.isfinite(prod):
            return math.inf
        # αρ rounded up (exact products, e.g. at integer α, stay exact)
        base = prod if Fraction(prod) >= Fraction(a) * Fraction(rho) else float(np.nextafter(prod, np.inf))
        am1 = a - 1.0
        cf = (Fraction(a) - 1) * self.sensitivity
        frac = cf - math.floor(cf)
        c = float(min(frac, 1 - frac))
        if c == 0.0:
            return base
        s = self.sigma
        if s >= 0.3:
            k, q = self._poisson_terms
            theta0 = 1.0 + 2.0 * float(np.sum(q))
            r = -4.0 * float(np.sum(q * np.sin(math.pi * k * c) ** 2)) / theta0
            lr = math.log1p(r)
        else:
            y = np.arange(1, 14, dtype=float)
            s2 = self._s2
            with np.errstate(divide="ignore"):
                z = y * c / s2  # sinh argument y·c/(2σ²)·... /2
                lsinh = z + log1mexp(-2.0 * z) - math.log(2.0)
                lt = math.log(4.0) - (y * y) / s2 + 2.0 * lsinh - math.log1p(2.0 * float(np.sum(np.exp(-(y * y) / s2))))
            l1 = -(c * c) / s2
            lr = float(np.logaddexp(l1, l1 + special.logsumexp(lt)))
        corr = float(up(lr / am1, "rdp_sum"))  # ≤ 0; its magnitude rounded down
        val = float(up(base + corr, "rdp_closed"))
        return float(min(max(val, 0.0), base))

    def _label(self):
        return f"DiscreteGaussian(σ={self.sigma!r}, Δ={self.sensitivity!r})"


LOG_HALF_SAFE = math.log(0.5)
