"""Auditing lab (Kamath 2024, "Privacy auditing in just one run"; Jagielski, Ullman & Oprea 2020; Nasr
et al. 2021; Steinke, Nasr & Jagielski 2023): an empirical *lower* bound on ε catches a privacy
bug when it exceeds the claimed ε.

One controller drives four views of one mechanism (Laplace, Gaussian, randomized response, or the
deliberately mis-calibrated Laplace of :func:`dpexplore.accounting.auditing.miscalibrated_laplace`):

1. **Distinguishing audit** (:func:`dpexplore.accounting.auditing.audit_mechanism`): ``trials`` runs on each
   of two neighbouring inputs choose the most powerful threshold test, ``trials`` fresh runs
   evaluate it, and :func:`dpexplore.accounting.auditing.empirical_epsilon` turns its error counts into

       ε_lb = max(log((1 − δ − FNR_ub)/FPR_ub), log((1 − δ − FPR_ub)/FNR_ub), 0),

   with Clopper–Pearson upper bounds FPR_ub, FNR_ub (each at (1 + c)/2, so ε ≥ ε_lb holds with
   probability ≥ c). An (ε, δ)-DP mechanism forces FPR + e^ε FNR ≥ 1 − δ (Kamath 2024; Kairouz, Oh &
   Viswanath 2015), so every test's (α, β) lies above f_{ε,δ}(α) = max(0, 1 − δ − e^ε α,
   e^{−ε}(1 − δ − α)) (:func:`dpexplore.accounting.conversions.tradeoff_approx`; Dong, Roth & Su 2022,
   Proposition 2.5).
2. **Trade-off plot**: the empirical (α, β) of every threshold test against the mechanism's true
   trade-off curve (its ``.tradeoff``) and the claimed f_{ε,δ}.
3. **How many trials** (:func:`dpexplore.accounting.auditing.trials_needed`): ε_lb against the number
   of trials at the expected (unrounded) error counts — for the ideal case (randomized response at
   the true ε, the corner p = 1/(1 + e^ε): :func:`~dpexplore.accounting.auditing.ideal_epsilon_lower_bound`,
   the model of ``trials_needed``, so the curve reaches 90 % of ε at its marker) and for the audit's
   own test (:func:`~dpexplore.accounting.auditing.expected_empirical_epsilon`) — with the simulated
   audit on it.
4. **One run** (:func:`dpexplore.accounting.auditing.one_run_audit`; Steinke, Nasr & Jagielski 2023): m
   canaries, each included with probability 1/2, audited from a single run; ε_lb against m
   (p_lo = Clopper–Pearson lower bound on the guessing accuracy, ε_lb = logit(p_lo) for δ = 0).

Every simulation is seeded (``seed``) and cached per part, so moving one slider reruns only what
depends on it; runs estimated above a second show a progress bar.

>>> r = compute_audit(AuditSpec(mechanism="Mis-calibrated Laplace", eps=1.0, trials=20000))
>>> r.eps_true, r.audit.eps_lb > 1.0, r.exposed
(2.0, True, True)
>>> r = compute_audit(AuditSpec(mechanism="Laplace", eps=1.0, trials=20000))
>>> r.audit.eps_lb <= 1.0, r.exposed
(True, False)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..accounting.auditing import (
    AuditResult,
    MechanismAuditPair,
    RandomizedResponseAuditPair,
    audit_mechanism,
    expected_empirical_epsilon,
    ideal_epsilon_lower_bound,
    laplace_audit_pair,
    miscalibrated_laplace,
    one_run_audit,
    one_run_epsilon_lower_bound,
    trials_needed,
)
from ..accounting.conversions import tradeoff_approx
from ..mechanisms import Gaussian, Laplace, RandomizedResponse
from ._checks import Param, check_params, param_values, params_by_name, snippet_assign
from ..ui.controls import OKABE_ITO, MessageArea, dropdown, param_slider
from ..ui.plotwidget import PlotlyWidget
from ..ui.staged import Memo, StagedController
from ..ui.shell import AppInfo, AppShell, app_shell
from ..ui.views import LOG_AXIS, axes_layout, line_trace, marker_trace

__all__ = [
    "MECHANISMS",
    "AuditSpec",
    "AuditResult",
    "AuditLabResult",
    "compute_audit",
    "Subject",
    "subject",
    "AuditLabController",
    "build_audit_lab",
    "ALPHA_GRID",
    "TRIALS_GRID",
    "one_run_curve",
    "m_grid",
    "M_GAUSSIAN_MAX",
]

MECHANISMS = ("Laplace", "Gaussian", "Randomized response", "Mis-calibrated Laplace")
EPS_RANGE = (0.01, 10.0)  # ε = 1 lies on the slider's log grid (front ends snap to it)
DELTA_RANGE = (1e-10, 1e-2)
TRIALS_RANGE = (100, 100000)
M_RANGE = (100, 1_000000)
#: the Gaussian's one-run bound (δ > 0) bisects over binomial tails: ~4 s of CPU at m = 10⁶, so
#: the lab stops at this m for it (an interactive-step limit, like the adaptive lab's n·d)
M_GAUSSIAN_MAX = 200000
GUESS_RANGE = (0.01, 1.0)
BUG_RANGE = (1.0, 4.0)
CONF_RANGE = (0.5, 0.999)
#: the lab's numeric parameters (its sliders); compute accepts more than a slider offers where
#: ``accept`` says so. ε, δ and the bug factor are checked by the mechanism under audit
#: (:data:`SUBJECTS`: ε > 0, δ in (0, 1) for the Gaussian, bug factor >= 1)
PARAMS = params_by_name(
    Param("eps", *EPS_RANGE, "log", "ε", "claimed", steps_per_decade=20),
    Param("delta", *DELTA_RANGE, "log", "δ", "Gaussian only", steps_per_decade=4, readout_format=".1e"),
    Param("bug", *BUG_RANGE, "linear", "bug factor", "mis-calibrated only", step=0.05),
    Param(
        "trials",
        *TRIALS_RANGE,
        "log",
        unit="per input",
        integer=True,
        steps_per_decade=10,
        accept=(10, 10 * TRIALS_RANGE[1]),
    ),
    Param("confidence", *CONF_RANGE, "linear", unit="probability", step=0.001, accept=(0.0, 1.0), interval="()"),
    Param("seed", 0, 999, unit="random seed", integer=True, accept=(0, None)),
    Param(
        "m",
        *M_RANGE,
        "log",
        unit="canaries",
        integer=True,
        steps_per_decade=10,
        accept=(2, M_RANGE[1]),
        what="of canaries",
    ),
    Param(
        "guess_frac",
        *GUESS_RANGE,
        "log",
        "guesses r/m",
        "fraction",
        steps_per_decade=10,
        accept=(0.0, 1.0),
        interval="(]",
    ),
)
#: parameters the "Reproduce in Python" snippet leaves out, and why (the bug factor: but for the
#: mis-calibrated Laplace)
SNIPPET_SKIP = {"delta": "the snippet audits the Laplace subjects only (δ = 0)"}
#: the parameters checked here, in this order
_CHECKED = [PARAMS[k] for k in ("trials", "seed", "m", "confidence", "guess_frac")]
#: type I errors α of the trade-off plot
ALPHA_GRID = np.linspace(0.0, 1.0, 201)
#: trial counts of the "how many trials" plot
TRIALS_GRID = np.unique(np.round(np.logspace(1, 8, 71))).astype(np.int64)
#: the ideal-case trials needed are searched up to this many
MAX_TRIALS = 10**9


@dataclass(frozen=True)
class AuditSpec:
    """The lab's parameters (hashable: the cache key). ``delta`` applies to the Gaussian only
    (the others claim pure ε-DP), ``bug`` to the mis-calibrated Laplace only."""

    mechanism: str = "Mis-calibrated Laplace"
    eps: float = 1.0
    delta: float = 1e-5
    bug: float = 2.0
    trials: int = 10000
    confidence: float = 0.95
    seed: int = 0
    m: int = 10000
    guess_frac: float = 1.0


@dataclass(frozen=True)
class Subject:
    """A mechanism under audit on neighbouring inputs: its samplers, claimed (ε, δ), its true ε
    at that δ, and its exact error rates for the test "guess input 1 iff out > t"."""

    name: str
    eps_claimed: float
    delta: float
    eps_true: float
    pair: object
    mechanism: object

    def sample_0(self, rng, size):
        return np.asarray(self.pair.sample_0(rng, size), dtype=np.float64)

    def sample_1(self, rng, size):
        return np.asarray(self.pair.sample_1(rng, size), dtype=np.float64)

    def tradeoff(self, alpha):
        """The true trade-off β(α) (the mechanism's ``.tradeoff``, Liu et al. 2022; Dong, Roth & Su 2022)."""
        return np.asarray(self.mechanism.tradeoff(alpha), dtype=np.float64)

    def error_rates(self, t: float) -> tuple[float, float]:
        """Exact (FPR, FNR) of "out > t", from the backend's audit pair (``error_rates`` of
        :class:`~dpexplore.accounting.auditing.LaplaceAuditPair`, ``MechanismAuditPair`` or
        ``RandomizedResponseAuditPair``)."""
        fpr, fnr = self.pair.error_rates(t)
        return float(fpr), float(fnr)


def subject(mechanism: str, eps: float, delta: float, bug: float) -> Subject:
    """The audited mechanism for ``mechanism`` ∈ :data:`MECHANISMS` claiming ε (and δ for the
    Gaussian, calibrated by :meth:`dpexplore.mechanisms.Gaussian.calibrate`); sensitivity 1.
    The mis-calibrated Laplace uses noise b = 1/(bug·ε), so it is only (bug·ε)-DP (Kamath 2024:
    "if we audit a value of ε greater than the value we prove, there was a bug").

    >>> s = subject("Mis-calibrated Laplace", 1.0, 0.0, 3.0)
    >>> s.eps_claimed, s.eps_true, s.delta
    (1.0, 3.0, 0.0)
    >>> round(subject("Gaussian", 1.0, 1e-5, 1.0).mechanism.sigma, 6)
    3.730632
    """
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS}, got mechanism = {mechanism!r}")
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be > 0, got eps = {eps!r}")
    if mechanism == "Laplace":
        pair = laplace_audit_pair(eps)
        return Subject(mechanism, eps, 0.0, pair.eps_actual, pair, Laplace(pair.scale, 1.0))
    if mechanism == "Mis-calibrated Laplace":
        if not (math.isfinite(bug) and bug >= 1):
            raise ValueError(f"bug factor must be >= 1, got bug = {bug!r}")
        pair = miscalibrated_laplace(eps, bug_factor=bug)
        return Subject(mechanism, eps, 0.0, pair.eps_actual, pair, Laplace(pair.scale, 1.0))
    if mechanism == "Randomized response":
        rr = RandomizedResponse(eps)
        return Subject(mechanism, eps, 0.0, eps, RandomizedResponseAuditPair(rr), rr)
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must lie in (0, 1) for the Gaussian, got delta = {delta!r}")
    g = Gaussian.calibrate(eps, delta)
    return Subject(mechanism, eps, delta, float(g.epsilon(delta)), MechanismAuditPair(g), g)


