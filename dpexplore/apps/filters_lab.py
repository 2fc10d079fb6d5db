"""Composition settings and privacy filters lab (Desfontaines 2023, "Open problem(s) – How generic
can composition results be?").

What the app shows, for one target (ε, δ):

1. **Budget used under four privacy filters.** A seeded analyst asks counting queries and picks
   each next query's noise from the noisy answers it has seen (it wants a relative error r:
   std = clip(r·|last answer|, 5, 1000); :func:`dpexplore.accounting.filters.simulate_adaptive_analyst`), so
   the budgets are data-dependent — the *fully adaptive* setting. The same analyst (same true
   counts, same random numbers) runs against each filter of
   :func:`dpexplore.accounting.filters.filters_for_target`, every one ending in an (ε, δ)-DP guarantee:

   * pure ε-DP: answer while Σ ε_i ≤ ε (Rogers et al. 2016), Laplace noise;
   * Gaussian DP: while Σ μ_i² ≤ μ² (Smith & Thakurta 2022), μ the largest with δ_μ(ε) ≤ δ
     (Dong, Roth & Su 2022, Corollary 2.13), Gaussian noise;
   * Rényi DP at one order α: while Σ ε_i(α) ≤ B_α (Feldman & Zrnic 2021, result “Rényi filter”), B_α from
     (ε, δ) by Balle et al. (2020), Theorem 21; Gaussian noise (ε_i(α) = α/(2σ²), so this is a
     zCDP filter with ρ = B_α/α); α is the order of :data:`ORDERS` with the largest B_α/α;
   * (ε, δ)-DP: while sqrt(2 log(1/δ) Σ ε_i²) + ½ Σ ε_i² ≤ ε (Whitehouse et al. 2023, result “advanced composition filter”),
     Laplace noise.

   The main plot draws each filter's consumed quantity ÷ its limit against the number of queries
   answered, with the first refusal marked.
2. **Known results**: Desfontaines 2023's table of optimal composition results (notion × setting), each cell
   with its citation and the rule dpexplore implements, or "open"; below it, on the Rényi
   filter's answers, the filter's guarantee against the Rényi odometer's time-uniform bound
   (:class:`dpexplore.accounting.filters.RenyiOdometer`): the price of fixing no budget in advance.
3. **Sessions**: a pure-DP :class:`dpexplore.accounting.filters.Session` with budget ε splits its data into
   P disjoint partitions with budget ε_p = share·ε each; parallel composition (McSherry 2009,
   result “parallel composition”) charges the session ε_p once, not P·ε_p; the same analyst runs in every partition.

Everything is seeded (``seed``) and cached in parts: a step of the partition sliders reruns only
the partitions, a step of δ only the filters (a step costs ~10–60 ms of kernel time).

>>> r = compute_filters_lab(FiltersLabSpec())
>>> r.answered                   # the Gaussian DP and Renyi filters answer the most
{'pure': 28, 'gdp': 51, 'renyi': 51, 'approx': 17}
>>> r.alpha, r.first_refused["pure"]
(24.0, 29)
>>> type(build_filters_lab()).__name__
'AppShell'
"""

from __future__ import annotations

import functools
import html
import math
from dataclasses import dataclass

import ipywidgets as W
import numpy as np

from ..accounting import composition
from ..accounting.composition import basic
from ..accounting.conversions import rdp_to_approx
from ..accounting.filters import (
    COMPOSITION_TABLE,
    NOTIONS,
    SETTINGS,
    TABLE_REFERENCES,
    AnalystRun,
    PureDPFilter,
    RenyiFilter,
    RenyiOdometer,
    Session,
    filters_for_target,
    parallel_composition,
    simulate_adaptive_analyst,
)
from ..bibliography.references import cite
from ..mechanisms import Gaussian
from ..ui.controls import OKABE_ITO, Controller, MessageArea, dropdown, param_slider
from ..ui.plotwidget import PlotlyWidget
from ..ui.shell import AppInfo, AppShell, app_shell, stacked_table
from ..ui.views import axes_layout, line_trace, marker_trace
from ._checks import Param, check_params, params_by_name, param_values, snippet_assign

__all__ = [
    "FiltersLabSpec",
    "FiltersLabResult",
    "SessionResult",
    "compute_filters_lab",
    "renyi_order",
    "true_counts",
    "table_html",
    "readout_html",
    "session_html",
    "FiltersLabController",
    "build_filters_lab",
    "FILTERS",
    "ORDERS",
    "EPS_RANGE",
    "DELTA_RANGE",
    "QUERIES_RANGE",
    "REL_RANGE",
    "SEED_RANGE",
    "PARTS_RANGE",
    "SHARE_RANGE",
    "MODES",
    "TYPICAL_COUNT",
    "COUNT_SPREAD",
    "INFO",
]

