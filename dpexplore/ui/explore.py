"""``dpexplore.explore(*objects)``: any privacy objects a practitioner built, side by side, in the
app shell.

Up to :data:`MAX_OBJECTS` objects (mechanisms, subsampled mechanisms, profiles, compositions such
as a DP-SGD run ``compose(subsample(Gaussian(σ), q), T)``, filters) in four views, one tab each:

* **Privacy profile** — δ(ε) on a log axis, each object with its closest μ-GDP curve (dashed):
  the exact μ where the object is Gaussian, the certified μ of its card where it is pure DP
  (Liu et al. 2022, result “GDPT”), else the μ whose curve passes through (ε(δ), δ) at the chosen δ —
  where the object's curve rises above that one, the object is not μ-GDP for it (Dong, Roth &
  Su 2022, Corollary 2.13; Liu et al. 2022, Theorem 3.1);
* **Trade-off** — β = 1 − TPR(α) against α: the type II error of the best test at each type I
  error (``risk.tpr_at_fpr``; Dong, Roth & Su 2022, result “f-DP as (ε, δ(ε))-DP for all ε”);
* **Rényi DP** — ε̂(α) where the object's Rényi DP is known (its card's RDP source: Mironov 2017);
* **Attack risk** — the best membership test's TPR against its FPR, on log axes, with the chosen
  FPR marked (Kulynych et al. 2024).

Controls: δ (marks ε(δ) and sets the GDP curves) and the FPR of the attack readout. The readouts
are the objects' ε(δ), μ and TPR at that FPR; "Reproduce in Python" shows the calls that built
the objects (their reprs) and prints the same numbers. The objects' curves are computed once (a
slider step only re-reads them), so every step is as fast as the apps'.

>>> from dpexplore.mechanisms import Gaussian, Laplace
>>> app = explore(Gaussian(1.0), Laplace(1.0))
>>> [t for t, _ in app.controller.tabs]
['Privacy profile', 'Trade-off', 'Rényi DP', 'Attack risk']
>>> app.controller.controls["delta"].value = 1e-6
>>> round(app.controller.result.eps_at_delta[0], 4)     # ε(1e-6) of Gaussian(1.0)
4.8866
"""
from __future__ import annotations

import functools
import html
import re
from dataclasses import dataclass

import ipywidgets as W
import numpy as np

from .. import display, risk
from ..conversions import gdp_log_delta, gdp_measure
from ..display import format_up
from ..references import cite
from .controls import OKABE_ITO, Controller, MessageArea, log_slider
from .plotwidget import PlotlyWidget
from .shell import AppInfo, AppShell, app_shell

__all__ = ["explore", "MAX_OBJECTS", "ExploreController"]

#: at most this many objects side by side (each costs its curves once)
MAX_OBJECTS = 6
#: ε grid points of the profile plot; FPR points of the trade-off and attack plots
N_EPS, N_FPR = 120, 61
#: Rényi orders drawn
ORDERS = np.array([1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64])
#: the profile plot's δ floor (log axis)
DELTA_FLOOR = 1e-14


@dataclass(frozen=True)
class _Curves:
    """One object's curves (computed once, reused by every slider step)."""

    label: str
    call: str
    profile: object
    mu: float | None           # exact or certified μ where known
    mu_how: str                # "exact", "certified" or ""
    eps: np.ndarray            # profile plot grid
    delta: np.ndarray
    fpr: np.ndarray
    tpr: np.ndarray
    alpha: np.ndarray          # trade-off grid (linear)
    beta: np.ndarray
    rdp: np.ndarray | None


def _short(call: str, n: int = 60) -> str:
    """A legend label: the repr without keyword names, cut at ``n`` characters."""
    s = re.sub(r"\b(\w+)=", "", call)
    return s if len(s) <= n else s[: n - 1] + "…"


