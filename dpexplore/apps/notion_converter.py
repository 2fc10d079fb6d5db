"""Dashboard: the notion converter — enter ONE privacy guarantee and see every guarantee it implies.

The source is one of: pure ε-DP, (ε₀, δ₀)-DP, ρ-zCDP, μ-GDP, one Rényi DP point (α₀, ε̂₀), or a
mechanism (Laplace b, Gaussian σ, randomized response ε); sensitivity Δ = 1. The dashboard draws
every implied notion on shared axes and tabulates its parameter, with the conversion used:

* pure ε-DP → Rényi DP, tight: ε̂(α) = (1/(α−1)) log((sinh(αε) − sinh((α−1)ε))/sinh(ε))
  (Steinke 2024, Theorem 4; :func:`~dpexplore.accounting.conversions.pure_to_rdp`), → zCDP, tight:
  ρ = ε tanh(ε/2) (Steinke 2024, Theorem 5;
  :func:`~dpexplore.accounting.conversions.pure_to_zcdp`), → GDP: μ = 2Φ⁻¹(e^ε/(1 + e^ε)) (Liu et
  al. 2022, result “all ε-DP algorithms are GDP”; :func:`~dpexplore.accounting.conversions.pure_to_gdp`).
  Randomized response attains all three (the witness).
* (ε₀, δ₀)-DP → its profile δ(ε) = δ₀ + (1 − δ₀)(e^{ε₀} − e^ε)₊/(1 + e^{ε₀}) (Liu et al. 2022, Theorem 2.1,
  :class:`~dpexplore.accounting.conversions.ApproxDPProfile`); with δ₀ > 0 it implies no pure DP, no zCDP,
  no RDP (the divergence may be infinite) and no GDP (δ(ε) ≥ δ₀ never decays).
* ρ-zCDP → (ε, δ): ε = ρ + 2√(ρ log(1/δ)) (Steinke 2022, footnote 2;
  :func:`~dpexplore.accounting.conversions.zcdp_to_approx`) and the improved profile
  (:class:`~dpexplore.accounting.conversions.ZCDPProfile`); RDP ε̂(α) = αρ (definition;
  :func:`~dpexplore.accounting.conversions.zcdp_to_rdp`); GDP: measured on the
  implied profile (Liu et al. 2022, result “GDPT”, :func:`~dpexplore.accounting.conversions.gdp_measure`).
* μ-GDP → profile δ_μ(ε) (Liu et al. 2022, Theorem 3.1), ρ = μ²/2
  (:func:`~dpexplore.accounting.conversions.gdp_to_zcdp`) and ε̂(α) = αμ²/2 (a μ-GDP pair is a
  post-processing of N(0, 1) vs N(μ, 1), Dong, Roth & Su 2022, so its Rényi divergences are at
  most the Gaussian ones).
* RDP → (ε, δ): ε = ε̂(α) + log(1 − 1/α) − (log δ + log α)/(α − 1), minimised over the orders
  (Balle et al. 2020, Theorem 21; :func:`~dpexplore.accounting.conversions.rdp_to_approx`).
* f-DP view: (ε, δ)-DP ⇒ β(α) ≥ max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)) (Dong, Roth & Su 2022, Proposition 2.5;
  :func:`~dpexplore.accounting.conversions.tradeoff_approx`), μ-GDP ⇒ β ≥ G_μ(α) = Φ(Φ⁻¹(1 − α) − μ)
  (:func:`~dpexplore.accounting.conversions.tradeoff_gdp`), a profile δ(ε) ⇒ β ≥ sup_ε f_{ε, δ(ε)}(α)
  (Dong, Roth & Su 2022, Proposition 2.5), evaluated on the plotted ε grid (a finite grid gives a
  smaller β: the safe side).

Both plots are drawn with the shared views of :mod:`dpexplore.ui.views` (the builders
``dpexplore.explore`` and the Composition explorer use): same axes, gaps where δ = 0, and an empty
trace that keeps its legend entry where a notion is not implied.

Cost: everything that depends only on the source (its profile, trade-off curve, the GDP
measurement — 20 to 170 ms, so the ρ and Laplace-b sliders update on release) is cached on the
source (:func:`source_summary`); a step of the target-δ slider or of the pure/GDP/Gaussian/RR
sliders costs a few ms (:func:`compute_notion_converter`; ~10 ms for the Gaussian mechanism, whose
exact ε(δ) is its own profile's bisection).

>>> r = compute_notion_converter(ConverterSpec(Source("pure", (1.0,)), 1e-6, (2.0, 8.0)))
>>> round(r.rho, 6), round(r.mu, 6)                  # ε tanh(ε/2), 2Φ⁻¹(e/(1+e))
(0.462117, 1.232035)
>>> type(build_notion_converter()).__name__
'AppShell'
"""

from __future__ import annotations

import functools
import html
import math
from dataclasses import dataclass

import ipywidgets as W
import numpy as np

from ..accounting.conversions import (
    ApproxDPProfile,
    approx_to_zcdp,
    PureDPProfile,
    RDPProfile,
    ZCDPProfile,
    gdp_certified_mu,
    gdp_epsilon,
    gdp_to_zcdp,
    pure_to_gdp,
    pure_to_rdp,
    pure_to_zcdp,
    rdp_to_approx,
    tradeoff_approx,
    tradeoff_envelope,
    tradeoff_gdp,
    zcdp_to_approx,
    zcdp_to_rdp,
)
from ..mechanisms import Gaussian, Laplace, RandomizedResponse
from ..accounting.profiles import GaussianDPProfile, PrivacyProfile
from ..ui.controls import OKABE_ITO, Controller, MessageArea, dropdown, param_slider
from ..ui.plotwidget import PlotlyWidget
from ..ui.shell import AppInfo, AppShell, app_shell
from ..ui.views import (
    point_trace,
    profile_layout,
    profile_trace,
    profile_yrange,
    tradeoff_diagonal,
    tradeoff_layout,
    tradeoff_trace,
)
from ._checks import Param, params_by_name, snippet_assign

__all__ = [
    "NOTIONS",
    "Source",
    "ConverterSpec",
    "SourceSummary",
    "ConverterResult",
    "source_summary",
    "compute_notion_converter",
    "parse_orders",
    "NotionConverterController",
    "build_notion_converter",
    "ALPHA_GRID",
    "RDP_ORDERS",
    "N_EPS",
    "DELTA_FLOOR",
    "PARAMS",
]

