"""Kernels forked from a warm template (dpexplore.voila.forkserver): independent random state and
session keys, a template that died or cannot start, kernels that outlive their template."""

from __future__ import annotations

import logging
import os
import signal
import sys
import tempfile
import pathlib

import psutil
import pytest
from aio import run_coroutine

pytest.importorskip("ipykernel")

from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402
from jupyter_client.manager import AsyncKernelManager  # noqa: E402

from dpexplore.voila import forkserver, private_kernelspec_dir  # noqa: E402

pytestmark = pytest.mark.skipif(not forkserver.enabled(), reason="fork kernels unavailable here")

DRAW = "import numpy as np, os; print(repr((np.random.random(4).tolist(), os.getpid())))"


@pytest.fixture(scope="module")
def specs():
    with tempfile.TemporaryDirectory() as t:
        yield KernelSpecManager(kernel_dirs=[str(private_kernelspec_dir(pathlib.Path(t)))])


@pytest.fixture()
def fresh_template(monkeypatch):
    """This test's own template (started on first use), stopped at the end."""
    monkeypatch.setattr(forkserver, "_template", None)
    forkserver.enable(start=False)
    yield
    if forkserver._template is not None:
        forkserver._template.stop()
    from jupyter_client.provisioning.factory import KernelProvisionerFactory

    KernelProvisionerFactory.instance().default_provisioner_name = "local-provisioner"


async def _start(specs, app: str | None = None) -> AsyncKernelManager:
    km = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=specs)
    if app is None:
        await km.start_kernel()
    else:  # as dpexplore.voila.clone starts a dashboard's kernels
        await km.start_kernel(env={**os.environ, forkserver.ENV_APP: app})
    return km


async def _run(km, code: str, messages: list | None = None) -> str:
    """``code``'s printed output; every IOPub message of the run is appended to ``messages``."""
    kc = km.client()
    kc.start_channels()
    try:
        await kc.wait_for_ready(timeout=60)
        out = []

        def hook(m):
            out.append(m["content"].get("text", ""))
            if messages is not None:
                messages.append(m)

        reply = await kc.execute_interactive(code, timeout=60, output_hook=hook)
        assert reply["content"]["status"] == "ok", reply["content"]
        return "".join(out).strip()
    finally:
        kc.stop_channels()


DEMO = "dpexplore.apps.demo:build_demo"
OTHER = "dpexplore.apps.profile_gdp:build_profile_gdp"
#: the app, its comms as the kernel lists them, whether ipywidgets' registry (what a page's widget
#: manager gets the states of) holds exactly those widgets, a draw
APP_STATE = (
    "import comm, numpy as np; from dpexplore.apps.demo import build_demo; "
    "from ipywidgets.widgets.widget import _instances; "
    "app = build_demo(); m = comm.get_comm_manager(); "
    "print(repr((app.model_id, sorted(m.comms), sorted(_instances) == sorted(m.comms), "
    "np.random.random(2).tolist())))"
)
#: a value change of one of the app's sliders (it must reach the page: a comm_msg ``update``)
MOVE = (
    "import ipywidgets as W; from ipywidgets.widgets.widget import _instances; "
    "s = next(w for w in _instances.values() "
    "if isinstance(w, W.FloatSlider) and w.comm is not None "
    "and w.comm.comm_id in comm.get_comm_manager().comms); "
    "s.value = (s.max + s.min) / 2 + 0.1 * (s.max - s.min); print(s.model_id)"
)


def test_kernels_with_the_app_built_in_the_template(specs, fresh_template):
    """Kernels asked for a dashboard's app carry the one built in the template: the same widgets
    under the same model ids (one rendered page fits them all), only that app's comms and widgets
    (not those of another app built in the template), numpy draws of their own, and widgets
    that do send (their comms got the kernel: ipywidgets sends nothing through a comm without
    one). A second build makes a new app; a kernel not asked for the app lists none of its
    comms."""

    async def go():
        other = await _start(specs, OTHER)  # the template holds two apps from now on
        await other.shutdown_kernel(now=True)
        kms = [await _start(specs, DEMO), await _start(specs, DEMO), await _start(specs)]
        try:
            generations = [getattr(km.provisioner, "app_generation", None) for km in kms]
            states = [eval(await _run(km, APP_STATE)) for km in kms[:2]]
            moved = []
            mover = await _run(kms[0], MOVE, moved)
            again = await _run(kms[0], "print(build_demo().model_id)")
            plain = await _run(kms[2], "import comm; print(len(comm.get_comm_manager().comms))")
        finally:
            for km in kms:
                await km.shutdown_kernel(now=True)
        return generations, states, mover, moved, again, plain

    generations, states, mover, moved, again, plain = run_coroutine(go())
    gen = forkserver.template().generation
    assert generations == [gen, gen, 0]
    (root_a, comms_a, only_a, draw_a), (root_b, comms_b, only_b, draw_b) = states
    assert root_a == root_b and comms_a == comms_b and root_a in comms_a
    assert only_a and only_b
    assert draw_a != draw_b
    updates = [
        m for m in moved if m["header"]["msg_type"] == "comm_msg" and m["content"]["data"].get("method") == "update"
    ]
    assert updates, [m["header"]["msg_type"] for m in moved]
    assert mover in {m["content"]["comm_id"] for m in updates}  # the slider's echo at least
    assert len({m["content"]["comm_id"] for m in updates}) > 1  # and what it redrew
    assert again != root_a
    assert plain == "0"


