"""Conversions between privacy notions: pure DP → Rényi DP, zCDP and Gaussian DP; Rényi DP and
zCDP → (ε, δ)-DP; the μ-GDP profile δ_μ(ε) and its inverses; the trade-off functions of (ε, δ)-DP,
μ-GDP and a privacy profile; and the profiles implied by ρ-zCDP, by an RDP curve and by a
trade-off equation (:class:`ZCDPProfile`, :class:`RDPProfile`, :class:`EquationProfile`).

Sources (full entries in :mod:`dpexplore.bibliography.references`; each docstring names its result):
T. Steinke's post "Tight RDP & zCDP bounds from pure DP" (Steinke 2024, Theorems 4 and 5: pure DP →
RDP, zCDP); T. Steinke's post "Composition basics" (Steinke 2022, footnote 2: zCDP ↔ (ε, δ)); Liu,
Sun, Jiang & Kong, "Identification, Amplification and Measurement: a bridge to Gaussian Differential
Privacy" (Liu et al. 2022: the μ-GDP profile, the partial order of (ε, δ) conditions, pure DP → GDP);
and the standard statements of Balle & Wang 2018, Dong, Roth & Su 2022, Mironov 2017, Bun & Steinke
2016, Canonne, Kamath & Steinke 2020 and Balle et al. 2020.

Re-exported by :mod:`dpexplore.accounting.conversions`, where they are documented and imported from.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..._numerics import gdp_epsilon_core, gdp_log_delta_core, gdp_mu_bracket, pure_rdp_exact
from ..._numerics import MARGINS, bracket_search, down, golden_min, newton_search, up
from ..._numerics import half_square_up, rdp_of_zcdp_up
from ..._validation import (
    check_alpha,
    check_delta,
    check_nonneg,
    check_positive,
    check_probability,
    scalar_out,
)
from ..profiles import PrivacyProfile


def _nonzero(x, e):
    """Where the exact value is positive (ε > 0) but underflowed to 0, return the smallest
    positive float instead (safe side)."""
    return np.where((x == 0) & (e > 0), np.nextafter(0.0, 1.0), x)


def _check_bound(bound, allowed):
    if not isinstance(bound, str) or bound not in allowed:
        raise ValueError(f"bound must be one of {', '.join(map(repr, allowed))}, got {bound!r}")
    return bound


# ------------------------------------------------------------------------------------------------
# pure DP -> RDP, zCDP
# ------------------------------------------------------------------------------------------------
def pure_to_rdp(eps, alpha, bound: str = "tight"):
    """Rényi DP ε̂(α) of an ε-DP mechanism (Steinke 2024, Theorem 4 "Pure DP to Rényi DP").

    ``bound="tight"``: ε̂(α) = ε − log[(1 + e^{−ε}) / (1 + e^{−(2α−1)ε})]/(α − 1), attained by
    randomized response (evaluated as log1p[(1 − e^{−(α−1)ε})(e^{αε} − 1)/(1 + e^ε)]/(α − 1)
    when αε ≤ 30 so that small ε keeps full relative accuracy); α = ∞ gives ε.
    ``"trivial"``: ε̂(α) = ε. ``"zcdp"``: ε̂(α) = αρ with ρ = ε·tanh(ε/2) (Steinke 2024, Theorem 5).
    Results are rounded up by 4 ulps. Broadcasts ``eps`` (≥ 0) and ``alpha`` (> 1, inf allowed).

    >>> round(pure_to_rdp(1.0, 2.0), 12)
    0.735325664056
    >>> pure_to_rdp(1.0, float("inf"))
    1.0
    >>> pure_to_rdp(1.0, 2.0, bound="trivial")
    1.0
    """
    _check_bound(bound, ("tight", "trivial", "zcdp"))
    e = check_nonneg(eps, "eps")
    a = check_alpha(alpha, "alpha")
    e, a = np.broadcast_arrays(e, a)
    if bound == "trivial":
        return scalar_out(np.array(e, dtype=np.float64))
    with np.errstate(invalid="ignore", over="ignore"):
        via_zcdp = np.where(np.isinf(a), np.inf, a * _zcdp_tight(e))
        via_zcdp = _nonzero(up(np.where(e == 0, 0.0, via_zcdp)), e)
    if bound == "zcdp":
        return scalar_out(via_zcdp)
    # the trivial and zCDP bounds are valid too: capping by them only absorbs the rounding
    tight = _nonzero(up(pure_rdp_exact(e, a)), e)
    return scalar_out(np.minimum(np.minimum(tight, e), via_zcdp))


def _zcdp_tight(e):
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(e), np.inf, e * np.tanh(e / 2.0))


def pure_to_zcdp(eps, bound: str = "tight"):
    """ρ such that an ε-DP mechanism is ρ-zCDP (Steinke 2024, Theorem 5 "Pure DP to zCDP").

    ``"tight"``: ρ = ε(e^ε − 1)/(e^ε + 1) = ε·tanh(ε/2) (attained by randomized response);
    ``"quadratic"``: ρ = ε²/2 (rounded upward: the float at or above it, as :func:`gdp_to_zcdp`);
    ``"trivial"``: ρ = ε. "tight" is rounded up by 4 ulps.

    >>> round(pure_to_zcdp(1.0), 12)
    0.46211715726
    >>> pure_to_zcdp(1.0, bound="quadratic")
    0.5
    """
    _check_bound(bound, ("tight", "quadratic", "trivial"))
    e = check_nonneg(eps, "eps")
    if bound == "trivial":
        return scalar_out(np.array(e, dtype=np.float64))
    with np.errstate(over="ignore"):
        if bound == "quadratic":
            return scalar_out(half_square_up(e))
        # ε·tanh(ε/2) ≤ ε²/2 ≤ ... : capped by the rounded-up ε²/2 (and ε), both valid bounds
        return scalar_out(_nonzero(np.minimum(np.minimum(up(_zcdp_tight(e)), e), half_square_up(e)), e))


def gdp_to_zcdp(mu):
    """ρ such that a μ-GDP mechanism is ρ-zCDP: ρ = μ²/2, the smallest such ρ.

    A μ-GDP pair of distributions is a post-processing of N(0, 1) vs N(μ, 1) (Dong, Roth & Su
    2022, definition “μ-GDP”), whose Rényi divergence of order α is αμ²/2 (Mironov 2017,
    Proposition 7; the Gaussian mechanism is Δ²/(2σ²)-zCDP: Bun & Steinke 2016, Proposition 1.6,
    with μ = Δ/σ); attained by the Gaussian mechanism. Rounded upward: the float at or above μ²/2
    (exact where μ²/2 is a float; the smallest positive float where μ² underflows, inf where it
    overflows). Broadcasts ``mu`` (≥ 0, inf allowed).

    >>> gdp_to_zcdp(1.0), gdp_to_zcdp(0.1) >= 0.005
    (0.5, True)
    >>> gdp_to_zcdp(0.0), gdp_to_zcdp(float("inf"))
    (0.0, inf)
    """
    m = check_nonneg(mu, "mu")
    return scalar_out(half_square_up(m))


def zcdp_to_rdp(rho, alpha):
    """Rényi DP ε̂(α) = αρ of a ρ-zCDP mechanism: ρ-zCDP is D_α ≤ αρ for every order α > 1
    (Bun & Steinke 2016, Definition 1.1); α = ∞ gives ∞ (0 for ρ = 0). Rounded upward: the float
    at or above αρ (exact where it is a float; the smallest positive float where αρ underflows).
    Broadcasts ``rho`` (≥ 0) and ``alpha`` (> 1, inf allowed).

    >>> zcdp_to_rdp(0.5, 2.0)
    1.0
    >>> zcdp_to_rdp(0.0, float("inf")), zcdp_to_rdp(0.5, float("inf"))
    (0.0, inf)
    """
    r = check_nonneg(rho, "rho")
    a = check_alpha(alpha, "alpha")
    r, a = np.broadcast_arrays(r, a)
    return scalar_out(rdp_of_zcdp_up(r, a))


# ------------------------------------------------------------------------------------------------
# RDP, zCDP -> (ε, δ)
# ------------------------------------------------------------------------------------------------
def _rdp_eps_terms(alphas, rdp, log_delta, improved):
    """ε_α(δ) for every order (last axis); δ = 0 (log δ = −inf) gives inf except at α = inf."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        am1 = alphas - 1.0
        if improved:
            term = np.log1p(-1.0 / alphas) - (log_delta[..., None] + np.log(alphas)) / am1
        else:
            term = -log_delta[..., None] / am1
        term = np.where(np.isinf(alphas), 0.0, term)  # both corrections vanish as α → ∞
        out = rdp + term
        out = np.where(np.isnan(out), np.inf, out)
    return out


