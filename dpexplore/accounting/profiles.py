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

from .._numerics import bracket_search, gaussian_log_delta, gdp_epsilon_core, grow_bracket, step_up_until_ok, up
from .._numerics import half_square_up, rdp_of_zcdp_up
from .._validation import check_delta, check_nonneg, check_positive, scalar_out
from .._card import CardMixin

__all__ = ["PrivacyProfile", "FunctionProfile", "GaussianDPProfile"]

_BISECTION_STEPS = 64
_MAX_DOUBLINGS = 64


class PrivacyProfile(CardMixin):
    """Base class for privacy profiles δ(ε), ε ≥ 0 (Liu et al. 2022, Section 2, after Balle, Barthe & Gaboardi 2018).

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
    #: True where δ is the exact profile of a pair of distributions that bounds both directions
    #: (a symmetric mechanism's, a subsampled step's two directions together): its membership
    #: advantage is then δ(0) itself (:func:`dpexplore.accounting.risk.advantage`), with no search. Not
    #: for upper bounds such as a PLD's: there the searched envelope can be tighter than δ(0)
    #: (2e-5 relative for 1000 DP-SGD steps)
    pair_profile: bool = False

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
            lo, hi = grow_bracket(
                lambda e: ~(self._log_delta_checked(e) > tt), lo, np.ones_like(tt), fill=None, steps=_MAX_DOUBLINGS
            )
            hi = np.where(self._log_delta_checked(hi) > tt, np.inf, hi)
        finite = np.isfinite(hi) & np.isfinite(tt)

        def ok(e):  # both tests: log δ ≤ log target, and δ ≤ target after exp (no 1-ulp overshoot)
            ld = self._log_delta_checked(e)
            return (ld <= tt) & (np.exp(ld) <= dd)

        # to 4 ulps; the elements with no finite bracket (δ = 0, or no ε found) do not take part
        hi = bracket_search(ok, lo, hi, safe="hi", steps=_BISECTION_STEPS, ulps=4.0, active=finite)
        res = np.where(np.isneginf(tt), self.eps_max, hi)
        out[todo] = res
        return out.reshape(shape)

    def _constructor(self) -> str | None:
        """The call that builds this profile, or None where there is none (e.g. a function)."""
        return None

    # -- the notebook card (dpexplore._card) -------------------------------------------------
    def _card_describe(self, info) -> None:
        """The card of a profile: itself, the sums over its parts where it is a composition
        (``_parts``, set by :func:`dpexplore.accounting.composition.compose`), then what the class knows
        in closed form (:meth:`_card_notions`)."""
        info.profile = self
        parts = getattr(self, "_parts", None)
        if parts:
            info.add_parts(parts)
        self._card_notions(info)

    def _card_notions(self, info) -> None:
        """μ, ρ and Rényi DP this profile knows in closed form, on the card's description
        ``info`` (see :mod:`dpexplore._card`); none here."""

    def __repr__(self) -> str:
        """One line: the call that built the profile (``compose(...)``, a constructor) where
        there is one, else ``<Class name>``."""
        call = getattr(self, "_call", None) or self._constructor()
        return call if call else f"<{type(self).__name__} {self.name}>"


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

    >>> GaussianDPProfile(2.0).delta(0.0)   # total variation 2Φ(μ/2) − 1 = 0.68268949213708590, rounded up
    0.6826894921370864
    """

    def __init__(self, mu: float):
        mu_arr = check_positive(mu, "mu", allow_inf=False)
        if mu_arr.ndim != 0:
            raise ValueError(f"mu must be a scalar for a profile, got {mu!r}")
        self.mu = float(mu_arr)
        self.name = f"{self.mu:g}-GDP"

    def _constructor(self):
        return f"GaussianDPProfile(mu={self.mu!r})"

    def _log_delta(self, eps):
        return gaussian_log_delta(self.mu, eps)

    def _epsilon(self, delta):
        # the safeguarded Newton inverse behind conversions.gdp_epsilon (checked safe side),
        # ~50x faster than the generic bisection
        return gdp_epsilon_core(self.mu, np.asarray(delta, dtype=np.float64))

    def _card_notions(self, info) -> None:
        """Exactly μ-GDP, ρ = μ²/2 and ε̂(α) = α μ²/2 (Bun & Steinke 2016), where a composition's
        parts have not given them already."""
        # conversions.gdp_to_zcdp / zcdp_to_rdp without their validation (μ is checked here
        # already; conversions is built on this module)
        rho = float(half_square_up(self.mu))
        if info.mu is None:
            info.mu = (self.mu, "exact")
            info.rho = (rho, "exact: μ²/2")
        if info.rdp is None:
            info.rdp, info.rdp_how = (lambda a, r=rho: float(rdp_of_zcdp_up(r, a))), "exact: α μ²/2"


