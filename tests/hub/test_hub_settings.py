"""The hub's configuration from its environment knobs (``dpexplore.hub.settings``), the roster and
the command line ``dpexplore hub-users``, without starting a hub (tests/browser/test_hub.py does).

What a host relies on: the dummy authenticator only behind the test switch and never beyond
loopback; a mistyped knob is an error, not a silent default; every knob is in docs/hosting.md;
the state folder is never the checkout, and the checkout ignores a hub's secrets anyway; each
student's server on an origin of its own with SameSite cookies; the LTI 1.3 and OAuth fragments
set what their documentation says; the roster stores no plain password.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest
from aio import run_coroutine

pytest.importorskip("jupyterhub")

from traitlets.config import Config  # noqa: E402

from dpexplore.hub import roster as R  # noqa: E402
from dpexplore.hub.settings import KNOBS, configure, default_max_users, knobs_markdown  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"


@pytest.fixture(autouse=True)
def _any_python(monkeypatch):
    """The configurations here are not started: whether the students' accounts can run the
    Python is checked by its own test."""
    from dpexplore.hub import settings

    monkeypatch.setattr(settings, "_check_students_python", lambda python: None)


def _configure(tmp_path, **env) -> Config:
    c = Config()
    base = {"DPEXPLORE_HUB_DIR": str(tmp_path / "state"), "PATH": os.defpath, "DPEXPLORE_HUB_PYTHON": sys.executable}
    configure(c, {**base, **env}, DEPLOY)
    return c


def test_defaults_are_a_real_class(tmp_path):
    c = _configure(tmp_path, DPEXPLORE_HUB_USERS="ana,Ben")
    assert c.JupyterHub.authenticator_class == "dpexplore.hub.RosterAuthenticator"
    assert c.Authenticator.allow_all is False
    assert c.JupyterHub.subdomain_host == "http://localhost:8000"
    assert c.JupyterHub.ip == "127.0.0.1" and c.JupyterHub.hub_ip == "127.0.0.1"
    assert c.JupyterHub.tornado_settings["cookie_options"] == {"samesite": "Lax"}
    assert c.JupyterHub.spawner_class == "dpexplore.hub.StudentSpawner"
    assert c.StudentSpawner.mode == "apps" and c.StudentSpawner.tasks_limit == 256
    assert c.StudentSpawner.cpu_limit == 1.0
    assert c.Spawner.mem_limit == 2**30
    assert c.JupyterHub.active_server_limit == default_max_users() >= 1
    assert c.Spawner.args == ["--DPExploreAppsOnly.max_kernels=5"]
    # JupyterHub's single-user server, started without its slowest optional import
    assert c.Spawner.cmd[1:] == ["-m", "dpexplore.hub.singleuser"]
    state = tmp_path / "state"
    assert oct(state.stat().st_mode & 0o777) == "0o700"
    assert R.Roster(state / "roster").names() == ["ana", "ben"]
    text = (state / "roster").read_text()
    passwords = dict(line.split() for line in (state / "new-passwords.txt").read_text().splitlines())
    assert sorted(passwords) == ["ana", "ben"]
    for name, pw in passwords.items():
        assert pw not in text  # only hashes are stored
        assert R.verify_password(pw, R.Roster(state / "roster").get(name))


def test_https_cookies_are_secure_and_cannot_be_tossed(tmp_path):
    c = _configure(tmp_path, DPEXPLORE_HUB_URL="https://hub.example.org", DPEXPLORE_HUB_MODE="lab")
    assert c.JupyterHub.subdomain_host == "https://hub.example.org"
    assert c.JupyterHub.tornado_settings["cookie_options"] == {"samesite": "Lax", "secure": True}
    assert '"secure": true' in c.Spawner.environment["JUPYTERHUB_COOKIE_OPTIONS"]
    # a page of a student's origin (a subdomain) cannot overwrite a __Host- cookie of the hub
    assert c.JupyterHub.cookie_host_prefix_enabled is True
    assert c.Spawner.environment["PYTHONSAFEPATH"] == "1"  # no module of hers shadows the server


def test_lab_over_plain_http_only_on_localhost(tmp_path):
    with pytest.raises(ValueError, match="needs https"):
        _configure(tmp_path, DPEXPLORE_HUB_MODE="lab", DPEXPLORE_HUB_URL="http://hub.example.org")
    c = _configure(tmp_path, DPEXPLORE_HUB_MODE="lab", DPEXPLORE_HUB_URL="http://localhost:8000")
    assert "cookie_host_prefix_enabled" not in c.JupyterHub  # http: a __Host- cookie needs TLS
    # apps mode runs no student code: nobody can serve a page from a student's origin
    _configure(tmp_path, DPEXPLORE_HUB_URL="http://hub.example.org")


@pytest.mark.skipif(os.geteuid() != 0, reason="checked as root only (the hub runs as root)")
def test_a_students_python_they_cannot_run_is_refused(tmp_path, monkeypatch):
    from dpexplore.hub import settings

    monkeypatch.undo()
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "python").symlink_to(sys.executable)
    with pytest.raises(ValueError, match="cannot be run by their accounts"):
        settings._check_students_python(str(private / "python"))


@pytest.mark.parametrize(
    "env, message",
    [
        ({"DPEXPLORE_HUB_AUTH": "dummy"}, "DPEXPLORE_HUB_TESTING=1"),
        (
            {"DPEXPLORE_HUB_AUTH": "dummy", "DPEXPLORE_HUB_TESTING": "1", "DPEXPLORE_HUB_IP": "0.0.0.0"},
            "beyond loopback",
        ),
        (
            {"DPEXPLORE_HUB_AUTH": "dummy", "DPEXPLORE_HUB_TESTING": "1", "DPEXPLORE_HUB_IP": "10.0.0.5"},
            "beyond loopback",
        ),
        ({"DPEXPLORE_HUB_AUTH": "pam"}, "DPEXPLORE_HUB_AUTH must be"),
        ({"DPEXPLORE_HUB_MODE": "root"}, "DPEXPLORE_HUB_MODE must be"),
        ({"DPEXPLORE_HUB_MEM_LIMT": "8G"}, "unknown hub settings ['DPEXPLORE_HUB_MEM_LIMT']"),
        ({"DPEXPLORE_HUB_APPS_USER": "x"}, "unknown hub settings"),
        ({"DPEXPLORE_HUB_PORT": "eighty"}, "DPEXPLORE_HUB_PORT must be a whole number"),
        ({"DPEXPLORE_HUB_URL": "hub.example.org"}, "DPEXPLORE_HUB_URL must be like"),
        ({"DPEXPLORE_HUB_MEM_LIMIT": "lots"}, "DPEXPLORE_HUB_MEM_LIMIT must be like"),
        ({"DPEXPLORE_HUB_MEM_LIMIT": "-1G"}, "DPEXPLORE_HUB_MEM_LIMIT must be like"),
        ({"DPEXPLORE_HUB_CPU_LIMIT": "0"}, "DPEXPLORE_HUB_CPU_LIMIT must be a positive"),
        ({"DPEXPLORE_HUB_CPU_LIMIT": "all"}, "DPEXPLORE_HUB_CPU_LIMIT must be a positive"),
        ({"DPEXPLORE_HUB_USERS": "ana,\u0430na"}, "name must be ASCII"),
        (
            {
                "DPEXPLORE_HUB_AUTH": "oauth",
                "DPEXPLORE_HUB_OAUTH_CLIENT_ID": "a",
                "DPEXPLORE_HUB_OAUTH_CLIENT_SECRET": "b",
                "DPEXPLORE_HUB_OAUTH_AUTHORIZE_URL": "c",
                "DPEXPLORE_HUB_OAUTH_TOKEN_URL": "d",
                "DPEXPLORE_HUB_OAUTH_USERDATA_URL": "e",
            },
            "needs a roster",
        ),
    ],
)
def test_unsafe_or_mistyped_settings_are_refused(tmp_path, env, message):
    with pytest.raises(ValueError) as err:
        _configure(tmp_path, **env)
    assert message in str(err.value)


def test_dummy_only_for_tests_on_loopback(tmp_path):
    c = _configure(tmp_path, DPEXPLORE_HUB_AUTH="dummy", DPEXPLORE_HUB_TESTING="1", DPEXPLORE_HUB_USERS="ana")
    assert c.JupyterHub.authenticator_class == "dummy"
    assert c.Authenticator.allowed_users == {"ana"} and c.Authenticator.allow_all is False


def test_lti13_fragment(tmp_path):
    c = _configure(
        tmp_path,
        DPEXPLORE_HUB_AUTH="lti13",
        DPEXPLORE_HUB_USERS="ana",
        DPEXPLORE_HUB_LTI13_CLIENT_ID="125900000000000001",
        DPEXPLORE_HUB_LTI13_ISSUER="https://canvas.instructure.com",
        DPEXPLORE_HUB_LTI13_AUTHORIZE_URL="https://lms.example.edu/api/lti/authorize",
        DPEXPLORE_HUB_LTI13_JWKS_URL="https://lms.example.edu/api/lti/jwks",
    )
    assert c.JupyterHub.authenticator_class == "ltiauthenticator.lti13.auth.LTI13Authenticator"
    assert c.LTI13Authenticator.client_id == {"125900000000000001"}
    assert c.LTI13Authenticator.issuer == "https://canvas.instructure.com"
    assert c.LTI13Authenticator.jwks_endpoint == "https://lms.example.edu/api/lti/jwks"
    assert c.Authenticator.allowed_users == {"ana"}


def test_oauth_fragment(tmp_path):
    c = _configure(
        tmp_path,
        DPEXPLORE_HUB_AUTH="oauth",
        DPEXPLORE_HUB_USERS="ana",
        DPEXPLORE_HUB_URL="https://hub.example.org",
        DPEXPLORE_HUB_OAUTH_CLIENT_ID="dpexplore",
        DPEXPLORE_HUB_OAUTH_CLIENT_SECRET="s3cret",
        DPEXPLORE_HUB_OAUTH_AUTHORIZE_URL="https://id.example.edu/auth",
        DPEXPLORE_HUB_OAUTH_TOKEN_URL="https://id.example.edu/token",
        DPEXPLORE_HUB_OAUTH_USERDATA_URL="https://id.example.edu/userinfo",
    )
    assert c.JupyterHub.authenticator_class == "generic-oauth"
    assert c.GenericOAuthenticator.oauth_callback_url == "https://hub.example.org/hub/oauth_callback"
    assert c.GenericOAuthenticator.allowed_users == {"ana"}
    assert c.GenericOAuthenticator.username_claim == "preferred_username"


def test_lab_mode(tmp_path):
    c = _configure(
        tmp_path,
        DPEXPLORE_HUB_MODE="lab",
        DPEXPLORE_HUB_MEM_LIMIT="2G",
        DPEXPLORE_HUB_TASKS_LIMIT="512",
        DPEXPLORE_HUB_MAX_USERS="40",
    )
    assert c.StudentSpawner.mode == "lab" and c.Spawner.default_url == "/lab"
    assert c.Spawner.mem_limit == 2 * 2**30 and c.StudentSpawner.tasks_limit == 512
    assert c.JupyterHub.active_server_limit == 40
    assert c.Spawner.environment["JUPYTER_CONFIG_PATH"].endswith("singleuser-lab")


def test_every_knob_is_documented_and_read():
    hosting = (REPO / "docs" / "hosting.md").read_text()
    assert knobs_markdown() in hosting, "docs/hosting.md's table differs from settings.KNOBS"
    source = (REPO / "dpexplore" / "hub" / "settings.py").read_text()
    fragments = "".join(p.read_text() for p in (DEPLOY / "auth").glob("*.py"))
    for knob in KNOBS:  # declared once, read at least once
        assert source.count(knob.name) >= 2 or f'"{knob.name}"' in fragments, knob.name


def test_state_never_in_the_checkout(monkeypatch):
    from dpexplore.hub.state import default_state_dir

    if os.geteuid() == 0:
        assert default_state_dir() == pathlib.Path("/var/lib/dpexplore-hub")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setenv("XDG_STATE_HOME", "/home/x/.local/state")
    assert default_state_dir() == pathlib.Path("/home/x/.local/state/dpexplore-hub")
    # a hub started in the checkout by mistake: git ignores its secrets
    names = [
        "jupyterhub_cookie_secret",
        "jupyterhub.sqlite",
        "jupyterhub.sqlite-journal",
        "jupyterhub-proxy.pid",
        "roster",
        "new-passwords.txt",
    ]
    r = subprocess.run(["git", "check-ignore", *names], cwd=REPO, capture_output=True, text=True)
    if r.returncode == 128:
        pytest.skip("not a git checkout")
    assert sorted(r.stdout.split()) == sorted(names)


@pytest.mark.parametrize(
    "name",
    [
        "admin",
        "root",
        "a" * 29,
        "x" * 5000,
        "\u0430lice",
        "al ice",
        "alice\u200b",
        "-alice",
        "alice-",
        "1alice",
        "",
        "al_ice",
        "ali.ce",
        "ALICE\u0301",
    ],
)
def test_names_refused(name):
    with pytest.raises(ValueError):
        R.check_name(name)


@pytest.mark.parametrize(
    "name, norm",
    [
        ("Alice", "alice"),
        (" bob ", "bob"),
        ("\uff41lice", "alice"),  # full-width a: NFKC
        ("a" * 28, "a" * 28),
        ("x-1", "x-1"),
    ],
)
def test_names_normalized(name, norm):
    assert R.check_name(name) == norm


def test_passwords_hashed_and_checked():
    h = R.hash_password("correct horse")
    assert h.startswith("scrypt$") and "correct" not in h
    assert R.verify_password("correct horse", h)
    for wrong in ("correct horse ", "Correct horse", "", "x" * 1000):
        assert not R.verify_password(wrong, h)
    for broken in ("", "plain", "scrypt$1$1$1$$", "md5$x$y$z$a$b", h.replace("$32768$", "$99999999$")):
        assert not R.verify_password("correct horse", broken)
    assert R.hash_password("pw") != R.hash_password("pw")  # salted
    with pytest.raises(ValueError):
        R.hash_password("")


def test_hub_users_command(tmp_path):
    roster = tmp_path / "roster"

    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "dpexplore.cli", "hub-users", "--roster", str(roster), *args],
            capture_output=True,
            text=True,
        )

    r = run("add", "ana", "Ben")
    assert r.returncode == 0, r.stderr
    first = dict(line.split() for line in r.stdout.splitlines())
    assert sorted(first) == ["ana", "ben"] and all(len(p) == 12 for p in first.values())
    assert oct(roster.stat().st_mode & 0o777) == "0o600"
    assert run("add", "ana").stdout == ""  # already there: no new password
    r = run("reset", "ana")
    new = r.stdout.split()[1]
    assert new != first["ana"]
    entry = R.Roster(roster).get("ana")
    assert R.verify_password(new, entry) and not R.verify_password(first["ana"], entry)
    assert run("reset", "zoe").returncode == 2
    r = run("add", "root")
    assert r.returncode == 2 and "reserved" in r.stderr
    assert "ana\t" in run("list").stdout
    r = run("remove", "ben")
    assert r.returncode == 0 and "ben: off the roster" in r.stdout
    assert R.Roster(roster).names() == ["ana"]


class _Handler:
    class request:  # noqa: N801 - the shape of a tornado handler's request
        remote_ip = "127.0.0.1"


def _authenticator(tmp_path, **traits):
    from dpexplore.hub.auth import RosterAuthenticator

    roster = R.Roster(tmp_path / "roster")
    passwords = roster.add(["ana", "ben"])
    return RosterAuthenticator(roster_file=str(roster.path), **traits), passwords


def test_failures_slow_a_name_but_never_lock_it_out(tmp_path):
    """A classmate guessing at ana's password (from any address: none is trusted) slows ana's
    next login by at most max_delay; her own password still logs her in."""

    auth, pw = _authenticator(tmp_path, max_delay=0.5)

    async def go():
        for _ in range(8):
            assert await auth.authenticate(_Handler, {"username": "ana", "password": "guess"}) is None
        assert auth._delay("ana") == 0.5
        assert auth._delay("ben") == 0.0  # another name is untouched
        assert await auth.authenticate(_Handler, {"username": "Ana", "password": pw["ana"]}) == "ana"
        assert auth._delay("ana") == 0.0  # a success forgets the failures
        # a name off the roster is refused without a record, however often
        for i in range(50):
            assert await auth.authenticate(_Handler, {"username": f"x{i}", "password": "p"}) is None
        assert list(auth._failures) == []

    run_coroutine(go())


def test_password_checks_are_budgeted(tmp_path):
    """Past the hub's budget of scrypt checks an attempt is refused at once (the CPU stays free
    for the class); the budget refills."""

    auth, pw = _authenticator(tmp_path, checks_per_second=0.001, burst=2)

    async def go():
        assert await auth.authenticate(_Handler, {"username": "ben", "password": "no"}) is None
        assert await auth.authenticate(_Handler, {"username": "ben", "password": "no"}) is None
        # budget spent: even the right password waits for the refill
        assert await auth.authenticate(_Handler, {"username": "ana", "password": pw["ana"]}) is None
        auth._tokens = 1.0
        assert await auth.authenticate(_Handler, {"username": "ana", "password": pw["ana"]}) == "ana"

    run_coroutine(go())


def test_failure_record_is_bounded(tmp_path):
    auth, _ = _authenticator(tmp_path)
    auth.MAX_NAMES = 3
    for name in ("a1", "a2", "a3", "a4", "a5"):
        auth._failed(name)
    assert list(auth._failures) == ["a3", "a4", "a5"]


def _python(*lines: str) -> str:
    """The output of a fresh interpreter running ``lines`` (asserting it succeeded)."""
    import subprocess

    r = subprocess.run([sys.executable, "-c", "\n".join(lines)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def test_the_students_server_command_starts_jupyterhubs_server_without_the_slow_import():
    """``python -m dpexplore.hub.singleuser`` is jupyterhub.singleuser (its --help) in a process
    where rfc3987_syntax (a 0.77 CPU-s Lark grammar, imported by jsonschema only to check the
    "iri" format) is not imported; and the hub's process finder knows both commands."""
    from dpexplore.hub.state import is_single_user_server

    out = _python(
        "import runpy, sys; sys.argv = ['dpexplore.hub.singleuser', '--help']",
        "try:\n    runpy.run_module('dpexplore.hub.singleuser', run_name='__main__')",
        "except SystemExit:\n    pass",
        "import jsonschema._format, jupyterhub.singleuser",
        "print('LEFT OUT' if sys.modules.get('rfc3987_syntax', 0) is None else 'IMPORTED')",
    )
    assert "Jupyter Application" in out  # the server's own --help: its main() ran
    assert out.strip().endswith("LEFT OUT")
    assert is_single_user_server([sys.executable, "-m", "dpexplore.hub.singleuser"])
    assert is_single_user_server(["/usr/bin/jupyterhub-singleuser"])
    assert not is_single_user_server([sys.executable, "-m", "dpexplore.cli", "serve"])