def _checked_terms(alphas, rdp_eps, delta, bound):
    """The orders and the terms of :func:`rdp_epsilon_terms`, arguments checked by name."""
    _check_bound(bound, ("improved", "mironov"))
    a = check_alpha(alphas, "alphas")
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"alphas must be a non-empty 1-d array of orders, got shape {a.shape}")
    r = check_nonneg(rdp_eps, "rdp_eps")
    if r.ndim == 0 or r.shape[-1] != a.size:
        raise ValueError(f"rdp_eps must have the orders on its last axis (length {a.size}), got shape {r.shape}")
    d = check_delta(delta, "delta")
    lead = np.broadcast_shapes(r.shape[:-1], d.shape)
    r = np.broadcast_to(r, lead + (a.size,))
    with np.errstate(divide="ignore"):
        ld = np.broadcast_to(np.log(d), lead)
    return a, _rdp_eps_terms(a, r, ld, bound == "improved")


def rdp_epsilon_terms(alphas, rdp_eps, delta, bound: str = "improved"):
    """The RDP → (ε, δ) bound of every single order, before :func:`rdp_to_approx` minimises over
    the orders (not minimised, not clipped, not rounded: for plotting the bound against α).

    ``"mironov"`` (Mironov 2017, Proposition 3): ε_α = ε̂(α) + log(1/δ)/(α − 1).
    ``"improved"`` (Balle et al. 2020, Theorem 21; Canonne, Kamath & Steinke 2020):
    ε_α = ε̂(α) + log(1 − 1/α) − (log δ + log α)/(α − 1).
    ``rdp_eps`` has the orders on its last axis; α = inf gives ε̂(∞), δ = 0 gives inf.
    ``rdp_to_approx`` is max(min over α of these, 0) rounded up by 4 ulps.

    >>> a = np.array([2.0, 4.0, 8.0])
    >>> [round(float(x), 6) for x in rdp_epsilon_terms(a, a * 0.5, 1e-5)]
    [11.126631, 5.087862, 5.214109]
    """
    return _checked_terms(alphas, rdp_eps, delta, bound)[1]


