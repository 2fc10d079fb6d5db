"""DP-SGD planner: what ε does a training run cost, what noise does a target ε need, and what
does the result mean for a membership-inference attacker?

DP-SGD (Abadi et al. 2016) takes T = ⌈epochs · N / B⌉ steps, each a Gaussian mechanism with noise
multiplier σ run on a Poisson-sampled batch (rate q = B/N). The app plots ε(δ) against the number
of epochs under three accountants:

* the tight one: the privacy loss distribution of the subsampled Gaussian, both directions of the
  add/remove relation, composed by FFT (:func:`dpexplore.accounting.composition.dpsgd_epsilon`, "pld";
  Koskela, Jälkö & Honkela 2020; Zhu, Dong & Wang 2022), never below the truth;
* Rényi DP (Mironov, Talwar & Zhang 2019), valid and looser;
* the central-limit GDP approximation (Bu, Dong, Long & Su 2020), an approximation, not a guarantee;

and, at the end of training, the attack risk of the tight profile (Dong, Roth & Su 2022;
Kulynych et al. 2024): the true-positive rate of the most powerful membership test at a
false-positive rate of 1 % and 0.1 %, and the advantage max(TPR − FPR).

>>> r = compute_planner(PlannerSpec(n=100000, batch=1000, epochs=10, sigma=1.0, delta=1e-6))
>>> r.steps, r.q
(1000, 0.01)
>>> bool(r.eps_pld < r.eps_rdp)
True
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import ipywidgets as W
import numpy as np

from .._numerics import round_up_significant
from ..bibliography.references import cite
from ..ui.controls import OKABE_ITO, Controller, MessageArea, param_slider
from ..ui.plotwidget import PlotlyWidget
from ..ui.shell import AppInfo, AppShell, app_shell
from ..ui.views import LOG_AXIS, axes_layout, line_trace
from ._checks import Param, check_params, params_by_name, param_values, snippet_assign

__all__ = [
    "PlannerSpec",
    "PlannerResult",
    "compute_planner",
    "PlannerController",
    "build_dpsgd_planner",
    "INFO",
    "N_RANGE",
    "BATCH_RANGE",
    "EPOCHS_RANGE",
    "SIGMA_RANGE",
    "DELTA_RANGE",
    "EPS_RANGE",
    "CURVE_POINTS",
    "CURVE_GRID",
    "RISK_FPRS",
]

# the sliders' grids hold the round defaults (a log slider's positions are min·10^(k/steps))
N_RANGE = (1000, 1000000)  # dataset size N
BATCH_RANGE = (10, 10000)  # expected batch size B (q = B/N, at most 1)
EPOCHS_RANGE = (1, 100)
SIGMA_RANGE = (10**-0.3, 20.0)  # noise multiplier σ = noise std / clipping norm (0.501 … 20)
DELTA_RANGE = (1e-12, 1e-2)
EPS_RANGE = (0.1, 20.0)  # the target ε of "σ for target ε"
#: the planner's parameters: its sliders and the checks of its spec (reals: slider positions
#: rounded at the ends are accepted)
PARAMS = params_by_name(
    Param("n", *N_RANGE, "log", "N", "examples", integer=True, steps_per_decade=10),
    Param("batch", *BATCH_RANGE, "log", "B", "expected batch", integer=True, steps_per_decade=10),
    Param("epochs", *EPOCHS_RANGE, "log", integer=True, steps_per_decade=10),
    Param("sigma", *SIGMA_RANGE, "log", "σ", "noise multiplier", steps_per_decade=20, rel_tol=1e-9),
    Param("delta", *DELTA_RANGE, "log", "δ", steps_per_decade=4, readout_format=".1e", rel_tol=1e-9),
    Param("target_eps", *EPS_RANGE, "linear", "target ε", step=0.1, rel_tol=1e-9),
)
#: parameters the "Reproduce in Python" snippet leaves out, and why
SNIPPET_SKIP = {"target_eps": "only the σ button reads it; the snippet takes the σ it sets"}
#: points of the ε-against-epochs curves
CURVE_POINTS = 24
#: FFT grid of the tight accountant in the app (dpsgd_epsilon's default is 2¹⁴: this one is
#: ~1e-4 looser, never below the truth, and ~3× faster, which keeps slider steps quick)
CURVE_GRID = 2**11
#: false-positive rates at which the attack's true-positive rate is read out
RISK_FPRS = (0.01, 0.001)
#: the FPR grid of the attack-risk plot
_ROC_FPR = np.geomspace(1e-5, 1.0, 61)


@dataclass(frozen=True)
class PlannerSpec:
    """The planner's setting (hashable: the cache key). ``target_eps`` is used only by the
    "σ for target ε" button; it does not change the plots."""

    n: int = 100000
    batch: int = 1000
    epochs: int = 10
    sigma: float = 1.0
    delta: float = 1e-6
    target_eps: float = 3.0

    @property
    def q(self) -> float:
        """The sampling rate B/N (1 when the batch is the whole dataset):
        :func:`dpexplore.accounting.composition.dpsgd_steps`."""
        from ..accounting.composition import dpsgd_steps

        return dpsgd_steps(self.n, self.batch, self.epochs)[0]

    @property
    def steps(self) -> int:
        """T = ⌈epochs / q⌉ training steps: :func:`dpexplore.accounting.composition.dpsgd_steps`."""
        from ..accounting.composition import dpsgd_steps

        return dpsgd_steps(self.n, self.batch, self.epochs)[1]

    def check(self) -> None:
        check_params(self, PARAMS)


@dataclass(frozen=True)
class PlannerResult:
    """The curves (ε against epochs under each accountant), the values at the chosen epochs and
    the attack risk at the end of training."""

    spec: PlannerSpec
    q: float
    steps: int
    epochs_grid: np.ndarray
    eps_pld_curve: np.ndarray
    eps_rdp_curve: np.ndarray
    eps_gdp_curve: np.ndarray
    eps_pld: float
    eps_rdp: float
    eps_gdp: float
    tpr: tuple  # TPR at RISK_FPRS
    advantage: float
    roc_fpr: np.ndarray
    roc_tpr: np.ndarray


def _curve_steps(t: int) -> np.ndarray:
    """CURVE_POINTS step counts evenly spread up to T (distinct, increasing, ending at T)."""
    ks = np.unique(np.ceil(np.linspace(0, t, CURVE_POINTS + 1)[1:] - 1e-9).astype(np.int64))
    return ks[ks >= 1]


@functools.lru_cache(maxsize=64)
def _curves(sigma: float, q: float, steps: int, delta: float):
    from ..accounting import composition as C

    ks = _curve_steps(steps)
    pld = C.dpsgd_epsilon(sigma, q, ks, delta, grid_size=CURVE_GRID)
    rdp = C.dpsgd_epsilon(sigma, q, ks, delta, accountant="rdp")
    gdp = C.dpsgd_epsilon(sigma, q, ks, delta, accountant="gdp")
    return ks, pld, rdp, gdp


def compute_planner(spec: PlannerSpec) -> PlannerResult:
    """Every number the planner shows for ``spec`` (one call per slider step, cached by the
    controller): the three accountants' ε(δ) on CURVE_POINTS training lengths up to the chosen
    epochs (:func:`dpexplore.accounting.composition.dpsgd_epsilon` with an array of step counts), the values at
    T steps, and the attack risk of the tight T-step profile
    (:func:`dpexplore.accounting.conversions.tpr_at_fpr`, :func:`dpexplore.accounting.conversions.advantage`).

    >>> r = compute_planner(PlannerSpec(n=10000, batch=100, epochs=5, sigma=2.0, delta=1e-6))
    >>> r.steps, len(r.epochs_grid) == len(r.eps_pld_curve)
    (500, True)
    >>> compute_planner(PlannerSpec(sigma=100.0))
    Traceback (most recent call last):
    ...
    ValueError: sigma = 100 is outside this lab's range [0.501187, 20]
    """
    from ..accounting import composition as C
    from ..accounting import conversions
    from ..mechanisms import Gaussian, subsample

    spec.check()
    q, t = spec.q, spec.steps
    ks, pld, rdp, gdp = _curves(float(spec.sigma), q, t, float(spec.delta))
    profile = C.compose(subsample(Gaussian(float(spec.sigma)), q), t, grid_size=CURVE_GRID)
    e_pld = float(C.dpsgd_epsilon(spec.sigma, q, t, spec.delta, grid_size=CURVE_GRID))
    e_rdp = float(C.dpsgd_epsilon(spec.sigma, q, t, spec.delta, accountant="rdp"))
    e_gdp = float(C.dpsgd_epsilon(spec.sigma, q, t, spec.delta, accountant="gdp"))
    # one call for the readout's FPRs and the plot's (one ε grid of the profile, not three)
    both = np.asarray(conversions.tpr_at_fpr(profile, np.concatenate([RISK_FPRS, _ROC_FPR])), dtype=float)
    tpr, roc = tuple(float(x) for x in both[: len(RISK_FPRS)]), both[len(RISK_FPRS) :]
    adv = float(conversions.advantage(profile))
    return PlannerResult(spec, q, t, ks * q, pld, rdp, gdp, e_pld, e_rdp, e_gdp, tpr, adv, _ROC_FPR, roc)


def sigma_for_target(spec: PlannerSpec) -> float:
    """The smallest noise multiplier for which the run of ``spec`` is (target_eps, δ)-DP under the
    tight accountant (:func:`dpexplore.accounting.composition.dpsgd_sigma`), rounded up to 3
    significant digits (never down: 1.001 gives 1.01)."""
    from ..accounting import composition as C

    spec.check()
    return round_up_significant(C.dpsgd_sigma(spec.target_eps, spec.delta, spec.q, spec.steps), 3)


def _fmt_eps(e: float) -> str:
    return "∞" if not math.isfinite(e) else f"{e:.4g}"


class PlannerController(Controller):
    """Sliders N, B, epochs, σ, δ (and the target ε of the σ button) → :func:`compute_planner` →
    the ε-against-epochs plot and the attack-risk plot."""

    compute = staticmethod(compute_planner)
    cache_size = 64
    prefetch = True  # a new setting costs ~0.15-0.2 s: the next slider step is computed ahead

    def read_spec(self) -> PlannerSpec:
        return PlannerSpec(**param_values(self.controls, PARAMS))

    # -- figures ---------------------------------------------------------------------------------
    @staticmethod
    def _eps_traces(r: PlannerResult) -> list[dict]:
        x = r.epochs_grid
        fin = lambda a: np.where(np.isfinite(a), a, np.nan)  # noqa: E731
        return [
            line_trace("tight (PLD)", x, fin(r.eps_pld_curve), OKABE_ITO[0], 3),
            line_trace("Rényi DP", x, fin(r.eps_rdp_curve), OKABE_ITO[1], 2, "dash"),
            line_trace("GDP approximation (not a guarantee)", x, fin(r.eps_gdp_curve), OKABE_ITO[2], 2, "dot"),
            {
                "type": "scatter",
                "mode": "markers",
                "name": "chosen epochs",
                "x": [r.spec.epochs],
                "y": [r.eps_pld if math.isfinite(r.eps_pld) else np.nan],
                "marker": {"color": OKABE_ITO[5], "size": 11},
                "showlegend": False,
            },
        ]

    @staticmethod
    def _risk_traces(r: PlannerResult) -> list[dict]:
        return [
            line_trace("best membership test (tight profile)", r.roc_fpr, r.roc_tpr, OKABE_ITO[0], 3),
            line_trace("random guess (TPR = FPR)", r.roc_fpr, r.roc_fpr, "#777777", 2, "dot"),
            {
                "type": "scatter",
                "mode": "markers",
                "name": "FPR 1 % and 0.1 %",
                "x": list(RISK_FPRS),
                "y": list(r.tpr),
                "marker": {"color": OKABE_ITO[5], "size": 11},
            },
        ]

    def figures(self, result: PlannerResult) -> list[PlotlyWidget]:
        eps_layout = axes_layout(
            "ε against epochs",
            "epochs",
            "ε",
            from_zero=True,
            showlegend=True,
        )
        risk_layout = axes_layout(
            "Attack risk",
            "false-positive rate",
            "true-positive rate (at most)",
            xaxis=LOG_AXIS,
            yaxis={"range": [0, 1.02]},
            showlegend=True,
        )
        return [
            PlotlyWidget(data=self._eps_traces(result), layout=eps_layout),
            PlotlyWidget(data=self._risk_traces(result), layout=risk_layout),
        ]

    def render(self, result: PlannerResult) -> None:
        for fig, traces in zip(self.figs, (self._eps_traces(result), self._risk_traces(result))):
            fig.update(data=traces)

    readout_widgets = {"readout": ""}

    def write_readouts(self, r: PlannerResult) -> None:
        self.readout.value = self._readout_text(r)

    @staticmethod
    def _readout_text(r: PlannerResult) -> str:
        s = r.spec
        inv_n = 1.0 / s.n
        delta_note = (
            f"δ = {s.delta:.3g} &lt; 1/N = {inv_n:.3g}"
            if s.delta < inv_n
            else f"<b>δ = {s.delta:.3g} ≥ 1/N = {inv_n:.3g}</b>: a mechanism that publishes one "
            f"random record would meet it; choose δ well below 1/N"
        )
        return (
            f"q = B/N = {r.q:.4g}, T = {r.steps:,} steps<br>"
            f"ε after {s.epochs} epochs: tight <b>{_fmt_eps(r.eps_pld)}</b>, "
            f"Rényi DP {_fmt_eps(r.eps_rdp)}, GDP approx. {_fmt_eps(r.eps_gdp)}<br>"
            f"attack: TPR ≤ <b>{r.tpr[0]:.4g}</b> at FPR 1 %, ≤ <b>{r.tpr[1]:.4g}</b> at FPR 0.1 %; "
            f"advantage ≤ {r.advantage:.4g}<br>{delta_note}"
        )

    def snippet(self) -> str:
        s = self.spec
        return (
            "from dpexplore import mechanisms\nfrom dpexplore.accounting import composition, conversions\n\n"
            + snippet_assign(s, PARAMS, skip=SNIPPET_SKIP)
            + "q, steps = composition.dpsgd_steps(n, batch, epochs)   # q = min(1, B/N), T = ceil(epochs/q)\n"
            'print(f"q = B/N = {q:.4g}, T = {steps:,} steps")\n'
            f"grid = 2**{CURVE_GRID.bit_length() - 1}   # the app's FFT grid for the tight accountant "
            "(the default, 2**14, is ~1e-4 tighter)\n"
            "for accountant in ('pld', 'rdp', 'gdp'):   # tight, Renyi DP, CLT approximation\n"
            "    eps = composition.dpsgd_epsilon(sigma, q, steps, delta, accountant=accountant, grid_size=grid)\n"
            '    print(accountant, f"{eps:.4g}")\n'
            "mechanism = mechanisms.subsample(mechanisms.Gaussian(sigma), q)\n"
            "profile = composition.compose(mechanism, steps, grid_size=grid)\n"
            "for fpr in (0.01, 0.001):   # the most powerful membership test's TPR, at most\n"
            '    print(f"TPR at FPR {100 * fpr:g} %: {conversions.tpr_at_fpr(profile, fpr):.4g}")\n'
            'print(f"advantage: {conversions.advantage(profile):.4g}")\n'
        )


INFO = AppInfo(
    slug="dpsgd_planner",
    title="DP-SGD planner",
    lead=(
        "What ε does a DP-SGD training run cost, and what does it mean for an attacker? Move the "
        "dataset size, batch size, epochs and noise multiplier σ: the plot shows ε under the tight "
        "accountant, Rényi DP and the GDP approximation; the second tab shows the best membership "
        "test's power at the end of training."
    ),
    theory=(
        r"<p>DP-SGD (" + cite("abadi2016deep") + r") clips each example's gradient to norm C, adds "
        r"Gaussian noise of standard deviation σC to the sum over a batch, and samples each batch by "
        r"keeping every example independently with probability q = B/N. One epoch is 1/q steps, so "
        r"a run is T = ⌈epochs/q⌉ Poisson-subsampled Gaussian mechanisms. Under the add/remove "
        r"relation one step compares</p>"
        r"$$P = (1-q)\,\mathcal N(0,\sigma^2) + q\,\mathcal N(1,\sigma^2) \quad\text{with}\quad "
        r"Q = \mathcal N(0,\sigma^2)$$"
        r"<p>(and the reverse pair); the worse of the two directions, each composed T times, is the "
        r"tight privacy profile (" + cite("zhu2022optimal") + r"). "
        r"<b>Tight (PLD)</b>: the privacy loss distribution of one step, discretized so that δ is "
        r"never below the truth (connect-the-dots, " + cite("doroshenko2022connect") + r") and "
        r"composed by FFT (" + cite("koskela2020computing") + r"). "
        r"<b>Rényi DP</b>: the exact RDP of the subsampled Gaussian at integer orders ("
        + cite("mironov2019sampled", "Section 3.3")
        + r"), summed over steps and converted to "
        r"(ε, δ) (" + cite("canonne2020discrete", "Proposition 12") + r"): valid and looser. "
        r"<b>GDP approximation</b>: by the central limit theorem the run is approximately μ-GDP with "
        r"$$\mu = q\sqrt{T\,(e^{1/\sigma^2}-1)}$$ ("
        + cite("bu2020deep", "result “CLT approximation of noisy SGD”")
        + r"); it is "
        r"an approximation, not a guarantee, and can be below the true ε.</p>"
        r"<p><b>Attack risk.</b> An (ε(δ))-profile bounds every membership-inference test: at "
        r"false-positive rate α its true-positive rate is at most 1 − f(α), where "
        r"$$f(\alpha) = \sup_{\varepsilon \ge 0}\max\{0,\ 1-\delta(\varepsilon)-e^{\varepsilon}\alpha,\ "
        r"e^{-\varepsilon}(1-\delta(\varepsilon)-\alpha)\}$$ is the trade-off function ("
        + cite("dong2022gaussian", "result “f-DP as (ε, δ(ε))-DP for all ε”")
        + r"); the advantage max(TPR − FPR) is δ(0). "
        r"Reading a privacy guarantee as attack risk at a low FPR follows "
        + cite("kulynych2024attack")
        + r". The δ of a run should be well below 1/N: a mechanism that publishes one random "
        r"record of the dataset is (0, 1/N)-DP.</p>"
    ),
)


def build_dpsgd_planner(
    n: int = 100000,
    batch: int = 1000,
    epochs: int = 10,
    sigma: float = 1.0,
    delta: float = 1e-6,
    target_eps: float = 3.0,
) -> AppShell:
    """The DP-SGD planner in the shell: sliders N, B, epochs, σ, δ, the target ε and its
    "σ for target ε" button in the panel; the ε-against-epochs plot; the attack-risk plot in a tab.

    >>> app = build_dpsgd_planner()
    >>> app.controller.spec.steps, len(app.figs)
    (1000, 2)
    """
    controls = {
        k: param_slider(PARAMS[k], v)
        for k, v in (
            ("n", n),
            ("batch", batch),
            ("epochs", epochs),
            ("sigma", sigma),
            ("delta", delta),
            ("target_eps", target_eps),
        )
    }
    ctrl = PlannerController(controls, MessageArea())
    button = W.Button(
        description="Set σ for the target ε", tooltip="the smallest σ (tight accountant)", layout=W.Layout(width="auto")
    )

    def solve(_):
        try:
            spec = ctrl.read_spec()
            s = sigma_for_target(spec)
        except ValueError as exc:
            ctrl.message.show(str(exc))
            return
        lo, hi = SIGMA_RANGE
        if not lo <= s <= hi:
            ctrl.message.show(
                f"σ = {s:.3g} is needed for ε = {spec.target_eps:.3g}, outside this "
                f"app's range [{lo:g}, {hi:g}]: σ stays at {spec.sigma:.3g}.",
                kind="info",
            )
            return
        w = controls["sigma"]
        pos = math.ceil((math.log10(s) - w.min) / w.step - 1e-9)
        value = next(v for v in (w._at(pos), w._at(pos + 1)) if v >= s)  # the position at or above s
        w.value = min(value, hi)
        if ctrl.last_error is None:
            ctrl.message.show(
                f"ε = {spec.target_eps:.3g} needs σ ≥ {s:.3g}: σ is set to {w.value:.4g}, "
                f"the slider position at or above it.",
                kind="info",
            )

    button.on_click(solve)
    panel = [*controls.values(), button]
    return app_shell(INFO, ctrl, controls=panel, plots=ctrl.figs, readouts=[ctrl.readout])
