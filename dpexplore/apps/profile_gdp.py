"""Dashboard: a mechanism's privacy profile δ(ε) against Gaussian DP, and the same in f-DP terms.

What it shows (Liu et al. 2022 = Liu, Sun, Jiang & Kong, NeurIPS 2022):

* Liu et al. 2022, Theorem 3.1 (Dong, Roth & Su 2022, Cor. 2.13): a mechanism is μ-GDP iff δ_A(ε) ≤ δ_μ(ε)
  for every ε ≥ 0, with δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2). The profile plot draws
  δ_A(ε) of the chosen mechanism on a log y axis against δ_μ for the μ values the user types
  (default 1 and 2, as in Liu et al. 2022's Figure 1 right).
* Liu et al. 2022, Theorem 3.3: the tail value μ_t = lim_{ε→∞} ε/√(−2 log δ_A(ε)) decides whether the
  mechanism is GDP at all (μ_t < ∞) — :func:`dpexplore.accounting.conversions.gdp_identify`.
* Liu et al. 2022, result “GDPT” (GDP measurement): a bracket μ_lower < μ* ≤ μ_upper of the optimal μ, μ_lower
  explicitly violated, μ_upper certified — :func:`dpexplore.accounting.conversions.gdp_measure`; drawn as
  the dashed δ_{μ_upper} curve.
* Liu et al. 2022, Theorem 2.1 and Figure 1 left: a guarantee written as a trade-off equation
  σ = A·√(log(B/δ))/ε, inverted naively (δ_n(ε) = min(1, B e^{−(σε/A)²})) and refined by the
  exact partial order of (ε, δ) conditions — :func:`dpexplore.accounting.conversions.equation_profile`.
* f-DP view: the trade-off function β(α) of the mechanism (``mechanism.tradeoff``; for the
  equation family the envelope max_ε f_{ε, δ(ε)}(α) of Dong, Roth & Su 2022, Proposition 2.5,
  :func:`dpexplore.accounting.conversions.tradeoff_envelope`) against G_μ(α) = Φ(Φ⁻¹(1 − α) − μ).

Everything for both views is computed once per setting by :func:`compute_profile_gdp`; the
mechanism-only part (profile, trade-off, GDP verdict) is cached on the mechanism's parameters
(:func:`mechanism_summary`), so typing new μ values or switching views costs a few ms.

GDP verdict on the slider path: :func:`dpexplore.accounting.conversions.gdp_bracket` with ``tol =
MEASURE_TOL`` (1e-3; a coarser tolerance saves little, the cost is the deep-tail search of
``gdp_identify``) and ``budget = EVAL_BUDGET`` evaluated points (it memoises small evaluations:
``gdp_measure`` calls ``gdp_identify`` again internally, so the tail search is done once). Where
the backend cannot certify within that budget or raises (the certification grid can grow to
millions of points for μ* ≳ 13; RR with ε ≳ 37 and N(0, σ²) with σ ≲ 0.06 have δ(0) rounding to
1), ``gdp_bracket`` falls back to a bracket whose ends are still rigorous: μ_lower violated on
the plot grid, μ_upper from theory where it is known (pure ε-DP ⇒ 2Φ⁻¹(e^ε/(1 + e^ε))-GDP, Liu et
al. 2022, result “all ε-DP algorithms are GDP”; the Gaussian mechanism is exactly Δ/σ-GDP, Liu et
al. 2022 Theorem 3.1, which the app passes as ``theory_upper``), and the readout says so.

Measured compute per setting (this 2-core machine, lightly loaded; 2-5x more under load):
Laplace, RR, Logistic 4-20 ms; Gaussian 20-30 ms; refined equation 50-75 ms; Subbotin
50-120 ms (their sliders update on release only). A new μ list or a view switch: < 1 ms (cache).

>>> r = compute_profile_gdp(ProfileGdpSpec(MechSpec("laplace", (1.0,)), (1.0, 2.0)))
>>> r.verdict.is_gdp, r.verdict.mu_t, round(r.verdict.mu_upper, 3)
(True, 0.0, 1.031)
>>> type(build_profile_gdp()).__name__
'AppShell'
"""

from __future__ import annotations

import functools
import html
import math
from dataclasses import dataclass, field
from typing import Callable

import ipywidgets as W
import numpy as np

from ..accounting.conversions import (
    equation_profile,
    gdp_delta,
    gdp_bracket,
    gdp_epsilon,
    tradeoff_envelope,
    tradeoff_gdp,
)
from ..mechanisms import Gaussian, Laplace, Logistic, RandomizedResponse, Subbotin
from ..accounting.profiles import PrivacyProfile
from ..ui.controls import OKABE_ITO, Controller, MessageArea, dropdown, param_slider
from ..ui.plotwidget import PlotlyWidget
from ..ui.shell import MAIN_PLOT_HEIGHT, AppInfo, AppShell, app_shell
from ..ui.views import LOG_AXIS, axes_layout, line_trace, tradeoff_layout
from ._checks import Param, params_by_name, snippet_assign

