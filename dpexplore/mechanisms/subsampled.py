"""Privacy amplification by subsampling: a mechanism run on a random subsample of the data.

Two sampling schemes, each with the neighbouring relation its tight analysis uses.

**Poisson sampling** (:class:`PoissonSubsampled`; DP-SGD's batches): each record is kept
independently with probability q and the base mechanism M runs on the sample. Under the
add/remove-one relation, with A = M's output distribution without the record and B with it, the
two neighbouring output distributions are

    remove:  P = (1 − q)·A + q·B  against  Q = A,        add:  P = A  against  Q = (1 − q)·A + q·B,

and every query of a composition is answered by the worse of the two directions, each composed
with itself (Zhu, Dong & Wang 2022, result “dominating pairs for Poisson subsampling”; dp_accounting's PLD for Poisson sampling).

**Sampling without replacement** (:class:`FixedSubsampled`; fixed-size batches): a batch of
m = q·n records drawn uniformly without replacement from the n records, under the substitution
(replace-one) relation — n is public, neighbours differ by replacing one record
(dp_accounting's ``SampledWithoutReplacementDpEvent`` with ``NeighboringRelation.REPLACE_ONE``).
With the base's dominating pair (B, A) under substitution, the one-step pair is
R = ((1 − q)·A + q·B, A) for ε ≥ 0 and its reverse for ε < 0 (Balle, Barthe & Gaboardi 2018,
Theorem 9 and advanced joint convexity, Theorem 2; Dong, Roth & Su 2022, result “subsampling for f-DP”: the trade-off
function C_q(f) = min{f_q, f_q⁻¹}**; Zhu, Dong & Wang 2022, result “dominating pairs for Poisson subsampling”): the symmetric pair S whose
profile is max(δ_R(ε), δ_{R reversed}(ε)), i.e. δ_S(ε) = q·δ_M(log(1 + (e^ε − 1)/q)) for ε ≥ 0.
Every step of a composition is dominated by S, so S composed with itself bounds the composition
(never below the truth; tight for one step).

For an additive-noise base (Gaussian, Laplace, …) with loss ℓ(y) = log a(y)/b(y), non-increasing
in y, the losses are L = log(1 − q + q e^{−ℓ(y)}) (remove) and −log(1 − q + q e^{−ℓ(y)}) (add):
monotone in y, so their distributions are closed forms of the noise CDF; S takes the remove
loss above 0, its mirror image (with the P- and Q-masses exchanged) below 0 and an atom at 0.
The privacy loss distribution machinery of :mod:`dpexplore.accounting.pld` composes them tightly
(pessimistic discretization: δ never below the truth). The loss models and profiles live in
``_subsampled_profiles``, the Rényi DP of the subsampled Gaussian in ``_subsampled_rdp``.

* :func:`subsample` — the subsampled mechanism, ``sampling="poisson"`` (:class:`PoissonSubsampled`)
  or ``"fixed"`` (:class:`FixedSubsampled`): ``delta``, ``log_delta``, ``epsilon``, ``profile`` of one
  run exact (:class:`OneStepProfile`), of k runs from the PLD (:func:`dpexplore.accounting.composition.compose`);
  ``rdp`` for a Gaussian base (Poisson: Mironov, Talwar & Zhang 2019, Section 3.3, exact at
  integer orders; without replacement: Wang, Balle & Kasiviswanathan 2019, Theorem 9, the bound
  dp_accounting implements); ``eps_max`` = log(1 + q(e^ε − 1)) for an ε-DP base (Poisson: Balle,
  Barthe & Gaboardi 2018, result “amplification by Poisson subsampling”, and Li, Qardaji & Su 2012; without replacement, with ε the
  base's ε under substitution: Balle, Barthe & Gaboardi 2018, Theorem 9).

>>> from dpexplore.mechanisms import Gaussian
>>> m = subsample(Gaussian(1.0), 0.01)
>>> round(float(m.rdp(2.0)), 10)          # log(1 + q²(e^{1/σ²} − 1)) at α = 2
0.0001718134
>>> f = subsample(Gaussian(2.0), 0.01, sampling="fixed")   # sensitivity 1 under substitution
>>> round(float(f.rdp(2.0)), 12)          # log(1 + q²·min(4(e^{1/σ²} − 1), 2e^{1/σ²}))
0.000113603714
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._validation import check_alpha
from ..accounting.profiles import PrivacyProfile
from ._base import _PrivacyMechanism
from .additive import Gaussian
from ._subsampled_profiles import (
    MaxProfile,
    OneStepProfile,
    RareEventProfile,
    _check_base,
    _check_rate,
    _SubsampledLoss,
)
from ._subsampled_profiles import (  # noqa: F401  (public here: the rare-event bounds DP-SGD's accountant uses)
    one_run_among_k,
    one_shifted_step_lower_epsilon,
    rare_event_tail,
)
from ._subsampled_rdp import _chord, _log_a_int, _log_a_frac, _log_a_wor_int, _rdp_by_order

__all__ = [
    "PoissonSubsampled",
    "FixedSubsampled",
    "subsample",
    "MaxProfile",
    "OneStepProfile",
    "RareEventProfile",
    "SAMPLINGS",
]

#: sampling schemes accepted by :func:`subsample`
SAMPLINGS = ("poisson", "fixed")


# ------------------------------------------------------------------------------------------------
# the subsampled mechanism
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PoissonSubsampled(_PrivacyMechanism):
    """``mechanism`` run on a Poisson subsample with rate q (each record kept independently with
    probability q), under the add/remove-one relation.

    ``delta``/``log_delta``/``epsilon``/``profile``: the exact profile max(δ_remove, δ_add) of one
    run, each direction the base's own δ at a transformed ε (:class:`OneStepProfile`: never below
    the true δ, within ~1e-13 relative of it). A composition of k runs
    (:func:`dpexplore.accounting.composition.compose`) goes through the privacy loss distribution
    (:func:`dpexplore.accounting.pld.composed_pld_many`: never below the true δ, ε̂(δ) ≤ ε(δ) + k·h).
    ``rdp(alpha)``: Gaussian base only (Mironov, Talwar & Zhang 2019, Section 3.3).
    ``eps_max``: log(1 + q(e^ε − 1)) for an ε-DP base (Balle, Barthe & Gaboardi 2018, result “amplification by Poisson subsampling”),
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
        return (_SubsampledLoss(self.mechanism, self.q, "remove"), _SubsampledLoss(self.mechanism, self.q, "add"))

    def _label(self) -> str:
        lab = getattr(self.mechanism, "_label", lambda: repr(self.mechanism))()
        return f"Poisson(q={self.q:g})∘{lab}"

    @property
    def _gaussian_base(self) -> bool:
        """Whether the base is the Gaussian mechanism: its Rényi DP (:meth:`rdp`) and the lower
        bound that checks a composition (:func:`dpexplore.accounting.composition.compose`) are known."""
        return isinstance(self.mechanism, Gaussian)

    def _pld_losses(self) -> tuple:
        """The privacy losses of the two directions, remove and add (module docstring)."""
        return self._directions()

    def _compose_pld(self, k: int, how):
        """k runs: both directions' privacy loss distributions composed, checked (Gaussian base)
        against a lower bound on the true δ and bounded by :class:`RareEventProfile` at a tiny
        rate (``how.poisson``)."""
        return how.poisson(self, k)

    def _card_describe(self, info) -> None:
        """The card of one run: its exact profile, its Rényi DP where known (Gaussian base)."""
        info.kind = "subsampled mechanism"
        info.profile = self.profile
        if self._gaussian_base:
            info.rdp, info.rdp_how = self.rdp, "the mechanism's rdp()"
        info.rho_why = "no useful ρ: the subsampled Gaussian's RDP is not linear in α"

    @property
    def sensitivity(self):
        return self.mechanism.sensitivity

    @property
    def eps_max(self):
        """sup of the privacy loss: log(1 + q(e^ε − 1)) for an ε-DP base (the remove direction's
        largest loss), inf for unbounded noise."""
        return max(d.eps_max for d in self._directions())

    #: the directions of one run's exact profile (:class:`OneStepProfile`)
    _one_step: ClassVar[tuple] = ("remove", "add")

    @property
    def profile(self) -> PrivacyProfile:
        """The exact profile of one run: the worse of the two directions, each the base
        mechanism's own profile at a transformed ε (:class:`OneStepProfile`; no discretization,
        never below the truth). A composition, :func:`dpexplore.accounting.composition.compose` (self, k),
        goes through the privacy loss distribution instead."""
        label = f"1×{self._label()}"
        profiles = [OneStepProfile(self.mechanism, self.q, d, name=f"{label} ({d})") for d in self._one_step]
        return profiles[0] if len(profiles) == 1 else MaxProfile(profiles, name=label)

    def log_delta(self, eps):
        """log δ(ε) of one run (exact, never below the truth: :class:`OneStepProfile`)."""
        return self.profile.log_delta(eps)

    def delta(self, eps):
        """δ(ε) of one run (exact, never below the truth: :class:`OneStepProfile`)."""
        return self.profile.delta(eps)

    def epsilon(self, delta):
        """The smallest ε with δ(ε) ≤ ``delta`` of one run (:class:`OneStepProfile`, rounded up)."""
        return self.profile.epsilon(delta)

    # RDP -----------------------------------------------------------------------------------------
    def rdp(self, alpha):
        """Rényi DP of the Poisson-subsampled Gaussian mechanism (Mironov, Talwar & Zhang 2019,
        Section 3.3; the remove direction dominates): at an integer order α ≥ 2,

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
        if not self._gaussian_base:
            raise NotImplementedError(
                f"subsampled Renyi DP is implemented for a Gaussian base only, not {self.mechanism!r}"
            )
        a = check_alpha(alpha, "alpha")
        s2 = (float(self.mechanism.sigma) / float(self.mechanism.sensitivity)) ** 2
        q = self.q

        def frac(al, lo, la_lo, la_hi):  # the series, capped by the chord
            return min(_chord(al, lo, la_lo, la_hi), _log_a_frac(float(al), q, s2))

        return _rdp_by_order(a, lambda n: _log_a_int(n, q, s2), frac)

    def _rdp_chord(self, alpha):
        """:meth:`rdp` with every fractional order at its chord alone (no series): exact at the
        integer orders, an upper bound of :meth:`rdp` (rounded the same way) at the others."""
        a = check_alpha(alpha, "alpha")
        s2 = (float(self.mechanism.sigma) / float(self.mechanism.sensitivity)) ** 2
        return _rdp_by_order(a, lambda n: _log_a_int(n, self.q, s2), _chord)


# ------------------------------------------------------------------------------------------------
# sampling without replacement, substitution relation
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FixedSubsampled(PoissonSubsampled):
    """``mechanism`` run on a batch of fixed size m drawn uniformly **without replacement** from
    the n records, q = m/n, under the **substitution (replace-one)** relation: n is public and
    neighbouring datasets differ by replacing one record — dp_accounting's
    ``SampledWithoutReplacementDpEvent`` with ``NeighboringRelation.REPLACE_ONE``.

    Sensitivity convention: ``mechanism.sensitivity`` is the query's sensitivity under
    substitution, Δ = max ‖f(x) − f(x')‖ over datasets x, x' that differ in one replaced record.
    For a sum of records clipped to norm C (DP-SGD) that is Δ = 2C: use ``Gaussian(σ, 2*C)``. The
    numbers then agree with dp_accounting's at noise multiplier σ/Δ: its Rényi accountant treats
    the multiplier as noise over the replace-one sensitivity, while ``GaussianDpEvent`` documents
    it as noise over C (google/differential-privacy issue 378) — σ/C there would understate ε.

    ``delta``/``log_delta``/``epsilon``/``profile``: from the privacy loss distribution of the
    symmetric dominating pair S (the module docstring): with (B, A) the base's pair
    (B = A shifted by Δ) and R = ((1 − q)A + qB, A),

        δ(ε) = q·δ_M(log(1 + (e^ε − 1)/q))   for ε ≥ 0,     δ(−ε) = 1 − e^{−ε} + e^{−ε} δ(ε),

    the worst case over all substitution-neighbouring datasets for one step (Balle, Barthe &
    Gaboardi 2018, Theorem 9 with advanced joint convexity, Theorem 2; Dong, Roth & Su 2022,
    result “subsampling for f-DP”; Zhu, Dong & Wang 2022, result “dominating pairs for Poisson
    subsampling”). A composition (:func:`dpexplore.accounting.composition.compose`) composes S with
    itself: never below the truth (every step is dominated by S; Dong, Roth &
    Su 2022, result “composition of f-DP”), but for k ≥ 2 it need not be attained by any pair of datasets. Numerically
    (:func:`dpexplore.accounting.pld.composed_pld_many`, connect-the-dots): δ never below the δ of S,
    ε̂(δ) ≤ ε(δ) + k·h for the grid spacing h. One step itself (``delta``, ``epsilon``, ``profile``)
    is the closed form above (:class:`OneStepProfile`); 1000 steps, within ~4e-6 of the midpoint of dp_accounting's
    compositions of independent pessimistic/optimistic discretizations of S (interval 1e-4).
    ``rdp(alpha)``: Gaussian base only (Wang, Balle & Kasiviswanathan 2019, Theorem 9 in the
    strengthened form dp_accounting implements; see :meth:`rdp`).
    ``eps_max``: log(1 + q(e^ε − 1)) for a base that is ε-DP under substitution (ε = Δ/b for
    Laplace(b, Δ)): Balle, Barthe & Gaboardi 2018, Theorem 9; inf for Gaussian noise.

    It subclasses :class:`PoissonSubsampled` for the loss-model hooks only (``_directions``, the
    profile), so :func:`dpexplore.accounting.composition.compose` and ``compose_all`` take it as they take a
    Poisson-subsampled mechanism; both directions are the symmetric S. The sampling scheme and the
    neighbouring relation are those above, not Poisson's.

    >>> from dpexplore.mechanisms import Laplace
    >>> m = subsample(Laplace(1.0), 0.1, sampling="fixed")
    >>> round(m.eps_max, 12), round(float(np.log1p(0.1 * np.expm1(1.0))), 12)
    (0.15856507874, 0.15856507874)
    >>> m.delta(m.eps_max)
    0.0
    """

    #: for ε ≥ 0 the symmetric pair S is the remove pair R (the module docstring)
    _one_step: ClassVar[tuple] = ("remove",)

    def _directions(self):
        s = _SubsampledLoss(self.mechanism, self.q, "replace")
        return (s, s)

    def _label(self) -> str:
        lab = getattr(self.mechanism, "_label", lambda: repr(self.mechanism))()
        return f"WOR(q={self.q:g})∘{lab}"

    def _compose_pld(self, k: int, how):
        """k runs: the symmetric pair S composed with itself (``how.pld``, module docstring)."""
        return how.pld([(self, k)])

    @property
    def sensitivity(self):
        """The base mechanism's sensitivity, read as its sensitivity under substitution (for a
        clipped sum with norm bound C: 2C; see the class docstring)."""
        return self.mechanism.sensitivity

    @property
    def eps_max(self):
        """sup of the privacy loss: log(1 + q(e^ε − 1)) for a base that is ε-DP under
        substitution (Balle, Barthe & Gaboardi 2018, Theorem 9), inf for unbounded noise."""
        return self._directions()[0].eps_max

    def rdp(self, alpha):
        """Rényi DP of the Gaussian mechanism on a batch sampled without replacement, substitution
        relation (Wang, Balle & Kasiviswanathan 2019, Theorem 9, in the strengthened form for
        the Gaussian of their Theorem 27 (arXiv:1808.00087) — the bound dp_accounting's
        ``RdpAccountant`` uses for ``SampledWithoutReplacementDpEvent``). With σ̃ = σ/Δ
        (Δ the substitution sensitivity), ε(j) = j/(2σ̃²) the base's RDP and an integer α ≥ 2::

            ε'(α) = log A_α / (α − 1),
            A_α = 1 + q² C(α, 2) min{4(e^{ε(2)} − 1), 2e^{ε(2)}}
                    + Σ_{j=3}^{α} q^j C(α, j) min{4 √(M_{2⌊j/2⌋} M_{2⌈j/2⌉}), 2e^{(j−1)ε(j)}},

        M_n = Δⁿ[e^{(ℓ−1)ε(ℓ)}](0), the n-th forward difference at 0, = E[(X − 1)ⁿ] for
        X = e^{Z/σ̃ − 1/(2σ̃²)}, Z ~ N(0, 1) (the Gaussian's ternary-|χ|ⁿ moment; the geometric
        mean of the two even neighbours bounds E|X − 1|^j by Cauchy–Schwarz). For α > 256 the
        forward-difference terms are dropped (the plain Wang, Balle & Kasiviswanathan 2019, Theorem 9 with ε(∞) = ∞), as dp_accounting
        does. q = 1: the Gaussian's α/(2σ̃²). A fractional order takes the chord of (α − 1)ε'(α)
        between the neighbouring integer orders (Wang, Balle & Kasiviswanathan 2019, Corollary 10; order 1 contributes 0), as
        dp_accounting does; α = ∞ gives inf.

        Evaluation: M_n is computed without cancellation — by Gauss–Legendre quadrature of the
        positive integrand φ(z)(e^{z/σ̃ − 1/(2σ̃²)} − 1)ⁿ over each of its two log-concave lobes
        (checked against mpmath sums at up to 900 digits: ~1e-15 relative), or by the signed binomial sum
        where it does not cancel — and raised by 1e-12 relative; the result is rounded up by 8
        ulps: never below the exact bound, within ~4e-13 of it (mpmath). dp_accounting takes the
        forward differences in floating point; where they cancel (σ̃ ≳ 5 and α ≳ 30) its values
        are off in both directions (σ̃ = 5, q = 0.2, α = 64: 5e-10 relative below the exact bound;
        σ̃ = 20, q = 0.5, α = 128: ~7× above); elsewhere the two agree to ~4e-13.
        Other base mechanisms: NotImplementedError.

        >>> from dpexplore.mechanisms import Gaussian
        >>> round(float(subsample(Gaussian(2.0), 1.0, sampling="fixed").rdp(3.0)), 12)   # q = 1
        0.375
        """
        if not self._gaussian_base:
            raise NotImplementedError(
                f"Renyi DP of sampling without replacement is implemented for a "
                f"Gaussian base only, not {self.mechanism!r}"
            )
        a = check_alpha(alpha, "alpha")
        with np.errstate(over="ignore", under="ignore"):  # σ̃² may overflow to inf or underflow to 0
            s2 = float((np.float64(self.mechanism.sigma) / np.float64(self.mechanism.sensitivity)) ** 2)
        q = self.q

        # fractional orders on the chord (Wang, Balle & Kasiviswanathan 2019, Corollary 10)
        return _rdp_by_order(a, lambda n: _log_a_wor_int(n, q, s2), _chord)


def subsample(mechanism, q, sampling: str = "poisson"):
    """``mechanism`` applied to a random subsample of the data — privacy amplification by
    subsampling (Balle, Barthe & Gaboardi 2018; Zhu, Dong & Wang 2022; Mironov, Talwar & Zhang 2019;
    Wang, Balle & Kasiviswanathan 2019).

    * ``sampling="poisson"``: each record kept independently with probability ``q`` (DP-SGD with
      Poisson batches), add/remove-one relation; returns :class:`PoissonSubsampled`. For an
      ε-DP base the amplified ε is log(1 + q(e^ε − 1)) (Balle, Barthe & Gaboardi 2018, result “amplification by Poisson subsampling”).
    * ``sampling="fixed"``: a batch of fixed size m drawn uniformly without replacement from n
      records, ``q`` = m/n, substitution (replace-one) relation — ``mechanism.sensitivity`` is the
      sensitivity under substitution (2C for a sum clipped to norm C); returns
      :class:`FixedSubsampled`. For a base that is ε-DP under substitution the amplified ε is
      log(1 + q(e^ε − 1)) (Balle, Barthe & Gaboardi 2018, Theorem 9), and δ(ε) = q·δ_M(ε₀) with
      e^ε = 1 + q(e^{ε₀} − 1) for ε ≥ 0.

    Both profiles come from the privacy loss distribution of the dominating pair(s) (never below
    the truth; tight for one step). The base must be an additive-noise mechanism (Gaussian,
    Laplace, Logistic, Subbotin) with scalar parameters; ``q`` must lie in (0, 1].

    >>> from dpexplore.mechanisms import Gaussian
    >>> m = subsample(Gaussian(1.0), 0.5)
    >>> m.epsilon(1e-5) < Gaussian(1.0).epsilon(1e-5)
    True
    >>> type(subsample(Gaussian(1.0), 0.5, sampling="fixed")).__name__
    'FixedSubsampled'
    """
    if not isinstance(sampling, str) or sampling not in SAMPLINGS:
        raise ValueError(f"sampling must be one of {', '.join(map(repr, SAMPLINGS))}, got {sampling!r}")
    if sampling == "fixed":
        return FixedSubsampled(mechanism, q)
    return PoissonSubsampled(mechanism, q)
