"""Browser benchmark of the dashboards served by ``dpexplore serve`` (headless Debian Chromium).

For every app in ``dpexplore.apps.APPS`` it measures

* **first plot**: navigation → every plot on screen drawn with traces (noted in the page every
  10 ms, by one rule for every checkout), in a fresh browser context (cold HTTP cache; ``--loads``
  times) and again in the same context (warm cache). A load counts only once every plot of the
  page has traces, closed tabs' too; that time is printed beside it;
* **websocket bytes** received until that first complete plot (Playwright ``framereceived``);
* **slider step latency**: keydown on a slider handle → a plot redrawn (``Plotly.react`` resolved),
  timed inside the page with ``performance.now()``; ``--steps`` steps per slider (half right, half
  left), median and p95 over all sliders of the page a visitor can move (visible and enabled:
  hidden per-mechanism sliders and composition_explorer's δ slider, disabled while "δ = 0" is
  ticked, never redraw, and were the "steps without a redraw" of earlier runs), split into
  **kernel** (keydown → new traces in the page) and **draw** (``Plotly.react``); and **all**:
  keydown → the last of the plots that the step changes is redrawn (a step that changes three
  plots is complete for the viewer only then; the goal is stated for "a plot", step50/step95).
  Steps come ~4 per second (each waits for its redraws, then 150 ms of quiet): the dashboards
  compute the next slider step in the background between steps (``controls.PREFETCHER``), so most
  steps read the cache; ``--no-prefetch`` measures every step computing its own setting.

Goals (the named baselines; ratio = measured / goal, ≤ 1 meets it): first plot ≤ 2.5 s,
keydown → every visible plot redrawn ("all") median ≤ 60 ms and p95 ≤ 150 ms (a plot: median
≤ 50 ms), websocket bytes to first plot ≤ 2 MB per page.

**Plot sizes**: pages are opened at 1280×720 (a projector), where the app shell sizes the plots;
every visible plot's height is recorded after the load and after the steps. A run whose plots
changed height (> 5 %), went missing (fewer plots drawn, or one shorter than 200 px) or stayed
stale (a change from the kernel arrived after the plot's last redraw) is flagged in the "sizes"
column and the script exits with status 1: step times taken on shrunken plots mean nothing.

``--compare-figurewidget`` also measures, once, the demo drawn with plotly's own ``FigureWidget``.

**Same-run baselines**: ``--baseline-ref REF`` (repeatable) also serves the apps of git commit
REF (checked out in a temporary worktree, one server per checkout, each on copies of the measured
apps' notebooks) and measures every app on every checkout in turn, then prints each figure with
its ratio to the first REF's: the load of the machine is the same for both sides of a ratio.

Usage::

    python benchmarks/bench_browser.py [--loads 3] [--steps 30] [--apps demo.ipynb ...]
        [--baseline-ref 4c18bd1^ --baseline-ref a5a361e]

Results are printed and written to ``benchmarks/results/bench_browser.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[1]
GOALS = {
    "first_plot_s": 2.5,
    "step_median_ms": 50.0,
    "step_p95_ms": 150.0,
    "ws_mb": 2.0,
    "step_all_median_ms": 60.0,
    "step_all_p95_ms": 150.0,
}
#: the viewport of every page (a projector): plots are measured at the size the app shell gives them
VIEWPORT = {"width": 1280, "height": 720}
#: a plot whose height changes by more than this fraction over the steps is flagged
HEIGHT_TOLERANCE = 0.05
#: a visible plot shorter than this is flagged (the bug this guards against flattened them to 120)
MIN_PLOT_PX = 200

# Every visible plot's height, whether it is drawn with traces, and whether a change from the
# kernel arrived after its last draw (stale: data the viewer never saw).
PLOT_STATE = """() => [...document.querySelectorAll('.dpexplore-plot')].filter(d => d.offsetParent !== null)
  .map(d => ({height: Math.round(d.getBoundingClientRect().height),
              drawn: d.classList.contains('js-plotly-plot') && !!d.data && d.data.length > 0,
              stale: Number(d.dataset.changeAt || 0) > Number(d.dataset.drawEnd || 0)}))"""

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "browser"))
from pagejs import ALL_PLOTS_HAVE_TRACES, CHROMIUM, CHROMIUM_ARGS  # noqa: E402  (the browser tests' rule and browser)


# The slider handles a visitor can move: visible (not display:none, e.g. profile_gdp shows only
# the selected mechanism's sliders) and enabled (composition_explorer's δ slider is disabled while
# "δ = 0 per step" is ticked). Stepping the others never redraws anything: they were the "steps
# without a redraw" of earlier runs.
USABLE_HANDLES = """() => [...document.querySelectorAll('.widget-slider')].filter(
  s => s.offsetParent !== null && !s.querySelector('[disabled]') &&
       !s.classList.contains('mod-disabled') &&
       !(s.querySelector('.noUi-target') || s).hasAttribute('disabled')
).map(s => s.querySelector('.noUi-handle')).filter(Boolean)"""

# Steps one slider in the page; resolves to a list of [total, kernel, draw] latencies (ms) or null.
# A step counts as done when any dpexplore plot's revision increases (its Plotly.react resolved);
# "kernel" is keydown → the new traces arrived in the page (plotwidget.js marks data-change-at),
# "draw" the Plotly.react time of the plot that finished last (data-draw-start/-end).
STEP_JS = (
    """async ([idx, n, timeoutMs]) => {
  const handle = (%s)()[idx];
  const plots = [...document.querySelectorAll('.dpexplore-plot')];
  const out = [];
  for (let i = 0; i < n; i++) {
    const key = i < n / 2 ? 'ArrowRight' : 'ArrowLeft';
    const before = plots.map(p => Number(p.dataset.revision));
    const done = new Promise((resolve) => {
      const check = () => plots.some((p, j) => Number(p.dataset.revision) > before[j]);
      const obs = new MutationObserver(() => { if (check()) { obs.disconnect(); resolve(true); } });
      plots.forEach(p => obs.observe(p, {attributes: true, attributeFilter: ['data-revision']}));
      setTimeout(() => { obs.disconnect(); resolve(false); }, timeoutMs);
    });
    const t0 = performance.now();
    handle.dispatchEvent(new KeyboardEvent('keydown', {key, code: key, bubbles: true, cancelable: true}));
    const ok = await done;
    if (!ok) { out.push(null); } else {
      const t1 = performance.now();
      const drawn = plots.filter((p, j) => Number(p.dataset.revision) > before[j]);
      const arrived = Math.min(...drawn.map(p => Number(p.dataset.changeAt)));
      const draw = Math.max(...drawn.map(p => Number(p.dataset.drawEnd) - Number(p.dataset.drawStart)));
      // then wait until no plot has redrawn for 150 ms: the last redraw of this step ends "all"
      let revs = plots.map(p => p.dataset.revision);
      for (let quiet = 0; quiet < 3;) {
        await new Promise(r => setTimeout(r, 50));
        const now = plots.map(p => p.dataset.revision);
        quiet = now.every((r, j) => r === revs[j]) ? quiet + 1 : 0;
        revs = now;
      }
      const changed = plots.filter((p, j) => Number(p.dataset.revision) > before[j]);
      const all = Math.max(...changed.map(p => Number(p.dataset.drawEnd))) - t0;
      out.push([t1 - t0, arrived - t0, draw, all]);
    }
    await new Promise(r => setTimeout(r, 30));
  }
  return out;
}"""
    % USABLE_HANDLES
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``dpexplore serve`` of the code in ``code`` (this checkout, or a baseline's: its package
    first on the server's and its kernels' import path) on the notebooks in ``root``."""

    def __init__(self, root: pathlib.Path | None = None, code: pathlib.Path = REPO):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}/"
        self.log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)
        cmd = [sys.executable, "-m", "dpexplore.cli", "serve", "--no-browser", "--port", str(self.port)]
        if root is not None:
            cmd += ["--root", str(root)]
        env = dict(os.environ)
        if code != REPO:
            env["PYTHONPATH"] = str(code) + os.pathsep + env.get("PYTHONPATH", "")
        self.proc = subprocess.Popen(
            cmd, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True, cwd=str(code), env=env
        )
        self.opened: dict[str, int] = {}

    def wait(self, pools: int, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("dpexplore serve exited: " + pathlib.Path(self.log.name).read_text())
            try:
                with urllib.request.urlopen(self.base + "dpexplore/static/plotly.min.js", timeout=5):
                    break
            except OSError:
                time.sleep(0.3)
        while time.monotonic() < deadline:
            if pathlib.Path(self.log.name).read_text().count("is filled with") >= pools:
                return
            time.sleep(0.3)

    def url(self, notebook: str) -> str:
        return f"{self.base}voila/render/{notebook}"

    def wait_pool(self, notebook: str, timeout: float = 60.0) -> None:
        """Wait until Voila's preheated pool of ``notebook`` is full again (pages opened so far
        each took one kernel: the pool has been filled 1 + that many times) and the server is
        idle. Voila logs "is filled" when the new kernel has STARTED, before it has executed the
        notebook (seconds of CPU): a page opened then waits for that execution or shares the
        CPU with it, which is the startup or refill of the server, not the page load."""
        want = 1 + self.opened.get(notebook, 0)
        needle = f"Kernel pool of {notebook} is filled"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if pathlib.Path(self.log.name).read_text().count(needle) >= want:
                break
            time.sleep(0.2)
        self.wait_quiet(deadline - time.monotonic())

    def wait_quiet(self, timeout: float = 60.0, cpu_percent: float = 10.0) -> None:
        """Wait until the server and its kernels together use under ``cpu_percent`` % of one CPU
        in two consecutive 0.5 s samples (or ``timeout`` passes)."""
        import psutil

        deadline = time.monotonic() + max(timeout, 1.0)
        quiet = 0
        while time.monotonic() < deadline and quiet < 2:
            try:
                root = psutil.Process(self.proc.pid)
                procs = [root] + root.children(recursive=True)
                for pr in procs:
                    pr.cpu_percent(None)
                time.sleep(0.5)
                busy = 0.0
                for pr in procs:
                    with contextlib.suppress(psutil.Error):
                        busy += pr.cpu_percent(None)
            except psutil.Error:
                busy = 100.0
            quiet = quiet + 1 if busy < cpu_percent else 0

    def opened_page(self, notebook: str) -> None:
        self.opened[notebook] = self.opened.get(notebook, 0) + 1

    def stop(self) -> None:
        if self.log.closed:
            return
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        self.log.close()
        os.unlink(self.log.name)


def checkout(ref: str) -> pathlib.Path:
    """The code of git commit ``ref`` in a temporary worktree (removed by :func:`drop_checkout`),
    with the generated static files that git does not hold copied from this checkout."""
    path = pathlib.Path(tempfile.mkdtemp(prefix="bench_browser_ref_"))
    subprocess.run(["git", "worktree", "add", "--detach", str(path), ref], cwd=REPO, check=True, capture_output=True)
    static = REPO / "dpexplore" / "ui" / "static"
    for f in static.iterdir():
        if f.is_file() and not (path / "dpexplore" / "ui" / "static" / f.name).exists():
            shutil.copy(f, path / "dpexplore" / "ui" / "static" / f.name)
    return path


def drop_checkout(path: pathlib.Path) -> None:
    subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=REPO, capture_output=True)
    shutil.rmtree(path, ignore_errors=True)


