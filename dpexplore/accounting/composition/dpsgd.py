"""DP-SGD planning: ε of Poisson-subsampled Gaussian steps (:func:`dpsgd_epsilon`, three
accountants) and the noise multiplier for a target (:func:`dpsgd_sigma`); the plan's rate and steps
(:func:`dpsgd_steps`).

Re-exported by :mod:`dpexplore.accounting.composition`, where they are documented and imported from.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from ...accounting import pld as _pld
from ..._numerics import bracket_search, grow_bracket, up
from ..._validation import as_array, check_delta, check_k, check_nonneg, check_positive
from ..conversions import _rdp_eps_terms, gdp_epsilon, rdp_to_approx
from ...mechanisms import Gaussian
from ...mechanisms.subsampled import (
    RareEventProfile,
    one_shifted_step_lower_epsilon,
    rare_event_tail,
    subsample,
)


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


def dpsgd_steps(n, batch, epochs):
    """The sampling rate and the number of steps of DP-SGD training (Abadi et al. 2016, the
    moments accountant's setting): a dataset of N records, expected batch size B (each record in
    a step's batch independently with probability q: Poisson subsampling) and E epochs::

        q = min(1, B/N),   T = ⌈E/q⌉   (E passes over the data, q·N records a step).

    T = ⌈E·N/B⌉ (for B < N) is rounded up after a tolerance of max(1e-9, 4 ulps) for the one
    rounding of E·N/B: a plan of exactly 10⁴ steps is 10⁴ steps, not 10⁴ + 1. T is a training plan, not a privacy
    bound: the ε of the plan is :func:`dpsgd_epsilon` (σ, q, T, δ) for exactly these T steps.
    Vectorised: ``n``, ``batch`` (integers ≥ 1) and ``epochs`` (> 0, finite) broadcast. Returns
    (q, T) (floats and int64; Python float and int for scalars).

    >>> dpsgd_steps(100000, 1000, 10)
    (0.01, 1000)
    >>> dpsgd_steps(500, 1000, 3)        # the batch is the whole dataset: q = 1
    (1.0, 3)
    """
    nn = check_k(n, "n").astype(np.float64)
    bb = check_k(batch, "batch").astype(np.float64)
    e = check_positive(epochs, "epochs", allow_inf=False)
    nn, bb, e = np.broadcast_arrays(nn, bb, e)
    q = np.minimum(1.0, bb / nn)
    # E·N/B with one rounding (E·N is exact for the integers N and E a slider gives), not E/q,
    # which carries q's rounding too: 150 epochs at N = 198933, B = 1 gave 29839950.000000004
    x = np.where(bb < nn, e * nn / bb, e)
    if (x > 2.0**53).any():
        raise ValueError(f"epochs = {epochs!r} asks for more than 2**53 steps at q = B/N: lower epochs")
    t = np.ceil(x - np.maximum(1e-9, 4.0 * np.spacing(x))).astype(np.int64)
    t = np.maximum(t, 1)
    if q.ndim == 0:
        return float(q), int(t)
    return q, t


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
      target (:func:`dpexplore.accounting.pld.refine_epsilon`: refined until ε is within ~1 % or 1e-3 of
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
      in :func:`dpexplore.accounting.pld._convolve`);
    * ``"rdp"`` — Rényi DP of the subsampled Gaussian (Mironov, Talwar & Zhang 2019) summed over
      steps at dp_accounting's orders, converted with the improved bound (Canonne, Kamath &
      Steinke 2020, Proposition 12 / Asoodeh et al. 2021): valid, looser;
    * ``"gdp"`` — the central-limit approximation (Bu, Dong, Long & Su 2020): μ-GDP with
      μ = q√(T(e^{1/σ²} − 1)). AN APPROXIMATION, NOT A GUARANTEE: it may be below the true ε.

    ``steps`` may be a 1-d array (a curve of ε against training length): the "pld" accountant then
    builds every composition from the previous one by a single convolution
    (:func:`dpexplore.accounting.pld.composed_pld_series`), on the grid of the largest count. ``grid_size``
    (pld only) fixes the FFT grid instead of choosing it from the error target (the target's
    refinement starts at a sixteenth of :func:`dpexplore.accounting.pld.default_grid_size`, at least 2¹²
    (:func:`dpexplore.accounting.pld.refine_start`): 5e-5 relative above dp_accounting's ε at interval
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
    pessimistic PLD: 0.1282; fixed in :func:`dpexplore.accounting.pld._convolve`, it now gives 0.12816).
    ``eps`` and ``t`` may be arrays of the same shape (a curve: one check for all of it)."""
    e = np.asarray(eps, dtype=np.float64)
    lo = np.asarray(one_shifted_step_lower_epsilon(Gaussian(s), q, t, d), dtype=np.float64)
    bad = ~(e >= lo * (1.0 - 1e-6) - 1e-12)
    if bad.any():
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
    error target (:func:`dpexplore.accounting.pld.refine_epsilon`: ε within ~1 % or 1e-3 of the truth);
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
