"""Noise lab (Vinterbo 2022): which additive noise needs the least variance for a given (ε, δ)?

For a chosen (ε, δ) and sensitivity Δ = 1 the lab shows, side by side, the **minimum scales**
of the Laplace, Logistic, Gaussian and Subbotin(r) mechanisms (Vinterbo 2022, Theorems 3 and 4 in closed
form; Vinterbo 2022, Lemmas 1–2 and Balle & Wang 2018 numerically), their densities, variances and a seeded
sample histogram; the **variance-ratio maps** of Vinterbo 2022, Figure 1 (a–c) over an (ε, δ) grid with the
unit contour; and **Vinterbo 2022, Theorem 6**: at fixed ε the Gaussian (and every MLR-unbounded Subbotin,
r > 1) scale grows without bound as δ → 0, while the MLR-bounded Laplace and Logistic scales
stay below Δ/ε.

Closed forms used (sensitivity Δ):

* Laplace (Vinterbo 2022 Theorem 3): b = Δ/(ε − 2 log(1 − δ)), Var = 2b².
* Logistic (Vinterbo 2022 Theorem 4): x = e^{−d/2} solves (1 − e^{ε/2}x)² = δ(1 − x²), s = Δ/d, Var = π²s²/3.
* Gaussian (Balle & Wang 2018, Theorem 8; Vinterbo 2022 Theorem 5): the least σ with
  Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) ≤ δ, Var = σ².
* Subbotin(r) (Vinterbo 2022 Section 2.1, Lemma 1): the least s with δ_s(ε) ≤ δ, Var = s² r^{2/r} Γ(3/r)/Γ(1/r).

Vinterbo 2022's multidimensional results (Lemma 8, Theorem 9, Section 4) were withdrawn by the author
in an update note (the lemma is invalid, and the theorem and essentially all of the section's
results rest on it); they are not used or shown here.

Every scale the lab shows is the backend's: ``mechanisms.X.calibrate`` (for the Gaussian and
Subbotin a grid bracket and a safeguarded Newton search on log(Δ/s), ~1 ms for one scale and
~10 ms for the 61 points of a curve, ending on the feasible side of the backend's δ formula);
:func:`min_scale` only dispatches to it (Subbotin with r = 1 to ``Laplace.calibrate``).

>>> r = compute_noise_lab(NoiseSpec(eps=1.0, delta=1e-5, shape=3.0, n=1000, seed=0))
>>> [round(float(s), 6) for s in r.scales]
[0.99998, 0.994983, 3.730632, 7.30073]
>>> type(build_noise_lab()).__name__
'AppShell'
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import ipywidgets as W
import numpy as np

from ..mechanisms import Gaussian, Laplace, Logistic, Subbotin
from ..ui.controls import OKABE_ITO, Controller, MessageArea, dropdown, param_slider, param_box
from ..ui.plotwidget import PlotlyWidget
from ..ui.shell import AppInfo, AppShell, app_shell
from ..ui.views import LOG_AXIS, axes_layout, line_trace, marker_trace
from ._checks import Param, check_params, params_by_name, SEED, param_values, snippet_assign

__all__ = [
    "NoiseSpec",
    "NoiseResult",
    "compute_noise_lab",
    "NoiseLabController",
    "build_noise_lab",
    "min_scale",
    "ratio_maps",
    "MECHANISMS",
    "PAIRS",
    "EPS_RANGE",
    "DELTA_RANGE",
    "SHAPE_RANGE",
    "N_RANGE",
    "GRID_EPS",
    "GRID_DELTA",
    "CURVE_DELTA",
    "N_DENSITY",
    "N_BINS",
]

#: the four mechanisms, in table and legend order
MECHANISMS = ("Laplace", "Logistic", "Gaussian", "Subbotin")
#: variance-ratio maps of Vinterbo 2022 Figure 1: key → (numerator, denominator, panel)
PAIRS = {
    "Laplace vs Logistic": (0, 1, "(a)"),
    "Laplace vs Gaussian": (0, 2, "(b)"),
    "Logistic vs Gaussian": (1, 2, "(c)"),
}
EPS_RANGE = (0.01, 50.0)
DELTA_RANGE = (1e-300, 0.5)
SHAPE_RANGE = (1.0, 4.0)
N_RANGE = (100, 20000)
#: the lab's numeric parameters: its sliders (the seed is a number box) and the checks of its spec
PARAMS = params_by_name(
    Param("eps", *EPS_RANGE, "log", "ε", steps_per_decade=20),
    Param("delta", *DELTA_RANGE, "log", "δ", steps_per_decade=4, readout_format=".1e"),
    Param("shape", *SHAPE_RANGE, "linear", "Subbotin shape r", step=0.1),
    Param("n", *N_RANGE, "log", "samples n", "per noise", integer=True, steps_per_decade=10, what="of samples"),
    SEED,
)
#: parameters the "Reproduce in Python" snippet leaves out, and why
SNIPPET_SKIP = {
    "n": "the table's scales and variances do not depend on the samples",
    "seed": "the table's scales and variances do not depend on the samples",
}
#: the (ε, δ) grid of the variance-ratio maps (40 × 40, log-spaced)
GRID_EPS = np.logspace(-2, 1, 40)
GRID_DELTA = np.logspace(-12, math.log10(0.5), 40)
#: the δ grid of the Vinterbo 2022, Theorem 6 plot (scale vs δ at fixed ε)
CURVE_DELTA = np.logspace(-300, math.log10(0.5), 61)
N_DENSITY = 401
N_BINS = 60
SENSITIVITY = 1.0


# ------------------------------------------------------------------------------------------------
# minimum scale (Gaussian, Subbotin): the backend's calibrate
# ------------------------------------------------------------------------------------------------
def min_scale(kind: str, eps, delta, shape=2.0, sensitivity: float = SENSITIVITY):
    """Minimum Gaussian σ or Subbotin(r) scale s with δ(ε) ≤ ``delta``, vectorized over ``eps``,
    ``delta``, ``shape``: ``mechanisms.Gaussian.calibrate`` / ``mechanisms.Subbotin.calibrate``
    (Vinterbo 2022 Lemma 1–2; Balle & Wang 2018 Theorem 8 for the Gaussian), except that
    Subbotin with r = 1, which is Laplace noise, is ``mechanisms.Laplace.calibrate`` (the table
    then shows the same number twice). A float for scalar arguments, else an array.

    >>> round(float(min_scale("Gaussian", 1.0, 1e-5)), 6)       # Gaussian.calibrate(1, 1e-5).sigma
    3.730632
    >>> min_scale("Subbotin", 1.0, 0.0, 3.0)
    Traceback (most recent call last):
    ...
    ValueError: delta = 0 is impossible for Subbotin noise with shape > 1: its privacy loss is unbounded; got delta=0.0, shape=3.0
    """
    if kind not in ("Gaussian", "Subbotin"):
        raise ValueError(f"kind must be 'Gaussian' or 'Subbotin', got {kind!r}")
    if kind == "Gaussian":
        return _scale_out(Gaussian.calibrate(eps, delta, sensitivity).sigma)
    out = np.array(Subbotin.calibrate(eps, delta, sensitivity, shape=shape).scale, dtype=float)
    lap = np.broadcast_to(np.asarray(shape, float) == 1.0, out.shape)
    if lap.any():
        e, dl = (np.broadcast_to(np.asarray(v, float), out.shape) for v in (eps, delta))
        out[lap] = np.asarray(Laplace.calibrate(e[lap], dl[lap], sensitivity).scale)
    return _scale_out(out)


def _scale_out(scale):
    out = np.asarray(scale, dtype=float)
    return float(out) if out.ndim == 0 else np.array(out)


# ------------------------------------------------------------------------------------------------
# variance-ratio maps (Vinterbo 2022 Figure 1), computed once
# ------------------------------------------------------------------------------------------------
def _variances(scales, shape):
    """The four noises' variances from the backend (``.variance``: Laplace 2b², Logistic π²s²/3,
    Gaussian σ², Subbotin s² r^{2/r} Γ(3/r)/Γ(1/r))."""
    return tuple(m.variance for m in _mechs(scales, shape))


_MAPS: dict[str, np.ndarray] = {}  # filled once, on first use (not at import time)


def _ratio_maps_compute(progress):
    E, D = np.meshgrid(GRID_EPS, GRID_DELTA)  # rows: δ, columns: ε
    lap = np.asarray(Laplace.calibrate(E, D).scale)
    logi = np.asarray(Logistic.calibrate(E, D).scale)
    gau = np.empty(E.shape)
    for i in range(E.shape[0]):  # row by row, so a progress bar can move
        gau[i] = np.asarray(Gaussian.calibrate(E[i], D[i]).sigma)
        if progress is not None:
            progress(i + 1, E.shape[0])
    var = (np.asarray(Laplace(lap).variance), np.asarray(Logistic(logi).variance), np.asarray(Gaussian(gau).variance))
    maps = {key: var[a] / var[b] for key, (a, b, _) in PAIRS.items()}
    for v in maps.values():
        v.setflags(write=False)
    return maps


def ratio_maps(progress=None) -> dict[str, np.ndarray]:
    """The variance ratios of Vinterbo 2022 Figure 1 (a–c) on the grid ``GRID_DELTA × GRID_EPS`` (rows δ,
    columns ε), Δ = 1: Var(Laplace)/Var(Logistic), Var(Laplace)/Var(Gaussian),
    Var(Logistic)/Var(Gaussian), with every scale from ``mechanisms.X.calibrate``. Computed once
    per process and kept;
    ``progress(i, n)`` is called per grid row while computing.

    >>> m = ratio_maps()
    >>> m["Laplace vs Logistic"].shape
    (40, 40)
    """
    if not _MAPS:
        _MAPS.update(_ratio_maps_compute(progress))
    return _MAPS


# ------------------------------------------------------------------------------------------------
# spec, compute
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NoiseSpec:
    """The lab's parameters (hashable: the cache key)."""

    eps: float
    delta: float
    shape: float = 3.0
    n: int = 1000
    seed: int = 0
    pair: str = "Laplace vs Gaussian"


