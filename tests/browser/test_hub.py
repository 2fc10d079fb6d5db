"""JupyterHub for real: the two configurations of ``deploy/jupyterhub_config.py`` (the file
docs/hosting.md gives), configurable-http-proxy from npm (``make hub-setup``), a dummy
authenticator, everything on 127.0.0.1, jupyterhub-idle-culler as a service, the hub as root.

One hub per configuration (module-scoped), two students each:

* ``apps`` (the class): alice and bob open an app through the hub, its plots draw and follow a
  slider; their servers and kernels run as the unprivileged account of the configuration, never
  root. As alice: JupyterLab, the tree, the contents, kernels, sessions, terminals and files APIs
  answer 403/404, starting a kernel is refused, and no ``execute_request`` (on the page's own
  kernel websocket, or on bob's kernel id, or on any other) runs code (a marker file that any
  code run would create stays absent); her cookies open nothing of bob's server; the hub's files
  are 0600 and the account cannot read them; the idle culler then stops both servers.
* ``lab`` (the practitioners' course): alice and bob get JupyterLab in system accounts created
  by the hub (homes 0700); each opens an app (the copy in ``~/apps``) through the hub and its
  plots follow a slider; alice's own code runs as alice and cannot read the file bob's server
  wrote in his home, the hub's cookie secret or its database; her cookies open nothing of bob's.
"""
from __future__ import annotations

import json
import os
import pathlib
import pwd
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
import urllib.request
import uuid

import pytest

from conftest import REPO, free_port
from dpexplore.voila.wire import decode_frame as kernel_message
from test_hardening import _msg  # a kernel message as a page sends it

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CONFIG = REPO / "deploy" / "jupyterhub_config.py"
CHP = REPO / "deploy" / "node" / "node_modules" / ".bin" / "configurable-http-proxy"
CULL = 90  # s of inactivity before the culler stops a server (activity is reported every 5 s)
SUFFIX = secrets.token_hex(3)
#: everything a student's page is not: each must answer 403/404 on the apps-only server
NOT_SERVED = ["lab", "lab/tree/demo.ipynb", "tree", "tree/demo.ipynb", "api/contents",
              "api/contents/demo.ipynb", "api/kernels", "api/sessions", "api/kernelspecs",
              "api/terminals", "terminals/1", "files/demo.ipynb", "voila/files/demo.ipynb",
              "voila/api/contents", "nbconvert/html/demo.ipynb", "edit/demo.ipynb", "notebooks/demo.ipynb",
              "api/status", "api/me", "doc"]

pytestmark.append(pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                     reason="the hub switches users: it runs as root (as in CI)"))


def _hub_setup() -> None:
    """The project's own set-up step (Makefile ``hub-setup``): jupyterhub, the proxy, and the
    students' Python when the project's is not usable by other accounts."""
    usable = subprocess.run(["runuser", "-u", "nobody", "--", sys.executable, "-c", ""],
                            capture_output=True).returncode == 0
    if (not CHP.exists() or shutil.which("jupyterhub", path=str(pathlib.Path(sys.executable).parent)) is None
            or not (usable or _students_env() is not None)):
        subprocess.run(["make", "hub-setup", f"PY={sys.executable}"], cwd=REPO, check=True,
                       timeout=1200)


def _students_env():
    from dpexplore.hub import students_env

    return students_env(REPO / "deploy")


def _userdel(name: str) -> None:
    subprocess.run(["userdel", "--remove", name], capture_output=True)
    subprocess.run(["groupdel", name], capture_output=True)


