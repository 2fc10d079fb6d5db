"""The project's scripts in tools/ as modules, for the tests that compare with what they stored
(tools/numerics_grid.py, tools/calibrate_grid.py) or test them (tools/build_js.py)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def load_tool(name: str, as_name: str | None = None):
    """tools/<name>.py imported as a module named ``as_name`` (default ``name``)."""
    spec = importlib.util.spec_from_file_location(as_name or name, ROOT / "tools" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def before_after(tool: str, data: Path):
    """(tool module, stored arrays, their metadata, values now, errors now) of a before/after grid:
    the values ``tools/<tool>.py`` stored in ``data`` and what its ``evaluate`` gives today."""
    import dpexplore

    mod = load_tool(tool)
    stored = np.load(data)
    meta = json.loads(str(stored["__meta__"]))
    after, errors = mod.evaluate(dpexplore)
    return mod, stored, meta, after, errors
