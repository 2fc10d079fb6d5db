"""Every environment knob of a dpexplore hub, in one table, and the configuration made from them.

``deploy/jupyterhub_config.py`` calls :func:`configure` with ``os.environ``; docs/hosting.md's
table of options is :data:`KNOBS` (a test keeps the two the same).

What the defaults promise (docs/hosting.md says how each is enforced):

* **Real logins.** :class:`~dpexplore.hub.auth.RosterAuthenticator`: only names on the roster,
  each with a password of her own (scrypt hashes; new names get random passwords, written once
  to ``new-passwords.txt`` for the operator). The ``dummy`` authenticator (any password) only
  with ``DPEXPLORE_HUB_TESTING=1`` and only while the hub listens on loopback.
* **An origin per student.** ``subdomain_host``: the hub at ``DPEXPLORE_HUB_URL``, each
  student's server at ``<name>.<that host>``, so no page a student can write is served from the
  hub's origin or a classmate's; over https the hub's cookies are ``__Host-`` cookies (no page of
  a student's origin can overwrite them), ``Secure`` and ``SameSite=Lax``; lab mode over plain
  http is refused but on ``*.localhost``.
* **Limits.** Each student's server in an account of her own (``dpx-<name>``) and a control
  group of her own (memory, tasks, CPU); at most ``DPEXPLORE_HUB_MAX_PAGES`` app pages per student
  (apps mode), ``DPEXPLORE_HUB_MAX_USERS`` servers at once, a few spawns at a time.
* **The hub's files** (database, cookie secret, roster) in ``DPEXPLORE_HUB_DIR``, outside the
  checkout, private to the hub's user.

>>> sorted(k.name for k in KNOBS)[:3]
['DPEXPLORE_CHP', 'DPEXPLORE_CHP_API_PORT', 'DPEXPLORE_HUB_ACTIVITY_EVERY']
"""

from __future__ import annotations

import ipaddress
import json
import os
import pathlib
import sys
from dataclasses import dataclass
from urllib.parse import urlsplit

from .limits import parse_bytes
from .roster import Roster, sync_roster
from .state import SINGLE_USER_MODULE, default_state_dir, protect_state, students_config, students_env, students_root

__all__ = ["Knob", "KNOBS", "configure", "knobs_markdown", "default_max_users"]


@dataclass(frozen=True)
class Knob:
    name: str
    default: str
    meaning: str