def test_a_server_process_imports_no_kernel_library(tmp_path):
    """A student's apps-only server, with its extensions loaded as on the hub (the deployed
    ``jupyter_server_config.json``), imports neither numpy nor a widget library: the page's
    plotly.js path comes from :mod:`dpexplore.ui.assets`; ``dpexplore.ui.plotwidget`` (numpy,
    anywidget, ipywidgets, IPython: 0.25 CPU-s of every spawn) is a kernel's import only."""
    config = DEPLOY / "singleuser"
    out = _python(
        "import os, sys, logging",
        f"os.environ['JUPYTER_CONFIG_PATH'] = {str(config)!r}",
        "from dpexplore._server_imports import skip_slow_optional_imports",
        "skip_slow_optional_imports()",
        "from jupyter_server.serverapp import ServerApp",
        "app = ServerApp.instance()",
        "app.log.setLevel(logging.ERROR)",
        f"app.initialize(['--port=0', '--no-browser', '--ServerApp.root_dir={tmp_path}'])",
        "assert 'dpexplore.voila.apps_only' in app.extension_manager.extensions",
        "print(app.web_app.settings['dpexplore_max_kernels'])",
        "print(sorted(m for m in ('numpy', 'anywidget', 'ipywidgets', 'IPython',",
        "                         'dpexplore.ui.plotwidget') if m in sys.modules))",
    )
    assert out.split() == ["5", "[]"], out