def test_app_of_notebook_reads_the_shipped_dashboards():
    """Every shipped dashboard notebook names its app (the gallery does not: it is no app)."""
    import dpexplore.apps

    folder = pathlib.Path(dpexplore.apps.__file__).parent / "notebooks"
    specs = {p.name: forkserver.app_of_notebook(p) for p in folder.glob("*.ipynb")}
    assert specs.pop("index.ipynb") is None
    assert specs["rdp_explorer.ipynb"] == "dpexplore.apps.rdp_explorer:build_rdp_explorer"
    import importlib

    for name, spec in specs.items():
        assert spec is not None, name
        module, builder = spec.split(":")
        assert callable(getattr(importlib.import_module(module), builder)), name


def test_two_forked_kernels_draw_independently(specs, fresh_template):
    async def go():
        kms = [await _start(specs), await _start(specs)]
        try:
            outs = [eval(await _run(km, DRAW)) for km in kms]
            tpl = forkserver.template().proc.pid
            parents = [psutil.Process(km.provisioner.pid).ppid() for km in kms]
            keys = [km.session.key for km in kms]
            cmdlines = [" ".join(psutil.Process(km.provisioner.pid).cmdline()) for km in kms]
        finally:
            for km in kms:
                await km.shutdown_kernel(now=True)
        return outs, tpl, parents, keys, cmdlines

    outs, tpl, parents, keys, cmdlines = run_coroutine(go())
    (draws_a, pid_a), (draws_b, pid_b) = outs
    assert parents == [tpl, tpl]  # both forked from the template
    assert pid_a != pid_b and len(set(draws_a + draws_b)) == 8
    assert draws_a != draws_b
    assert keys[0] != keys[1] and all(len(k) >= 32 for k in keys)
    assert all("ipykernel_launcher" in c for c in cmdlines)  # counted as kernels by tools


SHELL_STATE = (
    "import os, sys; ip = get_ipython(); print(repr((ip.history_manager.enabled, "
    "ip.kernel is not None and ip.parent is ip.kernel, "
    "type(sys.modules['ipykernel.ipkernel'].sys).__name__, "
    "len(ip.kernel._kernel_modules) > 500, sys.modules['__main__'] is ip.user_module, "
    "ip.starting_dir == os.getcwd(), os.environ.get('PAGER'), "
    "ip.ast_node_interactivity, id(ip))))"
)


def test_forked_kernels_use_the_templates_shell_unless_configured_otherwise(specs, fresh_template):
    """The shell made once in the template (history off) serves each forked kernel: it has that
    kernel, its working directory and environment, ipykernel's module ``sys`` is ``sys`` again
    and the kernel's module list is full; each kernel's namespace is its own, and an error is
    reported as usual. A kernel started with an option for IPython's classes makes its own
    shell, with that option."""

    async def go():
        kms = [await _start(specs), await _start(specs)]
        own = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=specs)
        await own.start_kernel(extra_arguments=["--InteractiveShell.ast_node_interactivity=all"])
        kms.append(own)
        try:
            states = [eval(await _run(km, SHELL_STATE)) for km in kms]
            await _run(kms[0], "x_only_here = 1")
            seen = await _run(kms[1], "print('x_only_here' in globals())")
            kc = kms[0].client()
            kc.start_channels()
            try:
                await kc.wait_for_ready(timeout=60)
                error = await kc.execute_interactive("1 / 0", timeout=60, output_hook=lambda m: None)
            finally:
                kc.stop_channels()
            forked = [type(km.provisioner.process).__name__ != "Popen" for km in kms]
        finally:
            for km in kms:
                await km.shutdown_kernel(now=True)
        return states, seen, error["content"], forked

    states, seen, error, forked = run_coroutine(go())
    assert forked == [True, True, True]
    for state in states[:2]:
        assert state[:8] == (False, True, "module", True, True, True, "cat", "last_expr"), state
    assert states[2][:8] == (True, True, "module", True, True, True, "cat", "all"), states[2]
    assert seen == "False"
    assert error["status"] == "error" and error["ename"] == "ZeroDivisionError"