@functools.lru_cache(maxsize=32)
def _curves(obj) -> _Curves:
    info = display._info(obj)
    p = info.profile
    if p is None:
        raise ValueError(f"objects must have a privacy profile ({info.no_profile}), got {obj!r}")
    call = repr(obj)
    hi = float(np.asarray(p.epsilon(DELTA_FLOOR)))
    if not np.isfinite(hi):
        hi = float(p.eps_max) if np.isfinite(float(p.eps_max)) else 30.0
    top = min(max(hi * 1.05, 0.05), 60.0)
    # a linear grid, plus the ε where δ crosses each decade (a pure-DP profile falls off a cliff
    # at eps_max: the decade points draw it where a linear grid would jump over it)
    decades = np.asarray(p.epsilon(10.0 ** -np.arange(0.5, 14.5, 0.5)), dtype=np.float64)
    eps = np.unique(np.concatenate([np.linspace(0.0, top, N_EPS), decades[np.isfinite(decades) & (decades <= top)]]))
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
    mu, how = (info.mu[0], "exact") if info.mu is not None else (None, "")
    if mu is None and np.isfinite(float(p.eps_max)):
        try:   # pure DP: the certified μ of its card (conversions.gdp_measure, complete certificate)
            mu, how = float(gdp_measure(p, tol=1e-3)[1]), "certified"
        except (ValueError, RuntimeError):
            mu = None
    return _Curves(_short(call), call, p, mu, how, eps, delta, fpr, tpr, alpha, np.clip(beta, 0.0, 1.0), rdp)


@dataclass(frozen=True)
class ExploreSpec:
    objects: tuple
    delta: float
    fpr: float


@dataclass(frozen=True)
class ExploreResult:
    curves: tuple
    delta: float
    fpr: float
    eps_at_delta: tuple        # ε(δ) per object (inf: none)
    mus: tuple                 # the GDP curve's μ per object (None: none)
    mu_how: tuple              # "exact", "certified" or "through ε(δ)"
    tpr_at: tuple


def _matched_mu(eps: float, delta: float) -> float | None:
    """The μ whose GDP curve passes through (ε, δ): δ_μ(ε) = δ, increasing in μ; three rounds of
    a 64-point log grid (vectorized closed form), ending on the upper end of the bracket."""
    if not np.isfinite(eps) or eps <= 0 or not 0 < delta < 1:
        return None
    lo, hi = -6.0, 4.0      # log10 μ
    target = np.log(delta)
    for _ in range(4):
        grid = np.linspace(lo, hi, 64)
        ld = np.asarray(gdp_log_delta(10.0 ** grid, eps), dtype=np.float64)
        above = np.nonzero(ld >= target)[0]
        if above.size == 0:
            return None
        j = int(above[0])
        if j == 0:
            return float(10.0 ** grid[0])
        lo, hi = float(grid[j - 1]), float(grid[j])
    return float(10.0 ** hi)


def compute_explore(spec: ExploreSpec) -> ExploreResult:
    """Every object's curves (cached per object) and the slider-dependent readouts."""
    curves = tuple(_curves(o) for o in spec.objects)
    eps_at = tuple(float(np.asarray(c.profile.epsilon(spec.delta))) for c in curves)
    mus = tuple(c.mu if c.mu is not None else _matched_mu(e, spec.delta) for c, e in zip(curves, eps_at))
    tprs = tuple(float(risk.tpr_at_fpr(c.profile, spec.fpr)) for c in curves)
    how = tuple(c.mu_how if c.mu is not None else f"through ε(δ = {spec.delta:.3g})" for c in curves)
    return ExploreResult(curves, spec.delta, spec.fpr, eps_at, mus, how, tprs)


def _pos(y):
    y = np.asarray(y, dtype=np.float64)
    return np.where(y > 0, y, np.nan)


