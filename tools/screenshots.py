"""Screenshots of every app in ``dpexplore.apps.APPS``, at 1280×720 and 1920×1080, before and
after moving each visible slider (two arrow-key steps), in headless Debian Chromium.

Usage::

    python tools/screenshots.py OUTDIR [--apps demo.ipynb ...] [--sizes 1280x720 1920x1080]
                                       [--present] [--url http://127.0.0.1:PORT/]

Without ``--url`` it starts ``dpexplore serve`` on a free port (and stops it at the end). Files:
``OUTDIR/<app>-<W>x<H>-0-loaded.png``, ``…-<n>-<slider label>.png`` after slider n, and with
``--present`` the same in presentation mode (``present=1``). Viewport screenshots (what a
projector shows, no scrolling); ``--full`` adds a full-page one per app and size.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "browser"))
from pagejs import CHROMIUM, CHROMIUM_ARGS  # noqa: E402  (the browser tests' Chromium)

ALL_PLOTS_DRAWN = """() => {
  const g = [...document.querySelectorAll('.dpexplore-plot')].filter(d => d.offsetParent !== null);
  return g.length > 0 && g.every(d => d.classList.contains('js-plotly-plot') && d.data && d.data.length > 0);
}"""
VISIBLE_SLIDERS = """() => [...document.querySelectorAll('.widget-slider')].filter(
  s => s.offsetParent !== null && !s.querySelector('[disabled]') && !s.classList.contains('mod-disabled'))
  .map(s => (s.querySelector('.widget-label') || {}).innerText || '')"""


def app_notebooks() -> list[str]:
    from dpexplore.apps import APPS

    out = []
    for a in APPS:
        nb = getattr(a, "notebook", None) or (a[0] if isinstance(a, (tuple, list)) else str(a))
        out.append(nb if nb.endswith(".ipynb") else nb + ".ipynb")
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server() -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpexplore.cli", "serve", "--no-browser", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        cwd=str(REPO),
    )
    base = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "dpexplore/static/plotly.min.js", timeout=5):
                return proc, base
        except OSError:
            time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGTERM)
    raise RuntimeError("dpexplore serve did not answer")


def settle(page, rounds: int = 30) -> None:
    last = None
    for _ in range(rounds):
        now = page.evaluate(
            "() => [...document.querySelectorAll('.dpexplore-plot')].map(d => d.dataset.revision).join()"
        )
        if now == last:
            return
        last = now
        page.wait_for_timeout(250)


def shoot(
    browser, base: str, nb: str, size: tuple[int, int], out: pathlib.Path, present: bool, full: bool
) -> list[str]:
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = ctx.new_page()
    stem = f"{nb.removesuffix('.ipynb')}-{size[0]}x{size[1]}" + ("-present" if present else "")
    written = []
    try:
        page.goto(f"{base}voila/render/{nb}" + ("?present=1" if present else ""))
        page.wait_for_function(ALL_PLOTS_DRAWN, timeout=90_000)
        settle(page)
        f = out / f"{stem}-0-loaded.png"
        page.screenshot(path=str(f))
        written.append(f.name)
        if full:
            f = out / f"{stem}-full.png"
            page.screenshot(path=str(f), full_page=True)
            written.append(f.name)
        labels = page.evaluate(VISIBLE_SLIDERS)
        for i, label in enumerate(labels, 1):
            sliders = page.locator(".widget-slider").filter(has=page.locator(".widget-label", has_text=label))
            handle = sliders.first.locator(".noUi-handle")
            if not handle.is_visible():
                continue
            handle.focus()
            handle.press("ArrowRight")
            handle.press("ArrowRight")
            page.wait_for_timeout(300)
            settle(page)
            safe = re.sub(r"[^\w.-]+", "_", label.encode("ascii", "replace").decode())[:20] or "slider"
            f = out / f"{stem}-{i}-{safe}.png"
            page.screenshot(path=str(f))
            written.append(f.name)
    finally:
        ctx.close()
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", type=pathlib.Path)
    ap.add_argument("--apps", nargs="*", help="notebook names (default: every app in APPS)")
    ap.add_argument("--sizes", nargs="*", default=["1280x720", "1920x1080"])
    ap.add_argument("--present", action="store_true", help="also in presentation mode (present=1)")
    ap.add_argument("--full", action="store_true", help="also a full-page screenshot")
    ap.add_argument("--url", help="base URL of a running dpexplore serve")
    args = ap.parse_args(argv)
    args.outdir.mkdir(parents=True, exist_ok=True)
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes]
    apps = args.apps or app_notebooks()
    proc = None
    base = args.url
    if base is None:
        proc, base = start_server()
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    from playwright.sync_api import sync_playwright

    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                for nb in apps:
                    for size in sizes:
                        for present in [False, True] if args.present else [False]:
                            names = shoot(browser, base, nb, size, args.outdir, present, args.full)
                            print(f"{nb} {size[0]}x{size[1]}{' present' if present else ''}: {len(names)} screenshots")
            finally:
                browser.close()
    finally:
        if proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=15)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(proc.pid, signal.SIGKILL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
