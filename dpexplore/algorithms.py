"""Simulatable DP algorithms of the references, with their privacy parameters.

Everything here is a pure function or a small frozen spec; randomness comes only from an
explicit ``rng: numpy.random.Generator`` argument, so every simulation is seeded and
reproducible. No widget imports.

Contents (the source and its slide or theorem in each docstring):

* :class:`ReportNoisyMax` / :func:`report_noisy_max` — Bassi 2019, slide "Report Noisy Max".
* :class:`AboveThreshold`, :class:`Sparse` (sparse vector) — Bassi 2019, slide "AboveThreshold algorithm",
  "Sparse vector mechanism"; Dwork & Roth 2014, Algorithms 1–2, Theorems 3.23–3.26.
* :class:`Thresholdout` and :func:`simulate_adaptive_overfitting` — Bassi 2019, slide "Reusable holdout";
  Dwork, Feldman, Hardt, Pitassi, Reingold & Roth 2015.
* Generalization and max-information calculators — Bassi 2019, slide "Generalization via differential
  privacy", "The max-information of DP algorithms", "Generalization via max-information".
* :func:`shuffle_amplification` — Canonne 2022, "Privacy Doona", eq. (1) (Feldman, McMillan & Talwar 2021).
* :func:`inverse_sensitivity_median` and :func:`laplace_median` — Steinke 2023a, "Beyond Global
  Sensitivity via Inverse Sensitivity", eq. (4)–(5), Theorems 2 and 4, eq. (8).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from ._validation import as_array, check_delta, check_k, check_nonneg, check_positive, scalar_out
from .composition import advanced, per_step_budget

__all__ = [
    "ReportNoisyMax",
    "report_noisy_max",
    "AboveThreshold",
    "Sparse",
    "SVTSession",
    "SVTResult",
    "Thresholdout",
    "ThresholdoutSession",
    "ThresholdoutResult",
    "OverfittingResult",
    "simulate_adaptive_overfitting",
    "advanced_composition_pure",
    "generalization_via_dp",
    "statistical_query_epsilon",
    "max_information_pure",
    "max_information_iid",
    "max_information_tail_bound",
    "dp_max_information_tail_bound",
    "shuffle_amplification",
    "shuffle_amplification_valid",
    "inverse_sensitivity_median",
    "inverse_sensitivity_median_loss",
    "inverse_sensitivity_median_probs",
    "inverse_sensitivity_median_bound",
    "laplace_median",
    "laplace_median_error_bound",
]

LOG2E = 1.0 / math.log(2.0)
_NOISES = ("laplace", "exponential", "gumbel")


# ------------------------------------------------------------------------------------------------
# private validation helpers
# ------------------------------------------------------------------------------------------------
def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator (e.g. np.random.default_rng(0)), got {rng!r}")
    return rng


def _scalar(arr: np.ndarray, name: str, value) -> float:
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a scalar, got {value!r}")
    return float(arr)


def _pos(x, name: str, *, allow_inf: bool = False) -> float:
    return _scalar(check_positive(x, name, allow_inf=allow_inf), name, x)


def _real(x, name: str) -> float:
    return _scalar(as_array(x, name, allow_inf=False), name, x)


def _int(x, name: str, minimum: int = 1) -> int:
    if minimum == 1:
        arr = check_k(x, name)
        return int(_scalar(arr.astype(np.float64), name, x))
    if isinstance(x, bool):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {x!r}")
    arr = as_array(x, name, allow_inf=False)
    if arr.ndim != 0 or arr < minimum or arr != np.floor(arr):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {x!r}")
    return int(arr)


def _delta_open(x, name: str = "delta") -> np.ndarray:
    """δ ∈ (0, 1)."""
    arr = check_delta(x, name)
    if (arr <= 0).any():
        raise ValueError(f"{name} must lie in (0, 1), got {x!r}")
    return arr


def _values(x, name: str) -> np.ndarray:
    arr = as_array(x, name, allow_inf=False)
    return np.atleast_1d(arr)


# ------------------------------------------------------------------------------------------------
# composition helper (used by Sparse and Thresholdout)
# ------------------------------------------------------------------------------------------------
def _advanced_or_basic(eps0, k, delta):
    """ε of the k-fold adaptive composition of ε₀-DP mechanisms at total failure δ: the better of
    basic composition, k ε₀, and advanced composition with per-step δ = 0 and slack δ,
    :func:`dpexplore.composition.advanced` (rounded up there by 4 ulps)."""
    e0 = check_nonneg(eps0, "eps0", allow_inf=False)
    kk = check_k(k, "k").astype(np.float64)
    d = check_delta(delta, "delta")
    with np.errstate(over="ignore"):
        basic = kk * e0
    return scalar_out(np.minimum(basic, np.asarray(advanced(e0, 0.0, kk, d)[0])))


def advanced_composition_pure(eps0, k, delta):
    """Deprecated: the better of basic and advanced composition of k ε₀-DP mechanisms at total
    failure δ; use ``min(k * eps0, dpexplore.composition.advanced(eps0, 0.0, k, delta)[0])``
    (its name collides with :func:`dpexplore.composition.advanced_pure`, a different theorem).

    The better of basic composition, ``k ε₀`` (Bassi 2019, slide "Composition of several DP
    mechanisms"), and the advanced composition theorem of Dwork, Rothblum & Vadhan (Bassi 2019,
    slide "Advanced adaptive composition"; Dwork & Roth 2014, Theorem 3.20 with per-step δ = 0)::

        ε' = sqrt(2k ln(1/δ)) ε₀ + k ε₀ (e^{ε₀} − 1),        (ε', δ)-DP,

    computed by :func:`dpexplore.composition.advanced` (rounded up by 4 ulps: the safe side).
    With δ = 0 only basic composition applies.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     a, b = advanced_composition_pure(0.1, 100, 1e-6), advanced_composition_pure(0.1, 100, 0)
    >>> round(a, 6), b
    (6.308231, 10.0)
    """
    import warnings

    warnings.warn("dpexplore.algorithms.advanced_composition_pure is deprecated: use "
                  "min(k * eps0, dpexplore.composition.advanced(eps0, 0.0, k, delta)[0])",
                  DeprecationWarning, stacklevel=2)
    return _advanced_or_basic(eps0, k, delta)


def _solve_eps0(eps: float, k: int, delta: float) -> float:
    """Largest ε₀ with :func:`_advanced_or_basic` (ε₀, k, δ) ≤ eps: ε/k by basic composition, or
    the advanced composition budget :func:`dpexplore.composition.per_step_budget` (its bisection,
    lower end kept: the safe side) when that is larger."""
    if delta == 0.0:
        return eps / k
    return max(eps / k, float(per_step_budget(eps, delta, k, "advanced")))


# ------------------------------------------------------------------------------------------------
# Report noisy max
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReportNoisyMax:
    """Report Noisy Max: add i.i.d. noise to every score and release only the arg max.

    Bassi 2019, slide "Report Noisy Max": for counting queries, adding ``Lap(1/ε)`` to each count and
    returning the index of the largest noisy count is (ε, 0)-DP (Dwork & Roth 2014, Claim 3.9).
    That proof needs *monotone* scores (all move the same way between neighbours, as counts
    do). For arbitrary scores of sensitivity Δ the noise must be doubled. Noise scale::

        b = Δ/ε   if monotonic   (Bassi 2019: Lap(1/ε) for counts)
        b = 2Δ/ε  otherwise      (the safe default)

    ``noise`` picks the family with that scale: ``"laplace"`` (Bassi 2019); ``"exponential"`` (one-sided,
    equivalent to permute-and-flip: McKenna & Sheldon 2020, Ding et al. 2021); ``"gumbel"``,
    for which the arg max has exactly the exponential mechanism's law P(i) ∝ exp(s_i / b)
    (McSherry & Talwar 2007; Gumbel-max trick). All three are ε-DP at these scales: the proof of
    Dwork & Roth 2014, Claim 3.9 only uses that the noise's log-survival function is
    (1/b)-Lipschitz, which holds for all three families (a neighbour moves the winning cut-off by
    at most Δ for monotone scores, 2Δ otherwise). Bassi 2019 states only the Laplace case.

    >>> rnm = ReportNoisyMax(eps=1.0, monotonic=True)
    >>> rnm.noise_scale, rnm.privacy()
    (1.0, (1.0, 0.0))
    >>> rnm.run([0.0, 50.0, 1.0], np.random.default_rng(0))
    1
    """

    eps: float
    sensitivity: float = 1.0
    noise: str = "laplace"
    monotonic: bool = False

    def __post_init__(self):
        object.__setattr__(self, "eps", _pos(self.eps, "eps"))
        object.__setattr__(self, "sensitivity", _pos(self.sensitivity, "sensitivity"))
        if self.noise not in _NOISES:
            raise ValueError(f"noise must be one of {_NOISES}, got {self.noise!r}")
        object.__setattr__(self, "monotonic", bool(self.monotonic))
        if not 0.0 < self.noise_scale < math.inf:  # Δ/ε underflowing to 0 would add no noise
            raise ValueError(f"sensitivity/eps must give a noise scale within the float range, got "
                             f"sensitivity={self.sensitivity!r}, eps={self.eps!r}")

    @property
    def noise_scale(self) -> float:
        """b = Δ/ε (monotone scores) or 2Δ/ε (general)."""
        return (1.0 if self.monotonic else 2.0) * self.sensitivity / self.eps

    def privacy(self) -> tuple[float, float]:
        """(ε, δ) = (ε, 0) (Bassi 2019, slide "The Report Noisy Max algorithm is (ε, 0)-DP")."""
        return (self.eps, 0.0)

    def probabilities(self, scores) -> np.ndarray:
        """Exact selection probabilities P[output = i] for a 1-D score vector.

        Gumbel: the softmax P(i) ∝ exp(s_i/b) (closed form, log-sum-exp). Laplace/exponential:
        P(i) = ∫ f(z − s_i) Π_{j≠i} F(z − s_j) dz by adaptive quadrature (scipy ``quad``,
        breakpoints at the scores, tails beyond 40 b dropped: error ≲ 1e-10 per entry).

        >>> ReportNoisyMax(1.0, noise="gumbel").probabilities([0.0, 2.0 * np.log(3.0)]).round(6).tolist()
        [0.25, 0.75]
        >>> p = ReportNoisyMax(1.0).probabilities([0.0, 1.0, 2.0]); bool(abs(p.sum() - 1) < 1e-9)
        True
        """
        from scipy import integrate, special

        s = as_array(scores, "scores", allow_inf=False)
        if s.ndim != 1 or s.size == 0:
            raise ValueError(f"scores must be a non-empty 1-D array, got {scores!r}")
        b = self.noise_scale
        if self.noise == "gumbel":
            return np.exp(s / b - special.logsumexp(s / b))
        exp = math.exp
        if self.noise == "laplace":
            def pdf(x):
                return exp(-abs(x) / b) / (2.0 * b)

            def cdf(x):
                return 0.5 * exp(x / b) if x < 0 else 1.0 - 0.5 * exp(-x / b)
        else:
            def pdf(x):
                return exp(-x / b) / b if x >= 0 else 0.0

            def cdf(x):
                return -math.expm1(-x / b) if x > 0 else 0.0
        lo = (s.min() - 40.0 * b) if self.noise == "laplace" else None
        hi = s.max() + 40.0 * b
        sl = [float(v) for v in s]
        out = np.empty(s.size)
        for i in range(s.size):
            others = sl[:i] + sl[i + 1:]

            def integrand(z, i=i, others=others):
                val = pdf(z - sl[i])
                for o in others:
                    val *= cdf(z - o)
                return val

            a = lo if lo is not None else s[i]
            pts = np.unique(np.clip(s, a, hi))
            val, _ = integrate.quad(integrand, a, hi, points=pts[(pts > a) & (pts < hi)] if pts.size else None,
                                    limit=200, epsabs=1e-13, epsrel=1e-11)
            out[i] = val
        return np.clip(out, 0.0, 1.0)

    def run(self, scores, rng, size=None):
        """Index of the largest noisy score (last axis). ``size=t`` runs t independent trials
        and returns an int array of shape ``(t,) + scores.shape[:-1]``; otherwise an int (1-D
        scores) or an int array."""
        rng = _check_rng(rng)
        s = as_array(scores, "scores", allow_inf=False)
        if s.ndim == 0 or s.shape[-1] == 0:
            raise ValueError(f"scores must be a non-empty array, got {scores!r}")
        shape = s.shape if size is None else (_int(size, "size"),) + s.shape
        b = self.noise_scale
        if self.noise == "laplace":
            z = rng.laplace(0.0, b, shape)
        elif self.noise == "exponential":
            z = rng.exponential(b, shape)
        else:
            z = rng.gumbel(0.0, b, shape)
        idx = np.argmax(s + z, axis=-1)
        return scalar_out(idx)


def report_noisy_max(scores, eps, rng, sensitivity=1.0, noise="laplace", *, monotonic=False, size=None):
    """Report Noisy Max (Bassi 2019, slide "Report Noisy Max"): ``argmax_i (scores_i + Z_i)``, Z_i i.i.d.
    noise of scale ``Δ/ε`` (monotone scores such as counts, Bassi 2019's ``Lap(1/ε)``) or ``2Δ/ε``
    (general scores, the default); ε-DP either way. See :class:`ReportNoisyMax`.

    >>> report_noisy_max([3.0, 40.0, 5.0], 1.0, np.random.default_rng(1))
    1
    >>> report_noisy_max([0.0, 0.0], 1.0, np.random.default_rng(1), size=4).shape
    (4,)
    """
    return ReportNoisyMax(eps, sensitivity, noise, monotonic).run(scores, rng, size=size)


# ------------------------------------------------------------------------------------------------
# Sparse vector: AboveThreshold and Sparse
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SVTResult:
    """Outcome of a sparse-vector run: ``answers[i]`` is 1 (⊤, above), 0 (⊥, below) or −1
    (not answered: the algorithm had halted)."""

    answers: np.ndarray
    above: np.ndarray
    count: int
    halted: bool

    @property
    def n_answered(self) -> int:
        return int(np.sum(self.answers >= 0))


class SVTSession:
    """A running sparse-vector instance (stateful; made by ``AboveThreshold.start`` or
    ``Sparse.start``). Threshold noise ``Lap(threshold_scale)``, query noise
    ``Lap(query_scale)``; halts after ``c`` above-threshold answers.

    ``answer(value)`` handles one adaptively chosen query (True / False, None once halted);
    ``answer_many(values)`` a batch (vectorized; returns 1/0/−1 per query).
    """

    def __init__(self, threshold: float, threshold_scale: float, query_scale: float, c: int,
                 rng: np.random.Generator):
        self.threshold = _real(threshold, "threshold")
        self.threshold_scale = _pos(threshold_scale, "threshold_scale")
        self.query_scale = _pos(query_scale, "query_scale")
        self.c = _int(c, "c")
        self.rng = _check_rng(rng)
        self.count = 0
        self.n_queries = 0
        self.above: list[int] = []
        self._noisy_t = threshold + self.rng.laplace(0.0, threshold_scale)

    @property
    def halted(self) -> bool:
        return self.count >= self.c

    @property
    def remaining(self) -> int:
        """Above-threshold answers left before halting (the budget not yet used)."""
        return self.c - self.count

    def _hit(self, i: int) -> None:
        self.count += 1
        self.above.append(i)
        if not self.halted:
            self._noisy_t = self.threshold + self.rng.laplace(0.0, self.threshold_scale)

    def answer(self, value):
        """True if ``value + ν ≥ T̂`` (then the threshold is refreshed), False if below,
        None if the algorithm has already halted."""
        v = _real(value, "value")
        if self.halted:
            return None
        i = self.n_queries
        self.n_queries += 1
        if v + self.rng.laplace(0.0, self.query_scale) >= self._noisy_t:
            self._hit(i)
            return True
        return False

    def answer_many(self, values) -> np.ndarray:
        """Answer a batch of queries in order (1 above, 0 below, −1 not answered)."""
        v = _values(values, "values").ravel()
        out = np.full(v.shape, -1, dtype=np.int8)
        pos = 0
        while pos < v.size and not self.halted:
            nu = self.rng.laplace(0.0, self.query_scale, v.size - pos)
            hits = np.flatnonzero(v[pos:] + nu >= self._noisy_t)
            if hits.size == 0:
                out[pos:] = 0
                self.n_queries += v.size - pos
                pos = v.size
                break
            j = pos + int(hits[0])
            out[pos:j] = 0
            out[j] = 1
            self.n_queries += j - pos + 1
            self._hit(self.n_queries - 1)
            pos = j + 1
        return out


def _svt_run(session: SVTSession, values) -> SVTResult:
    answers = session.answer_many(values)
    return SVTResult(answers, np.flatnonzero(answers == 1), session.count, session.halted)


@dataclass(frozen=True)
class AboveThreshold:
    """AboveThreshold (Bassi 2019, slide "Detour: AboveThreshold algorithm"; Dwork & Roth 2014, Algorithm 1,
    Theorem 3.23): ε-DP for a stream of sensitivity-Δ queries, halting at the first query whose
    noisy value exceeds a noisy threshold::

        T̂ = T + Lap(2Δ/ε),   ν_i ~ Lap(4Δ/ε),   output ⊤ and halt if f_i(D) + ν_i ≥ T̂, else ⊥.

    Accuracy (Dwork & Roth 2014, Theorem 3.24): over k queries, with probability ≥ 1 − β every
    answer is correct for queries at distance ≥ α = 8Δ (ln k + ln(2/β)) / ε from T
    (:meth:`accuracy`).

    >>> at = AboveThreshold(eps=1.0, threshold=10.0)
    >>> at.privacy(), at.threshold_scale, at.query_scale
    ((1.0, 0.0), 2.0, 4.0)
    >>> r = at.run([0.0, 0.0, 100.0, 0.0], np.random.default_rng(0))
    >>> r.answers.tolist(), r.halted
    ([0, 0, 1, -1], True)
    """

    eps: float
    threshold: float
    sensitivity: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "eps", _pos(self.eps, "eps"))
        object.__setattr__(self, "threshold", _real(self.threshold, "threshold"))
        object.__setattr__(self, "sensitivity", _pos(self.sensitivity, "sensitivity"))

    @property
    def threshold_scale(self) -> float:
        return 2.0 * self.sensitivity / self.eps

    @property
    def query_scale(self) -> float:
        return 4.0 * self.sensitivity / self.eps

    def privacy(self) -> tuple[float, float]:
        """(ε, 0) (Bassi 2019: "The AboveThreshold algorithm is (ε, 0)-differentially private")."""
        return (self.eps, 0.0)

    def accuracy(self, k, beta) -> float:
        """α = 8Δ(ln k + ln(2/β))/ε (Dwork & Roth 2014, Theorem 3.24)."""
        kk = _int(k, "k")
        b = _scalar(check_delta(beta, "beta"), "beta", beta)
        if b <= 0:
            raise ValueError(f"beta must lie in (0, 1), got {beta!r}")
        return 8.0 * self.sensitivity * (math.log(kk) + math.log(2.0 / b)) / self.eps

    def start(self, rng) -> SVTSession:
        """A stepwise session for adaptively chosen queries."""
        return SVTSession(self.threshold, self.threshold_scale, self.query_scale, 1, rng)

    def run(self, queries_values, rng) -> SVTResult:
        """Answer the queries in order (vectorized); see :class:`SVTResult`."""
        return _svt_run(self.start(rng), queries_values)


@dataclass(frozen=True)
class Sparse:
    """Sparse vector algorithm (Bassi 2019, slide "Sparse vector mechanism (again)", procedure Sparse;
    Dwork & Roth 2014, Algorithm 2): AboveThreshold restarted after every ⊤, halting after ``c``
    above-threshold answers. With per-restart noise σ: ``T̂ = T + Lap(σ)``, ``ν_i ~ Lap(2σ)``,
    and each AboveThreshold instance is ε₀-DP with ε₀ = 2Δ/σ.

    * δ = 0: σ = 2cΔ/ε (Bassi 2019), and Sparse is (cε₀, 0) = (ε, 0)-DP by basic composition.
    * δ > 0: Bassi 2019 sets σ = 2Δ sqrt(2c ln(1/δ))/ε, which keeps only the first term of advanced
      composition (ε ≈ sqrt(2c ln(1/δ)) ε₀) and so slightly *overstates* privacy. Here ε₀ is
      instead the largest value (bisection, rounded down) for which the full advanced
      composition bound ``sqrt(2c ln(1/δ)) ε₀ + c ε₀ (e^{ε₀} − 1)`` (or ``c ε₀`` if smaller)
      is ≤ ε; :meth:`privacy` returns that rigorous bound (≤ (ε, δ)).

    Accuracy (Dwork & Roth 2014, Theorem 3.26 generalized to any σ, union bound): over k queries,
    with probability ≥ 1 − β all answers are correct for queries at distance
    ≥ α = 4σ (ln k + ln(2c/β)) from T (for δ = 0: α = 8cΔ(ln k + ln(2c/β))/ε).

    >>> sp = Sparse(c=3, eps=1.0, threshold=10.0)
    >>> sp.sigma, sp.privacy()
    (6.0, (1.0, 0.0))
    >>> sp.run([0, 99, 0, 99, 99, 99], np.random.default_rng(0)).answers.tolist()
    [0, 1, 0, 1, 1, -1]
    >>> eps, delta = Sparse(c=100, eps=1.0, delta=1e-6, threshold=0.0).privacy()
    >>> eps <= 1.0, delta
    (True, 1e-06)
    """

    c: int
    eps: float
    delta: float = 0.0
    threshold: float = 0.0
    sensitivity: float = 1.0
    sigma: float = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "c", _int(self.c, "c"))
        object.__setattr__(self, "eps", _pos(self.eps, "eps"))
        object.__setattr__(self, "delta", _scalar(check_delta(self.delta, "delta"), "delta", self.delta))
        object.__setattr__(self, "threshold", _real(self.threshold, "threshold"))
        object.__setattr__(self, "sensitivity", _pos(self.sensitivity, "sensitivity"))
        eps0 = _solve_eps0(self.eps, self.c, self.delta)
        sigma = 2.0 * self.sensitivity / eps0 if eps0 > 0 else math.inf
        if not math.isfinite(sigma):
            raise ValueError(f"eps = {self.eps!r} is too small for c = {self.c!r}, sensitivity = "
                             f"{self.sensitivity!r}: the noise scale exceeds the float range")
        object.__setattr__(self, "sigma", sigma)
        for _ in range(64):  # round σ up until the recomputed bound is within the target (safe side)
            if self.privacy()[0] <= self.eps:
                break
            sigma = float(np.nextafter(sigma, np.inf) * (1 + 1e-15))
            object.__setattr__(self, "sigma", sigma)

    @property
    def eps0(self) -> float:
        """Per-instance ε₀ = 2Δ/σ of each AboveThreshold restart."""
        return 2.0 * self.sensitivity / self.sigma

    @property
    def threshold_scale(self) -> float:
        return self.sigma

    @property
    def query_scale(self) -> float:
        return 2.0 * self.sigma

    @property
    def sigma_slide(self) -> float:
        """Bassi 2019's noise level: 2cΔ/ε if δ = 0 else 2Δ sqrt(2c ln(1/δ))/ε (for comparison)."""
        if self.delta == 0.0:
            return 2.0 * self.c * self.sensitivity / self.eps
        return 2.0 * self.sensitivity * math.sqrt(2 * self.c * math.log(1 / self.delta)) / self.eps

    def privacy(self) -> tuple[float, float]:
        """(ε, δ) for c-fold composition of ε₀-DP AboveThreshold instances (basic or advanced
        composition, whichever is smaller); never more than the requested (eps, delta)."""
        return (float(_advanced_or_basic(self.eps0, self.c, self.delta)), self.delta)

    def accuracy(self, k, beta) -> float:
        """α = 4σ(ln k + ln(2c/β)) (Dwork & Roth 2014, Theorem 3.26 argument)."""
        kk = _int(k, "k")
        b = _scalar(check_delta(beta, "beta"), "beta", beta)
        if b <= 0:
            raise ValueError(f"beta must lie in (0, 1), got {beta!r}")
        return 4.0 * self.sigma * (math.log(kk) + math.log(2.0 * self.c / b))

    def start(self, rng) -> SVTSession:
        return SVTSession(self.threshold, self.threshold_scale, self.query_scale, self.c, rng)

    def run(self, queries_values, rng) -> SVTResult:
        return _svt_run(self.start(rng), queries_values)


# ------------------------------------------------------------------------------------------------
# Thresholdout (reusable holdout)
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ThresholdoutResult:
    """Answers of a Thresholdout batch. ``answers[i]`` is the released estimate of query i;
    ``used_holdout[i]`` marks over-threshold queries (answered from the holdout with noise, one
    unit of budget each); ``answered[i]`` is False once the budget ran out (Dwork et al. output
    ⊥ there — this module returns the training value instead, which uses no holdout data)."""

    answers: np.ndarray
    used_holdout: np.ndarray
    answered: np.ndarray


#: the first window :meth:`ThresholdoutSession.query` scans for the next use of the holdout
_SCAN_WINDOW = 64


class ThresholdoutSession:
    """A running Thresholdout instance (stateful; made by :meth:`Thresholdout.start`)."""

    def __init__(self, spec: "Thresholdout", rng: np.random.Generator):
        self.spec = spec
        self.rng = _check_rng(rng)
        self.budget_left = spec.budget
        self.n_queries = 0
        self._noisy_t = spec.threshold + self.rng.laplace(0.0, 2.0 * spec.sigma)

    @property
    def budget_used(self) -> int:
        return self.spec.budget - self.budget_left

    def query(self, train_values, holdout_values) -> ThresholdoutResult:
        """Answer a batch of statistical queries φ: X → [0, 1] in order, given their empirical
        means on the training set (``train_values``) and on the holdout (``holdout_values``)."""
        t = _values(train_values, "train_values").ravel()
        h = _values(holdout_values, "holdout_values").ravel()
        if t.shape != h.shape:
            raise ValueError(f"train_values and holdout_values must have the same length, got {t.size} and {h.size}")
        for name, arr in (("train_values", t), ("holdout_values", h)):
            if ((arr < 0) | (arr > 1)).any():
                bad = arr[(arr < 0) | (arr > 1)][:6]
                raise ValueError(f"{name} must lie in [0, 1] (statistical queries), got {bad}")
        out = t.copy()
        used = np.zeros(t.shape, dtype=bool)
        answered = np.zeros(t.shape, dtype=bool)
        s = self.spec.sigma
        # η ~ Lap(4σ) for every query, drawn once: each query's η is looked at once, when that
        # query is reached, so drawing them ahead is the same algorithm (redrawing the rest after
        # every use of the holdout made a batch of d queries cost O(d·B) draws)
        gap = np.abs(h - t) - self.rng.laplace(0.0, 4.0 * s, t.size)
        pos, window = 0, _SCAN_WINDOW
        while pos < t.size and self.budget_left > 0:
            # the first query at or after pos over the current noisy threshold, found in windows
            # that double while none is over (O(d) comparisons in all, not O(d) per use)
            seg = gap[pos:pos + window]
            over = np.flatnonzero(seg > self._noisy_t)
            if over.size == 0:
                answered[pos:pos + seg.size] = True
                pos += seg.size
                window *= 2
                continue
            window = _SCAN_WINDOW
            j = pos + int(over[0])
            answered[pos:j + 1] = True
            used[j] = True
            out[j] = h[j] + self.rng.laplace(0.0, s)
            self.budget_left -= 1
            self._noisy_t = self.spec.threshold + self.rng.laplace(0.0, 2.0 * s)
            pos = j + 1
        self.n_queries += t.size
        return ThresholdoutResult(out, used, answered)


@dataclass(frozen=True)
class Thresholdout:
    """Thresholdout, the reusable holdout (Bassi 2019, slide "Reusable holdout"/"Thresholdout"; Dwork,
    Feldman, Hardt, Pitassi, Reingold & Roth 2015, their algorithm Thresholdout).

    For each statistical query φ: X → [0, 1] with training mean a_t and holdout mean a_h
    (holdout size ``n``; each a_h has sensitivity 1/n)::

        T̂ = T + Lap(2σ);   η ~ Lap(4σ)
        if |a_h − a_t| > T̂ + η:  release a_h + Lap(σ), budget B −= 1, refresh T̂
        else:                     release a_t

    Privacy (Bassi 2019, slide "Thresholdout (cont.)"): the sparse vector part (c = B, noise rate 2σ) and the
    Laplace releases are each B-fold compositions of ε₀ = 1/(σn)-DP steps, so Thresholdout is
    (2B/(σn), 0)-DP. For δ > 0 Bassi's slide gives 2 sqrt(2B ln(2/δ))/(σn) and Dwork et al. 2015
    (their privacy lemma for Thresholdout) give sqrt(32 B ln(2/δ))/(σn) (a footnote of Bassi's
    slide explains the factor 2); both drop second-order terms (via Dwork & Roth 2014,
    Corollary 3.21, which assumes ε < 1). :meth:`privacy` returns the rigorous value: each half by the full advanced
    composition theorem at δ/2 (:func:`dpexplore.composition.advanced`), summed, and never more
    than 2B/(σn)::

        ε(δ) = min(2B/(σn), 2 [sqrt(2B ln(2/δ)) ε₀ + B ε₀ (e^{ε₀} − 1)]),   ε₀ = 1/(σn).

    >>> to = Thresholdout(threshold=0.04, sigma=0.01, budget=10, n=10000)
    >>> to.privacy()
    (0.2, 0.0)
    >>> round(to.privacy_published(1e-6)[0], 6)
    0.681379
    >>> r = to.start(np.random.default_rng(0)).query([0.5, 0.9], [0.5, 0.1])
    >>> r.used_holdout.tolist()
    [False, True]
    """

    threshold: float
    sigma: float
    budget: int
    n: int

    def __post_init__(self):
        t = _scalar(check_nonneg(self.threshold, "threshold", allow_inf=False), "threshold", self.threshold)
        object.__setattr__(self, "threshold", t)
        object.__setattr__(self, "sigma", _pos(self.sigma, "sigma"))
        object.__setattr__(self, "budget", _int(self.budget, "budget"))
        object.__setattr__(self, "n", _int(self.n, "n"))

    @property
    def eps0(self) -> float:
        """ε₀ = 1/(σn): privacy of one AboveThreshold instance / one Laplace release."""
        return 1.0 / (self.sigma * self.n)

    def privacy(self, delta=0.0) -> tuple[float, float]:
        """Rigorous (ε, δ) as in the class docstring (δ = 0: (2B/(σn), 0))."""
        d = _scalar(check_delta(delta, "delta"), "delta", delta)
        pure = 2.0 * self.budget * self.eps0
        if d == 0.0:
            return (pure, 0.0)
        half = float(_advanced_or_basic(self.eps0, self.budget, d / 2.0))
        return (min(pure, 2.0 * half), d)

    def privacy_published(self, delta) -> tuple[float, float]:
        """(sqrt(32 B ln(2/δ))/(σn), δ): Dwork et al. 2015, their privacy lemma for
        Thresholdout (for comparison; it relies on the small-ε approximation, use :meth:`privacy`)."""
        d = _scalar(_delta_open(delta), "delta", delta)
        return (math.sqrt(32.0 * self.budget * math.log(2.0 / d)) / (self.sigma * self.n), d)

    def privacy_slide(self, delta) -> tuple[float, float]:
        """(2 sqrt(2B ln(2/δ))/(σn), δ): Bassi 2019, slide "Thresholdout (cont.)" (approximate, see above)."""
        d = _scalar(_delta_open(delta), "delta", delta)
        return (2.0 * math.sqrt(2.0 * self.budget * math.log(2.0 / d)) / (self.sigma * self.n), d)

    def start(self, rng) -> ThresholdoutSession:
        return ThresholdoutSession(self, rng)

    def run(self, train_values, holdout_values, rng) -> ThresholdoutResult:
        """One batch of queries on a fresh session."""
        return self.start(rng).query(train_values, holdout_values)


@dataclass(frozen=True)
class OverfittingResult:
    """Accuracies of the classifiers built in :func:`simulate_adaptive_overfitting`:
    ``k[j]`` variables, accuracy on ``train``, as reported by the ``holdout`` mechanism, and on
    ``fresh`` data (the truth, up to sampling error)."""

    method: str
    k: np.ndarray
    train: np.ndarray
    holdout: np.ndarray
    fresh: np.ndarray
    n_selected: int
    holdout_queries_over: int


def _pm1_coins(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Independent fair ±1 coins (int8) of ``shape``: one random bit each, unpacked from
    ``rng.bytes`` (about 10× faster than ``rng.integers(0, 2, shape, dtype=np.int8)``, which
    spends a draw per coin; the adaptive lab's n and d sliders redraw 6 n·d of them per step)."""
    size = math.prod(shape)
    bits = np.unpackbits(np.frombuffer(rng.bytes((size + 7) // 8), dtype=np.uint8), count=size)
    bits <<= 1
    bits -= 1  # 0 → 255 (−1 as int8), 1 → 1
    return bits.view(np.int8).reshape(shape)


def _pm1_corr(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """y·x_j / n for every column j of a ±1 matrix ``x`` (n × d, int8) and ±1 labels ``y``, as
    float32: the sum is n − 2·(number of rows where x_ij ≠ y_i), an exact integer, so this equals
    the float32 matrix product (exact for |sum| < 2^24) bit for bit, at half its time and
    without a float32 copy of ``x``."""
    n = x.shape[0]
    return (n - 2 * np.count_nonzero(x != y[:, None], axis=0)).astype(np.float32) / n


def simulate_adaptive_overfitting(n, d, rounds, rng, method="naive", *, max_k=None, threshold=None,
                                  sigma=None, budget=None, n_signal=0, signal=0.0):
    """The holdout-reuse experiment of Dwork et al. 2015 (their section
    "Experiments", after Freedman 1983; Bassi 2019, slide "Reusable holdout"): adaptive variable selection
    overfits a reused holdout; Thresholdout keeps the holdout estimate honest (the accuracy it
    reports tracks fresh data). It does not make the classifier itself better.

    Data: training, holdout and fresh sets of ``n`` rows each, ``d`` features in {−1, +1} and a
    label y ∈ {−1, +1}, all independent fair coins except the first ``n_signal`` features, which
    equal y with probability (1 + ``signal``)/2 (correlation ``signal``). With no signal every
    classifier has true accuracy 1/2.

    Analyst: computes correlations c_t (training) and c_h (holdout, through ``method``: exact for
    ``"naive"``, through :class:`Thresholdout` as the statistical queries φ_j = (1 + x_j y)/2 for
    ``"thresholdout"``); keeps the variables with |c_t| > 1/√n and |c_h| > 1/√n of equal sign;
    for ``rounds`` values of k up to ``max_k`` (default d // 40) builds
    f_k(x) = sign(Σ_{top-k by |c_t|} sign(c_t,j) x_j) (ties → +1; k capped at the number
    selected) and asks the holdout for its accuracy (again exact or through Thresholdout).

    Differences from the experiment of Dwork et al. 2015 (n = d = 10⁴; N(0, 1) features, 20 signal
    features N(0.06 y, 1), Thresholdout with T = 0.04, noise 0.01 and *Gaussian* noise): ±1
    features (so every query is [0, 1]-valued, as the privacy analysis requires), the analysed
    Laplace version of Thresholdout, and defaults scaled with n: T = 4/√n, σ = 1/√n on the
    correlation scale (0.04 and 0.01 at n = 10⁴), i.e. T = 2/√n, σ = 1/(2√n) for the
    [0, 1]-valued queries; budget ``d + rounds`` (never binding — the privacy spent follows from
    ``Thresholdout.privacy`` with B = ``holdout_queries_over``).
    Cost: O(n d) time, 3nd bytes of memory; n = 2000, d = 4000 runs in about 0.1 s.

    >>> r = simulate_adaptive_overfitting(500, 1000, 5, np.random.default_rng(0))
    >>> r.k.tolist()
    [5, 10, 15, 20, 25]
    >>> bool(r.holdout[-1] > r.fresh[-1])
    True
    """
    n = _int(n, "n")
    d = _int(d, "d")
    rounds = _int(rounds, "rounds")
    rng = _check_rng(rng)
    if method not in ("naive", "thresholdout"):
        raise ValueError(f"method must be 'naive' or 'thresholdout', got {method!r}")
    max_k = max(1, d // 40) if max_k is None else _int(max_k, "max_k")
    n_signal = _int(n_signal, "n_signal", minimum=0)
    if n_signal > d:
        raise ValueError(f"n_signal must be <= d = {d}, got {n_signal}")
    signal = _scalar(check_delta(signal, "signal", allow_one=True), "signal", signal)
    to_session = None
    if method == "thresholdout":
        spec = Thresholdout(
            threshold=2.0 / math.sqrt(n) if threshold is None else threshold,
            sigma=0.5 / math.sqrt(n) if sigma is None else sigma,
            budget=d + rounds if budget is None else budget,
            n=n,
        )
        to_session = spec.start(rng)

    def draw():
        y = _pm1_coins(rng, (n,))
        x = _pm1_coins(rng, (n, d))
        if n_signal:
            agree = rng.random((n, n_signal)) < (1.0 + signal) / 2.0
            x[:, :n_signal] = np.where(agree, y[:, None], -y[:, None])
        return x, y

    (xt, yt), (xh, yh), (xf, yf) = draw(), draw(), draw()
    def corr(x, y):
        return _pm1_corr(x, y)

    ct, ch_true = corr(xt, yt), corr(xh, yh)
    over = 0
    if to_session is None:
        ch = ch_true.astype(np.float64)
    else:
        res = to_session.query((1.0 + ct) / 2.0, (1.0 + ch_true) / 2.0)
        ch = 2.0 * res.answers - 1.0
    cut = 1.0 / math.sqrt(n)
    keep = (np.abs(ct) > cut) & (np.abs(ch) > cut) & (np.sign(ct) == np.sign(ch))
    sel = np.flatnonzero(keep)
    sel = sel[np.argsort(-np.abs(ct[sel]), kind="stable")][:max_k]
    k = np.unique(np.maximum(1, np.round(np.linspace(max_k / rounds, max_k, rounds)).astype(int)))
    kk = np.minimum(k, sel.size)

    def accuracy(x, y):
        if sel.size == 0:
            return np.full(k.shape, float(np.mean(y == 1)))
        w = np.sign(ct[sel]).astype(np.int32)
        s = np.cumsum(x[:, sel].astype(np.int32) * w, axis=1)[:, np.maximum(kk, 1) - 1]
        pred = np.where(s >= 0, 1, -1)
        return np.mean(pred == y[:, None], axis=0)

    acc_t, acc_h, acc_f = accuracy(xt, yt), accuracy(xh, yh), accuracy(xf, yf)
    if to_session is not None:
        acc_h = to_session.query(acc_t, acc_h).answers
        over = to_session.budget_used
    return OverfittingResult(method, k, acc_t, acc_h, acc_f, int(sel.size), int(over))


# ------------------------------------------------------------------------------------------------
# Generalization and max-information (Bassi 2019)
# ------------------------------------------------------------------------------------------------
def generalization_via_dp(n, beta):
    """Bassi 2019, slide "Generalization via DP for i.i.d. datasets": if every fixed output y is bad with
    probability ≤ β, an ε-DP algorithm with ε ≤ sqrt(ln(1/β)/(2n)) outputs a bad y with
    probability ≤ 3√β. Returns ``(eps_max, failure)`` = (sqrt(ln(1/β)/(2n)), 3√β) (closed form).

    >>> generalization_via_dp(1000, 1e-4)
    (0.06786140424415112, 0.03)
    """
    nn = check_positive(n, "n")
    b = _delta_open(beta, "beta")
    with np.errstate(over="ignore"):  # subnormal n: eps = inf (no constraint), not a warning
        eps = np.sqrt(-np.log(b) / (2.0 * nn))
    return scalar_out(eps), scalar_out(np.minimum(3.0 * np.sqrt(b), 1.0) + 0.0 * nn)


def statistical_query_epsilon(tau, n):
    """Bassi 2019, slide "Corollary for statistical queries": an ε-DP algorithm that outputs a statistical
    query φ: X → [0, 1] with ε ≤ sqrt(τ² − ln 2/(2n)) ensures
    P[|P[φ] − E_S[φ]| > τ] ≤ 3√2 exp(−nτ²). Returns ``(eps_max, failure)``; needs
    τ² > ln 2/(2n) (ValueError naming ``tau`` otherwise).

    >>> eps, fail = statistical_query_epsilon(0.1, 1000)
    >>> round(eps, 6), round(fail, 8)
    (0.098252, 0.00019262)
    """
    t = check_positive(tau, "tau")
    nn = check_positive(n, "n")
    t, nn = np.broadcast_arrays(t, nn)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        # subnormal n: ln 2/(2n) = inf (rejected); τ² = inf as well: τ wins (slack inf)
        slack = np.where(np.isinf(t * t), np.inf, t * t - math.log(2.0) / (2.0 * nn))
    if (slack <= 0).any():
        raise ValueError(f"tau must satisfy tau**2 > ln(2)/(2n), got tau={tau!r}, n={n!r}")
    with np.errstate(over="ignore", under="ignore"):  # nτ² overflowing: failure 0
        fail = np.minimum(3.0 * math.sqrt(2.0) * np.exp(-nn * t * t), 1.0)
    return scalar_out(np.sqrt(slack)), scalar_out(fail)


def max_information_pure(eps, n):
    """Bassi 2019, slide "Pure max-information of pure DP algorithms": I_∞(A, n) ≤ (log₂ e) ε n bits.

    >>> round(max_information_pure(0.01, 100), 6)
    1.442695
    """
    e = check_nonneg(eps, "eps", allow_inf=False)
    nn = check_positive(n, "n")
    with np.errstate(over="ignore"):  # the bound overflows to inf (still valid)
        return scalar_out(LOG2E * e * nn)


def max_information_iid(eps, n, beta):
    """Bassi 2019, slide "Approx. max-information of DP algorithms for i.i.d. datasets": for ε-DP A and
    β > 0, I_∞^β(A, n) ≤ (log₂ e)(ε² n/2 + ε sqrt(n ln(2/β)/2)) bits.

    >>> round(max_information_iid(0.01, 10000, 0.05), 6)
    2.680674
    """
    e = check_nonneg(eps, "eps", allow_inf=False)
    nn = check_positive(n, "n")
    b = _delta_open(beta, "beta")
    with np.errstate(over="ignore", invalid="ignore"):  # the bound overflows to inf (still valid)
        # log(2/β) as log 2 − log β: 2/β overflows for β = 5e-324 (then 0·inf = NaN at ε = 0)
        out = LOG2E * (e * e * nn / 2.0 + e * np.sqrt(nn * (math.log(2.0) - np.log(b)) / 2.0))
        return scalar_out(np.where(e == 0, 0.0, out))


def max_information_tail_bound(k_bits, tau, n, c, beta):
    """Bassi 2019, slide "Usefulness of max-information" + McDiarmid: if I_∞^β(A, n) ≤ k bits and A outputs
    a c-sensitive f: X^n → R, then P[|f(S) − P^n[f]| ≥ τ] ≤ 2^k · 2 exp(−2τ²/(n c²)) + β
    (capped at 1; evaluated in log space).

    >>> round(max_information_tail_bound(0.0, 0.05, 1000, 1e-3, 0.0), 8)
    0.01347589
    """
    k = check_nonneg(k_bits, "k_bits", allow_inf=False)
    t = check_positive(tau, "tau")
    nn = check_positive(n, "n")
    cc = check_positive(c, "c")
    b = check_delta(beta, "beta", allow_one=True)
    # 2τ²/(n c²) as 2 (τ/c/√n)²: no inf/inf (NaN) for huge τ, n, c; overflow is +inf (δ → β)
    with np.errstate(over="ignore", under="ignore"):
        r = t / cc / np.sqrt(nn)
        log_term = k * math.log(2.0) + math.log(2.0) - 2.0 * r * r
    return scalar_out(np.minimum(np.exp(np.minimum(log_term, 0.0)) + b, 1.0))


def dp_max_information_tail_bound(eps, tau, n, c, beta):
    """Generalization of an ε-DP algorithm's c-sensitive output via max-information (Bassi 2019,
    "Generalization via max-information for i.i.d. datasets (take 2)"): combine
    :func:`max_information_iid` (k bits at β) with :func:`max_information_tail_bound`::

        P ≤ exp(ε²n/2 + ε sqrt(n ln(2/β)/2)) · 2 exp(−2τ²/(nc²)) + β.

    With ε = τ/(nc) and β = 2 exp(−τ²/(nc²)) this is Bassi's slide's
    2 exp((1/√2 − 3/2) τ²/(nc²)) + 2 exp(−τ²/(nc²)).

    >>> x = 20.0; n = 1000; c = 1 / n; tau = (x * n * c * c) ** 0.5
    >>> p = dp_max_information_tail_bound(tau / (n * c), tau, n, c, 2 * np.exp(-x))
    >>> bool(abs(p - (2 * np.exp((2 ** -0.5 - 1.5) * x) + 2 * np.exp(-x))) < 1e-15)
    True
    """
    k = max_information_iid(eps, n, beta)
    return max_information_tail_bound(k, tau, n, c, beta)


# ------------------------------------------------------------------------------------------------
# Amplification by shuffling (Steinke 2023a, FMT21)
# ------------------------------------------------------------------------------------------------
def shuffle_amplification_valid(eps_local, n, delta):
    """Whether the condition of FMT21's closed-form bound holds: ε_L ≤ ln(n / (16 ln(4/δ)))
    (Feldman, McMillan & Talwar 2021, Theorem 3.1, with the log(4/δ) used by the authors' reference
    implementation apple/ml-shuffling-amplification — the stricter of the versions in
    circulation; Canonne 2022 states it loosely as n ≫ e^{ε_L} log(1/δ)).

    >>> shuffle_amplification_valid(1.0, 10000, 1e-6), shuffle_amplification_valid(4.0, 10000, 1e-6)
    (True, False)
    """
    e = check_nonneg(eps_local, "eps_local")
    nn = check_positive(n, "n")
    d = _delta_open(delta)
    with np.errstate(divide="ignore", over="ignore"):
        bound = np.log(nn / (16.0 * np.log(4.0 / d)))
    return scalar_out(np.asarray(e <= bound))


def shuffle_amplification(eps_local, n, delta, *, strict=False):
    """Central ε after shuffling the messages of n users of an ε_L-LDP randomizer (Canonne 2022, "Privacy
    Doona", eq. (1); Feldman, McMillan & Talwar 2021)::

        ε = min(ε_L, log(1 + 16 (e^{ε_L} − 1)/(e^{ε_L} + 1) · sqrt(e^{ε_L} log(4/δ) / n))),

    an (ε, δ)-DP guarantee valid when ε_L ≤ ln(n/(16 ln(4/δ))) (:func:`shuffle_amplification_valid`;
    the factor 16 of Canonne 2022, eq. (1) absorbs the 8√(·)/√n + 8e^{ε_L}/n terms of the theorem of
    Feldman, McMillan & Talwar 2021 under that condition; Canonne 2022, eq. (1) is ≥ 1.37× their
    refined closed form there, checked in the tests).
    Where the condition fails the result is ε_L (shuffling is post-processing of ε_L-DP reports,
    so it never hurts), or a ValueError naming ``n`` with ``strict=True``. Closed form.

    >>> round(shuffle_amplification(1.0, 10000, 1e-6), 6)
    0.388861
    >>> shuffle_amplification(8.0, 10000, 1e-6)     # condition fails: no amplification
    8.0
    """
    e = check_nonneg(eps_local, "eps_local")
    nn = check_positive(n, "n")
    d = _delta_open(delta)
    e, nn, d = np.broadcast_arrays(e, nn, d)
    valid = np.asarray(shuffle_amplification_valid(e, nn, d), dtype=bool)
    if strict and not valid.all():
        raise ValueError(
            f"n too small for amplification by shuffling: need eps_local <= ln(n / (16 ln(2/delta))), "
            f"got n={n!r}, eps_local={eps_local!r}, delta={delta!r}")
    with np.errstate(over="ignore", invalid="ignore"):
        ee = np.where(valid, e, 0.0)
        amp = np.log1p(16.0 * np.tanh(ee / 2.0) * np.exp(ee / 2.0) * np.sqrt(np.log(4.0 / d) / nn))
    return scalar_out(np.where(valid, np.minimum(amp, e), e))


# ------------------------------------------------------------------------------------------------
# Median: inverse sensitivity vs Laplace (Steinke 2023a)
# ------------------------------------------------------------------------------------------------
def _median_inputs(data, lower, upper):
    x = _values(data, "data").ravel()
    if x.size == 0:
        raise ValueError(f"data must be non-empty, got {data!r}")
    lo = _real(lower, "lower")
    hi = _real(upper, "upper")
    if not hi > lo:
        raise ValueError(f"upper must be > lower, got lower={lower!r}, upper={upper!r}")
    return np.sort(x), lo, hi


def _grid(grid, lo, hi) -> np.ndarray:
    if isinstance(grid, numbers.Integral) and not isinstance(grid, bool):
        return np.linspace(lo, hi, _int(grid, "grid", minimum=2))
    g = _values(grid, "grid").ravel()
    if g.size < 1:
        raise ValueError(f"grid must be non-empty, got {grid!r}")
    return np.sort(g)


def inverse_sensitivity_median_loss(data, grid):
    """Inverse-sensitivity loss of the median (Steinke 2023a, "Beyond Global Sensitivity", eq. (4)): the
    number of data points that must be replaced so that y becomes the median. With the
    median x_(m), m = ⌈n/2⌉ (the usual median for odd n, the lower median for even n),
    L(y) = #{x_i < y}, G(y) = #{x_i > y}::

        ℓ(x, y) = max(0, L(y) − m + 1) + max(0, G(y) − (n − m))

    (at most one term is non-zero). Its sensitivity is 1 (Steinke 2023a, Lemma 1).

    >>> inverse_sensitivity_median_loss([1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 3.0, 3.5, 5.0]).tolist()
    [3, 0, 1, 2]
    """
    x = np.sort(_values(data, "data").ravel())
    g = as_array(grid, "grid", allow_inf=False)
    n = x.size
    m = (n + 1) // 2
    less = np.searchsorted(x, g, side="left")
    greater = n - np.searchsorted(x, g, side="right")
    return np.maximum(0, less - m + 1) + np.maximum(0, greater - (n - m))


def inverse_sensitivity_median_probs(data, eps, lower, upper, grid=1001):
    """Output distribution of the inverse sensitivity mechanism for the median (Steinke 2023a, eq. (5)):
    P[M(x) = y] ∝ exp(−ε ℓ(x, y)/2) over the finite grid Y (``grid`` points on
    [lower, upper], or an explicit array). Returns ``(grid, probs)``. ε-DP (Steinke 2023a, Theorem 2).

    >>> g, p = inverse_sensitivity_median_probs([0.2, 0.5, 0.8], 2.0, 0.0, 1.0, grid=3)
    >>> g.tolist(), p.round(6).tolist()     # losses 2, 0, 2
    ([0.0, 0.5, 1.0], [0.106507, 0.786986, 0.106507])
    """
    x, lo, hi = _median_inputs(data, lower, upper)
    e = _pos(eps, "eps")
    g = _grid(grid, lo, hi)
    loss = inverse_sensitivity_median_loss(x, g)
    logw = -0.5 * e * loss
    logw -= logw.max()
    w = np.exp(logw)
    return g, w / w.sum()


def inverse_sensitivity_median(data, eps, lower, upper, rng, grid=1001, size=None):
    """ε-DP median by the inverse sensitivity mechanism (Steinke 2023a, "Beyond Global Sensitivity via
    Inverse Sensitivity", eq. (4)–(5), Theorem 2): the exponential mechanism over a finite output
    grid with the loss ℓ(x, y) of :func:`inverse_sensitivity_median_loss`,
    P[M(x) = y] ∝ exp(−ε ℓ(x, y)/2), sampled from these probabilities. Utility: see
    :func:`inverse_sensitivity_median_bound`.

    >>> x = np.random.default_rng(0).normal(0.5, 0.1, 1001)
    >>> m = inverse_sensitivity_median(x, 1.0, 0.0, 1.0, np.random.default_rng(1))
    >>> bool(abs(m - np.median(x)) < 0.05)
    True
    """
    rng = _check_rng(rng)
    g, p = inverse_sensitivity_median_probs(data, eps, lower, upper, grid)
    shape = None if size is None else (_int(size, "size"),)
    return scalar_out(np.asarray(rng.choice(g, size=shape, p=p)))


def inverse_sensitivity_median_bound(data, eps, beta, lower, upper, grid=1001):
    """Utility of the inverse sensitivity median (Steinke 2023a, Lemma 3 and Theorem 4): with probability
    ≥ 1 − β the output has loss ≤ k = ⌊(2/ε) ln(|Y|/β)⌋, hence lies in
    [x_(m−k), x_(m+k)] (order statistics clipped to [lower, upper]), so
    |M(x) − median| ≤ LS^k(x) (Steinke 2023a eq. (3)). Returns ``(k, lo, hi)``.

    >>> inverse_sensitivity_median_bound(np.arange(1, 100.0), 1.0, 0.1, 0.0, 100.0, grid=101)
    (13, 37.0, 63.0)
    """
    x, lo, hi = _median_inputs(data, lower, upper)
    e = _pos(eps, "eps")
    b = _scalar(_delta_open(beta, "beta"), "beta", beta)
    size = _grid(grid, lo, hi).size
    n = x.size
    # k ≥ n already gives the whole range (tiny ε: 2/ε·log(size/β) may overflow to inf)
    k = int(math.floor(min(2.0 / e * math.log(size / b), n + 1.0)))
    m = (n + 1) // 2
    left = x[m - k - 1] if m - k >= 1 else lo
    right = x[m + k - 1] if m + k <= n else hi
    return k, float(max(left, lo)), float(min(right, hi))


def laplace_median(data, eps, lower, upper, rng, size=None):
    """Laplace-mechanism median, the global-sensitivity baseline (Steinke 2023a, eq. (8)): clip the data
    to [lower, upper]; the median x_(⌈n/2⌉) then has global sensitivity GS = upper − lower under
    replacement of one point (half the points at ``lower``, the rest at ``upper``: moving one
    flips the median), so M(x) = median + Lap(GS/ε) is ε-DP; the output is clipped to
    [lower, upper] (post-processing).

    >>> laplace_median([0.4, 0.5, 0.6], 1e6, 0.0, 1.0, np.random.default_rng(0)) - 0.5 < 1e-5
    True
    """
    rng = _check_rng(rng)
    x, lo, hi = _median_inputs(data, lower, upper)
    e = _pos(eps, "eps")
    x = np.clip(x, lo, hi)
    med = x[(x.size + 1) // 2 - 1]
    shape = None if size is None else (_int(size, "size"),)
    out = np.clip(med + rng.laplace(0.0, (hi - lo) / e, shape), lo, hi)
    return scalar_out(out)


def laplace_median_error_bound(eps, lower, upper, beta):
    """|M(x) − median| ≤ (GS/ε) ln(1/β) with probability ≥ 1 − β, GS = upper − lower, since
    P[|Lap(b)| > t] = e^{−t/b}. (Steinke 2023a eq. (8) prints ln(1/(2β)), which holds with probability
    1 − 2β; the safe ln(1/β) is used here.)

    >>> round(laplace_median_error_bound(1.0, 0.0, 1.0, 0.05), 6)
    2.995732
    """
    e = check_positive(eps, "eps")
    lo = _real(lower, "lower")
    hi = _real(upper, "upper")
    if not hi > lo:
        raise ValueError(f"upper must be > lower, got lower={lower!r}, upper={upper!r}")
    b = _delta_open(beta, "beta")
    with np.errstate(over="ignore"):  # beyond float max: inf (still valid)
        return scalar_out((hi - lo) / e * np.log(1.0 / b))
