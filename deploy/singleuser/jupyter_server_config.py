# The single-user server's own XSRF cookie gets the hub's cookie options: SameSite=Lax, and Secure
# when the hub is served over https (dpexplore.hub.settings passes them in JUPYTERHUB_COOKIE_OPTIONS,
# which JupyterHub's own login cookie of this server reads too). Loaded with the .json beside it.
import json
import os

c.ServerApp.tornado_settings = {  # noqa: F821 - c is the configuration being loaded
    "xsrf_cookie_kwargs": json.loads(os.environ.get("JUPYTERHUB_COOKIE_OPTIONS") or '{"samesite": "Lax"}'),
}
