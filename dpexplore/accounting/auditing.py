"""Privacy auditing: empirical *lower* bounds on ε from distinguishing experiments.

Kamath 2024 ("Privacy auditing in just one run") explains the idea: run a mechanism on neighbouring
inputs, try to tell them apart, and turn the attack's error rates into a statistically valid
lower bound on ε — a sanity check of a privacy proof ("if we audit a value of ε greater than
the value we prove, there was a bug"). Implemented here:

* :func:`clopper_pearson`, :func:`empirical_epsilon` — the error-rate bound of Jagielski,
  Ullman & Oprea 2020 and Nasr et al. 2021, with exact Clopper–Pearson intervals.
* :func:`audit_mechanism` — threshold (likelihood-ratio) test on two samplers, with a held-out
  split so the confidence statement stays valid.
* :func:`trials_needed` — how many trials a tight audit needs; :func:`corner_error_rate` — the
  error rate 1/(1 + e^ε) of the best test against ε-DP it assumes.
* :func:`one_run_audit`, :func:`one_run_epsilon_lower_bound`, :func:`one_run_p_value` —
  Steinke, Nasr & Jagielski 2023 (pure and approximate DP).
* :class:`LaplaceAuditPair`, :func:`laplace_audit_pair`, :func:`miscalibrated_laplace` — a correct
  and a deliberately buggy Laplace mechanism to audit; :class:`MechanismAuditPair` wraps any
  ``dpexplore.mechanisms`` additive-noise mechanism and :class:`RandomizedResponseAuditPair`
  randomized response; each gives the exact error rates of the threshold test (``error_rates``).

Randomness only via an explicit ``rng: numpy.random.Generator``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from .._numerics import bracket_search, grow_bracket
from .._validation import as_array, check_delta, check_nonneg, check_positive, scalar_out
from .._validation import check_int as _int
from .._validation import check_rng as _check_rng

__all__ = [
    "clopper_pearson",
    "empirical_epsilon",
    "AuditResult",
    "audit_mechanism",
    "trials_needed",
    "ideal_epsilon_lower_bound",
    "expected_empirical_epsilon",
    "corner_error_rate",
    "one_run_epsilon_lower_bound",
    "one_run_p_value",
    "OneRunResult",
    "one_run_audit",
    "LaplaceAuditPair",
    "laplace_audit_pair",
    "miscalibrated_laplace",
    "MechanismAuditPair",
    "RandomizedResponseAuditPair",
]


# ------------------------------------------------------------------------------------------------
# validation helpers
# ------------------------------------------------------------------------------------------------


def _confidence(x) -> float:
    arr = as_array(x, "confidence")
    if arr.ndim != 0 or not 0.0 < float(arr) < 1.0:
        raise ValueError(f"confidence must be a number in (0, 1), got {x!r}")
    return float(arr)


def _counts(successes, trials, sname="successes", tname="trials"):
    n = as_array(trials, tname, allow_inf=False)
    if (n < 1).any() or (n != np.floor(n)).any():
        raise ValueError(f"{tname} must be an integer >= 1, got {trials!r}")
    k = as_array(successes, sname, allow_inf=False)
    if (k < 0).any() or (k != np.floor(k)).any():
        raise ValueError(f"{sname} must be an integer >= 0, got {successes!r}")
    k, n = np.broadcast_arrays(k, n)
    if (k > n).any():
        raise ValueError(f"{sname} must be <= {tname}, got {successes!r} > {trials!r}")
    return k, n


def _cp_upper(k, n, alpha):
    """One-sided Clopper–Pearson upper bound at level 1 − alpha (1 where k = n).
    Continuous in k (the beta quantile accepts non-integer counts)."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        up = stats.beta.ppf(1.0 - alpha, k + 1.0, np.maximum(n - k, 1e-300))
    return np.where(k >= n, 1.0, up)


