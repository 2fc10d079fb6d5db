"""Private mean estimation lab (Kamath 2023, "Covariance-aware private mean estimation, efficiently").

The error of an estimate μ̂ of the mean of N(μ, Σ) should be measured in the Mahalanobis distance
‖Σ^{-1/2}(μ̂ − μ)‖₂: it follows the covariance and asks for more accuracy where the data vary
little. A private estimator clips the data to bound its sensitivity; clipping in a round ball
that ignores Σ has to cover the longest axis, so its noise is as large across the thin axis too,
and the Mahalanobis error grows like sqrt(κ) with the condition number κ of Σ.

The lab draws a 2-D Gaussian with eigenvalues κ and 1 (first axis at ``angle`` degrees) and runs
the two estimators of :mod:`dpexplore.teaching.mean_estimation` on the same ``TRIALS`` seeded datasets of n
points, clipped around the true mean μ = 0, each with its :func:`~dpexplore.teaching.mean_estimation.default_clip`
(β = 0.01):

* isotropic clipping, :func:`~dpexplore.teaching.mean_estimation.isotropic_clipped_mean`
  (noise N(0, σ² I), clip radius sqrt(κ)·r_β);
* Mahalanobis clipping with Σ known, :func:`~dpexplore.teaching.mean_estimation.mahalanobis_clipped_mean`
  (noise N(0, σ² Σ), clip radius r_β in whitened units).

Shown: the cloud of the ``TRIALS`` estimates of each, and their exact error ellipses at
probability ``LEVEL`` (:func:`~dpexplore.teaching.mean_estimation.output_covariance`,
:func:`~dpexplore.teaching.mean_estimation.ellipse_points`) around the true mean, with the non-private
empirical mean's ellipse (covariance Σ/n); and the exact root-mean-square error against n in the
Mahalanobis distance and in ℓ₂, with the simulated RMS errors at the chosen n.

What Kamath 2023 announces — computationally efficient estimators reaching the Mahalanobis
estimator's accuracy with O(d) samples WITHOUT knowing Σ (Brown, Hopkins & Smith 2023; Duchi,
Haque & Kuditipudi 2023) — is not implemented in dpexplore; the Theory section says so.

How a slider step stays cheap (≈ 10–30 ms at n = 1000): the datasets are x = A z with
A = R(angle)·diag(sqrt κ, 1) (so A Aᵀ = Σ) and z standard normal, drawn in seeded chunks of
``CHUNK`` points per trial (dataset n is the first n points: the datasets grow with n). Clipping
commutes with the rotation R, and the Mahalanobis estimator's whitened points are R z, so the
clipped averages depend on (n, seed) (Mahalanobis) and (κ, n, seed) (isotropic) only and are
cached (:func:`~dpexplore.teaching.mean_estimation.clipped_average`); ε, δ and the angle move only
the noise (:func:`~dpexplore.teaching.mean_estimation.noisy_clipped_mean`, the estimators' noise
step, with the runs' fixed draws), the rotation and the exact covariances. Every point of the
cloud is the backend estimator's output on its dataset (tested). The exact error
curves against n use the backend's clipped covariance and the Gaussian calibration at every n
(:meth:`dpexplore.mechanisms.Gaussian.calibrate`, vectorized over the sensitivity 2C/n), equal
to :func:`~dpexplore.teaching.mean_estimation.output_covariance` at each n (tested).

>>> r = compute_mean_estimation_lab(MeanEstimationSpec(kappa=100.0, n=1000))
>>> [round(v, 4) for v in r.rmse_mahalanobis]
[0.2615, 0.0574]
>>> round(r.ratio_mahalanobis, 2), round(r.ratio_l2, 3)
(4.56, 1.181)
>>> type(build_mean_estimation_lab()).__name__
'AppShell'
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..teaching import mean_estimation as me
from ..bibliography.references import cite
from ..ui.controls import OKABE_ITO, Controller, MessageArea, param_slider
from ..ui.a11y import text_colour
from ..ui.plotwidget import PlotlyWidget
from ..ui.shell import FILL_PLOT_HEIGHT, AppInfo, AppShell, app_shell
from ..ui.views import axes_layout, line_trace, marker_trace, panel_titles
from ._checks import SEED_MAX, Param, check_params, params_by_name, param_values, snippet_assign

__all__ = [
    "MeanEstimationSpec",
    "MeanEstimationResult",
    "compute_mean_estimation_lab",
    "dataset",
    "noise_draws",
    "MeanEstimationController",
    "build_mean_estimation_lab",
    "METHODS",
    "LABELS",
    "TRIALS",
    "LEVEL",
    "BETA",
    "CHUNK",
    "CURVE_N",
    "KAPPA_RANGE",
    "ANGLE_RANGE",
    "N_RANGE",
    "EPS_RANGE",
    "DELTA_RANGE",
    "SEED_RANGE",
    "INFO",
]

#: the two estimators, in the order of every tuple of the result
METHODS = me.METHODS  # ("isotropic", "mahalanobis")
LABELS = ("isotropic clipping", "Mahalanobis clipping (Σ known)")
#: seeded runs of each estimator (the same datasets for both)
TRIALS = 200
#: probability held by the drawn error ellipses
LEVEL = 0.95
#: each estimator's clip radius keeps a point unclipped with probability ≥ 1 − BETA
BETA = 0.01
#: points per trial in one seeded chunk of the simulated data
CHUNK = 500
#: the sample sizes of the error-against-n plot (beyond the slider: where the private term fades)
CURVE_N = np.unique(np.round(np.logspace(1, 6, 51))).astype(np.int64)
KAPPA_RANGE = (1.0, 1000.0)
ANGLE_RANGE = (0.0, 180.0)
N_RANGE = (10, 10000)
EPS_RANGE = (0.01, 10.0)
DELTA_RANGE = (1e-12, 1e-2)
SEED_RANGE = (0, 999)  # the slider's; compute accepts any seed in [0, 10⁹]
#: the lab's numeric parameters: its sliders and the checks of its spec
PARAMS = params_by_name(
    Param("kappa", *KAPPA_RANGE, "log", "κ", "condition number", steps_per_decade=20),
    Param("angle", *ANGLE_RANGE, "linear", unit="degrees", step=5.0),
    Param("n", *N_RANGE, "log", unit="samples", integer=True, steps_per_decade=10, what="of samples"),
    Param("eps", *EPS_RANGE, "log", "ε", steps_per_decade=20),
    Param("delta", *DELTA_RANGE, "log", "δ", steps_per_decade=4, readout_format=".1e"),
    Param("seed", *SEED_RANGE, unit="random seed", integer=True, accept=(0, SEED_MAX)),
)
#: parameters the "Reproduce in Python" snippet (the exact errors) leaves out, and why
SNIPPET_SKIP = {"seed": "it draws the sample cloud only; the errors are exact"}


# ------------------------------------------------------------------------------------------------
# spec, result
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MeanEstimationSpec:
    """The lab's parameters (hashable: the cache key). ``angle`` is in degrees."""

    kappa: float = 100.0
    angle: float = 30.0
    n: int = 1000
    eps: float = 1.0
    delta: float = 1e-6
    seed: int = 0


