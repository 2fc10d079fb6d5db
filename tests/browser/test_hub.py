"""JupyterHub for real (issue 11): the hub of ``deploy/jupyterhub_config.py`` (the file
docs/hosting.md gives), configurable-http-proxy from npm (``make hub-setup``), a dummy
authenticator, local spawner, everything on 127.0.0.1, and jupyterhub-idle-culler as a service.

Three users log in, each opens the demo app through the hub URL, its plots draw and follow a
slider; then the culler (90 s timeout here) stops the idle servers.
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from conftest import REPO, free_port

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CONFIG = REPO / "deploy" / "jupyterhub_config.py"
CHP = REPO / "deploy" / "node" / "node_modules" / ".bin" / "configurable-http-proxy"
USERS = ["ada", "bob", "cy"]
CULL = 90  # s: the three servers outlive the three logins, then the culler stops them


def _hub_setup() -> None:
    """The project's own set-up step (Makefile ``hub-setup``): jupyterhub and the proxy."""
    if not CHP.exists() or shutil.which("jupyterhub", path=str(pathlib.Path(sys.executable).parent)) is None:
        subprocess.run(["make", "hub-setup", f"PY={sys.executable}"], cwd=REPO, check=True,
                       timeout=900)


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    _hub_setup()
    state = tmp_path_factory.mktemp("hub")
    port = free_port()
    env = dict(os.environ, DPEXPLORE_HUB_PORT=str(port), DPEXPLORE_HUB_API_PORT=str(free_port()),
               DPEXPLORE_CHP_API_PORT=str(free_port()), DPEXPLORE_HUB_DIR=str(state),
               DPEXPLORE_HUB_CULL_TIMEOUT=str(CULL), DPEXPLORE_HUB_CULL_EVERY="5")
    log = open(state / "hub.log", "w")
    exe = pathlib.Path(sys.executable).parent / "jupyterhub"
    proc = subprocess.Popen([str(exe), "-f", str(CONFIG)], cwd=state, env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "hub/login", timeout=5) as r:
                if r.status == 200:
                    break
        except Exception:  # noqa: BLE001
            time.sleep(0.5)
    else:
        raise RuntimeError((state / "hub.log").read_text())
    yield base, state
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    log.close()


def test_three_students_through_the_hub_and_the_culler(hub, browser):
    # The suite's one Chromium (a second sync_playwright() inside the same session is refused).
    base, state = hub
    contexts = []
    try:
        for user in USERS:
            ctx = browser.new_context()
            contexts.append(ctx)
            page = ctx.new_page()
            page.goto(base + "hub/login", timeout=60_000)
            page.fill("input[name=username]", user)
            page.fill("input[name=password]", "x")
            page.click("[type=submit]")
            page.wait_for_url(f"**/user/{user}/**", timeout=180_000)
            page.goto(base + f"user/{user}/voila/render/demo.ipynb", timeout=180_000)
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=180_000)
            before = page.evaluate(
                "JSON.stringify([...document.querySelectorAll('.js-plotly-plot')]"
                ".map(p => (p.data || []).map(t => t.y)))")
            handle = page.locator(".widget-slider .noUi-handle, .widget-slider .ui-slider-handle").first
            handle.focus()
            for _ in range(3):
                page.keyboard.press("ArrowRight")
            page.wait_for_function(
                "b => JSON.stringify([...document.querySelectorAll('.js-plotly-plot')]"
                ".map(p => (p.data || []).map(t => t.y))) !== b", arg=before, timeout=60_000)
        running = _singleusers(state)
    finally:
        for ctx in contexts:
            ctx.close()
    assert len(running) == 3, running  # one single-user server per student
    deadline = time.monotonic() + CULL + 90
    while _singleusers(state) and time.monotonic() < deadline:
        time.sleep(2)
    assert not _singleusers(state), "the idle culler did not stop the idle servers"
    log = (state / "hub.log").read_text()
    assert all(f"Culling server {u}" in log for u in USERS), "servers stopped, but not by the culler"


def _singleusers(state) -> list[int]:
    """Pids of the hub's single-user servers of USERS (their HOME is under the hub's state)."""
    import psutil

    out = []
    for p in psutil.process_iter(["cmdline"]):
        if "jupyterhub.singleuser" in " ".join(p.info["cmdline"] or []):
            try:
                env = p.environ()
            except psutil.Error:
                continue
            if env.get("JUPYTERHUB_USER") in USERS and str(state) in env.get("HOME", ""):
                out.append(p.pid)
    return out
