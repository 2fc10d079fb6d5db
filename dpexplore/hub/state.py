"""Where a dpexplore hub keeps its files and finds the students' Python.

* :func:`default_state_dir`: the hub's state (database, cookie secret, roster) outside any
  checkout: ``/var/lib/dpexplore-hub`` as root, else ``~/.local/state/dpexplore-hub``;
* :func:`protect_state`: the hub's own files readable by the hub's user alone;
* :func:`students_env`, :func:`students_config`, :func:`students_root`: the Python, the
  single-user configuration and the apps' notebooks the students' accounts can use;
* :func:`single_user_servers`: the running servers of a hub (tests, benchmarks).

Standard library only (psutil for :func:`single_user_servers`).
"""

from __future__ import annotations

import os
import pathlib
import subprocess

__all__ = [
    "HUB_OPT",
    "STATE_FILES",
    "default_state_dir",
    "protect_state",
    "students_env",
    "students_config",
    "students_root",
    "single_user_servers",
]


def default_state_dir() -> pathlib.Path:
    """The hub's state folder when ``DPEXPLORE_HUB_DIR`` is not set: never the current folder
    (a checkout's ``git add .`` would take the cookie secret and the database along)."""
    if os.geteuid() == 0:
        return pathlib.Path("/var/lib/dpexplore-hub")
    base = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    return pathlib.Path(base) / "dpexplore-hub"


#: where ``make hub-setup`` puts the students' Python and configuration when the checkout is in a
#: folder other accounts cannot enter (a copy of the package, not an editable install)
HUB_OPT = pathlib.Path("/opt/dpexplore-hub")


def students_env(deploy: pathlib.Path) -> pathlib.Path | None:
    """The students' Python environment that ``make hub-setup`` built, if any:
    ``deploy/singleuser-env`` (the checkout is readable by any account), else
    ``/opt/dpexplore-hub/singleuser-env``; ``None`` when the hub's own Python serves them."""
    for env in (deploy / "singleuser-env", HUB_OPT / "singleuser-env"):
        if (env / "bin" / "python").exists():
            return env
    return None


def students_config(deploy: pathlib.Path, name: str, python: str) -> pathlib.Path:
    """The single-user configuration folder ``name`` (``singleuser`` or ``singleuser-lab``) that the
    students' servers read: the copy beside an environment in :data:`HUB_OPT`, else the checkout's."""
    if pathlib.Path(python).is_relative_to(HUB_OPT) and (HUB_OPT / name).is_dir():
        return HUB_OPT / name
    return deploy / name


def students_root(python: str) -> pathlib.Path:
    """The apps' notebooks folder of the dpexplore that ``python`` imports (the students' copy,
    which their accounts can read, not necessarily the hub's)."""
    out = subprocess.run(
        [python, "-c", "import dpexplore.cli as c; print(c.default_root())"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return pathlib.Path(out.stdout.strip())


#: the hub's state files (relative to its state folder) that must be private to the hub's user
STATE_FILES = ("jupyterhub_cookie_secret", "jupyterhub.sqlite", "jupyterhub-proxy.pid", "roster", "new-passwords.txt")


def protect_state(state: pathlib.Path) -> None:
    """Make the hub's files private: the process umask 077 (the sqlite database, its journal and
    the proxy's pid file are created by the hub after this), the state folder 0700 if the hub
    creates it, and existing state files 0600."""
    os.umask(0o077)
    if not state.exists():
        state.mkdir(mode=0o700, parents=True)
    for name in STATE_FILES:
        f = state / name
        if f.exists():
            f.chmod(0o600)


#: the module the hub runs a student's server as (``python -m``; :mod:`dpexplore.hub.singleuser`)
SINGLE_USER_MODULE = "dpexplore.hub.singleuser"


def is_single_user_server(cmdline) -> bool:
    """Whether a process's command line (a list of words) is a single-user server: ours
    (:data:`SINGLE_USER_MODULE`) or JupyterHub's own ``jupyterhub.singleuser``.

    >>> is_single_user_server(["/usr/bin/python3", "-m", "dpexplore.hub.singleuser"])
    True
    >>> is_single_user_server(["python", "-m", "dpexplore.cli", "serve"])
    False
    """
    words = " ".join(cmdline or [])
    return any(m in words for m in (SINGLE_USER_MODULE, "jupyterhub.singleuser", "jupyterhub-singleuser"))


def single_user_servers(hub_pid: int) -> dict:
    """{hub user: ``psutil.Process``} of the single-user servers a running hub (process
    ``hub_pid``) has spawned: its child processes that :func:`is_single_user_server` (for the
    hub test and the load benchmark; needs psutil)."""
    import psutil

    out = {}
    try:
        kids = psutil.Process(hub_pid).children()
    except psutil.NoSuchProcess:
        return out
    for p in kids:
        try:
            if is_single_user_server(p.cmdline()):
                out[p.environ().get("JUPYTERHUB_USER", str(p.pid))] = p
        except psutil.Error:
            pass
    return out
