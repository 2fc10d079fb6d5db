"""The composed ε of DP-SGD across the settings a practitioner tries: σ ∈ [0.05, 100],
q ∈ [1e-17, 1], k ∈ [1, 10⁶], δ ∈ [1e-12, 1e-2], hard corners included.

Target (issue 35): ours within max(1 % of the truth, 1e-3) above the truth, never below it. The
truth is bracketed by [lo, hi]:

* q = 1 — exact: k steps of the Gaussian are √k/σ-GDP (Dong, Roth & Su 2022, Corollary 3.3),
  evaluated with mpmath at 50 digits; ours must be ≥ it (up to 1e-12 relative) and within target;
* q = 1e-17 — δ(0) ≤ k·q (each step differs with probability q): at δ ≥ k·q the true ε is 0, and
  ours must be ≤ 1e-3;
* otherwise dp_accounting 0.6's PLD (``from_gaussian_mechanism(σ, sampling_prob=q,
  value_discretization_interval=h)``, ``self_compose(k)``, ``get_epsilon_for_delta``): the
  pessimistic (connect-the-dots) ε is ``hi``, the optimistic (privacy buckets, rounded down) ε is
  ``lo`` — ours ≥ lo and ours ≤ max(1.01·hi, hi + 1e-3). The values are stored below (computed
  once; dp_accounting takes up to 100 s a point at σ = 0.05), with the interval h of each; a few
  cheap ones are recomputed live in ``test_stored_references_are_dp_accountings``.

* Laplace(1) compositions (``LAPLACE``: 1000 and 10⁴ runs, stored; 1, 10 and 100 runs composed
  live, and one run against its closed form), against dp_accounting's Laplace PLD;
* mixed compositions (``MIXED``: Laplace, Gaussian and Poisson-subsampled Gaussian runs in one
  ``compose_all``), against dp_accounting's optimistic and pessimistic PLDs composed live;
* σ = 0.05 (``SMALL_SIGMA``) — a bracket from first principles, evaluated with mpmath
  (:func:`small_sigma_bracket`): there dp_accounting is no reference at δ = 1e-12 (its pessimistic
  ε at σ 0.05, q 1e-4, 10⁴ steps is 2737.2 with its default truncation, 2747.8 with lighter
  truncation; the truth lies in [2740.5, 2741.5], so its default is below the truth).

Where dp_accounting is no reference, the test says so and uses the best bracket at hand:
* at k = 10⁶ and δ = 1e-12 its truncated self-composition is off in both directions (at σ 100,
  q 1 it gives 115.33 against the exact 119.59, and 262.8 with lighter truncation): there the
  upper end is the Rényi DP bound (``accountant="rdp"``, a valid upper bound) and there is no
  lower end;
* beyond ε ≈ 745 its ``get_epsilon_for_delta`` snaps to its grid (e^{−ε} underflows): lo is
  widened by 2e-3 relative;
* at k = 10⁶ its optimistic estimate (rounded down, an error of up to k·h) is 0: no lower end.
"""

from __future__ import annotations

import functools
import math
import warnings

import pytest

from dpexplore.accounting import composition as C
from dpexplore.accounting.pld import AccuracyWarning

mp = pytest.importorskip("mpmath")

DELTAS = (1e-12, 1e-5, 1e-2)