__all__ = [
    "MechSpec",
    "ProfileGdpSpec",
    "GdpVerdict",
    "MechanismSummary",
    "ProfileGdpResult",
    "mechanism_summary",
    "compute_profile_gdp",
    "parse_mus",
    "ProfileGdpController",
    "build_profile_gdp",
    "FAMILIES",
    "DELTA_FLOOR",
    "N_EPS",
    "ALPHA_GRID",
    "MEASURE_TOL",
    "EVAL_BUDGET",
    "MAX_MUS",
    "PARAMS",
]

#: each mechanism's numeric parameters (their sliders; the values are checked by the mechanisms
#: themselves, ``ValueError`` naming them, e.g. ``scale``). Log slider ends sit on the step grid
#: (the front end snaps values to min + k·step), so the defaults (1, 2) are exact.
PARAMS = params_by_name(
    Param("lap_b", 0.01, 100.0, "log", "Laplace scale b", "× Δ"),
    Param("gauss_sigma", 0.01, 100.0, "log", "Gaussian σ", "× Δ"),
    Param("rr_eps", 0.01, 100.0, "log", "pure ε", "nats"),
    Param("logi_s", 0.01, 100.0, "log", "Logistic scale s", "× Δ"),
    Param("sub_s", 0.1, 100.0, "log", "Subbotin scale s", "× Δ"),
    Param("sub_r", 1.0, 4.0, "linear", "Subbotin shape r", "1 = Laplace, 2 = Gaussian", step=0.05),
    Param("eq_A", 0.2, 20.0, "log", "equation A", "× Δ"),
    Param("eq_B", 0.01, 100.0, "log", "equation B", "factor"),
    Param("eq_sigma", 0.02, 200.0, "log", "equation σ", "× Δ"),
)

#: the plotted ε range ends a little beyond where δ_A falls below DELTA_FLOOR (the y axis floor)
DELTA_FLOOR = 1e-12
#: points of the ε grid of the profile plot
N_EPS = 241
#: type I errors α of the trade-off plot: linear, plus a geometric head for the corner at α → 0
ALPHA_GRID = np.unique(np.concatenate([np.linspace(0.0, 1.0, 161), np.geomspace(1e-6, 0.05, 40)]))
#: tolerance of gdp_measure on the slider path (width of the μ bracket)
MEASURE_TOL = 1e-3
#: gdp_measure gives up (and the dashboard falls back, see the module docstring) beyond this many
#: evaluated points of log δ_A
EVAL_BUDGET = 60000
#: at most this many μ values
MAX_MUS = 6
_COARSE = np.concatenate([[0.0], np.geomspace(1e-3, 5e3, 121)])


# ------------------------------------------------------------------------------------------------
# mechanism families (a small registry: key -> label, parameters, constructor)
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Family:
    key: str
    label: str
    params: tuple[str, ...]  # control names, in the order of MechSpec.params
    make: Callable  # params -> (profile, tradeoff(alpha) | None, naive | None)
    formula: str  # HTML/LaTeX shown under the dropdown


def _mech(m):
    return m.profile, m.tradeoff, None


def _equation(A, B, sigma):
    return (equation_profile(A, B, sigma, refined=True), None, equation_profile(A, B, sigma, refined=False))


FAMILIES: dict[str, _Family] = {
    f.key: f
    for f in [
        _Family(
            "laplace",
            "Laplace",
            ("lap_b",),
            lambda b: _mech(Laplace(b)),
            r"Laplace noise of scale $b$ (Δ = 1): $\delta(\varepsilon) = \max\{0,\,1 - "
            r"e^{(\varepsilon - \Delta/b)/2}\}$ (Liu et al. 2022, Fig. 1; Vinterbo 2022 Thm 3) — pure $\Delta/b$-DP.",
        ),
        _Family(
            "gaussian",
            "Gaussian",
            ("gauss_sigma",),
            lambda s: _mech(Gaussian(s)),
            r"Gaussian noise $N(0,\sigma^2)$: exactly $\mu = \Delta/\sigma$-GDP "
            r"(Liu et al. 2022, Thm 3.1; Balle &amp; Wang 2018, Thm 8).",
        ),
        _Family(
            "pure",
            "Randomized response (any pure ε-DP)",
            ("rr_eps",),
            lambda e: _mech(RandomizedResponse(e)),
            r"Randomized response: the tight pure $\varepsilon$-DP profile "
            r"$\delta(\varepsilon') = (e^{\varepsilon} - e^{\varepsilon'})_+/(1 + e^{\varepsilon})$; "
            r"every $\varepsilon$-DP mechanism is below it, and is "
            r"$2\Phi^{-1}\!\big(e^\varepsilon/(1+e^\varepsilon)\big)$-GDP (Liu et al. 2022, result “all ε-DP algorithms are GDP”).",
        ),
        _Family(
            "logistic",
            "Logistic",
            ("logi_s",),
            lambda s: _mech(Logistic(s)),
            r"Logistic noise of scale $s$: pure $\Delta/s$-DP, "
            r"$\delta(\varepsilon) = (1 - e^{-(d-\varepsilon)/2})^2/(1 - e^{-d})$, $d = \Delta/s$ (Vinterbo 2022 Thm 4).",
        ),
        _Family(
            "subbotin",
            "Subbotin (generalized normal)",
            ("sub_s", "sub_r"),
            lambda s, r: _mech(Subbotin(s, r)),
            r"Subbotin noise $\propto e^{-|x/s|^r/r}$ (Vinterbo 2022 Lemma 1): $r = 1$ is Laplace, $r = 2$ "
            r"Gaussian; for $1 &lt; r \le 2$ the tail is at most Gaussian (GDP), for $r &gt; 2$ "
            r"$\log\delta \sim -\varepsilon^{r/(r-1)}$ is heavier than Gaussian: not GDP.",
        ),
        _Family(
            "equation",
            "Trade-off equation σ = A·√log(B/δ)/ε (Liu et al. 2022 Fig. 1)",
            ("eq_A", "eq_B", "eq_sigma"),
            _equation,
            r"A guarantee stated as $\sigma = A\sqrt{\log(B/\delta)}/\varepsilon$ (Liu et al. 2022, Fig. 1 left, "
            r"“SGD”: $A = 2, B = 1, \sigma = 2$). Naive inversion: "
            r"$\delta_n(\varepsilon) = \min\{1, B e^{-(\sigma\varepsilon/A)^2}\}$ (dotted). "
            r"Refined by the exact partial order (Liu et al. 2022, Thm 2.1): $(\varepsilon_0,\delta_0)$-DP implies "
            r"$(\varepsilon,\delta)$-DP iff $\delta \ge \delta_0 + (1-\delta_0)(e^{\varepsilon_0} - "
            r"e^{\varepsilon})_+/(1 + e^{\varepsilon_0})$, so $\delta(\varepsilon) = \inf_{\varepsilon_0}$ "
            r"of that bound with $\delta_0 = \delta_n(\varepsilon_0)$ (solid).",
        ),
    ]
}


