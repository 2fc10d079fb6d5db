"""Each app notebook is named after its module, and the old page URLs of the renamed ones redirect
to the new ones with their query string (``dpexplore serve``, the server extension of Binder and
the hub's lab, the hub's apps-only server), without a browser."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import types
import urllib.error
import urllib.request

import pytest
from aio import run_coroutine

from dpexplore.apps import APPS
from dpexplore.cli import default_root
from dpexplore.voila import RENAMED, renamed_redirects

NB_DIR = default_root()
IMPORT = re.compile(r"from dpexplore\.apps\.(\w+) import build_(\w+)")


@pytest.mark.parametrize("notebook", [nb for nb, _, _ in APPS])
def test_notebook_is_named_after_its_module(notebook):
    source = "".join("".join(c["source"]) for c in json.loads((NB_DIR / notebook).read_text())["cells"])
    module, _ = IMPORT.search(source).groups()
    assert notebook == f"{module}.ipynb"


def test_renamed_notebooks_are_gone_and_their_new_names_are_apps():
    names = {nb for nb, _, _ in APPS}
    assert set(RENAMED.values()) <= names
    assert not any((NB_DIR / old).exists() for old in RENAMED)


def test_no_redirect_over_a_notebook_of_ones_own(tmp_path):
    (tmp_path / "notebooks").mkdir()
    for folder in (tmp_path, tmp_path / "notebooks"):
        (folder / "group_privacy_lab.ipynb").write_text("{}")
    (tmp_path / "group_privacy.ipynb").write_text("{}")  # hers, under the old name
    routes = {r[0]: r[2]["target"] for r in renamed_redirects("/", tmp_path)}
    assert routes == {
        r"/voila/render/notebooks/group_privacy\.ipynb": "/voila/render/notebooks/group_privacy_lab.ipynb"
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def _get(url: str):
    """(status, Location) of ``url``, redirects not followed."""
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(url, timeout=10) as r:
            return r.status, r.headers.get("Location")
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Location")


def test_dpexplore_serve_redirects_old_urls_with_their_query(tmp_path):
    port = _free_port()
    base = f"http://127.0.0.1:{port}/course/"
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dpexplore.cli",
            "serve",
            "--no-browser",
            "--port",
            str(port),
            "--base-url",
            "/course/",
            "--pool-size",
            "0",
            "--no-fork",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if _get(base)[0] == 302:
                    break
            except OSError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "serve.log").read_text()[-3000:]
            time.sleep(0.3)
        for old, new in RENAMED.items():
            status, location = _get(f"{base}voila/render/{old}?eps=0.5&k=10")
            assert (status, location) == (301, f"/course/voila/render/{new}?eps=0.5&k=10")
        assert _get(f"{base}voila/render/auditing_lab.ipynb") == (301, "/course/voila/render/audit_lab.ipynb")
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()


def test_server_extension_and_apps_only_server_redirect_old_urls(tmp_path):
    """The routes the ``dpexplore.voila`` extension adds (Binder: the repository's ``notebooks/``)
    answer the old URL, and the apps-only server's route check lets them through."""
    from tornado.httpclient import AsyncHTTPClient
    from tornado.httpserver import HTTPServer
    from tornado.web import Application

    from dpexplore.voila import apps_only, extension

    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "mechanisms_lab.ipynb").write_text("{}")

    async def run():
        web_app = Application(base_url="/user/ann/")
        server = types.SimpleNamespace(
            web_app=web_app, root_dir=str(tmp_path), log=types.SimpleNamespace(info=lambda *a: None)
        )
        extension._load_jupyter_server_extension(server)
        apps_only.restrict_routes(web_app)
        port = _free_port()
        http = HTTPServer(web_app)
        http.listen(port, "127.0.0.1")
        try:
            url = f"http://127.0.0.1:{port}/user/ann/voila/render/notebooks/mechanisms_in_action.ipynb?seed=7"
            r = await AsyncHTTPClient().fetch(url, follow_redirects=False, raise_error=False)
            other = await AsyncHTTPClient().fetch(f"http://127.0.0.1:{port}/user/ann/api/contents", raise_error=False)
            return r.code, r.headers.get("Location"), other.code
        finally:
            http.stop()

    assert run_coroutine(run()) == (301, "/user/ann/voila/render/notebooks/mechanisms_lab.ipynb?seed=7", 404)