#: the filters, in plot, legend and table order (keys of ``filters_for_target``)
FILTERS = ("pure", "gdp", "renyi", "approx")
_NAMES = {"pure": "pure ε-DP", "gdp": "Gaussian DP", "renyi": "Rényi DP", "approx": "(ε, δ)-DP"}
_COLOURS = {"pure": OKABE_ITO[0], "gdp": OKABE_ITO[1], "renyi": OKABE_ITO[2], "approx": OKABE_ITO[3]}
#: Rényi orders: the Rényi filter uses the one with the largest B_α/α; the odometer uses all
ORDERS = (
    1.25,
    1.5,
    2.0,
    3.0,
    4.0,
    6.0,
    8.0,
    12.0,
    16.0,
    24.0,
    32.0,
    48.0,
    64.0,
    96.0,
    128.0,
    192.0,
    256.0,
    512.0,
    1024.0,
    2048.0,
    4096.0,
    8192.0,
    16384.0,
    32768.0,
    65536.0,
)
EPS_RANGE = (0.01, 20.0)
DELTA_RANGE = (1e-12, 1e-2)
QUERIES_RANGE = (10, 300)  # a linear slider in steps of 10
REL_RANGE = (0.05, 1.0)  # a linear slider in steps of 0.05
SEED_RANGE = (0, 999)
PARTS_RANGE = (1, 8)
SHARE_RANGE = (0.05, 1.0)  # a linear slider in steps of 0.05
#: the lab's numeric parameters: its sliders and the checks of its spec
PARAMS = params_by_name(
    Param("eps", *EPS_RANGE, "log", "ε", "total", steps_per_decade=20, rel_tol=1e-12),
    Param("delta", *DELTA_RANGE, "log", "δ", "total", steps_per_decade=1, readout_format=".0e", rel_tol=1e-12),
    Param("queries", *QUERIES_RANGE, "linear", unit="asked", integer=True, step=10),
    Param("rel_error", *REL_RANGE, "linear", "relative error", "wanted", step=0.05, rel_tol=1e-12),
    Param("seed", *SEED_RANGE, unit="random seed", integer=True),
    Param("parts", *PARTS_RANGE, "linear", "partitions", "disjoint", integer=True),
    Param("share", *SHARE_RANGE, "linear", "ε_p / ε", "each partition's share", step=0.05, rel_tol=1e-12),
)
#: after a refusal: "halt" ends the interaction (Rogers et al. 2016), "skip" asks the next query
#: with twice the noise
MODES = {"halt": "stop at the first refusal", "skip": "go on, with twice the noise"}
#: the true counts: Poisson(λ) with λ log-normal around TYPICAL_COUNT (log-sd COUNT_SPREAD)
TYPICAL_COUNT = 200.0
COUNT_SPREAD = 1.0


# ------------------------------------------------------------------------------------------------
# spec and results
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FiltersLabSpec:
    """The lab's parameters (hashable: the cache key): the target (``eps``, ``delta``), the number
    of ``queries`` the analyst asks, the relative error it wants (``rel_error``: smaller asks for
    more budget per query), what it does after a refusal (``mode``), the ``seed``; the session's
    number of partitions (``parts``) and each partition's share of ε (``share``)."""

    eps: float = 1.0
    delta: float = 1e-6
    queries: int = 100
    rel_error: float = 0.6
    seed: int = 0
    mode: str = "halt"
    parts: int = 3
    share: float = 0.3


@dataclass(frozen=True)
class SessionResult:
    """The session of the third tab: the parent after partitioning, the sub-sessions after their
    analysts ran, each partition's analyst run, and the charges under parallel (what the session
    pays) and sequential composition."""

    parent: Session
    parts: tuple
    runs: tuple
    eps_part: float
    parallel: float
    sequential: float


@dataclass(frozen=True)
class FiltersLabResult:
    """Everything the lab draws and prints.

    ``runs[k]`` is the analyst's run under filter k; ``curves[k]`` = (queries answered 0…A, budget
    used after each), ``refusal[k]`` = (answered, used) at the first refusal or None,
    ``first_refused[k]`` that query's number (1-based) or None, ``refused[k]`` the queries refused
    (after a halt, the unanswered rest counts as refused);
    ``odo_t``/``odo_eps``/``odo_fixed`` the odometer's bound and the fixed-budget filter's ε
    after each of the Rényi filter's answers."""

    spec: FiltersLabSpec
    alpha: float
    filters: dict
    truth: np.ndarray
    runs: dict
    curves: dict
    refusal: dict
    first_refused: dict
    answered: dict
    refused: dict
    used: dict
    odo_t: np.ndarray
    odo_eps: np.ndarray
    odo_fixed: np.ndarray
    session: SessionResult


def _check_spec(spec: FiltersLabSpec) -> None:
    check_params(spec, PARAMS)
    if spec.mode not in MODES:
        raise ValueError(f"mode must be one of {list(MODES)}, got mode = {spec.mode!r}")


# ------------------------------------------------------------------------------------------------
# the pieces (each cached: a step recomputes only what its slider changes)
# ------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=128)
def renyi_order(eps: float, delta: float) -> float:
    """The order of :data:`ORDERS` whose Rényi filter for (ε, δ) answers the most Gaussian queries:
    :meth:`dpexplore.accounting.filters.RenyiFilter.best_order` (the largest B_α/α). It depends on
    (ε, δ) only, so it is fixed before the first query. ValueError if no order gives B_α > 0.

    >>> renyi_order(1.0, 1e-6), renyi_order(0.01, 1e-12)
    (24.0, 4096.0)
    """
    return RenyiFilter.best_order(eps, delta, ORDERS)


@functools.lru_cache(maxsize=64)
def _filters(eps: float, delta: float) -> tuple:
    alpha = renyi_order(eps, delta)
    return alpha, filters_for_target(eps, delta, alpha=alpha)


