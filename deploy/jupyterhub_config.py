"""JupyterHub configuration for a class using dpexplore (the file docs/hosting.md gives).

Two configurations, chosen by ``DPEXPLORE_HUB_MODE``:

``apps`` (the default; a class that uses the apps): students get the apps and nothing more. Each
student's single-user server (``jupyterhub-singleuser`` with the ``dpexplore.voila.apps_only``
server extension, ``deploy/singleuser/``) serves the gallery and the apps with the hardening of
``dpexplore serve``: widget messages only on the kernel websocket (no code runs), no contents,
kernels, sessions or terminals API, no JupyterLab, tree or file serving, no tracebacks. It runs as
the unprivileged system account ``DPEXPLORE_HUB_APPS_USER`` (default ``dpexplore-apps``, created
when missing; :class:`dpexplore.hub.AppsOnlySpawner`), never as root.

``lab`` (a course whose students write notebooks): JupyterLab for each student, each in a system
account of their own created by the hub at first login (the model of The Littlest JupyterHub:
``LocalProcessSpawner`` + ``create_system_users``; :class:`dpexplore.hub.StudentAccountSpawner`),
homes 0700 holding a copy of the apps in ``~/apps``, the Voilà and plotly.js extensions on
(``deploy/singleuser-lab/``). Only the names in ``DPEXPLORE_HUB_USERS`` (comma-separated) may log
in: each login creates a system account.

In both, the hub's files (cookie secret, database, proxy pid file) are readable by the hub's user
alone (umask 077, state folder 0700), everything is bound to 127.0.0.1 (put a TLS reverse proxy in
front for a real class), and ``jupyterhub-idle-culler`` runs as a hub service and stops servers
idle longer than ``DPEXPLORE_HUB_CULL_TIMEOUT`` seconds (default 3600). Run the hub as root (it
switches to the students' accounts).

The authenticator here is JupyterHub's ``dummy`` (any password, or the shared one in
``DPEXPLORE_HUB_PASSWORD``): replace it by your institution's (OAuthenticator, LTI, PAM, ...).
Environment knobs (all optional): DPEXPLORE_HUB_MODE (apps | lab), DPEXPLORE_HUB_PORT (8000),
DPEXPLORE_HUB_DIR (state: database, cookie secret; default the current folder),
DPEXPLORE_HUB_APPS_USER, DPEXPLORE_HUB_USERS, DPEXPLORE_HUB_CULL_TIMEOUT, DPEXPLORE_HUB_CULL_EVERY,
DPEXPLORE_HUB_ACTIVITY_EVERY (how often servers and proxy report activity, s; default 300),
DPEXPLORE_HUB_PYTHON (the students' Python; default ``deploy/singleuser-env`` if ``make hub-setup``
made it, else the hub's), DPEXPLORE_CHP (path of configurable-http-proxy; default ``deploy/node``
from ``make hub-setup``).
"""
import os
import pathlib
import shutil
import sys

import dpexplore.cli
from dpexplore.hub import protect_state, students_config, students_env, students_root

c = get_config()  # noqa: F821 - provided by JupyterHub

HERE = pathlib.Path(__file__).resolve().parent
MODE = os.environ.get("DPEXPLORE_HUB_MODE", "apps")
if MODE not in ("apps", "lab"):
    raise ValueError(f"DPEXPLORE_HUB_MODE must be 'apps' or 'lab', got {MODE!r}")
STATE = pathlib.Path(os.environ.get("DPEXPLORE_HUB_DIR", ".")).resolve()
CULL_TIMEOUT = int(os.environ.get("DPEXPLORE_HUB_CULL_TIMEOUT", "3600"))
CULL_EVERY = int(os.environ.get("DPEXPLORE_HUB_CULL_EVERY", "300"))
ACTIVITY_EVERY = int(os.environ.get("DPEXPLORE_HUB_ACTIVITY_EVERY", "300"))

