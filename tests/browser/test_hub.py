"""JupyterHub for real: the two configurations of ``deploy/jupyterhub_config.py`` (the file
docs/hosting.md gives), configurable-http-proxy from npm (``make hub-setup``), everything on
loopback, jupyterhub-idle-culler as a service, the hub as root, and the defaults a class gets:
the roster authenticator (each student with her own password, from ``DPEXPLORE_HUB_USERS``),
each student's server on an origin of its own (``<name>.localhost``: Chromium resolves every
``*.localhost`` name to loopback; this module maps them for Python's clients), in an account of
her own (``dpx-<name>``) and a control group with her memory and task limits.

One hub per configuration (module-scoped), with the attacks of a hostile student:

* ``apps``: alice and bob open an app through the hub, its plots draw and follow a slider; each
  server and its kernels run as the student's own account, in her cgroup; as alice, JupyterLab
  and every API but her page's answer 403/404, no ``execute_request`` runs code, her cookies
  open nothing of bob's server; wrong passwords, names off the roster, look-alikes and over-long
  names are refused, and repeated failures are slowed; ten page requests at the same moment get
  at most the cap of kernels; the user cap turns a third student away; the hub's files are 0600;
  the idle culler then stops both servers.
* ``lab``: JupyterLab in the students' own accounts (homes 0700); alice's code cannot read bob's
  files or the hub's; a page bob writes (a "labextension") is never served from the hub's origin,
  and opened by alice on bob's origin it cannot get her a token; alice's kernel past her memory
  limit is ended, her server and bob's kernel go on.
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
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import urllib.request
import uuid

import pytest

from conftest import REPO, free_port, wait_until
from dpexplore.hub.state import is_single_user_server
from dpexplore.voila.wire import decode_frame as kernel_message
from test_hardening import _msg  # a kernel message as a page sends it

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CONFIG = REPO / "deploy" / "jupyterhub_config.py"
CHP = REPO / "deploy" / "node" / "node_modules" / ".bin" / "configurable-http-proxy"
CULL = 90  # s of inactivity before the culler stops a server (activity is reported every 5 s)
SUFFIX = secrets.token_hex(2)
#: everything a student's page is not: each must answer 403/404 on the apps-only server
NOT_SERVED = [
    "lab",
    "lab/tree/demo.ipynb",
    "tree",
    "tree/demo.ipynb",
    "api/contents",
    "api/contents/demo.ipynb",
    "api/kernels",
    "api/sessions",
    "api/kernelspecs",
    "api/terminals",
    "terminals/1",
    "files/demo.ipynb",
    "voila/files/demo.ipynb",
    "voila/api/contents",
    "nbconvert/html/demo.ipynb",
    "edit/demo.ipynb",
    "notebooks/demo.ipynb",
    "api/status",
    "api/me",
    "doc",
]

pytestmark.append(
    pytest.mark.skipif(
        not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the hub switches users: it runs as root (as in CI)"
    )
)

_getaddrinfo = socket.getaddrinfo


def _loopback_getaddrinfo(host, *args, **kwargs):
    """``*.localhost`` is loopback, as Chromium (and RFC 6761) has it; glibc here does not know."""
    if isinstance(host, str) and (host == "localhost" or host.endswith(".localhost")):
        host = "127.0.0.1"
    return _getaddrinfo(host, *args, **kwargs)


@pytest.fixture(scope="module", autouse=True)
def localhost_names():
    socket.getaddrinfo = _loopback_getaddrinfo
    yield
    socket.getaddrinfo = _getaddrinfo


def _hub_setup() -> None:
    """The project's own set-up step (Makefile ``hub-setup``): jupyterhub, the proxy, and the
    students' Python when the project's is not usable by other accounts."""
    usable = (
        subprocess.run(["runuser", "-u", "nobody", "--", sys.executable, "-c", ""], capture_output=True).returncode == 0
    )
    if (
        not CHP.exists()
        or shutil.which("jupyterhub", path=str(pathlib.Path(sys.executable).parent)) is None
        or not (usable or _students_env() is not None)
    ):
        subprocess.run(["make", "hub-setup", f"PY={sys.executable}"], cwd=REPO, check=True, timeout=1200)


def _students_env():
    from dpexplore.hub import students_env

    return students_env(REPO / "deploy")


def _remove_accounts(names) -> None:
    """The way docs/hosting.md removes a class: ``dpexplore hub-users remove`` (roster + account)."""
    from dpexplore.hub.spawner import account_name, remove_account

    for name in names:
        remove_account(account_name(name))


class Hub:
    """``jupyterhub -f deploy/jupyterhub_config.py`` in its own process group and state folder,
    with the students ``users`` on its roster (their passwords: :attr:`passwords`)."""

    def __init__(self, mode: str, users, url: str | None = None, port: int | None = None, **env):
        _hub_setup()
        self.mode = mode
        self.users = list(users)
        # a state folder any account may enter (as the current folder the docs start the hub in
        # may be): only the files' own modes keep the hub's secrets
        self.state = pathlib.Path(tempfile.mkdtemp(prefix=f"dpxt-hub-{mode}-"))
        self.state.chmod(0o755)
        self.port = port or free_port()
        self.base = (url or f"http://localhost:{self.port}").rstrip("/") + "/"
        if url:
            env["DPEXPLORE_HUB_URL"] = url
        full = dict(
            os.environ,
            DPEXPLORE_HUB_MODE=mode,
            DPEXPLORE_HUB_PORT=str(self.port),
            DPEXPLORE_HUB_API_PORT=str(free_port()),
            DPEXPLORE_CHP_API_PORT=str(free_port()),
            DPEXPLORE_HUB_DIR=str(self.state),
            DPEXPLORE_HUB_ACTIVITY_EVERY="5",
            DPEXPLORE_HUB_USERS=",".join(self.users),
            **env,
        )
        self.log_path = self.state / "hub.log"
        self._log = open(self.log_path, "w")
        exe = pathlib.Path(sys.executable).parent / "jupyterhub"
        self.proc = subprocess.Popen(
            [str(exe), "-f", str(CONFIG)],
            cwd=self.state,
            env=full,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/hub/login", timeout=5) as r:
                    if r.status == 200:
                        break
            except Exception:  # noqa: BLE001
                if self.proc.poll() is not None:
                    self.stop()
                    raise RuntimeError(self.log()) from None
                time.sleep(0.5)
        else:
            self.stop()
            raise RuntimeError(self.log())
        # the passwords the hub made for the new names: the only plain copy, 0600
        pw_file = self.state / "new-passwords.txt"
        assert pw_file.stat().st_mode & 0o777 == 0o600
        self.passwords = dict(line.split(" ", 1) for line in pw_file.read_text().splitlines())
        assert sorted(self.passwords) == sorted(self.users)

    def origin(self, user: str) -> str:
        """``user``'s own origin: ``<scheme>://<user>.<hub host>``."""
        scheme, rest = self.base.rstrip("/").split("://", 1)
        return f"{scheme}://{user}.{rest}"

    def user_url(self, user: str, path: str = "") -> str:
        """``user``'s server: on her own origin."""
        return f"{self.origin(user)}/user/{user}/{path}"

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
                warnings.warn(
                    f"the {self.mode} hub did not stop within 60 s of SIGTERM; "
                    "the end of its log:\n" + self.log()[-6000:],
                    RuntimeWarning,
                    stacklevel=2,
                )
        for p in self.servers_left():
            p.kill()
        self._log.close()
        shutil.rmtree(self.state, ignore_errors=True)

    def servers_left(self) -> list:
        import psutil

        return [
            p
            for p in psutil.process_iter(["cmdline"])
            if is_single_user_server(p.info["cmdline"]) and str(self.port) in " ".join(p.info["cmdline"] or [])
        ]