@functools.lru_cache(maxsize=64)
def true_counts(seed: int, queries: int) -> np.ndarray:
    """The true answers of the analyst's counting queries: Poisson(λ_i), λ_i log-normal around
    :data:`TYPICAL_COUNT` (log-sd :data:`COUNT_SPREAD`), from ``default_rng([seed, 1])`` and
    ``default_rng([seed, 2])``; more queries extend the same sequence.

    >>> true_counts(0, 10)[:3].tolist() == true_counts(0, 300)[:3].tolist()
    True
    """
    lam = np.random.default_rng([seed, 1]).lognormal(math.log(TYPICAL_COUNT), COUNT_SPREAD, queries)
    out = np.random.default_rng([seed, 2]).poisson(lam)
    out.setflags(write=False)
    return out


def _used(filt, run: AnalystRun) -> np.ndarray:
    """The filter's consumed quantity ÷ its limit after each query (the backend's run reports a
    Rényi filter's consumption as that fraction already)."""
    if isinstance(filt, RenyiFilter):
        return np.asarray(run.consumed, float)
    return np.asarray(run.consumed, float) / float(filt.budget)


@functools.lru_cache(maxsize=64)
def _runs(eps: float, delta: float, queries: int, rel_error: float, seed: int, mode: str) -> dict:
    _, fs = _filters(eps, delta)
    truth = true_counts(seed, queries)
    return {
        k: simulate_adaptive_analyst(fs[k], truth, np.random.default_rng([seed, 3]), rel_error=rel_error, mode=mode)
        for k in FILTERS
    }


@functools.lru_cache(maxsize=64)
def _session(
    eps: float, queries: int, rel_error: float, seed: int, mode: str, parts: int, share: float
) -> SessionResult:
    """The session: budget ε, partitioned into ``parts`` disjoint parts with ε_p = share·ε each
    (each query's true count split at random between the parts, ``default_rng([seed, 4])``); the
    analyst runs under each sub-session's budget (``default_rng([seed, 5, j])``)."""
    eps_p = share * eps
    root, kids = Session(eps).partition(eps_p, parts)
    split = np.random.default_rng([seed, 4]).multinomial(true_counts(seed, queries), np.full(parts, 1.0 / parts))
    runs, spent = [], []
    for j, kid in enumerate(kids):
        run = simulate_adaptive_analyst(
            PureDPFilter(kid.budget), split[:, j], np.random.default_rng([seed, 5, j]), rel_error=rel_error, mode=mode
        )
        runs.append(run)
        spent.append(kid.spend(float(run.consumed[-1])))
    budgets = [k.budget for k in kids]
    sequential = float(basic(budgets)[0])  # what sequential (basic) composition would charge
    return SessionResult(root, tuple(spent), tuple(runs), eps_p, parallel_composition(budgets), sequential)


def _odometer(run: AnalystRun, delta: float) -> tuple:
    """On the Rényi-filtered analyst's answers (Gaussian, σ_i): the odometer's bound ε̂_t over
    :data:`ORDERS` and the ε of a Rényi filter whose budget had been fixed at the RDP spent so far
    (Balle et al. 2020, Theorem 21, best order), t = 0 … A."""
    sigma = run.std[run.accepted]
    a = np.array(ORDERS)
    rdp = np.asarray(Gaussian(sigma[:, None]).rdp(a), float).reshape(sigma.size, a.size)  # α/(2σ²)
    odo = RenyiOdometer(ORDERS, delta)
    start = odo.epsilon(np.zeros((0, a.size)))
    eps_t = np.concatenate([[start], odo.trajectory(rdp)]) if sigma.size else np.array([start])
    # the RDP spent after t answers (Mironov 2017, Prop. 1: additive), t = 0 … A
    totals = np.vstack(
        [np.zeros((1, a.size))] + [np.asarray(composition.rdp(rdp[: t + 1]), float)[None] for t in range(sigma.size)]
    )
    fixed = np.atleast_1d(np.asarray(rdp_to_approx(a, totals, delta), float))
    return np.arange(sigma.size + 1, dtype=float), eps_t, fixed


def compute_filters_lab(spec: FiltersLabSpec) -> FiltersLabResult:
    """Everything the lab shows for one setting (module docstring), from dpexplore's filters.

    Raises ``ValueError`` naming the parameter outside the lab's ranges.

    >>> compute_filters_lab(FiltersLabSpec(parts=0))
    Traceback (most recent call last):
    ...
    ValueError: parts must be a whole number in [1, 8], got parts = 0
    """
    _check_spec(spec)
    eps, delta, rel = float(spec.eps), float(spec.delta), float(spec.rel_error)
    n, seed = int(spec.queries), int(spec.seed)
    alpha, fs = _filters(eps, delta)
    runs = _runs(eps, delta, n, rel, seed, spec.mode)
    curves, refusal, first, answered, refused, used = {}, {}, {}, {}, {}, {}
    for k in FILTERS:
        run = runs[k]
        u = _used(fs[k], run)
        acc = run.accepted
        curves[k] = (np.arange(int(acc.sum()) + 1, dtype=float), np.concatenate([[0.0], u[acc]]))
        answered[k] = int(acc.sum())
        refused[k] = int((~acc).sum())
        used[k] = float(u[acc][-1]) if acc.any() else 0.0
        if acc.all():
            refusal[k] = first[k] = None
        else:
            i = int(np.argmin(acc))  # the first refused query
            refusal[k] = (float(acc[:i].sum()), float(u[i]) if i else 0.0)
            first[k] = i + 1
    odo_t, odo_eps, odo_fixed = _odometer(runs["renyi"], delta)
    session = _session(eps, n, rel, seed, spec.mode, int(spec.parts), float(spec.share))
    return FiltersLabResult(
        spec,
        alpha,
        fs,
        true_counts(seed, n),
        runs,
        curves,
        refusal,
        first,
        answered,
        refused,
        used,
        odo_t,
        odo_eps,
        odo_fixed,
        session,
    )


