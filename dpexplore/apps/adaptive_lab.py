"""Adaptive data analysis lab (Bassi 2019, slide "Generalization and holdout"; Dwork, Feldman, Hardt, Pitassi,
Reingold & Roth 2015).

Three things on one page, one controller:

1. **Overfitting by adaptive selection** (Bassi 2019, slide "Unrealistic example": every fixed query
   generalizes, the query chosen *after looking at the data* does not). The analyst keeps the
   features most correlated with the label on the data and builds a majority-vote classifier
   f_k(x) = sign(Σ_{top k} sign(c_j) x_j); features and label are independent fair coins, so its
   true accuracy is 1/2, yet on the data used for the selection it looks good
   (:func:`dpexplore.teaching.simulate_adaptive_overfitting`).
2. **Reusing a holdout naively vs Thresholdout** (Bassi 2019, slide "Reusable holdout", "Thresholdout"): the
   holdout accuracy reported by naive reuse drifts up with the fresh-data accuracy flat at 50 %;
   Thresholdout's reported accuracy tracks fresh data. Its privacy comes from
   :meth:`dpexplore.teaching.Thresholdout.privacy` (Bassi 2019, slide "Thresholdout (cont.)"):
   ε = min(2B/(σn), 2[sqrt(2B ln(2/δ)) ε₀ + B ε₀ (e^{ε₀} − 1)]), ε₀ = 1/(σn).
3. **Generalization-bound calculator** (Bassi 2019, slide "Corollary for statistical queries",
   "Generalization via max-information"): the ε an algorithm may have for its output query to
   be within τ of the truth, and the failure probability each route guarantees, at n samples:

   * via DP (Corollary for statistical queries): ε ≤ sqrt(τ² − ln 2/(2n)) ⇒ P ≤ 3√2 e^{−nτ²};
   * via pure max-information: ε = τ² ⇒ I_∞ ≤ (log₂ e) n τ² bits ⇒ P ≤ 2 e^{−nτ²};
   * via approximate max-information ("take 2"): ε = τ, β = 2e^{−nτ²} ⇒
     P ≤ 2 exp((1/√2 − 3/2) nτ²) + 2 e^{−nτ²};
   * the general theorem at the chosen β: ε ≤ sqrt(ln(1/β)/(2n)) ⇒ P[bad] ≤ 3√β, and the
     β-approximate max-information (log₂ e)(ε²n/2 + ε sqrt(n ln(2/β)/2)) of that ε-DP algorithm.

The simulation is seeded (``seed``; one ``numpy.random.default_rng(seed)`` per method) and
cached apart from the calculator, so moving τ, n or β never reruns it; runs longer than a second
show a progress bar.

>>> r = compute_adaptive(AdaptiveSpec(n=300, d=600, rounds=5, seed=0))
>>> r.naive.k.tolist()
[3, 6, 9, 12, 15]
>>> round(r.sq_eps, 6)          # sqrt(0.01² − ln 2/(2·10⁵))
0.009825
>>> app = build_adaptive_lab(n=300, d=600, rounds=5)
>>> type(app).__name__
'AppShell'
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ipywidgets as W
import numpy as np

from ..teaching import (
    TAKE2_BETA_FLOOR,
    GeneralizationBounds,
    OverfittingResult,
    Thresholdout,
    generalization_bounds,
    simulate_adaptive_overfitting,
)
from ..ui.controls import OKABE_ITO, MessageArea, param_slider
from ..ui.plotwidget import PlotlyWidget
from ..ui.shell import AppInfo, AppShell, app_shell, stacked_table
from ..ui.staged import Memo, StagedController
from ..ui.views import line_trace, marker_trace, panel_titles
from ._checks import Param, check_params, params_by_name, param_values, snippet_assign

__all__ = [
    "AdaptiveSpec",
    "AdaptiveResult",
    "compute_adaptive",
    "simulate_pair",
    "calculator",
    "AdaptiveLabController",
    "build_adaptive_lab",
    "MAX_CELLS",
    "N_RANGE",
    "D_RANGE",
    "GEN_N_GRID",
    "Memo",
    "StagedController",
]

#: simulation size limit: n·d ≤ MAX_CELLS (3 n d bytes of ±1 data, ~1 s per 10⁷ cells per method)
MAX_CELLS = 25_000000
N_RANGE = (100, 10000)  # defaults are exact grid points: the page shows the values asked for
D_RANGE = (200, 20000)  # 2000 lies on the slider's log grid (front ends snap values to it)
ROUNDS_RANGE = (2, 30)
TAU_RANGE = (1e-3, 0.5)
GEN_N_RANGE = (10, 100_000000)
BETA_RANGE = (1e-12, 0.5)
DELTA_RANGE = (1e-12, 0.1)
#: the lab's numeric parameters (its sliders); compute accepts more than a slider offers
#: (``accept``), the simulation's limits are checked apart (:func:`_check_sim`)
PARAMS = params_by_name(
    Param("n", *N_RANGE, "log", unit="rows per set", integer=True, steps_per_decade=10, accept=(1, None)),
    Param("d", *D_RANGE, "log", unit="features", integer=True, steps_per_decade=10, accept=(1, None)),
    Param("rounds", *ROUNDS_RANGE, unit="values of k", integer=True, accept=(1, None)),
    Param("seed", 0, 999, unit="random seed", integer=True, accept=(0, None)),
    Param(
        "delta",
        *DELTA_RANGE,
        "log",
        "δ",
        "Thresholdout's δ",
        steps_per_decade=4,
        readout_format=".1e",
        accept=(0.0, 1.0),
        interval="()",
    ),
    Param("tau", *TAU_RANGE, "log", "τ", "tolerance", steps_per_decade=20, accept=(0.0, None), interval="()"),
    Param("gen_n", *GEN_N_RANGE, "log", "n_gen", "samples", integer=True, steps_per_decade=10, accept=(1, None)),
    Param(
        "beta",
        *BETA_RANGE,
        "log",
        "β",
        "probability",
        steps_per_decade=4,
        readout_format=".1e",
        accept=(0.0, 1.0),
        interval="()",
    ),
)
_SIMULATED = "the simulation's curves come from seeded runs of teaching.simulate_adaptive_overfitting"
#: parameters the "Reproduce in Python" snippet (the calculator's numbers) leaves out, and why
SNIPPET_SKIP = {name: _SIMULATED for name in ("n", "d", "rounds", "seed", "delta")}
#: β of "take 2" is 2e^{−nτ²}, floored by the backend at this (teaching.TAKE2_BETA_FLOOR)
BETA_FLOOR = TAKE2_BETA_FLOOR
#: n grid of the calculator's plots
GEN_N_GRID = np.unique(np.round(np.logspace(1, 8, 241)))


# ------------------------------------------------------------------------------------------------
# spec, simulation, calculator
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AdaptiveSpec:
    """The lab's parameters: simulation (``n`` rows per set, ``d`` features, ``rounds`` values of
    k, ``seed``), Thresholdout's reporting δ (``delta``), calculator (``tau``, ``gen_n``, ``beta``)."""

    n: int = 1000
    d: int = 2000
    rounds: int = 10
    seed: int = 0
    delta: float = 1e-6
    tau: float = 0.01
    gen_n: int = 100000
    beta: float = 1e-3