@dataclass(frozen=True)
class MeanEstimationResult:
    """Everything the lab draws and prints; tuples are in :data:`METHODS` order."""

    spec: MeanEstimationSpec
    cov: np.ndarray  # Σ (2×2)
    clip: tuple  # clip radii C (isotropic: data units; Mahalanobis: whitened units)
    sigma: tuple  # noise standard deviations σ
    output_cov: tuple  # exact covariances of the estimates (2×2 each)
    rmse_mahalanobis: tuple  # exact RMS Mahalanobis errors sqrt(tr(Σ⁻¹ Cov))
    rmse_l2: tuple  # exact RMS ℓ₂ errors sqrt(tr Cov)
    estimates: tuple  # (TRIALS, 2) seeded estimates each
    sim_mahalanobis: tuple  # RMS Mahalanobis error of the TRIALS estimates
    sim_l2: tuple  # RMS ℓ₂ error of the TRIALS estimates
    inside: tuple  # fraction of the estimates inside their LEVEL ellipse
    ellipses: tuple  # (points, 2) LEVEL ellipses around the true mean
    sample_ellipse: np.ndarray  # the non-private empirical mean's LEVEL ellipse (covariance Σ/n)
    curve_n: np.ndarray
    curve_mahalanobis: tuple  # exact RMS Mahalanobis error at each CURVE_N
    curve_l2: tuple
    nonprivate_mahalanobis: np.ndarray  # the empirical mean's: sqrt(d/n)
    nonprivate_l2: np.ndarray  # sqrt(tr Σ / n)

    @property
    def ratio_mahalanobis(self) -> float:
        """Exact RMS Mahalanobis error, isotropic / Mahalanobis clipping."""
        return self.rmse_mahalanobis[0] / self.rmse_mahalanobis[1]

    @property
    def ratio_l2(self) -> float:
        """Exact RMS ℓ₂ error, isotropic / Mahalanobis clipping."""
        return self.rmse_l2[0] / self.rmse_l2[1]