# -- what a student does ---------------------------------------------------------------------
TRACES_Y = "JSON.stringify([...document.querySelectorAll('.js-plotly-plot')].map(p => (p.data || []).map(t => t.y)))"


def log_in(page, hub: Hub, user: str, password: str | None = None, *, expect_ok: bool = True):
    """Logs ``user`` in at the hub's login form (her own password unless one is given)."""
    page.goto(hub.base + "hub/login", timeout=120_000)
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", hub.passwords.get(user, "x") if password is None else password)
    page.click("[type=submit]")
    if expect_ok:
        page.wait_for_url(f"**/user/{user}/**", timeout=240_000)


def login_and_open(browser, hub: Hub, user: str, app_path: str):
    """A new browser context: logs ``user`` in at the hub, waits for the server, opens the app
    on her own origin and waits until its plots draw. Returns (context, page)."""
    ctx = browser.new_context(viewport={"width": 1200, "height": 1000})
    page = ctx.new_page()
    log_in(page, hub, user)
    assert page.url.startswith(hub.origin(user) + "/"), page.url
    page.goto(hub.user_url(user, app_path), timeout=240_000)
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


class Client:
    """HTTP as the browser context ``ctx`` would send it: each request carries the cookies the
    browser holds for that URL (Playwright's own cookie matching), nothing else."""

    def __init__(self, ctx):
        import requests

        self.ctx, self.http = ctx, requests.Session()
        self.http.trust_env = False
        self.http.verify = False  # the TLS test's self-signed certificate
        # the hub's XSRF tokens are bound to the browser (its address and User-Agent)
        page = ctx.pages[0] if ctx.pages else None
        self.user_agent = page.evaluate("navigator.userAgent") if page is not None else None

    def cookies(self, url: str) -> dict:
        """{name: value} of the cookies the browser sends to ``url`` (of two with one name, the
        one of the longer path, which a browser sends first)."""
        if url.startswith("ws"):
            url = "http" + url[2:]
        out = {}
        for c in sorted(self.ctx.cookies([url]), key=lambda c: -len(c["path"])):
            out.setdefault(c["name"], c["value"])
        return out

    def cookie_header(self, url: str) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookies(url).items())

    def request(self, method: str, url: str, headers=None, **kwargs):
        headers = {"Cookie": self.cookie_header(url), **(headers or {})}
        if self.user_agent:
            headers.setdefault("User-Agent", self.user_agent)
        kwargs.setdefault("timeout", 60)
        return self.http.request(method, url, headers=headers, **kwargs)

    def get(self, url, **kwargs):
        return self.request("GET", url, **kwargs)

    def post(self, url, **kwargs):
        return self.request("POST", url, **kwargs)

    def delete(self, url, **kwargs):
        return self.request("DELETE", url, **kwargs)

    def xsrf(self, url: str) -> str:
        return self.cookies(url).get("_xsrf", "")


def kernel_socket(hub: Hub, client: Client, user: str, kernel_id: str):
    """The kernel websocket of ``kernel_id`` on ``user``'s server, opened with the cookies of
    ``client`` and the headers a browser sends (legacy JSON protocol)."""
    import websocket

    import ssl

    url = hub.user_url(user, f"api/kernels/{kernel_id}/channels").replace("http", "ws", 1)
    url += f"?session_id={uuid.uuid4()}"
    return websocket.create_connection(
        url,
        timeout=30,
        header=[
            f"Cookie: {client.cookie_header(url)}",
            f"User-Agent: {client.user_agent}",
            "Sec-Fetch-Mode: websocket",
            "Sec-Fetch-Site: same-origin",
        ],
        origin=hub.origin(user),
        sslopt={"cert_reqs": ssl.CERT_NONE},
    )  # the TLS test's self-signed certificate


def _execute(code: str) -> str:
    return _msg(
        "execute_request",
        {
            "code": code,
            "silent": False,
            "store_history": False,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        },
    )


