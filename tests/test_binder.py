"""Binder: ``binder/`` follows repo2docker's conventions and really serves the gallery (issue 5).

The slow test does what repo2docker does, in a FRESH virtual environment: ``pip install -r
binder/requirements.txt``, runs ``binder/postBuild`` from the repository root (HOME in a temporary
folder: the Jupyter config it writes stays there), then starts the Jupyter server the way Binder does
(``jupyter server``, Voilà as its server extension, the URL Binder opens being
``voila/render/notebooks/index.ipynb``) and fetches the gallery and one dashboard. pip's cache is
used (the pinned wheels are the ones the development venv was installed from).
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
BINDER = REPO / "binder"
GALLERY_URLPATH = "voila/render/notebooks/index.ipynb"


def test_binder_files_follow_repo2docker_conventions():
    assert {p.name for p in BINDER.iterdir()} >= {"requirements.txt", "postBuild", "runtime.txt"}
    assert os.access(BINDER / "postBuild", os.X_OK), "postBuild must be executable"
    assert (BINDER / "postBuild").read_text().startswith("#!/")
    runtime = (BINDER / "runtime.txt").read_text().strip()
    assert re.fullmatch(r"python-3\.\d+", runtime)
    reqs = [
        l.strip() for l in (BINDER / "requirements.txt").read_text().splitlines() if l.strip() and not l.startswith("#")
    ]
    names = {re.split(r"[=<>!~ \[]", r)[0].lower() for r in reqs}
    assert {"voila", "ipywidgets", "plotly", "anywidget", "numpy", "scipy", "ipykernel"} <= names
    assert all("==" in r for r in reqs), "Binder builds should be reproducible: pin versions"
    assert not any(r.startswith("-e") for r in reqs)  # repo2docker: the package comes via postBuild


def test_binder_pins_match_the_installed_versions():
    from importlib.metadata import version

    for line in (BINDER / "requirements.txt").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, pin = line.split("==")
            assert version(name) == pin, f"binder pins {name}=={pin}, dev venv has {version(name)}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_binder_build_serves_the_gallery(tmp_path):
    venv = tmp_path / "venv"
    home = tmp_path / "home"
    home.mkdir()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    env = dict(
        os.environ,
        HOME=str(home),
        PATH=f"{venv / 'bin'}:{os.environ['PATH']}",
        PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR", str(pathlib.Path.home() / ".cache/pip")),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PYDEVD_DISABLE_FILE_VALIDATION="1",
    )
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONPATH", None)
    env.pop("JUPYTER_CONFIG_DIR", None)
    # repo2docker: requirements.txt, then postBuild, both from the repository root (a copy here, so
    # `pip install .` does not leave build/ or *.egg-info in the checkout)
    src = tmp_path / "repo"
    shutil.copytree(
        REPO,
        src,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "__pycache__", "*.egg-info", "build", ".pytest_cache", ".hypothesis", "results"
        ),
    )
    r = subprocess.run(
        [str(py), "-m", "pip", "install", "-q", "-r", "binder/requirements.txt"],
        cwd=src,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run(["bash", "binder/postBuild"], cwd=src, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-3000:])
    cfg = home / ".jupyter" / "jupyter_server_config.json"
    assert cfg.is_file()
    # the package is a real install (not the dev checkout), and the extension is enabled
    r = subprocess.run(
        [str(py), "-c", "import dpexplore, sys; print(dpexplore.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert str(venv) in r.stdout, r.stdout + r.stderr

    port = _free_port()
    log = open(tmp_path / "server.log", "w")
    # Binder's start: a Jupyter server in the repository root, Voila as its server extension
    cmd = [
        str(venv / "bin" / "jupyter"),
        "server",
        "--no-browser",
        f"--port={port}",
        "--ServerApp.ip=127.0.0.1",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
    ]
    if os.geteuid() == 0:  # containers here run as root (Binder does not)
        cmd.append("--allow-root")
    proc = subprocess.Popen(cmd, cwd=src, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 120
        status, body = None, ""
        while time.monotonic() < deadline:
            assert proc.poll() is None, (tmp_path / "server.log").read_text()[-3000:]
            try:
                with urllib.request.urlopen(base + GALLERY_URLPATH, timeout=120) as resp:
                    status, body = resp.status, resp.read().decode()
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(1)
        assert status == 200, (tmp_path / "server.log").read_text()[-3000:]
        # the gallery is an HTML widget: its text is in the page's widget state (JSON-escaped)
        assert "rdp_explorer.ipynb" in body, body[:2000]
        assert "Rényi DP explorer" in body or "R\\u00e9nyi DP explorer" in body
        assert "Traceback" not in body
        # plotly.js from the server extension installed by postBuild
        with urllib.request.urlopen(base + "dpexplore/static/plotly.min.js", timeout=60) as resp:
            assert resp.status == 200 and len(resp.read()) > 1_000_000
        # one dashboard renders through the Binder route too
        with urllib.request.urlopen(base + "voila/render/notebooks/demo.ipynb", timeout=180) as resp:
            page = resp.read().decode()
        assert resp.status == 200 and "kernelId" in page and "Traceback" not in page
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        log.close()