# ------------------------------------------------------------------------------------------------
# Desfontaines 2023's table
# ------------------------------------------------------------------------------------------------
#: the rule each implementation applies (what a table cell links to)
_RULES = {
    "dpexplore.accounting.composition.basic": "ε = Σ ε<sub>i</sub>",
    "dpexplore.accounting.composition.optimal": "the least ε<sub>g</sub> for k-fold (ε, δ)",
    "dpexplore.accounting.composition.gdp": "μ = √(Σ μ<sub>i</sub>²)",
    "dpexplore.accounting.composition.compose": "tight δ(ε) of the composed mechanism",
    "dpexplore.accounting.composition.rdp": "ε(α) = Σ ε<sub>i</sub>(α)",
    "dpexplore.accounting.composition.zcdp": "ρ = Σ ρ<sub>i</sub>",
    "dpexplore.accounting.filters.PureDPFilter": "answer while Σ ε<sub>i</sub> ≤ ε",
    "dpexplore.accounting.filters.ApproxDPFilter": "while √(2 log(1/δ) Σ ε<sub>i</sub>²) + ½ Σ ε<sub>i</sub>² ≤ ε",
    "dpexplore.accounting.filters.GDPFilter": "while Σ μ<sub>i</sub>² ≤ μ²",
    "dpexplore.accounting.filters.RenyiFilter": "while Σ ε<sub>i</sub>(α) ≤ B<sub>α</sub>",
    "dpexplore.accounting.filters.ZCDPFilter": "while Σ ρ<sub>i</sub> ≤ ρ",
    "dpexplore.accounting.filters.ApproxZCDPFilter": "while Σ ρ<sub>i</sub> ≤ ρ and Σ δ<sub>i</sub> ≤ δ",
}
_NOTION_HTML = {
    "eps-DP": "ε-DP",
    "(eps, delta)-DP": "(ε, δ)-DP",
    "Gaussian DP": "Gaussian DP",
    "f-DP": "f-DP",
    "(alpha, eps)-Renyi DP": "(α, ε)-Rényi DP",
    "rho-zCDP": "ρ-zCDP",
    "delta-approx. rho-zCDP": "δ-approx. ρ-zCDP",
}


def _cell_html(cell) -> tuple[str, str]:
    """A cell of :func:`table_html`: its HTML and the attributes of its ``<td>``."""
    if cell.status == "open":
        return "<b>open</b>", 'class="dpexplore-open" style="background:#fdece6;color:#8a1c00;text-align:center"'
    refs = ", ".join(cite(TABLE_REFERENCES[r]) for r in cell.refs)
    star = "*" if cell.note.startswith("*") else ""
    if cell.implementation:
        short = cell.implementation.removeprefix("dpexplore.")
        impl = (
            f'<br><code title="{html.escape(cell.implementation, quote=True)}">{html.escape(short)}</code>'
            f'<br><span class="dpexplore-rule">{_RULES.get(cell.implementation, "")}</span>'
        )
    else:
        impl = '<br><span class="dpexplore-rule">known; not in dpexplore</span>'
    return f"{refs}{star}{impl}", ""


def table_html() -> str:
    """Desfontaines 2023's table (:data:`dpexplore.accounting.filters.COMPOSITION_TABLE`): one row per notion, one
    column per setting; each cell cites the work with the optimal result and names the dpexplore
    function or filter implementing it with its rule, or says "open". In presentation mode its rows
    are stacked (:func:`dpexplore.ui.shell.stacked_table`).

    >>> t = table_html()
    >>> t.count("<tr"), t.count(">open<")
    (8, 2)
    """
    rows = [(_NOTION_HTML[n], [_cell_html(COMPOSITION_TABLE[n][s]) for s in SETTINGS]) for n in NOTIONS]
    return (
        stacked_table(
            [html.escape(s) for s in SETTINGS],
            rows,
            cls="dpexplore-composition-table",
            style="border-collapse:collapse",
        )
        + '<p class="dpexplore-table-note" style="margin:4px 0">Optimal composition results known in each '
        "setting, after " + cite("desfontaines2023composition") + ". * Only asymptotically optimal "
        "for small ε. <i>Open</i>: no optimal result known. Sequential: mechanisms and budgets fixed "
        "in advance; adaptive: each mechanism sees earlier outputs; fully adaptive: budgets too are "
        "chosen from earlier outputs (filters, as in the first tab); concurrent: several interactive "
        "mechanisms, queries interleaved.</p>"
    )


_STYLE = """<style>
.dpexplore-composition-table, .dpexplore-table-note { font-size: 13px; line-height: 1.3; }
.dpexplore-composition-table td, .dpexplore-composition-table th { border: 1px solid #d0d7de;
  padding: 3px 5px; vertical-align: top; }
.dpexplore-composition-table code { font-size: 0.92em; }
.dpexplore-rule, .dpexplore-limit { color: #444; }
.dpexplore-filters-session p { font-size: 14px; }
.dpexplore-app.dpexplore-present .dpexplore-composition-table,
.dpexplore-app.dpexplore-present .dpexplore-table-note { font-size: 16px; }
.dpexplore-app.dpexplore-present .dpexplore-readouts table.dpexplore-filters-readout { font-size: 15px; }
.dpexplore-app.dpexplore-present .dpexplore-filters-session .widget-label,
.dpexplore-app.dpexplore-present .dpexplore-filters-session .widget-readout,
.dpexplore-app.dpexplore-present .dpexplore-filters-session p { font-size: 17px; }
.dpexplore-filters-readout td, .dpexplore-filters-readout th { text-align: right; vertical-align: top; }
.dpexplore-filters-readout td { white-space: nowrap; }
.dpexplore-filters-readout td:first-child, .dpexplore-filters-readout th:first-child { text-align: left;
  white-space: normal; }
.dpexplore-filters-readout th { vertical-align: bottom; }
</style>"""


