"""``dpexplore.explore(*objects)``: any privacy objects a practitioner built, side by side, in the
app shell.

Up to :data:`MAX_OBJECTS` objects (mechanisms, subsampled mechanisms, profiles, compositions such
as a DP-SGD run ``compose(subsample(Gaussian(σ), q), T)``, filters) in four views, one tab each,
drawn by the shared builders of :mod:`dpexplore.ui.views` (the Notion converter and the
Composition explorer draw their profiles, trade-off and attack curves with the same ones):

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

import html
import re
from dataclasses import dataclass

import numpy as np

from .. import display
from ..accounting import risk
from ..display import format_up
from ..bibliography.references import cite
from .controls import OKABE_ITO, Controller, MessageArea, log_slider
from .plotwidget import PlotlyWidget
from .shell import AppInfo, AppShell, app_shell
from .views import attack_layout, matched_mu, object_curves, object_traces, profile_layout, rdp_layout, tradeoff_layout

__all__ = ["explore", "MAX_OBJECTS", "ExploreController"]

#: at most this many objects side by side (each costs its curves once)
MAX_OBJECTS = 6


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
    eps_at_delta: tuple  # ε(δ) per object (inf: none)
    mus: tuple  # the GDP curve's μ per object (None: none)
    mu_how: tuple  # "exact", "certified" or "through ε(δ)"
    tpr_at: tuple


def compute_explore(spec: ExploreSpec) -> ExploreResult:
    """Every object's curves (cached per object) and the slider-dependent readouts."""
    curves = tuple(object_curves(o) for o in spec.objects)
    eps_at = tuple(float(np.asarray(c.profile.epsilon(spec.delta))) for c in curves)
    through = matched_mu(eps_at, spec.delta)  # one bracket search for every object
    mus = tuple(c.mu if c.mu is not None else m for c, m in zip(curves, through))
    tprs = tuple(float(risk.tpr_at_fpr(c.profile, spec.fpr)) for c in curves)
    how = tuple(c.mu_how if c.mu is not None else f"through ε(δ = {spec.delta:.3g})" for c in curves)
    return ExploreResult(curves, spec.delta, spec.fpr, eps_at, mus, how, tprs)


class ExploreController(Controller):
    """The controller of :func:`explore`: δ and FPR sliders → :func:`compute_explore` → four
    figures (see the module docstring)."""

    compute = staticmethod(compute_explore)
    cache_size = 64
    readout_widgets = {"readout": ""}

    def __init__(self, objects, controls, message=None):
        self.objects = tuple(objects)
        super().__init__(controls, message)

    def read_spec(self) -> ExploreSpec:
        return ExploreSpec(self.objects, float(self.controls["delta"].value), float(self.controls["fpr"].value))

    @staticmethod
    def _traces(r: ExploreResult) -> dict:
        return object_traces(r.curves, r.mus, r.mu_how, r.eps_at_delta, r.delta, r.fpr, r.tpr_at)

    def figures(self, r: ExploreResult):
        t = self._traces(r)
        self.fig_profile = PlotlyWidget(
            t["profile"], profile_layout("Privacy profiles δ(ε) and the closest μ-GDP curves")
        )
        self.fig_tradeoff = PlotlyWidget(
            t["tradeoff"], tradeoff_layout("Trade-off curves: the best test's type II error β at type I error α")
        )
        self.fig_rdp = PlotlyWidget(t["rdp"], rdp_layout("Rényi DP ε̂(α) (objects whose Rényi DP is known)"))
        self.fig_attack = PlotlyWidget(
            t["attack"], attack_layout("Attack risk: the best membership test's TPR at each FPR")
        )
        self.tabs = [
            ("Privacy profile", [self.fig_profile]),
            ("Trade-off", [self.fig_tradeoff]),
            ("Rényi DP", [self.fig_rdp]),
            ("Attack risk", [self.fig_attack]),
        ]
        return [self.fig_profile, self.fig_tradeoff, self.fig_rdp, self.fig_attack]

    def render(self, r: ExploreResult) -> None:
        t = self._traces(r)
        for fig, traces in ((self.fig_profile, t["profile"]), (self.fig_attack, t["attack"])):
            fig.update(data=traces)

    def write_readouts(self, r: ExploreResult) -> None:
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
                f"TPR at FPR {r.fpr:.3g}: <b>{html.escape(format_up(t))}</b></li>"
            )
        return (
            f'<ul style="list-style:none;padding:0;margin:4px 0">{"".join(items)}</ul>'
            '<p class="dpexplore-note">Values rounded up (the safe side).</p>'
        )

    def snippet(self) -> str:
        s = self.spec
        calls = [c.call for c in self.result.curves]
        return _snippet(calls, s.delta, s.fpr)


