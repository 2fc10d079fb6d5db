"""Load benchmark of ``dpexplore serve`` and of the JupyterHub set-up: many concurrent dashboard
sessions (issues 5 and 11).

Starts ``dpexplore serve`` on 127.0.0.1 (own process group, a temporary ``--root`` holding only the
benchmarked notebook, short culling) and runs N concurrent sessions, each as a client that speaks
the page's protocol without a browser (30 Chromium pages do not fit on 2 cores):

1. ``GET /voila/render/<app>`` (as the browser does; the kernel id is read from the page),
2. opens ``/api/kernels/<id>/channels`` with jupyter_server's v1 subprotocol, as the page's
   JupyterLab services do (``--protocol legacy``: the older JSON protocol, for which the server
   parses and re-serialises every message), asks the widget manager for every model's state
   (``comm_open`` ``jupyter.widget.control`` + ``request_states``): **time to first plot** is from
   the GET to the first PlotlyWidget state with traces (the browser's drawing is not included),
3. for ``--seconds`` (≤ 60) moves a slider every ``--think`` seconds: ``comm_msg``
   ``{"method": "update", "state": {"value": x}}`` to a visible slider model, and collects the
   kernel's ``update`` messages of PlotlyWidget ``data`` caused by that move until the kernel is
   idle again: **slider-to-plot latency** is the time of the last plot's update (every plot of the
   page shown updated: plots in closed tabs are sent when their tab opens, ``ui.offstage``; kernel round trip + compute + serialization; the browser's Plotly.react adds
   ~10-50 ms, see bench_browser.py),
4. closes its websocket.

A session succeeds if its page rendered, the first plot arrived and every slider move was answered
(by a plot update, or — when the dashboard shows a message instead — by the kernel going idle) in
``--step-timeout`` s. Reported: success rate, latency p50/p95/max, time to first plot p50/p95/max,
RSS/USS per kernel while all sessions are open, and the kernel count after all sessions ended and
culling ran (goal: the pool size).

    python benchmarks/bench_load.py --sessions 10 30 --seconds 30 [--app rdp_explorer.ipynb]
        [--pool-size 1] [--max-kernels N] [--json benchmarks/results/bench_load.json]

Issue 22 (a class opens one link at once): ``--arrive 2`` starts the sessions evenly over 2 s,
``--app a.ipynb,b.ipynb,...`` spreads them over several apps in turn, ``--expect N`` runs the
server in lecture mode (``dpexplore serve --expect N --apps <those apps>``: the pools are filled
before the round starts) and ``--fill-slots`` bounds the pool fills at once. A page whose rendered
notebook has no widget output counts as a failed, **blank** session (``blank_pages``); the server
log's nbclient IOPub timeouts and discarded pool kernels are counted too. ::

    python benchmarks/bench_load.py --sessions 30 --seconds 20 --think 1 --arrive 2 --expect 30
    python benchmarks/bench_load.py --sessions 30 --seconds 20 --think 1 --arrive 2 --expect 30 \
        --app rdp_explorer.ipynb,composition_explorer.ipynb,noise_lab.ipynb,demo.ipynb,profile_gdp.ipynb

Issue 36: ``--modes`` runs the same rounds once per mode in one run: ``normal`` (every kernel
started as a new interpreter, ``dpexplore serve --no-fork``), ``fork`` (kernels forked from the
warm template, every page's notebook run and rendered: ``--no-clone``) and ``clone`` (the
default: a dashboard's pages copied from its first rendered page, kernels forked with the app
built); each result says its ``kernels`` mode and the template's USS. ::

    python benchmarks/bench_load.py --sessions 30 --seconds 20 --think 1 --arrive 2 \
        --modes fork clone

**Hub mode** (``--hub N [N ...]``, instead of ``--sessions``): starts JupyterHub with
``deploy/jupyterhub_config.py`` the way ``tests/browser/test_hub.py`` does (``.venv/bin/jupyterhub``,
installed by ``make hub-setup``; free ports through the ``DPEXPLORE_HUB_*`` / ``DPEXPLORE_CHP_*``
variables, a temporary state folder, own process group, stopped with everything it started at
the end) and runs N students concurrently, each with its own cookie jar:

1. logs in at ``/hub/login`` (dummy authenticator: form post with the page's ``_xsrf``), which
   starts their single-user server, and loads ``/hub/spawn-pending/<name>`` every 0.5 s (as the
   spawn-pending page does when its progress stream ends) until it redirects to the ready
   server: **spawn time**;
2. runs the session above against ``/user/<name>/``: the page GET goes through the single-user
   server's OAuth round trip with the hub, and the kernel websocket
   ``/user/<name>/api/kernels/<id>/channels`` goes through the hub's proxy with the cookies, the
   hub's ``Origin`` and ``Sec-Fetch-Mode: websocket`` (what a browser sends).

Reported besides the figures above: time to first plot also from the login's start, memory per
student (RSS/USS of the single-user server's process tree: server + kernel; and of the kernel
alone), the hub's own RSS (hub, proxy, culler), and how many single-user servers / kernels remain
after the sessions ended and ``jupyterhub-idle-culler`` ran (goal: 0). The culler's timeout
(``--hub-cull-timeout``, default 120 s) must outlast a student's whole session: a single-user
server reports its activity to the hub only every 300 s, so a shorter timeout stops servers whose
pages are still open. ::

    python benchmarks/bench_load.py --hub 10 --seconds 20 [--hub-cull-timeout 120]
        [--hub-baseline jupyterhub.singleuser]

``--hub-baseline MODULE`` first runs the same rounds on a hub whose students' servers start as
``python -m MODULE`` (JupyterHub's own ``jupyterhub.singleuser``: the deployment's command before
it left out the slowest optional import), then as deployed, and prints the spawn and first-plot
ratios: the named baseline in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pathlib
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

import psutil

REPO = pathlib.Path(__file__).resolve().parents[1]
SLIDERS = {"FloatSliderModel", "IntSliderModel", "FloatLogSliderModel"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(xs, q):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, int(round(q / 100 * (len(xs) - 1)))))
    return xs[k]


def kernels_under(pid) -> list:
    """The ipykernel processes below process ``pid``."""
    out = []
    try:
        kids = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return out
    for k in kids:
        try:
            if "ipykernel_launcher" in " ".join(k.cmdline()):
                out.append(k)
        except psutil.Error:
            pass
    return out


class ServerProc:
    def __init__(self, root, port, cull_idle, cull_interval, pool_size, log, max_kernels=None, extra=()):
        cmd = [
            sys.executable,
            "-m",
            "dpexplore.cli",
            "serve",
            "--no-browser",
            "--port",
            str(port),
            "--root",
            str(root),
            "--cull-idle-timeout",
            str(cull_idle),
            "--cull-interval",
            str(cull_interval),
            "--pool-size",
            str(pool_size),
            *extra,
        ]
        if max_kernels is not None:
            cmd += ["--max-kernels", str(max_kernels)]
        self.port = port
        self.log_path = log
        self._log = open(log, "w")
        self.proc = subprocess.Popen(
            cmd, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True, cwd=str(REPO)
        )

    def wait_ready(self, pools, timeout=180):
        t = time.monotonic()
        while time.monotonic() - t < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError(pathlib.Path(self.log_path).read_text())
            if pathlib.Path(self.log_path).read_text(errors="replace").count("is filled with") >= pools:
                return
            time.sleep(0.5)
        raise RuntimeError("server not ready")

    def kernels(self):
        return kernels_under(self.proc.pid)

    def stop(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=20)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self._log.close()


def _msg(msg_type, content, session, metadata=None):
    return {
        "header": {
            "msg_id": uuid.uuid4().hex,
            "msg_type": msg_type,
            "username": "",
            "session": session,
            "date": "",
            "version": "5.3",
        },
        "parent_header": {},
        "metadata": metadata or {},
        "content": content,
        "channel": "shell",
        "buffers": [],
    }


#: the kernel websocket protocol the benchmarks speak: ``v1`` as the browser's page (jupyter_server
#: relays its frames without parsing them), or ``legacy`` (``--protocol legacy``: JSON frames, every
#: message parsed and re-serialised by the server)
PROTOCOL = {"v1": True}


def connect(ws_url: str, headers: dict | None = None):
    """``websockets.connect`` to a kernel's channels, asking for the v1 protocol as a page does."""
    import websockets

    from dpexplore.voila.wire import V1_SUBPROTOCOL

    return websockets.connect(
        ws_url,
        max_size=2**26,
        open_timeout=60,
        additional_headers=headers or {},
        subprotocols=[V1_SUBPROTOCOL] if PROTOCOL["v1"] else None,
    )


