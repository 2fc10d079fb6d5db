""" "Reproduce in Python" checks shared by tests/apps/test_snippets.py and the labs' tests: run an app's
snippet as a user would paste it, and read the numbers it prints and the numbers the page shows."""

from __future__ import annotations

import contextlib
import html
import io
import math
import re

import ipywidgets as W

#: a number as the apps print it: thousands separators, a unicode minus, scientific notation
NUMBER = re.compile(r"(?<![\w.])[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+−]?\d+)?(?!\w|\.\d)")


def numbers(text: str) -> list[float]:
    """Every number in ``text``."""
    return [float(m.group(0).replace(",", "").replace("−", "-")) for m in NUMBER.finditer(text)]


def _text(widgets) -> str:
    parts, stack = [], list(widgets)
    while stack:
        w = stack.pop()
        if isinstance(w, (W.HTML, W.HTMLMath)):
            parts.append(w.value)
        stack.extend(getattr(w, "children", ()) or ())
    return html.unescape(re.sub(r"<[^>]+>", " ", " ".join(parts)))


def readout_text(app) -> str:
    """The text of every widget in the shell's readout box (tags stripped)."""
    boxes = [w for w in app.widgets() if "dpexplore-readouts" in getattr(w, "_dom_classes", ())]
    assert boxes, "the shell has no readout box"
    return _text(boxes)


def page_text(app) -> str:
    """The text of every HTML widget of the app (a lab's tables may sit in its tabs)."""
    return _text([w for w in app.widgets() if isinstance(w, (W.HTML, W.HTMLMath))])


def run(code: str) -> str:
    """What ``code`` prints, run as a pasted snippet."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, "<snippet>", "exec"), {"__name__": "__snippet__"})
    return buf.getvalue()


def not_shown(printed: str, shown_text: str) -> list[float]:
    """The numbers of ``printed`` that ``shown_text`` does not show (same value to 1e-9)."""
    shown = numbers(shown_text)
    return [x for x in numbers(printed) if not any(math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-300) for y in shown)]
