"""Tests for sampling without replacement (fixed-size batches) under the substitution relation:
``subsample(mechanism, q, sampling="fixed")`` / :class:`dpexplore.mechanisms.subsampled.FixedSubsampled`.

Layers: RDP against dp_accounting's ``RdpAccountant(neighboring_relation=REPLACE_ONE)`` with
``SampledWithoutReplacementDpEvent`` (1e-9 relative at integer and fractional orders), and against
an mpmath evaluation of the same bound where dp_accounting's floating-point forward differences
cancel; the one-step profile against the closed form δ(ε) = q·δ_M(log(1 + (e^ε − 1)/q))
(Balle, Barthe & Gaboardi 2018, Theorem 9) in mpmath, never below it; k-step compositions
between dp_accounting's compositions of an independent pessimistic and optimistic discretization
of the same dominating pair, and below the RDP bound; pure-DP bases; hypothesis properties;
invalid inputs. dp_accounting's PLD accountant has no event for sampling without replacement,
hence the independent discretization.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from dpexplore.accounting import composition as C
from dpexplore.accounting.conversions import rdp_to_approx
from dpexplore.mechanisms import Gaussian, Laplace, Logistic, RandomizedResponse, subsample
from dpexplore.mechanisms.subsampled import SAMPLINGS, FixedSubsampled, PoissonSubsampled

dpa = pytest.importorskip("dp_accounting")
from dp_accounting.pld import privacy_loss_distribution as dpa_pld  # noqa: E402
from dp_accounting.rdp import rdp_privacy_accountant as dpa_rdp  # noqa: E402

mp.mp.dps = 40
N_RECORDS = 100_000  # dataset size for dp_accounting's event (q = sample size / N_RECORDS)


def fixed(mech, q):
    return subsample(mech, q, sampling="fixed")


# -- RDP against dp_accounting ------------------------------------------------------------------------
def dpa_wor_rdp(sigma, q, orders):
    """dp_accounting's RDP of one Gaussian step on a batch sampled without replacement (REPLACE_ONE)."""
    m = round(q * N_RECORDS)
    assert m == q * N_RECORDS
    acc = dpa_rdp.RdpAccountant(list(orders), neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    acc.compose(dpa.SampledWithoutReplacementDpEvent(N_RECORDS, m, dpa.GaussianDpEvent(sigma)))
    return np.asarray(acc._rdp, dtype=float)


# where dp_accounting's floating-point forward differences are accurate (σ ≲ 3; see below)
RDP_POINTS = [(0.5, 0.01), (1.0, 0.01), (1.1, 0.001), (2.0, 0.1), (0.8, 1e-4), (0.3, 0.3), (3.0, 0.9), (0.05, 0.5)]


@pytest.mark.parametrize("sigma,q", RDP_POINTS)
def test_rdp_equals_dp_accounting_at_integer_orders(sigma, q):
    # both sides of the α = 256 switch (dp_accounting needs ~α² operations per order: a subset)
    orders = np.r_[2:41, 48, 64, 100, 128, 200, 255, 256, 257, 300].astype(float)
    ours = np.asarray(fixed(Gaussian(sigma), q).rdp(orders))
    theirs = dpa_wor_rdp(sigma, q, orders)
    ok = np.isfinite(theirs)
    assert ok[:50].all()
    assert np.all(ours[ok] >= theirs[ok] * (1 - 1e-12))
    np.testing.assert_allclose(ours[ok], theirs[ok], rtol=1e-9)


@pytest.mark.parametrize("sigma,q", [(1.0, 0.01), (2.0, 0.1), (0.7, 0.3)])
def test_rdp_equals_dp_accounting_at_fractional_orders(sigma, q):
    # both interpolate (α − 1)ε(α) linearly between integer orders (Wang, Balle & Kasiviswanathan
    # 2019, Corollary 10); order 1 contributes 0
    orders = np.array([1.01, 1.5, 2.5, 3.7, 10.25, 63.5, 255.5, 256.5, 1000.5])
    ours = np.asarray(fixed(Gaussian(sigma), q).rdp(orders))
    np.testing.assert_allclose(ours, dpa_wor_rdp(sigma, q, orders), rtol=1e-9)


def test_rdp_scales_with_the_substitution_sensitivity():
    # only σ/Δ matters: dp_accounting's noise multiplier is σ over the replace-one sensitivity
    orders = np.array([2.0, 5.0, 40.0, 300.0])
    a = np.asarray(fixed(Gaussian(2.0, 2.0), 0.05).rdp(orders))
    b = np.asarray(fixed(Gaussian(1.0), 0.05).rdp(orders))
    np.testing.assert_allclose(a, b, rtol=1e-13)
    # a sum clipped to norm C = 1 has substitution sensitivity 2: noise multiplier σ/2
    np.testing.assert_allclose(
        np.asarray(fixed(Gaussian(4.0, 2.0), 0.05).rdp(orders)), dpa_wor_rdp(2.0, 0.05, orders), rtol=1e-9
    )


def exact_wor_log_a(sigma, q, alpha):
    """log A_α of the bound (see FixedSubsampled.rdp) with exact forward differences, in mpmath."""
    s2 = mp.mpf(sigma) ** 2
    q = mp.mpf(q)
    cgf = lambda x: x * (x - 1) / (2 * s2)  # noqa: E731  (j − 1)ε(j) at j = x
    top = 2 * ((alpha + 1) // 2)
    v = [mp.e ** cgf(j) for j in range(top + 1)]
    moment = {
        n: mp.fsum((-1) ** (n - k) * mp.binomial(n, k) * v[k] for k in range(n + 1)) for n in range(2, top + 1, 2)
    }
    a = 1 + q**2 * mp.binomial(alpha, 2) * min(4 * mp.expm1(1 / s2), 2 * mp.e ** (1 / s2))
    for j in range(3, alpha + 1):
        fd = 4 * mp.sqrt(moment[2 * (j // 2)] * moment[2 * ((j + 1) // 2)])
        a += q**j * mp.binomial(alpha, j) * min(fd, 2 * mp.e ** cgf(j))
    return mp.log(a)


@pytest.mark.parametrize("sigma,q", [(5.0, 0.2), (20.0, 0.5)])
def test_rdp_exact_where_dp_accounting_cancels(sigma, q):
    # dp_accounting takes the forward differences in floating point: for σ ≳ 5 and α ≳ 30 they
    # cancel and its values are off in both directions (measured with dp_accounting 0.6: σ = 5,
    # q = 0.2, α = 64: 5e-10 relative below the exact bound; σ = 20, q = 0.5, α = 128: 7× above).
    # Ours are the exact bound (300-digit mpmath), never below it.
    orders = [2, 3, 10, 33, 64, 128]
    ours = np.asarray(fixed(Gaussian(sigma), q).rdp(np.array(orders, dtype=float)))
    with mp.workdps(300):  # the alternating sums cancel ~150 digits at most here
        truth = np.array([float(exact_wor_log_a(sigma, q, a) / (a - 1)) for a in orders])
    assert np.all(ours >= truth)
    np.testing.assert_allclose(ours, truth, rtol=1e-11)
    theirs = dpa_wor_rdp(sigma, q, np.array(orders, dtype=float))
    # no cancellation yet: only float rounding (1.2e-12 relative at α = 10 with numpy 2.4)
    np.testing.assert_allclose(ours[:3], theirs[:3], rtol=1e-11)
    if sigma == 5.0:
        np.testing.assert_allclose(ours, theirs, rtol=1e-9)
    else:
        assert np.all(ours <= theirs * (1 + 1e-12))
        assert theirs[-1] > 5 * ours[-1]


def test_rdp_small_cases():
    for sigma, q in [(1.0, 0.01), (3.0, 0.2), (0.4, 0.5)]:
        s2 = mp.mpf(sigma) ** 2
        want = mp.log(1 + mp.mpf(q) ** 2 * min(4 * mp.expm1(1 / s2), 2 * mp.e ** (1 / s2)))
        assert float(fixed(Gaussian(sigma), q).rdp(2.0)) == pytest.approx(float(want), rel=1e-13)
    # q = 1: the batch is the whole dataset, the Gaussian's α/(2σ²)
    assert float(fixed(Gaussian(2.0), 1.0).rdp(7.0)) == pytest.approx(7 / 8, rel=1e-13)
    assert fixed(Gaussian(1.0), 0.1).rdp(float("inf")) == float("inf")
    r = fixed(Gaussian(1.0), 0.1).rdp(np.array([[2.0, 3.0], [4.0, 5.0]]))
    assert r.shape == (2, 2) and np.all(np.diff(r.ravel()) > 0)
    with pytest.raises(NotImplementedError):
        fixed(Laplace(1.0), 0.1).rdp(2.0)
    for bad in (1.0, 0.5, np.nan, [2.0, 1.0]):
        with pytest.raises(ValueError, match="alpha"):
            fixed(Gaussian(1.0), 0.1).rdp(bad)
    with pytest.raises(ValueError, match="alpha"):
        fixed(Gaussian(1.0), 0.1).rdp(2e5)


def test_dpsgd_rdp_pipeline_vs_dp_accounting():
    orders = np.r_[2:65, 80, 100, 128, 256].astype(float)
    steps, delta = 2000, 1e-5
    acc = dpa_rdp.RdpAccountant(list(orders), neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    acc.compose(dpa.SampledWithoutReplacementDpEvent(N_RECORDS, 1000, dpa.GaussianDpEvent(1.0)), steps)
    theirs = acc.get_epsilon(delta)
    rdp = steps * np.asarray(fixed(Gaussian(1.0), 0.01).rdp(orders))
    ours = float(rdp_to_approx(orders, rdp, delta))
    assert theirs * (1 - 1e-9) <= ours <= theirs * 1.001


# -- the one-step profile ---------------------------------------------------------------------------
def true_delta(base_delta, q, eps):
    """δ(ε) = q·δ_M(log(1 + (e^ε − 1)/q)) for ε ≥ 0 (Balle, Barthe & Gaboardi 2018, Theorem 9 and
    its tightness), in mpmath; ``base_delta`` is the base's exact profile."""
    q, e = mp.mpf(q), mp.mpf(eps)
    return q * base_delta(mp.log(1 + mp.expm1(e) / q))


def gauss_delta(mu):
    """The Gaussian mechanism's exact profile (Balle & Wang 2018, Theorem 8), μ = Δ/σ."""
    mu = mp.mpf(mu)
    return lambda e: mp.ncdf(-e / mu + mu / 2) - mp.e**e * mp.ncdf(-e / mu - mu / 2)


def laplace_delta(eps0):
    """The Laplace mechanism's exact profile, ε₀ = Δ/b: 1 − e^{(ε − ε₀)/2} below ε₀."""
    eps0 = mp.mpf(eps0)
    return lambda e: max(mp.mpf(0), 1 - mp.e ** ((e - eps0) / 2))


def true_epsilon(base_delta, q, delta):
    lo, hi = mp.mpf(0), mp.mpf(60)
    if true_delta(base_delta, q, lo) <= delta:
        return 0.0
    for _ in range(110):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if true_delta(base_delta, q, mid) > delta else (lo, mid)
    return float(hi)


@pytest.mark.parametrize("sigma,q", [(1.0, 0.01), (0.5, 0.1), (2.0, 0.5), (1.0, 0.3), (0.8, 1.0), (5.0, 0.001)])
def test_single_step_profile_vs_mpmath(sigma, q):
    m = fixed(Gaussian(sigma), q)
    truth = gauss_delta(1.0 / sigma)
    for eps in (0.0, 0.01, 0.2, 1.0):
        want = float(true_delta(truth, q, eps))
        got = float(m.delta(eps))
        assert got >= want
        assert got <= want * (1 + 1e-5) + 1e-15
    for d in (1e-3, 1e-5, 1e-8):
        want = true_epsilon(truth, q, d)
        got = m.epsilon(d)
        assert got >= want
        assert got <= want * (1 + 1e-6) + 1e-12


def test_single_step_profile_laplace_vs_closed_form():
    b, sens, q = 2.0, 3.0, 0.2  # ε₀ = 1.5 under substitution
    m = fixed(Laplace(b, sens), q)
    assert m.eps_max == pytest.approx(math.log1p(q * math.expm1(sens / b)), rel=1e-14)
    truth = laplace_delta(sens / b)
    for eps in (0.0, 0.05, 0.2, 0.3):
        want = float(true_delta(truth, q, eps))
        assert want <= m.delta(eps) <= want * (1 + 1e-5) + 1e-15
    assert m.delta(m.eps_max) == 0.0
    assert m.delta(m.eps_max * (1 - 1e-3)) > 0.0


def test_q_one_is_the_base_mechanism():
    for base in (Gaussian(1.0), Gaussian(3.0, 2.0), Laplace(1.0)):
        m = fixed(base, 1.0)
        for d in (1e-3, 1e-6):
            assert base.epsilon(d) <= m.epsilon(d) <= base.epsilon(d) * (1 + 1e-6) + 1e-12


@settings(max_examples=25, deadline=None, derandomize=True)
@given(sigma=st.floats(0.5, 20.0), logq=st.floats(-4.0, 0.0), eps=st.floats(0.0, 3.0))
def test_single_step_never_below_truth(sigma, logq, eps):
    q = 10.0**logq
    m = fixed(Gaussian(sigma), q)
    want = float(true_delta(gauss_delta(1.0 / sigma), q, eps))
    assert float(m.delta(eps)) >= want * (1 - 1e-12)
    assert float(m.delta(eps)) <= want * (1 + 1e-4) + 1e-14


# -- compositions -----------------------------------------------------------------------------------
def reference_pld(sigma, q, h, pessimistic):
    """dp_accounting's PLD of the symmetric pair S of one step, discretized independently of
    dpexplore: P_S-masses of the cells (x_{i−1}, x_i] from the closed-form mixture CDFs, every loss
    rounded up (pessimistic: δ never below S's) or down (optimistic: never above). Above 0 the remove
    pair R = ((1 − q)N(0, σ²) + qN(1, σ²), N(0, σ²)), whose loss exceeds x iff
    y > σ² log((e^x − 1 + q)/q) + 1/2; below 0 its mirror image, P_S(L < −x) = Q_R(L > x); an atom
    1 − P_R(L > 0) − Q_R(L > 0) at 0."""

    def tails(x):
        y = sigma**2 * (np.log(np.expm1(x) + q) - np.log(q)) + 0.5
        a = special.ndtr(-y / sigma)
        return (1 - q) * a + q * special.ndtr(-(y - 1.0) / sigma), a

    coarse = np.arange(1, 4001) * 0.01
    n = int(np.ceil(coarse[np.argmax(tails(coarse)[0] < 1e-16)] / h))
    pr, qr = tails(np.arange(n + 1) * h)  # P_R(L > ih), Q_R(L > ih), i = 0..n
    up, down = pr[:-1] - pr[1:], qr[:-1] - qr[1:]  # masses in (x_{i−1}, x_i] and its mirror
    i = np.arange(1, n + 1)
    pmf: dict = {}

    def add(idx, mass):
        for k, v in zip(idx.tolist(), mass.tolist()):
            pmf[k] = pmf.get(k, 0.0) + v

    atom = 1.0 - pr[0] - qr[0]
    if pessimistic:
        add(i, up)
        add(-(i - 1), down)
        add(np.array([0, -n]), np.array([atom, qr[-1]]))
        inf_mass = float(pr[-1])
    else:
        add(i - 1, up)
        add(-i, down)
        add(np.array([0, n]), np.array([atom, pr[-1]]))
        inf_mass = 0.0
    return dpa_pld.PrivacyLossDistribution.create_from_rounded_probability(
        pmf, inf_mass, h, pessimistic_estimate=pessimistic, symmetric=True
    )


@pytest.mark.parametrize(
    "sigma,q,k,delta",
    [
        (1.0, 0.01, 1000, 1e-5),
        (2.0, 0.1, 100, 1e-6),
        (0.8, 0.004, 500, 1e-6),
        (5.0, 0.3, 50, 1e-5),
        (1.0, 0.05, 1, 1e-5),
    ],
)
def test_composition_vs_independent_discretization(sigma, q, k, delta):
    ours = C.compose(fixed(Gaussian(sigma), q), k).epsilon(delta)
    pess = reference_pld(sigma, q, 1e-4, True).self_compose(k).get_epsilon_for_delta(delta)
    opt = reference_pld(sigma, q, 1e-4, False).self_compose(k).get_epsilon_for_delta(delta)
    assert opt * (1 - 1e-9) <= ours <= pess * (1 + 1e-9)
    # rounding up/down shifts each loss by < h; connect-the-dots sits between, near the middle
    assert abs(ours - 0.5 * (opt + pess)) <= 1e-3 * ours


@pytest.mark.parametrize(
    "sigma,q,k,delta",
    [(1.0, 0.01, 10_000, 1e-5), (2.0, 0.1, 100, 1e-6), (0.8, 0.004, 5000, 1e-6), (5.0, 0.3, 50, 1e-5)],
)
def test_composition_between_poisson_and_rdp(sigma, q, k, delta):
    orders = np.concatenate([1.0 + np.arange(1, 100) / 10.0, np.arange(11.0, 257.0)])
    m = fixed(Gaussian(sigma), q)
    ours = C.compose(m, k).epsilon(delta)
    rdp_eps = float(rdp_to_approx(orders, k * np.asarray(m.rdp(orders)), delta))
    assert ours <= rdp_eps
    # S dominates both directions of Poisson sampling with the same Δ (Dong, Roth & Su 2022, result “subsampling for f-DP”)
    assert ours >= C.compose(subsample(Gaussian(sigma), q), k).epsilon(delta) * (1 - 1e-6)


@settings(max_examples=8, deadline=None, derandomize=True)
@given(
    sigma=st.sampled_from([0.7, 1.0, 3.0]),
    q=st.sampled_from([0.001, 0.02, 0.3]),
    k=st.integers(1, 40),
    eps=st.floats(0.0, 4.0),
)
def test_composition_properties(sigma, q, k, eps):
    m = fixed(Gaussian(sigma), q)
    p = C.compose(m, k)
    d = float(p.delta(eps))
    assert 0.0 <= d <= 1.0
    assert d >= float(m.delta(eps)) * (1 - 1e-6) - 1e-15  # k ≥ 1 steps
    assert d <= float(C.compose(Gaussian(sigma), k).delta(eps)) * (1 + 1e-6) + 1e-12  # amplification
    assert d >= float(C.compose(subsample(Gaussian(sigma), q), k).delta(eps)) * (1 - 1e-6) - 1e-12
    e = p.epsilon(1e-6)
    assert float(p.delta(e)) <= 1e-6


def test_pure_dp_base_composition():
    m = fixed(Laplace(1.0), 0.1)
    one = math.log1p(0.1 * math.expm1(1.0))  # Balle, Barthe & Gaboardi 2018, Theorem 9
    assert m.eps_max == pytest.approx(one, rel=1e-14)
    p = C.compose(m, 10)
    assert p.eps_max == pytest.approx(10 * one, rel=1e-12)
    assert p.delta(p.eps_max) == 0.0
    # 10·one in floats lies an ulp below the composed eps_max: there the discrete δ is the top
    # point's p·(1 − e^{ε − ℓ}) ~ 1e-22 (computed exactly), not 0
    assert p.delta(10 * one) < 1e-20
    assert 0.0 < p.delta(5 * one) < 1e-2
    assert p.epsilon(0.0) <= 10 * one * (1 + 1e-12)
    # never below the Poisson directions with the same ε-DP base
    assert p.delta(2 * one) >= C.compose(subsample(Laplace(1.0), 0.1), 10).delta(2 * one) * (1 - 1e-6)
    lg = fixed(Logistic(1.0), 0.2)
    assert lg.eps_max == pytest.approx(math.log1p(0.2 * math.expm1(Logistic(1.0).eps_max)), rel=1e-14)


def test_compose_all_mixes_it():
    items = [(fixed(Gaussian(1.0), 0.01), 100), (Laplace(2.0), 2), (subsample(Gaussian(1.0), 0.01), 100)]
    p = C.compose_all(items)
    e = p.epsilon(1e-6)
    for m, k in items:
        assert e >= C.compose(m, k).epsilon(1e-6) * (1 - 1e-6)
    assert e <= sum(C.compose(m, k).epsilon(1e-7) for m, k in items)  # basic composition


# -- the object and invalid inputs --------------------------------------------------------------------
def test_interface():
    m = fixed(Gaussian(2.0, 3.0), 0.25)
    assert type(m) is FixedSubsampled and isinstance(m, PoissonSubsampled)  # the PLD hooks
    assert m != PoissonSubsampled(Gaussian(2.0, 3.0), 0.25)
    assert m.sensitivity == 3.0 and m.q == 0.25 and m.eps_max == math.inf
    assert "fixed" in SAMPLINGS and "poisson" in SAMPLINGS
    assert m.log_delta(0.5) == pytest.approx(math.log(m.delta(0.5)), rel=1e-12)
    assert m.profile.delta(0.5) == m.delta(0.5)
    s1, s2 = m._directions()
    assert s1 == s2 and s1.loss_support == (-math.inf, math.inf)


@pytest.mark.parametrize("q", [0.0, -0.1, 1.5, float("nan"), float("inf"), [0.1, 0.2], "0.1", None])
def test_bad_rate(q):
    with pytest.raises(ValueError, match="q"):
        fixed(Gaussian(1.0), q)
    with pytest.raises(ValueError, match="q"):
        FixedSubsampled(Gaussian(1.0), q)


@pytest.mark.parametrize("sampling", ["", "FIXED", "without", None, 1])
def test_bad_sampling(sampling):
    with pytest.raises(ValueError, match="sampling") as info:
        subsample(Gaussian(1.0), 0.1, sampling=sampling)
    assert repr(sampling) in str(info.value)


def test_bad_base():
    for base in (RandomizedResponse(1.0), "Gaussian", None, Gaussian(np.array([1.0, 2.0]))):
        with pytest.raises(ValueError, match="mechanism"):
            fixed(base, 0.1)
