"""Privacy profiles of subsampled runs, for :mod:`dpexplore.mechanisms.subsampled`: one direction
of the Poisson dominating pair as a privacy-loss model for :mod:`dpexplore.accounting.pld`
(:class:`_SubsampledLoss`), one run exactly (:class:`OneStepProfile`: the base's own profile at a
transformed ε), k runs at a tiny rate where at most one run sees the record
(:class:`RareEventProfile`), and the worse of the two add/remove directions (:class:`MaxProfile`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import special

from .._validation import as_array
from .._numerics import down, step_up_until_ok, up, within
from ..accounting.profiles import PrivacyProfile
from .additive import AdditiveNoiseMechanism, Gaussian


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
        # a mechanism whose δ is rounded up (the Gaussian) inverts its lower bound on δ instead
        inverse = getattr(mechanism, "_epsilon_lower", mechanism.profile._epsilon)
        x = down(np.asarray(inverse(target[use]), dtype=np.float64), "lower_eps")
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