# -- (ε, δ)-DP: the exact partial order and its profiles (re-exported by dpexplore.accounting.conversions) --
def _implied_linear(eps0, delta0, eps):
    """δ₀ + (1 − δ₀)(e^{ε₀} − e^ε)₊/(1 + e^{ε₀}) in linear space, rounded up by 4 ulps."""
    eps0, delta0, eps = np.broadcast_arrays(eps0, delta0, eps)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # (e^{ε₀} − e^ε)/(1 + e^{ε₀}) = (1 − e^{ε−ε₀})/(1 + e^{−ε₀})
        r = -np.expm1(np.minimum(eps - eps0, 0.0)) / (1.0 + np.exp(-eps0))
        r = np.where(eps < eps0, r, 0.0)
        r = np.where(np.isinf(eps0) & (eps < eps0), 1.0, r)
        out = delta0 + (1.0 - delta0) * r
    # δ₀ itself (ε ≥ ε₀) is exact: rounding it up would put δ(ε) above δ₀ for every ε
    return np.clip(np.where(eps < eps0, up(out), out), 0.0, 1.0)


def _implied_log_delta(eps0, delta0, eps):
    """log of :func:`implied_delta` (no validation; broadcast), nudged up so that exp() of it is
    never below the linear value (relative 4 ulps of |log δ| plus 4e-16)."""
    lin = _implied_linear(eps0, delta0, eps)
    with np.errstate(divide="ignore"):
        out = np.log(lin)
    out = np.where(np.isfinite(out), out + 4.0 * np.spacing(np.abs(out)) + 4e-16, out)
    return np.minimum(out, 0.0)


def implied_delta(eps0, delta0, eps):
    """The smallest δ such that (ε₀, δ₀)-DP implies (ε, δ)-DP:
    δ = δ₀ + (1 − δ₀)(e^{ε₀} − e^ε)₊/(1 + e^{ε₀}) (Liu et al. 2022, Theorem 2.1, exact partial order).

    >>> round(implied_delta(1.0, 0.0, 0.0), 12)    # randomized response: tanh(1/2)
    0.46211715726
    >>> implied_delta(1.0, 1e-5, 2.0) >= 1e-5
    True
    """
    e0 = check_nonneg(eps0, "eps0")
    d0 = check_delta(delta0, "delta0")
    e = check_nonneg(eps, "eps")
    return scalar_out(_implied_linear(e0, d0, e))


