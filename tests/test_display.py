"""Notebook cards (``_repr_html_``), one-line reprs and ``compare()`` of every privacy object:
each public class has a card; each number on it equals the public API's value, shown rounded up;
undefined quantities say "not defined"; a card never raises."""

from __future__ import annotations

import inspect
import math
import re
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpexplore
from dpexplore import display
from dpexplore.accounting import composition, conversions, filters, pld, profiles, risk
from dpexplore import mechanisms as M
from dpexplore.accounting.composition import OptimalProfile, compose, compose_all
from dpexplore.accounting.conversions import EquationProfile, RDPProfile, ZCDPProfile
from dpexplore.display import card_facts, card_html, compare, format_up
from dpexplore.mechanisms import (
    DiscreteGaussian,
    DiscreteLaplace,
    Exponential,
    FixedSubsampled,
    Gaussian,
    Laplace,
    Logistic,
    MechanismProfile,
    PoissonSubsampled,
    RandomizedResponse,
    Subbotin,
    subsample,
)
from dpexplore.mechanisms.subsampled import MaxProfile, OneStepProfile, RareEventProfile
from dpexplore.accounting.pld import PLDProfile
from dpexplore.accounting.profiles import (
    ApproxDPProfile,
    FunctionProfile,
    GaussianDPProfile,
    PrivacyProfile,
    PureDPProfile,
)

DPSGD = compose(subsample(Gaussian(1.0), 0.01), 1000)

#: one example of every public privacy-object class
EXAMPLES = {
    Gaussian: Gaussian(1.0),
    Laplace: Laplace(1.0),
    Logistic: Logistic(1.0),
    Subbotin: Subbotin(1.0, 1.5),
    RandomizedResponse: RandomizedResponse(1.0),
    Exponential: Exponential(1.0),
    DiscreteLaplace: DiscreteLaplace(1.0),
    DiscreteGaussian: DiscreteGaussian(1.0),
    PoissonSubsampled: subsample(Gaussian(2.0), 0.05),
    FixedSubsampled: subsample(Laplace(1.0), 0.1, "fixed"),
    MechanismProfile: Laplace(1.0).profile,
    GaussianDPProfile: GaussianDPProfile(1.0),
    ApproxDPProfile: ApproxDPProfile(1.0, 1e-6),
    PureDPProfile: PureDPProfile(1.0),
    FunctionProfile: FunctionProfile(lambda e: np.log(np.clip(1 - np.asarray(e) / 2, 0, 1)), eps_max=2.0, name="toy"),
    ZCDPProfile: ZCDPProfile(0.5),
    RDPProfile: RDPProfile(np.array([2.0, 8.0, 32.0]), np.array([0.5, 2.0, 8.0])),
    EquationProfile: conversions.equation_profile(2.0, 1.0, 2.0, refined=True),
    OptimalProfile: OptimalProfile(0.5, 10),
    PLDProfile: compose(Logistic(1.0), 5),  # finite eps_max: capped subclass; the plain one below
    MaxProfile: DPSGD,
    OneStepProfile: OneStepProfile(Gaussian(1.0), 0.01, "add"),
    RareEventProfile: RareEventProfile(Gaussian(0.05), 1e-17, 10**6),
    filters.PureDPFilter: filters.PureDPFilter(1.0),
    filters.GDPFilter: filters.GDPFilter(1.0),
    filters.RenyiFilter: filters.RenyiFilter([2.0, 8.0], [1.0, 2.0]),
    filters.ZCDPFilter: filters.ZCDPFilter(0.5),
    filters.ApproxZCDPFilter: filters.ApproxZCDPFilter(0.5, 1e-6),
    filters.ApproxDPFilter: filters.ApproxDPFilter(1.0, 1e-6),
    filters.RenyiOdometer: filters.RenyiOdometer([4.0, 16.0], 1e-6),
    filters.Session: filters.Session(3.0),
}