def receive(ws, until, timeout: float = 60.0, parent: str | None = None) -> list[dict]:
    """Messages received until one of type ``until`` (or one for which ``until(message)`` is
    true), or the timeout; with ``parent``, only the messages of that request."""
    import websocket

    done = until if callable(until) else (lambda m: m.get("msg_type") == until)
    got, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        # a short timeout per call: one ws.recv() answers the server's pings itself and goes on
        # waiting, so with pings more frequent than its timeout it would never return. A quiet
        # second is not the end: it once was, and a kernel busy filling its memory on a loaded
        # machine sent nothing for a second, so the memory-limit test read the OOM count before
        # the kill (a rerun in CI)
        ws.settimeout(max(0.1, min(1.0, deadline - time.monotonic())))
        try:
            m = kernel_message(ws.recv())
        except websocket.WebSocketTimeoutException:
            continue
        except websocket.WebSocketConnectionClosedException:
            break
        if parent is not None and m.get("parent_header", {}).get("msg_id") != parent:
            continue
        got.append(m)
        if done(m):
            break
    return got


def page_kernel_id(client: Client, hub: Hub, user: str, app: str = "demo.ipynb") -> str:
    r = client.get(hub.user_url(user, f"voila/render/{app}"), timeout=240)
    assert r.status_code == 200, (r.status_code, r.url)
    m = re.search(r'"kernelId":\s*"([0-9a-f-]{36})"', r.text)
    assert m, "no kernelId in the rendered page"
    return m.group(1)


def close_page_kernel(client: Client, hub: Hub, user: str, kernel_id: str) -> None:
    """Shuts down the kernel of a page fetched over HTTP (it would count against the page cap
    until culled)."""
    r = client.delete(
        hub.user_url(user, f"api/kernels/{kernel_id}"), headers={"X-XSRFToken": client.xsrf(hub.user_url(user))}
    )
    assert r.status_code in (204, 404), (r.status_code, r.text[-600:])


def assert_nothing_of_bobs(hub: Hub, client: Client, bob: str) -> None:
    """Alice's cookies open nothing on bob's server, on his origin or on the hub's: 403 or a
    redirect to a login, never 200. (The package's static assets, plotly.js and Voilà's scripts,
    are the same public files on every server, as on any Jupyter server.)"""
    for path in ["", "voila/render/demo.ipynb", "api/kernels", "api/contents", "lab"]:
        for url in (hub.user_url(bob, path), f"{hub.base}user/{bob}/{path}"):
            r = client.get(url, allow_redirects=False)
            assert r.status_code in (302, 303, 403, 404), (url, r.status_code)
            if r.status_code in (302, 303):
                r2 = client.get(url)  # followed to its end
                assert not (r2.status_code == 200 and f"/user/{bob}/" in r2.url and "login" not in r2.url), (
                    url,
                    r2.url,
                )


def assert_cookies_same_site(ctx) -> None:
    """Every cookie the hub and the servers set is SameSite=Lax or Strict, HttpOnly where it is a
    login (the ``_xsrf`` token is read by the pages' scripts, as Jupyter's design has it)."""
    cookies = ctx.cookies()
    assert cookies
    for c in cookies:
        assert c["sameSite"] in ("Lax", "Strict"), c
        if c["name"] != "_xsrf":
            assert c["httpOnly"], c


# -- the class: apps only ----------------------------------------------------------------------
APPS_USERS = ("alice", "bob", "carol", "dave")
MAX_PAGES = 3


@pytest.fixture(scope="module")
def apps_hub():
    hub = Hub(
        "apps",
        APPS_USERS,
        DPEXPLORE_HUB_CULL_TIMEOUT=str(CULL),
        DPEXPLORE_HUB_CULL_EVERY="5",
        DPEXPLORE_HUB_MAX_USERS="2",
        DPEXPLORE_HUB_MAX_PAGES=str(MAX_PAGES),
        DPEXPLORE_HUB_MEM_LIMIT="1G",
    )
    try:
        yield hub
    finally:
        hub.stop()
        _remove_accounts(APPS_USERS)


@pytest.fixture(scope="module")
def apps_students(apps_hub, browser):
    """alice and bob logged in, each with the demo app open and drawn: {name: (ctx, page)}."""
    yield from students(browser, apps_hub, ("alice", "bob"), "voila/render/demo.ipynb")


def _cgroup_of(pid: int) -> dict:
    """{controller: group path} of process ``pid`` (cgroup v1 and v2 lines)."""
    out = {}
    for line in pathlib.Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, ctls, path = line.split(":", 2)
        for ctl in (ctls or "v2").split(","):
            out[ctl] = path
    return out


def test_apps_each_student_in_her_own_account_and_cgroup(apps_hub, apps_students):
    """Attack 6 (one code execution in any server gave every student's token): each student's
    server and kernels run as her own account, in her own control group with the limits."""
    from dpexplore.hub.spawner import account_name

    for _user, (_, page) in apps_students.items():
        slider_moves_plots(page)
    servers = apps_hub.servers()
    assert sorted(servers) == ["alice", "bob"]  # one single-user server per student
    uids = {}
    for user, proc in servers.items():
        account = pwd.getpwnam(account_name(user))
        assert account.pw_uid != 0
        uids[user] = account.pw_uid
        kernels = [k for k in proc.children(recursive=True) if "ipykernel" in " ".join(k.cmdline())]
        assert kernels, f"{user}'s server holds no kernel"
        for p in [proc, *kernels]:
            assert p.uids().real == p.uids().effective == account.pw_uid, (user, p.cmdline())
            groups = _cgroup_of(p.pid)
            assert groups.get("memory", "").endswith(f"/dpexplore-hub/{account.pw_name}"), groups
        home = pathlib.Path(proc.environ()["HOME"])
        assert home.stat().st_uid == account.pw_uid and home.stat().st_mode & 0o777 == 0o700
        group = pathlib.Path("/sys/fs/cgroup/memory") / _cgroup_of(proc.pid)["memory"].lstrip("/")
        assert int((group / "memory.limit_in_bytes").read_text()) == 2**30
        pids = pathlib.Path("/sys/fs/cgroup/pids") / _cgroup_of(proc.pid)["pids"].lstrip("/")
        assert int((pids / "pids.max").read_text()) == 256
    assert uids["alice"] != uids["bob"]


