"""JupyterHub configuration for a class using dpexplore (the file docs/hosting.md gives).

Everything is bound to 127.0.0.1 (put a TLS reverse proxy in front for a real class). Each
student gets a single-user Jupyter server (``SimpleLocalProcessSpawner``: a local process, no
system accounts needed) opening the dpexplore gallery as a Voilà page
(``/user/<name>/voila/render/index.ipynb``), with dpexplore's plotly.js HTTP route enabled
(the ``dpexplore.voila`` server extension). ``jupyterhub-idle-culler`` runs as a hub service and
stops servers idle longer than ``DPEXPLORE_HUB_CULL_TIMEOUT`` seconds (default 3600).

The authenticator here is JupyterHub's ``dummy`` (any name, optional shared password
``DPEXPLORE_HUB_PASSWORD``): replace it by your institution's (OAuthenticator, LTI, ...).
Environment knobs (all optional): DPEXPLORE_HUB_PORT (8000), DPEXPLORE_HUB_DIR (state: database,
cookie secret; default the current folder), DPEXPLORE_HUB_CULL_TIMEOUT, DPEXPLORE_HUB_CULL_EVERY,
DPEXPLORE_CHP (path of configurable-http-proxy; default ``deploy/node`` from ``make hub-setup``).
"""
import json
import os
import pathlib
import shutil
import sys

import dpexplore.cli

c = get_config()  # noqa: F821 - provided by JupyterHub

HERE = pathlib.Path(__file__).resolve().parent
STATE = pathlib.Path(os.environ.get("DPEXPLORE_HUB_DIR", ".")).resolve()
CULL_TIMEOUT = int(os.environ.get("DPEXPLORE_HUB_CULL_TIMEOUT", "3600"))
CULL_EVERY = int(os.environ.get("DPEXPLORE_HUB_CULL_EVERY", "300"))

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

c.JupyterHub.authenticator_class = "dummy"
if os.environ.get("DPEXPLORE_HUB_PASSWORD"):
    c.DummyAuthenticator.password = os.environ["DPEXPLORE_HUB_PASSWORD"]
c.Authenticator.allow_all = True

c.JupyterHub.spawner_class = "simple"  # jupyterhub.spawner.SimpleLocalProcessSpawner
c.SimpleLocalProcessSpawner.home_dir_template = str(STATE / "home" / "{username}")
c.Spawner.notebook_dir = str(dpexplore.cli.default_root())
c.Spawner.default_url = "/voila/render/index.ipynb"
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
# the single-user server's settings (voila + dpexplore.voila extensions, no tracebacks, kernel
# culling): deploy/singleuser/jupyter_server_config.json
c.Spawner.environment = {"JUPYTER_CONFIG_PATH": str(HERE / "singleuser")}
c.Spawner.args = []
if hasattr(os, "getuid") and os.getuid() == 0:  # containers / CI running as root
    c.Spawner.args.append("--allow-root")
c.Spawner.mem_limit = "1G"  # enforced by container spawners (Kubernetes), advisory here
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120

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
