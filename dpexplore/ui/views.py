"""The shared views of privacy objects: trace and layout builders for plotly figures, used by
:func:`dpexplore.explore`, the Notion converter and the Composition explorer, so that a privacy
profile, a trade-off curve, a Rényi DP curve or an attack-risk curve looks the same in each.

* **Privacy profile** — δ(ε) on a log axis (:func:`profile_trace`), with the closest μ-GDP curve
  δ_μ(ε) dashed (:func:`gdp_trace`; Dong, Roth & Su 2022, Corollary 2.13) and the point
  (ε(δ), δ) marked (:func:`point_trace`); :func:`profile_layout`.
* **Trade-off** — β(α), the type II error of the best test at type I error α
  (:func:`tradeoff_trace`, :func:`tradeoff_diagonal`; :func:`tradeoff_layout`).
* **Rényi DP** — ε̂(α) against the order (:func:`rdp_trace`, :func:`rdp_layout`).
* **Attack risk** — the best membership test's TPR against its FPR on log axes
  (:func:`attack_trace`, :func:`attack_diagonal`, :func:`attack_layout`).
* **Any plot of an app** — a curve (:func:`line_trace`), marked points (:func:`marker_trace`),
  a title and axes (:func:`axes_layout`, :data:`LOG_AXIS`), subplot titles (:func:`panel_titles`):
  every app builds its traces and layouts with these rather than writing the dicts out.

:func:`object_curves` computes one object's curves once (cached per object);
:func:`object_traces` draws up to a handful of objects side by side in the four views (what
:func:`dpexplore.explore` shows). δ = 0 and underflow become gaps (NaN: JSON null) on the log
axes; a curve that is not defined is one null point, so its trace keeps its legend entry.

>>> from dpexplore.mechanisms import Gaussian
>>> c = object_curves(Gaussian(1.0))
>>> c.mu, c.mu_how
(1.0, 'exact')
>>> [t["name"] for t in object_traces([c], (1.0,), ("exact",), (4.8866,), 1e-6)["profile"]][:2]
['Gaussian(1.0, 1.0)', 'μ = 1.000 GDP (exact)']
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

from .. import display
from ..accounting import risk
from ..accounting.conversions import approx_to_gdp, gdp_log_delta, tradeoff_envelope  # noqa: F401
from .._numerics import up as round_up
from ..display import format_up
from .controls import OKABE_ITO

__all__ = [
    "line_trace",
    "marker_trace",
    "axes_layout",
    "panel_titles",
    "LOG_AXIS",
    "profile_trace",
    "gdp_trace",
    "point_trace",
    "profile_layout",
    "profile_yrange",
    "tradeoff_trace",
    "tradeoff_diagonal",
    "tradeoff_layout",
    "tradeoff_envelope",
    "rdp_trace",
    "rdp_layout",
    "attack_trace",
    "attack_diagonal",
    "attack_layout",
    "ObjectCurves",
    "object_curves",
    "profile_curves",
    "matched_mu",
    "object_traces",
    "N_EPS",
    "N_FPR",
    "ORDERS",
    "DELTA_FLOOR",
    "EMPTY",
]

#: ε grid points of an object's profile; FPR points of its trade-off and attack curves
N_EPS, N_FPR = 120, 61
#: Rényi orders drawn
ORDERS = np.array([1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64])
#: the profile plot's δ floor (log axis)
DELTA_FLOOR = 1e-14
#: a trace with nothing to draw (a curve that is not defined): one null point, so the trace keeps
#: its place and legend entry and every trace has data
EMPTY = np.array([np.nan])
#: the dotted reference lines
# sparse dots: a reference line, apart from the dotted curves (told apart without colour too)
_REF = {"color": "#999999", "width": 1, "dash": "2px,6px"}


def positive(y) -> np.ndarray:
    """Values for a log axis: δ = 0 (and anything ≤ 0) becomes NaN (JSON null: a gap)."""
    y = np.asarray(y, dtype=np.float64)
    return np.where(y > 0, y, np.nan)


def line_trace(name, x, y, color, width=2, dash=None, *, mode="lines", shape=None, **extra) -> dict:
    """A scatter trace drawn as a line of ``color`` and ``width`` (``dash``: a dash style, None or
    "solid" for none; ``shape``: e.g. "hvh" for steps; ``mode`` "lines+markers" adds markers), with
    ``extra`` trace properties (``legendgroup``, ``marker``, ``meta`` …): the apps' curves.

    >>> line_trace("a", [0, 1], [1, 2], "#000000", dash="dot")["line"]
    {'color': '#000000', 'width': 2, 'dash': 'dot'}
    """
    line = {"color": color, "width": width}
    if dash and dash != "solid":
        line["dash"] = dash
    if shape is not None:
        line["shape"] = shape
    return {"type": "scatter", "mode": mode, "name": name, "x": x, "y": y, "line": line, **extra}


def marker_trace(name, x, y, color, symbol="circle", size=9, *, outline=None, **extra) -> dict:
    """A scatter trace of markers (``color`` one colour or one per point), outlined 1 px in
    ``outline`` when given, with ``extra`` trace properties: the apps' marked points.

    >>> marker_trace("p", [1], [2], "#000000", "x", outline="#000000")["marker"]["line"]
    {'color': '#000000', 'width': 1}
    """
    marker = {"color": color, "size": size, "symbol": symbol}
    if outline is not None:
        marker["line"] = {"color": outline, "width": 1}
    return {"type": "scatter", "mode": "markers", "name": name, "x": x, "y": y, "marker": marker, **extra}


#: a log axis labelled in powers of ten (merge into an axis: ``{**LOG_AXIS, …}``)
LOG_AXIS = {"type": "log", "exponentformat": "power"}


def axes_layout(
    title: str, xtitle: str, ytitle: str, *, xaxis=None, yaxis=None, from_zero: bool = False, **extra
) -> dict:
    """A plot's layout: its title and its axes' titles, with further ``xaxis``/``yaxis``
    properties (e.g. :data:`LOG_AXIS`, a range) and ``extra`` layout properties; ``from_zero``:
    both axes' ranges start at 0 (``rangemode`` "tozero").

    >>> axes_layout("t", "x", "y", yaxis=LOG_AXIS)["yaxis"]
    {'title': {'text': 'y'}, 'type': 'log', 'exponentformat': 'power'}
    >>> axes_layout("t", "x", "y", from_zero=True)["xaxis"]
    {'title': {'text': 'x'}, 'rangemode': 'tozero'}
    """
    zero = {"rangemode": "tozero"} if from_zero else {}
    return {
        "title": {"text": title},
        "xaxis": {"title": {"text": xtitle}, **zero, **(xaxis or {})},
        "yaxis": {"title": {"text": ytitle}, **zero, **(yaxis or {})},
        **extra,
    }


def panel_titles(panels) -> list[dict]:
    """Annotations titling the panels of a figure with subplots: one per ``(xaxis, yaxis, title)``
    (``"x2"``, ``"y"``, …), centred above its axes (``plotwidget.js`` sizes them as plot titles).

    >>> panel_titles([("x2", "y", "right")])[0]["xref"]
    'x2 domain'
    """
    return [
        {
            "text": title,
            "name": "dpexplore-panel-title",
            "xref": f"{xa} domain",
            "yref": f"{ya} domain",
            "x": 0.5,
            "y": 1.0,
            "xanchor": "center",
            "yanchor": "bottom",
            "showarrow": False,
        }
        for xa, ya, title in panels
    ]


def _curve(name, x, y, color, width, dash, group, mode="lines") -> dict:
    return line_trace(name, x, y, color, width, dash, mode=mode, **_group(group))


def _group(group) -> dict:
    return {} if group is None else {"legendgroup": str(group)}


# -- privacy profile -----------------------------------------------------------------------------
def profile_trace(
    name, eps, *, delta=None, log_delta=None, color=OKABE_ITO[0], width=2.5, dash="solid", group=None
) -> dict:
    """δ(ε) on the ε grid, given as ``delta`` or as ``log_delta`` (−inf: δ = 0); both None: the
    curve is not defined (one null point)."""
    if delta is None and log_delta is None:
        return _curve(name, EMPTY, EMPTY, color, width, dash, group)
    if delta is None:
        with np.errstate(under="ignore"):
            delta = np.exp(np.asarray(log_delta, dtype=np.float64))
    return _curve(name, eps, positive(delta), color, width, dash, group)


def gdp_trace(mu, eps, *, name=None, color=OKABE_ITO[0], group=None) -> dict:
    """The μ-GDP profile δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) on ``eps`` (Dong, Roth & Su
    2022, Corollary 2.13), dashed: the GDP curve next to an object's profile."""
    y = np.exp(np.asarray(gdp_log_delta(mu, eps), dtype=np.float64))
    return _curve(name or f"μ = {format_up(mu)} GDP", eps, positive(y), color, 1.5, "dash", group)