def decode(raw) -> dict:
    """The kernel message of frame ``raw`` in the protocol spoken (:mod:`dpexplore.voila.wire`)."""
    from dpexplore.voila.wire import decode_frame

    return decode_frame(raw, v1=PROTOCOL["v1"])


async def _send(ws, msg: dict) -> None:
    from dpexplore.voila.wire import encode_v1

    await ws.send(encode_v1(msg) if PROTOCOL["v1"] else json.dumps(msg))


async def _recv(ws, timeout):
    """The next message (:func:`decode`)."""
    return decode(await asyncio.wait_for(ws.recv(), timeout))


class Visitor:
    """An anonymous visitor of ``dpexplore serve`` at ``base`` (``http://host:port/``): plain
    GETs, no cookies. :class:`HubStudent` is the same through JupyterHub."""

    def __init__(self, base: str):
        self.base = base

    async def page(self, url: str) -> str:
        return await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=300).read().decode())

    def ws_headers(self, ws_url: str) -> dict:
        return {}


async def widget_states(ws, sid: str) -> dict:
    """Every widget model's state, asked of the kernel on websocket ``ws`` as the page's widget
    manager does: its control comm (ipywidgets 8: protocol version in the metadata), then
    ``request_states``."""
    control = uuid.uuid4().hex
    m_open = _msg(
        "comm_open",
        {"comm_id": control, "target_name": "jupyter.widget.control", "data": {}},
        sid,
        metadata={"version": "1.0.0"},
    )
    await _send(ws, m_open)
    while True:
        m = await _recv(ws, 120)
        if (
            m.get("msg_type") == "status"
            and m["content"].get("execution_state") == "idle"
            and m.get("parent_header", {}).get("msg_id") == m_open["header"]["msg_id"]
        ):
            break
    await _send(ws, _msg("comm_msg", {"comm_id": control, "data": {"method": "request_states"}}, sid))
    while True:
        m = await _recv(ws, 120)
        c = m.get("content", {})
        if (
            m.get("msg_type") == "comm_msg"
            and c.get("comm_id") == control
            and c.get("data", {}).get("method") == "update_states"
        ):
            return c["data"]["states"]