class Hub:
    """``jupyterhub -f deploy/jupyterhub_config.py`` in its own process group and state folder."""

    def __init__(self, mode: str, **env):
        _hub_setup()
        self.mode = mode
        # a state folder any account may enter (as the current folder the docs start the hub in
        # may be): only the files' own modes keep the hub's secrets
        self.state = pathlib.Path(tempfile.mkdtemp(prefix=f"dpxt-hub-{mode}-"))
        self.state.chmod(0o755)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}/"
        full = dict(os.environ, DPEXPLORE_HUB_MODE=mode, DPEXPLORE_HUB_PORT=str(self.port),
                    DPEXPLORE_HUB_API_PORT=str(free_port()), DPEXPLORE_CHP_API_PORT=str(free_port()),
                    DPEXPLORE_HUB_DIR=str(self.state), DPEXPLORE_HUB_ACTIVITY_EVERY="5", **env)
        full.pop("DPEXPLORE_HUB_PASSWORD", None)
        self.log_path = self.state / "hub.log"
        self._log = open(self.log_path, "w")
        exe = pathlib.Path(sys.executable).parent / "jupyterhub"
        self.proc = subprocess.Popen([str(exe), "-f", str(CONFIG)], cwd=self.state, env=full,
                                     stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.base + "hub/login", timeout=5) as r:
                    if r.status == 200:
                        return
            except Exception:  # noqa: BLE001
                if self.proc.poll() is not None:
                    break
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(self.log())

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def servers(self) -> dict:
        """{hub user: psutil.Process} of the running single-user servers (the hub's children)."""
        from dpexplore.hub import single_user_servers

        return single_user_servers(self.proc.pid)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)  # the hub stops its users' servers first
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
                # a hub that does not stop in a minute is a bug (one CI run's lab hub did so
                # once); its log is deleted with its state below, so its end goes to the
                # warnings summary of the run, where the next occurrence can be read
                self._log.flush()
                warnings.warn(f"the {self.mode} hub did not stop within 60 s of SIGTERM; "
                              "the end of its log:\n" + self.log()[-6000:], RuntimeWarning)
        for p in self.servers_left():
            p.kill()
        self._log.close()
        shutil.rmtree(self.state, ignore_errors=True)

    def servers_left(self) -> list:
        import psutil

        return [p for p in psutil.process_iter(["cmdline"])
                if "jupyterhub.singleuser" in " ".join(p.info["cmdline"] or [])
                and str(self.port) in " ".join(p.info["cmdline"] or [])]


# -- what a student does ---------------------------------------------------------------------
TRACES_Y = ("JSON.stringify([...document.querySelectorAll('.js-plotly-plot')]"
            ".map(p => (p.data || []).map(t => t.y)))")


def login_and_open(browser, hub: Hub, user: str, app_path: str):
    """A new browser context: logs ``user`` in at the hub, waits for the server, opens the app
    ``/user/<user>/<app_path>`` and waits until its plots draw. Returns (context, page)."""
    ctx = browser.new_context(viewport={"width": 1200, "height": 1000})
    page = ctx.new_page()
    page.goto(hub.base + "hub/login", timeout=120_000)
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", "x")
    page.click("[type=submit]")
    page.wait_for_url(f"**/user/{user}/**", timeout=240_000)
    page.goto(hub.base + f"user/{user}/{app_path}", timeout=240_000)
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=240_000)
    return ctx, page


def students(browser, hub: Hub, users, app_path: str):
    """Yields {user: (context, page)} for ``users`` logged in with ``app_path`` open
    (:func:`login_and_open`); closes the contexts afterwards."""
    out = {}
    try:
        for user in users:
            out[user] = login_and_open(browser, hub, user, app_path)
        yield out
    finally:
        for ctx, _ in out.values():
            ctx.close()


def slider_moves_plots(page) -> None:
    before = page.evaluate(TRACES_Y)
    handle = page.locator(".widget-slider .noUi-handle, .widget-slider .ui-slider-handle").first
    handle.focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(f"b => {TRACES_Y} !== b", arg=before, timeout=90_000)
    assert page.evaluate(TRACES_Y) != before


def http_session(ctx):
    """A requests session holding the browser context's cookies (the hub's and the server's)."""
    import requests

    s = requests.Session()
    for c in ctx.cookies():
        s.cookies.set(c["name"], c["value"], domain=c["domain"], path=c["path"])
    return s


def xsrf_of(s, user: str) -> str:
    return next((c.value for c in s.cookies if c.name == "_xsrf" and c.path == f"/user/{user}/"), "")


def kernel_socket(hub: Hub, s, user: str, kernel_id: str):
    """The kernel websocket of ``kernel_id`` on ``user``'s server, opened with the cookies of
    session ``s`` and the headers a browser sends (legacy JSON protocol)."""
    import websocket

    path = f"/user/{user}/api/kernels/{kernel_id}/channels"
    cookie = "; ".join(f"{c.name}={c.value}" for c in s.cookies if path.startswith(c.path))
    url = f"ws://127.0.0.1:{hub.port}{path}?session_id={uuid.uuid4()}"
    return websocket.create_connection(url, timeout=30, header=[
        f"Cookie: {cookie}", "Sec-Fetch-Mode: websocket", "Sec-Fetch-Site: same-origin"],
        origin=hub.base.rstrip("/"))


