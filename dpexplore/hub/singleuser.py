"""A student's single-user server: ``python -m dpexplore.hub.singleuser`` runs JupyterHub's
``jupyterhub.singleuser`` (the same server, options and configuration) without the optional
imports that cost its start the most (:mod:`dpexplore._server_imports`: 0.77 of its 1.7 CPU-s of
imports). It is the hub's ``Spawner.cmd`` (:func:`dpexplore.hub.settings.configure`).
"""

from __future__ import annotations

import sys

from .._server_imports import skip_slow_optional_imports


def main():
    """Start ``jupyterhub.singleuser`` (its ``main``) with the slow optional imports left out."""
    skip_slow_optional_imports()
    from jupyterhub.singleuser import main as run

    return run()


if __name__ == "__main__":  # pragma: no cover - the spawner's command
    sys.exit(main())
