"""Shared parts of the mechanisms: parameter checks, the pure-DP closed forms, the profile
wrapper :class:`MechanismProfile`, the hooks through which composition and the notebook card see
every mechanism (:class:`_PrivacyMechanism`) and the base class of the plain mechanisms.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..accounting import conversions
from .._numerics import down, epsilon_by_bisection, log1mexp, pure_rdp_exact, step_up_until_ok, within
from .._validation import check_delta, check_nonneg, check_positive, check_probability, scalar_out
from .._card import CardMixin
from ..accounting.profiles import PrivacyProfile


_BISECT_STEPS = 80  # bracketing bisection steps (relative width 2^-80 ≪ ulp)
_MAX_DOUBLINGS = 1100  # enough to reach 2^1100 > float max from 1
#: largest Subbotin shape accepted: checked against mpmath up to r = 6; at r = 200 the computed
#: δ(ε) was no longer monotone and at r = 1e4 δ(0) came out 0
_SHAPE_MAX = 20.0


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------
def _store(obj, name: str, arr: np.ndarray) -> None:
    """Store a validated parameter: a Python float if 0-d (hashable spec), else a read-only array."""
    if arr.ndim == 0:
        object.__setattr__(obj, name, float(arr))
    else:
        arr = np.array(arr, dtype=np.float64)
        arr.setflags(write=False)
        object.__setattr__(obj, name, arr)


def _check_sensitivity(x) -> np.ndarray:
    return check_positive(x, "sensitivity", allow_inf=False)


def _check_ratio(mech) -> None:
    """Parameters must broadcast together, and Δ/s must be a positive float: beyond 1.8e308
    every query would be inf − inf, and 0 divides the loss formulas by zero."""
    try:
        mech._param_shape()
    except ValueError as exc:
        raise ValueError(f"parameters must broadcast together, got {mech!r}") from exc
    with np.errstate(over="ignore"):
        d = np.asarray(mech.sensitivity, float) / np.asarray(mech.scale, float)
    if not (np.isfinite(d) & (d > 0)).all():  # inf: inf − inf; 0: the loss formulas divide by d
        raise ValueError(
            f"sensitivity/scale must be within the float range (> 0, finite), got "
            f"sensitivity={mech.sensitivity!r}, scale={mech.scale!r}"
        )


def _check_eps_param(x, name: str = "eps") -> np.ndarray:
    """A mechanism's own ε parameter: finite and >= 0."""
    return check_nonneg(x, name, allow_inf=False)