def point_trace(x, y, *, name, color=OKABE_ITO[0], symbol="circle-open", size=9, group=None, showlegend=False) -> dict:
    """Marked points (an object's (ε(δ), δ), its TPR at the chosen FPR); a NaN or inf coordinate
    drops the point (no marker where the value is not defined)."""
    xs, ys = np.atleast_1d(np.asarray(x, dtype=np.float64)), np.atleast_1d(np.asarray(y, dtype=np.float64))
    ok = np.isfinite(xs) & np.isfinite(ys)
    t = {
        "type": "scatter",
        "mode": "markers",
        "name": name,
        "showlegend": showlegend,
        "x": xs[ok] if ok.any() else EMPTY,
        "y": ys[ok] if ok.any() else EMPTY,
        "marker": {"color": color, "size": size, "symbol": symbol},
    }
    if symbol.endswith("-open"):
        t["marker"]["line"] = {"width": 2}
    if group is not None:
        t["legendgroup"] = str(group)
    return t


def profile_yrange(floor: float = DELTA_FLOOR) -> list[float]:
    """The δ axis of the profile view: from ``floor`` to just above 1 (log10 units)."""
    return [float(np.log10(floor)), 0.05]


def profile_layout(title: str, *, floor: float = DELTA_FLOOR, legend=None, **extra) -> dict:
    """Axes of the profile view: ε [nats] linear, δ(ε) log from ``floor`` to 1."""
    return {
        "title": {"text": title},
        "xaxis": {"title": {"text": "ε [nats]"}},
        "yaxis": {
            "title": {"text": "δ(ε)  (log scale)"},
            "type": "log",
            "exponentformat": "power",
            "range": profile_yrange(floor),
        },
        "legend": legend or _LEGEND,
        **extra,
    }