@dataclass(frozen=True)
class NoiseResult:
    """Everything the lab draws."""

    spec: NoiseSpec
    scales: tuple  # minimum scales, MECHANISMS order
    variances: tuple
    x: np.ndarray  # density grid
    densities: tuple  # one array per mechanism
    bin_centers: np.ndarray
    hist: tuple  # sample histograms (density-normalised), one per mechanism
    outside: tuple  # fraction of samples outside the histogram range
    curve_delta: np.ndarray
    curve_scales: tuple  # minimum scale vs δ at spec.eps, one per mechanism
    ratio_map: np.ndarray  # the chosen pair's variance ratio on the grid
    ratio_here: float  # the same ratio at (spec.eps, spec.delta)


def _check_spec(spec: NoiseSpec) -> None:
    check_params(spec, PARAMS)
    if spec.pair not in PAIRS:
        raise ValueError(f"pair must be one of {list(PAIRS)}, got pair = {spec.pair!r}")


@functools.lru_cache(maxsize=64)
def _scales(eps: float, delta: float, shape: float) -> tuple:
    b = float(Laplace.calibrate(eps, delta, SENSITIVITY).scale)
    s = float(Logistic.calibrate(eps, delta, SENSITIVITY).scale)
    sigma = float(min_scale("Gaussian", eps, delta))
    sub = float(min_scale("Subbotin", eps, delta, shape))
    return b, s, sigma, sub


