"""A mechanism defined here, outside the library, composes, compares, has its card and shows in
``explore`` like a shipped one: every mechanism states how it composes, its privacy loss and its
card's facts itself (the hooks of ``dpexplore.mechanisms._base._PrivacyMechanism``), so
``dpexplore.accounting.composition`` and ``dpexplore.display`` name no mechanism class and adding one is one
class. The two below are real mechanisms with their exact math:

* :class:`KaryRR` — k-ary randomized response: a value among m is reported truthfully with
  probability e^ε/(e^ε + m − 1), as each other value with 1/(e^ε + m − 1). For neighbouring inputs
  x, x' the output x has likelihood ratio e^ε, x' has e^{−ε} and the other m − 2 outputs 1, so the
  privacy loss is ε, 0, −ε with probabilities (e^ε, m − 2, 1)/(e^ε + m − 1) and
  δ(ε') = (e^ε − e^{ε'})₊/(e^ε + m − 1). No closed form for k runs: it gives its loss to the
  privacy loss distribution (``_loss_tails``), which composes it numerically (never below the
  truth), checked here against the exact trinomial sum.
* :class:`VectorGaussian` — N(0, σ²I) added to a d-dimensional query of L2 sensitivity Δ: on the
  line through f(x) and f(x') the pair is N(0, σ²) against N(Δ, σ²) and the other directions
  cancel, so it is exactly Δ/σ-GDP for every d (Dong, Roth & Su 2022): it states its μ
  (``_gdp_mu``), and k runs are exactly √k·Δ/σ-GDP.
"""

from __future__ import annotations

import ast
import math
import pathlib
import subprocess
import sys
from dataclasses import dataclass

import numpy as np
import pytest
from scipy import special

import dpexplore
from dpexplore import display
from dpexplore.accounting import risk
from dpexplore._numerics import gaussian_log_delta, log1mexp
from dpexplore._validation import check_alpha, scalar_out
from dpexplore.accounting.composition import compose, compose_all, compose_epsilon, optimal
from dpexplore.display import card_facts, card_html, compare, profile_of
from dpexplore.mechanisms import Gaussian, Laplace, RandomizedResponse
from dpexplore.mechanisms._base import _Mechanism, _store
from dpexplore.accounting.profiles import GaussianDPProfile