def _execute(code: str) -> str:
    return _msg("execute_request", {"code": code, "silent": False, "store_history": False,
                                    "user_expressions": {}, "allow_stdin": False,
                                    "stop_on_error": True})


def receive(ws, until, timeout: float = 60.0, parent: str | None = None) -> list[dict]:
    """Messages received until one of type ``until`` (or one for which ``until(message)`` is
    true), or the timeout; with ``parent``, only the messages of that request."""
    import websocket

    done = until if callable(until) else (lambda m: m.get("msg_type") == until)
    got, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        ws.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            m = kernel_message(ws.recv())
        except websocket.WebSocketTimeoutException:
            break
        if parent is not None and m.get("parent_header", {}).get("msg_id") != parent:
            continue
        got.append(m)
        if done(m):
            break
    return got


def page_kernel_id(s, hub: Hub, user: str, app: str = "demo.ipynb") -> str:
    r = s.get(f"{hub.base}user/{user}/voila/render/{app}", timeout=240)
    assert r.status_code == 200, (r.status_code, r.url)
    m = re.search(r'"kernelId":\s*"([0-9a-f-]{36})"', r.text)
    assert m, "no kernelId in the rendered page"
    return m.group(1)


def assert_nothing_of_bobs(hub: Hub, s, bob: str) -> None:
    """Alice's cookies open nothing on bob's server: 403 or a redirect to a login, never 200.
    (The package's static assets, plotly.js and Voilà's scripts, are the same public files on
    every server, as on any Jupyter server.)"""
    for path in ["", "voila/render/demo.ipynb", "api/kernels", "api/contents", "lab"]:
        r = s.get(f"{hub.base}user/{bob}/{path}", allow_redirects=False, timeout=60)
        assert r.status_code in (302, 403, 404), (path, r.status_code)
        if r.status_code == 302:
            r2 = s.get(f"{hub.base}user/{bob}/{path}", timeout=60)  # followed to its end
            assert not (r2.status_code == 200 and f"/user/{bob}/" in r2.url), (path, r2.url)


# -- the class: apps only ----------------------------------------------------------------------
APPS_ACCOUNT = f"dpxt-apps-{SUFFIX}"


@pytest.fixture(scope="module")
def apps_hub():
    hub = Hub("apps", DPEXPLORE_HUB_APPS_USER=APPS_ACCOUNT, DPEXPLORE_HUB_CULL_TIMEOUT=str(CULL),
              DPEXPLORE_HUB_CULL_EVERY="5")
    try:
        yield hub
    finally:
        hub.stop()
        _userdel(APPS_ACCOUNT)


@pytest.fixture(scope="module")
def apps_students(apps_hub, browser):
    """alice and bob logged in, each with the demo app open and drawn: {name: (ctx, page)}."""
    yield from students(browser, apps_hub, ("alice", "bob"), "voila/render/demo.ipynb")


def test_apps_two_students_draw_and_follow_a_slider(apps_hub, apps_students):
    for user, (_, page) in apps_students.items():
        slider_moves_plots(page)
    account = pwd.getpwnam(APPS_ACCOUNT)
    assert account.pw_uid != 0
    servers = apps_hub.servers()
    assert sorted(servers) == ["alice", "bob"]  # one single-user server per student
    for user, proc in servers.items():
        kernels = [k for k in proc.children(recursive=True) if "ipykernel" in " ".join(k.cmdline())]
        assert kernels, f"{user}'s server holds no kernel"
        for p in [proc, *kernels]:  # never root: the configuration's unprivileged account
            assert p.uids().real == p.uids().effective == account.pw_uid, (user, p.cmdline())
        home = pathlib.Path(proc.environ()["HOME"])
        assert home.stat().st_uid == account.pw_uid and home.stat().st_mode & 0o777 == 0o700


