"""Rényi DP explorer: what pure ε-DP means in Rényi DP and zCDP, and how RDP converts back to (ε, δ).

Three panels, all computed by ONE call of :func:`compute_rdp_explorer` per slider step:

1. ε̂(α) against the Rényi order α (Steinke 2024's first figure, plus two mechanisms), for the chosen ε:

   * tight pure DP → RDP (Steinke 2024, Theorem 4), attained by randomized response::

         ε̂(α) = 1/(α−1) · log( e^{αε}/(e^ε+1) + e^ε e^{−αε}/(e^ε+1) )
              = ε − 1/(α−1) · log( (1 + e^{−ε}) / (1 + e^{−(2α−1)ε}) );

   * trivial ε̂(α) = ε; zCDP-implied ε̂(α) = αρ with ρ = ε tanh(ε/2) (Steinke 2024, Theorem 5);
   * the Laplace mechanism with b = Δ/ε (ε-DP), Mironov 2017, Proposition 6 (quoted in Steinke 2024)::

         ε̂(α) = 1/(α−1) · log( α/(2α−1) e^{(α−1)ε} + (α−1)/(2α−1) e^{−αε} );

   * the Gaussian mechanism calibrated to (ε, δ) by ``mechanisms.Gaussian.calibrate(ε, δ)``:
     ε̂(α) = αΔ²/(2σ²) (Mironov 2017, Proposition 7).

   The order minimising the RDP → (ε, δ) conversion is marked on each of the last three curves.
2. ρ against ε (Steinke 2024's second figure): tight ρ = ε tanh(ε/2), quadratic ε²/2, trivial ε
   (Steinke 2024, Theorem 5), with the chosen ε marked.
3. The RDP → (ε, δ) conversion at the chosen δ, per order, for the tight pure-DP curve, Laplace
   and Gaussian::

         Mironov (2017, Prop. 3):   ε_α = ε̂(α) + log(1/δ)/(α − 1)
         improved (Balle et al. 2020, Thm. 21; Canonne, Kamath & Steinke 2020):
                                    ε_α = ε̂(α) + log(1 − 1/α) − (log δ + log α)/(α − 1),

   minimised over the plotted orders (the readout numbers come from
   ``conversions.rdp_to_approx``, rounded up by 4 ulps).

Sensitivity Δ = 1 throughout. The orders are ``N_ORDERS`` points log-spaced on
[1 + min(10⁻³, (α_max − 1)/2), α_max]; the minimum over them is a valid (ε, δ) bound (every order
gives one), at most a grid step (≤ 5 % in α) away from the continuous optimum.

>>> r = compute_rdp_explorer(RDPSpec(eps=1.0, delta=1e-6, alpha_max=100.0))
>>> float(r.alphas[-1]), round(float(r.rdp_tight[-1]), 6), r.curve_names[0]
(100.0, 0.996836, 'tight pure DP (RR)')
>>> bool(r.eps_improved[0] <= r.eps_mironov[0])
True
"""

from __future__ import annotations

import functools
import html
import math
from dataclasses import dataclass

import ipywidgets as W
import numpy as np

from .._validation import as_array
from ..accounting.conversions import PureDPProfile, pure_to_rdp, pure_to_zcdp, rdp_epsilon_terms, rdp_to_approx
from ..mechanisms import Gaussian, Laplace
from ..ui.controls import OKABE_ITO, Controller, MessageArea, param_slider
from ..ui.a11y import text_colour
from ..ui.plotwidget import PlotlyWidget
from ..ui.shell import AppInfo, AppShell, app_shell
from ..ui.views import LOG_AXIS, axes_layout, marker_trace
from ._checks import Param, check_params, param_values, params_by_name, snippet_assign

__all__ = [
    "RDPSpec",
    "RDPResult",
    "compute_rdp_explorer",
    "conversion_terms",
    "orders",
    "RDPController",
    "build_rdp_explorer",
    "EPS_RANGE",
    "DELTA_RANGE",
    "ALPHA_MAX_RANGE",
    "N_ORDERS",
    "RHO_EPS_GRID",
    "SENSITIVITY",
    "INFO",
    "PARAMS",
]