COMPOSITIONS = [
    compose(Gaussian(1.0), 100),
    compose(Laplace(1.0), 10),
    compose(RandomizedResponse(0.5), 20),
    compose(Subbotin(1.0, 1.5), 3),
    compose_all([(Laplace(1.0), 2), (Gaussian(4.0), 10)]),
    compose_all([(Gaussian(1.0), 3), (Gaussian(2.0), 4)]),
    DPSGD,
]


def _public_classes():
    """Every public class of the modules that hold privacy objects."""
    out = set()
    for mod in (M, profiles, conversions, composition, pld, filters, M.subsampled):
        for name in getattr(mod, "__all__", dir(mod)):
            obj = getattr(mod, name, None)
            if inspect.isclass(obj) and not name.startswith("_"):
                out.add(obj)
    return out


def _is_privacy_class(cls):
    from dpexplore.mechanisms._base import _Mechanism
    from dpexplore.mechanisms.discrete import _DiscreteMechanism

    return issubclass(
        cls,
        (
            PrivacyProfile,
            _Mechanism,
            _DiscreteMechanism,
            PoissonSubsampled,
            filters._Filter,
            filters.RenyiOdometer,
            filters.Session,
        ),
    )


def test_every_public_privacy_class_has_a_card():
    classes = {c for c in _public_classes() if _is_privacy_class(c)}
    abstract = {PrivacyProfile, M.AdditiveNoiseMechanism}
    missing = classes - set(EXAMPLES) - abstract
    assert not missing, f"no example (so no tested card) for {sorted(c.__name__ for c in missing)}"
    for cls, obj in EXAMPLES.items():
        assert isinstance(obj, cls)
        h = obj._repr_html_()
        assert h.startswith('<div class="dpx-card" role="group"'), cls
        assert "<script" not in h.lower() and "javascript:" not in h.lower()
        # a composition is titled "Composition" (its profile class, e.g. MaxProfile, is internal)
        title = "Composition" if "<h3>Composition <span" in h else type(obj).__name__
        assert f"<h3>{title} " in h
        assert "nan" not in re.sub(r"<[^>]+>", " ", h).lower().split()


def test_cards_are_accessible_and_theme_neutral():
    h = card_html(Gaussian(1.0))
    assert '<th scope="row">ε at δ = 1e-05</th>' in h and '<th scope="col">' in h
    assert '<svg role="img" aria-label="δ(ε) curve of Gaussian' in h and "<title>δ(ε) curve" in h
    # colours follow the page's text colour (dark themes): no fixed colour anywhere
    assert "currentColor" in h and not re.search(r"#[0-9a-fA-F]{3,6}\b|rgb\((?!127)", h)
    assert "rounded up to 4 significant digits" in h


def _api_values(p):
    """The public API's values behind the ε and attack rows."""
    eps = p.epsilon(np.array(display.DELTAS))
    tpr = risk.tpr_at_fpr(p, np.array(display.FPRS))
    return list(eps) + list(tpr) + [risk.advantage(p)]


@pytest.mark.parametrize(
    "obj",
    [
        Gaussian(1.0),
        Laplace(2.0),
        RandomizedResponse(1.0),
        DiscreteGaussian(2.0),
        subsample(Gaussian(1.0), 0.02),
        GaussianDPProfile(0.5),
        ZCDPProfile(0.3),
    ]
    + COMPOSITIONS,
    ids=repr,
)
def test_each_number_equals_the_api_value_rounded_up(obj):
    card = card_facts(obj)
    p = obj if isinstance(obj, PrivacyProfile) else obj.profile
    by_label = {f.label: f for f in card.facts}
    labels = (
        [f"ε at δ = {d:g}" for d in display.DELTAS]
        + [f"TPR at FPR {a:.1%}" for a in display.FPRS]
        + ["advantage (TPR − FPR)"]
    )
    h = card_html(obj)
    for label, api in zip(labels, _api_values(p)):
        f = by_label[label]
        assert f.value == float(api), label  # the API's own value
        assert Decimal(f.text) >= Decimal(repr(float(api))), label  # shown rounded up
        assert float(f.text) <= float(api) * (1 + 1e-3) + 1e-300, label  # by < 1 unit of 4 digits
        assert f">{f.text}</td>" in h, label
    pure = by_label["pure ε"]
    if np.isfinite(p.eps_max):
        assert pure.value == float(p.eps_max)
    else:
        assert pure.value is None and pure.text == "not defined"


