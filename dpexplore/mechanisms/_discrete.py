"""The machinery shared by the discrete mechanisms (:mod:`dpexplore.mechanisms.discrete`): parameter
checks, the exact log-space sums over integer outputs with bounded tails, the base class
:class:`_DiscreteMechanism` (profile, ε, Rényi divergence, trade-off and loss model from the
class's log-probabilities) and the discrete Laplace sampler."""

from __future__ import annotations

import math

import numpy as np

from .._numerics import (
    bracket_search,
    down,
    epsilon_by_bisection,
    expm1mx,
    grow_bracket,
    log1mexp,
    within,
)
from .._validation import as_array, check_delta, check_nonneg, check_probability, scalar_out
from ._base import MechanismProfile, _PrivacyMechanism, _rng, _size

__all__: list[str] = []

_U = 2.0**-53  # unit roundoff
_TINY = np.nextafter(0.0, 1.0)
_LOG_2PI = math.log(2.0 * math.pi)
_MAX_SENSITIVITY = 2**53
#: log-concave sums stop where the terms are e^{-_DROP} times the largest (the rest is bounded)
_DROP = 50.0
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

        >>> from dpexplore.mechanisms import DiscreteGaussian, DiscreteLaplace
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

        >>> from dpexplore.mechanisms import DiscreteGaussian, DiscreteLaplace
        >>> DiscreteLaplace(2.0, 2).delta([0.0, 1.0])
        array([0.39346934, 0.        ])
        """
        return scalar_out(np.clip(np.exp(np.asarray(self.log_delta(eps))), 0.0, 1.0))

    def epsilon(self, delta):
        """The smallest ε ≥ 0 with δ(ε) ≤ ``delta``, rounded up: a vectorized bracketing bisection
        that ends where the computed (rounded-up) δ(ε) ≤ delta, at most ~2 ulp above the root.
        ε(0) = ``eps_max`` (inf for the discrete Gaussian).

        >>> from dpexplore.mechanisms import DiscreteGaussian, DiscreteLaplace
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

        >>> from dpexplore.mechanisms import DiscreteGaussian, DiscreteLaplace
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

        >>> from dpexplore.mechanisms import DiscreteGaussian, DiscreteLaplace
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

        >>> from dpexplore.mechanisms import DiscreteGaussian, DiscreteLaplace
        >>> round(DiscreteLaplace(1.0).logcdf(-700.0), 6)       # log(e^{−700}/(1 + e^{−1}))
        -700.313262
        """
        x = as_array(x, "x")
        with np.errstate(invalid="ignore"):
            k = np.floor(x)
        return scalar_out(self._log_cdf_int(k))

    def logsf(self, x):
        """log P[Y > x] = log P[Y ≤ −⌊x⌋ − 1] (the noise is symmetric).

        >>> from dpexplore.mechanisms import DiscreteGaussian, DiscreteLaplace
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

        >>> from dpexplore.mechanisms import DiscreteGaussian, DiscreteLaplace
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

        >>> from dpexplore.mechanisms import DiscreteGaussian, DiscreteLaplace
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
