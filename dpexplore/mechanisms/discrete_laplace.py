"""The discrete Laplace mechanism (Canonne, Kamath & Steinke 2020): P(y) ∝ e^{−|y|/t} on the
integers, pure ε-DP with ε = Δ/t; δ(ε) and the Rényi divergence in closed form (geometric
series). Part of :mod:`dpexplore.mechanisms.discrete`."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import special

from .._numerics import (
    bracket_search,
    grow_bracket,
    log1mexp,
    pure_rdp_exact,
    up,
)
from .._validation import as_array, check_alpha, check_delta, check_nonneg, scalar_out
from ._discrete import (
    _U,
    _check_scale,
    _check_sensitivity,
    _DiscreteMechanism,
    _dlap_sample,
    _round_up_log,
    _w_expm1mx,
    _within,
)

__all__ = ["DiscreteLaplace"]


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