#: α grid of the trade-off plot
ALPHA_GRID = np.linspace(0.0, 1.0, 201)
#: orders of the "via RDP" route (the implied RDP curve is evaluated there, plus α = ∞ when finite)
RDP_ORDERS = np.geomspace(1.01, 1e4, 64)
#: points of the ε grid of the profile plot
N_EPS = 201
#: the trade-off envelope sup_ε f_{ε, δ(ε)} uses every ENV_STRIDE-th point of the ε grid (67 of 201)
ENV_STRIDE = 3
#: bottom of the profile plot's log axis (values below are computed; the axis just ends there)
DELTA_FLOOR = 1e-13
#: tolerance of the GDP measurement (μ_upper is certified, at most this above the optimal μ)
MEASURE_TOL = 1e-3

_POS = {"accept": (0.0, None), "interval": "()"}  # what the notions take: any finite value > 0
_PROB = {"unit": "probability", "steps_per_decade": 10, "readout_format": ".2e", "accept": (0.0, 1.0), "interval": "()"}
#: the converter's numeric parameters (each notion's, then the target δ): its sliders and the
#: checks of its source and spec
PARAMS = params_by_name(
    Param("pure_eps", 0.01, 100.0, "log", "ε (pure DP)", "nats", **_POS),
    Param("approx_eps", 0.01, 100.0, "log", "ε₀ of (ε₀, δ₀)", "nats", **_POS),
    Param("approx_delta", 1e-15, 0.1, "log", "δ₀ of (ε₀, δ₀)", **_PROB),
    Param("rho", 5e-5, 50.0, "log", "ρ (zCDP)", "nats per order", **_POS),
    Param("mu", 0.01, 50.0, "log", "μ (GDP)", "Gaussian shift, × Δ/σ", **_POS),
    # lo = 2·10^(−0.3) ≈ 1.0024, so that the default α₀ = 2 sits on the slider's step grid
    Param(
        "rdp_alpha",
        2.0 * 10**-0.3,
        2000.0,
        "log",
        "α₀ (Rényi order)",
        "order",
        accept=(1.0, None),
        interval="()",
        why="RDP is defined for orders alpha > 1",
    ),
    Param("rdp_eps", 0.001, 100.0, "log", "ε̂₀ (Rényi DP at α₀)", "nats", **_POS),
    Param("lap_b", 0.01, 100.0, "log", "Laplace scale b", "× Δ", **_POS),
    Param("gauss_sigma", 0.01, 100.0, "log", "Gaussian σ", "× Δ", **_POS),
    Param("rr_eps", 0.01, 100.0, "log", "randomized response ε", "nats", **_POS),
    Param("delta", 1e-300, 0.1, "log", "target δ (for the ε-at-δ row)", **_PROB),
)


@dataclass(frozen=True)
class _Notion:
    key: str
    label: str
    params: tuple[str, ...]  # control names, in order


NOTIONS: dict[str, _Notion] = {
    n.key: n
    for n in (
        _Notion("pure", "ε-DP (pure)", ("pure_eps",)),
        _Notion("approx", "(ε, δ)-DP", ("approx_eps", "approx_delta")),
        _Notion("zcdp", "ρ-zCDP", ("rho",)),
        _Notion("gdp", "μ-GDP", ("mu",)),
        _Notion("rdp", "(α, ε̂)-Rényi DP (one order)", ("rdp_alpha", "rdp_eps")),
        _Notion("laplace", "mechanism: Laplace(b)", ("lap_b",)),
        _Notion("gaussian", "mechanism: Gaussian(σ)", ("gauss_sigma",)),
        _Notion("rr", "mechanism: randomized response(ε)", ("rr_eps",)),
    )
}


@dataclass(frozen=True)
class Source:
    """The entered guarantee: ``kind`` (a key of :data:`NOTIONS`) and its parameters (floats)."""

    kind: str
    params: tuple[float, ...]

    def __post_init__(self):
        if self.kind not in NOTIONS:
            raise ValueError(f"notion must be one of {sorted(NOTIONS)}, got {self.kind!r}")
        if len(self.params) != len(NOTIONS[self.kind].params):
            raise ValueError(
                f"notion {self.kind!r} needs {len(NOTIONS[self.kind].params)} parameters, got {self.params!r}"
            )
        for name, v in zip(NOTIONS[self.kind].params, self.params):
            PARAMS[name].check(v)


@dataclass(frozen=True)
class ConverterSpec:
    """Source, the target δ of the "ε at δ" column, and the RDP orders shown in the table."""

    source: Source
    delta: float
    orders: tuple[float, ...]

    def __post_init__(self):
        PARAMS["delta"].check(self.delta)


@dataclass(frozen=True)
class SourceSummary:
    """Everything that depends on the source only (cached): implied parameters, the reasons where
    a notion is not implied, the source's profile and trade-off curve, the tightness witness."""

    label: str
    profile: PrivacyProfile
    beta: np.ndarray | None  # source trade-off on ALPHA_GRID, None: envelope of profile
    pure_eps: float | None
    pure_how: str
    rho: float | None
    rho_how: str
    mu: float | None
    mu_how: str
    rdp_orders: np.ndarray | None  # the implied RDP curve (orders, values) for the RDP route
    rdp_values: np.ndarray | None
    rdp_how: str
    witness: str
    risk: dict = None  # route ("exact", "pure", "zcdp", "gdp") → (TPR at FPR 1 %, advantage) or None


@dataclass(frozen=True)
class ConverterResult:
    """All arrays of both plots and the table's numbers for one setting."""

    spec: ConverterSpec
    summary: SourceSummary
    eps_grid: np.ndarray
    log_delta: dict  # curve name → log δ on eps_grid (−inf: δ = 0), None: not implied
    beta: dict  # curve name → β on ALPHA_GRID, None: not implied
    eps_at_delta: dict  # route name → ε at the target δ (inf: not implied at this δ), None
    rdp_table: tuple  # ((α, ε̂(α) or None), ...) at the requested orders

    @property
    def rho(self):
        return self.summary.rho

    @property
    def mu(self):
        return self.summary.mu

    @property
    def pure_eps(self):
        return self.summary.pure_eps