#: ε slider range (log scale), in nats
EPS_RANGE = (1e-3, 100.0)
#: δ slider range (log scale): every position is valid (δ = 1 would be no guarantee at all)
DELTA_RANGE = (1e-300, 0.1)
#: α_max slider range (log scale, 20 steps per decade from 10^0.05): every position is valid
#: (Rényi orders are > 1, so α_max = 1 would leave no order)
ALPHA_MAX_RANGE = (10**0.05, 1e4)
#: number of Rényi orders on the curves (and for the minimum of the conversion)
N_ORDERS = 200
#: the ε grid of the ρ(ε) panel (does not depend on any slider)
RHO_EPS_GRID = np.geomspace(EPS_RANGE[0], EPS_RANGE[1], 121)
#: sensitivity Δ of the Laplace and Gaussian mechanisms
SENSITIVITY = 1.0
_WHY = {
    "eps": "an ε-DP Laplace mechanism needs scale Δ/ε",
    "delta": "δ = 1 is no guarantee; RDP gives (ε, δ)-DP only for δ > 0",
}
_PROB = {"unit": "probability", "steps_per_decade": 10, "readout_format": ".2e"}
_ORDER = {"accept": (1, None), "interval": "()", "why": "Rényi orders α are > 1"}
#: the explorer's parameters: its sliders and the checks of its spec (compute takes any ε > 0,
#: δ in (0, 1), α_max > 1)
PARAMS = params_by_name(
    Param("eps", *EPS_RANGE, "log", "ε", "nats", steps_per_decade=40, accept=(0, None), interval="()", why=_WHY["eps"]),
    Param("delta", *DELTA_RANGE, "log", "δ", **_PROB, accept=(0, 1), interval="()", why=_WHY["delta"]),
    Param("alpha_max", *ALPHA_MAX_RANGE, "log", "α_max", "largest Rényi order", **_ORDER),
)

#: names of the three curves converted to (ε, δ), in the order of every per-curve array
CURVE_NAMES = ("tight pure DP (RR)", "Laplace", "Gaussian")
_CURVE_COLOURS = (OKABE_ITO[0], OKABE_ITO[2], OKABE_ITO[3])


@dataclass(frozen=True)
class RDPSpec:
    """The explorer's parameters (hashable: the cache key): ε [nats], δ, the largest order α_max."""

    eps: float
    delta: float
    alpha_max: float


@dataclass(frozen=True, eq=False)
class RDPResult:
    """Every array the three panels and the readout draw, for one :class:`RDPSpec`.

    Per-curve arrays (``eps_improved``, ``order_improved``, ``eps_mironov``, ``order_mironov``,
    ``exact_eps``, first axis of ``objective_*``) follow :data:`CURVE_NAMES`: tight pure DP,
    Laplace, Gaussian. ``objective_*`` are the conversion bounds ε_α(δ) per order (not rounded;
    display only), the ``eps_*`` numbers those of ``conversions.rdp_to_approx``.
    """

    spec: RDPSpec
    alphas: np.ndarray
    rdp_tight: np.ndarray
    rdp_trivial: np.ndarray
    rdp_zcdp: np.ndarray
    rdp_laplace: np.ndarray
    rdp_gaussian: np.ndarray
    rho_tight_at_eps: float
    laplace_scale: float
    gaussian_sigma: float
    rho_eps_grid: np.ndarray
    rho_tight: np.ndarray
    rho_quadratic: np.ndarray
    rho_trivial: np.ndarray
    rho_marks: np.ndarray
    curve_names: tuple
    objective_improved: np.ndarray
    objective_mironov: np.ndarray
    eps_improved: np.ndarray
    order_improved: np.ndarray
    rdp_at_improved: np.ndarray
    eps_mironov: np.ndarray
    order_mironov: np.ndarray
    exact_eps: np.ndarray