def rdp_to_approx(alphas, rdp_eps, delta, bound: str = "improved", return_order: bool = False):
    """ε such that a mechanism with RDP curve ε̂(α) on ``alphas`` is (ε, δ)-DP, minimised over α.

    ``"mironov"`` (Mironov 2017, Proposition 3): ε = ε̂(α) + log(1/δ)/(α − 1).
    ``"improved"`` (Balle et al. 2020, Theorem 21; Canonne, Kamath & Steinke 2020):
    ε = ε̂(α) + log(1 − 1/α) − (log δ + log α)/(α − 1).
    The minimum over the given orders is clipped at 0 and rounded up by 4 ulps. ``alphas`` is a
    1-d array of orders (> 1, inf allowed: its term is ε̂(∞)), ``rdp_eps`` the curve on them
    (last axis; leading axes broadcast with ``delta``). δ = 0 gives inf unless α = inf is among
    the orders. ``return_order=True`` also returns the minimising order.

    >>> a = np.array([2.0, 4.0, 8.0, 16.0, 32.0])
    >>> round(rdp_to_approx(a, a * 0.5, 1e-5), 6)      # Gaussian, rho = 0.5
    5.087862
    >>> rdp_to_approx(a, a * 0.5, 1e-5, bound="mironov", return_order=True)[1]
    8.0
    """
    a, eps = _checked_terms(alphas, rdp_eps, delta, bound)
    idx = np.argmin(eps, axis=-1)
    best = np.take_along_axis(eps, idx[..., None], axis=-1)[..., 0]
    best = up(np.maximum(best, 0.0))
    if return_order:
        return scalar_out(best), scalar_out(a[idx])
    return scalar_out(best)


def zcdp_to_approx(rho, delta):
    """ε such that ρ-zCDP implies (ε, δ)-DP: ε = ρ + 2√(ρ log(1/δ)) (Steinke 2022, footnote 2; Bun &
    Steinke 2016, Proposition 1.3). δ = 0 gives inf (0 when ρ = 0). Rounded up by 4 ulps.

    >>> round(zcdp_to_approx(0.5, 1e-5), 6)
    5.298526
    """
    p = check_nonneg(rho, "rho")
    d = check_delta(delta, "delta")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # overflow: ε = inf
        out = p + 2.0 * np.sqrt(p * -np.log(d))
        out = np.where(p == 0, 0.0, out)
    return scalar_out(up(out))


def approx_to_zcdp(eps, delta):
    """The ρ that suffices for (ε, δ)-DP: ρ = ε²/(4 log(1/δ) + 4ε) (Steinke 2022, footnote 2), so that
    ρ + 2√(ρ log(1/δ)) ≤ ε. δ = 0 gives ρ = 0; ε = inf gives inf. Rounded down by 16 ulps, so
    that :func:`zcdp_to_approx` (rounded up by 4) maps the result back to at most ε.

    >>> round(approx_to_zcdp(1.0, 1e-5), 8)
    0.01997934
    """
    e = check_nonneg(eps, "eps")
    d = check_delta(delta, "delta")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = e / (4.0 * -np.log(d) / e + 4.0)  # = ε²/(4 log(1/δ) + 4ε), no overflow
        out = np.where(np.isinf(e), np.inf, np.where(e == 0, 0.0, out))
        out = np.where((d == 0) & np.isfinite(e), 0.0, out)
    return scalar_out(down(out, "zcdp_down"))


# ------------------------------------------------------------------------------------------------
# Gaussian DP
# ------------------------------------------------------------------------------------------------
def gdp_log_delta(mu, eps):
    """log δ_μ(ε) with δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Liu et al. 2022, Theorem 3.1, Eq. (1);
    Dong, Roth & Su 2022, Corollary 2.13); accurate far below float underflow (δ = 1e-5000 and
    beyond, via dpexplore._numerics.gaussian_log_delta; rounded up by 4·2⁻⁵² of log δ, never below the
    truth). μ = 0 gives −inf, μ = inf gives 0.

    >>> round(gdp_log_delta(1.0, 100.0), 4)
    -4960.2546
    """
    m = check_nonneg(mu, "mu")
    e = check_nonneg(eps, "eps")
    return scalar_out(gdp_log_delta_core(m, e))


def gdp_delta(mu, eps):
    """δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Liu et al. 2022, Theorem 3.1), the μ-GDP privacy profile.

    >>> round(gdp_delta(1.0, 1.0), 6)
    0.126937
    """
    return scalar_out(np.clip(np.exp(np.asarray(gdp_log_delta(mu, eps))), 0.0, 1.0))