KNOBS = (
    Knob(
        "DPEXPLORE_HUB_MODE",
        "apps",
        "`apps`: the gallery and the apps, no code; `lab`: JupyterLab, each student's own code in her own account",
    ),
    Knob(
        "DPEXPLORE_HUB_URL",
        "http://localhost:<port>",
        "the address students open; each "
        "student's server is at `<name>.<host>` (needs a wildcard DNS name and, behind TLS, a "
        "wildcard certificate)",
    ),
    Knob(
        "DPEXPLORE_HUB_IP",
        "127.0.0.1",
        "where the hub's proxy listens (put the TLS reverse proxy of `deploy/nginx/` in front)",
    ),
    Knob("DPEXPLORE_HUB_PORT", "8000", "the proxy's port"),
    Knob("DPEXPLORE_HUB_API_PORT", "port + 1", "the hub's internal API (127.0.0.1)"),
    Knob("DPEXPLORE_CHP_API_PORT", "port + 2", "the proxy's API (127.0.0.1)"),
    Knob(
        "DPEXPLORE_HUB_DIR",
        "/var/lib/dpexplore-hub (root)",
        "the hub's state: database, cookie secret, roster (0700; never the checkout)",
    ),
    Knob("DPEXPLORE_HUB_ROSTER", "<DPEXPLORE_HUB_DIR>/roster", "the roster file (`dpexplore hub-users` manages it)"),
    Knob(
        "DPEXPLORE_HUB_USERS",
        "(none)",
        "comma-separated names added to the roster at start, "
        "each with a new password written to `<DPEXPLORE_HUB_DIR>/new-passwords.txt`",
    ),
    Knob(
        "DPEXPLORE_HUB_AUTH",
        "roster",
        "`roster`; `lti13` or `oauth` (your institution's "
        "login, `deploy/auth/`); `dummy` only with DPEXPLORE_HUB_TESTING=1 on loopback",
    ),
    Knob(
        "DPEXPLORE_HUB_TESTING",
        "(unset)",
        "`1` allows the `dummy` authenticator (tests and demos on this machine only)",
    ),
    Knob(
        "DPEXPLORE_HUB_MEM_LIMIT",
        "1G",
        "memory of one student's server and kernels together (cgroup; past it her largest process, a kernel, is ended)",
    ),
    Knob("DPEXPLORE_HUB_TASKS_LIMIT", "256", "processes and threads of one student's server"),
    Knob(
        "DPEXPLORE_HUB_CPU_LIMIT",
        "1",
        "cores one student's server and kernels may use at most "
        "(cgroup quota; students also share the machine equally)",
    ),
    Knob("DPEXPLORE_HUB_MAX_PAGES", "5", "apps mode: app pages one student may have open"),
    Knob("DPEXPLORE_HUB_MAX_USERS", "memory / 512 MiB", "students' servers running at once"),
    Knob("DPEXPLORE_HUB_CULL_TIMEOUT", "3600", "seconds idle before a student's server is stopped"),
    Knob("DPEXPLORE_HUB_CULL_EVERY", "300", "how often the idle culler looks (s)"),
    Knob("DPEXPLORE_HUB_ACTIVITY_EVERY", "300", "how often servers and proxy report activity (s)"),
    Knob(
        "DPEXPLORE_HUB_PYTHON",
        "the students' environment",
        "the students' Python (default: "
        "`deploy/singleuser-env` or `/opt/dpexplore-hub/singleuser-env` from `make hub-setup`, "
        "else the hub's)",
    ),
    Knob("DPEXPLORE_CHP", "deploy/node", "path of configurable-http-proxy"),
    Knob("DPEXPLORE_HUB_LTI13_CLIENT_ID", "(none)", "with `lti13`: the tool's client id in the LMS"),
    Knob("DPEXPLORE_HUB_LTI13_ISSUER", "(none)", "with `lti13`: the LMS's issuer"),
    Knob("DPEXPLORE_HUB_LTI13_AUTHORIZE_URL", "(none)", "with `lti13`: the LMS's OIDC authorization endpoint"),
    Knob("DPEXPLORE_HUB_LTI13_JWKS_URL", "(none)", "with `lti13`: the LMS's key set"),
    Knob("DPEXPLORE_HUB_OAUTH_CLIENT_ID", "(none)", "with `oauth`: the client id"),
    Knob("DPEXPLORE_HUB_OAUTH_CLIENT_SECRET", "(none)", "with `oauth`: the client secret"),
    Knob("DPEXPLORE_HUB_OAUTH_AUTHORIZE_URL", "(none)", "with `oauth`: the authorization URL"),
    Knob("DPEXPLORE_HUB_OAUTH_TOKEN_URL", "(none)", "with `oauth`: the token URL"),
    Knob("DPEXPLORE_HUB_OAUTH_USERDATA_URL", "(none)", "with `oauth`: the user-info URL"),
    Knob(
        "DPEXPLORE_HUB_OAUTH_USERNAME_CLAIM", "preferred_username", "with `oauth`: the claim that is the student's name"
    ),
)
_NAMES = {k.name for k in KNOBS}


def knobs_markdown() -> str:
    """The table of :data:`KNOBS` as docs/hosting.md shows it."""
    rows = ["| variable | default | what it sets |", "|---|---|---|"]
    rows += [f"| `{k.name}` | {k.default} | {k.meaning} |" for k in KNOBS]
    return "\n".join(rows)


