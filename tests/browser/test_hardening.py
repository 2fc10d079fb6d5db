"""Hosting hardening of ``dpexplore serve`` (issue 5): a visitor can only drive widgets.

One server on a temporary ``--root`` holding a copy of ``demo.ipynb``, a notebook that raises
(``failing.ipynb``, with a secret in its source) and a ``.py`` file, with short culling
(``--cull-idle-timeout 4 --cull-interval 1``). No browser: the tests speak HTTP and the kernel
websocket the way Voilà's page does (``/api/kernels/<kernelId from the page>/channels``).
"""

from __future__ import annotations

import json
import re
import shutil
import time
import urllib.error
import urllib.request
import uuid

import pytest

from conftest import REPO, Server, free_port
from dpexplore.voila.wire import decode_frame as kernel_message
from dpexplore.voila.hardening import LOG_CHARS

SECRET = "SECRET_TOKEN_8c1f"
CULL_IDLE = 4


@pytest.fixture(scope="module")
def hserver(tmp_path_factory):
    import nbformat

    root = tmp_path_factory.mktemp("hroot")
    shutil.copy(REPO / "notebooks" / "demo.ipynb", root / "demo.ipynb")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"{SECRET} = 1\nraise RuntimeError('boom {SECRET}')")]
    nbformat.write(nb, str(root / "failing.ipynb"))
    (root / "helper.py").write_text(f"{SECRET} = 1\n")
    log = tmp_path_factory.mktemp("hlog") / "serve.log"
    server = Server(
        free_port(), root=root, log_path=log, extra_args=["--cull-idle-timeout", str(CULL_IDLE), "--cull-interval", "1"]
    )
    try:
        server.wait_ready(pools=2)  # demo.ipynb and failing.ipynb: pools fill one at a time
        server.root = root
        yield server
    finally:
        server.stop()