@functools.lru_cache(maxsize=32)
def _curves(eps: float, shape: float) -> tuple:
    d = CURVE_DELTA
    return (
        np.asarray(Laplace.calibrate(eps, d, SENSITIVITY).scale, float),
        np.asarray(Logistic.calibrate(eps, d, SENSITIVITY).scale, float),
        np.asarray(min_scale("Gaussian", eps, d), float),
        np.asarray(min_scale("Subbotin", eps, d, shape), float),
    )


def _mechs(scales, shape):
    b, s, sigma, sub = scales
    return (Laplace(b), Logistic(s), Gaussian(sigma), Subbotin(sub, shape))


@functools.lru_cache(maxsize=32)
def _samples(scales: tuple, shape: float, n: int, seed: int, half_width: float):
    """Seeded sample histograms: one numpy Generator (seed) draws n samples of each noise in
    MECHANISMS order (backend ``sample``); density-normalised counts on N_BINS bins."""
    rng = np.random.default_rng(seed)
    edges = np.linspace(-half_width, half_width, N_BINS + 1)
    width = edges[1] - edges[0]
    hists, outside = [], []
    for m in _mechs(scales, shape):
        z = np.asarray(m.sample(n, rng))
        counts, _ = np.histogram(z, bins=edges)
        hists.append(counts / (n * width))
        outside.append(1.0 - counts.sum() / n)
    return 0.5 * (edges[1:] + edges[:-1]), tuple(hists), tuple(outside)


