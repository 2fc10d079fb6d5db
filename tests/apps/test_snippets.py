""" "Reproduce in Python": each app's snippet, run as a user would paste it, prints the numbers its
readouts show, for several settings of each app.

Every number the snippet prints must be a number of the readout (same value at the readout's
precision): the snippet reproduces the readout with dpexplore's public API, not a copy of the
app's code. The shell shows the snippet in its "Reproduce in Python" section after every step.
"""

from __future__ import annotations

import html
import math
import re

import ipywidgets as W
import pytest
from snippetkit import check_params_in_snippet
from snippetkit import numbers as _numbers
from snippetkit import readout_text as _readout_text
from snippetkit import run as _run

from dpexplore.apps.composition_explorer import build_composition_explorer
from dpexplore.apps.demo import build_demo
from dpexplore.apps.dpsgd_planner import build_dpsgd_planner
from dpexplore.apps.notion_converter import build_notion_converter
from dpexplore.apps.profile_gdp import build_profile_gdp
from dpexplore.apps.rdp_explorer import build_rdp_explorer

CASES = [
    (build_demo, {}),
    (build_demo, {"eps": 0.5, "mu": 2.0}),
    (build_demo, {"eps": 3.0, "mu": 0.3}),
    (build_rdp_explorer, {}),
    (build_rdp_explorer, {"eps": 0.3, "delta": 1e-9, "alpha_max": 50.0}),
    (build_rdp_explorer, {"eps": 5.0, "delta": 1e-3, "alpha_max": 1000.0}),
    (build_profile_gdp, {}),
    (build_profile_gdp, {"mechanism": "gaussian", "gauss_sigma": 0.5, "mus": "1, 3"}),
    (build_profile_gdp, {"mechanism": "pure", "rr_eps": 2.0, "mus": "1.5"}),
    (build_profile_gdp, {"mechanism": "logistic", "logi_s": 2.0}),
    # gdp_bracket's fallback (δ(0) rounds to 1: theory upper end, lower end on the plot grid), and not GDP
    (build_profile_gdp, {"mechanism": "pure", "rr_eps": 40.0}),
    (build_profile_gdp, {"mechanism": "gaussian", "gauss_sigma": 0.05}),
    (build_profile_gdp, {"mechanism": "subbotin", "sub_r": 4.0}),
    (build_profile_gdp, {"mechanism": "equation", "eq_A": 20.0, "eq_B": 100.0, "eq_sigma": 0.02}),
    (build_composition_explorer, {}),
    (build_composition_explorer, {"eps": 0.5, "k": 1000, "mechanism": "rr", "eps_budget": 2.0}),
    (build_composition_explorer, {"pure": False, "delta": 1e-9, "mechanism": "gaussian", "k": 10}),
    (build_notion_converter, {}),
    (build_notion_converter, {"notion": "zcdp", "rho": 0.5, "delta": 1e-5}),
    (build_notion_converter, {"notion": "gaussian", "gauss_sigma": 2.0, "orders": "2, 10"}),
    (build_notion_converter, {"notion": "gdp", "mu": 1.5}),
    (build_notion_converter, {"notion": "approx", "approx_eps": 1.0, "approx_delta": 1e-6, "delta": 1e-4}),
    (build_notion_converter, {"notion": "rdp", "rdp_alpha": 8.0, "rdp_eps": 0.5}),
    (build_notion_converter, {"notion": "laplace", "lap_b": 2.0}),
    (build_notion_converter, {"notion": "laplace", "lap_b": 50.0}),  # μ via pure DP (below the measured one)
    (build_notion_converter, {"notion": "rr", "rr_eps": 0.5}),
    (build_dpsgd_planner, {}),
    (build_dpsgd_planner, {"n": 100000, "batch": 1024, "epochs": 30, "sigma": 0.8, "delta": 1e-7}),
    (build_dpsgd_planner, {"n": 1000, "batch": 4096, "epochs": 3, "sigma": 5.0, "delta": 1e-2}),
]


@pytest.mark.parametrize(
    "build,settings", CASES, ids=[f"{b.__name__.removeprefix('build_')}-{i}" for i, (b, _) in enumerate(CASES)]
)
def test_snippet_prints_the_readout(build, settings):
    app = build()
    ctrl = app.controller
    first = {k: v for k, v in settings.items() if k in ("mechanism", "notion", "pure")}
    for name, value in [*first.items(), *((k, v) for k, v in settings.items() if k not in first)]:
        ctrl.controls[name].value = value
    assert ctrl.last_error is None, ctrl.message.text
    code = ctrl.snippet()
    assert code, f"{build.__name__} gives no snippet for {settings}"
    assert "dpexplore" in code and "print" in code
    printed = _run(code)
    readout = _readout_text(app)
    got, shown = _numbers(printed), _numbers(readout)
    assert got, f"the snippet printed no numbers:\n{printed}"
    missing = [x for x in got if not any(math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-300) for y in shown)]
    assert not missing, (
        f"{build.__name__} {settings}: the snippet printed {missing} that the readout "
        f"does not show.\nsnippet output:\n{printed}\nreadout:\n{readout}"
    )
    # the shell shows the very snippet of the current setting
    assert html.escape(code.splitlines()[0]) in app._code.value
    # its parameters are the app's (PARAMS), by name, at the values of the current setting
    check_params_in_snippet(app, code)


