"""The TLS reverse proxy docs/hosting.md gives, ``deploy/nginx/dpexplore-hub.conf``, run as it is
(Debian's nginx, from ``make nginx``) in front of a hub of the class configuration: only the
names, ports and certificate paths are substituted (a self-signed certificate for ``localhost``
and ``*.localhost``, made here with openssl).

The hub's name is ``hub.test`` (a real-looking domain: Chromium is told it and its subdomains are
this machine; on ``localhost`` browsers would refuse the attack below by themselves). A student
opens ``https://hub.test:<port>``, logs in, lands on her own origin
(``https://alice.hub.test:<port>``), an app draws and follows a slider (its kernel websocket
through nginx); the cookies are ``Secure`` and ``SameSite=Lax``; plain http redirects to https.

Cookie tossing (found by a red team): a page of mallory's origin sets a cookie for the hub's
whole domain holding mallory's own hub login, so that alice's next hub request would run as
mallory. The hub's cookies are ``__Host-`` cookies, which no page of another host can set or
shadow: alice stays alice.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest

from conftest import REPO, free_port
from test_hub import Hub, _remove_accounts, log_in, login_and_open, slider_moves_plots
from test_hub import localhost_names  # noqa: F401  (the *.localhost names, for Python's clients)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="the hub runs as root (as in CI)"),
]

NGINX_CONF = REPO / "deploy" / "nginx" / "dpexplore-hub.conf"
#: the hub's name in this test (resolved to this machine for Chromium by --host-resolver-rules)
DOMAIN = "hub.test"


def _nginx() -> str:
    exe = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(exe):
        subprocess.run(["make", "nginx"], cwd=REPO, check=True, timeout=600)
    return exe


class Nginx:
    """``deploy/nginx/dpexplore-hub.conf`` with its names, ports and paths substituted, in a
    prefix of its own (``nginx -p``), in the foreground of its own process group."""

    def __init__(self, hub_port: int):
        exe = _nginx()
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="dpxt-nginx-"))
        self.https, self.http = free_port(), free_port()
        cert, key = self.dir / "fullchain.pem", self.dir / "privkey.pem"
        subprocess.run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                f"/CN={DOMAIN}",
                "-addext",
                f"subjectAltName=DNS:{DOMAIN},DNS:*.{DOMAIN}",
                "-keyout",
                str(key),
                "-out",
                str(cert),
            ],
            check=True,
            capture_output=True,
        )
        conf = NGINX_CONF.read_text()
        for old, new in [
            ("hub.example.org", DOMAIN),
            ("/etc/ssl/dpexplore-hub/fullchain.pem", str(cert)),
            ("/etc/ssl/dpexplore-hub/privkey.pem", str(key)),
            ("127.0.0.1:8000", f"127.0.0.1:{hub_port}"),
            ("listen 443 ssl;", f"listen 127.0.0.1:{self.https} ssl;"),
            ("listen 80;", f"listen 127.0.0.1:{self.http};"),
        ]:
            assert old in conf, old
            conf = conf.replace(old, new)
        conf = "\n".join(line for line in conf.splitlines() if "[::]" not in line)
        (self.dir / "site.conf").write_text(conf)
        temp = "\n".join(
            f"    {k}_temp_path {self.dir / k};" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        (self.dir / "nginx.conf").write_text(f"""