def compute_noise_lab(spec: NoiseSpec) -> NoiseResult:
    """All arrays of the noise lab for one setting (Δ = 1): minimum scales (Vinterbo 2022 Theorems 3, 4;
    Balle & Wang 2018 Thm 8; Vinterbo 2022 Lemma 1–2 for Subbotin), variances, densities, seeded sample
    histograms, the Vinterbo 2022, Theorem 6 curves (scale vs δ at ε; cached per (ε, r)) and the chosen Vinterbo 2022
    Figure 1 ratio map (computed once per session). Raises ValueError naming a bad parameter.

    >>> r = compute_noise_lab(NoiseSpec(eps=1.0, delta=0.1, shape=2.0, n=100, seed=1))
    >>> round(r.variances[0], 6)           # 2 b², b = 1/(1 − 2 log 0.9)
    1.3644
    """
    _check_spec(spec)
    scales = _scales(float(spec.eps), float(spec.delta), float(spec.shape))
    variances = tuple(float(v) for v in _variances(scales, spec.shape))
    half = 5.0 * math.sqrt(max(variances))
    x = np.linspace(-half, half, N_DENSITY)
    dens = tuple(np.exp(np.asarray(m.logpdf(x))) for m in _mechs(scales, spec.shape))
    centers, hists, outside = _samples(scales, float(spec.shape), int(spec.n), int(spec.seed), half)
    curves = _curves(float(spec.eps), float(spec.shape))
    a, b, _ = PAIRS[spec.pair]
    return NoiseResult(
        spec,
        scales,
        variances,
        x,
        dens,
        centers,
        hists,
        outside,
        CURVE_DELTA,
        curves,
        ratio_maps()[spec.pair],
        variances[a] / variances[b],
    )


# ------------------------------------------------------------------------------------------------
# controller, figures
# ------------------------------------------------------------------------------------------------
_COLOURS = OKABE_ITO[:4]


def _names(shape):
    return ("Laplace", "Logistic", "Gaussian", f"Subbotin r={shape:g}")