def parse_orders(text: str) -> tuple[float, ...]:
    """Parse the comma-separated Rényi orders of the table: 1 to 8 numbers, each > 1.

    >>> parse_orders("2, 8, 32")
    (2.0, 8.0, 32.0)
    >>> parse_orders("0.5")
    Traceback (most recent call last):
    ...
    ValueError: Renyi order alpha must be > 1, got 0.5 (RDP is defined for orders alpha > 1)
    """
    parts = [p.strip() for p in str(text).replace(";", ",").split(",") if p.strip()]
    if not parts:
        raise ValueError("RDP orders: type at least one order alpha > 1, e.g. '2, 8, 32'")
    if len(parts) > 8:
        raise ValueError(f"RDP orders: at most 8 orders, got {len(parts)}")
    out = []
    for p in parts:
        try:
            a = float(p.replace("_", "").replace(" ", ""))
        except ValueError:
            shown = p if len(p) <= 24 else p[:20] + "..."
            raise ValueError(f"Renyi order alpha must be a number > 1, got {shown!r}") from None
        if not a > 1 or math.isnan(a):
            raise ValueError(f"Renyi order alpha must be > 1, got {a:g} (RDP is defined for orders alpha > 1)")
        if not math.isfinite(a):
            raise ValueError("Renyi order alpha must be a finite number > 1, got inf (the table lists finite orders)")
        if a not in out:  # a repeated order is listed once
            out.append(a)
    return tuple(out)


# ------------------------------------------------------------------------------------------------
# source → implied parameters (cached: the GDP measurement costs 20-170 ms)
# ------------------------------------------------------------------------------------------------
_PURE_WITNESS = (
    "Randomized response with this ε attains every pure-DP conversion shown: its profile is the "
    "pure-DP profile (Liu et al. 2022, Thm 2.1 with δ₀ = 0), its Rényi divergence equals Steinke 2024 Thm 4 and its ρ "
    "equals Steinke 2024 Thm 5 (both tight for RR), and μ = 2Φ⁻¹(e^ε/(1+e^ε)) binds at ε′ = 0 "
    "(δ_RR(0) = δ_μ(0) = tanh(ε/2))."
)
_GAUSS_WITNESS = (
    "The Gaussian mechanism with σ = Δ/μ attains μ-GDP exactly (Liu et al. 2022, Thm 3.1), with Rényi "
    "divergence exactly αμ²/2 and ρ = μ²/2 (Steinke 2024): the GDP, zCDP and RDP entries are all tight "
    "for it; routes through zCDP or RDP lose only in the conversion to (ε, δ)."
)


def _envelope(eps: np.ndarray, log_delta: np.ndarray) -> np.ndarray:
    """β(α) ≥ sup_ε f_{ε, δ(ε)}(α) on the given ε grid and :data:`ALPHA_GRID` (the shared
    :func:`~dpexplore.accounting.conversions.tradeoff_envelope`: Dong, Roth & Su 2022, Proposition 2.5, rounded
    down); a finite grid only lowers β (the safe side)."""
    with np.errstate(under="ignore"):
        return tradeoff_envelope(eps, np.exp(log_delta), ALPHA_GRID)


