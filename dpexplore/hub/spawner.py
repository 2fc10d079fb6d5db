""":class:`StudentSpawner`: each student's single-user server in a system account of her own,
inside limits the kernel enforces.

Both class configurations of ``deploy/jupyterhub_config.py`` use it:

* ``mode = "apps"``: the account ``dpx-<name>`` is a system account with no home and no login
  shell; HOME is a scratch folder (0700, removed when the server stops). The server is the
  apps-only server (:mod:`dpexplore.voila.apps_only`): no code of the student's runs.
* ``mode = "lab"``: ``dpx-<name>`` is an ordinary account with a 0700 home holding a copy of the
  apps (``~/apps``), where the student's own code runs (JupyterLab).

The accounts are made at the first start (``useradd``), marked with the comment
:data:`ACCOUNT_MARK` so that the hub never takes over an account it did not create, and removed
by ``dpexplore hub-users remove`` (or ``prune``). Every process of a student's server is in her
control group (:class:`~dpexplore.hub.limits.CgroupLimits`: memory, tasks and CPU, the whole
group; :attr:`StudentSpawner.mem_limit`, :attr:`StudentSpawner.tasks_limit`,
:attr:`StudentSpawner.cpu_limit`), with rlimits as the
fallback where no cgroup can be made. The hub must run as root: a spawner that cannot switch
accounts refuses to start a server rather than run it as the hub's user.

Needs ``jupyterhub`` (the ``hub`` extra).
"""

from __future__ import annotations

import asyncio
import os
import pathlib
import pwd
import shutil
import socket
import subprocess
import tempfile

from jupyterhub.spawner import LocalProcessSpawner, set_user_setuid
from traitlets import Float, Integer, Unicode

from .limits import CgroupLimits, cgroup_roots, set_rlimits

__all__ = [
    "StudentSpawner",
    "ACCOUNT_PREFIX",
    "ACCOUNT_MARK",
    "account_name",
    "ensure_account",
    "remove_account",
    "hub_accounts",
]

#: a student's system account is this prefix and her hub name
ACCOUNT_PREFIX = "dpx-"
#: the GECOS comment of the accounts the hub makes (only those are ever used or removed)
ACCOUNT_MARK = "dpexplore hub student"


def account_name(user: str) -> str:
    """The system account of hub user ``user``: ``dpx-<name>`` for a roster name, else (a name
    from an institution's login, e.g. an e-mail address) ``dpx-`` and 16 hex digits of its hash.

    >>> account_name("alice"), account_name("ana.lopez@example.edu")
    ('dpx-alice', 'dpx-bdddc793da4ba33b')
    """
    import hashlib

    from .roster import check_name

    try:
        if check_name(user) == user:
            return ACCOUNT_PREFIX + user
    except ValueError:
        pass
    return ACCOUNT_PREFIX + hashlib.sha256(user.encode("utf-8")).hexdigest()[:16]


