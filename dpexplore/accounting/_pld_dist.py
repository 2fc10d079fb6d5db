"""The discrete privacy loss distribution (:class:`DiscretePLD`) and its queries: δ(ε) in log
space and its exact inverse ε(δ), piece by piece; :class:`PLDProfile` wraps one as a privacy
profile. Part of :mod:`dpexplore.accounting.pld` (which re-exports every name here; see its docstring for the
discretization and the error bounds)."""

from __future__ import annotations

import numpy as np
from scipy import signal

from .._numerics import MARGINS, log_subtract
from .._validation import as_array, check_delta, check_nonneg, check_positive, scalar_out
from .profiles import PrivacyProfile

#: relative safety factor applied to every δ computed from a PLD
REL_MARGIN = MARGINS["pld"].rel
_LOG_REL = np.log1p(REL_MARGIN)


class DiscretePLD:
    """A discrete privacy loss distribution: mass ``pmf[j]`` at loss (offset + j)·h, plus
    ``inf_mass`` at +∞, plus a constant ``extra`` (bounded truncation / round-off) added to δ.

    Evaluates δ(ε) = (1 + 1e-9)·Σ_j pmf_j (1 − e^{ε − ℓ_j})₊ + inf_mass + extra
    (Liu et al. 2022, Section 2: the profile from the privacy loss distribution) exactly for the discrete
    distribution, in log space, and inverts it exactly piece by piece (δ is e^ε-affine between
    grid points), so ``epsilon`` is vectorized and needs no bisection.

    >>> d = DiscretePLD(1.0, -1, np.array([0.5, 0.0, 0.5]), 0.0)   # losses −1, 0, 1
    >>> round(d.delta(0.0), 6)                                      # 0.5·(1 − e^{−1})
    0.31606
    >>> d.epsilon(0.0)
    1.0
    """

    def __init__(
        self, h: float, offset: int, pmf: np.ndarray, inf_mass: float = 0.0, extra: float = 0.0, eps_max: float = np.inf
    ):
        def scalar(arr, name, value):
            if arr.ndim:
                raise ValueError(f"{name} must be a scalar, got {value!r}")
            return float(arr)

        self.h = scalar(check_positive(h, "h"), "h", h)
        off = scalar(as_array(offset, "offset", allow_inf=False), "offset", offset)
        if off != np.floor(off) or abs(off) > 2**53:
            raise ValueError(f"offset must be an integer, got {offset!r}")
        self.offset = int(off)
        pmf = as_array(pmf, "pmf", allow_inf=False)
        if pmf.ndim != 1:
            raise ValueError(f"pmf must be a 1-d array, got shape {pmf.shape}")
        inf_mass = scalar(check_nonneg(inf_mass, "inf_mass", allow_inf=False), "inf_mass", inf_mass)
        extra = scalar(check_nonneg(extra, "extra", allow_inf=False), "extra", extra)
        eps_max = scalar(check_nonneg(eps_max, "eps_max"), "eps_max", eps_max)
        pmf = np.maximum(pmf, 0.0)  # FFT round-off can leave tiny negative masses
        nz = np.nonzero(pmf)[0]
        if nz.size:  # trim zero ends (keeps the arrays short)
            self.offset += int(nz[0])
            pmf = pmf[nz[0] : nz[-1] + 1]
        self.pmf = pmf
        self.inf_mass = float(inf_mass)
        self.extra = float(extra)
        self.eps_max = float(eps_max)
        with np.errstate(over="ignore"):
            self.losses = (self.offset + np.arange(pmf.size)) * self.h
        if not np.isfinite(self.losses).all():
            raise ValueError(f"h = {self.h!r} with offset = {self.offset!r} puts losses beyond the float range")
        self._sums = None
        add = self.inf_mass + self.extra
        with np.errstate(divide="ignore"):
            self._log_add = np.log(add) if add > 0 else -np.inf

    def _suffix(self):
        """(log S1, log S2, log δ at the grid points), computed on first use and kept.

        S1[j] = Σ_{i≥j} p_i and S2[j] = Σ_{i≥j} p_i e^{−ℓ_i}. S2 underflows for large losses, so it
        is kept as log S2[j] = log T[j] − ℓ_j with T[j] = Σ_{i≥j} p_i e^{−(i−j)h}, computed by the
        stable recursion T[j] = p_j + e^{−h} T[j+1] (a first-order filter). Index n holds −inf.
        """
        if self._sums is None:
            pmf = self.pmf
            s1 = np.cumsum(pmf[::-1])[::-1]
            t = signal.lfilter([1.0], [1.0, -np.exp(-self.h)], pmf[::-1])[::-1]
            with np.errstate(divide="ignore"):
                ls1 = np.append(np.log(s1), -np.inf)
                ls2 = np.append(np.log(t) - self.losses, -np.inf)
            # δ of the finite part at ε = ℓ_j (sum over i > j), used to invert
            dg = log_subtract(ls1[1:], np.minimum(self.losses + ls2[1:], ls1[1:]))
            self._sums = (ls1, ls2, dg)
        return self._sums

    # -- queries ---------------------------------------------------------------------------------
    def mean(self) -> float:
        """E[L] of the finite part (normalised)."""
        return float(np.dot(self.pmf, self.losses) / self.pmf.sum())

    def _log_delta(self, eps: np.ndarray) -> np.ndarray:
        eps = np.asarray(eps, dtype=np.float64)
        ls1, ls2, _ = self._suffix()
        j = np.searchsorted(self.losses, eps, side="right")
        l1 = ls1[j]
        with np.errstate(invalid="ignore", divide="ignore"):  # ε = inf: inf + (−inf), replaced below
            l2 = eps + ls2[j]
            base = log_subtract(l1, np.minimum(l2, l1))
            # just below the largest loss only its own term is left, p·(1 − e^{ε − ℓ}): computed
            # directly (the difference of the two sums is all round-off there)
            n = self.losses.size
            if n:
                last = np.log(self.pmf[-1]) + np.log(-np.expm1(np.minimum(eps - self.losses[-1], 0.0)))
                base = np.where(j == n - 1, last, base)
        base = np.where(np.isinf(eps), -np.inf, base)
        out = np.logaddexp(base + _LOG_REL, self._log_add)
        return np.where(eps >= self.eps_max, -np.inf, out)

    def log_delta(self, eps):
        """log δ(ε) (see the class docstring); −inf where δ = 0."""
        return scalar_out(self._log_delta(check_nonneg(eps, "eps")))

    def delta(self, eps):
        """δ(ε) of the discrete distribution, an upper bound of the true δ."""
        return scalar_out(np.minimum(np.exp(self._log_delta(check_nonneg(eps, "eps"))), 1.0))

    def _epsilon(self, delta: np.ndarray) -> np.ndarray:
        delta = np.asarray(delta, dtype=np.float64)
        r = (delta - self.inf_mass - self.extra) / (1.0 + REL_MARGIN)
        with np.errstate(divide="ignore", invalid="ignore"):
            logr = np.log(np.maximum(r, 0.0))
        # smallest grid index j with δ(ℓ_j) ≤ r; then ε ∈ (ℓ_{j−1}, ℓ_j]
        ls1, ls2, dg = self._suffix()  # dg non-increasing
        j = np.searchsorted(-dg, -logr, side="left")
        n = self.losses.size
        jj = np.minimum(j, n - 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            sol = log_subtract(ls1[jj], np.minimum(logr, ls1[jj])) - ls2[jj]
        lo = np.where(jj > 0, self.losses[np.maximum(jj - 1, 0)], -np.inf)
        sol = np.clip(np.nan_to_num(sol, nan=np.inf, posinf=np.inf), lo, self.losses[jj])
        sol = np.where(logr >= ls1[jj], lo, sol)
        # round up by a few ulps (and past the grid point when we are exactly on it)
        sol = sol + 8 * np.spacing(np.abs(sol) + 1.0)
        out = np.where(j >= n, np.maximum(self.losses[-1], 0.0), sol)
        out = np.maximum(out, 0.0)
        # δ ≤ inf_mass + extra: only ε ≥ eps_max (or, without those terms, the largest loss) works
        beyond = max(float(self.losses[-1]), 0.0) if (self.inf_mass + self.extra) == 0 else np.inf
        out = np.where(r <= 0, min(beyond, self.eps_max), out)
        # the discrete δ at ε = 0 may already be small enough
        with np.errstate(divide="ignore"):
            out = np.where(self._log_delta(np.zeros(1))[0] <= np.log(delta), 0.0, out)
        return np.minimum(out, self.eps_max)

    def epsilon(self, delta):
        """The smallest ε ≥ 0 with δ(ε) ≤ ``delta`` for this discrete PLD, rounded up."""
        return scalar_out(self._epsilon(check_delta(delta, "delta")))


class PLDProfile(PrivacyProfile):
    """The privacy profile of a (composed) discrete PLD: δ(ε) as in :class:`DiscretePLD`
    (Liu et al. 2022, Section 2; Doroshenko et al. 2022 for the pessimistic discretization), never below the
    true δ of the mechanism it was built from. ``epsilon`` inverts the discrete δ exactly.

    >>> from dpexplore.mechanisms import Laplace
    >>> from dpexplore.accounting.pld import composed_pld
    >>> p = PLDProfile(composed_pld(Laplace(1.0), 1), name="Laplace")
    >>> bool(abs(p.delta(0.5) - (1 - np.exp(-0.25))) < 1e-6)      # 1 − e^{(ε − 1)/2}
    True
    """

    def __init__(self, pld: DiscretePLD, name: str = "PLD"):
        if not isinstance(pld, DiscretePLD):
            raise ValueError(f"pld must be a DiscretePLD, got {pld!r}")
        self.pld = pld
        self.eps_max = pld.eps_max
        self.name = name

    def _log_delta(self, eps):
        return self.pld._log_delta(eps)

    def _epsilon(self, delta):
        return self.pld._epsilon(delta)