def _check_sim(n: int, d: int, rounds: int, seed: int) -> None:
    if n * d > MAX_CELLS:
        raise ValueError(
            f"n·d = {n * d:,} is too large for an interactive step (limit {MAX_CELLS:,}: about "
            f"{3 * MAX_CELLS / 1e6:.0f} MB of data and several seconds); lower n or d"
        )
    if rounds > max(1, d // 40):
        raise ValueError(
            f"rounds = {rounds} exceeds the largest k = d // 40 = {max(1, d // 40)}: raise d or lower rounds"
        )
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got seed = {seed}")


def _simulate(n: int, d: int, rounds: int, seed: int, method: str) -> OverfittingResult:
    _check_sim(n, d, rounds, seed)
    return simulate_adaptive_overfitting(n, d, rounds, np.random.default_rng(seed), method=method)


#: cached simulations, keyed (n, d, rounds, seed, method)
SIMULATIONS = Memo(_simulate, maxsize=16)


def simulate_pair(n: int, d: int, rounds: int, seed: int) -> tuple[OverfittingResult, OverfittingResult]:
    """Naive reuse and Thresholdout on the same settings, each with ``default_rng(seed)``
    (the experiment of Dwork et al. 2015; :func:`dpexplore.teaching.simulate_adaptive_overfitting`,
    default Thresholdout parameters T = 2/√n, σ = 1/(2√n) on the [0, 1] query scale). Cached.

    >>> a, b = simulate_pair(200, 400, 4, 1)
    >>> a.method, b.method, a.k.tolist()
    ('naive', 'thresholdout', [2, 5, 8, 10])
    """
    return SIMULATIONS(n, d, rounds, seed, "naive"), SIMULATIONS(n, d, rounds, seed, "thresholdout")


def thresholdout_spec(n: int, budget: int) -> Thresholdout:
    """The Thresholdout the simulation runs (T = 2/√n, σ = 1/(2√n), holdout size n) with
    ``budget`` B (Bassi 2019, slide "Thresholdout (cont.)").

    >>> thresholdout_spec(10000, 10).privacy()      # 2B/(σn) = 2·10·2/√n
    (0.4, 0.0)
    """
    return Thresholdout(threshold=2.0 / math.sqrt(n), sigma=0.5 / math.sqrt(n), budget=max(int(budget), 1), n=n)


def calculator(tau: float, n: int, beta: float) -> GeneralizationBounds:
    """Every number of the calculator readout: :func:`dpexplore.teaching.generalization_bounds`
    at one (τ, n, β) (Bassi 2019; formulas in the module docstring).

    >>> c = calculator(0.05, 10000, 1e-3)
    >>> round(c.sq_eps, 6), round(c.pure_bits, 4), round(c.gen_eps, 6)
    (0.049652, 36.0674, 0.018585)
    """
    return generalization_bounds(tau, n, beta)


def _curves(tau: float, beta: float) -> dict:
    """The calculator's routes over :data:`GEN_N_GRID` (one vectorised backend call); the
    statistical-query corollary's points where it does not apply are NaN (gaps in the plot)."""
    g = generalization_bounds(tau, GEN_N_GRID, beta)
    gap = np.where(g.sq_ok, 1.0, np.nan)
    n = GEN_N_GRID.shape
    return {
        "sq_eps": g.sq_eps * gap,
        "sq_fail": g.sq_fail * gap,
        "pure_eps": np.broadcast_to(g.pure_eps, n),
        "pure_fail": g.pure_fail,
        "take2_eps": np.broadcast_to(g.take2_eps, n),
        "take2_fail": g.take2_fail,
        "gen_eps": g.gen_eps,
        "hoeffding": g.hoeffding,
    }


CURVES = Memo(_curves, maxsize=64)


@dataclass(frozen=True)
class AdaptiveResult:
    """Everything the lab draws: both simulations, Thresholdout's privacy, the calculator."""

    spec: AdaptiveSpec
    naive: OverfittingResult
    thresholdout: OverfittingResult
    budget_used: int
    budget_set: int
    eps_pure_used: float
    eps_delta_used: float
    eps_slide_used: float
    eps_pure_set: float
    eps_delta_set: float
    calc: GeneralizationBounds
    curves: dict
    sq_eps: float | None


def _check_spec(spec: AdaptiveSpec) -> None:
    check_params(spec, PARAMS)
    _check_sim(spec.n, spec.d, spec.rounds, spec.seed)


def compute_adaptive(spec: AdaptiveSpec) -> AdaptiveResult:
    """All arrays and numbers of the lab for one setting (module docstring: results shown).
    The simulations and calculator curves come from memos, so a calculator step costs ~1 ms.

    Raises ``ValueError`` naming the parameter for n·d > :data:`MAX_CELLS`, rounds > d // 40,
    τ ≤ 0, β or δ outside (0, 1).

    >>> compute_adaptive(AdaptiveSpec(n=10000, d=10000))
    Traceback (most recent call last):
    ...
    ValueError: n·d = ... is too large for an interactive step (limit ...); lower n or d
    """
    _check_spec(spec)
    naive, to = simulate_pair(spec.n, spec.d, spec.rounds, spec.seed)
    used = to.holdout_queries_over
    budget_set = spec.d + spec.rounds  # the simulation's (never binding) budget
    t_used = thresholdout_spec(spec.n, max(used, 1))
    t_set = thresholdout_spec(spec.n, budget_set)
    calc = calculator(spec.tau, spec.gen_n, spec.beta)
    return AdaptiveResult(
        spec,
        naive,
        to,
        used,
        budget_set,
        t_used.privacy()[0] if used else 0.0,
        t_used.privacy(spec.delta)[0] if used else 0.0,
        t_used.privacy_slide(spec.delta)[0] if used else 0.0,
        t_set.privacy()[0],
        t_set.privacy(spec.delta)[0],
        calc,
        CURVES(spec.tau, spec.beta),
        calc.sq_eps,
    )


# ------------------------------------------------------------------------------------------------
# controller
# ------------------------------------------------------------------------------------------------
_TRAIN, _HOLD, _FRESH = OKABE_ITO[1], OKABE_ITO[0], OKABE_ITO[2]


def _fmt(x: float | None, digits: int = 4) -> str:
    if x is None:
        return "—"
    if x == 0:
        return "0"
    if abs(x) >= 1e5 or abs(x) < 1e-3:
        m, e = f"{x:.{digits - 1}e}".split("e")
        return f"{m}·10<sup>{int(e)}</sup>"
    return f"{x:.{digits}g}"


class AdaptiveLabController(StagedController):
    """One controller: sliders n, d, rounds, seed, δ, τ, calculator n and β →
    :func:`compute_adaptive` → accuracy figures (naive, Thresholdout), calculator figures and
    the readouts. The two simulations are staged behind a progress bar when they take > 1 s."""

    compute = staticmethod(compute_adaptive)
    prefetch = True  # the next step of a slider is simulated ahead (controls.PREFETCHER)
    readout_widgets = {"privacy_readout": "", "calc_readout": ""}

    def read_spec(self) -> AdaptiveSpec:
        return AdaptiveSpec(**param_values(self.controls, PARAMS))

    def check(self, spec: AdaptiveSpec) -> None:
        _check_spec(spec)

    def stages(self, spec: AdaptiveSpec) -> list:
        est = 2.5e-7 * spec.n * spec.d  # s per method on this 2-core machine (measured, busy)
        return [
            (SIMULATIONS, (spec.n, spec.d, spec.rounds, spec.seed, m), est, f"{m} run")
            for m in ("naive", "thresholdout")
        ]

    # traces ----------------------------------------------------------------------------------
    #: the two panels of the "Holdout reuse" figure: (x axis, y axis, the run's name in its
    #: curves' names, the panel's title). The same roles keep their colours in both panels and
    #: share a legend entry (the left panel's curve names: one short row, also on a projector).
    PANELS = (("x", "y", "", "Naive reuse: it overfits"), ("x2", "y", ", Thresholdout run", "Thresholdout: honest"))
    #: the three accuracies of a run: (curve name, its field of OverfittingResult and legend group,
    #: colour, dash, marker)
    ROLES = (
        ("training set", "train", _TRAIN, None, "square"),
        ("holdout", "holdout", _HOLD, None, "circle"),
        ("fresh data", "fresh", _FRESH, "dot", "diamond"),
    )

    @classmethod
    def _reuse_traces(cls, r: AdaptiveResult) -> list[dict]:
        """Both runs in one figure (two panels, one legend): one ``Plotly.react`` per slider step
        instead of two side-by-side figures' (a step's cost is mostly plotly's redraw)."""
        out: list[dict] = []
        for (xa, ya, run, _title), res in zip(cls.PANELS, (r.naive, r.thresholdout)):
            k = res.k
            on = {"xaxis": xa, "yaxis": ya, "showlegend": xa == "x"}
            out += [
                line_trace(
                    label + run,
                    k,
                    getattr(res, field),
                    colour,
                    2,
                    dash,
                    mode="lines+markers",
                    marker={"symbol": symbol},
                    legendgroup=field,
                    **on,
                )
                for label, field, colour, dash, symbol in cls.ROLES
            ]
            out.append(
                line_trace(
                    "true accuracy 1/2" + run,
                    [k[0], k[-1]],
                    [0.5, 0.5],
                    OKABE_ITO[7],
                    1,
                    "dash",
                    legendgroup="half",
                    **on,
                )
            )
        return out

    @classmethod
    def _reuse_layout(cls) -> dict:
        k_axis = {"title": {"text": "k (features kept)"}}
        acc = {"title": {"text": "accuracy"}, "range": [0.3, 0.85]}
        return {
            # no title drawn: the tab and the panels' titles say it (a projector's height goes to
            # the plots); screen readers and the CSV name the figure by meta.name
            "meta": {"name": "Holdout reuse: naive reuse against Thresholdout"},
            # both panels on one y axis (accuracy, the same range): the right one repeats no ticks
            "grid": {"rows": 1, "columns": 2, "pattern": "coupled", "xgap": 0.05},
            "xaxis": k_axis,
            "yaxis": acc,
            "xaxis2": k_axis,
            # each panel's title, above its axes
            "annotations": panel_titles((xa, ya, title) for xa, ya, _run, title in cls.PANELS),
            # one row inside the axes, along their bottom: the range starts at 0.3 to leave room
            # for it (an accuracy below 0.37 is 2.6 standard deviations from 1/2 at n = 100, and
            # the legend's ground lets a curve show through). Below the axes it took 10 % of the
            # plots' height on a projector.
            "legend": {
                "orientation": "h",
                "x": 0.5,
                "xanchor": "center",
                "y": 0.005,
                "yanchor": "bottom",
                "bgcolor": "rgba(255,255,255,0.8)",
                "bordercolor": "#999999",
                "borderwidth": 1,
            },
            "height": 440,
        }

    @staticmethod
    def _eps_traces(r: AdaptiveResult) -> list[dict]:
        cv, n = r.curves, GEN_N_GRID
        c = r.calc
        return [
            line_trace("via DP: sqrt(τ² − ln2/(2n))", n, cv["sq_eps"], OKABE_ITO[0]),
            line_trace("pure max-information: τ²", n, cv["pure_eps"], OKABE_ITO[3], 2, "dash"),
            line_trace("approx. max-information: τ", n, cv["take2_eps"], OKABE_ITO[4], 2, "dot"),
            line_trace("general theorem at β: sqrt(ln(1/β)/(2n))", n, cv["gen_eps"], OKABE_ITO[1]),
            marker_trace(
                f"chosen n = {c.n:,}",
                [c.n] * 4,
                [c.sq_eps if c.sq_eps else None, c.pure_eps, c.take2_eps, c.gen_eps],
                [OKABE_ITO[0], OKABE_ITO[3], OKABE_ITO[4], OKABE_ITO[1]],
                "x",
                10,
                outline="#000000",
            ),
        ]

    @staticmethod
    def _fail_traces(r: AdaptiveResult) -> list[dict]:
        cv, n = r.curves, GEN_N_GRID
        c = r.calc
        clip = lambda a: np.where(np.asarray(a) < 1.0, a, np.nan)  # noqa: E731 - P ≥ 1 says nothing
        return [
            line_trace("via DP: 3√2 e^(−nτ²)", n, clip(cv["sq_fail"]), OKABE_ITO[0]),
            line_trace("τ²-DP, pure max-inf.: 2e^(−nτ²)", n, clip(cv["pure_fail"]), OKABE_ITO[3], 2, "dash"),
            line_trace("τ-DP, approx. max-inf. (take 2)", n, clip(cv["take2_fail"]), OKABE_ITO[4], 2, "dot"),
            line_trace("fixed query (Hoeffding): 2e^(−2nτ²)", n, clip(cv["hoeffding"]), OKABE_ITO[7], 1),
            marker_trace(
                f"chosen n = {c.n:,}",
                [c.n] * 3,
                [
                    c.sq_fail if c.sq_fail is not None and c.sq_fail < 1 else None,
                    c.pure_fail if c.pure_fail < 1 else None,
                    c.take2_fail if c.take2_fail < 1 else None,
                ],
                [OKABE_ITO[0], OKABE_ITO[3], OKABE_ITO[4]],
                "x",
                10,
                outline="#000000",
            ),
        ]

    def figures(self, r: AdaptiveResult) -> list[PlotlyWidget]:
        self.fig_reuse = PlotlyWidget(self._reuse_traces(r), self._reuse_layout())
        log_n = {"title": {"text": "n (samples)"}, "type": "log", "exponentformat": "power"}
        self.fig_eps = PlotlyWidget(
            self._eps_traces(r),
            {
                "title": {"text": "Largest ε each route allows at tolerance τ"},
                "xaxis": log_n,
                "yaxis": {"title": {"text": "ε allowed"}, "type": "log", "exponentformat": "power"},
                "legend": {"orientation": "h", "y": -0.3},
                "height": 440,
            },
        )
        self.fig_fail = PlotlyWidget(
            self._fail_traces(r),
            {
                "title": {"text": "P[|E_S[φ] − P[φ]| ≥ τ] guaranteed (drawn between 10⁻⁴⁰ and 1)"},
                "xaxis": log_n,
                "yaxis": {
                    "title": {"text": "failure probability bound"},
                    "type": "log",
                    "exponentformat": "power",
                    "range": [-40, 0.2],
                },  # below 1e-40 the curves only fall further
                "legend": {"orientation": "h", "y": -0.3},
                "height": 440,
            },
        )
        return [self.fig_reuse, self.fig_eps, self.fig_fail]

    def render(self, r: AdaptiveResult) -> None:
        if r.naive is not self.result.naive or r.thresholdout is not self.result.thresholdout:
            self.fig_reuse.update(data=self._reuse_traces(r))
        self.fig_eps.update(data=self._eps_traces(r))
        self.fig_fail.update(data=self._fail_traces(r))

    def write_readouts(self, r: AdaptiveResult) -> None:
        self.privacy_readout.value = privacy_html(r)
        self.calc_readout.value = calculator_html(r.calc)

    def snippet(self) -> str:
        """The generalization-bound calculator's numbers with the public API (the simulation's
        numbers come from seeded runs of ``teaching.simulate_adaptive_overfitting``)."""
        s = self.spec
        return (
            "from dpexplore import teaching as A\n\n"
            "def fmt(x):   # as the app's table: 4 significant digits, m·10^e outside [1e-3, 1e5)\n"
            "    if x == 0:\n"
            "        return '0'\n"
            "    if abs(x) >= 1e5 or abs(x) < 1e-3:\n"
            "        m, e = f'{x:.3e}'.split('e')\n"
            "        return f'{m}·10^{int(e)}'\n"
            "    return f'{x:.4g}'\n\n"
            + snippet_assign(s, PARAMS, skip=SNIPPET_SKIP)
            + "n = gen_n   # the calculator's sample size\n"
            "g = A.generalization_bounds(tau, n, beta)\n"
            "if g.sq_ok:\n"
            "    print('statistical queries via DP: eps <=', fmt(g.sq_eps), ', failure <=', fmt(g.sq_fail))\n"
            "print('max-information (pure): eps =', fmt(g.pure_eps), ', failure <=', fmt(g.pure_fail),\n"
            "      ', bits <=', fmt(g.pure_bits))\n"
            "print('max-information (take 2): eps =', fmt(g.take2_eps), ', failure <=', fmt(g.take2_fail),\n"
            "      ', bits <=', fmt(g.take2_bits), 'at beta2 =', fmt(g.take2_beta))\n"
            "print('generalization via DP: eps <=', fmt(g.gen_eps), ', failure <=', fmt(g.gen_fail))\n"
            "print('Hoeffding, one fixed query: failure <=', fmt(g.hoeffding))\n"
        )


def privacy_html(r: AdaptiveResult) -> str:
    """The simulation summary and Thresholdout's (ε, δ) (Bassi 2019, slide "Thresholdout (cont.)")."""
    s = r.spec
    nv, to = r.naive, r.thresholdout
    gap_naive = float(nv.holdout[-1] - nv.fresh[-1])
    gap_to = float(to.holdout[-1] - to.fresh[-1])
    to_spec = thresholdout_spec(s.n, max(r.budget_used, 1))  # the run's T, σ and ε₀ (the budget does not change them)
    return (
        '<div class="dpexplore-adaptive-privacy">'
        f"<p>n = {s.n:,} rows in each of the training, holdout and fresh sets, d = {s.d:,} features, "
        f"seed {s.seed}. At k = {int(nv.k[-1])}: training accuracy <b>{nv.train[-1]:.3f}</b>, "
        f"naive holdout <b>{nv.holdout[-1]:.3f}</b>, fresh data <b>{nv.fresh[-1]:.3f}</b> "
        f"(holdout − fresh = {gap_naive:+.3f}); Thresholdout reports <b>{to.holdout[-1]:.3f}</b> "
        f"against fresh {to.fresh[-1]:.3f} (gap {gap_to:+.3f}).</p>"
        f"<p>Thresholdout (T = 2/√n = {to_spec.threshold:.4g}, σ = 1/(2√n) = {to_spec.sigma:.4g}, "
        f"ε₀ = 1/(σn) = {to_spec.eps0:.4g}) answered <b>{r.budget_used}</b> queries from the "
        f"holdout (over threshold). Had its budget been set to B = {r.budget_used}, it would be "
        f"<b>({_fmt(r.eps_pure_used)}, 0)-DP</b> and <b>({_fmt(r.eps_delta_used)}, {s.delta:.3g})-DP</b> "
        f"(rigorous advanced composition; Bassi 2019's approximation gives {_fmt(r.eps_slide_used)}). "
        f"With the budget the simulation actually sets (B = d + rounds = {r.budget_set:,}, never "
        f"binding): ({_fmt(r.eps_pure_set)}, 0) and ({_fmt(r.eps_delta_set)}, {s.delta:.3g}).</p></div>"
    )


def calculator_html(c: GeneralizationBounds) -> str:
    """The calculator readout table (Bassi 2019 results, one row each)."""
    if not c.sq_ok:
        sq = [("no ε works: τ² ≤ ln 2/(2n)", "colspan='2'")]
    else:
        sq = [f"ε ≤ <b>{_fmt(c.sq_eps)}</b>", _fmt(c.sq_fail)]
    rows = [
        ("Corollary for statistical queries (via DP)", [*sq, "—"]),
        (
            "Generalization via max-information (pure)",
            [f"ε = τ² = <b>{_fmt(c.pure_eps)}</b>", _fmt(c.pure_fail), f"I<sub>∞</sub> ≤ {_fmt(c.pure_bits)}"],
        ),
        (
            "… (take 2): approximate max-information",
            [
                f"ε = τ = <b>{_fmt(c.take2_eps)}</b>",
                _fmt(c.take2_fail),
                f"I<sub>∞</sub><sup>β′</sup> ≤ {_fmt(c.take2_bits)} at β′ = 2e<sup>−nτ²</sup> = {_fmt(c.take2_beta)}",
            ],
        ),
        (
            f"Generalization via DP at β = {c.beta:.3g} (bad set of prob. ≤ β)",
            [
                f"ε ≤ <b>{_fmt(c.gen_eps)}</b>",
                _fmt(c.gen_fail),
                f"I<sub>∞</sub> ≤ {_fmt(c.gen_bits_pure)}, I<sub>∞</sub><sup>β</sup> ≤ {_fmt(c.gen_bits_iid)}",
            ],
        ),
        ("Fixed (non-adaptive) query: Hoeffding", ["—", _fmt(c.hoeffding), "—"]),
    ]
    # four columns of long cells: stacked in presentation mode (wider than the panel at 18 px)
    return (
        stacked_table(
            ["privacy allowed", "failure probability ≤", "max-information (bits)"],
            rows,
            corner="result (Bassi 2019)",
            cls="dpexplore-calc-table",
            style="border-collapse:collapse;text-align:right",
        )
        + f"<p>τ = {c.tau:.4g}, n = {int(c.n):,} (nτ² = {c.n * c.tau**2:.4g}).</p>"
    )


_INTRO = r"""
<p><b>Overfitting by adaptive selection</b> (Bassi 2019, slide "Unrealistic example"; the experiment of
Dwork et al. 2015). Every feature and the label are independent fair coins, so <i>every</i> classifier has
true accuracy 1/2. The analyst keeps the features whose correlation with the label exceeds
1/√n on the training set and on the holdout, and builds
\(f_k(x) = \operatorname{sign}\sum_{j \in \text{top } k} \operatorname{sign}(c_j)\, x_j\).
Each fixed query generalizes (Hoeffding: \(P[|\mathcal{E}_S[\phi] - \mathcal{P}[\phi]| > \tau] \le 2e^{-2n\tau^2}\)),
but the query chosen after looking at the data does not: on the data used for the selection it
looks good, on fresh data it is a coin flip. (Bassi 2019's slide makes the same point with the
maximum of Gaussian subset means: each mean concentrates, the selected maximum does not.)</p>
<p><b>Thresholdout</b> (Bassi 2019, slide "Reusable holdout"): answer from the training set unless
\(|a_h - a_t| > \hat T + \eta\) (\(\hat T = T + \mathrm{Lap}(2\sigma)\), \(\eta \sim \mathrm{Lap}(4\sigma)\)),
then release \(a_h + \mathrm{Lap}(\sigma)\) and spend one unit of budget B. It is
\((2B/(\sigma n), 0)\)-DP (Bassi 2019, slide "Thresholdout (cont.)"), and by advanced composition
\(\varepsilon(\delta) = \min\!\big(2B/(\sigma n),\ 2[\sqrt{2B\ln(2/\delta)}\,\varepsilon_0 + B\varepsilon_0(e^{\varepsilon_0}-1)]\big)\),
\(\varepsilon_0 = 1/(\sigma n)\). The DP noise hides the holdout's sampling noise from the analyst,
so the holdout is not overfitted.</p>
"""

_CALC = r"""
<p><b>Generalization-bound calculator</b> (Bassi 2019). An ε-DP algorithm that outputs a statistical query
\(\phi: \mathcal{X} \to [0, 1]\) on \(S \sim \mathcal{P}^n\):</p>
<ul>
<li>Corollary for statistical queries: \(\varepsilon \le \sqrt{\tau^2 - \ln 2/(2n)} \Rightarrow
P[|\mathcal{P}[\phi] - \mathcal{E}_S[\phi]| > \tau] \le 3\sqrt{2}\,e^{-n\tau^2}\);</li>
<li>generalization via max-information: \(\tau^2\)-DP \(\Rightarrow I_\infty \le (\log_2 e)\, n\tau^2\)
bits \(\Rightarrow P \le 2e^{-n\tau^2}\); (take 2) \(\tau\)-DP with \(\beta = 2e^{-n\tau^2}\),
\(I_\infty^\beta \le (\log_2 e)(\varepsilon^2 n/2 + \varepsilon\sqrt{n\ln(2/\beta)/2})\)
\(\Rightarrow P \le 2e^{(1/\sqrt 2 - 3/2)n\tau^2} + 2e^{-n\tau^2}\);</li>
<li>the general theorem (Generalization via DP for i.i.d. datasets): if every fixed output is bad
with probability ≤ β, \(\varepsilon \le \sqrt{\ln(1/\beta)/(2n)} \Rightarrow P[\text{bad}] \le 3\sqrt\beta\).</li>
</ul>
"""


INFO = AppInfo(
    slug="adaptive_lab",
    title="Adaptive data analysis: overfitting, the reusable holdout and generalization bounds",
    lead=(
        "Pick features by how well they do on a holdout, then test on the same holdout: the "
        "score looks good on pure noise. Thresholdout answers through differential privacy and "
        "stays honest; the second tab turns DP into generalization guarantees."
    ),
    theory=_INTRO + _CALC,
)


def build_adaptive_lab(
    n: int = 1000,
    d: int = 2000,
    rounds: int = 10,
    seed: int = 0,
    delta: float = 1e-6,
    tau: float = 0.01,
    gen_n: int = 100000,
    beta: float = 1e-3,
) -> AppShell:
    """The adaptive data analysis lab (Bassi 2019) in the shell: simulation sliders (n, d, rounds,
    seed, δ) with Thresholdout's privacy in the panel; the naive and Thresholdout accuracy curves
    in one tab (one figure, a panel per run), the generalization-bound calculator (τ, n, β) with
    its table and plots in another.

    >>> app = build_adaptive_lab(n=300, d=600, rounds=5)
    >>> app.controller.calc_readout.value.count("<tr ")
    6
    """
    sim = {
        k: param_slider(PARAMS[k], v)
        for k, v in (("n", n), ("d", d), ("rounds", rounds), ("seed", seed), ("delta", delta))
    }
    calc = {k: param_slider(PARAMS[k], v) for k, v in (("tau", tau), ("gen_n", gen_n), ("beta", beta))}
    for w in list(sim.values())[:4]:
        w.continuous_update = False  # a simulation per release, not per pixel
    ctrl = AdaptiveLabController({**sim, **calc}, MessageArea())
    for f in (ctrl.fig_eps, ctrl.fig_fail):
        f.layout.width = "calc(50% - 4px)"
        f.layout.min_width = "330px"
    row = lambda *figs: W.HBox(list(figs), layout=W.Layout(flex_flow="row wrap"))
    tabs = [
        ("Holdout reuse", [ctrl.fig_reuse]),
        ("Generalization bounds", [W.VBox(list(calc.values())), ctrl.calc_readout, row(ctrl.fig_eps, ctrl.fig_fail)]),
    ]
    return app_shell(INFO, ctrl, controls=[*sim.values(), ctrl.progress], plots=tabs, readouts=[ctrl.privacy_readout])