class ExploreController(Controller):
    """The controller of :func:`explore`: δ and FPR sliders → :func:`compute_explore` → four
    figures (see the module docstring)."""

    compute = staticmethod(compute_explore)
    cache_size = 64

    def __init__(self, objects, controls, message=None):
        self.objects = tuple(objects)
        self.readout = W.HTML()
        super().__init__(controls, message)
        self.readout.value = self._readout(self.result)

    def read_spec(self) -> ExploreSpec:
        return ExploreSpec(self.objects, float(self.controls["delta"].value),
                           float(self.controls["fpr"].value))

    # -- traces -------------------------------------------------------------------------------
    def _profile_traces(self, r: ExploreResult):
        out = []
        for i, (c, e, mu) in enumerate(zip(r.curves, r.eps_at_delta, r.mus)):
            col = OKABE_ITO[i % len(OKABE_ITO)]
            out.append({"type": "scatter", "mode": "lines", "name": c.label, "x": c.eps, "y": _pos(c.delta),
                        "line": {"color": col, "width": 2.5}, "legendgroup": str(i)})
            if mu is not None:
                y = np.exp(np.asarray(gdp_log_delta(mu, c.eps), dtype=np.float64))
                out.append({"type": "scatter", "mode": "lines", "name": f"μ = {format_up(mu)} GDP ({r.mu_how[i]})",
                            "x": c.eps, "y": _pos(y), "legendgroup": str(i),
                            "line": {"color": col, "width": 1.5, "dash": "dash"}})
            if np.isfinite(e):
                out.append({"type": "scatter", "mode": "markers", "x": [e], "y": [r.delta], "showlegend": False,
                            "name": f"ε(δ) of {c.label}", "legendgroup": str(i),
                            "marker": {"color": col, "size": 9, "symbol": "circle-open", "line": {"width": 2}}})
        return out

    def _tradeoff_traces(self, r: ExploreResult):
        out = [{"type": "scatter", "mode": "lines", "name": "no privacy loss (β = 1 − α)", "x": [0, 1],
                "y": [1, 0], "line": {"color": "#888", "width": 1, "dash": "dot"}}]
        for i, c in enumerate(r.curves):
            out.append({"type": "scatter", "mode": "lines", "name": c.label, "x": c.alpha, "y": c.beta,
                        "line": {"color": OKABE_ITO[i % len(OKABE_ITO)], "width": 2.5}})
        return out

    def _rdp_traces(self, r: ExploreResult):
        out = []
        for i, c in enumerate(r.curves):
            if c.rdp is not None:
                out.append({"type": "scatter", "mode": "lines+markers", "name": c.label, "x": ORDERS,
                            "y": _pos(c.rdp), "line": {"color": OKABE_ITO[i % len(OKABE_ITO)], "width": 2.5}})
        return out

    def _attack_traces(self, r: ExploreResult):
        out = [{"type": "scatter", "mode": "lines", "name": "random guess (TPR = FPR)", "x": [1e-5, 1],
                "y": [1e-5, 1], "line": {"color": "#888", "width": 1, "dash": "dot"}}]
        for i, (c, t) in enumerate(zip(r.curves, r.tpr_at)):
            col = OKABE_ITO[i % len(OKABE_ITO)]
            out.append({"type": "scatter", "mode": "lines", "name": c.label, "x": c.fpr[1:], "y": _pos(c.tpr[1:]),
                        "line": {"color": col, "width": 2.5}, "legendgroup": str(i)})
            out.append({"type": "scatter", "mode": "markers", "x": [r.fpr], "y": [t], "showlegend": False,
                        "name": f"TPR at FPR {r.fpr:.3g}", "legendgroup": str(i),
                        "marker": {"color": col, "size": 9, "symbol": "circle-open", "line": {"width": 2}}})
        return out

    def figures(self, r: ExploreResult):
        legend = {"orientation": "h", "y": -0.18, "x": 0}
        self.fig_profile = PlotlyWidget(self._profile_traces(r), {
            "title": {"text": "Privacy profiles δ(ε) and the closest μ-GDP curves"},
            "xaxis": {"title": {"text": "ε"}},
            "yaxis": {"title": {"text": "δ(ε)"}, "type": "log", "exponentformat": "power",
                      "range": [np.log10(DELTA_FLOOR), 0.05]},
            "legend": legend})
        self.fig_tradeoff = PlotlyWidget(self._tradeoff_traces(r), {
            "title": {"text": "Trade-off curves: the best test's type II error β at type I error α"},
            "xaxis": {"title": {"text": "α (type I error, FPR)"}, "range": [0, 1]},
            "yaxis": {"title": {"text": "β (type II error)"}, "range": [0, 1]}, "legend": legend})
        self.fig_rdp = PlotlyWidget(self._rdp_traces(r), {
            "title": {"text": "Rényi DP ε̂(α) (objects whose Rényi DP is known)"},
            "xaxis": {"title": {"text": "order α"}, "type": "log", "tickvals": ORDERS.tolist()},
            "yaxis": {"title": {"text": "ε̂(α)"}, "type": "log", "exponentformat": "power"}, "legend": legend})
        self.fig_attack = PlotlyWidget(self._attack_traces(r), {
            "title": {"text": "Attack risk: the best membership test's TPR at each FPR"},
            "xaxis": {"title": {"text": "false-positive rate"}, "type": "log", "exponentformat": "power"},
            "yaxis": {"title": {"text": "true-positive rate"}, "type": "log", "exponentformat": "power"},
            "legend": legend})
        self.tabs = [("Privacy profile", [self.fig_profile]), ("Trade-off", [self.fig_tradeoff]),
                     ("Rényi DP", [self.fig_rdp]), ("Attack risk", [self.fig_attack])]
        return [self.fig_profile, self.fig_tradeoff, self.fig_rdp, self.fig_attack]

    def render(self, r: ExploreResult) -> None:
        for fig, traces in ((self.fig_profile, self._profile_traces(r)),
                            (self.fig_attack, self._attack_traces(r))):
            with fig.batch_update():
                fig.update(data=traces)
        self.readout.value = self._readout(r)

    @staticmethod
    def _readout(r: ExploreResult) -> str:
        items = []
        for i, (c, e, mu, how, t) in enumerate(zip(r.curves, r.eps_at_delta, r.mus, r.mu_how, r.tpr_at)):
            col = OKABE_ITO[i % len(OKABE_ITO)]
            mu_txt = "none" if mu is None else f"<b>{html.escape(format_up(mu))}</b> ({html.escape(how)})"
            eps_txt = html.escape(format_up(e)) if np.isfinite(e) else "none"
            items.append(
                f'<li><span style="color:{col}" aria-hidden="true">■</span> <code>{html.escape(c.label)}</code>'
                f"<br>ε at δ = {r.delta:.3g}: <b>{eps_txt}</b> · μ-GDP: {mu_txt} · "
                f"TPR at FPR {r.fpr:.3g}: <b>{html.escape(format_up(t))}</b></li>")
        return (f'<ul style="list-style:none;padding:0;margin:4px 0">{"".join(items)}</ul>'
                '<p class="dpexplore-note">Values rounded up (the safe side).</p>')

    def snippet(self) -> str:
        s = self.spec
        calls = [c.call for c in self.result.curves]
        return _snippet(calls, s.delta, s.fpr)