#: (σ, q, k): {δ: (lo, hi)} from dp_accounting (interval in the comment); None: no bound there
DPA = {
    # h = 1e-4
    (1.0, 0.01, 10_000): {
        1e-12: (9.898007080714475, 10.306074430607868),
        1e-5: (5.687724402619225, 6.187744996604845),
        1e-2: (2.8658689772026236, 3.3658841321870328),
    },
    # h = 1e-3; δ = 1e-12: see the module docstring (Rényi DP above, nothing below)
    (1.0, 0.01, 1_000_000): {1e-12: (None, "rdp"), 1e-5: (None, 139.1405822392013), 1e-2: (None, 113.52156859408825)},
    # h = 1e-3
    (0.5, 0.01, 10_000): {
        1e-12: (63.89621247006563, 69.04978798525836),
        1e-5: (38.81444662697235, 43.367657045556165),
        1e-2: (23.56500955510321, 28.116988863923872),
    },
    # h = 1e-3; δ = 1e-12: module docstring
    (10.0, 0.5, 1_000_000): {1e-12: (None, "rdp"), 1e-5: (None, 1465.3159999079892), 1e-2: (None, 1368.187999910286)},
    # h = 1e-5
    (100.0, 0.01, 10_000): {
        1e-12: (0.010797408143910388, 0.06082199344601749),
        1e-5: (0.0, 0.027249478024159453),
        1e-2: (0.0, 0.0),
    },
    # h = 1e-6
    (10.0, 1e-4, 100): {
        1e-12: (0.0004969903722768821, 0.0005472106396863941),
        1e-5: (4.131993857451981e-05, 9.137995579878493e-05),
        1e-2: (0.0, 0.0),
    },
    # h = 1e-3
    (0.5, 0.5, 10_000): {
        1e-12: (7738.616999953957, 7745.030999954243),
        1e-5: (7295.691999863721, 7300.6919998637195),
        1e-2: (6989.926999801429, 6994.926999801427),
    },
    # h = 1e-4 (pessimistic only)
    (1.0, 0.5, 100): {
        1e-12: (None, 59.62616005780422),
        1e-5: (None, 39.97500269065134),
        1e-2: (None, 27.13292945736883),
    },
    # h = 1e-5
    (1.0, 1e-4, 10_000): {
        1e-12: (0.0927666507768401, 0.14208642709224054),
        1e-5: (0.0, 0.0380356581546734),
        1e-2: (0.0, 0.0),
    },
    # h = 1e-4
    (100.0, 0.5, 10_000): {
        1e-12: (2.958230940393145, 3.4555693104491056),
        1e-5: (1.4933461231242695, 1.9933874193453625),
        1e-2: (0.41953027029770495, 0.9195549813692376),
    },
}

EXACT = [(100.0, 1.0, 1_000_000), (0.05, 1.0, 1), (0.05, 1.0, 100), (1.0, 1.0, 10_000)]
TINY_Q = [(1.0, 1e-17, 1000), (100.0, 1e-17, 1_000_000), (0.05, 1e-17, 10_000)]


def ours(sigma, q, k, delta):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        return C.dpsgd_epsilon(sigma, q, k, delta)


def within_target(value, hi):
    return value <= max(hi * 1.01, hi + 1e-3)


CASES = [(s, q, k, d) for (s, q, k), refs in DPA.items() for d in DELTAS]


@pytest.mark.parametrize("sigma,q,k,delta", CASES)
def test_dpsgd_against_dp_accounting(sigma, q, k, delta):
    lo, hi = DPA[(sigma, q, k)][delta]
    e = ours(sigma, q, k, delta)
    if hi == "rdp":
        hi = C.dpsgd_epsilon(sigma, q, k, delta, accountant="rdp")
        assert e <= hi * (1 + 1e-12)
    else:
        assert within_target(e, hi), (e, hi)
    if lo is not None:
        snap = 2e-3 * lo if lo > 745 else 0.0  # dp_accounting snaps beyond ε ≈ 745
        assert e >= lo * (1 - 1e-9) - snap, (e, lo)


#: small σ: the bracket of :func:`small_sigma_bracket` (dp_accounting is no reference there)
SMALL_SIGMA = [(0.05, 0.01, 100), (0.05, 1e-4, 10_000)]


