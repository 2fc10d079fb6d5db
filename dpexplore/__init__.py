"""dpexplore: see differential privacy.

An exact, numerically careful backend — mechanisms, conversions between privacy notions,
composition theorems — behind interactive Jupyter/Voilà dashboards (``dpexplore.apps``,
imported on demand so the backend never pulls in widgets).

``import dpexplore`` itself imports nothing heavy: each submodule (and scipy behind it) is imported
the first time it is used, so ``import dpexplore`` takes milliseconds and a script that needs only
``dpexplore.conversions`` never loads ``scipy.stats``.

>>> import dpexplore
>>> from dpexplore import mechanisms, conversions, composition
>>> round(conversions.pure_to_zcdp(1.0), 6)            # ε·tanh(ε/2)
0.462117
>>> mechanisms.Laplace(1.0).epsilon(0.0)
1.0
"""
import importlib

__all__ = [
    "PrivacyProfile",
    "FunctionProfile",
    "GaussianDPProfile",
    "algorithms",
    "auditing",
    "composition",
    "conversions",
    "mechanisms",
]

_SUBMODULES = {"algorithms", "auditing", "composition", "conversions", "mechanisms", "profiles",
               "references", "pld", "display", "filters", "risk", "teaching"}
#: functions imported on first use (``dpexplore.compare``, ``dpexplore.explore``; not in ``__all__``:
#: the notebook layer, not the backend): compare (the cards' numbers as a table, from
#: dpexplore.display) and explore (the widget; it imports the UI layer, so only when called)
_FUNCTIONS = {"compare": "display", "explore": "ui.explore"}
_FROM_PROFILES = {"PrivacyProfile", "FunctionProfile", "GaussianDPProfile"}


def __getattr__(name: str):
    """Import a submodule (or a profile class) the first time it is asked for."""
    if name in _SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    if name in _FUNCTIONS:
        value = getattr(importlib.import_module(f"{__name__}.{_FUNCTIONS[name]}"), name)
        globals()[name] = value
        return value
    if name == "__version__":  # one place: dpexplore/_version.py (read on first use, as the rest)
        value = importlib.import_module(f"{__name__}._version").__version__
        globals()[name] = value
        return value
    if name in _FROM_PROFILES:
        value = getattr(importlib.import_module(f"{__name__}.profiles"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__) | set(_FUNCTIONS))