def _cp_lower(k, n, alpha):
    """One-sided Clopper–Pearson lower bound at level 1 − alpha (0 where k = 0)."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        lo = stats.beta.ppf(alpha, np.maximum(k, 1e-300), n - k + 1.0)
    return np.where(k <= 0, 0.0, lo)


# ------------------------------------------------------------------------------------------------
# Clopper–Pearson and the error-rate bound
# ------------------------------------------------------------------------------------------------
def clopper_pearson(successes, trials, confidence=0.95):
    """Exact two-sided Clopper–Pearson interval (Clopper & Pearson 1934) for a binomial
    proportion, each tail at (1 − confidence)/2::

        lo = Beta⁻¹((1 − c)/2; k, n − k + 1)   (0 if k = 0)
        hi = Beta⁻¹((1 + c)/2; k + 1, n − k)   (1 if k = n)

    Returns ``(lo, hi)`` (floats or arrays; broadcast). Its coverage is ≥ ``confidence``.

    >>> lo, hi = clopper_pearson(5, 100, 0.95)
    >>> round(lo, 6), round(hi, 6)
    (0.016432, 0.112835)
    >>> clopper_pearson(0, 10)[0]
    0.0
    """
    k, n = _counts(successes, trials)
    alpha = (1.0 - _confidence(confidence)) / 2.0
    return scalar_out(_cp_lower(k, n, alpha)), scalar_out(_cp_upper(k, n, alpha))


def _eps_lb_from_bounds(fpr_ub, fnr_ub, delta):
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.log(np.maximum(1.0 - delta - fnr_ub, 0.0)) - np.log(fpr_ub)
        b = np.log(np.maximum(1.0 - delta - fpr_ub, 0.0)) - np.log(fnr_ub)
    out = np.maximum(np.maximum(np.nan_to_num(a, nan=-np.inf), np.nan_to_num(b, nan=-np.inf)), 0.0)
    return out


def empirical_epsilon(fp, fn, trials_neg, trials_pos, delta=0.0, confidence=0.95):
    """Statistically valid lower bound on ε from a distinguishing test (Jagielski, Ullman & Oprea
    2020; Nasr et al. 2021; Kamath 2024, privacy auditing): an (ε, δ)-DP mechanism forces every test to
    satisfy FPR + e^ε FNR ≥ 1 − δ and FNR + e^ε FPR ≥ 1 − δ, so with Clopper–Pearson upper bounds
    on the two error rates::

        ε_lb = max(log((1 − δ − FNR_ub)/FPR_ub), log((1 − δ − FPR_ub)/FNR_ub), 0).

    ``fp`` = false positives among ``trials_neg`` runs on the first input, ``fn`` = false
    negatives among ``trials_pos`` runs on the neighbour. Each upper bound is the upper end of
    the two-sided ``confidence`` interval, i.e. one-sided at 1 − (1 − c)/2, so both hold at once
    with probability ≥ ``confidence`` (union bound): then ε ≥ ε_lb for the true ε.

    >>> round(empirical_epsilon(50, 500, 1000, 1000), 6)
    1.969264
    >>> empirical_epsilon(500, 500, 1000, 1000)     # a coin flip proves nothing
    0.0
    """
    fp_, n0 = _counts(fp, trials_neg, "fp", "trials_neg")
    fn_, n1 = _counts(fn, trials_pos, "fn", "trials_pos")
    d = check_delta(delta, "delta")
    alpha = (1.0 - _confidence(confidence)) / 2.0
    fpr_ub = _cp_upper(fp_, n0, alpha)
    fnr_ub = _cp_upper(fn_, n1, alpha)
    return scalar_out(_eps_lb_from_bounds(fpr_ub, fnr_ub, d))


# ------------------------------------------------------------------------------------------------
# Black-box audit of two samplers
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit_mechanism`.

    ``eps_lb`` holds with probability ≥ ``confidence``. ``threshold``/``direction`` define the
    test used ("guess input 1 if ``direction * (out − threshold) > 0``"); ``fp``/``fn`` are its
    errors on the evaluation samples. ``thresholds``, ``fpr``, ``fnr`` trace the empirical
    (α, β) trade-off curve of threshold tests (direction +1) for plotting.
    """

    eps_lb: float
    threshold: float
    direction: int
    fp: int
    fn: int
    trials_neg: int
    trials_pos: int
    confidence: float
    delta: float
    thresholds: np.ndarray
    fpr: np.ndarray
    fnr: np.ndarray

    @property
    def fpr_at_threshold(self) -> float:
        return self.fp / self.trials_neg

    @property
    def fnr_at_threshold(self) -> float:
        return self.fn / self.trials_pos


def _sample(fn, rng, size, name):
    out = np.asarray(fn(rng, size), dtype=np.float64).ravel()
    if out.size != size:
        raise ValueError(f"{name}(rng, size) must return {size} scalar outputs, got {out.size}")
    if np.isnan(out).any():
        raise ValueError(f"{name} returned NaN outputs")
    return out


def _error_counts(x0, x1, t):
    """For tests 'guess 1 iff out > t': false positives among x0 and false negatives among x1
    (vectorized over thresholds t)."""
    s0 = np.sort(x0)
    s1 = np.sort(x1)
    fp = x0.size - np.searchsorted(s0, t, side="right")
    fn = np.searchsorted(s1, t, side="right")
    return fp, fn