# ------------------------------------------------------------------------------------------------
# specs and results
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MechSpec:
    """A mechanism: family key (see ``FAMILIES``) and its parameters (hashable cache key)."""

    kind: str
    params: tuple[float, ...]

    def __post_init__(self):
        if self.kind not in FAMILIES:
            raise ValueError(f"mechanism must be one of {sorted(FAMILIES)}, got {self.kind!r}")
        if len(self.params) != len(FAMILIES[self.kind].params):
            raise ValueError(
                f"params of {self.kind} must have {len(FAMILIES[self.kind].params)} entries, got {self.params!r}"
            )


@dataclass(frozen=True)
class ProfileGdpSpec:
    """The dashboard's state (the view toggle is not part of it: both views are computed)."""

    mech: MechSpec
    mus: tuple[float, ...] = (1.0, 2.0)


@dataclass(frozen=True)
class GdpVerdict:
    """GDP verdict of a profile: tail value μ_t (Liu et al. 2022 Thm 3.3), the μ* bracket (Liu et al. 2022, result “GDPT”).

    ``mu_lower`` is violated (the profile is not μ_lower-GDP); ``mu_upper`` is certified (None if
    no certified value is available); ``method`` says where the bracket comes from.
    """

    is_gdp: bool
    mu_t: float
    mu_lower: float | None
    mu_upper: float | None
    method: str
    reason: str = ""

    def status(self, mu: float) -> str:
        """'yes' (certified μ-GDP), 'no' (violated) or 'undecided' for the user's μ."""
        if not self.is_gdp:
            return "no"
        if self.mu_upper is not None and mu >= self.mu_upper:
            return "yes"
        if self.mu_lower is not None and mu <= self.mu_lower:
            return "no"
        return "undecided"


@dataclass(frozen=True)
class MechanismSummary:
    """Everything that depends on the mechanism only (cached on its :class:`MechSpec`)."""

    label: str
    eps: np.ndarray = field(repr=False)  # the mechanism's own ε grid (verdict, envelope)
    delta: np.ndarray = field(repr=False)  # δ_A on it
    delta_naive: np.ndarray | None = field(repr=False)  # equation family: the naive inversion
    beta: np.ndarray = field(repr=False)  # trade-off β(α) on ALPHA_GRID
    beta_naive: np.ndarray | None = field(repr=False)
    eps_max: float
    verdict: GdpVerdict
    verdict_naive: GdpVerdict | None
    profile: PrivacyProfile = field(repr=False, compare=False)
    naive: PrivacyProfile | None = field(repr=False, compare=False)


@dataclass(frozen=True)
class ProfileGdpResult:
    """Everything both views draw: the mechanism summary, the plotted ε grid (it also covers the
    smallest μ's curve down to DELTA_FLOOR) with δ_A on it, and the μ-GDP curves."""

    spec: ProfileGdpSpec
    summary: MechanismSummary
    eps: np.ndarray = field(repr=False)  # plotted ε grid (see _plot_grid)
    delta: np.ndarray = field(repr=False)  # δ_A on it
    delta_naive: np.ndarray | None = field(repr=False)
    delta_mu: np.ndarray = field(repr=False)  # shape (len(mus), len(eps))
    g_mu: np.ndarray = field(repr=False)  # shape (len(mus), len(ALPHA_GRID))
    delta_upper: np.ndarray | None = field(repr=False)  # δ_{μ_upper}(ε) (dashed), if certified
    g_upper: np.ndarray | None = field(repr=False)

    @property
    def verdict(self) -> GdpVerdict:
        return self.summary.verdict