# -- trade-off -----------------------------------------------------------------------------------
def tradeoff_trace(name, alpha, beta, *, color=OKABE_ITO[0], width=2.5, dash="solid", group=None) -> dict:
    """β(α) on the α grid; ``beta`` None: not defined (one null point)."""
    if beta is None:
        return _curve(name, EMPTY, EMPTY, color, width, dash, group)
    return _curve(name, alpha, np.clip(np.asarray(beta, dtype=np.float64), 0.0, 1.0), color, width, dash, group)


def tradeoff_diagonal() -> dict:
    """β = 1 − α: no test does better than guessing (no privacy loss)."""
    return {
        "type": "scatter",
        "mode": "lines",
        "name": "β = 1 − α (perfect privacy)",
        "x": [0.0, 1.0],
        "y": [1.0, 0.0],
        "line": dict(_REF),
    }


def tradeoff_layout(title: str, *, legend=None, **extra) -> dict:
    return {
        "title": {"text": title},
        "xaxis": {"title": {"text": "type I error α"}, "range": [0, 1]},
        "yaxis": {"title": {"text": "type II error β(α)"}, "range": [0, 1.02]},
        "legend": legend or _LEGEND,
        **extra,
    }


# -- Rényi DP ------------------------------------------------------------------------------------
def rdp_trace(name, orders, values, *, color=OKABE_ITO[0], group=None) -> dict:
    return _curve(name, orders, positive(values), color, 2.5, "solid", group, mode="lines+markers")


def rdp_layout(title: str, *, orders=ORDERS, legend=None, **extra) -> dict:
    return {
        "title": {"text": title},
        "xaxis": {"title": {"text": "order α"}, "type": "log", "tickvals": np.asarray(orders).tolist()},
        "yaxis": {"title": {"text": "ε̂(α)"}, "type": "log", "exponentformat": "power"},
        "legend": legend or _LEGEND,
        **extra,
    }


# -- attack risk ---------------------------------------------------------------------------------
def attack_trace(name, fpr, tpr, *, color=OKABE_ITO[0], width=2.5, dash="solid", group=None) -> dict:
    """The best membership test's TPR at each FPR (log axes: FPR = 0 is left out)."""
    fpr, tpr = np.asarray(fpr, dtype=np.float64), np.asarray(tpr, dtype=np.float64)
    keep = fpr > 0
    return _curve(name, fpr[keep], positive(tpr[keep]), color, width, dash, group)


def attack_diagonal(lo: float = 1e-5) -> dict:
    return {
        "type": "scatter",
        "mode": "lines",
        "name": "random guess (TPR = FPR)",
        "x": [lo, 1.0],
        "y": [lo, 1.0],
        "line": dict(_REF),
    }