def test_apps_student_gets_the_apps_and_nothing_more(apps_hub, apps_students):
    ctx = apps_students["alice"][0]
    client = Client(ctx)
    close_page_kernel(client, apps_hub, "alice", page_kernel_id(client, apps_hub, "alice"))
    for path in NOT_SERVED:
        r = client.get(apps_hub.user_url("alice", path), allow_redirects=False)
        assert r.status_code in (403, 404), (path, r.status_code, r.headers.get("location"))
        assert "Traceback" not in r.text
    xsrf = client.xsrf(apps_hub.user_url("alice"))
    assert xsrf, "alice's server set no _xsrf cookie"
    headers = {"X-XSRFToken": xsrf, "Content-Type": "application/json"}
    for path, body in [
        ("api/kernels", {"name": "python3"}),
        ("api/sessions", {"path": "x.ipynb", "type": "notebook", "kernel": {"name": "python3"}}),
        ("api/terminals", {}),
        ("api/contents", {"type": "file"}),
    ]:
        r = client.post(apps_hub.user_url("alice", path), json=body, headers=headers, allow_redirects=False)
        assert r.status_code in (403, 404), (path, r.status_code)
    assert_nothing_of_bobs(apps_hub, client, "bob")
    assert_cookies_same_site(ctx)


def test_apps_no_message_runs_code(apps_hub, apps_students):
    import websocket

    marker_dir = pathlib.Path(tempfile.mkdtemp(prefix="dpxt-marker-"))
    marker_dir.chmod(0o777)  # the account could write here: only refusal keeps it empty
    try:
        client = Client(apps_students["alice"][0])
        kernel_id = page_kernel_id(client, apps_hub, "alice")
        ws = kernel_socket(apps_hub, client, "alice", kernel_id)
        try:
            for i, kind in enumerate(["execute_request", "inspect_request", "complete_request", "history_request"]):
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
        assert not kinds & {
            "execute_reply",
            "execute_input",
            "stream",
            "inspect_reply",
            "complete_reply",
            "history_reply",
            "error",
        }, kinds
        # bob's kernel (a real id) and a made-up one, through alice's server: no such kernel
        bob_kernel = page_kernel_id(Client(apps_students["bob"][0]), apps_hub, "bob")
        for kid in (bob_kernel, str(uuid.uuid4())):
            with pytest.raises(websocket.WebSocketBadStatusException) as err:
                kernel_socket(apps_hub, client, "alice", kid)
            assert err.value.status_code in (403, 404)
        close_page_kernel(client, apps_hub, "alice", kernel_id)
        close_page_kernel(Client(apps_students["bob"][0]), apps_hub, "bob", bob_kernel)
        time.sleep(2)
        assert list(marker_dir.iterdir()) == [], "a message from alice's browser ran code"
    finally:
        shutil.rmtree(marker_dir, ignore_errors=True)


def _login_status(hub: Hub, name: str, password: str) -> tuple[int, bool]:
    """POSTs the login form as a browser without cookies would: (status, whether a login
    cookie was set)."""
    import requests

    s = requests.Session()
    s.trust_env = False
    r = s.get(f"{hub.base}hub/login", timeout=60)
    xsrf = s.cookies.get("_xsrf") or re.search(r'name="_xsrf" value="([^"]+)"', r.text).group(1)
    r = s.post(
        f"{hub.base}hub/login",
        data={"username": name, "password": password, "_xsrf": xsrf},
        allow_redirects=False,
        timeout=60,
    )
    return r.status_code, any(
        c.name.startswith("jupyterhub-session") or c.name == "jupyterhub-hub-login" for c in s.cookies
    )


def test_apps_only_the_roster_logs_in_each_with_her_own_password(apps_hub, apps_students):
    """Attacks 2 and 3: a classmate's name with a wrong password, the shared/empty password of
    the old configuration, names off the roster (admin, root, 300 and 5000 characters, a Cyrillic
    look-alike of alice) are refused and get no server; a name's repeated failures slow its
    attempts but never lock its owner out."""
    alice = apps_hub.passwords["alice"]
    attempts = [
        ("alice", "x"),
        ("alice", ""),
        ("alice", apps_hub.passwords["bob"]),
        ("alice", alice.upper()),
        ("admin", "x"),
        ("root", "x"),
        ("a" * 300, "x"),
        ("b" * 5000, "x"),
        ("\u0430lice", alice),
        ("alice\u200b", alice),
        ("eve", "x"),
    ]
    for name, password in attempts:
        status, logged_in = _login_status(apps_hub, name, password)
        assert not logged_in and status in (200, 403), (name[:20], status)
    assert sorted(apps_hub.servers()) == ["alice", "bob"]  # no server for any of them
    # dave is on the roster: after five failures his attempts are slowed, never locked (a
    # classmate guessing, from any address she claims, delays his login by seconds at most)
    for _ in range(7):
        assert _login_status(apps_hub, "dave", "wrong")[1] is False
    assert _login_status(apps_hub, "dave", apps_hub.passwords["dave"])[1] is True
    assert "login of dave slowed" in apps_hub.log()
    # "Alice" is alice (names are normalized), with alice's password only
    assert _login_status(apps_hub, "Alice", alice)[1] is True


def _page_kernels(hub: Hub, user: str) -> list:
    import psutil

    out = []
    for k in hub.servers()[user].children(recursive=True):
        try:
            if k.status() != psutil.STATUS_ZOMBIE and "ipykernel" in " ".join(k.cmdline()):
                out.append(k)
        except psutil.Error:
            pass
    return out


