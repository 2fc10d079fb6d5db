"""Demo dashboard: the μ-GDP privacy profile δ_μ(ε) (a small proving app for the serving layer).

It shows the μ-GDP privacy profile (Dong, Roth & Su (2022), Corollary 2.13; restated in
Liu et al. (2022), Theorem 3.1):

    δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2),

the privacy profile of the Gaussian mechanism with μ = Δ/σ, drawn on a log y axis over
ε ∈ [0, EPS_PLOT_MAX], with a marker at the chosen ε. Values come from
:class:`dpexplore.accounting.profiles.GaussianDPProfile`.

>>> spec = DemoSpec(eps=1.0, mu=1.0)
>>> r = compute_demo(spec)
>>> round(r.delta_at_eps, 6)
0.126937
>>> app = build_demo()
>>> type(app).__name__
'AppShell'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..accounting.profiles import GaussianDPProfile
from ..bibliography.references import cite
from ..ui.controls import OKABE_ITO, Controller, MessageArea, param_slider
from ..ui.plotwidget import PlotlyWidget
from ..ui.shell import AppInfo, AppShell, app_shell
from ..ui.views import LOG_AXIS, axes_layout, line_trace
from ._checks import Param, check_params, param_values, params_by_name, snippet_assign

__all__ = [
    "DemoSpec",
    "DemoResult",
    "compute_demo",
    "DemoController",
    "build_demo",
    "EPS_PLOT_MAX",
    "MU_LIMIT",
    "N_POINTS",
    "INFO",
    "PARAMS",
]

#: the plotted ε range is [0, EPS_PLOT_MAX]
EPS_PLOT_MAX = 10.0
#: beyond this μ the profile is δ ≥ 0.99 on the whole plotted range: the demo refuses it
MU_LIMIT = 8.0
#: number of points of the curve
N_POINTS = 201
_NO_PRIVACY = "beyond it delta(eps) > 0.99 on the whole plot: essentially no privacy"
#: the demo's parameters: its sliders (every position valid) and the checks of its spec
PARAMS = params_by_name(
    Param("eps", 0.01, EPS_PLOT_MAX, "log", "ε", steps_per_decade=50, accept=(0.0, None)),
    Param("mu", 0.1, MU_LIMIT, "linear", "μ", step=0.05, accept=(0.0, MU_LIMIT), interval="(]", why=_NO_PRIVACY),
)


@dataclass(frozen=True)
class DemoSpec:
    """The demo's parameters (hashable: the cache key)."""

    eps: float
    mu: float


@dataclass(frozen=True)
class DemoResult:
    """Everything the demo draws: the curve (ε grid, δ) and the marker (ε, δ(ε))."""

    eps_grid: np.ndarray
    delta_grid: np.ndarray
    eps: float
    delta_at_eps: float


def compute_demo(spec: DemoSpec) -> DemoResult:
    """δ_μ on the plotted grid and at ``spec.eps`` (Dong, Roth & Su (2022), Corollary 2.13), one
    call per slider step.

    Raises ``ValueError`` naming the parameter (:data:`PARAMS`): ε < 0, or μ ∉ (0, MU_LIMIT] (beyond
    MU_LIMIT no meaningful privacy is left on the plot).

    >>> compute_demo(DemoSpec(eps=0.0, mu=2.0)).delta_at_eps   # 2Φ(μ/2) − 1 = 0.68268949213708590, rounded up
    0.6826894921370864
    >>> compute_demo(DemoSpec(eps=1.0, mu=9.0))
    Traceback (most recent call last):
    ...
    ValueError: mu must lie in (0, 8] (beyond it delta(eps) > 0.99 on the whole plot: essentially no privacy), got mu = 9.0
    """
    check_params(spec, PARAMS)
    profile = GaussianDPProfile(spec.mu)
    grid = np.linspace(0.0, EPS_PLOT_MAX, N_POINTS)
    return DemoResult(grid, np.asarray(profile.delta(grid)), spec.eps, profile.delta(spec.eps))