@functools.lru_cache(maxsize=64)
def source_summary(source: Source) -> SourceSummary:
    """The source's profile, trade-off curve and every implied parameter (cached on the source).

    Conversions (sensitivity Δ = 1): pure ε-DP → ρ = ε tanh(ε/2) (Steinke 2024, Thm 5, tight), μ =
    2Φ⁻¹(e^ε/(1+e^ε)) (Liu et al. 2022, result “all ε-DP algorithms are GDP”, tight), ε̂(α) by Steinke 2024 Thm 4 (tight); μ-GDP → ρ = μ²/2,
    ε̂(α) = αμ²/2; ρ-zCDP → ε̂(α) = αρ, μ measured (Liu et al. 2022, result “GDPT”, certified to within 1e-3 above
    the optimum); one RDP point (α₀, ε̂₀) → ε̂(α) = ε̂₀ for α ≤ α₀ (Rényi divergences are
    non-decreasing in α); Laplace(b) → pure ε = 1/b, RDP by Mironov 2017, Prop. 6, μ measured on the
    exact profile; Gaussian(σ) → μ = 1/σ, ρ = 1/(2σ²).

    >>> s = source_summary(Source("gdp", (1.0,)))
    >>> s.rho, s.mu, s.pure_eps is None                 # ρ = μ²/2, rounded upward (exact here)
    (0.5, 1.0, True)
    """
    k, p = source.kind, source.params
    orders = np.append(RDP_ORDERS, np.inf)
    beta = None
    if k in ("pure", "rr"):
        e = p[0]
        mech = RandomizedResponse(e) if k == "rr" else None
        profile = mech.profile if mech is not None else PureDPProfile(e)
        label = f"randomized response, ε = {e:.4g}" if mech else f"{e:.4g}-DP"
        beta = tradeoff_approx(e, 0.0, ALPHA_GRID)
        pure_eps, pure_how = e, ("the source" if k == "pure" else "RR is ε-DP (exact)")
        rho, rho_how = float(pure_to_zcdp(e)), "ρ = ε tanh(ε/2) (Steinke 2024, Thm 5; tight for RR)"
        mu, mu_how = (
            float(pure_to_gdp(e)),
            "μ = 2Φ⁻¹(e^ε/(1+e^ε)) (Liu et al. 2022, result “all ε-DP algorithms are GDP”; binds at ε′ = 0)",
        )
        rdp_v = np.asarray(mech.rdp(orders)) if mech else np.asarray(pure_to_rdp(e, orders))
        rdp_how = "Steinke 2024, Thm 4 (tight for RR)"
        witness = _PURE_WITNESS
    elif k == "approx":
        e0, d0 = p
        profile = ApproxDPProfile(e0, d0)
        label = f"({e0:.4g}, {d0:.3g})-DP"
        beta = tradeoff_approx(e0, d0, ALPHA_GRID)
        pure_eps, pure_how = (
            None,
            "not implied: with δ₀ > 0 an event of probability δ₀ may be unbounded in privacy loss",
        )
        rho = None
        rho_how = (
            "not implied: (ε, δ)-DP with δ > 0 allows infinite Rényi divergence. The "
            f"converse holds: ρ = ε²/(4 log(1/δ) + 4ε) = {approx_to_zcdp(e0, d0):.4g} "
            "suffices to obtain this (ε₀, δ₀) (Steinke 2022, fn. 2)"
        )
        mu, mu_how = None, "not implied: δ(ε) ≥ δ₀ for every ε, while δ_μ(ε) → 0 (Liu et al. 2022, Thm 3.3: μ_t = ∞)"
        orders, rdp_v, rdp_how = None, None, "not implied: with δ₀ > 0 the Rényi divergence can be infinite"
        witness = (
            "The profile of Liu et al. 2022 Thm 2.1 is attained: randomized response with ε₀ that "
            "additionally reveals the input with probability δ₀ has exactly this profile "
            "(Kairouz, Oh & Viswanath 2015), so no other guarantee follows."
        )
    elif k == "zcdp":
        r = p[0]
        profile = ZCDPProfile(r)
        label = f"{r:.4g}-zCDP"
        pure_eps, pure_how = None, "not implied: zCDP allows unbounded privacy loss (e.g. the Gaussian mechanism)"
        rho, rho_how = r, "the source"
        mu = gdp_certified_mu(profile, tol=MEASURE_TOL).mu  # measured (zCDP is not pure DP)
        mu_how = (
            "measured on the zCDP-implied profile (Liu et al. 2022, result “GDPT”; certified on a grid, tail by "
            "extrapolation)"
            if mu is not None
            else "not implied in a computable way: the implied δ(0) rounds to 1"
        )
        rdp_v, rdp_how = np.asarray(zcdp_to_rdp(r, orders)), "ε̂(α) = αρ (zCDP definition, Steinke 2024)"
        witness = (
            "The Gaussian mechanism σ = 1/√(2ρ) has ε̂(α) = αρ exactly, but its true "
            "profile (μ = √(2ρ)-GDP) lies below the zCDP-implied one: zCDP keeps only the "
            "Rényi divergences, so every (ε, δ) read from it loses."
        )
    elif k == "gdp":
        m = p[0]
        profile = GaussianDPProfile(m)
        label = f"{m:.4g}-GDP"
        beta = tradeoff_gdp(m, ALPHA_GRID)
        pure_eps, pure_how = None, "not implied: the Gaussian privacy loss is unbounded"
        rho, rho_how = float(gdp_to_zcdp(m)), "ρ = μ²/2 (μ-GDP is post-processing of N(0,1) vs N(μ,1))"
        mu, mu_how = m, "the source"
        rdp_v = np.asarray(zcdp_to_rdp(rho, orders))
        rdp_how = "ε̂(α) = αμ²/2 (Gaussian Rényi divergence, Steinke 2024)"
        witness = _GAUSS_WITNESS
    elif k == "rdp":
        a0, r0 = p
        profile = RDPProfile(np.array([a0]), np.array([r0]))
        label = f"({a0:.4g}, {r0:.4g})-RDP"
        pure_eps, pure_how = None, "not implied: one finite order bounds only an average of the privacy loss"
        rho, rho_how = None, "not implied: zCDP needs ε̂(α) ≤ αρ at every order; one order says nothing about larger α"
        mu, mu_how = (
            None,
            "not implied: one order gives δ(ε) decaying only like e^{−(α−1)ε}, so μ_t = ∞ (Liu et al. 2022 Thm 3.3)",
        )
        orders = np.array([a0])
        rdp_v, rdp_how = np.array([r0]), "ε̂(α) = ε̂₀ for α ≤ α₀ (Rényi divergence is non-decreasing in α)"
        witness = (
            "One RDP point: the profile is the improved conversion (Balle et al. 2020 "
            "Thm 21); it is not known to be attained by a mechanism."
        )
    elif k == "laplace":
        b = p[0]
        mech = Laplace(b)
        profile = mech.profile
        label = f"Laplace, b = {b:.4g}"
        beta = np.asarray(mech.tradeoff(ALPHA_GRID))
        pure_eps, pure_how = float(mech.eps_max), "ε = Δ/b (Laplace is pure DP)"
        rho, rho_how = float(pure_to_zcdp(pure_eps)), "via pure ε = 1/b: ρ = ε tanh(ε/2) (Steinke 2024, Thm 5)"
        c = gdp_certified_mu(profile, tol=MEASURE_TOL)  # the smaller of measured and via pure DP
        if c.route == "measured":
            mu_how = f"measured on the exact profile (Liu et al. 2022, result “GDPT”); via pure DP: {c.pure:.4g}"
        else:
            mu_how = "via pure ε = 1/b: μ = 2Φ⁻¹(e^ε/(1+e^ε)) (Liu et al. 2022, result “all ε-DP algorithms are GDP”)"
        mu = c.mu
        rdp_v, rdp_how = np.asarray(mech.rdp(orders)), "exact (Mironov 2017, Prop. 6; quoted in Steinke 2024)"
        witness = (
            "The exact Laplace profile δ(ε) = 1 − exp((ε − 1/b)/2) lies strictly "
            "below the pure 1/b-DP profile except at ε = 1/b: the pure-DP conversions "
            "(attained by randomized response, not Laplace) lose for Laplace."
        )
    else:  # gaussian
        s = p[0]
        mech = Gaussian(s)
        profile = mech.profile
        label = f"Gaussian, σ = {s:.4g}"
        beta = np.asarray(mech.tradeoff(ALPHA_GRID))
        pure_eps, pure_how = None, "not implied: the Gaussian privacy loss is unbounded"
        rho, rho_how = float(mech.rho), "ρ = Δ²/(2σ²) (Steinke 2024; exact)"
        mu, mu_how = float(mech.mu), "μ = Δ/σ (Liu et al. 2022, Thm 3.1; exact)"
        rdp_v, rdp_how = np.asarray(zcdp_to_rdp(rho, orders)), "ε̂(α) = αΔ²/(2σ²) (Steinke 2024; exact)"
        witness = _GAUSS_WITNESS
    if rdp_v is not None:
        fin = np.isfinite(rdp_v)
        orders, rdp_v = orders[fin], rdp_v[fin]
    return SourceSummary(
        label,
        profile,
        beta,
        pure_eps,
        pure_how,
        rho,
        rho_how,
        mu,
        mu_how,
        orders,
        rdp_v,
        rdp_how,
        witness,
        _risk(profile, pure_eps, rho, mu),
    )