def audit_mechanism(
    sample_fn_0,
    sample_fn_1,
    trials,
    rng,
    threshold=None,
    *,
    delta=0.0,
    confidence=0.95,
    n_thresholds=200,
    statistic=None,
):
    """Audit a mechanism on two neighbouring inputs with a threshold distinguishing test
    (Jagielski et al. 2020; Nasr et al. 2021; Kamath 2024, privacy auditing).

    ``sample_fn_b(rng, size)`` returns ``size`` scalar outputs of M on input b (b = 0, 1).
    ``statistic`` (optional) maps outputs to a score, e.g. the log-likelihood ratio; a
    threshold test on the likelihood ratio is the most powerful test (Neyman–Pearson), and for
    mean-shifted Laplace/Gaussian outputs the output itself is a monotone function of it.

    If ``threshold`` is None, ``trials`` samples per input choose the threshold and direction
    (the one maximizing the Clopper–Pearson ε bound over ``n_thresholds`` pooled quantiles) and
    ``trials`` *fresh* samples per input evaluate it, so the choice does not bias the bound.
    With a given threshold, ``trials`` samples per input evaluate the test "out > threshold".
    ε_lb then comes from :func:`empirical_epsilon` and holds with probability ≥ ``confidence``.

    >>> pair = laplace_audit_pair(1.0)
    >>> r = audit_mechanism(pair.sample_0, pair.sample_1, 20000, np.random.default_rng(0))
    >>> 0.5 < r.eps_lb <= 1.0
    True
    """
    trials = _int(trials, "trials")
    rng = _check_rng(rng)
    d = float(check_delta(delta, "delta"))
    c = _confidence(confidence)
    n_thr = _int(n_thresholds, "n_thresholds")
    alpha = (1.0 - c) / 2.0
    stat = (lambda z: z) if statistic is None else statistic

    def draw(fn, name):
        return np.asarray(stat(_sample(fn, rng, trials, name)), dtype=np.float64)

    if threshold is None:
        s0, s1 = draw(sample_fn_0, "sample_fn_0"), draw(sample_fn_1, "sample_fn_1")
        pooled = np.concatenate([s0, s1])
        cand = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, n_thr + 2)[1:-1]))
        fp, fn = _error_counts(s0, s1, cand)
        up = _eps_lb_from_bounds(_cp_upper(fp, trials, alpha), _cp_upper(fn, trials, alpha), d)
        down = _eps_lb_from_bounds(_cp_upper(trials - fp, trials, alpha), _cp_upper(trials - fn, trials, alpha), d)
        i_up, i_down = int(np.argmax(up)), int(np.argmax(down))
        if up[i_up] >= down[i_down]:
            t, direction = float(cand[i_up]), 1
        else:
            t, direction = float(cand[i_down]), -1
    else:
        t = float(as_array(threshold, "threshold", allow_inf=False))
        direction = 1
    e0, e1 = draw(sample_fn_0, "sample_fn_0"), draw(sample_fn_1, "sample_fn_1")
    fp, fn = _error_counts(e0, e1, np.asarray([t]))
    fp, fn = int(fp[0]), int(fn[0])
    if direction == -1:
        fp, fn = trials - fp, trials - fn
    eps_lb = float(empirical_epsilon(fp, fn, trials, trials, d, c))
    pooled = np.concatenate([e0, e1])
    curve_t = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, n_thr)))
    cfp, cfn = _error_counts(e0, e1, curve_t)
    return AuditResult(eps_lb, t, direction, fp, fn, trials, trials, c, d, curve_t, cfp / trials, cfn / trials)


def corner_error_rate(eps):
    """The error rate of the best test at the corner of the ε-DP trade-off curve::

        p(ε) = 1/(1 + e^ε) = expit(−ε),

    where FPR = FNR = p: ε-DP is f-DP with f(α) = max(0, 1 − e^ε α, e^{−ε}(1 − α)) (Dong, Roth &
    Su 2022, Proposition 2.5, at δ = 0), whose two lines meet β = α there. Randomized
    response with parameter ε attains it: its test "guess the reported bit" errs with probability
    1/(1 + e^ε) under either input. Vectorised; no overflow (e^ε is never formed for ε ≥ 700,
    where p = e^{−ε} to the last bit; it underflows to 0 only beyond ε ≈ 745).

    >>> float(corner_error_rate(0.0)), round(float(corner_error_rate(math.log(3.0))), 12)
    (0.5, 0.25)
    >>> corner_error_rate([1.0, 800.0])
    array([0.26894142, 0.        ])
    """
    e = as_array(eps, "eps")
    if (e < 0).any():
        raise ValueError(f"eps must be >= 0, got eps = {eps!r}")
    with np.errstate(under="ignore"):
        # e^{−ε}/(1 + e^{−ε}) = e^{−ε} in double precision once e^{−ε} < 1e-300; expit alone
        # would round 1/(1 + e^ε) to 0 already at ε ≈ 709.8 (e^ε overflows)
        return scalar_out(np.where(e < 700.0, special.expit(-np.minimum(e, 700.0)), np.exp(-e)))


def _ideal_lb(p, n, alpha, d):
    """ε_lb of the ideal audit with n trials per input: both error counts n·p (unrounded)."""
    u = _cp_upper(n * p, n, alpha)
    return _eps_lb_from_bounds(u, u, d)