def plot_models(states: dict) -> set:
    """The ids of the PlotlyWidget models among ``states``."""
    return {k for k, v in states.items() if "data" in v["state"] and v["state"].get("_model_name") == "AnyModel"}


def slider_value(st: dict, rng: random.Random):
    """A random position of the slider whose widget state is ``st``, as the front end sends it."""
    lo, hi, step = st["min"], st["max"], st.get("step") or 1
    x = lo + step * rng.randint(0, max(0, int(round((hi - lo) / step))))
    if st["_model_name"] == "FloatLogSliderModel":
        return st.get("base", 10.0) ** x
    return int(x) if st["_model_name"] == "IntSliderModel" else x


def _record() -> dict:
    return {
        "ok": False,
        "latencies": [],
        "first_plot": None,
        "moves": 0,
        "unanswered": 0,
        "error": None,
        "messages_only": 0,
    }


async def session(
    idx, client: Visitor, app, seconds, think, step_timeout, stats, hold: asyncio.Event, rec: dict | None = None
):
    """One dashboard session of ``client`` (steps 1-4 of the module docstring); its record is
    appended to ``stats`` (or ``rec``, already there, is filled)."""
    if rec is None:
        rec = _record()
        stats.append(rec)
    sid = uuid.uuid4().hex
    t0 = rec["t_page"] = time.perf_counter()
    stage = "page GET"
    try:
        html = await client.page(f"{client.base}voila/render/{app}")
        kid = re.search(r'"kernelId":\s*"([0-9a-f-]{36})"', html).group(1)
        if "application/vnd.jupyter.widget-view+json" not in html:  # the app's output is lost
            rec["blank"] = True
            raise RuntimeError("blank page: the rendered notebook has no widget output")
        ws_url = f"ws{client.base[4:]}api/kernels/{kid}/channels?session_id={sid}"
        stage = "websocket and widget states"
        async with connect(ws_url, client.ws_headers(ws_url)) as ws:
            states = await widget_states(ws, sid)
            plots = plot_models(states)
            if not any(states[k]["state"]["data"] for k in plots):
                raise RuntimeError("no plot with traces in the first state")
            rec["first_plot"] = time.perf_counter() - t0

            def shown(st):  # hidden sliders (other mechanisms' parameters) do not redraw
                lay = states.get(str(st.get("layout", "")).removeprefix("IPY_MODEL_"), {})
                return lay.get("state", {}).get("display") != "none"

            sliders = [
                (k, v["state"])
                for k, v in states.items()
                if v["state"].get("_model_name") in SLIDERS and not v["state"].get("disabled") and shown(v["state"])
            ]
            rec["sliders"] = len(sliders)
            stage = "slider moves"
            rng = random.Random(idx)
            t_end = time.perf_counter() + seconds
            while time.perf_counter() < t_end and sliders:
                k, st = sliders[rec["moves"] % len(sliders)]
                x = slider_value(st, rng)
                m_out = _msg(
                    "comm_msg",
                    {"comm_id": k, "data": {"method": "update", "state": {"value": x}, "buffer_paths": []}},
                    sid,
                )
                ts = time.perf_counter()
                await _send(ws, m_out)
                rec["moves"] += 1
                got_plot = False
                t_plot = None
                deadline = ts + step_timeout
                mid = m_out["header"]["msg_id"]
                while True:  # until the kernel is idle after THIS move: every plot updated
                    left = deadline - time.perf_counter()
                    if left <= 0:
                        rec["unanswered"] += 1
                        break
                    try:
                        m = await _recv(ws, left)
                    except asyncio.TimeoutError:
                        rec["unanswered"] += 1
                        break
                    if m.get("parent_header", {}).get("msg_id") != mid:
                        continue
                    c = m.get("content", {})
                    if (
                        m.get("msg_type") == "comm_msg"
                        and c.get("comm_id") in plots
                        and "data" in c.get("data", {}).get("state", {})
                    ):
                        t_plot = time.perf_counter() - ts  # the last plot's update counts
                        got_plot = True
                    elif m.get("msg_type") == "status" and c.get("execution_state") == "idle":
                        if got_plot:
                            rec["latencies"].append(t_plot)
                        else:
                            rec["messages_only"] += 1  # same plot (message shown, same value)
                        break
                await asyncio.sleep(think if got_plot else 0.05)
            rec["ok"] = rec["unanswered"] == 0
            rec["done"] = True
            await hold.wait()  # keep every session open until memory is measured
    except Exception as e:  # noqa: BLE001 - a failed session is a result
        rec["error"] = f"{stage}: {type(e).__name__}: {e}"
        rec["ok"] = False
        rec["done"] = True
    return rec