# ------------------------------------------------------------------------------------------------
# readouts
# ------------------------------------------------------------------------------------------------
def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _budget_text(k: str, r: FiltersLabResult) -> str:
    f = r.filters[k]
    if k == "pure":
        return f"ε = {_fmt(f.eps)}"
    if k == "gdp":
        return f"μ = {_fmt(f.mu)}"
    if k == "renyi":
        return f"α = {r.alpha:g}, B = {_fmt(f.budgets[0])}"
    return f"ε = {_fmt(f.eps)}, δ = {f.delta:.3g}"


def readout_html(r: FiltersLabResult) -> str:
    """The panel's table: per filter its limit, the queries answered, the first refusal (the
    query's number) and the share of the budget used."""
    s = r.spec
    rows = "".join(
        f"<tr><td><span style='color:{_COLOURS[k]}' aria-hidden='true'>■</span> {_NAMES[k]}"
        f"<br><span class='dpexplore-limit'>{_budget_text(k, r)}</span></td>"
        f"<td><b>{r.answered[k]}</b></td><td>{'#' + str(r.first_refused[k]) if r.first_refused[k] else 'none'}"
        f"</td><td>{100 * r.used[k]:.1f} %</td></tr>"
        for k in FILTERS
    )
    if s.mode == "halt":
        after = "it stops at a filter's first refusal"
    else:
        after = "after a refusal it asks the next query with twice the noise; refused in all: " + ", ".join(
            f"{_NAMES[k]} {r.refused[k]}" for k in FILTERS
        )
    return (
        '<table class="dpexplore-filters-readout" style="border-collapse:collapse">'
        "<tr><th>filter (its limit)</th><th>answered</th><th>refused at</th><th>used</th></tr>"
        f"{rows}</table><p class='dpexplore-note' style='margin:4px 0'>Queries answered of the "
        f"{s.queries} the analyst asks (seed {s.seed}); {after}. Each filter ends in "
        f"({_fmt(s.eps)}, {s.delta:.3g})-DP.</p>"
    )


def session_html(r: FiltersLabResult) -> str:
    """The sessions tab's readout: the charges and each partition's answered queries."""
    ss, s = r.session, r.spec
    parts = "; ".join(
        f"part {j + 1}: <b>{int(run.accepted.sum())}</b> answered, ε spent {_fmt(kid.spent)}"
        for j, (kid, run) in enumerate(zip(ss.parts, ss.runs))
    )
    over = ss.sequential > s.eps * (1 + 1e-12)
    verdict = (
        f"more than ε = {_fmt(s.eps)}: without parallel composition the session would refuse the partitioning"
        if over
        else f"within ε = {_fmt(s.eps)}"
    )
    return (
        f"<p style='margin:4px 0'>The session has ε = <b>{_fmt(s.eps)}</b>. Splitting its data into "
        f"{s.parts} disjoint partitions with ε<sub>p</sub> = {_fmt(ss.eps_part)} each charges it "
        f"<b>{_fmt(ss.parallel)}</b> once (parallel composition: the largest budget of the parts) "
        f"and leaves <b>{_fmt(ss.parent.remaining)}</b> for queries on all the data. Sequential "
        f"composition would charge the sum, {_fmt(ss.sequential)}: {verdict}.</p>"
        f"<p style='margin:4px 0'>The analyst in each partition asks the same "
        f"{s.queries} queries on its part of the data: {parts}.</p>"
    )