def test_apps_concurrent_pages_stay_within_the_cap(apps_hub, apps_students):
    """Attack 4: ten page requests at the same moment get at most the cap of kernels."""
    client = Client(apps_students["alice"][0])

    def kernels():
        return _page_kernels(apps_hub, "alice")

    statuses, started = [], []
    url = apps_hub.user_url("alice", "voila/render/demo.ipynb")
    headers = {
        "Cookie": client.cookie_header(url),  # Playwright's API stays on this thread
        "User-Agent": client.user_agent,
    }

    def one():
        import requests

        try:
            r = requests.get(url, headers=headers, timeout=240)
            statuses.append(r.status_code)
            m = re.search(r'"kernelId":\s*"([0-9a-f-]{36})"', r.text)
            if m:
                started.append(m.group(1))
        except Exception as err:  # noqa: BLE001
            statuses.append(repr(err))

    threads = [threading.Thread(target=one) for _ in range(10)]
    for t in threads:
        t.start()
    peak = 0
    while any(t.is_alive() for t in threads):
        peak = max(peak, len(kernels()))
        time.sleep(0.05)
    peak = max(peak, len(kernels()))
    assert peak <= MAX_PAGES, (peak, statuses)
    assert statuses.count(200) >= 1 and all(s in (200, 503) for s in statuses), statuses
    for kernel_id in started:  # the pages that were never opened: their kernels go
        close_page_kernel(client, apps_hub, "alice", kernel_id)


SIX_APPS = [
    "demo.ipynb",
    "group_privacy_lab.ipynb",
    "rdp_explorer.ipynb",
    "composition_explorer.ipynb",
    "profile_gdp.ipynb",
    "mean_estimation_lab.ipynb",
]
KERNEL_ID_JS = "() => JSON.parse(document.getElementById('jupyter-config-data').textContent).kernelId"
ALERTS_JS = "() => [...document.querySelectorAll('[role=alert]')].map(e => e.textContent.trim())"


def test_apps_six_apps_one_after_another_in_one_tab(apps_hub, apps_students):
    """Attack 5: a student opens six apps one after another in one tab (the cap is 3 here):
    each page left shuts its kernel down through the hub (Voilà's page-close call answered 500
    under the hub: the kernels stayed and the fourth app said "the server is full")."""
    _, page = apps_students["alice"]
    seen = []
    for name in SIX_APPS:
        page.goto(apps_hub.user_url("alice", f"voila/render/{name}"), timeout=120_000)
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=120_000)
        assert "server is full" not in page.inner_text("body").lower(), name
        seen.append(page.evaluate(KERNEL_ID_JS))
    assert len(set(seen)) == 6

    def alive():
        cmdlines = " ".join(" ".join(k.cmdline()) for k in _page_kernels(apps_hub, "alice"))
        return [kid for kid in seen if kid in cmdlines]

    # the five pages left shut their kernels down; the open one keeps its own
    assert wait_until(lambda: alive() == seen[-1:], 30), alive()
    closes = re.findall(r"(\d{3}) POST /user/alice/voila/api/shutdown/", apps_hub.log())
    assert closes and set(closes) <= {"204", "200"}, closes
    slider_moves_plots(page)


def test_apps_a_5mb_widget_value_leaves_the_page_working(apps_hub, apps_students):
    """Attack 7: a widget update with a 5 MB value, from the page's own connection and from a
    client of its own on the page's kernel: the page says the change was too large, the raw
    client is cut off, and the page's sliders keep answering (an error in the kernel killed the
    page's output channel: jupyter_server's AttributeError on traceback_replacement_message)."""
    ctx, page = apps_students["alice"]
    sent = page.evaluate(
        """async (size) => {
        const wm = window.jupyterapp._widgetManager;
        const models = await Promise.all(Object.values(wm._models));
        const sliders = models.filter(m => /Slider/.test(m.get('_model_name')));
        for (const m of sliders) {
          m.comm.send({method: 'update', buffer_paths: [], state: {value: 'x'.repeat(size)}});
        }
        return sliders.length; }""",
        5 * 2**20,
    )
    assert sent >= 1
    page.wait_for_selector("#dpexplore-message-refused", timeout=20_000)
    slider_moves_plots(page)
    # the same from a client of its own, on the page's kernel
    client = Client(ctx)
    kernel_id = page.evaluate(KERNEL_ID_JS)
    ws = kernel_socket(apps_hub, client, "alice", kernel_id)
    try:
        ws.send(_msg("comm_info_request", {"target_name": "jupyter.widget"}))
        comms = [m for m in receive(ws, "comm_info_reply") if m.get("msg_type") == "comm_info_reply"]
        comm_id = next(iter(comms[0]["content"]["comms"]))
        try:
            ws.send(
                _msg(
                    "comm_msg",
                    {
                        "comm_id": comm_id,
                        "data": {"method": "update", "buffer_paths": [], "state": {"value": "x" * (5 * 2**20)}},
                    },
                )
            )
            receive(ws, "never", timeout=3)
        except Exception:  # noqa: BLE001 - the server closing the socket is the expected answer
            pass
    finally:
        ws.close()
    slider_moves_plots(page)
    assert "Traceback" not in page.inner_text("body")
    assert "traceback_replacement_message" not in apps_hub.log()


def test_apps_user_cap_turns_the_third_student_away(apps_hub, apps_students, browser):
    """Attack 3's other half: no limit on users. DPEXPLORE_HUB_MAX_USERS=2 here: alice and bob
    have servers, carol logs in and is told the hub is full; nobody's server is started."""
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        log_in(page, apps_hub, "carol", expect_ok=False)
        page.wait_for_timeout(3000)
        assert sorted(apps_hub.servers()) == ["alice", "bob"]
        text = page.inner_text("body").lower()
        assert "active users" in text or "try again" in text or "too many" in text, text[:500]
    finally:
        ctx.close()