daemon off;
user root;
worker_processes 1;
pid {self.dir / "nginx.pid"};
error_log {self.dir / "error.log"} info;
events {{ worker_connections 512; }}
http {{
    access_log {self.dir / "access.log"};
{temp}
    include {self.dir / "site.conf"};
}}
""")
        r = subprocess.run(
            [exe, "-t", "-p", str(self.dir), "-c", str(self.dir / "nginx.conf")], capture_output=True, text=True
        )
        assert r.returncode == 0, r.stderr
        self.proc = subprocess.Popen(
            [exe, "-p", str(self.dir), "-c", str(self.dir / "nginx.conf")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.http}/", timeout=2):
                    pass
            except urllib.error.HTTPError:
                break  # answered (a redirect to https, not followed to the self-signed host)
            except OSError:
                time.sleep(0.2)
                continue
            break

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGQUIT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        shutil.rmtree(self.dir, ignore_errors=True)


USERS = ("alice", "mallory")


@pytest.fixture(scope="module")
def proxied_hub():
    port = free_port()
    nginx = Nginx(port)
    try:
        hub = Hub("apps", USERS, url=f"https://{DOMAIN}:{nginx.https}", port=port)
        try:
            yield hub, nginx
        finally:
            hub.stop()
            _remove_accounts(USERS)
    finally:
        nginx.stop()


@pytest.fixture(scope="module")
def domain_browser(playwright_session):
    """Chromium (as conftest's) that resolves the test's hub name and its subdomains here."""
    from conftest import CHROMIUM_ARGS, launch_chromium

    rules = f"--host-resolver-rules=MAP {DOMAIN} 127.0.0.1, MAP *.{DOMAIN} 127.0.0.1"
    b = launch_chromium(playwright_session, args=[*CHROMIUM_ARGS, rules])
    try:
        yield b
    finally:
        b.close()


class _TLSBrowser:
    """New contexts accept the test's self-signed certificate."""

    def __init__(self, browser):
        self.browser = browser

    def new_context(self, **kwargs):
        return self.browser.new_context(ignore_https_errors=True, **kwargs)


def test_a_class_through_the_tls_proxy(proxied_hub, domain_browser):
    import requests

    hub, nginx = proxied_hub
    # plain http: a redirect to https, for the hub and for a student's origin alike
    for host in (DOMAIN, f"alice.{DOMAIN}"):
        r = requests.get(
            f"http://127.0.0.1:{nginx.http}/hub/", headers={"Host": host}, allow_redirects=False, timeout=30
        )
        assert r.status_code == 301 and r.headers["location"] == f"https://{host}/hub/", r.headers
    ctx, page = login_and_open(_TLSBrowser(domain_browser), hub, "alice", "voila/render/demo.ipynb")
    try:
        assert page.url.startswith(f"https://alice.{DOMAIN}:{nginx.https}/user/alice/"), page.url
        slider_moves_plots(page)  # the kernel's websocket, through nginx
        cookies = ctx.cookies()
        assert cookies
        for c in cookies:
            assert c["secure"] and c["sameSite"] in ("Lax", "Strict"), c
        hub_cookies = ctx.cookies([hub.base + "hub/"])
        assert any(c["name"] == "__Host-jupyterhub-hub-login" for c in hub_cookies), hub_cookies
    finally:
        ctx.close()
    # the page, its assets and its kernel's websocket (the slider above) came through nginx: the
    # browser was only given nginx's port, the hub listens on another
    assert nginx.https != hub.port


TOSS = """<!doctype html><title>notes</title><script>
for (const name of ["__Host-jupyterhub-hub-login", "jupyterhub-hub-login"]) {
  for (const path of ["/", "/hub/"]) {
    document.cookie = `${name}=${%(value)s}; Domain=%(domain)s; Path=${path}; Secure; SameSite=Lax`;
  }
}
window.tossed = document.cookie;
</script>"""


def test_a_page_of_a_classmate_cannot_toss_her_login_onto_the_hub(proxied_hub, domain_browser):
    """Cookie tossing: mallory's page sets cookies for the hub's whole domain holding her own
    hub login; alice, who opened it, is still alice on the hub afterwards."""
    hub, nginx = proxied_hub
    tls = _TLSBrowser(domain_browser)
    m_ctx = tls.new_context()
    m_page = m_ctx.new_page()
    log_in(m_page, hub, "mallory")
    mallory_login = [
        c["value"] for c in m_ctx.cookies([hub.base + "hub/"]) if c["name"].endswith("jupyterhub-hub-login")
    ]
    assert mallory_login
    m_ctx.close()
    ctx = tls.new_context()
    try:
        page = ctx.new_page()
        log_in(page, hub, "alice")
        evil = f"https://mallory.{DOMAIN}:{nginx.https}/user/mallory/files/notes.html"
        body = TOSS % {"value": json.dumps(mallory_login[0]), "domain": DOMAIN}
        page.route(evil, lambda route: route.fulfill(status=200, body=body, content_type="text/html"))
        page.goto(evil, timeout=60_000)
        page.wait_for_function("window.tossed !== undefined", timeout=30_000)
        page.unroute(evil)
        page.goto(hub.base + "hub/home", timeout=60_000)
        assert "/hub/login" not in page.url, page.url
        html = page.content()  # the hub's home page names the user it serves
        assert "alice" in html and "mallory" not in html, page.inner_text("body")[:300]
    finally:
        ctx.close()