def test_snippets_follow_each_step():
    app = build_demo()
    before = app._code.value
    app.controller.controls["mu"].value = 3.0
    assert app._code.value != before and "3.0" in app._code.value


# -- the labs -------------------------------------------------------------------------------------
from dpexplore.apps.adaptive_lab import build_adaptive_lab  # noqa: E402
from dpexplore.apps.audit_lab import build_audit_lab  # noqa: E402
from dpexplore.apps.local_vs_central import build_local_vs_central  # noqa: E402
from dpexplore.apps.mechanisms_lab import build_mechanisms_lab  # noqa: E402
from dpexplore.apps.filters_lab import build_filters_lab  # noqa: E402
from dpexplore.apps.noise_lab import build_noise_lab  # noqa: E402

LAB_CASES = [
    (build_noise_lab, {}),
    (build_noise_lab, {"eps": 0.5, "delta": 1e-8, "shape": 1.5}),
    (build_noise_lab, {"eps": 3.0, "delta": 1e-3, "shape": 4.0}),
    (build_audit_lab, {"trials": 1000, "m": 1000}),
    (build_audit_lab, {"mechanism": "Laplace", "eps": 2.0, "trials": 3162, "m": 1000, "seed": 3}),
    (build_audit_lab, {"bug": 3.0, "trials": 1000, "m": 1000, "guess_frac": 0.1}),
    (build_adaptive_lab, {"n": 300, "d": 600, "rounds": 5}),
    (build_mechanisms_lab, {"trials": 100}),
    (
        build_mechanisms_lab,
        {"trials": 100, "attack_eps": 0.3, "count_eps": 2.0, "m": 10, "rnm_eps": 1.0, "svt_variant": "AboveThreshold"},
    ),
    (build_mechanisms_lab, {"trials": 100, "svt_variant": "Sparse (δ > 0)", "svt_delta": 1e-5, "c": 5}),
    (build_local_vs_central, {"trials": 100}),
    (
        build_local_vs_central,
        {
            "trials": 100,
            "med_eps": 0.3,
            "spread": 0.02,
            "n_data": 500,
            "seed": 7,
            "eps_local": 3.0,
            "n_users": 1000,
            "shuffle_delta": 1e-8,
        },
    ),
    (build_adaptive_lab, {"n": 300, "d": 600, "rounds": 5, "tau": 0.1, "gen_n": 1000, "beta": 0.01}),
    (build_filters_lab, {}),
]


@pytest.mark.parametrize(
    "build,settings", LAB_CASES, ids=[f"{b.__name__.removeprefix('build_')}-{i}" for i, (b, _) in enumerate(LAB_CASES)]
)
def test_lab_snippet_prints_the_readout(build, settings):
    """As for the main apps; a lab's readouts may also sit in its tabs (the adaptive lab's
    calculator table), so every number printed must appear in the text of the app's page."""
    app = (
        build(**{k: v for k, v in settings.items() if k in ("n", "d", "rounds")})
        if build is build_adaptive_lab
        else build()
    )
    ctrl = app.controller
    first = {k: v for k, v in settings.items() if k in ("mechanism",)}
    for name, value in [*first.items(), *((k, v) for k, v in settings.items() if k not in first)]:
        if ctrl.controls[name].value != value:
            ctrl.controls[name].value = value
    assert ctrl.last_error is None, ctrl.message.text
    code = ctrl.snippet()
    assert code and "dpexplore" in code and "print" in code
    printed = _run(code)
    page = html.unescape(
        re.sub(r"<[^>]+>", " ", " ".join(w.value for w in app.widgets() if isinstance(w, (W.HTML, W.HTMLMath))))
    )
    got, shown = _numbers(printed), _numbers(page)
    assert got, printed
    missing = [x for x in got if not any(math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-300) for y in shown)]
    assert not missing, f"{build.__name__} {settings}: printed {missing} not on the page.\n{printed}"
    assert html.escape(code.splitlines()[0]) in app._code.value
    check_params_in_snippet(app, code)


# -- every app: the snippet's parameters are the app's --------------------------------------------
from dpexplore.apps import REGISTRY  # noqa: E402


@pytest.mark.parametrize("module", [a.module for a in REGISTRY])
def test_every_snippet_sets_the_apps_parameters(module):
    """At the defaults, each app's snippet sets every parameter the page lets one move (its module's
    ``PARAMS``, but those ``SNIPPET_SKIP`` names with a reason) by name to the current value, and
    leaves out no more: a parameter added to ``PARAMS`` reaches the snippet (``snippet_assign``)."""
    import importlib

    mod = importlib.import_module(f"dpexplore.apps.{module}")
    app = getattr(mod, f"build_{module}")()
    code = app.controller.snippet()
    assert code, f"{module} gives no snippet at its defaults"
    check_params_in_snippet(app, code)
    skip = getattr(mod, "SNIPPET_SKIP", {})
    assert set(skip) <= set(mod.PARAMS) and all(isinstance(why, str) and why for why in skip.values())