def _check_trials(trials) -> np.ndarray:
    n = as_array(trials, "trials", allow_inf=False)
    if (n < 1).any() or (n != np.floor(n)).any():
        raise ValueError(f"trials must be an integer >= 1, got {trials!r}")
    return n.astype(np.float64)


def expected_empirical_epsilon(fpr, fnr, trials, confidence=0.95, delta=0.0):
    """The ε_lb that :func:`empirical_epsilon` would give a test with error rates FPR, FNR after
    ``trials`` runs on each input if its error counts equalled their expectations n·FPR, n·FNR::

        ε_lb = max(log((1 − δ − U(n·FNR, n))/U(n·FPR, n)), log((1 − δ − U(n·FPR, n))/U(n·FNR, n)), 0),

    U the Clopper–Pearson upper bound (Clopper & Pearson 1934) at level 1 − (1 − confidence)/2,
    continuous in the (not rounded) expected count — the typical value of an audit of that test
    (Jagielski, Ullman & Oprea 2020; Kamath 2024), not a guarantee: real counts scatter around n·p.
    Vectorised: ``fpr``, ``fnr`` (in [0, 1]) and ``trials`` (integers ≥ 1) broadcast.

    >>> round(float(expected_empirical_epsilon(0.05, 0.5, 1000)), 4)
    1.9693
    """
    a = check_delta(fpr, "fpr")
    b = check_delta(fnr, "fnr")
    n = _check_trials(trials)
    c = _confidence(confidence)
    d = float(check_delta(delta, "delta"))
    a, b, n = np.broadcast_arrays(a.astype(np.float64), b.astype(np.float64), n)
    alpha = (1.0 - c) / 2.0
    return scalar_out(_eps_lb_from_bounds(_cp_upper(n * a, n, alpha), _cp_upper(n * b, n, alpha), d))


def ideal_epsilon_lower_bound(eps, trials, confidence=0.95, delta=0.0):
    """The ε_lb that :func:`empirical_epsilon` gives a *tight* audit with ``trials`` runs per input,
    in the most favourable case of :func:`trials_needed`: the two output distributions are
    randomized response with parameter ε, whose best test errs with probability
    p = 1/(1 + e^ε) (:func:`corner_error_rate`) under either input, and the observed error
    counts equal their expectations n·p::

        ε_lb(n) = max(log((1 − δ − U(np, n)) / U(np, n)), 0),   U = Clopper–Pearson upper bound
        (Clopper & Pearson 1934) at level 1 − (1 − confidence)/2, continuous in the count np.

    The counts are NOT rounded to integers: a real audit's counts are integers scattered around
    n·p (rounding them to round(n·p) makes the curve saw-toothed in n, its sawtooth an artefact of
    the rounding), and the expected count gives a curve that rises with n, so that the smallest n
    where it reaches fraction·ε is exactly :func:`trials_needed` (which evaluates this function).
    It is :func:`expected_empirical_epsilon` at FPR = FNR = p. Vectorised: ``eps`` (≥ 0, finite)
    and ``trials`` (integers ≥ 1) broadcast.

    >>> bool(ideal_epsilon_lower_bound(1.0, 1982) >= 0.9 > ideal_epsilon_lower_bound(1.0, 1981))   # trials_needed(1.0)
    True
    >>> ideal_epsilon_lower_bound(1.0, [10, 100, 10**6]).round(4)
    array([0.    , 0.5456, 0.9956])
    """
    e = check_nonneg(eps, "eps", allow_inf=False)
    n = _check_trials(trials)
    c = _confidence(confidence)
    d = float(check_delta(delta, "delta"))
    p = np.asarray(corner_error_rate(e), dtype=np.float64)
    p, n = np.broadcast_arrays(p, n)
    return scalar_out(_ideal_lb(p, n, (1.0 - c) / 2.0, d))


def trials_needed(eps, confidence=0.95, fraction=0.9, delta=0.0, max_trials=10**9):
    """Trials per input a *tight* audit needs before :func:`empirical_epsilon` can certify
    ``fraction`` · ε, in the most favourable case: the two output distributions are randomized
    response with parameter ε (the worst case for ε-DP, whose optimal test has
    FPR = FNR = p = 1/(1 + e^ε) at the corner of the trade-off curve, Liu et al. 2022) and the
    observed error counts equal their expectations n·p (:func:`ideal_epsilon_lower_bound`, not
    rounded to integers). The answer is the smallest n with::

        log((1 − δ − U(np, n)) / U(np, n)) ≥ fraction · ε,   U = Clopper–Pearson upper bound,

    found by doubling then integer bisection. Real audits (non-ideal tests, sampling
    fluctuations) need more: this is a lower bound on the effort. Raises ValueError naming
    ``eps`` if ``max_trials`` does not suffice.

    >>> trials_needed(1.0)
    1982
    >>> trials_needed(1.0, fraction=0.5) < trials_needed(1.0, fraction=0.9) < trials_needed(0.5)
    True
    """
    e = float(check_positive(eps, "eps"))
    c = _confidence(confidence)
    f = float(as_array(fraction, "fraction"))
    if not 0.0 < f < 1.0:
        raise ValueError(f"fraction must lie in (0, 1), got {fraction!r}")
    d = float(check_delta(delta, "delta"))
    max_trials = _int(max_trials, "max_trials")
    alpha = (1.0 - c) / 2.0
    p = float(corner_error_rate(e))
    target = f * e

    def ok(n: int) -> bool:  # ideal_epsilon_lower_bound at n, without its validation
        return float(_ideal_lb(p, n, alpha, d)) >= target

    lo, hi = 1, 2
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > max_trials:
            raise ValueError(f"eps={eps!r} needs more than max_trials={max_trials} trials at fraction={fraction!r}")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