def default_max_users(meminfo: str = "/proc/meminfo") -> int:
    """Servers at once by default: the machine's memory over 512 MiB (a student with one or two
    app pages open uses 300–450 MiB; the per-student limit caps the worst case), at least 1."""
    try:
        for line in pathlib.Path(meminfo).read_text().splitlines():
            if line.startswith("MemTotal:"):
                return max(1, int(line.split()[1]) * 1024 // (512 * 2**20))
    except OSError:
        pass
    return 8


def _int(env, name, default) -> int:
    raw = env.get(name, "")
    if raw == "":
        return int(default)
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, got {raw!r}") from None
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {raw!r}")
    return value


def _is_loopback(ip: str) -> bool:
    if ip in ("localhost", ""):
        return ip == "localhost"
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False


def _check_students_python(python: str) -> None:
    """As root: the students' Python must be usable by an unprivileged account (a Python under
    /root is not), else every student's server would fail to start."""
    if os.geteuid() != 0:
        return
    import subprocess

    r = subprocess.run(
        ["runuser", "-u", "nobody", "--", python, "-c", f"import jupyterhub, {SINGLE_USER_MODULE}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if r.returncode != 0:
        raise ValueError(
            f"the students' Python {python} cannot be run by their accounts "
            f"({r.stderr.strip()[-200:]}): run `make hub-setup` beside this "
            "configuration, or set DPEXPLORE_HUB_PYTHON"
        )


def configure(c, env=None, deploy: pathlib.Path | None = None) -> None:
    """Fills the JupyterHub configuration ``c`` from ``env`` (``os.environ``); ``deploy`` is the
    folder of ``deploy/jupyterhub_config.py`` (single-user configurations, ``node``)."""
    env = dict(os.environ if env is None else env)
    deploy = pathlib.Path(deploy or pathlib.Path(__file__).resolve().parents[2] / "deploy")
    unknown = sorted(k for k in env if k.startswith("DPEXPLORE_HUB") and k not in _NAMES)
    if unknown:  # a typo must not silently give the default (e.g. a weaker limit)
        raise ValueError(f"unknown hub settings {unknown}; see docs/hosting.md for the table")
    mode = env.get("DPEXPLORE_HUB_MODE", "apps")
    if mode not in ("apps", "lab"):
        raise ValueError(f"DPEXPLORE_HUB_MODE must be 'apps' or 'lab', got {mode!r}")
    state = pathlib.Path(env.get("DPEXPLORE_HUB_DIR") or default_state_dir()).resolve()
    protect_state(state)  # before the hub creates its database and pid file
    port = _int(env, "DPEXPLORE_HUB_PORT", 8000)
    ip = env.get("DPEXPLORE_HUB_IP", "127.0.0.1")
    url = env.get("DPEXPLORE_HUB_URL") or f"http://localhost:{port}"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
        raise ValueError(f"DPEXPLORE_HUB_URL must be like https://hub.example.org, got {url!r}")

    c.JupyterHub.ip = ip
    c.JupyterHub.port = port
    c.JupyterHub.hub_ip = "127.0.0.1"
    c.JupyterHub.hub_port = _int(env, "DPEXPLORE_HUB_API_PORT", port + 1)
    c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{_int(env, 'DPEXPLORE_CHP_API_PORT', port + 2)}"
    # each student's server on an origin of her own: <name>.<host>
    c.JupyterHub.subdomain_host = f"{parts.scheme}://{parts.netloc}"
    cookie = {"samesite": "Lax"}
    local = parts.hostname == "localhost" or parts.hostname.endswith(".localhost")
    if parts.scheme == "https":
        cookie["secure"] = True
        # a student's origin is a subdomain of the hub's: a page there could set a cookie for the
        # hub's whole domain (cookie tossing: her own login cookie, and her classmate's next
        # request runs as her). A __Host- cookie can carry no Domain: none can be tossed onto it.
        c.JupyterHub.cookie_host_prefix_enabled = True
    elif mode == "lab" and not local:
        # in lab mode a student's own code serves pages on her origin: over http on a real domain
        # the hub's cookies could be overwritten from there (browsers refuse Domain=localhost, so
        # a one-machine try on localhost is safe)
        raise ValueError(
            f"DPEXPLORE_HUB_MODE=lab needs https (DPEXPLORE_HUB_URL=https://…) on a "
            f"real domain, got {url!r}: see docs/hosting.md"
        )
    c.JupyterHub.tornado_settings = {"cookie_options": dict(cookie), "xsrf_cookie_kwargs": dict(cookie)}
    chp = env.get("DPEXPLORE_CHP") or str(deploy / "node" / "node_modules" / ".bin" / "configurable-http-proxy")
    if not os.path.exists(chp):
        import shutil

        chp = shutil.which("configurable-http-proxy") or chp
    c.ConfigurableHTTPProxy.command = [chp]
    c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
    c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
    c.ConfigurableHTTPProxy.pid_file = str(state / "jupyterhub-proxy.pid")
    activity = _int(env, "DPEXPLORE_HUB_ACTIVITY_EVERY", 300)
    c.JupyterHub.last_activity_interval = activity

    # -- who logs in ------------------------------------------------------------------------
    roster = Roster(env.get("DPEXPLORE_HUB_ROSTER") or state / "roster")
    names = [n.strip() for n in env.get("DPEXPLORE_HUB_USERS", "").split(",") if n.strip()]
    if names:
        sync_roster(roster, names, state / "new-passwords.txt")
    auth = env.get("DPEXPLORE_HUB_AUTH", "roster")
    c.Authenticator.allow_all = False
    c.Authenticator.admin_users = set()
    c.Authenticator.delete_invalid_users = True
    c.Authenticator.refresh_pre_spawn = True
    c.Authenticator.auth_refresh_age = 300
    if auth == "roster":
        c.JupyterHub.authenticator_class = "dpexplore.hub.RosterAuthenticator"
        c.RosterAuthenticator.roster_file = str(roster.path)
    elif auth == "dummy":
        if env.get("DPEXPLORE_HUB_TESTING") != "1":
            raise ValueError(
                "DPEXPLORE_HUB_AUTH=dummy (any password logs in) needs "
                "DPEXPLORE_HUB_TESTING=1: it is for tests on this machine only"
            )
        if not _is_loopback(ip):
            raise ValueError(
                f"DPEXPLORE_HUB_AUTH=dummy is refused when the hub listens beyond loopback (DPEXPLORE_HUB_IP={ip!r})"
            )
        c.JupyterHub.authenticator_class = "dummy"
        c.Authenticator.allowed_users = set(roster.names())
    elif auth in ("lti13", "oauth"):
        fragment = deploy / "auth" / f"{auth}.py"
        namespace = {"c": c, "env": env, "roster_names": roster.names()}
        exec(compile(fragment.read_text(), str(fragment), "exec"), namespace)  # noqa: S102
    else:
        raise ValueError(f"DPEXPLORE_HUB_AUTH must be roster, lti13, oauth or dummy, got {auth!r}")

    # -- the students' servers --------------------------------------------------------------
    envdir = students_env(deploy)
    python = env.get("DPEXPLORE_HUB_PYTHON") or (
        str(envdir / "bin" / "python") if envdir is not None else sys.executable
    )
    c.JupyterHub.spawner_class = "dpexplore.hub.StudentSpawner"
    c.StudentSpawner.mode = mode
    # jupyterhub.singleuser without its slowest optional import (half its start: ten students
    # logging in together wait for ten starts on the same cores)
    c.Spawner.cmd = [python, "-m", SINGLE_USER_MODULE]
    c.Spawner.args = []
    try:
        c.Spawner.mem_limit = parse_bytes(env.get("DPEXPLORE_HUB_MEM_LIMIT") or "1G")
    except ValueError:
        raise ValueError(
            "DPEXPLORE_HUB_MEM_LIMIT must be like 1G, 512M or a number of bytes, "
            f"got {env.get('DPEXPLORE_HUB_MEM_LIMIT')!r}"
        ) from None
    c.StudentSpawner.tasks_limit = _int(env, "DPEXPLORE_HUB_TASKS_LIMIT", 256)
    try:
        cpu = float(env.get("DPEXPLORE_HUB_CPU_LIMIT") or 1.0)
    except ValueError:
        cpu = -1.0
    if not cpu > 0:
        raise ValueError(
            f"DPEXPLORE_HUB_CPU_LIMIT must be a positive number of cores, got {env.get('DPEXPLORE_HUB_CPU_LIMIT')!r}"
        )
    c.StudentSpawner.cpu_limit = cpu
    c.Spawner.start_timeout = 120
    c.Spawner.http_timeout = 120
    c.Spawner.disable_user_config = True  # no ~/.jupyter config (it could re-enable extensions)
    c.JupyterHub.active_server_limit = _int(env, "DPEXPLORE_HUB_MAX_USERS", default_max_users())
    c.JupyterHub.concurrent_spawn_limit = 10
    c.Spawner.environment = {
        "JUPYTERHUB_ACTIVITY_INTERVAL": str(activity),
        "JUPYTERHUB_COOKIE_OPTIONS": json.dumps(cookie),
        # a terminal's `python`, `pip`, `jupyter` are the students' (not the hub's)
        "PATH": os.pathsep.join([str(pathlib.Path(python).parent), env.get("PATH", os.defpath)]),
        # the server starts in her home: no module of hers there shadows the server's own
        "PYTHONSAFEPATH": "1",
    }
    _check_students_python(python)
    if mode == "apps":
        c.Spawner.notebook_dir = str(students_root(python))
        c.Spawner.default_url = "/voila/render/index.ipynb"
        c.Spawner.args = [f"--DPExploreAppsOnly.max_kernels={_int(env, 'DPEXPLORE_HUB_MAX_PAGES', 5)}"]
        c.Spawner.environment["JUPYTER_CONFIG_PATH"] = str(students_config(deploy, "singleuser", python))
    else:
        import dpexplore.cli

        c.StudentSpawner.apps_source = str(dpexplore.cli.default_root())
        c.Spawner.notebook_dir = "~"
        c.Spawner.default_url = "/lab"
        c.Spawner.environment["JUPYTER_CONFIG_PATH"] = str(students_config(deploy, "singleuser-lab", python))

    cull_timeout = _int(env, "DPEXPLORE_HUB_CULL_TIMEOUT", 3600)
    cull_every = _int(env, "DPEXPLORE_HUB_CULL_EVERY", 300)
    c.JupyterHub.load_roles = [
        {
            "name": "idle-culler",
            "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
            "services": ["idle-culler"],
        }
    ]
    c.JupyterHub.services = [
        {
            "name": "idle-culler",
            "command": [
                sys.executable,
                "-m",
                "jupyterhub_idle_culler",
                f"--timeout={cull_timeout}",
                f"--cull-every={cull_every}",
            ],
        }
    ]
