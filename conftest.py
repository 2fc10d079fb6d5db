"""Suite-wide pytest configuration.

Browser tests drive a real Voilà server and Chromium; on a busy 2-core machine a page load can
exceed its timeout for reasons that have nothing to do with dpexplore. Each browser test is
therefore retried (twice at most, on a fresh page) before it counts as failed — a real bug fails
every attempt. Nothing else is retried.

Under ``CI`` (set by the CI runner) hypothesis runs derandomized.

mpmath's working precision is global, and test modules set it at import (``mp.mp.dps = 50``):
the last module collected would set it for every test. Each module's tests run at the precision
that module set (recorded when it was imported) instead.

The tests are laid out like the package: ``tests/accounting``, ``tests/mechanisms``,
``tests/teaching``, ``tests/apps``, ``tests/ui``, ``tests/voila`` and ``tests/hub`` test the layer
of that name; the files in ``tests/`` itself test the package as a whole (its import, docs, build,
lint, cards, bibliography); ``tests/browser`` drives real servers in Chromium. ``tests/`` is put on
``sys.path`` here, so every test imports the shared helpers ``aio`` and ``snippetkit`` by name.
"""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import settings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests"))

# dpexplore.hub subclasses JupyterHub's classes: without the hub extra (make hub-setup) there is
# nothing of it to import, so its doctest collection is skipped rather than an error
try:
    import jupyterhub  # noqa: F401
except ImportError:
    collect_ignore = ["dpexplore/hub"]

# CI runs the property tests with a fixed seed (reproducible: a red CI run can be replayed);
# developers get fresh random examples on every run.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """Record the mpmath precision a test module set at import (it imports here)."""
    yield
    if isinstance(collector, pytest.Module) and "mpmath" in sys.modules:
        obj = getattr(collector, "_obj", None)  # the imported module, if the import succeeded
        if obj is not None and "mp" in vars(obj):
            obj.__dict__.setdefault("_MP_DPS", sys.modules["mpmath"].mp.dps)


@pytest.fixture(autouse=True)
def _mpmath_precision(request):
    """Run each test at the mpmath precision its module set, whatever modules were imported after."""
    dps = getattr(request.module, "_MP_DPS", None) if request.module is not None else None
    if dps is None:
        yield
        return
    import mpmath

    saved = mpmath.mp.dps
    mpmath.mp.dps = dps
    try:
        yield
    finally:
        mpmath.mp.dps = saved


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    if not config.pluginmanager.hasplugin("rerunfailures"):
        return
    for item in items:
        if item.get_closest_marker("browser") is not None and item.get_closest_marker("flaky") is None:
            item.add_marker(pytest.mark.flaky(reruns=2, reruns_delay=3))


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter):
    """Name every rerun, with the first line of why, just above the short summary: a rerun is a
    bug report, and CI prints only the end of the output."""
    reruns = terminalreporter.stats.get("rerun", [])
    if not reruns:
        return
    terminalreporter.section(f"{len(reruns)} rerun(s): each is a cause to find")
    for rep in reruns:
        crash = getattr(rep.longrepr, "reprcrash", None)
        why = (crash.message if crash is not None else str(rep.longrepr)).strip()
        why = why.splitlines()[0][:200] if why else "?"
        terminalreporter.line(f"RERUN {rep.nodeid} ({rep.when}): {why}")