# ------------------------------------------------------------------------------------------------
# One-run auditing (Steinke, Nasr & Jagielski 2023)
# ------------------------------------------------------------------------------------------------
def one_run_p_value(correct, guesses, eps, delta=0.0, m=None):
    """p-value of the null hypothesis "M is (ε, δ)-DP" after v correct guesses out of r in a
    one-run audit with m canaries (Steinke, Nasr & Jagielski 2023, arXiv:2305.08846, main theorem
    and its approximate-DP version)::

        p = min(1, P[Bin(r, q) ≥ v] + 2mδ · max_{1≤i≤v} P[v − i ≤ Bin(r, q) < v] / i),
        q = e^ε / (1 + e^ε).

    ``m`` (total canaries, ≥ r) is needed only for δ > 0.

    >>> round(one_run_p_value(600, 1000, 0.2), 6)
    0.000765
    """
    v, r = _counts(correct, guesses, "correct", "guesses")
    v, r = int(v), int(r)
    e = float(as_array(eps, "eps"))
    if e < 0:
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    d = float(check_delta(delta, "delta"))
    q = 1.0 - float(corner_error_rate(e))  # e^ε/(1 + e^ε)
    tail = float(stats.binom.sf(v - 1, r, q))
    if d == 0.0 or v == 0:
        return min(tail, 1.0)
    if m is None:
        raise ValueError("m (the number of canaries) is required when delta > 0")
    mm = _int(m, "m")
    if mm < r:
        raise ValueError(f"m must be >= guesses = {r}, got {m!r}")
    pmf = stats.binom.pmf(np.arange(v - 1, -1, -1), r, q)  # P[Bin = v−1], P[Bin = v−2], ...
    alpha = float(np.max(np.cumsum(pmf) / np.arange(1, v + 1)))
    return min(tail + 2.0 * mm * d * alpha, 1.0)


def one_run_epsilon_lower_bound(correct, guesses, confidence=0.95, *, delta=0.0, m=None):
    """ε lower bound from one run with m canaries (Steinke, Nasr & Jagielski 2023, "Privacy
    Auditing with One (1) Training Run", arXiv:2305.08846; Kamath 2024, "Privacy auditing in just one
    run"). Each canary is included independently with probability 1/2; if M is ε-DP, the number
    W of correct guesses among r guesses is stochastically dominated by Binomial(r, e^ε/(1 + e^ε)).
    Rejecting ε whenever its p-value (:func:`one_run_p_value`) is below 1 − confidence gives,
    for δ = 0, the closed form::

        ε_lb = max(0, logit(p_lo)),   p_lo = Beta⁻¹(1 − confidence; v, r − v + 1)

    (the one-sided Clopper–Pearson lower bound on the success rate). For δ > 0 (needs ``m``),
    ε_lb = sup{ε : p-value(ε, δ) < 1 − confidence} by bisection on ε, keeping the lower end
    (rounded down by < 1e-9). Valid with probability ≥ ``confidence``.

    >>> round(one_run_epsilon_lower_bound(900, 1000), 6)
    2.021233
    >>> one_run_epsilon_lower_bound(500, 1000)
    0.0
    >>> 0 < one_run_epsilon_lower_bound(900, 1000, delta=1e-5, m=1000) < 2.021233
    True
    """
    v, r = _counts(correct, guesses, "correct", "guesses")
    alpha = 1.0 - _confidence(confidence)
    d = float(check_delta(delta, "delta"))
    if d == 0.0:
        p_lo = _cp_lower(v, r, alpha)
        with np.errstate(divide="ignore"):
            lb = np.log(p_lo) - np.log1p(-p_lo)
        return scalar_out(np.maximum(np.nan_to_num(lb, nan=0.0, neginf=0.0), 0.0))
    if v.ndim != 0:
        raise ValueError(f"correct must be a scalar when delta > 0, got {correct!r}")
    if m is None:
        raise ValueError("m (the number of canaries) is required when delta > 0")

    def rejected(e):
        return one_run_p_value(v, r, e, d, m) < alpha

    if not rejected(0.0):
        return 0.0
    # double ε until the test no longer rejects (at most 1e4: beyond, the last rejected ε), then
    # bisect to 1e-9 keeping the rejected end (the lower bound's safe side)
    lo, hi = grow_bracket(lambda e: not rejected(e), 0.0, 1.0, grow=2.0, stop=lambda e: e > 1e4)
    if hi > 1e4:
        return lo
    return float(bracket_search(np.vectorize(rejected, otypes=[bool]), lo, hi, safe="lo", atol=1e-9, ulps=0.0))