class NoiseLabController(Controller):
    """One controller: sliders ε, δ, r, n, seed and the pair dropdown → :func:`compute_noise_lab`
    → five figures (densities, histogram, variances, Vinterbo 2022, Theorem 6, ratio map) and the table."""

    compute = staticmethod(compute_noise_lab)
    readout_widgets = {"table": ""}

    def read_spec(self) -> NoiseSpec:
        values = param_values(self.controls, PARAMS)
        values["shape"] = round(values["shape"], 10)
        return NoiseSpec(**values, pair=str(self.controls["pair"].value))

    # traces ----------------------------------------------------------------------------------
    @staticmethod
    def _density_traces(r):
        names = _names(r.spec.shape)
        return [line_trace(f"{names[i]} (scale {r.scales[i]:.3g})", r.x, r.densities[i], _COLOURS[i]) for i in range(4)]

    @staticmethod
    def _hist_traces(r):
        names = _names(r.spec.shape)
        return [line_trace(names[i], r.bin_centers, r.hist[i], _COLOURS[i], 1.5, shape="hvh") for i in range(4)]

    @staticmethod
    def _var_traces(r):
        return [
            {
                "type": "bar",
                "name": "variance",
                "x": list(_names(r.spec.shape)),
                "y": list(r.variances),
                "marker": {"color": list(_COLOURS)},
                "text": [f"{v:.3g}" for v in r.variances],
                "textposition": "outside",
            }
        ]

    @staticmethod
    def _curve_traces(r):
        names = _names(r.spec.shape)
        out = [line_trace(names[i], r.curve_delta, r.curve_scales[i], _COLOURS[i]) for i in range(4)]
        chosen = f"chosen δ = {r.spec.delta:.3g}"
        out.append(
            marker_trace(chosen, [r.spec.delta] * 4, list(r.scales), list(_COLOURS), "diamond", outline="#000000")
        )
        return out

    @staticmethod
    def _map_traces(r):
        z = np.log10(r.ratio_map)
        na = MECHANISMS[PAIRS[r.spec.pair][0]]
        return [
            {
                "type": "heatmap",
                "name": "log₁₀ variance ratio",
                "x": GRID_EPS,
                "y": GRID_DELTA,
                "z": z,
                "colorscale": "RdBu",
                "zmid": 0.0,
                # the colour bar's title along the bar, not above it: the map keeps the width
                "colorbar": {
                    "title": {"text": f"log₁₀ ratio (blue: {na} has less variance)", "side": "right"},
                    "thickness": 18,
                    "xpad": 4,
                },
            },
            {
                "type": "contour",
                "name": "ratio = 1",
                "x": GRID_EPS,
                "y": GRID_DELTA,
                "z": z,
                "contours": {"start": 0.0, "end": 0.0, "size": 1.0, "coloring": "none"},
                "line": {"color": "#000000", "width": 3},
                "showscale": False,
                "showlegend": True,
            },
            marker_trace(
                f"chosen (ε, δ): ratio {r.ratio_here:.3g}",
                [r.spec.eps],
                [r.spec.delta],
                OKABE_ITO[6],
                "x",
                12,
                outline="#000000",
            ),
        ]

    def _map_layout(self, r):
        a, b, panel = PAIRS[r.spec.pair]
        na, nb = MECHANISMS[a], MECHANISMS[b]
        # short enough for one line in presentation mode (broken over two, it ran into the map):
        # the work here, its figure number in the tab's text and the Theory; what blue means is
        # the colour bar's title
        return {"title": {"text": f"Var({na}) / Var({nb}), Vinterbo 2022"}}

    def figures(self, r: NoiseResult) -> list[PlotlyWidget]:
        self.fig_density = PlotlyWidget(
            self._density_traces(r),
            axes_layout("Noise densities at the minimum scales (Δ = 1)", "noise value z", "density f(z)"),
        )
        self.fig_hist = PlotlyWidget(
            self._hist_traces(r),
            axes_layout("Seeded sample histograms (density-normalised)", "noise value z", "samples per unit"),
        )
        self.fig_var = PlotlyWidget(
            self._var_traces(r),
            axes_layout(
                "Variance of the noise (mean squared error of the answer)",
                "mechanism",
                "variance",
                yaxis=LOG_AXIS,
                showlegend=False,
            ),
        )
        self.fig_curve = PlotlyWidget(
            self._curve_traces(r),
            axes_layout(
                "Vinterbo 2022 Theorem 6: minimum scale vs δ at the chosen ε",
                "δ",
                "minimum scale (Δ = 1)",
                # a tick every 50 decades (1, 10⁻⁵⁰, …, 10⁻³⁰⁰): left to plotly, the number of ticks
                # followed the axis's width, and the margins their labels pushed changed that width
                # back: plotly's automargin flipped between two layouts, and a page showed either
                xaxis={**LOG_AXIS, "autorange": "reversed", "tick0": 0, "dtick": 50},
                yaxis=LOG_AXIS,
            ),
        )
        self.fig_map = PlotlyWidget(
            self._map_traces(r),
            {
                **self._map_layout(r),
                "height": 460,
                "xaxis": {"title": {"text": "ε"}, "type": "log"},
                "yaxis": {"title": {"text": "δ"}, **LOG_AXIS},
                # the legend inside the map, in its bottom-left corner (small ε and δ: the same deep
                # colour everywhere there); below the map it cost a sixth of a projector's plot height
                "legend": {
                    "x": 0.005,
                    "xanchor": "left",
                    "y": 0.005,
                    "yanchor": "bottom",
                    "bgcolor": "rgba(255,255,255,0.85)",
                    "bordercolor": "#999999",
                    "borderwidth": 1,
                },
            },
        )
        return [self.fig_density, self.fig_hist, self.fig_var, self.fig_curve, self.fig_map]

    def render(self, r: NoiseResult) -> None:
        self.fig_density.update(data=self._density_traces(r))
        self.fig_hist.update(data=self._hist_traces(r))
        self.fig_var.update(data=self._var_traces(r))
        self.fig_curve.update(data=self._curve_traces(r))
        self.fig_map.update(data=self._map_traces(r), layout=self._map_layout(r))

    def write_readouts(self, r: NoiseResult) -> None:
        self.table.value = self._table(r)

    def snippet(self) -> str:
        s = self.spec
        return (
            "from dpexplore import mechanisms\n\n"
            + snippet_assign(s, PARAMS, skip=SNIPPET_SKIP)
            + "# sensitivity 1; shape: the Subbotin shape r\n"
            "noises = {   # the least scale of each noise for (eps, delta)-DP, rounded up\n"
            "    'Laplace': mechanisms.Laplace.calibrate(eps, delta),\n"
            "    'Logistic': mechanisms.Logistic.calibrate(eps, delta),\n"
            "    'Gaussian': mechanisms.Gaussian.calibrate(eps, delta),\n"
            "    f'Subbotin r={shape:g}': mechanisms.Subbotin.calibrate(eps, delta, shape=shape),\n"
            "}\n"
            "for name, m in noises.items():\n"
            "    scale = m.sigma if name == 'Gaussian' else m.scale\n"
            "    print(f'{name}: minimum scale {scale:.6g}, variance {m.variance:.6g}')\n"
        )

    @staticmethod
    def _table(r: NoiseResult) -> str:
        # four columns: at presentation mode's 18 px a table of six (std and the samples off the
        # histogram as well) was wider than the 26rem panel and hid its last two columns off to the
        # side. The std is the square root of the variance; the samples off the histogram go to the
        # sentence below, with the histograms they belong to
        names = _names(r.spec.shape)
        vmin = min(r.variances)
        rows = "".join(
            f"<tr><th scope='row' style='text-align:left;font-weight:normal'>{names[i]}</th>"
            f"<td>{r.scales[i]:.6g}</td><td>{r.variances[i]:.6g}</td>"
            f"<td>{r.variances[i] / vmin:.3g}×</td></tr>"
            for i in range(4)
        )
        off = ", ".join(f"{names[i]} {100 * r.outside[i]:.2g} %" for i in range(4))
        return (
            '<table class="dpexplore-noise-table" style="border-collapse:collapse;text-align:right">'
            "<tr><th scope='col' style='text-align:left'>noise</th><th scope='col'>minimum scale</th>"
            "<th scope='col'>variance</th><th scope='col'>variance / least</th></tr>"
            f"{rows}</table><p>Sensitivity Δ = 1, ε = {r.spec.eps:.4g}, δ = {r.spec.delta:.3g}; "
            f"{r.spec.n:,} samples per mechanism, seed {r.spec.seed}. The histograms cover ±5 "
            f"standard deviations of the widest noise; the samples beyond are not drawn ({off}).</p>"
        )