def _get(url: str) -> tuple[int, str]:
    req = urllib.request.Request(url, headers={"Accept": "text/html,application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


def _text(html: str) -> str:
    """Visible text of a page (scripts and styles dropped)."""
    html = re.sub(r"(?s)<script.*?</script>|<style.*?</style>", " ", html)
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def _msg(msg_type: str, content: dict, channel: str = "shell") -> str:
    return json.dumps(
        {
            "header": {
                "msg_id": uuid.uuid4().hex,
                "msg_type": msg_type,
                "username": "",
                "session": uuid.uuid4().hex,
                "date": "",
                "version": "5.3",
            },
            "parent_header": {},
            "metadata": {},
            "content": content,
            "channel": channel,
            "buffers": [],
        }
    )


class KernelSocket:
    """The page's kernel websocket, opened as Voilà's front end does."""

    def __init__(self, server: Server, notebook: str = "demo.ipynb"):
        import websocket

        status, html = _get(server.url(notebook))
        assert status == 200
        m = re.search(r'"kernelId":\s*"([0-9a-f-]{36})"', html)
        assert m, "no kernelId in the rendered page"
        self.kernel_id = m.group(1)
        url = f"ws://127.0.0.1:{server.port}/api/kernels/{self.kernel_id}/channels?session_id={uuid.uuid4()}"
        self.ws = websocket.create_connection(url, timeout=15)

    def send(self, msg_type: str, content: dict) -> str:
        raw = _msg(msg_type, content)
        self.ws.send(raw)
        return json.loads(raw)["header"]["msg_id"]

    def replies(self, until_type: str, timeout: float = 15.0) -> list[dict]:
        """Messages received until one of type ``until_type`` (or the timeout)."""
        import websocket

        got = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                m = kernel_message(self.ws.recv())
            except websocket.WebSocketTimeoutException:
                break
            got.append(m)
            if m.get("msg_type") == until_type:
                break
        return got

    def alive(self) -> bool:
        self.send("kernel_info_request", {})
        return any(m.get("msg_type") == "kernel_info_reply" for m in self.replies("kernel_info_reply"))

    def close(self) -> None:
        self.ws.close()


# -- 1. code execution from the front end is refused --------------------------------------------
@pytest.mark.parametrize("msg_type", ["execute_request", "inspect_request", "complete_request", "history_request"])
def test_websocket_refuses_code_execution(hserver, tmp_path, msg_type):
    marker = tmp_path / f"pwned_{msg_type}"
    code = f"open({str(marker)!r}, 'w').write('x')"
    content = {
        "code": code,
        "silent": False,
        "store_history": True,
        "user_expressions": {},
        "allow_stdin": False,
        "stop_on_error": True,
        "cursor_pos": len(code),
        "detail_level": 0,
        "hist_access_type": "tail",
        "n": 10,
        "output": True,
        "raw": True,
    }
    ks = KernelSocket(hserver)
    try:
        ks.send(msg_type, content)
        # control: the same socket does reach the kernel (kernel_info is allowed and answered)
        assert ks.alive(), "the kernel websocket does not answer kernel_info_request"
        time.sleep(1.0)
        seen = ks.replies("never", timeout=1.0)
    finally:
        ks.close()
    assert not marker.exists(), f"{msg_type} from the browser ran code in the kernel"
    reply = msg_type.replace("_request", "_reply")
    assert not any(m.get("msg_type") in (reply, "execute_input", "stream") for m in seen), seen


def test_websocket_allows_widget_comm_messages(hserver):
    ks = KernelSocket(hserver)
    try:
        ks.send("comm_info_request", {"target_name": "jupyter.widget"})
        got = ks.replies("comm_info_reply")
    finally:
        ks.close()
    reply = [m for m in got if m.get("msg_type") == "comm_info_reply"]
    assert reply and reply[0]["content"]["status"] == "ok"
    assert len(reply[0]["content"]["comms"]) > 5  # the dashboard's widget models


# -- 2. no listing, no sources -------------------------------------------------------------------
@pytest.mark.parametrize(
    "path",
    [
        "api/kernels",
        "api/contents",
        "api/contents/demo.ipynb",
        "api/sessions",
        "api/kernelspecs",
        "api/terminals",
        "api/status",
        "voila/api/contents",
        "voila/api/contents/demo.ipynb",
        "voila/files/demo.ipynb",
        "voila/files/failing.ipynb",
        "voila/files/helper.py",
        "files/demo.ipynb",
        "files/helper.py",
        "demo.ipynb",
        "helper.py",
        "notebooks/demo.ipynb",
        "voila/render/helper.py",
        "voila/files/../helper.py",
        "tree",
        "lab",
        "edit/helper.py",
        "nbconvert/html/demo.ipynb",
        "voila/render/nope.ipynb",
    ],
)
def test_sources_and_apis_not_served(hserver, path):
    status, body = _get(hserver.base + path)
    assert status in (403, 404), (path, status, body[:300])
    assert SECRET not in body and "nbformat" not in body
    assert "Traceback" not in body


def test_tree_redirects_to_gallery_not_listing(hserver):
    status, body = _get(hserver.base + "voila/tree")
    # the gallery notebook does not exist in this root: a 404, never a file listing
    assert status in (403, 404) or "helper.py" not in body
    assert "helper.py" not in body and "failing.ipynb" not in body


def test_rendered_page_has_no_sources(hserver):
    status, html = _get(hserver.url("demo.ipynb"))
    assert status == 200
    demo = json.loads((REPO / "notebooks" / "demo.ipynb").read_text())
    for cell in demo["cells"]:
        src = "".join(cell["source"]).strip()
        if cell["cell_type"] == "code" and len(src) > 20:
            assert src.splitlines()[0] not in html, "notebook source on the page"


def test_error_page_shows_no_traceback(hserver):
    status, html = _get(hserver.url("failing.ipynb"))
    text = _text(html)
    for needle in ("Traceback", "RuntimeError", "boom", SECRET, 'File "', "site-packages"):
        assert needle not in text, f"{needle!r} on the error page"
    assert status == 200 and "error" in text.lower()  # a generic message, not a blank page


def test_missing_page_shows_no_traceback(hserver):
    status, html = _get(hserver.url("does_not_exist.ipynb"))
    assert status == 404
    for needle in ("Traceback", 'File "', "site-packages", str(hserver.root)):
        assert needle not in html


# -- 3. kernels of closed pages are culled -------------------------------------------------------
def _wait_kernels(server: Server, pred, timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    while True:
        ks = server.kernels()
        if pred(len(ks)) or time.monotonic() > deadline:
            return ks
        time.sleep(0.5)


def _running(server: Server, kernel_ids) -> set[str]:
    """Which of ``kernel_ids`` have a kernel process of the server running on their connection
    file (the test's own kernels, however many others come and go: a pool refilling, a clone's
    reference kernel retired, other tests' pages being culled)."""
    import psutil

    out = set()
    for pid in server.kernels():
        try:
            cmd = " ".join(psutil.Process(pid).cmdline())
        except psutil.Error:
            continue
        out.update(k for k in kernel_ids if f"kernel-{k}.json" in cmd)
    return out


def _wait_running(server: Server, kernel_ids, pred, timeout: float) -> set[str]:
    deadline = time.monotonic() + timeout
    while True:
        up = _running(server, kernel_ids)
        if pred(up) or time.monotonic() > deadline:
            return up
        time.sleep(0.5)


def test_closed_sessions_are_culled_open_ones_kept(hserver):
    """Five pages closed and one kept open: the five kernels are culled after the idle timeout,
    the open page's is not; closing it, its kernel goes too. The test follows its own kernels by
    id: it counted kernels once, and a clone's reference kernel retired meanwhile (the lean pool
    keeps none at rest) made the count one short of the one it started from."""
    kept = KernelSocket(hserver)  # stays open through the culling: never culled
    sessions = []
    try:
        for _ in range(5):
            ks = KernelSocket(hserver)
            assert ks.alive()
            sessions.append(ks)
        closed = {ks.kernel_id for ks in sessions}
        assert len(closed | {kept.kernel_id}) == 6  # six pages, six kernels
        assert _running(hserver, closed | {kept.kernel_id}) == closed | {kept.kernel_id}
        for ks in sessions:
            ks.close()
        t0 = time.monotonic()
        left = _wait_running(hserver, closed, lambda up: not up, 30 + 3 * CULL_IDLE)
        took = time.monotonic() - t0
        assert not left, f"{len(left)} closed pages' kernels still run"
        assert took >= CULL_IDLE - 1  # culled by the idle timeout
        assert _running(hserver, {kept.kernel_id}) and kept.alive(), "the open page's kernel was culled"
    finally:
        kept.close()
    gone = _wait_running(hserver, {kept.kernel_id}, lambda up: not up, 30 + 3 * CULL_IDLE)
    assert not gone, "the page closed last kept its kernel"


def test_a_page_gets_a_whole_idle_timeout_to_connect_its_kernel(hserver):
    """A pooled kernel that idled longer than cull_idle_timeout is handed to a page, and the page
    connects its websocket 2.5 s later (Voilà's JavaScript loads first; a busy machine takes
    longer): the kernel must still be there. Before dpexplore reset the hand-out's idle clock
    (``dpexplore.voila._protect_handed_out_kernels``), the next cull check (every 1 s here) shut
    it down and the page never showed its widgets."""
    import websocket

    _wait_kernels(hserver, lambda n: n <= 2, 40)  # the pool refilled after other tests
    time.sleep(CULL_IDLE + 2)  # ... and its kernel idled past the timeout
    status, html = _get(hserver.url("demo.ipynb"))  # the page takes the pooled kernel
    assert status == 200
    kernel_id = re.search(r'"kernelId":\s*"([0-9a-f-]{36})"', html).group(1)
    time.sleep(2.5)  # > 2 cull checks, < CULL_IDLE
    url = f"ws://127.0.0.1:{hserver.port}/api/kernels/{kernel_id}/channels?session_id={uuid.uuid4()}"
    ws = websocket.create_connection(url, timeout=15)
    try:
        raw = _msg("kernel_info_request", {})
        ws.send(raw)
        deadline = time.monotonic() + 15
        replies = []
        while time.monotonic() < deadline and "kernel_info_reply" not in replies:
            replies.append(kernel_message(ws.recv()).get("msg_type"))
        assert "kernel_info_reply" in replies, replies
    finally:
        ws.close()


# -- 4. issue 11 (5): no tracebacks to the page, 404 not 500, nothing from outside the server ----
def test_hostile_comm_messages_get_no_traceback(hserver):
    """Widget ``update`` messages with invalid states and unknown methods: nothing the page
    receives carries a Python traceback or a server file path; the server log shows the kernel's
    traceback (issue 22), cut at ``LOG_CHARS`` characters."""
    ks = KernelSocket(hserver)
    try:
        ks.send("comm_info_request", {"target_name": "jupyter.widget"})
        comms = [m for m in ks.replies("comm_info_reply") if m.get("msg_type") == "comm_info_reply"][0]["content"][
            "comms"
        ]
        for cid in list(comms)[:20]:
            for data in (
                {"method": "update", "state": {"value": {"x": [1]}}, "buffer_paths": []},
                {"method": "update", "state": {"layout": 7, "_view_count": "x"}},
                {"method": "nope"},
                {"method": "custom", "content": [1, 2]},
                {"method": "request_state"},
            ):
                ks.send("comm_msg", {"comm_id": cid, "data": data})
        got = ks.replies("never", timeout=6.0)
        assert ks.alive()
    finally:
        ks.close()
    text = json.dumps(got)
    for needle in ("Traceback", "site-packages", str(REPO), 'File \\"'):
        assert needle not in text, needle
    # issue 22: the operator reads what was kept off the page in the server log
    kept = [
        e for e in _log_entries(hserver.log()) if f"kernel {ks.kernel_id} " in e and "output kept off the page" in e
    ]
    assert kept, hserver.log()[-3000:]
    assert any("Traceback (most recent call last)" in e for e in kept), kept
    assert all(len(e) < LOG_CHARS + 300 for e in kept)


def _log_entries(log: str) -> list[str]:
    """The server log's entries: a line that starts with ``[`` (Jupyter's log format) or
    ``dpexplore:`` opens one, the lines after it (a traceback) belong to it."""
    entries: list[str] = []
    for line in log.splitlines():
        if line.startswith(("[", "dpexplore:")) or not entries:
            entries.append(line)
        else:
            entries[-1] += "\n" + line
    return entries


def test_a_flood_of_hostile_comm_messages_is_a_few_log_lines(hserver):
    """Issue 11 (5): a thousand invalid widget messages used to write one log entry (with a traceback)
    each to the server log; now the log grows by a few entries (the first few tracebacks, cut
    short) and the kernel still answers."""
    before = len(hserver.log())
    ks = KernelSocket(hserver)
    try:
        ks.send("comm_info_request", {"target_name": "jupyter.widget"})
        comms = [m for m in ks.replies("comm_info_reply") if m.get("msg_type") == "comm_info_reply"][0]["content"][
            "comms"
        ]
        cid = next(iter(comms))
        for i in range(1000):
            ks.send("comm_msg", {"comm_id": cid, "data": {"method": "update", "state": {"value": {"x": [i]}}}})
        ks.replies("never", timeout=8.0)
        assert ks.alive()
    finally:
        ks.close()
    time.sleep(1.0)
    added = _log_entries(hserver.log()[before:])
    assert len(added) <= 30, hserver.log()[-3000:]
    # the kernel's tracebacks are in the log (issue 22), a few of them, each cut short
    assert sum(len(e) for e in added) <= 10 * (LOG_CHARS + 300), hserver.log()[-3000:]


@pytest.mark.parametrize(
    "path",
    [
        "voila/templates/..%2f..%2fetc%2fpasswd",
        "voila/templates/lab",
        "voila/templates/x/y",
        "voila/templates/lab/static/../../../../etc/passwd",
        "voila/templates/%2e%2e/static/x",
        "logout",
        "login",
    ],
)
def test_odd_paths_are_404_not_500(hserver, path):
    status, body = _get(hserver.base + path)
    assert status == 404, (path, status, body[:200])
    assert "Traceback" not in body


def test_page_loads_nothing_from_outside_the_server(hserver):
    status, html = _get(hserver.url("demo.ipynb"))
    assert status == 200
    external = re.findall(r'(?:src|href)\s*=\s*["\'](https?:)?//[^"\']+', html)
    links = re.findall(r'<(?:link|script)[^>]+(?:src|href)\s*=\s*["\']((?:https?:)?//[^"\']+)', html)
    assert not links, links
    assert "cdn.jsdelivr.net" not in html and "fontawesome" not in html.lower(), external
