"""dpexplore: see differential privacy.

An exact, numerically careful backend — mechanisms, conversions between privacy notions,
composition theorems — behind interactive Jupyter/Voilà dashboards (``dpexplore.apps``,
imported on demand so the backend never pulls in widgets).

``import dpexplore`` itself imports nothing heavy: each submodule (and scipy behind it) is imported
the first time it is used, so ``import dpexplore`` takes milliseconds and a script that needs only
``dpexplore.accounting.conversions`` never loads ``scipy.stats``.

>>> import dpexplore
>>> from dpexplore import mechanisms
>>> from dpexplore.accounting import conversions, composition
>>> round(conversions.pure_to_zcdp(1.0), 6)            # ε·tanh(ε/2)
0.462117
>>> mechanisms.Laplace(1.0).epsilon(0.0)
1.0
"""

import importlib

from . import _moved

_moved.install()

__all__ = [
    "PrivacyProfile",
    "FunctionProfile",
    "GaussianDPProfile",
    "accounting",
    "algorithms",
    "mechanisms",
    "teaching",
]

#: the packages by layer (the backend: accounting, mechanisms, teaching algorithms; the notebook
#: cards and bibliography; the apps, their UI and the servers are imported by name only)
_SUBMODULES = {
    "accounting",
    "algorithms",
    "mechanisms",
    "teaching",
    "bibliography",
    "display",
}
#: functions imported on first use (``dpexplore.compare``, ``dpexplore.explore``; not in ``__all__``:
#: the notebook layer, not the backend): compare (the cards' numbers as a table, from
#: dpexplore.display) and explore (the widget; it imports the UI layer, so only when called)
_FUNCTIONS = {"compare": "display", "explore": "ui.explore"}
_FROM_PROFILES = {"PrivacyProfile", "FunctionProfile", "GaussianDPProfile"}
#: attribute → the submodule it is read from on first use; __version__ has one place,
#: dpexplore/_version.py
_ATTRIBUTES = {**_FUNCTIONS, "__version__": "_version", **{n: "accounting.profiles" for n in _FROM_PROFILES}}


def __getattr__(name: str):
    """Import a submodule (or a profile class) the first time it is asked for; a module that moved
    into a layer package (``dpexplore.composition`` → ``dpexplore.accounting.composition``) is
    that module, with a DeprecationWarning (once)."""
    if name in _SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    if name in _moved.MOVED:  # warned once: later uses find the module here
        module = _moved.moved_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    if name in _ATTRIBUTES:
        value = getattr(importlib.import_module(f"{__name__}.{_ATTRIBUTES[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__) | set(_FUNCTIONS))