def orders(alpha_max: float, n: int = N_ORDERS) -> np.ndarray:
    """The plotted Rényi orders: ``n`` points log-spaced on [1 + min(10⁻³, (α_max − 1)/2), α_max],
    the last one exactly α_max.

    >>> a = orders(100.0, 5)
    >>> round(float(a[0]), 6), float(a[-1]), len(a)
    (1.001, 100.0, 5)
    >>> orders(1.0)
    Traceback (most recent call last):
    ...
    ValueError: alpha_max must be > 1 (Renyi orders alpha are > 1, so there is no order up to alpha_max = 1)
    """
    am = float(as_array(alpha_max, "alpha_max", allow_inf=False))
    if not am > 1.0:
        raise ValueError(
            f"alpha_max must be > 1 (Renyi orders alpha are > 1, so there is no order up to alpha_max = {am:g})"
        )
    lo = 1.0 + min(1e-3, (am - 1.0) / 2.0)
    a = np.geomspace(lo, am, n)
    a[-1] = am
    return a


def conversion_terms(alphas, rdp_eps, delta, bound: str = "improved") -> np.ndarray:
    """The RDP → (ε, δ) bound of every single order (not minimised, not rounded; for display):
    :func:`dpexplore.accounting.conversions.rdp_epsilon_terms`, the very terms whose minimum
    ``conversions.rdp_to_approx`` rounds up by 4 ulps (and clips at 0).

    >>> a = np.array([2.0, 4.0, 8.0])
    >>> [round(float(x), 6) for x in conversion_terms(a, a * 0.5, 1e-5)]
    [11.126631, 5.087862, 5.214109]
    """
    return rdp_epsilon_terms(alphas, rdp_eps, delta, bound)


def _check_spec(spec: RDPSpec) -> tuple[float, float, float]:
    check_params(spec, PARAMS)
    return float(spec.eps), float(spec.delta), float(spec.alpha_max)


@functools.lru_cache(maxsize=64)
def _rdp_curves(eps: float, alpha_max: float):
    """Curves that depend on (ε, α_max) only: cached so that moving δ does not recompute them."""
    a = orders(alpha_max)
    lap = Laplace.calibrate(eps, 0.0, SENSITIVITY)
    curves = (
        np.asarray(pure_to_rdp(eps, a, "tight")),
        np.asarray(pure_to_rdp(eps, a, "trivial")),
        np.asarray(pure_to_rdp(eps, a, "zcdp")),
        np.asarray(lap.rdp(a)),
    )
    for c in curves:
        c.setflags(write=False)
    a.setflags(write=False)
    return a, curves, float(lap.scale)


@functools.lru_cache(maxsize=64)
def _gaussian(eps: float, delta: float) -> Gaussian:
    """The Gaussian mechanism calibrated to (ε, δ) (σ rounded up: δ(ε) ≤ δ holds)."""
    return Gaussian.calibrate(eps, delta, SENSITIVITY)


@functools.lru_cache(maxsize=1)
def _rho_panel():
    e = RHO_EPS_GRID
    out = (
        np.asarray(pure_to_zcdp(e, "tight")),
        np.asarray(pure_to_zcdp(e, "quadratic")),
        np.asarray(pure_to_zcdp(e, "trivial")),
    )
    for c in out:
        c.setflags(write=False)
    return out


