"""Better privacy for larger groups? A lab on an open problem (Pujol & Desfontaines 2023).

Pujol & Desfontaines (2023) ask for a counting mechanism whose error is about a fraction r of each
count while people in larger groups get a stronger, group-wise zCDP guarantee. Their Algorithm 1 (Pujol & Desfontaines 2023, Algorithm 1)
(:mod:`dpexplore.teaching.group_privacy`): X ~ N(x, σ²) with σ² = 1/(2ρ), then Y ~ N(X, (rX)²). It is
ρ-zCDP (the Gaussian mechanism, then post-processing) and nothing more is proven; whether it is
better for large x is OPEN. The lab shows

* the figure of Pujol & Desfontaines 2023: the output for one true count x (σ² = 100, r = 0.3, x = 10⁴ by default),
  as a histogram of ``N_SAMPLES`` seeded draws of the backend's sampler, with the output density
  by quadrature and the exact mean and standard deviation (Pujol & Desfontaines 2023 report a sample mean of
  about 10002.6 and a standard deviation of about 2995.1; the exact values are 10⁴ and
  sqrt(σ² + r²(x² + σ²)) ≈ 3000.0);
* a NUMERICAL EXPLORATION, NOT A GUARANTEE: the per-count "zCDP-like" value
  ρ̂(x) = max over the orders α ≤ ``alpha_max`` of max(D_α(P_x‖P_{x+1}), D_α(P_{x+1}‖P_x))/α, by
  quadrature with an estimated error (:func:`dpexplore.teaching.group_privacy.zcdp_like_curve`), on a
  grid of counts (two per decade from 1 to ``max_count``) against the proven ρ = 1/(2σ²);
* at the chosen count, D_α/α in both directions at every order of :data:`ORDERS`, as a fraction
  of the proven ρ.

How a step stays cheap. The quadrature for one count is the cost (≈ 5–70 ms; its grids grow
like 1/r, so r stops at ``R_RANGE[0]``). Each count's table of divergences at all of
:data:`ORDERS` is memoised (``COUNT_TABLES``), so moving the chosen count, the largest count, the
largest order or the seed re-uses every count already computed; moving σ² or r recomputes the
curve's counts one by one behind a progress bar when they are estimated to take over a second
(:class:`~dpexplore.apps.adaptive_lab.StagedController`). The sample (``N_SAMPLES`` draws) and the
density on the plotted grid cost a few milliseconds.

>>> r = compute_group_privacy_lab(GroupPrivacySpec())
>>> r.mean, round(r.std, 1), r.rho
(10000.0, 3000.0, 0.005)
>>> [int(c) for c in r.counts]
[1, 3, 10, 32, 100, 316, 1000, 3162, 10000]
>>> bool(r.rho_hat_x < 1e-4 * r.rho < r.rho_hat[0] <= r.rho)
True
>>> type(build_group_privacy_lab()).__name__
'AppShell'
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import ipywidgets as W
import numpy as np

from ..teaching import group_privacy as gp
from ..bibliography.references import cite
from ..ui.controls import OKABE_ITO, MessageArea, dropdown, param_slider
from ..ui.plotwidget import PlotlyWidget
from ..ui.staged import Memo, StagedController
from ..ui.shell import AppInfo, AppShell, app_shell
from ..ui.views import line_trace, marker_trace
from ._checks import SEED_MAX, Param, check_params, param_values, params_by_name, snippet_assign

__all__ = [
    "GroupPrivacySpec",
    "GroupPrivacyResult",
    "compute_group_privacy_lab",
    "curve_counts",
    "GroupPrivacyController",
    "build_group_privacy_lab",
    "ORDERS",
    "ALPHA_MAX_CHOICES",
    "N_SAMPLES",
    "N_BINS",
    "HIST_SDS",
    "N_DENSITY",
    "SIGMA2_RANGE",
    "R_RANGE",
    "COUNT_RANGE",
    "MAX_COUNT_RANGE",
    "SEED_RANGE",
    "POST_FIGURE",
    "COUNT_TABLES",
    "INFO",
]

#: the orders α of every count's table (the backend's default orders); ρ̂ uses those ≤ alpha_max
ORDERS = (1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 64.0)
#: the choices of the largest order
ALPHA_MAX_CHOICES = (8, 16, 32, 64)
#: seeded draws of Pujol & Desfontaines 2023, Algorithm 1 in the histogram (the 10⁶-draw check of their numbers is a test)
N_SAMPLES = 20_000
#: histogram bins over the exact mean ± HIST_SDS standard deviations
N_BINS = 60
HIST_SDS = 4.0
#: points of the quadrature density over the same range
N_DENSITY = 241
SIGMA2_RANGE = (1.0, 1e4)
#: r below 0.2 makes the quadrature grids (which grow like 1/r) too slow for a slider step
R_RANGE = (0.2, 2.0)
COUNT_RANGE = (1, 10**6)
MAX_COUNT_RANGE = (10, 10**6)
SEED_RANGE = (0, 999)  # the slider's; compute accepts any seed in [0, 10⁹]
#: the lab's numeric parameters: its sliders and the checks of its spec
PARAMS = params_by_name(
    Param("sigma2", *SIGMA2_RANGE, "log", "σ²", "Gaussian noise variance", steps_per_decade=10, rel_tol=1e-12),
    Param("r", *R_RANGE, "linear", "r", "relative noise", step=0.05, rel_tol=1e-12),
    Param("count", *COUNT_RANGE, "log", "x", "true count", integer=True, steps_per_decade=20),
    Param("max_count", *MAX_COUNT_RANGE, "log", "curve up to", "largest count", integer=True, steps_per_decade=2),
    Param("seed", *SEED_RANGE, unit="random seed", integer=True, accept=(0, SEED_MAX)),
)
#: the figure of Pujol & Desfontaines 2023: their Algorithm 1 for the count 10⁴ with σ² = 100 and r = 0.3, and the
#: parameters the "Reproduce in Python" snippet (the chosen count's numbers) leaves out, and why
SNIPPET_SKIP = {"max_count": "the range of the curve only"}
#: sample mean and standard deviation they report
POST_FIGURE = {"count": 10000, "sigma2": 100.0, "r": 0.3, "mean": 10002.6, "std": 2995.1}
#: a step whose quadratures are estimated to take longer shows the progress bar
PROGRESS_AFTER = 1.0


# ------------------------------------------------------------------------------------------------
# spec, result
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GroupPrivacySpec:
    """The lab's parameters (hashable: the cache key): σ² and r of Pujol & Desfontaines 2023, Algorithm 1, the chosen count,
    the largest count of the curve, the largest order α, the seed of the sample."""

    sigma2: float = 100.0
    r: float = 0.3
    count: int = 10000
    max_count: int = 10000
    alpha_max: float = 32.0
    seed: int = 0


@dataclass(frozen=True)
class GroupPrivacyResult:
    """Everything the lab draws and prints (arrays read-only)."""

    spec: GroupPrivacySpec
    rho: float  # the proven ρ = 1/(2σ²)
    mean: float  # exact E[Y] at the chosen count
    std: float  # exact sd of Y at the chosen count
    sample_mean: float  # of the N_SAMPLES seeded draws
    sample_std: float  # (ddof = 0)
    hist_centres: np.ndarray
    hist_density: np.ndarray  # count / (N_SAMPLES · bin width): draws outside the range count too
    bin_width: float
    density_y: np.ndarray
    density: np.ndarray  # p_x(y) by quadrature
    density_error: float  # largest estimated error of it
    orders: np.ndarray  # the orders used for ρ̂ (ORDERS ≤ alpha_max)
    counts: np.ndarray  # the curve's counts
    rho_hat: np.ndarray  # ρ̂ at each count
    rho_hat_error: np.ndarray  # estimated quadrature error of ρ̂ (refinement change / α)
    argmax_alpha: np.ndarray  # the order attaining ρ̂
    reference_counts: np.ndarray
    reference: np.ndarray  # 1/(2 Var Y(x)): a Gaussian of the output's variance (comparison only)
    rho_hat_x: float  # ρ̂ at the chosen count
    rho_hat_x_error: float
    argmax_alpha_x: float
    forward_x: np.ndarray  # D_α(P_x‖P_{x+1}) at every ORDERS
    reverse_x: np.ndarray  # D_α(P_{x+1}‖P_x)
    divergence_error_x: np.ndarray


def _check_spec(spec: GroupPrivacySpec) -> None:
    check_params(spec, [PARAMS[k] for k in ("sigma2", "r", "count", "max_count")])
    a = spec.alpha_max
    if isinstance(a, bool) or not isinstance(a, (int, float)) or a not in ALPHA_MAX_CHOICES:
        raise ValueError(f"alpha_max must be one of {', '.join(map(str, ALPHA_MAX_CHOICES))}, got alpha_max = {a!r}")
    PARAMS["seed"].check(spec.seed)


def curve_counts(max_count: int) -> np.ndarray:
    """The curve's counts: 10^(k/2) rounded, k = 0, 1, …, up to ``max_count`` (and ``max_count``).

    >>> curve_counts(1000).tolist()
    [1, 3, 10, 32, 100, 316, 1000]
    >>> curve_counts(50).tolist()
    [1, 3, 10, 32, 50]
    """
    k = int(math.floor(2 * math.log10(max_count) + 1e-9))
    grid = {int(round(10 ** (j / 2))) for j in range(k + 1)}
    grid.add(int(max_count))
    return np.array(sorted(grid), dtype=np.int64)


# ------------------------------------------------------------------------------------------------
# the cached parts
# ------------------------------------------------------------------------------------------------
def _frozen(a) -> np.ndarray:
    a = np.array(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def _count_table(x: float, sigma2: float, r: float) -> tuple:
    """(D_α(P_x‖P_{x+1}), D_α(P_{x+1}‖P_x), their estimated error) at every ORDERS, by the
    backend's quadrature (:func:`dpexplore.teaching.group_privacy.zcdp_like_curve` for the one count)."""
    c = gp.zcdp_like_curve([x], sigma2, r, alphas=ORDERS)
    return _frozen(c["forward"][0]), _frozen(c["reverse"][0]), _frozen(c["divergence_error"][0])


