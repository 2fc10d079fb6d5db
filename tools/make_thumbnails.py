"""Draw the gallery's pictures: one small JPEG per app in ``dpexplore/apps/thumbnails/``.

Starts ``dpexplore serve`` on a free port, opens every app of ``dpexplore.apps.APPS`` in Debian's
Chromium at 1280×720 (what a projector shows), waits until every plot on the page has drawn, and
saves the first screen at 0.4× scale (512×288, JPEG quality 70: ~10–25 kB each; the gallery
inlines them). Re-run it when an app changes what it looks like::

    .venv/bin/python tools/make_thumbnails.py [--apps demo.ipynb ...]
"""

from __future__ import annotations

import argparse
import pathlib
import socket
import subprocess
import sys
import time
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "browser"))
from pagejs import CHROMIUM, CHROMIUM_ARGS  # noqa: E402  (the browser tests' Chromium)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_http(url: str, timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"make_thumbnails: {url} did not answer within {timeout:.0f} s")


def main(argv=None) -> int:
    from playwright.sync_api import sync_playwright

    from dpexplore.apps import APPS, thumbnail_path

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apps", nargs="*", help="notebooks (default: every app in APPS)")
    a = ap.parse_args(argv)
    names = a.apps or [nb for nb, _, _ in APPS]
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "dpexplore.cli", "serve", "--no-browser", "--port", str(port), "--pool-size", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}/voila/render/"
        _wait_http(base + "index.ipynb")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            ctx = browser.new_context(viewport={"width": 1280, "height": 720}, device_scale_factor=0.4)
            for nb in names:
                page = ctx.new_page()
                page.goto(base + nb, timeout=120_000)
                page.wait_for_function(
                    "() => { const d = [...document.querySelectorAll('.dpexplore-plot')];"
                    " return d.length > 0 && d.every(x => x.querySelector('.main-svg') ||"
                    " x.offsetParent === null); }",
                    timeout=120_000,
                )
                page.wait_for_timeout(800)  # let the last redraw and fonts settle
                out = thumbnail_path(nb)
                out.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(out), type="jpeg", quality=70)
                print(f"{out.relative_to(REPO)}: {out.stat().st_size / 1000:.1f} kB", flush=True)
                page.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