def test_apps_a_killed_kernel_is_said_on_its_page_only(apps_hub, apps_students):
    """A student's kernel ended as the memory limit ends it (SIGKILL, the OOM killer's signal:
    tests/hub/test_hub_limits.py and the lab test show the limit doing it): her page says so in plain
    words (role=alert); bob's page says nothing and keeps answering."""
    _, page = apps_students["alice"]
    _, bob_page = apps_students["bob"]
    kernel_id = page.evaluate(KERNEL_ID_JS)
    victim = [k for k in _page_kernels(apps_hub, "alice") if kernel_id in " ".join(k.cmdline())]
    assert len(victim) == 1
    victim[0].kill()
    page.wait_for_selector("#dpexplore-kernel-stopped", timeout=30_000)
    alerts = page.evaluate(ALERTS_JS)
    assert any("kernel stopped" in a and "Reload the page" in a for a in alerts), alerts
    slider_moves_plots(bob_page)
    assert bob_page.evaluate(ALERTS_JS) == []


def test_apps_hub_files_private(apps_hub):
    from dpexplore.hub.spawner import account_name

    env = _students_env()
    python = env / "bin" / "python" if env is not None else pathlib.Path(sys.executable)
    for name in (
        "jupyterhub_cookie_secret",
        "jupyterhub.sqlite",
        "jupyterhub-proxy.pid",
        "roster",
        "new-passwords.txt",
    ):
        f = apps_hub.state / name
        st = f.stat()
        assert st.st_mode & 0o077 == 0 and st.st_uid == os.geteuid(), (name, oct(st.st_mode))
        # a student's account (what any code of hers would run as) cannot read it
        r = subprocess.run(
            ["runuser", "-u", account_name("alice"), "--", str(python), "-c", f"open({str(f)!r}, 'rb').read(1)"],
            capture_output=True,
            text=True,
        )
        assert r.returncode != 0 and "PermissionError" in r.stderr, (name, r.stderr[-300:])


def test_apps_idle_culler_stops_the_servers(apps_hub, apps_students):
    for ctx, _ in apps_students.values():
        ctx.close()
    deadline = time.monotonic() + CULL + 120
    while apps_hub.servers() and time.monotonic() < deadline:
        time.sleep(2)
    assert not apps_hub.servers(), "the idle culler did not stop the idle servers"
    log = apps_hub.log()
    assert all(f"Culling server {u}" in log for u in ("alice", "bob")), "servers stopped, but not by the culler"


# -- the practitioners: JupyterLab per student account -----------------------------------------
ALICE, BOB = f"alice-{SUFFIX}", f"bob-{SUFFIX}"
LAB_MEMORY = 700 * 2**20


@pytest.fixture(scope="module")
def lab_hub():
    hub = Hub("lab", (ALICE, BOB), DPEXPLORE_HUB_MEM_LIMIT=str(LAB_MEMORY))
    try:
        yield hub
    finally:
        hub.stop()
        _remove_accounts((ALICE, BOB))


@pytest.fixture(scope="module")
def lab_students(lab_hub, browser):
    yield from students(browser, lab_hub, (ALICE, BOB), "voila/render/apps/demo.ipynb")


def test_lab_two_students_draw_and_follow_a_slider(lab_hub, lab_students):
    from dpexplore.hub.spawner import account_name

    for _user, (_, page) in lab_students.items():
        slider_moves_plots(page)
    servers = lab_hub.servers()
    assert sorted(servers) == sorted([ALICE, BOB])
    for user, proc in servers.items():
        entry = pwd.getpwnam(account_name(user))  # created by the hub at the first start
        assert entry.pw_uid >= 100 and proc.uids().effective == entry.pw_uid
        assert os.stat(entry.pw_dir).st_mode & 0o777 == 0o700, user
    assert_cookies_same_site(lab_students[ALICE][0])


def _until_idle(ws, msg_id: str, timeout: float) -> list[dict]:
    """The messages of request ``msg_id`` until the kernel reports it idle on IOPub. Its printed
    output travels on IOPub and its execute_reply on the shell channel, so the reply may come
    before the output (stopping at the reply once returned an empty output); the IOPub ``idle``
    status of the request comes after all of its output."""
    return receive(
        ws,
        lambda m: m.get("msg_type") == "status" and m["content"].get("execution_state") == "idle",
        timeout,
        parent=msg_id,
    )


def _start_kernel(hub: Hub, client: Client, user: str) -> str:
    r = client.get(hub.user_url(user, "lab"), timeout=120)
    assert r.status_code == 200, "JupyterLab is the practitioners' interface"
    headers = {"X-XSRFToken": client.xsrf(hub.user_url(user))}
    r = client.post(hub.user_url(user, "api/kernels"), json={"name": "python3"}, headers=headers, timeout=120)
    assert r.status_code == 201, (r.status_code, r.text[:300])
    return r.json()["id"]


def _run_as(hub: Hub, client: Client, user: str, code: str, kernel_id: str | None = None, timeout: float = 120) -> str:
    """Runs ``code`` on a kernel of ``user``'s server (a new one, as JupyterLab starts it,
    unless ``kernel_id``) and returns what it printed."""
    own = kernel_id is None
    kernel_id = kernel_id or _start_kernel(hub, client, user)
    ws = kernel_socket(hub, client, user, kernel_id)
    try:
        request = _execute(code)
        msg_id = json.loads(request)["header"]["msg_id"]
        ws.send(request)
        got = _until_idle(ws, msg_id, timeout=timeout)
    finally:
        ws.close()
        if own:
            client.delete(
                hub.user_url(user, f"api/kernels/{kernel_id}"), headers={"X-XSRFToken": client.xsrf(hub.user_url(user))}
            )
    return "".join(m["content"].get("text", "") for m in got if m.get("msg_type") == "stream")