async def run_round(n, start, measure, seconds):
    """Runs ``start(i, stats, hold)`` for i < n concurrently. ``measure()`` (memory) is called
    once while every session is open: after every first plot, plus ``seconds / 2``."""
    stats, loads = [], []
    hold = asyncio.Event()

    async def sample_load():  # the 1-minute load average every 5 s while the round runs
        while True:
            loads.append(os.getloadavg()[0])
            await asyncio.sleep(5)

    sampler = asyncio.create_task(sample_load())
    tasks = [asyncio.create_task(start(i, stats, hold)) for i in range(n)]
    while not all(r.get("first_plot") or r.get("error") for r in stats) or len(stats) < n:
        await asyncio.sleep(0.5)
    await asyncio.sleep(max(1.0, seconds / 2))
    mem = measure()
    while not all(r.get("done") for r in stats):
        await asyncio.sleep(0.5)
    hold.set()
    await asyncio.gather(*tasks)
    sampler.cancel()
    return stats, mem, loads


def memory(procs) -> tuple[list, list]:
    """RSS and USS [MiB] of each process."""
    rss, uss = [], []
    for k in procs:
        try:
            mi = k.memory_full_info()
            rss.append(mi.rss / 2**20)
            uss.append(mi.uss / 2**20)
        except psutil.Error:
            pass
    return rss, uss


def quantiles(xs, scale=1.0) -> dict:
    return {"p50": scale * pct(xs, 50), "p95": scale * pct(xs, 95), "max": scale * max(xs) if xs else None}


def spread(xs) -> dict:
    return {"median": statistics.median(xs) if xs else None, "max": max(xs) if xs else None, "n": len(xs)}


def summarize(n, stats, wall, loads):
    lat = [x for r in stats for x in r["latencies"]]
    fp = [r["first_plot"] for r in stats if r["first_plot"] is not None]
    return {
        "sessions": n,
        "success_rate": sum(r["ok"] for r in stats) / n,
        "blank_pages": sum(bool(r.get("blank")) for r in stats),
        "errors": [r["error"] for r in stats if r["error"]],
        "refused_503": sum("503" in (r["error"] or "") for r in stats),
        "moves": sum(r["moves"] for r in stats),
        "plot_updates": len(lat),
        "moves_without_redraw": sum(r["messages_only"] for r in stats),
        "unanswered": sum(r["unanswered"] for r in stats),
        "latency_ms": quantiles(lat, 1e3),
        "first_plot_s": quantiles(fp),
        "wall_s": wall,
        "loadavg_1min": {"min": min(loads), "max": max(loads)},
    }


# --- through JupyterHub (--hub) ------------------------------------------------------------------


def _loopback_names():
    """``*.localhost`` is loopback (RFC 6761, as browsers resolve it); glibc here does not know:
    each student's server is on ``<name>.localhost``."""
    if getattr(socket.getaddrinfo, "_dpexplore", False):
        return
    orig = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        # anyio (under httpx) passes the name IDNA-encoded, as bytes
        name = host.decode("ascii", "replace") if isinstance(host, bytes) else host
        if isinstance(name, str) and (name == "localhost" or name.endswith(".localhost")):
            host = "127.0.0.1"
        return orig(host, *args, **kwargs)

    getaddrinfo._dpexplore = True
    socket.getaddrinfo = getaddrinfo