def test_notion_rows_match_the_closed_forms():
    g = {f.label: f for f in card_facts(Gaussian(2.0, 1.0)).facts}
    # ρ = μ²/2 by conversions.gdp_to_zcdp: rounded upward, so exactly 1/8 (a float): the card
    # shows 0.1250, not 0.1251
    assert g["μ-GDP"].value == 0.5 and g["zCDP ρ"].value == float(conversions.gdp_to_zcdp(0.5)) == 0.125
    assert display.format_up(g["zCDP ρ"].value) == "0.1250"
    for a in display.RDP_ORDERS:
        assert g[f"RDP ε̂(α = {a:g})"].value == float(Gaussian(2.0).rdp(a))
    comp = {f.label: f for f in card_facts(compose(Gaussian(2.0), 16)).facts}
    assert comp["μ-GDP"].value == pytest.approx(2.0, rel=1e-15)  # √16 · 1/2
    assert comp["zCDP ρ"].value == pytest.approx(2.0, rel=1e-15)
    rr = {f.label: f for f in card_facts(RandomizedResponse(1.0)).facts}
    assert rr["μ-GDP"].value == float(conversions.pure_to_gdp(1.0))
    assert rr["zCDP ρ"].value == float(conversions.pure_to_zcdp(1.0))
    sgd = {f.label: f for f in card_facts(DPSGD).facts}
    one = subsample(Gaussian(1.0), 0.01)
    # RDP adds up over the steps: composition.rdp, rounded up
    assert sgd["RDP ε̂(α = 8)"].value == float(composition.rdp(one.rdp(8.0), k=1000))
    assert 1000 * float(one.rdp(8.0)) <= sgd["RDP ε̂(α = 8)"].value <= 1000 * float(one.rdp(8.0)) * (1 + 1e-15)
    assert sgd["μ-GDP"].text == "not certified" and sgd["zCDP ρ"].text == "not known"
    lap = {f.label: f for f in card_facts(Laplace(1.0)).facts}
    assert lap["μ-GDP"].value == conversions.gdp_measure(Laplace(1.0).profile, tol=1e-3)[1]


def test_undefined_quantities_say_not_defined():
    h = card_html(Gaussian(1.0))
    assert re.search(r'<th scope="row">pure ε</th><td class="dpx-v dpx-missing" title="[^"]*">not defined</td>', h)
    f = {x.label: x for x in card_facts(filters.ApproxDPFilter(1.0, 1e-6)).facts}
    assert f["ε at δ = 1e-08"].text == "not defined"  # below the filter's δ: no ε works
    assert f["zCDP ρ"].text == "not defined" and f["RDP ε̂(α = 2)"].text == "not defined"
    z = {x.label: x for x in card_facts(filters.ApproxZCDPFilter(0.5, 1e-6)).facts}
    assert z["ε at δ = 1e-06"].text == "not defined" and z["ε at δ = 1e-05"].value > 4.7
    assert "no fixed privacy profile" in card_html(filters.RenyiOdometer([4.0], 1e-6))
    arr = card_html(Gaussian(np.array([1.0, 2.0])))
    assert "array parameters" in arr


def test_a_card_never_raises_even_when_the_backend_does():
    class Broken(PrivacyProfile):
        name = "broken"

        def _log_delta(self, eps):
            raise RuntimeError("boom")

    h = card_html(Broken())
    assert "not available" in h and "boom" in h
    assert "no card" in card_html(object())


