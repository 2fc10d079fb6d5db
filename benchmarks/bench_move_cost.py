"""CPU cost of one slider move, per process (issue 22: slider → plot p95 ≤ 250 ms with 30 sessions
moving a slider once a second each on a 2-core machine).

Thirty moves a second on two cores leave at most ~66 ms of CPU per move over every process before
queues build. Wall-clock latency on a shared machine swings with its load; the CPU seconds a move
costs hardly do. This script starts ``dpexplore serve`` (a temporary ``--root`` with the apps'
notebooks, own process group, a port of ``--port``), opens each app as a page would (the same
websocket protocol as ``bench_load.py``), and makes ``--moves`` slider moves to random positions
(as ``bench_load.py`` does), one after the other: each waits until the kernel is idle after the move,
then ``--settle`` seconds for the background prefetch to run (the moves start once the server is
quiet: the pool's replacement of the kernel taken is not counted). Reported per move, from psutil's
``cpu_times`` before and after: the CPU seconds of **the page's kernel process** (compute, figure
building, serialization, ZMQ; the prefetch thread included) and of **the server process** (Voilà's
websocket relay), the wall time from sending the move to the kernel's idle, and the messages the
page receives per move, by kind (type, widget model and the names updated).

Each app is measured in the configurations of ``--configs`` (default ``prefetch`` = as served,
``no-prefetch`` = ``dpexplore serve --no-prefetch``, ``legacy`` = as served with the page speaking
the older JSON websocket protocol instead of v1; ``no-prefetch`` is the named baseline: a ratio below 1.0 says a
configuration costs less than the baseline in the same run). ``--baseline-ref REF`` adds the code of
git commit REF (checked out in a temporary worktree, served with this interpreter and
``PYTHONPATH`` pointing at it: the kernels, where the dashboards run, import REF's dpexplore; the
server process, started from this checkout, runs this one's) as one more configuration ``REF``, so
the ratio against the previous code path is measured in the same run. ::

    python benchmarks/bench_move_cost.py [--moves 40] [--apps rdp_explorer,noise_lab]
        [--configs prefetch no-prefetch] [--baseline-ref HEAD~3] [--port 8550]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import pathlib
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import psutil

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_load import (
    PROTOCOL,
    REPO,
    SLIDERS,
    ServerProc,
    Visitor,
    _msg,  # noqa: E402
    _send,
    connect,
    decode,
    plot_models,
    slider_value,
    widget_states,
)

APPS = ("rdp_explorer", "composition_explorer", "noise_lab", "demo", "profile_gdp")


def cpu(proc: psutil.Process) -> float:
    t = proc.cpu_times()
    return t.user + t.system


def message_kind(m: dict, models: dict) -> str:
    """A kernel → page message's kind for the per-move count: its type, a comm message's method,
    widget model and the names it updates, a status message's state
    (``comm_msg:update:HTMLModel:value``, ``status:busy``); ``models``: comm id → model name."""
    kind, c = m.get("msg_type", "?"), m.get("content") or {}
    if kind == "status":
        return f"status:{c.get('execution_state')}"
    if kind == "comm_msg":
        data = c.get("data") or {}
        state = data.get("state") or {}
        return f"comm_msg:{data.get('method')}:{models.get(c.get('comm_id'), '?')}:{','.join(sorted(state)) or '-'}"
    return kind


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


async def quiet(proc: psutil.Process, cpu_s: float = 0.02, every: float = 0.5, timeout: float = 120.0) -> None:
    """Wait until ``proc`` used less than ``cpu_s`` CPU seconds in ``every`` seconds (the server
    fills its pool again after a page took a kernel: starting it and running its notebook cost
    the server process seconds of CPU, which were counted as the moves' before)."""
    end = time.monotonic() + timeout
    last = cpu(proc)
    while time.monotonic() < end:
        await asyncio.sleep(every)
        now = cpu(proc)
        if now - last < cpu_s:
            return
        last = now


def pool_fills(log_path: pathlib.Path) -> int:
    """How often Voilà logged a pool filled (again: after each kernel taken)."""
    return pathlib.Path(log_path).read_text(errors="replace").count("is filled with")


async def measure_app(
    base: str,
    app: str,
    server: psutil.Process,
    kernels,
    moves: int,
    settle: float,
    seed: int,
    log_path: pathlib.Path | None = None,
) -> dict:
    """Open ``app`` on the server at ``base``, make ``moves`` moves; CPU and wall time per move
    (once the pool has its kernel again: the server runs the new kernel's notebook, seconds of
    its CPU that are not the moves')."""
    fills = pool_fills(log_path) if log_path is not None else 0
    html = await Visitor(base).page(f"{base}voila/render/{app}.ipynb")
    kid = re.search(r'"kernelId":\s*"([0-9a-f-]{36})"', html).group(1)
    kernel = next(k for k in kernels() if kid in " ".join(k.cmdline()))
    sid = uuid.uuid4().hex
    async with connect(f"ws{base[4:]}api/kernels/{kid}/channels?session_id={sid}") as ws:
        states = await widget_states(ws, sid)
        plots = plot_models(states)
        models = {k: v["state"].get("_model_name", "?") for k, v in states.items()}
        sliders = [
            (k, v["state"])
            for k, v in states.items()
            if v["state"].get("_model_name") in SLIDERS and not v["state"].get("disabled")
        ]
        rng = random.Random(seed)
        walls, plot_bytes, kinds = [], 0, collections.Counter()

        async def drain(seconds: float) -> None:
            """Count every frame the page receives in the next ``seconds`` (the prefetch's)."""
            end = time.perf_counter() + seconds
            while (left := end - time.perf_counter()) > 0:
                try:
                    raw = await asyncio.wait_for(ws.recv(), left)
                except asyncio.TimeoutError:
                    return
                kinds[message_kind(decode(raw), models)] += 1

        end = time.monotonic() + 180
        while log_path is not None and pool_fills(log_path) <= fills and time.monotonic() < end:
            await asyncio.sleep(0.5)
        await quiet(server)
        await asyncio.sleep(settle)
        k0, s0 = cpu(kernel), cpu(server)
        for i in range(moves):
            k, st = sliders[i % len(sliders)]
            m_out = _msg(
                "comm_msg",
                {
                    "comm_id": k,
                    "data": {"method": "update", "state": {"value": slider_value(st, rng)}, "buffer_paths": []},
                },
                sid,
            )
            ts = time.perf_counter()
            await _send(ws, m_out)
            mid = m_out["header"]["msg_id"]
            while True:
                raw = await asyncio.wait_for(ws.recv(), 60)
                m = decode(raw)
                kinds[message_kind(m, models)] += 1
                if m.get("parent_header", {}).get("msg_id") != mid:
                    continue
                c = m.get("content", {})
                if m.get("msg_type") == "comm_msg" and c.get("comm_id") in plots:
                    plot_bytes += len(raw)
                if m.get("msg_type") == "status" and c.get("execution_state") == "idle":
                    walls.append(time.perf_counter() - ts)
                    break
            await drain(settle)  # the prefetch of the next step runs now
        k1, s1 = cpu(kernel), cpu(server)
    return {
        "kernel_ms": 1e3 * (k1 - k0) / moves,
        "server_ms": 1e3 * (s1 - s0) / moves,
        "messages": sum(kinds.values()) / moves,
        "kinds": {k: n / moves for k, n in kinds.most_common()},
        "wall_p50_ms": 1e3 * statistics.median(walls),
        "plot_kib": plot_bytes / 1024 / moves,
        "sliders": len(sliders),
    }


def run_config(name: str, apps, a, env_extra: dict, flags: list) -> dict:
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="bench_move_cost_"))
    for app in apps:
        shutil.copy(REPO / "notebooks" / f"{app}.ipynb", tmp / f"{app}.ipynb")
    old_env = dict(os.environ)
    os.environ.update(env_extra)
    try:
        server = ServerProc(tmp, a.port, 600, 30, 1, tmp / "serve.log", extra=flags)
    finally:
        os.environ.clear()
        os.environ.update(old_env)
    out = {}
    try:
        server.wait_ready(pools=len(apps), timeout=600)  # every app's pool: fills cost the server CPU
        base = f"http://127.0.0.1:{a.port}/"
        proc = psutil.Process(server.proc.pid)
        for app in apps:
            out[app] = asyncio.run(
                measure_app(base, app, proc, server.kernels, a.moves, a.settle, a.seed, tmp / "serve.log")
            )
            r = out[app]
            print(
                f"  {name:>14} {app:<22} kernel {r['kernel_ms']:6.1f} ms  server "
                f"{r['server_ms']:5.1f} ms  wall p50 {r['wall_p50_ms']:6.1f} ms  plot data "
                f"{r['plot_kib']:6.1f} KiB/move  {r['messages']:4.1f} messages/move   load {load()}",
                flush=True,
            )
            print("      " + "  ".join(f"{k} {n:.2f}" for k, n in r["kinds"].items()), flush=True)
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--apps", default=",".join(APPS))
    ap.add_argument("--moves", type=int, default=40)
    ap.add_argument(
        "--settle", type=float, default=0.6, help="pause after each move's idle [s]: the prefetch runs in it"
    )
    ap.add_argument(
        "--configs",
        nargs="+",
        default=["prefetch", "no-prefetch"],
        choices=["prefetch", "no-prefetch", "legacy"],
        help="legacy: as prefetch, the page speaking the older JSON websocket protocol",
    )
    ap.add_argument(
        "--baseline-ref", default=None, help="also serve the code of this git commit (prefetch on) as configuration REF"
    )
    ap.add_argument("--port", type=int, default=8550)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--protocol",
        choices=["v1", "legacy"],
        default="v1",
        help="kernel websocket protocol: v1 as a browser's page, or the older JSON one",
    )
    ap.add_argument("--json", type=pathlib.Path, default=None)
    a = ap.parse_args(argv)
    PROTOCOL["v1"] = a.protocol == "v1"
    apps = [x.strip() for x in a.apps.split(",") if x.strip()]
    print(f"{os.cpu_count()} CPUs, {a.moves} moves per app, {a.protocol} websocket protocol; load {load()}", flush=True)
    results, worktree = {}, None
    try:
        for cfg in a.configs:
            PROTOCOL["v1"] = cfg != "legacy" and a.protocol == "v1"
            results[cfg] = run_config(cfg, apps, a, {}, ["--no-prefetch"] if cfg == "no-prefetch" else [])
        if a.baseline_ref:
            worktree = pathlib.Path(tempfile.mkdtemp(prefix="bench_move_cost_ref_"))
            subprocess.run(
                ["git", "worktree", "add", "--detach", str(worktree), a.baseline_ref],
                cwd=REPO,
                check=True,
                capture_output=True,
            )
            env = {"PYTHONPATH": str(worktree) + os.pathsep + os.environ.get("PYTHONPATH", "")}
            PROTOCOL["v1"] = a.protocol == "v1"
            results[a.baseline_ref] = run_config(a.baseline_ref, apps, a, env, [])
    finally:
        if worktree is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=REPO, capture_output=True)
    base = "no-prefetch" if "no-prefetch" in results else next(iter(results))
    print(f"\nkernel + server CPU per move, ratio against '{base}' (same run); load {load()}")
    for app in apps:
        b = results[base][app]["kernel_ms"] + results[base][app]["server_ms"]
        row = "  ".join(
            f"{cfg} {r[app]['kernel_ms'] + r[app]['server_ms']:6.1f} ms "
            f"({(r[app]['kernel_ms'] + r[app]['server_ms']) / b:4.2f}x)"
            for cfg, r in results.items()
        )
        print(f"  {app:<22} {row}")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(
            json.dumps(
                {"load": os.getloadavg(), "cpus": os.cpu_count(), "moves": a.moves, "results": results}, indent=1
            )
        )


if __name__ == "__main__":
    main()
