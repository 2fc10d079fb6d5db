"""Composition explorer: what k runs of an (ε, δ)-DP mechanism cost under each composition theorem.

Main plot — total ε of k steps against k (log–log), every curve at the SAME total δ budget δ′:

* basic (Bassi 2019, slide "Composition of several DP mechanisms"; Steinke 2022, Theorem "Basic Composition"): ε_tot = kε, δ_tot = kδ ≤ δ′;
* advanced, in the form of Dwork, Rothblum & Vadhan 2010 (Bassi 2019, slide "Advanced adaptive composition"):
  ε_tot = √(2k ln(1/δ_s)) ε + kε(e^ε − 1), δ_tot = kδ + δ_s with the slack δ_s = δ′ − kδ;
* advanced from pure DP (Steinke 2022, Theorem "Advanced Composition Starting from Pure DP", footnote 1):
  ε_tot = ½kε² + √(2 log(1/δ_s) kε²), δ_s = δ′ − kδ;
* optimal (Kairouz, Oh & Viswanath 2015, Theorem 3.3): the exact optimum for k-fold
  (ε, δ)-DP, 1 − (1 − δ)^k (1 − δ_KOV(ε_tot)) ≤ δ′ (:func:`dpexplore.accounting.composition.optimal`);
* RDP (Mironov 2017, Prop. 1): the chosen mechanism's own RDP curve times k, converted with
  the improved conversion (Balle et al. 2020, Theorem 21) at δ′;
* zCDP (Steinke 2024, Theorem 5; Steinke 2022, footnote 2): ρ = kε tanh(ε/2), ε_tot = ρ + 2√(ρ log(1/δ_s)),
  δ_s = δ′ − kδ (each (ε, δ)-DP step is an ε-DP step except with probability δ; Steinke 2022, footnote 1);
* tight: ``composition.compose(mechanism, k).epsilon(δ′)`` — exact for the Gaussian (√k μ-GDP,
  Liu et al. 2022) and randomized response (Kairouz, Oh & Viswanath 2015), the pessimistic PLD for Laplace (at the 9 k of
  ``K_TIGHT_PLD``; its minimum with KOV, which also bounds the ε-DP Laplace mechanism, so that a δ′
  below the PLD's numerical floor of ~1e-16 does not fall back to kε).

The mechanism is Laplace calibrated to ε (b = Δ/ε, pure), Gaussian calibrated to (ε, δ), or
randomized response RR(ε). Crossovers (the first k at which an advanced bound beats basic) are
found exactly on every integer k ≤ 10⁴ and marked.

Second plot — the inverse view (Steinke 2022): the Laplace scale b = 1/ε_step per sensitivity-1 query that
keeps k queries within a fixed total budget (ε_T, δ′), with ε_step from
:func:`dpexplore.accounting.composition.per_step_budget` for each theorem, and Steinke 2022's
Laplace(√(k/(2ρ))) with ρ = ε_T²/(4 log(1/δ′) + 4ε_T): both
:func:`dpexplore.accounting.composition.per_step_laplace_scale` (rounded up).

Three more tabs show ONE run of the mechanism next to ``compose(mechanism, k)`` at the chosen k
through the shared views of :mod:`dpexplore.ui.views` (those of ``dpexplore.explore``): privacy
profiles δ(ε) with the closest μ-GDP curve (exact √k Δ/σ for the Gaussian, Dong, Roth & Su 2022,
Corollary 3.3; otherwise the μ whose curve passes through (ε(δ′), δ′)), trade-off curves and
attack risk (the best membership test's TPR at each FPR, read from δ(ε) on the plotted ε grid:
Dong, Roth & Su 2022, Proposition 2.5 — an upper bound, the safe side). Their curves are computed
only while one of these tabs is open (cached per mechanism and k: :func:`k_runs_curves`), so a
step costs them nothing while the main plot is shown.

Speed: a step of k is served from the cached arrays (k on the slider's grid ``K_GRID``; ~2 ms per
compute); switching back to a mechanism/setting seen before is cached. Steps of ε, δ, δ′ and ε_T
recompute (KOV on 38 k, 9 PLD compositions for Laplace, the KOV per-step budgets of the noise
plot): 10–300 ms on the shared 2-core build machine, so those four sliders update on release
(``continuous_update=False``) while k updates continuously. After each step the controller computes
the settings one slider step away in the background (``controls.PREFETCHER``), so stepping with the
arrow keys mostly reads the cache.

>>> r = compute_composition(CompositionSpec(eps=0.1, delta=0.0, k=100, delta_total=1e-6))
>>> r.at_k["basic"], round(r.at_k["optimal"], 6)
(10.0, 4.774568)
>>> r.crossovers[0][:2]
('advanced', 35)
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field

import ipywidgets as W
import numpy as np

from ..accounting import composition as C
from ..accounting import conversions as CV
from ..mechanisms import Gaussian, Laplace, RandomizedResponse
from ..bibliography.references import cite
from .._validation import check_k
from ..ui.controls import OKABE_ITO, Controller, MessageArea, dropdown, param_slider
from ..ui.plotwidget import PlotlyWidget
from ..ui.shell import AppInfo, AppShell, app_shell
from ..ui.views import (
    LOG_AXIS,
    attack_layout,
    axes_layout,
    line_trace,
    marker_trace,
    matched_mu,
    object_traces,
    profile_curves,
    profile_layout,
    tradeoff_layout,
)
from ._checks import Param, check_params, param_values, params_by_name, snippet_assign

__all__ = [
    "CompositionSpec",
    "CompositionResult",
    "compute_composition",
    "make_mechanism",
    "CompositionController",
    "build_composition_explorer",
    "K_GRID",
    "K_TIGHT_PLD",
    "K_MAX",
    "ALPHAS",
    "THEOREMS",
    "NOISE_CURVES",
    "MECHANISMS",
    "k_runs_curves",
    "K_RUNS_TABS",
    "PARAMS",
]

#: largest number of compositions on this dashboard
K_MAX = 10000
_PROB = {"unit": "probability", "steps_per_decade": 5, "readout_format": ".2e", "accept": (0.0, 1.0), "interval": "[)"}
#: the explorer's numeric parameters: its sliders and the checks of its spec (compute takes any
#: ε, ε_T > 0 and δ, δ′ in [0, 1); k is the slider's, 1 … K_MAX)
PARAMS = params_by_name(
    Param("eps", 1e-3, 50.0, "log", "ε per step", "nats", steps_per_decade=20, accept=(0.0, None), interval="()"),
    Param("delta", 1e-15, 1e-2, "log", "δ per step", **_PROB),
    Param("k", 1, K_MAX, "log", unit="steps", integer=True, steps_per_decade=10),
    Param("delta_total", 1e-15, 1e-1, "log", "δ′ total", **_PROB),
    Param(
        "eps_budget",
        1e-2,
        100.0,
        "log",
        "ε_T total budget (noise plot)",
        "nats",
        steps_per_decade=20,
        accept=(0.0, None),
        interval="()",
    ),
)
#: the k values of the main curves: exactly the positions of the k slider (10 per decade, rounded),
#: so that a slider step of k is read from the cached arrays
K_GRID = np.unique(np.round(10.0 ** (np.arange(41) / 10.0)).astype(np.int64))
#: coarser k grid for the tight Laplace curve and the optimal noise curve (each point is a cold
#: FFT composition, ~15–30 ms, or a KOV bisection)
K_TIGHT_PLD = np.array([1, 3, 10, 30, 100, 300, 1000, 3000, 10000], dtype=np.int64)
#: every integer k, for exact crossovers of the closed forms
_K_ALL = np.arange(1, K_MAX + 1, dtype=np.int64)
#: Rényi orders of the RDP curve (α = inf included: its term is ε̂(∞))
ALPHAS = np.concatenate([1.0 + np.logspace(-3, 0, 25, endpoint=False), np.logspace(np.log10(2.0), 6.0, 90), [np.inf]])

#: mechanism keys → dropdown labels
MECHANISMS = {
    "laplace": "Laplace (b = Δ/ε, pure ε-DP)",  # short: whole in the dropdown at 320 CSS px
    "gaussian": "Gaussian, calibrated to (ε, δ)",
    "rr": "Randomized response RR(ε)",
}
#: theorem keys of the main plot → legend labels, in legend order
THEOREMS = {
    "basic": "basic (Bassi 2019)",
    "advanced": "advanced (Dwork, Rothblum & Vadhan 2010)",
    "advanced_pure": "advanced from pure DP (Steinke 2022)",
    "zcdp": "zCDP (ρ = kε tanh(ε/2))",
    "rdp": "RDP of the mechanism",
    "optimal": "optimal (Kairouz, Oh & Viswanath 2015)",
    "tight": "tight: compose(mechanism, k)",
}
#: presentation mode's shorter legend labels of the main plot (the eight full ones fit in no corner
#: of the axes on a 1280×720 projector and pushed the plot down): the full names, with their
#: citations, stay in the plot's description and data table, and the Theory section cites each
PRESENT_THEOREMS = {
    "basic": "basic (Bassi 2019)",
    "advanced": "advanced",
    "advanced_pure": "from pure DP (Steinke 2022)",
    "zcdp": "zCDP",
    "rdp": "RDP",
    "optimal": "optimal",
    "tight": "tight",
}
#: noise-plot curve keys → legend labels
NOISE_CURVES = {
    "basic": "basic: Laplace(k/ε_T) — Θ(k)",
    "steinke": "Steinke 2022: Laplace(√(k/(2ρ))) — Θ(√k)",
    "advanced": "advanced (Dwork, Rothblum & Vadhan 2010)",
    "advanced_pure": "advanced from pure DP (Steinke 2022)",
    "zcdp": "zCDP (tight ρ = ε tanh(ε/2))",
    "optimal": "optimal (Kairouz, Oh & Viswanath 2015)",
}


def _breakable(name: str) -> str:
    """A legend name for a readout table cell, with a line-break opportunity after a "(" that
    follows a letter (the table fits the 26rem panel of presentation mode: "compose(mechanism,"
    was one long word).

    >>> _breakable("tight: compose(mechanism, k)"), _breakable("basic (Bassi 2019)")
    ('tight: compose(<wbr>mechanism, k)', 'basic (Bassi 2019)')
    """
    return re.sub(r"(?<=\S)\(", "(<wbr>", name)


_COLOURS = {
    "basic": OKABE_ITO[7],
    "advanced": OKABE_ITO[1],
    "advanced_pure": OKABE_ITO[4],
    "zcdp": OKABE_ITO[2],
    "rdp": OKABE_ITO[5],
    "optimal": OKABE_ITO[0],
    "tight": OKABE_ITO[3],
    "steinke": OKABE_ITO[6],
}
_DASH = {"advanced_pure": "dash", "zcdp": "dot", "steinke": "dashdot"}
#: the closed forms whose crossover with basic is marked, with their short annotation labels
_CROSS = ("advanced", "advanced_pure", "zcdp")
_SHORT = {
    "advanced": "advanced (Dwork, Rothblum & Vadhan 2010)",
    "advanced_pure": "advanced (Steinke 2022)",
    "zcdp": "zCDP",
}


# ------------------------------------------------------------------------------------------------
# spec and result
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CompositionSpec:
    """The dashboard's parameters (hashable: the cache key).

    ``eps``, ``delta``: each step is (ε, δ)-DP; ``k``: the chosen number of steps (marker and
    readout); ``delta_total``: the total δ budget δ′ every theorem is held to; ``mechanism``: a
    key of :data:`MECHANISMS`; ``eps_budget``: the total ε_T of the noise plot.
    """

    eps: float = 0.1
    delta: float = 0.0
    k: int = 100
    delta_total: float = 1e-6
    mechanism: str = "laplace"
    eps_budget: float = 1.0


@dataclass(frozen=True, eq=False)
class CompositionResult:
    """Everything both plots and the readout draw, for one spec.

    ``curves[name] = (k, total ε)`` (inf where the theorem gives no bound, e.g. when kδ ≥ δ′);
    ``at_k[name]`` the total ε at ``spec.k``; ``delta_spent[name]`` how the theorem uses δ′ at
    ``spec.k`` (a short text); ``crossovers`` = [(label, k, basic ε at k)];
    ``noise[name] = (k, Laplace scale b)``; ``noise_at_k[name]`` the scale at ``spec.k``;
    ``crossovers`` = [(theorem key, first k where it beats basic, basic's ε there)].
    """

    spec: CompositionSpec
    mechanism: object
    curves: dict
    at_k: dict
    delta_spent: dict
    crossovers: list
    noise: dict
    noise_at_k: dict
    notes: list = field(default_factory=list)


# ------------------------------------------------------------------------------------------------
# the computations (pure; cached by the parameters they depend on)
# ------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def make_mechanism(name: str, eps: float, delta: float):
    """The mechanism whose RDP and tight curves are drawn: ``"laplace"`` → ``Laplace.calibrate(ε)``
    (b = Δ/ε, pure ε-DP; Vinterbo 2022 Theorem 3), ``"gaussian"`` → ``Gaussian.calibrate(ε, δ)`` (Balle &
    Wang 2018; needs δ > 0), ``"rr"`` → ``RandomizedResponse(ε)`` (Kairouz, Oh & Viswanath 2015).

    >>> make_mechanism("laplace", 0.5, 0.0).scale > 2.0 - 1e-12
    True
    >>> make_mechanism("gaussian", 1.0, 0.0)
    Traceback (most recent call last):
    ...
    ValueError: delta = 0 is impossible for the Gaussian mechanism: its privacy loss is unbounded, so no noise level makes it (eps, 0)-DP; tick off 'δ = 0' or choose Laplace or randomized response

    Cached per (name, ε, δ): the Gaussian calibration is a bisection (~20 ms).
    """
    if name not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {tuple(MECHANISMS)}, got {name!r}")
    if name == "laplace":
        return Laplace.calibrate(eps)
    if name == "gaussian":
        if delta == 0:
            raise ValueError(
                "delta = 0 is impossible for the Gaussian mechanism: its privacy loss is "
                "unbounded, so no noise level makes it (eps, 0)-DP; tick off 'δ = 0' or "
                "choose Laplace or randomized response"
            )
        return Gaussian.calibrate(eps, delta)
    return RandomizedResponse(eps)


def _closed_forms(eps: float, delta: float, delta_total: float, ks: np.ndarray) -> dict:
    """basic, advanced (DRV), advanced from pure DP, zCDP total ε on ``ks`` (inf: no bound); the
    slack δ′ − kδ of the last three is :func:`dpexplore.accounting.composition.delta_slack`."""
    basic_eps, basic_delta = C.basic(eps, delta, k=ks)
    basic = np.where(basic_delta <= delta_total, basic_eps, np.inf)
    slack = np.asarray(C.delta_slack(delta, delta_total, ks), dtype=float)
    ok = slack > 0
    s = np.where(ok, slack, 0.5)
    adv, _ = C.advanced(eps, 0.0, ks, s)  # per-step δ enters through the slack, δ_tot = kδ + δ_s
    adv_pure = C.advanced_pure(eps, s, k=ks)
    rho = C.zcdp(CV.pure_to_zcdp(eps), k=ks)
    zc = CV.zcdp_to_approx(rho, s)
    inf = np.inf
    return {
        "basic": basic,
        "advanced": np.where(ok, adv, inf),
        "advanced_pure": np.where(ok, adv_pure, inf),
        "zcdp": np.where(ok, zc, inf),
    }


def _optimal(eps: float, delta: float, delta_total: float, ks: np.ndarray) -> np.ndarray:
    """KOV on ``ks``, one call per decade of k (the vectorized call pads every row to the widest
    binomial window, so grouping similar k is ~2× faster)."""
    out = np.empty(ks.size)
    dec = np.floor(np.log10(ks)).astype(int)
    for d in np.unique(dec):
        sel = dec == d
        out[sel] = C.optimal(eps, ks[sel], delta_total, delta)
    return out


@functools.lru_cache(maxsize=64)
def _optimal_curve(eps: float, delta: float, delta_total: float) -> np.ndarray:
    return _optimal(eps, delta, delta_total, K_GRID)


@functools.lru_cache(maxsize=64)
def _rdp_curve(mechanism, delta_total: float) -> np.ndarray:
    """k·ε̂(α) of the mechanism (Mironov 2017, Prop. 1) converted at δ′ (improved conversion)."""
    curve = np.asarray(mechanism.rdp(ALPHAS), dtype=np.float64)
    total = C.rdp([curve], k=K_GRID[:, None])
    return np.asarray(CV.rdp_to_approx(ALPHAS, total, delta_total), dtype=np.float64)


def _tight_values(mechanism, ks: np.ndarray, delta_total: float) -> np.ndarray:
    """compose(mechanism, k).epsilon(δ′) for every k in ``ks``:
    :func:`dpexplore.accounting.composition.compose_epsilon` (vectorized closed forms for the Gaussian and
    RR; one PLD per k for Laplace, capped by KOV there)."""
    return np.asarray(C.compose_epsilon(mechanism, ks, delta_total), dtype=float)


@functools.lru_cache(maxsize=512)
def _tight_at(mechanism, k: int, delta_total: float) -> float:
    return float(_tight_values(mechanism, np.array([k], dtype=np.int64), delta_total)[0])


@functools.lru_cache(maxsize=64)
def _tight_curve(mechanism, delta_total: float):
    # a closed form for every k (exactly μ-GDP, or randomized response's profile): the whole k grid
    closed = mechanism._gdp_mu() is not None or mechanism._pure_eps() is not None
    ks = K_GRID if closed else K_TIGHT_PLD
    return ks, _tight_values(mechanism, ks, delta_total)


@functools.lru_cache(maxsize=16)
def _crossovers(eps: float, delta: float, delta_total: float) -> tuple:
    """The first integer k ≤ 10⁴ at which each closed form is strictly below basic."""
    cf = _closed_forms(eps, delta, delta_total, _K_ALL)
    out = []
    for name in _CROSS:
        better = cf[name] < cf["basic"]
        if better.any():
            i = int(np.argmax(better))
            out.append((name, int(_K_ALL[i]), float(cf["basic"][i])))
    return tuple(out)


@functools.lru_cache(maxsize=64)
def _noise_curves(eps_budget: float, delta_total: float) -> dict:
    """Laplace scale b = 1/ε_step per sensitivity-1 query for k steps within (ε_T, δ′) (Steinke 2022):
    :func:`dpexplore.accounting.composition.per_step_laplace_scale` for each theorem."""
    out = {}
    for name in ("basic", "advanced", "advanced_pure", "zcdp", "steinke"):
        out[name] = (
            K_GRID,
            np.asarray(C.per_step_laplace_scale(eps_budget, delta_total, K_GRID, theorem=name), dtype=float),
        )
    out["optimal"] = (
        K_TIGHT_PLD,
        np.asarray(C.per_step_laplace_scale(eps_budget, delta_total, K_TIGHT_PLD, theorem="optimal"), dtype=float),
    )
    return {name: out[name] for name in NOISE_CURVES}


def _at_k_value(name, eps, delta, delta_total, mech, k):
    """One theorem's total ε at a k that is not on the cached grids."""
    ks = np.array([k], dtype=np.int64)
    if name in ("basic", "advanced", "advanced_pure", "zcdp"):
        return float(_closed_forms(eps, delta, delta_total, ks)[name][0])
    if name == "optimal":
        return float(C.optimal(eps, k, delta_total, delta))
    if name == "rdp":
        curve = np.asarray(mech.rdp(ALPHAS), dtype=np.float64)
        return float(CV.rdp_to_approx(ALPHAS, C.rdp([curve], k=k), delta_total))
    return _tight_at(mech, k, delta_total)


def _lookup(ks, values, k):
    i = int(np.searchsorted(ks, k))
    if i < ks.size and ks[i] == k:
        return float(values[i])
    return None


@functools.lru_cache(maxsize=512)
def _noise_at(name, eps_budget, delta_total, k):
    return float(C.per_step_laplace_scale(eps_budget, delta_total, k, theorem=name))


def compute_composition(spec: CompositionSpec) -> CompositionResult:
    """Every array of both plots and the readout for one setting (one call per slider step).

    The theorems and where they come from are listed in the module docstring; the numbers are the
    backend's: :func:`dpexplore.accounting.composition.basic` (kε), ``advanced``, ``advanced_pure``,
    ``optimal``, ``rdp`` + ``conversions.rdp_to_approx`` (improved), ``zcdp`` +
    ``conversions.zcdp_to_approx``, ``compose(...).epsilon`` and ``per_step_budget``; all are
    rounded to the safe side by the backend (ε up, per-step budgets down). A total ε of inf means
    the theorem gives no bound at that k (the per-step δ's alone exceed δ′); the plots leave a gap.

    Raises ``ValueError`` (naming the parameter) for ε ≤ 0, δ ∉ [0, 1), δ′ ∉ [0, 1), δ > δ′,
    k ∉ {1, …, 10⁴}, ε_T ≤ 0, an unknown mechanism, or the Gaussian with δ = 0.

    >>> r = compute_composition(CompositionSpec(eps=0.1, delta=1e-8, k=10, delta_total=1e-5))
    >>> r.at_k["basic"], r.delta_spent["basic"]
    (1.0, 'kδ = 1e-07')
    >>> compute_composition(CompositionSpec(delta=1e-3, delta_total=1e-6))
    Traceback (most recent call last):
    ...
    ValueError: delta = 0.001 per step is larger than the total budget delta_total = 1e-06: not even one step fits; lower δ per step or raise δ′
    """
    check_params(spec, PARAMS)
    eps, delta, delta_total, k, eps_budget = (
        float(spec.eps),
        float(spec.delta),
        float(spec.delta_total),
        int(spec.k),
        float(spec.eps_budget),
    )
    if delta > delta_total:
        raise ValueError(
            f"delta = {delta:g} per step is larger than the total budget delta_total = "
            f"{delta_total:g}: not even one step fits; lower δ per step or raise δ′"
        )
    mech = make_mechanism(spec.mechanism, eps, delta)

    curves = {name: (K_GRID, v) for name, v in _closed_forms(eps, delta, delta_total, K_GRID).items()}
    curves["optimal"] = (K_GRID, _optimal_curve(eps, delta, delta_total))
    curves["rdp"] = (K_GRID, _rdp_curve(mech, delta_total))
    curves["tight"] = _tight_curve(mech, delta_total)
    curves = {name: curves[name] for name in THEOREMS}

    at_k = {}
    for name, (ks, vals) in curves.items():
        v = _lookup(ks, vals, k)
        at_k[name] = v if v is not None else _at_k_value(name, eps, delta, delta_total, mech, k)

    slack = float(C.delta_slack(delta, delta_total, k))
    s_txt = f"kδ = {k * delta:.3g} + slack δ_s = {slack:.3g}" if slack > 0 else "kδ ≥ δ′: no slack left"
    delta_spent = {
        "basic": f"kδ = {k * delta:.3g}",
        "advanced": s_txt,
        "advanced_pure": s_txt,
        "zcdp": s_txt,
        "rdp": f"δ′ = {delta_total:.3g} (the mechanism's own RDP)",
        "optimal": f"1 − (1 − δ)^k (1 − δ_KOV) ≤ δ′ = {delta_total:.3g}",
        "tight": f"δ′ = {delta_total:.3g} (the mechanism's exact profile)",
    }

    noise = _noise_curves(eps_budget, delta_total)
    noise_at_k = {}
    for name, (ks, vals) in noise.items():
        v = _lookup(ks, vals, k)
        noise_at_k[name] = v if v is not None else _noise_at(name, eps_budget, delta_total, k)

    notes = []
    if delta > 0 and K_MAX * delta >= delta_total:
        kmax = int(np.floor(delta_total / delta))
        notes.append(
            f"With δ = {delta:.3g} per step the k per-step δ's alone use up δ′ = {delta_total:.3g} "
            f"beyond k = {kmax:,}: basic, advanced, zCDP and KOV give no bound there (gaps); "
            "the RDP and tight curves account for the mechanism itself and spend no per-step δ."
        )
    if any(np.any(v <= 1e-300) for _, v in curves.values()):
        notes.append(
            "A total ε of 0 (δ′ already covers the whole privacy loss) cannot be drawn on a "
            "log axis and is left as a gap."
        )
    return CompositionResult(
        spec, mech, curves, at_k, delta_spent, list(_crossovers(eps, delta, delta_total)), noise, noise_at_k, notes
    )


@functools.lru_cache(maxsize=16)
def _one_run(mechanism, delta_total: float):
    """One run's curves and ε(δ′) (cached: a step of k does not change them)."""
    return (
        profile_curves(mechanism.profile, f"one run: {_mech_text(mechanism)}"),
        float(mechanism.profile.epsilon(delta_total)),
    )


@functools.lru_cache(maxsize=64)
def k_runs_curves(mechanism, k: int, delta_total: float):
    """The curves of the k-runs tabs: one run of ``mechanism`` and ``compose(mechanism, k)``
    (:func:`dpexplore.ui.views.profile_curves`: δ(ε) on 60 points, β and TPR from them), each
    with its ε(δ′) and the μ of its GDP curve — exact for the Gaussian (μ = √k Δ/σ, Dong, Roth &
    Su 2022, Corollary 3.3), else the μ whose curve passes through (ε(δ′), δ′). Cached per
    (mechanism, k, δ′); the composed profile is the one the "tight" row reads (``compose`` caches
    it), so no composition is computed twice.

    >>> c, eps_at, mus, hows = k_runs_curves(Gaussian(2.0), 4, 1e-6)
    >>> mus, hows
    ((0.5, 1.0), ('exact', 'exact'))
    """
    k = int(check_k(k, "k"))
    many = C.compose(mechanism, k) if k > 1 else mechanism.profile
    one, one_eps = _one_run(mechanism, delta_total)
    curves = (one, profile_curves(many, f"k = {k:,} runs: compose(mechanism, {k})"))
    eps_at = (one_eps, _tight_at(mechanism, k, delta_total))
    if mechanism._gdp_mu() is not None:  # exactly GDP: compose's GaussianDPProfile gives μ
        mus = (C.compose(mechanism, 1).mu, C.compose(mechanism, k).mu)
        return curves, eps_at, mus, ("exact", "exact")
    how = f"through ε(δ′ = {delta_total:.3g})"
    return curves, eps_at, matched_mu(eps_at, delta_total), (how, how)


def _k_runs_of_spec(spec: CompositionSpec):
    """:func:`k_runs_curves` of a setting (the prefetcher's task; a bad setting raises, ignored)."""
    return k_runs_curves(make_mechanism(spec.mechanism, spec.eps, spec.delta), spec.k, spec.delta_total)


#: the tab titles of the k-runs views
K_RUNS_TABS = ("k runs: privacy profile", "k runs: trade-off", "k runs: attack risk")


# ------------------------------------------------------------------------------------------------
# the controller
# ------------------------------------------------------------------------------------------------
def _display(y) -> np.ndarray:
    """Values for a log axis: 0 (and the few denormals KOV rounds an exact 0 up to, < 1e-300) and
    inf become NaN (gaps; to_json sends them as None)."""
    y = np.asarray(y, dtype=np.float64)
    return np.where(np.isfinite(y) & (y > 1e-300), y, np.nan)


def _mech_text(m) -> str:
    if isinstance(m, Laplace):
        return f"Laplace with scale b = {float(m.scale):.4g} (Δ = {float(m.sensitivity):g})"
    if isinstance(m, Gaussian):
        return f"Gaussian with σ = {float(m.sigma):.4g} (Δ = {float(m.sensitivity):g})"
    return f"randomized response RR(ε = {float(m.eps):.4g})"


def _fmt(x) -> str:
    if x is None or not math.isfinite(x):
        return "— (no bound)"
    return f"{x:.4g}"


class CompositionController(Controller):
    """Sliders ε, δ (+ 'δ = 0'), k, δ′, ε_T and the mechanism dropdown → :func:`compute_composition`
    → the main plot, the noise plot and the readout table (all updated in place)."""

    compute = staticmethod(compute_composition)
    prefetch = True  # the next slider step reads the cache (controls.PREFETCHER)
    cache_size = 128

    def __init__(self, controls, message=None):
        self.readout = W.HTML()
        self.notes = W.HTML()
        self.k_runs_open = False  # a k-runs tab is shown: its figures follow every step
        self._k_runs_drawn = None  # the spec the k-runs figures show
        super().__init__(controls, message)
        self._fill_text(self.result)

    def read_spec(self) -> CompositionSpec:
        c = self.controls
        values = param_values(c, PARAMS)
        if c["pure"].value:
            values["delta"] = 0.0
        return CompositionSpec(**values, mechanism=str(c["mechanism"].value))

    # -- traces -----------------------------------------------------------------------------
    @staticmethod
    def _k_curve(name: str, label: str, ks, vals, width=2, present: str | None = None) -> dict:
        """Curve ``name`` against k: a curve computed at fewer k than the grid (every 9th) is
        marked as such and draws its points."""
        at = " (at 9 k)" if ks.size < K_GRID.size else ""
        return line_trace(
            label + at,
            ks,
            _display(vals),
            _COLOURS[name],
            width,
            _DASH.get(name),
            mode="lines+markers" if at else "lines",
            marker={"size": 6},
            **({} if present is None else {"meta": {"present_name": present + at}}),
        )

    @classmethod
    def _main_traces(cls, r: CompositionResult) -> list[dict]:
        traces = [
            cls._k_curve(name, THEOREMS[name], ks, vals, 3 if name == "tight" else 2, PRESENT_THEOREMS[name])
            for name, (ks, vals) in r.curves.items()
        ]
        # the ◆ and ✖ markers have fixed legend names (their values are in the readout table):
        # the legend's text does not change with k, and no annotation box competes with it; the
        # legend draws the marker itself (a name starting with it showed "◆ ◆" on the projector)
        traces.append(
            cls._at_k(
                "each bound at the chosen k",
                r.spec.k,
                r.at_k,
                THEOREMS,
                "ε",
                11,
                meta={"present_name": "at the chosen k"},
            )
        )
        traces.append(
            marker_trace(
                "first k where a bound is below basic",
                [c[1] for c in r.crossovers],
                [c[2] for c in r.crossovers],
                "#000000",
                "x",
                12,
                meta={"present_name": "first k below basic"},
                text=[_SHORT[c[0]] for c in r.crossovers],
                hovertemplate="%{text} &lt; basic from k = %{x}<extra></extra>",
            )
        )
        return traces

    @staticmethod
    def _main_layout(r: CompositionResult) -> dict:
        # the chosen k as a dotted vertical line (the crossovers are listed in the readout)
        return {
            "shapes": [
                {
                    "type": "line",
                    "x0": r.spec.k,
                    "x1": r.spec.k,
                    "xref": "x",
                    "yref": "paper",
                    "y0": 0,
                    "y1": 1,
                    "line": {"color": "#555555", "width": 1, "dash": "dot"},
                }
            ],
        }

    @staticmethod
    def _at_k(name: str, k: int, values: dict, labels: dict, symbol: str, size: int, **extra) -> dict:
        """◆ each curve's value at the chosen k, in its curve's colour (hover: its label and
        ``symbol`` = the value)."""
        names = list(values)
        return marker_trace(
            name,
            [k] * len(names),
            _display([values[n] for n in names]),
            [_COLOURS[n] for n in names],
            "diamond",
            size,
            outline="#000000",
            text=[labels[n] for n in names],
            hovertemplate=f"%{{text}}: {symbol} = %{{y:.4g}}<extra></extra>",
            **extra,
        )

    @classmethod
    def _noise_traces(cls, r: CompositionResult) -> list[dict]:
        traces = [cls._k_curve(name, NOISE_CURVES[name], ks, vals) for name, (ks, vals) in r.noise.items()]
        k = r.spec.k
        traces.append(cls._at_k(f"at k = {k:,}", k, r.noise_at_k, NOISE_CURVES, "b", 10, showlegend=False))
        return traces

    def figures(self, r: CompositionResult) -> list[PlotlyWidget]:
        # both plots against k: log axes (k without powers of ten), the legend on the right
        against_k = {
            "xaxis": {"type": "log"},
            "yaxis": LOG_AXIS,
            "legend": {"orientation": "v", "x": 1.02, "y": 1, "font": {"size": 11}},
        }
        main = PlotlyWidget(
            data=self._main_traces(r),
            layout=axes_layout(
                "Total ε of k composed (ε, δ)-DP steps, all at total δ′",
                "k (number of composed steps)",
                "total ε (nats)",
                **against_k,
                height=480,
                margin={"r": 20},
                **self._main_layout(r),
            ),
        )
        noise = PlotlyWidget(
            data=self._noise_traces(r),
            layout=axes_layout(
                "Noise per query for a fixed total budget (ε_T, δ′); ◆ at the chosen k",
                "k (number of sensitivity-1 queries)",
                "Laplace scale b per query",
                **against_k,
                height=420,
                shapes=self._main_layout(r)["shapes"],
            ),
        )
        views = self._k_runs_traces(r)
        self._k_runs_drawn = r.spec
        self.k_runs_figs = [
            PlotlyWidget(
                data=views["profile"],
                layout=profile_layout(
                    "One run and k runs of the mechanism: privacy profiles δ(ε) and the closest μ-GDP curves"
                ),
            ),
            PlotlyWidget(
                data=views["tradeoff"],
                layout=tradeoff_layout("One run and k runs: the best test's type II error β at type I error α"),
            ),
            PlotlyWidget(
                data=views["attack"],
                layout=attack_layout("One run and k runs: the best membership test's TPR at each FPR (upper bound)"),
            ),
        ]
        return [main, noise, *self.k_runs_figs]

    @staticmethod
    def _k_runs_traces(r: CompositionResult) -> dict:
        """The shared views (those of ``dpexplore.explore``) of one run and k runs."""
        curves, eps_at, mus, hows = k_runs_curves(r.mechanism, r.spec.k, r.spec.delta_total)
        return object_traces(curves, mus, hows, eps_at, r.spec.delta_total)

    def prefetch_tasks(self, spec: CompositionSpec) -> list:
        """While a k-runs tab is open, the neighbour's k-runs curves too (after its compute)."""
        tasks = super().prefetch_tasks(spec)
        return tasks + [(_k_runs_of_spec, spec)] if self.k_runs_open else tasks

    def show_k_runs(self, shown: bool) -> None:
        """A k-runs tab was opened (``True``: draw the current setting if not yet drawn) or
        closed (``False``: the next steps skip the k-runs curves)."""
        self.k_runs_open = bool(shown)
        if self.k_runs_open and self.last_error is None:
            self._render_k_runs(self.result)

    def _render_k_runs(self, r: CompositionResult) -> None:
        if self._k_runs_drawn == r.spec:
            return
        views = self._k_runs_traces(r)
        for fig, key in zip(self.k_runs_figs, ("profile", "tradeoff", "attack")):
            fig.update(data=views[key])
        self._k_runs_drawn = r.spec

    def render(self, r: CompositionResult) -> None:
        main, noise = self.figs[:2]
        layout = self._main_layout(r)
        main.update(data=self._main_traces(r), layout=layout)
        noise.update(data=self._noise_traces(r), layout={"shapes": layout["shapes"]})
        if self.k_runs_open:
            self._render_k_runs(r)
        self._fill_text(r)

    def snippet(self) -> str:
        """The readout's totals at the chosen k (and the noise per query), with the public API."""
        s = self.spec
        mech = {
            "laplace": "mechanisms.Laplace.calibrate(eps)",
            "gaussian": "mechanisms.Gaussian.calibrate(eps, delta)",
            "rr": "mechanisms.RandomizedResponse(eps)",
        }[s.mechanism]
        return (
            "import numpy as np\n"
            "from dpexplore import mechanisms\nfrom dpexplore.accounting import composition as C, conversions\n"
            "from dpexplore.apps.composition_explorer import ALPHAS   # the Renyi orders of the app\n\n"
            "# each of k steps is (eps, delta)-DP; delta_total: delta' of the whole run\n"
            + snippet_assign(s, PARAMS)
            + "slack = C.delta_slack(delta, delta_total, k)   # what is left of delta' after k*delta\n"
            f"mech = {mech}\n"
            "total = {\n"
            "    'basic': C.basic(eps, delta, k=k)[0],\n"
            "    'advanced (DRV)': C.advanced(eps, 0.0, k, slack)[0],\n"
            "    'advanced from pure DP': C.advanced_pure(eps, slack, k=k),\n"
            "    'zCDP': conversions.zcdp_to_approx(C.zcdp(conversions.pure_to_zcdp(eps), k=k), slack),\n"
            "    'RDP of the mechanism': conversions.rdp_to_approx(\n"
            "        ALPHAS, C.rdp([mech.rdp(ALPHAS)], k=k), delta_total),\n"
            "    'optimal (KOV)': C.optimal(eps, k, delta_total, delta),\n"
            "}\n"
            "for name, e in total.items():\n"
            "    print(f'{name}: total eps = {float(e):.4g}')\n"
            "for theorem in ('basic', 'steinke', 'advanced', 'advanced_pure', 'zcdp', 'optimal'):\n"
            "    b = C.per_step_laplace_scale(eps_budget, delta_total, k, theorem=theorem)\n"
            "    print(f'noise per query, {theorem}: Laplace scale b = {float(b):.4g}')\n"
        )

    def _fill_text(self, r: CompositionResult) -> None:
        s = r.spec
        rows = "".join(
            f"<tr><td style='color:{_COLOURS[n]}' aria-hidden='true'>■</td><td>{_breakable(THEOREMS[n])}</td>"
            f"<td style='text-align:right'><b>{_fmt(r.at_k[n])}</b></td><td>{r.delta_spent[n]}</td></tr>"
            for n in THEOREMS
        )
        noise_rows = "".join(
            f"<tr><td style='color:{_COLOURS[n]}' aria-hidden='true'>■</td><td>{_breakable(NOISE_CURVES[n])}</td>"
            f"<td style='text-align:right'><b>{_fmt(r.noise_at_k[n])}</b></td></tr>"
            for n in NOISE_CURVES
        )
        mech = _mech_text(r.mechanism)
        self.readout.value = (
            f"<div class='dpexplore-readout'><b>At k = {s.k:,}</b> steps of ({s.eps:.3g}, {s.delta:.3g})-DP, "
            f"total δ′ = {s.delta_total:.3g}; mechanism {mech}"
            "<table class='dpexplore-table' style='border-collapse:separate;border-spacing:10px 2px;margin:4px 0'><tr><th></th><th style='text-align:left'>theorem</th>"
            "<th>total ε</th><th style='text-align:left'>how δ′ is used</th></tr>"
            f"{rows}</table>"
            f"<b>Noise per query</b> for k = {s.k:,} queries within (ε_T = {s.eps_budget:.3g}, δ′ = {s.delta_total:.3g}):"
            "<table class='dpexplore-table' style='border-collapse:separate;border-spacing:10px 2px;margin:4px 0'><tr><th></th><th style='text-align:left'>theorem</th>"
            f"<th>Laplace scale b</th></tr>{noise_rows}</table>"
            + (
                (
                    "✖ <b>Below basic</b> from "
                    + "; ".join(
                        f"k = {k:,} ({_SHORT[name]})" for name, k, _ in sorted(r.crossovers, key=lambda c: c[1])
                    )
                    + "."
                )
                if r.crossovers
                else ""
            )
            + "</div>"
        )
        self.notes.value = "".join(f"<div class='dpexplore-note' style='color:#00466e'>{n}</div>" for n in r.notes)


# ------------------------------------------------------------------------------------------------
# the app
# ------------------------------------------------------------------------------------------------
_FORMULAS = r"""
<p>Each of k steps is (ε, δ)-DP; every curve is the total ε at the <b>same total δ budget δ′</b>
(the δ each theorem spends is in the table). δ<sub>s</sub> = δ′ − kδ is the slack left after the
k per-step δ's.</p>
<ul>
<li><b>Basic</b> (Bassi 2019, slide “Composition of several DP mechanisms”; Steinke 2022, Theorem “Basic Composition”):
$\varepsilon_{tot} = k\varepsilon$, $\delta_{tot} = k\delta \le \delta'$.</li>
<li><b>Advanced</b> (Dwork, Rothblum &amp; Vadhan 2010; Bassi 2019, slide “Advanced adaptive composition”):
$\varepsilon_{tot} = \sqrt{2k\ln(1/\delta_s)}\,\varepsilon + k\varepsilon(e^{\varepsilon}-1)$,
$\delta_{tot} = k\delta + \delta_s$.</li>
<li><b>Advanced from pure DP</b> (Steinke 2022, Theorem “Advanced Composition Starting from Pure DP”, footnote 1):
$\varepsilon_{tot} = \tfrac12 k\varepsilon^2 + \sqrt{2\log(1/\delta_s)\,k\varepsilon^2}$,
$\delta_{tot} = k\delta + \delta_s$.</li>
<li><b>zCDP</b> (Steinke 2024, Theorem 5; Steinke 2022, footnote 2): $\rho = k\,\varepsilon\tanh(\varepsilon/2)$,
$\varepsilon_{tot} = \rho + 2\sqrt{\rho\log(1/\delta_s)}$, $\delta_{tot} = k\delta + \delta_s$.</li>
<li><b>RDP</b> of the chosen mechanism (Mironov 2017, Prop. 1; conversion of Balle et al. 2020,
Thm 21): $\hat\varepsilon_{tot}(\alpha) = k\,\hat\varepsilon(\alpha)$,
$\varepsilon_{tot} = \min_\alpha \hat\varepsilon_{tot}(\alpha) + \log(1-1/\alpha) - \frac{\log\delta' + \log\alpha}{\alpha-1}$.</li>
<li><b>Optimal</b> (Kairouz, Oh &amp; Viswanath 2015, Thm 3.3):
$\delta_{KOV}(\varepsilon_{tot}) = (1+e^{\varepsilon})^{-k}\sum_{l:(2l-k)\varepsilon>\varepsilon_{tot}}\binom{k}{l}
\left(e^{l\varepsilon} - e^{\varepsilon_{tot}}e^{(k-l)\varepsilon}\right)$ with
$1-(1-\delta)^k(1-\delta_{KOV}) \le \delta'$.</li>
<li><b>Tight</b>: the exact profile of k runs of the mechanism at δ′ — Gaussian: $\sqrt{k}\,\Delta/\sigma$-GDP
(Liu et al. 2022, Thm 3.1); RR: Kairouz, Oh &amp; Viswanath 2015; Laplace: numerical privacy-loss distribution (pessimistic), computed at 9 values of k
(the minimum with KOV, also valid since Laplace(Δ/ε) is ε-DP, where δ′ is below the PLD's numerical floor ≈ 1e-16).</li>
</ul>
<p><b>Noise view</b> (Steinke 2022): for k sensitivity-1 queries within a total budget (ε<sub>T</sub>, δ′) each query
gets Laplace(1/ε<sub>step</sub>): basic gives $b = k/\varepsilon_T = \Theta(k)$, advanced composition
$b = \sqrt{k/(2\rho)} = \Theta(\sqrt{k})$ with $\rho = \frac{\varepsilon_T^2}{4\log(1/\delta')+4\varepsilon_T}$;
the other curves invert each theorem exactly (largest ε<sub>step</sub>, rounded down).</p>
"""


INFO = AppInfo(
    slug="composition_explorer",
    title="Composition explorer: basic, advanced, optimal, RDP, zCDP and tight",
    lead=(
        "Run k differentially private steps on the same data: how fast does the total ε grow "
        "under each composition theorem, and how much noise per query does a fixed budget allow?"
    ),
    theory=_FORMULAS
    + (
        "<p><b>The k-runs tabs</b> show one run of the mechanism next to compose(mechanism, k) in "
        "the views of <code>dpexplore.explore</code>: privacy profiles δ(ε) with the closest μ-GDP "
        "curve (dashed: the exact μ = √k Δ/σ for the Gaussian, "
        + cite("dong2022gaussian", "Corollary 3.3")
        + "; otherwise the μ whose curve passes through (ε(δ′), δ′), "
        + cite("dong2022gaussian", "Corollary 2.13")
        + "), trade-off curves, and the best membership "
        "test's TPR at each FPR (" + cite("kulynych2024attack") + "), both read from δ(ε) on the "
        "plotted ε grid (" + cite("dong2022gaussian", "Proposition 2.5") + "): a finite grid "
        "overstates the TPR, the safe side. They are computed while one of these tabs is open.</p>"
    ),
)


def build_composition_explorer(
    eps: float = 0.1, k: int = 100, delta_total: float = 1e-6, mechanism: str = "laplace", eps_budget: float = 1.0
) -> AppShell:
    """The composition explorer in the shell: controls, readout table, the main plot (total ε
    against k), the noise plot and the three k-runs views (drawn while one of them is open).

    >>> app = build_composition_explorer()
    >>> [t for t in (app.widgets()) if isinstance(t, W.Tab)][0].get_title(2)
    'k runs: privacy profile'
    >>> len(app.controller.figs)
    5
    """
    slow = {"continuous_update": False}
    controls = {
        "eps": param_slider(PARAMS["eps"], eps, **slow),
        "pure": W.Checkbox(value=True, description="δ = 0 per step (pure ε-DP steps)", indent=False),
        "delta": param_slider(PARAMS["delta"], 1e-9, **slow),
        "k": param_slider(PARAMS["k"], k),
        "delta_total": param_slider(PARAMS["delta_total"], delta_total, **slow),
        "mechanism": dropdown(
            "mechanism (tight and RDP curves)",
            [(label, key) for key, label in MECHANISMS.items()],
            mechanism,
            width="520px",
        ),
        "eps_budget": param_slider(PARAMS["eps_budget"], eps_budget, **slow),
    }
    controls["delta"].disabled = controls["pure"].value

    def _toggle(change):
        controls["delta"].disabled = bool(change["new"])

    controls["pure"].observe(_toggle, names="value")
    ctrl = CompositionController(controls, MessageArea())
    main, noise, *k_runs = ctrl.figs
    plots = [("Total ε against k", [main]), ("Noise per query", [noise])]
    plots += [(title, [fig]) for title, fig in zip(K_RUNS_TABS, k_runs)]
    app = app_shell(
        INFO, ctrl, controls=controls, plots=plots, readouts=[ctrl.readout, ctrl.notes], panel_width="430px"
    )
    tabs = next(w for w in app.widgets() if isinstance(w, W.Tab))

    def _on_tab(change):
        ctrl.show_k_runs((change["new"] or 0) >= 2)

    tabs.observe(_on_tab, names="selected_index")
    return app