# ------------------------------------------------------------------------------------------------
# GDP verdict with a budget (the backend's gdp_bracket)
# ------------------------------------------------------------------------------------------------
def _theory_upper(kind: str, params: tuple[float, ...]) -> tuple[float | None, str]:
    """The certified μ the family knows from theory beyond its profile: the Gaussian is exactly
    Δ/σ-GDP (Liu et al. 2022, Thm 3.1; :attr:`Gaussian.mu <dpexplore.mechanisms.Gaussian.mu>`, with the
    family's own parameters). Pure ε-DP (2Φ⁻¹(e^ε/(1+e^ε))-GDP) is read from the profile by
    :func:`~dpexplore.accounting.conversions.gdp_bracket` itself."""
    if kind == "gaussian":
        return float(Gaussian(*params).mu), "the Gaussian mechanism is exactly Δ/σ-GDP (Liu et al. 2022, Thm 3.1)"
    return None, ""


_METHOD = {"tail": "tail", "delta0": "δ(0) = 1", "fallback": "fallback"}


def _verdict(profile: PrivacyProfile, kind: str, params, eps: np.ndarray) -> GdpVerdict:
    """GDP verdict of ``profile``: :func:`~dpexplore.accounting.conversions.gdp_bracket` within
    ``EVAL_BUDGET`` at ``MEASURE_TOL``, falling back (see the module docstring) on the plot grid ``eps``."""
    up, why = _theory_upper(kind, params)
    b = gdp_bracket(profile, tol=MEASURE_TOL, budget=EVAL_BUDGET, theory_upper=up, theory_reason=why, grid=eps)
    if b.method == "measured":
        return GdpVerdict(True, b.mu_tail, b.lower, b.upper, b.explanation)
    return GdpVerdict(b.is_gdp, b.mu_tail, b.lower, b.upper, _METHOD[b.method], b.explanation)


# ------------------------------------------------------------------------------------------------
# compute
# ------------------------------------------------------------------------------------------------
def _eps_range(profile: PrivacyProfile) -> float:
    """Right end of the plotted ε range: 1.15 × the first coarse-grid ε with δ_A ≤ DELTA_FLOOR
    (or eps_max for pure DP), clipped to [0.05, 5000]."""
    ld = np.asarray(profile.log_delta(_COARSE))
    below = np.nonzero(ld <= math.log(DELTA_FLOOR))[0]
    hi = float(_COARSE[below[0]]) if below.size else float(_COARSE[-1])
    if math.isfinite(profile.eps_max):
        hi = min(hi, float(profile.eps_max))
    return float(np.clip(1.15 * hi, 0.05, 5000.0))


def _plot_grid(hi: float, eps_max: float) -> np.ndarray:
    """N_EPS points on [0, hi]; for pure DP also ε_max(1 − 10^{-k}), k = 1 … 12, so the curve
    visibly dives towards δ(ε_max) = 0 on the log axis."""
    grid = np.linspace(0.0, hi, N_EPS)
    if math.isfinite(eps_max) and 0.0 < eps_max <= hi:
        near = eps_max * (1.0 - np.logspace(-1.0, -12.0, 12))
        grid = np.unique(np.concatenate([grid, near]))
    return grid


@functools.lru_cache(maxsize=128)
def mechanism_summary(mech: MechSpec) -> MechanismSummary:
    """Profile on the plotted grid, trade-off on ALPHA_GRID and the GDP verdict of one mechanism
    (cached on ``mech``). The parameters are validated by the backend (ValueError naming them).

    >>> s = mechanism_summary(MechSpec("gaussian", (1.0,)))
    >>> round(s.verdict.mu_t, 6), s.verdict.status(1.01), s.verdict.status(0.99)
    (1.0, 'yes', 'no')
    """
    fam = FAMILIES[mech.kind]
    profile, tradeoff, naive = fam.make(*mech.params)
    hi = _eps_range(profile)
    if naive is not None:
        hi = max(hi, _eps_range(naive))
    eps = _plot_grid(hi, float(profile.eps_max))
    ld = np.asarray(profile.log_delta(eps), dtype=np.float64)
    delta = np.exp(ld)
    verdict = _verdict(profile, mech.kind, mech.params, eps)
    if tradeoff is not None:
        beta = np.asarray(tradeoff(ALPHA_GRID), dtype=np.float64)
    else:
        beta = tradeoff_envelope(eps, delta, ALPHA_GRID)
    delta_naive = beta_naive = verdict_naive = None
    if naive is not None:
        ldn = np.asarray(naive.log_delta(eps), dtype=np.float64)
        delta_naive = np.exp(ldn)
        beta_naive = tradeoff_envelope(eps, delta_naive, ALPHA_GRID)
        verdict_naive = _verdict(naive, mech.kind, mech.params, eps)
    return MechanismSummary(
        profile.name,
        eps,
        delta,
        delta_naive,
        beta,
        beta_naive,
        float(profile.eps_max),
        verdict,
        verdict_naive,
        profile,
        naive,
    )


