"""The discrete Gaussian mechanism (Canonne, Kamath & Steinke 2020): P(y) ∝ e^{−y²/(2σ²)} on the
integers, ρ-zCDP with ρ = Δ²/(2σ²); δ(ε) by a log-space sum with a bound of the omitted tails,
the Rényi divergence through the theta function. Part of :mod:`dpexplore.mechanisms.discrete`."""

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
    log1mexp,
    up,
)
from .._validation import as_array, check_alpha, scalar_out
from ._base import _GaussianParameters
from ._discrete import (
    _BIG,
    _CHUNK,
    _CONT_MARGIN,
    _DROP,
    _GL_W,
    _GL_X,
    _LOG_2PI,
    _TABLE_SIGMA,
    _TINY,
    _check_scale,
    _check_sensitivity,
    _DiscreteMechanism,
    _dlap_sample,
    _log_geometric_tail,
    _round_up_log,
)
from .additive import Gaussian

__all__ = ["DiscreteGaussian"]

#: longest window of terms summed for one ε (beyond: Euler–Maclaurin with a remainder bound)
_MAX_WINDOW = 2**12


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