# ------------------------------------------------------------------------------------------------
# controller and figures
# ------------------------------------------------------------------------------------------------
class FiltersLabController(Controller):
    """Sliders ε, δ, queries, relative error, seed, the refusal mode, partitions and share →
    :func:`compute_filters_lab` → three figures (budget used, filter vs odometer, the session)
    and two readouts."""

    compute = staticmethod(compute_filters_lab)
    readout_widgets = {"readout": "dpexplore-filters-readout-box", "session_readout": ""}

    def read_spec(self) -> FiltersLabSpec:
        values = param_values(self.controls, PARAMS)
        values["share"] = round(values["share"], 10)
        return FiltersLabSpec(**values, mode=str(self.controls["mode"].value))

    # traces -----------------------------------------------------------------------------------
    @staticmethod
    def _main_traces(r: FiltersLabResult) -> list[dict]:
        out = []
        for k in FILTERS:
            x, y = r.curves[k]
            name = f"{_NAMES[k]}, α = {r.alpha:g}" if k == "renyi" else _NAMES[k]
            out.append(line_trace(name, x, y, _COLOURS[k], mode="lines+markers", marker={"size": 4}))
        pts = [r.refusal[k] for k in FILTERS]
        out.append(
            marker_trace(
                "first refusal",
                [p[0] if p else None for p in pts],
                [p[1] if p else None for p in pts],
                [_COLOURS[k] for k in FILTERS],
                "x",
                13,
                outline="#000000",
            )
        )
        top = max(1.0, max(float(r.curves[k][0][-1]) for k in FILTERS))
        out.append(line_trace("the filter's limit", [0.0, top], [1.0, 1.0], OKABE_ITO[7], 1, "dash"))
        return out

    @staticmethod
    def _odo_traces(r: FiltersLabResult) -> list[dict]:
        t = r.odo_t
        return [
            line_trace("odometer: bound valid at every t", t, r.odo_eps, OKABE_ITO[4]),
            line_trace("filter with its budget fixed at the RDP spent", t, r.odo_fixed, OKABE_ITO[2], 2, "dot"),
            line_trace(
                "target ε (the Rényi filter's guarantee)",
                [0.0, max(float(t[-1]), 1.0)],
                [r.spec.eps, r.spec.eps],
                OKABE_ITO[7],
                1,
                "dash",
            ),
        ]

    @staticmethod
    def _session_traces(r: FiltersLabResult) -> list[dict]:
        ss, s = r.session, r.spec
        x = ["all data"] + [f"part {j + 1}" for j in range(s.parts)]
        spent = [0.0] + [k.spent for k in ss.parts]
        left = [ss.parent.remaining] + [max(k.budget - k.spent, 0.0) for k in ss.parts]
        return [
            {
                "type": "bar",
                "name": "charged for the partitioning",
                "x": x,
                "y": [ss.parallel] + [0.0] * s.parts,
                "marker": {"color": OKABE_ITO[4]},
            },
            {"type": "bar", "name": "spent on queries", "x": x, "y": spent, "marker": {"color": OKABE_ITO[0]}},
            {"type": "bar", "name": "left", "x": x, "y": left, "marker": {"color": "#c9d3dd"}},
            marker_trace(
                "sequential composition would charge",
                ["all data"],
                [ss.sequential],
                OKABE_ITO[3],
                "diamond",
                14,
                outline="#000000",
            ),
        ]

    def figures(self, r: FiltersLabResult) -> list[PlotlyWidget]:
        legend = {"orientation": "h", "y": -0.2}
        self.fig_main = PlotlyWidget(
            self._main_traces(r),
            axes_layout(
                "Budget used by the adaptive analyst under each filter",
                "queries answered",
                "budget used",
                xaxis={"rangemode": "tozero"},
                yaxis={"tickformat": ".0%", "range": [0.0, 1.08]},
                legend=legend,
            ),
        )
        self.fig_odo = PlotlyWidget(
            self._odo_traces(r),
            axes_layout(
                "Fully adaptive: a filter or an odometer (Rényi)",
                "queries answered under the Rényi filter",
                "ε at the target δ",
                from_zero=True,
                legend=legend,
            ),
        )
        self.fig_session = PlotlyWidget(
            self._session_traces(r),
            {
                "title": {"text": "A session and its partitions (pure DP)"},
                "barmode": "stack",
                "xaxis": {"title": {"text": "session"}},
                "yaxis": {"title": {"text": "ε"}, "rangemode": "tozero"},
                # a fixed height: the text above it changes length with the sliders of its tab
                "legend": legend,
                "height": 400,
            },
            css_height="400px",
        )
        return [self.fig_main, self.fig_odo, self.fig_session]

    def render(self, r: FiltersLabResult) -> None:
        old = self.result  # the last drawn result: redraw only the figures that changed
        if old.runs is not r.runs or old.spec.eps != r.spec.eps:
            self.fig_main.update(data=self._main_traces(r))
            self.fig_odo.update(data=self._odo_traces(r))
        if old.session is not r.session:
            self.fig_session.update(data=self._session_traces(r))

    def write_readouts(self, r: FiltersLabResult) -> None:
        self.readout.value = readout_html(r)
        self.session_readout.value = session_html(r)

    def snippet(self) -> str:
        s = self.spec
        return (
            "import math\n"
            "import numpy as np\n"
            "from dpexplore.accounting import filters\n"
            "from dpexplore.accounting import composition\n"
            "from dpexplore.apps.filters_lab import ORDERS\n\n"
            + snippet_assign(s, PARAMS)
            + "# the Renyi order with the largest B_alpha / alpha among the app's orders\n"
            "alpha = filters.RenyiFilter.best_order(eps, delta, ORDERS)\n"
            f"mode = {s.mode!r}   # after a refusal\n"
            f"lam = np.random.default_rng([seed, 1]).lognormal(math.log({TYPICAL_COUNT!r}), {COUNT_SPREAD!r},\n"
            "                                                  queries)\n"
            "truth = np.random.default_rng([seed, 2]).poisson(lam)   # the queries' true counts\n"
            "for name, f in filters.filters_for_target(eps, delta, alpha=alpha).items():\n"
            "    run = filters.simulate_adaptive_analyst(f, truth, np.random.default_rng([seed, 3]),\n"
            "                                            rel_error=rel_error, mode=mode)\n"
            "    print(f'{name}: {int(run.accepted.sum())} answered of {queries}')\n\n"
            "# the session: budget eps, split into disjoint partitions (parallel composition)\n"
            "eps_p = share * eps\n"
            "session, subs = filters.Session(eps).partition(eps_p, parts)\n"
            "split = np.random.default_rng([seed, 4]).multinomial(truth, np.full(parts, 1 / parts))\n"
            "for j, sub in enumerate(subs):\n"
            "    run = filters.simulate_adaptive_analyst(filters.PureDPFilter(sub.budget), split[:, j],\n"
            "                                            np.random.default_rng([seed, 5, j]),\n"
            "                                            rel_error=rel_error, mode=mode)\n"
            "    print(f'part {j + 1}: {int(run.accepted.sum())} answered')\n"
            "print(f'session charged {session.total_spent():.4g}, left {session.remaining:.4g}')\n"
            "sequential = composition.basic([sub.budget for sub in subs])[0]\n"
            "print(f'sequential composition would charge {sequential:.4g}')\n"
        )