def test_apps_student_gets_the_apps_and_nothing_more(apps_hub, apps_students):
    s = http_session(apps_students["alice"][0])
    assert s.get(f"{apps_hub.base}user/alice/voila/render/demo.ipynb", timeout=240).status_code == 200
    for path in NOT_SERVED:
        r = s.get(f"{apps_hub.base}user/alice/{path}", allow_redirects=False, timeout=60)
        assert r.status_code in (403, 404), (path, r.status_code, r.headers.get("location"))
        assert "Traceback" not in r.text
    headers = {"X-XSRFToken": xsrf_of(s, "alice"), "Content-Type": "application/json"}
    assert headers["X-XSRFToken"], "alice's server set no _xsrf cookie"
    for path, body in [("api/kernels", {"name": "python3"}),
                       ("api/sessions", {"path": "x.ipynb", "type": "notebook",
                                         "kernel": {"name": "python3"}}),
                       ("api/terminals", {}), ("api/contents", {"type": "file"})]:
        r = s.post(f"{apps_hub.base}user/alice/{path}", json=body, headers=headers,
                   allow_redirects=False, timeout=60)
        assert r.status_code in (403, 404), (path, r.status_code)
    assert_nothing_of_bobs(apps_hub, s, "bob")


def test_apps_no_message_runs_code(apps_hub, apps_students):
    import websocket

    marker_dir = pathlib.Path(tempfile.mkdtemp(prefix="dpxt-marker-"))
    marker_dir.chmod(0o777)  # the account could write here: only refusal keeps it empty
    try:
        s = http_session(apps_students["alice"][0])
        kernel_id = page_kernel_id(s, apps_hub, "alice")
        ws = kernel_socket(apps_hub, s, "alice", kernel_id)
        try:
            for i, kind in enumerate(["execute_request", "inspect_request", "complete_request",
                                      "history_request"]):
                code = f"open({str(marker_dir / f'pwned{i}')!r}, 'w').write('x')"
                ws.send(_execute(code).replace('"execute_request"', f'"{kind}"'))
            # control: the same socket reaches the kernel (allowed messages are answered)
            ws.send(_msg("comm_info_request", {"target_name": "jupyter.widget"}))
            got = receive(ws, "comm_info_reply")
            reply = [m for m in got if m.get("msg_type") == "comm_info_reply"]
            assert reply and len(reply[0]["content"]["comms"]) > 5  # the app's widget models
            got += receive(ws, "never", timeout=3)
        finally:
            ws.close()
        kinds = {m.get("msg_type") for m in got}
        assert not kinds & {"execute_reply", "execute_input", "stream", "inspect_reply",
                            "complete_reply", "history_reply", "error"}, kinds
        # bob's kernel (a real id) and a made-up one, through alice's server: no such kernel
        bob_kernel = page_kernel_id(http_session(apps_students["bob"][0]), apps_hub, "bob")
        for kid in (bob_kernel, str(uuid.uuid4())):
            with pytest.raises(websocket.WebSocketBadStatusException) as err:
                kernel_socket(apps_hub, s, "alice", kid)
            assert err.value.status_code in (403, 404)
        time.sleep(2)
        assert list(marker_dir.iterdir()) == [], "a message from alice's browser ran code"
    finally:
        shutil.rmtree(marker_dir, ignore_errors=True)


def test_apps_hub_files_private(apps_hub):
    env = _students_env()
    python = env / "bin" / "python" if env is not None else pathlib.Path(sys.executable)
    for name in ("jupyterhub_cookie_secret", "jupyterhub.sqlite", "jupyterhub-proxy.pid"):
        f = apps_hub.state / name
        st = f.stat()
        assert st.st_mode & 0o077 == 0 and st.st_uid == os.geteuid(), (name, oct(st.st_mode))
        # the students' account (what any code of theirs would run as) cannot read it
        r = subprocess.run(["runuser", "-u", APPS_ACCOUNT, "--", str(python), "-c",
                            f"open({str(f)!r}, 'rb').read(1)"], capture_output=True, text=True)
        assert r.returncode != 0 and "PermissionError" in r.stderr, (name, r.stderr[-300:])


def test_apps_idle_culler_stops_the_servers(apps_hub, apps_students):
    for ctx, _ in apps_students.values():
        ctx.close()
    deadline = time.monotonic() + CULL + 120
    while apps_hub.servers() and time.monotonic() < deadline:
        time.sleep(2)
    assert not apps_hub.servers(), "the idle culler did not stop the idle servers"
    log = apps_hub.log()
    assert all(f"Culling server {u}" in log for u in ("alice", "bob")), \
        "servers stopped, but not by the culler"


# -- the practitioners: JupyterLab per student account -----------------------------------------
ALICE, BOB = f"dpxt-alice-{SUFFIX}", f"dpxt-bob-{SUFFIX}"


