"""The sparse vector technique: AboveThreshold and Sparse (Bassi 2019, slide "AboveThreshold
algorithm", "Sparse vector mechanism"; Dwork & Roth 2014, Algorithms 1–2)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_delta
from ._common import _advanced_or_basic, _check_rng, _int, _pos, _real, _scalar, _solve_eps0, _values

__all__ = ["AboveThreshold", "Sparse", "SVTSession", "SVTResult"]


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

    def __init__(self, threshold: float, threshold_scale: float, query_scale: float, c: int, rng: np.random.Generator):
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
            raise ValueError(
                f"eps = {self.eps!r} is too small for c = {self.c!r}, sensitivity = "
                f"{self.sensitivity!r}: the noise scale exceeds the float range"
            )
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