def test_filter_cards_describe_their_budget():
    f = {x.label: x for x in card_facts(filters.GDPFilter(1.5)).facts}
    g = GaussianDPProfile(1.5)
    assert f["ε at δ = 1e-05"].value == g.epsilon(1e-5) and f["μ-GDP"].value == 1.5
    r = {x.label: x for x in card_facts(filters.RenyiFilter([2.0, 8.0], [1.0, 2.0])).facts}
    assert r["RDP ε̂(α = 8)"].value == 2.0 and r["RDP ε̂(α = 32)"].text == "not known"
    assert r["ε at δ = 1e-05"].value == RDPProfile(np.array([2.0, 8.0]), np.array([1.0, 2.0])).epsilon(1e-5)


@pytest.mark.parametrize("x", [6.18712, 0.38292492, 1.0, 2.5e-7, 9.99951, 123456.7, 1e-300, 5e-324, 0.1])
def test_format_up_never_rounds_down(x):
    s = format_up(x)
    assert Decimal(s) >= Decimal(repr(x))
    assert Decimal(s) - Decimal(repr(x)) <= Decimal(repr(x)) * Decimal("1e-3")
    assert len(re.sub(r"e.*|\.", "", s).lstrip("0")) <= 4


def test_format_up_examples():
    assert format_up(9.99951) == "10.00" and format_up(0.1) == "0.1000" and format_up(123456.7) == "1.235e+05"


# -- reprs -------------------------------------------------------------------------------------------
_NS = {
    **vars(M),
    **vars(profiles),
    "ZCDPProfile": ZCDPProfile,
    "RDPProfile": RDPProfile,
    "EquationProfile": EquationProfile,
    "OptimalProfile": OptimalProfile,
    "compose": compose,
    "OneStepProfile": OneStepProfile,
    "RareEventProfile": RareEventProfile,
    "compose_all": compose_all,
    **{n: getattr(filters, n) for n in filters.__all__},
}


@pytest.mark.parametrize(
    "obj",
    [o for o in EXAMPLES.values() if not isinstance(o, FunctionProfile)] + COMPOSITIONS,
    ids=lambda o: type(o).__name__,
)
def test_repr_is_one_line_and_rebuilds_the_object(obj):
    r = repr(obj)
    assert "\n" not in r and not r.startswith("<")
    again = eval(r, _NS)  # noqa: S307 - our own repr
    assert type(again) is type(obj)
    if isinstance(obj, PrivacyProfile):
        assert again.epsilon(1e-6) == obj.epsilon(1e-6)
    else:
        assert again == obj


def test_compose_repr_is_the_call():
    assert repr(compose(Gaussian(1.0), 100)) == "compose(Gaussian(sigma=1.0, sensitivity=1.0), 100)"
    assert repr(GaussianDPProfile(2.0)) == "GaussianDPProfile(mu=2.0)"
    assert repr(FunctionProfile(np.log, name="toy")) == "<FunctionProfile toy>"


# -- compare ------------------------------------------------------------------------------------------
def test_compare_is_a_dataframe_of_the_card_values():
    import pandas as pd  # a dependency: compare() returns a DataFrame on every install

    objs = [Gaussian(1.0), Laplace(1.0), DPSGD]
    df = dpexplore.compare(*objs)
    assert isinstance(df, pd.DataFrame) and list(df.index) == [repr(o) for o in objs]
    for o in objs:
        for f in card_facts(o).facts:
            got = df.loc[repr(o), f.label]
            assert (math.isnan(got) and f.value is None) or got == f.value
    # sortable by risk: the riskiest object by the API's TPR at FPR 1 % comes last
    riskiest = max(objs, key=lambda o: risk.tpr_at_fpr(o.profile if hasattr(o, "profile") else o, 0.01))
    assert df.sort_values("TPR at FPR 1.0%").index[-1] == repr(riskiest) == repr(Gaussian(1.0))