# ------------------------------------------------------------------------------------------------
# cached parts
# ------------------------------------------------------------------------------------------------
#: cached subjects (the Gaussian's calibration is a root search: ~10 ms)
SUBJECTS = Memo(subject, maxsize=64)


def _audit(mechanism, eps, delta, bug, trials, confidence, seed) -> AuditResult:
    s = SUBJECTS(mechanism, eps, delta, bug)
    return audit_mechanism(
        s.sample_0, s.sample_1, trials, np.random.default_rng([seed, 0]), delta=s.delta, confidence=confidence
    )


AUDITS = Memo(_audit, maxsize=32)


def m_grid(m: int) -> np.ndarray:
    """The canary counts of the one-run plot: 8 log-spaced values from 100 to m (m itself last).

    >>> m_grid(10000).tolist()
    [100, 193, 373, 720, 1389, 2683, 5179, 10000]
    """
    if m <= 100:
        return np.array([m], dtype=np.int64)
    return np.unique(np.round(np.logspace(2, math.log10(m), 8)).astype(np.int64))


def _one_run_gaussian(m, sigma, shift, rng, guesses, confidence, delta) -> float:
    """One-run audit with Gaussian views 1{S_i = +1}·Δ + N(0, σ²) (one_run_audit has Laplace and
    randomized response only; same attacker: "in" for the top r/2 views, "out" for the bottom)."""
    s = rng.integers(0, 2, m) * 2 - 1
    view = (s > 0) * shift + rng.normal(0.0, sigma, m)
    order = np.argsort(view)
    n_out = guesses // 2
    n_in = guesses - n_out
    correct = int(np.sum(s[order[m - n_in :]] == 1) + np.sum(s[order[:n_out]] == -1))
    return float(one_run_epsilon_lower_bound(correct, guesses, confidence, delta=delta, m=m))