class HubProc:
    """JupyterHub with ``deploy/jupyterhub_config.py``, started as tests/browser/test_hub.py
    starts it: free ports, its state in ``state``, the idle culler at ``cull_timeout`` s (checked
    every ``cull_every`` s), own process group."""

    def __init__(self, state: pathlib.Path, cull_timeout, cull_every, names=(), singleuser=None):
        self.state = state
        port = free_port()
        self.port = port
        # the hub as a class gets it (each student on her own origin, <name>.localhost), with the
        # test switch's dummy authenticator for the benchmark's made-up students (on loopback)
        self.url = f"http://localhost:{port}/"
        self.names = list(names)
        _loopback_names()
        env = dict(
            os.environ,
            DPEXPLORE_HUB_PORT=str(port),
            DPEXPLORE_HUB_API_PORT=str(free_port()),
            DPEXPLORE_CHP_API_PORT=str(free_port()),
            DPEXPLORE_HUB_DIR=str(state),
            DPEXPLORE_HUB_CULL_TIMEOUT=str(cull_timeout),
            DPEXPLORE_HUB_CULL_EVERY=str(cull_every),
        )
        env.update(
            DPEXPLORE_HUB_AUTH="dummy",
            DPEXPLORE_HUB_TESTING="1",
            DPEXPLORE_HUB_USERS=",".join(self.names),
            DPEXPLORE_HUB_MAX_USERS=str(max(1, len(self.names))),
        )
        exe = pathlib.Path(sys.executable).parent / "jupyterhub"
        if not exe.exists():
            raise SystemExit("jupyterhub is not installed: make hub-setup")
        self.log_path = state / "hub.log"
        self._log = open(self.log_path, "w")
        config = REPO / "deploy" / "jupyterhub_config.py"
        if singleuser is not None:  # the deployment's configuration, but another server command
            config = state / "jupyterhub_config.py"
            config.write_text(
                f"load_subconfig({str(REPO / 'deploy' / 'jupyterhub_config.py')!r})\n"
                f"c.Spawner.cmd = [c.Spawner.cmd[0], '-m', {singleuser!r}]\n"
            )
        self.proc = subprocess.Popen(
            [str(exe), "-f", str(config)],
            cwd=state,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ready(self, timeout=90):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                with urllib.request.urlopen(self.url + "hub/login", timeout=5) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(self.log_path.read_text(errors="replace")[-3000:])

    def user_servers(self) -> dict:
        """{user: process} of the running single-user servers (the hub's children)."""
        from dpexplore.hub import single_user_servers

        return single_user_servers(self.proc.pid)

    def kernels(self) -> list:
        return [k for p in self.user_servers().values() for k in kernels_under(p.pid)]

    def measure(self) -> dict:
        """Memory of each user's server process tree (server + its kernels), of the kernels
        alone, and of the hub itself (hub, proxy, culler)."""

        def tree(p):  # a server that just stopped (culled) has no tree
            try:
                return [p, *p.children(recursive=True)]
            except psutil.Error:
                return []

        trees = [tree(p) for p in self.user_servers().values()]
        users = {q.pid for t in trees for q in t}
        rss, uss = memory(self.kernels())
        own = [p for p in tree(psutil.Process(self.proc.pid)) if p.pid not in users]
        trees = [memory(t) for t in trees if t]
        return {
            "user_rss": [sum(t[0]) for t in trees],
            "user_uss": [sum(t[1]) for t in trees],
            "kernel_rss": rss,
            "kernel_uss": uss,
            "hub_rss": sum(memory(own)[0]),
        }

    def stop(self):
        try:
            left = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.Error:
            left = []
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)  # the hub stops its users' servers first
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        for p in left:  # whatever the hub did not stop
            try:
                p.kill()
            except psutil.Error:
                pass
        self._log.close()
        if os.geteuid() == 0:  # the accounts the hub made for the benchmark's students
            from dpexplore.hub.spawner import account_name, remove_account

            for name in self.names:
                remove_account(account_name(name))


class HubStudent(Visitor):
    """A student with their own cookie jar: logs in at the hub (dummy authenticator, no
    password), waits for their server, then browses ``/user/<name>/`` like a browser (the first
    page GET does the single-user server's OAuth round trip; the websocket carries the cookies,
    the hub's Origin and ``Sec-Fetch-Mode: websocket``)."""

    NAV = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Site": "same-origin"}

    def __init__(self, hub_url: str, name: str):
        import httpx

        port = hub_url.rstrip("/").rsplit(":", 1)[1]
        self.origin = f"http://{name}.localhost:{port}"  # her server's own origin
        super().__init__(f"{self.origin}/user/{name}/")
        self.hub_url, self.name = hub_url, name
        self.http = httpx.AsyncClient(
            base_url=hub_url, follow_redirects=True, timeout=90
        )  # a page GET past 90 s is a failure

    async def login(self, timeout=300):
        r = await self.http.get("hub/login", headers=self.NAV)
        r.raise_for_status()
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', r.text).group(1)
        r = await self.http.post(
            "hub/login?next=", headers=self.NAV, data={"username": self.name, "password": "", "_xsrf": xsrf}
        )
        r.raise_for_status()  # ends on /hub/spawn-pending/<name> (or on the server, if quick)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            # what the spawn-pending page's script does when its progress stream ends: load the
            # page again, which redirects to her server once it is ready and answers 5xx if the
            # spawn failed (asking /hub/api/user with the login page's XSRF cookie is refused
            # once she is logged in: "Not accepting incorrect xsrf token id in cookie")
            r = await self.http.get(f"hub/spawn-pending/{self.name}", headers=self.NAV, follow_redirects=False)
            if r.is_redirect and f"/user/{self.name}" in r.headers.get("location", ""):
                return
            if r.status_code >= 400:
                raise RuntimeError(f"the spawn failed (spawn-pending answered {r.status_code})")
            await asyncio.sleep(0.5)
        raise RuntimeError("the server was not ready in time")

    async def page(self, url: str) -> str:
        r = await self.http.get(url, headers=self.NAV)
        r.raise_for_status()
        if not str(r.url).startswith(self.base):
            raise RuntimeError(f"sent to {r.url}")
        return r.text

    def ws_headers(self, ws_url: str) -> dict:
        req = urllib.request.Request("http" + ws_url[2:])
        self.http.cookies.jar.add_cookie_header(req)
        return {
            "Cookie": req.get_header("Cookie"),
            "Origin": self.origin,
            "Sec-Fetch-Mode": "websocket",
            "Sec-Fetch-Site": "same-origin",
        }