#: (x, σ², r) → that count's divergence table (a memo with membership: the progress bar's test)
COUNT_TABLES = Memo(_count_table, maxsize=1024)


def _estimated_seconds(x: float, sigma2: float, r: float) -> float:
    """Rough cost of one count's quadrature (for the progress bar only): the grids hold all the
    log-spaced panels (≈ 1/r of them) when x ± 14σ reaches 0, far fewer above."""
    if x <= 14.0 * math.sqrt(sigma2) + 1:
        return 0.03 * (0.3 / r) ** 2
    return 0.005 * (0.3 / r)


@functools.lru_cache(maxsize=64)
def _sample(count: int, sigma2: float, r: float, seed: int) -> np.ndarray:
    y = gp.algorithm1_sample(count, sigma2, r, np.random.default_rng(seed), N_SAMPLES)
    y.setflags(write=False)
    return y


@functools.lru_cache(maxsize=64)
def _density(count: int, sigma2: float, r: float, lo: float, hi: float) -> tuple:
    y = np.linspace(lo, hi, N_DENSITY)
    p, err = gp.output_density(y, count, sigma2, r)
    return _frozen(y), _frozen(p), float(np.max(err))


def compute_group_privacy_lab(spec: GroupPrivacySpec) -> GroupPrivacyResult:
    """Every array of the lab for one setting (module docstring): the exact moments, the seeded
    sample's histogram and the quadrature density at the chosen count; ρ̂ on the curve's counts
    and at the chosen count with its estimated error; the divergences at every order there.
    Raises ``ValueError`` naming a bad parameter.

    >>> r = compute_group_privacy_lab(GroupPrivacySpec(count=1, max_count=10))
    >>> round(r.rho_hat_x / r.rho, 3)   # a count of 1: close to the proven ρ
    0.934
    >>> compute_group_privacy_lab(GroupPrivacySpec(r=0.1))
    Traceback (most recent call last):
    ...
    ValueError: r = 0.1 is outside this lab's range [0.2, 2]
    """
    _check_spec(spec)
    sigma2, r, count = float(spec.sigma2), float(spec.r), int(spec.count)
    moments = gp.algorithm1_moments(count, sigma2, r)
    mean, std = float(moments["mean"]), float(moments["std"])
    y = _sample(count, sigma2, r, int(spec.seed))
    lo, hi = mean - HIST_SDS * std, mean + HIST_SDS * std
    hist, edges = np.histogram(y, bins=N_BINS, range=(lo, hi))
    width = (hi - lo) / N_BINS
    dy, dens, derr = _density(count, sigma2, r, lo, hi)

    mask = np.asarray(ORDERS) <= spec.alpha_max
    orders = np.asarray(ORDERS)[mask]
    counts = curve_counts(int(spec.max_count))
    # ρ̂ from the memoised tables at the orders α ≤ alpha_max (the backend's reduction, as zcdp_like_curve)
    tables = [COUNT_TABLES(float(c), sigma2, r) for c in counts]
    curve = gp.rho_hat(*(np.stack([t[i][mask] for t in tables]) for i in range(3)), orders)
    table_x = COUNT_TABLES(float(count), sigma2, r)
    here = gp.rho_hat(table_x[0][mask], table_x[1][mask], table_x[2][mask], orders)

    ref_counts = np.unique(
        np.concatenate((np.logspace(0.0, math.log10(max(spec.max_count, count)), 121), [float(count)]))
    )
    ref_std = np.asarray(gp.algorithm1_moments(ref_counts, sigma2, r)["std"])
    return GroupPrivacyResult(
        spec=spec,
        rho=gp.rho_from_sigma2(sigma2),
        mean=mean,
        std=std,
        sample_mean=float(y.mean()),
        sample_std=float(y.std()),
        hist_centres=_frozen(0.5 * (edges[:-1] + edges[1:])),
        hist_density=_frozen(hist / (N_SAMPLES * width)),
        bin_width=width,
        density_y=dy,
        density=dens,
        density_error=derr,
        orders=_frozen(orders),
        counts=counts,
        rho_hat=_frozen(curve["rho_hat"]),
        rho_hat_error=_frozen(curve["error"]),
        argmax_alpha=_frozen(curve["argmax_alpha"]),
        reference_counts=_frozen(ref_counts),
        reference=_frozen(gp.rho_from_sigma2(ref_std**2)),
        rho_hat_x=here["rho_hat"],
        rho_hat_x_error=here["error"],
        argmax_alpha_x=here["argmax_alpha"],
        forward_x=table_x[0],
        reverse_x=table_x[1],
        divergence_error_x=table_x[2],
    )