def test_compare_checks_its_arguments_by_position():
    with pytest.raises(ValueError, match="objects"):
        compare()
    with pytest.raises(ValueError, match=r"objects\[1\] must be a dpexplore privacy object, got str"):
        compare(Gaussian(1.0), "Gaussian(1.0)")
    # the class instead of an instance (was an AttributeError from _params_of)
    with pytest.raises(ValueError, match=r"objects\[0\] must be an instance, got the class Lap"):
        compare(Laplace)
    with pytest.raises(ValueError, match=r"obj must be an instance, got the class Gaussian"):
        card_facts(Gaussian)
    assert "compare" in dir(dpexplore) and "explore" in dir(dpexplore)


def test_compare_gives_one_row_per_element_of_array_parameters():
    """compare(Gaussian(sigma=[1, 2])) was an empty table while the card says "use compare()"."""
    assert "use compare()" in card_facts(Gaussian(sigma=[1.0, 2.0])).note
    df = compare(Gaussian(sigma=[1.0, 2.0]), Laplace([1.0, 2.0], [[1.0], [3.0]]), Laplace(1.0))
    scalar = [
        Gaussian(1.0),
        Gaussian(2.0),
        Laplace(1.0, 1.0),
        Laplace(2.0, 1.0),
        Laplace(1.0, 3.0),
        Laplace(2.0, 3.0),
        Laplace(1.0),
    ]
    assert list(df.index) == [repr(o) for o in scalar]
    assert list(df["pure ε"])[2:] == [1.0, 0.5, 3.0, 1.5, 1.0]
    assert df.loc[repr(Gaussian(2.0)), "ε at δ = 1e-05"] == Gaussian(2.0).epsilon(1e-5)
    with pytest.raises(ValueError, match=r"objects\[0\] has 201 parameter settings"):
        compare(Gaussian(sigma=np.arange(1.0, 202.0)))


# -- never raises: hypothesis over parameters -----------------------------------------------------------
_pos = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False)
_rate = st.floats(min_value=1e-4, max_value=1.0, allow_nan=False)


@st.composite
def _objects(draw):
    kind = draw(st.sampled_from(["gauss", "lap", "rr", "sub", "gdp", "zcdp", "comp", "approx", "filter"]))
    s = draw(_pos)
    if kind == "gauss":
        return Gaussian(s, draw(_pos))
    if kind == "lap":
        return Laplace(s, draw(_pos))
    if kind == "rr":
        return RandomizedResponse(draw(st.floats(min_value=0.0, max_value=50.0)))
    if kind == "sub":
        return subsample(Gaussian(s), draw(_rate))
    if kind == "gdp":
        return GaussianDPProfile(draw(st.floats(min_value=1e-6, max_value=60.0)))
    if kind == "zcdp":
        return ZCDPProfile(draw(st.floats(min_value=0.0, max_value=100.0)))
    if kind == "comp":
        return compose(
            draw(st.sampled_from([Gaussian(s), Laplace(s), RandomizedResponse(min(s, 20.0))])),
            draw(st.integers(min_value=1, max_value=200)),
        )
    if kind == "approx":
        return ApproxDPProfile(
            draw(st.floats(min_value=0.0, max_value=30.0)),
            draw(st.floats(min_value=0.0, max_value=1.0, exclude_max=True)),
        )
    return draw(
        st.sampled_from(
            [filters.PureDPFilter(s), filters.GDPFilter(s), filters.ZCDPFilter(s), filters.ApproxZCDPFilter(s, 1e-6)]
        )
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_objects())
def test_cards_never_raise(obj):
    h = obj._repr_html_()
    assert h.startswith('<div class="dpx-card"')
    text = re.sub(r"<[^>]+>", " ", h)
    assert "nan" not in text.lower().split()
    for f in card_facts(obj).facts:
        assert f.value is None or (f.value >= 0 and not math.isnan(f.value)), f
        if f.value is not None:
            assert Decimal(f.text.replace("∞", "Infinity")) >= Decimal(repr(f.value))
