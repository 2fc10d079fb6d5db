"""The apps' numeric parameters are described once (``dpexplore.apps._checks.Param``): each app's
sliders are built from its ``PARAMS`` and its spec is checked against the same description, one
message style (a ``ValueError`` naming the parameter and its value)."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from dpexplore.apps._checks import SEED_MAX, Param, check_params

APPS_WITH_PARAMS = [
    "adaptive_lab",
    "audit_lab",
    "composition_explorer",
    "demo",
    "down_sensitivity_lab",
    "dpsgd_planner",
    "filters_lab",
    "group_privacy_lab",
    "local_vs_central",
    "mean_estimation_lab",
    "mechanisms_lab",
    "noise_lab",
    "notion_converter",
    "profile_gdp",
    "rdp_explorer",
]


@pytest.mark.parametrize("name", APPS_WITH_PARAMS)
def test_sliders_are_the_params(name):
    mod = importlib.import_module(f"dpexplore.apps.{name}")
    controls = getattr(mod, f"build_{name}")().controller.controls
    for p in mod.PARAMS.values():
        w = controls[p.name]
        if not hasattr(w, "min"):  # a number box (the simulation labs' seed)
            continue
        bounds = (math.log10(p.lo), math.log10(p.hi)) if p.scale == "log" else (p.lo, p.hi)
        assert (w.min, w.max) == pytest.approx(bounds), p.name
        assert w.description.startswith(p.text), p.name
        assert (not p.unit) or w.description.endswith(f"[{p.unit}]"), p.name


@pytest.mark.parametrize("name", APPS_WITH_PARAMS)
def test_every_slider_end_passes_the_spec_check(name):
    mod = importlib.import_module(f"dpexplore.apps.{name}")
    app = getattr(mod, f"build_{name}")()
    ctrl = app.controller
    base = ctrl.read_spec()
    for p in mod.PARAMS.values():
        for end in (p.lo, p.hi):
            p.check(int(end) if p.integer else float(end))
    params = mod.PARAMS if name != "audit_lab" else mod._CHECKED
    if all(hasattr(base, p.name) for p in (params.values() if isinstance(params, dict) else params)):
        check_params(base, params)
    else:  # a spec holding the chosen notion's or mechanism's values only: each control's value
        for p in mod.PARAMS.values():
            p.check(p.value(ctrl.controls[p.name].value))


@pytest.mark.parametrize(
    "value, message",
    [
        (9, "n must be a whole number of people in [10, 3,000], got n = 9"),
        (10.0, "n must be a whole number of people in [10, 3,000], got n = 10.0"),
        (True, "n must be a whole number of people in [10, 3,000], got n = True"),
        ("7", "n must be a whole number of people in [10, 3,000], got n = '7'"),
    ],
)
def test_whole_numbers(value, message):
    p = Param("n", 10, 3000, "log", integer=True, what="of people")
    with pytest.raises(ValueError) as e:
        p.check(value)
    assert str(e.value) == message
    p.check(10)
    p.check(np.int64(3000))


def test_reals_open_intervals_and_wider_acceptance():
    eps = Param("eps", 0.01, 10.0, "log")
    for bad, text in (
        (0.0, "eps = 0 is outside this lab's range [0.01, 10]"),
        (float("nan"), "eps must be a finite number, got eps = nan"),
        (True, "eps must be a finite number, got eps = True"),
    ):
        with pytest.raises(ValueError, match=text.replace("[", r"\[").replace("]", r"\]")):
            eps.check(bad)
    eps.check(np.float64(10.0))
    conf = Param("confidence", 0.5, 0.999, accept=(0.0, 1.0), interval="()")
    conf.check(0.01)  # below the slider, accepted
    with pytest.raises(ValueError, match=r"confidence must lie in \(0, 1\), got confidence = 1.0"):
        conf.check(1.0)
    tau = Param("tau", 1e-3, 0.5, "log", accept=(0.0, None), interval="()")
    tau.check(5.0)
    with pytest.raises(ValueError, match="tau must be > 0, got tau = 0.0"):
        tau.check(0.0)
    seed = Param("seed", 0, 999, integer=True, accept=(0, SEED_MAX))
    seed.check(SEED_MAX)
    with pytest.raises(ValueError, match=r"seed must be a whole number in \[0, 1,000,000,000\]"):
        seed.check(SEED_MAX + 1)
    with pytest.raises(ValueError, match="seed must be a whole number >= 0, got seed = -1"):
        Param("seed", 0, 999, integer=True, accept=(0, None)).check(-1)


def test_a_bad_description_is_refused():
    with pytest.raises(ValueError, match="scale"):
        Param("x", 0, 1, "logarithmic")
    with pytest.raises(ValueError, match="lo < hi"):
        Param("x", 1, 1)


def test_the_rng_check_is_written_once():
    """Every simulation of the backend takes a numpy Generator, checked by one function."""
    import pathlib

    import dpexplore
    from dpexplore._validation import check_rng

    root = pathlib.Path(dpexplore.__file__).parent
    copies = [
        p
        for p in root.rglob("*.py")
        if "isinstance(rng, np.random.Generator)" in p.read_text(encoding="utf-8")
        and p.name not in ("_validation.py", "_base.py")
    ]
    assert copies == []
    with pytest.raises(ValueError, match=r"rng must be a numpy.random.Generator .* got 0"):
        check_rng(0)


def test_a_number_box_is_set_from_the_url_by_its_param():
    """The seed box has no bounds: a URL's value is checked against its Param (``SEED``)."""
    from dpexplore.apps._checks import SEED
    from dpexplore.apps.noise_lab import build_noise_lab

    app = build_noise_lab()
    seed = app.controller.controls["seed"]
    assert seed.dpexplore_param is SEED
    app.apply_query("seed=42")
    assert seed.value == 42 and app.controller.message.text == ""
    for raw, needle in (("1.5", "not a whole number"), ("-1", "seed must be a whole number in [0, 1,000,000,000]")):
        app.apply_query(f"seed={raw}")
        assert seed.value == 42 and needle in app.controller.message.text, app.controller.message.text
    assert f"seed={seed.value}" in app.link_query()


def test_specs_are_read_by_param_and_snippets_set_params_by_name():
    from dpexplore.apps._checks import param_values, snippet_assign

    n = Param("n", 10, 3000, "log", integer=True)
    eps = Param("eps", 0.01, 10.0, "log")

    class Box:
        def __init__(self, value):
            self.value = value

    values = param_values({"n": Box(300.0), "eps": Box(0.5)}, [n, eps])
    assert values == {"n": 300, "eps": 0.5} and isinstance(values["n"], int)
    assert snippet_assign(values, [n, eps]) == "n, eps = 300, 0.5\n"
    assert snippet_assign(values, [n, eps], skip=("n",)) == "eps = 0.5\n"
    many = [Param(f"p{i}", 0.01, 10.0) for i in range(30)]
    code = snippet_assign({f"p{i}": 0.125 for i in range(30)}, many)
    assert all(len(line) <= 100 for line in code.splitlines()) and len(code.splitlines()) > 1
    scope = {}
    exec(code, scope)
    assert [scope[f"p{i}"] for i in range(30)] == [0.125] * 30
