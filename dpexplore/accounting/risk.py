"""Attack risk of a privacy profile (the f-DP view): how well can ANY membership test do?

A membership-inference attack is a test of H₀: "the output came from D" against H₁: "it came from
D′" (D′ = D with the target's record). Against a mechanism whose privacy profile is δ(ε) — it is
(ε, δ(ε))-DP for every ε ≥ 0 — every test with false-positive rate α has true-positive rate at most

    TPR(α) = 1 − f(α),   f(α) = sup_{ε≥0} max(0, 1 − δ(ε) − e^ε α, e^{−ε}(1 − δ(ε) − α)),

the trade-off function the profile implies (Dong, Roth & Su 2022, Proposition 2.5 for one
(ε, δ) pair and result “f-DP as (ε, δ(ε))-DP for all ε” for the whole profile; Kairouz, Oh & Viswanath 2015,
Theorem 2.1; used for noise calibration by Kulynych et al. 2024). Writing t = e^ε (and t = e^{−ε} for
the second term) the bound reads TPR(α) = min(1, inf_t [δ̃(t) + t α]) with δ̃(t) = δ(log t) for
t ≥ 1 and δ̃(t) = 1 − t + t δ(−log t) for t < 1 — for the exact profile of a mechanism δ̃(t) =
sup_S P(S) − t Q(S) is convex in t, which the numerics below exploit.

Three public functions (re-exported by :mod:`dpexplore.accounting.conversions`):

* :func:`tpr_at_fpr` — TPR(α) above;
* :func:`advantage` — max_α TPR(α) − α = δ(0) (the total variation distance);
* :func:`posterior_bound` — the largest posterior belief in membership after a test.

Every value is rounded to the SAFE side: it is never below the exact attack power (an upper
bound), and each docstring says by how much it may exceed it. ``profile`` may be a
:class:`~dpexplore.accounting.profiles.PrivacyProfile`, a mechanism with a ``.profile`` (e.g.
``mechanisms.Laplace(1.0)``), or any object with ``.log_delta(eps)`` or ``.delta(eps)`` methods
(and optionally ``eps_max``). Closed forms are used for :class:`~dpexplore.accounting.profiles.GaussianDPProfile`
(μ-GDP), for :class:`~dpexplore.accounting.conversions.ApproxDPProfile` / ``PureDPProfile`` and for the
randomized-response and exponential mechanisms (pure ε-DP); any other profile goes through the
certified numerical search of :func:`tpr_at_fpr`.
"""

from __future__ import annotations

import sys

import numpy as np
from scipy import special

from .._numerics import bracket_search, up
from .._validation import _show, as_array, check_probability, scalar_out
from .profiles import ApproxDPProfile, GaussianDPProfile, PrivacyProfile, _log_delta_source, _profile_of, implied_delta

__all__ = ["tpr_at_fpr", "advantage", "posterior_bound"]

# safety margins: dpexplore._numerics.MARGINS["risk_gdp"] (the μ-GDP TPR), ["risk_closed"] (the
# other closed forms) and ["risk_numerical"] (the numerical path), each with 4 subnormal ulps
#: e^745 · α > 1 for every positive float α: larger ε cannot lower a TPR bound below 1
_EPS_CAP = 745.0
#: the ε range ends where log δ ≤ −800 (δ < 1e-347): the truncation costs less than that
_TAIL_LOG_DELTA = -800.0
#: ε probes (1e-3 … 1e9) for the range and for the point where δ reaches 0
_PROBES = 2.0 ** np.arange(-10, 31)
#: golden-section steps (at most) and the relative certified gap at which they stop
_GOLDEN_STEPS = 120
_GAP_RTOL = 1e-13
_GOLD = (3.0 - np.sqrt(5.0)) / 2.0  # 0.381966…
#: FPR values handled together (the grid stage holds CHUNK × ~1500 floats)
_CHUNK = 512


# ------------------------------------------------------------------------------------------------
# what kind of profile
# ------------------------------------------------------------------------------------------------
class _DeltaOnly:
    """Adapter for objects with ``.delta(eps)`` but no ``.log_delta``."""

    def __init__(self, obj):
        self._obj = obj
        self.eps_max = float(getattr(obj, "eps_max", np.inf))

    def log_delta(self, eps):
        with np.errstate(divide="ignore"):
            return np.log(np.asarray(self._obj.delta(eps), dtype=np.float64))


