"""No blank page when the machine is busy (issue 22): a kernel whose output reaches the server late.

The cause, provoked here on purpose: Voilà's pool runs each app's notebook in a pre-heated kernel
with nbclient, which takes a cell as done at its ``execute_reply`` and then waited only 4 s
(``iopub_timeout``) for the cell's output on the IOPub channel; on a busy machine the output came
later, nbclient went on without it, and the pooled kernel was handed to a visitor with a page that
shows nothing, for ever. On a quiet machine the output is never that late, so the tests make it
late: an IPython startup file (``IPYTHONDIR``, inherited by every kernel of the server) holds the
IOPub output of chosen kernels back for :data:`DELAY` s from their first output
(``display_data`` or ``execute_result``: the app) on, while the cell's ``execute_reply`` goes out
at once (as it does when a busy server reads the IOPub messages late), or drops their outputs. Every kernel that holds its output claims one of a fixed number of
slots (a file created with ``O_EXCL``), so the tests know how many kernels it hit.

* ``test_busy_pool_fill_serves_no_blank_page``: the pool fills while two CPU-bound processes run,
  and the first pooled kernel of every app (the one each page gets) holds its output past nbclient's
  default wait: every app page draws, none on a reload. Before the fix (and without
  ``--fill-slots``, which did not exist) the first page, rdp_explorer, came up blank:
  ``widgets: 0, outputs: 0``, after ``Timeout waiting for IOPub output`` in the server log.
* ``test_a_page_without_output_says_so_and_recovers``: without a pool, the page's own kernel drops
  its output: the page says so, reloads itself with a fresh kernel, and draws.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import PAGE_STATE, Server, free_port

pytestmark = pytest.mark.browser

#: seconds a chosen kernel holds its IOPub output: past nbclient's default wait (4 s)
DELAY = 6

HOOK = r"""
def _install():   # closures only: the kernel's user namespace is not a module's globals
    import os
    import threading

    folder, slots = os.environ["DPEXPLORE_TEST_SLOTS_DIR"], int(os.environ["DPEXPLORE_TEST_SLOTS"])
    mode = os.environ.get("DPEXPLORE_TEST_IOPUB", "")
    if not mode or (os.environ.get("VOILA_PREHEAT") == "True") != (mode == "delay"):
        return
    for i in range(slots):   # claim a slot, or leave this kernel alone
        try:
            os.close(os.open(os.path.join(folder, f"slot-{i}"), os.O_CREAT | os.O_EXCL))
            break
        except FileExistsError:
            continue
    else:
        return
    from ipykernel import iostream

    send = iostream.IOPubThread._really_send
    state = {"seen": False, "held": None}   # held: the messages kept back, in order

    def release(thread):
        held, state["held"] = state["held"], None
        for msg, args, kwargs in held:
            send(thread, msg, *args, **kwargs)

    def really_send(self, msg, *args, **kwargs):
        if state["held"] is not None:
            state["held"].append((msg, args, kwargs))
            return None
        output = any(isinstance(p, bytes) and (b'"msg_type": "display_data"' in p
                                               or b'"msg_type": "execute_result"' in p)
                     for p in msg[:8])
        if output and mode == "drop":
            return None   # every output of this kernel is lost
        if output and not state["seen"]:
            state["seen"] = True
            # keep this output and every IOPub message after it back (the IOPub thread stays
            # free: the cell's execute_reply goes out at once, as on a busy server)
            state["held"] = [(msg, args, kwargs)]
            threading.Timer(float(os.environ["DPEXPLORE_TEST_DELAY"]),
                            lambda: self.schedule(lambda: release(self))).start()
            return None
        return send(self, msg, *args, **kwargs)

    iostream.IOPubThread._really_send = really_send