@functools.lru_cache(maxsize=None)
def small_sigma_bracket(sigma, q, k, delta):
    """[lo, hi] around the true ε of k Poisson-subsampled Gaussian steps (remove direction, the
    larger one here) at small σ, from first principles, with mpmath at 30 digits.

    One step outputs Y ~ P = (1 − q)N(0, σ²) + qN(1, σ²) against Q = N(0, σ²); its privacy
    loss is L = log(1 − q + q·e^x), x = (2Y − 1)/(2σ²). Let J ~ Binomial(k, q) count the steps
    that drew N(1, σ²). Pointwise in Y:

    * such a step has x ~ N(1/(2σ²), 1/σ²) and x + log q ≤ L ≤ x + log q + log(1 + e^{−x}/q);
      for Z ≥ −9 (x ≥ x₉ = 1/(2σ²) − 9/σ) the excess is at most c = log(1 + e^{−x₉}/q);
    * any other step has log(1 − q) ≤ L, and L ≤ 0 unless Z > 1/(2σ) (e^x ≤ 1 there).

    So, given J = j, the sum of the losses lies between the Gaussians
    N(j(1/(2σ²) + log q) + (k − j)log(1 − q), j/σ²) and the same with log(1 − q) → 0 and + jc,
    except on events of probability at most kq·Φ(−9) + k·Φ(−1/(2σ)). δ(ε) = E[(1 − e^{ε−L})₊] is
    non-decreasing in L pointwise, so δ_lo(ε) ≤ δ(ε) ≤ δ_hi(ε) + that probability, with
    E[(1 − e^{ε−G})₊] = Φ((m − ε)/s) − e^{ε−m+s²/2}Φ((m − ε)/s − s) for G ~ N(m, s²); each
    bound is inverted by bisection. Tight where the mixture over j dominates (σ 0.05: the
    bracket is 1.0 wide at ε ≈ 2741)."""
    with mp.workdps(30):
        s, q_, d = mp.mpf(sigma), mp.mpf(q), mp.mpf(delta)
        mean1, var1 = 1 / (2 * s * s) + mp.log(q_), 1 / (s * s)
        c = mp.log(1 + mp.exp(-(1 / (2 * s * s) - 9 / s)) / q_)
        rare = k * q_ * mp.ncdf(-9) + k * mp.ncdf(-1 / (2 * s))
        jmax = int(k * q) + 40 + int(10 * math.sqrt(k * q))
        weights = [mp.binomial(k, j) * q_**j * (1 - q_) ** (k - j) for j in range(jmax)]
        tail_j = 1 - mp.fsum(weights)  # J ≥ jmax: counted as δ = 1 (upper end)

        def dlt(eps, upper):
            tot = mp.mpf(0)
            for j, w in enumerate(weights):
                m = j * (mean1 + (c if upper else 0)) + (0 if upper else (k - j) * mp.log(1 - q_))
                if j == 0:
                    tot += w * max(1 - mp.exp(eps - m), 0)
                    continue
                sd = mp.sqrt(j * var1)
                a = (m - eps) / sd
                tot += w * (mp.ncdf(a) - mp.exp(eps - m + sd * sd / 2) * mp.ncdf(a - sd))
            return tot + (rare + tail_j if upper else 0)

        def invert(upper):
            lo, hi = mp.mpf(0), mp.mpf(10) * jmax / (s * s)
            for _ in range(48):  # to ~1e-9 of the bracket's start: far below its width
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if dlt(mid, upper) > d else (lo, mid)
            return float(lo if not upper else hi)

        return invert(False), invert(True)


def test_small_sigma_bracket_is_tight_and_holds_dp_accountings_value():
    """The bracket is 1.0 wide (the k·log(1 − q) of the other steps) and holds dp_accounting's
    pessimistic ε where that is trustworthy (δ = 1e-5: 1456.209 at interval 1e-3)."""
    lo, hi = small_sigma_bracket(0.05, 1e-4, 10_000, 1e-5)
    assert 0.99 < hi - lo < 1.01
    assert lo <= 1456.208999715987 <= hi


@pytest.mark.parametrize("sigma,q,k", SMALL_SIGMA)
@pytest.mark.parametrize("delta", DELTAS)
def test_dpsgd_at_small_sigma_within_the_first_principles_bracket(sigma, q, k, delta):
    lo, hi = small_sigma_bracket(sigma, q, k, delta)
    e = ours(sigma, q, k, delta)
    assert e >= lo * (1 - 1e-9), (e, lo)
    assert within_target(e, hi), (e, hi)