def attack_layout(title: str, *, legend=None, **extra) -> dict:
    return {
        "title": {"text": title},
        "xaxis": {"title": {"text": "false-positive rate"}, "type": "log", "exponentformat": "power"},
        "yaxis": {"title": {"text": "true-positive rate"}, "type": "log", "exponentformat": "power"},
        "legend": legend or _LEGEND,
        **extra,
    }


_LEGEND = {"orientation": "h", "y": -0.18, "x": 0}


# -- one object's curves -------------------------------------------------------------------------
@dataclass(frozen=True)
class ObjectCurves:
    """One object's curves (computed once, reused by every slider step)."""

    label: str
    call: str
    profile: object
    mu: float | None  # exact or certified μ where known
    mu_how: str  # "exact", "certified" or ""
    eps: np.ndarray  # profile grid
    delta: np.ndarray
    fpr: np.ndarray  # attack grid (0 and N_FPR log points)
    tpr: np.ndarray
    alpha: np.ndarray  # trade-off grid (linear)
    beta: np.ndarray
    rdp: np.ndarray | None  # ε̂ at ORDERS, None: not known


def _short(call: str, n: int = 60) -> str:
    """A legend label: the repr without keyword names, cut at ``n`` characters."""
    s = re.sub(r"\b(\w+)=", "", call)
    return s if len(s) <= n else s[: n - 1] + "…"


def _eps_grid(p, n: int, decades: bool) -> np.ndarray:
    # the range only needs an upper bound: a refined profile gives one from its grids so far
    # (refining at δ = 1e-14 would build finer or tilted grids, 3–5× the cost of the curves)
    hi = float(np.asarray(getattr(p, "epsilon_upper", p.epsilon)(DELTA_FLOOR)))
    if not np.isfinite(hi):
        hi = float(p.eps_max) if np.isfinite(float(p.eps_max)) else 30.0
    top = min(max(hi * 1.05, 0.05), 60.0)
    grid = np.linspace(0.0, top, n)
    if decades:
        # the ε where δ crosses each decade (a pure-DP profile falls off a cliff at eps_max: the
        # decade points draw it where a linear grid would jump over it)
        d = np.asarray(p.epsilon(10.0 ** -np.arange(0.5, 14.5, 0.5)), dtype=np.float64)
        grid = np.unique(np.concatenate([grid, d[np.isfinite(d) & (d <= top)]]))
    return grid


@functools.lru_cache(maxsize=32)
def object_curves(obj) -> ObjectCurves:
    """Every curve of one object (cached per object; its parameters must be hashable): its
    profile δ(ε) on a linear ε grid up to where δ falls to :data:`DELTA_FLOOR` (plus the ε of
    each half decade of δ), TPR and β by ``risk.tpr_at_fpr`` (Dong, Roth & Su 2022; Kulynych et
    al. 2024), its Rényi DP at :data:`ORDERS` where known (its card's), and its exact μ or, for
    a pure-DP object, the certified μ of ``conversions.gdp_measure`` (Liu et al. 2022).
    ``ValueError`` naming ``objects`` for an object without a privacy profile."""
    info = display._info(obj)
    p = info.profile
    if p is None:
        raise ValueError(f"objects must have a privacy profile ({info.no_profile}), got {obj!r}")
    call = repr(obj)
    eps = _eps_grid(p, N_EPS, True)
    delta = np.asarray(p.delta(eps), dtype=np.float64)
    fpr = np.concatenate([[0.0], np.logspace(-5, 0, N_FPR)])
    tpr = np.asarray(risk.tpr_at_fpr(p, fpr), dtype=np.float64)
    alpha = np.linspace(0.0, 1.0, N_FPR)
    beta = 1.0 - np.asarray(risk.tpr_at_fpr(p, alpha), dtype=np.float64)
    rdp = None
    if callable(info.rdp):
        try:
            rdp = np.array([float(info.rdp(a)) for a in ORDERS])
        except Exception:  # noqa: BLE001 - no RDP view for this object
            rdp = None
    # the μ its card shows (display._shown_mu): exact where the object is μ-GDP, the best
    # certified μ (conversions.gdp_certified_mu) for pure DP
    try:
        shown = display._shown_mu(info, p)
    except (ValueError, RuntimeError):
        shown = None
    mu, how = (None, "") if shown is None else (shown[0], "exact" if isinstance(info.mu, tuple) else "certified")
    return ObjectCurves(_short(call), call, p, mu, how, eps, delta, fpr, tpr, alpha, np.clip(beta, 0.0, 1.0), rdp)