async def hub_student(idx, name, hub_url, app, seconds, think, step_timeout, stats, hold):
    """Login + spawn, then :func:`session` through the hub; adds ``spawn_s`` (login start to
    server ready) and ``first_plot_login`` (login start to first plot) to the record."""
    rec = _record()
    stats.append(rec)
    student = HubStudent(hub_url, name)
    t_login = time.perf_counter()
    try:
        try:
            await student.login()
        except Exception as e:  # noqa: BLE001 - a failed login/spawn is a result
            rec.update(error=f"login/spawn: {type(e).__name__}: {e}", done=True)
            return rec
        rec["spawn_s"] = time.perf_counter() - t_login
        await session(idx, student, app, seconds, think, step_timeout, stats, hold, rec=rec)
        if rec["first_plot"] is not None:
            rec["first_plot_login"] = rec["t_page"] - t_login + rec["first_plot"]
    finally:
        await student.http.aclose()
    return rec


def run_hub(a, singleuser=None):
    """Yields one summary per ``--hub`` round; ``singleuser``: the students' servers run as
    ``python -m singleuser`` instead of the deployment's command."""
    state = pathlib.Path(tempfile.mkdtemp(prefix="bench_hub_"))
    tag = "" if singleuser is None else "base-"  # the baseline hub's students: accounts of their own
    names = [f"{tag}n{n}-student{i:02d}" for n in a.hub for i in range(n)]
    hub = HubProc(state, a.hub_cull_timeout, a.hub_cull_every, names, singleuser)
    try:
        hub.wait_ready()
        print(f"hub up at {hub.url}; load {os.getloadavg()[0]:.2f}", flush=True)
        for n in a.hub:

            def start(i, stats, hold, n=n):
                return hub_student(
                    i, f"{tag}n{n}-student{i:02d}", hub.url, a.app, a.seconds, a.think, a.step_timeout, stats, hold
                )

            culled0 = hub.log_path.read_text(errors="replace").count("Culling server")
            t0 = time.perf_counter()
            stats, mem, loads = asyncio.run(run_round(n, start, hub.measure, a.seconds))
            wall = time.perf_counter() - t0
            s = summarize(n, stats, wall, loads)
            servers_open = len(hub.user_servers())
            t_end = time.monotonic()  # the culler: no page open any more
            deadline = t_end + a.hub_cull_timeout + a.hub_cull_every + 90
            while time.monotonic() < deadline and hub.user_servers():
                time.sleep(1)
            spawn = [r["spawn_s"] for r in stats if r.get("spawn_s") is not None]
            fpl = [r["first_plot_login"] for r in stats if r.get("first_plot_login") is not None]
            s.update(
                app=a.app,
                cpus=os.cpu_count(),
                mode="hub",
                singleuser=singleuser or "deployment (dpexplore.hub.singleuser)",
                spawn_s=quantiles(spawn),
                first_plot_from_login_s=quantiles(fpl),
                user_rss_mib=spread(mem["user_rss"]),
                user_uss_mib=spread(mem["user_uss"]),
                kernel_rss_mib=spread(mem["kernel_rss"]),
                kernel_uss_mib=spread(mem["kernel_uss"]),
                hub_rss_mib=mem["hub_rss"],
                servers_when_sessions_ended=servers_open,
                servers_after_cull=len(hub.user_servers()),
                kernels_after_cull=len(hub.kernels()),
                culled_after_s=time.monotonic() - t_end,
                culled_by_culler=hub.log_path.read_text(errors="replace").count("Culling server") - culled0,
                cull_timeout_s=a.hub_cull_timeout,
            )
            yield s
    finally:
        hub.stop()
        # the hub's log (its students' servers log there too) outlives the round: the evidence
        # for a session that failed
        keep = REPO / "benchmarks" / "results" / "bench_load_hub.log"
        keep.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(hub.log_path, keep)
        print(f"hub log: {keep}", flush=True)
        shutil.rmtree(state, ignore_errors=True)


