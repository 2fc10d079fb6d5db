"""Helpers shared by the labs' browser tests (``from labkit import …``; the Dashboard of
conftest.py does the rest): None-aware comparisons of plotted numbers, the value a log slider holds
for a typed number, typing into a slider's readout, and one page shared by a module's tests."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import SharedPage
from dpexplore.ui.controls import log_slider

__all__ = ["close", "snap_log", "type_value", "type_for_message", "shared_lab"]


def close(got, want, rtol: float = 1e-12) -> None:
    """``got`` (plotted values, None for a gap) equals ``want`` to ``rtol`` (NaN where None)."""
    got = np.array([np.nan if v is None else v for v in got], dtype=float)
    want = np.asarray(want, dtype=float)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-300, equal_nan=True)


def snap_log(value: float, lo: float, steps_per_decade: int, integer: bool = False) -> float:
    """The grid point of a log slider from ``lo`` nearest to ``value``, as the kernel holds it."""
    e0 = math.log10(lo)
    k = round((math.log10(value) - e0) * steps_per_decade)
    v = 10 ** (e0 + k / steps_per_decade)
    if integer:
        return float(max(round(v), 1))
    return log_slider("x", lo, lo, 10 ** (e0 + 40), steps_per_decade=steps_per_decade).canonical(v)


def type_value(app, label: str, value) -> None:
    """Type into a slider's readout and wait for a redraw (nothing to wait for when the slider
    already shows ``value``)."""
    try:
        if float(app.readout(label).replace(",", "")) == float(value):
            return
    except ValueError:
        pass
    app.set_slider(label, value)


def type_for_message(app, label: str, text: str, needle: str) -> str:
    """Type ``text`` into the slider's readout and wait until the message says ``needle``."""
    readout = app.slider(label).locator(".widget-readout")
    readout.click()
    app.page.keyboard.press("Control+A")
    app.page.keyboard.type(text)
    app.page.keyboard.press("Enter")
    app.page.wait_for_function(
        """(t) => [...document.querySelectorAll('.dpexplore-message')]
                  .some(e => e.offsetParent !== null && e.innerText.includes(t))""",
        arg=needle,
        timeout=20_000,
    )
    return app.message()


def shared_lab(notebook: str, viewport: dict | None = None):
    """A module-scoped fixture: one page of ``notebook`` for the module's tests (reopened after a
    failure). Use as ``_page = shared_lab("x.ipynb")`` and ``lab = _page.get()`` in a test."""

    @pytest.fixture(scope="module")
    def _page(browser, served):
        shared = SharedPage(browser, served, notebook, viewport=viewport or {"width": 1300, "height": 1000})
        try:
            yield shared
        finally:
            shared.close()

    return _page