class DemoController(Controller):
    """Controller of the demo: sliders ``eps`` and ``mu`` → :func:`compute_demo` → one figure."""

    compute = staticmethod(compute_demo)

    def read_spec(self) -> DemoSpec:
        return DemoSpec(**param_values(self.controls, PARAMS))

    @staticmethod
    def _traces(r: DemoResult) -> list[dict]:
        # δ = 0 cannot be drawn on a log axis: to_json turns it into a gap via NaN → None
        y = np.where(r.delta_grid > 0, r.delta_grid, np.nan)
        return [
            line_trace("δ_μ(ε)", r.eps_grid, y, OKABE_ITO[0]),
            {
                "type": "scatter",
                "mode": "markers",
                "name": "chosen ε",
                "x": [r.eps],
                "y": [r.delta_at_eps if r.delta_at_eps > 0 else np.nan],
                "marker": {"color": OKABE_ITO[3], "size": 10},
            },
        ]

    def figures(self, result: DemoResult) -> list[PlotlyWidget]:
        layout = axes_layout("Privacy profile of μ-GDP", "ε", "δ(ε)", yaxis=LOG_AXIS, showlegend=True)
        return [PlotlyWidget(data=self._traces(result), layout=layout)]

    def render(self, result: DemoResult) -> None:
        self.figs[0].update(data=self._traces(result))

    readout_widgets = {"readout": ""}

    def write_readouts(self, r: DemoResult) -> None:
        self.readout.value = f"δ(ε = {r.eps:.3g}) = <b>{r.delta_at_eps:.4g}</b>"

    def snippet(self) -> str:
        s = self.spec
        return (
            "from dpexplore import GaussianDPProfile\n\n"
            + snippet_assign(s, PARAMS)
            + "delta = GaussianDPProfile(mu).delta(eps)   # the mu-GDP privacy profile at eps\n"
            'print(f"delta(eps = {eps:.3g}) = {delta:.4g}")\n'
        )


INFO = AppInfo(
    slug="demo",
    title="Gaussian differential privacy: the privacy profile",
    lead=(
        "The curve is δ(ε), the smallest δ for which a μ-GDP mechanism (the Gaussian mechanism "
        "with μ = Δ/σ) is (ε, δ)-DP. Move ε to read δ off the curve; move μ to see how more "
        "noise (smaller μ) lowers the whole curve."
    ),
    theory=(
        r"<p>A mechanism is μ-GDP when telling its outputs on two neighbouring datasets apart is "
        r"no easier than telling N(0, 1) from N(μ, 1). Equivalently, it is (ε, δ<sub>μ</sub>(ε))-DP "
        r"for every ε ≥ 0, with the privacy profile ("
        + cite("dong2022gaussian", "Corollary 2.13")
        + r"; restated in "
        + cite("liu2022", "Theorem 3.1")
        + r")</p>"
        r"$$\delta_\mu(\varepsilon) = \Phi\!\left(-\frac{\varepsilon}{\mu} + \frac{\mu}{2}\right)"
        r" - e^{\varepsilon}\,\Phi\!\left(-\frac{\varepsilon}{\mu} - \frac{\mu}{2}\right).$$"
        r"<p>The Gaussian mechanism with sensitivity Δ and noise σ is μ-GDP with μ = Δ/σ "
        r"(" + cite("balle2018improving", "Theorem 8") + r" give the same curve as the exact "
        r"privacy profile of the Gaussian mechanism). The app refuses μ &gt; "
        + f"{MU_LIMIT:g}"
        + r": δ(ε) then exceeds 0.99 on the whole plot.</p>"
    ),
    references=("dong2022gaussian", "liu2022", "balle2018improving"),
)


def build_demo(eps: float = 1.0, mu: float = 1.0) -> AppShell:
    """The demo app in the shell: ε and μ sliders, the readout, one plot.

    >>> app = build_demo(eps=0.5, mu=2.0)
    >>> [type(f).__name__ for f in app.figs], app.controller.spec
    (['PlotlyWidget'], DemoSpec(eps=0.5, mu=2.0))
    """
    controls = {k: param_slider(PARAMS[k], v) for k, v in (("eps", eps), ("mu", mu))}
    ctrl = DemoController(controls, MessageArea())
    return app_shell(INFO, ctrl, controls=controls, plots=ctrl.figs, readouts=[ctrl.readout])
