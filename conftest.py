"""Suite-wide pytest configuration.

Browser tests drive a real Voilà server and Chromium; on a busy 2-core machine a page load can
exceed its timeout for reasons that have nothing to do with dpexplore. Each browser test is
therefore retried (twice at most, on a fresh page) before it counts as failed — a real bug fails
every attempt. Nothing else is retried.

Under ``CI`` (set by the CI runner) hypothesis runs derandomized.
"""
from __future__ import annotations

import os

import pytest
from hypothesis import settings

# CI runs the property tests with a fixed seed (reproducible: a red CI run can be replayed);
# developers get fresh random examples on every run.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    if not config.pluginmanager.hasplugin("rerunfailures"):
        return
    for item in items:
        if item.get_closest_marker("browser") is not None and item.get_closest_marker("flaky") is None:
            item.add_marker(pytest.mark.flaky(reruns=2, reruns_delay=3))