def _classify(obj):
    """('gdp', μ) | ('approx', ε₀, δ₀) for closed forms, else ('generic', log δ function, eps_max).

    Raises ValueError naming ``profile`` if ``obj`` has no profile at all."""
    p = _profile_of(obj)
    if isinstance(p, GaussianDPProfile):
        return ("gdp", p.mu)
    if isinstance(p, ApproxDPProfile):
        return ("approx", p.eps0, p.delta0)
    mech = sys.modules.get("dpexplore.mechanisms")
    if (
        mech is not None
        and isinstance(p, mech.MechanismProfile)
        and isinstance(p.mechanism, (mech.RandomizedResponse, mech.Exponential))
    ):
        return ("approx", float(p.mechanism.eps), 0.0)  # their profile is the tight pure-DP one
    if p is None:
        has_log = callable(getattr(obj, "log_delta", None))
        if isinstance(obj, type) or not (has_log or callable(getattr(obj, "delta", None))):
            raise ValueError(
                "profile must be a PrivacyProfile, a mechanism with a .profile, or an object with "
                f".log_delta(eps) or .delta(eps) methods, got {obj!r}"
            )
        if not has_log:
            obj = _DeltaOnly(obj)
    f, eps_max = _log_delta_source(obj)
    return ("generic", f, float(eps_max))


def _safe_log_delta(f, e):
    """log δ(e) from ``f``, with NaN read as δ = 1 (the safe side)."""
    with np.errstate(all="ignore"):
        out = np.asarray(f(np.asarray(e, dtype=np.float64)), dtype=np.float64)
    return np.where(np.isnan(out), 0.0, np.minimum(out, 0.0))