# ------------------------------------------------------------------------------------------------
# readouts, snippet
# ------------------------------------------------------------------------------------------------
def _num(v: float, digits: int = 4) -> str:
    """A positive number for the readout: ``,`` thousands for large ones, else ``.4g``."""
    return f"{v:,.1f}" if abs(v) >= 1000 else f"{v:.{digits}g}"


def readout_html(r: GroupPrivacyResult) -> str:
    """The readouts: moments at the chosen count (exact and of the sample), the proven ρ and the
    numerical ρ̂ at the chosen count with its estimated quadrature error."""
    s = r.spec
    top = "" if r.argmax_alpha_x < s.alpha_max else " (the largest order used: larger ones may give more)"

    def row(label, value):
        return f"<tr><td style='text-align:left'>{label}</td><td style='text-align:right'>{value}</td></tr>"

    def section(title):
        return f"<tr><th colspan='2' style='text-align:left;padding-top:4px'>{title}</th></tr>"

    return (
        '<table class="dpexplore-group-table" style="border-collapse:collapse">'
        + section(f"Output at the count x = {s.count:,}")
        + row("mean (exact)", f"<b>{r.mean:,.1f}</b>")
        + row("standard deviation (exact)", f"<b>{r.std:,.1f}</b>")
        + row(f"{N_SAMPLES:,} draws (seed {s.seed}): mean", f"{r.sample_mean:,.1f}")
        + row("… standard deviation", f"{r.sample_std:,.1f}")
        + section("Proven: Pujol & Desfontaines 2023, Algorithm 1 is ρ-zCDP")
        + row("ρ = 1/(2σ²)", f"<b>{r.rho:.4g}</b>")
        + section(f"Numerical, for x = {s.count:,} and x + 1 (not a guarantee)")
        + row("ρ̂(x) = max<sub>α</sub> D<sub>α</sub>/α", f"<b>{r.rho_hat_x:.4g}</b>")
        + row("quadrature error (estimated)", f"± {r.rho_hat_x_error:.2g}")
        + row("ρ̂(x)/ρ", f"{r.rho_hat_x / r.rho:.4g}")
        + row("attained at the order", f"α = {r.argmax_alpha_x:g}")
        + "</table>"
        f"<p class='dpexplore-note' style='margin:4px 0 0'>σ² = {s.sigma2:.4g}, r = {s.r:.3g}; orders "
        f"α ≤ {s.alpha_max:g} only{top}. A numerical exploration of an open problem, not a privacy "
        "guarantee.</p>"
    )