def compute_rdp_explorer(spec: RDPSpec) -> RDPResult:
    """Every array of the Rényi DP explorer for ``spec`` (one call per slider step).

    RDP curves: ``conversions.pure_to_rdp`` (Steinke 2024, Theorem 4; trivial; zCDP αρ, Steinke 2024 Theorem 5),
    ``mechanisms.Laplace.calibrate(ε).rdp`` (Mironov 2017, Prop. 6) and
    ``mechanisms.Gaussian.calibrate(ε, δ).rdp`` (αΔ²/(2σ²)); ρ panel: ``conversions.pure_to_zcdp``;
    conversions: ``conversions.rdp_to_approx`` (improved and Mironov, minimum over the plotted
    orders, rounded up by 4 ulps) and :func:`conversion_terms` per order. ``exact_eps`` is the
    true ε(δ) of randomized response (``PureDPProfile``), of the Laplace mechanism
    (``Laplace.epsilon``) and, by calibration, ε for the Gaussian.

    Raises ``ValueError`` naming ``eps`` (≤ 0), ``delta`` (0 or ≥ 1) or ``alpha_max`` (≤ 1)
    (:data:`PARAMS`).

    >>> r = compute_rdp_explorer(RDPSpec(eps=1.0, delta=1e-6, alpha_max=100.0))
    >>> [round(float(x), 4) for x in r.eps_improved]
    [1.0798, 1.076, 1.0779]
    >>> compute_rdp_explorer(RDPSpec(eps=1.0, delta=1.0, alpha_max=100.0))
    Traceback (most recent call last):
    ...
    ValueError: delta must lie in (0, 1) (δ = 1 is no guarantee; RDP gives (ε, δ)-DP only for δ > 0), got delta = 1.0
    """
    eps, delta, alpha_max = _check_spec(spec)
    a, (tight, trivial, zcdp, lap_rdp), lap_scale = _rdp_curves(eps, alpha_max)
    gauss = _gaussian(eps, delta)
    g_rdp = np.asarray(gauss.rdp(a))
    stack = np.stack([tight, lap_rdp, g_rdp])
    eps_imp, ord_imp = rdp_to_approx(a, stack, delta, "improved", return_order=True)
    eps_mir, ord_mir = rdp_to_approx(a, stack, delta, "mironov", return_order=True)
    ord_imp = np.asarray(ord_imp)
    idx = np.searchsorted(a, ord_imp)
    rdp_at = stack[np.arange(3), idx]
    rho_t, rho_q, rho_v = _rho_panel()
    rho_tight_eps = float(pure_to_zcdp(eps, "tight"))
    marks = np.array([rho_tight_eps, float(pure_to_zcdp(eps, "quadratic")), float(pure_to_zcdp(eps, "trivial"))])
    exact = np.array([PureDPProfile(eps).epsilon(delta), Laplace(lap_scale, SENSITIVITY).epsilon(delta), eps])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        obj_imp = conversion_terms(a, stack, delta, "improved")
        obj_mir = conversion_terms(a, stack, delta, "mironov")
    return RDPResult(
        spec=spec,
        alphas=a,
        rdp_tight=tight,
        rdp_trivial=trivial,
        rdp_zcdp=zcdp,
        rdp_laplace=lap_rdp,
        rdp_gaussian=g_rdp,
        rho_tight_at_eps=rho_tight_eps,
        laplace_scale=lap_scale,
        gaussian_sigma=float(gauss.sigma),
        rho_eps_grid=RHO_EPS_GRID,
        rho_tight=rho_t,
        rho_quadratic=rho_q,
        rho_trivial=rho_v,
        rho_marks=marks,
        curve_names=CURVE_NAMES,
        objective_improved=obj_imp,
        objective_mironov=obj_mir,
        eps_improved=np.asarray(eps_imp),
        order_improved=ord_imp,
        rdp_at_improved=rdp_at,
        eps_mironov=np.asarray(eps_mir),
        order_mironov=np.asarray(ord_mir),
        exact_eps=exact,
    )


def _positive(y) -> np.ndarray:
    """Values ≤ 0 (or non-finite) cannot be drawn on a log axis: NaN → ``None`` → a gap."""
    y = np.asarray(y, dtype=np.float64)
    return np.where(np.isfinite(y) & (y > 0), y, np.nan)