def parse_mus(text: str) -> tuple[float, ...]:
    """Comma-separated μ values → tuple of floats (each > 0 and finite; 1 to MAX_MUS of them).

    >>> parse_mus("1, 2.5")
    (1.0, 2.5)
    >>> parse_mus("1, x")
    Traceback (most recent call last):
    ...
    ValueError: mu values must be numbers separated by commas, got 'x'
    """
    parts = [p.strip() for p in str(text).replace(";", ",").split(",") if p.strip()]
    if not parts:
        raise ValueError(f"mu values: type at least one μ > 0 (e.g. 1, 2), got {text!r}")
    if len(parts) > MAX_MUS:
        raise ValueError(f"mu values: at most {MAX_MUS} values, got {len(parts)}")
    out = []
    for p in parts:
        try:
            v = float(p)
        except ValueError:
            raise ValueError(f"mu values must be numbers separated by commas, got {p!r}") from None
        if not (v > 0 and math.isfinite(v)):
            raise ValueError(f"mu must be a finite number > 0, got {p}")
        out.append(v)
    return tuple(out)


def compute_profile_gdp(spec: ProfileGdpSpec) -> ProfileGdpResult:
    """All arrays of both views for one setting: the cached :func:`mechanism_summary`, then
    δ_μ(ε) (Liu et al. 2022, Thm 3.1, :func:`~dpexplore.accounting.conversions.gdp_delta`) and
    G_μ(α) = Φ(Φ⁻¹(1 − α) − μ)
    (:func:`~dpexplore.accounting.conversions.tradeoff_gdp`) for each μ and for μ_upper.

    >>> r = compute_profile_gdp(ProfileGdpSpec(MechSpec("gaussian", (0.5,)), (2.0,)))
    >>> bool(np.allclose(r.delta_mu[0], r.delta, rtol=1e-12))   # N(0, 0.25) is exactly 2-GDP
    True
    """
    mus = tuple(float(m) for m in spec.mus)
    if not mus or any(not (m > 0 and math.isfinite(m)) for m in mus):
        raise ValueError(f"mu must be finite numbers > 0, got {spec.mus!r}")
    s = mechanism_summary(spec.mech)
    # plotted range: the mechanism's, widened so that the smallest μ's curve reaches DELTA_FLOOR
    # (Liu et al. 2022 Fig. 1 right shows the GDP curves' decay next to the mechanism's)
    hi = float(s.eps[-1])
    hi_mu = 1.15 * float(gdp_epsilon(min(mus), DELTA_FLOOR))
    if hi_mu > hi * (1 + 1e-12):
        eps = _plot_grid(min(hi_mu, 5000.0), s.eps_max)
        delta = np.exp(np.asarray(s.profile.log_delta(eps), dtype=np.float64))
        delta_naive = None if s.naive is None else np.exp(np.asarray(s.naive.log_delta(eps), dtype=np.float64))
    else:
        eps, delta, delta_naive = s.eps, s.delta, s.delta_naive
    m = np.asarray(mus)[:, None]
    delta_mu = np.asarray(gdp_delta(m, eps[None, :]), dtype=np.float64)
    g_mu = np.asarray(tradeoff_gdp(m, ALPHA_GRID[None, :]), dtype=np.float64)
    up = s.verdict.mu_upper
    delta_upper = g_upper = None
    if up is not None:
        delta_upper = np.asarray(gdp_delta(up, eps), dtype=np.float64)
        g_upper = np.asarray(tradeoff_gdp(up, ALPHA_GRID), dtype=np.float64)
    return ProfileGdpResult(spec, s, eps, delta, delta_naive, delta_mu, g_mu, delta_upper, g_upper)


# ------------------------------------------------------------------------------------------------
# controller
# ------------------------------------------------------------------------------------------------
def _logy(y: np.ndarray) -> np.ndarray:
    """δ for a log axis: δ = 0 becomes NaN (→ a gap; to_json sends None)."""
    y = np.asarray(y, dtype=np.float64)
    return np.where(y > 0, y, np.nan)


def _fmt(x: float | None) -> str:
    if x is None:
        return "—"
    if math.isinf(x):
        return "∞"
    if math.isnan(x):
        return "not evaluated"
    return f"{x:.6g}"