#: Laplace(1) compositions, k: {δ: (lo, hi)} from dp_accounting 0.6 (``from_laplace_mechanism``,
#: interval 1e-4 for k = 1000, 1e-3 for 10⁴): at δ ≥ 1e-5 its optimistic (privacy buckets) and
#: pessimistic (connect-the-dots) ε; at δ = 1e-12 its truncation makes both unreliable (the
#: "optimistic" one exceeds the pessimistic one), so (lo, hi) is the range of its four values
#: (both estimates, tail truncation 1e-15 and 1e-22), and ours must lie within 1 % of it
LAPLACE = {
    1000: {
        1e-12: (541.3759209496343, 541.5395051338967),
        1e-5: (474.2872601400299, 474.3024468859849),
        1e-2: (426.06272797956774, 426.0782185342681),
    },
    10_000: {
        1e-12: (4234.827999797342, 4244.993999805984),
        1e-5: (4021.117999760374, 4022.6809997604114),
        1e-2: (3865.359999728642, 3866.930999728681),
    },
}


@pytest.mark.parametrize("k", sorted(LAPLACE))
@pytest.mark.parametrize("delta", DELTAS)
def test_laplace_composition_against_dp_accounting(k, delta):
    """compose(Laplace(1), k): a single FFT power, and where its round-off term is not small
    against δ, tilted products (at k = 10⁴, δ = 1e-12 the FFT power alone gave 5236)."""
    from dpexplore.mechanisms import Laplace

    lo, hi = LAPLACE[k][delta]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        e = float(C.compose(Laplace(1.0), k).epsilon(delta))
    if delta >= 1e-5:
        assert lo * (1 - 1e-9) <= e and within_target(e, hi), (e, lo, hi)
    else:
        assert 0.99 * lo <= e <= 1.01 * hi, (e, lo, hi)


def exact_gdp_epsilon(mu, delta):
    """ε of μ-GDP at δ, by mpmath at 50 digits (Dong, Roth & Su 2022, Corollary 2.13)."""
    with mp.workdps(50):
        mu, delta = mp.mpf(mu), mp.mpf(delta)

        def d(e):
            return mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2) - delta

        lo, hi = mp.mpf(0), mu * mu / 2 + mu * mp.sqrt(2 * mp.log(1 / delta)) + 10
        if d(lo) <= 0:
            return 0.0
        for _ in range(120):  # bisection: δ(ε) falls with ε
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if d(mid) > 0 else (lo, mid)
        return float(hi)


@pytest.mark.parametrize("sigma,q,k", EXACT)
@pytest.mark.parametrize("delta", DELTAS)
def test_dpsgd_at_q_one_is_the_exact_gdp(sigma, q, k, delta):
    truth = exact_gdp_epsilon(math.sqrt(k) / sigma, delta)
    e = ours(sigma, q, k, delta)
    assert e >= truth * (1 - 1e-9)
    assert within_target(e, truth)


@pytest.mark.parametrize("sigma,q,k", TINY_Q)
@pytest.mark.parametrize("delta", DELTAS)
def test_dpsgd_at_tiny_q_no_memory_error_and_tight(sigma, q, k, delta):
    e = ours(sigma, q, k, delta)
    assert 0.0 <= e
    if delta >= k * q:  # δ(0) ≤ k·q ≤ δ: the true ε is 0
        assert e <= 1e-3


def test_stored_references_are_dp_accountings():
    dpa = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    p = dpa.from_gaussian_mechanism(1.0, sampling_prob=0.5, value_discretization_interval=1e-4)
    assert p.self_compose(100).get_epsilon_for_delta(1e-5) == pytest.approx(DPA[(1.0, 0.5, 100)][1e-5][1], rel=1e-9)
    p = dpa.from_gaussian_mechanism(
        10.0, sampling_prob=1e-4, value_discretization_interval=1e-6, pessimistic_estimate=False
    )
    # ε ≈ 5e-4 from Privacy Buckets' FFTs: their round-off is ~1e-11 absolute here, and moves
    # with numpy/scipy (numpy 2.4.6, scipy 1.17.1 gave 2.5e-8 relative below the stored value):
    # the check is that the stored number is this computation's, not the FFT's last digits
    assert p.self_compose(100).get_epsilon_for_delta(1e-12) == pytest.approx(DPA[(10.0, 1e-4, 100)][1e-12][0], rel=1e-6)


