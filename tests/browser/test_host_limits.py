"""A class can share one ``dpexplore serve`` (issue 11): no visitor can freeze it, grow its memory,
take every kernel, or keep a kernel after closing the page.

No browser: the tests speak HTTP and the kernel websocket as a hostile client would (the
websocket opened with NO subprotocol, i.e. the legacy plain-JSON protocol). Every server here is
watched: its memory (the Voilà process and its kernels) is bounded by the test, which kills it
past ``RSS_LIMIT_MB`` so a regression cannot take the machine down.
"""

from __future__ import annotations

import http.cookiejar
import json
import re
import shutil
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import pytest

from conftest import REPO, Server, free_port, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RSS_LIMIT_MB = 1500


def _root(tmp_path_factory):
    root = tmp_path_factory.mktemp("limits_root")
    shutil.copy(REPO / "notebooks" / "demo.ipynb", root / "demo.ipynb")
    return root


class Watchdog:
    """Kills the server's process group if the Voilà process's RSS passes ``limit_mb``; records
    the peak."""

    def __init__(self, server: Server, limit_mb: float = RSS_LIMIT_MB):
        import psutil

        self.server, self.limit = server, limit_mb * 2**20
        self.proc = psutil.Process(server.proc.pid)
        self.peak = self.rss()
        self.killed = False
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def rss(self) -> int:
        try:
            return self.proc.memory_info().rss
        except Exception:  # noqa: BLE001 - process gone
            return 0

    def _run(self):
        while not self._stop.wait(0.2):
            r = self.rss()
            self.peak = max(self.peak, r)
            if r > self.limit:
                self.killed = True
                self.server.stop()
                return

    def stop(self):
        self._stop.set()
        self._t.join(2)


def _serve(tmp_path_factory, *extra) -> Server:
    root = _root(tmp_path_factory)
    log = tmp_path_factory.mktemp("limits_log") / "serve.log"
    server = Server(free_port(), root=root, log_path=log, extra_args=list(extra))
    server.wait_ready(pools=1)
    return server


def _page(server: Server, opener=None) -> tuple[int, str]:
    req = urllib.request.Request(server.url("demo.ipynb"), headers={"Accept": "text/html"})
    try:
        with (opener.open if opener else urllib.request.urlopen)(req, timeout=60) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