_install()
del _install
"""

DRAWN = """() => { const g = [...document.querySelectorAll('.js-plotly-plot')];
  return g.length > 0 && g.some(d => d.getBoundingClientRect().height > 150 && d.data && d.data.length); }"""
NAVIGATION = "() => performance.getEntriesByType('navigation')[0].type"


def _hooked_env(tmp_path, mode: str, slots: int) -> dict:
    ipython = tmp_path / "ipython"
    (ipython / "profile_default" / "startup").mkdir(parents=True)
    (ipython / "profile_default" / "startup" / "00-late-iopub.py").write_text(HOOK)
    (tmp_path / "slots").mkdir()
    return {
        "IPYTHONDIR": str(ipython),
        "DPEXPLORE_TEST_IOPUB": mode,
        "DPEXPLORE_TEST_SLOTS": str(slots),
        "DPEXPLORE_TEST_SLOTS_DIR": str(tmp_path / "slots"),
        "DPEXPLORE_TEST_DELAY": str(DELAY),
    }


def _draws(page, url: str, server, what: str) -> None:
    page.goto(url)
    _drawn(page, server, what)


def _drawn(page, server, what: str) -> None:
    try:
        page.wait_for_function(DRAWN, timeout=120_000)
    except Exception as exc:  # noqa: BLE001
        raise AssertionError(
            f"{what}: no plot drawn; page: {page.evaluate(PAGE_STATE)}\nserver log: {server.log()[-3000:]}"
        ) from exc
    assert "Traceback" not in page.inner_text("body"), what


def test_busy_pool_fill_serves_no_blank_page(browser, tmp_path):
    from dpexplore.apps import APPS

    env = _hooked_env(tmp_path, "delay", slots=len(APPS) + 1)  # + the gallery's kernel
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    # four fills at once (the default is one per two cores: each held kernel would hold its
    # place for DELAY s, and the test would take minutes)
    server = Server(free_port(), log_path=tmp_path / "serve.log", env=env, extra_args=["--fill-slots", "4"])
    try:
        server.wait_ready(timeout=180, pools=len(APPS) + 1)  # every app and the gallery
        for b in burners:
            b.kill()
        ctx = browser.new_context(viewport={"width": 1200, "height": 900})
        page = ctx.new_page()
        for nb, _, _ in APPS:
            _draws(page, server.url(nb), server, nb)
            # drawn on its first load: not after the page's own retry
            assert page.evaluate(NAVIGATION) == "navigate", nb
            assert page.query_selector("#dpexplore-lost-output") is None, nb
        ctx.close()
        held = sorted(p.name for p in (tmp_path / "slots").iterdir())
        assert len(held) == len(APPS) + 1, held  # every page's pooled kernel held its output
        assert "Timeout waiting for IOPub output" not in server.log()
        assert "without its output" not in server.log()
    finally:
        for b in burners:
            b.kill()
            b.wait()
        server.stop()


def test_a_page_without_output_says_so_and_recovers(browser, tmp_path):
    env = _hooked_env(tmp_path, "drop", slots=1)
    server = Server(free_port(), log_path=tmp_path / "serve.log", env=env, extra_args=["--pool-size", "0"])
    try:
        server.wait_ready(timeout=120)
        ctx = browser.new_context(viewport={"width": 1200, "height": 900})
        page = ctx.new_page()
        console: list[str] = []
        page.on("console", lambda m: console.append(m.text))
        page.goto(server.url("rdp_explorer.ipynb"))
        banner = page.wait_for_function(
            "() => { const b = document.getElementById('dpexplore-lost-output'); return b && b.textContent; }",
            timeout=120_000,
        ).json_value()
        assert "without its dashboard" in banner and "Retrying" in banner, banner
        _drawn(page, server, "after the retry")  # the reload, with a fresh kernel
        assert page.evaluate(NAVIGATION) == "reload"
        assert page.query_selector("#dpexplore-lost-output") is None
        assert "Traceback" not in page.inner_text("body")
        assert len(list((tmp_path / "slots").iterdir())) == 1  # the first kernel dropped its output
        assert "rendered without its output (no code cell has an output)" in server.log()
        assert any("the page has no output" in c for c in console), console
        ctx.close()
    finally:
        server.stop()
