"""Privacy profiles: δ(ε), the smallest δ for which a mechanism is (ε, δ)-DP, for every ε ≥ 0.

A privacy profile is the complete (ε, δ) description of a mechanism (Liu et al. 2022, Section 2; Balle,
Barthe & Gaboardi 2018). Everything in dpexplore that has one — mechanisms, conversions,
compositions — returns a :class:`PrivacyProfile`, so the dashboards can draw any of them on the
same axes and every number answers the same two queries::

    δ(ε)  = profile.delta(eps)       (and log δ(ε) = profile.log_delta(eps), exact where δ underflows)
    ε(δ)  = profile.epsilon(delta)   the smallest ε with δ(ε) ≤ delta, rounded up

Subclasses implement ``_log_delta`` on a validated float array and may override ``_epsilon``
with a closed form.
"""
from __future__ import annotations

import numpy as np

from ._numerics import gaussian_log_delta
from ._validation import as_array, check_delta, check_nonneg, check_positive, scalar_out

__all__ = ["PrivacyProfile", "FunctionProfile", "GaussianDPProfile"]

_BISECTION_STEPS = 64
_MAX_DOUBLINGS = 64


class PrivacyProfile:
    """Base class for privacy profiles δ(ε), ε ≥ 0 (Liu et al. 2022, Definition 2.2).

    Subclasses define ``_log_delta(eps)`` for a float array ``eps >= 0`` (``inf`` allowed) that
    returns log δ(ε) ≤ 0, non-increasing in ε, and may set ``eps_max`` — the smallest ε with
    δ(ε) = 0 (finite exactly for pure-DP mechanisms, e.g. Δ/b for Laplace).

    >>> p = GaussianDPProfile(1.0)
    >>> round(p.delta(1.0), 6)
    0.126937
    >>> p.epsilon(p.delta(1.0)) >= 1.0
    True
    """

    #: the smallest ε with δ(ε) = 0 (inf unless the mechanism is pure DP)
    eps_max: float = np.inf
    #: a short human-readable label, used in plot legends
    name: str = "profile"

    # -- to implement -------------------------------------------------------------------------
    def _log_delta(self, eps: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- public queries -----------------------------------------------------------------------
    def log_delta(self, eps):
        """log δ(ε); accurate where δ underflows a float (−inf where δ(ε) = 0)."""
        e = check_nonneg(eps, "eps")
        out = np.minimum(np.asarray(self._log_delta(e), dtype=np.float64), 0.0)
        out = np.where(e >= self.eps_max, -np.inf, out)
        return scalar_out(out)

    def delta(self, eps):
        """δ(ε) ∈ [0, 1]: the smallest δ such that the mechanism is (ε, δ)-DP."""
        return scalar_out(np.clip(np.exp(np.asarray(self.log_delta(eps))), 0.0, 1.0))

    def epsilon(self, delta):
        """The smallest ε ≥ 0 with δ(ε) ≤ ``delta``, rounded up (safe side).

        δ = 0 gives ``eps_max`` (inf for mechanisms that are not pure DP). Solved by a vectorized
        bracketing bisection on log δ: the returned ε is the upper end of a
        bracket of relative width ≤ 2⁻⁶⁰ on which the computed δ(ε) ≤ ``delta`` holds.
        """
        d = check_delta(delta, "delta")
        return scalar_out(self._epsilon(d))

    def curve(self, eps=None, *, n: int = 200, eps_range=None):
        """Arrays ``(eps, delta)`` to plot: on ``eps`` if given, else ``n`` points on ``eps_range``
        (default [0, ε(1e-12)] capped at 50). Returns numpy arrays, nothing is drawn."""
        if eps is None:
            if eps_range is None:
                hi = float(self._epsilon(np.asarray(1e-12)))
                hi = min(hi if np.isfinite(hi) else self.eps_max, 50.0)
                eps_range = (0.0, max(hi, 1e-3))
            eps = np.linspace(eps_range[0], eps_range[1], n)
        e = check_nonneg(eps, "eps")
        return e, np.asarray(self.delta(e), dtype=np.float64)

    # -- numerics -----------------------------------------------------------------------------
    def _log_delta_checked(self, e: np.ndarray) -> np.ndarray:
        out = np.minimum(np.asarray(self._log_delta(e), dtype=np.float64), 0.0)
        return np.where(e >= self.eps_max, -np.inf, out)

    def _epsilon(self, delta: np.ndarray) -> np.ndarray:
        delta = np.asarray(delta, dtype=np.float64)
        with np.errstate(divide="ignore"):
            target = np.log(delta)
        shape = delta.shape
        t = target.ravel()
        out = np.zeros_like(t)
        at_zero = self._log_delta_checked(np.zeros(1))[0]
        todo = t < at_zero
        if not todo.any():
            return out.reshape(shape)
        tt = t[todo]
        dd = delta.ravel()[todo]
        lo = np.zeros_like(tt)
        if np.isfinite(self.eps_max):
            hi = np.full_like(tt, self.eps_max)
        else:
            hi = np.ones_like(tt)
            for _ in range(_MAX_DOUBLINGS):
                above = self._log_delta_checked(hi) > tt
                if not above.any():
                    break
                lo = np.where(above, hi, lo)
                hi = np.where(above, hi * 2.0, hi)
            hi = np.where(self._log_delta_checked(hi) > tt, np.inf, hi)
        finite = np.isfinite(hi) & np.isfinite(tt)
        for _ in range(_BISECTION_STEPS):
            mid = 0.5 * (lo + hi)
            ld = self._log_delta_checked(np.where(finite, mid, 0.0))
            # both tests: log δ ≤ log target, and δ ≤ target after exp (no 1-ulp overshoot)
            ok = np.where(finite, (ld <= tt) & (np.exp(ld) <= dd), False)
            hi = np.where(finite & ok, mid, hi)
            lo = np.where(finite & ~ok, mid, lo)
            if np.all((hi - lo) <= 4 * np.spacing(hi)):
                break
        res = np.where(np.isneginf(tt), self.eps_max, hi)
        out[todo] = res
        return out.reshape(shape)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class FunctionProfile(PrivacyProfile):
    """A profile given by a vectorized function ``log_delta(eps)`` (e.g. one a user measured).

    >>> p = FunctionProfile(lambda e: np.log(np.clip(1 - e / 2, 0, 1)), eps_max=2.0, name="toy")
    >>> p.delta(1.0)
    0.5
    """

    def __init__(self, log_delta, *, eps_max: float = np.inf, name: str = "profile"):
        self._fn = log_delta
        self.eps_max = float(eps_max)
        self.name = name

    def _log_delta(self, eps):
        return self._fn(eps)


class GaussianDPProfile(PrivacyProfile):
    """The μ-GDP profile δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Liu et al. 2022, Theorem 3.1;
    Dong, Roth & Su 2022, Corollary 2.13). It is the Gaussian mechanism's profile with μ = Δ/σ.

    >>> GaussianDPProfile(2.0).delta(0.0)   # total variation: 2Φ(μ/2) − 1
    0.6826894921370859
    """

    def __init__(self, mu: float):
        mu_arr = check_positive(mu, "mu", allow_inf=False)
        if mu_arr.ndim != 0:
            raise ValueError(f"mu must be a scalar for a profile, got {mu!r}")
        self.mu = float(mu_arr)
        self.name = f"{self.mu:g}-GDP"

    def _log_delta(self, eps):
        return gaussian_log_delta(self.mu, eps)

    def _epsilon(self, delta):
        # the safeguarded Newton inverse of conversions.gdp_epsilon (checked safe side),
        # ~50x faster than the generic bisection; imported here to avoid an import cycle
        from .conversions import gdp_epsilon

        return np.asarray(gdp_epsilon(self.mu, delta), dtype=np.float64)
