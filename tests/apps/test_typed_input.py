"""Typed input (issue 11, point 6): what a person types into a slider's readout or a number box is
read as they mean it — thousands separators and scientific notation accepted, values past a
slider's end set to that end with a note, anything else refused in plain words with a short
excerpt — in every app. The page sends the typed text to the kernel (``AppShell.apply_typed``);
``tests/browser/test_typed_input_browser.py`` checks that path in a real page.
"""

from __future__ import annotations

import re

import ipywidgets as W
import pytest

from dpexplore.ui.controls import IntLogSlider
from dpexplore.ui.shell import _slider_bounds

BUILDERS = []


def _builders():
    from dpexplore.apps.adaptive_lab import build_adaptive_lab
    from dpexplore.apps.audit_lab import build_audit_lab
    from dpexplore.apps.composition_explorer import build_composition_explorer
    from dpexplore.apps.demo import build_demo
    from dpexplore.apps.local_vs_central import build_local_vs_central
    from dpexplore.apps.mechanisms_lab import build_mechanisms_lab
    from dpexplore.apps.noise_lab import build_noise_lab
    from dpexplore.apps.notion_converter import build_notion_converter
    from dpexplore.apps.profile_gdp import build_profile_gdp
    from dpexplore.apps.rdp_explorer import build_rdp_explorer

    return [
        build_demo,
        build_rdp_explorer,
        build_profile_gdp,
        build_composition_explorer,
        build_notion_converter,
        build_noise_lab,
        build_mechanisms_lab,
        build_local_vs_central,
        build_adaptive_lab,
        build_audit_lab,
    ]


def _label(w) -> str:
    return re.sub(r"<[^>]+>", "", w.description).strip()


def _numeric(app):
    return [
        (n, w)
        for n, w in app.controller.controls.items()
        if isinstance(w, (W.IntSlider, W.FloatSlider, W.FloatLogSlider, W.IntText, W.FloatText)) and not w.disabled
    ]


def _valid_or_names_another(ctrl, name, typed):
    """Every position of a slider is valid on its own; a setting refused only together with
    another control (the adaptive lab's rounds ≤ d // 40) must say which one to change."""
    if ctrl.last_error is None:
        return
    others = [n for n in ctrl.controls if n != name and re.search(rf"\b{re.escape(n)}\b", ctrl.message.text)]
    assert others, (name, typed, ctrl.message.text)


@pytest.mark.parametrize("build", _builders(), ids=lambda b: b.__name__.removeprefix("build_"))
def test_every_number_control_reads_what_a_person_types(build):
    app = build()
    ctrl, seen = app.controller, 0
    for name, w in _numeric(app):
        if sum(_label(v) == _label(w) for _, v in _numeric(app)) > 1:
            continue  # two controls with one label: the page cannot tell them apart
        seen += 1
        before = w.value
        # not a number: refused in plain words, the value kept, a long paste echoed short
        app.apply_typed(_label(w), "x" * 200, length=10000)
        assert w.value == before and "not a number" in ctrl.message.text, (name, ctrl.message.text)
        assert len(ctrl.message.text) < 200, ctrl.message.text
        app.apply_typed(_label(w), "0x10")
        assert w.value == before and "not a number" in ctrl.message.text
        bounds = _slider_bounds(w)
        if bounds is None:
            continue
        lo, hi = bounds
        # the slider's end, typed with thousands separators: accepted, no error
        whole = isinstance(w, (W.IntSlider, IntLogSlider))
        text = f"{int(round(hi)):,}" if whole or float(hi).is_integer() else f"{hi:.17g}"
        app.apply_typed(_label(w), text)
        assert w.value == pytest.approx(hi, rel=1e-9), (name, text, w.value)
        _valid_or_names_another(ctrl, name, text)
        # past the end: set to the end, with a note
        app.apply_typed(_label(w), f"{hi * 10:.6e}" if hi > 0 else "1e9")
        assert w.value == pytest.approx(hi, rel=1e-9)
        if ctrl.last_error is None:
            assert "above the largest" in ctrl.message.text, (name, ctrl.message.text)
        # the other end, every position valid
        app.apply_typed(_label(w), f"{int(round(lo))}" if whole else f"{lo:.17g}")
        assert w.value == pytest.approx(lo, rel=1e-9, abs=1e-300), (name, lo, w.value)
        _valid_or_names_another(ctrl, name, lo)
    assert seen, "no number control found"


def test_thousands_and_scientific_in_integer_controls():
    from dpexplore.apps.audit_lab import build_audit_lab
    from dpexplore.apps.mechanisms_lab import build_mechanisms_lab

    app = build_audit_lab()
    trials = app.controller.controls["trials"]
    app.apply_typed(_label(trials), "2,000")
    assert trials.value == pytest.approx(2000, rel=0.05)  # on the slider's grid
    app.apply_typed(_label(trials), "5e3")
    assert trials.value == pytest.approx(5000, rel=0.05)
    app = build_mechanisms_lab()
    seed = app.controller.controls["seed"]  # a number box
    app.apply_typed(_label(seed), "1e-400")
    assert "not a whole number" in app.controller.message.text and seed.value != 1400
    app.apply_typed(_label(seed), "1,234")
    assert seed.value == 1234
