""" "Reproduce in Python" checks shared by tests/apps/test_snippets.py and the labs' tests: run an app's
snippet as a user would paste it, and read the numbers it prints and the numbers the page shows."""

from __future__ import annotations

import ast
import contextlib
import html
import importlib
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


def assigned(code: str) -> dict:
    """The names a snippet sets to literal values at its top level (``eps, mu = 0.5, 2.0``)."""
    out = {}
    for node in ast.parse(code).body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        pairs = (
            zip(target.elts, value.elts)
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
            else [(target, value)]
        )
        for t, v in pairs:
            if isinstance(t, ast.Name):
                try:
                    out[t.id] = ast.literal_eval(v)
                except ValueError:
                    pass
    return out


def check_params_in_snippet(app, code: str) -> None:
    """Every parameter (``PARAMS``) of the app's module whose control the page shows and lets one
    move is set at the top of the snippet by its name to the value of the current spec, unless the
    module leaves it out on purpose (``SNIPPET_SKIP``, name -> why)."""
    ctrl = app.controller
    mod = importlib.import_module(app.info.slug.join(("dpexplore.apps.", "")))
    params = getattr(mod, "PARAMS", None)
    assert params, f"{mod.__name__} lists no PARAMS"
    skip = getattr(mod, "SNIPPET_SKIP", {})
    values = assigned(code)
    spec = ctrl.spec
    for name, p in params.items():
        w = ctrl.controls[name]
        if name in skip or w.layout.display == "none" or getattr(w, "disabled", False):
            continue
        assert name in values, f"{mod.__name__}: the snippet does not set {name}:\n{code}"
        want = getattr(spec, name) if hasattr(spec, name) else w.value
        assert values[name] == want and isinstance(values[name], int) == p.integer, (name, values[name], want)