def _one_run(mechanism, eps, delta, bug, m, guess_frac, confidence, seed) -> float:
    """ε_lb of one seeded one-run audit with m canaries (rng ``default_rng([seed, 1, m])``)."""
    s = SUBJECTS(mechanism, eps, delta, bug)
    rng = np.random.default_rng([seed, 1, m])
    r = max(1, int(round(guess_frac * m)))
    if mechanism == "Gaussian":
        return _one_run_gaussian(m, float(s.mechanism.sigma), float(s.pair.shift), rng, r, confidence, s.delta)
    kind = "randomized_response" if mechanism == "Randomized response" else "laplace"
    res = one_run_audit(
        m, s.eps_claimed, rng, mechanism=kind, true_eps=s.eps_true, guesses=None if r == m else r, confidence=confidence
    )
    return float(res.eps_lb)


ONE_RUNS = Memo(_one_run, maxsize=512)


def one_run_curve(spec: AuditSpec) -> tuple[np.ndarray, np.ndarray]:
    """(m values, ε_lb) of one-run audits (seeded, cached) with ``guess_frac``·m guesses each.

    Each value holds with probability ≥ ``confidence`` on its own, so a correct mechanism can
    show a value above its ε at some m (about 5 % of them at confidence 0.95).

    >>> ms, lb = one_run_curve(AuditSpec(mechanism="Randomized response", eps=2.0, m=1000, seed=1))
    >>> ms.tolist()[-1], round(float(lb[-1]), 4)
    (1000, 1.7608)
    """
    ms = m_grid(spec.m)
    lbs = [ONE_RUNS(*_one_run_key(spec, int(m))) for m in ms]
    return ms, np.asarray(lbs, dtype=np.float64)