class ApproxDPProfile(PrivacyProfile):
    """The privacy profile implied by (ε₀, δ₀)-DP alone (Liu et al. 2022, Theorem 2.1):
    δ(ε) = δ₀ + (1 − δ₀)(e^{ε₀} − e^ε)₊/(1 + e^{ε₀}); it is δ₀ for ε ≥ ε₀ (so ``eps_max`` = ε₀
    only when δ₀ = 0). ``epsilon`` has the closed form ε(δ) = ε₀ + log(1 − (δ − δ₀)(1 + e^{−ε₀})
    /(1 − δ₀)) for δ₀ ≤ δ < δ(0) (inf for δ < δ₀), rounded up by 4 ulps.

    >>> p = ApproxDPProfile(1.0, 1e-6)
    >>> round(p.delta(0.5), 9), round(p.delta(3.0), 15)
    (0.287649849, 1e-06)
    >>> p.epsilon(1e-7)
    inf
    """

    def __init__(self, eps0, delta0=0.0):
        e0 = check_nonneg(eps0, "eps0", allow_inf=False)
        d0 = check_delta(delta0, "delta0")
        if e0.ndim or d0.ndim:
            raise ValueError(f"eps0 and delta0 must be scalars for a profile, got {eps0!r}, {delta0!r}")
        self.eps0 = float(e0)
        self.delta0 = float(d0)
        self.eps_max = self.eps0 if self.delta0 == 0.0 else np.inf
        self.name = f"({self.eps0:g}, {self.delta0:g})-DP"

    def _constructor(self):
        return f"ApproxDPProfile(eps0={self.eps0!r}, delta0={self.delta0!r})"

    def _log_delta(self, eps):
        return _implied_log_delta(self.eps0, self.delta0, eps)

    def delta(self, eps):
        """δ(ε) from the linear closed form (rounded up by 4 ulps; exactly δ₀ for ε ≥ ε₀, which
        exp(log δ) would not give), so that ``delta(epsilon(d)) <= d`` holds as computed."""
        e = check_nonneg(eps, "eps")
        return scalar_out(_implied_linear(self.eps0, self.delta0, e))

    def _epsilon(self, delta):
        d = np.asarray(delta, dtype=np.float64)
        e0, d0 = self.eps0, self.delta0
        with np.errstate(divide="ignore", invalid="ignore"):
            x = -(d - d0) * (1.0 + np.exp(-e0)) / (1.0 - d0)
            out = e0 + np.log1p(np.maximum(x, -1.0))
        out = np.maximum(up(out), 0.0)
        out = np.where(d >= d0, np.minimum(out, e0), np.inf)
        out = np.where((d0 == 0) & (d == 0), e0, out)
        # near δ(0) log1p loses more than 4 ulps: check the computed δ and step up (doubling
        # steps; δ(ε₀) = δ₀ ≤ d always holds)
        return step_up_until_ok(out, lambda v: np.isfinite(v) & (v < e0) & (_implied_linear(e0, d0, v) > d), e0)

    def _card_notions(self, info) -> None:
        """ε-DP (δ₀ = 0): exactly μ-GDP with the μ of ε-DP (Liu et al. 2022, result “all ε-DP
        algorithms are GDP”), ρ = ε·tanh(ε/2) and the tight RDP (Steinke 2024, Theorems 4 and 5),
        stated by the card's ``info.pure_dp`` (the conversions are built on this module); δ₀ > 0:
        none of them is defined."""
        if self.delta0 == 0.0:
            mu, rho, rdp = info.pure_dp(self.eps0)
            if info.mu is None:
                info.mu = (mu, "exact for ε-DP: conversions.pure_to_gdp")
            info.rho = (rho, "exact for ε-DP")
            info.rdp, info.rdp_how = rdp, "tight RDP of ε-DP"
        else:
            info.rho = "not defined"
            info.rho_why = "(ε, δ)-DP with δ > 0 implies no finite zCDP or RDP"
            info.rdp_why = info.rho_why
            info.rdp = "not defined"
            # δ(ε) ≥ δ₀ > 0 for every ε, while a μ-GDP profile falls to 0 as ε grows: no μ exists
            info.mu = "not defined"
            info.mu_why = "(ε, δ)-DP with δ > 0 keeps δ(ε) ≥ δ > 0 for every ε: no μ-GDP bound"


class PureDPProfile(ApproxDPProfile):
    """The ε-DP profile, that of randomized response: δ(ε') = (e^ε − e^{ε'})₊/(1 + e^ε)
    (Liu et al. 2022, Theorem 2.1 with δ₀ = 0; Kairouz, Oh & Viswanath 2015). ``eps_max`` = ε.

    >>> p = PureDPProfile(1.0)
    >>> round(p.delta(0.0), 12), p.delta(1.0)
    (0.46211715726, 0.0)
    """

    def __init__(self, eps):
        e = check_nonneg(eps, "eps", allow_inf=False)
        super().__init__(e, 0.0)
        self.eps = self.eps0
        self.name = f"{self.eps:g}-DP"

    def _constructor(self):
        return f"PureDPProfile(eps={self.eps!r})"


def _profile_of(obj):
    """The PrivacyProfile behind ``obj`` (itself, or its ``.profile``), else None."""
    if isinstance(obj, PrivacyProfile):
        return obj
    p = getattr(obj, "profile", None)  # array-parameter mechanisms raise a ValueError here
    return p if isinstance(p, PrivacyProfile) else None


def _log_delta_source(obj):
    """(vectorized log δ(ε), eps_max) from a PrivacyProfile, a mechanism with ``.profile``, or any
    object with ``.log_delta``."""
    p = _profile_of(obj)
    if p is None and callable(getattr(obj, "log_delta", None)):
        p = obj
    elif p is None:
        raise ValueError(
            f"profile must be a PrivacyProfile, have a .profile PrivacyProfile or a .log_delta method, got {obj!r}"
        )
    eps_max = float(getattr(p, "eps_max", np.inf))

    def f(e):
        e = np.asarray(e, dtype=np.float64)
        out = np.minimum(np.asarray(p.log_delta(e), dtype=np.float64), 0.0)
        return np.where(e >= eps_max, -np.inf, out)

    return f, eps_max
