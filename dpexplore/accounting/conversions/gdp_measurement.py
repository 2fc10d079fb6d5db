"""Whether a privacy profile is Gaussian DP, and for which μ: GDP identification and measurement
after Liu, Sun, Jiang & Kong, "Identification, Amplification and Measurement: a bridge to Gaussian
Differential Privacy" (Liu et al. 2022).

* :func:`gdp_identify` — the tail value μ_t = lim_{ε→∞} ε/√(−2 log δ(ε)) (Liu et al. 2022, Theorem
  3.3): the profile is GDP iff μ_t < ∞ (Liu et al. 2022, Theorem 3.2), fitted on the far tail;
* :func:`gdp_violated_mu` — the largest μ a profile explicitly violates on a grid of ε (Liu et al.
  2022, Theorem 3.1: μ-GDP means δ ≤ δ_μ at every ε);
* :func:`gdp_measure` — a bracket of the optimal μ, the lower end violated and the upper end
  certified (Liu et al. 2022, the result “GDPT”);
* :func:`gdp_bracket` (:class:`GdpBracket`) and :func:`gdp_certified_mu` (:class:`CertifiedMu`) —
  the dashboards' readouts: a GDP verdict within an evaluation budget, with a fallback on theory
  (Liu et al. 2022, result “all ε-DP algorithms are GDP”), and the best certified μ.

The μ-GDP profile δ_μ(ε) and pure DP → GDP come from :mod:`.notions` (this module imports it,
never the other way). Re-exported by :mod:`dpexplore.accounting.conversions`, where they are
documented and imported from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._numerics import bracket_search, gdp_log_delta_core, grow_bracket
from ..._validation import as_array, check_int, check_nonneg, check_positive, check_positive_scalar
from ..profiles import GaussianDPProfile, PureDPProfile  # noqa: F401  (the doctests)
from ..profiles import PrivacyProfile, _log_delta_source, _profile_of
from .notions import gdp_log_delta, pure_to_gdp


# ------------------------------------------------------------------------------------------------
# GDP identification and measurement (Liu et al. 2022, Section 3 and the result “GDPT”)
# ------------------------------------------------------------------------------------------------
#: depth of the far tail used by gdp_identify / gdp_measure: log δ = −11500 (δ ≈ 1e-4994)
_FAR_LOG_DELTA = -11500.0
_FIT_SCALES = np.array([1.0, 0.9, 0.8, 0.7, 0.6, 0.5])


def _far_eps(f, target=_FAR_LOG_DELTA, cap=1e9):
    """Smallest-ish ε with f(ε) ≤ target by doubling then 80 bisection steps (inf if above cap)."""

    def below(e):
        return float(f(e)) <= target

    lo, hi = grow_bracket(below, 0.0, 1.0, grow=2.0, stop=lambda e: e > cap)
    if hi > cap:
        return np.inf
    return float(
        bracket_search(
            lambda e: np.asarray(f(e), dtype=float) <= target, lo, hi, safe="hi", steps=80, rtol=1e-13, ulps=0.0
        )
    )


def _tail_fit(f, e_far, quadratic_only=False):
    """Intercept c0 of h(ε) = −2 log δ(ε)/ε² fitted in x = 1/ε on ε ∈ e_far·[0.5, 1]."""
    e = e_far * _FIT_SCALES
    x = 1.0 / e
    h = -2.0 * f(e) / (e * e)
    cols = [np.ones_like(x), x, x * x]
    if not quadratic_only:
        cols.append(x * x * np.log(x))
    coef = np.linalg.lstsq(np.stack(cols, axis=1), h, rcond=None)[0]
    return float(coef[0]), float(h[0])


def gdp_identify(profile) -> float:
    """GDP identification value μ_t = lim_{ε→∞} ε/√(−2 log δ(ε)) (Liu et al. 2022, Theorem 3.3): a profile is
    μ-GDP only if μ ≥ μ_t, and it is GDP iff μ_t < ∞ (Liu et al. 2022, Theorem 3.2).

    ``profile`` is a :class:`~dpexplore.accounting.profiles.PrivacyProfile`, a mechanism with a ``.profile``
    attribute, or anything with ``.log_delta(eps)``; log δ must be accurate down to
    log δ = −11500 (δ ≈ 1e-4994).

    Method: find ε_far with log δ(ε_far) = −11500; fit h(ε) = −2 log δ(ε)/ε² on six points of
    [ε_far/2, ε_far] by least squares in x = 1/ε with the basis {1, x, x², x² log x} (the
    expansion of the μ-GDP tail, Liu et al. 2022 Lemma 3.1: h = 1/μ² − 1/ε + O(log ε/ε²)); μ_t = 1/√c₀.
    Measured error on μ-GDP profiles: relative < 1e-6 for μ ≤ 20, < 1e-4 for μ ≤ 50 (for larger
    μ the far tail is not yet asymptotic at δ = 1e-5000; the value is then less reliable).

    Conventions: returns 0.0 when δ reaches 0 at a finite ε (pure DP; such profiles are GDP,
    Liu et al. 2022, result “all ε-DP algorithms are GDP” — μ_t = 0 is the tail value, the actual μ comes from the head, see
    :func:`gdp_measure`), also when δ ≡ 0. Returns inf (not GDP) when log δ stays above −11500
    up to ε = 1e9, or when the fitted intercept is ≤ 0, or when the same fit one octave further
    in (ε_far/4) gives an intercept more than 3 % larger (h still falling: a heavier-than-Gaussian
    tail such as δ = e^{−ε}). Tails exp(−ε^p) with p close to 2 (p ≳ 1.97) cannot be told apart
    from GDP with a large μ at this depth. Tails lighter than Gaussian (h still growing by more
    than 10 % between the two windows while ε_far/4 > 20 μ_t²) give 0.0, the limit; milder
    cases (e.g. Subbotin shape r = 1.95) return a small positive value, which is still a valid
    lower end for μ.

    >>> round(gdp_identify(GaussianDPProfile(1.5)), 6)
    1.5
    >>> gdp_identify(PureDPProfile(1.0))
    0.0
    """
    f, eps_max = _log_delta_source(profile)
    if np.isfinite(eps_max) or np.isneginf(float(f(0.0))):
        return 0.0
    e_far = _far_eps(f)
    if not np.isfinite(e_far):
        return float("inf")
    vals = f(e_far * _FIT_SCALES / 4.0)
    if np.isneginf(float(f(e_far * 0.5 / 4.0))) or np.isneginf(vals).any():
        return 0.0
    c0, _ = _tail_fit(f, e_far)
    c0_q, _ = _tail_fit(f, e_far, quadratic_only=True)
    c0_q_in, _ = _tail_fit(f, e_far / 4.0, quadratic_only=True)
    if c0 <= 0.0 or c0_q <= 0.0 or c0_q_in <= 0.0 or c0_q < 0.97 * c0_q_in:
        return float("inf")
    mu_t = float(1.0 / np.sqrt(c0))
    if e_far / 4.0 > 20.0 * mu_t * mu_t and c0_q > 1.1 * c0_q_in:
        # both windows are far into the tail (ε ≫ μ_t²) yet h keeps growing: the tail is
        # lighter than Gaussian (e.g. Subbotin noise with shape r < 2), so the limit is 0
        return 0.0
    return mu_t


def gdp_violated_mu(eps, log_delta, mu_max: float):
    """The largest μ in (0, ``mu_max``] that a profile explicitly violates on a grid: with the
    profile's log δ_A(ε_i) given at the points ε_i, the largest μ (to 1e-4 relative, rounded down:
    the safe side of a lower bound) with

        log δ_A(ε_i) > log δ_μ(ε_i) + 1e-12·(1 + |log δ_μ(ε_i)|)   at some i,

    so that the profile is not μ-GDP (Liu et al. 2022, Theorem 3.1: μ-GDP means δ_A ≤ δ_μ at every
    ε; the slack keeps a rounding of log δ from counting as a violation). None if even μ = 1e-12
    is not violated (or no log δ is finite). The lower end of :func:`gdp_measure`'s bracket, from
    values already computed (e.g. a plot's grid) rather than a certified search.

    >>> from dpexplore.mechanisms import Laplace
    >>> e = np.linspace(0.0, 8.0, 200)
    >>> mu = gdp_violated_mu(e, Laplace(1.0).profile.log_delta(e), 10.0)
    >>> bool(mu < pure_to_gdp(1.0)), round(mu, 3)
    (True, 1.03)
    """
    e = check_nonneg(eps, "eps", allow_inf=False)
    ld = as_array(log_delta, "log_delta")
    if (ld > 0).any():
        raise ValueError(f"log_delta must be <= 0 (log of a probability), got {ld[ld > 0][:3]!r}")
    if e.ndim != 1 or ld.shape != e.shape:
        raise ValueError(f"eps and log_delta must be 1-d arrays of one length, got shapes {e.shape} and {ld.shape}")
    top = check_positive(mu_max, "mu_max")
    if top.ndim:
        raise ValueError(f"mu_max must be a scalar, got {mu_max!r}")
    fin = np.isfinite(ld)
    if not fin.any():
        return None
    e, ld = e[fin], ld[fin]

    def violated(mu):
        lm = np.asarray(gdp_log_delta(mu, e), dtype=np.float64)
        with np.errstate(invalid="ignore"):
            return bool(np.any(ld > lm + 1e-12 * (1.0 + np.abs(lm))))

    if not violated(1e-12):
        return None
    # bisection to 1e-4 relative keeping the violated end
    ok = np.vectorize(violated, otypes=[bool])
    return float(bracket_search(ok, 1e-12, float(top), safe="lo", rtol=1e-4, ulps=0.0))


def gdp_measure(profile, tol: float = 1e-3):
    """Bracket the optimal GDP parameter μ* of a profile (Liu et al. 2022, the result “GDPT”, GDP measurement):
    returns (μ_lower, μ_upper) with μ_upper − μ_lower ≤ ``tol``, where

    * μ_lower is violated: δ_A(ε) > δ_{μ_lower}(ε) at an explicit ε (so the profile is not
      μ_lower-GDP, by Liu et al. 2022 Theorem 3.1);
    * μ_upper is certified: on a grid 0 = ε₀ < … < ε_N, monotonicity of both profiles gives
      δ_A(ε) ≤ δ_A(ε_i) ≤ δ_μ(ε_{i+1}) ≤ δ_μ(ε) on [ε_i, ε_{i+1}], so we require
      log δ_μ(ε_{i+1}) ≥ log δ_A(ε_i) + 1e-12·|log δ_A(ε_i)| on every interval (the log-profiles
      are accurate to ~3e-14 relative, even where δ ≈ 1 − 1e-50), refining the
      intervals that fail (bisection) until all pass. The grid ends at ε_N = eps_max for pure-DP
      profiles (δ_A = 0 beyond: the certificate is then complete) and otherwise at ε_far where
      log δ_A = −11500. Beyond ε_far we use the tail condition (Liu et al. 2022, Theorems 3.2/3.3): we require
      μ_upper ≥ μ_t·(1 + m), m = clip(tol/(4μ_t), 2e-6, 1e-4), with μ_t from
      :func:`gdp_identify` (whose extrapolation error on GDP tails is ≲ 1e-6 relative for
      μ ≤ 20); this last step rests on the tail extrapolation, not on a proof, for profiles whose
      tail is not known in closed form. If the tail floor binds and μ_upper − tol is not violated
      on the grid, μ_lower stays at the last violated value and the bracket can exceed ``tol``.

    Raises ValueError if the profile is not GDP (μ_t = inf, or δ(0) = 1 — then no finite μ has
    δ_μ(0) ≥ δ(0); this includes profiles whose 1 − δ(0) underflows, such as μ-GDP with μ ≳ 75). The cost grows like μ/tol (monotone certificates need ~ μ/tol grid points in
    the tail): about 0.05 s for tol = 1e-3 and 2 s for tol = 1e-5 on a Gaussian profile.

    >>> lo, hi = gdp_measure(PureDPProfile(1.0), tol=1e-3)
    >>> bool(lo < pure_to_gdp(1.0) <= hi), bool(hi - lo <= 1e-3)
    (True, True)
    """
    t = check_positive(tol, "tol")
    if t.ndim:
        raise ValueError(f"tol must be a scalar, got {tol!r}")
    tol = float(t)
    f, eps_max = _log_delta_source(profile)
    mu_t = gdp_identify(profile)
    if not np.isfinite(mu_t):
        raise ValueError(f"profile is not GDP (identification value mu_t = inf): {profile!r}")
    ld0 = float(f(0.0))
    if np.isneginf(ld0):
        return 0.0, tol
    if ld0 >= 0.0:
        # δ(0) = 1 (e.g. a naively inverted trade-off equation, Liu et al. 2022 Figure 1): every μ-GDP
        # profile has δ_μ(0) = 2Φ(μ/2) − 1 < 1, so no finite μ works (Liu et al. 2022, discussion of Thm 3.2)
        raise ValueError(f"profile is not GDP: delta(0) = 1 for {profile!r}")
    e_end = eps_max if np.isfinite(eps_max) else _far_eps(f)
    grid = np.unique(np.concatenate([np.linspace(0.0, e_end, 1025), np.linspace(0.0, e_end / 32.0, 257)[1:]]))
    ldA = f(grid)
    tiny = 1e-12

    def violated(mu, e, lda):
        ldm = gdp_log_delta_core(mu, e)
        return lda > ldm + tiny * np.abs(ldm)

    # pointwise bracket on the grid
    def fits(mu):
        return not violated(mu, grid, ldA).any()

    _, hi = grow_bracket(fits, 0.0, max(mu_t, 1e-3) * 2.0, grow=2.0, stop=lambda mu: mu > 1e8)
    if hi > 1e8 and not fits(hi):  # (a start above 1e8 that fits is kept)
        raise ValueError(f"profile is not GDP within mu <= 1e8: {profile!r}")
    lo = 0.0
    if hi - lo > tol / 8.0:  # bisection (the safe end: hi) to width tol/8
        lo, hi = (
            float(v) for v in bracket_search(fits, lo, hi, safe="hi", atol=tol / 8.0, ulps=0.0, steps=2000, ends=True)
        )
    # beyond the grid (ε > ε_far) rely on the tail condition: μ_upper ≥ μ_t (1 + m) with
    # m = clip(tol/(4 μ_t), 2e-6, 1e-4), well above the extrapolation error of gdp_identify
    margin = float(np.clip(tol / (4.0 * mu_t), 2e-6, 1e-4)) if mu_t > 0 else 0.0
    tail_floor = mu_t * (1.0 + margin) if not np.isfinite(eps_max) else 0.0
    for _attempt in range(200):
        mu_c = lo + tol
        if mu_c < tail_floor:
            mu_c = tail_floor
            cand = mu_c - tol
            if cand > lo and violated(cand, grid, ldA).any():
                lo = cand  # still an explicitly violated μ
        # only intervals that failed are re-examined (their halves); the others stay certified
        gl, gr, ll = grid[:-1], grid[1:], ldA[:-1]
        new_e, new_l = [], []
        status = "exhausted"
        n_eval = 0
        for _round in range(64):
            ldm = gdp_log_delta_core(mu_c, gr)
            fail = (ldm < ll + tiny * np.abs(ll)) & np.isfinite(ll)
            if not fail.any():
                status = "certified"
                break
            gl, gr, ll = gl[fail], gr[fail], ll[fail]
            mids = 0.5 * (gl + gr)
            lm = f(mids)
            new_e.append(mids)
            new_l.append(lm)
            n_eval += mids.size
            if violated(mu_c, mids, lm).any():
                status = "violated"  # μ_c itself is violated: it becomes the new lower end
                break
            gl, gr, ll = np.concatenate([gl, mids]), np.concatenate([mids, gr]), np.concatenate([ll, lm])
            if n_eval > 4_000000:
                break
        if new_e:  # keep the refined grid for later attempts
            g = np.concatenate([grid] + new_e)
            order = np.argsort(g, kind="stable")
            grid, ldA = g[order], np.concatenate([ldA] + new_l)[order]
        if status == "certified":
            return float(lo), float(mu_c)
        if status == "exhausted":
            raise RuntimeError(
                f"gdp_measure: could not certify mu = {mu_c!r} nor find a violation "
                f"(grid of {grid.size} points) for {profile!r}"
            )
        lo = mu_c
    raise RuntimeError(f"gdp_measure did not converge for {profile!r}")


# ------------------------------------------------------------------------------------------------
# a GDP verdict within an evaluation budget, and the best certified μ (the dashboards' readouts)
# ------------------------------------------------------------------------------------------------
class _BudgetExceeded(Exception):
    pass


class _MemoProfile(PrivacyProfile):
    """Wraps a profile: memoises small log δ evaluations (:func:`gdp_measure` repeats
    :func:`gdp_identify`'s tail search) and raises _BudgetExceeded after ``budget`` evaluated points."""

    def __init__(self, inner: PrivacyProfile, budget: float):
        self.inner = inner
        self.eps_max = inner.eps_max
        self.name = inner.name
        self.budget = budget
        self.used = 0
        self._memo: dict[tuple, np.ndarray] = {}

    def _log_delta(self, eps):
        e = np.asarray(eps, dtype=np.float64)
        if e.size <= 64:  # the tail searches and fits repeat small queries: memoise them
            key = (e.shape, e.tobytes())
            if key not in self._memo:
                self._count(e.size)
                self._memo[key] = np.asarray(self.inner.log_delta(e), dtype=np.float64)
            return self._memo[key].copy()
        self._count(e.size)
        return np.asarray(self.inner.log_delta(e), dtype=np.float64)

    def _count(self, n):
        self.used += n
        if self.used > self.budget:
            raise _BudgetExceeded(self.used)


def _as_profile(profile) -> PrivacyProfile:
    """A PrivacyProfile, or a mechanism's ``.profile``; ValueError naming ``profile`` otherwise."""
    p = _profile_of(profile)
    if p is None:
        raise ValueError(f"profile must be a PrivacyProfile or have a .profile PrivacyProfile, got {profile!r}")
    return p


@dataclass(frozen=True)
class GdpBracket:
    """The GDP verdict of a profile (returned by :func:`gdp_bracket`).

    ``is_gdp``: False only where the profile is shown not to be GDP (``method`` ``"tail"`` or
    ``"delta0"``). ``mu_tail``: the tail value μ_t of :func:`gdp_identify` (Liu et al. 2022, Theorem
    3.3), NaN where it was not evaluated within the budget. ``lower``: a μ the profile explicitly
    violates (None if none is known); ``upper``: a certified μ (None if none is known), so
    ``lower < μ* ≤ upper``. ``method``: ``"measured"`` (:func:`gdp_measure`), ``"fallback"`` (upper
    end from theory, lower end violated on an ε grid), ``"tail"`` (μ_t = ∞) or ``"delta0"`` (δ(0)
    rounds to 1); ``explanation`` says the same in words, with the sources.
    """

    is_gdp: bool
    mu_tail: float
    lower: float | None
    upper: float | None
    method: str
    explanation: str


def _theory_upper(eps_max: float, theory_upper, theory_reason: str) -> tuple[float | None, str]:
    """The smaller certified μ from theory: the caller's ``theory_upper``, and for pure ε-DP
    (finite ``eps_max``) 2Φ⁻¹(e^ε/(1+e^ε)) (Liu et al. 2022, result “all ε-DP algorithms are GDP”)."""
    cands = []
    if theory_upper is not None:
        cands.append((float(theory_upper), theory_reason))
    if np.isfinite(eps_max):
        cands.append(
            (
                float(pure_to_gdp(eps_max)),
                f"pure {eps_max:.4g}-DP ⇒ 2Φ⁻¹(e^ε/(1+e^ε))-GDP "
                "(Liu et al. 2022, result “all ε-DP algorithms are GDP”)",
            )
        )
    return min(cands, key=lambda c: c[0]) if cands else (None, "")


def _fallback_grid(eps_max: float) -> np.ndarray:
    """Default ε grid of the fallback's violated lower end: 241 points on [0, eps_max] for pure DP,
    else 0 and 240 geometric points on [1e-3, 1e4]."""
    if np.isfinite(eps_max):
        return np.linspace(0.0, eps_max, 241)
    return np.concatenate([[0.0], np.geomspace(1e-3, 1e4, 240)])


def gdp_bracket(
    profile,
    *,
    tol: float = 1e-3,
    budget: int | None = None,
    theory_upper: float | None = None,
    theory_reason: str = "given by the caller",
    grid=None,
) -> GdpBracket:
    """The GDP verdict of a profile within an evaluation budget: the tail value μ_t and a bracket
    ``lower < μ* ≤ upper`` of the optimal μ, with the lower end explicitly violated and the upper
    end certified — what a dashboard can show after a bounded amount of work.

    Steps (Liu et al. 2022 = Liu, Sun, Jiang & Kong, “Identification, Amplification and
    Measurement: a bridge to Gaussian Differential Privacy”):

    1. δ(0) rounds to 1 and the profile is not pure DP: without ``theory_upper`` the profile is
       not μ-GDP for any μ whose δ_μ(0) = 2Φ(μ/2) − 1 < 1 in double precision (μ ≲ 16.6; Liu et al.
       2022, Thm 3.1) — ``method="delta0"``; with it, step 4.
    2. μ_t = lim_{ε→∞} ε/√(−2 log δ(ε)) by :func:`gdp_identify` (Liu et al. 2022, Thm 3.3); μ_t = ∞:
       not GDP — ``method="tail"``.
    3. (μ_lower, μ_upper) by :func:`gdp_measure` at ``tol`` (Liu et al. 2022, result “GDPT”) —
       ``method="measured"``.
    4. Where steps 2–3 exceed ``budget`` evaluated points of log δ (small queries are memoised, so
       :func:`gdp_measure`'s repeat of the tail search costs nothing) or :func:`gdp_measure` raises
       (ValueError, RuntimeError): ``method="fallback"``, still rigorous — ``upper`` from theory,
       the smaller of ``theory_upper`` (a μ the caller knows the profile to satisfy, e.g. Δ/σ for
       the Gaussian mechanism, exactly Δ/σ-GDP by Liu et al. 2022, Thm 3.1; ``theory_reason`` says
       why) and, for pure ε-DP (finite ``eps_max``), 2Φ⁻¹(e^ε/(1 + e^ε)) (Liu et al. 2022, result “all
       ε-DP algorithms are GDP”); ``lower`` = :func:`gdp_violated_mu` on the ε ``grid`` (default
       241 points on [0, eps_max] for pure DP, else 0 and [1e-3, 1e4] geometric) up to
       2·upper (1e3 without one), dropped if it is not below ``upper``; ``mu_tail`` is NaN if
       step 2 did not finish.

    ``profile``: a :class:`~dpexplore.accounting.profiles.PrivacyProfile` or a mechanism with a
    ``.profile``. ``budget``: evaluated points allowed (None: no limit). Cost: that of
    :func:`gdp_measure` (≈ 0.05 s at ``tol`` = 1e-3), at most ``budget`` evaluations plus the grid.

    >>> from dpexplore.mechanisms import Laplace, RandomizedResponse
    >>> b = gdp_bracket(Laplace(1.0), tol=1e-3)
    >>> b.method, b.mu_tail, round(b.upper, 3)
    ('measured', 0.0, 1.031)
    >>> b = gdp_bracket(RandomizedResponse(40.0), budget=60000)   # δ(0) rounds to 1
    >>> b.method, b.upper == pure_to_gdp(40.0), bool(b.lower < b.upper)
    ('fallback', True, True)
    """
    p = _as_profile(profile)
    tol = check_positive_scalar(tol, "tol")
    if budget is not None:
        budget = check_int(budget, "budget")
    if theory_upper is not None:
        theory_upper = check_positive_scalar(theory_upper, "theory_upper")
    if not isinstance(theory_reason, str):
        raise ValueError(f"theory_reason must be a str, got {theory_reason!r}")
    if grid is not None:
        grid = check_nonneg(grid, "grid", allow_inf=False)
        if grid.ndim != 1 or grid.size == 0:
            raise ValueError(f"grid must be a non-empty 1-d array, got shape {grid.shape}")
    eps_max = float(p.eps_max)
    ld0 = float(np.asarray(p.log_delta(0.0)))
    if ld0 >= 0.0 and not np.isfinite(eps_max):
        if theory_upper is None:
            return GdpBracket(
                False,
                float("nan"),
                None,
                None,
                "delta0",
                "δ(0) = 1 (in double precision): the mechanism is not (0, δ)-DP for "
                "any δ < 1 that a double resolves, so it is not μ-GDP for any μ with "
                "δ_μ(0) = 2Φ(μ/2) − 1 < 1, i.e. for any μ ≲ 16.6 (Liu et al. 2022, Thm 3.1)",
            )
        return _gdp_fallback(p, eps_max, grid, float("nan"), theory_upper, theory_reason)
    wrapped = _MemoProfile(p, np.inf if budget is None else budget)
    try:
        mu_t = gdp_identify(wrapped)
    except _BudgetExceeded:
        mu_t = float("nan")
    if mu_t == float("inf"):
        return GdpBracket(
            False, mu_t, None, None, "tail", "not GDP: tail heavier than Gaussian (μ_t = ∞, Liu et al. 2022 Thm 3.3)"
        )
    try:
        if not np.isnan(mu_t):
            lo, hi = gdp_measure(wrapped, tol=tol)
            return GdpBracket(True, mu_t, lo, hi, "measured", f"measured (Liu et al. 2022, result “GDPT”, tol {tol:g})")
    except (_BudgetExceeded, RuntimeError, ValueError):
        pass
    return _gdp_fallback(p, eps_max, grid, mu_t, theory_upper, theory_reason)


def _gdp_fallback(p, eps_max, grid, mu_t, theory_upper, theory_reason) -> GdpBracket:
    """Step 4 of :func:`gdp_bracket`: upper end from theory, lower end violated on the grid."""
    up, why = _theory_upper(eps_max, theory_upper, theory_reason)
    eps = _fallback_grid(eps_max) if grid is None else grid
    ld = np.asarray(p.log_delta(eps), dtype=np.float64)
    lo = gdp_violated_mu(eps, ld, 2.0 * (up if up else 1e3))
    if up is not None and lo is not None and lo >= up:
        lo = None
    return GdpBracket(
        True,
        mu_t,
        lo,
        up,
        "fallback",
        "the certified measurement did not finish within the evaluation budget; "
        + (f"upper end from theory: {why}" if up else "no certified upper end")
        + "; lower end violated on the ε grid",
    )


@dataclass(frozen=True)
class CertifiedMu:
    """The best certified μ of a profile (returned by :func:`gdp_certified_mu`): ``mu`` is the
    smaller of ``measured`` (upper end of :func:`gdp_measure` on the profile itself) and ``pure``
    (2Φ⁻¹(e^ε/(1 + e^ε)) from the profile's pure ε = ``eps_max``), None where neither exists;
    ``route`` is ``"measured"``, ``"pure"`` or ``"none"``."""

    mu: float | None
    route: str
    measured: float | None
    pure: float | None


def gdp_certified_mu(profile, tol: float = 1e-3) -> CertifiedMu:
    """The best μ-GDP guarantee we can certify for a profile, and how: the smaller of

    * the certified upper end of :func:`gdp_measure` at ``tol`` on the profile itself (Liu et al.
      2022, result “GDPT”; None where it raises ValueError — not GDP, δ(0) = 1 — or
      RuntimeError — no certificate), and
    * for a pure ε-DP profile (finite ``eps_max`` = ε), μ = 2Φ⁻¹(e^ε/(1 + e^ε)) (Liu et al. 2022,
      result “all ε-DP algorithms are GDP”; :func:`pure_to_gdp`), which the measurement can beat
      where the profile lies below the pure ε-DP one (e.g. Laplace).

    A tie goes to the pure-DP route (a closed form). ``profile``: a
    :class:`~dpexplore.accounting.profiles.PrivacyProfile` or a mechanism with a ``.profile``.

    >>> from dpexplore.mechanisms import Laplace
    >>> c = gdp_certified_mu(Laplace(1.0))
    >>> c.route, round(c.mu, 3), round(c.pure, 3)
    ('measured', 1.031, 1.232)
    >>> gdp_certified_mu(PureDPProfile(1.0)).route       # RR attains pure_to_gdp: nothing to gain
    'pure'
    """
    p = _as_profile(profile)
    tol = check_positive_scalar(tol, "tol")
    try:
        measured = float(gdp_measure(p, tol=tol)[1])
    except (ValueError, RuntimeError):
        measured = None
    eps_max = float(p.eps_max)
    pure = float(pure_to_gdp(eps_max)) if np.isfinite(eps_max) else None
    if measured is not None and (pure is None or measured < pure):
        return CertifiedMu(measured, "measured", measured, pure)
    if pure is not None:
        return CertifiedMu(pure, "pure", measured, pure)
    return CertifiedMu(None, "none", measured, pure)
