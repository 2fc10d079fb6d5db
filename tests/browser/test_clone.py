"""Pages cloned from a dashboard's first rendered page (dpexplore.voila.clone), end to end.

A page of a dashboard is served as a copy of its first rendered page on a kernel forked with the
app already built: the copy must differ from the reference only by its kernel id, and its kernel
must answer every slider move in the browser as a rendered page's does (that such kernels draw
random numbers of their own is tests/voila/test_forkserver.py's part). At the default pool size a
dashboard keeps no kernel at rest. When the template dies, the reference is dropped, the next page
is rendered as usual and works, and the pages are cloned again from the new template's.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import urllib.request

import psutil
import pytest

from conftest import REPO, Dashboard, Server, free_port, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

APP = "demo.ipynb"
KERNEL_ID = re.compile(r'"kernelId": "([0-9a-f-]{36})"')


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("clone_root")
    shutil.copy(REPO / "notebooks" / APP, root / APP)
    log = tmp_path_factory.mktemp("clone_log") / "serve.log"
    s = Server(free_port(), root=root, log_path=log, extra_args=["--cull-idle-timeout", "120"])
    try:
        s.wait_ready(pools=1)
        assert wait_until(lambda: f"pages of {APP} are cloned" in s.log(), 120), s.log()[-3000:]
        yield s
    finally:
        s.stop()


def _get(server) -> str:
    with urllib.request.urlopen(server.url(APP), timeout=60) as r:
        assert r.status == 200
        return r.read().decode()


def _template(server) -> psutil.Process:
    return next(
        p for p in psutil.Process(server.proc.pid).children() if "dpexplore.voila.forkserver" in " ".join(p.cmdline())
    )


def test_a_dashboard_keeps_no_kernel_at_rest(server):
    """At the default pool size the kernel that rendered the page to copy is shut down: a
    dashboard costs no memory until a page is opened (each page gets a clone made for it)."""
    assert wait_until(lambda: not server.kernels(), 60), server.kernels()


def test_a_clone_is_the_page_with_its_own_kernel(server):
    pages = [_get(server) for _ in range(3)]  # the pool's page, then clones
    ids = [KERNEL_ID.findall(p) for p in pages]
    assert all(len(i) == 1 for i in ids) and len({i[0] for i in ids}) == 3
    same = {p.replace(i[0], "KERNEL") for p, i in zip(pages, ids)}
    assert len(same) == 1  # nothing else differs
    assert "application/vnd.jupyter.widget-view+json" in pages[0]
    forks = [p.pid for p in _template(server).children()]
    # the kernels of the clones are children of the template (forked), not new interpreters
    kernels = [
        p
        for p in psutil.Process(server.proc.pid).children(recursive=True)
        if "ipykernel_launcher" in " ".join(p.cmdline())
    ]
    assert len([k for k in kernels if k.pid in forks]) >= 2


def _page_follows_eps(server, browser, eps: str, quiet: bool = True) -> None:
    """A page of the app in Chromium redraws when ε is typed (``quiet``: and shows no message
    or traceback)."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        app = Dashboard(ctx.new_page(), server.url(APP), server)
        before = app.plots()
        app.set_slider("ε", eps)
        assert app.plots() != before
        if quiet:
            app.assert_no_traceback()
            assert app.message() == ""
    finally:
        ctx.close()


def test_a_cloned_page_answers_its_sliders_in_the_browser(server, browser):
    # the first test took the reference page (the pool's first): this one is a clone, from the
    # pool's refill or made for the page
    _page_follows_eps(server, browser, "2")


def test_a_page_after_the_template_died_is_rendered_and_works(server, browser):
    tpl = _template(server)
    os.kill(tpl.pid, signal.SIGKILL)
    assert wait_until(lambda: not tpl.is_running() or tpl.status() == psutil.STATUS_ZOMBIE, 10)
    _get(server)  # the pool's page (rendered before) or a page rendered anew
    _page_follows_eps(server, browser, "3", quiet=False)
    assert "is rendered anew (its kernel template is gone)" in server.log()
    # and the pages are cloned again, from the new template's first rendered page
    assert wait_until(lambda: "cloned from one rendered page (template generation 2)" in server.log(), 120), (
        server.log()[-3000:]
    )