def test_lab_student_code_reads_nothing_of_bob_or_the_hub(lab_hub, lab_students):
    from dpexplore.hub.spawner import account_name

    bob_home = pwd.getpwnam(account_name(BOB)).pw_dir
    bob_file = pathlib.Path(bob_home) / "notes.txt"
    # bob's own server writes a world-readable file in his home (only the home's 0700 guards it)
    c_bob = Client(lab_students[BOB][0])
    out = _run_as(
        lab_hub,
        c_bob,
        BOB,
        f"import os; open({str(bob_file)!r}, 'w').write('bob'); "
        f"os.chmod({str(bob_file)!r}, 0o644); print(open({str(bob_file)!r}).read())",
    )
    assert out.strip() == "bob"
    targets = {
        "bob_file": str(bob_file),
        "bob_home": bob_home,
        "cookie_secret": str(lab_hub.state / "jupyterhub_cookie_secret"),
        "database": str(lab_hub.state / "jupyterhub.sqlite"),
        "roster": str(lab_hub.state / "roster"),
    }
    code = (
        "import json, os\nout = {'uid': os.getuid()}\n"
        f"for k, p in {targets!r}.items():\n"
        "    try:\n"
        "        os.listdir(p) if os.path.isdir(p) else open(p, 'rb').read(1)\n"
        "        out[k] = 'read'\n"
        "    except Exception as e:\n"
        "        out[k] = type(e).__name__\n"
        "print(json.dumps(out))"
    )
    client = Client(lab_students[ALICE][0])
    result = json.loads(_run_as(lab_hub, client, ALICE, code))
    assert result.pop("uid") == pwd.getpwnam(account_name(ALICE)).pw_uid  # her code runs as her
    assert result == {k: "PermissionError" for k in targets}, result
    assert_nothing_of_bobs(lab_hub, client, BOB)


#: alice's code: subscribes to every listening TCP port of the loopback and to every kernel Unix
#: socket the machine lists, for 8 s; prints how many it tried and how many messages carried
#: bob's secret
EAVESDROP = r"""
import json, time, zmq
ctx, socks, heard = zmq.Context(), [], 0
def sub(address):
    s = ctx.socket(zmq.SUB)
    s.setsockopt(zmq.LINGER, 0)
    s.setsockopt(zmq.SUBSCRIBE, b"")
    try:
        s.connect(address)
        socks.append(s)
    except zmq.ZMQError:
        s.close()
for line in open("/proc/net/tcp").read().splitlines()[1:]:
    f = line.split()
    ip, port = f[1].split(":")
    if f[3] == "0A" and ip in ("0100007F", "00000000"):
        sub("tcp://127.0.0.1:%d" % int(port, 16))
for line in open("/proc/net/unix").read().splitlines()[1:]:
    f = line.split()
    if len(f) >= 8 and "kernel" in f[7]:
        sub("ipc://" + f[7])
poller = zmq.Poller()
for s in socks:
    poller.register(s, zmq.POLLIN)
end = time.time() + 8
while time.time() < end:
    for s, _ in poller.poll(200):
        heard += any(b"SECRET-OF-BOB" in frame for frame in s.recv_multipart())
for s in socks:
    s.close()
ctx.term()
print(json.dumps({"tried": len(socks), "heard": heard}))
"""


def test_lab_student_code_hears_nothing_of_a_classmates_kernel(lab_hub, lab_students):
    """A kernel's output stream (IOPub) is a ZeroMQ PUB socket: it takes any subscriber, and its
    messages are signed, not encrypted. On TCP ports of 127.0.0.1 (jupyter_client's default) the
    code of any student heard everything a classmate's kernel printed. Kernels speak over Unix
    sockets in a folder of their own account (mode 0700: dpexplore.voila.sockets). Here bob's
    kernel prints a secret for 15 s while alice's code subscribes to every listening TCP port of
    the loopback and to every kernel socket the machine lists, and hears none of it."""
    c_bob = Client(lab_students[BOB][0])
    kernel_id = _start_kernel(lab_hub, c_bob, BOB)
    ws = kernel_socket(lab_hub, c_bob, BOB, kernel_id)
    try:
        ws.send(
            _execute("import time\nfor i in range(75):\n    print('SECRET-OF-BOB', i, flush=True)\n    time.sleep(0.2)")
        )
        for k in _page_kernels(lab_hub, BOB):  # bob's kernels' channels are Unix sockets
            cmd = k.cmdline()
            info = json.loads(pathlib.Path(cmd[cmd.index("-f") + 1]).read_text())
            assert info["transport"] == "ipc", (cmd, info["transport"])
        result = json.loads(_run_as(lab_hub, Client(lab_students[ALICE][0]), ALICE, EAVESDROP))
    finally:
        ws.close()
        close_page_kernel(c_bob, lab_hub, BOB, kernel_id)
    assert result["tried"] >= 1 and result["heard"] == 0, result


EVIL = """<!doctype html><title>notes</title><script>
window.result = {origin: location.origin, steps: []};
(async () => {
  const hub = %(hub)s;
  const log = (k, v) => window.result.steps.push([k, String(v)]);
  try {  // the hub's XSRF token from a page of the hub, through a frame
    const f = document.createElement('iframe');
    f.src = hub + 'hub/static/favicon.ico';
    (document.body || document.documentElement).appendChild(f);
    await new Promise(r => { f.onload = r; setTimeout(r, 3000); });
    log('frame_cookie', f.contentDocument ? f.contentDocument.cookie : 'no access');
  } catch (e) { log('frame_cookie', e.name); }
  try {
    const r = await fetch(hub + 'hub/api/users/%(victim)s/tokens', {method: 'POST',
      credentials: 'include', headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({note: 'stolen', expires_in: 3600})});
    log('token_status', r.status); log('token_body', await r.text());
  } catch (e) { log('token_status', e.name); }
  try {
    const r = await fetch(hub + 'hub/api/user', {credentials: 'include'});
    log('whoami', r.status + ' ' + (await r.text()));
  } catch (e) { log('whoami', e.name); }
  log('own_cookie', document.cookie);
  window.result.done = true;
})();
</script>"""


