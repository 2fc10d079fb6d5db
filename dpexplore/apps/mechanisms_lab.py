"""Mechanisms in action (Bassi 2019): seeded simulations against exact values.

One controller with one cached compute (sections are cached separately inside, so a slider step
recomputes only the section it belongs to):

:func:`build_mechanisms_lab` (Bassi 2019)
    * **Differencing attack** (Bassi 2019, slide "A differencing attack"): on a table of 10 people with a
      sensitive bit, "how many have the bit" minus "how many except the target" reveals the
      target's bit exactly. With Lap(1/ε) noise on each count (each count ε-DP, the pair 2ε-DP by
      basic composition), the attacker who guesses bit = 1 iff the difference D exceeds ½ is right
      with probability (D − bit = Z₁ − Z₂ is the difference of two Lap(b), b = 1/ε)

          P[correct] = 1 − ½ (1 + ε/4) e^{−ε/2}     (from P[Z₁ − Z₂ > t] = ½(1 + t/(2b)) e^{−t/b}).

    * **Laplace error on counting queries** (Bassi 2019, slide "ℓ₁-sensitivity", "Laplace mechanism"): one
      query (Δf = 1, b = 1/ε), m general counting queries (Δf = m, b = m/ε) and m disjoint ones
      (Δf = 1, b = 1/ε). The largest error over m answers, max|Y_i| with |Y_i| ~ Exp(b), has
      CDF (1 − e^{−t/b})^m and mean b·H_m (H_m the harmonic number).
    * **Report noisy max** (Bassi 2019, slide "Report Noisy Max"; ``teaching.ReportNoisyMax``): probability
      of reporting the true largest count vs ε, exact (``ReportNoisyMax.probabilities``) against a
      seeded simulation.
    * **AboveThreshold / Sparse** (Bassi 2019, slide "Sparse vector mechanism"; ``teaching.AboveThreshold``,
      ``teaching.Sparse``) on adaptively chosen counting queries.

Every simulation uses ``numpy.random.default_rng([seed, section])`` (seeded, reproducible, and
independent between sections).

The second app that used to live here, local vs central (Steinke 2023a), is
:mod:`dpexplore.apps.local_vs_central`; its names are re-exported here.

>>> round(attack_accuracy(1.0), 12)
0.62091833768
>>> r = compute_mechanisms_lab(MechSpec())
>>> sorted(r)[:3]
['attack', 'counting', 'rnm']
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import ipywidgets as W
import numpy as np

from ..accounting import composition as C
from ..teaching import AboveThreshold, ReportNoisyMax, Sparse
from ..teaching.counting_queries import (
    counting_query_scales,
    differencing_attack_accuracy,
    harmonic_number,
    laplace_difference_density,
    laplace_max_error_cdf,
    laplace_max_error_mean,
)
from ..ui.controls import OKABE_ITO, MessageArea, param_slider
from ..ui.plotwidget import PlotlyWidget
from ..ui.shell import AppInfo, AppShell
from ..ui.views import axes_layout, line_trace, marker_trace
from ._simulation import PROGRESS_AFTER  # noqa: F401 -- read here before; set it in _simulation
from ._checks import Param, check_params, param_values, params_by_name, snippet_assign
from ._simulation import SEED, SIM_BUDGET, TRIALS, _gap, _report, _rng, _seed_and_trials, simulation_shell, wrap_row
from ._simulation import _SimulationController
from .local_vs_central import (  # the second app that lived here: its names stay importable here
    MED_EPS,
    N_GRID,
    LocalSpec,
    LocalVsCentralController,
    build_local_vs_central,
    compute_local_vs_central,
    laplace_median_error_cdf,
    laplace_median_mean_error,
)
from .local_vs_central import LOCAL_INFO, LOWER, MEDIAN_GRID, UPPER  # noqa: F401 -- names of this module before

__all__ = [
    "PEOPLE",
    "BITS",
    "SCORES",
    "SCORE_LABELS",
    "MechSpec",
    "compute_mechanisms_lab",
    "MechanismsLabController",
    "build_mechanisms_lab",
    "LocalSpec",
    "compute_local_vs_central",
    "LocalVsCentralController",
    "build_local_vs_central",
    "attack_accuracy",
    "harmonic",
    "max_error_cdf",
    "laplace_median_error_cdf",
    "laplace_median_mean_error",
    "svt_queries",
    "ATTACK_EPS",
    "ATTACK_EPS_FINE",
    "M_GRID",
    "RNM_EPS",
    "RNM_EPS_FINE",
    "MED_EPS",
    "N_GRID",
    "SVT_VARIANTS",
    "SVT_MAX_QUERIES",
    "AGES",
    "SIM_BUDGET",
]

#: the small table of the differencing attack: 10 people and their sensitive bit
PEOPLE = ("Alice", "Bob", "Charles", "Diana", "Eve", "Frank", "Grace", "Heidi", "Ivan", "Judy")
BITS = (1, 0, 1, 1, 0, 0, 1, 0, 1, 0)
#: Report noisy max: counts of patients per diagnosis (counting queries: monotone, Lap(1/ε))
SCORE_LABELS = ("flu", "cold", "covid", "asthma", "migraine")
SCORES = (50.0, 48.0, 45.0, 40.0, 30.0)
ATTACK_EPS = np.logspace(-2, 1, 16)  # simulated points
ATTACK_EPS_FINE = np.logspace(-2, 1, 121)  # exact curve
M_GRID = np.unique(np.round(np.logspace(0, 3, 46)).astype(int))
RNM_EPS = np.logspace(-2, 1, 13)
RNM_EPS_FINE = np.logspace(-2, 1, 49)
SVT_VARIANTS = ("AboveThreshold", "Sparse (δ = 0)", "Sparse (δ > 0)")
SVT_MAX_QUERIES = 80
#: the population of the sparse-vector section: 1000 ages from a fixed generator (the data)
AGES = np.sort(np.random.default_rng(20240).integers(0, 100, 1000))
#: the lab's numeric parameters: its sliders and the checks of its spec
PARAMS = params_by_name(
    Param("attack_eps", 0.01, 10.0, "log", "attack ε"),
    Param("count_eps", 0.01, 10.0, "log", "counting ε"),
    Param("m", 1, 1000, "log", "queries m", "queries", integer=True),
    Param("rnm_eps", 0.01, 10.0, "log", "noisy-max ε"),
    Param("svt_eps", 0.1, 10.0, "log", "SVT ε"),
    Param("svt_delta", 1e-12, 0.01, "log", "SVT δ", steps_per_decade=4),
    Param("threshold", 0.0, 1000.0, "linear", "threshold T", "people", step=5.0),
    Param("c", 1, 20, "linear", "above-threshold answers c", "answers", integer=True),
    TRIALS,
    SEED,
)
_SIMULATED = "the simulated numbers come from the app's seeded simulations (compute_mechanisms_lab)"
#: parameters the "Reproduce in Python" snippet (the exact numbers) leaves out, and why (SVT δ:
#: but for the "Sparse (δ > 0)" variant)
SNIPPET_SKIP = {"trials": _SIMULATED, "seed": _SIMULATED}


# ------------------------------------------------------------------------------------------------
# closed forms
# ------------------------------------------------------------------------------------------------
#: the exact values of the attack and counting sections, under the lab's names
#: (:mod:`dpexplore.teaching.counting_queries`: Bassi 2019, slides "A differencing attack",
#: "Laplace mechanism")
attack_accuracy = differencing_attack_accuracy
harmonic = harmonic_number
max_error_cdf = laplace_max_error_cdf
_diff_density = laplace_difference_density


# ------------------------------------------------------------------------------------------------
# Mechanisms in action (Bassi 2019)
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MechSpec:
    """Parameters of the mechanisms lab (hashable: the cache key)."""

    attack_eps: float = 1.0
    target: str = "Alice"
    count_eps: float = 1.0
    m: int = 100
    rnm_eps: float = 0.1
    svt_variant: str = "Sparse (δ = 0)"
    svt_eps: float = 1.0
    svt_delta: float = 1e-6
    threshold: float = 300.0
    c: int = 3
    trials: int = 1000
    seed: int = 0


def _check_mech_spec(s: MechSpec) -> None:
    check_params(s, PARAMS)
    if s.target not in PEOPLE:
        raise ValueError(f"target must be one of {PEOPLE}, got target = {s.target!r}")
    if s.svt_variant not in SVT_VARIANTS:
        raise ValueError(f"svt_variant must be one of {SVT_VARIANTS}, got svt_variant = {s.svt_variant!r}")


@functools.lru_cache(maxsize=64)
def _attack(eps: float, target: str, trials: int, seed: int) -> dict:
    """Differencing attack: simulated accuracy on ATTACK_EPS, the exact curve, and the
    distribution of D = noisy(all) − noisy(all but target) at ``eps``."""
    i = PEOPLE.index(target)
    bit = BITS[i]
    total = sum(BITS)
    rng = _rng(seed, 1)
    b = counting_query_scales(ATTACK_EPS)["one"][:, None]  # Lap(1/ε) on each count (rounded up)
    t_grid = max(50, min(trials, SIM_BUDGET // (2 * ATTACK_EPS.size)))
    d = (total + rng.laplace(0.0, 1.0, (ATTACK_EPS.size, t_grid)) * b) - (
        total - bit + rng.laplace(0.0, 1.0, (ATTACK_EPS.size, t_grid)) * b
    )
    sim = np.mean((d > 0.5) == (bit == 1), axis=1)
    _report("differencing attack", 1.0)
    b_here = float(counting_query_scales(eps)["one"])
    d_here = (total + rng.laplace(0.0, b_here, trials)) - (total - bit + rng.laplace(0.0, b_here, trials))
    half = 0.5 + 8.0 / eps
    edges = np.linspace(0.5 - half, 0.5 + half, 61)
    counts, _ = np.histogram(d_here, bins=edges)
    width = edges[1] - edges[0]
    xs = np.linspace(edges[0], edges[-1], 301)
    return {
        "bit": bit,
        "eps_sim": ATTACK_EPS,
        "acc_sim": sim,
        "acc_se": np.sqrt(np.maximum(sim * (1 - sim), 1e-12) / t_grid),
        "trials_grid": t_grid,
        "eps_fine": ATTACK_EPS_FINE,
        "acc_exact": attack_accuracy(ATTACK_EPS_FINE),
        "acc_here": attack_accuracy(eps),
        # the two counts, each ε-DP, are 2ε-DP together (basic composition)
        "pair_eps": float(C.basic([eps, eps])[0]),
        "acc_here_sim": float(np.mean((d_here > 0.5) == (bit == 1))),
        "centers": 0.5 * (edges[1:] + edges[:-1]),
        "hist": counts / (trials * width),
        "xs": xs,
        "dens0": _diff_density(xs, eps),
        "dens1": _diff_density(xs - 1.0, eps),
    }


@functools.lru_cache(maxsize=64)
def _counting(eps: float, m: int, trials: int, seed: int) -> dict:
    """Laplace error on counting queries: exact E[max error] = b H_m vs m for the three settings,
    simulated max errors at ``m`` (trials capped so that trials·m ≤ SIM_BUDGET), exact CDFs."""
    rng = _rng(seed, 2)
    scales = {k: float(v) for k, v in counting_query_scales(eps, m).items()}
    b_one, b_gen, b_dis = scales["one"], scales["general"], scales["disjoint"]
    t_eff = max(50, min(trials, SIM_BUDGET // m))
    sims = {
        "one": np.abs(rng.laplace(0.0, b_one, t_eff)),
        "general": np.abs(rng.laplace(0.0, b_gen, (t_eff, m))).max(axis=1),
        "disjoint": np.abs(rng.laplace(0.0, b_dis, (t_eff, m))).max(axis=1),
    }
    _report("counting queries", 1.0)
    exact_mean = {
        k: laplace_max_error_mean(mm, b)
        for k, mm, b in (("one", 1, b_one), ("general", m, b_gen), ("disjoint", m, b_dis))
    }
    lo = 1e-3 * b_one
    hi = b_gen * (harmonic(m) + 12.0)
    t = np.logspace(math.log10(lo), math.log10(hi), 200)
    cdf = {
        "one": max_error_cdf(t, 1, b_one),
        "general": max_error_cdf(t, m, b_gen),
        "disjoint": max_error_cdf(t, m, b_dis),
    }
    ecdf = {k: (np.sort(v), np.arange(1, v.size + 1) / v.size) for k, v in sims.items()}
    return {
        "m": m,
        "trials_used": t_eff,
        "m_grid": M_GRID,
        "mean_curves": {
            "one": np.full(M_GRID.shape, b_one),
            "general": laplace_max_error_mean(M_GRID, counting_query_scales(eps, M_GRID)["general"]),
            "disjoint": laplace_max_error_mean(M_GRID, b_dis),
        },
        "exact_mean": exact_mean,
        "sim_mean": {k: float(v.mean()) for k, v in sims.items()},
        "t": t,
        "cdf": cdf,
        "ecdf": ecdf,
        "scales": scales,
    }


@functools.lru_cache(maxsize=1)
def _rnm_exact_curve() -> np.ndarray:
    """P[report the true max] on RNM_EPS_FINE, exact (``ReportNoisyMax.probabilities``, monotone
    counts: Lap(1/ε)); computed once (~0.1 s)."""
    return np.array([ReportNoisyMax(e, monotonic=True).probabilities(SCORES)[0] for e in RNM_EPS_FINE])


@functools.lru_cache(maxsize=64)
def _rnm(eps: float, trials: int, seed: int) -> dict:
    rng = _rng(seed, 3)
    t_grid = max(50, min(trials, SIM_BUDGET // (len(SCORES) * RNM_EPS.size)))
    sim = np.empty(RNM_EPS.size)
    for i, e in enumerate(RNM_EPS):
        sim[i] = np.mean(ReportNoisyMax(e, monotonic=True).run(SCORES, rng, size=t_grid) == 0)
        _report("report noisy max", (i + 1) / RNM_EPS.size)
    picks = np.asarray(ReportNoisyMax(eps, monotonic=True).run(SCORES, rng, size=trials))
    freq = np.bincount(picks, minlength=len(SCORES)) / trials
    probs = ReportNoisyMax(eps, monotonic=True).probabilities(SCORES)
    return {
        "eps_sim": RNM_EPS,
        "p_sim": sim,
        "p_se": np.sqrt(np.maximum(sim * (1 - sim), 1e-12) / t_grid),
        "trials_grid": t_grid,
        "eps_fine": RNM_EPS_FINE,
        "p_exact": _rnm_exact_curve(),
        "probs": probs,
        "freq": freq,
        "p_here": float(probs[0]),
    }


def svt_queries(alg, rng, max_queries: int = SVT_MAX_QUERIES):
    """The adaptive analyst of the sparse-vector section: query j asks "how many people are at
    least a_j years old?" (sensitivity 1) on ``AGES``; the analyst starts at a = 95, lowers the
    cut by 2 years after ⊥ and raises it by 10 after ⊤ (so each query depends on the previous
    answers), and stops when the algorithm halts. Returns (cuts, true values, answers 1/0).

    >>> cuts, vals, ans = svt_queries(AboveThreshold(eps=1.0, threshold=300.0), np.random.default_rng(0))
    >>> int(ans[-1]), int(ans[:-1].sum())          # AboveThreshold halts at its first ⊤
    (1, 0)
    """
    session = alg.start(rng)
    cuts, vals, answers = [], [], []
    a = 95
    for _ in range(max_queries):
        v = float(np.count_nonzero(AGES >= a))
        ans = session.answer(v)
        if ans is None:
            break
        cuts.append(a)
        vals.append(v)
        answers.append(1 if ans else 0)
        a = a + 10 if ans else max(a - 2, 0)
        if session.halted:
            break
    return np.array(cuts), np.array(vals), np.array(answers, dtype=int)


@functools.lru_cache(maxsize=64)
def _svt(variant: str, eps: float, delta: float, threshold: float, c: int, seed: int) -> dict:
    if variant == "AboveThreshold":
        alg = AboveThreshold(eps=eps, threshold=threshold)
        cc = 1
        eps0 = eps
    else:
        alg = Sparse(c=c, eps=eps, delta=delta if variant == "Sparse (δ > 0)" else 0.0, threshold=threshold)
        cc = c
        eps0 = alg.eps0
    cuts, vals, answers = svt_queries(alg, _rng(seed, 4))
    alpha = alg.accuracy(SVT_MAX_QUERIES, 0.05)
    n_above = int(answers.sum())
    return {
        "variant": variant,
        "cuts": cuts,
        "values": vals,
        "answers": answers,
        "c": cc,
        "n_above": n_above,
        "n_queries": int(answers.size),
        "privacy": alg.privacy(),
        "eps0": float(eps0),
        "threshold": threshold,
        "alpha": float(alpha),
        "threshold_scale": float(alg.threshold_scale),
        "query_scale": float(alg.query_scale),
        "halted": n_above >= cc,
    }


def compute_mechanisms_lab(spec: MechSpec) -> dict:
    """Every array of the mechanisms lab (Bassi 2019) for one setting: the differencing attack (exact
    1 − ½(1 + ε/4)e^{−ε/2} vs simulation), Laplace errors of 1 / m general / m disjoint counting
    queries (exact b·H_m and (1 − e^{−t/b})^m vs simulation), report noisy max (exact selection
    law vs simulation) and AboveThreshold / Sparse on adaptive queries. Each section is cached on
    its own parameters. Raises ValueError naming a bad parameter.

    >>> r = compute_mechanisms_lab(MechSpec(m=10, count_eps=2.0))
    >>> round(r["counting"]["exact_mean"]["general"], 6)     # (m/ε) H_10
    14.644841
    """
    _check_mech_spec(spec)
    return {
        "attack": _attack(float(spec.attack_eps), spec.target, int(spec.trials), int(spec.seed)),
        "counting": _counting(float(spec.count_eps), int(spec.m), int(spec.trials), int(spec.seed)),
        "rnm": _rnm(float(spec.rnm_eps), int(spec.trials), int(spec.seed)),
        "svt": _svt(
            spec.svt_variant,
            float(spec.svt_eps),
            float(spec.svt_delta),
            float(spec.threshold),
            int(spec.c),
            int(spec.seed),
        ),
        "spec": spec,
    }


_C = OKABE_ITO
_SETTINGS = (
    ("one", "one query (Δf = 1, b = 1/ε)", _C[0]),
    ("general", "m general queries (Δf = m, b = m/ε)", _C[3]),
    ("disjoint", "m disjoint queries (Δf = 1, b = 1/ε)", _C[2]),
)


def _exact_line(label, x, y, color) -> dict:
    """The exact curve of one setting of the counting-queries section."""
    return line_trace(f"exact: {label}", x, y, color)


class MechanismsLabController(_SimulationController):
    """One controller for the four Bassi 2019 sections → :func:`compute_mechanisms_lab` → 7 figures."""

    compute = staticmethod(compute_mechanisms_lab)

    readout_keys = ("attack", "counting", "rnm", "svt")

    def sync_controls(self) -> None:
        """SVT δ changes only the 'Sparse (δ > 0)' algorithm: greyed out for the other two."""
        self.controls["svt_delta"].disabled = self.controls["svt_variant"].value != "Sparse (δ > 0)"

    def read_spec(self) -> MechSpec:
        c = self.controls
        return MechSpec(
            **param_values(c, PARAMS), target=str(c["target"].value), svt_variant=str(c["svt_variant"].value)
        )

    # traces -----------------------------------------------------------------------------------
    @staticmethod
    def _exact_and_simulated(d, key, exact_name, reference, eps):
        """A section's exact curve ``d[key + "_exact"]`` on ``d["eps_fine"]``, its simulated points
        (±2 s.e.), a horizontal ``reference`` = (name, y, x grid) and the chosen ε."""
        ref_name, ref_y, ref_x = reference
        return [
            line_trace(exact_name, d["eps_fine"], d[f"{key}_exact"], _C[0]),
            {
                "type": "scatter",
                "mode": "markers",
                "x": d["eps_sim"],
                "y": d[f"{key}_sim"],
                "marker": {"color": _C[1], "size": 7},
                "name": f"simulated ({d['trials_grid']:,} trials each, ±2 s.e.)",
                "error_y": {"type": "data", "array": 2 * d[f"{key}_se"], "visible": True},
            },
            {
                "type": "scatter",
                "mode": "lines",
                "name": ref_name,
                "x": [ref_x[0], ref_x[-1]],
                "y": [ref_y, ref_y],
                "line": {"color": _C[7], "dash": "dot"},
            },
            marker_trace(f"chosen ε = {eps:.3g}", [eps], [d[f"{key}_here"]], _C[3], "diamond", 12),
        ]

    @staticmethod
    def _attack_acc(r):
        return MechanismsLabController._exact_and_simulated(
            r["attack"],
            "acc",
            "exact 1 − ½(1 + ε/4)e^(−ε/2)",
            ("no noise: always right", 1.0, ATTACK_EPS_FINE),
            r["spec"].attack_eps,
        )

    @staticmethod
    def _attack_hist(r):
        a = r["attack"]
        return [
            {
                "type": "scatter",
                "mode": "lines",
                "name": "simulated D (target's true bit)",
                "x": a["centers"],
                "y": a["hist"],
                "line": {"color": _C[1], "shape": "hvh"},
            },
            line_trace("exact density if bit = 0", a["xs"], a["dens0"], _C[0]),
            line_trace("exact density if bit = 1", a["xs"], a["dens1"], _C[2]),
            {
                "type": "scatter",
                "mode": "lines",
                "name": "guess threshold D = ½",
                "x": [0.5, 0.5],
                "y": [0.0, float(max(a["dens0"].max(), a["hist"].max()))],
                "line": {"color": _C[7], "dash": "dash"},
            },
        ]

    @staticmethod
    def _count_mean(r):
        k, m = r["counting"], r["counting"]["m"]
        out = [_exact_line(label, k["m_grid"], k["mean_curves"][key], col) for key, label, col in _SETTINGS]
        sims = [k["sim_mean"][key] for key, _, _ in _SETTINGS]
        colors = [c for _, _, c in _SETTINGS]
        out.append(marker_trace(f"simulated at m = {m}", [m] * 3, sims, colors, "x", 11, outline="#000000"))
        return out

    @staticmethod
    def _count_cdf(r):
        k = r["counting"]
        out = [_exact_line(label, k["t"], k["cdf"][key], col) for key, label, col in _SETTINGS]
        for key, _label, col in _SETTINGS:
            x, y = k["ecdf"][key]
            step = max(1, x.size // 400)  # ≤ 400 points per empirical CDF on the wire
            out.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "name": f"simulated: {key}",
                    "x": _gap(x[::step]),
                    "y": y[::step],
                    "line": {"color": col, "dash": "dot", "shape": "hv"},
                }
            )
        return out

    @staticmethod
    def _rnm_curve(r):
        return MechanismsLabController._exact_and_simulated(
            r["rnm"], "p", "exact P[report the true max]", ("uniform guess 1/5", 0.2, RNM_EPS_FINE), r["spec"].rnm_eps
        )

    @staticmethod
    def _rnm_bars(r):
        q = r["rnm"]
        labels = [f"{n} ({int(s)})" for n, s in zip(SCORE_LABELS, SCORES)]
        return [
            {"type": "bar", "name": "exact probability", "x": labels, "y": q["probs"], "marker": {"color": _C[0]}},
            {"type": "bar", "name": "simulated frequency", "x": labels, "y": q["freq"], "marker": {"color": _C[1]}},
        ]

    @staticmethod
    def _svt_traces(r):
        s = r["svt"]
        idx = np.arange(1, s["values"].size + 1)
        up, down = s["answers"] == 1, s["answers"] == 0
        t, a = s["threshold"], s["alpha"]
        n = SVT_MAX_QUERIES
        return [
            marker_trace("⊤ (reported above T)", idx[up], s["values"][up], _C[3], "triangle-up", 11),
            marker_trace("⊥ (reported below T)", idx[down], s["values"][down], _C[0], "circle-open", 7),
            line_trace(f"threshold T = {t:g}", [0, n], [t, t], _C[7]),
            {
                "type": "scatter",
                "mode": "lines",
                "name": f"T ± α (α = {a:.3g}: all right w.p. 0.95)",
                "x": [0, n, None, 0, n],
                "y": [t - a, t - a, None, t + a, t + a],
                "line": {"color": _C[5], "dash": "dash"},
            },
        ]

    def figures(self, r):
        self.fig_attack = PlotlyWidget(
            self._attack_acc(r),
            axes_layout(
                "Differencing attack: attacker's accuracy vs ε",
                "ε per count",
                "P[guess the bit right]",
                xaxis={"type": "log"},
                yaxis={"range": [0.45, 1.03]},
            ),
        )
        self.fig_attack_hist = PlotlyWidget(
            self._attack_hist(r),
            axes_layout("What the attacker sees: D = noisy(all) − noisy(all but target)", "D", "density"),
        )
        self.fig_count_mean = PlotlyWidget(
            self._count_mean(r),
            axes_layout(
                "Expected largest error of m Laplace answers: b·H_m",
                "number of queries m",
                "E[max |error|]",
                xaxis={"type": "log"},
                yaxis={"type": "log", "exponentformat": "power"},
            ),
        )
        self.fig_count_cdf = PlotlyWidget(
            self._count_cdf(r),
            axes_layout(
                "Distribution of the largest error: (1 − e^{−t/b})^m",
                "largest |error| t",
                "P[max |error| ≤ t]",
                xaxis={"type": "log", "exponentformat": "power"},
            ),
        )
        self.fig_rnm = PlotlyWidget(
            self._rnm_curve(r),
            axes_layout(
                "Report noisy max: probability of the true largest count",
                "ε",
                "P[true max reported]",
                xaxis={"type": "log"},
                yaxis={"range": [0.0, 1.03]},
            ),
        )
        self.fig_rnm_bars = PlotlyWidget(
            self._rnm_bars(r),
            axes_layout(
                "Which count is reported (at the chosen ε)", "candidate (true count)", "probability", barmode="group"
            ),
        )
        self.fig_svt = PlotlyWidget(
            self._svt_traces(r),
            axes_layout(
                "Sparse vector on adaptive queries: true values and answers",
                "query number",
                "true count (people ≥ age cut)",
                xaxis={"range": [0, SVT_MAX_QUERIES + 1]},
                height=420,
            ),
        )
        return [
            self.fig_attack,
            self.fig_attack_hist,
            self.fig_count_mean,
            self.fig_count_cdf,
            self.fig_rnm,
            self.fig_rnm_bars,
            self.fig_svt,
        ]

    def render(self, r) -> None:
        pairs = (
            (self.fig_attack, self._attack_acc),
            (self.fig_attack_hist, self._attack_hist),
            (self.fig_count_mean, self._count_mean),
            (self.fig_count_cdf, self._count_cdf),
            (self.fig_rnm, self._rnm_curve),
            (self.fig_rnm_bars, self._rnm_bars),
            (self.fig_svt, self._svt_traces),
        )
        for fig, make in pairs:
            with fig.batch_update():
                fig.update(data=make(r))
        self._write_readouts(r)

    def snippet(self) -> str:
        """The exact numbers of the readouts with the public API (the simulated ones come from the
        seeded simulations of :func:`compute_mechanisms_lab`)."""
        s = self.spec
        skip = [*SNIPPET_SKIP]
        if s.svt_variant == "AboveThreshold":
            alg, skip = "AboveThreshold(eps=svt_eps, threshold=threshold)   # c: Sparse only", [*skip, "svt_delta"]
        elif s.svt_variant == "Sparse (δ > 0)":
            alg = "Sparse(c=c, eps=svt_eps, delta=svt_delta, threshold=threshold)"
        else:
            alg, skip = "Sparse(c=c, eps=svt_eps, delta=0.0, threshold=threshold)", [*skip, "svt_delta"]
        return (
            "from dpexplore.teaching import AboveThreshold, ReportNoisyMax, Sparse\n"
            "from dpexplore.teaching import differencing_attack_accuracy, harmonic_number, laplace_max_error_mean\n"
            "from dpexplore.teaching import counting_query_scales\n"
            "from dpexplore.apps.mechanisms_lab import SCORES\n\n"
            + snippet_assign(s, PARAMS, skip=skip)
            + "print(f'differencing attack, exact accuracy: {differencing_attack_accuracy(attack_eps):.4f}')\n"
            "hm = harmonic_number(m)\n"
            "# expected largest |Lap(b)| of m draws: b * H_m, b = 1/eps (one, m disjoint), m/eps (m general)\n"
            "b = counting_query_scales(count_eps, m)\n"
            "one, general, disjoint = (laplace_max_error_mean(k, b[name]) for k, name in ((1, 'one'),\n"
            "                          (m, 'general'), (m, 'disjoint')))\n"
            "print(f'H_m = {hm:.4f}; expected largest error: one query {one:.4g}, '\n"
            "      f'm general {general:.4g}, m disjoint {disjoint:.4g}')\n"
            "p = ReportNoisyMax(rnm_eps, monotonic=True).probabilities(SCORES)[0]\n"
            "print(f'report noisy max: P[the true largest count] = {p:.4f}')\n"
            f"svt = {alg}\n"
            "eps_p, delta_p = svt.privacy()\n"
            "print(f'sparse vector: threshold noise Lap({svt.threshold_scale:.3g}), query noise '\n"
            "      f'Lap({svt.query_scale:.3g}); guarantee (eps, delta) = ({eps_p:.4g}, {delta_p:.3g})')\n"
        )

    def _write_readouts(self, r) -> None:
        sp, a, k, q, s = r["spec"], r["attack"], r["counting"], r["rnm"], r["svt"]
        self.readouts["attack"].value = (
            f"Target <b>{sp.target}</b> (bit {a['bit']}). Without noise the difference of the two counts "
            f"is the bit itself: the attacker is always right. With Lap(1/ε) on each count, ε = "
            f"{sp.attack_eps:.3g} (2ε = {a['pair_eps']:.3g} for both queries): exact accuracy "
            f"<b>{a['acc_here']:.4f}</b>, simulated {a['acc_here_sim']:.4f} ({sp.trials:,} trials)."
        )
        hm = harmonic(k["m"])
        self.readouts["counting"].value = (
            f"m = {k['m']}, ε = {sp.count_eps:.3g}, H_m = {hm:.4f}. Expected largest error: one query "
            f"<b>{k['exact_mean']['one']:.4g}</b>, m general <b>{k['exact_mean']['general']:.4g}</b>, "
            f"m disjoint <b>{k['exact_mean']['disjoint']:.4g}</b> (simulated "
            f"{k['sim_mean']['one']:.4g}, {k['sim_mean']['general']:.4g}, {k['sim_mean']['disjoint']:.4g}; "
            f"{k['trials_used']:,} trials)."
        )
        self.readouts["rnm"].value = (
            f"ε = {sp.rnm_eps:.3g}: P[report '{SCORE_LABELS[0]}', the true largest count] = "
            f"<b>{q['p_here']:.4f}</b> exact, {q['freq'][0]:.4f} simulated ({sp.trials:,} trials)."
        )
        eps_p, delta_p = s["privacy"]
        self.readouts["svt"].value = (
            f"{s['variant']}: threshold noise Lap({s['threshold_scale']:.3g}), query noise "
            f"Lap({s['query_scale']:.3g}). Answered {s['n_queries']} queries; <b>budget used: "
            f"{s['n_above']} of {s['c']}</b> above-threshold answers"
            f"{' (halted)' if s['halted'] else ''}, each costing ε₀ = {s['eps0']:.3g}. "
            f"Guarantee of the whole run: (ε, δ) = ({eps_p:.4g}, {delta_p:.3g})."
        )


_MECH_INTRO = r"""
<p>The Laplace mechanism answers f(x) + Lap(Δf/ε) and is (ε, 0)-DP, with the ℓ₁-sensitivity
$$\Delta f = \max_{\|x - y\|_1 = 1} \|f(x) - f(y)\|_1 \quad\text{(Bassi 2019, slide "ℓ₁-sensitivity", "Laplace mechanism")}.$$</p>
"""


MECH_INFO = AppInfo(
    slug="mechanisms_lab",
    title="Mechanisms in action",
    lead=(
        "Four classic results, each simulated next to its exact value: a differencing attack, "
        "Laplace noise on counting queries, report noisy max and the sparse vector technique."
    ),
    theory=_MECH_INTRO
    + (
        r"<p><b>Differencing attack.</b> $$P[\text{correct}] = 1 - \tfrac12\left(1 + \tfrac{\varepsilon}{4}\right)e^{-\varepsilon/2},"
        r"\qquad P[Z_1 - Z_2 > t] = \tfrac12\left(1 + \tfrac{t}{2b}\right)e^{-t/b},\ b = 1/\varepsilon.$$</p>"
        r"<p><b>Counting queries.</b> One counting query: Δf = 1, noise Lap(1/ε). m general counting "
        r"queries: one person can change all m counts, Δf = m, noise Lap(m/ε) on each. m disjoint "
        r"counting queries (a histogram): Δf = 1, noise Lap(1/ε). With |Y| ~ Exp(b), "
        r"$$P[\max_{i\le m}|Y_i| \le t] = (1 - e^{-t/b})^m,\qquad E[\max_{i \le m}|Y_i|] = b\,H_m,"
        r"\ H_m = \textstyle\sum_{k=1}^m 1/k.$$</p>"
        "<p><b>Report noisy max.</b> Add Lap(1/ε) to each count and report only the index of the "
        "largest: (ε, 0)-DP, while releasing all m counts would need Δf = m. Exact law: "
        "P[i] = ∫ f(z − s<sub>i</sub>) ∏<sub>j≠i</sub> F(z − s<sub>j</sub>) dz "
        "(teaching.ReportNoisyMax.probabilities).</p>"
        "<p><b>Sparse vector.</b> An analyst asks “how many of 1000 people are at least a years "
        "old?” (sensitivity 1), starting at a = 95: after ⊥ she lowers the cut by 2 years, after ⊤ "
        "she raises it by 10, so every query depends on earlier answers. AboveThreshold: "
        "T̂ = T + Lap(2/ε), ν<sub>i</sub> ~ Lap(4/ε), halt at the first ⊤ (ε-DP). Sparse: restart "
        "after each ⊤, halt after c of them; σ = 2c/ε for δ = 0 (ε-DP), or ε₀ from advanced "
        "composition for δ &gt; 0 (teaching.Sparse). Privacy degrades with the number of ⊤ "
        "answers only, not with the number of queries.</p>"
    ),
)


def build_mechanisms_lab(**kwargs) -> AppShell:
    """Mechanisms in action (Bassi 2019): differencing attack, Laplace errors of counting queries,
    report noisy max and sparse vector, each seeded (``seed``) with a ``trials`` control.

    >>> app = build_mechanisms_lab()
    >>> len(app.controller.figs)
    7
    """
    spec = MechSpec(**kwargs)
    controls = {
        **_seed_and_trials(spec),
        "target": W.Dropdown(
            options=list(PEOPLE), value=spec.target, description="target person", style={"description_width": "initial"}
        ),
        **{k: param_slider(PARAMS[k], getattr(spec, k)) for k in ("attack_eps", "count_eps", "m", "rnm_eps")},
        "svt_variant": W.Dropdown(
            options=list(SVT_VARIANTS),
            value=spec.svt_variant,
            description="algorithm",
            style={"description_width": "initial"},
        ),
        **{k: param_slider(PARAMS[k], getattr(spec, k)) for k in ("svt_eps", "svt_delta", "threshold", "c")},
    }
    ctrl = MechanismsLabController(controls, MessageArea())
    # five people a row: ten in one row were wider than presentation mode's panel at 18 px
    table = "".join(
        "<tr><th scope='row'>person</th>"
        + "".join(f"<td>{p}</td>" for p in PEOPLE[i : i + 5])
        + "</tr><tr><th scope='row'>bit</th>"
        + "".join(f"<td align='center'>{b}</td>" for b in BITS[i : i + 5])
        + "</tr>"
        for i in range(0, len(PEOPLE), 5)
    )
    H = W.HTML
    for f in ctrl.figs[:-1]:
        f.layout.width = "calc(50% - 4px)"
        f.layout.min_width = "330px"
    for f in ctrl.figs:
        f.update_layout(height=330)
    H3 = lambda text: H(f"<p style='margin:4px 0'><b>{text}</b></p>")
    tabs = [
        (
            "1. Differencing attack",
            [
                H3("A differencing attack (Bassi 2019, slide “A differencing attack”)"),
                H(
                    f'<table style="font-size:13px;display:inline-table;vertical-align:middle;margin-right:1em">{table}</table>'
                    "<span style='display:inline-block;max-width:520px;vertical-align:middle'>“How many have the bit?” "
                    "minus “how many except the target?” is the target's bit; with Lap(1/ε) noise on each "
                    "count the attacker guesses 1 iff the difference D &gt; ½.</span>"
                ),
                wrap_row(controls["target"], controls["attack_eps"]),
                ctrl.readouts["attack"],
                wrap_row(ctrl.fig_attack, ctrl.fig_attack_hist),
            ],
        ),
        (
            "2. Counting queries",
            [
                H3("Laplace error on counting queries (Bassi 2019, ℓ₁-sensitivity examples)"),
                wrap_row(controls["count_eps"], controls["m"]),
                ctrl.readouts["counting"],
                wrap_row(ctrl.fig_count_mean, ctrl.fig_count_cdf),
            ],
        ),
        (
            "3. Report noisy max",
            [
                H3(
                    "Report noisy max (Bassi 2019, slide “Report Noisy Max”): counts of patients per diagnosis, "
                    + ", ".join(f"{n} {int(s)}" for n, s in zip(SCORE_LABELS, SCORES))
                ),
                controls["rnm_eps"],
                ctrl.readouts["rnm"],
                wrap_row(ctrl.fig_rnm, ctrl.fig_rnm_bars),
            ],
        ),
        (
            "4. Sparse vector",
            [
                H3("AboveThreshold and Sparse (Bassi 2019, slide “Sparse vector mechanism”)"),
                wrap_row(*(controls[k] for k in ("svt_variant", "svt_eps", "svt_delta", "threshold", "c"))),
                ctrl.readouts["svt"],
                ctrl.fig_svt,
            ],
        ),
    ]
    return simulation_shell(MECH_INFO, ctrl, controls, tabs)
