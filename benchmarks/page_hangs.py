"""Hunt for page loads that never show their plots (served by ``dpexplore serve``, headless Chromium).

Each round opens every app like ``bench_browser.py`` does: a cold load in a fresh browser context,
``--steps`` slider steps on it, then a second ("warm") load in the same context with the first page
still open. A load counts as hung when its plots have no traces after ``--timeout`` seconds; then
the page state (plots, errors, widget count, text), its console and the end of the server log are
printed.

The hang it was written to find (2 of ~40 loads in a full benchmark run, and the browser tests'
reruns) was the idle culler shutting down a kernel Voilà had just handed to the page, before the
page's websocket connected: a pooled kernel keeps the idle clock of its notebook run, and only the
pool protects it from the culler. It needed a pooled kernel that had idled past
``cull_idle_timeout`` (60 s), which this loop's quick rounds never left; ``--idle`` waits that
long before each cold load. ``dpexplore.voila._protect_handed_out_kernels`` fixes it (the hand-out
resets the idle clock), and ``tests/browser/test_hardening.py`` reproduces it without a browser.

Usage::

    python benchmarks/page_hangs.py [--rounds 3] [--steps 10] [--timeout 25] [--idle 75] [--apps a.ipynb ...]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_browser import ALL_PLOTS_HAVE_TRACES, CHROMIUM, CHROMIUM_ARGS, STEP_JS, Server  # noqa: E402

PAGE_STATE = """() => ({
  plots: [...document.querySelectorAll('.dpexplore-plot')].map(d => ({
    revision: d.dataset.revision, error: d.dataset.error, drawn: d.classList.contains('js-plotly-plot'),
    traces: d.data ? d.data.length : null,
    empty: d.data ? d.data.filter(t => !t.x || !t.x.length).map(t => t.name) : null})),
  plotly: typeof window.Plotly, widgets: document.querySelectorAll('.jupyter-widgets').length,
  text: document.body.innerText.slice(0, 400)})"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10, help="slider steps between the two loads")
    ap.add_argument("--timeout", type=float, default=25.0, help="seconds before a load counts as hung")
    ap.add_argument("--apps", nargs="*", help="notebooks (default: all of APPS)")
    ap.add_argument(
        "--idle",
        type=float,
        default=0.0,
        help="seconds to wait before each cold load, so the pooled kernel idles (default 0)",
    )
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    from dpexplore.apps import APPS

    apps = args.apps or [nb for nb, _, _ in APPS]
    server = Server()
    hung = total = 0

    def load(page, app, tag, logs) -> bool:
        nonlocal hung, total
        total += 1
        t0 = time.perf_counter()
        page.goto(server.url(app))
        try:
            page.wait_for_function(ALL_PLOTS_HAVE_TRACES, timeout=args.timeout * 1000, polling=50)
            print(f"{app} {tag}: {time.perf_counter() - t0:.2f} s", flush=True)
            return True
        except Exception:  # noqa: BLE001 - a hang is what we are looking for
            hung += 1
            print(f"{app} {tag}: HUNG", json.dumps(page.evaluate(PAGE_STATE))[:2000], flush=True)
            print("   console:\n   " + "\n   ".join(logs[-40:]), flush=True)
            print("   server log:\n" + pathlib.Path(server.log.name).read_text()[-2500:], flush=True)
            return False

    try:
        server.wait(pools=len(list((pathlib.Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))))
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for _ in range(args.rounds):
                for app in apps:
                    server.wait_pool(app)
                    time.sleep(args.idle)
                    ctx = browser.new_context(viewport={"width": 1200, "height": 1000})
                    logs: list[str] = []
                    ctx.on("console", lambda m: logs.append(f"{m.type}: {m.text[:300]}"))
                    page = ctx.new_page()
                    page.on("pageerror", lambda e: logs.append(f"pageerror: {str(e)[:300]}"))
                    ok = load(page, app, "cold", logs)
                    server.opened_page(app)
                    if ok:
                        page.evaluate(STEP_JS, [0, args.steps, 3000])
                        server.wait_pool(app)
                        load(ctx.new_page(), app, "warm", logs)
                        server.opened_page(app)
                    ctx.close()
            browser.close()
    finally:
        server.stop()
    print(f"hung: {hung} of {total} loads")
    return 1 if hung else 0


if __name__ == "__main__":
    sys.exit(main())
