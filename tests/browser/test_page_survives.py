"""A page keeps working whatever happens to its kernel or its neighbours (issue 34), on both
entry points: ``dpexplore serve`` and the apps-only single-user server of a JupyterHub class
(``jupyter server`` with ``deploy/singleuser/jupyter_server_config.json``, run here without a hub:
no login; the hub's own login is tested in test_hub.py).

* an error in an app (a widget value the app refuses) killed the page on the apps-only server:
  with tracebacks off, jupyter_server raised ``AttributeError: 'ServerKernelManager' object has no
  attribute 'traceback_replacement_message'`` in the page's kernel connection and the page's
  later slider moves got no reply (attack 7);
* a 5 MB widget value: refused (the page does not send it and says so; a client that sends it
  anyway has its websocket closed by the server), the page keeps answering;
* a student who opens six apps one after another in one tab (the per-student cap is 5 pages) gets
  the sixth: each page left shuts its kernel down (Voilà's page-close call, attack 5);
* a page whose kernel is killed (an out-of-memory kill, say) says so; another page says nothing;
* a page whose kernel dies at its start reloads with a fresh one, and the dead kernel is not
  brought back by the restarter as a kernel no page holds.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid

import pytest

from conftest import REPO, Dashboard, Server, free_port, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: the apps opened one after another in one tab (each draws plots)
SIX_APPS = [
    "demo.ipynb",
    "group_privacy_lab.ipynb",
    "rdp_explorer.ipynb",
    "composition_explorer.ipynb",
    "profile_gdp.ipynb",
    "mean_estimation_lab.ipynb",
]
KERNEL_ID_JS = "() => JSON.parse(document.getElementById('jupyter-config-data').textContent).kernelId"
ALERTS_JS = "() => [...document.querySelectorAll('[role=alert]')].map(e => e.textContent.trim())"


class AppsOnlyServer(Server):
    """The apps-only single-user server as the hub starts it (its deployed configuration), without
    the hub: ``jupyter server`` with no login, on 127.0.0.1. Same helpers as :class:`Server`."""

    def __init__(self, port: int, root, log_path, workdir, max_kernels: int = 5, env: dict | None = None):
        self.port = port
        self.base = f"http://127.0.0.1:{port}/"
        self.log_path = log_path
        deployed = REPO / "deploy" / "singleuser" / "jupyter_server_config.json"
        cfg = json.loads(deployed.read_text())
        cfg.setdefault("DPExploreAppsOnly", {})["max_kernels"] = max_kernels
        (workdir / "config").mkdir(exist_ok=True)
        cfg_path = workdir / "jupyter_server_config.json"
        cfg_path.write_text(json.dumps(cfg))
        cmd = [
            sys.executable,
            "-m",
            "jupyter_server",
            f"--config={cfg_path}",
            "--no-browser",
            f"--port={port}",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.root_dir={root}",
            "--IdentityProvider.token=",
            "--allow-root",
        ]
        env = {
            **os.environ,
            "DPEXPLORE_DEFER_HIDDEN": "0",
            # no user configuration or runtime files of whoever runs the tests
            "JUPYTER_CONFIG_DIR": str(workdir / "config"),
            "JUPYTER_RUNTIME_DIR": str(workdir / "runtime"),
            **(env or {}),
        }
        self._log = open(log_path, "w")
        self.proc = subprocess.Popen(
            cmd, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True, cwd=str(REPO), env=env
        )


def _start(kind: str, tmp_path_factory, *extra: str, env: dict | None = None) -> Server:
    work = tmp_path_factory.mktemp(f"survives_{kind.replace('-', '_')}")
    root = work / "root"
    root.mkdir()
    for name in SIX_APPS:
        shutil.copy(REPO / "notebooks" / name, root / name)
    if kind == "serve":  # no pool: every page starts its kernel, as on the apps-only server
        server = Server(
            free_port(),
            root=root,
            log_path=work / "server.log",
            extra_args=[
                "--pool-size",
                "0",
                "--max-pages",
                "5",
                "--max-kernels",
                "5",
                "--cull-idle-timeout",
                "600",
                *extra,
            ],
            env=env,
        )
    else:
        server = AppsOnlyServer(free_port(), root, work / "server.log", work, max_kernels=5, env=env)
    server.wait_ready()
    return server


@pytest.fixture(scope="module", params=["serve", "apps-only"])
def server(request, tmp_path_factory):
    srv = _start(request.param, tmp_path_factory)
    srv.kind = request.param
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def page(page):
    """conftest's ``page``, navigated away at the end: its Voilà page closes as a person's would
    (the page-close call goes on ``beforeunload``, which closing the browser context skips)."""
    try:
        yield page
    finally:
        try:
            page.goto("about:blank")
        except Exception:  # noqa: BLE001 - a page that failed its test may be gone
            pass


def _slider_comm_send(page, content: dict) -> int:
    """Send ``{"method": "update", ...content}`` over the page's own kernel connection, from each
    FloatSlider model of the page (as a widget's change would go); returns how many."""
    return page.evaluate(
        """async (content) => {
        const wm = window.jupyterapp._widgetManager;
        const models = await Promise.all(Object.values(wm._models));
        const sliders = models.filter(m => m.get('_model_name') === 'FloatLogSliderModel'
                                           || m.get('_model_name') === 'FloatSliderModel');
        for (const m of sliders) {
          m.comm.send(Object.assign({method: 'update', buffer_paths: []}, content));
        }
        return sliders.length; }""",
        content,
    )


def _marker(app: Dashboard) -> float:
    return app.trace(0, 1)["x"][0]


def _follows(app: Dashboard) -> None:
    """A slider move is answered: demo's ε marker moves one log step (10^(1/50)) to the right."""
    before = _marker(app)
    app.press_slider("ε", "ArrowRight", 1)
    assert _marker(app) == pytest.approx(before * 10 ** (1 / 50), rel=1e-9)


def test_an_app_error_leaves_the_page_answering(server, page):
    """Attack 7: widget values the app refuses (the kernel answers with an ``error`` message) do
    not stop the page: its slider moves are still answered, no traceback or error text is on the
    page, and the traceback is in the server log."""
    app = Dashboard(page, server.url("demo.ipynb"), server)
    sent = _slider_comm_send(page, {"state": {"value": "not a number"}})
    assert sent >= 2
    # the kernel's errors reached the server (and were kept off the page)
    assert wait_until(lambda: "could not convert string to float" in server.log(), 20), server.log()[-3000:]
    _follows(app)
    _follows(app)
    app.assert_no_traceback()
    text = app.body_text()
    assert "ExecutionError" not in text and "not a number" not in text
    assert "has no attribute 'traceback_replacement_message'" not in server.log()


def test_a_5mb_widget_value_is_not_sent_and_the_page_says_so(server, page):
    """Attack 7: a 5 MB widget value from the page is over the server's bound on a message
    (1 MiB): the page does not send it and says so (role=alert), its connection stays open and
    its sliders keep answering."""
    app = Dashboard(page, server.url("demo.ipynb"), server)
    statuses = page.evaluate("""() => { const out = [];
        const kernel = window.jupyterapp._widgetManager.kernel;
        kernel.connectionStatusChanged.connect((_, s) => out.push(s));
        window.__dpexploreStatuses = out; return out.length; }""")
    assert statuses == 0
    assert _slider_comm_send(page, {"state": {"value": "x" * (5 * 2**20)}}) >= 2
    page.wait_for_selector("#dpexplore-message-refused", timeout=10_000)
    alerts = page.evaluate(ALERTS_JS)
    assert any("too large to send to the server" in a for a in alerts), alerts
    _follows(app)
    assert page.evaluate("() => window.__dpexploreStatuses") == []  # never disconnected
    app.assert_no_traceback()


def _legacy_msg(msg_type: str, content: dict) -> str:
    """A kernel message in the legacy (no subprotocol) JSON form, on the shell channel."""
    return json.dumps(
        {
            "header": {
                "msg_id": uuid.uuid4().hex,
                "msg_type": msg_type,
                "username": "",
                "session": "s",
                "date": "",
                "version": "5.3",
            },
            "parent_header": {},
            "metadata": {},
            "content": content,
            "channel": "shell",
            "buffers": [],
        }
    )


def test_a_client_sending_5mb_is_cut_off_and_the_page_answers(server, page):
    """A client that sends a 5 MB widget value anyway (not through the page) has its websocket
    closed by the server (tornado's bound on a message, code 1009): the kernel never parses it,
    and the page on the same kernel keeps answering."""
    import websocket

    app = Dashboard(page, server.url("demo.ipynb"), server)
    kernel_id = page.evaluate(KERNEL_ID_JS)
    ws = websocket.create_connection(
        f"ws://127.0.0.1:{server.port}/api/kernels/{kernel_id}/channels?session_id={uuid.uuid4()}",
        timeout=15,
        origin=server.base.rstrip("/"),
    )
    try:
        ws.send(_legacy_msg("comm_info_request", {"target_name": "jupyter.widget"}))
        comms = None
        while comms is None:
            m = json.loads(ws.recv())
            if m.get("msg_type") == "comm_info_reply":
                comms = list(m["content"]["comms"])
        big = _legacy_msg(
            "comm_msg", {"comm_id": comms[0], "data": {"method": "update", "state": {"value": "x" * (5 * 2**20)}}}
        )
        closed = False
        try:
            ws.send(big)
            ws.settimeout(10)
            while True:  # replies already under way, then the close
                if not ws.recv():  # the close frame
                    closed = True
                    break
        except (websocket.WebSocketConnectionClosedException, ConnectionError, OSError):
            closed = True
        assert closed, "the server kept reading a 5 MB message"
    finally:
        ws.close()
    _follows(app)
    assert "x" * 1000 not in server.log()  # the kernel never parsed it (nothing to log)
    app.assert_no_traceback()


def test_six_apps_one_after_another_in_one_tab(server, page):
    """Attack 5: with a cap of 5 pages per student, opening six apps one after another in one
    tab (navigating: Voilà's page-close call goes on ``beforeunload``) draws the sixth: each page
    left shut its kernel down at once (the culler would take 10 minutes)."""
    assert wait_until(lambda: len(server.kernels()) == 0, 30), (
        f"pages of earlier tests kept kernels {server.kernels()}:\n{server.log()[-3000:]}"
    )
    seen = []
    for name in SIX_APPS:
        app = Dashboard(page, server.url(name), server)  # page.goto: the last page unloads
        seen.append(page.evaluate(KERNEL_ID_JS))
        assert "server is full" not in app.body_text().lower()
    assert len(set(seen)) == 6
    assert wait_until(lambda: len(server.kernels()) == 1, 30), (
        f"{len(server.kernels())} kernels for one open page:\n{server.log()[-3000:]}"
    )
    assert " 500 " not in server.log() and "500 POST" not in server.log()


def _kernel_pid(server: Server, kernel_id: str) -> int:
    import psutil

    for pid in server.kernels():
        if kernel_id in " ".join(psutil.Process(pid).cmdline()):
            return pid
    raise AssertionError(f"no process for kernel {kernel_id}")


def test_a_killed_kernel_is_said_on_its_page_only(server, browser):
    """A page whose kernel is killed (the memory limit's OOM kill, say) says so in plain words,
    accessibly (role=alert); a page of another student on the same server says nothing."""
    contexts = [browser.new_context(viewport={"width": 1200, "height": 1000}) for _ in range(2)]
    try:
        victim, other = (c.new_page() for c in contexts)
        app = Dashboard(victim, server.url("demo.ipynb"), server)
        other_app = Dashboard(other, server.url("demo.ipynb"), server)
        os.kill(_kernel_pid(server, victim.evaluate(KERNEL_ID_JS)), signal.SIGKILL)
        victim.wait_for_selector("#dpexplore-kernel-stopped", timeout=30_000)
        alerts = victim.evaluate(ALERTS_JS)
        assert any("kernel stopped" in a and "Reload the page" in a for a in alerts), alerts
        _follows(other_app)
        assert other.evaluate(ALERTS_JS) == []
        app.assert_no_traceback()
    finally:
        for c in contexts:
            for p in c.pages:
                try:
                    p.goto("about:blank")  # the page-close call, as in ``page``
                except Exception:  # noqa: BLE001
                    pass
            c.close()


ONCE = """import os
if not os.path.exists({marker!r}):
    open({marker!r}, "w").close()
    os._exit(3)
"""


@pytest.mark.parametrize("kind", ["serve", "apps-only"])
def test_a_kernel_that_dies_at_its_start_leaves_no_kernel_behind(kind, tmp_path_factory, page):
    """A page whose kernel dies before it answers (its port taken by another kernel starting at
    the same moment, say) says so and reloads with a fresh kernel. The dead kernel was brought back
    by the kernel server's restarter, on new ports, as a kernel no page held: no page close reached
    it, and it held a place under the page cap until the culler came (10 minutes on the apps-only
    server; most likely the kernel CI found left on it after every page had closed). Here the
    first kernel exits at its start (an IPython startup file), the others run."""
    ipy = tmp_path_factory.mktemp("ipython")
    marker = ipy / "died-once"
    (ipy / "profile_default" / "startup").mkdir(parents=True)
    (ipy / "profile_default" / "startup" / "00-once.py").write_text(ONCE.format(marker=str(marker)))
    server = _start(kind, tmp_path_factory, env={"IPYTHONDIR": str(ipy)})
    try:
        app = Dashboard(page, server.url("demo.ipynb"), server)  # the page reloaded by itself
        assert marker.exists()
        assert "a page's notebook could not run (RuntimeError: Kernel died" in server.log()
        _follows(app)
        time.sleep(4)  # the restarter's turn (every 3 s)
        assert len(server.kernels()) == 1, f"{server.kernels()} for one page:\n{server.log()[-3000:]}"
        page.goto("about:blank")
        assert wait_until(lambda: len(server.kernels()) == 0, 20), (
            f"kernels left {server.kernels()}:\n{server.log()[-3000:]}"
        )
        app.assert_no_traceback()
        # kernels speak over Unix sockets in a private folder: no port to take, none to reach
        assert "running over TCP" not in server.log() and "over Unix sockets in" in server.log()
    finally:
        server.stop()