def notebooks_root(code: pathlib.Path, apps: list[str]) -> pathlib.Path:
    """A folder with only the measured apps' notebooks of the checkout ``code`` (each server
    preheats a kernel pool per notebook: two or three servers of all of them overran the CPU)."""
    root = pathlib.Path(tempfile.mkdtemp(prefix="bench_browser_nb_"))
    for nb in apps:
        shutil.copy(code / "notebooks" / nb, root / nb)
    return root


def _say(*a) -> None:
    print(time.strftime("%H:%M:%S"), *a, file=sys.stderr, flush=True)


# Installed in every measured page before its own scripts: notes, every 10 ms, the moment each
# plot first has traces (`_benchDrawnAt`, ms since navigation start), by one rule for every
# checkout. Cheap: no layout is read while the page loads.
DRAWN_AT_INIT = """(() => {
  const note = () => { for (const d of document.querySelectorAll('.dpexplore-plot'))
    if (!d._benchDrawnAt && d.classList.contains('js-plotly-plot') && d.data && d.data.length > 0 &&
        d.data.every(t => t.x && t.x.length > 0)) d._benchDrawnAt = performance.now(); };
  const iv = setInterval(note, 10);
  window.__benchStopNoting = () => { note(); clearInterval(iv); };
})()"""
# After every plot of the page is drawn: when the plots on screen were all drawn, and when every
# plot was (closed tabs' plots included)
DRAWN_AT = """() => { window.__benchStopNoting();
  const g = [...document.querySelectorAll('.dpexplore-plot')];
  const at = (l) => Math.max(...l.map(d => d._benchDrawnAt || Infinity));
  return [at(g.filter(d => d.offsetParent !== null)), at(g), g.filter(d => d.offsetParent !== null).length]; }"""


