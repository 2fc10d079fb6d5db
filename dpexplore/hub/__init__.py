"""dpexplore on JupyterHub: the pieces ``deploy/jupyterhub_config.py`` puts together.

* :mod:`.settings` — every environment knob of the hub in one table (:data:`~.settings.KNOBS`)
  and :func:`~.settings.configure`, which turns them into the hub's configuration;
* :mod:`.roster` — who may log in: checked names, scrypt password hashes, the roster file
  (standard library only; ``dpexplore hub-users`` manages it);
* :mod:`.auth` — :class:`RosterAuthenticator`, the default login;
* :mod:`.spawner` — :class:`StudentSpawner`: each student's server in an account of her own
  (``dpx-<name>``), apps-only or JupyterLab;
* :mod:`.limits` — per-student memory and task limits (cgroups; rlimits as the fallback);
* :mod:`.state` — the hub's state folder and the students' Python.

The classes needing ``jupyterhub`` load on first use, so ``dpexplore hub-users`` runs without it.
"""

from __future__ import annotations

from .state import (
    HUB_OPT,
    STATE_FILES,
    default_state_dir,
    protect_state,  # noqa: F401
    single_user_servers,
    students_config,
    students_env,
    students_root,
)

_LAZY = {"RosterAuthenticator": ".auth", "StudentSpawner": ".spawner"}

__all__ = [
    "RosterAuthenticator",
    "StudentSpawner",
    "HUB_OPT",
    "STATE_FILES",
    "default_state_dir",
    "protect_state",
    "single_user_servers",
    "students_config",
    "students_env",
    "students_root",
]


def __getattr__(name):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(name)