protect_state(STATE)  # before the hub creates its database and pid file
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = int(os.environ.get("DPEXPLORE_HUB_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(os.environ.get("DPEXPLORE_HUB_API_PORT", str(c.JupyterHub.port + 1)))
c.ConfigurableHTTPProxy.api_url = (
    f"http://127.0.0.1:{os.environ.get('DPEXPLORE_CHP_API_PORT', c.JupyterHub.port + 2)}")
chp = os.environ.get("DPEXPLORE_CHP") or str(HERE / "node" / "node_modules" / ".bin"
                                             / "configurable-http-proxy")
if not os.path.exists(chp):
    chp = shutil.which("configurable-http-proxy") or chp
c.ConfigurableHTTPProxy.command = [chp]
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.pid_file = str(STATE / "jupyterhub-proxy.pid")
c.JupyterHub.last_activity_interval = ACTIVITY_EVERY

if os.environ.get("DPEXPLORE_HUB_PASSWORD"):
    c.DummyAuthenticator.password = os.environ["DPEXPLORE_HUB_PASSWORD"]

# the students' Python: usable by their unprivileged accounts (make hub-setup builds
# deploy/singleuser-env, or /opt/dpexplore-hub/singleuser-env when the checkout is in a folder they
# cannot enter, when the hub's own Python is not usable, e.g. one under /root)
_ENV = students_env(HERE)
PYTHON = os.environ.get("DPEXPLORE_HUB_PYTHON") or (
    str(_ENV / "bin" / "python") if _ENV is not None else sys.executable)
c.Spawner.cmd = [PYTHON, "-m", "jupyterhub.singleuser"]
c.Spawner.args = []
c.Spawner.mem_limit = "1G"  # enforced by container spawners (Kubernetes), advisory here
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.environment = {
    "JUPYTERHUB_ACTIVITY_INTERVAL": str(ACTIVITY_EVERY),
    # a terminal's `python`, `pip`, `jupyter` are the students' (not the hub's, which they may not run)
    "PATH": os.pathsep.join([str(pathlib.Path(PYTHON).parent), os.environ.get("PATH", os.defpath)]),
}

if MODE == "apps":
    c.JupyterHub.authenticator_class = "dummy"
    c.Authenticator.allow_all = True  # anyone who can log in gets the apps, nothing more
    c.JupyterHub.spawner_class = "dpexplore.hub.AppsOnlySpawner"
    c.Spawner.disable_user_config = True  # no ~/.jupyter config (it could re-enable extensions)
    c.AppsOnlySpawner.system_user = os.environ.get("DPEXPLORE_HUB_APPS_USER", "dpexplore-apps")
    c.Spawner.notebook_dir = str(students_root(PYTHON))
    c.Spawner.default_url = "/voila/render/index.ipynb"
    # voila + dpexplore.voila + dpexplore.voila.apps_only, everything else off, kernel culling
    c.Spawner.environment["JUPYTER_CONFIG_PATH"] = str(students_config(HERE, "singleuser", PYTHON))
else:
    c.JupyterHub.authenticator_class = "dpexplore.hub.LocalDummyAuthenticator"
    c.Authenticator.allow_all = False
    c.Authenticator.allowed_users = {u.strip() for u in
                                     os.environ.get("DPEXPLORE_HUB_USERS", "").split(",") if u.strip()}
    c.LocalAuthenticator.create_system_users = True
    c.LocalAuthenticator.add_user_cmd = ["useradd", "--create-home", "--user-group",
                                         "--shell", "/bin/bash", "-K", "HOME_MODE=0700"]
    c.JupyterHub.spawner_class = "dpexplore.hub.StudentAccountSpawner"
    c.StudentAccountSpawner.apps_source = str(dpexplore.cli.default_root())
    c.Spawner.notebook_dir = "~"
    c.Spawner.default_url = "/lab"
    # JupyterLab + voila + dpexplore.voila, kernel culling
    c.Spawner.environment["JUPYTER_CONFIG_PATH"] = str(students_config(HERE, "singleuser-lab", PYTHON))

c.JupyterHub.load_roles = [{
    "name": "idle-culler",
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    "services": ["idle-culler"],
}]
c.JupyterHub.services = [{
    "name": "idle-culler",
    "command": [sys.executable, "-m", "jupyterhub_idle_culler",
                f"--timeout={CULL_TIMEOUT}", f"--cull-every={CULL_EVERY}"],
}]