# ------------------------------------------------------------------------------------------------
# controller, figures
# ------------------------------------------------------------------------------------------------
_BLUE, _ORANGE, _GREEN, _RED, _PURPLE = OKABE_ITO[0], OKABE_ITO[1], OKABE_ITO[2], OKABE_ITO[3], OKABE_ITO[4]
_GREY = "#777777"


def _positive(a) -> np.ndarray:
    """Values ≤ 0 cannot be drawn on a log axis: NaN (a gap) instead."""
    a = np.asarray(a, dtype=np.float64)
    return np.where(a > 0, a, np.nan)


class GroupPrivacyController(StagedController):
    """Sliders σ², r, x, largest count, seed and the largest order → :func:`compute_group_privacy_lab`
    → the output histogram, the ρ̂ curve against the count, D_α/α against α, and the readouts. The
    quadratures of counts not yet computed run one by one behind the progress bar when estimated
    above a second."""

    compute = staticmethod(compute_group_privacy_lab)
    cache_size = 64
    PROGRESS_AFTER = PROGRESS_AFTER

    readout_widgets = {"readout": ""}

    def __init__(self, controls, message=None):
        super().__init__(controls, message)
        self.progress.style = {"description_width": "initial"}
        self.progress.layout.width = "min(100%, 380px)"

    def read_spec(self) -> GroupPrivacySpec:
        values = param_values(self.controls, PARAMS)
        values["r"] = round(values["r"], 10)
        return GroupPrivacySpec(**values, alpha_max=float(self.controls["alpha_max"].value))

    def check(self, spec: GroupPrivacySpec) -> None:
        _check_spec(spec)

    def stages(self, spec: GroupPrivacySpec) -> list:
        xs = sorted({float(c) for c in curve_counts(int(spec.max_count))} | {float(spec.count)})
        return [
            (
                COUNT_TABLES,
                (x, float(spec.sigma2), float(spec.r)),
                _estimated_seconds(x, spec.sigma2, spec.r),
                f"quadrature, x = {int(x):,}",
            )
            for x in xs
        ]

    # traces ----------------------------------------------------------------------------------
    @staticmethod
    def _output_traces(r: GroupPrivacyResult) -> list[dict]:
        return [
            {
                "type": "bar",
                "name": f"{N_SAMPLES:,} draws",
                "x": r.hist_centres,
                "y": r.hist_density,
                "width": r.bin_width,
                "marker": {"color": _BLUE, "opacity": 0.45},
                "hovertemplate": "%{x:,.0f}: %{y:.3g}<extra></extra>",
            },
            line_trace("density (quadrature)", r.density_y, r.density, _ORANGE, 2.5),
            {
                "type": "scatter",
                "mode": "markers",
                "name": "mean ± sd (exact)",
                "x": [r.mean - r.std, r.mean, r.mean + r.std],
                "y": [0.0, 0.0, 0.0],
                "marker": {
                    "color": "#000000",
                    "size": 10,
                    "symbol": ["line-ns-open", "x", "line-ns-open"],
                    "line": {"width": 2},
                },
            },
        ]

    @staticmethod
    def _output_layout(r: GroupPrivacyResult) -> dict:
        s = r.spec
        return {
            "title": {
                "text": f"Output of Pujol & Desfontaines 2023, Algorithm 1, for x = {s.count:,} (σ² = {s.sigma2:.4g}, r = {s.r:.3g})"
            }
        }

    @staticmethod
    def _curve_traces(r: GroupPrivacyResult) -> list[dict]:
        lo, hi = float(r.counts[0]), float(max(r.counts[-1], r.spec.count))
        return [
            line_trace(
                "ρ̂(x), quadrature (not a guarantee)",
                r.counts,
                _positive(r.rho_hat),
                _BLUE,
                2.5,
                mode="lines+markers",
                marker={"size": 7},
                error_y={"type": "data", "array": r.rho_hat_error, "visible": True, "color": _BLUE},
                hovertemplate="x = %{x:,}: ρ̂ = %{y:.4g}<extra></extra>",
            ),
            line_trace("proven: ρ = 1/(2σ²)", [lo, hi], [r.rho, r.rho], _RED, 2.5, "dash"),
            line_trace("1/(2 Var Y), for comparison only", r.reference_counts, r.reference, _GREY, 2, "dot"),
            marker_trace(
                f"chosen x = {r.spec.count:,}",
                [float(r.spec.count)],
                _positive([r.rho_hat_x]),
                _ORANGE,
                "diamond",
                13,
                outline="#000000",
            ),
        ]

    @staticmethod
    def _order_traces(r: GroupPrivacyResult) -> list[dict]:
        al = np.asarray(ORDERS)
        return [
            line_trace(
                "D<sub>α</sub>(P<sub>x</sub>‖P<sub>x+1</sub>)",
                al,
                _positive(r.forward_x / (al * r.rho)),
                _BLUE,
                2.5,
                mode="lines+markers",
            ),
            line_trace(
                "D<sub>α</sub>(P<sub>x+1</sub>‖P<sub>x</sub>)",
                al,
                _positive(r.reverse_x / (al * r.rho)),
                _GREEN,
                2.5,
                "dash",
                mode="lines+markers",
            ),
            marker_trace(
                f"ρ̂(x)/ρ, at α = {r.argmax_alpha_x:g}",
                [r.argmax_alpha_x],
                _positive([r.rho_hat_x / r.rho]),
                _ORANGE,
                "diamond",
                13,
                outline="#000000",
            ),
        ]

    @staticmethod
    def _order_layout(r: GroupPrivacyResult) -> dict:
        s = r.spec
        return {
            "title": {"text": f"Divergences between x = {s.count:,} and x + 1, by order"},
            "shapes": [
                {
                    "type": "line",
                    "xref": "x",
                    "yref": "y domain",
                    "x0": s.alpha_max,
                    "x1": s.alpha_max,
                    "y0": 0,
                    "y1": 1,
                    "line": {"color": _GREY, "width": 1.5, "dash": "dot"},
                }
            ],
        }

    def figures(self, r: GroupPrivacyResult) -> list[PlotlyWidget]:
        margin = {"l": 70, "r": 20, "t": 40, "b": 50}
        log = {"type": "log", "exponentformat": "power"}
        self.fig_output = PlotlyWidget(
            self._output_traces(r),
            {
                **self._output_layout(r),
                "xaxis": {"title": {"text": "released count Y"}, "separatethousands": True},
                "yaxis": {"title": {"text": "density"}, "exponentformat": "power", "rangemode": "tozero"},
                "bargap": 0.0,
                "legend": {
                    "x": 0.99,
                    "xanchor": "right",
                    "y": 0.99,
                    "yanchor": "top",
                    "bgcolor": "rgba(255,255,255,0.8)",
                },
                "margin": margin,
            },
        )
        self.fig_curve = PlotlyWidget(
            self._curve_traces(r),
            {
                "title": {"text": "Per-count zCDP-like value ρ̂(x) against the count"},
                "xaxis": {**log, "title": {"text": "true count x (pair x, x + 1)"}},
                "yaxis": {**log, "title": {"text": "ρ̂(x) = max<sub>α</sub> D<sub>α</sub>/α"}},
                "legend": {
                    "x": 0.01,
                    "xanchor": "left",
                    "y": 0.01,
                    "yanchor": "bottom",
                    "bgcolor": "rgba(255,255,255,0.8)",
                },
                "margin": margin,
            },
        )
        self.fig_orders = PlotlyWidget(
            self._order_traces(r),
            {
                **self._order_layout(r),
                "xaxis": {"type": "log", "title": {"text": "order α"}, "tickvals": [1.5, 2, 4, 8, 16, 32, 64]},
                "yaxis": {**log, "title": {"text": "D<sub>α</sub>/(α ρ)   (1: the proven bound)"}},
                "legend": {"x": 1.02, "xanchor": "left", "y": 1.0, "yanchor": "top"},
                "margin": margin,
            },
        )
        return [self.fig_output, self.fig_curve, self.fig_orders]

    def render(self, r: GroupPrivacyResult) -> None:
        self.fig_output.update(data=self._output_traces(r), layout=self._output_layout(r))
        self.fig_curve.update(data=self._curve_traces(r))
        self.fig_orders.update(data=self._order_traces(r), layout=self._order_layout(r))

    def write_readouts(self, r: GroupPrivacyResult) -> None:
        self.readout.value = readout_html(r)

    def snippet(self) -> str:
        s = self.spec
        orders = tuple(a for a in ORDERS if a <= s.alpha_max)
        return (
            "import numpy as np\n"
            "from dpexplore.teaching import group_privacy as gp\n\n"
            + snippet_assign(s, PARAMS, skip=SNIPPET_SKIP)
            + "x = count   # the true count\n"
            f"orders = {tuple(float(a) for a in orders)!r}   # the orders alpha used\n"
            "m = gp.algorithm1_moments(x, sigma2, r)   # exact: E[Y] = x, Var Y = sigma2 + r^2 (x^2 + sigma2)\n"
            f"y = gp.algorithm1_sample(x, sigma2, r, np.random.default_rng(seed), {N_SAMPLES})   # Pujol & Desfontaines 2023, Algorithm 1\n"
            "print(f\"x = {x:,}: exact mean {m['mean']:,.1f}, exact standard deviation {m['std']:,.1f}\")\n"
            'print(f"{y.size:,} draws (seed {seed}): mean {y.mean():,.1f}, standard deviation {y.std():,.1f}")\n'
            'print(f"proven: rho-zCDP with rho = {gp.rho_from_sigma2(sigma2):.4g}")\n'
            "# a NUMERICAL exploration of an open problem (quadrature for the pair x, x + 1), not a guarantee\n"
            "c = gp.zcdp_like_curve([x], sigma2, r, alphas=orders)\n"
            "rho_hat, err, alpha = c['rho_hat'][0], c['error'][0], c['argmax_alpha'][0]\n"
            'print(f"rho_hat(x) = {rho_hat:.4g} (estimated quadrature error {err:.2g}), "\n'
            "      f\"rho_hat / rho = {rho_hat / c['rho_proven']:.4g}, attained at alpha = {alpha:g}\")\n"
        )