@pytest.fixture(scope="module")
def lab_hub():
    hub = Hub("lab", DPEXPLORE_HUB_USERS=f"{ALICE},{BOB}")
    try:
        yield hub
    finally:
        hub.stop()
        for name in (ALICE, BOB):
            _userdel(name)


@pytest.fixture(scope="module")
def lab_students(lab_hub, browser):
    yield from students(browser, lab_hub, (ALICE, BOB), "voila/render/apps/demo.ipynb")


def test_lab_two_students_draw_and_follow_a_slider(lab_hub, lab_students):
    for user, (_, page) in lab_students.items():
        slider_moves_plots(page)
    servers = lab_hub.servers()
    assert sorted(servers) == sorted([ALICE, BOB])
    for user, proc in servers.items():
        entry = pwd.getpwnam(user)  # created by the hub at the first login
        assert entry.pw_uid >= 1000 and proc.uids().effective == entry.pw_uid
        assert os.stat(entry.pw_dir).st_mode & 0o777 == 0o700, user


def _until_idle(ws, msg_id: str, timeout: float) -> list[dict]:
    """The messages of request ``msg_id`` until the kernel reports it idle on IOPub. Its printed
    output travels on IOPub and its execute_reply on the shell channel, so the reply may come
    before the output (stopping at the reply once returned an empty output); the IOPub ``idle``
    status of the request comes after all of its output."""
    return receive(ws, lambda m: m.get("msg_type") == "status"
                   and m["content"].get("execution_state") == "idle", timeout, parent=msg_id)


def _run_as(hub: Hub, s, user: str, code: str) -> str:
    """Starts a kernel on ``user``'s server (as JupyterLab does), runs ``code`` there and
    returns what it printed."""
    r = s.get(f"{hub.base}user/{user}/lab", timeout=120)
    assert r.status_code == 200, "JupyterLab is the practitioners' interface"
    headers = {"X-XSRFToken": xsrf_of(s, user)}
    r = s.post(f"{hub.base}user/{user}/api/kernels", json={"name": "python3"}, headers=headers,
               timeout=120)
    assert r.status_code == 201, (r.status_code, r.text[:300])
    kernel_id = r.json()["id"]
    ws = kernel_socket(hub, s, user, kernel_id)
    try:
        request = _execute(code)
        msg_id = json.loads(request)["header"]["msg_id"]
        ws.send(request)
        got = _until_idle(ws, msg_id, timeout=120)
    finally:
        ws.close()
        s.delete(f"{hub.base}user/{user}/api/kernels/{kernel_id}", headers=headers, timeout=60)
    return "".join(m["content"].get("text", "") for m in got if m.get("msg_type") == "stream")


def test_lab_student_code_reads_nothing_of_bob_or_the_hub(lab_hub, lab_students):
    bob_file = pathlib.Path(pwd.getpwnam(BOB).pw_dir) / "notes.txt"
    # bob's own server writes a world-readable file in his home (only the home's 0700 guards it)
    s_bob = http_session(lab_students[BOB][0])
    out = _run_as(lab_hub, s_bob, BOB, f"import os; open({str(bob_file)!r}, 'w').write('bob'); "
                  f"os.chmod({str(bob_file)!r}, 0o644); print(open({str(bob_file)!r}).read())")
    assert out.strip() == "bob"
    targets = {"bob_file": str(bob_file), "bob_home": pwd.getpwnam(BOB).pw_dir,
               "cookie_secret": str(lab_hub.state / "jupyterhub_cookie_secret"),
               "database": str(lab_hub.state / "jupyterhub.sqlite")}
    code = ("import json, os\nout = {'uid': os.getuid()}\n"
            f"for k, p in {targets!r}.items():\n"
            "    try:\n"
            "        os.listdir(p) if os.path.isdir(p) else open(p, 'rb').read(1)\n"
            "        out[k] = 'read'\n"
            "    except Exception as e:\n"
            "        out[k] = type(e).__name__\n"
            "print(json.dumps(out))")
    s = http_session(lab_students[ALICE][0])
    result = json.loads(_run_as(lab_hub, s, ALICE, code))
    assert result.pop("uid") == pwd.getpwnam(ALICE).pw_uid  # alice's code runs as alice
    assert result == {k: "PermissionError" for k in targets}, result
    assert_nothing_of_bobs(lab_hub, s, BOB)
