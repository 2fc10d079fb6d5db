"""Rényi DP of randomized response and of the Laplace mechanism at small ε (or Δ/b) and orders near
1: never below the exact value (mpmath at 60 digits), and within a tight relative error. The first
five cases are the reproducers of a catastrophic cancellation (results up to 1.3e-7 relative BELOW
the truth) in the former near-α forms."""

from __future__ import annotations

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpexplore.accounting import conversions
from dpexplore.mechanisms import Laplace, RandomizedResponse

mp.mp.dps = 60
REL = 1e-13  # the results are rounded up by 16 ulps (3.6e-15): far inside this


def rr_truth(eps, alpha):
    e, a = mp.mpf(eps), mp.mpf(alpha)
    p = mp.e**e / (1 + mp.e**e)
    q = 1 - p
    return mp.log(p**a * q ** (1 - a) + q**a * p ** (1 - a)) / (a - 1)


def laplace_truth(d, alpha):
    d, a = mp.mpf(d), mp.mpf(alpha)
    return mp.log(a / (2 * a - 1) * mp.e ** ((a - 1) * d) + (a - 1) / (2 * a - 1) * mp.e ** (-a * d)) / (a - 1)


def _check(got, truth):
    got = mp.mpf(float(got))
    assert got >= truth, f"{float(got)!r} is below the truth {mp.nstr(truth, 20)}"
    assert got <= truth * (1 + REL), f"{float(got)!r} is {mp.nstr((got - truth) / truth, 3)} above the truth"


@pytest.mark.parametrize("eps, alpha", [(1e-7, 1.5), (0.001008879814606576, 2.7926086908242427)])
def test_randomized_response_reproducers(eps, alpha):
    truth = rr_truth(eps, alpha)
    _check(RandomizedResponse(eps).rdp(alpha), truth)
    _check(conversions.pure_to_rdp(eps, alpha), truth)


@pytest.mark.parametrize(
    "scale, sensitivity, alpha",
    [(1e7, 1.0, 1.5), (999999999.9999999, 1.0, 1.5), (996.807567303485, 0.9581211060791076, 1.1610788179146971)],
)
def test_laplace_reproducers(scale, sensitivity, alpha):
    d = mp.mpf(sensitivity) / mp.mpf(scale)
    _check(Laplace(scale, sensitivity).rdp(alpha), laplace_truth(d, alpha))


_eps = st.floats(min_value=1e-12, max_value=20.0)
_alpha = st.floats(min_value=1.0 + 1e-6, max_value=200.0)


@settings(max_examples=150, deadline=None)
@given(eps=_eps, alpha=_alpha)
def test_randomized_response_never_below_the_truth(eps, alpha):
    _check(RandomizedResponse(eps).rdp(alpha), rr_truth(eps, alpha))


@settings(max_examples=150, deadline=None)
@given(d=_eps, alpha=_alpha)
def test_laplace_never_below_the_truth(d, alpha):
    _check(Laplace(1.0 / d).rdp(alpha), laplace_truth(mp.mpf(1) / mp.mpf(1.0 / d), alpha))
