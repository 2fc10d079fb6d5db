"""JupyterHub pieces of the two class configurations of ``deploy/jupyterhub_config.py``.

* :class:`AppsOnlySpawner` (the class configuration: students get the apps and nothing more):
  each student's single-user server runs as one dedicated unprivileged system account
  (``dpexplore-apps`` by default; created when missing, no login shell, no home), never as root,
  with a private scratch HOME (0700, removed when the server stops), and serves the apps only
  (the ``dpexplore.voila.apps_only`` server extension, enabled by the command's configuration).
* :class:`StudentAccountSpawner` (the practitioners' course: JupyterLab per student): the model
  of The Littlest JupyterHub, each student's server in a system account of their own, created by
  the hub at first login (:class:`LocalDummyAuthenticator` here, ``create_system_users``), whose
  home is 0700 and holds a copy of the apps; accounts below ``min_uid`` (root, system accounts)
  are refused.
* :func:`protect_state`: the hub's own files (cookie secret, database, proxy pid) readable by the
  hub's user alone.

Needs ``jupyterhub`` (the ``hub`` extra); imported by the hub only.
"""
from __future__ import annotations

import asyncio
import os
import pathlib
import pwd
import shutil
import subprocess
import tempfile

from jupyterhub.auth import DummyAuthenticator, LocalAuthenticator
from jupyterhub.spawner import LocalProcessSpawner, set_user_setuid
from traitlets import Bool, Integer, Unicode

__all__ = ["AppsOnlySpawner", "StudentAccountSpawner", "LocalDummyAuthenticator", "protect_state",
           "STATE_FILES", "single_user_servers", "HUB_OPT", "students_env", "students_config",
           "students_root"]

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
    out = subprocess.run([python, "-c", "import dpexplore.cli as c; print(c.default_root())"],
                         capture_output=True, text=True, check=True, timeout=120)
    return pathlib.Path(out.stdout.strip())

#: the hub's state files (relative to its state folder) that must be private to the hub's user
STATE_FILES = ("jupyterhub_cookie_secret", "jupyterhub.sqlite", "jupyterhub-proxy.pid")


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


def _refuse_privileged(entry: pwd.struct_passwd, min_uid: int) -> None:
    if entry.pw_uid == 0 or entry.pw_uid < min_uid:
        raise PermissionError(f"refusing to run a single-user server as {entry.pw_name!r} "
                              f"(uid {entry.pw_uid} < min_uid {min_uid})")