_INTRO = r"""
<p>Each mechanism releases q(x) + Z with symmetric log-concave noise Z at the <b>least scale</b> that
makes it (ε, δ)-DP for sensitivity Δ = 1 (Vinterbo 2022, Lemma 1: δ(ε) = F(t) − e<sup>ε</sup>F(t − Δ) with
ℓ(t) = ε). Closed forms: Laplace (Vinterbo 2022, Theorem 3)
$$b = \frac{\Delta}{\varepsilon - 2\log(1-\delta)},\qquad \operatorname{Var} = 2b^2;$$
Logistic (Vinterbo 2022, Theorem 4): \(x = e^{-\Delta/(2s)}\) solves \((1 - e^{\varepsilon/2}x)^2 = \delta(1 - x^2)\),
Var = π²s²/3; the Gaussian (Balle &amp; Wang 2018, Thm 8; Vinterbo 2022, Theorem 5) needs the least σ with
\(\Phi(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}) - e^{\varepsilon}\Phi(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}) \le \delta\);
Subbotin(r) has density ∝ exp(−|z/s|<sup>r</sup>/r) (r = 1 Laplace, r = 2 Gaussian).</p>
<p><b>Vinterbo 2022, Theorem 6</b>: if the noise is MLR-unbounded (Gaussian, Subbotin with r &gt; 1) its least
scale → ∞ as δ → 0 at fixed ε, while MLR-bounded noise (Laplace, Logistic) can reach δ = 0 with
a bounded scale (≤ Δ/ε). So for small enough δ, Laplace and Logistic beat the Gaussian in variance
by any factor. The maps reproduce Vinterbo 2022, Figure 1 (a–c): the ratio of variances over an (ε, δ)
grid; the black contour is ratio = 1.</p>
"""

