"""Browser tests: ``dpexplore serve`` in a subprocess, driven by Playwright on Debian's Chromium.

Fixtures
--------
``served``      (session) the running server: ``served.url("demo.ipynb")``; always killed at teardown.
                ``Server(port, root, log_path, extra_args)`` starts another one (e.g. with
                ``extra_args=["--cull-idle-timeout", "4"]``); ``Server.kernels()`` lists its kernel pids.
``browser``     (session) headless /usr/bin/chromium (Playwright never downloads a browser here).
``page``        a fresh browser context + page; console errors are collected in ``page.errors``.
``open_app``    ``open_app("demo.ipynb") -> Dashboard``: opens a dashboard and waits for every plot.

:class:`Dashboard` (reusable for every dashboard)
-------------------------------------------------
``plots()``                   traces of every plot, read from the page (``.js-plotly-plot`` ``.data``)
``trace(i, j)``               ``{"x": [...], "y": [...]}`` of trace j of plot i
``set_slider(label, value)``  types ``value`` into the slider's editable readout, presses Enter and
                              waits until every plot was redrawn (``expect_change=False``: it waits
                              for the message instead, for bad values)
``press_slider(label, key, n)`` focuses the slider handle and presses ``key`` n times (keyboard)
``message()``                 the visible inline message text ('' when hidden)
``assert_no_traceback()``     no Python traceback text anywhere on the page

Sliders are found by their description label (e.g. ``"ε"``, ``"μ"``, ``"k"``; the unit, if any,
is part of it: ``"σ [noise]"``); ``label`` may also be an index among the page's sliders.
"""

from __future__ import annotations

import collections
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
#: how long a page may take to show all its plots in a test (the goal is 3 s; CI machines are slow)
PAGE_TIMEOUT_MS = 60_000
STEP_TIMEOUT_MS = 20_000

from pagejs import ALL_PLOTS_HAVE_TRACES, CHROMIUM, CHROMIUM_ARGS  # noqa: E402  (shared with benchmarks/, tools/)


#: failed test phases so far in this session (SharedPage reloads its page after one)
FAILURES = [0]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if outcome.get_result().failed:
        FAILURES[0] += 1


def pytest_collection_modifyitems(items):
    here = pathlib.Path(__file__).resolve().parent
    for item in items:
        if here in pathlib.Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.browser)