def test_dp_sgd_classic_point():
    """σ 1, q 0.01, 10⁴ steps, δ 1e-5: dp_accounting (interval 1e-4) 6.187745."""
    assert 6.1877 <= ours(1.0, 0.01, 10_000, 1e-5) <= 6.1877 * 1.002


#: mixed compositions (``compose_all``): name → items as (kind, parameters, k) — built in the test
#: (the mechanisms are imported there) and in dp_accounting's PLD alike
MIXED = {
    "laplace+gaussian+dpsgd": (("laplace", 2.0, None, 3), ("gaussian", 4.0, None, 10), ("gaussian", 1.0, 0.01, 1000)),
    "dpsgd+laplace": (("gaussian", 0.7, 0.1, 100), ("laplace", 1.0, None, 10)),
    "gaussians, one subsampled": (("gaussian", 10.0, None, 100), ("gaussian", 2.0, 0.5, 50)),
}


def mixed_bracket(name, delta):
    """(lo, hi): dp_accounting's optimistic (privacy buckets) and pessimistic (connect-the-dots)
    ε of the mixed composition at ``delta``."""
    return tuple(p.get_epsilon_for_delta(delta) for p in mixed_plds(name))


@functools.lru_cache(maxsize=None)
def mixed_plds(name):
    """dp_accounting's optimistic and pessimistic PLDs of the mixed composition, interval 1e-4,
    composed live (~1 s each)."""
    dpa = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    out = []
    for pess in (False, True):
        total = None
        for kind, scale, q, k in MIXED[name]:
            kw = dict(value_discretization_interval=1e-4, pessimistic_estimate=pess)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if kind == "laplace":
                    p = dpa.from_laplace_mechanism(scale, **kw)
                else:
                    p = dpa.from_gaussian_mechanism(scale, sampling_prob=q or 1.0, **kw)
            p = p.self_compose(k)
            total = p if total is None else total.compose(p)
        out.append(total)
    return tuple(out)