def gdp_epsilon(mu, delta):
    """The smallest ε with δ_μ(ε) ≤ δ (Liu et al. 2022, Theorem 3.1), vectorized over ``mu`` and ``delta``.

    Safeguarded Newton iteration on log δ_μ (concave in ε, so iterates approach from the right);
    the result is checked to satisfy δ_μ(ε) ≤ δ (as computed) and exceeds the exact root by at most
    a relative ~2e-13 (it is the converged iterate moved up by a relative 1e-13). δ = 0 gives inf, μ = 0 gives 0.

    >>> e = gdp_epsilon(1.0, 1e-5)
    >>> round(e, 6), gdp_delta(1.0, e) <= 1e-5
    (4.377178, True)
    """
    m = check_nonneg(mu, "mu")
    d = check_delta(delta, "delta")
    return scalar_out(gdp_epsilon_core(m, d))


def approx_to_gdp(eps, delta, side: str = "down"):
    """The μ whose μ-GDP profile passes through (ε, δ): δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)
    = δ, where δ_μ(ε) rises with μ (Dong, Roth & Su 2022, Corollary 2.13: μ-GDP is exactly
    (ε, δ_μ(ε))-DP for every ε; Liu et al. 2022, Theorem 3.1). Vectorized over ``eps`` and
    ``delta`` (a bracketing bisection to adjacent floats, ``_numerics.gdp_mu_bracket``).

    ``side`` says which end of the bracket is returned, i.e. which guarantee holds:

    * ``"down"`` (default): the largest μ found with computed δ_μ(ε) ≤ δ — a μ-GDP mechanism is
      then (ε, δ)-DP (a budget: :func:`dpexplore.accounting.filters.filters_for_target`);
    * ``"up"``: the smallest μ found with computed δ_μ(ε) > δ — its curve passes on or above the
      point (ε, δ) (describing a profile's point: an object at (ε, δ) is no better than μ-GDP).

    The bracket's ends are adjacent floats; as computed, δ_μ(ε) wobbles by ~20 ulps of μ near the
    crossing, so the end returned is moved out by a relative :data:`GDP_MU_MARGIN` (1e-13, as
    :func:`gdp_epsilon`'s): ``"down"`` is at most 1e-13 below the exact root (as computed), ``"up"``
    at most ~1e-13 above it. δ = 0 gives 0 (finite ε); ε = inf gives inf.

    >>> mu = approx_to_gdp(1.0, 1e-6)
    >>> round(mu, 4), gdp_delta(mu, 1.0) <= 1e-6 < gdp_delta(approx_to_gdp(1.0, 1e-6, "up"), 1.0)
    (0.2367, True)
    >>> np.round(approx_to_gdp([0.0, 1.0, float("inf")], [0.0, 1e-6, 1e-6]), 10).tolist()
    [0.0, 0.2367043807, inf]
    """
    e = check_nonneg(eps, "eps")
    d = check_delta(delta, "delta")
    if side not in ("down", "up"):
        raise ValueError(f"side must be 'down' or 'up', got {side!r}")
    lo, hi = gdp_mu_bracket(e, d)
    if side == "down":
        return scalar_out(down(lo, "gdp_mu"))
    with np.errstate(over="ignore"):
        return scalar_out(up(hi, "gdp_mu"))


#: relative margin by which :func:`approx_to_gdp` moves μ to the safe side of its bracket
GDP_MU_MARGIN = MARGINS["gdp_mu"].rel


def pure_to_gdp(eps):
    """The smallest μ such that every ε-DP mechanism is μ-GDP: μ = 2Φ⁻¹(e^ε/(1 + e^ε))
    (Liu et al. 2022, result “all ε-DP algorithms are GDP”). The binding point is ε' = 0, where
    δ_μ(0) = 2Φ(μ/2) − 1 = tanh(ε/2) equals randomized response's total variation distance.

    Evaluated as 2√2·erfinv(tanh(ε/2)) for ε ≤ 1 and −2Φ⁻¹(1/(1 + e^ε)) (log space:
    ``ndtri_exp(−log1p(e^ε))``) above, for full relative accuracy; rounded up by a relative 1e-14.

    >>> round(pure_to_gdp(1.0), 10)
    1.2320353853
    """
    e = check_nonneg(eps, "eps")
    with np.errstate(over="ignore"):
        small = 2.0 * np.sqrt(2.0) * special.erfinv(np.tanh(np.minimum(e, 1.0) / 2.0))
        big = -2.0 * special.ndtri_exp(-np.logaddexp(0.0, np.maximum(e, 1.0)))
    out = np.where(e <= 1.0, small, big)
    out = np.where(np.isinf(e), np.inf, out)
    # at least one ulp up (subnormal μ: a relative 1e-14 rounds back)
    return scalar_out(np.where(np.isfinite(out) & (out > 0), up(out, "gdp_mu_pure"), out))


