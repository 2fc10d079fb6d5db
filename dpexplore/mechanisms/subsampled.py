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
(pessimistic discretization: δ never below the truth).

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

import functools
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import special

from .._validation import as_array, check_alpha, scalar_out
from .._numerics import bracket_search, down, step_up_until_ok, up, within
from ..accounting.profiles import PrivacyProfile
from ._base import _PrivacyMechanism
from .additive import AdditiveNoiseMechanism, Gaussian

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


def _check_rate(q):
    arr = as_array(q, "q", allow_inf=False)
    if arr.ndim != 0:
        raise ValueError(f"q must be a single sampling rate, got {q!r}")
    v = float(arr)
    if not 0.0 < v <= 1.0:
        raise ValueError(f"q must be in (0, 1], got {q!r}")
    return v


def _check_base(mechanism):
    if not isinstance(mechanism, AdditiveNoiseMechanism):
        raise ValueError(
            f"mechanism must be an additive-noise mechanism (Gaussian, Laplace, Logistic, "
            f"Subbotin) to subsample, got {mechanism!r}"
        )
    if not mechanism._scalar_params():
        raise ValueError(f"mechanism parameters must be scalars to subsample, got {mechanism!r}")
    return mechanism


# ------------------------------------------------------------------------------------------------
# one direction of the dominating pair, as a loss model for dpexplore.accounting.pld
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _SubsampledLoss:
    """The privacy loss of one direction ("remove" or "add") of a Poisson-subsampled additive
    mechanism, or ("replace") of the symmetric dominating pair S of sampling without replacement
    under substitution: the interface :mod:`dpexplore.accounting.pld` asks of a loss model
    (``loss_support``, ``eps_max``, ``_loss_tails``). Hashable, so its PLDs are cached.

    "replace": for x ≥ 0 the tails of the remove pair R = ((1 − q)A + qB, A); below 0 its mirror
    image, P_S(L ≤ x) = Q_R(L ≥ −x) and Q_S(L ≤ x) = P_R(L ≥ −x), and an atom at 0 of mass
    1 − P_R(L > 0) − Q_R(L > 0) ≥ 0 under both (Dong, Roth & Su 2022, result “subsampling for f-DP”: the pair of
    the symmetrized trade-off function min{f_q, f_q⁻¹}**; its profile is δ_R(ε) for ε ≥ 0 and
    1 − e^ε + e^ε δ_R(−ε) below)."""

    base: object
    q: float
    direction: str
    #: :func:`dpexplore.accounting.pld.refine_start` may start this loss's grid refinement low: its
    #: two-grid powers are already close on small grids
    refine_low: ClassVar[bool] = True

    @property
    def _bounds(self):
        em = float(self.base.eps_max)
        q = self.q
        with np.errstate(over="ignore", divide="ignore"):
            lo_r = float(np.log1p(q * np.expm1(-em)))  # log(1 − q + q e^{−em})
            hi_r = float(np.log1p(q * np.expm1(em))) if np.isfinite(em) else np.inf
        return lo_r, hi_r

    @property
    def loss_support(self):
        lo_r, hi_r = self._bounds
        if self.direction == "replace":
            return (-hi_r, hi_r)
        return (lo_r, hi_r) if self.direction == "remove" else (-hi_r, -lo_r)

    @property
    def eps_max(self):
        return max(self.loss_support[1], 0.0)

    def _threshold(self, x):
        """c(x) with L > x ⟺ ℓ(y) < c (remove) or ℓ(y) > c (add): c = log q − log(e^{±x} − 1 + q)."""
        q = self.q
        s = np.asarray(x if self.direction == "remove" else -x, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            direct = np.log(np.expm1(s) + q)
            # log(e^s − (1 − q)) for s < −1/2, where expm1(s) + q cancels (q near 1: at q = 1,
            # e^{−400} − 1 + 1 was 0 and the add direction's tails were garbage beyond x ≈ 37)
            lq1 = np.log1p(-q) if q < 1.0 else -np.inf
            far = np.where(np.isneginf(s), -np.inf, s + np.log1p(-np.exp(lq1 - s)))
            # and s + log(1 − (1 − q)e^{−s}) for s > 1, where expm1(s) overflows past s ≈ 709
            big = s + np.log1p(-(1.0 - q) * np.exp(-np.maximum(s, 1.0)))
            return np.log(q) - np.where(s < -0.5, far, np.where(s > 1.0, big, direct))

    def _loss_tails(self, x):
        """log P(L > x), log P(L ≤ x), log Q(L > x), log Q(L ≤ x)."""
        x = np.asarray(x, dtype=np.float64)
        if self.direction == "replace":
            # x ≥ 0: the remove pair R itself; x < 0: its mirror image, P_S(L > x) = Q_R(L ≤ −x),
            # P_S(L ≤ x) = Q_R(L > −x), Q_S(L > x) = P_R(L ≤ −x), Q_S(L ≤ x) = P_R(L > −x)
            # (at an atom of R, ≥ and > differ: on the grid both put it on the same point)
            neg = x < 0
            sp, cp, sq, cq = _SubsampledLoss(self.base, self.q, "remove")._loss_tails(np.abs(x))
            return [np.where(neg, cq, sp), np.where(neg, sq, cp), np.where(neg, cp, sq), np.where(neg, sp, cq)]
        base, q = self.base, self.q
        em = float(base.eps_max)
        lo, hi = self.loss_support
        inside = (x > lo) & (x < hi)
        c = np.where(inside, self._threshold(np.where(inside, x, 0.0)), 0.0)
        c = np.clip(c, -np.nextafter(em, 0.0), np.nextafter(em, 0.0)) if np.isfinite(em) else c
        t = np.asarray(base.loss_inverse(np.where(np.isfinite(c), c, 0.0)), dtype=np.float64)
        d = float(base.sensitivity)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            a_sf, a_cdf = _log_sf_cdf(base, t)
            b_sf, b_cdf = _log_sf_cdf(base, t - d)
            l1q, lq = np.log1p(-q) if q < 1 else -np.inf, np.log(q)
            mix_sf = np.logaddexp(l1q + a_sf, lq + b_sf)
            mix_cdf = np.logaddexp(l1q + a_cdf, lq + b_cdf)
        if self.direction == "remove":  # L > x ⟺ y > t;  P = mixture, Q = A
            sp, cp, sq, cq = mix_sf, mix_cdf, a_sf, a_cdf
        else:  # L > x ⟺ y < t;  P = A, Q = mixture
            sp, cp, sq, cq = a_cdf, a_sf, mix_cdf, mix_sf
        above = x >= hi
        out = []
        for s_in, above_val, below_val in (
            (sp, -np.inf, 0.0),
            (cp, 0.0, -np.inf),
            (sq, -np.inf, 0.0),
            (cq, 0.0, -np.inf),
        ):
            out.append(np.where(inside, s_in, np.where(above, above_val, below_val)))
        return out


def _log_sf_cdf(base, t):
    """(log P(Z > t), log P(Z ≤ t)) of the symmetric noise Z of ``base``, with one tail evaluation:
    the smaller side s = log P(Z ≤ −|t|) (accurate in the tail), the other log1p(−e^s) (its
    complement, at least ½: no cancellation, error within an ulp of the value)."""
    t = np.asarray(t, dtype=np.float64)
    small = np.asarray(base.logcdf(-np.abs(t)), dtype=np.float64)
    big = np.log1p(-np.exp(small))
    pos = t >= 0
    return np.where(pos, small, big), np.where(pos, big, small)


# ------------------------------------------------------------------------------------------------
# one run, exactly: the base's own profile at a transformed ε
# ------------------------------------------------------------------------------------------------
class OneStepProfile(PrivacyProfile):
    """δ(ε) of one run of one direction of an additive-noise ``mechanism`` M run on a Poisson
    subsample with rate ``q``, from M's own profile δ_M (no discretization). With A the base's output distribution
    without the record, B with it (δ_{A,B} = δ_{B,A} = δ_M: symmetric noise) and ε ≥ 0:

        remove, P = (1 − q)A + qB, Q = A:   δ(ε) = q·δ_M(ε′),  ε′ = log(1 + (e^ε − 1)/q);
        add,    P = A, Q = (1 − q)A + qB:   δ(ε) = c·δ_M(ε″),  c = 1 − (1 − q)e^ε,
                                             ε″ = ε + log q − log c, for ε < −log(1 − q), else 0.

    Both follow from the hockey-stick divergence P(S) − e^ε Q(S) on the optimal set S, which is
    the base pair's optimal set at ε′ (ε″): the mixture's A-parts gather into one coefficient
    (Balle, Barthe & Gaboardi 2018, Theorem 2, advanced joint convexity; Zhu, Dong & Wang 2022,
    result “dominating pairs for Poisson subsampling”). Numerically: ε′ and ε″ are rounded down
    and c up (a smaller ε′ or ε″ gives a larger δ_M), δ_M is the base's safe log δ, and the
    resulting log δ is rounded up by 4 ulps, so δ is never below the truth (within the base's
    own guarantee). It is within 1e-10 relative of it (mpmath, from the definition), except just
    below the add direction's largest ε, −log(1 − q), where c cancels: there up to ~1e-7 above
    (q 1e-6, ε 1e-6). ε(δ): the remove direction in closed form,
    ε = log(1 + q(e^{ε_M(δ/q)} − 1)) rounded up; the add direction by the bracketing bisection
    of :class:`~dpexplore.accounting.profiles.PrivacyProfile`.

    >>> from dpexplore.mechanisms import Gaussian
    >>> p = OneStepProfile(Gaussian(1.0), 0.5, "remove")
    >>> bool(abs(p.delta(1.0) - 0.5 * Gaussian(1.0).delta(float(np.log1p(np.expm1(1.0) / 0.5)))) < 1e-15)
    True
    >>> a = OneStepProfile(Gaussian(1.0), 0.5, "add")
    >>> round(float(a.delta(0.0)), 12), round(float(p.delta(0.0)), 12)   # δ(0) = q·TV(A, B) in both
    (0.191462461274, 0.191462461274)
    """

    #: the hockey-stick divergence of one direction's pair
    pair_profile = True

    def __init__(self, mechanism, q: float, direction: str, name: str = "one run"):
        if direction not in ("remove", "add"):
            raise ValueError(f"direction must be 'remove' or 'add', got {direction!r}")
        self.mechanism, self.q, self.direction, self.name = _check_base(mechanism), _check_rate(q), direction, name
        self._base = mechanism.profile
        self.eps_max = float(_SubsampledLoss(mechanism, self.q, direction).eps_max)

    def _constructor(self):
        return f"OneStepProfile({self.mechanism!r}, {self.q!r}, {self.direction!r})"

    def _remove_eps(self, e):
        """ε′ = log(1 + (e^ε − 1)/q), rounded down (ε + log(1 − (1 − q)e^{−ε}) − log q above 1,
        where e^ε would overflow)."""
        q = self.q
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            near = np.log1p(np.expm1(np.minimum(e, 1.0)) / q)
            far = e + np.log1p(-(1.0 - q) * np.exp(-np.maximum(e, 1.0))) - np.log(q)
        ep = np.where(e <= 1.0, near, far)
        with np.errstate(invalid="ignore"):  # ε = inf: ε′ = inf (spacing(inf) is NaN)
            down = np.maximum(ep - 8 * np.spacing(np.abs(ep)) - 8 * np.spacing(np.abs(e)), 0.0)
        return np.where(np.isinf(ep), ep, down)

    def _log_delta(self, eps):
        e = np.asarray(eps, dtype=np.float64)
        q = self.q
        if self.direction == "remove":
            out = np.log(q) + self._base._log_delta_checked(self._remove_eps(e))
        else:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                l1q = np.log1p(-q) if q < 1.0 else -np.inf
                x = e + l1q  # log((1 − q)e^ε) ≤ 0 below eps_max
                slack = 4 * (
                    np.spacing(np.abs(e)) + (np.spacing(abs(l1q)) if np.isfinite(l1q) else 0.0) + np.spacing(np.abs(x))
                )
                x = np.where(np.isfinite(x), x - slack, x)  # rounded down: c rounded up
                log_c = np.log(-np.expm1(np.minimum(x, 0.0)))
                log_c = log_c + 4 * np.spacing(np.abs(log_c))
                e2 = e + np.log(q) - log_c
                e2 = np.maximum(e2 - 8 * np.spacing(np.abs(e2)) - 8 * np.spacing(np.abs(e)), 0.0)
                out = np.where(x < 0.0, log_c + self._base._log_delta_checked(np.where(x < 0.0, e2, 0.0)), -np.inf)
        out = np.asarray(out, dtype=np.float64)
        return np.where(np.isfinite(out), out + 4 * np.spacing(np.abs(out)), out)

    def _epsilon(self, delta):
        if self.direction == "add":
            return super()._epsilon(delta)
        d = np.asarray(delta, dtype=np.float64)
        q = self.q
        ratio = np.minimum(np.nextafter(d / q, 0.0), 1.0)  # δ/q rounded down: ε_M rounded up
        em = np.asarray(self._base._epsilon(ratio), dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            # log(1 + q(e^{ε_M} − 1)) as it stands while e^{ε_M} is finite; above, ε_M +
            # log(q + (1 − q)e^{−ε_M}), which cancels only near ε_M = −log q (never there: at
            # q 1e-17 and ε_M 1.2 it gave 5.5e-281 for 2.3e-17)
            near = np.log1p(q * np.expm1(np.minimum(em, 700.0)))
            far = em + np.log(q + (1.0 - q) * np.exp(-np.maximum(em, 700.0)))
        eps = np.where(em <= 700.0, near, far)
        eps = np.where(np.isfinite(eps) & (eps > 0), eps + 8 * np.spacing(eps), eps)
        eps = np.where(np.isinf(em), self.eps_max, np.minimum(eps, self.eps_max))
        # the closed form's rounding and that of δ(ε) differ by ulps: step up until the computed
        # δ(ε) itself is within the target (as the bisection's answers are)
        return step_up_until_ok(
            eps, lambda v: np.isfinite(v) & ~within(self._log_delta_checked(v), d), self.eps_max, floor=2.0**-1074
        )


# ------------------------------------------------------------------------------------------------
# k runs at a tiny rate: at most one run sees the record
# ------------------------------------------------------------------------------------------------
#: thresholds x on one run's privacy loss tried by :class:`RareEventProfile` (x ≥ 0; each gives
#: an upper bound, the least is kept)
_RARE_X = np.concatenate([[0.0], np.geomspace(1e-30, 10.0, 125)])


#: the probabilities η that the small losses' sum may exceed its Bernstein bound
#: (:func:`_bernstein_shifts`)
_RARE_ETA = 10.0 ** -np.arange(2.0, 42.0, 2.0)


def _bernstein_shifts(mu: float, q: float, k: int, xs, tails):
    """(shifts, tails) of :class:`RareEventProfile`'s candidates for a Gaussian base (μ = Δ/σ):
    for each threshold x and each η of ``_RARE_ETA``, an s with P(Σ_i L_i·1{L_i ≤ x} > s) ≤ η,
    and the tail C(k, 2)π(x)² + η. The summands Y_i = L_i·1{L_i ≤ x} are independent, at most x
    and at least log(1 − q), so Bernstein's inequality (upper tail, Y_i − E Y_i ≤ b = x −
    log(1 − q)) gives s = k·E Y + b·λ/3 + √((b·λ/3)² + 2λ·k·E Y²) with λ = log(1/η). With
    ℓ = log(dB/dA) ~ N(∓μ²/2, μ²) under A and B and L ≤ x ⟺ ℓ ≤ τ = log(1 + (e^x − 1)/q):
    E Y ≤ q·E_P[e^ℓ; ℓ ≤ τ] and E Y² ≤ q²·E_P[e^{2ℓ}; ℓ ≤ τ] + log(1 − q)² (log(1 + u) ≤ u;
    below ℓ = 0, |L| ≤ −log(1 − q)), where E_A[e^{jℓ}; ℓ ≤ τ] = e^{j(j−1)μ²/2}·Φ((τ + μ²/2 −
    jμ²)/μ) and E_B[e^{jℓ}; …] = E_A[e^{(j+1)ℓ}; …]. Rounded up; inf where a moment overflows."""
    xs = np.asarray(xs, dtype=np.float64)
    m2 = mu * mu
    lq, l1q = np.log(q), float(-np.log1p(-q))
    with np.errstate(all="ignore"):
        tau = np.log1p(np.expm1(xs) / q)

        def log_moment(j):  # log E_P[e^{jℓ}; ℓ ≤ τ], P = (1 − q)A + qB
            on_a = j * (j - 1) * m2 / 2 + special.log_ndtr((tau + m2 / 2 - j * m2) / mu)
            on_b = (j + 1) * j * m2 / 2 + special.log_ndtr((tau + m2 / 2 - (j + 1) * m2) / mu)
            return np.logaddexp(np.log1p(-q) + on_a, lq + on_b)

        mean = up(k * np.exp(lq + log_moment(1)), "rare_moment")
        second = up(np.exp(2 * lq + log_moment(2)) + l1q * l1q, "rare_moment")
        b = xs + l1q
        lam = np.log(1.0 / _RARE_ETA)
        a = b[:, None] * lam[None, :] / 3.0
        shift = up(mean[:, None] + a + np.sqrt(a * a + 2.0 * lam[None, :] * k * second[:, None]), "rare_moment")
        shift = np.maximum(shift, 0.0)
        tail = up(np.asarray(tails, dtype=np.float64)[:, None] + _RARE_ETA[None, :], "rare_tail")
    bad = ~np.isfinite(shift) | ~np.isfinite(tail)
    return np.where(bad, np.inf, shift).ravel(), np.where(bad, np.inf, tail).ravel()


def one_run_among_k(q: float, k):
    """(p₀, log c₁) for J ~ Binomial(k, q), the runs that see the record: p₀ = P(J ≥ 1) and
    c₁ = P(J = 1 | J ≥ 1) (log c₁ = −inf where it is 0, as at q = 1 and k > 1). ``k`` may be an
    array of run counts: then both are arrays of its shape.

    >>> one_run_among_k(1.0, [1, 2])
    (array([1., 1.]), array([  0., -inf]))
    """
    kf = np.asarray(k, dtype=np.float64)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        if q < 1.0:
            l1q = np.log1p(-q)
            p0 = -np.expm1(kf * l1q)
            log_c1 = np.log(kf) + np.log(q) + np.where(kf > 1, (kf - 1) * l1q, 0.0) - np.log(p0)
        else:
            p0 = np.ones(kf.shape)
            log_c1 = np.where(kf == 1, 0.0, -np.inf)
    if kf.ndim == 0:
        return float(p0), float(log_c1)
    return p0, log_c1


def one_shifted_step_lower_epsilon(mechanism, q: float, k, delta: float):
    """A lower bound on the true ε(δ) of k runs of ``mechanism`` on Poisson subsamples at rate
    q (remove direction, so of the worst case too): with J the runs that see the record,
    p₀ = P(J ≥ 1) and c₁ = P(J = 1 | J ≥ 1), δ_k(ε) = p₀·H_{γ′}(R‖Q) with γ′ = 1 + (e^ε − 1)/p₀
    (exactly), and on the sets "some run's base loss ℓ exceeds τ", H_{γ′}(R‖Q) ≥
    c₁·δ_M(log(γ′·k/c₁)), δ_M the base's profile (one run that saw the record, at an unknown
    place among k; the union over places costs at most k). A numerical answer below this bound
    is wrong (used as a check on the privacy loss distribution's). Rounded down by a relative
    1e-9; 0 where the bound says nothing. ``k`` may be an array of run counts (a curve of ε
    against training length): one vectorised inversion of δ_M for all of them.

    >>> from dpexplore.mechanisms import Gaussian
    >>> one_shifted_step_lower_epsilon(Gaussian(0.3), 1e-5, [1, 100, 10000], 1e-5).round(4)
    array([0.    , 1.3445, 5.5889])
    """
    q, d = float(q), float(delta)
    ks = np.asarray(k, dtype=np.int64)
    kf = ks.astype(np.float64)
    out = np.zeros(ks.shape)
    p0, log_c1 = (np.asarray(v, dtype=np.float64) for v in one_run_among_k(q, ks))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_target = np.log(d) - np.log(p0) - log_c1  # c₁ underflows where k·q is large
        use = np.isfinite(log_c1) & (p0 > 0.0) & (log_target < 0.0)
        if not use.any():
            return float(out) if out.ndim == 0 else out
        target = np.exp(np.where(use, log_target, 0.0))
        x = down(np.asarray(mechanism.profile._epsilon(target[use]), dtype=np.float64), "lower_eps")
        e1 = x - (np.log(kf[use]) - log_c1[use])
        p = p0[use]
        val = np.where(e1 < 700.0, np.log1p(p * np.expm1(np.minimum(e1, 700.0))), e1 + np.log(p))
        val = np.where(e1 > 0.0, np.maximum(down(val, "lower_eps"), 0.0), 0.0)
    out[use] = val
    return float(out) if out.ndim == 0 else out


def _tail_up(x):
    """A pair-union tail C(k, 2)·π² ≥ 0 rounded up by ``MARGINS["rare_tail"]``, at least to the
    smallest positive float (0 included: a bound of 0 would claim the second event impossible)."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(x > 0.0, up(x, "rare_tail"), np.nextafter(0.0, 1.0))


def rare_event_tail(q: float, k: int) -> float:
    """C(k, 2)·q², rounded up: a bound on P(J ≥ 2) for the number J ~ Binomial(k, q) of runs
    that include the record (a union bound over pairs of runs)."""
    return float(_tail_up(0.5 * k * (k - 1.0) * q * q))


class RareEventProfile(PrivacyProfile):
    """An upper bound on δ(ε) of k runs of ``mechanism`` on Poisson subsamples at rate q, tight
    where k·q is tiny (q = 1e-17 and the like, where a privacy loss distribution's error k·h
    swamps ε). For every threshold x ≥ 0 on one run's privacy loss L (remove direction),

        δ_k(ε) ≤ k·δ₁(ε − k·x) + C(k, 2)·π(x)²,    π(x) = P(L > x),

    with δ₁ the exact one-run profile (:class:`OneStepProfile`); the least over a grid of x is
    kept, and ε(δ) = min over x of k·x + ε₁((δ − C(k, 2)·π(x)²)/k). Why: δ_k(ε) =
    E_P[(1 − e^{ε − ΣL_i})_+] (the hockey-stick divergence of the product pair, the worst case of
    the composition); the runs with L_i ≤ x add at most k·x; given exactly one run above x the
    rest is one run's E_P[(1 − e^{ε − kx − L})_+; L > x] ≤ δ₁(ε − kx) times 1/π, with
    probability at most k·π; two or more runs above x have probability at most C(k, 2)π².
    For a Gaussian base the small losses' sum is also bounded by Bernstein's inequality (it
    exceeds s with probability at most η: :func:`_bernstein_shifts`), which gives candidates
    δ_k(ε) ≤ k·δ₁(ε − s) + C(k, 2)·π(x)² + η with s far below k·x.
    The add direction's loss is at most −log(1 − q) per run, so its δ is 0 from
    ε = −k·log(1 − q) on, below which this profile gives 1. Rounded to the safe side (k·x and
    π up, δ − C(k, 2)π² and its k-th part down). Loose or trivial (δ = 1) unless C(k, 2)·π² is
    below the δ asked for some x with k·x small, i.e. unless k·q is small.

    >>> from dpexplore.mechanisms import Gaussian
    >>> p = RareEventProfile(Gaussian(0.05), 1e-17, 10**6)
    >>> round(p.epsilon(1e-12), 6)     # a lower bound from first principles: 185.518521 (its test)
    185.518521
    """

    def __init__(self, mechanism, q: float, k: int):
        q = _check_rate(q)
        self.k = int(k)
        if self.k < 1:
            raise ValueError(f"k must be a positive number of runs, got {k!r}")
        self.q = q
        self.one = OneStepProfile(mechanism, q, "remove")
        loss = _SubsampledLoss(mechanism, q, "remove")
        with np.errstate(divide="ignore"):
            log_pi = np.asarray(loss._loss_tails(_RARE_X)[0], dtype=np.float64)
        pi = np.minimum(up(np.exp(log_pi), "tail_prob"), 1.0)  # P(L > x), rounded up
        self._shift = np.nextafter(self.k * _RARE_X, np.inf)  # k·x, rounded up
        self._tail = _tail_up(0.5 * self.k * (self.k - 1.0) * pi * pi)
        if isinstance(mechanism, Gaussian) and q < 1.0:  # the small losses' sum, by Bernstein
            s_b, t_b = _bernstein_shifts(
                float(mechanism.sensitivity) / float(mechanism.sigma), q, self.k, _RARE_X, self._tail
            )
            self._shift = np.concatenate([self._shift, s_b])
            self._tail = np.concatenate([self._tail, t_b])
        l1q = float(np.log1p(-q)) if q < 1.0 else -np.inf
        #: below this ε the add direction may have δ > 0: the profile gives 1 there
        self.add_max = float(np.nextafter(-self.k * l1q, np.inf)) if q < 1.0 else np.inf
        self.eps_max = np.inf
        self.name = f"{self.k}×Poisson(q={q:g}), at most one run above x"
        self._args = (mechanism, q, self.k)

    def _constructor(self):
        m, q, k = self._args
        return f"RareEventProfile({m!r}, {q!r}, {k!r})"

    def _log_delta(self, eps):
        e = np.asarray(eps, dtype=np.float64)
        flat = e.ravel()
        with np.errstate(divide="ignore", invalid="ignore"):
            shifted = np.maximum(flat[:, None] - self._shift[None, :], 0.0)
            ld1 = np.asarray(self.one._log_delta_checked(shifted), dtype=np.float64)
            terms = np.logaddexp(np.log(float(self.k)) + ld1, np.log(self._tail)[None, :])
            terms = np.where(flat[:, None] >= self._shift[None, :], terms, 0.0)  # below k·x: 1
        out = np.min(terms, axis=1)
        out = np.where(flat < self.add_max, 0.0, out)
        out = up(out, "ulps")
        return np.minimum(out, 0.0).reshape(e.shape)

    def _epsilon(self, delta):
        d = np.asarray(delta, dtype=np.float64)
        flat = d.ravel()
        rest = flat[:, None] - self._tail[None, :]
        ok = rest > 0
        share = np.where(ok, np.nextafter(np.maximum(rest, 0.0) * (1.0 - 1e-15) / self.k, 0.0), 0.0)
        e1 = np.asarray(self.one._epsilon(share.ravel()), dtype=np.float64).reshape(share.shape)
        cand = np.where(ok, e1 + self._shift[None, :], np.inf)
        cand = np.where(np.isfinite(cand), cand + 4 * np.spacing(np.abs(cand)), cand)
        out = np.maximum(np.min(cand, axis=1), self.add_max)
        return out.reshape(d.shape)


# ------------------------------------------------------------------------------------------------
# the profile of the worse direction
# ------------------------------------------------------------------------------------------------
class MaxProfile(PrivacyProfile):
    """δ(ε) = max_i δ_i(ε) and ε(δ) = max_i ε_i(δ): the profile of a mechanism whose worst case is
    the worse of several dominating pairs (the two directions of the add/remove relation).

    >>> from dpexplore.accounting.profiles import GaussianDPProfile
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
        #: the larger of exact pair profiles (both directions): its advantage is still δ(0)
        self.pair_profile = all(getattr(p, "pair_profile", False) for p in self.profiles)

    def _log_delta(self, eps):
        return np.maximum.reduce([np.asarray(p._log_delta(eps), dtype=np.float64) for p in self.profiles])

    def _epsilon(self, delta):
        return np.maximum.reduce([np.asarray(p._epsilon(delta), dtype=np.float64) for p in self.profiles])


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


def _chord(al, lo, la_lo, la_hi):
    """log A at a fractional order α on the chord between its integer neighbours ⌊α⌋, ⌈α⌉ (an
    upper bound: log A_α is convex in α)."""
    return la_lo + (al - lo) * (la_hi - la_lo)


def _rdp_by_order(a, log_a_int, log_a_frac):
    """ε̂(α) = log A_α/(α − 1) for each order in the checked array ``a``: ``log_a_int(n)`` at an
    integer order (each computed once per call: a fractional order needs both neighbours),
    ``log_a_frac(α, ⌊α⌋, log A_⌊α⌋, log A_⌈α⌉)`` between two (log A_1 = 0), inf at α = ∞; clipped
    at 0 and rounded up by 8 ulps."""
    flat = np.asarray(a, dtype=np.float64).ravel()
    out = np.empty_like(flat)
    memo: dict = {}

    def log_a(n: int) -> float:
        if n not in memo:
            memo[n] = log_a_int(n)
        return memo[n]

    for i, al in enumerate(flat):
        if np.isinf(al):
            out[i] = np.inf
            continue
        lo, hi = np.floor(al), np.ceil(al)
        if lo == hi:
            out[i] = log_a(int(al)) / (al - 1.0)
        else:
            la_lo = log_a(int(lo)) if lo >= 2 else 0.0
            out[i] = log_a_frac(al, lo, la_lo, log_a(int(hi))) / (al - 1.0)
    out = np.maximum(out, 0.0)
    fin = np.isfinite(out)
    out[fin] = out[fin] + 8 * np.spacing(out[fin])
    return scalar_out(out.reshape(np.shape(a)))


_MAX_INT_ORDER = 100_000


def _logsumexp(a) -> float:
    """log Σ e^{a_i}, as scipy.special.logsumexp for a 1-d array but without its per-call overhead
    (~0.1 ms: hundreds of calls made one DP-SGD RDP curve take ~60 ms)."""
    a = np.asarray(a, dtype=np.float64)
    if a.size == 0:
        return -np.inf
    k = int(np.argmax(a))
    m = float(a[k])
    if not np.isfinite(m):
        return m
    # m + log1p(Σ_{i≠k} e^{a_i − m}): full relative accuracy when the sum is tiny (as scipy)
    w = np.exp(a - m)
    w[k] = 0.0
    return m + float(np.log1p(np.sum(w)))


def _log_a_int(alpha: int, q: float, s2: float) -> float:
    """log A_α for an integer α ≥ 2 (Mironov, Talwar & Zhang 2019, Section 3.3), in log space."""
    if alpha > _MAX_INT_ORDER:
        raise ValueError(f"alpha must be at most {_MAX_INT_ORDER} for the subsampled Gaussian, got {alpha!r}")
    if q == 1.0:
        return (alpha * alpha - alpha) / (2.0 * s2)
    j = np.arange(alpha + 1, dtype=np.float64)
    logc = special.gammaln(alpha + 1.0) - special.gammaln(j + 1.0) - special.gammaln(alpha - j + 1.0)
    terms = logc + (alpha - j) * np.log1p(-q) + j * np.log(q) + (j * j - j) / (2.0 * s2)
    return float(_logsumexp(terms))


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
    # the terms i = 0, 1, … in blocks (numpy; the same terms, in the same order, as a loop that
    # stops at the first i past α whose larger term is below e^{−30} of the first, or at a zero
    # binomial coefficient)
    n = int(np.ceil(alpha)) + 64
    while True:
        i = np.arange(n, dtype=np.float64)
        coef = special.binom(alpha, i)
        j = alpha - i
        with np.errstate(divide="ignore"):
            lc = np.log(np.abs(coef))
        ls0 = lc + i * lq + j * l1q + (i * i - i) / (2.0 * s2) + special.log_ndtr((z0 - i) / sig)
        ls1 = lc + j * lq + i * l1q + (j * j - j) / (2.0 * s2) + special.log_ndtr((j - z0) / sig)
        top = np.maximum(ls0, ls1)
        zero = np.nonzero(coef == 0)[0]
        stop = np.nonzero((i > alpha) & (top < top[0] - 30.0))[0]
        end = min(int(zero[0]) if zero.size else n, int(stop[0]) + 1 if stop.size else n)
        if end < n or n >= 100_000:
            break
        n = min(2 * n, 100_000)
    both = np.stack([ls0[:end], ls1[:end]], axis=1).ravel()  # ls0, ls1 of each i, in turn
    sign = np.repeat(coef[:end] > 0, 2)
    pos, neg = both[sign], both[~sign]
    lp = _logsumexp(pos)
    ln = _logsumexp(neg) if neg.size else -np.inf
    if not ln < lp:
        return np.inf  # cannot happen for a valid order; inf keeps the bound safe
    # the signed sum cancels (A_α ≈ 1 near α = 1 while single terms are ~1): raise it by
    # 1e-12 of the terms' total size, far above the summation's round-off
    r = np.exp(ln - lp)
    return float(lp + np.log1p(-r + 1e-12 * (1.0 + r)))


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


#: orders up to which the forward-difference terms enter (dp_accounting's ``max_alpha``)
_WOR_FD_MAX = 256
#: relative safety factor on the moments M_n (their quadrature error is ~1e-15)
_WOR_FD_MARGIN = 1e-12
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(16)


def _log_expm1(x):
    """log(e^x − 1) for x ≥ 0 (−inf at 0), without overflow."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", over="ignore"):
        small = np.log(np.expm1(np.minimum(x, 1.0)))
        large = x + np.log(-np.expm1(-np.maximum(x, 1.0)))
    return np.where(x > 1.0, large, small)


def _log_abs_expm1(u):
    """log|e^u − 1| for any real u (−inf at 0), without overflow."""
    u = np.asarray(u, dtype=np.float64)
    with np.errstate(divide="ignore"):
        neg = np.log(-np.expm1(np.minimum(u, 0.0)))
    return np.where(u > 0, _log_expm1(np.maximum(u, 0.0)), neg)


def _log_moment_quad(n: np.ndarray, s: float) -> np.ndarray:
    """log E[(X − 1)ⁿ], X = e^{sZ − s²/2}, Z ~ N(0, 1), for even orders ``n`` (an array), by
    quadrature: the integrand φ(z)|e^{u} − 1|ⁿ, u = s(z − s/2), has one log-concave lobe on each
    side of z = s/2 (its log has second derivative ≤ −1), so each lobe lies within ±12 of its
    mode up to e^{−72} of its peak. The modes are found by bisection on u, each window is cut into
    panels of width 1/4 with 16 Gauss–Legendre nodes."""
    n = np.asarray(n, dtype=np.float64)
    z0 = 0.5 * s
    lobes = []
    for side in (1.0, -1.0):
        # the mode in u: d/dz log integrand = −z + n s e^u/(e^u − 1) (u > 0),
        # −z − n s/(e^{−u} − 1) (u < 0)
        near = 1e-6 * min(1.0, s)
        far = s * (n * s + np.sqrt(n) + 1.0) if side > 0 else s * (np.sqrt(n) + 10.0 + 1.5 * s)
        a = np.full_like(n, near)  # |u| at which the slope is positive (right) / negative (left)
        b = far.copy()

        def not_beyond(m, side=side):  # the mode lies at most |u| = m from z0
            u = side * m
            z = z0 + u / s
            with np.errstate(over="ignore"):
                slope = (-z + n * s / -np.expm1(-u)) if side > 0 else (-z - n * s / np.expm1(-u))
            return ~((slope > 0) if side > 0 else (slope < 0))

        # bisection (geometric on the right) to a relative width 1e-13; the window is centred
        # on the bracket's midpoint
        mid = (lambda lo, hi: np.sqrt(lo * hi)) if side > 0 else "arith"
        a, b = bracket_search(not_beyond, a, b, safe="hi", mid=mid, rtol=1e-13, ulps=0.0, steps=200, ends=True)
        um = side * 0.5 * (a + b)
        zm = z0 + um / s
        # the window [zm − 12, zm + 12] on this side of z0, in panels of 1/4
        if side > 0:
            lo_z, hi_z = np.maximum(z0, zm - 12.0), zm + 12.0
        else:
            lo_z, hi_z = zm - 12.0, np.minimum(z0, zm + 12.0)
        panels = 96
        edges = lo_z[:, None] + (hi_z - lo_z)[:, None] * np.linspace(0.0, 1.0, panels + 1)[None, :]
        mid = 0.5 * (edges[:, 1:] + edges[:, :-1])
        half = 0.5 * (edges[:, 1:] - edges[:, :-1])
        zz = mid[:, :, None] + half[:, :, None] * _GL_NODES[None, None, :]
        ww = half[:, :, None] * _GL_WEIGHTS[None, None, :]
        nn = n[:, None, None]
        logf = -0.5 * zz * zz + nn * _log_abs_expm1(s * (zz - z0))
        peak = -0.5 * zm * zm + n * _log_abs_expm1(um)
        with np.errstate(under="ignore"):
            tot = np.sum(ww * np.exp(logf - peak[:, None, None]), axis=(1, 2))
        lobes.append(peak + np.log(tot))
    return np.logaddexp(lobes[0], lobes[1]) - 0.5 * np.log(2.0 * np.pi)


@functools.lru_cache(maxsize=64)
def _log_moments(s2: float) -> np.ndarray:
    """log M_n for n = 0..256 (even n only are filled; odd entries are nan), M_n = E[(X − 1)ⁿ] =
    Δⁿ[e^{(ℓ−1)ℓ/(2s2)}](0), raised by the relative margin. Where the signed binomial sum does not
    cancel (its terms' total within a factor 10 of the result) it is taken directly; otherwise by
    :func:`_log_moment_quad`."""
    out = np.full(_WOR_FD_MAX + 1, np.nan)
    out[0] = 0.0
    evens = np.arange(2, _WOR_FD_MAX + 1, 2)
    if s2 == np.inf:  # no signal: X = 1
        out[evens] = -np.inf
        out.setflags(write=False)
        return out
    s = 1.0 / np.sqrt(s2)
    direct = np.empty(evens.size)
    ratio = np.empty(evens.size)
    for i, n in enumerate(evens):
        k = np.arange(n + 1, dtype=np.float64)
        lt = (
            special.gammaln(n + 1.0)
            - special.gammaln(k + 1.0)
            - special.gammaln(n - k + 1.0)
            + k * (k - 1.0) / (2.0 * s2)
        )
        lp = _logsumexp(lt[0::2])  # n even: the terms with even k are positive
        ln = _logsumexp(lt[1::2])
        r = np.exp(ln - lp)
        direct[i] = lp + np.log1p(-r) if r < 1.0 else -np.inf
        ratio[i] = np.logaddexp(lp, ln) - direct[i]
    use_quad = ~(ratio < np.log(10.0))
    out[evens] = direct
    if use_quad.any():
        out[evens[use_quad]] = _log_moment_quad(evens[use_quad], s)
    out[evens] = out[evens] + np.log1p(_WOR_FD_MARGIN)
    out.setflags(write=False)
    return out


def _log_a_wor_int(alpha: int, q: float, s2: float) -> float:
    """log A_α for an integer α ≥ 2, sampling without replacement (see :meth:`FixedSubsampled.rdp`),
    in log space."""
    if alpha > _MAX_INT_ORDER:
        raise ValueError(f"alpha must be at most {_MAX_INT_ORDER} for the subsampled Gaussian, got {alpha!r}")
    if s2 == 0.0:
        return np.inf
    if q == 1.0:
        return (alpha * alpha - alpha) / (2.0 * s2)
    e2 = 1.0 / s2
    j = np.arange(2, alpha + 1, dtype=np.float64)
    logc, logc_err = _log_binomials(alpha)
    logc, logc_err = logc[2:], logc_err[2:]
    cgf = j * (j - 1.0) / (2.0 * s2)  # (j − 1) ε(j)
    t = np.log(2.0) + cgf
    t[0] = min(np.log(4.0) + float(_log_expm1(e2)), e2 + np.log(2.0))
    if alpha <= _WOR_FD_MAX and alpha >= 3:
        lm = _log_moments(float(s2))
        jj = np.arange(3, alpha + 1)
        fd = np.log(4.0) + 0.5 * (lm[2 * (jj // 2)] + lm[2 * ((jj + 1) // 2)])
        t[1:] = np.minimum(t[1:], fd)
    terms = logc + j * np.log(q) + t
    # each log-term is a sum of parts with a few ulps of error each: raise it by a bound on that
    # error (and the log-binomials by theirs), so that the sum stays above the exact bound
    terms = (
        terms
        + logc_err
        + 8
        * np.finfo(float).eps
        * (np.abs(logc) + np.abs(j * np.log(q)) + np.abs(np.where(np.isfinite(t), t, 0.0)) + 1.0)
    )
    return float(np.logaddexp(0.0, _logsumexp(terms)))


@functools.lru_cache(maxsize=32)
def _log_binomials(alpha: int):
    """(log C(α, j) for j = 0..α, a bound on each one's absolute error). Up to α = 4096 from the
    exact integers (error: a rounding); beyond, from gammaln, whose difference of three large
    values loses up to ~16 ulps of gammaln(α + 1) (measured 6.5e-13 at α = 300)."""
    eps = np.finfo(float).eps
    if alpha <= 4096:
        row, c = [], 1
        for j in range(alpha + 1):  # C(α, j + 1) = C(α, j)(α − j)/(j + 1), exactly
            row.append(math.log(c))
            c = c * (alpha - j) // (j + 1)
        vals = np.array(row)
        err = 2 * eps * (np.abs(vals) + 1.0)
    else:
        j = np.arange(alpha + 1, dtype=np.float64)
        gj, gk = special.gammaln(j + 1.0), special.gammaln(alpha - j + 1.0)
        ga = float(special.gammaln(alpha + 1.0))
        vals = ga - gj - gk
        err = 64 * eps * (ga + gj + gk + 1.0)
    vals.setflags(write=False)
    err.setflags(write=False)
    return vals, err


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