def _snippet(calls, delta, fpr) -> str:
    """Python that rebuilds the objects from their reprs and prints the readouts."""
    from .. import composition, conversions, filters, mechanisms, profiles

    text = " ".join(calls)
    imports = []
    for mod, names in (("dpexplore.mechanisms", mechanisms.__all__), ("dpexplore.profiles", profiles.__all__ +
                       ["ApproxDPProfile", "PureDPProfile"]),
                       ("dpexplore.conversions", ["ZCDPProfile", "RDPProfile", "EquationProfile"]),
                       ("dpexplore.composition", ["compose", "compose_all", "OptimalProfile"]),
                       ("dpexplore.filters", [n for n in filters.__all__ if n[0].isupper()])):
        used = sorted({n for n in names if re.search(rf"(?<![\w.]){re.escape(n)}\(", text)})
        if used:
            imports.append(f"from {mod} import {', '.join(used)}")
    del composition, conversions
    body = ",\n    ".join(calls)
    return ("from dpexplore import risk\nfrom dpexplore.display import profile_of\n"
            + "\n".join(imports) + "\n\n"
            f"objects = [\n    {body},\n]\n"
            f"delta, fpr = {delta!r}, {fpr!r}\n"
            "for obj in objects:\n"
            "    p = profile_of(obj)   # the profile its card describes\n"
            "    print(repr(obj), 'eps =', p.epsilon(delta), 'TPR =', risk.tpr_at_fpr(p, fpr))\n")