def kernel_memory(apps) -> dict:
    """RSS/USS [MiB] of a fresh kernel after executing each dashboard notebook (nbclient, the way
    Voila executes it; no front end connected)."""
    import nbformat
    from nbclient import NotebookClient

    out = {}
    for nb_name in apps:
        nb = nbformat.read(REPO / "notebooks" / nb_name, as_version=4)
        client = NotebookClient(
            nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(REPO / "notebooks")}}
        )
        client.execute(cleanup_kc=False)  # the kernel stays up with the dashboard built
        try:
            p = psutil.Process(client.km.provisioner.process.pid)
            mi = p.memory_full_info()
            out[nb_name] = {"rss_mib": round(mi.rss / 2**20, 1), "uss_mib": round(mi.uss / 2**20, 1)}
        finally:
            from jupyter_core.utils import run_sync

            run_sync(client.km.shutdown_kernel)(now=True)  # an AsyncKernelManager
        print(nb_name, out[nb_name], flush=True)
    return out


def run_serve(a):
    """Yields one summary per ``--sessions`` round. Sessions open ``--app``'s notebooks in turn
    (a comma-separated list spreads them), starting evenly over ``--arrive`` seconds."""
    apps = [x.strip() for x in a.app.split(",") if x.strip()]
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench_load_"))
    for app in apps:
        shutil.copy(REPO / "notebooks" / app, tmp / app)
    extra = []
    if a.expect:
        extra += ["--expect", str(a.expect), "--apps", ",".join(apps)]
    if a.fill_slots:
        extra += ["--fill-slots", str(a.fill_slots)]
    if a.max_pages is not None:
        extra += ["--max-pages", str(a.max_pages)]
    extra += {"normal": ["--no-fork"], "fork": ["--no-clone"], "clone": []}[a.mode]
    resting = len(apps) * (max(-(-a.expect // len(apps)), a.pool_size) if a.expect else a.pool_size)
    lean = a.mode == "clone" and not a.expect and a.pool_size <= 1
    if lean:  # a dashboard keeps no kernel at rest once its page to clone is rendered
        resting = 0
    server = ServerProc(tmp, free_port(), a.cull_idle, 2, a.pool_size, tmp / "serve.log", a.max_kernels, extra)
    visitor = Visitor(f"http://127.0.0.1:{server.port}/")
    try:
        t0 = time.perf_counter()
        server.wait_ready(pools=len(apps), timeout=900)
        if a.mode == "clone":  # every app's page to clone is rendered
            while (
                server_log(server).count("are cloned from one rendered page") < len(apps)
                and time.perf_counter() - t0 < 900
            ):
                time.sleep(1)

        def settling():  # lean: the references' kernels shut down; else: the pools full
            n = len(server.kernels())
            return n > resting if lean else n < resting

        while settling() and time.perf_counter() - t0 < 900:
            time.sleep(1)  # "filled" is logged as the last kernel starts: its notebook still runs
        time.sleep(5)
        print(
            f"server up, {len(server.kernels())} kernel(s) preheated in "
            f"{time.perf_counter() - t0:.0f} s; load {os.getloadavg()[0]:.2f}",
            flush=True,
        )
        for n in a.sessions:

            def start(i, stats, hold):
                async def later():
                    await asyncio.sleep(a.arrive * i / max(n - 1, 1))
                    return await session(
                        i, visitor, apps[i % len(apps)], a.seconds, a.think, a.step_timeout, stats, hold
                    )

                return later()

            print(
                f"round of {n} sessions on {', '.join(apps)}: load {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
                flush=True,
            )
            t0 = time.perf_counter()
            server_cpu = sum(psutil.Process(server.proc.pid).cpu_times()[:2])
            stats, mem, loads = asyncio.run(run_round(n, start, lambda: memory(server.kernels()), a.seconds))
            wall = time.perf_counter() - t0
            # the server process's own CPU in the round (rendering pages, running notebooks
            # through nbclient, relaying messages): where a page's cost is when kernels fork
            server_cpu = sum(psutil.Process(server.proc.pid).cpu_times()[:2]) - server_cpu
            deadline = time.monotonic() + 3 * a.cull_idle + 60
            while time.monotonic() < deadline and len(server.kernels()) > resting:
                time.sleep(1)
            s = summarize(n, stats, wall, loads)
            rss, uss = mem
            tpl = [
                p
                for p in psutil.Process(server.proc.pid).children()
                if "dpexplore.voila.forkserver" in " ".join(p.cmdline())
            ]
            s.update(
                app=a.app,
                cpus=os.cpu_count(),
                mode="serve",
                max_kernels=a.max_kernels,
                kernels=a.mode,
                fork=a.mode != "normal",
                server_cpu_s=round(server_cpu, 1),
                template_uss_mib=(round(memory(tpl)[1][0], 1) if tpl else None),
                max_pages=a.max_pages,
                kernel_rss_mib=spread(rss),
                kernel_uss_mib=spread(uss),
                kernels_after_cull=len(server.kernels()),
                pool_size=a.pool_size,
                expect=a.expect,
                arrive_s=a.arrive,
                iopub_timeouts=server_log(server).count("Timeout waiting for IOPub output"),
                discarded=server_log(server).count("lost its output"),
            )
            yield s
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def server_log(server) -> str:
    return pathlib.Path(server.log_path).read_text(errors="replace")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--sessions",
        type=int,
        nargs="+",
        default=[10, 30],
        help="concurrent sessions against dpexplore serve, one round each",
    )
    ap.add_argument(
        "--hub",
        type=int,
        nargs="+",
        default=None,
        metavar="N",
        help="instead: N students through JupyterHub (deploy/jupyterhub_config.py), one round each",
    )
    ap.add_argument("--seconds", type=float, default=30.0, help="slider moving per session (≤ 60)")
    ap.add_argument("--think", type=float, default=0.3, help="pause between moves [s]")
    ap.add_argument("--step-timeout", type=float, default=20.0)
    ap.add_argument(
        "--app", default="rdp_explorer.ipynb", help="notebook, or comma-separated notebooks the sessions open in turn"
    )
    ap.add_argument(
        "--arrive", type=float, default=0.0, help="sessions start evenly over this many seconds (0: all at once)"
    )
    ap.add_argument("--pool-size", type=int, default=1)
    ap.add_argument(
        "--expect", type=int, default=0, help="dpexplore serve --expect N --apps <the --app notebooks> (lecture mode)"
    )
    ap.add_argument("--fill-slots", type=int, default=0, help="dpexplore serve --fill-slots")
    ap.add_argument(
        "--max-kernels",
        type=int,
        default=None,
        help="dpexplore serve --max-kernels (default: the server's own default); "
        "sessions past it get HTTP 503 and count as refused",
    )
    ap.add_argument(
        "--max-pages",
        type=int,
        default=None,
        help="dpexplore serve --max-pages (default: the server's own, 15 per core); "
        "sessions past it get HTTP 503 and count as refused",
    )
    ap.add_argument("--cull-idle", type=int, default=10)
    ap.add_argument(
        "--modes",
        nargs="+",
        choices=["normal", "fork", "clone"],
        default=["clone"],
        help="how pages get their kernels, one run per mode in the order given: "
        "normal (--no-fork), fork (--no-clone), clone (dpexplore serve's "
        "default)",
    )
    ap.add_argument(
        "--hub-cull-timeout",
        type=int,
        default=120,
        help="--hub: the idle culler's timeout [s]; longer than a student's whole "
        "session (the hub learns of activity only every 300 s)",
    )
    ap.add_argument("--hub-cull-every", type=int, default=5)
    ap.add_argument(
        "--hub-baseline",
        default=None,
        metavar="MODULE",
        help="--hub: first the same rounds with the students' servers started as "
        "`python -m MODULE` (e.g. jupyterhub.singleuser, JupyterHub's own), "
        "then as deployed; the spawn and first-plot ratios are printed",
    )
    ap.add_argument(
        "--protocol",
        choices=["v1", "legacy"],
        default="v1",
        help="kernel websocket protocol: v1 as a browser's page, or the older JSON one",
    )
    ap.add_argument("--json", type=pathlib.Path, default=None)
    ap.add_argument(
        "--kernel-memory",
        action="store_true",
        help="only measure a kernel's memory after executing each gallery notebook",
    )
    a = ap.parse_args(argv)
    PROTOCOL["v1"] = a.protocol == "v1"
    if a.kernel_memory:
        from dpexplore.apps import APPS

        res = kernel_memory([nb for nb, _, _ in APPS] + ["index.ipynb"])
        if a.json:
            a.json.write_text(json.dumps(res, indent=1))
        return 0
    a.seconds = min(a.seconds, 60.0)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # the finally blocks stop the servers
    results = []
    if a.hub:
        runs = ([run_hub(a, a.hub_baseline)] if a.hub_baseline else []) + [run_hub(a)]
    else:

        def serve_with(mode):
            a.mode = mode
            yield from run_serve(a)

        runs = [serve_with(m) for m in a.modes]
    for run in runs:
        for s in run:
            results.append(s)
            print(json.dumps(s, indent=1), flush=True)
    if a.hub and a.hub_baseline:
        base = {r["sessions"]: r for r in results if r.get("singleuser") == a.hub_baseline}
        for r in results:
            b = base.get(r["sessions"])
            if b is None or r is b:
                continue
            for key in ("spawn_s", "first_plot_from_login_s"):
                print(
                    f"{r['sessions']} students, {key}: "
                    + ", ".join(
                        f"{q} {r[key][q]:.2f} s against {b[key][q]:.2f} s ({r[key][q] / b[key][q]:.2f}x)"
                        for q in ("p50", "p95")
                    )
                    + f" [baseline: {a.hub_baseline}]",
                    flush=True,
                )
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