@dataclass(frozen=True)
class KaryRR(_Mechanism):
    """k-ary randomized response over ``m`` values at privacy parameter ``eps`` (module docstring)."""

    eps: float
    m: int = 3

    def __post_init__(self):
        _store(self, "eps", np.asarray(self.eps, dtype=np.float64))
        if int(self.m) != self.m or self.m < 2:
            raise ValueError(f"m must be an integer >= 2, got {self.m!r}")

    @property
    def eps_max(self):
        return self.eps

    @property
    def loss_support(self):
        return (-float(self.eps), float(self.eps))

    def _log_z(self):
        return np.logaddexp(np.asarray(self.eps, dtype=np.float64), math.log(self.m - 1))

    def _log_delta(self, eps):
        e0 = np.asarray(self.eps, dtype=np.float64)
        e = np.asarray(eps, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = e0 + log1mexp(np.minimum(e - e0, 0.0)) - self._log_z()
        return np.where(e >= e0, -np.inf, out)

    def _loss_tails(self, x):
        """log P(L > x), log P(L ≤ x), log Q(L > x), log Q(L ≤ x): under x the loss is ε, 0, −ε
        with weights e^ε, m − 2, 1; under x' with weights 1, m − 2, e^ε (all over e^ε + m − 1)."""
        x = np.asarray(x, dtype=np.float64)
        e, lz = float(self.eps), float(self._log_z())
        with np.errstate(divide="ignore"):
            lm2 = math.log(self.m - 2) if self.m > 2 else -np.inf
        top_p, mid, bot_p = e - lz, lm2 - lz, -lz  # P(L = ε), P(L = 0), P(L = −ε)
        top_q, bot_q = -lz, e - lz  # Q(L = ε), Q(L = −ε)
        below, neg, pos = x < -e, (x >= -e) & (x < 0), (x >= 0) & (x < e)

        def pick(a_below, a_neg, a_pos, a_above):
            return np.where(below, a_below, np.where(neg, a_neg, np.where(pos, a_pos, a_above)))

        sp = pick(0.0, np.logaddexp(top_p, mid), top_p, -np.inf)
        cp = pick(-np.inf, bot_p, np.logaddexp(bot_p, mid), 0.0)
        sq = pick(0.0, np.logaddexp(top_q, mid), top_q, -np.inf)
        cq = pick(-np.inf, bot_q, np.logaddexp(bot_q, mid), 0.0)
        return sp, cp, sq, cq

    def rdp(self, alpha):
        """D_α = log[(e^{αε} + e^{(1−α)ε} + m − 2)/(e^ε + m − 1)]/(α − 1), exact."""
        a = check_alpha(alpha, "alpha")
        e = float(self.eps)
        with np.errstate(over="ignore", invalid="ignore"):
            num = np.logaddexp(np.logaddexp(a * e, (1.0 - a) * e), math.log(self.m - 2) if self.m > 2 else -np.inf)
            out = np.where(np.isinf(a), e, (num - float(self._log_z())) / (a - 1.0))
        return scalar_out(out)

    def _label(self):
        return f"{self.m}-RR(ε={self.eps!r})"


@dataclass(frozen=True)
class VectorGaussian(_Mechanism):
    """N(0, σ²I) noise on a ``dim``-dimensional query of L2 sensitivity ``l2_sensitivity``."""

    sigma: float
    l2_sensitivity: float = 1.0
    dim: int = 1

    eps_max = np.inf

    def _log_delta(self, eps):
        return gaussian_log_delta(self._gdp_mu(), np.asarray(eps, dtype=np.float64))

    def _gdp_mu(self):
        return float(self.l2_sensitivity) / float(self.sigma)

    def rdp(self, alpha):
        a = check_alpha(alpha, "alpha")
        return scalar_out(a * self._gdp_mu() ** 2 / 2.0)

    def _label(self):
        return f"VectorGaussian(σ={self.sigma!r}, Δ₂={self.l2_sensitivity!r}, d={self.dim})"


def _exact_kfold_delta(eps0: float, m: int, k: int, eps: float) -> float:
    """δ(ε) of k runs of m-ary RR(ε0): E[(1 − e^{ε − L})₊] over the trinomial law of the loss
    L = ε0·(a − b), a runs reporting x (weight e^{ε0}), b reporting x' (weight 1)."""
    lz = float(np.logaddexp(eps0, math.log(m - 1)))
    lp = {1: eps0 - lz, 0: (math.log(m - 2) if m > 2 else -math.inf) - lz, -1: -lz}
    total = 0.0
    for a in range(k + 1):
        for b in range(k + 1 - a):
            c = k - a - b
            if c and m == 2:
                continue
            log_w = special.gammaln(k + 1) - special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(c + 1)
            log_w += a * lp[1] + b * lp[-1] + (c * lp[0] if c else 0.0)
            loss = eps0 * (a - b)
            if loss > eps:
                total += math.exp(log_w) * -math.expm1(eps - loss)
    return total


def test_its_profile_is_the_closed_form_and_rr_at_two_values():
    m = KaryRR(1.0, 4)
    assert m.delta(0.3) == pytest.approx((math.e - math.exp(0.3)) / (math.e + 3), rel=1e-13)
    assert KaryRR(1.0, 2).delta(0.3) == pytest.approx(RandomizedResponse(1.0).delta(0.3), rel=1e-13)
    assert m.epsilon(0.0) == 1.0 and m.delta(1.0) == 0.0
    # its Rényi DP at α → ∞ is ε, at α = 2 the closed form
    assert m.rdp(2.0) == pytest.approx(math.log((math.exp(2) + math.exp(-1) + 2) / (math.e + 3)), rel=1e-13)


@pytest.mark.parametrize("m_values", [2, 3, 10])
def test_compose_goes_through_its_own_privacy_loss(m_values):
    mech, k = KaryRR(0.8, m_values), 12
    p = compose(mech, k)
    for eps in (0.5, 2.0, 5.0):
        exact = _exact_kfold_delta(0.8, m_values, k, eps)
        got = float(p.delta(eps))
        assert got >= exact * (1 - 1e-12)  # never below the truth
        assert got == pytest.approx(exact, rel=2e-2, abs=1e-12)
    e = float(p.epsilon(1e-6))
    assert _exact_kfold_delta(0.8, m_values, k, e) <= 1e-6  # ε is an upper bound
    assert _exact_kfold_delta(0.8, m_values, k, e - max(0.02 * e, 2e-3)) > 1e-6  # within the target
    # an ε-DP mechanism: never above the k-fold ε-DP optimum (RR's; equal for m = 2)
    assert e <= float(optimal(0.8, k, 1e-6)) * (1 + 1e-2)
    assert p.eps_max == pytest.approx(k * 0.8)


def test_compose_all_and_compose_epsilon_take_it():
    mech = KaryRR(1.0, 3)
    mixed = compose_all([(mech, 4), (Laplace(1.0), 3)])
    alone = compose(mech, 4)
    assert float(mixed.epsilon(1e-6)) > float(alone.epsilon(1e-6))
    assert float(mixed.epsilon(1e-6)) <= 4.0 + 3.0 + 1e-9  # basic composition
    np.testing.assert_array_equal(compose_epsilon(mech, [4], 1e-6), [alone.epsilon(1e-6)])
    assert "4×3-RR(ε=1.0)" in mixed.name


def test_its_card_and_compare_row():
    mech = KaryRR(1.0, 3)
    facts = {f.label: f for f in card_facts(mech).facts}
    assert facts["pure ε"].value == 1.0
    assert facts["ε at δ = 1e-05"].value == mech.profile.epsilon(1e-5)
    assert facts["zCDP ρ"].value == pytest.approx(math.tanh(0.5), rel=1e-12)  # ε·tanh(ε/2): from pure ε
    assert facts["RDP ε̂(α = 2)"].value == mech.rdp(2.0)
    assert facts["TPR at FPR 1.0%"].value == float(risk.tpr_at_fpr(mech.profile, 0.01))
    h = card_html(mech)
    assert "<h3>KaryRR <span" in h and "<svg" in h and "not available" not in h
    t = compare(mech, RandomizedResponse(1.0), KaryRR(np.array([0.5, 1.0]), 3))
    assert list(t.index) == [repr(mech), repr(RandomizedResponse(1.0)), repr(KaryRR(0.5, 3)), repr(mech)]
    # m = 3 values hide the truth better than two at the same ε
    assert t.iloc[0]["ε at δ = 1e-05"] < t.iloc[1]["ε at δ = 1e-05"]
    assert t.iloc[2]["pure ε"] == 0.5 and t.iloc[3].equals(t.iloc[0])
    # a composition of it: its parts' RDP summed, titled "Composition"
    c = card_facts(compose(mech, 4))
    assert c.title == "Composition" and c.parts == [(4, repr(mech))]
    rdp2 = {f.label: f.value for f in c.facts}["RDP ε̂(α = 2)"]
    assert rdp2 == pytest.approx(4 * float(mech.rdp(2.0)), rel=1e-15)


def test_a_gdp_mechanism_composes_in_closed_form():
    v = VectorGaussian(2.0, 1.0, dim=10)
    p = compose(v, 4)
    assert isinstance(p, GaussianDPProfile) and p.mu == 1.0
    assert p.epsilon(1e-5) == GaussianDPProfile(1.0).epsilon(1e-5)
    mixed = compose_all([(v, 4), (Gaussian(1.0), 1)])
    assert isinstance(mixed, GaussianDPProfile) and mixed.mu == pytest.approx(math.sqrt(2.0), rel=1e-15)
    np.testing.assert_array_equal(
        compose_epsilon(v, [1, 4], 1e-5), [GaussianDPProfile(0.5).epsilon(1e-5), GaussianDPProfile(1.0).epsilon(1e-5)]
    )
    # its card: the same numbers as the Gaussian mechanism's with the same μ
    t = compare(v, Gaussian(2.0))
    np.testing.assert_allclose(t.iloc[0].to_numpy(), t.iloc[1].to_numpy(), rtol=1e-12)
    facts = {f.label: f for f in card_facts(compose(v, 4)).facts}
    assert facts["μ-GDP"].value == 1.0 and facts["μ-GDP"].how == "exact: √(Σ k μ²)"
    assert facts["zCDP ρ"].value == 0.5


def test_explore_shows_them():
    objs = (KaryRR(1.0, 3), compose(KaryRR(1.0, 3), 4), VectorGaussian(2.0))
    app = dpexplore.explore(*objs)
    r = app.controller.result
    for obj, e in zip(objs, r.eps_at_delta):
        assert e == profile_of(obj).epsilon(r.delta)
    assert r.mus[2] == 0.5 and r.mu_how[2] == "exact"
    assert display._info(objs[1]).parts == [(4, repr(objs[0]))]


def _module_level_imports():
    """{module: the dpexplore modules its module-level imports need complete}: a submodule
    imported from a package that is itself still importing (``from .additive import X``) needs
    that submodule only; a name from a package's ``__init__`` needs the whole package."""
    root = pathlib.Path(dpexplore.__file__).parent.parent
    mods = {}
    for p in (root / "dpexplore").rglob("*.py"):
        rel = p.relative_to(root).with_suffix("").parts
        mods[".".join(rel[:-1] if rel[-1] == "__init__" else rel)] = p
    graph = {}
    for name, p in mods.items():
        here = name.split(".") if p.name == "__init__.py" else name.split(".")[:-1]
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        deps = set()

        def add(target, _deps=deps, _own=own, _name=name):
            parts = target.split(".")
            for i in range(1, len(parts) + 1):
                c = ".".join(parts[:i])
                if c in mods and c != _name and (c == target or c not in _own):
                    _deps.add(c)

        for node in ast.parse(p.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                for a in node.names:
                    add(a.name)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else []))
                if base.split(".")[0] != "dpexplore":
                    continue
                for a in node.names:
                    add(f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base)
        graph[name] = deps
    return graph