def ensure_account(name: str, *, home: bool, min_uid: int = 100) -> pwd.struct_passwd:
    """The account ``name``, created (``useradd``) if missing: with a 0700 home and bash when
    ``home``, else a system account with no home and no login shell. An existing account not
    made by the hub (no :data:`ACCOUNT_MARK`), or one with a uid below ``min_uid``, is refused."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        if home:
            cmd = [
                "useradd",
                "--create-home",
                "--user-group",
                "--shell",
                "/bin/bash",
                "-K",
                "HOME_MODE=0700",
                "--comment",
                ACCOUNT_MARK,
                name,
            ]
        else:
            cmd = [
                "useradd",
                "--system",
                "--user-group",
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                "--shell",
                "/usr/sbin/nologin",
                "--comment",
                ACCOUNT_MARK,
                name,
            ]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode not in (0, 9):  # 9: made meanwhile by a concurrent start
            raise RuntimeError(f"useradd {name} failed: {r.stderr.strip()[:300]}") from None
        entry = pwd.getpwnam(name)
    if entry.pw_gecos.split(",")[0] != ACCOUNT_MARK:
        raise PermissionError(f"refusing to use the account {name!r}: the hub did not make it")
    if entry.pw_uid == 0 or entry.pw_uid < min_uid:
        raise PermissionError(f"refusing to run a server as {name!r} (uid {entry.pw_uid} < min_uid {min_uid})")
    return entry


def hub_accounts() -> list[str]:
    """The names of the system accounts the hub made (marked :data:`ACCOUNT_MARK`)."""
    return sorted(
        e.pw_name
        for e in pwd.getpwall()
        if e.pw_name.startswith(ACCOUNT_PREFIX) and e.pw_gecos.split(",")[0] == ACCOUNT_MARK
    )


def remove_account(name: str) -> bool:
    """Removes an account the hub made, its home and its group; ``False`` if there is none
    (or it is not the hub's)."""
    if name not in hub_accounts():
        return False
    subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
    r = subprocess.run(["userdel", "--remove", name], capture_output=True, text=True)
    subprocess.run(["groupdel", name], capture_output=True)
    return r.returncode in (0, 12)  # 12: the home could not be removed (there was none)


async def accepts(ip: str, port: int, timeout: float = 1.0) -> bool:
    """Whether a server accepts TCP connections on (ip, port): one connection, closed at once.
    The probe's socket has ``SO_REUSEADDR``, and a probe that connected to itself (Linux's TCP
    self-connect: a port nobody listens on can be given to the probe as its own) counts as no
    server; with ``SO_REUSEADDR`` it cannot keep the server from binding that port meanwhile.
    (Reading the kernel's socket tables instead took 10-40 ms a look on this machine: ten
    spawns at once kept the hub's loop busy for seconds.)

    >>> import asyncio, socket
    >>> s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    >>> asyncio.run(accepts("127.0.0.1", port)), s.listen(1), asyncio.run(accepts("127.0.0.1", port))
    (False, None, True)
    >>> s.close()
    """
    loop = asyncio.get_running_loop()
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.setblocking(False)
        try:
            await asyncio.wait_for(loop.sock_connect(probe, (ip, port)), timeout)
        except (OSError, asyncio.TimeoutError):
            return False
        return probe.getsockname()[:2] != (ip, port)  # not connected to itself


class StudentSpawner(LocalProcessSpawner):
    """A local single-user server in the student's own account and control group."""

    mode = Unicode("apps", config=True, help="'apps' (apps-only server) or 'lab' (JupyterLab)")
    tasks_limit = Integer(256, config=True, help="processes and threads of one student's server at most")
    cpu_limit = Float(1.0, config=True, help="cores of one student's server at most (0: none)")
    min_uid = Integer(100, config=True, help="refuse accounts with a smaller uid (root: 0)")
    apps_source = Unicode("", config=True, help="lab: folder of app notebooks copied to ~/apps")
    apps_folder = Unicode("apps", config=True, help="lab: their folder name in the home")
    scratch_root = Unicode(
        tempfile.gettempdir(), config=True, help="apps: where the per-server scratch HOME folders are made"
    )
    scratch = Unicode("", help="apps: this server's scratch HOME")

    @property
    def account(self) -> str:
        return account_name(self.user.name)

    def _limits(self):
        memory = int(self.mem_limit) if self.mem_limit else 2**30
        roots = cgroup_roots()
        if roots is None:
            self.log.warning("no cgroup for %s: limits are rlimits (per process)", self.user.name)
            return None
        limits = CgroupLimits(roots, self.account, memory, self.tasks_limit, cpu=self.cpu_limit or None)
        try:
            limits.create()
        except OSError as err:
            self.log.warning("no cgroup for %s (%s): limits are rlimits (per process)", self.user.name, err)
            return None
        return limits

    async def start(self):
        if os.geteuid() != 0:
            raise RuntimeError("the hub must run as root to start each student's server in her own account")
        lab = self.mode == "lab"
        entry = await asyncio.to_thread(ensure_account, self.account, home=lab, min_uid=self.min_uid)
        self._entry = entry
        if lab:
            self._home = entry.pw_dir
            await asyncio.to_thread(self._prepare_home, entry)
        else:
            self.scratch = tempfile.mkdtemp(prefix=f"dpexplore-{self.account}-", dir=self.scratch_root)
            os.chown(self.scratch, entry.pw_uid, entry.pw_gid)
            self._home = self.scratch
        self._cgroup = self._limits()
        ip, port = await super().start()
        await self._until_listening(ip, port)
        return ip, port

    #: seconds between two looks at a starting server's port (:meth:`_until_listening`)
    listen_every = 0.1

    async def _until_listening(self, ip: str, port: int) -> None:
        """Return once the server accepts connections on its port (:func:`accepts`), its
        process has ended, or ``http_timeout`` has passed. The hub checks a started server
        itself, but backs off exponentially (JupyterHub's ``exponential_backoff``: jittered
        waits doubling up to 5 s), so a server up after 5 s was seen up to 5 s later: ten
        students logging in together waited 10-15 s for servers that listened after 4-9 s. A
        look here is one connection to the server's port every 0.1 s; the hub's first check
        after it passes."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + float(self.http_timeout)
        while loop.time() < deadline:
            if await self.poll() is not None:  # it ended: the hub reports the failed spawn
                return
            if await accepts(ip or "127.0.0.1", port):
                return
            await asyncio.sleep(self.listen_every)

    def _prepare_home(self, entry) -> None:
        home = pathlib.Path(entry.pw_dir)
        if not home.is_dir():
            return
        home.chmod(0o700)
        target = home / self.apps_folder
        if self.apps_source and not target.exists():
            shutil.copytree(
                self.apps_source, target, ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints")
            )
            for p in [target, *target.rglob("*")]:
                os.chown(p, entry.pw_uid, entry.pw_gid)
                p.chmod(0o700 if p.is_dir() else 0o600)

    def make_preexec_fn(self, name):
        entry, home = self._entry, self._home
        setuid = set_user_setuid(entry.pw_name, chdir=False)
        cgroup = getattr(self, "_cgroup", None)
        memory = None if cgroup is not None else (int(self.mem_limit) if self.mem_limit else None)
        tasks = self.tasks_limit

        def preexec():
            if cgroup is not None:
                cgroup.join()
            set_rlimits(tasks=tasks, memory=memory)
            setuid()
            os.chdir(home)

        return preexec

    def user_env(self, env):
        entry = self._entry
        env["USER"] = entry.pw_name
        env["HOME"] = self._home
        env["SHELL"] = "/bin/bash" if self.mode == "lab" else "/usr/sbin/nologin"
        return env

    async def move_certs(self, paths):  # internal SSL is not used by these configurations
        raise NotImplementedError("internal_ssl is not supported by StudentSpawner")

    async def stop(self, now=False):
        await super().stop(now=now)
        cgroup = getattr(self, "_cgroup", None)
        if cgroup is None and self.user is not None:
            roots = cgroup_roots()
            cgroup = CgroupLimits(roots, self.account, 1, 1) if roots else None
        if cgroup is not None:  # kernels the server left behind end with it
            await asyncio.to_thread(cgroup.remove)
            self._cgroup = None
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
