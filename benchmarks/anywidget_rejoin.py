"""How often a busy page leaves a plot deaf to its sliders: anywidget's 2 s window (rejoin.js).

anywidget's front end rejects a model for good ("[anywidget] Failed to initialize model.") when its
ESM is not imported and bound within 2 s of the model's creation, and the model then dropped every
later message from the kernel (dpexplore/ui/rejoin.js says how dpexplore takes them back). This
script opens a dashboard ``--pages`` times in headless Chromium on each checkout (one
``dpexplore serve`` each; a baseline page, then one of this checkout, in turn, so that both see the
same load), presses a slider key once the plots are drawn and counts

* pages whose console shows anywidget's message (with rejoin.js the rejection is caught when the
  model is rejoined, so the console seldom shows it: the stale count is the measure),
* pages on which the plot was NOT redrawn within ``--step-timeout`` s of the key press (stale),
* models that rejoin.js handed their messages back to (``window.__dpexploreRejoined``).

``--busy-ms B`` makes each page's main thread busy for B ms at each of the first ``--busy-models``
ESM imports (an init script on ``URL.createObjectURL``, which anywidget calls right after starting
its timer): B > 2000 reproduces the failure on every page; ``--busy-ms 0`` (the default) measures
the machine as it is, e.g. while ``--burners K`` ``nice -n 19`` busy loops run (killed at the
end, and after at most 110 s each: keep such a run short), or with ``--cpu-throttle R``
(Chromium's DevTools CPU throttling: the page runs R times slower, as on a slow laptop). A page
whose plots are not all drawn within ``--load-timeout`` s counts as not loaded (and is not pressed).
Printed: per checkout the counts, the stale ratio against the baseline, and the load average
before and after.

    python benchmarks/anywidget_rejoin.py --baseline-ref 0e69af6 --pages 5 --busy-ms 2100
    python benchmarks/anywidget_rejoin.py --baseline-ref 0e69af6 --pages 8 --burners 3
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "browser"))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_browser import Server, notebooks_root  # noqa: E402
from pagejs import ALL_PLOTS_HAVE_TRACES  # noqa: E402

BUSY = """(() => {
  const make = URL.createObjectURL.bind(URL);
  let n = 0;
  URL.createObjectURL = (blob) => {
    if (blob && blob.type === "text/javascript" && n++ < %d) {
      const t = performance.now();
      while (performance.now() - t < %d) { /* the page is busy */ }
    }
    return make(blob);
  };
})();"""

REVISIONS = """() => [...document.querySelectorAll('.dpexplore-plot')]
    .map(d => Number(d.dataset.revision))"""
REDRAWN = """(b) => [...document.querySelectorAll('.dpexplore-plot')]
    .some((d, i) => Number(d.dataset.revision) > b[i])"""


def archive(ref: str) -> pathlib.Path:
    """The files of git commit ``ref`` in a temporary folder (``git archive``: no worktree is
    registered), with the built static files git does not hold copied from this checkout."""
    path = pathlib.Path(tempfile.mkdtemp(prefix="anywidget_rejoin_ref_"))
    tar = subprocess.run(["git", "archive", "--format=tar", ref], cwd=REPO, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(path)], input=tar, check=True)
    static = REPO / "dpexplore" / "ui" / "static"
    for f in static.iterdir():
        target = path / "dpexplore" / "ui" / "static" / f.name
        if f.is_file() and not target.exists():
            shutil.copy(f, target)
    return path


def measure_page(browser, server: Server, notebook: str, args, out: dict) -> None:
    """Open one page, press a slider key, add what happened to ``out``."""
    server.wait_pool(notebook)
    ctx = browser.new_context(viewport={"width": 1200, "height": 1000})
    try:
        page = ctx.new_page()
        if args.busy_ms > 0:
            page.add_init_script(BUSY % (args.busy_models, args.busy_ms))
        if args.cpu_throttle > 1:
            cdp = ctx.new_cdp_session(page)
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": args.cpu_throttle})
        console: list[str] = []
        page.on("console", lambda m: console.append(m.text))
        page.on("pageerror", lambda e: console.append(str(e)))
        t0 = time.perf_counter()
        page.goto(server.url(notebook))
        server.opened_page(notebook)
        try:
            page.wait_for_function(ALL_PLOTS_HAVE_TRACES, timeout=args.load_timeout * 1000)
        except Exception:  # noqa: BLE001 - Playwright's TimeoutError
            out["not_loaded"] += 1
            return
        out["load_s"].append(round(time.perf_counter() - t0, 2))
        before = page.evaluate(REVISIONS)
        handle = page.locator(".widget-slider .noUi-handle").first
        handle.focus()
        handle.press("ArrowRight")
        try:
            page.wait_for_function(REDRAWN, arg=before, timeout=args.step_timeout * 1000)
        except Exception:  # noqa: BLE001 - Playwright's TimeoutError: the plot stayed stale
            out["stale"] += 1
        out["pages"] += 1
        out["with_message"] += any("Failed to initialize model" in m for m in console)
        out["rejoined"] += page.evaluate("() => window.__dpexploreRejoined || 0")
    finally:
        ctx.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline-ref", default="main", help="git commit of the baseline (default main)")
    ap.add_argument("--notebook", default="demo.ipynb")
    ap.add_argument("--pages", type=int, default=5)
    ap.add_argument("--busy-ms", type=int, default=0)
    ap.add_argument("--busy-models", type=int, default=99)
    ap.add_argument("--burners", type=int, default=0)
    ap.add_argument("--cpu-throttle", type=float, default=1.0)
    ap.add_argument("--step-timeout", type=float, default=15.0)
    ap.add_argument("--load-timeout", type=float, default=90.0)
    args = ap.parse_args()

    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    from playwright.sync_api import sync_playwright

    base = archive(args.baseline_ref)
    burners: list[subprocess.Popen] = []
    load_before = os.getloadavg()
    results = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox", "--disable-gpu"]
            )
            servers = {}
            try:
                checkouts = ((f"baseline {args.baseline_ref}", base), ("this checkout", REPO))
                for name, code in checkouts:
                    servers[name] = Server(root=notebooks_root(code, [args.notebook]), code=code)
                    results[name] = {
                        "pages": 0,
                        "not_loaded": 0,
                        "with_message": 0,
                        "stale": 0,
                        "rejoined": 0,
                        "load_s": [],
                    }
                for server in servers.values():
                    server.wait(pools=1)
                burners = [
                    subprocess.Popen(["nice", "-n", "19", "timeout", "110", sys.executable, "-c", "while True: pass"])
                    for _ in range(args.burners)
                ]
                for _ in range(args.pages):  # in turn: both checkouts see the same load
                    for name, server in servers.items():
                        measure_page(browser, server, args.notebook, args, results[name])
            finally:
                for server in servers.values():
                    server.stop()
            browser.close()
    finally:
        for p in burners:
            with contextlib.suppress(ProcessLookupError):
                p.terminate()
            p.wait()
        shutil.rmtree(base, ignore_errors=True)
    load_after = os.getloadavg()

    print(
        f"{args.notebook}: {args.pages} pages per checkout, busy {args.busy_ms} ms at each of "
        f"the first {args.busy_models} ESM imports, {args.burners} nice-19 burners, CPU throttle "
        f"{args.cpu_throttle:g}"
    )
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} (1 min)")
    ref = results[f"baseline {args.baseline_ref}"]
    for name, r in results.items():
        ratio = (r["stale"] / ref["stale"]) if ref["stale"] else float("nan")
        print(
            f"{name:<24} loaded {r['pages']:>3}  not loaded {r['not_loaded']:>3}  "
            f"anywidget message {r['with_message']:>3}  "
            f"stale after a key press {r['stale']:>3} (ratio to baseline {ratio:.2f})  "
            f"models rejoined {r['rejoined']:>3}  load s {r['load_s']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
