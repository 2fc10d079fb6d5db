"""Memory of ``dpexplore serve`` at rest, with the default pool, cloned pages off and on (issue 36:
"the default pool at rest ≤ 1/3 of today's").

Starts ``dpexplore serve`` on the shipped notebooks (every app and the gallery; own process group,
a free port), waits until the server is at rest (every pool filled; with cloning, every
dashboard's page to clone rendered and the kernels that rendered them shut down), then sums the
unique memory (USS, psutil ``memory_full_info``) and the resident memory of the kernel processes
and of the kernel template, and the proportional memory (PSS) of both together, whose sum counts
the pages they share once. Modes, in one run: ``fork`` (``--no-clone``: the named baseline, today's
default) and ``clone`` (the default); printed with the ratio clone / fork and the load average. ::

    python benchmarks/bench_pool_rest.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import tempfile
import time

import psutil

REPO = pathlib.Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def processes(pid: int) -> tuple[list, list]:
    """(kernels, templates) under the server ``pid``."""
    kernels, templates = [], []
    for p in psutil.Process(pid).children(recursive=True):
        try:
            cmd = " ".join(p.cmdline())
        except psutil.Error:
            continue
        if "dpexplore.voila.forkserver" in cmd:
            templates.append(p)
        elif "ipykernel_launcher" in cmd:
            kernels.append(p)
    return kernels, templates


def mib(procs, field: str) -> float:
    total = 0
    for p in procs:
        try:
            total += getattr(p.memory_full_info(), field)
        except psutil.Error:
            pass
    return round(total / 2**20, 1)


def at_rest(mode: str, timeout: float = 600) -> dict:
    notebooks = len(list((REPO / "notebooks").glob("*.ipynb")))
    with tempfile.TemporaryDirectory() as tmp:
        log = pathlib.Path(tmp) / "serve.log"
        cmd = [sys.executable, "-m", "dpexplore.cli", "serve", "--no-browser", "--port", str(free_port())] + (
            ["--no-clone"] if mode == "fork" else []
        )
        with open(log, "w") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=tmp, start_new_session=True)
        t0 = time.monotonic()
        try:
            stable, last = 0, None
            while time.monotonic() - t0 < timeout:
                time.sleep(2)
                text = log.read_text(errors="replace")
                filled = text.count("is filled with")
                cloned = text.count("are cloned from one rendered page")
                kernels, templates = processes(proc.pid)
                ready = filled >= notebooks and (mode == "fork" or cloned >= notebooks - 1)
                state = (len(kernels), filled, cloned)
                stable = stable + 1 if (ready and state == last) else 0
                last = state
                if stable >= 5:  # 10 s unchanged
                    break
            time.sleep(5)
            kernels, templates = processes(proc.pid)
            return {
                "mode": mode,
                "seconds_to_rest": round(time.monotonic() - t0, 1),
                "kernels": len(kernels),
                "kernel_uss_mib": mib(kernels, "uss"),
                "kernel_rss_mib": mib(kernels, "rss"),
                "template_uss_mib": mib(templates, "uss"),
                "template_rss_mib": mib(templates, "rss"),
                "pss_all_mib": mib(kernels + templates, "pss"),
                "uss_all_mib": round(mib(kernels, "uss") + mib(templates, "uss"), 1),
                "load_1min": round(os.getloadavg()[0], 2),
            }
        finally:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(20)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(proc.pid, signal.SIGKILL)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=pathlib.Path, default=None)
    a = ap.parse_args(argv)
    rows = [at_rest("fork"), at_rest("clone")]
    for key in ("kernel_uss_mib", "uss_all_mib", "pss_all_mib"):
        rows[1][f"ratio_{key}_clone_over_fork"] = round(rows[1][key] / max(rows[0][key], 1e-9), 3)
    print(json.dumps(rows, indent=1))
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