def _line(name, x, y, colour, dash=None, group=None, width=2, short=None):
    # without a dash of its own, the plot widget gives the line one (tell_apart: one per colour);
    # ``short``: the legend's name in presentation mode (the description keeps ``name``)
    t = {
        "type": "scatter",
        "mode": "lines",
        "name": name,
        "x": x,
        "y": _positive(y),
        "line": {"color": colour, "width": width, **({"dash": dash} if dash else {})},
    }
    if group:
        t["legendgroup"] = group
    if short:
        t["meta"] = {"present_name": short}
    return t


def _markers(name, x, y, colours, symbol="circle", size=11):
    """One trace of several markers; ``colours`` (and ``symbol``) may be per point."""
    return marker_trace(
        name,
        np.asarray(x, float),
        _positive(y),
        list(colours),
        list(symbol) if isinstance(symbol, tuple) else symbol,
        size,
        outline="#000000",
    )


#: marker symbols of the three converted curves (tight pure DP, Laplace, Gaussian): distinct
#: shapes as well as colours, so coinciding markers (α* = α_max for both pure-DP curves) stay visible
_SYMBOLS = ("diamond", "square", "circle")
_OPEN_SYMBOLS = ("diamond-open", "square-open", "circle-open")


def _conversion_yrange(r: "RDPResult"):
    """Log-axis range [log10 lo, log10 hi] that keeps the minima in view (the bounds blow up as
    α → 1): from half the smallest positive minimum to 30 times the largest; None → autorange."""
    mins = np.concatenate([r.eps_improved, r.eps_mironov])
    pos = mins[np.isfinite(mins) & (mins > 0)]
    if pos.size == 0:
        return None
    return [math.log10(pos.min() / 2.0), math.log10(pos.max() * 30.0)]