# ------------------------------------------------------------------------------------------------
# the page
# ------------------------------------------------------------------------------------------------
_THEORY = (
    r"<p><b>The question</b> (" + cite("pujol2023groups") + r"). A query counts the people in "
    r"disjoint groups. Usually every count gets noise of the same size, so everyone gets the same "
    r"privacy. When <i>relative</i> error is what matters (a count within about r of its value), "
    r"larger groups could take more noise — could the people in them then get <i>stronger</i> "
    r"privacy? Pujol &amp; Desfontaines define <b>group-wise zCDP</b>: a mechanism M satisfies it with budgets "
    r"v(D) (one per group) if, for datasets D, D′ differing in one record of group i, and all α &gt; 1,"
    r"$$D_\alpha\big(M(D)\,\|\,M(D')\big) \le \alpha\, v(D)_i \quad\text{and}\quad "
    r"D_\alpha\big(M(D')\,\|\,M(D)\big) \le \alpha\, v(D)_i ,$$"
    r"with \(D_\alpha(P\|Q) = \frac{1}{\alpha-1}\log\int p^\alpha q^{1-\alpha}\) the Rényi divergence ("
    + cite("mironov2017", "Definition 3")
    + r"). With the same v for every group this is ρ-zCDP ("
    + cite("bun2016concentrated", "Definition 1.1")
    + r"). (This is not group privacy in the usual "
    r"sense — k people at once, " + cite("dwork2014algorithmic", "Theorem 2.2") + r" — but a "
    r"budget that depends on the size of one's group.)</p>"
    r"<p><b>Algorithm 1 of Pujol &amp; Desfontaines 2023</b>, for one count x: "
    r"$$\sigma^2 = \frac{1}{2\rho},\qquad X \sim N(x, \sigma^2),\qquad Y \sim N\big(X, (rX)^2\big),"
    r"\qquad\text{release } Y.$$"
    r"The first step is the Gaussian mechanism for a count, which is ρ-zCDP with ρ = 1/(2σ²) ("
    + cite("bun2016concentrated", "Proposition 1.6")
    + r"); the second only uses X, so it is "
    r"post-processing, which a Rényi divergence cannot increase. <b>So Pujol &amp; Desfontaines 2023, Algorithm 1 is ρ-zCDP: that "
    r"is all that is proven</b> (the red dashed line). Its output has mean x and variance "
    r"\(\sigma^2 + r^2(x^2+\sigma^2)\) (the law of total variance): for x = 10⁴, σ² = 100 and "
    r"r = 0.3 the standard deviation is ≈ 3000.0; their figure reports a sample mean of "
    r"≈ 10002.6 and a standard deviation of ≈ 2995.1, within the sampling error of these exact "
    r"values. The error is about a fraction r of the count, as asked.</p>"
    r"<p><b>The open problem.</b> Intuitively, for a large count the extra noise rX hides one "
    r"person far better than the Gaussian step alone, so one would hope for v(x) ≪ ρ when x is "
    r"large. Pujol &amp; Desfontaines could not prove any such bound: it is open. <b>What this lab "
    r"computes is a numerical exploration, not a guarantee.</b> For the pair of counts x and x + 1 "
    r"it evaluates the output densities"
    r"$$p_x(y) = \int \varphi_\sigma(t-x)\,\varphi_r(y/t-1)\,\frac{dt}{|t|}$$"
    r"(Y = X·(1 + rW) with W ~ N(0, 1)) by composite Gauss–Legendre quadrature, then both "
    r"divergences at the orders α ∈ {1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64}, and reports"
    r"$$\hat\rho(x) = \max_{\alpha\le\alpha_{\max}} \frac{\max\big(D_\alpha(P_x\|P_{x+1}),\,"
    r"D_\alpha(P_{x+1}\|P_x)\big)}{\alpha}.$$"
    r"Its error is <i>estimated</i> (the change when every quadrature grid is refined), not "
    r"bounded. The value is only a lower estimate of what group-wise zCDP would need: it covers one "
    r"pair of neighbouring counts, finitely many orders (the readout says when the maximum is at "
    r"the largest order used — larger orders may then give more, so try α ≤ 64), and the "
    r"definition asks for a budget that holds for every α &gt; 1. The grey dotted line, "
    r"1/(2 Var Y), is what a Gaussian of the same variance would give: a comparison, not a bound "
    r"(Y is not Gaussian). For counts small next to σ the extra noise rX is only about rσ, so ρ̂ "
    r"stays close to ρ: people in small groups get about the Gaussian mechanism's privacy.</p>"
    r"<p><b>Numerics.</b> Each count's quadrature takes ≈ 5–70 ms (its grids grow like 1/r, so "
    r"r ≥ 0.2 here); counts are memoised, and a step that needs new ones shows a progress bar "
    r"when it is estimated to take over a second. The histogram holds "
    + f"{N_SAMPLES:,}"
    + r" seeded draws of Pujol &amp; Desfontaines 2023, Algorithm 1; the line over it is p<sub>x</sub> by the same quadrature.</p>"
)