def _one_run_key(spec: AuditSpec, m: int) -> tuple:
    return (spec.mechanism, spec.eps, spec.delta, spec.bug, m, spec.guess_frac, spec.confidence, spec.seed)


def _ideal_curve(eps_true, delta, confidence):
    """ε_lb at the expected counts N·p, p = 1/(1 + e^ε), over TRIALS_GRID
    (:func:`dpexplore.accounting.auditing.ideal_epsilon_lower_bound`, the model of trials_needed,
    so that the curve crosses 90 % of ε at the marker); and trials_needed at 90 % of ε (None if
    > MAX_TRIALS)."""
    lb = np.asarray(ideal_epsilon_lower_bound(eps_true, TRIALS_GRID, confidence, delta), dtype=float)
    try:
        need = trials_needed(eps_true, confidence, 0.9, delta, max_trials=MAX_TRIALS)
    except ValueError:
        need = None
    return lb, need


IDEAL = Memo(_ideal_curve, maxsize=64)


def _expose_trials(eps_true, eps_claimed, delta, confidence):
    """Ideal trials per input before ε_lb can exceed the claimed ε: trials_needed at the true ε
    with fraction = claimed/true (None without a bug, or beyond MAX_TRIALS)."""
    if not eps_true > eps_claimed * (1.0 + 1e-9):
        return None
    try:
        return trials_needed(eps_true, confidence, eps_claimed / eps_true, delta, max_trials=MAX_TRIALS)
    except ValueError:
        return None


EXPOSE = Memo(_expose_trials, maxsize=64)


@dataclass(frozen=True)
class AuditLabResult:
    """Everything the lab draws for one :class:`AuditSpec`."""

    spec: AuditSpec
    eps_true: float
    audit: AuditResult
    true_beta: np.ndarray
    claimed_beta: np.ndarray
    certified_beta: np.ndarray
    ideal_lb: np.ndarray
    test_lb: np.ndarray
    trials_needed: int | None
    expose_trials: int | None
    one_run_m: np.ndarray
    one_run_lb: np.ndarray
    exposed: bool
    one_run_exposed: bool


def _check_spec(spec: AuditSpec) -> None:
    check_params(spec, _CHECKED)
    if spec.mechanism == "Gaussian" and spec.m > M_GAUSSIAN_MAX:
        raise ValueError(
            f"m = {spec.m:,} canaries is too many for the Gaussian's one-run audit in an interactive "
            f"step (its (eps, delta) bound needs a search over binomial tails for each m; limit "
            f"{M_GAUSSIAN_MAX:,}): lower m"
        )
    if spec.mechanism == "Gaussian" and spec.eps > 0 and 0 < spec.delta < 1:
        if SUBJECTS(spec.mechanism, spec.eps, spec.delta, spec.bug).mechanism.sigma < 1e-3:
            raise ValueError(
                f"eps = {spec.eps:g} with delta = {spec.delta:g} needs almost no noise "
                f"(sigma < 0.001): the audit would not show anything; lower eps or delta"
            )


