"""Load benchmark of ``dpexplore serve``: many concurrent dashboard sessions (issue 5).

Starts ``dpexplore serve`` on 127.0.0.1 (own process group, a temporary ``--root`` holding only the
benchmarked notebook, short culling) and runs N concurrent sessions, each as a client that speaks
the page's protocol without a browser (30 Chromium pages do not fit on 2 cores):

1. ``GET /voila/render/<app>`` (as the browser does; the kernel id is read from the page),
2. opens ``/api/kernels/<id>/channels``, asks the widget manager for every model's state
   (``comm_open`` ``jupyter.widget.control`` + ``request_states``): **time to first plot** is from
   the GET to the first PlotlyWidget state with traces (the browser's drawing is not included),
3. for ``--seconds`` (≤ 60) moves a slider every ``--think`` seconds: ``comm_msg``
   ``{"method": "update", "state": {"value": x}}`` to a visible slider model, and collects the
   kernel's ``update`` messages of PlotlyWidget ``data`` caused by that move until the kernel is
   idle again: **slider-to-plot latency** is the time of the last plot's update (every plot of the
   page updated; kernel round trip + compute + serialization; the browser's Plotly.react adds
   ~10-50 ms, see bench_browser.py),
4. closes its websocket.

A session succeeds if its page rendered, the first plot arrived and every slider move was answered
(by a plot update, or — when the dashboard shows a message instead — by the kernel going idle) in
``--step-timeout`` s. Reported: success rate, latency p50/p95/max, time to first plot p50/p95/max,
RSS/USS per kernel while all sessions are open, and the kernel count after all sessions ended and
culling ran (goal: the pool size).

    python benchmarks/bench_load.py --sessions 10 30 --seconds 30 [--app rdp_explorer.ipynb]
        [--pool-size 1] [--json benchmarks/results/bench_load.json]
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


class ServerProc:
    def __init__(self, root, port, cull_idle, cull_interval, pool_size, log, max_kernels=None):
        cmd = [sys.executable, "-m", "dpexplore.cli", "serve", "--no-browser", "--port", str(port),
               "--root", str(root), "--cull-idle-timeout", str(cull_idle),
               "--cull-interval", str(cull_interval), "--pool-size", str(pool_size)]
        if max_kernels is not None:
            cmd += ["--max-kernels", str(max_kernels)]
        self.port = port
        self.log_path = log
        self._log = open(log, "w")
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True, cwd=str(REPO))

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
        out = []
        try:
            kids = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return out
        for k in kids:
            try:
                if "ipykernel_launcher" in " ".join(k.cmdline()):
                    out.append(k)
            except psutil.Error:
                pass
        return out

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
    return {"header": {"msg_id": uuid.uuid4().hex, "msg_type": msg_type, "username": "",
                       "session": session, "date": "", "version": "5.3"},
            "parent_header": {}, "metadata": metadata or {}, "content": content,
            "channel": "shell", "buffers": []}


async def _recv(ws, timeout):
    """Next JSON (text-frame) message; binary frames (messages with buffers) are skipped."""
    while True:
        raw = await asyncio.wait_for(ws.recv(), timeout)
        if isinstance(raw, str):
            return json.loads(raw)


async def session(idx, port, app, seconds, think, step_timeout, stats, hold: asyncio.Event):
    import websockets

    rec = {"ok": False, "latencies": [], "first_plot": None, "moves": 0, "unanswered": 0,
           "error": None, "messages_only": 0}
    stats.append(rec)
    sid = uuid.uuid4().hex
    t0 = time.perf_counter()
    try:
        url = f"http://127.0.0.1:{port}/voila/render/{app}"
        html = await asyncio.to_thread(
            lambda: urllib.request.urlopen(url, timeout=300).read().decode())
        kid = re.search(r'"kernelId":\s*"([0-9a-f-]{36})"', html).group(1)
        ws_url = f"ws://127.0.0.1:{port}/api/kernels/{kid}/channels?session_id={sid}"
        async with websockets.connect(ws_url, max_size=2**26, open_timeout=60) as ws:
            control = uuid.uuid4().hex
            # the widget manager's control comm (ipywidgets 8: protocol version in the metadata)
            m_open = _msg("comm_open", {"comm_id": control, "target_name":
                                        "jupyter.widget.control", "data": {}}, sid,
                          metadata={"version": "1.0.0"})
            await ws.send(json.dumps(m_open))
            while True:
                m = await _recv(ws, 120)
                if (m.get("msg_type") == "status" and m["content"].get("execution_state") == "idle"
                        and m.get("parent_header", {}).get("msg_id") == m_open["header"]["msg_id"]):
                    break
            await ws.send(json.dumps(_msg("comm_msg", {"comm_id": control,
                                                       "data": {"method": "request_states"}}, sid)))
            states = None
            while states is None:
                m = await _recv(ws, 120)
                c = m.get("content", {})
                if (m.get("msg_type") == "comm_msg" and c.get("comm_id") == control
                        and c.get("data", {}).get("method") == "update_states"):
                    states = c["data"]["states"]
            plots = {k for k, v in states.items() if "data" in v["state"]
                     and v["state"].get("_model_name") == "AnyModel"}
            if not any(states[k]["state"]["data"] for k in plots):
                raise RuntimeError("no plot with traces in the first state")
            rec["first_plot"] = time.perf_counter() - t0
            def shown(st):  # hidden sliders (other mechanisms' parameters) do not redraw
                lay = states.get(str(st.get("layout", "")).removeprefix("IPY_MODEL_"), {})
                return lay.get("state", {}).get("display") != "none"

            sliders = [(k, v["state"]) for k, v in states.items()
                       if v["state"].get("_model_name") in SLIDERS
                       and not v["state"].get("disabled") and shown(v["state"])]
            rec["sliders"] = len(sliders)
            rng = random.Random(idx)
            t_end = time.perf_counter() + seconds
            while time.perf_counter() < t_end and sliders:
                k, st = sliders[rec["moves"] % len(sliders)]
                lo, hi, step = st["min"], st["max"], st.get("step") or 1
                x = lo + step * rng.randint(0, max(0, int(round((hi - lo) / step))))
                if st["_model_name"] == "FloatLogSliderModel":
                    x = st.get("base", 10.0) ** x
                elif st["_model_name"] == "IntSliderModel":
                    x = int(x)
                m_out = _msg("comm_msg", {"comm_id": k, "data": {"method": "update",
                                                                 "state": {"value": x},
                                                                 "buffer_paths": []}}, sid)
                ts = time.perf_counter()
                await ws.send(json.dumps(m_out))
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
                    if (m.get("msg_type") == "comm_msg" and c.get("comm_id") in plots
                            and "data" in c.get("data", {}).get("state", {})):
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
        rec["error"] = f"{type(e).__name__}: {e}"
        rec["ok"] = False
        rec["done"] = True
    return rec


async def run_round(server, n, app, seconds, think, step_timeout):
    stats = []
    hold = asyncio.Event()
    tasks = [asyncio.create_task(session(i, server.port, app, seconds, think, step_timeout, stats,
                                         hold)) for i in range(n)]
    # memory: sample kernel RSS/USS while the sessions are open
    rss, uss = [], []
    while not all(r.get("first_plot") or r.get("error") for r in stats) or len(stats) < n:
        await asyncio.sleep(0.5)
    await asyncio.sleep(max(1.0, seconds / 2))
    for k in server.kernels():
        try:
            mi = k.memory_full_info()
            rss.append(mi.rss / 2**20)
            uss.append(mi.uss / 2**20)
        except psutil.Error:
            pass
    while not all(r.get("done") for r in stats):
        await asyncio.sleep(0.5)
    hold.set()
    await asyncio.gather(*tasks)
    return stats, rss, uss


def summarize(n, stats, rss, uss, kernels_after, pool, wall):
    lat = [x for r in stats for x in r["latencies"]]
    fp = [r["first_plot"] for r in stats if r["first_plot"] is not None]
    return {
        "sessions": n,
        "success_rate": sum(r["ok"] for r in stats) / n,
        "errors": [r["error"] for r in stats if r["error"]],
        "refused_503": sum("503" in (r["error"] or "") for r in stats),
        "moves": sum(r["moves"] for r in stats),
        "plot_updates": len(lat),
        "moves_without_redraw": sum(r["messages_only"] for r in stats),
        "unanswered": sum(r["unanswered"] for r in stats),
        "latency_ms": {"p50": 1e3 * pct(lat, 50), "p95": 1e3 * pct(lat, 95),
                       "max": 1e3 * max(lat) if lat else None},
        "first_plot_s": {"p50": pct(fp, 50), "p95": pct(fp, 95), "max": max(fp) if fp else None},
        "kernel_rss_mib": {"median": statistics.median(rss) if rss else None,
                           "max": max(rss) if rss else None, "n": len(rss)},
        "kernel_uss_mib": {"median": statistics.median(uss) if uss else None},
        "kernels_after_cull": kernels_after,
        "pool_size": pool,
        "wall_s": wall,
    }


def kernel_memory(apps) -> dict:
    """RSS/USS [MiB] of a fresh kernel after executing each dashboard notebook (nbclient, the way
    Voila executes it; no front end connected)."""
    import nbformat
    from nbclient import NotebookClient

    out = {}
    for nb_name in apps:
        nb = nbformat.read(REPO / "notebooks" / nb_name, as_version=4)
        client = NotebookClient(nb, timeout=300, kernel_name="python3",
                                resources={"metadata": {"path": str(REPO / "notebooks")}})
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, nargs="+", default=[10, 30])
    ap.add_argument("--seconds", type=float, default=30.0, help="slider moving per session (≤ 60)")
    ap.add_argument("--think", type=float, default=0.3, help="pause between moves [s]")
    ap.add_argument("--step-timeout", type=float, default=20.0)
    ap.add_argument("--app", default="rdp_explorer.ipynb")
    ap.add_argument("--pool-size", type=int, default=1)
    ap.add_argument("--max-kernels", type=int, default=None,
                    help="dpexplore serve --max-kernels (default: the server's own default); "
                         "sessions past it get HTTP 503 and count as refused")
    ap.add_argument("--cull-idle", type=int, default=10)
    ap.add_argument("--json", type=pathlib.Path, default=None)
    ap.add_argument("--kernel-memory", action="store_true",
                    help="only measure a kernel's memory after executing each gallery notebook")
    a = ap.parse_args(argv)
    if a.kernel_memory:
        from dpexplore.apps import APPS

        res = kernel_memory([nb for nb, _, _ in APPS] + ["index.ipynb"])
        if a.json:
            a.json.write_text(json.dumps(res, indent=1))
        return 0
    a.seconds = min(a.seconds, 60.0)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench_load_"))
    shutil.copy(REPO / "notebooks" / a.app, tmp / a.app)
    server = ServerProc(tmp, free_port(), a.cull_idle, 2, a.pool_size, tmp / "serve.log",
                        a.max_kernels)
    results = []

    def _term(*_):
        server.stop()
        sys.exit(1)

    signal.signal(signal.SIGTERM, _term)
    try:
        server.wait_ready(pools=1)
        print(f"server up, {len(server.kernels())} kernel(s) preheated; load "
              f"{os.getloadavg()[0]:.2f}", flush=True)
        for n in a.sessions:
            t0 = time.perf_counter()
            stats, rss, uss = asyncio.run(run_round(server, n, a.app, a.seconds, a.think,
                                                    a.step_timeout))
            wall = time.perf_counter() - t0
            deadline = time.monotonic() + 3 * a.cull_idle + 60
            while time.monotonic() < deadline and len(server.kernels()) > a.pool_size:
                time.sleep(1)
            after = len(server.kernels())
            s = summarize(n, stats, rss, uss, after, a.pool_size, wall)
            s["app"] = a.app
            s["cpus"] = os.cpu_count()
            results.append(s)
            print(json.dumps(s, indent=1), flush=True)
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