def _rng(rng):
    """A Generator from ``rng`` (a Generator, a seed, a SeedSequence or None); ValueError else."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (bool, float, str, bytes)):
        raise ValueError(f"rng must be a numpy Generator, an integer seed or None, got {rng!r}")
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"rng must be a numpy Generator, an integer seed or None, got {rng!r}") from exc


def _size(size):
    """A sample ``size``: None, an integer >= 0 or a tuple of them (ValueError otherwise)."""
    if size is None:
        return None
    dims = size if isinstance(size, tuple) else (size,)
    out = []
    for v in dims:
        if (
            isinstance(v, (bool, np.bool_, np.timedelta64))
            or not isinstance(v, (int, np.integer))
            or v < 0
            or v > 2**62
        ):
            raise ValueError(f"size must be None, an integer >= 0 or a tuple of them, got {size!r}")
        out.append(int(v))
    return tuple(out) if isinstance(size, tuple) else out[0]


def _pure_log_delta(eps0, eps):
    """log δ(ε) = log[(e^{ε0} − e^{ε})₊ / (1 + e^{ε0})] (tight ε0-DP profile; −inf for ε ≥ ε0)."""
    eps0, eps = np.broadcast_arrays(np.asarray(eps0, float), np.asarray(eps, float))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        diff = np.where(eps >= eps0, -np.inf, np.minimum(eps - eps0, 0.0))
        out = eps0 + log1mexp(diff) - np.logaddexp(0.0, eps0)
    return np.where(eps >= eps0, -np.inf, out)


def _pure_epsilon(eps0, delta):
    """Inverse of :func:`_pure_log_delta`: ε = ε0 + log(1 − δ(1 + e^{−ε0})), clipped at 0."""
    eps0, delta = np.broadcast_arrays(np.asarray(eps0, float), np.asarray(delta, float))
    with np.errstate(divide="ignore", invalid="ignore"):
        arg = -delta * (1.0 + np.exp(-eps0))
        val = eps0 + np.log1p(np.maximum(arg, -1.0))
    val = np.maximum(np.where(np.isfinite(val), val, 0.0), 0.0)
    # round up by a few ulp (the closed form's own rounding), never above ε0
    with np.errstate(over="ignore"):  # spacing(float max) = inf: capped at ε0 just below
        val = np.minimum(np.where(val > 0, val + 4 * np.spacing(val), 0.0), eps0)
    # near δ(0) log1p loses more than 4 ulp (eps0 = 6.13, δ = 0.9 gave δ(ε) = 0.9 + 4e-16):
    # check the computed δ and step up (doubling steps; δ(ε0) = 0 always holds)
    return step_up_until_ok(val, lambda v: ~_within(_pure_log_delta(eps0, v), delta) & (v < eps0), eps0)


def _pure_tradeoff(eps0, alpha):
    """Trade-off of ε0-DP: β(α) = max(0, 1 − e^{ε0} α, e^{−ε0}(1 − α)) (Liu et al. 2022; Wasserman–Zhou)."""
    with np.errstate(over="ignore", invalid="ignore"):
        a = 1.0 - np.exp(eps0) * alpha
        b = np.exp(-eps0) * (1.0 - alpha)
    beta = down(np.maximum(np.maximum(a, b), 0.0), "tradeoff")
    beta = np.where(alpha <= 0, 1.0, beta)
    return np.clip(beta, 0.0, 1.0)


def _pure_rdp(eps0, alpha):
    """Tight RDP of ε0-DP (Steinke 2024, Theorem 4), rounded up:
    ε̂(α) = ε0 − log[(1 + e^{−ε0}) / (1 + e^{−(2α−1)ε0})] / (α − 1); ε̂(∞) = ε0.
    The cancellation-free evaluation is :func:`dpexplore._numerics.pure_rdp_exact` (shared with
    ``conversions.pure_to_rdp``)."""
    val = pure_rdp_exact(eps0, alpha)
    # round up by 16 ulp (above the few-ulp rounding of either form), never above ε0
    with np.errstate(over="ignore"):  # spacing(float max) = inf: clipped to ε0 just below
        val = val + 16 * np.spacing(np.abs(val))
    return np.clip(val, 0.0, np.asarray(eps0, float))


_within = within  # (shared with dpexplore.mechanisms.discrete)


# ------------------------------------------------------------------------------------------------
# profile wrapper
# ------------------------------------------------------------------------------------------------
class MechanismProfile(PrivacyProfile):
    """The :class:`~dpexplore.accounting.profiles.PrivacyProfile` of a mechanism with scalar parameters:
    ``_log_delta`` and ``_epsilon`` call the mechanism, ``eps_max`` is the mechanism's.

    >>> from dpexplore.mechanisms import Laplace
    >>> p = Laplace(1.0).profile
    >>> p.eps_max, p.delta(0.5) == Laplace(1.0).delta(0.5), p.epsilon(0.0)
    (1.0, True, 1.0)
    """

    #: a mechanism's δ is that of its worst-case pair of output distributions
    pair_profile = True

    def __init__(self, mechanism):
        self.mechanism = mechanism
        self.eps_max = float(mechanism.eps_max)
        self.name = mechanism._label()

    def _constructor(self):
        return f"{self.mechanism!r}.profile"

    def _log_delta(self, eps):
        return self.mechanism._log_delta(np.asarray(eps, dtype=float))

    def _epsilon(self, delta):
        return self.mechanism._epsilon(np.asarray(delta, dtype=float))

    def _card_notions(self, info) -> None:
        self.mechanism._card_notions(info)


class _PrivacyMechanism(CardMixin):
    """What :func:`dpexplore.accounting.composition.compose` and the notebook card (:mod:`dpexplore.display`)
    ask of every mechanism, plain or subsampled, with the defaults; a class overrides what it knows
    better, so a new mechanism is one class (its composition, its privacy loss, its card's facts)
    and neither module names it. Nothing here imports them: composition hands a mechanism the
    numerical compositions to choose from (``how``), the card hands it the description to fill
    (``info``)."""

    # composition -----------------------------------------------------------------------------
    def _gdp_mu(self) -> float | None:
        """μ where the mechanism is exactly μ-GDP (its trade-off function is G_μ): k runs are then
        exactly √k·μ-GDP and a mix of such mechanisms √(Σ k_i μ_i²)-GDP (Dong, Roth & Su 2022,
        Corollary 3.3). None (the default): no such closed form."""
        return None

    def _pure_eps(self) -> float | None:
        """ε where the mechanism's profile is that of ε-DP randomized response, the worst case of
        every ε-DP mechanism: k runs then have the profile of k-fold ε-DP (Kairouz, Oh & Viswanath
        2015, Theorem 3.3; :class:`~dpexplore.accounting.composition.OptimalProfile`). None (the default):
        no such closed form."""
        return None

    def _pld_losses(self) -> tuple:
        """The mechanism's privacy loss, as loss models of :mod:`dpexplore.accounting.pld`: one per direction
        of the neighbouring relation (remove, add), one alone where both are the same. Default:
        the mechanism itself (an additive mechanism's ``loss_inverse``, or ``_loss_tails``)."""
        return (self,)

    def _compose_pld(self, k: int, how):
        """The profile of k runs where :meth:`_gdp_mu` and :meth:`_pure_eps` give no closed form:
        one of the numerical compositions ``how`` offers (:func:`dpexplore.accounting.composition.compose`
        passes them). Default: the privacy loss distribution of :meth:`_pld_losses` composed
        (``how.pld``: pessimistic, never below the true δ)."""
        return how.pld([(self, k)])

    # the notebook card -------------------------------------------------------------------------
    def _card_closed_forms(self) -> dict | None:
        """μ (``"mu"``) and ρ (``"rho"``) for the card, each (value, how it is known), where the
        class knows them in closed form. Default: from :meth:`_gdp_mu` where it states one
        (μ-GDP is ρ = μ²/2-zCDP: Bun & Steinke 2016), else None (ρ from its pure ε, if finite)."""
        mu = self._gdp_mu()
        if mu is None:
            return None
        return {"mu": (mu, "exact: μ-GDP"), "rho": (conversions.gdp_to_zcdp(mu), "exact: μ²/2")}

    def _card_notions(self, info) -> None:
        """ρ, RDP and μ of the mechanism (scalar parameters) on the card's description ``info``:
        :meth:`_card_closed_forms`, else ρ = ε·tanh(ε/2) from its largest pure ε where that is
        finite (Steinke 2024, Theorem 5: an upper bound), and its own ``rdp``."""
        forms = self._card_closed_forms()
        if forms is not None:
            info.mu = forms.get("mu", info.mu)
            info.rho = forms.get("rho", info.rho)
        elif np.isfinite(float(getattr(self, "eps_max", np.inf))):
            info.rho = (float(conversions.pure_to_zcdp(float(self.eps_max))), "upper bound, from pure ε")
        if callable(getattr(self, "rdp", None)):
            info.rdp = self.rdp
            info.rdp_how = "the mechanism's rdp()"

    def _card_describe(self, info) -> None:
        """The card of a mechanism: its profile and :meth:`_card_notions`; none with array
        parameters (one card per setting: :func:`dpexplore.display.compare`)."""
        info.kind = "mechanism"
        if not all(np.ndim(getattr(self, n)) == 0 for n, _ in info.params):
            info.no_profile = "array parameters: one card per setting (use compare())"
            return
        info.profile = self.profile
        self._card_notions(info)


class _GaussianParameters:
    """The parameter σ of Gaussian noise, continuous or discrete, as its ``scale``; the privacy
    loss Δ(Δ − 2y)/(2σ²) is unbounded, so ``eps_max`` is inf."""

    @property
    def scale(self):
        """The noise parameter σ (of the discrete Gaussian not its standard deviation: see
        ``variance``)."""
        return self.sigma

    @property
    def eps_max(self):
        """inf: the privacy loss Δ(Δ − 2y)/(2σ²) is unbounded."""
        return np.inf


class _Mechanism(_PrivacyMechanism):
    """Shared public queries (validation, scalar_out) for every mechanism."""

    def _label(self) -> str:  # pragma: no cover - overridden
        return type(self).__name__

    def _card_settings(self, name: str, limit: int) -> list:
        """One mechanism per element of the broadcast parameters, in C order (at most ``limit``:
        ``ValueError`` naming the argument ``name`` otherwise); itself with scalar parameters."""
        if not dataclasses.is_dataclass(self):
            return [self]
        fields = [f.name for f in dataclasses.fields(self) if f.init]
        values = [np.asarray(getattr(self, n)) for n in fields]
        if all(v.ndim == 0 for v in values):
            return [self]
        grid = np.broadcast_arrays(*values)
        if grid[0].size > limit:
            raise ValueError(
                f"{name} has {grid[0].size} parameter settings; compare() makes one row "
                f"per setting, at most {limit}, got {self!r}"
            )
        return [type(self)(**{n: v.flat[j].item() for n, v in zip(fields, grid)}) for j in range(grid[0].size)]

    def _scalar_params(self) -> bool:
        return all(np.ndim(v) == 0 for v in self.__dict__.values())

    # δ(ε) -----------------------------------------------------------------------------------
    def log_delta(self, eps):
        """log δ(ε): exact in log space where δ underflows a float; −inf where δ(ε) = 0
        (Vinterbo 2022 Lemma 1 / the closed forms cited on each class).

        >>> from dpexplore.mechanisms import Laplace, Gaussian
        >>> round(Gaussian(1.0).log_delta(153.0))      # δ ≈ 1e-4923, far below float range
        -11639
        >>> Laplace(1.0).log_delta(1.0)
        -inf
        """
        e = check_nonneg(eps, "eps")
        out = np.minimum(np.asarray(self._log_delta(e), dtype=float), 0.0)
        out = np.where(e >= self.eps_max, -np.inf, out)
        return scalar_out(out)

    def delta(self, eps):
        """δ(ε) ∈ [0, 1], the smallest δ for which the mechanism is (ε, δ)-DP (Liu et al. 2022, Section 2).

        >>> from dpexplore.mechanisms import Laplace
        >>> Laplace(1.0).delta([0.0, 1.0])
        array([0.39346934, 0.        ])
        """
        return scalar_out(np.clip(np.exp(np.asarray(self.log_delta(eps))), 0.0, 1.0))

    def epsilon(self, delta):
        """The smallest ε ≥ 0 with δ(ε) ≤ ``delta``; ε(0) = ``eps_max``. Closed forms where the
        class gives one, else a vectorized bracketing bisection that ends on the safe side (the
        returned ε has computed δ(ε) ≤ delta, and is at most ~2 ulp above the exact root).

        >>> from dpexplore.mechanisms import Gaussian
        >>> m = Gaussian(1.0)
        >>> e = m.epsilon(1e-5); round(e, 6), m.delta(e) <= 1e-5
        (4.377178, True)
        >>> m.epsilon(0.0)
        inf
        """
        d = check_delta(delta, "delta")
        return scalar_out(self._epsilon(d))

    @property
    def profile(self) -> MechanismProfile:
        """The mechanism's privacy profile (Liu et al. 2022 Section 2), a :class:`PrivacyProfile` whose δ is
        the mechanism's and whose ``eps_max`` is set (needs scalar parameters).

        >>> from dpexplore.mechanisms import Logistic
        >>> Logistic(2.0).profile.epsilon(0.0)
        0.5
        """
        if not self._scalar_params():
            raise ValueError(f"profile needs scalar parameters, got {self!r}")
        return MechanismProfile(self)

    def tradeoff(self, alpha):
        """The f-DP trade-off β(α): the type II error of the most powerful level-α test of
        M(x) against M(x') (Liu et al. 2022; Dong, Roth & Su 2022). Additive noise: the Neyman–Pearson
        threshold test on the monotone likelihood ratio, β(α) = F(F⁻¹(1 − α) − Δ); pure DP:
        max(0, 1 − e^ε α, e^{−ε}(1 − α)). Rounded down by a relative 8·2⁻⁵² (the safe side:
        smaller β, less claimed privacy), which covers the few-ulp rounding of the formulas.

        >>> from dpexplore.mechanisms import Gaussian
        >>> round(Gaussian(1.0).tradeoff(0.05), 6)     # G_1(0.05) = Φ(Φ⁻¹(0.95) − 1)
        0.740489
        """
        a = check_probability(alpha, "alpha")
        return scalar_out(np.clip(self._tradeoff(a), 0.0, 1.0))

    # generic ε(δ) by bisection ------------------------------------------------------------------
    def _log_delta_capped(self, e):
        out = np.minimum(np.asarray(self._log_delta(e), dtype=float), 0.0)
        return np.where(e >= self.eps_max, -np.inf, out)

    def _epsilon(self, delta):
        delta = np.asarray(delta, dtype=float)
        eps_max = np.asarray(self.eps_max, dtype=float)
        shape = np.broadcast_shapes(delta.shape, eps_max.shape, self._param_shape())
        return epsilon_by_bisection(self._log_delta_capped, delta, eps_max, shape)

    def _param_shape(self):
        return np.broadcast_shapes(*[np.shape(v) for v in self.__dict__.values()])


def _validate_calibration(eps, delta, sensitivity):
    e = check_nonneg(eps, "eps", allow_inf=False)
    d = check_delta(delta, "delta")
    s = _check_sensitivity(sensitivity)
    return e, d, s
