"""Closed-form composition theorems: what k (ε, δ)-DP steps cost, from the loosest to the exact.

* :func:`basic`, :func:`advanced` (Dwork, Rothblum & Vadhan 2010), :func:`advanced_pure`
  (Steinke 2022);
* :func:`optimal`, :func:`optimal_log_delta` and :class:`OptimalProfile` — the exact optimum
  for k-fold (ε, δ)-DP (Kairouz, Oh & Viswanath 2015, Theorem 3.3), in log space;
* :func:`rdp`, :func:`zcdp`, :func:`gdp` — the additive accountants;
* :func:`per_step_budget` — the inverse question: how much ε each of k steps may spend;
  :func:`per_step_laplace_scale` — the Laplace noise of k steps (Steinke's rule of thumb, or
  Δ over any theorem's per-step budget);
* :func:`delta_slack` — what is left of a total δ′ after k per-step δ's.

Re-exported by :mod:`dpexplore.accounting.composition`, where they are documented and imported from.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..._numerics import MARGINS, bracket_search, down, grow_bracket, illinois, log1mexp, log_subtract, up
from ..._numerics import mul_up, sqrt_up, sum_up
from ..._validation import check_delta, check_k, check_nonneg, check_positive, scalar_out
from ..conversions import approx_to_zcdp, pure_to_rdp, pure_to_zcdp
from ..profiles import PrivacyProfile

#: theorem names accepted by :func:`per_step_budget`
THEOREMS = ("basic", "advanced", "advanced_pure", "optimal", "zcdp")

_KOV_SDS = 40.0  # binomial terms kept: mode ± 40 standard deviations (rest bounded)
_KOV_CELLS = 2_000000  # work-array size per chunk
_BISECT = 100


# ------------------------------------------------------------------------------------------------
# closed-form theorems
# ------------------------------------------------------------------------------------------------
def basic(epsilons, deltas=0.0, k=None):
    """Basic composition: (Σ_j ε_j, Σ_j δ_j) over the LAST axis (Bassi 2019, slide "Composition of several DP mechanisms";
    Steinke 2022: "basic composition gives ε = Σε_j").

    ``deltas`` broadcasts against ``epsilons`` (a scalar δ is each mechanism's δ); the total δ is
    capped at 1. A 0-d input is one mechanism. With ``k`` given, ``epsilons`` and ``deltas`` are
    the per-step values of k identical mechanisms and broadcast with ``k``: (kε, min(kδ, 1)).
    Returns a tuple (ε, δ).

    >>> basic([1.0, 2.0], [1e-6, 1e-6])
    (3.0, 2e-06)
    >>> basic(np.full((2, 3), 0.1))[0]          # one total per row
    array([0.3, 0.3])
    >>> basic(0.1, 1e-8, k=100)
    (10.0, 1e-06)
    """
    e = check_nonneg(epsilons, "epsilons")
    d = check_delta(deltas, "deltas")
    if k is not None:
        kk = check_k(k, "k").astype(np.float64)
        with np.errstate(over="ignore", invalid="ignore"):  # kε beyond float max: inf
            te = np.where(e == 0, 0.0, kk * e)
            td = np.where(d == 0, 0.0, np.minimum(kk * d, 1.0))
        te, td = np.broadcast_arrays(te, td)
        return scalar_out(te), scalar_out(td)
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

    def _card_notions(self, info) -> None:
        """With δ_each = 0: k × the ρ and the tight RDP of ε-DP (zCDP and RDP compose
        additively; Steinke 2024, Theorems 4 and 5)."""
        if self.delta_each == 0.0:
            info.rho = (self.k * float(pure_to_zcdp(self.eps)), "k × pure-DP ρ")
            info.rdp = lambda a, e=self.eps, k=self.k: k * float(pure_to_rdp(e, a))
            info.rdp_how = "k × tight pure-DP RDP"


# ------------------------------------------------------------------------------------------------
# additive accountants
# ------------------------------------------------------------------------------------------------
def rdp(rdp_curves, k=1):
    """Rényi-DP composition is additive (Mironov 2017, Proposition 1): the composition of
    mechanisms with RDP curves ε̂_j(α) has ε̂(α) = Σ_j ε̂_j(α). Sum and product rounded upward
    (:func:`~dpexplore._numerics.sum_up`, ``mul_up``: exact where the result is a float).

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
    s = sum_up(r, axis=0) if r.ndim else r
    with np.errstate(over="ignore"):  # beyond float max: inf (still valid)
        return scalar_out(mul_up(kk, s))


def zcdp(rhos, k=1):
    """zCDP composition is additive (Bun & Steinke 2016, result “composition of zCDP”): ρ = k · Σ_j ρ_j,
    summed over the LAST axis (a 0-d input is one mechanism); rounded upward (exact where it is a
    float).

    >>> round(zcdp([0.1, 0.2]), 12), round(zcdp(0.5, k=4), 12)
    (0.3, 2.0)
    """
    r = check_nonneg(rhos, "rhos")
    kk = check_k(k, "k")
    s = sum_up(r, axis=-1) if r.ndim else r
    with np.errstate(over="ignore"):  # beyond float max: inf (still valid)
        return scalar_out(mul_up(kk, s))


def gdp(mus, k=1):
    """Gaussian-DP composition (Dong, Roth & Su 2022, Corollary 3.3; Liu et al. 2022): μ = √(k Σ_j μ_j²),
    summed over the LAST axis (a 0-d input is one mechanism). Rounded upward where every μ lies in
    [1e-140, 1e140] (squares, sum, product and root each rounded upward: exact where the result is
    a float), else computed with the norm scaled by max μ and rounded up by 4 ulps.

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
        out = up(out, "closed")
        # where μ² and kΣμ² stay in range: √(kΣμ²) rounded upward (exact where it is a float)
        direct = (top <= 1e140) & (np.min(np.where(mm > 0, mm, np.inf), axis=-1, initial=np.inf) >= 1e-140)
        if direct.any():
            sq = mul_up(mm, mm)
            out = np.where(direct, sqrt_up(mul_up(kk.astype(np.float64), sum_up(sq, axis=-1))), out)
    return scalar_out(np.where(top > 0, out, 0.0))


def _gdp_of_parts(mus, ks) -> float:
    """√(Σ_i k_i μ_i²) rounded upward (``compose_all`` of μ_i-GDP parts run k_i times; Dong, Roth
    & Su 2022, Corollary 3.3): squares, products and sum by ``mul_up``/``sum_up`` and the root by
    ``sqrt_up`` where every μ lies in [1e-140, 1e140] (exact where the result is a float), else
    the sum of k_i (μ_i/max μ)² scaled back and moved up by ``closed``, as :func:`gdp`."""
    m = np.asarray(mus, dtype=np.float64)
    k = np.asarray(ks, dtype=np.float64)
    pos = m > 0
    if not pos.any():
        return 0.0
    if np.isinf(m).any():
        return float("inf")
    if m[pos].min() >= 1e-140 and m.max() <= 1e140:
        return float(sqrt_up(sum_up(mul_up(k, mul_up(m, m)))))
    top = float(m.max())
    with np.errstate(over="ignore"):
        return float(up(top * np.sqrt(np.sum(k * (m / top) ** 2)), "closed"))


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


def per_step_laplace_scale(total_eps, total_delta, k, sensitivity=1.0, theorem="steinke"):
    """The Laplace noise scale per step that keeps k sensitivity-Δ queries (ε_T, δ)-DP.

    ``theorem="steinke"`` (the default): Steinke's rule by zCDP (Steinke 2022, footnote 2)::

        b = Δ √(k/(2ρ)),   ρ = ε_T²/(4 log(1/δ) + 4ε_T)

    (ρ from :func:`~dpexplore.accounting.conversions.approx_to_zcdp`).

    Laplace(b) is (Δ/b)-DP, hence (Δ/b)²/2-zCDP (Bun & Steinke 2016, Proposition 1.4); k of them
    are kΔ²/(2b²) = ρ-zCDP (Bun & Steinke 2016, result "composition of zCDP"), and ρ-zCDP is
    (ρ + 2√(ρ log(1/δ)), δ)-DP (Bun & Steinke 2016, Proposition 1.3), at most ε_T for this ρ.
    The noise grows like √k, not k as under basic composition; ``per_step_budget(..., "zcdp")``
    is tighter (exact inversions). Rounded up (ρ is rounded down first); inf where ρ = 0
    (δ = 0 or ε_T = 0: no finite Laplace noise suffices by this route).

    ``theorem`` one of :data:`THEOREMS`: b = Δ/ε_step with ε_step = :func:`per_step_budget`
    (ε_T, δ, k, theorem) — Laplace(Δ/ε_step) is ε_step-DP (Dwork, McSherry, Nissim & Smith 2006),
    and k such steps are (ε_T, δ)-DP by that theorem. Rounded up by 4 ulps (ε_step is rounded
    down already); inf where ε_step = 0.

    Vectorised over every argument.

    >>> round(float(per_step_laplace_scale(1.0, 1e-6, 100)), 4)     # √(100/(2ρ)), ρ = 1/(4 log 10⁶ + 4)
    54.4344
    >>> float(per_step_laplace_scale(1.0, 0.0, 10))
    inf
    >>> round(float(per_step_laplace_scale(1.0, 1e-6, 100, theorem="basic")), 9)   # Δk/ε_T
    100.0
    """
    if not isinstance(theorem, str) or theorem not in ("steinke", *THEOREMS):
        raise ValueError(f"theorem must be one of {('steinke', *THEOREMS)}, got {theorem!r}")
    E = check_nonneg(total_eps, "total_eps", allow_inf=False)
    D = check_delta(total_delta, "total_delta")
    K = check_k(k, "k")
    S = check_positive(sensitivity, "sensitivity", allow_inf=False)
    if theorem != "steinke":
        step = np.asarray(per_step_budget(E, D, K, theorem), dtype=np.float64)
        with np.errstate(divide="ignore", over="ignore"):
            b = S / np.where(step > 0, step, 1.0)
        return scalar_out(np.where(step > 0, up(b, "closed"), np.inf))
    rho = np.asarray(approx_to_zcdp(E, D), dtype=np.float64)
    with np.errstate(divide="ignore", over="ignore"):
        b = S * np.sqrt(K / (2.0 * rho))
    return scalar_out(up(np.where(rho > 0, b, np.inf), "closed"))


def delta_slack(delta, delta_total, k):
    """What is left of a total δ′ after k steps that each spend δ: the slack δ_s = δ′ − kδ that
    advanced composition (Dwork, Rothblum & Vadhan 2010; :func:`advanced`), advanced composition
    from pure DP and zCDP's conversion may spend, so that kδ + δ_s ≤ δ′ (each (ε, δ)-DP step is an
    ε-DP step except with probability δ: Steinke 2022, footnote 1).

    Rounded down: kδ is rounded up by 4 ulps, the difference down by a relative 1e-15
    (``MARGINS["slack"]``), so kδ + δ_s ≤ δ′ holds for the exact real numbers. 0 where no slack is
    left (kδ ≥ δ′); δ = 0 gives δ′ less the relative 1e-15. Vectorised.

    >>> float(delta_slack(1e-8, 1e-5, 10)) < 1e-5 - 1e-7
    True
    >>> float(delta_slack(1e-6, 1e-6, 2))
    0.0
    """
    d = check_delta(delta, "delta")
    dt = check_delta(delta_total, "delta_total")
    kk = check_k(k, "k").astype(np.float64)
    s = dt - up(kk * d, "ulps")
    return scalar_out(np.where(s > 0, down(s, "slack"), 0.0))