def _one_run_lb(correct, r, c, d, m) -> float:
    return float(one_run_epsilon_lower_bound(correct, r, c, delta=d, m=m))


@dataclass(frozen=True)
class OneRunResult:
    """Outcome of :func:`one_run_audit`: ``guesses`` made (r), ``correct`` (v), ``eps_lb``."""

    m: int
    guesses: int
    correct: int
    eps_lb: float
    confidence: float
    true_eps: float


def one_run_audit(
    m, eps, rng, *, mechanism="randomized_response", true_eps=None, guesses=None, confidence=0.95, delta=0.0
):
    """Simulate a one-run audit (Steinke, Nasr & Jagielski 2023; Kamath 2024) of a mechanism that claims
    ε-DP per canary: m canaries, each included independently with probability 1/2 (S_i = ±1);
    the mechanism releases one ``true_eps``-DP (default ``eps``) view per canary, either
    ``"randomized_response"`` (the bit S_i, flipped w.p. 1/(1 + e^ε)) or ``"laplace"``
    (1{S_i = +1} + Lap(1/ε)); the attacker guesses "in" for the ``guesses``/2 highest views and
    "out" for the ``guesses``/2 lowest, abstaining on the rest (default: guess all m; for
    randomized response the default guess is the released bit itself).
    ε_lb from :func:`one_run_epsilon_lower_bound` (at ``delta``); with ``true_eps`` > ``eps`` it
    can expose a mis-calibration.

    >>> r = one_run_audit(10000, 2.0, np.random.default_rng(0))
    >>> r.correct, 1.7 < r.eps_lb <= 2.0
    (8814, True)
    """
    m = _int(m, "m")
    e = float(check_positive(eps, "eps"))
    rng = _check_rng(rng)
    te = e if true_eps is None else float(check_positive(true_eps, "true_eps"))
    r = m if guesses is None else _int(guesses, "guesses")
    if r > m:
        raise ValueError(f"guesses must be <= m = {m}, got {guesses!r}")
    c = _confidence(confidence)
    d = float(check_delta(delta, "delta"))
    if mechanism not in ("randomized_response", "laplace"):
        raise ValueError(f"mechanism must be 'randomized_response' or 'laplace', got {mechanism!r}")
    s = rng.integers(0, 2, m) * 2 - 1
    if mechanism == "randomized_response":
        flip = rng.random(m) < corner_error_rate(te)  # 1/(1 + e^ε)
        bits = np.where(flip, -s, s)
        if guesses is None:  # guess every canary's bit: W ~ Binomial(m, e^ε/(1 + e^ε)) exactly
            correct = int(np.sum(bits == s))
            return OneRunResult(m, m, correct, _one_run_lb(correct, m, c, d, m), c, te)
        view = bits.astype(np.float64) + 1e-9 * rng.random(m)  # random tie-break among equal bits
    else:
        view = (s > 0).astype(np.float64) + rng.laplace(0.0, 1.0 / te, m)
    order = np.argsort(view)
    n_out = r // 2
    n_in = r - n_out
    guess_in = order[m - n_in :]
    guess_out = order[:n_out]
    correct = int(np.sum(s[guess_in] == 1) + np.sum(s[guess_out] == -1))
    return OneRunResult(m, r, correct, _one_run_lb(correct, r, c, d, m), c, te)