@pytest.mark.parametrize("name", sorted(MIXED))
@pytest.mark.parametrize("delta", DELTAS)
def test_mixed_composition_against_dp_accounting(name, delta):
    """compose_all of Laplace, Gaussian and Poisson-subsampled Gaussian runs: never below
    dp_accounting's optimistic ε, within target of its pessimistic one."""
    from dpexplore.mechanisms import Gaussian, Laplace, subsample

    def build(kind, scale, q, k):
        m = Laplace(scale) if kind == "laplace" else Gaussian(scale)
        return (subsample(m, q) if q else m), k

    lo, hi = mixed_bracket(name, delta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        e = float(C.compose_all([build(*it) for it in MIXED[name]]).epsilon(delta))
    assert e >= lo * (1 - 1e-9), (e, lo, hi)
    assert within_target(e, hi), (e, lo, hi)


@pytest.mark.parametrize("k", [1, 10, 100])
@pytest.mark.parametrize("delta", DELTAS)
def test_short_laplace_compositions_against_dp_accounting(k, delta):
    """compose(Laplace(1), k) for few runs, against dp_accounting's optimistic and pessimistic
    Laplace PLDs (interval 1e-4) composed live; k = 1 against the closed form too:
    ε(δ) = 1 + 2 log(1 − δ) for δ < 1 − e^{−1/2} (δ(ε) = 1 − e^{(ε − 1)/2} on [0, 1])."""
    from dpexplore.mechanisms import Laplace

    dpa = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    lo, hi = (
        dpa.from_laplace_mechanism(1.0, value_discretization_interval=1e-4, pessimistic_estimate=p)
        .self_compose(k)
        .get_epsilon_for_delta(delta)
        for p in (False, True)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        e = float(C.compose(Laplace(1.0), k).epsilon(delta))
    assert e >= lo * (1 - 1e-9) and within_target(e, hi), (e, lo, hi)
    if k == 1:
        truth = 1.0 + 2.0 * math.log1p(-delta)
        assert truth <= e <= truth + max(0.01 * truth, 1e-3)


def _ternary_max(f, lo, hi, steps=100):
    """max of a unimodal f on [lo, hi] (ternary search)."""
    for _ in range(steps):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        lo, hi = (m1, hi) if f(m1) < f(m2) else (lo, m2)
    return f((lo + hi) / 2)


@functools.lru_cache(maxsize=None)
def rare_event_lower_bound(sigma, q, k, delta):
    """A lower bound on the true ε of k Poisson-subsampled Gaussian steps, from first principles
    (mpmath, 40 digits), where k·q is tiny. With J ~ Binomial(k, q) the steps that see the
    record, p₀ = P(J ≥ 1) and c_j = P(J = j | J ≥ 1), the remove direction's law is
    (1 − p₀)Q + p₀R, so δ_k(ε) = p₀·H_{γ′}(R‖Q) with γ′ = 1 + (e^ε − 1)/p₀ (exactly), and
    R ≥ c₁P₁ + c₂P₂, with P_j the law with j shifted steps at uniform places among k. For any
    S ⊇ S₁ ∪ S₂, H_{γ′}(R‖Q) ≥ c₁P₁(S₁) + c₂P₂(S₂) − γ′(Q(S₁) + Q(S₂)). Take S₁ = {some step's
    loss ℓ exceeds τ₁} and S₂ = {some two steps' ℓ_i + ℓ_j exceed τ₂}: P₁(S₁) ≥ P_B(ℓ > τ₁),
    Q(S₁) ≤ k·P_A(ℓ > τ₁), P₂(S₂) ≥ P_{B,B}(ℓ + ℓ′ > τ₂), Q(S₂) ≤ C(k, 2)·P_{A,A}(ℓ + ℓ′ > τ₂),
    with ℓ ~ N(±μ²/2, μ²) under B and A (μ = 1/σ); each part is maximised over its τ (it is
    unimodal in τ), or left out. ε_lo is the largest ε found where that bound exceeds δ. (The
    two-step part matters where (k·q)² is near δ: at σ 0.05, q 1e-9, 10³ steps, δ 1e-12 it
    raises the bound from 273.45 to 276.20.)"""
    with mp.workdps(40):
        s, q, k, d = mp.mpf(sigma), mp.mpf(q), mp.mpf(k), mp.mpf(delta)
        mu = 1 / s
        p0 = -mp.expm1(k * mp.log1p(-q))

        def c(j):
            return mp.binomial(k, j) * q**j * mp.exp((k - j) * mp.log1p(-q)) / p0

        c1, c2, pairs, wide = c(1), c(2), mp.binomial(k, 2), 60 * mu * mu + 200

        def bound(eps):
            g = 1 + mp.expm1(eps) / p0
            one = _ternary_max(
                lambda t: c1 * mp.ncdf(-(t - mu * mu / 2) / mu) - g * k * mp.ncdf(-(t + mu * mu / 2) / mu), -wide, wide
            )
            two = _ternary_max(
                lambda t: (
                    c2 * mp.ncdf(-(t - mu * mu) / (mp.sqrt(2) * mu))
                    - g * pairs * mp.ncdf(-(t + mu * mu) / (mp.sqrt(2) * mu))
                ),
                -wide,
                wide,
            )
            return p0 * (max(one, 0) + max(two, 0))

        lo, hi = mp.mpf(0), mp.mpf(2000)
        if bound(lo) <= d:
            return 0.0
        for _ in range(60):  # the bound falls with ε (to 2e-15)
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if bound(mid) > d else (lo, mid)
        return float(lo)


#: tiny k·q with δ below it: the true ε is not 0
RARE = [
    (0.05, 1e-17, 1_000_000, 1e-12),
    (0.05, 1e-9, 1000, 1e-12),
    (0.5, 1e-9, 1000, 1e-8),
    (1.0, 1e-12, 10_000, 1e-12),
    (0.1, 1e-10, 100_000, 1e-9),
]


@pytest.mark.parametrize("sigma,q,k,delta", RARE)
def test_tiny_rate_never_below_the_rare_event_lower_bound(sigma, q, k, delta):
    """compose and dpsgd_epsilon at a tiny rate q where δ < k·q: never below the first-principles
    lower bound, and within the issue's target of it, with no AccuracyWarning (at σ 0.1, q 1e-10,
    10⁵ steps, δ 1e-9 the rare-event bound gives 63.52 against a lower bound of 63.345, and the
    PLD 63.345 since its FFT products take the bulk's cell directly; before, compose's PLD fell
    0.14 % below the lower bound at small ε, its check fired and the rare-event bound answered)."""
    from dpexplore.mechanisms import Gaussian, subsample

    lo = rare_event_lower_bound(sigma, q, k, delta)
    with warnings.catch_warnings():  # compose's check against the lower bound must not fire
        warnings.simplefilter("error", AccuracyWarning)
        e = C.dpsgd_epsilon(sigma, q, k, delta)
        c = float(C.compose(subsample(Gaussian(sigma), q), k).epsilon(delta))
    assert e >= lo * (1 - 1e-9) and c >= lo * (1 - 1e-9), (e, c, lo)
    assert within_target(e, lo) and within_target(c, lo), (e, c, lo)


#: small σ and a small rate, where the composed PLD once lost the rare large losses and
#: answered far below the truth (σ 0.3, q 1e-5, 100 steps, δ 1e-5: 0.001 where the truth is
#: 1.3465): the tilted FFT product set a valley between the bulk and the upper tail to 0 and moved
#: its mass to the bottom (:func:`dpexplore.accounting.pld._convolve` now merges tilts). Each with
#: dp_accounting 0.6's pessimistic (connect-the-dots) ε at interval 1e-4, computed once (1.4 s
#: each; the first is recomputed live below)
PLD_LOST = {
    (0.3, 1e-5, 100, 1e-5): 1.3464904072649742,
    (0.3, 1e-5, 1000, 1e-5): 3.6675901672961024,
    (0.3, 1e-5, 10_000, 1e-5): 5.79681030217198,
    (0.3, 1e-5, 1000, 1e-8): 9.27519125333871,
    (0.266, 2.12e-7, 1581, 9.8e-6): 0.12815760707095786,
}


@pytest.mark.parametrize("sigma,q,k,delta", list(PLD_LOST))
def test_small_sigma_small_rate_safe_and_within_target(sigma, q, k, delta):
    """Never below the first-principles lower bound, within target of dp_accounting, and with no
    AccuracyWarning (compose's check against the lower bound no longer fires; it answered with
    the looser Rényi DP and rare-event bounds: 2.04 at the first point)."""
    from dpexplore.mechanisms import Gaussian, subsample

    lo = rare_event_lower_bound(sigma, q, k, delta)
    with warnings.catch_warnings():
        warnings.simplefilter("error", AccuracyWarning)
        e = C.dpsgd_epsilon(sigma, q, k, delta)
        c = float(C.compose(subsample(Gaussian(sigma), q), k).epsilon(delta))
    assert e >= lo * (1 - 1e-9) and c >= lo * (1 - 1e-9), (e, c, lo)
    hi = PLD_LOST[(sigma, q, k, delta)]
    assert within_target(e, hi) and within_target(c, hi), (e, c, hi)


def test_small_sigma_small_rate_reference_is_dp_accountings():
    dpa = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    (sigma, q, k, delta), hi = next(iter(PLD_LOST.items()))
    pld = dpa.from_gaussian_mechanism(sigma, sampling_prob=q, value_discretization_interval=1e-4, use_connect_dots=True)
    assert pld.self_compose(k).get_epsilon_for_delta(delta) == pytest.approx(hi, rel=1e-6)