# ------------------------------------------------------------------------------------------------
# text
# ------------------------------------------------------------------------------------------------
def _theory() -> str:
    c = cite
    return (
        "<h4>Four settings for composition</h4>"
        "<p>" + c("desfontaines2023composition") + " distinguishes <b>sequential</b> composition "
        "(mechanisms and budgets fixed in advance; " + c("dwork2006calibrating") + "), "
        "<b>adaptive</b> composition (each mechanism sees the earlier outputs, budgets still fixed; "
        + c("dwork2006our")
        + "), <b>fully adaptive</b> composition (the budgets too are chosen from "
        "earlier outputs; " + c("rogers2016odometers") + ") and <b>concurrent</b> composition (several "
        "interactive mechanisms whose queries interleave; " + c("vadhan2021concurrent") + "). In the "
        "fully adaptive setting a <i>privacy filter</i> has a fixed total budget and refuses a query "
        "that would exceed it; a <i>privacy odometer</i> lets the analyst go on and bounds the loss "
        "so far. Filters allow tighter guarantees than odometers.</p>"
        "<h4>The filters of the first tab</h4>"
        "<p>The analyst asks counting queries (sensitivity 1). After a noisy answer a it asks the "
        "next query with noise standard deviation s = clip(r·|a|, 5, 1000) (the first with s = 20): "
        "a small relative error r spends more budget per query, and the budgets depend on the data. "
        "A refusal is a query run with budget 0, chosen from the past alone, so the filters stay "
        "valid when the analyst goes on after one (twice the noise). Each filter ends in "
        "(ε, δ)-DP:</p><ul>"
        "<li><b>pure ε-DP</b> (Laplace noise, ε<sub>i</sub> = √2/s): answer while "
        "Σ ε<sub>i</sub> ≤ ε (" + c("rogers2016odometers") + "; basic composition holds fully "
        "adaptively);</li>"
        "<li><b>Gaussian DP</b> (σ = s, μ<sub>i</sub> = 1/σ): while Σ μ<sub>i</sub>² ≤ μ² ("
        + c("smith2022fully")
        + ": fully adaptive composition of Gaussian DP costs the same as "
        "non-adaptive composition, " + c("dong2022gaussian", "Corollary 3.3") + "); μ is the "
        "largest with δ<sub>μ</sub>(ε) ≤ δ (" + c("dong2022gaussian", "Corollary 2.13") + ");</li>"
        "<li><b>Rényi DP</b> at one order α (σ = s, ε<sub>i</sub>(α) = α/(2σ²)): while "
        "Σ ε<sub>i</sub>(α) ≤ B<sub>α</sub> (" + c("feldman2021individual", "result “Rényi filter”") + "), with "
        "ε = B<sub>α</sub> + log(1 − 1/α) − (log δ + log α)/(α − 1) ("
        + c("balle2020hypothesis", "Theorem 21")
        + "). For "
        "Gaussian queries this is the zCDP filter with ρ = B<sub>α</sub>/α; the app takes the α of "
        "1.25…65536 with the largest B<sub>α</sub>/α, which depends on (ε, δ) only;</li>"
        "<li><b>(ε, δ)-DP</b> (Laplace noise): while √(2 log(1/δ) Σ ε<sub>i</sub>²) + ½ Σ "
        "ε<sub>i</sub>² ≤ ε ("
        + c("whitehouse2023fully", "result “advanced composition filter”")
        + "), advanced composition "
        "with its constants. It is optimal only asymptotically, for small ε: with few queries it "
        "answers fewer than the pure filter.</li></ul>"
        "<p>The plot shows each filter's own quantity (Σ ε<sub>i</sub>, √(Σ μ<sub>i</sub>²), "
        "Σ ε<sub>i</sub>(α), the left-hand side above) divided by its limit.</p>"
        "<h4>Filter or odometer</h4>"
        "<p>On the Rényi filter's answers, the second tab compares two guarantees. A filter whose "
        "budget had been fixed at the Rényi DP spent so far, S<sub>t</sub>(α), would give "
        "ε = min<sub>α</sub> [S<sub>t</sub>(α) + log(1 − 1/α) − (log δ + log α)/(α − 1)]. The "
        "Rényi odometer fixes no budget. Its bound ε̂<sub>t</sub> = min<sub>j</sub> "
        "[S<sub>t</sub>(α<sub>j</sub>) + log(J/δ)/(α<sub>j</sub> − 1)] over J orders holds at every "
        "t at once, with probability 1 − δ. It follows from the supermartingale in the proof of "
        + c("feldman2021individual", "result “Rényi filter”")
        + " and Ville's inequality; see "
        + c("rogers2016odometers")
        + ", "
        + c("lecuyer2021practical")
        + " and "
        + c("whitehouse2023fully")
        + " for odometers. The gap between the two curves is the price "
        "of not fixing the budget in advance.</p>"
        "<h4>Parallel composition and sessions</h4>"
        "<p>Mechanisms run on disjoint parts of the data cost the largest of their budgets, not the "
        "sum ("
        + c("mcsherry2009privacy", "result “parallel composition”")
        + "). "
        + c("desfontaines2023composition")
        + " describes sessions (as in Tumult Analytics): a session with budget ε can split its "
        "data into partitions, which costs ε<sub>p</sub> once and creates sub-sessions with budget "
        "ε<sub>p</sub> each. The parent keeps ε − ε<sub>p</sub> for queries on all the data. The "
        "analyst may interleave queries to all of these sessions, and the sub-sessions' budgets may "
        "depend on earlier answers. Desfontaines 2023 calls this <i>fully concurrent</i> composition and "
        "asks what holds there. Since then, " + c("haney2023concurrent") + " have shown that valid "
        "filters and odometers for (ε, δ)-DP, f-DP and Rényi DP of a fixed order extend to the "
        "concurrent composition of interactive mechanisms whose budgets are chosen adaptively.</p>"
        "<h4>What is known, and the open questions</h4>"
        "<p>The table of the second tab is Desfontaines 2023's: optimal results for ε-DP ("
        + c("dwork2006calibrating")
        + ", "
        + c("dwork2006our")
        + ", "
        + c("rogers2016odometers")
        + ", "
        + c("vadhan2021concurrent")
        + "), (ε, δ)-DP ("
        + c("kairouz2015composition", "Theorem 3.3")
        + ", "
        + c("whitehouse2023fully")
        + ", "
        + c("lyu2022composition")
        + "), Gaussian DP and f-DP ("
        + c("dong2022gaussian")
        + ", "
        + c("smith2022fully")
        + ", "
        + c("vadhan2022concurrent")
        + "), Rényi DP and zCDP ("
        + c("mironov2017", "Proposition 1")
        + ", "
        + c("bun2016concentrated", "result “composition of zCDP”")
        + ", "
        + c("feldman2021individual")
        + ", "
        + c("lyu2022composition")
        + "). Desfontaines 2023's open questions:</p><ol>"
        "<li>a setting that generalizes both fully adaptive and concurrent composition, and what "
        "holds there (fully concurrent composition; answered in part by " + c("haney2023concurrent") + ");</li>"
        "<li>optimal fully adaptive results for (ε, δ)-DP and f-DP, and concurrent ones for "
        "δ-approximate ρ-zCDP (the <i>open</i> cells, and the (ε, δ)-DP filter that is optimal only "
        "for small ε);</li>"
        "<li>whether a filter may reorder mechanisms in its analysis, for example compose all the "
        "zCDP queries first and convert once;</li>"
        "<li>whether accounting by privacy loss distributions extends to the fully adaptive and "
        "concurrent settings.</li></ol>"
    )


