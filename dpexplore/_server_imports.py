"""What a Jupyter server process of ours leaves out of its imports: an optional module that a
dependency would import only to check a format nobody uses, at a cost that dominates the start.

``rfc3987_syntax`` compiles a Lark grammar when it is imported (0.77 CPU-s on the project's
2-core machine, 45 % of a single-user server's imports: ``python -X importtime -c "import
jupyterhub.singleuser"``). ``jsonschema`` imports it, if it is installed, only to check the
``iri`` and ``iri-reference`` string formats (``jsonschema._format``, inside ``suppress(ImportError)``),
and it is installed with ``jupyter_events``' ``jsonschema[format-nongpl]``; no event schema of
jupyter_server, jupyter_events, JupyterHub or Voilà uses those formats. A class of ten logging in
together starts ten servers on two cores: each second of CPU a start saves is half a second of
every student's wait.

:func:`skip_slow_optional_imports` must run before ``jsonschema`` is first imported: ``dpexplore
serve`` calls it before importing Voilà, and the students' servers start through
:mod:`dpexplore.hub.singleuser`. It changes nothing in a process that already imported them.
"""

from __future__ import annotations

import sys

__all__ = ["SLOW_OPTIONAL_MODULES", "skip_slow_optional_imports"]

#: optional modules a server process does without (see the module docstring)
SLOW_OPTIONAL_MODULES = ("rfc3987_syntax",)


def skip_slow_optional_imports() -> list[str]:
    """Make ``import`` of each of :data:`SLOW_OPTIONAL_MODULES` raise ``ImportError`` in this
    process (a ``None`` entry in ``sys.modules``), so that the libraries that import them
    optionally go without; returns the names it blocked (none already imported is touched).

    >>> import sys
    >>> skip_slow_optional_imports() == [m for m in SLOW_OPTIONAL_MODULES if sys.modules.get(m) is None]
    True
    """
    blocked = []
    for name in SLOW_OPTIONAL_MODULES:
        if name not in sys.modules:
            sys.modules[name] = None  # type: ignore[assignment]  # the import system's "not there"
            blocked.append(name)
    return blocked
