"""Typed input in a real page (issue 11, point 6): the page sends what was typed into a slider's
readout or a number box to the kernel, which reads it as a person means it. Before, ipywidgets
read "1,500" as 1, "5e2" in an integer field as 5, and number boxes dropped characters as they
were typed ("0x10" became 10)."""

from __future__ import annotations

import pytest

from dpexplore.apps.composition_explorer import K_MAX

pytestmark = pytest.mark.browser


def _type_into(app, locator, text: str) -> None:
    locator.click()
    app.page.keyboard.press("Control+A")
    app.page.keyboard.type(text)
    app.page.keyboard.press("Enter")


def _wait_readout(app, label: str, text: str) -> None:
    app.page.wait_for_function(
        """([label, text]) => [...document.querySelectorAll('.widget-slider')].some(s =>
             (s.querySelector('.widget-label') || {}).textContent?.includes(label) &&
             s.querySelector('.widget-readout').textContent.trim().replaceAll(',', '') === text.replaceAll(',', ''))""",
        arg=[label, text],
        timeout=20_000,
    )


def _wait_message(app, needle: str) -> str:
    app.page.wait_for_function(
        """(t) => [...document.querySelectorAll('.dpexplore-message')]
                   .some(e => e.offsetParent !== null && e.innerText.includes(t))""",
        arg=needle,
        timeout=20_000,
    )
    return app.message()


def test_slider_readouts_read_separators_and_scientific_notation(open_app):
    app = open_app("composition_explorer.ipynb")
    readout = app.slider("k").locator(".widget-readout")
    _type_into(app, readout, "1,000")
    _wait_readout(app, "k", "1000")
    assert app.message() == ""
    # k moves on a log grid (20 positions a decade): 500 is not one, so the nearest is taken, and said
    _type_into(app, readout, "5e2")
    _wait_readout(app, "k", "501")
    assert "set to the nearest, 501" in _wait_message(app, "between two positions")
    _type_into(app, readout, "100")
    _wait_readout(app, "k", "100")
    # past the end: set to the end, and said so
    _type_into(app, readout, f"{10 * K_MAX:,}")
    msg = _wait_message(app, "above the largest k")
    assert f"{K_MAX:,}" in msg
    _wait_readout(app, "k", str(K_MAX))
    # not a number: refused in plain words, the value kept, a long paste echoed short
    _type_into(app, readout, "abc")
    msg = _wait_message(app, "is not a number")
    assert "'abc'" in msg and "k stays at" in msg
    _wait_readout(app, "k", str(K_MAX))
    readout.click()
    app.page.keyboard.press("Control+A")
    app.page.keyboard.insert_text("9" * 50 + "x" * 10000)
    app.page.keyboard.press("Enter")
    msg = _wait_message(app, "is not a number")
    assert len(msg) < 300, len(msg)
    app.assert_no_traceback()
    assert not app.page.errors, app.page.errors


def _seed_box(app):
    """The mechanisms lab's seed box (a number box), scrolled into view."""
    return app.reveal(
        app.page.locator(".widget-text", has=app.page.locator(".widget-label", has_text="seed")).locator("input")
    ).first


def test_number_boxes_keep_every_character(open_app):
    app = open_app("mechanisms_lab.ipynb")
    box = _seed_box(app)
    before = box.input_value()
    _type_into(app, box, "0x10")
    msg = _wait_message(app, "is not a number")
    assert "'0x10'" in msg
    assert box.input_value() == before
    _type_into(app, box, "1e-400")
    _wait_message(app, "not a whole number")
    assert box.input_value() == before
    revisions = app.revisions()
    _type_into(app, box, "1,234")
    app.page.wait_for_function("(b) => b.value === '1234'", arg=box.element_handle(), timeout=20_000)
    app._wait_redrawn(revisions)
    assert app.message() == ""
    assert not app.page.errors, app.page.errors


#: what ipywidgets' view does when the model changes: it rewrites the readout (or the box)
_VIEW_WRITES = "(el, v) => { if (el.matches('input')) el.value = v; else el.textContent = v; }"


def _late_answer(app, control, typed: str, answer: str, then: str) -> str:
    """Select all of ``control`` (a readout or a number box) and type ``typed``; let its view write
    ``answer``, as a late answer from the kernel does; type ``then`` and press Enter. Returns what
    the control showed just after the answer."""
    control.click()
    app.page.keyboard.press("Control+A")
    if typed:
        app.page.keyboard.type(typed)
    control.evaluate(_VIEW_WRITES, answer)
    shown = control.evaluate("el => (el.matches('input') ? el.value : el.textContent).trim()")
    app.page.keyboard.type(then)
    app.page.keyboard.press("Enter")
    return shown


def test_a_late_answer_does_not_change_what_is_being_typed(open_app):
    """The view rewrites a readout whenever its model changes, also while someone types into it:
    on a busy server the kernel's answer to the previous edit came while "1.00e-6" was being typed
    back, replaced "1.00e-" with "1.00e-15" and put the caret first, and the "6" typed next made
    "61.00e-15": 6.1e-14 was set (a rerun of test_extremes_browser, found in CI)."""
    app = open_app("composition_explorer.ipynb")
    readout = app.slider("δ′ total").locator(".widget-readout")
    # an answer arrives during the edit: what was typed stays, and is what the kernel gets
    assert _late_answer(app, readout, "1.00e-", "1.00e-15", "8") == "1.00e-"
    _wait_readout(app, "δ′ total", "1.00e-8")
    # an answer arrives after a select-all, before any key: it is shown, still selected, so
    # what is typed next replaces it
    assert _late_answer(app, readout, "", "1.00e-15", "1e-7") == "1.00e-15"
    _wait_readout(app, "δ′ total", "1.00e-7")
    # an answer to a readout nobody is editing is shown as before
    readout.evaluate("el => el.blur()")
    readout.evaluate(_VIEW_WRITES, "1.00e-3")
    assert readout.inner_text().strip() == "1.00e-3"
    readout.evaluate(_VIEW_WRITES, "1.00e-7")
    _type_into(app, readout, "1e-6")  # as the module's page was
    _wait_readout(app, "δ′ total", "1.00e-6")
    app.assert_no_traceback()
    assert app.message() == ""
    assert not app.page.errors, app.page.errors


def test_a_late_answer_does_not_change_a_number_box_being_typed(open_app):
    app = open_app("mechanisms_lab.ipynb")
    box = _seed_box(app)
    revisions = app.revisions()
    assert _late_answer(app, box, "42", "5", "1") == "42"
    app.page.wait_for_function("(b) => b.value === '421'", arg=box.element_handle(), timeout=20_000)
    app._wait_redrawn(revisions)
    assert app.message() == ""
    assert not app.page.errors, app.page.errors
