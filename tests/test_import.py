"""``import dpexplore`` is light: it imports no submodule (but the small import hook of moved names), no scipy and no UI or server package;
submodules load on first use, and the backend never imports a widget or server package."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY_OR_UI = [
    "scipy",
    "scipy.stats",
    "numpy",
    "ipywidgets",
    "anywidget",
    "traitlets",
    "tornado",
    "voila",
    "jupyter_server",
    "plotly",
]


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_dpexplore_imports_nothing_heavy():
    mods = _modules_after("import dpexplore")
    assert not [m for m in HEAVY_OR_UI if m in mods], sorted(m for m in HEAVY_OR_UI if m in mods)
    # the one submodule it imports is the moved names' import hook (the standard library only)
    ours = sorted(m for m in mods if m.startswith("dpexplore."))
    assert ours == ["dpexplore._moved"], ours


def test_submodules_and_classes_load_on_first_use():
    mods = _modules_after(
        "import dpexplore\nprint(dpexplore.GaussianDPProfile(1.0).delta(0.0))\n"
        "from dpexplore.accounting import conversions\nconversions.pure_to_zcdp(1.0)"
    )
    assert "dpexplore.accounting.profiles" in mods and "dpexplore.accounting.conversions" in mods
    assert "scipy.stats" not in mods  # only auditing needs it


def test_the_backend_imports_no_widget_or_server_package():
    mods = _modules_after(
        "from dpexplore import algorithms, mechanisms\n"
        "from dpexplore.bibliography import citations, references\n"
        "from dpexplore.accounting import auditing, composition, conversions, profiles, pld"
    )
    ui = [
        m for m in ("ipywidgets", "anywidget", "traitlets", "tornado", "voila", "jupyter_server", "plotly") if m in mods
    ]
    assert not ui, ui


def test_unknown_attribute_is_an_attribute_error():
    import dpexplore
    import pytest

    with pytest.raises(AttributeError, match="nosuch"):
        dpexplore.nosuch  # noqa: B018