#: the false-positive rate of the attack-risk rows
RISK_FPR = 0.01


def _risk(profile, pure_eps, rho, mu) -> dict:
    """Attack risk read from the source's own profile and from each implied notion: the most
    powerful membership test's TPR at FPR 1 % and the advantage max(TPR − FPR), both rounded up
    (Dong, Roth & Su 2022, result “f-DP as (ε, δ(ε))-DP for all ε”; Kulynych et al. 2024). A notion that loses privacy in the
    conversion shows a higher risk than the source."""
    from ..accounting.conversions import advantage, tpr_at_fpr

    routes = {
        "exact": profile,
        "pure": PureDPProfile(pure_eps) if pure_eps is not None else None,
        "zcdp": ZCDPProfile(rho) if rho is not None else None,
        "gdp": GaussianDPProfile(mu) if mu is not None else None,
    }
    return {
        k: (None if p is None else (float(tpr_at_fpr(p, RISK_FPR)), float(advantage(p)))) for k, p in routes.items()
    }


def _rdp_at(s: SourceSummary, src: Source, alpha: float) -> float | None:
    k, p = src.kind, src.params
    if s.rdp_orders is None:
        return None
    if k == "rdp":
        return p[1] if alpha <= p[0] else None
    if k == "pure":
        return float(pure_to_rdp(p[0], alpha))
    if k == "rr":
        return float(RandomizedResponse(p[0]).rdp(alpha))
    if k == "laplace":
        return float(Laplace(p[0]).rdp(alpha))
    # zCDP, GDP, Gaussian: ε̂(α) = αρ with the source's ρ (ρ = μ²/2 for the last two)
    return float(zcdp_to_rdp(s.rho, alpha))


def _nice_ceiling(x: float) -> float:
    """The smallest of 1, 2, 5 × 10^k that is ≥ x, within [1, 1e5] (the ε range of the plot is
    quantised so the curves can be cached while the target δ moves)."""
    x = min(max(float(x), 1.0), 1e5)
    k = math.floor(math.log10(x))
    for m in (1.0, 2.0, 5.0, 10.0):
        if m * 10.0**k >= x * (1 - 1e-12):
            return m * 10.0**k
    return 10.0 ** (k + 1)  # pragma: no cover


@functools.lru_cache(maxsize=128)
def _curves(src: Source, hi: float) -> dict:
    """Curves that do not depend on the target δ: log δ and β of the source and of the implied
    pure DP, zCDP, GDP and RDP notions on the ε grid [0, hi] (cached on (source, hi))."""
    s = source_summary(src)
    eps = np.linspace(0.0, hi, N_EPS)
    ld: dict = {"source": np.asarray(s.profile.log_delta(eps), dtype=float)}
    ld["pure"] = None if s.pure_eps is None else np.asarray(PureDPProfile(s.pure_eps).log_delta(eps), dtype=float)
    ld["zcdp"] = None if s.rho is None else np.asarray(ZCDPProfile(s.rho).log_delta(eps), dtype=float)
    ld["gdp"] = None if s.mu is None else np.asarray(GaussianDPProfile(s.mu).log_delta(eps), dtype=float)
    ld["rdp"] = (
        None if s.rdp_orders is None else np.asarray(RDPProfile(s.rdp_orders, s.rdp_values).log_delta(eps), dtype=float)
    )
    # envelopes over every ENV_STRIDE-th ε of the grid (fewer ε: a smaller β, the safe side)
    sub = slice(None, None, ENV_STRIDE)
    beta: dict = {"source": s.beta if s.beta is not None else _envelope(eps[sub], ld["source"][sub])}
    beta["pure"] = None if s.pure_eps is None else tradeoff_approx(s.pure_eps, 0.0, ALPHA_GRID)
    beta["zcdp"] = None if ld["zcdp"] is None else _envelope(eps[sub], ld["zcdp"][sub])
    beta["gdp"] = None if s.mu is None else s.beta if src.kind == "gdp" else tradeoff_gdp(s.mu, ALPHA_GRID)
    beta["rdp"] = None if ld["rdp"] is None else _envelope(eps[sub], ld["rdp"][sub])
    return {"eps": eps, "log_delta": ld, "beta": beta}


def compute_notion_converter(spec: ConverterSpec) -> ConverterResult:
    """Every array of both plots and every number of the table for one setting.

    Profile curves (log δ on the ε grid): the source's own profile, and the profiles implied by
    pure ε-DP (Liu et al. 2022 Thm 2.1, δ₀ = 0), by the (ε, δ) point read at the target δ (Liu et al. 2022 Thm 2.1), by
    ρ-zCDP (improved conversion, :class:`ZCDPProfile`), by μ-GDP (Liu et al. 2022, Thm 3.1) and by the RDP
    curve (Balle et al. 2020 Thm 21, :class:`RDPProfile`). Trade-off curves: the same notions in
    f-DP terms. ε at the target δ: exact (the source's profile), via pure DP, via zCDP
    (ε = ρ + 2√(ρ log(1/δ)), Steinke 2022 fn. 2), via GDP (Liu et al. 2022, Thm 3.1 inverted) and via RDP.

    >>> r = compute_notion_converter(ConverterSpec(Source("gaussian", (1.0,)), 1e-5, (2.0,)))
    >>> round(r.eps_at_delta["exact"], 6), round(r.eps_at_delta["gdp"], 6)
    (4.377178, 4.377178)
    >>> r.eps_at_delta["pure"] is None, round(r.rdp_table[0][1], 12)
    (True, 1.0)
    """
    src = spec.source
    s = source_summary(src)
    d = spec.delta
    eps_at: dict = {}
    eps_at["gdp"] = None if s.mu is None else float(gdp_epsilon(s.mu, d))
    # the source's own profile (the Gaussian mechanism's exact inversion: ~4 ms a δ step)
    eps_at["exact"] = float(s.profile.epsilon(d))
    eps_at["pure"] = s.pure_eps
    eps_at["zcdp"] = None if s.rho is None else float(zcdp_to_approx(s.rho, d))
    eps_at["rdp"] = None if s.rdp_orders is None else float(rdp_to_approx(s.rdp_orders, s.rdp_values, d))
    finite = [v for v in eps_at.values() if v is not None and math.isfinite(v)]
    hi = _nice_ceiling(1.3 * max(finite) if finite else 10.0)
    curves = _curves(src, hi)  # cached: a δ step that keeps the axis reads arrays
    eps = curves["eps"]
    e_pt = eps_at["exact"]
    ld = dict(curves["log_delta"])
    beta = dict(curves["beta"])
    ld["approx"] = None if not math.isfinite(e_pt) else np.asarray(ApproxDPProfile(e_pt, d).log_delta(eps), dtype=float)
    beta["approx"] = None if not math.isfinite(e_pt) else tradeoff_approx(e_pt, d, ALPHA_GRID)

    table = tuple((a, _rdp_at(s, src, a)) for a in spec.orders)
    return ConverterResult(spec, s, eps, ld, beta, eps_at, table)