def _load(page, url: str) -> tuple[float, int, float]:
    """Navigate; wait until every plot of the page has traces (closed tabs' too: a page that never
    completes fails here). Return (seconds from navigation to the plots on screen all drawn,
    websocket bytes received until every plot was drawn, seconds until every plot was drawn)."""
    page.add_init_script(DRAWN_AT_INIT)
    received = [0]
    counting = [True]

    def on_ws(ws):
        def on_frame(payload):
            if counting[0]:
                received[0] += len(payload.encode("utf-8") if isinstance(payload, str) else payload)

        ws.on("framereceived", on_frame)

    page.on("websocket", on_ws)
    page.goto(url)
    page.wait_for_function(ALL_PLOTS_HAVE_TRACES, timeout=120_000, polling=10)
    counting[0] = False
    shown_ms, all_ms, n_shown = page.evaluate(DRAWN_AT)
    if not n_shown or shown_ms == float("inf"):
        raise RuntimeError(f"{url}: no plot on screen, or one never drawn ({n_shown} on screen)")
    return shown_ms / 1000, received[0], all_ms / 1000


def _pct(values, q):
    v = sorted(values)
    if not v:
        return float("nan")
    k = (len(v) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def bench_app(browser, server: Server, notebook: str, loads: int, steps: int) -> dict:
    url = server.url(notebook)
    cold, ws, cold_all = [], [], []
    warm = None
    lat: list[float] = []
    kernel: list[float] = []  # keydown → new traces in the page
    draw: list[float] = []  # Plotly.react
    every: list[float] = []  # keydown → the LAST plot that this step redraws is drawn
    missed = 0
    hidden_only = 0  # sliders whose steps redraw only plots in closed tabs
    for i in range(loads):
        server.wait_pool(notebook)  # measure what a visitor meets on a server that is not overrun
        ctx = browser.new_context(viewport=VIEWPORT)
        page = ctx.new_page()
        dt, nbytes, dt_all = _load(page, url)
        _say(
            f"{notebook}: cold load {i + 1}: {dt:.2f} s (every plot, closed tabs' too: {dt_all:.2f} s), "
            f"{nbytes / 1e6:.3f} MB over websockets"
        )
        server.opened_page(notebook)
        cold.append(dt)
        cold_all.append(dt_all)
        ws.append(nbytes)
        if i == 0:
            page.wait_for_timeout(500)
            sizes_before = page.evaluate(PLOT_STATE)
            n_sliders = page.evaluate(f"() => ({USABLE_HANDLES})().length")
            for s in range(n_sliders):
                # a slider that changes only plots in a closed tab (composition explorer's ε_T:
                # the noise plot) redraws nothing visible: those plots catch up when shown
                probe = page.evaluate(STEP_JS, [s, 1, 5000])
                if probe == [None]:
                    _say(f"{notebook}: slider {s}: no visible plot redraws (it changes plots in a closed tab); skipped")
                    hidden_only += 1
                    continue
                res = page.evaluate(STEP_JS, [s, steps, 5000])
                ok = [x for x in res if x is not None]
                lat += [x[0] for x in ok]
                kernel += [x[1] for x in ok]
                draw += [x[2] for x in ok]
                every += [x[3] for x in ok]
                missed += len(res) - len(ok)
                med = [statistics.median([x[j] for x in ok]) if ok else float("nan") for j in range(3)]
                _say(
                    f"{notebook}: slider {s}: {len(res)} steps, median {med[0]:.1f} ms "
                    f"(kernel {med[1]:.1f}, draw {med[2]:.1f}), {len(res) - len(ok)} without a redraw"
                )
            page.wait_for_timeout(1000)  # let the last redraws land
            sizes_after = page.evaluate(PLOT_STATE)
            flags = _size_flags(sizes_before, sizes_after)
            _say(
                f"{notebook}: plot heights {[p['height'] for p in sizes_before]} -> "
                f"{[p['height'] for p in sizes_after]}: {', '.join(flags) or 'ok'}"
            )
            server.wait_pool(notebook)
            page2 = ctx.new_page()
            warm, _, _ = _load(page2, url)
            server.opened_page(notebook)
        ctx.close()
    return {
        "app": notebook,
        "first_plot_s": statistics.median(cold),
        "first_plot_s_all": cold,
        "every_plot_s_all": cold_all,
        "first_plot_warm_s": warm,
        "ws_mb": statistics.median(ws) / 1e6,
        "step_median_ms": statistics.median(lat) if lat else float("nan"),
        "step_p95_ms": _pct(lat, 0.95),
        "step_kernel_median_ms": statistics.median(kernel) if kernel else float("nan"),
        "step_draw_median_ms": statistics.median(draw) if draw else float("nan"),
        "step_all_median_ms": statistics.median(every) if every else float("nan"),
        "step_all_p95_ms": _pct(every, 0.95),
        "steps": len(lat),
        "steps_without_redraw": missed,
        "sliders_changing_only_hidden_plots": hidden_only,
        "heights_before": [p["height"] for p in sizes_before],
        "heights_after": [p["height"] for p in sizes_after],
        "size_flags": flags,
    }


def _size_flags(before: list[dict], after: list[dict]) -> list[str]:
    """What is wrong with the plots after the steps: changed size, missing, stale."""
    flags = []
    if len(after) < len(before) or not all(p["drawn"] for p in after):
        flags.append(f"missing ({sum(p['drawn'] for p in after)} of {len(before)} drawn)")
    short = [p["height"] for p in before + after if p["height"] < MIN_PLOT_PX]
    if short:
        flags.append(f"short ({short} px < {MIN_PLOT_PX})")
    changed = [
        (a["height"], b["height"])
        for a, b in zip(before, after)
        if abs(b["height"] - a["height"]) > HEIGHT_TOLERANCE * max(a["height"], 1)
    ]
    if changed:
        flags.append(f"changed size {changed}")
    stale = [j for j, p in enumerate(after) if p["stale"]]
    if stale:
        flags.append(f"stale plots {stale}")
    return flags


FIGUREWIDGET_NB = """
import numpy as np, plotly.graph_objects as go, ipywidgets as W
from dpexplore.accounting.profiles import GaussianDPProfile
x = np.linspace(0, 10, 201)
fig = go.FigureWidget(data=[go.Scatter(x=x, y=GaussianDPProfile(1.0).delta(x))],
                      layout={"yaxis": {"type": "log"}})
mu = W.FloatSlider(value=1.0, min=0.1, max=10.0, step=0.05, description="μ")
def _upd(change):
    fig.data[0].y = GaussianDPProfile(mu.value).delta(x)
mu.observe(_upd, names="value")
W.VBox([mu, fig])
"""


def bench_figurewidget(browser, loads: int) -> dict:
    """The same curve with plotly's FigureWidget, for comparison (first plot and bytes only)."""
    import nbformat

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="dpx-fw-"))
    nb = nbformat.v4.new_notebook(
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    )
    nb.cells = [nbformat.v4.new_code_cell(FIGUREWIDGET_NB)]
    nbformat.write(nb, tmp / "fw.ipynb")
    nbformat.write(nbformat.v4.new_notebook(), tmp / "index.ipynb")
    server = Server(root=tmp)
    try:
        server.wait(pools=2)
        cold, ws = [], []
        for _ in range(loads):
            server.wait_pool("fw.ipynb")
            ctx = browser.new_context()
            page = ctx.new_page()
            received = [0]

            def on_ws(w):
                w.on(
                    "framereceived",
                    lambda p: received.__setitem__(0, received[0] + len(p.encode() if isinstance(p, str) else p)),
                )

            page.on("websocket", on_ws)
            t0 = time.perf_counter()
            page.goto(f"{server.base}voila/render/fw.ipynb")
            page.wait_for_function(
                """() => { const g = [...document.querySelectorAll('.js-plotly-plot')];
                return g.length > 0 && g.every(d => d.data && d.data.length && d.data[0].x && d.data[0].x.length); }""",
                timeout=180_000,
                polling=10,
            )
            cold.append(time.perf_counter() - t0)
            server.opened_page("fw.ipynb")
            ws.append(received[0])
            ctx.close()
        return {
            "app": "FigureWidget (plotly) demo",
            "first_plot_s": statistics.median(cold),
            "first_plot_s_all": cold,
            "ws_mb": statistics.median(ws) / 1e6,
        }
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def _row(r: dict) -> str:
    if "error" in r:
        return f"{r['app']:<28} FAILED: {r['error']}"

    def ratio(key):
        v = r.get(key)
        return "   —  " if v is None or v != v else f"{v / GOALS[key]:6.2f}"

    def num(key, fmt):
        v = r.get(key)
        return "—" if v is None or v != v else format(v, fmt)

    return (
        f"{r['app']:<28} {num('first_plot_s', '6.2f'):>7} {ratio('first_plot_s')} "
        f"{num('first_plot_warm_s', '6.2f'):>7} {num('ws_mb', '6.3f'):>7} {ratio('ws_mb')} "
        f"{num('step_median_ms', '6.1f'):>7} {ratio('step_median_ms')} "
        f"{num('step_p95_ms', '6.1f'):>7} {ratio('step_p95_ms')} "
        f"{num('step_kernel_median_ms', '6.1f'):>7} {num('step_draw_median_ms', '6.1f'):>7} "
        f"{num('step_all_median_ms', '6.1f'):>7} {num('step_all_p95_ms', '6.1f'):>7} "
        f"{ratio('step_all_median_ms')} {ratio('step_all_p95_ms')} "
        f"{num('steps_without_redraw', 'd'):>6}  "
        + (
            "—"
            if "size_flags" not in r
            else "; ".join(r["size_flags"]) or "ok " + "/".join(map(str, r.get("heights_after", [])))
        )
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--loads", type=int, default=3, help="cold page loads per app (default 3)")
    ap.add_argument("--steps", type=int, default=30, help="slider steps per slider (default 30)")
    ap.add_argument("--apps", nargs="*", help="notebooks to measure (default: all of APPS)")
    ap.add_argument(
        "--no-prefetch",
        action="store_true",
        help="serve with DPEXPLORE_PREFETCH=0: every step computes its setting (the "
        "dashboards otherwise compute the next slider step in the background)",
    )
    ap.add_argument(
        "--compare-figurewidget",
        action="store_true",
        help="also measure the demo curve drawn with plotly's FigureWidget",
    )
    ap.add_argument(
        "--baseline-ref",
        action="append",
        default=[],
        metavar="REF",
        help="also measure the apps of git commit REF (a temporary worktree, its own "
        "server), app by app in turn with this checkout's, in the same run; "
        "ratios against it are printed (repeatable)",
    )
    args = ap.parse_args(argv)
    if not os.path.exists(CHROMIUM):
        print(f"{CHROMIUM} is missing (make chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    from dpexplore.apps import APPS

    apps = args.apps or [nb for nb, _, _ in APPS]
    n_nb = len(list((REPO / "notebooks").glob("*.ipynb")))
    results = []
    if args.no_prefetch:
        os.environ["DPEXPLORE_PREFETCH"] = "0"  # inherited by the server and its kernels
    # a SIGTERM (e.g. from `timeout`) must still stop the server in the finally below
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.baseline_ref:
        return compare(args, apps)
    server = Server()
    try:
        _say(f"starting dpexplore serve on port {server.port} ({n_nb} notebooks to preheat)")
        server.wait(pools=n_nb)
        _say("server ready")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for nb in apps:
                try:
                    results.append(bench_app(browser, server, nb, args.loads, args.steps))
                except Exception as exc:  # keep measuring the other apps; report the failure
                    results.append({"app": nb, "error": f"{type(exc).__name__}: {str(exc)[:200]}"})
            server.stop()
            if args.compare_figurewidget:
                try:
                    results.append(bench_figurewidget(browser, args.loads))
                except Exception as exc:
                    results.append(
                        {"app": "FigureWidget (plotly) demo", "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
                    )
            browser.close()
    finally:
        server.stop()
    head = (
        f"{'app':<28} {'first':>7} {'/2.5s':>6} {'warm':>7} {'ws MB':>7} {'/2MB':>6} "
        f"{'step50':>7} {'/50ms':>6} {'step95':>7} {'/150ms':>6} {'kernel':>7} {'draw':>7} "
        f"{'all50':>7} {'all95':>7} {'/60ms':>6} {'/150ms':>6} {'missed':>6}  sizes (px)"
    )
    print(
        f"goals: first plot <= {GOALS['first_plot_s']} s, step median <= {GOALS['step_median_ms']} ms, "
        f"p95 <= {GOALS['step_p95_ms']} ms, websocket <= {GOALS['ws_mb']} MB (ratio = measured/goal); "
        "kernel = step median keydown → traces in the page, draw = median Plotly.react, "
        "all50/all95 = keydown → the last plot the step changes is redrawn, "
        "missed = steps without a redraw in 5 s; sizes: 'ok' and the visible plots' heights at "
        f"{VIEWPORT['width']}x{VIEWPORT['height']}, or what changed (size, missing, stale plots)"
    )
    load = os.getloadavg()
    print(
        f"machine: {os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} "
        f"(times are inflated when the load exceeds the CPU count); background prefetch of the "
        f"next slider step: {'off' if args.no_prefetch else 'on'}"
    )
    print(head)
    print("-" * len(head))
    for r in results:
        print(_row(r))
    flagged = _write(results, args)
    if flagged:
        print(f"FLAGGED (plot sizes changed, plots missing or stale, or the app failed): {flagged}")
        return 1
    return 0


#: the figures that a baseline comparison prints, as (key, label)
COMPARED = [
    ("first_plot_s", "first plot s"),
    ("step_all_median_ms", "all50 ms"),
    ("step_all_p95_ms", "all95 ms"),
    ("step_kernel_median_ms", "kernel ms"),
    ("step_draw_median_ms", "draw ms"),
]


def compare(args, apps: list[str]) -> int:
    """This checkout against ``--baseline-ref`` commits in the same run: one server per checkout
    (on copies of the measured apps' notebooks), the apps measured one after the other on every
    server in turn (the order rotated from app to app, so that none is always first after a
    pause), then per app and figure the value of each and its ratio to the first baseline."""
    from playwright.sync_api import sync_playwright

    names = ["this checkout", *args.baseline_ref]
    codes = {"this checkout": REPO}
    servers, roots, results = {}, [], []
    try:
        for ref in args.baseline_ref:
            codes[ref] = checkout(ref)
        for name in names:
            roots.append(notebooks_root(codes[name], apps))
            servers[name] = Server(roots[-1], code=codes[name])
        for name, server in servers.items():
            _say(f"{name}: dpexplore serve on port {server.port} ({len(apps)} notebooks to preheat)")
            server.wait(pools=len(apps))
        _say("servers ready")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for i, nb in enumerate(apps):
                for name in names[i % len(names) :] + names[: i % len(names)]:
                    for other in servers.values():
                        other.wait_quiet(30)
                    try:
                        r = bench_app(browser, servers[name], nb, args.loads, args.steps)
                    except Exception as exc:  # keep measuring; report the failure
                        r = {"app": nb, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
                    r["code"] = name
                    results.append(r)
            browser.close()
    finally:
        for server in servers.values():
            server.stop()
        for ref in args.baseline_ref:
            if ref in codes:
                drop_checkout(codes[ref])
        for root in roots:
            shutil.rmtree(root, ignore_errors=True)
    load = os.getloadavg()
    base = args.baseline_ref[0]
    print(
        f"goals: first plot <= {GOALS['first_plot_s']} s, all50 <= {GOALS['step_all_median_ms']} ms, "
        f"all95 <= {GOALS['step_all_p95_ms']} ms; ratio = value / value of {base} (same run); "
        f"machine: {os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; "
        f"prefetch {'off' if args.no_prefetch else 'on'}"
    )
    by = {(r["app"], r["code"]): r for r in results}
    for nb in apps:
        print(nb)
        for name in names:
            r = by[(nb, name)]
            if "error" in r:
                print(f"  {name:<16} FAILED: {r['error']}")
                continue
            b = by[(nb, base)]
            cells = []
            for key, label in COMPARED:
                v, v0 = r.get(key), b.get(key)
                ratio = f"{v / v0:5.2f}x" if v is not None and v0 and v == v and v0 == v0 else "   —  "
                cells.append(f"{label} {v:7.2f} ({ratio})" if v is not None and v == v else f"{label} —")
            flags = "; ".join(r.get("size_flags", [])) or "sizes ok"
            print(f"  {name:<16} " + "  ".join(cells) + f"  {flags}")
    flagged = _write(results, args)
    return 1 if flagged else 0


def _write(results: list[dict], args) -> list[str]:
    """Write the results to ``benchmarks/results/bench_browser.json``; the apps flagged."""
    out = REPO / "benchmarks" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_browser.json").write_text(
        json.dumps(
            {
                "goals": GOALS,
                "loadavg": os.getloadavg(),
                "cpus": os.cpu_count(),
                "prefetch": not args.no_prefetch,
                "baseline_refs": args.baseline_ref,
                "results": results,
            },
            indent=2,
        )
    )
    return [r["app"] for r in results if r.get("size_flags") or "error" in r]


if __name__ == "__main__":
    sys.exit(main())