def wait_until(pred, timeout: float, every: float = 0.25) -> bool:
    """Whether ``pred()`` became true within ``timeout`` seconds (polled every ``every``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(every)
    return pred()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A running ``dpexplore serve`` (own process group)."""

    def __init__(
        self,
        port: int,
        root: pathlib.Path | None = None,
        log_path: pathlib.Path | None = None,
        extra_args: list[str] | None = None,
        env: dict | None = None,
    ):
        self.port = port
        self.base = f"http://127.0.0.1:{port}/"
        cmd = [sys.executable, "-m", "dpexplore.cli", "serve", "--no-browser", "--port", str(port)]
        if root is not None:
            cmd += ["--root", str(root)]
        cmd += list(extra_args or [])  # e.g. ["--cull-idle-timeout", "4", "--pool-size", "1"]
        self.log_path = log_path
        self._log = open(log_path, "w") if log_path else subprocess.DEVNULL
        # the dashboard tests read the traces of plots in closed tabs (Dashboard.plots): their
        # kernels send every change at once, as in a notebook; a served page's kernel sends a
        # hidden tab's plot when the tab is opened (test_offstage_browser.py: env "1")
        env = {"DPEXPLORE_DEFER_HIDDEN": "0", **(env or {})}
        self.proc = subprocess.Popen(
            cmd,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=str(REPO),
            env={**os.environ, **env},
        )

    def url(self, notebook: str = "index.ipynb") -> str:
        return f"{self.base}voila/render/{notebook}"

    def wait_ready(self, timeout: float = 90.0, pools: int = 0) -> None:
        """Wait until the server answers and (if ``pools``) that many kernel pools are filled."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"dpexplore serve exited with {self.proc.returncode}: {self.log()}")
            try:
                with urllib.request.urlopen(self.base + "dpexplore/static/plotly.min.js", timeout=5) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.3)
        else:
            raise RuntimeError(f"dpexplore serve did not answer within {timeout} s: {self.log()}")
        while pools and time.monotonic() < deadline and self.log().count("is filled with") < pools:
            time.sleep(0.3)

    def kernels(self) -> list[int]:
        """Pids of the server's kernel processes (``ipykernel_launcher`` descendants): the kernel
        count without ``/api/kernels``, which is not served."""
        import psutil

        try:
            kids = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []
        out = []
        for k in kids:
            try:
                if "ipykernel_launcher" in " ".join(k.cmdline()):
                    out.append(k.pid)
            except psutil.Error:
                pass
        return out

    def log(self) -> str:
        if self.log_path and self.log_path.exists():
            return self.log_path.read_text(errors="replace")
        return ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)  # Voila shuts its kernels down on SIGTERM
                self.proc.wait(timeout=15)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(timeout=5)
        if self._log is not subprocess.DEVNULL:
            self._log.close()


def _n_notebooks() -> int:
    return len(list((REPO / "notebooks").glob("*.ipynb")))


@pytest.fixture(scope="session")
def served(tmp_path_factory):
    log_path = tmp_path_factory.mktemp("serve") / "serve.log"
    server = Server(free_port(), log_path=log_path)
    try:
        server.wait_ready(pools=_n_notebooks())
        yield server
    finally:
        server.stop()


def launch_chromium(playwright, args=CHROMIUM_ARGS):
    """Debian's Chromium with the project's flags (or *args*); skip (or fail under CI) when it is
    missing."""
    if not os.path.exists(CHROMIUM):
        msg = f"{CHROMIUM} is missing: install Debian's chromium (make chromium)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return playwright.chromium.launch(executable_path=CHROMIUM, args=list(args))


@pytest.fixture(scope="session")
def playwright_session():
    """The suite's one Playwright (its sync API runs an event loop in the main thread while it
    lives, so a second ``sync_playwright()`` would be refused): every browser comes from it."""
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="session")
def browser(playwright_session):
    b = launch_chromium(playwright_session)
    try:
        yield b
    finally:
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1200, "height": 1000})
    pg = ctx.new_page()
    pg.errors = []
    pg.on("pageerror", lambda exc: pg.errors.append(str(exc)))
    try:
        yield pg
    finally:
        ctx.close()


#: what a page that did not show its plots looked like (for the failure message)
PAGE_STATE = """() => ({
  readyState: document.readyState, plotly: typeof window.Plotly,
  widgets: document.querySelectorAll('.jupyter-widgets').length,
  outputs: document.querySelectorAll('.jp-OutputArea-output').length,
  plots: [...document.querySelectorAll('.dpexplore-plot')].map(d => ({
    revision: d.dataset.revision, error: d.dataset.error || null,
    drawn: d.classList.contains('js-plotly-plot'), traces: d.data ? d.data.length : null})),
  text: document.body ? document.body.innerText.slice(0, 300) : null,
})"""


REVISIONS_JS = """() => [...document.querySelectorAll('.dpexplore-plot')].map(d =>
    d.offsetParent === null ? 1e9 + Number(d.dataset.changes || 0) : Number(d.dataset.revision))"""


class Dashboard:
    """A dashboard page opened in the browser, with the helpers every dashboard test needs.

    If the page does not show all its plots within ``PAGE_TIMEOUT_MS``, the test fails with what
    the page looked like (widgets, plot divs and their errors), its last console lines and, given
    ``server``, the end of the server's log: the evidence for a load that hangs."""

    def __init__(self, page, url: str, server: "Server | None" = None):
        self.page = page
        self.url = url
        self.server = server
        self.console: collections.deque = collections.deque(maxlen=30)
        page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"[:300]))
        t0 = time.perf_counter()
        try:
            page.goto(url)
            page.wait_for_function(ALL_PLOTS_HAVE_TRACES, timeout=PAGE_TIMEOUT_MS)
        except Exception as exc:  # noqa: BLE001 - Playwright's TimeoutError/Error: add the evidence
            raise AssertionError(
                self.diagnosis(
                    f"{url}: no complete plots after {time.perf_counter() - t0:.1f} s ({type(exc).__name__})"
                )
            ) from exc
        self.load_seconds = time.perf_counter() - t0

    def diagnosis(self, headline: str) -> str:
        """``headline`` + the page state, console tail and server log tail (best effort)."""
        parts = [headline]
        try:
            parts.append(f"page: {self.page.evaluate(PAGE_STATE)}")
        except Exception as exc:  # noqa: BLE001
            parts.append(f"page state unavailable: {exc}")
        parts.append("console:\n  " + "\n  ".join(self.console))
        if self.server is not None:
            parts.append("server log (end):\n" + self.server.log()[-2500:])
        return "\n".join(parts)

    # -- reading ----------------------------------------------------------------------------
    def plots(self) -> list[list[dict]]:
        """Traces (x, y, name, type) of every plot on the page, in page order: as drawn, or for a
        plot in a closed tab (which redraws when shown) the traces it will draw."""
        return self.page.evaluate("""() => [...document.querySelectorAll('.dpexplore-plot')].map(
            d => ((d.offsetParent === null && d._dpexploreLatest) ? d._dpexploreLatest : d.data)
                 .map(t => ({name: t.name ?? null, type: t.type ?? null,
                                   x: t.x ? Array.from(t.x) : null, y: t.y ? Array.from(t.y) : null})))""")

    def trace(self, plot: int = 0, trace: int = 0) -> dict:
        return self.plots()[plot][trace]

    def revisions(self) -> list[int]:
        """Per plot: its draw count if it is on screen; for a plot in a closed tab (drawn only
        when shown) 1e9 + the count of changes it received."""
        return self.page.evaluate(REVISIONS_JS)

    def message(self) -> str:
        """Text of the visible inline message(s), '' when none is shown."""
        return self.page.evaluate("""() => [...document.querySelectorAll('.dpexplore-message')]
            .filter(e => e.offsetParent !== null).map(e => e.innerText.trim()).join('\\n')""")

    def body_text(self) -> str:
        """The page's whole text, the closed Theory and Python sections included (textContent)."""
        return self.page.evaluate("() => document.body.textContent")

    def assert_no_traceback(self) -> None:
        text = self.body_text()
        for needle in ("Traceback (most recent call last)", "Traceback", 'File "', "Error in callback"):
            assert needle not in text, f"traceback text on the page: {needle!r}"

    # -- acting -----------------------------------------------------------------------------
    def reveal(self, locator):
        """Open the tab(s) holding ``locator``'s element (a lab keeps each section's controls and
        plots in its own tab; a control in a closed tab cannot be clicked). Returns ``locator``."""
        marks = locator.first.evaluate("""(el) => {
            const out = [];
            for (let n = el; n && n !== document.body; n = n.parentElement) {
              const p = n.parentElement;
              if (p && p.classList.contains('widget-tab-contents')) {
                const idx = [...p.children].indexOf(n);
                const tabw = p.closest('.widget-tab');
                const bar = tabw && [...tabw.querySelectorAll('.lm-TabBar, .p-TabBar')]
                  .find(b => b.closest('.widget-tab') === tabw);
                const tab = bar && bar.querySelectorAll('.lm-TabBar-tab, .p-TabBar-tab')[idx];
                if (tab && !tab.classList.contains('lm-mod-current') && !tab.classList.contains('p-mod-current')) {
                  const mark = 'r' + Math.random().toString(36).slice(2);
                  tab.dataset.reveal = mark;
                  out.unshift(mark);   // outer tabs first
                }
              }
            }
            return out;
        }""")
        for mark in marks:
            self.page.locator(f'[data-reveal="{mark}"]').click()
        if marks:
            locator.first.wait_for(state="visible", timeout=STEP_TIMEOUT_MS)
            self.settle()
        return locator

    def slider(self, label):
        """The ``.widget-slider`` locator whose description is ``label`` (or the label-th slider),
        its tab opened (:meth:`reveal`)."""
        return self.reveal(self._slider(label))

    def _slider(self, label):
        sliders = self.page.locator(".widget-slider")
        if isinstance(label, int):
            return sliders.nth(label)
        loc = sliders.filter(has=self.page.locator(".widget-label", has_text=label))
        assert loc.count() >= 1, f"no slider labelled {label!r}"
        return loc.first

    def _wait_redrawn(self, before: list[int]) -> None:
        self.page.wait_for_function(
            """(before) => { const r = ("""
            + REVISIONS_JS
            + """)();
                 return r.length === before.length && r.some((v, i) => v > before[i]); }""",
            arg=before,
            timeout=STEP_TIMEOUT_MS,
        )
        self.settle()

    def wait_shown_current(self, timeout_ms: int = STEP_TIMEOUT_MS) -> None:
        """Wait until every plot on screen shows the traces it last received: a plot that changed
        while in a closed tab (or a hidden view) redraws when shown, a frame after it appears."""
        self.page.wait_for_function(
            """() => [...document.querySelectorAll('.js-plotly-plot')]
                 .filter(d => d.offsetParent !== null && d._dpexploreLatest)
                 .every(d => JSON.stringify((d.data || []).map(t => [t.x, t.y]))
                             === JSON.stringify(d._dpexploreLatest.map(t => [t.x, t.y])))""",
            timeout=timeout_ms,
        )

    def settle(self, interval_ms: int = 100, rounds: int = 20) -> None:
        """Wait until no further redraw is pending: the plot revisions stay the same for one
        ``interval_ms`` (checked at most ``rounds`` times)."""
        last = self.revisions()
        for _ in range(rounds):
            self.page.wait_for_timeout(interval_ms)
            now = self.revisions()
            if now == last:
                break
            last = now

    def set_slider(self, label, value, *, expect_change: bool = True) -> None:
        """Type ``value`` into the slider's readout (editable in ipywidgets 8) and press Enter.

        Waits until a plot is redrawn, or (``expect_change=False``) until a message is shown.
        """
        readout = self.slider(label).locator(".widget-readout")
        before = self.revisions()
        readout.click()
        self.page.keyboard.press("Control+A")
        self.page.keyboard.type(str(value))
        self.page.keyboard.press("Enter")
        if expect_change:
            self._wait_redrawn(before)
        else:
            self.page.wait_for_function(
                """() => [...document.querySelectorAll('.dpexplore-message')]
                          .some(e => e.offsetParent !== null && e.innerText.trim())""",
                timeout=STEP_TIMEOUT_MS,
            )

    def press_slider(self, label, key: str = "ArrowRight", n: int = 1, *, wait: bool = True) -> None:
        """Focus the slider's handle and press ``key`` ``n`` times (noUiSlider keyboard steps)."""
        handle = self.slider(label).locator(".noUi-handle")
        before = self.revisions()
        handle.focus()
        for _ in range(n):
            handle.press(key)
        if wait:
            self._wait_redrawn(before)

    def readout(self, label) -> str:
        return self.slider(label).locator(".widget-readout").inner_text().strip()