# ------------------------------------------------------------------------------------------------
# controller
# ------------------------------------------------------------------------------------------------
_CURVES = (  # key, legend text, colour, width, dash
    ("source", "source: {label}", OKABE_ITO[7], 4, "solid"),
    ("pure", "implied pure ε-DP", OKABE_ITO[0], 2, "longdashdot"),
    ("approx", "implied (ε, δ) at target δ (Liu et al. 2022 Thm 2.1)", OKABE_ITO[1], 2, "dot"),
    ("zcdp", "implied ρ-zCDP", OKABE_ITO[2], 2, "dash"),
    ("gdp", "implied μ-GDP", OKABE_ITO[3], 2, "dashdot"),
    ("rdp", "implied RDP curve", OKABE_ITO[4], 2, "longdash"),
)


def _fmt(x) -> str:
    if x is None:
        return "—"
    if math.isinf(x):
        return "∞"
    return f"{x:.4g}"


def _loss(v: float, exact: float) -> str:
    if not math.isfinite(exact) or not math.isfinite(v):
        return ""
    if exact > 0:
        pct = 100.0 * (v - exact) / exact
        if abs(pct) < 0.005:
            return "no loss"
        return f"{pct:+.2f} %" if abs(pct) < 1 else f"{pct:+.1f} %"
    return "no loss" if v == 0 else f"+{v:.3g}"


