"""JupyterHub configuration for a class using dpexplore (docs/hosting.md, "JupyterHub").

Every setting comes from environment variables, all listed (with their defaults) in
docs/hosting.md and in ``dpexplore.hub.settings.KNOBS``; ``dpexplore.hub.settings.configure``
turns them into this configuration:

* ``DPEXPLORE_HUB_MODE=apps`` (default): students get the gallery and the apps, nothing more
  (no code runs); ``lab``: JupyterLab, each student's own code in her own account;
* logins from the roster (``dpexplore hub-users``, or ``DPEXPLORE_HUB_USERS``), each student with
  her own password; or your institution's login (``DPEXPLORE_HUB_AUTH=lti13`` / ``oauth``,
  ``deploy/auth/``);
* each student's server on an origin of its own (``<name>.<host>`` of ``DPEXPLORE_HUB_URL``), in
  a system account of her own (``dpx-<name>``) and a control group with her memory and task
  limits;
* the hub's files in ``DPEXPLORE_HUB_DIR`` (default ``/var/lib/dpexplore-hub``), private.

Run it as root: ``sudo .venv/bin/jupyterhub -f deploy/jupyterhub_config.py``.
"""

import os
import pathlib

from dpexplore.hub.settings import configure

configure(get_config(), os.environ, pathlib.Path(__file__).resolve().parent)  # noqa: F821