class ProfileGdpController(Controller):
    """Controls → :class:`ProfileGdpSpec` → :func:`compute_profile_gdp` → two prebuilt figures
    (profile and trade-off); the view toggle switches which one is displayed."""

    compute = staticmethod(compute_profile_gdp)
    prefetch = True  # the next slider step reads the cache (controls.PREFETCHER)

    def __init__(self, controls, message=None):
        self.readout = W.HTMLMath()
        self.readout.add_class("dpexplore-gdp-verdict")
        self.mech_info = W.HTMLMath()
        super().__init__(controls, message)
        self._set_texts(self.result)
        self._show_view()

    # spec -------------------------------------------------------------------------------------
    def read_spec(self) -> ProfileGdpSpec:
        kind = self.controls["mechanism"].value
        fam = FAMILIES[kind]
        params = tuple(float(self.controls[p].value) for p in fam.params)
        return ProfileGdpSpec(MechSpec(kind, params), parse_mus(self.controls["mus"].value))

    def update(self) -> None:
        super().update()
        self._show_view()

    def sync_controls(self) -> None:
        fam = FAMILIES[self.controls["mechanism"].value]
        for name in _PARAM_CONTROLS:
            self.controls[name].layout.display = None if name in fam.params else "none"
        self.mech_info.value = fam.formula

    def _show_view(self) -> None:
        tradeoff = self.controls["view"].value == "tradeoff"
        self.figs[0].layout.display = "none" if tradeoff else None
        self.figs[1].layout.display = None if tradeoff else "none"

    # traces -----------------------------------------------------------------------------------
    @staticmethod
    def _profile_traces(r: ProfileGdpResult) -> list[dict]:
        s = r.summary
        tr = [line_trace(f"δ_A(ε): {_short_label(r.spec.mech)}", r.eps, _logy(r.delta), OKABE_ITO[7], 3)]
        if r.delta_naive is not None:
            tr.append(line_trace("naive inversion δ_n(ε)", r.eps, _logy(r.delta_naive), OKABE_ITO[5], 2, "dot"))
        for i, mu in enumerate(r.spec.mus):
            tr.append(line_trace(f"δ_μ(ε), μ = {mu:g}", r.eps, _logy(r.delta_mu[i]), OKABE_ITO[i % 7]))
        if r.delta_upper is not None:
            tr.append(
                line_trace(
                    f"δ_μ(ε), μ_upper = {s.verdict.mu_upper:.4g} (certified)",
                    r.eps,
                    _logy(r.delta_upper),
                    OKABE_ITO[3],
                    2,
                    "dash",
                )
            )
        return tr

    @staticmethod
    def _tradeoff_traces(r: ProfileGdpResult) -> list[dict]:
        s = r.summary
        a = ALPHA_GRID
        tr = [line_trace(f"β(α): {_short_label(r.spec.mech)}", a, s.beta, OKABE_ITO[7], 3)]
        if s.beta_naive is not None:
            tr.append(line_trace("naive inversion", a, s.beta_naive, OKABE_ITO[5], 2, "dot"))
        for i, mu in enumerate(r.spec.mus):
            tr.append(line_trace(f"G_μ(α), μ = {mu:g}", a, r.g_mu[i], OKABE_ITO[i % 7]))
        if r.g_upper is not None:
            tr.append(
                line_trace(
                    f"G_μ(α), μ_upper = {s.verdict.mu_upper:.4g} (certified)", a, r.g_upper, OKABE_ITO[3], 2, "dash"
                )
            )
        tr.append(line_trace("β = 1 − α (perfect privacy)", [0.0, 1.0], [1.0, 0.0], "#999999", 1, "dot"))
        return tr

    def figures(self, result: ProfileGdpResult) -> list[PlotlyWidget]:
        # the legend beside the plot (plotly widens the right margin for it): below the plot it
        # collided with the x axis title, in presentation mode most of all
        legend = {"x": 1.02, "xanchor": "left", "y": 1.0, "yanchor": "top"}
        margin = {"l": 60, "r": 10, "t": 50, "b": 50}
        prof = PlotlyWidget(
            data=self._profile_traces(result),
            layout=axes_layout(
                "Privacy profile δ(ε) against μ-GDP (Liu et al. 2022, Thm 3.1)",
                "ε",
                "δ(ε)  (log scale)",
                yaxis={**LOG_AXIS, "range": [math.log10(DELTA_FLOOR) - 1.0, 0.05]},
                legend=legend,
                showlegend=True,
                height=520,
                margin=margin,
            ),
        )
        trade = PlotlyWidget(
            data=self._tradeoff_traces(result),
            layout=tradeoff_layout(
                "Trade-off functions β(α) against G_μ (f-DP)", legend=legend, showlegend=True, height=520, margin=margin
            ),
        )
        prof.add_class("dpexplore-profile-plot")
        trade.add_class("dpexplore-tradeoff-plot")
        return [prof, trade]

    def render(self, result: ProfileGdpResult) -> None:
        self.figs[0].update(data=self._profile_traces(result))
        self.figs[1].update(data=self._tradeoff_traces(result))
        self._set_texts(result)

    _MAKE = {
        "laplace": "mechanisms.Laplace({0}).profile",
        "gaussian": "mechanisms.Gaussian({0}).profile",
        "pure": "mechanisms.RandomizedResponse({0}).profile",
        "logistic": "mechanisms.Logistic({0}).profile",
        "subbotin": "mechanisms.Subbotin({0}, {1}).profile",
        "equation": "conversions.equation_profile({0}, {1}, {2}, refined=True)",
    }

    def snippet(self) -> str | None:
        """The GDP verdict of the readout (tail value and certified bracket) with the public API:
        the backend's :func:`~dpexplore.accounting.conversions.gdp_bracket` with the app's tolerance
        and budget (and, where it fell back, the plot's ε grid)."""
        s = self.spec
        r = self.result.summary
        v = r.verdict
        names = FAMILIES[s.mech.kind].params
        make = self._MAKE[s.mech.kind].format(*names)
        code = (
            ("import numpy as np\n" if v.method == "fallback" else "")
            + "from dpexplore import mechanisms\nfrom dpexplore.accounting import conversions\n\n"
            + snippet_assign(dict(zip(names, s.mech.params)), [PARAMS[n] for n in names])
            + f"profile = {make}\n"
        )
        args = f"tol={MEASURE_TOL!r}, budget={EVAL_BUDGET!r}"
        if s.mech.kind == "gaussian":  # exactly Δ/σ-GDP (Liu et al. 2022, Thm 3.1): the fallback's upper end
            args += f", theory_upper=mechanisms.Gaussian({names[0]}).mu"
        if v.method == "fallback":
            code += f"eps = np.linspace(0.0, {float(r.eps[-1])!r}, {N_EPS})   # the plot's ε grid\n"
            if r.eps.size > N_EPS:  # pure DP: the points that draw the dive towards eps_max
                code += (
                    "eps = np.unique(np.concatenate([eps, profile.eps_max * (1.0 - np.logspace(-1.0, -12.0, 12))]))\n"
                )
            args += ", grid=eps"
        code += (
            f"b = conversions.gdp_bracket(profile, {args})\n"
            "# tail value mu_t (Liu et al. 2022, Thm 3.3) and lower < mu* <= upper (Liu et al. 2022, result “GDPT”)\n"
        )
        if not v.is_gdp:
            return code + "print('GDP:', b.is_gdp, '-', b.explanation)\n"
        if not math.isnan(v.mu_t):
            code += "print(f'mu_t = {b.mu_tail:.6g}')\n"
        if v.mu_upper is None:
            return code + "print(f'mu* > {b.lower:.6g} (violated)')\n" if v.mu_lower is not None else code
        return code + (
            "print(f'{b.lower or 0:.6g} < mu* <= {b.upper:.6g}')\n"
            f"for mu in {tuple(s.mus)!r}:\n"
            "    print(f'mu = {mu:g}:', 'mu-GDP (certified)' if mu >= b.upper else\n"
            "          'not mu-GDP' if b.lower is not None and mu <= b.lower else 'undecided')\n"
        )

    # readout ----------------------------------------------------------------------------------
    @staticmethod
    def _verdict_html(v: GdpVerdict, what: str) -> str:
        if not v.is_gdp:
            return f"<b>{what}: not GDP</b> — {html.escape(v.reason)}."
        tail = "δ = 0 beyond ε_max, so μ_t = 0" if v.mu_t == 0.0 else f"μ_t = {_fmt(v.mu_t)}"
        out = f"<b>{what}: GDP</b> with tail value {tail} (Liu et al. 2022, Thm 3.3)"
        if v.mu_upper is not None:
            out += (
                f"; optimal μ*: {_fmt(v.mu_lower) if v.mu_lower is not None else '0'} "
                f"&lt; μ* ≤ <b>{_fmt(v.mu_upper)}</b> (upper end certified; dashed curve)"
            )
        else:
            out += f"; μ* &gt; {_fmt(v.mu_lower)} (violated)" if v.mu_lower is not None else ""
        if v.method == "fallback":
            out += f". <i>{html.escape(v.reason)}</i>"
        else:
            out += f" [{html.escape(v.method)}]"
        return out + "."

    def _set_texts(self, r: ProfileGdpResult) -> None:
        s = r.summary
        lines = [self._verdict_html(s.verdict, "Mechanism" if s.verdict_naive is None else "Refined profile")]
        if s.verdict_naive is not None:
            lines.append(self._verdict_html(s.verdict_naive, "Naive inversion"))
        word = {
            "yes": "μ-GDP ✔ (certified)",
            "no": "not μ-GDP ✘ (δ_A &gt; δ_μ somewhere)",
            "undecided": "undecided at this tolerance",
        }
        per = "Your μ values: " + "; ".join(f"μ = {mu:g}: {word[s.verdict.status(mu)]}" for mu in r.spec.mus)
        lines.append(per)
        self.readout.value = "<br>".join(lines)


