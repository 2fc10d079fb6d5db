"""Thresholdout, the reusable holdout, and the adaptive-overfitting experiment (Bassi 2019, slide
"Reusable holdout"; Dwork, Feldman, Hardt, Pitassi, Reingold & Roth 2015)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import check_delta, check_nonneg
from ._common import _advanced_or_basic, _check_rng, _delta_open, _int, _pos, _scalar, _values

__all__ = [
    "Thresholdout",
    "ThresholdoutSession",
    "ThresholdoutResult",
    "OverfittingResult",
    "simulate_adaptive_overfitting",
]


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
            seg = gap[pos : pos + window]
            over = np.flatnonzero(seg > self._noisy_t)
            if over.size == 0:
                answered[pos : pos + seg.size] = True
                pos += seg.size
                window *= 2
                continue
            window = _SCAN_WINDOW
            j = pos + int(over[0])
            answered[pos : j + 1] = True
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
    composition theorem at δ/2 (:func:`dpexplore.accounting.composition.advanced`), summed, and never more
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


def simulate_adaptive_overfitting(
    n, d, rounds, rng, method="naive", *, max_k=None, threshold=None, sigma=None, budget=None, n_signal=0, signal=0.0
):
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