def test_forked_kernel_serves_widgets(specs, fresh_template):
    """ipywidgets, imported in the template before any kernel, registers its comm targets in the
    forked kernel (a page's widget manager opens ``jupyter.widget.control``)."""
    code = (
        "from comm import get_comm_manager; import ipywidgets as w; s = w.IntSlider(3); "
        "print(sorted(get_comm_manager().targets), s.comm.comm_id in "
        "get_comm_manager().comms)"
    )

    async def go():
        km = await _start(specs)
        try:
            return await _run(km, code)
        finally:
            await km.shutdown_kernel(now=True)

    out = run_coroutine(go())
    assert out == "['jupyter.widget', 'jupyter.widget.control'] True"


def test_kernel_started_while_template_is_dead_serves(specs, fresh_template, caplog):
    caplog.set_level(logging.INFO, logger="dpexplore.voila")

    async def go():
        km1 = await _start(specs)
        first = forkserver.template().proc
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        km2 = await _start(specs)  # the dead template is replaced
        try:
            out1 = eval(await _run(km1, DRAW))  # a kernel outlives its template
            out2 = eval(await _run(km2, DRAW))
            second = forkserver.template().proc.pid
            parent2 = psutil.Process(km2.provisioner.pid).ppid()
        finally:
            await km1.shutdown_kernel(now=True)
            await km2.shutdown_kernel(now=True)
        return first.pid, second, parent2, out1, out2

    first, second, parent2, out1, out2 = run_coroutine(go())
    assert second != first and parent2 == second
    assert out1[0] != out2[0]
    assert any("exited" in r.getMessage() for r in caplog.records)


def test_a_template_that_cannot_start_falls_back_to_a_normal_kernel(specs, fresh_template, caplog, monkeypatch):
    caplog.set_level(logging.INFO, logger="dpexplore.voila")
    forkserver.template().python = "/bin/false"  # exits at once: every fork fails

    async def go():
        km = await _start(specs)
        try:
            out = eval(await _run(km, DRAW))
            parent = psutil.Process(km.provisioner.pid).ppid()
            return out, parent, type(km.provisioner.process).__name__
        finally:
            await km.shutdown_kernel(now=True)

    (draws, pid), parent, kind = run_coroutine(go())
    assert parent == os.getpid() and kind == "Popen" and len(draws) == 4
    fails = [r.getMessage() for r in caplog.records if "normal kernel" in r.getMessage()]
    assert len(fails) == 1 and "forked kernel start failed" in fails[0]


def test_forked_kernel_is_shut_down_and_seen_gone(specs, fresh_template):
    async def go():
        km = await _start(specs)
        pid = km.provisioner.pid
        assert await km.is_alive()
        await km.shutdown_kernel(now=True)
        return pid

    pid = run_coroutine(go())
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_only_ipykernel_on_this_interpreter_is_forked():
    assert forkserver._launcher_args([sys.executable, "-m", "ipykernel_launcher", "-f", "c"]) == ["-f", "c"]
    assert forkserver._launcher_args(["/elsewhere/python", "-m", "ipykernel_launcher"]) is None
    assert forkserver._launcher_args(["R", "--slave", "-e", "IRkernel::main()"]) is None


def test_switch_turns_forking_off(monkeypatch):
    monkeypatch.setenv(forkserver.ENV_SWITCH, "0")
    assert forkserver.enabled() is False
    assert forkserver.enable(start=False) is False


def test_a_fork_answered_too_late_leaves_no_kernel_behind(specs, fresh_template, caplog, monkeypatch):
    """The server gives up on a template that has not answered in time (a first build of an app on
    a loaded machine, say) and starts a normal kernel. The fork the template makes after that must
    not become a kernel: it would run on the same connection file, unknown to the server (the
    page's kernel shutdown never reaches it), until the server stops."""
    caplog.set_level(logging.INFO, logger="dpexplore.voila")
    monkeypatch.setattr(forkserver, "FORK_ANSWER_TIMEOUT", 0.0)  # every answer comes too late

    def on_file(path: str) -> list[int]:
        out = []
        for p in psutil.process_iter(["cmdline", "status"]):  # (processes gone meanwhile: skipped)
            if path in " ".join(p.info["cmdline"] or []) and p.info["status"] != psutil.STATUS_ZOMBIE:
                out.append(p.pid)
        return out

    async def go():
        import asyncio

        km = await _start(specs, app="dpexplore.apps.demo:build_demo")
        try:
            out = eval(await _run(km, DRAW))
            await asyncio.sleep(3)  # the template has forked by now
            return out, km.connection_file, on_file(km.connection_file), km.provisioner.pid
        finally:
            await km.shutdown_kernel(now=True)

    (draws, pid), conn_file, running, kernel = run_coroutine(go())
    assert len(draws) == 4 and pid == kernel
    assert running == [kernel], f"processes on {conn_file}: {running}, the server's kernel {kernel}"
    assert any("forked kernel start failed" in r.getMessage() for r in caplog.records)