_SHORT_NAMES = {
    "laplace": ("Laplace", "b"),
    "gaussian": ("Gaussian", "σ"),
    "pure": ("RR", "ε"),
    "logistic": ("Logistic", "s"),
    "subbotin": ("Subbotin", "s", "r"),
    "equation": ("equation", "A", "B", "σ"),
}


def _short_label(mech: MechSpec) -> str:
    """A short legend label: "Laplace b = 1.259" (the backend's name prints every digit).

    >>> _short_label(MechSpec("subbotin", (1.2589254117942, 1.5)))
    'Subbotin s = 1.259, r = 1.5'
    """
    name, *params = _SHORT_NAMES[mech.kind]
    return name + " " + ", ".join(f"{p} = {v:.4g}" for p, v in zip(params, mech.params))


_PARAM_CONTROLS = tuple(PARAMS)


def _controls(mechanism: str, mus: str) -> dict[str, W.ValueWidget]:
    # Subbotin and the refined equation profile take ~50-150 ms per setting (the deep-tail search
    # of gdp_identify evaluates log δ near δ = 1e-5000): their sliders update on release only, so
    # a drag does not queue one computation per pixel.
    _slow = {"continuous_update": False}
    return {
        "mechanism": dropdown("mechanism", [(f.label, f.key) for f in FAMILIES.values()], mechanism, width="520px"),
        **{
            name: param_slider(
                PARAMS[name], v, **(_slow if name in ("sub_s", "sub_r", "eq_A", "eq_B", "eq_sigma") else {})
            )
            for name, v in zip(_PARAM_CONTROLS, (1.0, 1.0, 1.0, 1.0, 1.0, 1.5, 2.0, 1.0, 2.0))
        },
        "mus": W.Text(
            value=mus,
            description="μ values (comma-separated) [GDP parameter]",
            continuous_update=False,
            style={"description_width": "initial"},
            layout=W.Layout(width="min(100%, 520px)"),
        ),
        "view": W.ToggleButtons(
            options=[("privacy profile δ(ε)", "profile"), ("trade-off β(α) (f-DP)", "tradeoff")],
            value="profile",
            description="view",
        ),
    }