# ------------------------------------------------------------------------------------------------
# (ε, δ) partial order and trade-off functions
# ------------------------------------------------------------------------------------------------
def tradeoff_approx(eps, delta, alpha):
    """Type II error β(α) of the trade-off function of (ε, δ)-DP:
    f(α) = max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)) (Dong, Roth & Su 2022, Proposition 2.5;
    ). ``alpha`` ∈ [0, 1] is the type I error. A larger β claims more privacy, so the
    result is rounded down by 4.5e-16 (1 + β) (the absolute error of the subtractions);
    β(0) = 1 − δ is exact for δ = 0.

    >>> round(tradeoff_approx(1.0, 0.0, 0.1), 12)
    0.728171817154
    """
    e = check_nonneg(eps, "eps")
    d = check_delta(delta, "delta")
    a = check_probability(alpha, "alpha")
    with np.errstate(over="ignore", invalid="ignore"):
        t1 = 1.0 - d - np.where(a > 0, np.exp(e) * a, 0.0)
        t2 = np.exp(-e) * (1.0 - d - a)
    out = np.maximum(0.0, np.maximum(np.nan_to_num(t1, nan=0.0, neginf=0.0), t2))
    out = np.where((a == 0) & (d == 0), 1.0, out - 4.5e-16 * (1.0 + out))
    return scalar_out(np.clip(out, 0.0, 1.0))


def tradeoff_gdp(mu, alpha):
    """Type II error of μ-GDP: G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) (Dong, Roth & Su 2022, definition “μ-GDP”;
    Liu et al. 2022, Section 1), evaluated as Φ(−Φ⁻¹(α) − μ) so tiny α keeps full accuracy, and rounded down
    by a relative 1e-14 (a larger β would claim more privacy). μ = 0 gives 1 − α, μ = inf gives 0,
    α = 0 gives 1.

    >>> round(tradeoff_gdp(1.0, 0.05), 10)
    0.7404889772
    """
    m = check_nonneg(mu, "mu")
    a = check_probability(alpha, "alpha")
    m, a = np.broadcast_arrays(m, a)
    with np.errstate(invalid="ignore"):
        out = special.ndtr(-special.ndtri(a) - m)
    out = np.where(m == 0, 1.0 - a, down(out, "tradeoff_gdp"))
    out = np.where(np.isinf(m), 0.0, out)
    out = np.where((a == 0) & np.isfinite(m), 1.0, out)
    return scalar_out(np.clip(out, 0.0, 1.0))


def tradeoff_envelope(eps, delta, alpha):
    """The trade-off curve of a privacy profile from points (ε_i, δ(ε_i)) of it:
    β(α) = max_i f_{ε_i, δ_i}(α) with f_{ε, δ} the trade-off function of (ε, δ)-DP
    (Dong, Roth & Su 2022, Proposition 2.5 for each pair; the profile's f is the supremum over all
    ε: Dong, Roth & Su 2022, result “f-DP as (ε, δ(ε))-DP for all ε”). Each f is rounded down by
    :func:`tradeoff_approx`; a finite set of ε only lowers β, so the result is on the safe side (the
    best test's TPR = 1 − β is overstated, never understated). ``eps`` and ``delta`` are 1-D of one
    length (δ_i ∈ [0, 1]; pairs with δ_i ≥ 1 − 1e-16 or ε_i = inf say nothing and are skipped),
    ``alpha`` a 1-D array of type I errors; returns β at each α (0 where no pair says anything).

    >>> e = np.array([0.0, 1.0, 2.0]); a = np.array([0.0, 0.1, 1.0])
    >>> np.round(tradeoff_envelope(e, np.array([0.5, 0.2, 0.05]), a), 6).tolist()   # 1 − 0.2 − 0.1e
    [0.95, 0.528172, 0.0]
    """
    eps = np.atleast_1d(check_nonneg(eps, "eps"))
    delta = np.atleast_1d(check_probability(delta, "delta"))
    alpha = np.atleast_1d(check_probability(alpha, "alpha"))
    if eps.ndim != 1 or eps.shape != delta.shape:
        raise ValueError(f"eps and delta must be 1-D of one length, got shapes {eps.shape} and {delta.shape}")
    d = np.minimum(delta, 1.0 - 1e-16)
    keep = (d < 1.0 - 1e-16) & np.isfinite(eps)
    if not keep.any():
        return np.zeros_like(alpha)  # δ(ε) ≈ 1 everywhere: only the trivial β ≥ 0
    f = tradeoff_approx(eps[keep][:, None], d[keep][:, None], alpha[None, :])
    return np.max(f, axis=0)


# ------------------------------------------------------------------------------------------------
# Profiles implied by other notions
# ------------------------------------------------------------------------------------------------
def _zcdp_best_t(rho, eps):
    """t = α − 1 for the order minimising the improved RDP→δ bound for ρ-zCDP at ε: the root of
    f'(α) = (2α − 1)ρ − ε + log(1 − 1/α) (f convex in α). Safeguarded Newton in s = log t on
    g(s) = (2e^s + 1)ρ − log1p(e^{−s}) − ε (increasing in s), bracket s ∈ [−60, 60]."""
    rho, eps = np.broadcast_arrays(rho, eps)
    # the upper end reaches t = e^700: tiny ρ (1e-175) has its optimum near ε/(2ρ) ≫ e^60
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # start near the optimum: with log(1 − 1/α) ≈ −1/t, g = 0 reads 2ρt ≈ ε + 1/t, so
        # t₀ = (ε + √(ε² + 8ρ))/(4ρ) (Newton in s creeps by ~1 per step from a far start)
        t0 = (eps + np.sqrt(eps * eps + 8.0 * rho)) / (4.0 * rho)
        s = np.clip(np.log(np.maximum(t0, 1e-3)), -59.0, 699.0)

    def residual(s):
        es = np.exp(s)
        return (2.0 * es + 1.0) * rho - np.log1p(np.exp(-s)) - eps, 2.0 * rho * es + 1.0 / (1.0 + es)

    # the upper end reaches t = e^700: tiny ρ (1e-175) has its optimum near ε/(2ρ) ≫ e^60;
    # stops once no element moved by 1e-13 or more
    lo, hi = np.full(rho.shape, -60.0), np.full(rho.shape, 700.0)
    s, _, _ = newton_search(residual, s, lo, hi, steps=60, slack=1e-9, atol=np.nextafter(1e-13, 0.0))
    return np.exp(s)