_REFERENCES = (
    "desfontaines2023composition",
    "dwork2006calibrating",
    "dwork2006our",
    "rogers2016odometers",
    "vadhan2021concurrent",
    "smith2022fully",
    "dong2022gaussian",
    "feldman2021individual",
    "balle2020hypothesis",
    "whitehouse2023fully",
    "lecuyer2021practical",
    "mcsherry2009privacy",
    "haney2023concurrent",
    "kairouz2015composition",
    "lyu2022composition",
    "vadhan2022concurrent",
    "mironov2017",
    "bun2016concentrated",
)

INFO = AppInfo(
    slug="filters_lab",
    title="Composition settings and privacy filters",
    lead=(
        "An analyst picks each query's budget from the noisy answers it has seen, and four "
        "privacy filters with the same (ε, δ) target decide when to refuse: the plot shows how fast "
        "each one's budget runs out. The tabs show which composition results are known in which "
        "setting, and a session that spends its budget on disjoint partitions in parallel."
    ),
    theory=_theory(),
    references=_REFERENCES,
)


def build_filters_lab(
    eps: float = 1.0,
    delta: float = 1e-6,
    queries: int = 100,
    rel_error: float = 0.6,
    seed: int = 0,
    mode: str = "halt",
    parts: int = 3,
    share: float = 0.3,
) -> AppShell:
    """The lab in the shell: the target (ε, δ), the analyst (queries, relative error, refusal
    mode, seed) and the readout table in the panel; tabs for the budget used (main plot),
    Desfontaines 2023's table with the filter-vs-odometer plot, and the session (partitions, share).
    Defaults lie on the sliders' grids.

    >>> app = build_filters_lab(eps=0.5)
    >>> app.controller.readout.value.count("<tr>")
    5
    """
    controls = {
        **{
            k: param_slider(PARAMS[k], v)
            for k, v in (("eps", eps), ("delta", delta), ("queries", queries), ("rel_error", rel_error))
        },
        "mode": dropdown("after a refusal", [(v, k) for k, v in MODES.items()], mode, width="360px"),
        **{k: param_slider(PARAMS[k], v) for k, v in (("seed", seed), ("parts", parts), ("share", share))},
    }
    ctrl = FiltersLabController(controls, MessageArea())
    panel = [controls[k] for k in ("eps", "delta", "queries", "rel_error", "mode", "seed")]
    session_box = W.VBox([controls["parts"], controls["share"], ctrl.session_readout])
    session_box.add_class("dpexplore-filters-session")
    tabs = [
        ("Budget used", [ctrl.fig_main]),
        ("Known results", [W.HTML(table_html()), ctrl.fig_odo]),
        ("Sessions", [session_box, ctrl.fig_session]),
    ]
    style = W.HTML(_STYLE, layout=W.Layout(display="none"))
    return app_shell(
        INFO, ctrl, controls=panel, plots=tabs, readouts=[ctrl.readout], notes=[style], panel_width="400px"
    )