def compute_audit(spec: AuditSpec) -> AuditLabResult:
    """Every array of the lab for one setting (formulas in the module docstring). Raises
    ``ValueError`` naming the parameter for ε ≤ 0, δ ∉ (0, 1) (Gaussian), bug factor < 1,
    trials or m out of range, confidence ∉ (0, 1).

    >>> r = compute_audit(AuditSpec(mechanism="Laplace", eps=1.0, trials=1000, m=1000))
    >>> r.trials_needed, len(r.one_run_m)
    (1982, 8)
    """
    _check_spec(spec)
    s = SUBJECTS(spec.mechanism, spec.eps, spec.delta, spec.bug)
    audit = AUDITS(spec.mechanism, spec.eps, spec.delta, spec.bug, spec.trials, spec.confidence, spec.seed)
    true_beta = s.tradeoff(ALPHA_GRID)
    claimed = np.asarray(tradeoff_approx(s.eps_claimed, s.delta, ALPHA_GRID))
    certified = np.asarray(tradeoff_approx(audit.eps_lb, s.delta, ALPHA_GRID))
    ideal_lb, need = IDEAL(s.eps_true, s.delta, spec.confidence)
    fpr, fnr = s.error_rates(audit.threshold)
    if audit.direction == -1:
        fpr, fnr = 1.0 - fpr, 1.0 - fnr
    # the audit's own test at its expected counts N·FPR, N·FNR (the ideal curve's model)
    test_lb = np.asarray(expected_empirical_epsilon(fpr, fnr, TRIALS_GRID, spec.confidence, s.delta), dtype=float)
    ms, lbs = one_run_curve(spec)
    return AuditLabResult(
        spec,
        s.eps_true,
        audit,
        true_beta,
        claimed,
        certified,
        ideal_lb,
        test_lb,
        need,
        EXPOSE(s.eps_true, s.eps_claimed, s.delta, spec.confidence),
        ms,
        lbs,
        bool(audit.eps_lb > s.eps_claimed),
        bool(lbs[-1] > s.eps_claimed),
    )


# ------------------------------------------------------------------------------------------------
# controller
# ------------------------------------------------------------------------------------------------
_BAD = OKABE_ITO[3]  # vermillion: bug exposed
_OK = OKABE_ITO[2]  # bluish green