def profile_curves(profile, label: str, *, n_eps: int = 60) -> ObjectCurves:
    """The cheap curves of a profile whose ``risk.tpr_at_fpr`` is costly (a composed PLD or KOV
    profile: 0.3–3 s): δ(ε) on ``n_eps`` linear points, and β and TPR = 1 − β from that grid by
    :func:`~dpexplore.accounting.conversions.tradeoff_envelope` (an upper bound on the best test's TPR,
    rounded up by ``MARGINS["risk_numerical"]``, the margin of ``risk.tpr_at_fpr``'s numerical
    bound: the safe side; looser than ``risk.tpr_at_fpr``, which refines the ε of each α). No μ (a caller draws the GDP curve
    through ε(δ) by :func:`matched_mu`) and no Rényi DP."""
    eps = _eps_grid(profile, n_eps, False)
    delta = np.asarray(profile.delta(eps), dtype=np.float64)
    fpr = np.concatenate([[0.0], np.logspace(-5, 0, N_FPR)])
    alpha = np.linspace(0.0, 1.0, N_FPR)
    # rounded up by the margin of risk.tpr_at_fpr's numerical bound (the profile's δ carries its own error)
    up = np.minimum(1.0, round_up(1.0 - tradeoff_envelope(eps, delta, np.concatenate([fpr, alpha])), "risk_numerical"))
    return ObjectCurves(
        label,
        label,
        profile,
        None,
        "",
        eps,
        delta,
        fpr,
        up[: fpr.size],
        alpha,
        np.clip(1.0 - up[fpr.size :], 0.0, 1.0),
        None,
    )


def matched_mu(eps, delta: float):
    """The μ whose GDP curve passes through (ε, δ), rounded up (the end of the bracket where
    δ_μ(ε) > δ: :func:`~dpexplore.accounting.conversions.approx_to_gdp` with ``side="up"``); None where there
    is no such curve to draw (ε not finite and positive, δ outside (0, 1)). A sequence of ε gives a
    tuple (one bracket search for all of them).

    >>> round(matched_mu(4.8866, 1e-6), 3)
    1.0
    """
    eps_arr = np.atleast_1d(np.asarray(eps, dtype=np.float64))
    drawable = np.isfinite(eps_arr) & (eps_arr > 0) & (0 < delta < 1)
    mus = [None] * eps_arr.size
    if drawable.any():
        got = np.atleast_1d(approx_to_gdp(eps_arr[drawable], delta, side="up"))
        for i, m in zip(np.flatnonzero(drawable), got):
            mus[i] = float(m) if np.isfinite(m) else None
    return mus[0] if np.ndim(eps) == 0 else tuple(mus)


def object_traces(curves, mus, mu_hows, eps_at, delta, fpr=None, tpr_at=()) -> dict:
    """The four views of objects side by side (colour i for object i): ``"profile"`` (each δ(ε),
    its GDP curve with μ ``mus[i]`` — None: none — and the point (ε(δ), δ)), ``"tradeoff"``,
    ``"rdp"`` (objects whose Rényi DP is known) and ``"attack"`` (with the point (fpr, TPR) when
    ``fpr`` is given)."""
    prof, trade, rdp, attack = [], [tradeoff_diagonal()], [], [attack_diagonal()]
    for i, c in enumerate(curves):
        col = OKABE_ITO[i % len(OKABE_ITO)]
        prof.append(profile_trace(c.label, c.eps, delta=c.delta, color=col, group=i))
        if mus[i] is not None:
            prof.append(
                gdp_trace(mus[i], c.eps, name=f"μ = {format_up(mus[i])} GDP ({mu_hows[i]})", color=col, group=i)
            )
        if np.isfinite(eps_at[i]):
            prof.append(point_trace(eps_at[i], delta, name=f"ε(δ) of {c.label}", color=col, group=i))
        trade.append(tradeoff_trace(c.label, c.alpha, c.beta, color=col))
        if c.rdp is not None:
            rdp.append(rdp_trace(c.label, ORDERS, c.rdp, color=col))
        attack.append(attack_trace(c.label, c.fpr, c.tpr, color=col, group=i))
        if fpr is not None:
            attack.append(point_trace(fpr, tpr_at[i], name=f"TPR at FPR {fpr:.3g}", color=col, group=i))
    return {"profile": prof, "tradeoff": trade, "rdp": rdp, "attack": attack}