def _check_spec(spec: MeanEstimationSpec) -> None:
    check_params(spec, PARAMS)


# ------------------------------------------------------------------------------------------------
# the simulated data and the cached parts
# ------------------------------------------------------------------------------------------------
def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@functools.lru_cache(maxsize=2 * N_RANGE[1] // CHUNK)
def _chunk(seed: int, k: int) -> np.ndarray:
    """Standard normal points k·CHUNK … (k+1)·CHUNK − 1 of every trial: (TRIALS, CHUNK, 2)."""
    return _frozen(np.random.default_rng([seed, 0, k]).standard_normal((TRIALS, CHUNK, 2)))


def _standard_points(seed: int, n: int) -> np.ndarray:
    """The first n standard normal points z of every trial: (TRIALS, n, 2)."""
    chunks = [_chunk(seed, k) for k in range(-(-n // CHUNK))]
    return (chunks[0] if len(chunks) == 1 else np.concatenate(chunks, axis=1))[:, :n]


def _transform(kappa: float, angle_deg: float) -> tuple[np.ndarray, np.ndarray]:
    """R(angle) and A = R·diag(sqrt κ, 1): the data are x = A z, so Cov x = A Aᵀ = Σ."""
    a = math.radians(angle_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    return rot, rot * np.array([math.sqrt(kappa), 1.0])


def dataset(spec: MeanEstimationSpec, trial: int) -> np.ndarray:
    """The ``trial``-th simulated dataset of the setting: n points of N(0, Σ), shape (n, 2).

    >>> x = dataset(MeanEstimationSpec(kappa=4.0, angle=0.0, n=10000), 0)
    >>> x.shape, bool(np.allclose(np.cov(x.T), [[4.0, 0.0], [0.0, 1.0]], atol=0.15))
    ((10000, 2), True)
    """
    _check_spec(spec)
    if not 0 <= trial < TRIALS:
        raise ValueError(f"trial must lie in [0, {TRIALS - 1}], got trial = {trial!r}")
    _, a = _transform(spec.kappa, spec.angle)
    return _standard_points(spec.seed, spec.n)[trial] @ a.T


def noise_draws(seed: int) -> np.ndarray:
    """The standard normal noise of the runs, shape (2, TRIALS, 2): [0] the isotropic
    estimator's ξ (its estimate adds σ ξ), [1] the Mahalanobis one's (it adds σ Σ^{1/2} ξ)."""
    return _noise(int(seed))


@functools.lru_cache(maxsize=16)
def _noise(seed: int) -> np.ndarray:
    return _frozen(np.random.default_rng([seed, 1]).standard_normal((2, TRIALS, 2)))


@functools.lru_cache(maxsize=64)
def _mahalanobis_average(n: int, seed: int) -> np.ndarray:
    """Average of clip_r(z) over each trial's n points, r = default_clip(Σ, "mahalanobis")
    (independent of Σ: the whitened data are R z, and clipping commutes with R)."""
    r = me.default_clip(np.eye(2), "mahalanobis", BETA)
    return _frozen(me.clipped_average(_standard_points(seed, n), r))


@functools.lru_cache(maxsize=64)
def _isotropic_average(kappa: float, n: int, seed: int) -> np.ndarray:
    """Average of clip_C(diag(sqrt κ, 1) z) over each trial's n points (the axis frame; rotate
    by R for the data's), C = default_clip(Σ, "isotropic")."""
    c = me.default_clip(np.diag([kappa, 1.0]), "isotropic", BETA)
    return _frozen(me.clipped_average(_standard_points(seed, n) * np.array([math.sqrt(kappa), 1.0]), c))


@functools.lru_cache(maxsize=128)
def _exact(kappa: float, angle: float, n: int, eps: float, delta: float) -> tuple:
    """The backend's output_covariance of both estimators (clip: default_clip at BETA)."""
    cov = me.gaussian_covariance(kappa, 1.0, math.radians(angle))
    return cov, tuple(
        me.output_covariance(cov, n, eps, delta, me.default_clip(cov, m, BETA), method=m) for m in METHODS
    )


@functools.lru_cache(maxsize=64)
def _curves(kappa: float, eps: float, delta: float) -> tuple:
    """Exact RMS errors at every CURVE_N, both metrics, both estimators: Cov(μ̂) =
    clipped_covariance/n + σ(n)² (I or Σ), σ(n) the Gaussian calibration for sensitivity 2C/n
    (errors do not depend on the angle)."""
    cov = me.gaussian_covariance(kappa, 1.0, 0.0)
    mah, l2 = [], []
    for m in METHODS:
        ex = me.exact_rmse(CURVE_N, cov, eps, delta, me.default_clip(cov, m, BETA), method=m)
        mah.append(_frozen(ex["rmse_mahalanobis"]))
        l2.append(_frozen(ex["rmse_l2"]))
    return tuple(mah), tuple(l2)


def compute_mean_estimation_lab(spec: MeanEstimationSpec) -> MeanEstimationResult:
    """Every array of the lab for one setting (formulas in the module docstring): the exact
    output covariances, RMS errors and ellipses (backend ``output_covariance``,
    ``ellipse_points``), the TRIALS seeded estimates of each estimator on the same datasets with
    their RMS errors (backend ``mahalanobis_error``, ``l2_error``) and the fraction inside their
    ellipse, and the exact error curves against n. Raises ``ValueError`` naming a bad parameter.

    >>> r = compute_mean_estimation_lab(MeanEstimationSpec(kappa=1.0, n=100, seed=3))
    >>> round(r.ratio_mahalanobis, 12)          # κ = 1: both clip the same ball
    1.0
    >>> compute_mean_estimation_lab(MeanEstimationSpec(eps=0.0))
    Traceback (most recent call last):
    ...
    ValueError: eps = 0 is outside this lab's range [0.01, 10]
    """
    _check_spec(spec)
    kappa, angle, n = float(spec.kappa), float(spec.angle), int(spec.n)
    eps, delta = float(spec.eps), float(spec.delta)
    cov, outs = _exact(kappa, angle, n, eps, delta)
    rot, _ = _transform(kappa, angle)
    xi = noise_draws(spec.seed)
    clips = tuple(float(o["clip"]) for o in outs)
    # the backend's noise step on the cached clipped averages (rotated into the data's frame; the
    # whitened points are R z): isotropic_clipped_mean / mahalanobis_clipped_mean on each dataset
    iso_avg = _isotropic_average(kappa, n, int(spec.seed)) @ rot.T
    iso = me.noisy_clipped_mean(iso_avg, n, eps, delta, clips[0], xi[0])
    mah_avg = _mahalanobis_average(n, int(spec.seed)) @ rot.T
    mah = me.noisy_clipped_mean(mah_avg, n, eps, delta, clips[1], xi[1], cov=cov)
    estimates = (iso, mah)
    origin = np.zeros(2)
    sim_m = tuple(float(np.sqrt(np.mean(me.mahalanobis_error(e, origin, cov) ** 2))) for e in estimates)
    sim_2 = tuple(float(np.sqrt(np.mean(me.l2_error(e, origin) ** 2))) for e in estimates)
    inside = tuple(float(np.mean(me.inside_ellipse(e, o["cov"], origin, LEVEL))) for e, o in zip(estimates, outs))
    ellipses = tuple(me.ellipse_points(o["cov"], (0.0, 0.0), LEVEL) for o in outs)
    cm, c2 = _curves(kappa, eps, delta)
    free = me.nonprivate_rmse(CURVE_N.astype(np.float64), cov)
    return MeanEstimationResult(
        spec=spec,
        cov=cov,
        clip=clips,
        sigma=tuple(float(o["sigma"]) for o in outs),
        output_cov=tuple(o["cov"] for o in outs),
        rmse_mahalanobis=tuple(math.sqrt(o["mahalanobis_mse"]) for o in outs),
        rmse_l2=tuple(math.sqrt(o["l2_mse"]) for o in outs),
        estimates=estimates,
        sim_mahalanobis=sim_m,
        sim_l2=sim_2,
        inside=inside,
        ellipses=ellipses,
        sample_ellipse=me.ellipse_points(cov / n, (0.0, 0.0), LEVEL),
        curve_n=CURVE_N,
        curve_mahalanobis=cm,
        curve_l2=c2,
        nonprivate_mahalanobis=free["mahalanobis"],
        nonprivate_l2=free["l2"],
    )


# ------------------------------------------------------------------------------------------------
# controller, figures
# ------------------------------------------------------------------------------------------------
_COLOURS = (OKABE_ITO[1], OKABE_ITO[0])  # isotropic: orange, Mahalanobis: blue
_GREY = "#777777"
_SHORT = ("isotropic", "Mahalanobis (Σ known)")


def readout_html(r: MeanEstimationResult) -> str:
    """The readout table: exact and simulated RMS errors of both estimators in both metrics,
    their ratio, the share of runs inside the ellipses, clip radii and noise σ."""
    s = r.spec

    def row(label, vals, ratio=None, fmt="{:.4g}"):
        cells = "".join(f"<td>{fmt.format(v)}</td>" for v in vals)
        return (
            f"<tr><td style='text-align:left'>{label}</td>{cells}"
            f"<td>{'' if ratio is None else f'{ratio:.3g}×'}</td></tr>"
        )

    def section(title):
        return f"<tr><th colspan='4' style='text-align:left;padding-top:4px'>{title}</th></tr>"

    sim = f"simulated ({TRIALS} runs)"
    return (
        '<table class="dpexplore-mean-table" style="border-collapse:collapse;text-align:right">'
        f"<tr><th></th><th style='color:#a05f00'>isotropic</th><th style='color:{text_colour(_COLOURS[1])}'>"
        "Mahalanobis</th><th>ratio</th></tr>"
        + section("RMS error in Mahalanobis distance")
        + row("exact", r.rmse_mahalanobis, r.ratio_mahalanobis, "<b>{:.4g}</b>")
        + row(sim, r.sim_mahalanobis, r.sim_mahalanobis[0] / r.sim_mahalanobis[1])
        + section("RMS error in ℓ₂")
        + row("exact", r.rmse_l2, r.ratio_l2)
        + row(sim, r.sim_l2, r.sim_l2[0] / r.sim_l2[1])
        + section("")
        + row(f"inside the {100 * LEVEL:g} % ellipse", [100 * v for v in r.inside], fmt="{:.3g} %")
        + row("clip radius C", r.clip)
        + row("noise σ", r.sigma)
        + "</table>"
        f"<p class='dpexplore-note'>κ = {s.kappa:.4g}, n = {s.n:,}, ε = {s.eps:.3g}, δ = {s.delta:.3g}; "
        f"the {TRIALS} runs (seed {s.seed}) use the same datasets for both estimators. The "
        "Mahalanobis estimator clips in whitened units and adds noise σ·Σ<sup>1/2</sup>ξ.</p>"
    )


class MeanEstimationController(Controller):
    """Sliders κ, angle, n, ε, δ, seed → :func:`compute_mean_estimation_lab` → the estimates
    with their error ellipses, the error-against-n plot and the readout table."""

    compute = staticmethod(compute_mean_estimation_lab)
    prefetch = True  # the next slider step reads the cache (controls.PREFETCHER)
    cache_size = 64
    readout_widgets = {"readout": ""}

    def read_spec(self) -> MeanEstimationSpec:
        values = param_values(self.controls, PARAMS)
        values["angle"] = round(values["angle"], 10)
        return MeanEstimationSpec(**values)

    # traces ----------------------------------------------------------------------------------
    @staticmethod
    def _cloud_traces(r: MeanEstimationResult) -> list[dict]:
        out = []
        for i, est in enumerate(r.estimates):
            out.append(
                {
                    "type": "scatter",
                    "mode": "markers",
                    "name": f"{_SHORT[i]}: {TRIALS} runs",
                    "legendgroup": METHODS[i],
                    "x": est[:, 0],
                    "y": est[:, 1],
                    "marker": {"color": _COLOURS[i], "size": 5, "opacity": 0.55},
                    "hovertemplate": "(%{x:.3g}, %{y:.3g})<extra></extra>",
                }
            )
        for i, ell in enumerate(r.ellipses):
            out.append(
                line_trace(
                    f"{_SHORT[i]}: {100 * LEVEL:g} % ellipse",
                    ell[:, 0],
                    ell[:, 1],
                    _COLOURS[i],
                    2.5,
                    legendgroup=METHODS[i],
                    hoverinfo="skip",
                )
            )
        out.append(
            line_trace(
                f"non-private mean: {100 * LEVEL:g} % ellipse",
                r.sample_ellipse[:, 0],
                r.sample_ellipse[:, 1],
                _GREY,
                2,
                "dot",
                hoverinfo="skip",
            )
        )
        out.append(marker_trace("true mean", [0.0], [0.0], "#000000", "x", 11))
        return out

    @staticmethod
    def _curve_traces(r: MeanEstimationResult) -> list[dict]:
        n = r.spec.n
        out = []
        for panel, (curves, free, sims) in enumerate(
            (
                (r.curve_mahalanobis, r.nonprivate_mahalanobis, r.sim_mahalanobis),
                (r.curve_l2, r.nonprivate_l2, r.sim_l2),
            )
        ):
            axes = {"xaxis": "x", "yaxis": "y"} if panel == 0 else {"xaxis": "x2", "yaxis": "y2"}
            first = panel == 0
            for i in range(2):
                out.append(
                    line_trace(
                        LABELS[i],
                        r.curve_n,
                        curves[i],
                        _COLOURS[i],
                        2.5,
                        **axes,
                        meta={"present_name": ("isotropic", "Mahalanobis")[i]},
                        legendgroup=METHODS[i],
                        showlegend=first,
                    )
                )
            out.append(
                line_trace(
                    "non-private empirical mean",
                    r.curve_n,
                    free,
                    _GREY,
                    2,
                    "dot",
                    **axes,
                    meta={"present_name": "non-private"},
                    legendgroup="free",
                    showlegend=first,
                )
            )
            out.append(
                marker_trace(
                    f"simulated ({TRIALS} runs) at the chosen n",
                    [n, n],
                    list(sims),
                    list(_COLOURS),
                    "diamond",
                    11,
                    outline="#000000",
                    **axes,
                    meta={"present_name": "simulated at n"},
                    legendgroup="sim",
                    showlegend=first,
                )
            )
        return out

    @staticmethod
    def _curve_layout(r: MeanEstimationResult) -> dict:
        line = {"color": "#555555", "width": 1, "dash": "dot"}
        return {
            "shapes": [
                {
                    "type": "line",
                    "xref": x,
                    "yref": f"{y} domain",
                    "x0": r.spec.n,
                    "x1": r.spec.n,
                    "y0": 0,
                    "y1": 1,
                    "line": line,
                }
                for x, y in (("x", "y"), ("x2", "y2"))
            ]
        }

    def figures(self, r: MeanEstimationResult) -> list[PlotlyWidget]:
        legend = {"orientation": "h", "y": -0.14, "x": 0.0}
        self.fig_cloud = PlotlyWidget(
            self._cloud_traces(r),
            axes_layout(
                f"{TRIALS} runs of each estimator, {100 * LEVEL:g} % error ellipses",
                "first coordinate",
                "second coordinate",
                xaxis={"zeroline": False},
                yaxis={"scaleanchor": "x", "scaleratio": 1, "zeroline": False},
                legend={"x": 1.02, "xanchor": "left", "y": 1.0, "yanchor": "top"},
                margin={"l": 60, "r": 20, "t": 40, "b": 40},
            ),
        )
        log = {"type": "log", "exponentformat": "power"}
        self.fig_curves = PlotlyWidget(
            self._curve_traces(r),
            {
                # no title drawn: the tab and the panels' titles say it (a projector's height goes to
                # the plots); screen readers and the CSV name the figure by meta.name
                "meta": {"name": "Exact RMS error against the sample size n"},
                # two panels side by side, each on its own y axis (the two errors differ in scale)
                "grid": {"rows": 1, "columns": 2, "pattern": "independent", "xgap": 0.22},
                "xaxis": {**log, "title": {"text": "n (samples)"}},
                "yaxis": {**log, "title": {"text": "RMS ‖Σ<sup>−½</sup>(μ̂ − μ)‖"}},
                "xaxis2": {**log, "title": {"text": "n (samples)"}},
                "yaxis2": {**log, "title": {"text": "RMS ‖μ̂ − μ‖"}},
                # each panel's title, above its axes
                "annotations": panel_titles((("x", "y", "Mahalanobis error"), ("x2", "y2", "ℓ₂ error"))),
                "legend": legend,
                "margin": {"l": 60, "r": 20, "t": 40, "b": 40},
                **self._curve_layout(r),
            },
            # from its top to the window's bottom, measured (two panels need the height more than
            # one: the window less a fixed allowance for the page's head left 44 px unused on a
            # projector, and this tab's panels under 30 % of the screen)
            css_height=FILL_PLOT_HEIGHT,
        )
        return [self.fig_cloud, self.fig_curves]

    def render(self, r: MeanEstimationResult) -> None:
        self.fig_cloud.update(data=self._cloud_traces(r))
        self.fig_curves.update(data=self._curve_traces(r), layout=self._curve_layout(r))

    def write_readouts(self, r: MeanEstimationResult) -> None:
        self.readout.value = readout_html(r)

    def snippet(self) -> str:
        s = self.spec
        return (
            "import math\n"
            "from dpexplore.teaching import mean_estimation as me\n\n"
            + snippet_assign(s, PARAMS, skip=SNIPPET_SKIP)
            + "cov = me.gaussian_covariance(kappa, 1.0, math.radians(angle))   # eigenvalues kappa and 1\n"
            "rmse = {}\n"
            "for method in ('isotropic', 'mahalanobis'):\n"
            f"    clip = me.default_clip(cov, method, beta={BETA!r})   # a point stays unclipped w.p. 0.99\n"
            "    out = me.output_covariance(cov, n, eps, delta, clip, method=method)   # clipped at the true mean\n"
            "    rmse[method] = (math.sqrt(out['mahalanobis_mse']), math.sqrt(out['l2_mse']))\n"
            '    print(f"{method}: RMS Mahalanobis error {rmse[method][0]:.4g}, RMS l2 error {rmse[method][1]:.4g}, "\n'
            "          f\"clip radius {out['clip']:.4g}, noise sigma {out['sigma']:.4g}\")\n"
            "print(f\"isotropic / mahalanobis: {rmse['isotropic'][0] / rmse['mahalanobis'][0]:.3g} (Mahalanobis), \"\n"
            "      f\"{rmse['isotropic'][1] / rmse['mahalanobis'][1]:.3g} (l2)\")\n"
        )


# ------------------------------------------------------------------------------------------------
# the page
# ------------------------------------------------------------------------------------------------
_THEORY = (
    r"<p><b>The error metric follows the covariance</b> (" + cite("kamath2023covariance") + r"). For data "
    r"from N(μ, Σ) the error of an estimate μ̂ is measured in the Mahalanobis distance"
    r"$$\|\hat\mu-\mu\|_\Sigma = \|\Sigma^{-1/2}(\hat\mu-\mu)\|_2 ,$$"
    r"the Euclidean error after whitening the data. It is affine invariant (rescaling or rotating "
    r"the data does not change it) and it asks for more accuracy in the directions where the data "
    r"vary little, where a small shift already changes the distribution a lot. The non-private "
    r"empirical mean has covariance Σ/n, so its RMS Mahalanobis error is \(\sqrt{d/n}\) whatever Σ "
    r"is. Here d = 2 and Σ has eigenvalues κ and 1 (condition number κ), its first axis at the "
    r"chosen angle.</p>"
    r"<p><b>The two estimators</b> (dpexplore.teaching.mean_estimation), clipped around a centre c, with "
    r"\(\mathrm{clip}_C(z) = z\min(1, C/\|z\|_2)\):</p>"
    r"$$\hat\mu_{\rm iso} = c + \frac1n\sum_{i=1}^n \mathrm{clip}_C(x_i-c) + N(0,\sigma^2 I),\qquad "
    r"C = \sqrt{\lambda_{\max}(\Sigma)}\,r_\beta ,$$"
    r"$$\hat\mu_{\rm Mah} = c + \Sigma^{1/2}\Big(\frac1n\sum_{i=1}^n \mathrm{clip}_C\big(\Sigma^{-1/2}(x_i-c)\big)"
    r" + N(0,\sigma^2 I)\Big),\qquad C = r_\beta ,$$"
    r"<p>with \(r_\beta^2\) the \(\chi^2_d\) quantile at 1 − β (β = " + f"{BETA:g}" + r"): a point of "
    r"N(c, Σ) is left unclipped with probability ≥ 1 − β. The round ball has to cover the longest "
    r"axis; the Mahalanobis estimator, given Σ, clips in the data's own shape and adds noise "
    r"N(0, σ²Σ) shaped like the data — the approach of " + cite("karwa2018finite") + r" in one "
    r"dimension and " + cite("kamath2019privately") + r" in d dimensions once the covariance is "
    r"known or estimated. The lab clips both at the true mean, c = μ (a real estimator must first "
    r"find a rough centre privately).</p>"
    r"<p><b>Privacy, as the backend states it.</b> For datasets of a public size n that differ in "
    r"one point (replacement), each clipped average moves by at most 2C/n in ℓ₂ (in whitened "
    r"coordinates for \(\hat\mu_{\rm Mah}\)). σ is the least standard deviation for which the "
    r"Gaussian mechanism with sensitivity 2C/n is (ε, δ)-DP — the exact analytic Gaussian mechanism, "
    + cite("balle2018improving", "Theorem 8")
    + r", whose privacy depends only on ‖Δ‖₂/σ in any "
    r"dimension. So \(\hat\mu_{\rm iso}\) is (ε, δ)-DP, and so is \(\hat\mu_{\rm Mah}\) for a "
    r"<i>known</i> Σ (the map back by \(\Sigma^{1/2}\) is post-processing).</p>"
    r"<p><b>Errors and ellipses.</b> Clipped around μ, both are unbiased, with"
    r"$$\mathrm{Cov}(\hat\mu) = \frac{\mathrm{Cov}(\text{one clipped point})}{n} + "
    r"\begin{cases}\sigma^2 I & \text{isotropic}\\ \sigma^2\Sigma & \text{Mahalanobis,}\end{cases}$$"
    r"computed exactly (a closed form for Mahalanobis clipping, a spectrally accurate angular "
    r"quadrature for isotropic clipping in 2-D). The ellipses are "
    r"\(\{v : v^\top \mathrm{Cov}(\hat\mu)^{-1} v \le -2\log(1-p)\}\), p = "
    + f"{LEVEL:g}"
    + r", the region holding p of a Gaussian with that covariance (the readout counts how many of the "
    r"runs fall inside). RMS errors: \(\sqrt{\mathrm{tr}(\Sigma^{-1}\mathrm{Cov})}\) (Mahalanobis) and "
    r"\(\sqrt{\mathrm{tr}\,\mathrm{Cov}}\) (ℓ₂). Both σ are proportional to their C, so the noise "
    r"parts of the two errors differ by the factor \(\sqrt{(\kappa+1)/2}\) in the Mahalanobis "
    r"distance but only \(\sqrt{2\kappa/(\kappa+1)} < \sqrt2\) in ℓ₂: the ℓ₂ view hides what "
    r"ignoring Σ costs, and the isotropic estimator's Mahalanobis error grows like \(\sqrt\kappa\).</p>"
    r"<p><b>What Kamath 2023 announces — not implemented in dpexplore.</b> Without knowing Σ, "
    + cite("brown2023fast")
    + r" and "
    + cite("duchi2023fast")
    + r" give the first "
    r"computationally efficient (ε, δ)-DP algorithms that estimate the mean of a d-dimensional "
    r"Gaussian to Mahalanobis error α with O(d) samples (for fixed α, ε and log(1/δ)), although "
    r"privately estimating Σ itself would need \(\Omega(d^{3/2})\) samples ("
    + cite("kamath2022new")
    + r"). Both add noise to a <i>stable</i> estimate of the mean, shaped "
    r"by a <i>stable</i> estimate of the covariance. <b>dpexplore does not implement these "
    r"algorithms</b>: this lab's Mahalanobis estimator is given Σ, and shows the accuracy they "
    r"reach without it.</p>"
)

INFO = AppInfo(
    slug="mean_estimation_lab",
    title="Private mean estimation: clipping with and without the covariance",
    lead=(
        "A mean estimate's error should be measured in the Mahalanobis distance "
        "‖Σ<sup>−½</sup>(μ̂ − μ)‖, which follows the covariance and asks for most accuracy where "
        "the data vary least. Clipping in a round ball that ignores Σ must cover the longest axis, "
        "so its privacy noise is as large across the thin one: about √κ times too much there."
    ),
    theory=_THEORY,
    references=(
        "kamath2023covariance",
        "karwa2018finite",
        "kamath2019privately",
        "balle2018improving",
        "brown2023fast",
        "duchi2023fast",
        "kamath2022new",
    ),
)


def build_mean_estimation_lab(
    kappa: float = 100.0, angle: float = 30.0, n: int = 1000, eps: float = 1.0, delta: float = 1e-6, seed: int = 0
) -> AppShell:
    """The private mean estimation lab (Kamath 2023) in the shell: sliders κ, angle, n, ε, δ and
    seed with the readout table in the panel; the estimates and error ellipses, and the error
    against n, in tabs. Defaults lie on the sliders' grids. Every slider position is a valid
    setting; the slowest step (a new seed at n = 10⁴) computes in ≈ 0.2 s, so no progress bar.

    >>> app = build_mean_estimation_lab(kappa=10.0)
    >>> app.controller.readout.value.count("<tr>"), len(app.figs)
    (11, 2)
    """
    controls = {
        **{
            k: param_slider(PARAMS[k], v)
            for k, v in (("kappa", kappa), ("angle", angle), ("n", n), ("eps", eps), ("delta", delta), ("seed", seed))
        },
    }
    ctrl = MeanEstimationController(controls, MessageArea())
    tabs = [("Estimates", [ctrl.fig_cloud]), ("Error against n", [ctrl.fig_curves])]
    return app_shell(INFO, ctrl, controls=controls, plots=tabs, readouts=[ctrl.readout], panel_width="400px")