class RDPController(Controller):
    """Controller of the Rényi DP explorer: sliders ``eps``, ``delta``, ``alpha_max`` →
    :func:`compute_rdp_explorer` → three figures and a readout table, updated in place."""

    compute = staticmethod(compute_rdp_explorer)
    prefetch = True  # the next slider step reads the cache (controls.PREFETCHER)

    def __init__(self, controls, message=None):
        self.readout = W.HTML()
        self.readout.add_class("dpexplore-rdp-readout")
        super().__init__(controls, message)
        self.readout.value = self.readout_html(self.result)

    def read_spec(self) -> RDPSpec:
        return RDPSpec(**param_values(self.controls, PARAMS))

    # -- traces -----------------------------------------------------------------------------
    @staticmethod
    def rdp_traces(r: RDPResult) -> list[dict]:
        a = r.alphas
        return [
            # (presentation mode's legend names are short: the full ones made a legend of a third
            # of the plot's width, in a corner a curve crosses)
            _line("tight ε-DP → RDP (Steinke 2024 Thm 4)", a, r.rdp_tight, OKABE_ITO[0], short="tight ε-DP"),
            _line("trivial ε̂ = ε", a, r.rdp_trivial, OKABE_ITO[7], "dot"),
            _line(
                f"zCDP-implied αρ, ρ = {r.rho_tight_at_eps:.3g}", a, r.rdp_zcdp, OKABE_ITO[1], "dash", short="zCDP: αρ"
            ),
            _line(
                f"Laplace b = Δ/ε = {r.laplace_scale:.3g} (Mironov 2017, Prop. 6)",
                a,
                r.rdp_laplace,
                OKABE_ITO[2],
                short=f"Laplace b = {r.laplace_scale:.3g}",
            ),
            _line(
                f"Gaussian σ = {r.gaussian_sigma:.3g}, calibrated to (ε, δ)",
                a,
                r.rdp_gaussian,
                OKABE_ITO[3],
                "dashdot",
                short=f"Gaussian σ = {r.gaussian_sigma:.3g}",
            ),
            {
                **_markers(
                    "optimal order α* (improved conversion)",
                    r.order_improved,
                    r.rdp_at_improved,
                    _CURVE_COLOURS,
                    _SYMBOLS,
                    12,
                ),
                "meta": {"present_name": "optimal α*"},
            },
        ]

    @staticmethod
    def rho_traces(r: RDPResult) -> list[dict]:
        e = r.rho_eps_grid
        return [
            _line("tight ρ = ε tanh(ε/2) (Steinke 2024 Thm 5)", e, r.rho_tight, OKABE_ITO[4]),
            _line("quadratic ρ = ε²/2", e, r.rho_quadratic, OKABE_ITO[5], "dash"),
            _line("trivial ρ = ε", e, r.rho_trivial, OKABE_ITO[7], "dot"),
            _markers(
                f"chosen ε = {r.spec.eps:.3g}",
                np.full(3, r.spec.eps),
                r.rho_marks,
                (OKABE_ITO[4], OKABE_ITO[5], OKABE_ITO[7]),
            ),
        ]

    @staticmethod
    def conversion_traces(r: RDPResult) -> list[dict]:
        a = r.alphas
        out = []
        for i, name in enumerate(r.curve_names):
            out.append(_line(f"{name}: improved", a, r.objective_improved[i], _CURVE_COLOURS[i], "solid", group=name))
        for i, name in enumerate(r.curve_names):
            out.append(_line(f"{name}: Mironov", a, r.objective_mironov[i], _CURVE_COLOURS[i], "dot", group=name))
        out.append(_markers("minimum (improved)", r.order_improved, r.eps_improved, _CURVE_COLOURS, _SYMBOLS, 12))
        out.append(_markers("minimum (Mironov)", r.order_mironov, r.eps_mironov, _CURVE_COLOURS, _OPEN_SYMBOLS, 12))
        return out

    @staticmethod
    def _yaxis_range(r: RDPResult) -> dict:
        rng = _conversion_yrange(r)
        return {"autorange": True} if rng is None else {"range": rng, "autorange": False}

    @staticmethod
    def readout_html(r: RDPResult) -> str:
        """The (ε, δ) readout: for each curve, ε by both conversions (with α*) and the exact ε(δ)."""
        s = r.spec
        rows = []
        for i, name in enumerate(r.curve_names):
            rows.append(
                f'<tr data-curve="{i}"><td style="color:{text_colour(_CURVE_COLOURS[i])}"><b>{html.escape(name)}</b></td>'
                f'<td class="eps-improved"><b>{r.eps_improved[i]:.4g}</b><br>'
                f"<small>α* = {r.order_improved[i]:.3g}</small></td>"
                f'<td class="eps-mironov">{r.eps_mironov[i]:.4g}<br><small>α* = {r.order_mironov[i]:.3g}</small></td>'
                f'<td class="eps-exact">{r.exact_eps[i]:.4g}{"<br><small>(calibrated)</small>" if i == 2 else ""}</td></tr>'
            )
        note = ""
        if (r.eps_improved == 0).any():
            note = (
                "<div><small>ε = 0 means the bound is ≤ 0 at every plotted order: with δ this "
                "large no ε is needed (that curve is then a gap on the log axis).</small></div>"
            )
        td = "padding:2px 6px;vertical-align:top;line-height:1.25"
        return (
            f"<div>(ε, δ)-DP from Rényi DP at δ = {s.delta:.3g}, minimum over the plotted orders "
            f"α ∈ ({r.alphas[0]:.4g}, {r.alphas[-1]:.4g}]:</div>"
            f'<table style="border-collapse:collapse;margin:4px 0"><style>.dpexplore-rdp-readout td, '
            f".dpexplore-rdp-readout th {{{td}}}</style>"
            "<tr><th align='left'>curve</th><th>ε, improved</th><th>ε, Mironov</th>"
            "<th>exact ε(δ)</th></tr>" + "".join(rows) + "</table>" + note
        )

    def snippet(self) -> str:
        s = self.spec
        return (
            "import numpy as np\n"
            "from dpexplore import mechanisms\nfrom dpexplore.accounting import conversions\n"
            "from dpexplore.apps.rdp_explorer import orders   # the app's N_ORDERS log-spaced orders\n\n"
            + snippet_assign(s, PARAMS)
            + "alphas = orders(alpha_max)\n"
            "curves = np.stack([\n"
            "    conversions.pure_to_rdp(eps, alphas, 'tight'),            # randomized response\n"
            "    mechanisms.Laplace.calibrate(eps, 0.0).rdp(alphas),        # b = 1/eps\n"
            "    mechanisms.Gaussian.calibrate(eps, delta).rdp(alphas),     # least sigma for (eps, delta)\n"
            "])\n"
            "best, order = conversions.rdp_to_approx(alphas, curves, delta, 'improved', return_order=True)\n"
            "for name, e, a in zip(['tight pure DP (RR)', 'Laplace', 'Gaussian'], best, order):\n"
            "    print(f'{name}: eps = {e:.4g} (alpha* = {a:.3g})')\n"
        )

    def figures(self, result: RDPResult) -> list[PlotlyWidget]:
        # every plot: log axes (the orders' without powers of ten) and the same small legend
        legend = {"showlegend": True, "legend": {"font": {"size": 11}, "bgcolor": "rgba(255,255,255,0.7)"}}
        order = ("Rényi order α (log scale)", {"type": "log"})

        def log_log(title, x, y, xaxis=LOG_AXIS, **extra):
            return axes_layout(title, x, y, xaxis=xaxis, yaxis=LOG_AXIS, **legend, **extra)

        rdp_layout = log_log(
            "Rényi DP of ε-DP: ε̂(α) against the order α", order[0], "ε̂(α) [nats]", order[1], height=430
        )
        rho_layout = log_log("ε-DP implies ρ-zCDP: ρ against ε", "ε [nats] (log scale)", "ρ [nats]")
        conv_layout = log_log(
            "RDP → (ε, δ): the bound ε_α(δ) of each order", order[0], "ε_α(δ) [nats]", order[1], height=430
        )
        conv_layout["yaxis"].update(self._yaxis_range(result))
        return [
            PlotlyWidget(data=self.rdp_traces(result), layout=rdp_layout),
            PlotlyWidget(data=self.rho_traces(result), layout=rho_layout),
            PlotlyWidget(data=self.conversion_traces(result), layout=conv_layout),
        ]

    def render(self, result: RDPResult) -> None:
        # everything is built first (an error leaves the last good plots as they were), then one
        # message per figure, top figure first, then the readout: the page starts drawing the
        # first figure while the kernel serializes the others
        f_rdp, f_rho, f_conv = self.figs
        rdp, rho = self.rdp_traces(result), self.rho_traces(result)
        conv, conv_y = self.conversion_traces(result), self._yaxis_range(result)
        readout = self.readout_html(result)
        f_rdp.update(data=rdp)
        f_rho.update(data=rho)
        f_conv.update(data=conv, layout={"yaxis": conv_y})
        self.readout.value = readout


