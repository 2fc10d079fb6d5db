"""Card facts fixed with issue 35: Laplace's exact zCDP ρ (checked with mpmath), the μ of an
(ε, δ)-filter with δ > 0 ("not defined"), the advantage as the profile's own supremum, cards
cached per object."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpexplore.accounting import conversions, risk
from dpexplore.display import card_facts
from dpexplore.accounting.filters import ApproxDPFilter
from dpexplore.mechanisms import DiscreteGaussian, Laplace

mp = pytest.importorskip("mpmath")


def fact(obj, label):
    return next(f for f in card_facts(obj).facts if f.label == label)


def laplace_rdp(alpha, e):
    """D_α of Laplace with Δ/b = e (Mironov 2017, Proposition 6), at 40 digits."""
    with mp.workdps(40):
        a, e = mp.mpf(alpha), mp.mpf(e)
        return mp.log(a / (2 * a - 1) * mp.exp((a - 1) * e) + (a - 1) / (2 * a - 1) * mp.exp(-a * e)) / (a - 1)


@pytest.mark.parametrize("b", [0.1, 0.5, 1.0, 3.0, 20.0])
def test_laplace_rho_is_the_sup_of_renyi_over_alpha(b):
    e = 1.0 / b
    rho = fact(Laplace(b), "zCDP ρ").value
    with mp.workdps(40):
        kl = float(mp.mpf(e) + mp.exp(-mp.mpf(e)) - 1)  # the α → 1 limit
    assert rho == pytest.approx(kl, rel=1e-12) and rho >= kl * (1 - 1e-16)
    alphas = [1 + 10.0**-j for j in range(1, 10)] + list(np.geomspace(1.01, 1e4, 60))
    assert max(float(laplace_rdp(a, e) / a) for a in alphas) <= rho * (1 + 1e-12)


def test_laplace_one_rho_is_0_3679():
    assert fact(Laplace(1.0), "zCDP ρ").text == "0.3679"


def test_approx_filter_mu_not_defined():
    f = fact(ApproxDPFilter(1.0, 1e-6), "μ-GDP")
    assert f.value is None and f.text == "not defined" and "δ" in f.why


def test_advantage_is_at_most_the_profiles_own_supremum_bound():
    p = conversions.ZCDPProfile(0.5)
    a = np.linspace(0.0, 1.0, 4001)
    dense = float(np.max(np.asarray(risk.tpr_at_fpr(p, a)) - a))
    adv = risk.advantage(p)
    assert dense <= adv <= dense + 2e-5
    assert risk.advantage(Laplace(1.0)) == pytest.approx(1 - math.exp(-0.5), rel=1e-9)


def test_cards_are_cached_per_object():
    m = DiscreteGaussian(2.0)
    assert card_facts(m) is card_facts(m)