def _improved_log_delta_t(t, rdp, eps):
    """log δ from the improved conversion inverted (Canonne, Kamath & Steinke 2020, Prop. 12, Balle et al. 2020 Thm 21),
    in t = α − 1 (no cancellation as α → 1):
    log δ = (α − 1)(ε̂(α) − ε + log(1 − 1/α)) − log α = t(ε̂ − ε + log t − log1p t) − log1p t."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        l1 = np.log1p(t)
        # log(1 − 1/α) = log t − log1p t, written −log1p(1/t) for t > 1 (no cancellation)
        lr = np.where(t > 1.0, -np.log1p(1.0 / t), np.log(t) - l1)
        out = t * (rdp - eps + lr) - l1
        return np.where(t == 0, 0.0, out)


class ZCDPProfile(PrivacyProfile):
    """The δ(ε) implied by ρ-zCDP through the improved RDP conversion (Canonne, Kamath & Steinke
    2020, Proposition 12; Balle et al. 2020, Theorem 21), optimised over all real α > 1:

        log δ(ε) = min_α [(α − 1)(αρ − ε + log(1 − 1/α)) − log α].

    The objective is convex in α with derivative (2α − 1)ρ − ε + log(1 − 1/α); its root is found
    by a safeguarded Newton iteration. Any α gives a valid bound, so an inexact minimiser only
    errs on the safe side (by a relative ~1e-12 in log δ at most). ``epsilon`` minimises
    ε(α) = αρ + log(1 − 1/α) − (log δ + log α)/(α − 1) over α the same way (stationary point
    ρ(α − 1)² = log(1/(αδ))). ρ = 0 gives δ ≡ 0.

    >>> p = ZCDPProfile(0.5)
    >>> round(p.delta(4.0), 8)
    0.0001958
    >>> bool(p.delta(p.epsilon(1e-5)) <= 1e-5)
    True
    """

    def __init__(self, rho):
        r = check_nonneg(rho, "rho", allow_inf=False)
        if r.ndim:
            raise ValueError(f"rho must be a scalar for a profile, got {rho!r}")
        self.rho = float(r)
        self.eps_max = 0.0 if self.rho == 0.0 else np.inf
        self.name = f"{self.rho:g}-zCDP"

    def _constructor(self):
        return f"ZCDPProfile(rho={self.rho!r})"

    def _card_notions(self, info) -> None:
        """Its notebook card (:mod:`dpexplore.display`): ρ exactly, ε̂(α) = αρ."""
        info.rho = (self.rho, "exact")
        info.rdp, info.rdp_how = (lambda a, r=self.rho: a * r), "α ρ"

    def _log_delta(self, eps):
        if self.rho == 0.0:
            return np.full(np.shape(eps), -np.inf)
        eps = np.asarray(eps, dtype=np.float64)
        t = _zcdp_best_t(self.rho, eps)
        with np.errstate(over="ignore"):  # huge ρ: ε̂ = inf, δ = 1 (capped by the base class)
            out = _improved_log_delta_t(t, (1.0 + t) * self.rho, eps)
        return np.where(np.isinf(eps), -np.inf, out)

    def _epsilon(self, delta):
        d = np.asarray(delta, dtype=np.float64)
        if self.rho == 0.0:
            return np.zeros_like(d)
        rho = self.rho
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ld = np.log(d)

            # stationary point of ε(α): h(α) = ρ(α − 1)² + log α + log δ = 0, increasing in α;
            # solve in t = α − 1 by 85 bisection steps on log t ∈ [−80, 700] (any α is valid;
            # the same upper end as the δ side, so tiny ρ stays consistent with ``delta``).
            def not_below(s):  # h(e^s) ≥ 0 (NaN counts as not below: the old rule)
                t = np.exp(s)
                return ~(rho * t * t + np.log1p(t) + ld < 0)

            lo, hi = bracket_search(
                not_below, np.full(d.shape, -80.0), np.full(d.shape, 700.0), safe="hi", steps=85, ulps=0.0, ends=True
            )
            t = np.exp(0.5 * (lo + hi))
            l1 = np.log1p(t)
            lr = np.where(t > 1.0, -np.log1p(1.0 / t), np.log(t) - l1)  # log(1 − 1/α)
            eps = (1.0 + t) * rho + lr - (ld + l1) / t
            eps = np.where(d == 0, np.inf, eps)
        return np.maximum(up(eps), 0.0)


class RDPProfile(PrivacyProfile):
    """The δ(ε) implied by an RDP curve ε̂(α) on finitely many orders, via the improved conversion
    inverted (Canonne, Kamath & Steinke 2020, Prop. 12; Balle et al. 2020, Thm 21), min over orders:

        log δ(ε) = min_i [(α_i − 1)(ε̂(α_i) − ε + log(1 − 1/α_i)) − log α_i].

    An order α = inf contributes δ = 0 for ε ≥ ε̂(∞) (so ``eps_max`` = ε̂(∞)). ``epsilon`` is
    :func:`rdp_to_approx` (improved), consistent with ``delta`` order by order.

    >>> a = np.array([2.0, 4.0, 8.0, 16.0, 32.0])
    >>> p = RDPProfile(a, 0.5 * a)
    >>> round(p.epsilon(1e-5), 6)
    5.087862
    """

    def __init__(self, alphas, rdp_eps):
        a = check_alpha(alphas, "alphas")
        r = check_nonneg(rdp_eps, "rdp_eps")
        if a.ndim != 1 or a.size == 0 or r.shape != a.shape:
            raise ValueError(f"alphas and rdp_eps must be 1-d arrays of the same length, got {a.shape}, {r.shape}")
        self.alphas = a.copy()
        self.rdp_eps = r.copy()
        inf_order = np.isinf(a)
        self.eps_max = float(r[inf_order].min()) if inf_order.any() else np.inf
        self._fin = ~inf_order
        self.name = f"RDP ({a.size} orders)"

    def _constructor(self):
        return f"RDPProfile(alphas={self.alphas.tolist()!r}, rdp_eps={self.rdp_eps.tolist()!r})"

    def _card_notions(self, info) -> None:
        """Its notebook card (:mod:`dpexplore.display`): ε̂ at its own orders only, no ρ."""
        table = dict(zip(self.alphas.tolist(), self.rdp_eps.tolist()))

        def rdp(a, _t=table):
            if float(a) not in _t:
                raise KeyError(a)
            return _t[float(a)]

        info.rdp, info.rdp_how = rdp, "the profile's own orders"
        info.rdp_why = "not one of the profile's orders"
        info.rho_why = "an RDP curve on finitely many orders gives no ρ"

    def _log_delta(self, eps):
        eps = np.asarray(eps, dtype=np.float64)
        a = self.alphas[self._fin]
        if a.size == 0:
            return np.zeros(eps.shape)
        ld = _improved_log_delta_t(a - 1.0, self.rdp_eps[self._fin], eps[..., None])
        ld = np.where(np.isnan(ld), -np.inf, ld)
        return np.min(ld, axis=-1)

    def _epsilon(self, delta):
        d = np.asarray(delta, dtype=np.float64)
        return np.asarray(rdp_to_approx(self.alphas, self.rdp_eps, d), dtype=np.float64)


class EquationProfile(PrivacyProfile):
    """Profile of a mechanism calibrated by the trade-off equation σ = A·√(log(B/δ))/ε
    (Liu et al. 2022, Section 2 and Figure 1 left: "SGD" with A = 2, B = 1, σ = 2).

    Naive (Liu et al. 2022, δ_A(ε) = min{δ | σ = g(ε, δ)}): inverting the equation gives
    δ_n(ε) = min(1, B·exp(−(σε/A)²)).
    Refined (Liu et al. 2022, Theorem 2.1 and the display after it): every pair (ε₀, δ_n(ε₀)) implies
    (ε, implied_delta(ε₀, δ_n(ε₀), ε)), so δ(ε) = inf_{ε₀ ≥ 0} [δ₀ + (1 − δ₀)(e^{ε₀} − e^ε)₊
    /(1 + e^{ε₀})] with δ₀ = δ_n(ε₀), capped at 1. Terms with ε₀ ≤ ε give δ_n(ε) (monotone), so
    only ε₀ > ε needs a search: 32-point grid then 36 golden-section steps around the best grid
    point, per ε, vectorized. Every ε₀ gives a valid bound, so the search can only err on the
    safe side (measured: within 1e-12 of a dense reference). ε₀ beyond the point where
    δ_n = 1e-50·B are not searched (they cannot lower δ by more than 1e-50).

    >>> naive = equation_profile(2.0, 1.0, 2.0)
    >>> refined = equation_profile(2.0, 1.0, 2.0, refined=True)
    >>> naive.delta(0.0), round(refined.delta(0.0), 6)
    (1.0, 0.646685)
    """

    def __init__(self, A, B, sigma, refined: bool = False):
        vals = []
        for v, nm in ((A, "A"), (B, "B"), (sigma, "sigma")):
            arr = check_positive(v, nm)
            if arr.ndim:
                raise ValueError(f"{nm} must be a scalar for a profile, got {v!r}")
            vals.append(float(arr))
        self.A, self.B, self.sigma = vals
        self.refined = bool(refined)
        with np.errstate(over="ignore", under="ignore"):  # numpy: inf/0, no OverflowError
            self._c = float(np.square(np.float64(self.sigma) / self.A))
        if not 0.0 < self._c < np.inf:
            raise ValueError(f"sigma/A must have a square within the float range, got sigma={sigma!r}, A={A!r}")
        self._logB = float(np.log(self.B))
        self.name = f"σ = {self.A:g}√log({self.B:g}/δ)/ε, σ = {self.sigma:g}" + (
            " (refined)" if self.refined else " (naive)"
        )

    def _constructor(self):
        return f"EquationProfile(A={self.A!r}, B={self.B!r}, sigma={self.sigma!r}, refined={self.refined!r})"

    def _naive_log_delta(self, eps):
        with np.errstate(over="ignore", invalid="ignore"):
            return np.minimum(self._logB - self._c * eps * eps, 0.0)

    def _log_delta(self, eps):
        eps = np.asarray(eps, dtype=np.float64)
        naive = self._naive_log_delta(eps)
        if not self.refined:
            return naive
        shape = eps.shape
        e = eps.ravel()
        out = naive.ravel().copy()
        todo = np.isfinite(e) & (out > -700.0)  # where δ_n(ε) is not negligible
        if todo.any():
            et = e[todo]
            x1 = np.sqrt(max(self._logB, 0.0) / self._c)  # δ_n < 1 beyond x1
            xh = np.sqrt(max(self._logB + 50.0 * np.log(10.0), 0.0) / self._c)
            lo = np.maximum(et, x1)
            hi = np.maximum(lo, xh) + 1e-12
            best = np.minimum(self._refined_search(et, lo, hi), 1.0)
            out[todo] = np.minimum(out[todo], np.log(np.clip(best, 1e-300, 1.0)))
        return out.reshape(shape)

    def _h(self, e, x):
        """implied_delta(x, δ_n(x), e) for x ≥ e (linear space)."""
        with np.errstate(over="ignore", invalid="ignore"):
            d0 = np.minimum(np.exp(self._logB - self._c * x * x), 1.0)
            r = -np.expm1(np.minimum(e - x, 0.0)) / (1.0 + np.exp(-x))
            return d0 + (1.0 - d0) * r

    def _refined_search(self, e, lo, hi):
        """min over x ∈ [lo, hi] of _h(e, x): 32-point grid, then 36 golden-section steps in the
        two grid cells around the best point (every evaluated x is a valid bound)."""
        return golden_min(lambda x: self._h(e[:, None] if x.ndim == 2 else e, x), lo, hi)

    def _naive_epsilon(self, d):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.sqrt(np.maximum(self._logB - np.log(d), 0.0) / self._c)

    def _eps_cand(self, d, x):
        """ε at which implied_delta(x, δ_n(x), ·) reaches δ = d (valid where δ_n(x) ≤ d)."""
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            d0 = np.minimum(np.exp(self._logB - self._c * x * x), 1.0)
            arg = -(d - d0) * (1.0 + np.exp(-x)) / (1.0 - d0)
            out = x + np.log1p(np.maximum(arg, -1.0))
            out = np.where(d0 > d, np.inf, np.maximum(out, 0.0))
        return np.where(np.isnan(out), np.inf, out)

    def _epsilon(self, delta):
        d = np.asarray(delta, dtype=np.float64)
        naive = up(self._naive_epsilon(d))
        if not self.refined:
            return naive
        # refined: ε(δ) = min over ε₀ ≥ ε_n(δ) of the ε where (ε₀, δ_n(ε₀)) implies δ (Liu et al. 2022 Thm 2.1);
        # every ε₀ gives a valid value. Only ε₀ ≤ ε_n(δ) + min(50, 1 − log(1 − 2δ)) can beat ε₀ =
        # ε_n(δ). Grid of 32 points then 36 golden-section steps; each result is re-checked
        # against ``delta`` and falls back to the base-class bisection where the check fails.
        shape = d.shape
        dd = d.ravel()
        out = naive.ravel().copy()
        todo = (dd > 0) & np.isfinite(out) & (out > 0)
        if todo.any():
            dt = dd[todo]
            lo = self._naive_epsilon(dt)
            with np.errstate(divide="ignore"):
                width = np.minimum(50.0, 1.0 - np.log1p(-np.minimum(2.0 * dt, 1.0 - 1e-16)))
            hi = lo + width
            best = golden_min(lambda x: self._eps_cand(dt[:, None] if x.ndim == 2 else dt, x), lo, hi)
            res = np.minimum(up(best, "refined"), out[todo])
            # verify against the profile itself (its own inner search) and fall back if needed
            with np.errstate(divide="ignore"):
                bad = self._log_delta_checked(res) > np.log(dt)
            if bad.any():
                res[bad] = super()._epsilon(dt[bad])
            out[todo] = res
        return out.reshape(shape)


def equation_profile(A, B, sigma, refined: bool = False) -> EquationProfile:
    """The profile of a mechanism whose guarantee reads σ = A·√(log(B/δ))/ε (Liu et al. 2022, Figure 1 left):
    naive δ(ε) = min(1, B·e^{−(σε/A)²}); ``refined=True`` takes the tightest profile implied by the
    whole family through Liu et al. 2022 Theorem 2.1 (see :class:`EquationProfile`).

    >>> round(equation_profile(2.0, 1.0, 2.0).delta(1.0), 12)
    0.367879441171
    """
    return EquationProfile(A, B, sigma, refined=refined)