FORMULAS = r"""
<p><b>Pure DP → Rényi DP, tight</b> (Steinke 2024, Theorem 4; attained by randomized response):
$$\hat\varepsilon(\alpha) = \frac{1}{\alpha-1}\log\!\left(\frac{e^{\alpha\varepsilon}}{e^\varepsilon+1}
 + \frac{e^{\varepsilon}\,e^{-\alpha\varepsilon}}{e^\varepsilon+1}\right)
 = \varepsilon - \frac{1}{\alpha-1}\log\!\left(\frac{1+e^{-\varepsilon}}{1+e^{-(2\alpha-1)\varepsilon}}\right).$$
Looser: the trivial bound \(\hat\varepsilon(\alpha)\le\varepsilon\) and the zCDP bound
\(\hat\varepsilon(\alpha)\le\alpha\rho\).</p>
<p><b>Pure DP → zCDP</b> (Steinke 2024, Theorem 5):
\(\rho = \frac{e^\varepsilon-1}{e^\varepsilon+1}\,\varepsilon = \varepsilon\tanh(\varepsilon/2) \le \tfrac12\varepsilon^2\)
(and \(\rho\le\varepsilon\) trivially).</p>
<p><b>Laplace mechanism</b> with scale \(b=\Delta/\varepsilon\) (ε-DP), Mironov 2017, Proposition 6 (quoted in Steinke 2024):
$$\hat\varepsilon_{\mathrm{Lap}}(\alpha) = \frac{1}{\alpha-1}\log\!\left(\frac{\alpha}{2\alpha-1}e^{(\alpha-1)\varepsilon}
 + \frac{\alpha-1}{2\alpha-1}e^{-\alpha\varepsilon}\right).$$
<b>Gaussian mechanism</b> with the smallest \(\sigma\) that is \((\varepsilon,\delta)\)-DP
(<code>Gaussian.calibrate(ε, δ)</code>, Balle &amp; Wang 2018): \(\hat\varepsilon(\alpha) = \alpha\Delta^2/(2\sigma^2)\).
Sensitivity \(\Delta = 1\).</p>
<p><b>Rényi DP → \((\varepsilon,\delta)\)-DP</b>, minimised over the orders α:
Mironov (2017, Prop. 3) \(\varepsilon = \hat\varepsilon(\alpha) + \frac{\log(1/\delta)}{\alpha-1}\);
improved (Balle et al. 2020, Thm. 21; Canonne, Kamath &amp; Steinke 2020)
$$\varepsilon = \hat\varepsilon(\alpha) + \log\!\left(1-\frac1\alpha\right) - \frac{\log\delta + \log\alpha}{\alpha-1}.$$
The optimal order \(\alpha^*\) is marked on the Rényi DP panel and the minima on the
third panel (◆ tight pure DP, ■ Laplace, ● Gaussian; open symbols: Mironov).</p>
"""