class NotionConverterController(Controller):
    """Controls → :class:`ConverterSpec` → :func:`compute_notion_converter` → two figures (profile,
    trade-off) and the HTML table, all updated in place."""

    compute = staticmethod(compute_notion_converter)
    prefetch = True  # the next slider step reads the cache (controls.PREFETCHER)

    def __init__(self, controls, message=None):
        self.table = W.HTML()
        self.table.add_class("dpexplore-notion-table")
        self.witness = W.HTMLMath()
        super().__init__(controls, message)
        self._set_texts(self.result)

    def read_spec(self) -> ConverterSpec:
        kind = self.controls["notion"].value
        params = tuple(float(self.controls[c].value) for c in NOTIONS[kind].params)
        return ConverterSpec(
            Source(kind, params), float(self.controls["delta"].value), parse_orders(self.controls["orders"].value)
        )

    def sync_controls(self) -> None:
        used = NOTIONS[self.controls["notion"].value].params
        for name in _PARAM_CONTROLS:
            self.controls[name].layout.display = None if name in used else "none"

    @staticmethod
    def _profile_traces(r: ConverterResult) -> list[dict]:
        tr = []
        for key, name, col, w, dash in _CURVES:
            y = r.log_delta[key]
            nm = name.format(label=r.summary.label) + ("" if y is not None or key == "source" else " — not implied")
            tr.append(profile_trace(nm, r.eps_grid, log_delta=y, color=col, width=w, dash=dash))
        tr.append(
            point_trace(
                r.eps_at_delta["exact"],
                r.spec.delta,
                name=f"(ε, δ) at target δ = {r.spec.delta:.3g}",
                color=OKABE_ITO[5],
                symbol="diamond",
                size=11,
                showlegend=True,
            )
        )
        return tr

    @staticmethod
    def _tradeoff_traces(r: ConverterResult) -> list[dict]:
        tr = []
        for key, name, col, w, dash in _CURVES:
            b = r.beta[key]
            nm = name.format(label=r.summary.label) + ("" if b is not None else " — not implied")
            tr.append(tradeoff_trace(nm, ALPHA_GRID, b, color=col, width=w, dash=dash))
        tr.append(tradeoff_diagonal())
        return tr

    @staticmethod
    def _floor(r: ConverterResult) -> float:
        return min(DELTA_FLOOR, r.spec.delta / 10.0)

    def figures(self, result: ConverterResult) -> list[PlotlyWidget]:
        legend = {"x": 1.0, "xanchor": "right", "y": 1.0, "bgcolor": "rgba(255,255,255,0.7)"}
        prof = PlotlyWidget(
            data=self._profile_traces(result),
            layout=profile_layout(
                "Profile space: δ(ε) of the source and of every implied notion",
                floor=self._floor(result),
                legend=legend,
                showlegend=True,
                height=450,
            ),
        )
        trade = PlotlyWidget(
            data=self._tradeoff_traces(result),
            layout=tradeoff_layout(
                "Trade-off space (f-DP): β(α) implied by each notion", legend=legend, showlegend=True, height=450
            ),
        )
        prof.add_class("dpexplore-profile-plot")
        trade.add_class("dpexplore-tradeoff-plot")
        return [prof, trade]

    def render(self, result: ConverterResult) -> None:
        self.figs[0].update(
            data=self._profile_traces(result), layout={"yaxis": {"range": profile_yrange(self._floor(result))}}
        )
        self.figs[1].update(data=self._tradeoff_traces(result))
        self._set_texts(result)

    @staticmethod
    def table_html(r: ConverterResult) -> str:
        """The table of implied guarantees (HTML)."""
        s, esc = r.summary, html.escape
        td = 'style="padding:2px 8px;border-bottom:1px solid #ddd;vertical-align:top"'

        def row(notion, value, how):
            return f"<tr><td {td}>{notion}</td><td {td}><b>{value}</b></td><td {td}>{esc(how)}</td></tr>"

        def val(x, name):
            return f"{name} = {_fmt(x)}" if x is not None else "not implied"

        rows = [
            row("pure ε-DP", val(s.pure_eps, "ε"), s.pure_how),
            row("ρ-zCDP", val(s.rho, "ρ"), s.rho_how),
            row("μ-GDP", val(s.mu, "μ"), s.mu_how),
        ]
        for a, v in r.rdp_table:
            how = (
                s.rdp_how
                if v is not None
                else (
                    "not implied at this order: " + s.rdp_how.removeprefix("not implied: ")
                    if s.rdp_orders is None
                    else "not implied: the source bounds only orders α ≤ α₀"
                )
            )
            rows.append(row(f"Rényi DP, α = {a:.12g}", val(v, "ε̂"), how))
        e = r.eps_at_delta
        ex = e["exact"]
        route_names = {
            "pure": "via pure DP",
            "zcdp": "via zCDP (Steinke 2022 fn. 2)",
            "gdp": "via GDP (Liu et al. 2022, Thm 3.1)",
            "rdp": "via RDP (Balle et al. 2020, Thm 21)",
        }
        best = r.spec.source.kind in ("zcdp", "rdp")  # no mechanism: the best known profile
        if math.isfinite(ex):
            parts = [f"{'best (improved conversion)' if best else 'exact'} {_fmt(ex)}"]
        else:
            parts = [f"not implied at δ = {r.spec.delta:.3g} (the source's δ(ε) never falls that low)"]
        for k, nm in route_names.items():
            v = e[k]
            if v is None:
                parts.append(f"{nm}: not implied")
            else:
                loss = _loss(v, ex)
                parts.append(f"{nm} {_fmt(v)}" + (f" ({loss})" if loss else ""))
        rows.append(
            row(
                f"ε at δ = {r.spec.delta:.3g}",
                " · ".join(parts),
                (
                    "best = the smallest ε known to follow (improved RDP conversion, Balle et al. 2020 Thm 21)"
                    if best
                    else "exact = the source's own profile ε(δ)"
                )
                + "; percentages: how much each route loses",
            )
        )
        names = {"pure": "via pure DP", "zcdp": "via zCDP", "gdp": "via GDP"}
        for i, (title, how) in enumerate(
            (
                (
                    f"attack: TPR at FPR {100 * RISK_FPR:g} %",
                    "the most powerful membership test's true-positive rate, at most (Dong, Roth & Su "
                    "2022, result “f-DP as (ε, δ(ε))-DP for all ε”); each notion's own bound, so a lossy conversion shows more risk",
                ),
                ("attack advantage", "max(TPR − FPR) = δ(0) (Kulynych et al. 2024)"),
            )
        ):
            rk = s.risk or {}
            first = rk.get("exact")
            parts = [f"{'best' if best else 'exact'} {_fmt(first[i])}" if first else "exact: —"]
            parts += [f"{nm} {_fmt(rk[k][i])}" for k, nm in names.items() if rk.get(k)]
            rows.append(row(title, " · ".join(parts), how))
        head = f"<tr><th {td}>implied notion</th><th {td}>parameter</th><th {td}>conversion (source)</th></tr>"
        return (
            '<table class="dpexplore-notion-table" style="border-collapse:collapse">'
            + head
            + "".join(rows)
            + "</table>"
        )

    def snippet(self) -> str | None:
        """The table's implied parameters and the ε at the target δ, with the public API."""
        spec = self.spec
        k = spec.source.kind
        names = NOTIONS[k].params
        lines = [
            "import numpy as np",
            "from dpexplore import mechanisms, GaussianDPProfile\nfrom dpexplore.accounting import conversions as C",
            "",
            snippet_assign(
                {**dict(zip(names, spec.source.params)), "delta": spec.delta}, [PARAMS[n] for n in (*names, "delta")]
            ).rstrip("\n"),
            f"orders = {tuple(spec.orders)!r}",
        ]
        out = []  # (name, expression) printed with 4 significant digits, like the table
        if k in ("pure", "rr", "laplace"):
            if k == "laplace":
                lines += ["mech = mechanisms.Laplace(lap_b)", "eps = mech.eps_max   # pure DP: Delta / b"]
            elif k == "rr":
                lines += ["mech = mechanisms.RandomizedResponse(rr_eps)", "eps = rr_eps"]
            else:
                lines += ["eps = pure_eps"]
            out += [("eps (pure DP)", "eps"), ("rho (zCDP)", "C.pure_to_zcdp(eps)")]
            if k != "laplace":
                out += [("mu (GDP)", "C.pure_to_gdp(eps)")]
            else:  # the smaller of the measured μ and the pure-DP one
                out += [("mu (GDP)", f"C.gdp_certified_mu(mech, tol={MEASURE_TOL!r}).mu")]
            rdp = "mech.rdp(a)" if k in ("rr", "laplace") else "C.pure_to_rdp(eps, a)"
            exact = "mech.profile.epsilon(delta)" if k in ("rr", "laplace") else "C.PureDPProfile(eps).epsilon(delta)"
        elif k == "approx":
            rdp, exact = None, "C.ApproxDPProfile(approx_eps, approx_delta).epsilon(delta)"
        elif k == "zcdp":
            out += [
                ("rho (zCDP)", "rho"),
                ("mu (GDP, measured)", f"C.gdp_measure(C.ZCDPProfile(rho), tol={MEASURE_TOL!r})[1]"),
                ("eps at delta via zCDP", "C.zcdp_to_approx(rho, delta)"),
            ]
            rdp, exact = "C.zcdp_to_rdp(rho, a)", "C.ZCDPProfile(rho).epsilon(delta)"
        elif k == "gdp":
            out += [("rho (zCDP)", "C.gdp_to_zcdp(mu)"), ("mu (GDP)", "mu")]
            rdp, exact = "C.zcdp_to_rdp(C.gdp_to_zcdp(mu), a)", "C.gdp_epsilon(mu, delta)"
        elif k == "rdp":
            lines += ["orders = [a for a in orders if a <= rdp_alpha]   # one point bounds only alpha <= rdp_alpha"]
            rdp = "rdp_eps"
            exact = "C.RDPProfile(np.array([rdp_alpha]), np.array([rdp_eps])).epsilon(delta)"
        else:  # gaussian
            lines += ["mech = mechanisms.Gaussian(gauss_sigma)"]
            out += [("rho (zCDP)", "mech.rho"), ("mu (GDP)", "mech.mu")]
            rdp, exact = "C.zcdp_to_rdp(mech.rho, a)", "mech.profile.epsilon(delta)"
        for name, expr in out:
            lines.append(f"print(f'{name} = {{float({expr}):.4g}}')")
        if rdp is not None:
            lines += ["for a in orders:", f"    print(f'Renyi DP at alpha = {{a:g}}: {{float({rdp}):.4g}}')"]
        lines.append(f"print(f'eps at delta = {{delta:.3g}}: {{float({exact}):.4g}}')")
        return "\n".join(lines) + "\n"

    def _set_texts(self, r: ConverterResult) -> None:
        self.table.value = self.table_html(r)
        self.witness.value = "<b>Tightness witness.</b> " + html.escape(r.summary.witness)


