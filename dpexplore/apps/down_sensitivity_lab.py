"""Down sensitivity lab (Steinke 2023b, "Beyond local sensitivity via down sensitivity"; Fang, Dong
& Yi 2022, the shifted inverse mechanism).

Adding one item can raise the maximum of a dataset (or a user-level sum, where one person may
contribute without limit) arbitrarily, so its local sensitivity is unbounded; removing items can
only lower it by the *down* sensitivity DS^k_f(x) (Steinke 2023b, eq. (1)). The loss ℓ(x, y) — how
many items must be removed to bring f to at most y (Steinke 2023b, eq. (4)) — has global
sensitivity 1 (Steinke 2023b, Proposition 3), and the shifted inverse mechanism looks for a y whose loss is near
a shift τ > 0: with probability ≥ 1 − β its output lies in [f(x) − DS^{2τ}_f(x), f(x)]
(ε-DP: Steinke 2023b, Theorem 4; the noisy binary search: Steinke 2023b, Theorem 5).

The lab draws a seeded dataset of n people the user shapes (a normal bulk, an exponential tail, a
uniform spread, or a normal bulk with one huge outlier), whole units in [0, ``ITEM_TOP``]. For
``query = "max"`` each person holds one item and f is the maximum, on the output grid
Y = {0, 1, …, 1000}; for ``query = "user_sum"`` the values are the people's totals S_u (the
outlier is one person with 100 000) and f is the user-level sum, on Y = {0, 100, …, 10⁶}. Shown:

* the exact output distributions, from :mod:`dpexplore.teaching.down_sensitivity`, of the shifted inverse
  mechanism (:func:`~dpexplore.teaching.down_sensitivity.shifted_inverse_pmf`, Steinke 2023b, Theorem 4) and of the
  noisy binary search at the same ε (:func:`~dpexplore.teaching.down_sensitivity.binary_search_pmf`,
  Steinke 2023b, Theorem 5's ε-DP form), against the true value and the two naive baselines — clip at a guessed
  bound B and add Laplace(B/ε), and global-sensitivity noise (clip at the top of Y);
* the loss ℓ(x, y) of the data with the shifted loss ℓ*(x, y) (Steinke 2023b, eq. (B)) and τ;
* Steinke 2023b, Figure 1: ℓ(x, y) for the maximum of the Binomial(5, ½) dataset.

Everything is exact (no simulation): the seed only draws the dataset. A slider step costs a few
milliseconds (one ``grid_losses_*``, two pmfs over |Y| ≤ 10 001 points), cached per spec.

>>> r = compute_down_sensitivity_lab(DownSensitivitySpec())
>>> r.f_value, r.tau, r.grid.size
(292.0, 19, 1001)
>>> FIGURE1_LOSS.tolist()
[31, 26, 16, 6, 1, 0]
>>> type(build_down_sensitivity_lab()).__name__
'AppShell'
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..teaching import down_sensitivity as ds
from ..bibliography.references import cite
from ..ui.controls import OKABE_ITO, Controller, MessageArea, dropdown, param_slider
from ..ui.a11y import text_colour
from ..ui.plotwidget import PlotlyWidget
from ..ui.shell import AppInfo, AppShell, app_shell
from ..ui.views import LOG_AXIS, axes_layout, line_trace, marker_trace
from ._checks import SEED_MAX, Param, check_params, params_by_name, param_values, snippet_assign

__all__ = [
    "DownSensitivitySpec",
    "DownSensitivityResult",
    "MethodStats",
    "compute_down_sensitivity_lab",
    "dataset",
    "output_grid",
    "curve_x",
    "FORMAT",
    "DownSensitivityController",
    "build_down_sensitivity_lab",
    "QUERIES",
    "SHAPES",
    "METHODS",
    "CENTRE",
    "ITEM_TOP",
    "OUTLIER",
    "GRID",
    "N_RANGE",
    "SPREAD_RANGE",
    "SEED_RANGE",
    "EPS_RANGE",
    "BETA_RANGE",
    "BOUND_RANGE",
    "FIGURE1_X",
    "FIGURE1_GRID",
    "FIGURE1_LOSS",
    "INFO",
]

#: the query: value → label
QUERIES = {"max": "maximum", "user_sum": "user-level sum"}
#: the dataset's shape: value → label
SHAPES = {
    "normal": "normal bulk",
    "exponential": "exponential tail",
    "uniform": "uniform",
    "outlier": "normal bulk + one huge outlier",
}
#: the four estimates, in the order of every tuple of the result
METHODS = (
    "shifted inverse (Steinke 2023b, Thm 4)",
    "binary search (Steinke 2023b, Thm 5)",
    "clip at B + Laplace",
    "global sensitivity",
)
#: centre of the normal bulk
CENTRE = 200.0
#: the data are whole units in [0, ITEM_TOP] (an item for the max, a person's total for the sum)
ITEM_TOP = 1000.0
#: the outlier's value: the top of the maximum's grid; one person with 100 000 for the sum
OUTLIER = {"max": 1000.0, "user_sum": 100_000.0}
#: the output grid Y per query: (first, last, step)
GRID = {"max": (0.0, 1000.0, 1.0), "user_sum": (0.0, 1_000_000.0, 100.0)}
N_RANGE = (10, 3000)
SPREAD_RANGE = (1.0, 300.0)
SEED_RANGE = (0, 999)  # the slider's; compute accepts any seed in [0, 10⁹]
EPS_RANGE = (0.01, 10.0)
BETA_RANGE = (1e-6, 0.5)
BOUND_RANGE = (1.0, 1000.0)
#: the lab's numeric parameters: its sliders and the checks of its spec
PARAMS = params_by_name(
    Param("n", *N_RANGE, "log", unit="people", integer=True, steps_per_decade=10, what="of people"),
    Param("spread", *SPREAD_RANGE, "linear", unit="units", step=1.0),
    Param("seed", *SEED_RANGE, unit="random seed", integer=True, accept=(0, SEED_MAX)),
    Param("eps", *EPS_RANGE, "log", "ε", steps_per_decade=20),
    Param("beta", *BETA_RANGE, "log", "β", "failure probability", steps_per_decade=5, readout_format=".2g"),
    Param("bound", *BOUND_RANGE, "log", "B", "naive clip bound", steps_per_decade=10),
)
#: quantiles shown for every estimate
QUANTILES = (0.05, 0.5, 0.95)

#: Steinke 2023b, Figure 1: a dataset that is the Binomial(5, ½) distribution (32 items)
FIGURE1_X = np.array([0] + [1] * 5 + [2] * 10 + [3] * 10 + [4] * 5 + [5], dtype=float)
FIGURE1_GRID = np.arange(6.0)
FIGURE1_LOSS = ds.grid_losses_max(FIGURE1_X, FIGURE1_GRID)
#: the breakpoints of the step plot (ℓ holds its value from each to the next)
_FIG1_Y = np.arange(-1.0, 7.0)


def output_grid(query: str) -> np.ndarray:
    """The output grid Y of ``query`` (a public, data-independent set, as Steinke 2023b, Theorem 4 requires).

    >>> output_grid("max").size, output_grid("user_sum")[:3].tolist()
    (1001, [0.0, 100.0, 200.0])
    """
    lo, hi, step = GRID[query]
    return np.arange(lo, hi + step / 2, step)


# ------------------------------------------------------------------------------------------------
# spec, result
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DownSensitivitySpec:
    """The lab's parameters (hashable: the cache key). ``bound`` is the naive baseline's guessed
    clip bound B (an item for the max, a person's total for the sum)."""

    query: str = "max"
    shape: str = "normal"
    n: int = 1000
    spread: float = 30.0
    seed: int = 0
    eps: float = 1.0
    beta: float = 0.1
    bound: float = 100.0


@dataclass(frozen=True)
class MethodStats:
    """One estimate's exact distribution, summarized."""

    median: float
    q05: float
    q95: float
    rmse: float  # sqrt(E[(estimate − f(x))²])


@dataclass(frozen=True)
class DownSensitivityResult:
    """Everything the lab draws and prints; tuples are in :data:`METHODS` order."""

    spec: DownSensitivitySpec
    data: np.ndarray  # the n values (items, or the people's totals)
    grid: np.ndarray  # the output grid Y
    loss: np.ndarray  # ℓ(x, y) on Y
    f_value: float  # f(x) on Y
    tau: int  # Steinke 2023b, Theorem 4's τ
    ds2tau: float  # DS^{2τ}_f(x)
    low: float  # the guaranteed lower end f(x) − DS^{2τ}_f(x) of Steinke 2023b, Theorem 4
    shifted: np.ndarray  # ℓ*(x, y) on Y (Steinke 2023b, eq. (B))
    pmf_em: np.ndarray  # Steinke 2023b, Theorem 4's exact output distribution on Y
    acc_em: float  # P[f(x) ≥ M(x) ≥ f(x) − DS^{2τ}] for it
    sigma_bs: float  # the binary search's Laplace scale (ε-DP form)
    tau_bs: float  # and its τ
    steps_bs: int  # its halving steps T
    ds_bs: float  # DS^{⌊2τ⌋} for its τ
    pmf_bs: np.ndarray
    acc_bs: float
    clip: ds.LaplaceEstimate  # clip at B + Laplace(B/ε)
    glob: ds.LaplaceEstimate  # clip at the top of Y + Laplace(top/ε)
    stats: tuple  # MethodStats per method
    window: tuple  # (lo, hi): the x range of the estimate plot
    loss_window: tuple  # (i0, i1): the slice of Y of the loss plot


def _check_spec(spec: DownSensitivitySpec) -> None:
    if spec.query not in QUERIES:
        raise ValueError(f"query must be one of {list(QUERIES)}, got query = {spec.query!r}")
    if spec.shape not in SHAPES:
        raise ValueError(f"shape must be one of {list(SHAPES)}, got shape = {spec.shape!r}")
    check_params(spec, PARAMS)


# ------------------------------------------------------------------------------------------------
# compute
# ------------------------------------------------------------------------------------------------
#: one line of numpy per shape (the snippet prints the same line)
_DRAW = {
    "normal": "rng.normal({centre!r}, spread, n)",
    "outlier": "rng.normal({centre!r}, spread, n)",
    "exponential": "rng.exponential(spread, n)",
    "uniform": "rng.uniform(0.0, 2 * spread, n)",
}


def dataset(query: str, shape: str, n: int, spread: float, seed: int) -> np.ndarray:
    """The seeded dataset: n values drawn from ``shape`` (normal: N(CENTRE, spread²); exponential:
    mean ``spread``; uniform on [0, 2·spread]), rounded up to whole units and clipped into
    [0, ITEM_TOP]; for ``"outlier"`` the last one is replaced by ``OUTLIER[query]``.

    >>> dataset("max", "outlier", 5, 30.0, 0).tolist()
    [204.0, 197.0, 220.0, 204.0, 1000.0]
    """
    rng = np.random.default_rng(seed)
    if shape in ("normal", "outlier"):
        v = rng.normal(CENTRE, spread, n)
    elif shape == "exponential":
        v = rng.exponential(spread, n)
    else:
        v = rng.uniform(0.0, 2 * spread, n)
    x = np.ceil(np.clip(v, 0.0, ITEM_TOP))
    if shape == "outlier":
        x[-1] = OUTLIER[query]
    return x


def _stats(est: ds.GridEstimate | ds.LaplaceEstimate, f) -> MethodStats:
    q05, med, q95 = (float(est.quantile(p)) for p in QUANTILES)
    return MethodStats(med, q05, q95, float(est.rmse(f)))


def compute_down_sensitivity_lab(spec: DownSensitivitySpec) -> DownSensitivityResult:
    """All numbers of the lab for one setting, from :mod:`dpexplore.teaching.down_sensitivity`: the
    loss on Y, f(x), Steinke 2023b, Theorem 4's τ = ⌈(2/ε) log(|Y|/β)⌉, DS^{2τ}_f(x), the exact output
    distributions of the shifted inverse mechanism and of the ε-DP binary search, the exact
    probability of the accuracy event of each, and the two Laplace baselines. Raises
    ``ValueError`` naming a bad parameter.

    >>> r = compute_down_sensitivity_lab(DownSensitivitySpec(shape="outlier"))
    >>> r.f_value, r.stats[0].median <= r.f_value - 600
    (1000.0, True)
    """
    _check_spec(spec)
    x = dataset(spec.query, spec.shape, int(spec.n), float(spec.spread), int(spec.seed))
    grid = output_grid(spec.query)
    if spec.query == "max":
        loss = ds.grid_losses_max(x, grid)
        clip = ds.laplace_clipped_max(x, 0.0, spec.bound, spec.eps)
        glob = ds.laplace_clipped_max(x, 0.0, float(grid[-1]), spec.eps)
    else:
        loss = ds.grid_losses_user_sum(x, grid)
        clip = ds.laplace_clipped_user_sum(x, spec.bound, spec.eps)
        glob = ds.laplace_clipped_user_sum(x, float(grid[-1]), spec.eps)
    f = ds.value_from_losses(loss, grid)
    tau = ds.shifted_inverse_tau(spec.eps, spec.beta, grid.size)
    low, _, ds2 = ds.accuracy_range(loss, grid, tau)
    pmf_em = ds.shifted_inverse_pmf(loss, spec.eps, tau)
    sigma, tau_bs = ds.binary_search_params(grid.size, spec.beta, eps=spec.eps)
    pmf_bs = ds.binary_search_pmf(loss, sigma, tau_bs)
    em, bs = ds.GridEstimate(grid, pmf_em), ds.GridEstimate(grid, pmf_bs)
    stats = tuple(_stats(est, f) for est in (em, bs, clip, glob))
    # the estimate plot's x range: where the shifted inverse estimates, the clipped baseline and
    # the true value lie (the global baseline is spread far wider: it shows as a flat line;
    # (the exponential mechanism's thin uniform tail above f(x), at most β in all, may reach past it)
    lo = min(float(em.quantile(0.005)), float(bs.quantile(0.005)), low, stats[2].q05)
    hi = max(f, stats[2].q95, float(em.quantile(0.95)), float(bs.quantile(0.95)))
    step = float(grid[1] - grid[0])
    pad = max(0.06 * (hi - lo), 5 * step)
    # the loss plot's slice of Y: from where ℓ ≤ 4τ to a little past f(x)
    i_f = int(np.argmax(loss == 0))
    i_start = int(np.searchsorted(-loss, -4 * tau, side="left"))
    span = max(i_f - i_start, 10)
    i0 = max(0, i_start - span // 8 - 2)
    i1 = min(grid.size, i_f + span // 8 + 3)
    return DownSensitivityResult(
        spec=spec,
        data=x,
        grid=grid,
        loss=loss,
        f_value=f,
        tau=tau,
        ds2tau=ds2,
        low=low,
        shifted=ds.shifted_loss(loss, tau),
        pmf_em=pmf_em,
        acc_em=ds.accuracy_probability(pmf_em, loss, grid, tau),
        sigma_bs=sigma,
        tau_bs=tau_bs,
        steps_bs=ds.binary_search_steps(grid.size),
        ds_bs=ds.accuracy_range(loss, grid, tau_bs)[2],
        pmf_bs=pmf_bs,
        acc_bs=ds.accuracy_probability(pmf_bs, loss, grid, tau_bs),
        clip=clip,
        glob=glob,
        stats=stats,
        window=(lo - pad, hi + pad),
        loss_window=(i0, i1),
    )


# ------------------------------------------------------------------------------------------------
# controller, figures
# ------------------------------------------------------------------------------------------------
_COLOURS = (OKABE_ITO[0], OKABE_ITO[2], OKABE_ITO[1], OKABE_ITO[3])
_N_CURVE = 401
#: the estimate plot's log axis starts here (smaller probabilities are not drawn)
_P_FLOOR = 1e-6


#: how the readout and the snippet print a value: one decimal for the maximum, none for the sum
FORMAT = {"max": ",.1f", "user_sum": ",.0f"}
#: the readout's row labels
_ROWS = ("shifted inverse", "binary search", "clip at B", "global noise")


def _v(v: float, query: str = "max") -> str:
    """A value as the readout and the snippet print it."""
    return format(v, FORMAT[query])


def curve_x(r: "DownSensitivityResult") -> np.ndarray:
    """Where the Laplace baselines' densities are drawn: an even grid over the plot's window and
    each baseline's centre ± 6 scales (a narrow density keeps its peak), inside the window.

    >>> curve_x(compute_down_sensitivity_lab(DownSensitivitySpec())).size
    424
    """
    lo, hi = r.window
    extra = [e.center + e.scale * np.linspace(-6.0, 6.0, 49) for e in (r.clip, r.glob)]
    t = np.unique(np.concatenate([np.linspace(lo, hi, _N_CURVE), *extra]))
    return t[(t >= lo) & (t <= hi)]


def _name(query: str) -> str:
    return "maximum" if query == "max" else "sum"


def readout_html(r: DownSensitivityResult) -> str:
    """The readout table: the true value, Steinke 2023b, Theorem 4's τ and guarantee, and per estimate its
    median, 5 % and 95 % quantiles and RMS error (all exact)."""
    s = r.spec
    q = s.query
    rows = "".join(
        f"<tr><td style='text-align:left;color:{text_colour(_COLOURS[i])}'><b>{_ROWS[i]}</b></td>"
        f"<td>{_v(st.median, q)}</td><td>{_v(st.q05, q)}</td><td>{_v(st.q95, q)}</td><td>{_v(st.rmse, q)}</td></tr>"
        for i, st in enumerate(r.stats)
    )
    people = "items" if s.query == "max" else "people"
    return (
        f"<p style='margin:2px 0'>true {_name(s.query)} f(x) = <b>{_v(r.f_value, q)}</b> "
        f"({s.n:,} {people}, |Y| = {r.grid.size:,})</p>"
        f"<p style='margin:2px 0'>Steinke 2023b, Theorem 4: τ = <b>{r.tau}</b>, DS<sup>2τ</sup>(x) = {_v(r.ds2tau, q)}, "
        f"so P[{_v(r.low, q)} ≤ M(x) ≤ {_v(r.f_value, q)}] ≥ 1 − β; exactly <b>{r.acc_em:.4f}</b> "
        f"(binary search, τ = {r.tau_bs:.2f}: {r.acc_bs:.4f})</p>"
        "<table style='border-collapse:collapse;text-align:right;font-size:12px'>"
        "<tr><th></th><th>median</th><th>5 %</th><th>95 %</th><th>RMS error</th></tr>"
        f"{rows}</table>"
        f"<p class='dpexplore-note' style='margin:2px 0'>Rows: Steinke 2023b, Theorem 4 and Theorem 5 at the same ε; "
        f"clip at B = {s.bound:.4g} + Laplace; clip at the top of Y + Laplace. All exact.</p>"
    )


class DownSensitivityController(Controller):
    """Dropdowns query, shape and sliders n, spread, seed, ε, β, B →
    :func:`compute_down_sensitivity_lab` → the estimate distributions, the loss, Steinke 2023b, Figure 1 and
    the readout table."""

    compute = staticmethod(compute_down_sensitivity_lab)
    prefetch = True  # the next slider step reads the cache (controls.PREFETCHER)
    cache_size = 64
    readout_widgets = {"readout": ""}

    def read_spec(self) -> DownSensitivitySpec:
        c = self.controls
        return DownSensitivitySpec(**param_values(c, PARAMS), query=str(c["query"].value), shape=str(c["shape"].value))

    # traces ----------------------------------------------------------------------------------
    @staticmethod
    def _estimate_traces(r: DownSensitivityResult) -> list[dict]:
        """The exact distributions on the window of the plot; probabilities below the log axis's
        floor are drawn at a tenth of it (off the plot), so a line leaves the plot downwards."""
        lo, hi = r.window
        keep = (r.grid >= lo) & (r.grid <= hi)
        g = r.grid[keep]
        step = float(r.grid[1] - r.grid[0])
        t = curve_x(r)
        below = _P_FLOOR / 10
        out = []
        out.append(line_trace(METHODS[0], g, np.maximum(r.pmf_em[keep], below), _COLOURS[0], shape="hvh"))
        # the binary search returns only some grid points (its tree's leaves) with any weight:
        # one marker per grid point, those below the floor off the plot
        out.append(marker_trace(METHODS[1], g, np.maximum(r.pmf_bs[keep], below), _COLOURS[1], "diamond", 5))
        for i, est in ((2, r.clip), (3, r.glob)):
            out.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "name": f"{METHODS[i]} (density × step)",
                    "x": t,
                    "y": np.maximum(np.asarray(est.pdf(t)) * step, below),
                    "line": {"color": _COLOURS[i], "width": 2, "dash": "dash" if i == 3 else "solid"},
                }
            )
        out.append(
            line_trace(
                f"true value f(x) = {_v(r.f_value, r.spec.query)}", [r.f_value, r.f_value], [below, 1.0], "#000000"
            )
        )
        out.append(line_trace("f(x) − DS<sup>2τ</sup>(x)", [r.low, r.low], [below, 1.0], "#000000", 1.5, "dot"))
        return out

    @staticmethod
    def _loss_traces(r: DownSensitivityResult) -> list[dict]:
        i0, i1 = r.loss_window
        g = r.grid[i0:i1]
        tau = float(r.tau)
        return [
            line_trace("loss ℓ(x, y)", g, r.loss[i0:i1].astype(float), _COLOURS[0], 2.5, shape="hv"),
            line_trace("shifted loss ℓ*(x, y)", g, r.shifted[i0:i1], _COLOURS[2], 2, "dash", shape="hv"),
            line_trace(f"τ = {r.tau}", [g[0], g[-1]], [tau, tau], "#555555", 1.5, "dot"),
            line_trace(
                "f(x) and f(x) − DS<sup>2τ</sup>(x)",
                [r.f_value, r.f_value, None, r.low, r.low],
                [-tau, 4 * tau, None, -tau, 4 * tau],
                "#000000",
                1.5,
            ),
        ]

    @staticmethod
    def _loss_layout(r: DownSensitivityResult) -> dict:
        return {
            "yaxis": {"range": [-1.1 * r.tau, 4.2 * r.tau]},
            "xaxis": {"title": {"text": f"y (the output grid Y, step {r.grid[1] - r.grid[0]:g})"}},
        }

    @staticmethod
    def _figure1_traces() -> list[dict]:
        loss = ds.loss_max(FIGURE1_X, _FIG1_Y).astype(float)
        return [
            line_trace("ℓ(x, y), f = max", _FIG1_Y, loss, _COLOURS[0], 3, shape="hv"),
            {
                "type": "scatter",
                "mode": "markers+text",
                "name": "ℓ(x, y) on Y = {0, …, 5}",
                "x": FIGURE1_GRID,
                "y": FIGURE1_LOSS.astype(float),
                "text": [str(v) for v in FIGURE1_LOSS.tolist()],
                "textposition": "top right",
                "marker": {"color": _COLOURS[0], "size": 9},
            },
            line_trace("true maximum = 5", [5.0, 5.0], [0.0, 34.0], OKABE_ITO[3], 2.5, "dash"),
        ]

    def figures(self, r: DownSensitivityResult) -> list[PlotlyWidget]:
        legend = {"orientation": "h", "x": 0.0, "y": -0.16, "yanchor": "top"}
        margin = {"l": 60, "r": 20, "t": 40, "b": 40}
        self.fig_est = PlotlyWidget(
            self._estimate_traces(r),
            axes_layout(
                "Distribution of each estimate (exact)",
                "estimate",
                "probability per grid point",
                yaxis={**LOG_AXIS, "range": [math.log10(_P_FLOOR), 0.05]},
                legend=legend,
                margin=margin,
            ),
        )
        self.fig_loss = PlotlyWidget(
            self._loss_traces(r),
            {
                "title": {"text": "The loss ℓ(x, y) of the data and the shifted loss ℓ*(x, y)"},
                "yaxis": {"title": {"text": "items (people) to remove"}},
                "legend": legend,
                "margin": margin,
                **self._loss_layout(r),
            },
        )
        self.fig_figure1 = PlotlyWidget(
            self._figure1_traces(),
            axes_layout(
                "Steinke 2023b, Figure 1: ℓ(x, y) for the maximum, x ~ Binomial(5, ½)",
                "y",
                "ℓ(x, y)",
                xaxis={"range": [-1.0, 6.0], "dtick": 1},
                yaxis={"range": [-1.0, 35.0]},
                legend=legend,
                margin=margin,
            ),
        )
        return [self.fig_est, self.fig_loss, self.fig_figure1]

    def render(self, r: DownSensitivityResult) -> None:
        self.fig_est.update(data=self._estimate_traces(r))
        self.fig_loss.update(data=self._loss_traces(r), layout=self._loss_layout(r))

    def write_readouts(self, r: DownSensitivityResult) -> None:
        self.readout.value = readout_html(r)

    def snippet(self) -> str:
        s = self.spec
        lo, hi, step = GRID[s.query]
        draw = _DRAW[s.shape].format(centre=CENTRE)
        if s.query == "max":
            loss = "ds.grid_losses_max(x, grid)           # l(x, y): items above y"
            naive = (
                "    ('clip at B + Laplace', ds.laplace_clipped_max(x, 0.0, bound, eps)),\n"
                "    ('global sensitivity', ds.laplace_clipped_max(x, 0.0, grid[-1], eps)),\n"
            )
        else:
            loss = "ds.grid_losses_user_sum(x, grid)      # l(x, y): fewest people to remove"
            naive = (
                "    ('clip at B + Laplace', ds.laplace_clipped_user_sum(x, bound, eps)),\n"
                "    ('global sensitivity', ds.laplace_clipped_user_sum(x, grid[-1], eps)),\n"
            )
        outlier = f"x[-1] = {OUTLIER[s.query]!r}   # one huge outlier\n" if s.shape == "outlier" else ""
        fmt = FORMAT[s.query]
        code = (
            "import numpy as np\n"
            "from dpexplore.teaching import down_sensitivity as ds\n\n"
            + snippet_assign(s, PARAMS)
            + "rng = np.random.default_rng(seed)\n"
            f"x = np.ceil(np.clip({draw}, 0.0, {ITEM_TOP!r}))   # whole units\n"
            + outlier
            + f"grid = np.arange({lo!r}, {hi + step / 2!r}, {step!r})   # the output grid Y\n"
            f"loss = {loss}\n"
            "f = ds.value_from_losses(loss, grid)\n"
            "tau = ds.shifted_inverse_tau(eps, beta, grid.size)   # Steinke 2023b, Theorem 4\n"
            "low, _, ds2 = ds.accuracy_range(loss, grid, tau)   # f - DS^2tau(x) <= M(x) <= f\n"
            "p_em = ds.shifted_inverse_pmf(loss, eps, tau)\n"
            "sigma, tau_bs = ds.binary_search_params(grid.size, beta, eps=eps)   # Steinke 2023b, Theorem 5, eps-DP\n"
            "p_bs = ds.binary_search_pmf(loss, sigma, tau_bs)\n"
            "print(f'true value f(x) = {f:FMT}; tau = {tau}; DS^2tau(x) = {ds2:FMT}; '\n"
            "      f'guaranteed range {low:FMT} to {f:FMT}')\n"
            "print(f'P[in that range]: {ds.accuracy_probability(p_em, loss, grid, tau):.4f}; '\n"
            "      f'binary search (tau {tau_bs:.2f}): {ds.accuracy_probability(p_bs, loss, grid, tau_bs):.4f}')\n"
            "for name, est in (\n"
            "    ('shifted inverse', ds.GridEstimate(grid, p_em)),   # exact laws on the grid\n"
            "    ('binary search', ds.GridEstimate(grid, p_bs)),\n"
            + naive
            + "):   # the naive ones: Laplace(scale) around a clipped value\n"
            "    q05, med, q95 = est.quantile([0.05, 0.5, 0.95])\n"
            "    print(f'{name}: median {med:FMT}, quantiles {q05:FMT} and {q95:FMT}, RMS error {est.rmse(f):FMT}')\n"
        )
        return code.replace(":FMT}", ":" + fmt + "}")


# ------------------------------------------------------------------------------------------------
# the page
# ------------------------------------------------------------------------------------------------
_THEORY = (
    r"<p><b>Down sensitivity</b> (" + cite("steinke2023down", "eq. (1)") + r"). Adding one item "
    r"can raise the maximum arbitrarily, so its local sensitivity is unbounded; removing items can "
    r"only lower it. The k-down sensitivity of f at x counts only removals:"
    r"$$\mathsf{DS}^k_f(x) = \sup_{x'\subseteq x,\ \mathrm{dist}(x,x')\le k} |f(x) - f(x')| ,$$"
    r"at most the local sensitivity, itself at most k times the global sensitivity. For the "
    r"maximum, \(\mathsf{DS}^k = x_{(n)} - x_{(n-k)}\): the gap to the (k+1)-th largest item. "
    r"The function must be <i>monotone</i>, \(f(x')\le f(x)\) for \(x'\subseteq x\) ("
    + cite("steinke2023down", "eq. (3)")
    + r"): the "
    r"maximum is, and so is the user-level sum when every item is ≥ 0 (one person, one unit of "
    r"distance, however many items they hold).</p>"
    r"<p><b>The loss</b> (" + cite("steinke2023down", "eq. (4) and Figure 1") + r"): the fewest "
    r"items (people) to remove to bring f to at most y,"
    r"$$\ell(x,y) = \min\{\mathrm{dist}(x,\tilde x) : \tilde x\subseteq x,\ f(\tilde x)\le y\}.$$"
    r"For the maximum it is the number of items above y; for the user-level sum, the fewest of the "
    r"largest totals whose removal leaves at most y. ℓ(x, f(x)) = 0, and ℓ grows as y falls below "
    r"f(x) at the pace set by the down sensitivity. By "
    + cite("steinke2023down", "Lemmas 1–2")
    + " and "
    + cite("steinke2023down", "Proposition 3")
    + r" it has global sensitivity 1 when f is "
    r"monotone. The tab Steinke 2023b, Figure 1 reproduces the example of that figure: the maximum of "
    r"x = (0, 1×5, 2×10, 3×10, 4×5, 5), a dataset shaped like Binomial(5, ½), with "
    r"ℓ(x, y) = 31, 26, 16, 6, 1, 0 at y = 0, …, 5.</p>"
    r"<p><b>The shifted inverse mechanism</b> ("
    + cite("fang2022shifted")
    + r"; "
    + cite("steinke2023down", "Theorem 4")
    + r"). ℓ does not grow above f(x), so it cannot go "
    r"into the exponential mechanism as it is (unlike the inverse sensitivity mechanism of "
    + cite("asi2020near")
    + r", see "
    + cite("steinke2023inverse")
    + r"). Instead the mechanism "
    r"aims for a y whose loss is near a shift τ &gt; 0 — for the maximum, roughly the "
    r"(τ+1)-th largest item. With the strict loss \(\bar\ell(x,y)\) ("
    + cite("steinke2023down", "footnote 4, eq. (A)")
    + r": "
    r"\(f(\tilde x) < y\) in place of ≤) it runs the exponential mechanism of "
    + cite("mcsherry2007mechanism")
    + r" on the shifted loss ("
    + cite("steinke2023down", "eq. (B)")
    + r")"
    r"$$\ell^*(x,y) = \max\{\ell(x,y)-\tau,\ \tau-\bar\ell(x,y)\},\qquad "
    r"\Pr[M(x)=y]\propto e^{-\varepsilon\,\ell^*(x,y)/2},\ y\in\mathcal Y ,$$"
    r"which is ε-DP (ℓ* has sensitivity 1). With "
    r"\(\tau=\lceil\frac2\varepsilon\log\frac{|\mathcal Y|}{\beta}\rceil\), Steinke 2023b, Theorem 4 states"
    r"$$\Pr\big[f(x)\ \ge\ M(x)\ \ge\ f(x)-\mathsf{DS}^{2\tau}_f(x)\big]\ \ge\ 1-\beta .$$"
    r"The estimate is an <i>under</i>estimate, and that is inherent: with unbounded "
    r"\"up\" sensitivity no private upper bound is possible. A huge outlier makes "
    r"\(\mathsf{DS}^{2\tau}\) huge, and the mechanism reports the top of the bulk instead. The "
    r"readout gives the exact probability of this event under the mechanism's exact output "
    r"distribution (dpexplore.teaching.down_sensitivity.accuracy_probability).</p>"
    r"<p><b>Noisy binary search</b> (" + cite("steinke2023down", "Theorem 5") + r"). Binary "
    r"search on the grid, going down at y<sub>k</sub> when ℓ(x, y<sub>k</sub>) + Laplace(σ) &lt; τ, "
    r"uses that ℓ decreases in y. Each of its T = ⌈log₂(|Y| − 1)⌉ steps is (1/σ)-DP, so it is "
    r"(T/σ)-DP and T/(2σ²)-zCDP; with τ = σ log(T/β) all T noises stay below τ with probability "
    r"≥ 1 − β, which gives the same accuracy event. Steinke 2023b, Theorem 5 states it for ρ-zCDP, "
    r"σ = √(log₂|Y|/(2ρ)); this lab uses the ε-DP form σ = T/ε at the same ε, with the exact T "
    r"(equal to log₂|Y| when |Y| is a power of two). Its output distribution is computed exactly "
    r"through the search tree.</p>"
    r"<p><b>The naive approaches</b> (" + cite("dwork2006calibrating") + r"). Clip every item "
    r"(every person's total) at a guessed bound B and add Laplace(B/ε): the clipped maximum, or "
    r"the sum of the clipped totals, changes by at most B when one person is added or removed, so "
    r"this is ε-DP. A bound below the data biases the estimate down; a bound far above adds noise "
    r"of that size. With B at the top of Y this is global-sensitivity noise, which ignores the data "
    r"entirely. Finding a good B is often the very reason to estimate the maximum.</p>"
    r"<p><b>This lab.</b> The output grids are Y = {0, 1, …, 1000} for the maximum and "
    r"Y = {0, 100, …, 10⁶} for the user-level sum (f is the smallest grid point ≥ its value). "
    r"The data are whole units in [0, 1000]: normal around " + f"{CENTRE:g}" + r" with the chosen "
    r"spread, exponential with mean the spread, or uniform on [0, 2·spread]; the outlier is one "
    r"item of 1000 (maximum) or one person with a total of 100 000 (sum). Every distribution and "
    r"error shown is exact; the seed only draws the data.</p>"
)

INFO = AppInfo(
    slug="down_sensitivity_lab",
    title="Down sensitivity and the shifted inverse mechanism",
    lead=(
        "One more item can raise a maximum (or one person's many items a sum) without limit, but "
        "removing items lowers it only by the down sensitivity. The shifted inverse mechanism "
        "privately finds a value a few removals below f(x): an underestimate whose error follows "
        "the data, where clipping at a guessed bound or global-sensitivity noise does not."
    ),
    theory=_THEORY,
    references=(
        "steinke2023down",
        "fang2022shifted",
        "asi2020near",
        "steinke2023inverse",
        "mcsherry2007mechanism",
        "dwork2006calibrating",
    ),
)


def build_down_sensitivity_lab(
    query: str = "max",
    shape: str = "normal",
    n: int = 1000,
    spread: float = 30.0,
    seed: int = 0,
    eps: float = 1.0,
    beta: float = 0.1,
    bound: float = 100.0,
) -> AppShell:
    """The down sensitivity lab (Steinke 2023b; Fang, Dong & Yi 2022) in the shell: query and
    data dropdowns, sliders n, spread, seed, ε, β and B with the readout table in the panel; the
    estimates, the loss and Steinke 2023b, Figure 1 in tabs. Defaults lie on the sliders' grids; every slider
    position is a valid setting.

    >>> app = build_down_sensitivity_lab(eps=2.0)
    >>> app.controller.readout.value.count("<tr>"), len(app.figs)
    (5, 3)
    """
    controls = {
        "query": dropdown("query f", [(v, k) for k, v in QUERIES.items()], query, width="330px"),
        "shape": dropdown("data", [(v, k) for k, v in SHAPES.items()], shape, width="330px"),
        **{
            k: param_slider(PARAMS[k], v)
            for k, v in (("n", n), ("spread", spread), ("seed", seed), ("eps", eps), ("beta", beta), ("bound", bound))
        },
    }
    ctrl = DownSensitivityController(controls, MessageArea())
    tabs = [
        ("Estimates", [ctrl.fig_est]),
        ("Loss of the data", [ctrl.fig_loss]),
        ("Steinke 2023b, Figure 1", [ctrl.fig_figure1]),
    ]
    return app_shell(INFO, ctrl, controls=controls, plots=tabs, readouts=[ctrl.readout], panel_width="410px")
