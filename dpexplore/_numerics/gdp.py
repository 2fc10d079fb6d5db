"""μ-GDP in log space: log δ_μ(ε), ε_μ(δ) (Newton from the right, checked) and the μ bracket of
a point (ε, δ)."""

from __future__ import annotations


import numpy as np
from scipy import special

from .rounding import down, up  # noqa: F401
from .search import grow_bracket, newton_search, within, bracket_search  # noqa: F401
from .special import log1mexp, log_subtract, gaussian_log_delta, SQRT2, LOG_HALF  # noqa: F401


def gdp_mu_bracket(eps, delta, points: int = 64):
    """The μ with δ_μ(ε) = δ, bracketed (the core of :func:`dpexplore.accounting.conversions.approx_to_gdp`):
    element-wise ``(lo, hi)`` with computed δ_lo(ε) ≤ δ (:func:`within`: the log and the exp test)
    and δ_hi(ε) > δ, adjacent floats once converged. δ_μ(ε) rises with μ, so ``lo`` is the safe
    end when μ must guarantee (ε, δ)-DP and ``hi`` when μ describes a point (ε, δ) of a profile.
    Ends: δ = 0 gives (0, 0); ε = inf or δ ≥ 1 gives (inf, inf). The bracket starts at [0, 1] and
    grows by factors 2^16; each round then evaluates ``points`` points inside it at once
    (spaced by powers of 2^-34 below ``hi`` while ``lo`` is 0, geometrically while the bracket
    spans more than a factor 2, else evenly) and keeps the two around the crossing: about ten
    rounds reach adjacent floats."""
    e, d = np.broadcast_arrays(np.asarray(eps, dtype=np.float64), np.asarray(delta, dtype=np.float64))
    shape = e.shape
    e, d = e.ravel(), d.ravel()
    top = (d >= 1.0) | np.isinf(e)
    active = ~top & (d > 0.0)
    lo, hi = np.zeros_like(e), np.ones_like(e)
    ea, da = np.where(active, e, 0.0)[:, None], np.where(active, d, 1.0)[:, None]

    def ok(mu):  # mu: (n, k)
        return within(gdp_log_delta_core(np.where(active[:, None], mu, 0.0), ea), da)

    lo, hi = grow_bracket(lambda mu: ~ok(mu[:, None])[:, 0], lo, hi, grow=65536.0, active=active)  # to δ_hi(ε) > δ
    j = np.arange(1, points + 1, dtype=np.float64)[None, :]
    for _ in range(200):  # keeps δ_lo ≤ δ < δ_hi
        live = active & np.isfinite(hi) & (np.nextafter(lo, np.inf) < hi)
        if not live.any():
            break
        L, H = lo[:, None], hi[:, None]
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            below = H * np.exp2(-34.0 * j)
            geo = np.exp(np.log(L) + (np.log(H) - np.log(L)) * j / (points + 1))
            even = L + (H - L) * (j / (points + 1))
            grid = np.where(L == 0.0, below, np.where(H / 2.0 > L, geo, even))
        grid = np.where((grid > L) & (grid < H), grid, L)  # a point off the bracket: lo again
        good = ok(grid) | (grid == L)
        # δ rises with μ: the good points are the smallest ones (all of them if ever non-monotone
        # noise made a later one good, the bracket keeps the first bad point, still valid)
        new_lo = np.max(np.where(good, grid, L), axis=1)
        new_hi = np.min(np.where(~good & (grid > new_lo[:, None]), grid, H), axis=1)
        lo = np.where(live, new_lo, lo)
        hi = np.where(live, new_hi, hi)
    lo = np.where(top, np.inf, lo)
    hi = np.where(top, np.inf, np.where(active, hi, 0.0))
    return lo.reshape(shape), hi.reshape(shape)


# -- μ-GDP: log δ_μ(ε) and its inverse (dpexplore.accounting.conversions.gdp_log_delta / gdp_epsilon) --
def gdp_log_delta_core(mu, eps):
    mu, eps = np.broadcast_arrays(np.asarray(mu, dtype=np.float64), np.asarray(eps, dtype=np.float64))
    safe_mu = np.where(mu > 0, mu, 1.0)
    out = gaussian_log_delta(safe_mu, eps)
    return np.where(mu > 0, np.minimum(out, 0.0), -np.inf)


def _gdp_dlogdelta(mu, eps, logd):
    """d log δ_μ/dε = −e^ε Φ(−ε/μ − μ/2)/δ_μ(ε) (< 0)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return -np.exp(eps + special.log_ndtr(-eps / mu - mu / 2.0) - logd)


def gdp_epsilon_core(mu, delta):
    """Vectorized inverse of δ_μ (Liu et al. 2022, Theorem 3.1;
    :func:`dpexplore.accounting.conversions.gdp_epsilon`): smallest ε with log δ_μ(ε) ≤ log δ
    (mu > 0 finite, 0 < δ)."""
    mu, delta = np.broadcast_arrays(np.asarray(mu, dtype=np.float64), np.asarray(delta, dtype=np.float64))
    shape = mu.shape
    m = mu.ravel().copy()
    d = delta.ravel().copy()
    out = np.zeros_like(m)
    with np.errstate(divide="ignore"):
        target = np.log(d)
    # aim slightly below log δ so that exp(log δ_μ(ε)) ≤ δ also holds after rounding of exp
    target = down(target, "ulps") - 4e-16  # 4 ulps, and 4e-16 for δ near 1 (log δ near 0)
    ok = (m > 0) & np.isfinite(m) & (d > 0)
    out[(d == 0) & (m > 0)] = np.inf
    out[np.isinf(m)] = np.inf
    if ok.any():
        mm, tt = m[ok], target[ok]
        at0 = gdp_log_delta_core(mm, 0.0)
        need = tt < at0
        res = np.zeros_like(mm)
        if need.any():
            mu_, t_ = mm[need], tt[need]
            # upper bracket: δ_μ(ε) ≤ Φ(μ/2 − ε/μ), so Φ(μ/2 − ε/μ) = δ gives δ_μ(ε) ≤ δ
            with np.errstate(over="ignore"):  # huge μ: the bracket is inf, Newton bisects
                hi = mu_ * (mu_ / 2.0 - special.ndtri(np.exp(t_)))
                hi = np.where(np.isfinite(hi), hi, mu_ * mu_ / 2.0 + mu_ * np.sqrt(2.0 * -t_))
            hi = hi * (1.0 + 1e-12) + 1e-300
            # log δ_μ is concave in ε (Prékopa: (1 − e^{ε−ℓ})₊ and the Gaussian density are
            # log-concave), so Newton from the right stays to the right of the root. Residual
            # t − log δ_μ(ε) (increasing in ε); g underflowing to 0 or f = −inf gives a
            # non-finite step, bisected instead; huge μ: x = inf (the answer)

            def residual(x):
                f = gdp_log_delta_core(mu_, x)
                return t_ - f, -_gdp_dlogdelta(mu_, x, f)

            x, lo, hi = newton_search(residual, hi, np.zeros_like(hi), hi, steps=60, rtol=1e-13, floor=1e-6)
            # the returned value is checked: δ_μ(ε) ≤ δ holds at it (safe side)
            cand = up(x, "gdp_eps") + 1e-300
            fc = gdp_log_delta_core(mu_, cand)
            res_need = np.where(fc <= t_, np.minimum(cand, hi), hi)
            res[need] = res_need
        out[ok] = res
    return out.reshape(shape)