def test_the_package_has_no_import_cycle_and_mechanisms_stay_light():
    graph = _module_level_imports()
    assert graph["dpexplore.accounting.composition.tight"] >= {
        "dpexplore.mechanisms.subsampled",
        "dpexplore.accounting.pld",
    }
    # no mechanism module needs composition or display: they hand the mechanisms what they need
    mech = [m for m in graph if m.startswith("dpexplore.mechanisms")]
    assert not [
        (m, d)
        for m in mech
        for d in graph[m]
        if d.startswith(("dpexplore.accounting.composition", "dpexplore.display"))
    ]
    state, path = {}, []

    def visit(u):
        state[u] = "open"
        path.append(u)
        for v in sorted(graph[u]):
            assert state.get(v) != "open", f"import cycle: {' -> '.join(path[path.index(v) :] + [v])}"
            if v not in state:
                visit(v)
        path.pop()
        state[u] = "done"

    for u in sorted(graph):
        if u not in state:
            visit(u)
    # the mechanisms do not load the privacy loss distributions (scipy.signal: +0.4 s, +45 MB)
    code = "import sys, dpexplore.mechanisms; sys.exit('dpexplore.accounting.pld' in sys.modules)"
    assert subprocess.call([sys.executable, "-c", code], timeout=120) == 0
