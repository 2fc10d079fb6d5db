"""A served page's kernel sends a plot in a closed tab when the tab is opened (dpexplore/ui/offstage.py,
issue 22): a slider move sends only the plot shown, and the plot of a tab opened later draws the
last setting's numbers, not the ones it had when it was hidden; moving back draws the last setting
there too (no plot stays stale); the closed "Reproduce in Python" text is sent when it is opened."""

from __future__ import annotations

import shutil
import time

import numpy as np
import pytest

from conftest import REPO, Dashboard, Server, free_port

from dpexplore.apps.rdp_explorer import RDPSpec, compute_rdp_explorer

pytestmark = pytest.mark.browser
APP = "rdp_explorer.ipynb"
DEFAULT = RDPSpec(eps=1.0, delta=1e-6, alpha_max=100.0)  # the notebook's setting


@pytest.fixture(scope="module")
def deferring(tmp_path_factory):
    """``dpexplore serve`` as shipped (hidden tabs deferred), serving rdp_explorer only."""
    root = tmp_path_factory.mktemp("offstage")
    shutil.copy(REPO / "notebooks" / APP, root / APP)
    server = Server(free_port(), root=root, log_path=root / "serve.log", env={"DPEXPLORE_DEFER_HIDDEN": "1"})
    try:
        server.wait_ready(pools=1)
        yield server
    finally:
        server.stop()


def _shows(app, plot: int, trace: int, want) -> bool:
    """Whether trace ``trace`` of plot ``plot`` holds ``want`` (≤ 0 is a gap on the log axis)."""
    got = np.array([np.nan if v is None else v for v in app.plots()[plot][trace]["y"]], dtype=float)
    want = np.asarray(want, dtype=float)
    ok = np.isfinite(want) & (want > 0)
    return got.shape == want.shape and np.allclose(got[ok], want[ok], rtol=1e-9)


def _drawn(app, plot: int, trace: int, want, timeout_s: float = 20.0) -> None:
    """Wait until the plot, on screen, is drawn with ``want``."""
    deadline = time.monotonic() + timeout_s
    while not (
        _shows(app, plot, trace, want)
        and app.page.evaluate("(i) => document.querySelectorAll('.js-plotly-plot')[i].offsetParent !== null", plot)
    ):
        assert time.monotonic() < deadline, f"plot {plot} never drew the last setting"
        app.page.wait_for_timeout(200)
    app.wait_shown_current()


def test_a_closed_tab_gets_the_last_setting_when_opened(browser, deferring):
    ctx = browser.new_context(viewport={"width": 1200, "height": 1000})
    try:
        app = Dashboard(ctx.new_page(), deferring.url(APP), deferring)
        first = compute_rdp_explorer(DEFAULT)
        assert _shows(app, 2, 0, first.objective_improved[0])  # the conversion tab, closed
        # typed values land on the ε slider's grid (40 steps per decade): 2.5 → 10^0.4
        moved = RDPSpec(eps=10**0.4, delta=DEFAULT.delta, alpha_max=DEFAULT.alpha_max)
        r = compute_rdp_explorer(moved)
        app.set_slider("ε", "2.5")
        _drawn(app, 0, 1, r.rdp_trivial)  # the plot shown is redrawn at once
        app.settle()
        # the closed tab's plot was not sent: the page still holds the first setting's numbers
        assert _shows(app, 2, 0, first.objective_improved[0])
        assert not _shows(app, 2, 0, r.objective_improved[0])
        tabs = app.page.locator(".dpexplore-main .lm-TabBar-tab")
        tabs.nth(2).click()
        _drawn(app, 2, 0, r.objective_improved[0])
        # a move while there: back on the first tab, its plot draws this last setting
        last = RDPSpec(eps=10**-0.3, delta=DEFAULT.delta, alpha_max=DEFAULT.alpha_max)
        app.set_slider("ε", "0.5")
        r_last = compute_rdp_explorer(last)
        _drawn(app, 2, 0, r_last.objective_improved[0])
        tabs.nth(0).click()
        _drawn(app, 0, 1, r_last.rdp_trivial)
        # the closed "Reproduce in Python" section still holds the first setting's snippet; opened,
        # it shows the last one
        first_line, last_line = "eps, delta, alpha_max = 1.0,", f"eps, delta, alpha_max = {10**-0.3:.13g},"
        assert first_line in app.body_text() and last_line not in app.body_text()
        app.page.get_by_text("Reproduce in Python").click()
        app.page.wait_for_function("(t) => document.body.textContent.includes(t)", arg=last_line, timeout=20000)
        assert first_line not in app.body_text()
        assert app.message() == ""
        app.assert_no_traceback()
    finally:
        ctx.close()
