"""Privacy amplification by subsampling: a mechanism run on a Poisson subsample of the data.

Each record is kept independently with probability q (Poisson sampling; DP-SGD's batches), and
the base mechanism M runs on the sample. Under the add/remove-one relation, with A = M's output
distribution without the record and B with it, the two neighbouring output distributions are

    remove:  P = (1 − q)·A + q·B  against  Q = A,        add:  P = A  against  Q = (1 − q)·A + q·B,

and every query of a composition is answered by the worse of the two directions, each composed
with itself (Zhu, Dong & Wang 2022, Section 5; dp_accounting's PLD for Poisson sampling).
For an additive-noise base (Gaussian, Laplace, …) with loss ℓ(y) = log a(y)/b(y), non-increasing
in y, the losses are L = log(1 − q + q e^{−ℓ(y)}) (remove) and −log(1 − q + q e^{−ℓ(y)}) (add):
monotone in y, so their distributions are closed forms of the noise CDF, and the privacy loss
distribution machinery of :mod:`dpexplore.pld` composes them tightly (pessimistic
discretization: δ never below the truth).

* :func:`subsample` — the subsampled mechanism (:class:`PoissonSubsampled`): ``delta``,
  ``log_delta``, ``epsilon``, ``profile`` from the PLD; ``rdp`` for a Gaussian base (Mironov,
  Talwar & Zhang 2019, Theorem 6: exact at integer orders); ``eps_max`` = log(1 + q(e^ε − 1)) for
  an ε-DP base (Balle, Barthe & Gaboardi 2018, Theorem 8 / Li, Qardaji & Su 2012).

>>> from dpexplore.mechanisms import Gaussian
>>> m = subsample(Gaussian(1.0), 0.01)
>>> round(float(m.rdp(2.0)), 10)          # log(1 + q²(e^{1/σ²} − 1)) at α = 2
0.0001718134
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from ._validation import as_array, check_alpha, check_delta, check_nonneg, scalar_out
from .profiles import PrivacyProfile

__all__ = ["PoissonSubsampled", "subsample", "MaxProfile", "SAMPLINGS"]

#: sampling schemes accepted by :func:`subsample`
SAMPLINGS = ("poisson",)


def _check_rate(q):
    arr = as_array(q, "q", allow_inf=False)
    if arr.ndim != 0:
        raise ValueError(f"q must be a single sampling rate, got {q!r}")
    v = float(arr)
    if not 0.0 < v <= 1.0:
        raise ValueError(f"q must be in (0, 1], got {q!r}")
    return v


def _check_base(mechanism):
    from .mechanisms import AdditiveNoiseMechanism  # local import: mechanisms imports this module

    if not isinstance(mechanism, AdditiveNoiseMechanism):
        raise ValueError(f"mechanism must be an additive-noise mechanism (Gaussian, Laplace, Logistic, "
                         f"Subbotin) to subsample, got {mechanism!r}")
    if not mechanism._scalar_params():
        raise ValueError(f"mechanism parameters must be scalars to subsample, got {mechanism!r}")
    return mechanism


# ------------------------------------------------------------------------------------------------
# one direction of the dominating pair, as a loss model for dpexplore.pld
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _SubsampledLoss:
    """The privacy loss of one direction ("remove" or "add") of a Poisson-subsampled additive
    mechanism: the interface :mod:`dpexplore.pld` asks of a loss model (``loss_support``,
    ``eps_max``, ``_loss_tails``). Hashable, so its PLDs are cached."""

    base: object
    q: float
    direction: str

    @property
    def _bounds(self):
        em = float(self.base.eps_max)
        q = self.q
        with np.errstate(over="ignore", divide="ignore"):
            lo_r = float(np.log1p(q * np.expm1(-em)))          # log(1 − q + q e^{−em})
            hi_r = float(np.log1p(q * np.expm1(em))) if np.isfinite(em) else np.inf
        return lo_r, hi_r

    @property
    def loss_support(self):
        lo_r, hi_r = self._bounds
        return (lo_r, hi_r) if self.direction == "remove" else (-hi_r, -lo_r)

    @property
    def eps_max(self):
        return max(self.loss_support[1], 0.0)

    def _threshold(self, x):
        """c(x) with L > x ⟺ ℓ(y) < c (remove) or ℓ(y) > c (add): c = log q − log(e^{±x} − 1 + q)."""
        q = self.q
        s = x if self.direction == "remove" else -x
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.log(q) - np.log(np.expm1(s) + q)

    def _loss_tails(self, x):
        """log P(L > x), log P(L ≤ x), log Q(L > x), log Q(L ≤ x)."""
        x = np.asarray(x, dtype=np.float64)
        base, q = self.base, self.q
        em = float(base.eps_max)
        lo, hi = self.loss_support
        inside = (x > lo) & (x < hi)
        c = np.where(inside, self._threshold(np.where(inside, x, 0.0)), 0.0)
        c = np.clip(c, -np.nextafter(em, 0.0), np.nextafter(em, 0.0)) if np.isfinite(em) else c
        t = np.asarray(base.loss_inverse(np.where(np.isfinite(c), c, 0.0)), dtype=np.float64)
        d = float(base.sensitivity)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            a_sf, a_cdf = np.asarray(base.logsf(t)), np.asarray(base.logcdf(t))
            b_sf, b_cdf = np.asarray(base.logsf(t - d)), np.asarray(base.logcdf(t - d))
            l1q, lq = np.log1p(-q) if q < 1 else -np.inf, np.log(q)
            mix_sf = np.logaddexp(l1q + a_sf, lq + b_sf)
            mix_cdf = np.logaddexp(l1q + a_cdf, lq + b_cdf)
        if self.direction == "remove":   # L > x ⟺ y > t;  P = mixture, Q = A
            sp, cp, sq, cq = mix_sf, mix_cdf, a_sf, a_cdf
        else:                            # L > x ⟺ y < t;  P = A, Q = mixture
            sp, cp, sq, cq = a_cdf, a_sf, mix_cdf, mix_sf
        above = x >= hi
        out = []
        for s_in, above_val, below_val in ((sp, -np.inf, 0.0), (cp, 0.0, -np.inf),
                                           (sq, -np.inf, 0.0), (cq, 0.0, -np.inf)):
            out.append(np.where(inside, s_in, np.where(above, above_val, below_val)))
        return out


# ------------------------------------------------------------------------------------------------
# the profile of the worse direction
# ------------------------------------------------------------------------------------------------
class MaxProfile(PrivacyProfile):
    """δ(ε) = max_i δ_i(ε) and ε(δ) = max_i ε_i(δ): the profile of a mechanism whose worst case is
    the worse of several dominating pairs (the two directions of the add/remove relation).

    >>> from dpexplore.profiles import GaussianDPProfile
    >>> p = MaxProfile([GaussianDPProfile(1.0), GaussianDPProfile(2.0)])
    >>> p.delta(1.0) == GaussianDPProfile(2.0).delta(1.0)
    True
    """

    def __init__(self, profiles, name: str = "max"):
        self.profiles = list(profiles)
        if not self.profiles:
            raise ValueError("profiles must hold at least one profile, got none")
        self.eps_max = max(float(p.eps_max) for p in self.profiles)
        self.name = name

    def _log_delta(self, eps):
        return np.maximum.reduce([np.asarray(p._log_delta(eps), dtype=np.float64) for p in self.profiles])

    def _epsilon(self, delta):
        return np.maximum.reduce([np.asarray(p._epsilon(delta), dtype=np.float64) for p in self.profiles])


# ------------------------------------------------------------------------------------------------
# the subsampled mechanism
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PoissonSubsampled:
    """``mechanism`` run on a Poisson subsample with rate q (each record kept independently with
    probability q), under the add/remove-one relation.

    ``delta``/``log_delta``/``epsilon``/``profile``: the tight profile max(δ_remove, δ_add) from the
    privacy loss distribution (:func:`dpexplore.pld.composed_pld_many`: never below the true δ;
    ε̂(δ) ≤ ε(δ) + h for the grid spacing h, in practice ~1e-4 relative).
    ``rdp(alpha)``: Gaussian base only (Mironov, Talwar & Zhang 2019, Theorem 6 / Section 3.3).
    ``eps_max``: log(1 + q(e^ε − 1)) for an ε-DP base (Balle, Barthe & Gaboardi 2018, Theorem 8),
    inf for Gaussian noise.

    >>> from dpexplore.mechanisms import Laplace
    >>> m = subsample(Laplace(1.0), 0.1)
    >>> round(m.eps_max, 12), round(float(np.log1p(0.1 * np.expm1(1.0))), 12)
    (0.15856507874, 0.15856507874)
    >>> m.delta(m.eps_max)
    0.0
    """

    mechanism: object
    q: float

    def __post_init__(self):
        _check_base(self.mechanism)
        object.__setattr__(self, "q", _check_rate(self.q))

    # directions ----------------------------------------------------------------------------
    def _directions(self):
        return (_SubsampledLoss(self.mechanism, self.q, "remove"),
                _SubsampledLoss(self.mechanism, self.q, "add"))

    def _label(self) -> str:
        lab = getattr(self.mechanism, "_label", lambda: repr(self.mechanism))()
        return f"Poisson(q={self.q:g})∘{lab}"

    @property
    def sensitivity(self):
        return self.mechanism.sensitivity

    @property
    def eps_max(self):
        """sup of the privacy loss: log(1 + q(e^ε − 1)) for an ε-DP base (the remove direction's
        largest loss), inf for unbounded noise."""
        return max(d.eps_max for d in self._directions())

    @property
    def profile(self) -> PrivacyProfile:
        """The tight profile (see the class docstring); computed once and cached."""
        from .composition import compose

        return compose(self, 1)

    def log_delta(self, eps):
        """log δ(ε) of the subsampled mechanism (PLD, never below the truth)."""
        return self.profile.log_delta(eps)

    def delta(self, eps):
        """δ(ε) of the subsampled mechanism (PLD, never below the truth)."""
        return self.profile.delta(eps)

    def epsilon(self, delta):
        """The smallest ε with δ(ε) ≤ ``delta`` (PLD, rounded up)."""
        return self.profile.epsilon(delta)

    # RDP -----------------------------------------------------------------------------------------
    def rdp(self, alpha):
        """Rényi DP of the Poisson-subsampled Gaussian mechanism (Mironov, Talwar & Zhang 2019,
        Theorem 6 and Section 3.3; the remove direction dominates): at an integer order α ≥ 2,

            ε̂(α) = log A_α / (α − 1),   A_α = Σ_{j=0}^{α} C(α, j) (1 − q)^{α−j} q^j e^{(j² − j)/(2σ̃²)},

        σ̃ = σ/Δ, summed in log space. Exact at integer orders (rounded up by 8 ulps). At a
        fractional order, the two-sided series of Mironov, Talwar & Zhang 2019, Section 3.3 (raised
        by 1e-12 of its terms' size against cancellation: ≤ ~1e-5 relative above the truth near
        α = 1, ~1e-10 beyond α = 2; checked against mpmath quadrature), capped by the
        chord between the neighbouring integer orders ((α − 1)ε̂(α) = log E[(P/Q)^α] is convex in α,
        so the chord is a rigorous upper bound; order 1 contributes 0). α = ∞ gives inf. Other base
        mechanisms: NotImplementedError.

        >>> from dpexplore.mechanisms import Gaussian
        >>> round(float(subsample(Gaussian(2.0), 1.0).rdp(3.0)), 12)     # q = 1: α/(2σ²)
        0.375
        """
        from .mechanisms import Gaussian

        if not isinstance(self.mechanism, Gaussian):
            raise NotImplementedError(f"subsampled Renyi DP is implemented for a Gaussian base only, "
                                      f"not {self.mechanism!r}")
        a = check_alpha(alpha, "alpha")
        s2 = (float(self.mechanism.sigma) / float(self.mechanism.sensitivity)) ** 2
        q = self.q
        flat = np.asarray(a, dtype=np.float64).ravel()
        out = np.empty_like(flat)
        for i, al in enumerate(flat):
            if np.isinf(al):
                out[i] = np.inf
                continue
            lo, hi = np.floor(al), np.ceil(al)
            if lo == hi:
                out[i] = _log_a_int(int(al), q, s2) / (al - 1.0)
            else:
                la_lo = _log_a_int(int(lo), q, s2) if lo >= 2 else 0.0
                la_hi = _log_a_int(int(hi), q, s2)
                chord = la_lo + (al - lo) * (la_hi - la_lo)
                series = _log_a_frac(float(al), q, s2)
                out[i] = min(chord, series) / (al - 1.0)
        out = np.maximum(out, 0.0)
        fin = np.isfinite(out)
        out[fin] = out[fin] + 8 * np.spacing(out[fin])
        return scalar_out(out.reshape(np.shape(a)))


_MAX_INT_ORDER = 100_000


def _log_a_int(alpha: int, q: float, s2: float) -> float:
    """log A_α for an integer α ≥ 2 (Mironov, Talwar & Zhang 2019, Section 3.3), in log space."""
    if alpha > _MAX_INT_ORDER:
        raise ValueError(f"alpha must be at most {_MAX_INT_ORDER} for the subsampled Gaussian, got {alpha!r}")
    if q == 1.0:
        return (alpha * alpha - alpha) / (2.0 * s2)
    j = np.arange(alpha + 1, dtype=np.float64)
    logc = special.gammaln(alpha + 1.0) - special.gammaln(j + 1.0) - special.gammaln(alpha - j + 1.0)
    terms = logc + (alpha - j) * np.log1p(-q) + j * np.log(q) + (j * j - j) / (2.0 * s2)
    return float(special.logsumexp(terms))


def _log_a_frac(alpha: float, q: float, s2: float) -> float:
    """log A_α at a fractional order α > 1 (Mironov, Talwar & Zhang 2019, Section 3.3): the
    integral of E_Q[(P/Q)^α] split at z₀ = σ̃² log(1/q − 1) + ½ into two absolutely convergent
    binomial series (summed until the terms fall below e^{−30} of the first; the signed sum is
    raised by 1e-12 of its terms' total against cancellation), A_α = Σ_i C(α, i) [q^i (1−q)^{α−i} e^{(i²−i)/(2σ̃²)} Φ((z₀ − i)/σ̃)
    + q^{α−i} (1−q)^i e^{((α−i)²−(α−i))/(2σ̃²)} Φ((α − i − z₀)/σ̃)], with signed binomials."""
    sig = float(np.sqrt(s2))
    if q >= 1.0:
        return (alpha * alpha - alpha) / (2.0 * s2)
    z0 = s2 * np.log(1.0 / q - 1.0) + 0.5
    lq, l1q = np.log(q), np.log1p(-q)
    pos, neg = [], []
    first = None
    for i in range(0, 100_000):
        coef = special.binom(alpha, i)
        if coef == 0:
            break
        lc = np.log(abs(coef))
        j = alpha - i
        ls0 = lc + i * lq + j * l1q + (i * i - i) / (2.0 * s2) + special.log_ndtr((z0 - i) / sig)
        ls1 = lc + j * lq + i * l1q + (j * j - j) / (2.0 * s2) + special.log_ndtr((j - z0) / sig)
        (pos if coef > 0 else neg).extend([ls0, ls1])
        top = max(ls0, ls1)
        first = top if first is None else first
        if i > alpha and top < first - 30.0:
            break
    lp = special.logsumexp(pos)
    ln = special.logsumexp(neg) if neg else -np.inf
    if not ln < lp:
        return np.inf  # cannot happen for a valid order; inf keeps the bound safe
    # the signed sum cancels (A_α ≈ 1 near α = 1 while single terms are ~1): raise it by
    # 1e-12 of the terms' total size, far above the summation's round-off
    r = np.exp(ln - lp)
    return float(lp + np.log1p(-r + 1e-12 * (1.0 + r)))


def subsample(mechanism, q, sampling: str = "poisson"):
    """``mechanism`` applied to a random subsample of the data — privacy amplification by
    subsampling (Balle, Barthe & Gaboardi 2018; Zhu, Dong & Wang 2022; Mironov, Talwar & Zhang 2019).

    ``sampling="poisson"``: each record kept independently with probability ``q`` (DP-SGD with
    Poisson batches), add/remove-one relation; returns :class:`PoissonSubsampled`, whose profile is
    the tight privacy-loss-distribution one. Fixed-size batches drawn without replacement
    (``sampling="fixed"``, the substitution relation) are not implemented yet: ValueError.
    The base must be an additive-noise mechanism with scalar parameters.

    >>> from dpexplore.mechanisms import Gaussian
    >>> m = subsample(Gaussian(1.0), 0.5)
    >>> m.epsilon(1e-5) < Gaussian(1.0).epsilon(1e-5)
    True
    """
    if not isinstance(sampling, str) or sampling not in SAMPLINGS:
        raise ValueError(f"sampling must be 'poisson' (fixed-size sampling without replacement is not "
                         f"implemented yet), got {sampling!r}")
    return PoissonSubsampled(mechanism, q)