class AuditLabController(StagedController):
    """One controller: mechanism, ε, δ, bug factor, trials, confidence, seed, m, guess fraction →
    :func:`compute_audit` → trade-off, trials and one-run figures and the verdict readout."""

    compute = staticmethod(compute_audit)
    cache_size = 64
    readout_widgets = {"verdict": ""}

    def sync_controls(self) -> None:
        """δ (Gaussian only) and the bug factor (mis-calibrated Laplace only) are greyed out for
        the other mechanisms: moving them there would change nothing on the page."""
        mech = self.controls["mechanism"].value
        self.controls["delta"].disabled = mech != "Gaussian"
        self.controls["bug"].disabled = mech != "Mis-calibrated Laplace"

    def read_spec(self) -> AuditSpec:
        c = self.controls
        mech = str(c["mechanism"].value)
        # δ matters for the Gaussian only, the bug factor for the mis-calibrated Laplace only:
        # fixed values otherwise, so moving them does not rerun the other mechanisms' simulations
        values = param_values(c, PARAMS)
        values["delta"] = values["delta"] if mech == "Gaussian" else 0.0
        values["bug"] = round(values["bug"], 10) if mech == "Mis-calibrated Laplace" else 1.0
        values["confidence"] = round(values["confidence"], 10)
        return AuditSpec(mechanism=mech, **values)

    def check(self, spec: AuditSpec) -> None:
        _check_spec(spec)
        SUBJECTS(spec.mechanism, spec.eps, spec.delta, spec.bug)

    def stages(self, spec: AuditSpec) -> list:
        return [
            (
                AUDITS,
                (spec.mechanism, spec.eps, spec.delta, spec.bug, spec.trials, spec.confidence, spec.seed),
                4e-6 * spec.trials,
                "audit",
            ),
        ] + [
            (
                ONE_RUNS,
                _one_run_key(spec, int(m)),
                (4e-6 if spec.mechanism == "Gaussian" else 1.5e-6) * m,
                f"one run, m = {int(m):,}",
            )
            for m in m_grid(spec.m)
        ]

    # traces ----------------------------------------------------------------------------------
    @staticmethod
    def _tradeoff_traces(r: AuditLabResult) -> list[dict]:
        a, s = r.audit, r.spec
        claim = f"claimed ({s.eps:.3g}, {r.audit.delta:.3g})-DP" if r.audit.delta else f"claimed {s.eps:.3g}-DP"
        colour = _BAD if r.exposed else OKABE_ITO[7]
        return [
            line_trace(
                f"true trade-off of the mechanism (ε = {r.eps_true:.3g})", ALPHA_GRID, r.true_beta, OKABE_ITO[0]
            ),
            line_trace(claim, ALPHA_GRID, r.claimed_beta, OKABE_ITO[1], 2, "dash"),
            line_trace(
                f"certified by the audit: ε_lb = {a.eps_lb:.3g}", ALPHA_GRID, r.certified_beta, colour, 1.5, "dot"
            ),
            {
                "type": "scatter",
                "mode": "markers",
                "name": "empirical (α, β) of threshold tests",
                "x": a.fpr,
                "y": a.fnr,
                "marker": {"color": OKABE_ITO[5], "size": 4},
            },
            marker_trace(
                "the audit's test (fresh samples)",
                [a.fpr_at_threshold],
                [a.fnr_at_threshold],
                colour,
                "star",
                12,
                outline="#000000",
            ),
        ]

    @staticmethod
    def _trials_traces(r: AuditLabResult) -> list[dict]:
        s = r.spec
        top = max(float(np.nanmax(r.ideal_lb)), r.eps_true, s.eps) * 1.05
        colour = _BAD if r.exposed else OKABE_ITO[7]
        out = [
            line_trace(
                f"ideal: tight {r.eps_true:.3g}-DP test, expected counts", TRIALS_GRID, r.ideal_lb, OKABE_ITO[0]
            ),
            line_trace("this audit's test, expected counts", TRIALS_GRID, r.test_lb, OKABE_ITO[4], 2, "dashdot"),
            line_trace(
                f"claimed ε = {s.eps:.3g}", [TRIALS_GRID[0], TRIALS_GRID[-1]], [s.eps, s.eps], OKABE_ITO[1], 2, "dash"
            ),
            marker_trace(
                f"simulated audit: ε_lb = {r.audit.eps_lb:.3g}",
                [s.trials],
                [r.audit.eps_lb],
                colour,
                "star",
                13,
                outline="#000000",
            ),
        ]
        if r.trials_needed is not None:
            out.append(
                line_trace(
                    f"trials needed for 90 % of ε: {r.trials_needed:,}",
                    [r.trials_needed, r.trials_needed],
                    [0.0, top],
                    OKABE_ITO[2],
                    1.5,
                    "dot",
                )
            )
        return out

    @staticmethod
    def _one_run_traces(r: AuditLabResult) -> list[dict]:
        s = r.spec
        ms = r.one_run_m
        x_ends = [int(ms[0]), int(ms[-1])]
        colours = [(_BAD if v > s.eps else OKABE_ITO[0]) for v in r.one_run_lb]
        return [
            line_trace(
                "one-run ε_lb",
                ms,
                r.one_run_lb,
                OKABE_ITO[0],
                mode="lines+markers",
                marker={"color": colours, "size": 9},
            ),
            line_trace(f"claimed ε = {s.eps:.3g}", x_ends, [s.eps, s.eps], OKABE_ITO[1], 2, "dash"),
            line_trace(f"true ε = {r.eps_true:.3g}", x_ends, [r.eps_true, r.eps_true], OKABE_ITO[2], 1.5, "dot"),
        ]

    def figures(self, r: AuditLabResult) -> list[PlotlyWidget]:
        legend = {"orientation": "h", "y": -0.3}
        self.fig_tradeoff = PlotlyWidget(
            self._tradeoff_traces(r),
            axes_layout(
                "Empirical errors: all must lie above the true curve",
                "α = false-positive rate (type I error)",
                "β = false-negative rate (type II error)",
                xaxis={"range": [0, 1]},
                yaxis={"range": [0, 1]},
                legend=legend,
                height=500,
            ),
        )

        def eps_lb_plot(traces, title, count, height):
            """ε_lb (from 0) against a count on a log axis."""
            layout = axes_layout(
                title,
                count,
                "ε lower bound",
                xaxis=LOG_AXIS,
                yaxis={"rangemode": "tozero"},
                legend=legend,
                height=height,
            )
            return PlotlyWidget(traces, layout)

        self.fig_trials = eps_lb_plot(
            self._trials_traces(r), "ε_lb vs number of trials per input", "trials per input", 500
        )
        self.fig_one_run = eps_lb_plot(
            self._one_run_traces(r), "One-run audit: ε_lb vs number of canaries m", "canaries m (one run)", 460
        )
        return [self.fig_tradeoff, self.fig_trials, self.fig_one_run]

    def render(self, r: AuditLabResult) -> None:
        self.fig_tradeoff.update(data=self._tradeoff_traces(r))
        self.fig_trials.update(data=self._trials_traces(r))
        self.fig_one_run.update(data=self._one_run_traces(r))

    def write_readouts(self, r: AuditLabResult) -> None:
        self.verdict.value = verdict_html(r)

    def snippet(self) -> str | None:
        """The two audits of the readout with the public API (the Laplace subjects; the Gaussian
        and randomized-response subjects use the app's own sampling pairs: no snippet)."""
        s = self.spec
        if s.mechanism not in ("Laplace", "Mis-calibrated Laplace"):
            return None
        miscalibrated = s.mechanism == "Mis-calibrated Laplace"
        pair = (
            "auditing.miscalibrated_laplace(eps, bug_factor=bug)"
            if miscalibrated
            else "auditing.laplace_audit_pair(eps)"
        )
        return (
            "import numpy as np\n"
            "from dpexplore.accounting import auditing\n\n"
            + snippet_assign(s, PARAMS, skip=(*SNIPPET_SKIP, *(() if miscalibrated else ("bug",))))
            + f"pair = {pair}   # samples of the mechanism on two neighbouring inputs\n"
            "audit = auditing.audit_mechanism(pair.sample_0, pair.sample_1, trials,\n"
            "                                 np.random.default_rng([seed, 0]), delta=0.0,\n"
            "                                 confidence=confidence)\n"
            "print(f'distinguishing audit: eps_lb = {audit.eps_lb:.4g}')\n"
            "guesses = max(1, round(guess_frac * m))   # the canaries guessed\n"
            "one = auditing.one_run_audit(m, eps, np.random.default_rng([seed, 1, m]), mechanism='laplace',\n"
            "                            true_eps=pair.eps_actual, guesses=None if guesses == m else guesses,\n"
            "                            confidence=confidence)\n"
            "print(f'one run with m = {m:,} canaries: eps_lb = {one.eps_lb:.4g}')\n"
        )