class SharedPage:
    """One page for a module's tests (a page load costs seconds on a busy machine), opened again
    after any test failed: a rerun (conftest.py at the root retries browser tests) then starts from
    the page's initial state, not from wherever the failed attempt left the sliders.

    ``shared.get()`` → the :class:`Dashboard`; ``on_open(app)`` runs after every (re)open."""

    def __init__(self, browser, server: Server, notebook: str, viewport: dict | None = None, on_open=None):
        self.server, self.notebook, self.on_open = server, notebook, on_open
        self.ctx = browser.new_context(viewport=viewport or {"width": 1200, "height": 1000})
        self.page = self.ctx.new_page()
        self.page.errors = []
        self.page.on("pageerror", lambda exc: self.page.errors.append(str(exc)))
        self.app = None
        self._failures = None

    def get(self) -> "Dashboard":
        if self.app is None or self._failures != FAILURES[0]:
            self.page.errors.clear()
            self.app = Dashboard(self.page, self.server.url(self.notebook), self.server)
            if self.on_open is not None:
                self.on_open(self.app)
            self._failures = FAILURES[0]
        return self.app

    def close(self) -> None:
        self.ctx.close()


@pytest.fixture
def open_app(page, served):
    """``open_app("demo.ipynb")`` → :class:`Dashboard` with all plots drawn."""

    def _open(notebook: str) -> Dashboard:
        return Dashboard(page, served.url(notebook), served)

    return _open