def test_event_schemas_still_validate_without_the_slow_import():
    """With rfc3987_syntax left out, jupyter_events validates jupyter_server's events as before
    (no schema of theirs uses the "iri" formats it would check)."""
    out = _python(
        "from dpexplore._server_imports import skip_slow_optional_imports",
        "assert skip_slow_optional_imports() == ['rfc3987_syntax']",
        "import pathlib, jupyter_server",
        "from jupyter_events import EventLogger",
        "folder = pathlib.Path(jupyter_server.__file__).parent / 'event_schemas'",
        "schemas = sorted(folder.rglob('*.yaml'))",
        "for f in schemas:\n    EventLogger().register_event_schema(f)",
        "print(len(schemas))",
    )
    assert int(out.strip()) >= 1


class _Starting:
    """What StudentSpawner._until_listening reads of a spawner: its timeout, its pace and poll()."""

    def __init__(self, http_timeout=5.0, ended_after=None):
        import time

        self.http_timeout, self.listen_every = http_timeout, 0.05
        self._t0, self._ended_after = time.monotonic(), ended_after

    async def poll(self):
        import time

        if self._ended_after is not None and time.monotonic() - self._t0 >= self._ended_after:
            return 1
        return None


def _wait(fake, port):
    import time

    from dpexplore.hub.spawner import StudentSpawner

    async def go():
        t0 = time.monotonic()
        await StudentSpawner._until_listening(fake, "127.0.0.1", port)
        return time.monotonic() - t0

    return run_coroutine(go())


def test_a_spawn_ends_when_the_server_listens_not_at_the_hubs_next_backoff():
    """The spawner returns within a look (0.05 s here) of its server's port opening, so the
    hub's own check (exponential backoff up to 5 s) passes at its first try; a server that ends
    or never opens its port does not hold the spawn past its end or http_timeout."""
    import socket
    import threading

    def free_port():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    port = free_port()
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)

    def listen_later():
        import time

        time.sleep(0.4)
        srv.bind(("127.0.0.1", port))
        srv.listen(4)

    t = threading.Thread(target=listen_later)
    t.start()
    try:
        waited = _wait(_Starting(), port)
    finally:
        t.join()
        srv.close()
    assert 0.35 <= waited < 2.0
    assert _wait(_Starting(ended_after=0.2), free_port()) < 1.5  # the process ended
    assert 0.9 <= _wait(_Starting(http_timeout=1.0), free_port()) < 2.5  # nothing ever listened