#: the notions' sliders at their start, and those that compute on release only
_DEFAULTS = (
    ("pure_eps", 1.0),
    ("approx_eps", 1.0),
    ("approx_delta", 1e-6),
    ("rho", 0.5),
    ("mu", 1.0),
    ("rdp_alpha", 2.0),
    ("rdp_eps", 1.0),
    ("lap_b", 1.0),
    ("gauss_sigma", 1.0),
    ("rr_eps", 1.0),
)
_SLOW_CONTROLS = ("rho", "lap_b")

_PARAM_CONTROLS = tuple(name for name, _ in _DEFAULTS)


def _controls(notion: str, delta: float, orders: str) -> dict[str, W.ValueWidget]:
    slow = {"continuous_update": False}  # the GDP measurement (20-170 ms) runs on release only
    return {
        "notion": dropdown("source notion", [(n.label, n.key) for n in NOTIONS.values()], notion, width="520px"),
        **{name: param_slider(PARAMS[name], v, **(slow if name in _SLOW_CONTROLS else {})) for name, v in _DEFAULTS},
        "delta": param_slider(PARAMS["delta"], delta),
        "orders": W.Text(
            value=orders,
            description="RDP orders α for the table (comma-separated)",
            continuous_update=False,
            style={"description_width": "initial"},
            layout=W.Layout(width="min(100%, 520px)"),
        ),
    }


_FORMULAS = (
    r"<b>Conversions used</b> (sensitivity Δ = 1). "
    r"Pure ε-DP → Rényi DP, tight (Steinke 2024, Thm 4): "
    r"$\hat\varepsilon(\alpha) = \frac{1}{\alpha-1}\log\frac{\sinh(\alpha\varepsilon) - "
    r"\sinh((\alpha-1)\varepsilon)}{\sinh\varepsilon}$; → zCDP, tight (Steinke 2024, Thm 5): "
    r"$\rho = \varepsilon\tanh(\varepsilon/2)$; → GDP (Liu et al. 2022, result “all ε-DP algorithms are GDP”): "
    r"$\mu = 2\Phi^{-1}\!\left(\frac{e^\varepsilon}{1+e^\varepsilon}\right)$. "
    r"(ε₀, δ₀)-DP → its profile (Liu et al. 2022, Thm 2.1): "
    r"$\delta(\varepsilon) = \delta_0 + (1-\delta_0)\frac{(e^{\varepsilon_0} - e^{\varepsilon})_+}"
    r"{1+e^{\varepsilon_0}}$. ρ-zCDP → (ε, δ) (Steinke 2022, fn. 2): "
    r"$\varepsilon = \rho + 2\sqrt{\rho\log(1/\delta)}$. μ-GDP profile (Liu et al. 2022, Thm 3.1): "
    r"$\delta_\mu(\varepsilon) = \Phi(-\frac{\varepsilon}{\mu} + \frac{\mu}{2}) - "
    r"e^{\varepsilon}\Phi(-\frac{\varepsilon}{\mu} - \frac{\mu}{2})$, and μ-GDP ⇒ ρ = μ²/2. "
    r"RDP → (ε, δ) (Balle et al. 2020, Thm 21): "
    r"$\varepsilon = \min_\alpha \hat\varepsilon(\alpha) + \log(1 - 1/\alpha) - "
    r"\frac{\log\delta + \log\alpha}{\alpha - 1}$. "
    r"f-DP: (ε, δ)-DP ⇒ $\beta(\alpha) \ge \max(0, 1-\delta-e^{\varepsilon}\alpha, "
    r"e^{-\varepsilon}(1-\delta-\alpha))$; μ-GDP ⇒ $\beta(\alpha) \ge \Phi(\Phi^{-1}(1-\alpha) - \mu)$."
)


INFO = AppInfo(
    slug="notion_converter",
    title="Notion converter: one guarantee, every implied guarantee",
    lead=(
        "Choose one guarantee (ε-DP, (ε, δ)-DP, ρ-zCDP, μ-GDP, Rényi DP or a mechanism) and see "
        "every guarantee it implies, in privacy-profile and in trade-off space, with how much "
        "each conversion loses."
    ),
    theory=_FORMULAS
    + (
        "<p><small>δ = 0 (beyond a pure-DP ε) cannot be drawn on a log axis: those curves end "
        "there (a gap). The y axis starts at 10⁻¹³ (lower when the target δ is smaller); the "
        "curves are computed in log space below it. Notions that are not implied have empty "
        "curves and say so in the legend and the table.</small></p>"
    ),
)


def build_notion_converter(notion: str = "pure", delta: float = 1e-6, orders: str = "2, 8, 32") -> AppShell:
    """The app in the shell: source-notion dropdown and its parameter sliders, the target δ, the
    RDP orders, the table of implied guarantees and the witness, and the two plots (profile
    space, trade-off space).

    >>> app = build_notion_converter("zcdp", 1e-5, "2")
    >>> app.controller.spec.source, app.controller.spec.delta
    (Source(kind='zcdp', params=(0.5,)), 1e-05)
    """
    if notion not in NOTIONS:
        raise ValueError(f"notion must be one of {sorted(NOTIONS)}, got {notion!r}")
    controls = _controls(notion, delta, orders)
    ctrl = NotionConverterController(controls, MessageArea())
    panel = [controls["notion"]] + [controls[n] for n in _PARAM_CONTROLS] + [controls["delta"], controls["orders"]]
    return app_shell(
        INFO, ctrl, controls=panel, plots=ctrl.figs, readouts=[ctrl.table, ctrl.witness], panel_width="460px"
    )
