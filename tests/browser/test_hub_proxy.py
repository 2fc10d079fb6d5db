"""The TLS reverse proxy docs/hosting.md gives, ``deploy/nginx/dpexplore-hub.conf``, run as it is
(Debian's nginx, from ``make nginx``) in front of a hub of the class configuration: only the
names, ports and certificate paths are substituted (a self-signed certificate for ``localhost``
and ``*.localhost``, made here with openssl).

A student opens ``https://localhost:<port>``, logs in, lands on her own origin
(``https://alice.localhost:<port>``), an app draws and follows a slider (its kernel websocket
through nginx); the cookies are ``Secure`` and ``SameSite=Lax``; plain http redirects to https.
"""
from __future__ import annotations

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
from test_hub import Hub, _remove_accounts, login_and_open, slider_moves_plots
from test_hub import localhost_names  # noqa: F401  (the *.localhost names, for Python's clients)

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="the hub runs as root (as in CI)")]

NGINX_CONF = REPO / "deploy" / "nginx" / "dpexplore-hub.conf"


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
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                        "-subj", "/CN=localhost", "-addext",
                        "subjectAltName=DNS:localhost,DNS:*.localhost",
                        "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
        conf = NGINX_CONF.read_text()
        for old, new in [("hub.example.org", "localhost"),
                         ("/etc/ssl/dpexplore-hub/fullchain.pem", str(cert)),
                         ("/etc/ssl/dpexplore-hub/privkey.pem", str(key)),
                         ("127.0.0.1:8000", f"127.0.0.1:{hub_port}"),
                         ("listen 443 ssl;", f"listen 127.0.0.1:{self.https} ssl;"),
                         ("listen 80;", f"listen 127.0.0.1:{self.http};")]:
            assert old in conf, old
            conf = conf.replace(old, new)
        conf = "\n".join(line for line in conf.splitlines() if "[::]" not in line)
        (self.dir / "site.conf").write_text(conf)
        temp = "\n".join(f"    {k}_temp_path {self.dir / k};" for k in
                         ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        (self.dir / "nginx.conf").write_text(f"""
daemon off;
user root;
worker_processes 1;
pid {self.dir / 'nginx.pid'};
error_log {self.dir / 'error.log'} info;
events {{ worker_connections 512; }}
http {{
    access_log {self.dir / 'access.log'};
{temp}
    include {self.dir / 'site.conf'};
}}
""")
        r = subprocess.run([exe, "-t", "-p", str(self.dir), "-c", str(self.dir / "nginx.conf")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        self.proc = subprocess.Popen([exe, "-p", str(self.dir), "-c", str(self.dir / "nginx.conf")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
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


USERS = ("alice",)


@pytest.fixture(scope="module")
def proxied_hub():
    port = free_port()
    nginx = Nginx(port)
    try:
        hub = Hub("apps", USERS, url=f"https://localhost:{nginx.https}", port=port)
        try:
            yield hub, nginx
        finally:
            hub.stop()
            _remove_accounts(USERS)
    finally:
        nginx.stop()


def test_a_class_through_the_tls_proxy(proxied_hub, browser):
    import requests

    hub, nginx = proxied_hub
    # plain http: a redirect to https, for the hub and for a student's origin alike
    for host in ("localhost", "alice.localhost"):
        r = requests.get(f"http://127.0.0.1:{nginx.http}/hub/", headers={"Host": host},
                         allow_redirects=False, timeout=30)
        assert r.status_code == 301 and r.headers["location"] == f"https://{host}/hub/", r.headers
    ctx, page = login_and_open_tls(browser, hub)
    try:
        assert page.url.startswith(f"https://alice.localhost:{nginx.https}/user/alice/"), page.url
        slider_moves_plots(page)  # the kernel's websocket, through nginx
        cookies = ctx.cookies()
        assert cookies
        for c in cookies:
            assert c["secure"] and c["sameSite"] in ("Lax", "Strict"), c
    finally:
        ctx.close()
    # the page, its assets and its kernel's websocket (the slider above) came through nginx: the
    # browser was only given nginx's port, the hub listens on another
    assert nginx.https != hub.port


def login_and_open_tls(browser, hub):
    """:func:`test_hub.login_and_open` in a browser that accepts the test's self-signed
    certificate."""
    class _Browser:
        def new_context(self, **kwargs):
            return browser.new_context(ignore_https_errors=True, **kwargs)

    return login_and_open(_Browser(), hub, "alice", "voila/render/demo.ipynb")
