"""Composition: what running k differentially private mechanisms on the same data costs.

From the loosest to the tightest (Steinke 2022, Bassi 2019):

* :func:`basic` — (Σε_j, Σδ_j) (Bassi 2019, slide "Composition of several DP mechanisms"; Steinke 2022);
* :func:`advanced` — Dwork, Rothblum & Vadhan 2010 (Bassi 2019, slide "Advanced adaptive composition"):
  k-fold (ε, δ)-DP is (√(2k ln(1/δ')) ε + k ε (e^ε − 1), kδ + δ')-DP;
* :func:`advanced_pure` — from pure DP (Steinke 2022, Theorem "Advanced Composition Starting from Pure DP"):
  ε = ½ Σε_j² + √(2 log(1/δ) Σε_j²);
* :func:`optimal` — the exact optimum for k-fold (ε, δ)-DP (Kairouz, Oh & Viswanath 2015,
  Theorem 3.3; randomized response is the worst case), computed in log space;
* :func:`rdp`, :func:`zcdp`, :func:`gdp` — the additive accountants (Mironov 2017, Proposition 1; Bun & Steinke 2016, result “composition of zCDP”; Dong, Roth & Su 2022, Corollary 3.3);
* :func:`compose` — the tight profile of k runs of one concrete mechanism: exact for the Gaussian
  (√k Δ/σ-GDP) and randomized response / exponential (Kairouz, Oh & Viswanath 2015), numerical and pessimistic (privacy loss
  distribution, :mod:`dpexplore.pld`) for Laplace, Logistic and Subbotin noise;
* :func:`per_step_budget` — the inverse question: how much ε each of k steps may spend.

>>> basic([0.5, 0.5, 1.0])
(2.0, 0.0)
>>> optimal(0.1, 100, 1e-6) < advanced(0.1, 0.0, 100, 1e-6)[0] < 10.0
True
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import special

from . import mechanisms as mech_mod
from . import pld as _pld
from ._numerics import (
    MARGINS,
    bracket_search,
    down,
    gdp_epsilon_core,
    grow_bracket,
    illinois,
    log1mexp,
    log_subtract,
    up,
)
from ._validation import as_array, check_delta, check_k, check_nonneg, check_positive, scalar_out
from .conversions import RDPProfile, _rdp_eps_terms, gdp_epsilon, rdp_to_approx
from .mechanisms import Gaussian
from .mechanisms.subsampled import MaxProfile, PoissonSubsampled, RareEventProfile, one_run_among_k, subsample
from .profiles import GaussianDPProfile, PrivacyProfile

__all__ = [
    "basic",
    "advanced",
    "advanced_pure",
    "optimal",
    "optimal_log_delta",
    "OptimalProfile",
    "rdp",
    "zcdp",
    "gdp",
    "compose",
    "compose_epsilon",
    "compose_all",
    "dpsgd_epsilon",
    "dpsgd_sigma",
    "ACCOUNTANTS",
    "per_step_budget",
    "THEOREMS",
]

#: theorem names accepted by :func:`per_step_budget`
THEOREMS = ("basic", "advanced", "advanced_pure", "optimal", "zcdp")

_KOV_SDS = 40.0  # binomial terms kept: mode ± 40 standard deviations (rest bounded)
_KOV_CELLS = 2_000000  # work-array size per chunk
_BISECT = 100


# ------------------------------------------------------------------------------------------------
# closed-form theorems
# ------------------------------------------------------------------------------------------------
def basic(epsilons, deltas=0.0):
    """Basic composition: (Σ_j ε_j, Σ_j δ_j) over the LAST axis (Bassi 2019, slide "Composition of several DP mechanisms";
    Steinke 2022: "basic composition gives ε = Σε_j").

    ``deltas`` broadcasts against ``epsilons`` (a scalar δ is each mechanism's δ); the total δ is
    capped at 1. A 0-d input is one mechanism. Returns a tuple (ε, δ).

    >>> basic([1.0, 2.0], [1e-6, 1e-6])
    (3.0, 2e-06)
    >>> basic(np.full((2, 3), 0.1))[0]          # one total per row
    array([0.3, 0.3])
    """
    e = check_nonneg(epsilons, "epsilons")
    d = check_delta(deltas, "deltas")
    e, d = np.broadcast_arrays(e, d)
    if e.ndim == 0:
        return scalar_out(e), scalar_out(d)
    return scalar_out(e.sum(axis=-1)), scalar_out(np.minimum(d.sum(axis=-1), 1.0))


def advanced(eps, delta, k, delta_slack):
    """Advanced composition (Dwork, Rothblum & Vadhan 2010; Bassi 2019, slide "Advanced adaptive
    composition"): k-fold adaptive composition of (ε, δ)-DP mechanisms is (ε', kδ + δ')-DP with

        ε' = √(2k ln(1/δ')) ε + k ε (e^ε − 1),    δ' = ``delta_slack``.

    Broadcasts; ε' is rounded up by 4 ulps, kδ + δ' is capped at 1; δ' = 0 gives ε' = inf
    (except ε = 0). Returns a tuple (ε', δ_total).

    >>> e, d = advanced(0.01, 0.0, 10000, 1e-6)
    >>> round(e, 4), d
    (6.2615, 1e-06)
    """
    e = check_nonneg(eps, "eps", allow_inf=False)
    d = check_delta(delta, "delta")
    kk = check_k(k, "k").astype(np.float64)
    ds = check_delta(delta_slack, "delta_slack")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # overflow: ε' = inf
        lg = -np.log(ds)
        out = np.sqrt(2.0 * kk * lg) * e + kk * e * np.expm1(e)
    out = np.where(e == 0, 0.0, up(out, "closed"))
    return scalar_out(out), scalar_out(np.minimum(kk * d + ds, 1.0))


def advanced_pure(epsilons, delta, k=None):
    """Advanced composition starting from pure DP (Steinke 2022, Theorem "Advanced Composition Starting
    from Pure DP"): mechanisms ε_j-DP compose to (ε, δ)-DP for every δ > 0 with

        ε = ½ Σ_j ε_j² + √(2 log(1/δ) Σ_j ε_j²).

    The sum is over the LAST axis of ``epsilons``; with ``k`` given, ``epsilons`` are per-step
    values of k identical mechanisms (Σ ε_j² = k ε²) and broadcast with ``k`` and ``delta``.
    (Steinke 2022, footnote 1: with (ε_j, δ_j)-DP steps the total δ is δ + Σδ_j.) Rounded up by 4 ulps;
    δ = 0 gives inf (unless all ε_j = 0).

    >>> round(advanced_pure([0.1] * 100, 1e-6), 6)
    5.756522
    >>> round(advanced_pure(0.1, 1e-6, k=100), 9) == round(advanced_pure([0.1] * 100, 1e-6), 9)
    True
    """
    e = check_nonneg(epsilons, "epsilons", allow_inf=False)
    d = check_delta(delta, "delta")
    if k is None:
        with np.errstate(over="ignore"):  # Σ ε_j² beyond float max: ε = inf
            s2 = (e * e).sum(axis=-1) if e.ndim else e * e
    else:
        with np.errstate(over="ignore"):
            s2 = check_k(k, "k").astype(np.float64) * e * e
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 0.5 * s2 + np.sqrt(2.0 * -np.log(d) * s2)
    out = np.where(s2 == 0, 0.0, up(out, "closed"))
    return scalar_out(out)


# ------------------------------------------------------------------------------------------------
# optimal composition (Kairouz, Oh & Viswanath) in log space
# ------------------------------------------------------------------------------------------------
def _softplus(x):
    return np.logaddexp(0.0, x)


def _kl_bern(x, log_p, log_q):
    """KL(Bernoulli(x) ‖ Bernoulli(p)) with log p, log(1 − p) given."""
    return special.xlogy(x, x) - x * log_p + special.xlogy(1 - x, 1 - x) - (1 - x) * log_q


class _KOVRows:
    """Binomial terms of the KOV formula for flattened (ε, k) pairs, restricted to the window
    l ∈ [l_lo, l_hi] around the mode of Binomial(k, e^ε/(1 + e^ε)) (±40 sd, l > k/2); the
    dropped terms are bounded by Chernoff (KL) bounds, ``log_tail``, which callers add to δ."""

    def __init__(self, e: np.ndarray, k: np.ndarray):
        self.e = e
        self.k = k.astype(np.float64)
        kf = self.k
        log_p = -_softplus(-e)
        log_q = -_softplus(e)
        p = np.exp(log_p)
        sd = np.sqrt(kf * p * np.exp(log_q))
        half = np.floor(kf / 2.0) + 1.0
        lo = np.maximum(half, np.floor(kf * p - _KOV_SDS * sd) - 1.0)
        hi = np.minimum(kf, np.ceil(kf * p + _KOV_SDS * sd) + 1.0)
        hi = np.maximum(hi, lo)
        self.lo, self.hi = lo, hi
        with np.errstate(divide="ignore", invalid="ignore"):
            up = np.where(hi < kf, -kf * _kl_bern(np.minimum((hi + 1) / kf, 1.0), log_p, log_q), -np.inf)
            dn = np.where(lo > half, -kf * _kl_bern((lo - 1) / kf, log_p, log_q), -np.inf)
        self.log_tail = np.logaddexp(np.nan_to_num(up, nan=-np.inf), np.nan_to_num(dn, nan=-np.inf))
        # relative error of the log-space sums (gammaln of large arguments), added to δ
        self.log_margin = 1e-15 * (3.0 * special.gammaln(kf + 1.0) + kf * (e + _softplus(e))) + 1e-12
        self.widths = (hi - lo).astype(np.int64) + 1
        kmax = int(kf.max()) if kf.size else 0
        self._lgam = special.gammaln(np.arange(kmax + 1) + 1.0) if kmax <= 2_000000 else None

    def chunks(self):
        """Row groups (index arrays) of similar width, each with at most ~_KOV_CELLS cells."""
        order = np.argsort(self.widths, kind="stable")
        w = self.widths[order]
        start = 0
        n = order.size
        while start < n:
            w0 = w[start]
            stop = start + 1
            while stop < n and w[stop] <= 2 * w0 + 16 and (stop - start + 1) * w[stop] <= _KOV_CELLS:
                stop += 1
            yield order[start:stop]
            start = stop

    def terms(self, sl):
        """l, log[C(k,l) e^{lε}/(1+e^ε)^k], log[C(k,l) e^{(k−l)ε}/(1+e^ε)^k] (−inf outside)."""
        width = int(self.widths[sl].max())
        e = self.e[sl, None]
        k = self.k[sl, None]
        ell = self.lo[sl, None] + np.arange(width)[None, :]
        valid = ell <= self.hi[sl, None]
        ell = np.where(valid, ell, self.hi[sl, None])
        if self._lgam is not None:  # log n! from a table (k ≤ 2·10⁶)
            ki = k.astype(np.int64)
            li = ell.astype(np.int64)
            logc = self._lgam[ki] - self._lgam[li] - self._lgam[ki - li]
        else:
            logc = special.gammaln(k + 1) - special.gammaln(ell + 1) - special.gammaln(k - ell + 1)
        norm = k * _softplus(e)
        la = np.where(valid, logc + ell * e - norm, -np.inf)
        lb = np.where(valid, logc + (k - ell) * e - norm, -np.inf)
        return ell, la, lb


def _row_logsumexp(t):
    """log Σ exp over axis 1 (−inf for empty rows); leaner than scipy's for small rows."""
    m = t.max(axis=1)
    fin = np.isfinite(m)
    ms = np.where(fin, m, 0.0)
    with np.errstate(divide="ignore"):
        return np.where(fin, ms + np.log(np.exp(t - ms[:, None]).sum(axis=1)), m)


def _kov_terms_sum(eg, ell, la, ee, kk):
    """log Σ_{l: (2l−k)ε > ε_g} C(k,l)(e^{lε} − e^{ε_g+(k−l)ε})/(1+e^ε)^k over a chunk, each term
    as la + log1mexp(ε_g + (k − 2l)ε) (no cancellation)."""
    with np.errstate(invalid="ignore", over="ignore"):
        arg = np.minimum(eg + (kk - 2 * ell) * ee, 0.0)
        live = ((2 * ell - kk) * ee > eg) & np.isfinite(la)
        t = np.where(live, la + log1mexp(arg), -np.inf)
    return _row_logsumexp(t)


def _kov_log_delta(eps_g, e, k):
    """log δ(ε_g) of k-fold ε-DP (δ_each = 0), flattened inputs of equal length (KOV)."""
    rows = _KOVRows(e, k)
    out = np.empty(e.shape)
    for sl in rows.chunks():
        ell, la, _ = rows.terms(sl)
        out[sl] = _kov_terms_sum(eps_g[sl, None], ell, la, e[sl, None], rows.k[sl, None])
    out = np.logaddexp(out + rows.log_margin, rows.log_tail)
    out = np.where(np.isinf(eps_g) | (e == 0) | (eps_g >= rows.k * e), -np.inf, out)
    return np.minimum(out, 0.0)


#: the optimal composition's round-up (see :func:`_kov_epsilon`)
_OPT = MARGINS["optimal"]


def _kov_epsilon(log_r, e, k):
    """Smallest ε_g with (1 + margin)·δ(ε_g) + tail ≤ r (log r given), exact piece by piece:
    between the break points (2l − k)ε, δ(ε_g) = S1 − e^{ε_g} S2 with suffix sums S1, S2.
    The suffix-sum solve cancels ~1/(1 − e^{−2ε}) digits for tiny ε, so the result is checked
    with the term-by-term formula (each term through log1mexp) and moved up until that holds."""
    rows = _KOVRows(e, k)
    out = np.empty(e.shape)
    bad = np.zeros(e.shape, dtype=bool)
    kmax = rows.k * e
    with np.errstate(invalid="ignore", divide="ignore"):
        lr = log_subtract(log_r, np.minimum(rows.log_tail, log_r)) - rows.log_margin
    lr = np.where(rows.log_tail >= log_r, -np.inf, lr)
    for sl in rows.chunks():
        ell, la, lb = rows.terms(sl)
        ee = e[sl, None]
        kk = rows.k[sl, None]
        ls1 = np.logaddexp.accumulate(la[:, ::-1], axis=1)[:, ::-1]
        ls2 = np.logaddexp.accumulate(lb[:, ::-1], axis=1)[:, ::-1]
        n1 = np.full_like(ls1, -np.inf)
        n2 = np.full_like(ls2, -np.inf)
        n1[:, :-1] = ls1[:, 1:]
        n2[:, :-1] = ls2[:, 1:]
        bp = (2 * ell - kk) * ee  # break point of column m
        with np.errstate(invalid="ignore"):
            dcol = log_subtract(n1, np.minimum(bp + n2, n1))
        dcol = np.where(np.isfinite(la), dcol, -np.inf)
        target = lr[sl, None]
        m = np.argmax(dcol <= target, axis=1)
        r_idx = np.arange(m.size)
        s1 = ls1[r_idx, m]
        s2 = ls2[r_idx, m]
        t = target[:, 0]
        with np.errstate(invalid="ignore", divide="ignore"):
            sol = log_subtract(s1, np.minimum(t, s1)) - s2
        upper = bp[r_idx, m]
        lower = np.where(m > 0, upper - 2 * e[sl], -np.inf)
        sol = np.maximum(np.clip(np.nan_to_num(sol, nan=-np.inf), lower, upper), 0.0)
        # round up by MARGINS["optimal"], written out: up() would round the same margin up to
        # one float higher, which moves per_step_budget's Illinois search (on this ε_g) by
        # ~1e-13 relative to either side
        sol = np.where(sol > 0, sol + _OPT.rel * sol + _OPT.ulps * np.spacing(sol), 0.0)
        # r at most the bounded tail: only ε_g ≥ kε (where δ = 0 exactly) is certified
        sol = np.where(np.isneginf(t), kmax[sl], np.minimum(sol, kmax[sl]))
        sol = np.where(e[sl] == 0, 0.0, sol)
        out[sl] = sol
        # term-by-term check, reusing this chunk's binomial terms
        fwd = _kov_terms_sum(sol[:, None], ell, la, ee, kk)
        fwd = np.logaddexp(fwd + rows.log_margin[sl], rows.log_tail[sl])
        bad[sl] = (fwd > log_r[sl]) & (sol < kmax[sl]) & (e[sl] > 0)
    bump = 1e-12
    for _ in range(10):
        if not bad.any():
            break
        out = np.where(bad, np.minimum(out + bump * np.maximum(out, e), kmax), out)
        idx = np.nonzero(bad)[0]
        bad[idx] = (_kov_log_delta(out[idx], e[idx], k[idx]) > log_r[idx]) & (out[idx] < kmax[idx])
        bump *= 30.0
    return out


def _total_log_r(delta, delta_each, k):
    """log r with r = 1 − (1 − δ)/(1 − δ_each)^k: the δ(ε_g) allowed for total δ (Kairouz, Oh & Viswanath 2015, Thm 3.3);
    NaN-free, −inf where r ≤ 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.log1p(-delta) - k * np.log1p(-delta_each)
        return np.where(x >= 0, -np.inf, log1mexp(np.minimum(x, 0.0)))


def optimal_log_delta(eps_g, eps, k, delta_each=0.0):
    """log of the exact total δ at ε_g for k-fold (ε, δ_each)-DP (Kairouz, Oh & Viswanath 2015,
    Theorem 3.3):

        δ(ε_g) = (1 + e^ε)^{−k} Σ_{l : (2l − k)ε > ε_g} C(k, l) (e^{lε} − e^{ε_g} e^{(k − l)ε}),
        δ_total = 1 − (1 − δ_each)^k (1 − δ(ε_g)).

    Computed in log space (gammaln binomials, log1mexp terms) over the binomial terms within ±40
    standard deviations of the mode; the dropped terms are bounded by Chernoff's KL bound and
    added, and δ is raised by a relative 1e-12 + 1e-15·(3 log k! + k(ε + log(1 + e^ε))) against
    rounding, so the result is never below the exact value. Broadcasts over all arguments.

    >>> round(float(np.exp(optimal_log_delta(1.0, 1.0, 1))), 12)   # (e − e)/(1 + e) = 0 at ε_g = ε
    0.0
    >>> round(float(np.exp(optimal_log_delta(0.0, 1.0, 2))), 6)    # 2-fold RR(1), ε_g = 0
    0.462117
    """
    eg = check_nonneg(eps_g, "eps_g")
    e = check_nonneg(eps, "eps", allow_inf=False)
    kk = check_k(k, "k")
    de = check_delta(delta_each, "delta_each")
    eg, e, kk, de = np.broadcast_arrays(eg, e, kk, de)
    shape = eg.shape
    ld = _kov_log_delta(eg.ravel().astype(float), e.ravel().astype(float), kk.ravel())
    x = kk.ravel() * np.log1p(-de.ravel())  # log (1 − δ_each)^k
    with np.errstate(divide="ignore"):
        tot = log1mexp(np.minimum(x + log1mexp(np.minimum(ld, 0.0)), 0.0))
    tot = np.where(de.ravel() == 0, ld, tot)
    return scalar_out(tot.reshape(shape))


def optimal(eps, k, delta, delta_each=0.0):
    """Optimal composition (Kairouz, Oh & Viswanath 2015, Theorem 3.3): the smallest ε_g such that
    k-fold adaptive composition of (ε, δ_each)-DP mechanisms is (ε_g, ``delta``)-DP, where

        δ(ε_g) = (1 + e^ε)^{−k} Σ_{l : (2l − k)ε > ε_g} C(k, l) (e^{lε} − e^{ε_g} e^{(k − l)ε})

    must satisfy 1 − (1 − δ_each)^k (1 − δ(ε_g)) ≤ ``delta``. δ is e^{ε_g}-affine between the
    break points (2l − k)ε, so ε_g is solved exactly on the right piece from log-space suffix sums
    (no bisection; O(√k) binomial terms per value, works for k = 10⁶), then checked with the
    term-by-term formula of :func:`optimal_log_delta` and moved up until that holds. Rounded up by
    a relative 1e-12 (up to ~1e-9 for ε ≲ 1e-6, where the piecewise solve cancels digits). Returns inf when
    1 − (1 − δ_each)^k > ``delta`` (no ε_g suffices), and at most kε (basic composition).
    Broadcasts over all arguments.

    >>> round(optimal(0.1, 100, 1e-6), 6)         # basic: 10, advanced_pure: 5.7565
    4.774568
    >>> optimal(1.0, 10, 0.0)                         # δ = 0: nothing better than basic
    10.0
    """
    e = check_nonneg(eps, "eps", allow_inf=False)
    kk = check_k(k, "k")
    d = check_delta(delta, "delta")
    de = check_delta(delta_each, "delta_each")
    e, kk, d, de = np.broadcast_arrays(e, kk, d, de)
    shape = e.shape
    e, kk, d, de = (a.ravel() for a in (e, kk, d, de))
    log_r = _total_log_r(d, de, kk.astype(float))
    impossible = (d < -np.expm1(kk * np.log1p(-de))) & (de > 0)
    out = _kov_epsilon(log_r, e.astype(float), kk)
    out = np.where(impossible, np.inf, out)
    # final guard: the total δ at the answer, term by term; where it exceeds ``delta`` (seen for
    # ε = 1e-22, k = 1e5: ε_g = 2e-21 with δ = 1e-20 against a target of 1e-49) fall back to
    # basic composition kε, where δ(ε_g) = 0 and the total is 1 − (1 − δ_each)^k ≤ delta
    fin = np.isfinite(out)
    if fin.any():
        ld = np.asarray(optimal_log_delta(out[fin], e[fin], kk[fin], de[fin]), dtype=float)
        with np.errstate(divide="ignore"):
            bad = (ld > np.log(d[fin])) | (np.exp(ld) > d[fin])
        if bad.any():
            idx = np.flatnonzero(fin)[bad]
            out[idx] = up(kk[idx] * e[idx], "closed")
    return scalar_out(out.reshape(shape))


class OptimalProfile(PrivacyProfile):
    """The exact profile of k-fold (ε, δ_each)-DP composition, δ_total(ε_g) of
    :func:`optimal_log_delta` (Kairouz, Oh & Viswanath 2015, Theorem 3.3); also the exact profile
    of k runs of randomized response RR(ε). ``epsilon`` is :func:`optimal` (exact, no bisection).

    >>> p = OptimalProfile(1.0, 10)
    >>> p.epsilon(1e-6) == optimal(1.0, 10, 1e-6), p.eps_max
    (True, 10.0)
    """

    def __init__(self, eps: float, k: int, delta_each: float = 0.0):
        e = check_nonneg(eps, "eps", allow_inf=False)
        kk = check_k(k, "k")
        de = check_delta(delta_each, "delta_each")
        if e.ndim or kk.ndim or de.ndim:
            raise ValueError(f"eps, k and delta_each must be scalars for a profile, got {eps!r}, {k!r}, {delta_each!r}")
        self.eps, self.k, self.delta_each = float(e), int(kk), float(de)
        self.eps_max = self.k * self.eps if self.delta_each == 0 else np.inf
        self.name = f"{self.k}×({self.eps:g}, {self.delta_each:g})-DP, optimal"

    def _constructor(self):
        return f"OptimalProfile(eps={self.eps!r}, k={self.k!r}, delta_each={self.delta_each!r})"

    def _log_delta(self, eps):
        return np.asarray(optimal_log_delta(eps, self.eps, self.k, self.delta_each), dtype=float)

    def _epsilon(self, delta):
        return np.asarray(optimal(self.eps, self.k, delta, self.delta_each), dtype=float)


# ------------------------------------------------------------------------------------------------
# additive accountants
# ------------------------------------------------------------------------------------------------
def rdp(rdp_curves, k=1):
    """Rényi-DP composition is additive (Mironov 2017, Proposition 1): the composition of
    mechanisms with RDP curves ε̂_j(α) has ε̂(α) = Σ_j ε̂_j(α).

    ``rdp_curves`` has the mechanisms on AXIS 0 (row j = ε̂_j on a common grid of orders); the
    result is k · Σ_j rows (k broadcasts against the remaining axes). A single curve repeated k
    times is ``rdp([curve], k)`` (a 1-d input is summed: it is read as mechanisms at one order).

    >>> np.round(rdp([[0.5, 1.0], [0.25, 0.5]]), 12)
    array([0.75, 1.5 ])
    >>> np.round(rdp([[0.5, 1.0]], k=10), 12)
    array([ 5., 10.])
    """
    r = check_nonneg(rdp_curves, "rdp_curves")
    kk = check_k(k, "k")
    s = r.sum(axis=0) if r.ndim else r
    with np.errstate(over="ignore"):  # beyond float max: inf (still valid)
        return scalar_out(up(kk * s, "closed"))


def zcdp(rhos, k=1):
    """zCDP composition is additive (Bun & Steinke 2016, result “composition of zCDP”): ρ = k · Σ_j ρ_j,
    summed over the LAST axis (a 0-d input is one mechanism).

    >>> round(zcdp([0.1, 0.2]), 12), round(zcdp(0.5, k=4), 12)
    (0.3, 2.0)
    """
    r = check_nonneg(rhos, "rhos")
    kk = check_k(k, "k")
    s = r.sum(axis=-1) if r.ndim else r
    with np.errstate(over="ignore"):  # beyond float max: inf (still valid)
        return scalar_out(up(kk * s, "closed"))


def gdp(mus, k=1):
    """Gaussian-DP composition (Dong, Roth & Su 2022, Corollary 3.3; Liu et al. 2022): μ = √(k Σ_j μ_j²),
    summed over the LAST axis (a 0-d input is one mechanism). Rounded up by 4 ulps.

    >>> round(gdp([0.3, 0.4]), 12), round(gdp(1.0, k=4), 12)
    (0.5, 2.0)
    """
    m = check_nonneg(mus, "mus")
    kk = check_k(k, "k")
    # √k ‖μ‖₂ with the norm scaled by max μ_j, so that subnormal μ (μ² = 0) and huge μ
    # (μ² = inf) are not lost
    mm = m if m.ndim else m[None]
    top = np.max(mm, axis=-1, initial=0.0)
    with np.errstate(invalid="ignore", over="ignore"):
        safe = np.where((top > 0) & np.isfinite(top), top, 1.0)
        r = mm / safe[..., None]
        norm = np.where(np.isfinite(top), top * np.sqrt((r * r).sum(axis=-1)), np.inf)
        out = np.where(top > 0, np.sqrt(kk.astype(np.float64)) * norm, 0.0)
    return scalar_out(up(out, "closed"))


# ------------------------------------------------------------------------------------------------
# tight composition of one mechanism
# ------------------------------------------------------------------------------------------------
class _PureDPPLDProfile(_pld.PLDProfile):
    """The PLD profile of k runs of an eps_max-DP additive mechanism (Laplace, Logistic), capped
    by the KOV profile of k-fold eps_max-DP (Kairouz, Oh & Viswanath 2015, Theorem 3.3): both are
    upper bounds of the true δ, so their minimum is too. The cap only matters where the numerical
    PLD is loose (δ below its truncation/round-off floor, or near k·eps_max).

    >>> from dpexplore.mechanisms import Laplace
    >>> p = compose(Laplace(1.0), 5)
    >>> p.epsilon(1e-6) <= optimal(1.0, 5, 1e-6)
    True
    """

    def __init__(self, pld, eps0: float, k: int, name: str):
        super().__init__(pld, name=name)
        self.eps0, self.k = eps0, k

    def _log_delta(self, eps):
        return np.minimum(
            self.pld._log_delta(eps), _kov_log_delta(*_flat(eps, self.eps0, self.k)).reshape(np.shape(eps))
        )

    def _epsilon(self, delta):
        delta = np.asarray(delta, dtype=np.float64)
        d, e, k = _flat(delta, self.eps0, self.k)
        with np.errstate(divide="ignore"):
            kov = _kov_epsilon(np.log(d), e, k).reshape(delta.shape)
        return np.minimum(self.pld._epsilon(delta), kov)


def _flat(x, eps0, k):
    """Flattened (x, ε₀, k) arrays of x's size for the private KOV kernels."""
    x = np.asarray(x, dtype=np.float64).ravel()
    return x, np.full(x.shape, float(eps0)), np.full(x.shape, int(k), dtype=np.int64)


#: where a single FFT power's round-off term (``DiscretePLD.extra``, added to δ: up to ~1e-11 at
#: 10⁴ runs) exceeds this share of the δ asked, :class:`_RefinedProfile` also composes by
#: tilted products (:func:`dpexplore.pld.composed_pld_many` with ``tilted=True``), whose round-off
#: stays relative to the tail: Laplace(1), 10⁴ runs, δ 1e-12 gave 5236 (the truth is ~4242)
_NOISE_SHARE = 1e-2


class _RefinedProfile(_pld.PLDProfile):
    """A numerical (PLD) profile whose grid is chosen from the error target at each ε query.

    ``build(n)`` gives the pessimistic profile composed on a grid of n points (never below the
    true δ). ``epsilon(δ)`` refines the grid (n, 4n, 16n, … up to
    :data:`dpexplore.pld.REFINE_MAX_GRID`) until the ε of two successive grids agree to a quarter
    of max(1e-2·ε, 1e-3) (:func:`dpexplore.pld.refine_epsilon`), so the ε it returns is within
    ~1 % (or 1e-3) of the true ε and never below it. ``delta(ε)`` is the smallest δ of the grids built so
    far (first the default one). Where the largest grid is reached without that agreement the
    returned ε is still an upper bound, and ``uncertified`` (a set of δ) records it."""

    def __init__(self, build, grid_size: int, name: str, build_tilted=None):
        self._build = build
        self._build_tilted = build_tilted
        self._cache = {}
        self._n = int(grid_size)
        self.uncertified = set()
        first = self._get(self._n)
        self.eps_max = first.eps_max
        self.name = name

    def _get(self, n: int):
        if n not in self._cache:
            self._cache[n] = self._build(n)
        return self._cache[n]

    def epsilon_upper(self, delta):
        """An upper bound of ε(δ) from the grids built so far, without refining (cheap, but not
        held to the accuracy target: for a plot's range, say)."""
        return np.minimum.reduce(
            [
                np.asarray(p._epsilon(np.asarray(delta, dtype=np.float64)), dtype=np.float64)
                for p in self._cache.values()
            ]
        )

    def _eps_on(self, n: int, delta):
        """ε on the grid n: from ``build(n)``, and where that PLD's round-off term (added to δ)
        exceeds 1 % of the smallest δ asked, also from ``build_tilted(n)`` (the smaller of the two:
        both are upper bounds)."""
        fast = np.asarray(self._get(n)._epsilon(delta), dtype=np.float64)
        if self._build_tilted is None:
            return fast
        extra = float(getattr(self._get(n).pld, "extra", 0.0))
        if not extra > _NOISE_SHARE * float(np.min(delta)):
            return fast
        key = ("tilted", n)
        if key not in self._cache:
            self._cache[key] = self._build_tilted(n)
        return np.minimum(fast, np.asarray(self._cache[key]._epsilon(delta), dtype=np.float64))

    @property
    def current(self) -> PrivacyProfile:
        """The profile on the finest grid built so far."""
        return self._get(max(n for n in self._cache if isinstance(n, int)))

    @property
    def pld(self):
        """The discrete PLD on the finest grid built so far."""
        return self.current.pld

    def _log_delta(self, eps):
        # every grid's δ is an upper bound: their minimum is one too, and it is the δ that the
        # ε of :meth:`_epsilon` (the minimum over the grids) answers to
        return np.minimum.reduce([np.asarray(p._log_delta(eps), dtype=np.float64) for p in self._cache.values()])

    def _epsilon(self, delta):
        delta = np.asarray(delta, dtype=np.float64)
        eps, ok, n = _pld.refine_epsilon(lambda m: self._eps_on(m, delta), self._n)
        if not np.all(ok):
            bad = np.atleast_1d(delta)[~np.atleast_1d(ok)]
            self.uncertified.update(float(d) for d in bad)
            _pld.warn_unconverged(self.name, bad)
        return np.minimum(eps, self.eps_max)


# ------------------------------------------------------------------------------------------------
# (compose)
# ------------------------------------------------------------------------------------------------
def compose(mechanism, k, *, grid_size: int | None = None) -> PrivacyProfile:
    """The tight privacy profile of k runs of ``mechanism`` (non-adaptive or adaptive; the
    worst-case pair of every mechanism below is fixed, so the composition theorem is exact):

    * ``Gaussian(σ, Δ)`` — exact: √k Δ/σ-GDP (Dong, Roth & Su 2022, Corollary 3.3; Liu et al. 2022), a
      :class:`~dpexplore.profiles.GaussianDPProfile`;
    * ``RandomizedResponse(ε)`` — exact: :class:`OptimalProfile` (Kairouz, Oh & Viswanath 2015,
      Theorem 3.3; its privacy loss takes the values ±ε); ``Exponential(ε)`` — the same pure-DP
      worst case (an upper bound for any score function);
    * ``Laplace``, ``Logistic``, ``Subbotin`` — numerical: the k-fold privacy loss distribution
      (:func:`dpexplore.pld.composed_pld`: pessimistic connect-the-dots discretization, FFT
      power, truncated mass bounded and added), a :class:`~dpexplore.pld.PLDProfile` whose δ is
      never below the true δ and whose ε exceeds the true ε(δ) by at most k·h (grid spacing h,
      :func:`dpexplore.pld.composed_pld`); measured: Laplace(1), k = 1000, ε(1e-6) within 1e-5
      relative of dp_accounting's, ~20 ms cold. Without ``grid_size`` the grid is chosen from
      the error target at each ε query (refined until ε is within ~1 % or 1e-3 of the truth:
      :func:`dpexplore.pld.refine_epsilon`); ``grid_size`` fixes the FFT size instead.

    For the pure-DP additive mechanisms (finite eps_max: Laplace, Logistic) the PLD profile is
    capped by the KOV profile of k-fold eps_max-DP (both are upper bounds, so the minimum is one);
    the cap only acts where the PLD is loose (below its ~1e-15 floor, or near k·eps_max).
    k = 1 returns the mechanism's own exact profile. The composed PLD is computed once per
    (mechanism, k) and cached; mechanism parameters must be scalars.

    >>> from dpexplore.mechanisms import Gaussian, Laplace
    >>> round(compose(Gaussian(10.0), 100).epsilon(1e-5), 6) == round(GaussianDPProfile(1.0).epsilon(1e-5), 6)
    True
    >>> p = compose(Laplace(1.0), 10)
    >>> p.eps_max, p.delta(10.0), 0.04 < p.delta(7.0) < 0.05
    (10.0, 0.0, True)
    """
    kk = check_k(k, "k")
    if kk.ndim != 0:
        raise ValueError(f"k must be a single integer for a profile, got {k!r}")
    k = int(kk)
    try:
        hash(mechanism)
    except TypeError as exc:
        raise ValueError(f"mechanism parameters must be scalars to compose, got {mechanism!r}") from exc
    return _built_by(_compose(mechanism, k, grid_size), ((mechanism, k),), f"compose({mechanism!r}, {k!r})")


def compose_epsilon(mechanism, k, delta):
    """ε(δ) of :func:`compose` (``mechanism``, k) for an array of k (broadcast with ``delta``): the
    same numbers as ``compose(mechanism, k).epsilon(delta)`` one k at a time, vectorized where the
    profile has a closed form —

    * ``Gaussian(σ, Δ)``: ε of √k Δ/σ-GDP (Dong, Roth & Su 2022, Corollary 3.3), the safeguarded
      Newton inverse of :func:`dpexplore.conversions.gdp_epsilon` (its safe side), also at k = 1;
    * ``RandomizedResponse(ε)``, ``Exponential(ε)``: :func:`optimal` (ε, k, δ) (Kairouz, Oh &
      Viswanath 2015, Theorem 3.3), the function :class:`OptimalProfile` calls;
    * the others: one composed profile per distinct k (cached by :func:`compose`), whose ε is
      never below the true ε(δ) (pure-DP additive mechanisms capped by the KOV bound).

    >>> from dpexplore.mechanisms import Gaussian, Laplace
    >>> e = compose_epsilon(Gaussian(10.0), [1, 100], 1e-5)
    >>> round(float(e[1]), 6) == round(compose(Gaussian(10.0), 100).epsilon(1e-5), 6)
    True
    >>> compose_epsilon(Laplace(1.0), [1, 2], 0.0).tolist()       # pure DP: δ = 0 at k·ε
    [1.0, 2.0]
    """
    kk = check_k(k, "k")
    d = check_delta(delta, "delta")
    try:
        hash(mechanism)
    except TypeError as exc:
        raise ValueError(f"mechanism parameters must be scalars to compose, got {mechanism!r}") from exc
    kk, d = np.broadcast_arrays(kk, d)
    if isinstance(mechanism, mech_mod.Gaussian):
        mu = float(mechanism.sensitivity) / float(mechanism.sigma)
        return scalar_out(gdp_epsilon_core(np.sqrt(kk.astype(np.float64)) * mu, d))
    if isinstance(mechanism, (mech_mod.RandomizedResponse, mech_mod.Exponential)):
        return optimal(float(mechanism.eps), kk, d)
    out = np.empty(kk.shape, dtype=np.float64)
    for n in np.unique(kk):
        at = kk == n
        out[at] = np.asarray(compose(mechanism, int(n)).epsilon(d[at]), dtype=np.float64)
    return scalar_out(out)


def _built_by(prof, parts, call):
    """Record on a composed profile what it is made of (its card lists the parts and sums
    their RDP and zCDP) and the call that built it (its repr, so that "Reproduce in Python"
    can show it)."""
    prof._parts = tuple(parts)
    prof._call = call
    return prof


def _pld_above_lower_bound(prof, mechanism, k: int) -> bool:
    """Whether the composed profile's δ(ε) stays above a lower bound on the true δ on a grid of
    ε (one run that saw the record, at an unknown place among k:
    :func:`~dpexplore.mechanisms.subsampled.one_shifted_step_lower_epsilon`'s bound,
    δ_k(ε) ≥ p₀c₁·δ_M(log(γ′k/c₁))). A PLD below it lost mass, and is not an upper bound."""
    q, base = float(mechanism.q), mechanism.mechanism
    if q >= 1.0:
        return True
    p0, log_c1 = one_run_among_k(q, k)
    hi = _dpsgd_rdp_epsilon(float(base.sigma) / float(base.sensitivity), q, k, 1e-12)  # cheap, above
    eps = np.unique(np.concatenate([np.geomspace(1e-6, 1.0, 25), np.linspace(0.0, min(hi, 1e4), 65)]))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        log_g = np.where(eps < 700.0, np.log1p(np.expm1(np.minimum(eps, 700.0)) / p0), eps - np.log(p0))
        arg = log_g + np.log(k) - log_c1
        lb = np.log(p0) + log_c1 + np.asarray(base.profile._log_delta_checked(np.maximum(arg, 0.0)))
        ours = np.asarray(prof._log_delta_checked(eps), dtype=np.float64)
        bad = (arg >= 0.0) & np.isfinite(lb) & (ours < lb - 1e-9 * np.abs(lb) - 1e-12)
    return not bool(np.any(bad))


#: k·q up to which compose() of a Poisson-subsampled mechanism also takes the rare-event bound
#: (:class:`~dpexplore.mechanisms.subsampled.RareEventProfile`; above, its tail C(k, 2)·q² nears
#: the δ asked and the PLD is the tighter)
_RARE_RATE = 1e-4


class _LeastOfProfiles(PrivacyProfile):
    """The least of several upper bounds on one profile: δ(ε) = min_i δ_i(ε) and ε(δ) =
    min_i ε_i(δ), each an upper bound on the truth when every δ_i is."""

    def __init__(self, profiles, name: str):
        self.profiles = list(profiles)
        self.eps_max = min(float(p.eps_max) for p in self.profiles)
        self.name = name

    def _log_delta(self, eps):
        return np.minimum.reduce([np.asarray(p._log_delta_checked(eps), dtype=np.float64) for p in self.profiles])

    def _epsilon(self, delta):
        return np.minimum.reduce([np.asarray(p._epsilon(delta), dtype=np.float64) for p in self.profiles])


def _compose(mechanism, k: int, grid_size):
    label = getattr(mechanism, "_label", lambda: repr(mechanism))()
    if isinstance(mechanism, mech_mod.Gaussian):
        mu = float(mechanism.sensitivity) / float(mechanism.sigma)
        prof = GaussianDPProfile(np.sqrt(k) * mu)
        prof.name = f"{k}×{label}"
        return prof
    if isinstance(mechanism, (mech_mod.RandomizedResponse, mech_mod.Exponential)):
        prof = OptimalProfile(float(mechanism.eps), k)
        prof.name = f"{k}×{label}"
        return prof
    if isinstance(mechanism, PoissonSubsampled):
        prof = _compose_all([(mechanism, k)], grid_size)
        if (
            k > 1
            and isinstance(mechanism.mechanism, mech_mod.Gaussian)
            and not isinstance(mechanism, mech_mod.subsampled.FixedSubsampled)
            and not _pld_above_lower_bound(prof, mechanism, k)
        ):
            # the PLD lost mass: the other upper bounds answer instead. A check that should
            # not fire: it caught the tilted FFT products losing the rare large losses (σ 0.3,
            # q 1e-5, 100 runs: ε(1e-5) 0.001 where the truth is 1.3465; fixed in
            # :func:`dpexplore.pld._convolve`, which merges tilts)
            import warnings

            warnings.warn(
                f"compose({mechanism!r}, {k}): the privacy loss distribution's δ(ε) falls "
                "below a lower bound on the true δ; the Rényi DP and rare-event bounds "
                "answer instead",
                _pld.AccuracyWarning,
                stacklevel=3,
            )
            orders = np.concatenate([np.linspace(1.05, 10.95, 100), np.arange(11.0, 64.0), 2.0 ** np.arange(6, 11)])
            rdp = RDPProfile(orders, k * np.asarray(mechanism.rdp(orders), dtype=np.float64))
            return _LeastOfProfiles([rdp, RareEventProfile(mechanism.mechanism, mechanism.q, k)], name=prof.name)
        if k > 1 and k * mechanism.q <= _RARE_RATE and not isinstance(mechanism, mech_mod.subsampled.FixedSubsampled):
            # the PLD's error k·h swamps a tiny rate's ε (σ 0.05, q 1e-17, 10⁶ runs, δ 1e-12:
            # 9.9e6 where the truth is 185.52): the rare-event bound holds it at the truth
            rare = RareEventProfile(mechanism.mechanism, mechanism.q, k)
            prof = _LeastOfProfiles([prof, rare], name=prof.name)
        return prof
    if isinstance(mechanism, (mech_mod.DiscreteLaplace, mech_mod.DiscreteGaussian)):
        if k == 1:
            return mechanism.profile
        return _compose_all([(mechanism, k)], grid_size)
    if isinstance(mechanism, mech_mod.AdditiveNoiseMechanism):
        if k == 1:
            return mechanism.profile

        def profile_of(pld):
            if np.isfinite(float(mechanism.eps_max)):
                return _PureDPPLDProfile(pld, float(mechanism.eps_max), k, name=f"{k}×{label}")
            return _pld.PLDProfile(pld, name=f"{k}×{label}")

        def build(n):
            return profile_of(_pld.composed_pld(mechanism, k, grid_size=n))

        def build_tilted(n):
            return profile_of(_pld.composed_pld_many([(mechanism, k)], grid_size=n, tilted=True))

        if grid_size is not None:
            return build(grid_size)
        return _RefinedProfile(build, _pld.default_grid_size(k), name=f"{k}×{label}", build_tilted=build_tilted)
    raise ValueError(f"mechanism must be one of dpexplore.mechanisms' mechanisms, got {mechanism!r}")


# ------------------------------------------------------------------------------------------------
# mixed compositions
# ------------------------------------------------------------------------------------------------
class _AtomLoss:
    """The privacy loss of an ε-DP randomized response, ±ε with P(L = ε) = e^ε/(1 + e^ε), as a loss
    model for :mod:`dpexplore.pld` (the worst case of every ε-DP mechanism: Kairouz, Oh &
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


def _check_items(items):
    try:
        pairs = [tuple(it) for it in items]
    except TypeError as exc:
        raise ValueError(f"items must be a sequence of (mechanism, k) pairs, got {items!r}") from exc
    if not pairs or any(len(p) != 2 for p in pairs):
        raise ValueError(f"items must be a non-empty sequence of (mechanism, k) pairs, got {items!r}")
    out = []
    for m, k in pairs:
        kk = check_k(k, "k")
        if kk.ndim != 0:
            raise ValueError(f"k must be a single integer in each pair, got {k!r}")
        try:
            hash(m)
        except TypeError as exc:
            raise ValueError(f"mechanism parameters must be scalars to compose, got {m!r}") from exc
        out.append((m, int(kk)))
    return out


def compose_all(items, *, grid_size: int | None = None) -> PrivacyProfile:
    """The tight privacy profile of a mixed composition: ``items`` = [(mechanism, k), …], k runs
    of each (any order, adaptively chosen or not: each mechanism's worst-case pair is fixed).

    * only Gaussians: exact, √(Σ k_i (Δ_i/σ_i)²)-GDP (Dong, Roth & Su 2022, Corollary 3.3);
    * otherwise the privacy loss distribution of the sum of all losses (Koskela, Jälkö & Honkela
      2020; Doroshenko et al. 2022 connect-the-dots, :func:`dpexplore.pld.composed_pld_many`):
      δ never below the truth, ε̂(δ) ≤ ε(δ) + (Σk_i)·h. Randomized response and the exponential
      mechanism enter as their worst case, the ±ε loss of ε-DP randomized response (Kairouz, Oh &
      Viswanath 2015). With a Poisson-subsampled mechanism (:func:`dpexplore.mechanisms.subsample`)
      both directions of the add/remove relation are composed and the worse is taken (Zhu, Dong
      & Wang 2022): δ(ε) = max(δ_remove(ε), δ_add(ε)).

    >>> from dpexplore.mechanisms import Gaussian, Laplace
    >>> round(compose_all([(Gaussian(1.0), 3), (Gaussian(2.0), 4)]).mu, 12)   # √(3 + 4/4)
    2.0
    >>> p = compose_all([(Laplace(1.0), 2), (Gaussian(4.0), 10)])
    >>> 2.0 < p.epsilon(1e-6) < 6.0
    True
    """
    pairs = _check_items(items)
    call = "compose_all([" + ", ".join(f"({m!r}, {k!r})" for m, k in pairs) + "])"
    return _built_by(_compose_all(pairs, grid_size), pairs, call)


def _compose_all(pairs, grid_size):
    if all(isinstance(m, mech_mod.Gaussian) for m, _ in pairs):
        mu2 = sum(k * (float(m.sensitivity) / float(m.sigma)) ** 2 for m, k in pairs)
        prof = GaussianDPProfile(float(np.sqrt(mu2)))
        prof.name = " + ".join(f"{k}×{m._label()}" for m, k in pairs)
        return prof
    label = " + ".join(f"{k}×{getattr(m, '_label', lambda m=m: repr(m))()}" for m, k in pairs)

    def loss(m, direction):
        if isinstance(m, PoissonSubsampled):
            return m._directions()[0 if direction == "remove" else 1]
        if isinstance(m, (mech_mod.RandomizedResponse, mech_mod.Exponential)):
            return _AtomLoss(float(m.eps))
        if isinstance(m, (mech_mod.AdditiveNoiseMechanism, mech_mod.DiscreteLaplace, mech_mod.DiscreteGaussian)):
            return m  # the discrete ones give their loss tails themselves (lattice losses)
        raise ValueError(f"mechanism must be one of dpexplore.mechanisms' mechanisms or a subsampled one, got {m!r}")

    directions = ("remove", "add") if any(isinstance(m, PoissonSubsampled) for m, _ in pairs) else ("remove",)
    profiles = []
    for direction in directions:
        items = [(loss(m, direction), k) for m, k in pairs]

        def build(n, items=items, direction=direction):
            return _pld.PLDProfile(_pld.composed_pld_many(items, grid_size=n), name=f"{label} ({direction})")

        if grid_size is not None:
            profiles.append(build(grid_size))
        else:
            n0 = _pld.refine_start(items)
            profiles.append(_RefinedProfile(build, n0, name=f"{label} ({direction})"))
    if len(profiles) == 1:
        profiles[0].name = label
        return profiles[0]
    if grid_size is None:
        return _Directions(profiles, name=label)
    return MaxProfile(profiles, name=label)


class _Directions(MaxProfile):
    """The remove and add directions of a composition with Poisson-subsampled runs, each a
    :class:`_RefinedProfile`: ε(δ) is the larger of the two. The add direction is usually far
    below (DP-SGD: 5.6 against 6.19 at σ 1, q 0.01, 10⁴ steps), so its ε is first read off the
    grids it has (an upper bound, without refining); only where that exceeds the remove
    direction's refined ε is it refined as well — as :func:`dpsgd_epsilon` does. Where it does
    not, the larger is the remove direction's ε, within the target of the truth (the true
    maximum is at least the remove direction's true ε), and the add direction's grid need not
    converge (σ 0.15, q 2e-7, 52205 steps, δ 8.9e-4 warned that it had not, for an ε it did not
    set)."""

    def _epsilon(self, delta):
        remove, add = self.profiles
        d = np.atleast_1d(np.asarray(delta, dtype=np.float64))
        e_rem = np.atleast_1d(np.asarray(remove._epsilon(d), dtype=np.float64))
        e_add = np.atleast_1d(np.asarray(add.epsilon_upper(d), dtype=np.float64))
        need = e_add > e_rem
        if np.any(need):
            e_add[need] = np.minimum(e_add[need], np.asarray(add._epsilon(d[need]), dtype=np.float64))
        out = np.maximum(e_rem, e_add)
        return out.reshape(np.shape(delta)) if np.ndim(delta) else out[0]


# ------------------------------------------------------------------------------------------------
# DP-SGD
# ------------------------------------------------------------------------------------------------
#: accountants accepted by :func:`dpsgd_epsilon` and :func:`dpsgd_sigma`
ACCOUNTANTS = ("pld", "rdp", "gdp")
#: Rényi orders used by the "rdp" accountant (dp_accounting's default set)
RDP_ORDERS = np.concatenate(
    [1.0 + np.arange(1, 100) / 10.0, np.arange(11, 64).astype(float), [64.0, 128.0, 256.0, 512.0]]
)


def _check_dpsgd(sigma, q, steps, delta, accountant):
    if not isinstance(accountant, str) or accountant not in ACCOUNTANTS:
        raise ValueError(f"accountant must be one of 'pld', 'rdp', 'gdp', got {accountant!r}")

    s = check_positive(sigma, "sigma", allow_inf=False)
    if s.ndim:
        raise ValueError(f"sigma must be a single noise multiplier, got {sigma!r}")
    qa = as_array(q, "q", allow_inf=False)
    if qa.ndim or not 0.0 < float(qa) <= 1.0:
        raise ValueError(f"q must be a sampling rate in (0, 1], got {q!r}")
    kk = check_k(steps, "steps")
    if kk.ndim > 1 or kk.size == 0 or kk.size > 10_000:
        raise ValueError(f"steps must be one integer or a 1-d array of at most 10⁴, got {steps!r}")
    d = check_delta(delta, "delta")
    if d.ndim or not 0.0 < float(d) < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    return float(s), float(qa), (int(kk) if kk.ndim == 0 else kk.astype(np.int64)), float(d)


def dpsgd_gdp_mu(sigma, q, steps):
    """μ of the central-limit approximation to DP-SGD (Bu, Dong, Long & Su 2020, result “CLT approximation of noisy SGD” /
    Dong, Roth & Su 2022, result “central limit theorem for subsampled composition”): T Poisson-subsampled Gaussian steps are approximately
    μ-GDP with μ = q·√(T (e^{1/σ²} − 1)). An approximation (exact only as T → ∞ with q√T fixed),
    not a guarantee: it can be below the true privacy loss.

    >>> round(dpsgd_gdp_mu(1.0, 0.01, 10000), 6)
    1.310832
    """
    with np.errstate(over="ignore"):
        return float(q * np.sqrt(steps * np.expm1(1.0 / (sigma * sigma))))


def dpsgd_epsilon(sigma, q, steps, delta, accountant: str = "pld", *, grid_size: int | None = None):
    """ε of DP-SGD: ``steps`` Poisson-subsampled Gaussian steps (sampling rate ``q``, noise
    multiplier ``sigma`` = noise std / clipping norm), at ``delta``, add/remove-one relation.

    * ``"pld"`` — tight: the privacy loss distribution of both directions composed
      (:func:`compose_all`, pessimistic: never below the truth), on a grid chosen from the error
      target (:func:`dpexplore.pld.refine_epsilon`: refined until ε is within ~1 % or 1e-3 of
      the truth; ~1e-5 relative in the usual range). The Rényi DP bound, the amplified basic
      bound (each step (log(1 + q(e^{ε₀} − 1)), qδ_σ(ε₀))-DP, composed basically) and the
      rare-event bound (:class:`~dpexplore.mechanisms.subsampled.RareEventProfile`: at most one
      step's loss above a threshold, tight where k·q is tiny) are upper bounds too, so the
      smallest is returned: the basic one answers alone where it is below 1e-3 (tiny q, as
      1e-17); where no grid fits the loss range, the others do. At a tiny rate with δ below
      k·q the PLD's error k·h swamps ε (σ 0.05, q 1e-17, 10⁶ steps, δ 1e-12: the PLD gave
      9.9e6 and Rényi DP 273): the rare-event bound gives 185.5185, equal to a lower bound from
      first principles to 1e-12 (σ 0.1, q 1e-10, 10⁵ steps, δ 1e-9: within 0.3 % of one). Where
      the PLD's ε falls below that lower bound it is discarded with an AccuracyWarning and the
      other bounds answer, safe but looser (a check: it caught the PLD losing the rare large
      losses at σ 0.3, q 1e-5, 100 steps, δ 1e-5, 0.001 where the truth is 1.3465, since fixed
      in :func:`dpexplore.pld._convolve`);
    * ``"rdp"`` — Rényi DP of the subsampled Gaussian (Mironov, Talwar & Zhang 2019) summed over
      steps at dp_accounting's orders, converted with the improved bound (Canonne, Kamath &
      Steinke 2020, Proposition 12 / Asoodeh et al. 2021): valid, looser;
    * ``"gdp"`` — the central-limit approximation (Bu, Dong, Long & Su 2020): μ-GDP with
      μ = q√(T(e^{1/σ²} − 1)). AN APPROXIMATION, NOT A GUARANTEE: it may be below the true ε.

    ``steps`` may be a 1-d array (a curve of ε against training length): the "pld" accountant then
    builds every composition from the previous one by a single convolution
    (:func:`dpexplore.pld.composed_pld_series`), on the grid of the largest count. ``grid_size``
    (pld only) fixes the FFT grid instead of choosing it from the error target (the target's
    refinement starts at a sixteenth of :func:`dpexplore.pld.default_grid_size`, at least 2¹²
    (:func:`dpexplore.pld.refine_start`): 5e-5 relative above dp_accounting's ε at interval
    1e-4, at σ 1, q 0.01, 10⁴ steps, δ 1e-5); a coarser fixed grid is faster and still never
    below the truth. The add direction
    is first composed on a coarse grid and only refined if it could be the larger (see
    :func:`_dpsgd_pld_epsilons`).

    >>> e = dpsgd_epsilon(1.0, 0.01, 10000, 1e-5)     # dp_accounting's PLD: 6.1877
    >>> 6.18 < e < 6.20
    True
    >>> curve = dpsgd_epsilon(1.0, 0.01, [1000, 2000, 3000], 1e-5)
    >>> bool(curve[0] < curve[1] < curve[2])
    True
    """
    s, q, t, d = _check_dpsgd(sigma, q, steps, delta, accountant)
    if isinstance(t, np.ndarray):
        return _dpsgd_curve(s, q, t, d, accountant, grid_size)
    if accountant == "gdp":
        return float(gdp_epsilon(dpsgd_gdp_mu(s, q, t), d))

    m = subsample(Gaussian(s), q)
    if accountant == "rdp":
        return _dpsgd_rdp_epsilon(s, q, t, d)
    if q == 1.0:  # every step sees every record: t Gaussians, exactly √t/σ-GDP
        return float(gdp_epsilon(np.sqrt(t) / s, d))
    rdp_eps = dpsgd_epsilon(s, q, t, d, accountant="rdp")
    small = min(_dpsgd_amplified_basic(s, q, t, d), _dpsgd_rare_event(s, q, t, d))
    if small <= _pld.ATOL:  # already within the target of any ε ≥ 0 (q = 1e-17 and the like)
        return min(small, rdp_eps)
    try:
        tight = float(_dpsgd_pld_epsilons(m, np.array([t]), d, grid_size)[0])
    except ValueError:  # no grid fits the loss range: the other upper bounds
        return min(small, rdp_eps)
    return min(_checked_pld(tight, s, q, t, d), rdp_eps, small)


def _checked_pld(eps, s: float, q: float, t, d: float):
    """``eps`` from the PLD, or inf (with an AccuracyWarning) where it is below a lower bound on
    the true ε (:func:`~dpexplore.mechanisms.subsampled.one_shifted_step_lower_epsilon`): at a
    tiny rate whose k·q exceeds δ (σ 0.266, q 2.12e-7, 1581 steps, δ 9.8e-6) the composed PLD
    once lost the rare large losses and answered 0.0003 where the truth is 0.128 (dp_accounting's
    pessimistic PLD: 0.1282; fixed in :func:`dpexplore.pld._convolve`, it now gives 0.12816).
    ``eps`` and ``t`` may be arrays of the same shape (a curve: one check for all of it)."""
    from .mechanisms.subsampled import one_shifted_step_lower_epsilon

    e = np.asarray(eps, dtype=np.float64)
    lo = np.asarray(one_shifted_step_lower_epsilon(Gaussian(s), q, t, d), dtype=np.float64)
    bad = ~(e >= lo * (1.0 - 1e-6) - 1e-12)
    if bad.any():
        import warnings

        for ei, li, ti in zip(e[bad].ravel(), lo[bad].ravel(), np.broadcast_to(t, e.shape)[bad].ravel()):
            warnings.warn(
                f"DP-SGD (σ, q, steps) = ({s:g}, {q:g}, {int(ti)}): the privacy loss "
                f"distribution's ε {ei:.6g} is below a lower bound on the true ε "
                f"({li:.6g}) at δ = {d:g}; it is discarded and the other upper bounds "
                "answer",
                _pld.AccuracyWarning,
                stacklevel=3,
            )
    out = np.where(bad, np.inf, e)
    return float(out) if out.ndim == 0 else out


def _dpsgd_rare_event(s: float, q: float, t: int, d: float) -> float:
    """ε of :class:`~dpexplore.mechanisms.subsampled.RareEventProfile` (t runs at a tiny rate q:
    at most one run's loss above a threshold), an upper bound; inf where C(t, 2)·q² is not
    below δ/2 (there it says nothing useful)."""
    from .mechanisms.subsampled import rare_event_tail

    if rare_event_tail(q, t) >= 0.5 * d:
        return np.inf
    return float(RareEventProfile(Gaussian(s), q, t).epsilon(d))


def _dpsgd_amplified_basic(s: float, q: float, t, d: float):
    """A cheap upper bound on DP-SGD's ε: each step is (log(1 + q(e^{ε₀} − 1)), q·δ_σ(ε₀))-DP for
    the Gaussian's profile δ_σ (amplification by Poisson subsampling: Balle, Barthe & Gaboardi
    2018), and t steps compose to t times both (basic composition), with ε₀ chosen so that
    t·q·δ_σ(ε₀) = δ. Loose in general; at tiny q (1e-17) it is ~0 and needs no PLD. ``t`` may be
    an array of step counts (one vectorised inversion of δ_σ for all)."""
    ts = np.asarray(t, dtype=np.float64)
    target = d / (ts * q)
    need = target < 1.0
    out = np.zeros(ts.shape)
    if need.any():
        e0 = np.asarray(gdp_epsilon(1.0 / s, target[need]), dtype=np.float64)
        with np.errstate(over="ignore"):
            out[need] = up(ts[need] * np.log1p(q * np.expm1(e0)), "closed")
    return float(out) if out.ndim == 0 else out


#: grid of the first, coarse pass over the add direction in :func:`_dpsgd_pld_epsilons`
_CHECK_GRID = 4096


def _dpsgd_pld_epsilons(m, ks, d, grid_size=None):
    """ε at δ = ``d`` of ks[i] runs of the Poisson-subsampled mechanism ``m`` (``ks``
    increasing): max(ε_remove, ε_add) from the two directions' PLDs (as :func:`compose`), each
    never below the truth. With ``grid_size`` None each direction's grid is chosen from the
    error target (:func:`dpexplore.pld.refine_epsilon`: ε within ~1 % or 1e-3 of the truth);
    a given ``grid_size`` is used as it is. The add direction is usually far from the larger
    (DP-SGD: 5.6 against 6.19 at σ 1, q 0.01, 10⁴ steps), so it is first composed on a coarse
    grid (2¹²); that ε is an upper bound as well, so where it is at most the remove direction's,
    the maximum is the remove direction's ε (within the target of the truth, since the true
    maximum is at least the true ε of the remove direction). Only where it is not is the add
    direction composed to the target as well."""
    remove, add = m._directions()

    def eps(direction, gs):
        if ks.size == 1:
            plds = [_pld.composed_pld_many([(direction, int(ks[0]))], grid_size=gs)]
        else:
            plds = _pld.composed_pld_series(direction, ks, grid_size=gs)
        return np.array([float(_pld.PLDProfile(p).epsilon(d)) for p in plds])

    def refined(direction):
        if grid_size is not None:
            return eps(direction, grid_size)
        n0 = _pld.refine_start([(direction, int(ks[-1]))])
        e, ok, _ = _pld.refine_epsilon(lambda n: eps(direction, n), n0)
        if not np.all(ok):
            _pld.warn_unconverged(
                f"DP-SGD (σ, q) = ({m.mechanism.sigma:g}, {m.q:g}), {direction.direction} direction", d
            )
        return e

    e_rem = refined(remove)
    e_add = eps(add, _CHECK_GRID if grid_size is None or grid_size > _CHECK_GRID else grid_size)
    if np.any(e_add > e_rem):
        e_add = np.minimum(e_add, refined(add))
    return np.maximum(e_rem, e_add)


class _OneStepRDP:
    """One DP-SGD step's RDP at RDP_ORDERS, evaluated lazily (one per (σ, q), cached).

    Exact at the integer orders (Mironov, Talwar & Zhang 2019, as
    :meth:`dpexplore.mechanisms.subsampled.PoissonSubsampled.rdp`). A fractional order's value
    lies between two bounds from its integer neighbours, because f(α) = (α − 1)ε̂(α) = log A_α is
    convex in α with f(0) = f(1) = 0: above, the chord f(n) + (α − n)(f(n+1) − f(n)); below, the
    extensions of the neighbouring chords, f(n) + (α − n)(f(n) − f(n−1)) and
    f(n+1) − (n + 1 − α)(f(n+2) − f(n+1)) (lowered by 1e-9 relative against round-off). The
    series at a fractional order (the slow part) is summed only where its lower bound could
    still beat the best order's ε, so the converted ε is exactly that of the full curve."""

    def __init__(self, sigma: float, q: float):

        self.mech = subsample(Gaussian(sigma), q)
        a = RDP_ORDERS
        self.frac = a != np.floor(a)
        # exact at the integer orders, the chord at the fractional ones: all in one call
        self.upper = np.asarray(self.mech._rdp_chord(a), dtype=np.float64)
        f = np.zeros(14)  # f(0) = f(1) = 0; RDP_ORDERS hold 2 … 13
        for k in range(2, 14):
            f[k] = self.upper[a == k][0] * (k - 1.0)
        n = np.floor(a[self.frac]).astype(int)  # 1 … 10: neighbours up to 12 are known
        al = a[self.frac]
        left = f[n] + (al - n) * (f[n] - f[n - 1])
        right = f[n + 1] - (n + 1 - al) * (f[n + 2] - f[n + 1])
        low = np.maximum(np.maximum(left, right), 0.0)
        self.exact = np.where(self.frac, np.nan, self.upper)
        self.lower = self.exact.copy()
        self.lower[self.frac] = np.maximum(low / (al - 1.0) * (1.0 - 1e-9) - 1e-300, 0.0)

    def epsilon(self, steps: int, delta: float) -> float:
        """min over RDP_ORDERS of the improved conversion of ``steps`` × the one-step curve."""

        ld = np.asarray(np.log(delta))
        best = float(np.min(_rdp_eps_terms(RDP_ORDERS, steps * self.upper, ld, True)))
        need = np.isnan(self.exact) & (_rdp_eps_terms(RDP_ORDERS, steps * self.lower, ld, True) <= best)
        if need.any():
            self.exact[need] = np.asarray(self.mech.rdp(RDP_ORDERS[need]), dtype=np.float64)
        # orders never summed keep their chord value: above their lower bound, so never the minimum
        curve = np.where(np.isnan(self.exact), self.upper, self.exact)
        return float(rdp_to_approx(RDP_ORDERS, steps * curve, delta))


@functools.lru_cache(maxsize=128)
def _one_step_rdp(sigma: float, q: float) -> _OneStepRDP:
    return _OneStepRDP(sigma, q)


def _dpsgd_rdp_epsilon(sigma: float, q: float, steps: int, delta: float) -> float:
    """The "rdp" accountant's ε (see :func:`dpsgd_epsilon`; lazily evaluated orders, the same
    value as converting the whole curve)."""
    return _one_step_rdp(sigma, q).epsilon(int(steps), delta)


def _dpsgd_curve(s, q, steps, d, accountant, grid_size=None):
    """ε for each entry of ``steps`` (see :func:`dpsgd_epsilon`)."""
    if accountant == "gdp":
        with np.errstate(over="ignore"):
            mu = q * np.sqrt(steps.astype(np.float64) * np.expm1(1.0 / (s * s)))
        return np.asarray(gdp_epsilon(mu, d), dtype=np.float64)
    if accountant == "rdp":
        return np.array([_dpsgd_rdp_epsilon(s, q, int(t), d) for t in steps])

    ks, back = np.unique(steps, return_inverse=True)
    eps = _dpsgd_pld_epsilons(subsample(Gaussian(s), q), ks, d, grid_size)
    eps = _checked_pld(np.asarray(eps, dtype=np.float64), s, q, ks, d)
    eps = np.minimum(eps, _dpsgd_curve(s, q, ks, d, "rdp"))  # both are upper bounds
    eps = np.minimum(eps, _dpsgd_amplified_basic(s, q, ks, d))  # and these two, as dpsgd_epsilon
    eps = np.minimum(eps, [_dpsgd_rare_event(s, q, int(t), d) for t in ks])  # takes them
    return eps[back.reshape(steps.shape)]


def dpsgd_sigma(eps, delta, q, steps, accountant: str = "pld", *, rtol: float = 1e-3):
    """The smallest noise multiplier σ (to relative ``rtol``, rounded UP) with which ``steps``
    Poisson-subsampled Gaussian steps at rate ``q`` are (eps, delta)-DP under ``accountant``
    (see :func:`dpsgd_epsilon`; "gdp" inverts the approximation and is not a guarantee). ε
    decreases in σ; solved by bracketing bisection on log σ, ending on the side where
    ``dpsgd_epsilon(σ) ≤ eps`` holds.

    >>> s = dpsgd_sigma(3.0, 1e-5, 0.01, 1000)
    >>> dpsgd_epsilon(s, 0.01, 1000, 1e-5) <= 3.0
    True
    """
    e = check_nonneg(eps, "eps", allow_inf=False)
    if e.ndim or float(e) <= 0:
        raise ValueError(f"eps must be a single positive number, got {eps!r}")
    r = check_nonneg(rtol, "rtol", allow_inf=False)
    if r.ndim or not 1e-9 <= float(r) <= 0.1:
        raise ValueError(f"rtol must be in [1e-9, 0.1], got {rtol!r}")
    _, q, t, d = _check_dpsgd(1.0, q, steps, delta, accountant)
    if isinstance(t, np.ndarray):
        raise ValueError(f"steps must be a single integer for dpsgd_sigma, got {steps!r}")
    e, r = float(e), float(r)

    def ok(sig):
        return dpsgd_epsilon(sig, q, t, d, accountant) <= e

    # start from the GDP approximation's answer, then bracket by factors of 1.25

    # a cheap first guess from the CLT formula (doubling from 0.05)
    _, guess = grow_bracket(lambda s: gdp_epsilon(dpsgd_gdp_mu(s, q, t), d) <= e, 0.05, 0.05, grow=2.0, steps=200)
    _, hi_s = grow_bracket(ok, guess, guess, grow=1.25, stop=lambda s: s > 1e8)
    if hi_s > 1e8 and not ok(hi_s):
        raise ValueError(f"eps = {eps!r} at delta = {delta!r} needs a noise multiplier above 1e8")
    hi_s, lo_s = grow_bracket(lambda s: not ok(s), hi_s, hi_s / 1.25, grow=lambda s: s / 1.25, stop=lambda s: s <= 1e-3)
    if hi_s / lo_s <= 1.0 + r:
        return float(hi_s)
    # geometric bisection (√(lo·hi)) to hi/lo ≤ 1 + rtol, the feasible end
    ends = bracket_search(
        lambda s: ok(float(s)), lo_s, hi_s, safe="hi", mid=lambda a, b: np.sqrt(a * b), ratio=r, ulps=0.0, steps=400
    )
    return float(ends)


# ------------------------------------------------------------------------------------------------
# per-step budgets
# ------------------------------------------------------------------------------------------------
def _bisect_increasing(fn, target, lo, hi, steps=_BISECT):
    """Largest x in [lo, hi] with fn(x) ≤ target, as the lower end of a bracket (fn increasing,
    fn(lo) ≤ target assumed): :func:`~dpexplore._numerics.bracket_search` to 2 ulps. Vectorized."""
    return bracket_search(lambda x: fn(x) <= target, lo, hi, safe="lo", steps=steps, ulps=2.0)


def _zcdp_tight(e):
    """Pure ε-DP ⇒ ρ-zCDP with ρ = ε tanh(ε/2) (tight: Steinke 2024, Theorem 5; Bun & Steinke 2016, Proposition 1.4 proves ε²/2)."""
    return e * np.tanh(e / 2.0)


def _optimal_per_step(E, D, K, basic_eps):
    """Largest per-step ε with optimal(ε, k, D) ≤ E: Illinois (safeguarded regula falsi) on
    g(ε) = optimal(ε, k, D) − E over a bracket [lo, hi] with g(lo) ≤ 0 < g(hi), stopped at a
    relative width 1e-12; the feasible lower end is returned. Starts from lo = max(E/k, the
    advanced_pure budget) (both feasible, KOV being optimal)."""
    Kf = K.astype(float)
    live = (D > 0) & (E > 0)
    if not live.any():
        return basic_eps
    E, D, K, Kf, b0 = E[live], D[live], K[live], Kf[live], basic_eps[live]
    logd = np.log(D)
    with np.errstate(divide="ignore", invalid="ignore"):
        L = -logd
        ap = 2.0 * E / (np.sqrt(2.0 * L) + np.sqrt(2.0 * L + 2.0 * E)) / np.sqrt(Kf)
    # a start just below the advanced_pure budget (any feasible start works: not a safety margin)
    lo = np.maximum(b0, np.nan_to_num(ap) * (1.0 - 1e-9))

    log_r = _total_log_r(D, 0.0, Kf)

    def g(x):
        return _kov_epsilon(log_r, x, K) - E

    g_lo = g(lo)
    bad = g_lo > 0  # cannot happen in exact arithmetic; fall back to the basic budget
    lo = np.where(bad, b0, lo)
    # expand until infeasible (hi doubles), then Illinois to a relative width 1e-12
    lo, hi = grow_bracket(lambda x: g(x) > 0, lo, np.maximum(2.0 * lo, E / np.sqrt(Kf)), grow=2.0, fill=None, steps=200)
    lo = illinois(g, lo, hi, g(lo), g(hi), steps=100, rtol=1e-12, inset=1e-3)
    out = basic_eps.copy()
    out[live] = np.maximum(lo, b0)
    return out


def per_step_budget(total_eps, total_delta, k, theorem="optimal"):
    """The largest per-step ε such that k ε-DP steps are (``total_eps``, ``total_delta``)-DP
    under ``theorem`` (vectorized over all arguments, rounded DOWN — the safe side):

    * ``"basic"``: ε/k (Bassi 2019);
    * ``"advanced"``: solves √(2k ln(1/δ')) ε + k ε (e^ε − 1) = ε_total with δ' = ``total_delta``
      and per-step δ = 0 (Bassi 2019; Dwork, Rothblum & Vadhan 2010; 0 when δ' = 0) — bisection, lower end returned;
    * ``"advanced_pure"``: ½ k ε² + √(2 log(1/δ) k ε²) = ε_total (Steinke 2022) in closed form,
      ε = 2ε_total / (√k (√(2L) + √(2L + 2ε_total))), L = log(1/δ);
    * ``"optimal"``: the largest ε with :func:`optimal` (ε, k, δ) ≤ ε_total (Kairouz, Oh &
      Viswanath 2015), by a safeguarded regula falsi to a relative 1e-12, never below ε_total/k;
    * ``"zcdp"``: total ρ = (√(L + ε_total) − √L)² (the largest ρ with ρ + 2√(ρ L) ≤ ε_total,
      zCDP → (ε, δ)), ρ/k per step, and the ε with ε tanh(ε/2) = ρ/k (pure → zCDP,
      tight).

    >>> [round(per_step_budget(1.0, 1e-6, 100, t), 5) for t in THEOREMS]
    [0.01, 0.01838, 0.01869, 0.02401, 0.01869]
    """
    if not isinstance(theorem, str) or theorem not in THEOREMS:
        raise ValueError(f"theorem must be one of {THEOREMS}, got {theorem!r}")
    E = check_nonneg(total_eps, "total_eps", allow_inf=False)
    D = check_delta(total_delta, "total_delta")
    K = check_k(k, "k")
    E, D, K = np.broadcast_arrays(E, D, K)
    shape = E.shape
    E, D = E.ravel().astype(float), D.ravel().astype(float)
    Kf = K.ravel().astype(float)
    with np.errstate(divide="ignore"):
        L = -np.log(D)  # inf at δ = 0
    basic_eps = np.nextafter(E / Kf, 0.0) * (E > 0)
    if theorem == "basic":
        out = basic_eps
    elif theorem == "advanced_pure":
        with np.errstate(invalid="ignore"):
            x = 2.0 * E / (np.sqrt(2.0 * L) + np.sqrt(2.0 * L + 2.0 * E))
        out = down(np.nan_to_num(x / np.sqrt(Kf), nan=0.0), "budget")
    elif theorem == "advanced":
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.sqrt(2.0 * Kf * L)

            def f(x):
                with np.errstate(over="ignore", invalid="ignore"):  # huge x: inf (> E)
                    return a * x + Kf * x * np.expm1(x)

            hi = np.where(np.isfinite(a) & (a > 0), E / a, 0.0)
            # also k x (e^x − 1) ≤ E forces x ≤ max(1, log1p(E/k)): keeps the bracket where
            # expm1 is finite (E = 1e300 bisected on [0, 5e297] and returned 0)
            hi = np.minimum(hi, np.maximum(1.0, np.log1p(E / Kf)))
            hi = np.maximum(hi, 0.0)
            # compare what advanced() reports (rounded up by 4 ulps), so it composes back ≤ E
            out = _bisect_increasing(lambda x: up(f(x), "closed"), E, np.zeros_like(E), hi)
        out = np.where(np.isfinite(L) & (E > 0), out, 0.0)
    elif theorem == "zcdp":
        with np.errstate(invalid="ignore"):
            rho = (E / (np.sqrt(L + E) + np.sqrt(L))) ** 2
        # 32 ulps: zcdp_to_approx(k·pure_to_zcdp(ε)) rounds up twice on the way back
        rho = down(np.nan_to_num(rho, nan=0.0) / Kf, "budget_zcdp")
        hi = 2.0 * np.sqrt(rho) + 2.0 * rho + 2.0
        out = _bisect_increasing(_zcdp_tight, rho, np.zeros_like(rho), hi)
        out = np.where(rho > 0, out, 0.0)
    else:  # optimal
        out = _optimal_per_step(E, D, K.ravel(), basic_eps)
    return scalar_out(np.maximum(out, 0.0).reshape(shape))