# ------------------------------------------------------------------------------------------------
# A correct and a mis-calibrated Laplace mechanism to audit
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LaplaceAuditPair:
    """The Laplace mechanism on a pair of neighbouring inputs with f(x₀) = 0, f(x₁) =
    ``sensitivity``, noise scale b = ``assumed_sensitivity``/``eps_claimed`` (Bassi 2019, Laplace
    mechanism: b = Δf/ε). If ``assumed_sensitivity`` < ``sensitivity`` (the bug), the mechanism
    is only ε_actual = ``sensitivity``/b-DP (the Laplace privacy loss is bounded by Δ/b).

    Exact error rates of the test "guess x₁ iff out > t" (for tests)::

        FPR(t) = P[Lap(b) > t],   FNR(t) = P[Δ + Lap(b) ≤ t].

    >>> p = miscalibrated_laplace(1.0)
    >>> p.eps_claimed, p.eps_actual, p.scale
    (1.0, 2.0, 0.5)
    """

    eps_claimed: float
    sensitivity: float = 1.0
    assumed_sensitivity: float = 1.0

    def __post_init__(self):
        for name in ("eps_claimed", "sensitivity", "assumed_sensitivity"):
            v = getattr(self, name)
            arr = check_positive(v, name)
            if arr.ndim:
                raise ValueError(f"{name} must be a scalar, got {v!r}")
            object.__setattr__(self, name, float(arr))
        if not 0.0 < self.scale < math.inf:  # 0: no noise at all (not private); inf: no signal
            raise ValueError(
                f"eps_claimed = {self.eps_claimed!r} with assumed_sensitivity = "
                f"{self.assumed_sensitivity!r} gives a noise scale outside the float range"
            )

    @property
    def scale(self) -> float:
        return self.assumed_sensitivity / self.eps_claimed

    @property
    def eps_actual(self) -> float:
        # Δ ε / Δ_assumed: no underflow of the scale to 0 or overflow to inf in between
        return self.sensitivity * (self.eps_claimed / self.assumed_sensitivity)

    def sample_0(self, rng, size):
        return _check_rng(rng).laplace(0.0, self.scale, size)

    def sample_1(self, rng, size):
        return self.sensitivity + _check_rng(rng).laplace(0.0, self.scale, size)

    def error_rates(self, t):
        """Exact (FPR(t), FNR(t)) for the test "out > t"."""
        tt = as_array(t, "t", allow_inf=False)
        with np.errstate(over="ignore", under="ignore"):  # t/b beyond float range: 0 or 1
            fpr = stats.laplace.sf(tt, scale=self.scale)
            fnr = stats.laplace.cdf(tt - self.sensitivity, scale=self.scale)
        return scalar_out(fpr), scalar_out(fnr)


def laplace_audit_pair(eps, sensitivity=1.0) -> LaplaceAuditPair:
    """A correctly calibrated Laplace(Δ/ε) mechanism on neighbouring inputs (ε-DP; Bassi 2019).

    >>> laplace_audit_pair(0.5).eps_actual
    0.5
    """
    return LaplaceAuditPair(eps, sensitivity, sensitivity)


def miscalibrated_laplace(eps, sensitivity=1.0, bug_factor=2.0) -> LaplaceAuditPair:
    """A buggy Laplace mechanism: it claims ε-DP but scales its noise with the sensitivity
    divided by ``bug_factor`` (e.g. forgetting that replacing a record moves a sum by 2x the
    bound), so it is only (bug_factor · ε)-DP. An audit with enough trials finds ε_lb > ε.

    >>> miscalibrated_laplace(1.0, bug_factor=3.0).eps_actual
    3.0
    """
    b = check_positive(bug_factor, "bug_factor")
    s = check_positive(sensitivity, "sensitivity")
    if b.ndim or s.ndim:
        raise ValueError(f"sensitivity and bug_factor must be scalars, got {sensitivity!r}, {bug_factor!r}")
    return LaplaceAuditPair(eps, sensitivity, float(s) / float(b))