def _answers_http(server: Server, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(server.base + "dpexplore/static/plotly.min.js", timeout=timeout) as r:
            return r.status == 200
    except Exception:  # noqa: BLE001 - timeout, refused
        return False


def _msg(msg_type: str, content: dict, session: str) -> str:
    return json.dumps(
        {
            "header": {
                "msg_id": uuid.uuid4().hex,
                "msg_type": msg_type,
                "username": "",
                "session": session,
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


def _legacy_socket(server: Server, html: str):
    """The page's kernel websocket opened with no subprotocol (legacy plain-JSON frames)."""
    import websocket

    kernel_id = re.search(r'"kernelId":\s*"([0-9a-f-]{36})"', html).group(1)
    url = f"ws://127.0.0.1:{server.port}/api/kernels/{kernel_id}/channels?session_id={uuid.uuid4()}"
    return websocket.create_connection(url, timeout=15, origin=server.base.rstrip("/"))


def _widget_comms(ws, session: str) -> list[str]:
    ws.send(_msg("comm_info_request", {"target_name": "jupyter.widget"}, session))
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        raw = ws.recv()
        if isinstance(raw, str):
            m = json.loads(raw)
            if m.get("msg_type") == "comm_info_reply":
                return list(m["content"]["comms"])
    raise AssertionError("no comm_info_reply")


def _need_plotly(comm_id: str, session: str) -> str:
    return _msg(
        "comm_msg",
        {"comm_id": comm_id, "data": {"method": "custom", "content": {"type": "dpexplore:need-plotly"}}},
        session,
    )


def _count_binary(ws, seconds: float) -> list[int]:
    import websocket

    sizes = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ws.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            raw = ws.recv()
        except websocket.WebSocketTimeoutException:
            break
        if isinstance(raw, bytes):
            sizes.append(len(raw))
    return sizes


# -- Must fix 1 and 2: legacy-protocol binary frames; the plotly.js amplification ------------
def test_legacy_binary_frames_neither_freeze_nor_grow_the_server(tmp_path_factory):
    """Reproducer of issue 11 (1): ``need-plotly`` to every widget comm over a websocket opened
    without subprotocol. Voilà 0.5's ``write_message`` read the legacy frame as a v1 frame and
    built a list of ~8.6e17 entries on the event loop: no HTTP answer, memory +2 GB in 80 s."""
    server = _serve(tmp_path_factory, "--cull-idle-timeout", "60")
    dog = Watchdog(server)
    try:
        base_rss = dog.rss()
        status, html = _page(server)
        assert status == 200
        ws = _legacy_socket(server, html)
        session = uuid.uuid4().hex
        comms = _widget_comms(ws, session)
        for cid in comms:
            ws.send(_need_plotly(cid, session))
        sizes = _count_binary(ws, 4.0)
        # the kernel's answer does arrive, as one legacy binary frame (the bundle, 1.3 MB)
        assert sizes and max(sizes) > 1_000_000, sizes
        for _ in range(8):
            assert _answers_http(server), "the server stopped answering HTTP"
            time.sleep(0.5)
        assert not dog.killed
        assert dog.peak - base_rss < 300 * 2**20, (base_rss, dog.peak)
        ws.close()
    finally:
        dog.stop()
        server.stop()
    assert not dog.killed, f"server RSS passed {RSS_LIMIT_MB} MB and was killed"


@pytest.fixture(scope="module")
def capped(tmp_path_factory):
    # the pool (1) plus at most 3 page kernels; long idle timeout: kernels leave only on close
    server = _serve(tmp_path_factory, "--max-kernels", "4", "--cull-idle-timeout", "120", "--cull-interval", "5")
    dog = Watchdog(server)
    yield server
    dog.stop()
    server.stop()


def test_need_plotly_is_answered_once_per_page(capped):
    """Issue 11 (2): ten rounds of need-plotly to every widget of one page get one 1.3 MB answer;
    forged session ids get at most 4 per kernel."""
    status, html = _page(capped)
    assert status == 200
    ws = _legacy_socket(capped, html)
    try:
        session = uuid.uuid4().hex
        comms = _widget_comms(ws, session)
        for _ in range(10):
            for cid in comms:  # every plot widget of the page (the others ignore it)
                ws.send(_need_plotly(cid, session))
        sizes = [s for s in _count_binary(ws, 5.0) if s > 1_000_000]
        assert len(sizes) == 1, sizes
        # other forged sessions: bounded per kernel
        for _ in range(10):
            forged = uuid.uuid4().hex
            for cid in comms:
                ws.send(_need_plotly(cid, forged))
        more = [s for s in _count_binary(ws, 5.0) if s > 1_000_000]
        assert len(sizes) + len(more) <= 4, more
    finally:
        ws.close()


def test_page_close_frees_its_kernel_at_once(capped):
    """Issue 11 (4): Voilà's beacon on page close posts ``_xsrf`` read from the page's cookie;
    without the cookie it got 403 and the kernel stayed until the culler (here 120 s)."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    status, html = _page(capped, opener)
    assert status == 200
    kernel_id = re.search(r'"kernelId":\s*"([0-9a-f-]{36})"', html).group(1)
    xsrf = next((c.value for c in jar if c.name == "_xsrf"), "")
    assert xsrf, "the page sets no _xsrf cookie: Voilà's shutdown beacon is refused (403)"
    assert _kernel_exists(capped, kernel_id)
    body = urllib.parse.urlencode({"_xsrf": xsrf}).encode()
    req = urllib.request.Request(
        capped.base + f"voila/api/shutdown/{kernel_id}",
        data=body,
        method="POST",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    with opener.open(req, timeout=15) as r:
        assert r.status == 204
    assert wait_until(lambda: not _kernel_exists(capped, kernel_id), 5), "kernel still running"


def _kernel_exists(server: Server, kernel_id: str) -> bool:
    try:
        with urllib.request.urlopen(server.base + f"api/kernels/{kernel_id}", timeout=10) as r:
            return r.status == 200
    except urllib.error.HTTPError as e:
        return e.code != 404


def test_kernel_cap_answers_503_and_open_pages_keep_working(capped):
    """Issue 11 (3): ten plain GETs used to start ten kernels. With ``--max-kernels 4`` the
    fourth page onward is refused with 503 in plain words; the open pages' kernels still answer."""
    wait_until(lambda: len(capped.kernels()) <= 1, 60)
    wait_until(lambda: len(capped.kernels()) >= 1, 60)
    statuses, first_html = [], None
    for _ in range(10):
        status, html = _page(capped)
        statuses.append(status)
        if status == 200 and first_html is None:
            first_html = html
        if status == 503:
            assert "server is full" in html.lower()
            assert "Traceback" not in html
        time.sleep(0.3)
    assert 503 in statuses and statuses.count(200) >= 2, statuses
    assert len(capped.kernels()) <= 4 + 1, capped.kernels()  # at most one refill in flight
    assert _answers_http(capped)
    ws = _legacy_socket(capped, first_html)
    try:
        assert _widget_comms(ws, uuid.uuid4().hex)  # an open page's kernel still answers
    finally:
        ws.close()


def _shutdown(server: Server, html: str, opener) -> None:
    """What Voilà's page-close beacon does: the page's kernel shut down with the page's _xsrf."""
    kernel_id = re.search(r'"kernelId":\s*"([0-9a-f-]{36})"', html).group(1)
    xsrf = next((c.value for c in opener.cookies if c.name == "_xsrf"), "")
    req = urllib.request.Request(
        server.base + f"voila/api/shutdown/{kernel_id}",
        method="POST",
        data=urllib.parse.urlencode({"_xsrf": xsrf}).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    with opener.open(req, timeout=15) as r:
        assert r.status == 204
    assert wait_until(lambda: not _kernel_exists(server, kernel_id), 10), "kernel still running"


def test_page_cap_counts_open_pages_not_the_pool(tmp_path_factory):
    """Issue 22 (60 sessions): past ``--max-pages`` a new page gets the 503 page and the open ones
    keep their speed. The pool's ready kernels are not pages: with a pool of 3 and a cap of 2
    pages, two pages open while 4-5 kernels run, the third is refused, and once a page closes
    the next one opens."""
    server = _serve(
        tmp_path_factory, "--max-pages", "2", "--max-kernels", "0", "--pool-size", "3", "--cull-idle-timeout", "120"
    )
    dog = Watchdog(server)
    try:
        assert wait_until(lambda: len(server.kernels()) >= 3, 90), server.kernels()  # the pool
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        opener.cookies = jar
        first, second = _page(server, opener), _page(server, opener)
        assert (first[0], second[0]) == (200, 200)
        assert len(server.kernels()) >= 3  # more kernels than the cap: the pool does not count
        status, html = _page(server, opener)
        assert status == 503 and "server is full" in html.lower() and "Traceback" not in html
        assert wait_until(lambda: "2 pages open (the cap)" in server.log(), 10)  # for the operator
        # kernels speak over Unix sockets in the server's private folder (no TCP port to collide
        # with another kernel's starting at the same moment, none for other local users to reach)
        assert "running over TCP" not in server.log()
        _shutdown(server, first[1], opener)
        assert _page(server, opener)[0] == 200  # a place is free again
    finally:
        dog.stop()
        server.stop()
    assert not dog.killed


def test_a_page_whose_kernel_dies_at_start_ends_and_says_so(tmp_path_factory):
    """A kernel that dies before it answers (in a class, its port taken by another kernel starting
    at the same moment) made Voilà's page GET wait for ever, a heartbeat every 10 s: the page never
    finished loading. Here every kernel exits at start (an IPython startup file): the page ends at
    once, says so in plain words and reloads itself (at most 3 times); the server log says why."""
    ipy = tmp_path_factory.mktemp("ipython")
    (ipy / "profile_default" / "startup").mkdir(parents=True)
    (ipy / "profile_default" / "startup" / "00-exit.py").write_text("import os\nos._exit(3)\n")
    root = _root(tmp_path_factory)
    log = tmp_path_factory.mktemp("dies_log") / "serve.log"
    server = Server(free_port(), root=root, log_path=log, extra_args=["--pool-size", "0"], env={"IPYTHONDIR": str(ipy)})
    try:
        server.wait_ready()
        import concurrent.futures

        # a total deadline: the heartbeats of a page that never ends keep each read alive
        pool = concurrent.futures.ThreadPoolExecutor(1)
        try:
            status, html = pool.submit(_page, server).result(timeout=45)
        except concurrent.futures.TimeoutError:
            server.stop()  # ends the hanging GET
            pytest.fail("the page of a kernel that died at start did not end within 45 s")
        finally:
            pool.shutdown(wait=False)
        assert status == 200
        assert 'role="alert"' in html and "could not start its dashboard" in html
        assert "location.reload()" in html and "Traceback" not in html and "kernel_info" not in html
        assert wait_until(lambda: "a page's notebook could not run (RuntimeError: Kernel died" in server.log(), 10)
    finally:
        server.stop()


@pytest.mark.parametrize("cap", ["--max-kernels", "--max-pages"])
def test_a_burst_of_page_requests_cannot_pass_the_cap(tmp_path_factory, cap):
    """Issue 34 (attack 4): ten page requests at the same moment got ten kernels where the cap was
    5: the cap counted the kernels after an await. With a cap of 3 (no pool: every page starts
    its own kernel), at most 3 pages get a kernel, the others the "server is full" page, at no
    moment do more than 3 kernels run; a page closed frees its place."""
    other = "--max-pages" if cap == "--max-kernels" else "--max-kernels"
    log = tmp_path_factory.mktemp("burst_log") / "serve.log"
    server = Server(
        free_port(),
        root=_root(tmp_path_factory),
        log_path=log,
        extra_args=[cap, "3", other, "0", "--pool-size", "0", "--cull-idle-timeout", "300"],
    )
    server.wait_ready()
    dog = Watchdog(server)
    peak, done = [0], threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], len(server.kernels()))
            time.sleep(0.1)

    watcher = threading.Thread(target=watch, daemon=True)
    try:
        import concurrent.futures

        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        opener.cookies = jar
        barrier = threading.Barrier(10)

        def one(_):
            barrier.wait(timeout=30)
            return _page(server, opener)

        watcher.start()
        with concurrent.futures.ThreadPoolExecutor(10) as ex:
            results = list(ex.map(one, range(10)))
        statuses = [s for s, _ in results]
        assert 1 <= statuses.count(200) <= 3, statuses
        assert statuses.count(503) == 10 - statuses.count(200), statuses
        for status, html in results:
            if status == 503:
                assert "server is full" in html.lower() and "Traceback" not in html
        assert len(server.kernels()) <= 3, server.kernels()
        done.set()
        watcher.join(5)
        assert peak[0] <= 3, f"{peak[0]} kernels ran at once (cap 3)"
        # a page closed (Voilà's page-close call) gives its place to the next one
        opened = [html for s, html in results if s == 200]
        _shutdown(server, opened[0], opener)
        status, html = _page(server, opener)
        assert status == 200, html[:300]
    finally:
        done.set()
        dog.stop()
        server.stop()
    assert not dog.killed