INFO = AppInfo(
    slug="group_privacy_lab",
    title="Better privacy for larger groups? An open problem",
    lead=(
        "Algorithm 1 of Pujol &amp; Desfontaines 2023 adds Gaussian noise (provably ρ-zCDP), then "
        "noise proportional to the noisy count; whether people in larger groups thereby get more "
        "privacy is an <b>open problem</b>, and the values ρ̂(x) here are a <b>numerical exploration, "
        "not a privacy guarantee</b>."
    ),
    theory=_THEORY,
    references=("pujol2023groups", "bun2016concentrated", "mironov2017", "dwork2014algorithmic"),
)

_NOTE = (
    "<p class='dpexplore-note'><b>Not a guarantee.</b> Only ρ = 1/(2σ²) is proven. ρ̂(x) is a "
    "numerical exploration of an open problem (" + cite("pujol2023groups") + "): quadrature for "
    "the pair of counts x and x + 1 at finitely many orders α, with an estimated, not proven, "
    "numerical error (in the readout; the error bars are mostly smaller than the markers).</p>"
)


def build_group_privacy_lab(
    sigma2: float = 100.0,
    r: float = 0.3,
    count: int = 10000,
    max_count: int = 10000,
    alpha_max: int = 32,
    seed: int = 0,
) -> AppShell:
    """The group-privacy lab (Pujol & Desfontaines 2023) in the shell: sliders σ², r, x, the
    largest count and the seed, the largest order α, a progress bar and the readouts in the panel;
    the output histogram, the ρ̂ curve against the count and D_α/α against α in tabs. Defaults
    (the figure of Pujol & Desfontaines 2023) lie on the sliders' grids; every slider position is a valid setting.

    >>> app = build_group_privacy_lab(max_count=100)
    >>> app.controller.spec.max_count, len(app.figs)
    (100, 3)
    """
    controls = {
        "sigma2": param_slider(PARAMS["sigma2"], sigma2, continuous_update=False),
        "r": param_slider(PARAMS["r"], r, continuous_update=False),
        "count": param_slider(PARAMS["count"], count),
        "max_count": param_slider(PARAMS["max_count"], max_count, continuous_update=False),
        "alpha_max": dropdown("largest order α", [(str(a), a) for a in ALPHA_MAX_CHOICES], alpha_max, width="260px"),
        "seed": param_slider(PARAMS["seed"], seed),
    }
    ctrl = GroupPrivacyController(controls, MessageArea())
    tabs = [
        ("Output at x", [ctrl.fig_output]),
        ("ρ̂ against the count", [ctrl.fig_curve]),
        ("By order α", [ctrl.fig_orders]),
    ]
    return app_shell(
        INFO,
        ctrl,
        controls=[*controls.values(), ctrl.progress],
        plots=tabs,
        readouts=[ctrl.readout],
        notes=[W.HTML(_NOTE)],
        panel_width="400px",
    )
