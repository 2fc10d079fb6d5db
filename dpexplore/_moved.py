"""Modules that moved into a layer package, and the import hook that keeps their old names working.

The core is laid out by layer (``dpexplore.accounting``, ``dpexplore.mechanisms``,
``dpexplore.teaching``, ``dpexplore.bibliography``, …). A module that moved keeps its old name as
an alias: ``import dpexplore.composition`` and ``from dpexplore import composition`` give the very
module object ``dpexplore.accounting.composition`` (its classes, caches and global state are
shared, not copied) with a :class:`DeprecationWarning` that names the new place. Submodules of a
moved package follow it (``dpexplore.pld.x`` → ``dpexplore.accounting.pld.x``). Names that moved
on out of a moved module (the source scanner, out of the citation registry:
``dpexplore.citations.scan`` → ``dpexplore.bibliography.scanner.scan``) are reached through that
module's ``__getattr__`` (:func:`moved_names`), with a warning each. ``python -m`` with an old
name runs the new one, or the command that replaced it (:data:`MAIN`), with a warning.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

#: old module name (directly under ``dpexplore``) → the layer package it moved into
MOVED = {
    "profiles": "accounting",
    "conversions": "accounting",
    "composition": "accounting",
    "pld": "accounting",
    "filters": "accounting",
    "risk": "accounting",
    "auditing": "accounting",
    "down_sensitivity": "teaching",
    "group_privacy": "teaching",
    "mean_estimation": "teaching",
    "references": "bibliography",
    "citations": "bibliography",
}
#: ``python -m dpexplore.<old>`` whose command is now another module's (the docs page, written by
#: the module before, by the layer package's ``__main__`` now); the others run their new name
MAIN = {"citations": "bibliography"}
_PREFIX = "dpexplore."


def new_name(fullname: str) -> str | None:
    """``dpexplore.<moved>[.rest]`` → its new name; None for any other name."""
    if not fullname.startswith(_PREFIX):
        return None
    head, dot, rest = fullname[len(_PREFIX) :].partition(".")
    if head not in MOVED:
        return None
    return f"{_PREFIX}{MOVED[head]}.{head}{dot}{rest}"


def old_name(fullname: str) -> str | None:
    """The inverse of :func:`new_name`: ``dpexplore.<layer>.<moved>[.rest]`` → its old name."""
    for head, layer in MOVED.items():
        new = f"{_PREFIX}{layer}.{head}"
        if fullname == new or fullname.startswith(new + "."):
            return _PREFIX + head + fullname[len(new) :]
    return None


def warn_moved(old: str, new: str) -> None:
    """The deprecation warning, attributed to the user's ``import`` statement or attribute access
    (so Python's default filters show it where it is written, e.g. in a notebook)."""
    warnings.warn(
        f"{old} moved to {new}; import it from there (the old name will be removed in a future release)",
        DeprecationWarning,
        stacklevel=_user_stacklevel(),
    )


def moved_module(old: str):
    """The module an old name stands for, imported, with the deprecation warning."""
    new = new_name(old)
    warn_moved(old, new)
    return importlib.import_module(new)


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, new: str):
        self.new = new

    def create_module(self, spec):
        module = importlib.import_module(self.new)
        self._spec = module.__spec__
        return module

    def exec_module(self, module):
        # the import system set the module's __spec__ to the alias's spec: give it its own back
        module.__spec__ = self._spec

    def get_code(self, fullname):
        """What ``python -m <old name>`` runs (runpy asks the loader for code, it does not import
        the module): the new name, or the command that replaced it (:data:`MAIN`), as ``__main__``,
        with the warning where the default filters show it."""
        head = fullname[len(_PREFIX) :]
        target = _PREFIX + MAIN[head] if head in MAIN else self.new
        message = f"python -m {fullname} moved to python -m {target}"
        source = (
            "import runpy, warnings\n"
            f"warnings.warn({message!r}, DeprecationWarning)\n"
            f"runpy.run_module({target!r}, run_name='__main__', alter_sys=True)\n"
        )
        return compile(source, f"<{fullname}>", "exec")


class _MovedFinder(importlib.abc.MetaPathFinder):
    """Finds ``dpexplore.<moved>`` names (the modules themselves are not there any more)."""

    def find_spec(self, fullname, path=None, target=None):
        new = new_name(fullname)
        if new is None:
            return None
        warn_moved(fullname, new)
        return importlib.util.spec_from_loader(fullname, _AliasLoader(new))


_OURS = (__file__, __file__.rsplit("_moved.py", 1)[0] + "__init__.py")


def _user_stacklevel() -> int:
    """``warnings.warn``'s stack level, called from :func:`warn_moved`, of the first frame that is
    neither importlib's nor this module's nor the package's ``__init__`` (its ``__getattr__``).
    ``warnings`` itself skips importlib's bootstrap frames when it counts, so they count 0 here."""
    frame, level = sys._getframe(2), 2  # level 1 is warn_moved
    while frame is not None:
        name = frame.f_code.co_filename
        internal = "importlib" in name and "_bootstrap" in name
        if not internal and name not in _OURS:
            break
        frame, level = frame.f_back, level + (0 if internal else 1)
    return level


def moved_names(module: str, new_module: str, names):
    """``__getattr__`` for a moved module some of whose names moved on into ``new_module``: each of
    ``names`` is that module's, with a DeprecationWarning (under the module's old name, which its
    callers wrote) at the user's line."""
    names = frozenset(names)

    def __getattr__(name: str):
        if name in names:
            warn_moved(f"{old_name(module) or module}.{name}", f"{new_module}.{name}")
            return getattr(importlib.import_module(new_module), name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__


def lazy_submodules(package: str, names, namespace: dict):
    """``(__getattr__, __dir__)`` for a layer package whose submodules ``names`` load on first use
    (``namespace``: the package's globals, where a loaded module is kept)."""
    names = frozenset(names)

    def __getattr__(name: str):
        if name in names:
            module = importlib.import_module(f"{package}.{name}")
            namespace[name] = module
            return module
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(namespace) | names)

    return __getattr__, __dir__


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once). It answers only for moved names, and
    first, so that no other finder (an editable install's, say) finds a stale file of that name."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
