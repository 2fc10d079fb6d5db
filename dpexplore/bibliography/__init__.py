"""The bibliography: every work dpexplore cites, and every place it cites one.

* :mod:`.references` — the works (:data:`~.references.REFERENCES`, :func:`~.references.get`) and
  their citations as the apps show them: linked HTML (:func:`~.references.cite`,
  :func:`~.references.autolink`) or plain text (:func:`~.references.cite_text`);
* :mod:`.citations` — the registry of every (work, locator) the project cites: what it supports
  there and how the locator was checked (:data:`~.citations.CITATIONS`);
* :mod:`.scanner` — for the tests and the docs: finds the citations in text and in the package's
  own source, resolves each to its registry entry (:func:`~.scanner.scan`), and writes the docs
  page, the bibliography and the table of every citation
  (``python -m dpexplore.bibliography > docs/references.md``).

The modules load on first use. They were ``dpexplore.<module>`` before; those names still work,
with a DeprecationWarning.
"""

from __future__ import annotations

from .._moved import lazy_submodules

__all__ = ["citations", "references", "scanner"]

__getattr__, __dir__ = lazy_submodules(__name__, __all__, globals())