@dataclass(frozen=True)
class MechanismAuditPair:
    """Neighbouring-input samplers for any additive-noise mechanism object with a
    ``sample(size, rng=...)`` method (e.g. ``dpexplore.mechanisms.Laplace``/``Gaussian``):
    outputs q(x₀) + Z = Z and q(x₁) + Z = ``shift`` + Z, Z the mechanism's noise. ``shift``
    defaults to the mechanism's ``sensitivity`` (the worst case for its analysis); a larger shift
    simulates a sensitivity bug. Audit its (ε, δ) claim with ``audit_mechanism(..., delta=δ)``
    and compare ε_lb with ``mechanism.epsilon(δ)``.

    >>> class Noise:                      # any object with sample(size, rng=...) works
    ...     sensitivity = 1.0
    ...     def sample(self, size=None, rng=None):
    ...         return rng.laplace(0.0, 1.0, size)
    >>> pair = MechanismAuditPair(Noise())
    >>> pair.shift, pair.sample_1(np.random.default_rng(0), 3).shape
    (1.0, (3,))
    """

    mechanism: object
    shift: float | None = None

    def __post_init__(self):
        if not callable(getattr(self.mechanism, "sample", None)):
            raise ValueError(f"mechanism must have a sample(size, rng=...) method, got {self.mechanism!r}")
        shift = self.shift
        if shift is None:
            shift = getattr(self.mechanism, "sensitivity", None)
            if shift is None:
                raise ValueError("shift is required for a mechanism without a sensitivity attribute")
        arr = check_positive(shift, "shift")
        if arr.ndim:
            raise ValueError(f"shift must be a scalar, got {shift!r}")
        object.__setattr__(self, "shift", float(arr))

    def sample_0(self, rng, size):
        return np.asarray(self.mechanism.sample(size, rng=_check_rng(rng)), dtype=np.float64)

    def sample_1(self, rng, size):
        return self.shift + self.sample_0(rng, size)

    def error_rates(self, t):
        """Exact (FPR(t), FNR(t)) of the test "guess x₁ iff out > t", from the mechanism's noise
        distribution (its ``logsf`` and ``logcdf``, e.g. any ``dpexplore.mechanisms`` additive
        mechanism)::

            FPR(t) = P[Z > t],   FNR(t) = P[shift + Z ≤ t]   (Z the noise).

        For the Gaussian these are Φ(−t/σ) and Φ((t − shift)/σ).

        >>> class Noise:                  # the standard logistic noise: P[Z > t] = 1/(1 + e^t)
        ...     sensitivity = 1.0
        ...     def sample(self, size=None, rng=None): return rng.logistic(0.0, 1.0, size)
        ...     def logsf(self, x): return -np.logaddexp(0.0, x)
        ...     def logcdf(self, x): return -np.logaddexp(0.0, -x)
        >>> [round(float(r), 6) for r in MechanismAuditPair(Noise()).error_rates(0.0)]
        [0.5, 0.268941]
        """
        logsf, logcdf = getattr(self.mechanism, "logsf", None), getattr(self.mechanism, "logcdf", None)
        if not (callable(logsf) and callable(logcdf)):
            raise ValueError(
                f"error_rates needs a mechanism with logsf and logcdf methods (its noise law), got {self.mechanism!r}"
            )
        tt = as_array(t, "t", allow_inf=False)
        with np.errstate(over="ignore", under="ignore"):  # rates below the float range: 0
            fpr = np.exp(np.asarray(logsf(tt), dtype=np.float64))
            fnr = np.exp(np.asarray(logcdf(tt - self.shift), dtype=np.float64))
        return scalar_out(fpr), scalar_out(fnr)


@dataclass(frozen=True)
class RandomizedResponseAuditPair:
    """Randomized response on the neighbouring inputs x₀ = bit 0 and x₁ = bit 1: outputs are the
    reported bits (as floats 0.0/1.0), drawn by ``mechanism.sample(size, rng=..., bit=...)``
    (e.g. ``dpexplore.mechanisms.RandomizedResponse(ε)``, which reports the true bit with
    probability e^ε/(1 + e^ε)). It is the worst case for ε-DP: the test "guess x₁
    iff out > t" with 0 ≤ t < 1 has FPR = FNR = :func:`corner_error_rate` (ε), the corner of the
    ε-DP trade-off curve, so an audit of it can approach ε itself.

    >>> class RR:                          # any object with eps and sample(size, rng, bit)
    ...     eps = math.log(3.0)
    ...     def sample(self, size=None, rng=None, bit=1):
    ...         return np.where(rng.random(size) < 0.75, bit, 1 - bit)
    >>> pair = RandomizedResponseAuditPair(RR())
    >>> [round(float(r), 12) for r in pair.error_rates(0.5)], pair.error_rates(-1.0)
    ([0.25, 0.25], (1.0, 0.0))
    """

    mechanism: object

    def __post_init__(self):
        if not callable(getattr(self.mechanism, "sample", None)):
            raise ValueError(f"mechanism must have a sample(size, rng=..., bit=...) method, got {self.mechanism!r}")
        eps = getattr(self.mechanism, "eps", None)
        if eps is None:
            raise ValueError(f"mechanism must have an eps attribute (randomized response), got {self.mechanism!r}")
        arr = as_array(eps, "eps", allow_inf=False)
        if arr.ndim or arr < 0:
            raise ValueError(f"mechanism.eps must be a scalar >= 0, got eps = {eps!r}")

    @property
    def eps(self) -> float:
        return float(self.mechanism.eps)

    def sample_0(self, rng, size):
        return np.asarray(self.mechanism.sample(size, rng=_check_rng(rng), bit=0), dtype=np.float64)

    def sample_1(self, rng, size):
        return np.asarray(self.mechanism.sample(size, rng=_check_rng(rng), bit=1), dtype=np.float64)

    def error_rates(self, t):
        """Exact (FPR(t), FNR(t)) of "guess x₁ iff out > t" on outputs in {0, 1}: (1, 0) for
        t < 0, (p, p) with p = 1/(1 + e^ε) for 0 ≤ t < 1, (0, 1) for t ≥ 1."""
        tt = as_array(t, "t", allow_inf=False)
        p = float(corner_error_rate(self.eps))
        fpr = np.where(tt < 0, 1.0, np.where(tt < 1, p, 0.0))
        fnr = np.where(tt < 0, 0.0, np.where(tt < 1, p, 1.0))
        return scalar_out(fpr), scalar_out(fnr)
