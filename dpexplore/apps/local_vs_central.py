"""Local vs central (Steinke 2023a): seeded simulations against exact values.

One controller with one cached compute (sections are cached separately inside, so a slider step
recomputes only the section it belongs to):

:func:`build_local_vs_central` (Steinke 2023a)
    * **Inverse sensitivity vs Laplace for the median** (Steinke 2023a, "Beyond Global Sensitivity via
      Inverse Sensitivity", eq. (4)–(5), Theorem 2, eq. (8)): exact and simulated error.
    * **Amplification by shuffling** (Canonne 2022, "Privacy Doona", eq. (1); Feldman, McMillan & Talwar 2021):
      ε = log(1 + 16 (e^{ε_L} − 1)/(e^{ε_L} + 1) · sqrt(e^{ε_L} log(4/δ)/n)), valid when
      ε_L ≤ ln(n/(16 ln(4/δ))).

Every simulation uses ``numpy.random.default_rng([seed, section])`` (seeded, reproducible, and
independent between sections).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..teaching import (
    inverse_sensitivity_median,
    inverse_sensitivity_median_error_cdf,
    inverse_sensitivity_median_mean_error,
    laplace_median,
    laplace_median_error_cdf,
    laplace_median_mean_error,
    shuffle_amplification,
    shuffle_amplification_min_n,
    shuffle_amplification_valid,
)
from ..ui.controls import OKABE_ITO, MessageArea, param_slider
from ..ui.plotwidget import PlotlyWidget
from ..ui.shell import AppInfo, AppShell
from ..ui.views import LOG_AXIS, axes_layout, line_trace, marker_trace
from ._checks import Param, check_params, params_by_name, param_values, snippet_assign
from ._simulation import (
    SEED,
    SIM_BUDGET,
    TRIALS,
    _gap,
    _report,
    _rng,
    _seed_and_trials,
    _SimulationController,
    simulation_shell,
    wrap_row,
)

__all__ = [
    "LocalSpec",
    "compute_local_vs_central",
    "LocalVsCentralController",
    "build_local_vs_central",
    "laplace_median_error_cdf",
    "laplace_median_mean_error",
    "MED_EPS",
    "N_GRID",
]

MED_EPS = np.logspace(-2, 1, 13)
N_GRID = np.logspace(1, 9, 241)
#: the app's numeric parameters: its sliders and the checks of its spec
PARAMS = params_by_name(
    Param("med_eps", 0.01, 10.0, "log", "median ε"),
    Param("spread", 0.001, 1.0, "log", "data spread σ", "data units"),
    Param("n_data", 10, 100000, "log", "data size n", "points", integer=True, steps_per_decade=10),
    Param("eps_local", 0.01, 10.0, "log", "local ε_L"),
    Param("n_users", 10, 10**9, "log", "users n", "users", integer=True, steps_per_decade=10),
    Param("shuffle_delta", 1e-15, 0.01, "log", "shuffle δ", steps_per_decade=4),
    TRIALS,
    SEED,
)
#: parameters the "Reproduce in Python" snippet leaves out, and why
SNIPPET_SKIP = {"trials": "the simulated errors come from the app's seeded runs (compute_local_vs_central)"}

_C = OKABE_ITO
LOWER, UPPER = 0.0, 1.0
MEDIAN_GRID = 1001


@dataclass(frozen=True)
class LocalSpec:
    """Parameters of the local-vs-central app (hashable)."""

    med_eps: float = 1.0
    spread: float = 0.1
    n_data: int = 100
    trials: int = 1000
    seed: int = 0
    eps_local: float = 1.0
    n_users: int = 10000
    shuffle_delta: float = 1e-6


def _check_local_spec(s: LocalSpec) -> None:
    check_params(s, PARAMS)


@functools.lru_cache(maxsize=32)
def _median_data(spread: float, n: int, seed: int) -> np.ndarray:
    """The data set: n values ~ N(0.5, spread²) clipped to [0, 1] (seeded)."""
    x = np.clip(_rng(seed, 10).normal(0.5, spread, n), LOWER, UPPER)
    x.setflags(write=False)
    return x


@functools.lru_cache(maxsize=32)
def _median(eps: float, spread: float, n: int, trials: int, seed: int) -> dict:
    x = _median_data(spread, n, seed)
    xs = np.sort(x)
    med = float(xs[(n + 1) // 2 - 1])
    rng = _rng(seed, 11)
    # exact mean errors vs ε
    is_mean = np.empty(MED_EPS.size)
    for i, e in enumerate(MED_EPS):
        _report("median (exact)", (i + 1) / MED_EPS.size)
        is_mean[i] = inverse_sensitivity_median_mean_error(x, float(e), LOWER, UPPER, MEDIAN_GRID)
    lap_mean = laplace_median_mean_error(MED_EPS, med, LOWER, UPPER)
    # simulated mean errors on the ε grid (trials capped to the simulation budget)
    t_grid = max(50, min(trials, SIM_BUDGET // (2 * MED_EPS.size)))
    is_sim = np.empty(MED_EPS.size)
    lap_sim = np.empty(MED_EPS.size)
    for i, e in enumerate(MED_EPS):
        is_sim[i] = np.mean(
            np.abs(inverse_sensitivity_median(x, float(e), LOWER, UPPER, rng, MEDIAN_GRID, size=t_grid) - med)
        )
        lap_sim[i] = np.mean(np.abs(laplace_median(x, float(e), LOWER, UPPER, rng, size=t_grid) - med))
        _report("median (simulated)", (i + 1) / MED_EPS.size)
    # at the chosen ε: error distributions, exact and simulated
    is_s = np.sort(np.abs(inverse_sensitivity_median(x, eps, LOWER, UPPER, rng, MEDIAN_GRID, size=trials) - med))
    lap_s = np.sort(np.abs(laplace_median(x, eps, LOWER, UPPER, rng, size=trials) - med))
    t = np.logspace(-4, 0, 200)
    return {
        "median": med,
        "eps_grid": MED_EPS,
        "is_mean": is_mean,
        "lap_mean": lap_mean,
        "is_sim": is_sim,
        "lap_sim": lap_sim,
        "trials_grid": t_grid,
        "t": t,
        "is_cdf": inverse_sensitivity_median_error_cdf(t, x, eps, LOWER, UPPER, MEDIAN_GRID),
        "lap_cdf": laplace_median_error_cdf(t, eps, med, LOWER, UPPER),
        "is_ecdf": (is_s, np.arange(1, trials + 1) / trials),
        "lap_ecdf": (lap_s, np.arange(1, trials + 1) / trials),
        "is_mean_here": float(inverse_sensitivity_median_mean_error(x, eps, LOWER, UPPER, MEDIAN_GRID)),
        "lap_mean_here": float(laplace_median_mean_error(eps, med, LOWER, UPPER)),
        "is_sim_here": float(is_s.mean()),
        "lap_sim_here": float(lap_s.mean()),
    }


@functools.lru_cache(maxsize=64)
def _shuffle(eps_local: float, n_users: int, delta: float) -> dict:
    eps = np.asarray(shuffle_amplification(eps_local, N_GRID, delta), float)
    valid = np.asarray(shuffle_amplification_valid(eps_local, N_GRID, delta), bool)
    here = float(shuffle_amplification(eps_local, n_users, delta))
    ok = bool(shuffle_amplification_valid(eps_local, n_users, delta))
    n_min = float(shuffle_amplification_min_n(eps_local, delta))
    return {
        "n": N_GRID,
        "eps_valid": np.where(valid, eps, np.nan),
        "eps_invalid": np.where(valid, np.nan, eps),
        "eps_here": here,
        "valid_here": ok,
        "n_min": n_min,
        "eps_local": eps_local,
    }


def compute_local_vs_central(spec: LocalSpec) -> dict:
    """Every array of the local-vs-central app: inverse sensitivity vs Laplace median errors
    (exact from the output law / the clipped Laplace closed form, and simulated; Steinke 2023a, eq. (4)–(5)
    and eq. (8)) and the shuffle amplification curve ε(n) with its validity region (Canonne 2022, eq. (1)).

    >>> r = compute_local_vs_central(LocalSpec(eps_local=1.0, n_users=10000, shuffle_delta=1e-6))
    >>> round(r["shuffle"]["eps_here"], 6)
    0.388861
    """
    _check_local_spec(spec)
    return {
        "median": _median(float(spec.med_eps), float(spec.spread), int(spec.n_data), int(spec.trials), int(spec.seed)),
        "shuffle": _shuffle(float(spec.eps_local), int(spec.n_users), float(spec.shuffle_delta)),
        "spec": spec,
    }


class LocalVsCentralController(_SimulationController):
    """One controller: median sliders and shuffle sliders → :func:`compute_local_vs_central`."""

    compute = staticmethod(compute_local_vs_central)
    prefetch = True  # the next slider step is computed ahead (controls.PREFETCHER)

    readout_keys = ("median", "shuffle")

    def read_spec(self) -> LocalSpec:
        return LocalSpec(**param_values(self.controls, PARAMS))

    @staticmethod
    def _median_mean(r):
        m = r["median"]
        return [
            line_trace("inverse sensitivity (exact)", m["eps_grid"], m["is_mean"], _C[0]),
            line_trace("Laplace, GS = 1 (exact)", m["eps_grid"], m["lap_mean"], _C[3]),
            marker_trace("inverse sensitivity (simulated)", m["eps_grid"], _gap(m["is_sim"]), _C[0], "x"),
            marker_trace("Laplace (simulated)", m["eps_grid"], _gap(m["lap_sim"]), _C[3], "cross"),
            marker_trace(
                f"chosen ε = {r['spec'].med_eps:.3g}",
                [r["spec"].med_eps] * 2,
                _gap([m["is_mean_here"], m["lap_mean_here"]]),
                _C[7],
                "diamond-open",
                13,
            ),
        ]

    @staticmethod
    def _median_cdf(r):
        m = r["median"]
        out = [
            line_trace("inverse sensitivity (exact)", m["t"], m["is_cdf"], _C[0]),
            line_trace("Laplace (exact)", m["t"], m["lap_cdf"], _C[3]),
        ]
        for key, name, col in (
            ("is_ecdf", "inverse sensitivity (simulated)", _C[0]),
            ("lap_ecdf", "Laplace (simulated)", _C[3]),
        ):
            x, y = m[key]
            step = max(1, x.size // 400)
            out.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "name": name,
                    "x": _gap(x[::step]),
                    "y": y[::step],
                    "line": {"color": col, "dash": "dot", "shape": "hv"},
                }
            )
        return out

    @staticmethod
    def _shuffle_traces(r):
        s = r["shuffle"]
        return [
            line_trace("central ε after shuffling (Canonne 2022, eq. (1))", s["n"], s["eps_valid"], _C[0], 3),
            line_trace("condition fails: no amplification (ε = ε_L)", s["n"], s["eps_invalid"], _C[3], 3, "dash"),
            marker_trace(
                f"chosen n = {r['spec'].n_users:,}", [r["spec"].n_users], [s["eps_here"]], _C[7], "diamond", 12
            ),
        ]

    def figures(self, r):
        self.fig_med_mean = PlotlyWidget(
            self._median_mean(r),
            axes_layout(
                "Median: mean |error| vs ε (data in [0, 1])",
                "ε",
                "E|M(x) − median|",
                xaxis={"type": "log"},
                yaxis=LOG_AXIS,
            ),
        )
        self.fig_med_cdf = PlotlyWidget(
            self._median_cdf(r),
            axes_layout(
                "Median: distribution of |error| at the chosen ε", "|error| t", "P[|error| ≤ t]", xaxis=LOG_AXIS
            ),
        )
        self.fig_shuffle = PlotlyWidget(
            self._shuffle_traces(r),
            axes_layout(
                "Amplification by shuffling: central ε vs number of users n",
                "users n",
                "central ε",
                xaxis=LOG_AXIS,
                yaxis=LOG_AXIS,
            ),
        )
        for f in (self.fig_med_mean, self.fig_med_cdf):
            f.layout.width = "calc(50% - 4px)"
            f.layout.min_width = "330px"
            f.update_layout(height=340)
        return [self.fig_med_mean, self.fig_med_cdf, self.fig_shuffle]

    def render(self, r) -> None:
        for fig, make in (
            (self.fig_med_mean, self._median_mean),
            (self.fig_med_cdf, self._median_cdf),
            (self.fig_shuffle, self._shuffle_traces),
        ):
            fig.update(data=make(r))
        self._write_readouts(r)

    def snippet(self) -> str:
        """The readouts with the public API: the data set, its median, the exact mean errors of
        both private medians and the shuffled central ε (simulated errors: the app's seeded runs)."""
        s = self.spec
        return (
            "import numpy as np\n"
            "from dpexplore.teaching import inverse_sensitivity_median_mean_error, laplace_median_mean_error, "
            "shuffle_amplification\n\n"
            + snippet_assign(s, PARAMS, skip=SNIPPET_SKIP)
            + "x = np.clip(np.random.default_rng([seed, 10]).normal(0.5, spread, n_data), 0.0, 1.0)\n"
            "med = np.sort(x)[(n_data + 1) // 2 - 1]\n"
            "is_err = inverse_sensitivity_median_mean_error(x, med_eps, 0.0, 1.0, 1001)   # exact, from the output law\n"
            "print(f'median {med:.4f}; mean |error|: inverse sensitivity {is_err:.4g}, '\n"
            "      f'Laplace {laplace_median_mean_error(med_eps, med, 0.0, 1.0):.4g}')\n"
            "print(f'shuffled: central eps = {shuffle_amplification(eps_local, n_users, shuffle_delta):.4g}')\n"
        )

    def _write_readouts(self, r) -> None:
        sp, m, s = r["spec"], r["median"], r["shuffle"]
        self.readouts["median"].value = (
            f"n = {sp.n_data} points ~ N(0.5, {sp.spread:.3g}²) clipped to [0, 1], median {m['median']:.4f}. "
            f"At ε = {sp.med_eps:.3g}: mean |error| inverse sensitivity <b>{m['is_mean_here']:.4g}</b> "
            f"(simulated {m['is_sim_here']:.4g}), Laplace <b>{m['lap_mean_here']:.4g}</b> "
            f"(simulated {m['lap_sim_here']:.4g}); {sp.trials:,} trials."
        )
        cond = "holds" if s["valid_here"] else "<b>fails</b> (no amplification claimed: ε = ε_L)"
        self.readouts["shuffle"].value = (
            f"ε_L = {sp.eps_local:.3g}, n = {sp.n_users:,}, δ = {sp.shuffle_delta:.3g}: central "
            f"<b>ε = {s['eps_here']:.4g}</b>. Validity ε_L ≤ ln(n/(16 ln(4/δ))), i.e. n ≥ "
            f"{s['n_min']:.4g}: {cond}."
        )


LOCAL_INFO = AppInfo(
    slug="local_vs_central",
    title="Local vs central: beyond global sensitivity, and shuffling",
    lead=(
        "Two ways to need less noise: inverse sensitivity adapts to the data where Laplace noise "
        "must cover the worst case (the median), and shuffling turns local randomizers into a "
        "much stronger central guarantee."
    ),
    theory=(
        r"<p><b>The median: inverse sensitivity vs Laplace</b> (Steinke 2023a, “Beyond Global "
        r"Sensitivity via Inverse Sensitivity”, eq. (4)–(5), Theorem 2; Asi & Duchi 2020): "
        r"$$P[M(x) = y] \propto \exp\!\left(-\tfrac{\varepsilon}{2}\,\ell(x, y)\right),$$ ℓ(x, y) "
        r"the number of points to change so that y becomes the median, on a grid of 1001 points of "
        r"[0, 1]. Laplace baseline (Steinke 2023a, eq. (8)): median + Lap(GS/ε) with GS = 1 (the data "
        r"range), clipped to [0, 1]: $$E|M - \mathrm{med}| = \tfrac{b}{2}(1 - e^{-a/b}) + "
        r"\tfrac{b}{2}(1 - e^{-c/b}),\ b = 1/\varepsilon.$$ Concentrated data (small spread) have "
        r"small local sensitivity: inverse sensitivity adapts, Laplace cannot. (Errors of exactly 0 "
        r"cannot be drawn on the log axes: they are left out of the plotted empirical CDFs.)</p>"
        r"<p><b>Amplification by shuffling</b> (Canonne 2022, “Privacy Doona”, eq. (1); Feldman, "
        r"McMillan &amp; Talwar 2021): n users each apply an ε_L-LDP randomizer; a shuffler permutes "
        r"the reports. Then the output is (ε, δ)-DP with $$\varepsilon = \log\!\left(1 + 16\,"
        r"\frac{e^{\varepsilon_L} - 1}{e^{\varepsilon_L} + 1}\sqrt{\frac{e^{\varepsilon_L}"
        r"\log(4/\delta)}{n}}\right)\quad\text{if } \varepsilon_L \le \ln\frac{n}{16\ln(4/\delta)},$$ "
        r"and ε = ε_L (no amplification claimed) where the condition fails (dashed).</p>"
    ),
)


def build_local_vs_central(**kwargs) -> AppShell:
    """Local vs central (Steinke 2023a; Canonne 2022) in the shell: inverse sensitivity vs Laplace
    for the median, and amplification by shuffling, one tab each.

    >>> app = build_local_vs_central()
    >>> len(app.controller.figs)
    3
    """
    spec = LocalSpec(**kwargs)
    controls = {
        **_seed_and_trials(spec),
        **{
            k: param_slider(PARAMS[k], getattr(spec, k))
            for k in ("med_eps", "spread", "n_data", "eps_local", "n_users", "shuffle_delta")
        },
    }
    ctrl = LocalVsCentralController(controls, MessageArea())
    median = wrap_row(*(controls[k] for k in ("med_eps", "spread", "n_data")))
    shuffle = wrap_row(*(controls[k] for k in ("eps_local", "n_users", "shuffle_delta")))
    tabs = [
        ("1. The median", [median, ctrl.readouts["median"], wrap_row(ctrl.fig_med_mean, ctrl.fig_med_cdf)]),
        ("2. Shuffling", [shuffle, ctrl.readouts["shuffle"], ctrl.fig_shuffle]),
    ]
    return simulation_shell(LOCAL_INFO, ctrl, controls, tabs)