def _snippet(calls, delta, fpr) -> str:
    """Python that rebuilds the objects from their reprs and prints the readouts."""
    from .. import mechanisms
    from ..accounting import composition, conversions, filters, profiles

    text = " ".join(calls)
    imports = []
    for mod, names in (
        ("dpexplore.mechanisms", mechanisms.__all__),
        ("dpexplore.accounting.profiles", profiles.__all__ + ["ApproxDPProfile", "PureDPProfile"]),
        ("dpexplore.accounting.conversions", ["ZCDPProfile", "RDPProfile", "EquationProfile"]),
        ("dpexplore.accounting.composition", ["compose", "compose_all", "OptimalProfile"]),
        ("dpexplore.accounting.filters", [n for n in filters.__all__ if n[0].isupper()]),
    ):
        used = sorted({n for n in names if re.search(rf"(?<![\w.]){re.escape(n)}\(", text)})
        if used:
            imports.append(f"from {mod} import {', '.join(used)}")
    del composition, conversions
    body = ",\n    ".join(calls)
    return (
        "from dpexplore.accounting import risk\nfrom dpexplore.display import profile_of\n"
        + "\n".join(imports)
        + "\n\n"
        f"objects = [\n    {body},\n]\n"
        f"delta, fpr = {delta!r}, {fpr!r}\n"
        "for obj in objects:\n"
        "    p = profile_of(obj)   # the profile its card describes\n"
        "    print(repr(obj), 'eps =', p.epsilon(delta), 'TPR =', risk.tpr_at_fpr(p, fpr))\n"
    )


INFO = AppInfo(
    slug="explore",
    title="Explore: your privacy objects side by side",
    lead=(
        "Each curve is one object you built. <b>Privacy profile</b>: δ(ε) with the closest μ-GDP "
        "curve (dashed); <b>Trade-off</b>: how well the best test can tell neighbouring inputs "
        "apart; <b>Rényi DP</b>; <b>Attack risk</b>: the best membership test's TPR at each FPR. "
        "Move δ and the FPR to read the numbers."
    ),
    theory=(
        "<p>A privacy profile δ(ε) is the smallest δ for which the object is (ε, δ)-DP ("
        + cite("liu2022", "Section 2")
        + "). The dashed curve is the μ-GDP profile "
        "δ<sub>μ</sub>(ε) = Φ(−ε/μ + μ/2) − e<sup>ε</sup>Φ(−ε/μ − μ/2) ("
        + cite("dong2022gaussian", "Corollary 2.13")
        + "): the exact μ where the object is Gaussian "
        "(or a composition of Gaussians), the certified μ where it is pure DP ("
        + cite("liu2022", "result “GDPT”")
        + ": the smallest μ whose curve lies above the whole "
        "profile, to 1e-3), else the μ whose curve passes through the object's (ε(δ), δ) at the "
        "chosen δ. Where the object's curve lies above it the object is not μ-GDP for that μ.</p>"
        "<p>The trade-off β(α) = 1 − TPR(α) and the attack risk come from the profile ("
        + cite("dong2022gaussian", "result “f-DP as (ε, δ(ε))-DP for all ε”")
        + "; "
        + cite("kulynych2024attack")
        + "): no membership test does better; every value is rounded to the safe side "
        "(risk.tpr_at_fpr). Rényi DP curves (" + cite("mironov2017") + ") are drawn where the "
        "object's RDP is known in closed form, summed over the parts of a composition.</p>"
    ),
    references=("liu2022", "dong2022gaussian", "kulynych2024attack", "mironov2017"),
)


def explore(*objects) -> AppShell:
    """An interactive view of up to :data:`MAX_OBJECTS` privacy objects side by side, in the app
    shell (see the module docstring). ``ValueError`` naming ``objects`` when none or too many are
    given, and naming ``objects[i]`` for a class, a non-privacy object or one without a profile.

    >>> from dpexplore.mechanisms import Laplace
    >>> app = explore(Laplace(1.0))
    >>> "Laplace(scale=1.0, sensitivity=1.0)," in app.controller.snippet()
    True
    """
    if not 1 <= len(objects) <= MAX_OBJECTS:
        raise ValueError(f"objects must be 1 to {MAX_OBJECTS} privacy objects, got {len(objects)}")
    for i, o in enumerate(objects):
        display._profile_of(o, f"objects[{i}]")  # ValueError naming the argument
        try:
            hash(o)
        except TypeError as exc:
            raise ValueError(f"objects[{i}] must have scalar parameters, got {o!r}") from exc
    controls = {
        "delta": log_slider("δ", 1e-5, 1e-12, 1e-1, steps_per_decade=10),
        "fpr": log_slider("FPR", 0.01, 1e-4, 0.5, steps_per_decade=10),
    }
    ctrl = ExploreController(objects, controls, MessageArea())
    return app_shell(INFO, ctrl, controls=controls, plots=ctrl.tabs, readouts=[ctrl.readout])