INFO = AppInfo(
    slug="explore",
    title="Explore: your privacy objects side by side",
    lead=("Each curve is one object you built. <b>Privacy profile</b>: δ(ε) with the closest μ-GDP "
          "curve (dashed); <b>Trade-off</b>: how well the best test can tell neighbouring inputs "
          "apart; <b>Rényi DP</b>; <b>Attack risk</b>: the best membership test's TPR at each FPR. "
          "Move δ and the FPR to read the numbers."),
    theory=(
        "<p>A privacy profile δ(ε) is the smallest δ for which the object is (ε, δ)-DP ("
        + cite("liu2022", "Section 2") + "). The dashed curve is the μ-GDP profile "
        "δ<sub>μ</sub>(ε) = Φ(−ε/μ + μ/2) − e<sup>ε</sup>Φ(−ε/μ − μ/2) ("
        + cite("dong2022gaussian", "Corollary 2.13") + "): the exact μ where the object is Gaussian "
        "(or a composition of Gaussians), the certified μ where it is pure DP ("
        + cite("liu2022", "result “GDPT”") + ": the smallest μ whose curve lies above the whole "
        "profile, to 1e-3), else the μ whose curve passes through the object's (ε(δ), δ) at the "
        "chosen δ. Where the object's curve lies above it the object is not μ-GDP for that μ.</p>"
        "<p>The trade-off β(α) = 1 − TPR(α) and the attack risk come from the profile ("
        + cite("dong2022gaussian", "result “f-DP as (ε, δ(ε))-DP for all ε”") + "; " + cite("kulynych2024attack")
        + "): no membership test does better; every value is rounded to the safe side "
        "(risk.tpr_at_fpr). Rényi DP curves (" + cite("mironov2017") + ") are drawn where the "
        "object's RDP is known in closed form, summed over the parts of a composition.</p>"),
    references=("liu2022", "dong2022gaussian", "kulynych2024attack", "mironov2017"),
)


def explore(*objects) -> AppShell:
    """An interactive view of up to :data:`MAX_OBJECTS` privacy objects side by side, in the app
    shell (see the module docstring). ``ValueError`` naming ``objects`` when none, too many, or
    one without a privacy profile is given.

    >>> from dpexplore.mechanisms import Laplace
    >>> app = explore(Laplace(1.0))
    >>> "Laplace(scale=1.0, sensitivity=1.0)," in app.controller.snippet()
    True
    """
    if not 1 <= len(objects) <= MAX_OBJECTS:
        raise ValueError(f"objects must be 1 to {MAX_OBJECTS} privacy objects, got {len(objects)}")
    for o in objects:
        display.profile_of(o)          # ValueError naming the object
        try:
            hash(o)
        except TypeError as exc:
            raise ValueError(f"objects must have scalar parameters, got {o!r}") from exc
    controls = {
        "delta": log_slider("δ", 1e-5, 1e-12, 1e-1, steps_per_decade=10),
        "fpr": log_slider("FPR", 0.01, 1e-4, 0.5, steps_per_decade=10),
    }
    ctrl = ExploreController(objects, controls, MessageArea())
    return app_shell(INFO, ctrl, controls=controls, plots=ctrl.tabs, readouts=[ctrl.readout])