def test_lab_a_page_a_student_writes_never_acts_as_a_classmate(lab_hub, lab_students):
    """Attack 1: bob writes an HTML page with a script under his labextensions folder (which
    JupyterLab served, unauthenticated, on the hub's origin) and alice, logged in, opens its links.
    Two layers now: (1) the students' servers read no extension from their homes
    (``disable_user_config``), so none of those links serves bob's page, on the hub's origin or
    his; (2) whatever bob's server might serve is on bob's origin: a page from there (the worst
    case, made by the browser test itself) runs in alice's browser but reads none of her cookies,
    cannot read the hub's pages through a frame, and its ``POST /hub/api/users/alice/tokens`` is
    refused (another origin, no XSRF token, SameSite cookies); the hub makes no token."""
    from dpexplore.hub.spawner import account_name

    hub, victim = lab_hub, ALICE
    bob_home = pathlib.Path(pwd.getpwnam(account_name(BOB)).pw_dir)
    page_html = EVIL % {"hub": json.dumps(hub.base), "victim": victim}
    code = (
        "import os, pathlib\n"
        "for d in ['.local/share/jupyter/labextensions/notes/static',"
        " '.local/share/jupyter/nbextensions/notes', '.local/share/jupyter/voila/templates/"
        "notes/static']:\n"
        "    p = pathlib.Path.home() / d\n"
        "    p.mkdir(parents=True, exist_ok=True)\n"
        f"    (p / 'notes.html').write_text({page_html!r})\n"
        "print('written')"
    )
    assert _run_as(hub, Client(lab_students[BOB][0]), BOB, code).strip() == "written"
    assert (bob_home / ".local/share/jupyter/labextensions/notes/static/notes.html").exists()
    ctx, _ = lab_students[victim]
    page = ctx.new_page()
    try:
        # (1) the links of the attack, on the hub's origin and on bob's: bob's page is not there
        paths = [
            "lab/extensions/notes/static/notes.html",
            "voila/labextensions/notes/static/notes.html",
            "voila/templates/notes/static/notes.html",
            "static/notes/notes.html",
            "nbextensions/notes/notes.html",
        ]
        for path in paths:
            for url in (f"{hub.base}user/{BOB}/{path}", hub.user_url(BOB, path)):
                page.goto(url, timeout=120_000)
                assert "window.result" not in page.content(), (url, page.url)
        # (2) the worst case: a page of bob's origin, with bob's script, in alice's browser
        evil_url = hub.user_url(BOB, "files/notes.html")
        page.route(evil_url, lambda route: route.fulfill(status=200, body=page_html, content_type="text/html"))
        page.goto(evil_url, timeout=60_000)
        page.wait_for_function("window.result && window.result.done", timeout=60_000)
        result = page.evaluate("window.result")
        steps = dict(result["steps"])
        assert result["origin"] == hub.origin(BOB), result
        # the browser refuses the cross-origin call (fetch rejects: TypeError) or the hub does
        assert steps["token_status"] in ("TypeError", "403", "404"), steps
        assert victim not in steps.get("token_body", "") or "403" in steps["token_status"], steps
        # nothing of alice's hub session reached the script: no cookie value of the hub's origin
        hub_secrets = [c["value"] for c in ctx.cookies([hub.base + "hub/"])]
        assert hub_secrets
        for value in hub_secrets:
            assert all(value not in v for v in steps.values()), (value[:12], steps)
        assert not steps["whoami"].startswith("200"), steps
        assert "jupyterhub" not in steps["own_cookie"], steps  # no login cookie of hers
        assert not re.search(rf"20[01] POST /hub/api/users/{victim}/tokens", hub.log())
        # the control: alice's own hub session is intact (the script got nothing, broke nothing)
        page.goto(hub.base + "hub/home", timeout=60_000)
        assert "/hub/login" not in page.url, page.url
    finally:
        page.close()


def test_lab_a_student_past_her_memory_limit_loses_her_kernel_only(lab_hub, lab_students):
    """Limits that hold: alice's kernel allocates past her memory limit; the kernel is ended
    (by the kernel's OOM killer, in her control group: its count of OOM kills goes up) and
    restarted by her server; her server and bob's kernel go on."""
    from dpexplore.hub.limits import CgroupLimits, cgroup_roots
    from dpexplore.hub.spawner import account_name

    group = CgroupLimits(cgroup_roots(), account_name(ALICE), 1, 1)
    kills = group.oom_kills()
    c_alice, c_bob = Client(lab_students[ALICE][0]), Client(lab_students[BOB][0])
    bob_kernel = _start_kernel(lab_hub, c_bob, BOB)
    try:
        kernel = _start_kernel(lab_hub, c_alice, ALICE)
        hog = (
            "b = []\n"
            f"for i in range({2 * LAB_MEMORY // 2**25}):\n"
            "    b.append(bytearray(2**25))\n"
            "print('survived', len(b))"
        )
        ws = kernel_socket(lab_hub, c_alice, ALICE, kernel)
        try:
            request = _execute(hog)
            msg_id = json.loads(request)["header"]["msg_id"]
            ws.send(request)

            def ended(m):
                state = m.get("content", {}).get("execution_state")
                return m.get("msg_type") == "status" and (
                    state in ("restarting", "dead") or (state == "idle" and m["parent_header"].get("msg_id") == msg_id)
                )

            got = receive(ws, ended, timeout=120)
        finally:
            ws.close()
        printed = "".join(m["content"].get("text", "") for m in got if m.get("msg_type") == "stream")
        finished = [
            m
            for m in got
            if m.get("msg_type") == "status"
            and m["parent_header"].get("msg_id") == msg_id
            and m["content"].get("execution_state") == "idle"
        ]
        assert "survived" not in printed and not finished, (printed, got[-3:])
        assert group.oom_kills() > kills  # the memory limit ended it, nothing else
        # her server answers and runs code in a new kernel; bob's kernel never noticed
        assert c_alice.get(lab_hub.user_url(ALICE, "api/status")).status_code == 200
        assert _run_as(lab_hub, c_alice, ALICE, "print(6 * 7)").strip() == "42"
        assert _run_as(lab_hub, c_bob, BOB, "print(6 * 7)", kernel_id=bob_kernel).strip() == "42"
    finally:
        c_bob.delete(
            lab_hub.user_url(BOB, f"api/kernels/{bob_kernel}"),
            headers={"X-XSRFToken": c_bob.xsrf(lab_hub.user_url(BOB))},
        )