_FORMULAS = (
    r"<b>μ-GDP profile</b> (Liu et al. 2022, Thm 3.1; Dong, Roth &amp; Su 2022, Cor. 2.13): a mechanism is μ-GDP iff "
    r"$\delta_A(\varepsilon) \le \delta_\mu(\varepsilon)$ for all $\varepsilon \ge 0$, where "
    r"$$\delta_\mu(\varepsilon) = \Phi\!\left(-\frac{\varepsilon}{\mu} + \frac{\mu}{2}\right) - "
    r"e^{\varepsilon}\,\Phi\!\left(-\frac{\varepsilon}{\mu} - \frac{\mu}{2}\right).$$"
    r"<b>Identification</b> (Liu et al. 2022, Thm 3.3): $\mu_t = \lim_{\varepsilon\to\infty} "
    r"\varepsilon/\sqrt{-2\log\delta_A(\varepsilon)}$; the mechanism is GDP iff $\mu_t &lt; \infty$, "
    r"and then only for $\mu \ge \mu_t$. The plot cannot decide this — the curves may cross far "
    r"below the axis floor $\delta = 10^{-13}$ — the tail limit can. "
    r"<b>Measurement</b> (Liu et al. 2022, result “GDPT”): a bracket $\mu_{\rm lower} &lt; \mu^* \le \mu_{\rm upper}$, "
    r"the lower end violated at an explicit $\varepsilon$, the upper end certified on a grid plus the tail. "
    r"<b>f-DP view</b>: μ-GDP means $\beta(\alpha) \ge G_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha) - \mu)$ "
    r"for every type I error $\alpha$ (Dong, Roth &amp; Su 2022, definition “μ-GDP”; Liu et al. 2022, Section 1)."
)


INFO = AppInfo(
    slug="profile_gdp",
    title="Privacy profile vs Gaussian differential privacy",
    lead=(
        "Is a mechanism μ-GDP, and for which μ? Its exact privacy profile δ(ε) is drawn against "
        "μ-GDP curves, with the verdict (tail value μ_t, certified bracket for the best μ) beside it."
    ),
    theory=_FORMULAS
    + (
        "<p><small>Sensitivity Δ = 1. δ = 0 (pure DP beyond ε_max) cannot be drawn on a log "
        "axis: the curve ends there (a gap). The y axis shows δ ≥ 10⁻¹³; the curves are computed "
        "exactly in log space below it.</small></p>"
    ),
)


def build_profile_gdp(mechanism: str = "laplace", mus: str = "1, 2") -> AppShell:
    """The app in the shell: mechanism dropdown and its parameter sliders, μ values, view toggle,
    the GDP verdict, and the two figures (one shown at a time).

    >>> app = build_profile_gdp("gaussian", "1")
    >>> ctrl = app.controller
    >>> ctrl.spec.mech, ctrl.spec.mus
    (MechSpec(kind='gaussian', params=(1.0,)), (1.0,))
    """
    if mechanism not in FAMILIES:
        raise ValueError(f"mechanism must be one of {sorted(FAMILIES)}, got {mechanism!r}")
    controls = _controls(mechanism, mus)
    ctrl = ProfileGdpController(controls, MessageArea())
    for fig in ctrl.figs:  # one of the two is shown at a time: it fits the window
        fig.css_height = MAIN_PLOT_HEIGHT
    panel = (
        [controls["mechanism"], ctrl.mech_info]
        + [controls[n] for n in _PARAM_CONTROLS]
        + [controls["mus"], controls["view"]]
    )
    return app_shell(
        INFO, ctrl, controls=panel, plots=[W.VBox(list(ctrl.figs))], readouts=[ctrl.readout], panel_width="400px"
    )
