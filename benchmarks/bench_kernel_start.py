"""Kernel start, normal vs forked from the warm template (issue 36), in one run.

For each round, in turn, a normal kernel start (``LocalProvisioner``: a new interpreter that
imports everything), a forked one (``dpexplore.voila.forkserver.ForkProvisioner``) and a forked
one that carries rdp_explorer built in the template (``app``: what a cloned page's kernel is,
``dpexplore.voila.clone``; the template builds the app once, before the first round) of the
``python3`` kernelspec on this interpreter; for each kernel:

* **ready**: wall time from ``start_kernel`` to the first ``kernel_info`` reply (requests sent
  every 50 ms until one is answered; jupyter_client's ``wait_for_ready`` would add its 0.2 s
  IOPub flush);
* **build**: wall time of executing ``rdp_explorer.ipynb``'s code (``build_rdp_explorer()``);
* **cpu**: the kernel process's own CPU time (user + system) after the build: for a forked kernel
  the work after the fork (the template's imports are paid once, reported as ``template_cpu``);
* **uss** / **rss**: its unique / resident memory after the build (psutil ``memory_full_info``).

Printed as medians and ranges with the ratios forked / normal and app / normal (the named
baseline: normal) and the 1-minute load average. ::

    python benchmarks/bench_kernel_start.py [--rounds 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pathlib
import queue
import statistics
import sys
import tempfile
import time

import psutil

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402
from jupyter_client.manager import AsyncKernelManager  # noqa: E402
from jupyter_client.provisioning.factory import KernelProvisionerFactory  # noqa: E402

from dpexplore.voila import forkserver, private_kernelspec_dir  # noqa: E402

BUILD = "from dpexplore.apps.rdp_explorer import build_rdp_explorer\nbuild_rdp_explorer()"


APP = "dpexplore.apps.rdp_explorer:build_rdp_explorer"


async def one(specs, provisioner: str, app: bool = False) -> dict:
    KernelProvisionerFactory.instance().default_provisioner_name = provisioner
    km = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=specs)
    t0 = time.perf_counter()
    if app:
        await km.start_kernel(env={**os.environ, forkserver.ENV_APP: APP})
    else:
        await km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        while time.perf_counter() - t0 < 120:
            kc.kernel_info()
            try:
                reply = await kc.get_shell_msg(timeout=0.05)
            except queue.Empty:
                continue
            if reply["msg_type"] == "kernel_info_reply":  # to this request or an earlier one
                break
        ready = time.perf_counter() - t0
        await kc.wait_for_ready(timeout=120)  # drains the other replies and IOPub
        t1 = time.perf_counter()
        reply = await kc.execute_interactive(BUILD, timeout=120, output_hook=lambda m: None)
        build = time.perf_counter() - t1
        assert reply["content"]["status"] == "ok", reply["content"]
        p = psutil.Process(km.provisioner.pid)
        ct = p.cpu_times()
        mi = p.memory_full_info()
        return {
            "ready_s": ready,
            "build_s": build,
            "cpu_s": ct.user + ct.system,
            "uss_mib": mi.uss / 2**20,
            "rss_mib": mi.rss / 2**20,
            "forked": type(km.provisioner.process).__name__ != "Popen",
            "app": bool(getattr(km.provisioner, "app_generation", 0)),
        }
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)


def summary(rows, key):
    xs = [r[key] for r in rows]
    return {"median": round(statistics.median(xs), 3), "min": round(min(xs), 3), "max": round(max(xs), 3)}


async def main_async(rounds: int) -> dict:
    os.environ.setdefault("DPEXPLORE_DEFER_HIDDEN", "1")
    forkserver.enable(start=False)
    with tempfile.TemporaryDirectory() as t:
        specs = KernelSpecManager(kernel_dirs=[str(private_kernelspec_dir(pathlib.Path(t)))])
        tpl = forkserver.template()
        t0 = time.perf_counter()
        tpl.start()
        while not os.path.exists(tpl.path or ""):
            await asyncio.sleep(0.05)
        template_ready = time.perf_counter() - t0
        tp = psutil.Process(tpl.proc.pid)
        template_cpu = sum(tp.cpu_times()[:2])
        template_uss = tp.memory_full_info().uss / 2**20
        loads = [os.getloadavg()[0]]
        rows = {"normal": [], "forked": [], "app": []}
        await one(specs, forkserver.PROVISIONER_NAME, app=True)  # the template builds the app
        for _ in range(rounds):
            rows["normal"].append(await one(specs, "local-provisioner"))
            rows["forked"].append(await one(specs, forkserver.PROVISIONER_NAME))
            rows["app"].append(await one(specs, forkserver.PROVISIONER_NAME, app=True))
            loads.append(os.getloadavg()[0])
        tpl.stop()
    assert all(r["forked"] for r in rows["forked"]) and not any(r["forked"] for r in rows["normal"])
    assert all(r["app"] for r in rows["app"]) and not any(r["app"] for r in rows["forked"])
    out = {
        "rounds": rounds,
        "load_1min": [round(x, 2) for x in loads],
        "template": {
            "ready_s": round(template_ready, 2),
            "cpu_s": round(template_cpu, 2),
            "uss_mib": round(template_uss, 1),
        },
    }
    for mode, rs in rows.items():
        out[mode] = {k: summary(rs, k) for k in ("ready_s", "build_s", "cpu_s", "uss_mib", "rss_mib")}
    for mode in ("forked", "app"):
        out[f"ratio_{mode}_over_normal"] = {
            k: round(out[mode][k]["median"] / out["normal"][k]["median"], 3)
            for k in ("ready_s", "build_s", "cpu_s", "uss_mib")
        }
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", type=pathlib.Path, default=None)
    a = ap.parse_args(argv)
    out = asyncio.run(main_async(a.rounds))
    print(json.dumps(out, indent=1))
    if a.json:
        a.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