def verdict_html(r: AuditLabResult) -> str:
    """The audit's numbers and verdict; a bug (ε_lb > claimed ε) is highlighted in vermillion."""
    a, s = r.audit, r.spec
    delta_txt = f", δ = {a.delta:.3g}" if a.delta else ""
    if r.exposed or r.one_run_exposed:
        which = []
        if r.exposed:
            which.append(f"the distinguishing audit proves ε ≥ <b>{a.eps_lb:.4g}</b>")
        if r.one_run_exposed:
            which.append(f"the one-run audit (m = {int(r.one_run_m[-1]):,}) proves ε ≥ <b>{r.one_run_lb[-1]:.4g}</b>")
        head = (
            f'<div class="dpexplore-audit-bug" style="color:#8a1c00;background:#fdece6;'
            f'border-left:6px solid {_BAD};padding:6px 10px;font-size:1.1em">'
            f"<b>BUG EXPOSED</b>: {' and '.join(which)} &gt; claimed ε = {s.eps:.4g} "
            f"(with confidence {100 * a.confidence:.3g} %). The privacy claim is false.</div>"
        )
    else:
        head = (
            f'<div class="dpexplore-audit-ok" style="color:#004d38;background:#e6f5f0;'
            f'border-left:6px solid {_OK};padding:6px 10px">Consistent with the claim: '
            f"ε_lb = <b>{a.eps_lb:.4g}</b> ≤ claimed ε = {s.eps:.4g}. An audit can only refute "
            f"a claim, never prove it.</div>"
        )
    need = "more than 10⁹" if r.trials_needed is None else f"{r.trials_needed:,}"
    return (
        head + f"<p>{s.mechanism}: claimed ε = {s.eps:.4g}{delta_txt}; true ε = {r.eps_true:.4g}. "
        f"Audit with {a.trials_pos:,} trials per input (seed {s.seed}): test “{'out' if a.direction > 0 else '−out'} "
        f"&gt; {a.direction * a.threshold:.4g}”, FP = {a.fp:,}, FN = {a.fn:,} "
        f"(FPR = {a.fpr_at_threshold:.4g}, FNR = {a.fnr_at_threshold:.4g}) ⇒ ε_lb = <b>{a.eps_lb:.4g}</b> "
        f"at confidence {a.confidence:.3g}. Ideal trials for 90 % of the true ε: {need}. "
        + (
            ""
            if r.expose_trials is None
            else f"Ideal trials before ε_lb can exceed the claimed ε: {r.expose_trials:,}. "
        )
        + f"One run with m = {int(r.one_run_m[-1]):,} canaries: ε_lb = <b>{r.one_run_lb[-1]:.4g}</b>.</p>"
    )