CAPTION = (
    "<small>Orders: {n} points log-spaced from just above 1 to α_max; the (ε, δ) numbers are the "
    "minimum over these orders (rounded up by 4 ulps). The Laplace curve is the mechanism with "
    "b = Δ/ε, which is ε-DP; the Gaussian curve is the mechanism calibrated to the chosen (ε, δ) "
    "with <code>mechanisms.Gaussian.calibrate(eps, delta)</code>, so its exact ε(δ) is ε and the "
    "gap to the converted ε is the price of going through Rényi DP. For the two pure-DP curves "
    "the bound keeps decreasing towards ε as α → ∞ (where ε̂(α) → ε), so their α* is α_max. "
    "The third panel's y axis shows the range around the minima (the bounds blow up as α → 1). "
    "Values ≤ 0 of a conversion bound cannot be drawn on the log axis and are left as gaps.</small>"
)


INFO = AppInfo(
    slug="rdp_explorer",
    title="Rényi DP explorer: pure DP, Rényi DP, zCDP and back to (ε, δ)",
    lead=(
        "An ε-DP mechanism is also Rényi DP at every order α and ρ-zCDP. Move ε, δ and the "
        "largest order α<sub>max</sub> to see how much each conversion costs and which (ε, δ) "
        "comes back out of Rényi DP."
    ),
    theory=FORMULAS + "<p>" + CAPTION.format(n=N_ORDERS) + "</p>",
)


def build_rdp_explorer(eps: float = 1.0, delta: float = 1e-6, alpha_max: float = 100.0) -> AppShell:
    """The Rényi DP explorer in the app shell: sliders ε, δ, α_max, the (ε, δ) readout, three plots
    (Rényi DP curves, ρ against ε, the RDP → (ε, δ) conversion per order).

    >>> app = build_rdp_explorer(eps=0.5)
    >>> ctrl = app.controller
    >>> len(ctrl.figs), round(float(ctrl.result.rdp_trivial[0]), 6)
    (3, 0.5)
    """
    controls = {k: param_slider(PARAMS[k], v) for k, v in (("eps", eps), ("delta", delta), ("alpha_max", alpha_max))}
    ctrl = RDPController(controls, MessageArea())
    return app_shell(INFO, ctrl, controls=controls, plots=ctrl.figs, readouts=[ctrl.readout], panel_width="430px")