_RETRACTED = (
    '<p class="dpexplore-retracted" style="border-left:4px solid #D55E00;padding:4px 10px;background:#fff4ec">'
    "<b>Note:</b> Vinterbo 2022's multidimensional results (Lemma 8, Theorem 9 and Section 4) were "
    "<b>withdrawn by the author</b> in an update note (the lemma is invalid, and the theorem and "
    "essentially all of the section's results rest on it); they are not used or shown in this lab. Everything here is "
    "one-dimensional (Vinterbo 2022, Sections 2–3).</p>"
)


INFO = AppInfo(
    slug="noise_lab",
    title="Noise lab: Laplace, Logistic, Gaussian and Subbotin at the same (ε, δ)",
    lead=(
        "For a target (ε, δ), the smallest scale of each symmetric log-concave noise that achieves "
        "it, and what it costs in variance: densities, samples, variances and privacy curves side "
        "by side."
    ),
    theory=_RETRACTED + _INTRO,
)


def build_noise_lab(
    eps: float = 1.0,
    delta: float = 1e-5,
    shape: float = 3.0,
    n: int = 1000,
    seed: int = 0,
    pair: str = "Laplace vs Gaussian",
) -> AppShell:
    """The noise lab in the shell: sliders ε, δ, Subbotin r, samples n and seed in the panel with
    the table of minimum scales; densities, samples, variances, privacy curves and the
    variance-ratio maps in tabs (Vinterbo 2022, Theorems 3, 4, 6 and Figure 1). Defaults lie on the
    sliders' grids (a log slider's front end snaps its value to its grid).

    The 40 × 40 Gaussian calibration of the ratio maps runs once per kernel (~0.2 s), behind a
    progress bar.

    >>> app = build_noise_lab(eps=0.5)
    >>> app.controller.table.value.count("<tr>")
    5
    """
    progress = W.IntProgress(
        value=0, min=0, max=len(GRID_DELTA), description="ratio maps", layout=W.Layout(display="none")
    )
    if not _MAPS:
        t0 = time.perf_counter()

        def tick(i, total):
            if time.perf_counter() - t0 > 0.3:
                progress.layout.display = None
            progress.value = i

        ratio_maps(progress=tick)
        progress.layout.display = "none"
    controls = {
        **{k: param_slider(PARAMS[k], v) for k, v in (("eps", eps), ("delta", delta), ("shape", shape), ("n", n))},
        "seed": param_box(SEED, seed),
        "pair": dropdown("ratio map", list(PAIRS), pair),
    }
    ctrl = NoiseLabController(controls, MessageArea())
    panel = [controls[k] for k in ("eps", "delta", "shape", "n", "seed")] + [progress]
    tabs = [
        ("Densities", [ctrl.fig_density]),
        ("Samples", [ctrl.fig_hist]),
        ("Variances", [ctrl.fig_var]),
        ("Privacy curves", [ctrl.fig_curve]),
        ("Variance-ratio maps", [controls["pair"], ctrl.fig_map]),
    ]
    return app_shell(
        INFO, ctrl, controls=panel, plots=tabs, readouts=[ctrl.table], notes=[W.HTML(_RETRACTED)], panel_width="470px"
    )