_INTRO = r"""
<p><b>Privacy auditing</b> (Kamath 2024, "Privacy auditing in just one run"): run the mechanism on two
neighbouring inputs, try to tell them apart, and turn the attack's error rates into a
statistically valid <i>lower</i> bound on ε — "if we audit a value of ε greater than the value we
prove, there was a bug". An (ε, δ)-DP mechanism forces every test to satisfy
\(\mathrm{FPR} + e^{\varepsilon}\mathrm{FNR} \ge 1 - \delta\) and \(\mathrm{FNR} + e^{\varepsilon}\mathrm{FPR} \ge 1 - \delta\)
(its (α, β) lies above \(f_{\varepsilon,\delta}(\alpha) = \max(0, 1-\delta-e^{\varepsilon}\alpha, e^{-\varepsilon}(1-\delta-\alpha))\);
Dong, Roth &amp; Su 2022, Proposition 2.5), so with Clopper–Pearson upper bounds on the two rates
$$\varepsilon_{lb} = \max\Big(\log\frac{1-\delta-\mathrm{FNR}_{ub}}{\mathrm{FPR}_{ub}},\ \log\frac{1-\delta-\mathrm{FPR}_{ub}}{\mathrm{FNR}_{ub}},\ 0\Big)$$
holds with probability ≥ the confidence (Jagielski, Ullman &amp; Oprea 2020; Nasr et al. 2021).
The threshold is chosen on one sample and evaluated on a fresh one.
<b>One run</b> (Steinke, Nasr &amp; Jagielski 2023): m canaries, each included with probability 1/2;
if the mechanism is ε-DP the number of correct guesses among r is dominated by
Binomial(r, e<sup>ε</sup>/(1 + e<sup>ε</sup>)), so \(\varepsilon_{lb} = \operatorname{logit}(p_{lo})\) with \(p_{lo}\)
the Clopper–Pearson lower bound on the guessing accuracy. The <b>mis-calibrated Laplace</b> adds
noise \(1/(\text{bug}\cdot\varepsilon)\) instead of \(1/\varepsilon\): it is only (bug·ε)-DP.</p>
"""


INFO = AppInfo(
    slug="audit_lab",
    title="Auditing lab: empirical lower bounds on ε expose privacy bugs",
    lead=(
        "Run a mechanism many times on two neighbouring inputs and bound ε from below with a "
        "statistical test: a correct mechanism passes, a mis-calibrated one is caught. The last "
        "tab audits in one run, with m canaries."
    ),
    theory=_INTRO,
)


def build_audit_lab(
    mechanism: str = "Mis-calibrated Laplace",
    eps: float = 1.0,
    delta: float = 1e-5,
    bug: float = 2.0,
    trials: int = 10000,
    confidence: float = 0.95,
    seed: int = 0,
    m: int = 10000,
    guess_frac: float = 1.0,
) -> AppShell:
    """The auditing lab (Kamath 2024) in the shell: controls and the verdict in the panel; the
    trade-off, trials and one-run plots in tabs.

    >>> app = build_audit_lab(trials=1000, m=1000)
    >>> "BUG EXPOSED" in app.controller.verdict.value
    True
    """
    controls = {
        "mechanism": dropdown("mechanism", list(MECHANISMS), mechanism),
        **{
            k: param_slider(PARAMS[k], v)
            for k, v in (
                ("eps", eps),
                ("delta", delta),
                ("bug", bug),
                ("trials", trials),
                ("confidence", confidence),
                ("seed", seed),
                ("m", m),
                ("guess_frac", guess_frac),
            )
        },
    }
    for k in ("trials", "seed", "m"):
        controls[k].continuous_update = False  # a simulation per release, not per pixel
    ctrl = AuditLabController(controls, MessageArea())
    return app_shell(
        INFO,
        ctrl,
        controls=[*controls.values(), ctrl.progress],
        plots=[ctrl.fig_tradeoff, ctrl.fig_trials, ctrl.fig_one_run],
        readouts=[ctrl.verdict],
        panel_width="420px",
    )
