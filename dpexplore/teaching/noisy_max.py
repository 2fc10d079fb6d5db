"""Report Noisy Max (Bassi 2019, slide "Report Noisy Max"): release only the arg max of noisy
scores."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import as_array, scalar_out
from ._common import _check_rng, _int, _pos

__all__ = ["ReportNoisyMax", "report_noisy_max"]

_NOISES = ("laplace", "exponential", "gumbel")


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
            raise ValueError(
                f"sensitivity/eps must give a noise scale within the float range, got "
                f"sensitivity={self.sensitivity!r}, eps={self.eps!r}"
            )

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
            others = sl[:i] + sl[i + 1 :]

            def integrand(z, i=i, others=others):
                val = pdf(z - sl[i])
                for o in others:
                    val *= cdf(z - o)
                return val

            a = lo if lo is not None else s[i]
            pts = np.unique(np.clip(s, a, hi))
            val, _ = integrate.quad(
                integrand,
                a,
                hi,
                points=pts[(pts > a) & (pts < hi)] if pts.size else None,
                limit=200,
                epsabs=1e-13,
                epsrel=1e-11,
            )
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