# ------------------------------------------------------------------------------------------------
# closed forms
# ------------------------------------------------------------------------------------------------
def _exp_times(e, a):
    """e^e · a (a ≥ 0): one rounded product while e^e is finite (e ≤ 709; a subnormal result is
    then off by half a subnormal ulp at most), else h·(h·a) with h = e^{e/2} — no overflow up to
    e = 1418, and h·a ≥ e^{354}·a is never subnormal there. Relative error ≤ 4 ulps otherwise."""
    e = np.asarray(e, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        h = np.exp(e / 2.0)
        out = np.where(e <= 709.0, np.exp(np.minimum(e, 709.0)) * a, h * (h * a))
    return np.where(a > 0, out, 0.0)


def _tpr_gdp(mu, a):
    """Φ(Φ⁻¹(α) + μ), rounded up by a relative 2e-12, in [α, 1]. scipy's Φ flushes to 0 below
    ~1e-308: there exp(log Φ) keeps the subnormal values (≤ 2e-13 relative error)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        y = special.ndtri(a) + mu
        out = special.ndtr(y)
        out = np.where(out < 1e-300, np.exp(special.log_ndtr(y)), out)
    return np.clip(np.maximum(up(out, "risk_gdp"), a), 0.0, 1.0)


def _tpr_approx(eps0, delta0, a):
    """min(1, δ₀ + e^{ε₀} α, 1 − e^{−ε₀}(1 − δ₀ − α)), both terms as sums of non-negative parts."""
    with np.errstate(over="ignore"):
        first = delta0 + _exp_times(eps0, a)
        second = -np.expm1(-eps0) + np.exp(-eps0) * (delta0 + a)
    out = up(np.minimum(first, second), "risk_closed")
    return np.clip(np.maximum(out, a), 0.0, 1.0)


# ------------------------------------------------------------------------------------------------
# the numerical path
# ------------------------------------------------------------------------------------------------
def _eps_end(f, eps_max):
    """End E of the ε range: eps_max, 745, or the first probe 2^k with log δ ≤ −800."""
    end = min(eps_max, _EPS_CAP)
    probes = _PROBES[_PROBES < end]
    if probes.size:
        hit = np.nonzero(_safe_log_delta(f, probes) <= _TAIL_LOG_DELTA)[0]
        if hit.size:
            end = float(probes[hit[0]])
    return end


def _eps_grid(end):
    if end <= 0.0:
        return np.zeros(1)
    return np.unique(np.concatenate([np.linspace(0.0, end, 513), end * np.geomspace(1e-8, 1.0, 257)]))


def _phi(s, d, a):
    """The TPR bound of the pair (|s|, δ(|s|)) at FPR α = a: t = e^s, δ̃(t) + t α.

    s ≥ 0: δ + e^{s} α;  s < 0: 1 − e^{s}(1 − δ − α) = −expm1(s) + e^{s}(δ + α).
    Sums of non-negative terms: full relative accuracy, also where the value is tiny."""
    with np.errstate(over="ignore", invalid="ignore"):
        pos = d + _exp_times(s, a)
        neg = -np.expm1(s) + np.exp(np.minimum(s, 0.0)) * (d + a)
    return np.where(s >= 0.0, pos, neg)


def _certified_gap(a, b, c, fa, fb, fc):
    """Upper bound on fb − min over [a, c] of a function convex in t = e^s, from its values at
    s = a < b < c with fb ≤ fa, fc: on [a, b] the secant slope of (b, c) bounds the descent, on
    [b, c] the slope of (a, b) does (slopes of a convex function increase)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        left = -np.expm1(a - b)  # (t_b − t_a)/t_b
        right = np.expm1(c - b)  # (t_c − t_b)/t_b
        # the O(1) ratio first: (fc − fb)·left underflows where φ is subnormal
        g1 = (fc - fb) * (left / right)
        g2 = (fa - fb) * (right / left)
        gap = np.maximum(np.maximum(g1, g2), 0.0)
    return np.where(np.isnan(gap), np.inf, gap)


def _generic_tpr(f, eps_max, a):
    """(upper, gap) for a 1-d array of FPRs ``a``: ``upper`` is min φ over the points searched
    (not yet rounded), ``gap`` a certified bound on upper − inf φ for convex δ̃ (see tpr_at_fpr)."""
    end = _eps_end(f, eps_max)
    eps = _eps_grid(end)
    d_eps = np.exp(_safe_log_delta(f, eps))
    s = np.concatenate([-eps[:0:-1], eps])
    d = np.concatenate([d_eps[:0:-1], d_eps])
    n = s.size
    upper = np.empty_like(a)
    gap = np.zeros_like(a)
    for lo_i in range(0, a.size, _CHUNK):
        ac = a[lo_i : lo_i + _CHUNK]
        m = ac.size
        vals = _phi(s[None, :], d[None, :], ac[:, None])
        vals = np.where(np.isnan(vals), np.inf, vals)
        k = np.argmin(vals, axis=1)
        rows = np.arange(m)
        ka, kc = np.maximum(k - 1, 0), np.minimum(k + 1, n - 1)
        sa, sb, sc = s[ka], s[k], s[kc]
        fa, fb, fc = vals[rows, ka], vals[rows, k], vals[rows, kc]
        # at an end of the range the minimum over the range is there (convexity), and beyond the
        # range the bound cannot drop by more than δ(E) < e^{−800} (see tpr_at_fpr)
        interior = (k > 0) & (k < n - 1)
        g = np.where(interior, _certified_gap(sa, sb, sc, fa, fb, fc), 0.0)
        for _ in range(_GOLDEN_STEPS):
            act = interior & (g > _GAP_RTOL * fb) & (sc - sa > 4.0 * np.spacing(np.abs(sb) + 1e-300))
            if not act.any():
                break
            A, B, C = sa[act], sb[act], sc[act]
            right = (C - B) >= (B - A)
            x = np.where(right, B + _GOLD * (C - B), B - _GOLD * (B - A))
            fx = _phi(x, np.exp(_safe_log_delta(f, np.abs(x))), ac[act])
            fx = np.where(np.isnan(fx), np.inf, fx)
            FA, FB, FC = fa[act], fb[act], fc[act]
            better = fx < FB
            # better: x is the new centre, the old centre an end; else x is the new end
            nA = np.where(right, np.where(better, B, A), np.where(better, A, x))
            nC = np.where(right, np.where(better, C, x), np.where(better, B, C))
            nFA = np.where(right, np.where(better, FB, FA), np.where(better, FA, fx))
            nFC = np.where(right, np.where(better, FC, fx), np.where(better, FB, FC))
            sa[act], sc[act], fa[act], fc[act] = nA, nC, nFA, nFC
            sb[act] = np.where(better, x, B)
            fb[act] = np.where(better, fx, FB)
            g[act] = _certified_gap(sa[act], sb[act], sc[act], fa[act], fb[act], fc[act])
        upper[lo_i : lo_i + m] = fb
        gap[lo_i : lo_i + m] = g
    zero = a == 0.0
    if zero.any():  # TPR(0) = inf_ε δ(ε): every δ(2^k), k ≤ 30, also bounds it (beyond E too)
        d_far = float(np.exp(np.min(_safe_log_delta(f, _PROBES))))
        upper[zero] = np.minimum(upper[zero], d_far)
    return upper, gap


def _tpr_generic(f, eps_max, a):
    upper, _ = _generic_tpr(f, eps_max, a.ravel())
    out = up(upper, "risk_numerical").reshape(a.shape)
    return np.clip(np.maximum(out, a), 0.0, 1.0)


def _tpr(kind, a):
    if kind[0] == "gdp":
        return _tpr_gdp(kind[1], a)
    if kind[0] == "approx":
        return _tpr_approx(kind[1], kind[2], a)
    return _tpr_generic(kind[1], kind[2], a)


def _running_max(a, t):
    """``t`` made non-decreasing in ``a`` (a running maximum in sorted order): it only raises
    values, by the rounding noise of Φ, Φ⁻¹ (not monotone at 1 ulp) and of the search."""
    if t.size < 2:
        return t
    order = np.argsort(a, axis=None, kind="stable")
    out = np.empty(t.size)
    out[order] = np.maximum.accumulate(t.ravel()[order])
    return out.reshape(t.shape)


def _eps_zero(f, eps_max):
    """An ε ≥ inf{ε: δ(ε) = 0} at which the profile's δ is 0 (inf if none is found up to 1e9):
    eps_max if finite, else the first probe 2^k with log δ = −inf, bisected 80 times."""
    if np.isfinite(eps_max):
        return eps_max
    if _safe_log_delta(f, 0.0) == -np.inf:
        return 0.0
    ld = _safe_log_delta(f, _PROBES)
    hit = np.nonzero(np.isneginf(ld))[0]
    if not hit.size:
        return np.inf
    k = hit[0]
    lo, hi = (float(_PROBES[k - 1]) if k > 0 else 0.0), float(_PROBES[k])
    return float(bracket_search(lambda e: np.isneginf(_safe_log_delta(f, e)), lo, hi, safe="hi", steps=80, ulps=2.0))


# ------------------------------------------------------------------------------------------------
# public functions
# ------------------------------------------------------------------------------------------------
def tpr_at_fpr(profile, fpr):
    """The largest true-positive rate of ANY membership test at false-positive rate ``fpr``
    against a mechanism with this privacy profile: TPR(α) = 1 − f(α), where f is the trade-off
    function implied by the profile δ(ε),

        f(α) = sup_{ε≥0} max(0, 1 − δ(ε) − e^ε α, e^{−ε}(1 − δ(ε) − α))

    (Dong, Roth & Su 2022, Proposition 2.5 for one (ε, δ) pair and result
    “f-DP as (ε, δ(ε))-DP for all ε” for the whole profile; Kairouz, Oh & Viswanath 2015, Theorem 2.1; Kulynych et al. 2024 calibrate noise
    to this TPR). So TPR(α) = min(1, inf_ε [δ(ε) + e^ε α], inf_ε [1 − e^{−ε}(1 − δ(ε) − α)]).

    Closed forms (exact up to the rounding stated):

    * μ-GDP (:class:`~dpexplore.accounting.profiles.GaussianDPProfile`): TPR = Φ(Φ⁻¹(α) + μ), i.e.
      1 − G_μ(α) (Dong, Roth & Su 2022, definition “μ-GDP”), rounded up by a relative 2e-12 (the
      evaluation error, Φ⁻¹'s amplified by |Φ⁻¹(α)|·|Φ⁻¹(α) + μ| ≤ 38², is ≲ 9e-13; measured
      ≤ 6e-13 against mpmath), so at most ~3e-12 above the exact value; exp(log Φ) where Φ
      would underflow (scipy's Φ flushes to 0 below ~1e-308);
    * (ε₀, δ₀)-DP (:class:`~dpexplore.accounting.conversions.ApproxDPProfile`, ``PureDPProfile``, the
      randomized-response and exponential mechanisms): TPR = min(1, δ₀ + e^{ε₀} α,
      1 − e^{−ε₀}(1 − δ₀ − α)) (Dong, Roth & Su 2022, Proposition 2.5) — for pure ε-DP
      min(1, e^ε α, 1 − e^{−ε}(1 − α)) — rounded up by a relative 1e-14.

    Any other profile (e.g. ``mechanisms.Gaussian(σ).profile``, a Laplace mechanism, a
    composition): every ε gives a valid bound δ(ε) + e^ε α (resp. 1 − e^{−ε}(1 − δ(ε) − α)), so
    the minimum over any finite set of ε is an upper bound on TPR — the safe side. The set: a
    grid of ~770 points on ε ∈ [0, E] (513 linear, 257 geometric from 1e-8·E) for both terms,
    where E is eps_max, 745 (beyond it e^ε α > 1 for every positive float α) or the first 2^k
    with log δ(2^k) ≤ −800 (stopping there costs at most δ(E) < 1e-347); then, per α, up to 120
    golden-section steps in log t around the best grid point (t = e^{±ε}). For the exact profile
    of a mechanism δ(ε) + e^ε α is convex in t (δ(ε) = sup_S P(S) − e^ε Q(S)), so the secant
    slopes of the final bracket certify how far its best point can lie above the infimum; the
    search stops when that certified gap is below a relative 1e-13 or the bracket reaches float
    resolution (at a kink of a piecewise-linear profile the certificate is then looser, not the
    value). Measured against the closed forms (μ-GDP via ``mechanisms.Gaussian``, Laplace via
    its exact trade-off, (ε, δ)-DP via a plain function profile) over FPRs down to 5e-324: the
    best point is within ~5e-14 relative of the exact TPR. The result is rounded up by a
    relative 1e-12 (its own rounding and the profile's δ, whose relative error passes to the TPR
    at most 1:1), so it exceeds the TPR implied by the profile's δ by at most ~1.1e-12 relative
    (plus 4 subnormal ulps, for results below 1e-307). For profiles that are themselves only
    upper bounds (``ZCDPProfile``, ``RDPProfile``: not convex in t) the result is still a valid
    upper bound, possibly less tight. α = 1 gives 1; α = 0 gives inf_ε δ(ε), evaluated as the
    smallest δ on the grid and at ε = 2^k, k ≤ 30 (exact when δ reaches 0 by then). A NaN from
    the profile's δ is read as δ = 1 (safe). About 10 ms for 10 FPRs on a Gaussian mechanism.

    ``fpr`` ∈ [0, 1] broadcasts (array in, array out; a scalar gives a float). Within one call the
    results are non-decreasing in ``fpr`` (a running maximum over the sorted FPRs: it only raises
    values, by rounding-noise amounts — scipy's Φ and Φ⁻¹ are themselves not monotone at 1 ulp,
    so separate calls at adjacent floats may differ by a few ulps the other way). ``profile``: a
    PrivacyProfile, a mechanism with ``.profile``, or anything with ``.log_delta(eps)`` or
    ``.delta(eps)``. ``ValueError`` names the parameter: fpr outside [0, 1] or NaN, a non-profile.

    >>> from dpexplore.accounting.profiles import GaussianDPProfile
    >>> from dpexplore.accounting.conversions import PureDPProfile
    >>> round(tpr_at_fpr(GaussianDPProfile(1.0), 0.05), 9)     # Φ(Φ⁻¹(0.05) + 1)
    0.259511023
    >>> round(tpr_at_fpr(PureDPProfile(1.0), 0.1), 9)          # e · 0.1
    0.271828183
    >>> from dpexplore.mechanisms import Gaussian
    >>> round(tpr_at_fpr(Gaussian(1.0), 0.05), 9)              # numerical path, same value
    0.259511023
    >>> tpr_at_fpr(GaussianDPProfile(1.0), [0.0, 1.0])
    array([0., 1.])
    """
    a = check_probability(fpr, "fpr")
    kind = _classify(profile)
    return scalar_out(_running_max(a, _tpr(kind, a)))


def advantage(profile):
    """The membership advantage: the largest TPR − FPR of any test against a mechanism with this
    profile, max_α (1 − f(α) − α) = δ(0), the total variation distance between the output
    distributions on neighbouring inputs (Kairouz, Oh & Viswanath 2015, Theorem 2.1 at ε = 0:
    FPR + FNR ≥ 1 − δ(0); Dong, Roth & Su 2022, result “f-DP as (ε, δ(ε))-DP for all ε”; Kulynych et al. 2024 calibrate
    noise to it).

    Closed forms: μ-GDP 2Φ(μ/2) − 1 = erf(μ/(2√2)) (Dong, Roth & Su 2022, Corollary 2.13 at ε = 0),
    rounded up by a relative 1e-14; (ε₀, δ₀)-DP δ₀ + (1 − δ₀) tanh(ε₀/2) (Liu et al. 2022,
    Theorem 2.1 at ε = 0; ``conversions.implied_delta``, rounded up by 4 ulps) — pure ε-DP:
    tanh(ε/2). The exact profile of a pair of distributions, both directions (``pair_profile``:
    a symmetric mechanism's, a subsampled step's): δ(0) itself, rounded up by a relative 1e-12
    — the test "loss > 0" has TPR − FPR = P(L > 0) − Q(L > 0) = δ(0), and no test does better
    (the bound at ε = 0 below). Any other profile: the smallest of the advantage bounds of its (ε, δ(ε)) pairs,
    (e^ε − 1 + 2δ(ε))/(e^ε + 1) = tanh(ε/2) + 2δ(ε)/(e^ε + 1) (the peak of 1 − α − f for one pair,
    Dong, Roth & Su 2022, Proposition 2.5), over the ε grid of :func:`tpr_at_fpr`; that is δ(0)
    itself for the exact profile of a mechanism (every ε > 0 gives more) and can be smaller for
    profiles that are upper bounds (``ZCDPProfile``). Rounded up by a relative 1e-12.

    >>> from dpexplore.accounting.profiles import GaussianDPProfile
    >>> round(advantage(GaussianDPProfile(1.0)), 12)     # 2Φ(1/2) − 1
    0.382924922548
    >>> from dpexplore.mechanisms import Laplace
    >>> round(advantage(Laplace(1.0)), 10)               # 1 − e^{−1/2}
    0.3934693403
    """
    kind = _classify(profile)
    if kind[0] == "gdp":
        out = up(special.erf(kind[1] / (2.0 * np.sqrt(2.0))), "risk_closed")
    elif kind[0] == "approx":
        out = implied_delta(kind[1], kind[2], 0.0)
    elif _pair_profile(profile):
        out = up(float(np.exp(_safe_log_delta(kind[1], 0.0))), "risk_numerical")
    else:
        f, eps_max = kind[1], kind[2]
        eps = _eps_grid(_eps_end(f, eps_max))
        d = np.exp(_safe_log_delta(f, eps))
        with np.errstate(over="ignore"):
            bounds = np.tanh(eps / 2.0) + 2.0 * d * special.expit(-eps)
        grid_sup, (a_lo, a_hi) = _sup_tpr_minus_fpr(eps, d)
        out = min(float(np.min(bounds)), grid_sup, _sup_near(profile, a_lo, a_hi))
        out = up(out, "risk_numerical")
    return float(np.clip(out, 0.0, 1.0))


def _pair_profile(obj) -> bool:
    """Whether ``obj`` (a profile, or a mechanism with one) declares its δ the profile of a pair
    of distributions (``PrivacyProfile.pair_profile``)."""
    p = obj if isinstance(obj, PrivacyProfile) else getattr(obj, "profile", None)
    return bool(getattr(p, "pair_profile", False))


def _sup_near(profile, a_lo: float, a_hi: float) -> float:
    """max over α of g(α) = TPR(α) − α with :func:`tpr_at_fpr`'s TPR (each pair's ε refined by
    golden section, not only the grid's), near [a_lo, a_hi], the bracket of the grid's maximiser:
    9 points, re-centred until the best is at least two points from either end; then, g being
    concave, the line through the two points left of the best and the line through the two right
    of it lie above g between the best's neighbours, and the maximum is at most the value where
    they cross (exact for a kink, as ρ-zCDP's trade-off has). inf where that fails (never below
    the maximum)."""
    lo, hi = a_lo, a_hi
    for _ in range(4):
        a = np.linspace(lo, hi, 9)
        g = np.asarray(tpr_at_fpr(profile, a), dtype=np.float64) - a
        j = int(np.argmax(g))
        if 2 <= j <= 6:
            break
        width = hi - lo
        lo, hi = (max(lo - width, 0.0), lo + width / 4.0) if j < 2 else (hi - width / 4.0, min(hi + width, 1.0))
    else:
        return np.inf
    s1 = (g[j - 1] - g[j - 2]) / (a[j - 1] - a[j - 2])
    s2 = (g[j + 2] - g[j + 1]) / (a[j + 2] - a[j + 1])
    if not s1 > s2:
        return np.inf
    x = (g[j + 1] - g[j - 1] + s1 * a[j - 1] - s2 * a[j + 1]) / (s1 - s2)
    x = min(max(x, a[j - 1]), a[j + 1])
    return float(max(min(g[j - 1] + s1 * (x - a[j - 1]), g[j + 1] + s2 * (x - a[j + 1])), g[j]))


def _pairs_tpr(eps, d, a):
    """min over the pairs (ε_j, δ_j) of their TPR bounds at the FPRs ``a`` (a 1-d array): the
    TPR of the trade-off function the pairs imply together (Dong, Roth & Su 2022, Proposition 2.5
    for each pair), concave in α (a minimum of affine functions)."""
    with np.errstate(over="ignore", invalid="ignore"):
        up = d[None, :] + np.exp(np.minimum(eps, 745.0))[None, :] * a[:, None]
        down = 1.0 - np.exp(-eps)[None, :] * (1.0 - d[None, :] - a[:, None])
    return np.minimum(np.minimum(np.min(up, axis=1), np.min(down, axis=1)), 1.0)


def _sup_tpr_minus_fpr(eps, d):
    """(bound, bracket of the maximiser): the profile's own supremum of TPR − FPR: max over α of g(α) = TPR(α) − α, with TPR
    implied by all the pairs (ε_j, δ(ε_j)) of the grid at once (:func:`_pairs_tpr`). The
    per-pair peaks' minimum, min_j max_α, can only be larger (max_α min_j ≤ min_j max_α): for
    ρ-zCDP (``ZCDPProfile``) the pairs' own supremum is the smaller. g is concave, so after a
    grid and two zooms around the best point the secant slopes bound g between the points: the
    result is never below the maximum of g over [0, 1]."""
    a = np.unique(np.concatenate([np.linspace(0.0, 1.0, 129), np.geomspace(1e-12, 1.0, 129)]))
    for _ in range(3):
        g = _pairs_tpr(eps, d, a) - a
        i = int(np.argmax(g))
        lo, hi = a[max(i - 1, 0)], a[min(i + 1, a.size - 1)]
        if _ == 2 or hi <= lo:
            break
        a = np.unique(np.concatenate([np.linspace(lo, hi, 65), a[max(i - 1, 0) : i + 2]]))
    slack = 0.0
    if i > 0:  # g rises at most with its left secant's slope to the right of a_i
        s_left = (g[i] - g[i - 1]) / (a[i] - a[i - 1])
        if i + 1 < a.size:
            slack = max(slack, s_left * (a[i + 1] - a[i]))
    if i + 1 < a.size:  # ... and at most with minus its right secant's slope to the left
        s_right = (g[i + 1] - g[i]) / (a[i + 1] - a[i])
        if i > 0:
            slack = max(slack, -s_right * (a[i] - a[i - 1]))
    return float(g[i] + max(slack, 0.0)), (float(a[max(i - 1, 0)]), float(a[min(i + 1, a.size - 1)]))


def posterior_bound(profile, prior, fpr=None):
    """The largest posterior belief that the target is a member which an attacker with prior
    ``prior`` = π can reach from a positive test outcome:

        sup over tests (FPR α, TPR 1 − f(α)) of  π·TPR / (π·TPR + (1 − π)·α)

    (Bayes' rule on the trade-off function of Dong, Roth & Su 2022, Definition 2.1 and
    result “f-DP as (ε, δ(ε))-DP for all ε”). As TPR(α) = 1 − f(α) is concave with TPR(0) ≥ 0 (f is convex, Dong, Roth &
    Su 2022, result “characterization of trade-off functions”), the likelihood ratio TPR(α)/α does not increase with α, so

    * ``fpr=None`` (all tests): the sup is the limit α → 0: r₀ = lim TPR(α)/α = e^{ε₀} with
      ε₀ = inf{ε : δ(ε) = 0}, giving π e^{ε₀}/(π e^{ε₀} + 1 − π) — for pure ε-DP the classical
      π e^ε/(π e^ε + 1 − π) (Kairouz, Oh & Viswanath 2015, Theorem 2.1: TPR ≤ e^ε α). When δ(ε) > 0
      for every ε (Gaussian noise: unbounded privacy loss) or δ(∞) > 0 the bound is 1 — correct
      (tests at a vanishing FPR can be certain) but uninformative;
    * ``fpr`` = a ∈ (0, 1] (tests with false-positive rate ≥ a only): the sup is at α = a,
      π·T/(π·T + (1 − π)·a) with T = :func:`tpr_at_fpr` (profile, a) — finite and informative for
      Gaussian noise. ``fpr=0`` is the same as ``None``.

    Evaluated as 1/(1 + ((1 − π)/π)·(a/T)) (e^{−ε₀} in place of a/T for ``fpr=None``) with
    correctly rounded operations only, so it is exactly non-decreasing in π; T is
    :func:`tpr_at_fpr`'s upper bound (so a/T errs low, the posterior high), and the result is
    rounded up by a relative 1e-13 (the formula's own error is a few ulps), capped at 1 and never
    below π. Priors below 1e-300, where (1 − π)/π can overflow, use log π − log(π + a/T) instead,
    rounded up by a relative 1e-12. For profiles without a closed form, ε₀ is eps_max if finite,
    else an ε at which the profile's δ is exactly 0, found by probing 2^k up to 1e9 and 80
    bisection steps (so ≥ the true ε₀), else inf. ``prior`` ∈ (0, 1) and ``fpr`` broadcast
    together.

    >>> from dpexplore.accounting.conversions import PureDPProfile
    >>> from dpexplore.accounting.profiles import GaussianDPProfile
    >>> round(posterior_bound(PureDPProfile(1.0), 0.5), 9)       # e/(1 + e)
    0.731058579
    >>> posterior_bound(GaussianDPProfile(1.0), 0.5)
    1.0
    >>> round(posterior_bound(GaussianDPProfile(1.0), 0.5, fpr=0.01), 6)   # T/(T + 0.01)
    0.902308
    """
    p = as_array(prior, "prior")
    bad = ~((p > 0.0) & (p < 1.0))
    if bad.any():
        raise ValueError(f"prior must lie in (0, 1), got {_show(p[bad])}")
    a = None if fpr is None else check_probability(fpr, "fpr")
    kind = _classify(profile)
    if a is None:
        a = np.zeros(())
    p, a = np.broadcast_arrays(p, a)
    # ε₀ = inf{ε: δ(ε) = 0}: log of the likelihood ratio's limit TPR(α)/α as α → 0
    if kind[0] == "gdp":
        e0 = np.inf
    elif kind[0] == "approx":
        e0 = np.inf if kind[2] > 0.0 else kind[1]
    else:
        e0 = _eps_zero(kind[1], kind[2])
    # w = 1/r, the inverse likelihood ratio α/TPR at α = a (at a = 0 its limit e^{−ε₀}); a smaller
    # w (T rounded up) only raises the posterior
    pos = a > 0.0
    w = np.full(a.shape, float(np.exp(-e0)))
    log_w = np.full(a.shape, -float(e0))
    if pos.any():
        t = _tpr(kind, a[pos])
        # never below the limit e^{−ε₀} (≤ the true α/TPR for every α, ε₀ being rounded up): so
        # restricting the tests can never raise the bound, also at the ulp level
        w[pos] = np.maximum(np.minimum(a[pos] / t, 1.0), float(np.exp(-e0)))
        log_w[pos] = np.maximum(np.minimum(np.log(a[pos]) - np.log(t), 0.0), -float(e0))
    # π r/(π r + 1 − π) = 1/(1 + ((1 − π)/π)·w): correctly rounded operations only, so the result
    # is exactly non-decreasing in π (expit/logit are not, at the ulp level)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        out = 1.0 / (1.0 + ((1.0 - p) / p) * w)
        out = np.where(w == 0.0, 1.0, up(out, "risk_posterior"))
        # π < 1e-300: (1 − π)/π may overflow; log π − log(π + w) instead (1 − π = 1 there),
        # its log-space rounding (≲ 5e-13 relative) covered by a relative 1e-12
        tiny = p < 1e-300
        if tiny.any():
            lp = np.log(p[tiny])
            alt = np.exp(lp - np.logaddexp(lp, log_w[tiny]))
            out[tiny] = up(alt, "risk_numerical")
    out = np.clip(np.maximum(out, p), 0.0, 1.0)
    return scalar_out(out)
