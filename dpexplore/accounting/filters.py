"""Composition settings, privacy filters and a Rényi odometer (Desfontaines 2023).

Desfontaines (2023), "Open problem(s) – How generic can composition results be?", distinguishes
*sequential* composition (mechanisms and budgets fixed in advance), *adaptive* (mechanisms see
earlier outputs, budgets fixed), *fully adaptive* (budgets too are chosen from earlier outputs:
privacy *filters* refuse queries once a fixed total budget would be exceeded, privacy *odometers*
track the loss of an unbounded interaction) and *concurrent* composition (several interactive
mechanisms, interleaved). :data:`COMPOSITION_TABLE` transcribes Desfontaines 2023's table of which optimal
composition results are known, each cell pointing at the dpexplore object that implements it or
marked "open".

Filters are small immutable value objects with pure methods over arrays of spent budgets:

* ``f.accepts(spent, next)`` — would the filter answer a query costing ``next`` after ``spent``?
* ``f.run(requests, mode="halt" | "skip")`` — the accepted mask for a sequence of requests;
* ``f.consumed(spent)`` — the quantity the filter compares with its budget (for plots);
* ``f.budget`` — that budget.

* :class:`PureDPFilter` — answers while Σ ε_i ≤ ε (Rogers et al. 2016; basic composition);
* :class:`GDPFilter` — while Σ μ_i² ≤ μ² (Smith & Thakurta 2022);
* :class:`RenyiFilter` — while Σ ε_i(α) ≤ B_α at each chosen order α (Feldman & Zrnic 2021, result “Rényi filter”);
* :class:`ZCDPFilter` — while Σ ρ_i ≤ ρ (Feldman & Zrnic 2021, at all orders at once);
* :class:`ApproxZCDPFilter` — while Σ ρ_i ≤ ρ and Σ δ_i ≤ δ (Whitehouse et al. 2023);
* :class:`ApproxDPFilter` — while sqrt(2 log(1/δ') Σ ε_i²) + ½ Σ ε_i² ≤ ε and Σ δ_i ≤ δ''
  (Whitehouse et al. 2023).

``mode="halt"`` is the filter as defined by Rogers et al. (2016): the interaction stops at the first
refusal. ``mode="skip"`` refuses the query and goes on; a refusal is then a query run with budget 0,
a choice made from the past alone (predictable), and every condition above is a bound on a pathwise
sum of such predictable budgets, which is what the cited theorems assume — so both modes are valid.

:class:`RenyiOdometer` bounds the privacy loss of an unbounded interaction at all times at once;
:func:`simulate_adaptive_analyst` runs a seeded analyst that picks each next budget from noisy
answers; :class:`Session` models Desfontaines 2023's sessions with parallel composition over disjoint
partitions. Budgets are summed in exact rational arithmetic (a budget is never exceeded by a
rounding). A lab step is cheap: ``run`` over 1000 queries takes ~5 ms (pure) to ~30 ms (the (ε, δ)
filter), and :func:`simulate_adaptive_analyst` over 200 queries ~5–12 ms per filter.

>>> f = PureDPFilter(1.0)
>>> f.run([0.3, 0.3, 0.3, 0.3, 0.05]).tolist()
[True, True, True, False, False]
>>> f.run([0.3, 0.3, 0.3, 0.3, 0.05], mode="skip").tolist()
[True, True, True, False, True]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction

import numpy as np

from . import conversions, profiles
from .._card import CardMixin
from .._numerics import Margin, down, up
from .._validation import (
    as_array,
    check_alpha,
    check_delta,
    check_nonneg,
    check_positive,
    check_positive_scalar,
    check_rng,
)

# Desfontaines 2023's table of composition results, in its own module; its names stay importable here
from .composition_settings import COMPOSITION_TABLE, NOTIONS, SETTINGS, TABLE_REFERENCES, TableCell

__all__ = [
    "PureDPFilter",
    "GDPFilter",
    "RenyiFilter",
    "ZCDPFilter",
    "ApproxZCDPFilter",
    "ApproxDPFilter",
    "RenyiOdometer",
    "filters_for_target",
    "simulate_adaptive_analyst",
    "AnalystRun",
    "Session",
    "parallel_composition",
    "COMPOSITION_TABLE",
    "TABLE_REFERENCES",
    "TableCell",
    "SETTINGS",
    "NOTIONS",
]

# float slack in the SAFE direction (sums are rounded up): dpexplore._numerics.MARGINS["filter"]


def _mode(mode: str) -> str:
    if mode not in ("halt", "skip"):
        raise ValueError(f"mode must be 'halt' or 'skip', got {mode!r}")
    return mode


def _exact_sum(values) -> Fraction:
    """The exact (rational) sum of floats: no rounding, so a budget is never exceeded by an ulp."""
    return sum((Fraction(float(v)) for v in np.ravel(values)), Fraction(0))


_MAX_REQUESTS = 100000  # exact arithmetic costs ~5 µs a query: bound what one call may cost


def _costs_1d(requests, name: str) -> np.ndarray:
    arr = check_nonneg(requests, name, allow_inf=False)
    if arr.ndim > 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size > _MAX_REQUESTS:
        raise ValueError(f"{name} must hold at most {_MAX_REQUESTS} queries, got {arr.size}")
    return np.atleast_1d(arr)


# -- filters --------------------------------------------------------------------------------------
class _Guarantee(CardMixin):
    """The notebook card of a filter or a session: the guarantee of every interaction it lets
    through, the profile it states (``_card_profile``: the profile, and what it says of ρ and
    RDP), or none (``_card_profile`` None: ``_no_profile`` says why)."""

    _card_cacheable = False  # its state changes as it is used (and its card is cheap)
    _no_profile = ""

    def _card_profile(self):  # pragma: no cover - overridden
        return None

    def _card_describe(self, info) -> None:
        info.kind = "filter"
        info.note = "the guarantee of every interaction the filter lets through (its budget)"
        stated = self._card_profile()
        if stated is None:
            info.no_profile = self._no_profile
            return
        profile, notes = stated
        profile._card_describe(info)
        for key, value in notes.items():
            setattr(info, key, value)


class _Filter(_Guarantee):
    """Shared logic: a filter keeps an exact running state of the answered queries' costs
    (``_zero``, ``_add``) and a test (``_fits``); ``accepts`` and ``run`` fold over it, so a run of k
    queries costs O(k) exact additions."""

    #: the noise the adaptive analyst (:func:`simulate_adaptive_analyst`) adds under this filter
    _noise = "gaussian"

    def _costs(self, x, name):  # -> (k, width) float array
        raise NotImplementedError

    def accepts(self, spent, next) -> bool:
        """Would the filter answer ``next`` (one or more queries) after the answered ``spent``?"""
        state = self._zero()
        for row in self._costs(spent, "spent"):
            state = self._add(state, row)
        for row in self._costs(next, "next"):
            state = self._add(state, row)
        return bool(self._fits(state))

    def run(self, requests, mode: str = "halt") -> np.ndarray:
        """The accepted mask for ``requests`` in order: "halt" stops at the first refusal, "skip"
        refuses and goes on (see the module docstring)."""
        rows = self._costs(requests, "requests")
        _mode(mode)
        out = np.zeros(len(rows), bool)
        state = self._zero()
        for i, row in enumerate(rows):
            cand = self._add(state, row)
            if self._fits(cand):
                state = cand
                out[i] = True
            elif mode == "halt":
                break
        return out


class _SumFilter(_Filter):
    """A filter on one scalar cost per query: answer while the exact sum Σ c_i ≤ ``budget``
    (:class:`PureDPFilter`'s ε, :class:`ZCDPFilter`'s ρ)."""

    def consumed(self, spent) -> float:
        return float(math.fsum(_costs_1d(spent, "spent")))

    def _costs(self, x, name):
        return _costs_1d(x, name)

    def _zero(self):
        return Fraction(0)

    def _add(self, state, c):
        return state + Fraction(float(c))

    def _fits(self, state):
        return state <= Fraction(self.budget)


@dataclass(frozen=True)
class PureDPFilter(_SumFilter):
    """Pure ε-DP filter: answer while Σ ε_i ≤ ε. Basic composition holds in the fully adaptive
    setting (Rogers, Roth, Ullman & Vadhan 2016, the pure-DP case of their filters), so the whole
    interaction is ε-DP.

    >>> PureDPFilter(1.0).accepts([0.5, 0.25], 0.25), PureDPFilter(1.0).accepts([0.5, 0.25], 0.3)
    (True, False)
    """

    #: the noise the adaptive analyst (:func:`simulate_adaptive_analyst`) adds under this filter
    _noise = "laplace"

    eps: float

    def __post_init__(self):
        object.__setattr__(self, "eps", check_positive_scalar(self.eps, "eps"))

    def _card_profile(self):
        """Its notebook card (:mod:`dpexplore.display`) shows the guarantee of every interaction it
        lets through: budget-ε-DP.

        >>> PureDPFilter(1.0)._card_profile()[0].eps0
        1.0
        """
        return profiles.PureDPProfile(self.budget), {}

    @property
    def budget(self) -> float:
        return self.eps

    def _query_cost(self, std: float):
        """The cost of a sensitivity-1 query with noise std ``std``: Laplace (scale std/√2), ε = √2/std."""
        return math.sqrt(2.0) / std

    def _consumed_of(self, state) -> float:
        return float(state)


@dataclass(frozen=True)
class GDPFilter(_Filter):
    """μ-GDP filter: answer while Σ μ_i² ≤ μ² (Smith & Thakurta 2022: Gaussian DP composes in the
    fully adaptive setting with the same parameters as non-adaptive composition, μ = sqrt(Σ μ_i²);
    Dong, Roth & Su 2022, Corollary 3.3 for the latter). ``consumed`` returns sqrt(Σ μ_i²).

    >>> GDPFilter(1.0).run([0.6, 0.6, 0.6, 0.5]).tolist()
    [True, True, False, False]
    """

    mu: float

    def __post_init__(self):
        object.__setattr__(self, "mu", check_positive_scalar(self.mu, "mu"))

    def _card_profile(self):
        """Its card (:mod:`dpexplore.display`) shows the guarantee it lets through: μ-GDP."""
        return profiles.GaussianDPProfile(self.mu), {}

    @property
    def budget(self) -> float:
        return self.mu

    def consumed(self, spent) -> float:
        s = _costs_1d(spent, "spent")
        return float(math.sqrt(math.fsum(s * s)))

    def _costs(self, x, name):
        return _costs_1d(x, name)

    def _zero(self):
        return Fraction(0)

    def _add(self, state, c):
        return state + Fraction(float(c)) ** 2

    def _fits(self, state):
        return state <= Fraction(self.mu) ** 2

    def _query_cost(self, std: float):
        """Gaussian noise (σ = std): μ = 1/σ."""
        return 1.0 / std

    def _consumed_of(self, state) -> float:
        return math.sqrt(float(state))


@dataclass(frozen=True)
class RenyiFilter(_Filter):
    """Rényi filter at the orders ``alphas`` with budgets ``budgets`` (Feldman & Zrnic 2021,
    result “Rényi filter”): a query with RDP curve ε_i(·) is answered while Σ_i ε_i(α) ≤ B_α at EVERY listed
    order; then the interaction is (α, B_α)-RDP for each listed α. (Answering when the sum fits at
    SOME order would not be valid: the theorem needs the pathwise bound at a fixed order.)
    Requests are arrays of shape (k, len(alphas)): the RDP of each query at each order.

    >>> f = RenyiFilter([2.0, 8.0], [1.0, 2.0])
    >>> f.run([[0.3, 0.6], [0.3, 0.6], [0.3, 0.6], [0.1, 0.1]]).tolist()
    [True, True, True, True]
    >>> f.run([[0.3, 0.6], [0.3, 0.6], [0.3, 0.6], [0.3, 0.6]]).tolist()
    [True, True, True, False]
    """

    alphas: tuple
    budgets: tuple

    def __post_init__(self):
        a = np.atleast_1d(check_alpha(self.alphas, "alphas"))
        b = np.atleast_1d(check_positive(self.budgets, "budgets"))
        if a.ndim != 1 or a.shape != b.shape:
            raise ValueError(f"alphas and budgets must be one-dimensional of equal length, got {a.shape}, {b.shape}")
        if np.isinf(a).any():
            raise ValueError(f"alphas must be finite, got {a.tolist()}")
        object.__setattr__(self, "alphas", tuple(float(v) for v in a))
        object.__setattr__(self, "budgets", tuple(float(v) for v in b))

    @classmethod
    def from_target(cls, eps, delta, alpha) -> "RenyiFilter":
        """The single-order filter whose budget B implies (ε, δ)-DP by the conversion of Balle et al.
        (2020), Theorem 21 (Canonne, Kamath & Steinke 2020):
        ε = B + log(1 − 1/α) − (log δ + log α)/(α − 1), solved for B (rounded down).

        >>> round(RenyiFilter.from_target(1.0, 1e-6, 16.0).budgets[0], 6)
        0.328344
        """
        e = check_positive_scalar(eps, "eps")
        d = float(check_delta(delta))
        if d <= 0:
            raise ValueError(f"delta must be > 0 for a Renyi filter to imply (eps, delta)-DP, got {delta!r}")
        a = float(check_alpha(alpha))
        if math.isinf(a):
            raise ValueError(f"alpha must be finite, got {alpha!r}")
        b = e - math.log1p(-1.0 / a) + (math.log(d) + math.log(a)) / (a - 1.0)
        if b <= 0:
            raise ValueError(
                f"eps={eps!r} is too small for delta={delta!r} at alpha={alpha!r}: the RDP budget "
                f"would be {b:.4g} <= 0; pick another order"
            )
        return cls((a,), (float(down(b, "filter_budget")),))

    @classmethod
    def best_order(cls, eps, delta, orders) -> float:
        """The order α of ``orders`` whose single-order filter for (ε, δ) (:meth:`from_target`)
        answers the most Gaussian queries: a query with noise σ costs ε(α) = α/(2σ²) (Mironov 2017,
        Gaussian mechanism), so at any σ the filter answers ⌊B_α · 2σ²/α⌋ of them, and the best
        order maximises B_α/α — the ρ of the zCDP filter it amounts to (Feldman & Zrnic 2021,
        result “Rényi filter”; B_α from the conversion of Balle et al. 2020, Theorem 21). It depends
        on (ε, δ) only, so it is chosen before the first query, as the theorem requires. Orders
        where B_α ≤ 0 are skipped; ties go to the first listed.

        ValueError if no order gives B_α > 0, or (naming it) for a bad ``eps``, ``delta`` or ``orders``.

        >>> RenyiFilter.best_order(1.0, 1e-6, [4.0, 16.0, 24.0, 32.0, 64.0])
        24.0
        """
        e = check_positive_scalar(eps, "eps")
        d = float(check_delta(delta))
        if d <= 0:
            raise ValueError(f"delta must be > 0 for a Renyi filter to imply (eps, delta)-DP, got {delta!r}")
        a = np.atleast_1d(check_alpha(orders, "orders"))
        if a.ndim != 1 or a.size == 0 or np.isinf(a).any():
            raise ValueError(
                f"orders must be a non-empty one-dimensional sequence of finite orders > 1, got {orders!r}"
            )
        best, best_rate = None, 0.0
        for alpha in a.tolist():
            try:
                b = cls.from_target(e, d, alpha).budgets[0]
            except ValueError:  # B_α ≤ 0 at this order
                continue
            if b / alpha > best_rate:
                best, best_rate = alpha, b / alpha
        if best is None:
            raise ValueError(
                f"eps = {e:g} is too small for delta = {d:g}: no Renyi order in "
                f"{a.min():g}…{a.max():g} gives a positive budget"
            )
        return float(best)

    def _card_profile(self):
        """Its card (:mod:`dpexplore.display`) shows the guarantee it lets through: the RDP
        budgets at its orders."""
        return conversions.RDPProfile(np.array(self.alphas), np.array(self.budgets)), {}

    @property
    def budget(self) -> np.ndarray:
        return np.array(self.budgets)

    def _rows(self, x, name):
        return _rows(x, name, len(self.alphas))

    def consumed(self, spent) -> np.ndarray:
        return self._rows(spent, "spent").sum(axis=0)

    def _costs(self, x, name):
        return self._rows(x, name)

    def _zero(self):
        return tuple(Fraction(0) for _ in self.alphas)

    def _add(self, state, row):
        return tuple(t + Fraction(float(v)) for t, v in zip(state, row))

    def _fits(self, state):
        return all(t <= Fraction(b) for t, b in zip(state, self.budgets))

    def _query_cost(self, std: float):
        """Gaussian noise (σ = std): ε(α) = α/(2σ²) at each order (ρ = μ²/2 with μ = 1/σ, then
        ε̂(α) = αρ: ``conversions.gdp_to_zcdp``, ``zcdp_to_rdp``, each rounded up)."""
        rho = conversions.gdp_to_zcdp(1.0 / std)
        return [float(conversions.zcdp_to_rdp(rho, a)) for a in self.alphas]

    def _consumed_of(self, state) -> float:
        return max(float(v) / b for v, b in zip(state, self.budgets))


@dataclass(frozen=True)
class ZCDPFilter(_SumFilter):
    """ρ-zCDP filter: answer while Σ ρ_i ≤ ρ. A ρ_i-zCDP query is (α, αρ_i)-RDP for every α > 1,
    so this is the Rényi filter of Feldman & Zrnic (2021, result “Rényi filter”) at every order at once, and
    the interaction is ρ-zCDP.

    >>> ZCDPFilter(0.5).run([0.2, 0.2, 0.2]).tolist()
    [True, True, False]
    """

    rho: float

    def __post_init__(self):
        object.__setattr__(self, "rho", check_positive_scalar(self.rho, "rho"))

    def _card_profile(self):
        """Its card (:mod:`dpexplore.display`) shows the guarantee it lets through: ρ-zCDP."""
        return conversions.ZCDPProfile(self.rho), {}

    @property
    def budget(self) -> float:
        return self.rho

    def _query_cost(self, std: float):
        """Gaussian noise (σ = std): ρ = μ²/2 = 1/(2σ²) (``conversions.gdp_to_zcdp``, rounded up)."""
        return float(conversions.gdp_to_zcdp(1.0 / std))

    def _consumed_of(self, state) -> float:
        return float(state)


def _rows(x, name: str, width: int) -> np.ndarray:
    """Requests as a (k, width) array: a 2-D array with ``width`` columns, a 1-D array of length
    ``width`` (one request), or for width 1 a 1-D array of k requests."""
    arr = check_nonneg(x, name, allow_inf=False)
    if arr.size == 0:
        return np.zeros((0, width))
    if arr.ndim == 0 or (arr.ndim == 1 and width == 1):
        arr = arr.reshape(-1, 1)
    elif arr.ndim == 1 and arr.size == width:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != width:
        raise ValueError(f"{name} must have one column per order ({width}), got shape {arr.shape}")
    if arr.shape[0] > _MAX_REQUESTS:
        raise ValueError(f"{name} must hold at most {_MAX_REQUESTS} queries, got {arr.shape[0]}")
    return arr


def _pairs(x, name) -> np.ndarray:
    arr = _rows(x, name, 2)
    if (arr[:, 1] >= 1).any():
        raise ValueError(f"{name}: every delta must be < 1, got {arr[arr[:, 1] >= 1, 1][:6].tolist()}")
    return arr


@dataclass(frozen=True)
class ApproxZCDPFilter(_Filter):
    """δ-approximate ρ-zCDP filter (Whitehouse, Ramdas, Rogers & Wu 2023, their filter for
    approximate zCDP): queries that are δ_i-approximately ρ_i-zCDP are answered while Σ ρ_i ≤ ρ and
    Σ δ_i ≤ δ; the interaction is then δ-approximately ρ-zCDP. Requests are pairs (ρ_i, δ_i).

    >>> ApproxZCDPFilter(1.0, 1e-6).run([[0.4, 4e-7], [0.4, 4e-7], [0.1, 4e-7]]).tolist()
    [True, True, False]
    """

    rho: float
    delta: float

    def __post_init__(self):
        object.__setattr__(self, "rho", check_positive_scalar(self.rho, "rho"))
        d = float(check_delta(self.delta))
        object.__setattr__(self, "delta", d)

    def _card_profile(self):
        """Its card (:mod:`dpexplore.display`) shows the guarantee it lets through: δ-approximately
        ρ-zCDP is (ε, δ + δ_ρ(ε))-DP for every ε (the ρ-zCDP part's profile plus the δ of the
        event excluded; Bun & Steinke 2016, approximate zCDP), and has no pure ρ or RDP."""
        z = conversions.ZCDPProfile(self.rho)
        d0 = self.delta

        def log_delta(e, _z=z, _d0=d0):
            lz = np.asarray(_z.log_delta(e), dtype=np.float64)
            with np.errstate(divide="ignore"):
                l0 = np.log(_d0)
            out = np.logaddexp(l0, lz)
            # log(δ0 + δ_ρ(ε)) rounded up, and kept a relative 1e-12 above δ0 wherever
            # δ_ρ(ε) > 0 (so that ε at δ = δ0 is "not defined", not a rounding of δ0 + 1e-40)
            up = np.maximum(out + 4e-16 * np.abs(out) + 1e-15, l0 + 1e-12)
            return np.where(np.isfinite(lz), up, out)

        why = "approximate zCDP with δ > 0 has no pure ρ"
        return (
            profiles.FunctionProfile(log_delta, name=f"{d0:g}-approx. {self.rho:g}-zCDP"),
            {"rho": "not defined", "rho_why": why, "rdp": "not defined", "rdp_why": why},
        )

    @property
    def budget(self) -> tuple:
        return (self.rho, self.delta)

    def consumed(self, spent) -> tuple:
        s = _pairs(spent, "spent")
        return (math.fsum(s[:, 0]), math.fsum(s[:, 1]))

    def _costs(self, x, name):
        return _pairs(x, name)

    def _zero(self):
        return (Fraction(0), Fraction(0))

    def _add(self, state, row):
        return (state[0] + Fraction(float(row[0])), state[1] + Fraction(float(row[1])))

    def _fits(self, state):
        return state[0] <= Fraction(self.rho) and state[1] <= Fraction(self.delta)

    def _query_cost(self, std: float):
        """Gaussian noise (σ = std): (ρ, δ) = (1/(2σ²), 0) (``conversions.gdp_to_zcdp``, rounded up)."""
        return [float(conversions.gdp_to_zcdp(1.0 / std)), 0.0]

    def _consumed_of(self, state) -> float:
        return float(state[0])


@dataclass(frozen=True)
class ApproxDPFilter(_Filter):
    """The (ε, δ)-DP filter of Whitehouse, Ramdas, Rogers & Wu (2023, result “advanced
    composition filter”; it matches advanced composition including constants):
    with target ε > 0 and δ = δ' + δ'' (δ' > 0), an adaptively chosen (ε_i, δ_i)-DP query is answered
    only if, counting it,

        sqrt(2 log(1/δ') Σ_i ε_i²) + ½ Σ_i ε_i² ≤ ε   and   Σ_i δ_i ≤ δ'',

    and the interaction is then (ε, δ)-DP. (It follows from their approximate-zCDP filter: an
    (ε_i, δ_i)-DP query is δ_i-approximately ε_i²/2-zCDP, and ρ-zCDP with ρ = ½ Σ ε_i² gives
    (ρ + 2 sqrt(ρ log(1/δ')), δ')-DP — the same left-hand side.) Desfontaines 2023's table marks this cell
    "only asymptotically optimal for small ε". Requests are pairs (ε_i, δ_i); ``delta_prime``
    defaults to the whole δ (then every query must have δ_i = 0).

    >>> f = ApproxDPFilter(1.0, 1e-6)
    >>> int(f.run([[0.01, 0.0]] * 1000).sum())              # vs 100 under basic composition
    349
    """

    #: the noise the adaptive analyst (:func:`simulate_adaptive_analyst`) adds under this filter
    _noise = "laplace"

    eps: float
    delta: float
    delta_prime: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "eps", check_positive_scalar(self.eps, "eps"))
        d = float(check_delta(self.delta))
        if d <= 0:
            raise ValueError(
                f"delta must be > 0 (the filter spends delta' > 0 on the concentration), got {self.delta!r}"
            )
        object.__setattr__(self, "delta", d)
        dp = d if self.delta_prime is None else float(check_delta(self.delta_prime, "delta_prime"))
        if not 0 < dp <= d:
            raise ValueError(f"delta_prime must lie in (0, delta={d}], got {self.delta_prime!r}")
        object.__setattr__(self, "delta_prime", dp)

    def _card_profile(self):
        """Its card (:mod:`dpexplore.display`) shows the guarantee it lets through: (ε, δ)-DP."""
        return profiles.ApproxDPProfile(self.eps, self.delta), {}

    @property
    def budget(self) -> float:
        return self.eps

    @property
    def delta_slack(self) -> float:
        """δ'' = δ − δ', the budget for the queries' own δ_i."""
        return self.delta - self.delta_prime

    def _lhs(self, sq: float) -> float:
        return math.sqrt(2.0 * math.log(1.0 / self.delta_prime) * sq) + 0.5 * sq

    def consumed(self, spent) -> float:
        """The left-hand side sqrt(2 log(1/δ') Σε_i²) + ½ Σε_i² for the spent queries."""
        s = _pairs(spent, "spent")
        return self._lhs(float(sum((Fraction(float(v)) ** 2 for v in s[:, 0]), Fraction(0))))

    def _costs(self, x, name):
        return _pairs(x, name)

    def _zero(self):
        return (Fraction(0), Fraction(0))

    def _add(self, state, row):
        return (state[0] + Fraction(float(row[0])) ** 2, state[1] + Fraction(float(row[1])))

    def _fits(self, state):
        # Σε² exactly, rounded once; the 8-ulp slack covers the rounding of sqrt, log and +
        return float(up(self._lhs(float(state[0])), "filter")) <= self.eps and state[1] <= Fraction(
            self.delta
        ) - Fraction(self.delta_prime)

    def _query_cost(self, std: float):
        """Laplace noise (scale std/√2): (ε, δ) = (√2/std, 0)."""
        return [math.sqrt(2.0) / std, 0.0]

    def _consumed_of(self, state) -> float:
        return self._lhs(float(state[0]))


# -- odometer -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RenyiOdometer(_Guarantee):
    """A Rényi privacy odometer: a time-uniform bound on the privacy loss of an unbounded, fully
    adaptive interaction, from the RDP ε_i(α) of each answered query at the orders α_1…α_J:

        ε̂_t = min_j [ S_t(α_j) + log(J/δ)/(α_j − 1) ],   S_t(α) = Σ_{i ≤ t} ε_i(α).

    Guarantee: for neighbouring D, D' and any analyst, with probability ≥ 1 − δ over the
    interaction on D, SIMULTANEOUSLY for all t the privacy loss L_t = log(p_D/p_D')(transcript up
    to t) is at most ε̂_t. Proof: since each ε_i(α) is chosen from the past (predictable) and
    bounds D_α of the i-th answer given the past, M_t = exp((α − 1)(L_t − S_t(α))) is a non-negative
    supermartingale with M_0 = 1 (the process in the proof of Feldman & Zrnic 2021, result “Rényi filter”),
    so Ville's inequality gives P[∃t : L_t ≥ S_t(α) + log(1/δ')/(α − 1)] ≤ δ'; a union bound over
    the J orders with δ' = δ/J. This is an odometer in the privacy-loss sense of Rogers, Roth,
    Ullman & Vadhan (2016) (see also Lécuyer 2021; Whitehouse et al. 2023 for tighter odometers).
    Compared with a filter at a fixed budget (which may use the sharper conversion of Balle et al.
    2020), the price of not fixing a budget in advance is the time-uniform tail bound and the
    union over orders — the filter/odometer gap Desfontaines 2023 recalls.

    >>> od = RenyiOdometer([4.0, 16.0], 1e-6)
    >>> e1 = od.epsilon([[0.1, 0.4]]); e2 = od.epsilon([[0.1, 0.4]] * 4)
    >>> bool(0 < e1 < e2), round(e1, 6)
    (True, 1.367244)
    """

    alphas: tuple
    delta: float

    _no_profile = (
        "an odometer bounds the loss of an unbounded interaction as it runs "
        "(with probability 1 − δ): it has no fixed privacy profile"
    )

    def __post_init__(self):
        a = np.atleast_1d(check_alpha(self.alphas, "alphas"))
        if a.ndim != 1 or np.isinf(a).any():
            raise ValueError(f"alphas must be a one-dimensional array of finite orders > 1, got {self.alphas!r}")
        object.__setattr__(self, "alphas", tuple(float(v) for v in a))
        d = float(check_delta(self.delta))
        if d <= 0:
            raise ValueError(f"delta must be > 0, got {self.delta!r}")
        object.__setattr__(self, "delta", d)

    def _eps(self, totals: np.ndarray) -> np.ndarray:
        """ε̂ for running totals of shape (..., J), rounded up by a few ulp."""
        a = np.array(self.alphas)
        e = totals + (math.log(len(self.alphas)) - math.log(self.delta)) / (a - 1.0)
        return up(e.min(axis=-1), "filter")

    def epsilon(self, spent) -> float:
        """ε̂ after the answered queries ``spent`` (shape (t, J): RDP of each at each order)."""
        s = _rows(spent, "spent", len(self.alphas))
        tot = np.array([float(_exact_sum(s[:, j])) for j in range(s.shape[1])])
        return float(self._eps(up(tot, "filter")))

    def trajectory(self, requests) -> np.ndarray:
        """ε̂_t after each query of ``requests`` (shape (t, J)): the odometer's reading over time."""
        r = _rows(requests, "requests", len(self.alphas))
        # recursive summation of n non-negative terms errs by < n·2^-53 relative: 4n·2^-52 covers it
        return self._eps(up(np.cumsum(r, axis=0), Margin(rel=4 * r.shape[0] * np.finfo(float).eps)))


def filters_for_target(eps, delta, alpha: float = 16.0) -> dict:
    """Filters that each end in an (ε, δ)-DP guarantee, to compare budget consumption:

    * ``"pure"``: ε-DP (δ unused);
    * ``"gdp"``: μ-GDP with the largest μ such that
      δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) ≤ δ (Dong, Roth & Su 2022, Corollary 2.13),
      rounded down: :func:`dpexplore.accounting.conversions.approx_to_gdp`;
    * ``"renyi"``: :meth:`RenyiFilter.from_target` at ``alpha``;
    * ``"approx"``: :class:`ApproxDPFilter` (ε, δ).

    >>> fs = filters_for_target(1.0, 1e-6)
    >>> sorted(fs), round(fs["gdp"].mu, 4)
    (['approx', 'gdp', 'pure', 'renyi'], 0.2367)
    """
    from .conversions import approx_to_gdp

    e = check_positive_scalar(eps, "eps")
    d = float(check_delta(delta))
    if d <= 0:
        raise ValueError(f"delta must be > 0, got {delta!r}")
    mu = approx_to_gdp(e, d, side="down")  # > 0: δ_μ(ε) → 0 as μ → 0 for ε > 0
    return {
        "pure": PureDPFilter(e),
        "gdp": GDPFilter(mu),
        "renyi": RenyiFilter.from_target(e, d, alpha),
        "approx": ApproxDPFilter(e, d),
    }


# -- a seeded adaptive analyst --------------------------------------------------------------------
@dataclass(frozen=True)
class AnalystRun:
    """One simulated interaction: per query the requested noise std, whether the filter answered,
    the noisy answer (NaN when refused), the true answer, and the filter's consumed budget after it."""

    std: np.ndarray
    accepted: np.ndarray
    answers: np.ndarray
    truth: np.ndarray
    consumed: np.ndarray


def _costs_for(filt, std: float):
    """The privacy cost of a sensitivity-1 query answered with noise std ``std`` under the filter's
    notion (each filter's ``_query_cost``): Laplace (scale std/√2, pure ε = √2/std) for the pure and
    (ε, δ) filters, Gaussian (σ = std) for the others: μ = 1/σ, ρ = 1/(2σ²), RDP α/(2σ²)."""
    cost = getattr(filt, "_query_cost", None)
    if not isinstance(filt, _Filter) or cost is None:
        raise ValueError(f"filt must be one of the filters of dpexplore.accounting.filters, got {filt!r}")
    return cost(std)


def simulate_adaptive_analyst(
    filt, truth, rng, *, rel_error=0.1, min_std=5.0, max_std=1e3, first_std=20.0, mode: str = "skip"
) -> AnalystRun:
    """A seeded analyst asking sensitivity-1 counting queries with true answers ``truth``, choosing
    each next budget from earlier noisy answers: it wants relative error ``rel_error``, so after a
    noisy answer a it asks the next query with noise std clip(rel_error·|a|, min_std, max_std)
    (large counts earn more noise, i.e. less budget) — the budgets are data-dependent, the fully
    adaptive setting. The first query uses ``first_std`` (a public guess). After a refusal (mode
    "skip") the analyst retries the next query with twice the noise (at most ``max_std``); in mode
    "halt" the interaction ends at the first refusal. Laplace noise for the pure and (ε, δ) filters,
    Gaussian for the others (:func:`_costs_for`). ``consumed`` is the filter's
    :meth:`consumed` value (for a Rényi filter: the largest fraction of a per-order budget).

    >>> fs = filters_for_target(1.0, 1e-6)
    >>> truth = np.random.default_rng(0).poisson(200, 60)
    >>> runs = {k: simulate_adaptive_analyst(f, truth, np.random.default_rng(1)) for k, f in fs.items()}
    >>> bool(runs["gdp"].accepted.sum() > runs["pure"].accepted.sum())
    True
    """
    t = as_array(truth, "truth", allow_inf=False)
    if t.ndim != 1 or t.size == 0 or t.size > 10000:
        raise ValueError(f"truth must be a one-dimensional array of 1 to 10000 queries, got shape {t.shape}")
    check_rng(rng)
    r = check_positive_scalar(rel_error, "rel_error")
    lo = check_positive_scalar(min_std, "min_std")
    hi = check_positive_scalar(max_std, "max_std")
    if hi < lo:
        raise ValueError(f"max_std must be >= min_std ({lo}), got {max_std!r}")
    _mode(mode)
    std = float(np.clip(check_positive_scalar(first_std, "first_std"), lo, hi))
    if not isinstance(filt, _Filter):
        raise ValueError(f"filt must be one of the filters of dpexplore.accounting.filters, got {filt!r}")
    gaussian = filt._noise == "gaussian"
    state = filt._zero()
    spent: list = []
    stds, acc, ans, cons = [], [], [], []
    halted = False
    for true in t:
        cost = _costs_for(filt, std)
        cand = filt._add(state, filt._costs(cost, "next")[0])
        ok = (not halted) and bool(filt._fits(cand))
        stds.append(std)
        acc.append(ok)
        if ok:
            state = cand
            spent.append(cost)
            noise = rng.normal(0.0, std) if gaussian else rng.laplace(0.0, std / math.sqrt(2.0))
            a = true + noise
            ans.append(a)
            std = float(np.clip(r * abs(a), lo, hi))
        else:
            ans.append(np.nan)
            halted = halted or mode == "halt"
            std = min(2.0 * std, hi)
        cons.append(_consumed_value(filt, state))
    return AnalystRun(np.array(stds), np.array(acc), np.array(ans), t, np.array(cons, float))


def _consumed_value(filt, state) -> float:
    """The filter's consumed quantity from its exact running state (a scalar for plotting; each
    filter's ``_consumed_of``): ε, μ, ρ, the (ε, δ) filter's left-hand side, or for a Rényi filter
    the largest fraction of a budget."""
    return filt._consumed_of(state)


# -- parallel composition and sessions --------------------------------------------------------------
def parallel_composition(budgets, notion: str = "pure"):
    """Parallel composition over DISJOINT partitions (McSherry 2009): one person is in one part, so
    mechanisms run on different parts cost the maximum, not the sum — ε = max ε_p (pure DP),
    μ = max μ_p (GDP), ρ = max ρ_p (zCDP), and at each Rényi order max_p ε_p(α) (``notion="renyi"``,
    budgets of shape (parts, orders)); under add/remove-one neighbours.

    >>> parallel_composition([1.0, 0.5, 2.0])
    2.0
    """
    if notion not in ("pure", "gdp", "zcdp", "renyi"):
        raise ValueError(f"notion must be 'pure', 'gdp', 'zcdp' or 'renyi', got {notion!r}")
    b = check_nonneg(budgets, "budgets", allow_inf=False)
    if b.size == 0:
        raise ValueError("budgets must not be empty")
    if notion == "renyi":
        return np.atleast_2d(b).max(axis=0)
    return float(b.max())


@dataclass(frozen=True)
class Session(_Guarantee):
    """A pure-DP session as Desfontaines 2023 describes Tumult Analytics': a budget, the
    budget spent, and sub-sessions on disjoint partitions. Immutable: ``spend`` and ``partition``
    return new sessions. Partitioning into parts with budget ε_p charges ε_p to the parent once
    (parallel composition: the parts are disjoint); each child then spends within ε_p. Desfontaines 2023's
    example: a session with ε = 3 partitions with ε_p = 1 into two sub-sessions, leaving 2.

    Accounting (:meth:`total_spent`): own spending + Σ over partition operations of the largest
    child budget. With every budget fixed when it is granted this is parallel + sequential
    composition; when sub-session budgets depend on earlier answers and queries interleave, it is
    the *fully concurrent* setting Desfontaines 2023 names as open (for filters of (ε, δ)-DP, f-DP and Rényi
    DP of a fixed order, Haney et al. 2023 have since shown that concurrency does not change the
    guarantee).

    >>> root = Session(3.0)
    >>> root, (a, b) = root.partition(1.0, 2)
    >>> root.remaining, a.remaining
    (2.0, 1.0)
    >>> a = a.spend(0.5)
    >>> root.total_spent(), root.accepts(2.5)
    (1.0, False)
    """

    budget: float
    spent: float = 0.0
    children: tuple = field(default_factory=tuple)

    def _card_profile(self):
        """Its card (:mod:`dpexplore.display`) shows the guarantee of the session: budget-ε-DP."""
        return profiles.PureDPProfile(self.budget), {}

    def __post_init__(self):
        object.__setattr__(self, "budget", check_positive_scalar(self.budget, "budget"))
        s = float(check_nonneg(self.spent, "spent", allow_inf=False))
        if Fraction(s) > Fraction(self.budget):
            raise ValueError(f"spent must be <= budget ({self.budget}), got {self.spent!r}")
        object.__setattr__(self, "spent", s)

    @property
    def remaining(self) -> float:
        return max(self.budget - self.spent, 0.0)

    def accepts(self, eps) -> bool:
        e = float(check_nonneg(eps, "eps", allow_inf=False))
        return bool(Fraction(self.spent) + Fraction(e) <= Fraction(self.budget))

    def spend(self, eps) -> "Session":
        """A new session with ``eps`` more spent; ValueError if it would exceed the budget."""
        if not self.accepts(eps):
            raise ValueError(f"eps={eps!r} exceeds the remaining budget {self.remaining!r}")
        return replace(self, spent=self.spent + float(eps))

    def partition(self, eps, parts: int):
        """Split into ``parts`` disjoint partitions, each a sub-session with budget ``eps``; the parent
        is charged ``eps`` once. Returns (new parent, tuple of sub-sessions)."""
        if isinstance(parts, bool) or not isinstance(parts, (int, np.integer)) or parts < 1:
            raise ValueError(f"parts must be an integer >= 1, got {parts!r}")
        e = check_positive_scalar(eps, "eps")
        parent = self.spend(e)
        kids = tuple(Session(e) for _ in range(int(parts)))
        return replace(parent, children=self.children + (kids,)), kids

    def total_spent(self) -> float:
        """The parent's spending, which already includes one charge per partition (the largest
        child budget: parallel composition); children can never exceed their budgets."""
        return self.spent