class AppsOnlySpawner(LocalProcessSpawner):
    """A local single-user server run as the unprivileged account :attr:`system_user` (never
    root), with a scratch HOME of its own.

    When the hub is not root it cannot switch users: the server then runs as the hub's own user
    (with a warning in the log); the apps-only server runs no student code, but the hub's files
    are then protected by that alone: run the hub as root (or under sudospawner) in a class.
    """

    system_user = Unicode("dpexplore-apps", config=True,
                          help="the system account that runs every student's apps-only server")
    create_system_user = Bool(True, config=True,
                              help="create system_user (useradd --system, no login, no home) "
                                   "when missing")
    min_uid = Integer(100, config=True, help="refuse accounts with a smaller uid (root: 0)")
    scratch_root = Unicode(tempfile.gettempdir(), config=True,
                           help="where the per-server scratch HOME folders are made")
    scratch = Unicode("", help="this server's scratch HOME")

    def _account(self) -> pwd.struct_passwd | None:
        """The account the server runs as (``None``: the hub's own, the hub not being root)."""
        if os.geteuid() != 0:
            self.log.warning("the hub is not root: %s's apps-only server runs as the hub's user",
                             self.user.name)
            return None
        try:
            entry = pwd.getpwnam(self.system_user)
        except KeyError:
            if not self.create_system_user:
                raise
            self.log.info("creating the system account %s", self.system_user)
            subprocess.run(["useradd", "--system", "--user-group", "--no-create-home",
                            "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin",
                            self.system_user], check=True, capture_output=True)
            entry = pwd.getpwnam(self.system_user)
        _refuse_privileged(entry, self.min_uid)
        return entry

    async def start(self):
        entry = self._account()
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in self.user.name)[:40]
        self.scratch = tempfile.mkdtemp(prefix=f"dpexplore-{safe}-", dir=self.scratch_root)
        if entry is not None:
            os.chown(self.scratch, entry.pw_uid, entry.pw_gid)
        self._entry = entry
        return await super().start()

    def make_preexec_fn(self, name):
        entry, home = getattr(self, "_entry", None), self.scratch
        setuid = set_user_setuid(entry.pw_name, chdir=False) if entry is not None else None

        def preexec():
            if setuid is not None:
                setuid()
            os.chdir(home)

        return preexec

    def user_env(self, env):
        entry = getattr(self, "_entry", None)
        env["USER"] = entry.pw_name if entry is not None else pwd.getpwuid(os.getuid()).pw_name
        env["HOME"] = self.scratch
        env["SHELL"] = "/usr/sbin/nologin"
        return env

    async def stop(self, now=False):
        await super().stop(now=now)
        if self.scratch:
            # the server's kernels may still be writing their last files (IPython's history)
            for _ in range(20):
                shutil.rmtree(self.scratch, ignore_errors=True)
                if not os.path.exists(self.scratch):
                    break
                await asyncio.sleep(0.5)
            self.scratch = ""

    def get_state(self):
        state = super().get_state()
        if self.scratch:
            state["scratch"] = self.scratch
        return state

    def load_state(self, state):
        super().load_state(state)
        self.scratch = state.get("scratch", "")


class StudentAccountSpawner(LocalProcessSpawner):
    """:class:`~jupyterhub.spawner.LocalProcessSpawner` (the server runs as the student's own
    system account) that refuses privileged accounts and, at each start, makes the home 0700 and
    copies the apps into it (``<home>/<apps_folder>``) if they are not there yet."""

    min_uid = Integer(1000, config=True,
                      help="refuse accounts with a smaller uid (root, system accounts)")
    apps_source = Unicode("", config=True, help="folder of app notebooks copied into each home")
    apps_folder = Unicode("apps", config=True, help="their folder name in the home")

    async def start(self):
        entry = pwd.getpwnam(self.user.name)
        _refuse_privileged(entry, self.min_uid)
        home = pathlib.Path(entry.pw_dir)
        if os.geteuid() == 0 and home.is_dir():
            home.chmod(0o700)
            target = home / self.apps_folder
            if self.apps_source and not target.exists():
                shutil.copytree(self.apps_source, target,
                                ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
                for p in [target, *target.rglob("*")]:
                    os.chown(p, entry.pw_uid, entry.pw_gid)
                    p.chmod(0o700 if p.is_dir() else 0o600)
        return await super().start()


class LocalDummyAuthenticator(LocalAuthenticator, DummyAuthenticator):
    """JupyterHub's dummy authenticator (any password, or the shared one) that creates a system
    account for each allowed user at first login, with a 0700 home: for tests and demos only;
    a class uses its institution's login (PAM, or e.g. ``LocalGenericOAuthenticator`` with
    ``create_system_users``)."""

    def add_system_user(self, user):
        super().add_system_user(user)
        home = pathlib.Path(pwd.getpwnam(user.name).pw_dir)
        if home.is_dir():
            home.chmod(0o700)


def single_user_servers(hub_pid: int) -> dict:
    """{hub user: ``psutil.Process``} of the single-user servers a running hub (process
    ``hub_pid``) has spawned: its child processes running ``jupyterhub.singleuser`` (for the
    hub test and the load benchmark; needs psutil)."""
    import psutil

    out = {}
    try:
        kids = psutil.Process(hub_pid).children()
    except psutil.NoSuchProcess:
        return out
    for p in kids:
        try:
            if "jupyterhub.singleuser" in " ".join(p.cmdline()):
                out[p.environ().get("JUPYTERHUB_USER", str(p.pid))] = p
        except psutil.Error:
            pass
    return out
