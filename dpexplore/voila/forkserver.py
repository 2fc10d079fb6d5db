"""Kernels forked from a warm, pre-imported template process (issue 36).

A dashboard kernel spends most of its start importing (ipykernel, IPython, numpy, scipy,
ipywidgets, dpexplore's apps: 1.7-3.5 CPU-s on a loaded 2-core machine); building the app after
that takes ~0.1 CPU-s. Here one **template** process per server does those imports once and then
only waits on a Unix socket; each kernel is a ``fork()`` of it that becomes an ordinary ipykernel
(``IPKernelApp``) on its own connection file. Pages of the imported modules are shared
copy-on-write with the template (``gc.freeze()`` before forking keeps the collector from touching
them).

The template starts nothing that cannot cross a fork: no event loop, no ZeroMQ context, no
thread, no socket but its listening one (closed in the child), no secret (the connection file
with the kernel's HMAC key is written by the server per kernel, after the fork is requested).
Each child

* becomes a kernel only when the server, having read its pid, says so (:data:`GO`); a child
  forked after the server gave up on the start (and started a normal kernel) exits;
* reseeds numpy's global generator (a fork copies it; Python's :mod:`random` reseeds itself at
  fork) from the operating system's entropy;
* starts a new session (its process group is its own, as a normal kernel's: the server signals
  the group), restores the default signal handlers, and takes the server's environment and
  working directory of that kernel start;
* watches the server's pid, not its parent's (the template may be restarted while the kernel
  lives): ipykernel's ``ParentPollerUnix`` is swapped for :class:`_ServerPoller`;
* does what the template's modules do at import in a kernel: ipywidgets registers its comm
  targets once the kernel runs (:func:`_kernel_started`);
* rewrites its command line to ``python -m ipykernel_launcher -f <connection file>`` in place
  (the template's command line reserves the room), so tools counting kernels by their command
  line see it.

**What a kernel makes at its start, made in the template.** A forked kernel shares the
template's pages until it writes them, and a write of a reference count is a write: making
ipykernel's ``IPythonKernel`` touched ~20 MiB of them (a 26 MiB kernel). Two parts are made once in
the template instead: the shell (``ZMQInteractiveShell``, :func:`_make_shell`; history off),
which every kernel whose configuration sets nothing for IPython's classes takes over
(:func:`_shell_fits`; any other makes its own, as usual), and the list of the modules' files
that ``IPythonKernel.__init__`` makes for its debugger (:func:`_module_files`, read through
:class:`_SysView`). A dashboard's kernel then holds ~19 MiB of its own after its first page.

:class:`ForkProvisioner` is a ``jupyter_client`` kernel provisioner (entry point
``dpexplore-fork``, group ``jupyter_client.kernel_provisioners``) that forks when the command is
``<this interpreter> -m ipykernel_launcher ...`` and otherwise, or when the fork fails, starts the
kernel normally (``LocalProvisioner``) with one line in the server log. The template is started
again when it died or when a file of the dpexplore package changed since it started.
:func:`enable` makes it the default provisioner of the running server: ``dpexplore serve`` and
the hub's apps-only server call it; other Jupyter servers are unaffected unless a kernelspec names
``dpexplore-fork`` in its ``metadata.kernel_provisioner``. ``DPEXPLORE_FORK_KERNELS=0`` (or
``dpexplore serve --no-fork``) turns it off.

**Apps built in the template.** A kernel start may name a dashboard (``app``: the builder of a
notebook whose only code is ``from dpexplore.apps.<module> import <builder>`` then
``<builder>()``, :func:`app_of_notebook`). The template then builds that app once, before it forks
(:func:`_prebuild`; its widgets' comms are registered in the template's comm manager but send
nothing: no kernel runs there), and every child carries it: the child's builder returns the built
app on its first call (the notebook's one cell then only displays it), and the child's comm
manager lists only that app's comms. So the siblings of one template hold the same widgets under
the same model ids, and one rendered page serves them all (:mod:`dpexplore.voila.clone`). The apps
are deterministic functions of their controls (their simulations are seeded from a control), so a
built app carries no state a fresh build would not have; numpy's global generator and
:mod:`random` are reseeded in every child all the same.

What is shared by siblings: the interpreter's string-hash secret (``PYTHONHASHSEED`` is drawn
once per interpreter start), so two kernels hash strings alike; nothing a page can read.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import pathlib
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from jupyter_client.provisioning import LocalProvisioner

__all__ = [
    "ForkProvisioner",
    "enable",
    "enabled",
    "PROVISIONER_NAME",
    "ENV_SWITCH",
    "Template",
    "app_of_notebook",
    "ENV_APP",
]

log = logging.getLogger("dpexplore.voila")

PROVISIONER_NAME = "dpexplore-fork"
#: environment variable: ``0`` turns forked kernels off
ENV_SWITCH = "DPEXPLORE_FORK_KERNELS"
#: kernel environment variable naming the app to build in the template (``module:builder``, see
#: :func:`app_of_notebook`); read by :class:`ForkProvisioner`, not passed to the kernel
ENV_APP = "DPEXPLORE_APP"
#: kernel environment variable: fork only from this template generation (a cloned page's kernel)
ENV_GENERATION = "DPEXPLORE_TEMPLATE_GENERATION"
#: seconds a kernel start waits for a template still importing (a normal start costs the same)
READY_TIMEOUT = 60.0
#: seconds a kernel start waits for the template's answer to a fork request (then it starts a
#: normal kernel, and the child the template forks too late ends: see :data:`GO`)
FORK_ANSWER_TIMEOUT = 10.0
#: what the server sends a forked child once it has its pid: the child becomes a kernel only then.
#: A child whose server gave up before the answer (:data:`FORK_ANSWER_TIMEOUT`, a cancelled
#: start) reads the end of the connection instead and exits; without this handshake it became a
#: second kernel on the connection file of the normal kernel started in its place, unknown to the
#: server (no shutdown, cull or restart reached it) and often the one the page talked to, since
#: it bound the ports first.
GO = b"go\n"
#: seconds a forked child waits for :data:`GO` before it exits
GO_TIMEOUT = 60.0
#: room reserved in the template's command line for a child's ``ipykernel_launcher`` line
_TITLE_ROOM = 480
#: what the template imports: what a dashboard kernel imports at its start (ipykernel, IPython,
#: the debugger it loads, history's sqlite3) and while building an app (numpy, scipy, ipywidgets,
#: anywidget, every module of dpexplore.apps: :func:`_warm_modules`)
WARM_MODULES = (
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "ipykernel.zmqshell",
    "ipykernel.comm",
    "ipykernel.debugger",
    "ipykernel.eventloops",
    "ipykernel.gui",
    "IPython",
    "IPython.core.interactiveshell",
    "IPython.core.history",
    "IPython.core.completer",
    "IPython.core.magics",
    "IPython.core.debugger",
    "IPython.core.profiledir",
    "IPython.core.display",
    "IPython.display",
    "debugpy",
    "debugpy.server.api",
    "sqlite3",
    "pdb",
    "psutil",
    "multiprocessing",
    "concurrent.futures",
    "faulthandler",
    "timeit",
    "IPython.extensions.storemagic",
    "tornado.ioloop",
    "tornado.queues",
    "zmq.eventloop.zmqstream",
    "jupyter_client.session",
    "comm",
    "fractions",
    "email.utils",
    "http.client",
    "numpy",
    "scipy.special",
    "scipy.stats",
    "scipy.optimize",
    "scipy.integrate",
    "ipywidgets",
    "anywidget",
    "psygnal",
    "dpexplore",
    "dpexplore.apps",
)
_PACKAGE = pathlib.Path(__file__).resolve().parent.parent
_TEMPLATE_CWD = os.getcwd()


def switched_off(variable: str) -> bool:
    """Whether the environment variable ``variable`` turns a default-on feature off (``0``,
    ``no``, ``off`` or ``false``)."""
    return os.environ.get(variable, "1").strip().lower() in ("0", "no", "off", "false")


def enabled() -> bool:
    """Whether forked kernels are on (``DPEXPLORE_FORK_KERNELS`` is not ``0``, and the platform
    has ``fork`` and ``pidfd_open``).

    >>> import os
    >>> os.environ["DPEXPLORE_FORK_KERNELS"] = "0"; enabled()
    False
    >>> del os.environ["DPEXPLORE_FORK_KERNELS"]
    """
    if switched_off(ENV_SWITCH):
        return False
    return hasattr(os, "fork") and hasattr(os, "pidfd_open") and sys.platform.startswith("linux")


def package_fingerprint(root: pathlib.Path = _PACKAGE) -> tuple:
    """The number of ``.py`` files under the dpexplore package and their latest modification time
    (ns): a template started before a change of the package is replaced."""
    n, latest = 0, 0
    stack = [root]
    while stack:
        with os.scandir(stack.pop()) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__" and not e.name.startswith("."):
                        stack.append(e.path)
                elif e.name.endswith(".py"):
                    n += 1
                    latest = max(latest, e.stat().st_mtime_ns)
    return n, latest


#: the one code cell of a dashboard notebook: import a builder from ``dpexplore.apps.<module>``, call it
_APP_CELL = re.compile(
    r"\A\s*from (dpexplore\.apps\.[a-z][a-z0-9_]*) import ([a-z][a-z0-9_]*)\s*\n"
    r"\s*\2\(\)\s*\Z"
)
_APP_SPEC = re.compile(r"\Adpexplore\.apps\.[a-z][a-z0-9_]*:[a-z][a-z0-9_]*\Z")


def app_of_notebook(path) -> str | None:
    r"""``"<module>:<builder>"`` if the notebook at ``path`` is a dpexplore dashboard (its only
    non-empty code cell is ``from dpexplore.apps.<module> import <builder>`` then ``<builder>()``),
    else ``None`` (any other notebook, or one that cannot be read).

    >>> import json, tempfile, os
    >>> cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
    ...         "source": "from dpexplore.apps.demo import build_demo\n\nbuild_demo()"}
    >>> with tempfile.NamedTemporaryFile("w", suffix=".ipynb", delete=False) as f:
    ...     json.dump({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, f)
    >>> app_of_notebook(f.name)
    'dpexplore.apps.demo:build_demo'
    >>> cell["source"] = "import os\nfrom dpexplore.apps.demo import build_demo\nbuild_demo()"
    >>> with open(f.name, "w") as g:
    ...     json.dump({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, g)
    >>> app_of_notebook(f.name) is None
    True
    >>> os.unlink(f.name)
    """
    try:
        with open(path, encoding="utf-8") as f:
            nb = json.load(f)
        code = ["".join(c.get("source", "")) for c in nb.get("cells", ()) if c.get("cell_type") == "code"]
    except (OSError, ValueError, AttributeError, TypeError):
        return None
    code = [c for c in code if c.strip()]
    m = _APP_CELL.match(code[0]) if len(code) == 1 else None
    return f"{m.group(1)}:{m.group(2)}" if m else None


# --------------------------------------------------------------------------- the server's side --
class _ForkedProcess:
    """The Popen-like handle of a forked kernel (not a child of the server: the template's).

    Its exit is seen through a pidfd (``os.pidfd_open``: readable once the process ended, immune
    to pid reuse after it is opened); the exit status of another process's child is not
    available, so ``returncode`` is ``-signal`` if we sent one, else 0.
    """

    stdin = stdout = stderr = None

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode = None
        self._signal = 0
        self._fd = os.pidfd_open(pid)

    def poll(self):
        if self.returncode is None and self._fd is not None:
            if select.select([self._fd], [], [], 0)[0]:
                self._ended()
        return self.returncode

    def wait(self, timeout=None):
        if self.returncode is None and self._fd is not None:
            if not select.select([self._fd], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(f"kernel {self.pid}", timeout)
            self._ended()
        return self.returncode

    def _ended(self):
        os.close(self._fd)
        self._fd = None
        self.returncode = -self._signal if self._signal else 0

    def send_signal(self, sig):
        if self.poll() is None:
            self._signal = sig if sig in (signal.SIGKILL, signal.SIGTERM) else self._signal
            signal.pidfd_send_signal(self._fd, sig)

    def kill(self):
        self.send_signal(signal.SIGKILL)

    def terminate(self):
        self.send_signal(signal.SIGTERM)

    def __del__(self):
        if getattr(self, "_fd", None) is not None:
            os.close(self._fd)


class Template:
    """The template process of this server: started on first use (or by :meth:`start`), started
    again when it died or the package changed."""

    def __init__(self, python: str = sys.executable):
        self.python = python
        self.proc = None
        self.path = None
        self._dir = None
        self._fingerprint = None
        self._started = 0.0
        #: counts the template processes started: the apps built in one are not those of another
        #: (their widgets' model ids differ), so a page rendered from one generation's kernel fits
        #: only that generation's kernels
        self.generation = 0

    def start(self) -> None:
        self.stop()
        self._dir = tempfile.mkdtemp(prefix="dpexplore-template-")  # mode 0700
        self.path = os.path.join(self._dir, "s")
        self._fingerprint = package_fingerprint()
        cmd = [self.python, "-m", "dpexplore.voila.forkserver", self.path, str(os.getpid()), " " * _TITLE_ROOM]
        env = dict(os.environ)
        env.pop("JPY_PARENT_PID", None)
        env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # debugpy's import warning
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, env=env, start_new_session=True, close_fds=True)
        self._started = time.monotonic()
        self.generation += 1
        log.info("dpexplore: kernel template started (pid %d)", self.proc.pid)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        if self._dir:
            import shutil

            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def current(self) -> int:
        """The generation of the running template (0 when none runs, or it is to be replaced:
        exited, or the package changed)."""
        return self.generation if self._usable(quiet=True) else 0

    def _usable(self, quiet: bool = False) -> bool:
        if self.proc is None:
            return False
        if self.proc.poll() is not None:
            if quiet:
                return False
            log.warning(
                "dpexplore: kernel template (pid %d) exited (%s); starting a new one",
                self.proc.pid,
                self.proc.returncode,
            )
            return False
        if package_fingerprint() != self._fingerprint:
            if quiet:
                return False
            log.info("dpexplore: the dpexplore package changed; starting a new kernel template")
            return False
        return True

    async def fork(
        self, argv: list, env: dict, cwd: str | None, app: str | None = None, generation: int = 0
    ) -> tuple[int, int]:
        """A new kernel process running ``ipykernel_launcher`` with ``argv`` (the arguments after
        ``-m ipykernel_launcher``), ``env`` and ``cwd``: ``(pid, built)``. With
        ``app`` (``module:builder``) the template builds that app first and the kernel carries it:
        ``built`` is then the template's generation, else 0. With ``generation``, only a template of that
        generation may fork (``RuntimeError`` otherwise: the caller wants its app's widgets)."""
        if not self._usable():
            if generation:
                raise RuntimeError(f"template generation {generation} is gone")
            self.start()
        if generation and generation != self.generation:
            raise RuntimeError(f"template generation {generation} is gone")
        request = {"argv": argv, "env": env, "cwd": cwd}
        if app and _APP_SPEC.match(app):
            request["app"] = app
        request = json.dumps(request).encode() + b"\n"
        deadline = self._started + READY_TIMEOUT
        while True:
            path, built = self.path, self.generation  # this template's, whatever happens next
            try:
                reader, writer = await asyncio.open_unix_connection(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if self.proc.poll() is not None:
                    raise RuntimeError(f"the template exited ({self.proc.returncode})") from None
                if time.monotonic() > deadline:
                    raise TimeoutError("the template is not ready") from None
                await asyncio.sleep(0.05)
        try:
            writer.write(request)
            await writer.drain()
            line = await asyncio.wait_for(reader.readline(), FORK_ANSWER_TIMEOUT)
            answer = json.loads(line or b"{}")
            if "pid" not in answer:
                raise RuntimeError(answer.get("error", "no answer from the template"))
            writer.write(GO)  # the child becomes the kernel; on any failure before, it exits
            await writer.drain()
        finally:
            writer.close()
        return int(answer["pid"]), (built if answer.get("app") else 0)


_template: Template | None = None


def template() -> Template:
    """This server's template (one per process)."""
    global _template
    if _template is None:
        _template = Template()
        import atexit

        atexit.register(_template.stop)
    return _template


def _launcher_args(cmd: list) -> list | None:
    """The arguments after ``-m ipykernel_launcher`` if ``cmd`` runs it on this interpreter."""
    if len(cmd) >= 3 and cmd[1:3] == ["-m", "ipykernel_launcher"]:
        try:
            same = os.path.samefile(cmd[0], sys.executable)
        except OSError:
            same = False
        if same or cmd[0] in ("python", "python3"):
            return list(cmd[3:])
    return None


class ForkProvisioner(LocalProvisioner):
    """A ``LocalProvisioner`` whose ipykernel kernels on this interpreter are forked from the
    template (:class:`Template`); any other kernel, and any fork that fails, starts normally."""

    async def launch_kernel(self, cmd: list, **kwargs):
        args = _launcher_args(cmd) if enabled() else None
        if args is None:
            return await super().launch_kernel(cmd, **kwargs)
        env = dict(kwargs.get("env") or os.environ)
        env["JPY_PARENT_PID"] = str(os.getpid())  # watched by the child (_ServerPoller)
        app = env.pop(ENV_APP, None)
        generation = int(env.pop(ENV_GENERATION, 0) or 0)
        cwd = kwargs.get("cwd")
        tpl = template()
        try:
            pid, built = await tpl.fork(args, env, str(cwd) if cwd else None, app=app, generation=generation)
            process = _ForkedProcess(pid)
        except Exception as e:  # noqa: BLE001 - any failure: a normal start
            if generation:  # a clone of a page: its caller starts the page another way
                raise
            log.warning("dpexplore: forked kernel start failed (%s: %s); starting a normal kernel", type(e).__name__, e)
            if kwargs.get("env"):
                kwargs = {
                    **kwargs,
                    "env": {k: v for k, v in kwargs["env"].items() if k not in (ENV_APP, ENV_GENERATION)},
                }
            return await super().launch_kernel(cmd, **kwargs)
        #: the template generation whose app this kernel carries (0: none)
        self.app_generation = built
        self.process = process
        self.pid = self.pgid = pid
        self.cwd = cwd or pathlib.Path.cwd()
        return self.connection_info


def enable(serverapp_log=None, start: bool = True) -> bool:
    """Make :class:`ForkProvisioner` the default kernel provisioner of this process (unless
    ``DPEXPLORE_FORK_KERNELS=0``) and, with ``start``, start the template now so the first page
    finds it warm. Returns whether forking is on."""
    if not enabled():
        (serverapp_log or log).info("dpexplore: forked kernels off (%s=0)", ENV_SWITCH)
        return False
    from importlib.metadata import EntryPoint
    from jupyter_client.provisioning.factory import KernelProvisionerFactory

    # registered here too: an editable or source checkout may lack the installed entry point
    KernelProvisionerFactory.provisioners.setdefault(
        PROVISIONER_NAME,
        EntryPoint(
            name=PROVISIONER_NAME,
            value="dpexplore.voila.forkserver:ForkProvisioner",
            group=KernelProvisionerFactory.GROUP_NAME,
        ),
    )
    KernelProvisionerFactory.instance().default_provisioner_name = PROVISIONER_NAME
    if start:
        template().start()
    (serverapp_log or log).info(
        "dpexplore: kernels are forked from a warm template process (%s=0 turns this off)", ENV_SWITCH
    )
    return True


# ------------------------------------------------------------------------- the template's side --
class _ServerPoller(threading.Thread):
    """Ends the kernel when the server (``JPY_PARENT_PID``) is gone: ipykernel's own poller
    watches the parent, here the template, which may be restarted while kernels live."""

    def __init__(self, parent_pid=0):
        super().__init__(daemon=True)
        self.server = int(parent_pid or 0)

    def run(self):
        while self.server:
            try:
                os.kill(self.server, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:
                pass
            time.sleep(1.0)


def _retitle(words: list) -> None:
    """Overwrite this process's command line in place (within the room the template reserved)."""
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end (proc(5))
        new = "\0".join(words).encode()[: end - start - 1]
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            mem.write(new + b"\0" * (end - start - len(new)))
    except (OSError, ValueError, IndexError):
        pass


def _kernel_started() -> None:
    """What modules imported in the template do at import when a kernel runs: ipywidgets
    registers its comm targets (``jupyter.widget``, ``jupyter.widget.control``) only if
    ``get_ipython()`` answers, which it did not in the template. The comms of an app built in
    the template (:func:`_prebuild`) get the kernel: a widget sends nothing through a comm
    whose ``kernel`` is ``None`` (ipywidgets' ``Widget._send``), and ipykernel sets it only
    when the comm first publishes, which it could not do in the template."""
    widgets = sys.modules.get("ipywidgets")
    if widgets is not None:
        from IPython import get_ipython

        if get_ipython() is not None:
            widgets.register_comm_target()
    if _PREBUILT:
        import comm
        from ipykernel.kernelbase import Kernel

        kernel = Kernel.instance()
        for c in comm.get_comm_manager().comms.values():
            if getattr(c, "kernel", kernel) is None:
                c.kernel = kernel


#: apps built in this template: ``module:builder`` → (the app, the model ids of its widgets)
_PREBUILT: dict = {}
#: apps whose build failed here (their kernels build them as usual)
_UNBUILDABLE: set = set()


def _prebuild(spec) -> bool:
    """Build the app ``spec`` (``module:builder``) in the template, once; whether it is built.

    Its widgets open their comms as usual; with no kernel running the comms send nothing and are
    registered in ipykernel's comm manager, which a child's kernel takes over. The prefetcher is
    off meanwhile (a thread does not cross a fork); an app whose build started a thread anyway
    ends the template (the server starts a new one)."""
    if not spec or not _APP_SPEC.match(spec) or spec in _UNBUILDABLE:
        return False
    if spec in _PREBUILT:
        return True
    import gc
    import importlib

    module, builder = spec.split(":")
    controls = sys.modules.get("dpexplore.ui.controls")
    prefetch = controls.PREFETCHER.enabled if controls is not None else None
    try:
        import comm

        manager = comm.get_comm_manager()
        before = set(manager.comms)
        if controls is not None:
            controls.PREFETCHER.enabled = False
        app = getattr(importlib.import_module(module), builder)()
        ids = set(manager.comms) - before
    except Exception as e:  # noqa: BLE001 - the kernel builds it as usual
        _UNBUILDABLE.add(spec)
        print(f"dpexplore template: {spec} not built: {type(e).__name__}: {e}", file=sys.stderr)
        return False
    finally:
        if controls is not None:
            controls.PREFETCHER.enabled = prefetch
    if threading.active_count() != 1:
        print(f"dpexplore template: building {spec} started a thread; the template ends", file=sys.stderr)
        os._exit(3)
    _PREBUILT[spec] = (app, frozenset(ids))
    gc.collect()
    gc.freeze()
    return True


def _adopt_app(spec) -> None:
    """In a child: its comm manager and ipywidgets' registry of widgets keep only the widgets of
    app ``spec`` (none without one), and the app's builder returns the built app on its first
    call. (The registry matters as much as the comms: a page's widget manager asks ipywidgets'
    control comm for the state of every registered widget, and would otherwise build models for
    every app built in the template.)"""
    if not _PREBUILT:
        return
    import comm
    from ipywidgets.widgets import widget as _widget

    manager = comm.get_comm_manager()
    keep = _PREBUILT[spec][1] if spec in _PREBUILT else frozenset()
    for other, (_, ids) in _PREBUILT.items():
        if other != spec:
            for comm_id in ids - keep:
                manager.comms.pop(comm_id, None)
                _widget._instances.pop(comm_id, None)
    if spec not in _PREBUILT:
        return
    app = _PREBUILT[spec][0]
    module_name, name = spec.split(":")
    module = sys.modules[module_name]
    build = getattr(module, name)

    first = [True]

    def built_once(*args, **kwargs):
        setattr(module, name, build)  # later calls build anew, also through this name
        if args or kwargs or not first:
            return build(*args, **kwargs)
        first.clear()
        return app

    built_once.__wrapped__ = build
    built_once.__doc__ = build.__doc__
    setattr(module, name, built_once)


#: in the template: the shell every kernel would make at its start, made once (:func:`_make_shell`)
_SHELL = None
#: in the template: the file of each module imported, as a kernel lists them at its start
#: (:func:`_module_files`)
_MODULE_FILES: dict = {}


class _ModuleFile:
    """What ipykernel reads of a module when it lists the kernel's own modules: its file."""

    __slots__ = ("__file__",)

    def __init__(self, file: str):
        self.__file__ = file


def _module_files() -> dict:
    """In the template, after its imports: ``{name: _ModuleFile(file)}`` for every module with a
    file, the file names copied, so that all of it lies together in a few pages.

    A kernel's ``IPythonKernel.__init__`` lists ``m.__file__`` of every module in ``sys.modules``
    (for its debugger's "just my code"). In a forked kernel that walk touches the reference count
    of ~1,500 module objects and their file names, scattered over the template's memory: each
    touch copies a 4 KiB page, 9.6 MiB in all. The kernel walks this dict instead
    (:class:`_SysView`), whose pages it shares with its siblings until it writes them."""
    out = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and file:
            out[name] = _ModuleFile((file + "/")[:-1])  # a new string, allocated here
    return out


class _SysView:
    """``sys`` as ipykernel's ``ipkernel`` module sees it while a forked kernel is made: its
    ``modules`` are the template's :data:`_MODULE_FILES`; every other name is ``sys``'s."""

    def __init__(self, modules: dict):
        self.modules = modules

    def __getattr__(self, name):
        return getattr(sys, name)


def _make_shell():
    """In the template, after its imports: the shell (``ZMQInteractiveShell``) a kernel makes at
    its start, made here once with what a dashboard kernel's configuration gives it (its history
    off: a dashboard has no use for it, and no database crosses the fork); ``None`` if that
    fails. Making it in a forked kernel touches 8.9 MiB of the template's pages (traitlets,
    magics, the completer, the history's database); a kernel whose configuration says more than
    the template knows makes its own (:func:`_shell_fits`)."""
    main = sys.modules.get("__main__")
    try:
        from IPython.core.profiledir import ProfileDir
        from IPython.paths import get_ipython_dir
        from ipykernel.compiler import XCachingCompiler
        from ipykernel.zmqshell import ZMQInteractiveShell
        from traitlets.config import Config

        profile = ProfileDir.create_profile_dir_by_name(get_ipython_dir(), "default")
        return ZMQInteractiveShell.instance(
            config=Config({"HistoryManager": {"enabled": False}}), profile_dir=profile, compiler_class=XCachingCompiler
        )
    except Exception as e:  # noqa: BLE001 - each kernel makes its own shell, as usual
        print(f"dpexplore template: no shell made here: {type(e).__name__}: {e}", file=sys.stderr)
        try:
            from IPython.core.interactiveshell import InteractiveShell

            InteractiveShell.clear_instance()
        except Exception:  # noqa: BLE001
            pass
        return None
    finally:
        sys.modules["__main__"] = main  # the shell made its own; the kernel's takes it back


#: configuration a forked kernel may carry and still use the template's shell: the kernel
#: application's own settings, and the history in memory (the template's is off)
_SHELL_NEUTRAL_CONFIG = {"IPKernelApp": None, "HistoryManager": {"hist_file": ":memory:"}}


def _shell_fits(config, profile_dir) -> bool:
    """Whether the template's shell is the one this kernel would make: its configuration sets
    nothing for the shell (no profile or user configuration file, no option for IPython's
    classes) and its profile directory is the template's."""
    if _SHELL is None or profile_dir is None:
        return False
    for section, values in (config or {}).items():
        if section not in _SHELL_NEUTRAL_CONFIG:
            return False
        allowed = _SHELL_NEUTRAL_CONFIG[section]
        if allowed is not None and dict(values) != allowed:
            return False
    return os.path.realpath(profile_dir.location) == os.path.realpath(_SHELL.profile_dir.location)


def _kernel_from_template_parts() -> None:
    """In a child, before its kernel is made: ``IPythonKernel.__init__`` uses the template's shell
    when it fits (:func:`_shell_fits`; else that shell is dropped and the kernel makes its own, as
    usual) and lists the template's module files (:class:`_SysView`); the shell then gets this
    kernel and this process's working directory and environment."""
    from ipykernel import ipkernel

    init = ipkernel.IPythonKernel.__init__

    def init_from_template(self, **kwargs):
        ipkernel.IPythonKernel.__init__ = init
        shell = _SHELL
        parent = kwargs.get("parent")
        if shell is not None and not _shell_fits(getattr(parent, "config", None), kwargs.get("profile_dir")):
            type(shell).clear_instance()
            shell = None
        if shell is not None:
            sys.modules["__main__"] = shell.user_module
        if _MODULE_FILES and getattr(ipkernel, "sys", None) is sys:
            ipkernel.sys = _SysView(_MODULE_FILES)
        try:
            init(self, **kwargs)
        finally:
            ipkernel.sys = sys
        if shell is not None and self.shell is shell:
            shell.kernel = self
            shell.parent = self
            shell.starting_dir = os.getcwd()
            shell.history_manager.dir_hist[:] = [pathlib.Path.cwd()]
            shell.init_environment()  # TERM, PAGER, ... in this kernel's environment

    ipkernel.IPythonKernel.__init__ = init_from_template


def _server_says_go(conn: socket.socket) -> bool:
    """Whether the server sent :data:`GO` on ``conn`` (within :data:`GO_TIMEOUT`): not when it
    closed the connection, having given up on this fork."""
    conn.settimeout(GO_TIMEOUT)
    data = b""
    try:
        while len(data) < len(GO):
            chunk = conn.recv(len(GO) - len(data))
            if not chunk:
                return False
            data += chunk
    except OSError:
        return False
    return data == GO


def _child(conn: socket.socket, listener: socket.socket, request: dict) -> None:
    """In the forked child: become ``python -m ipykernel_launcher <argv>`` once the server says
    :data:`GO` (it has the child's pid); exit if the server gave up on this start."""
    if not _server_says_go(conn):
        os._exit(0)
    os.setsid()
    for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as CPython sets it at start
    listener.close()
    conn.close()
    import numpy as np

    np.random.seed()  # from the OS's entropy: a fork copies the global state
    import random

    random.seed()
    os.environ.clear()
    os.environ.update(request.get("env") or {})
    if request.get("cwd"):
        os.chdir(request["cwd"])
    controls = sys.modules.get("dpexplore.ui.controls")  # read the environment at import
    if controls is not None:
        controls.PREFETCHER.enabled = os.environ.get("DPEXPLORE_PREFETCH", "1") != "0"
    if sys.path and sys.path[0] in ("", _TEMPLATE_CWD):
        del sys.path[0]  # as ipykernel_launcher does; IPython adds '' back
    _adopt_app(request.get("app"))
    argv = list(request.get("argv") or [])
    _retitle([sys.executable, "-m", "ipykernel_launcher", *argv])
    sys.argv = ["ipykernel_launcher", *argv]
    from ipykernel import kernelapp

    kernelapp.ParentPollerUnix = _ServerPoller
    initialize = kernelapp.IPKernelApp.initialize

    def initialize_then_register(self, *args, **kwargs):
        initialize(self, *args, **kwargs)
        _kernel_started()

    kernelapp.IPKernelApp.initialize = initialize_then_register
    _kernel_from_template_parts()
    # its default was read from the template's environment at import
    server = os.environ.get("JPY_PARENT_PID", "0")
    kernelapp.launch_new_instance(argv=[*argv, f"--IPKernelApp.parent_handle={server}"])


def _warm_modules() -> list:
    """:data:`WARM_MODULES` and every module of ``dpexplore.apps`` (the app builders)."""
    import pkgutil

    names = list(WARM_MODULES)
    apps = _PACKAGE / "apps"
    names += [f"dpexplore.apps.{m.name}" for m in pkgutil.iter_modules([str(apps)])]
    return names


def serve_template(path: str, server_pid: int) -> None:
    """The template's loop: import, freeze, then fork a kernel per request on ``path``."""
    import gc
    import importlib

    for name in _warm_modules():
        try:
            importlib.import_module(name)
        except Exception as e:  # noqa: BLE001 - a module that fails is imported by the kernel
            print(f"dpexplore template: {name} not imported: {e}", file=sys.stderr)
    global _SHELL, _MODULE_FILES
    _SHELL = _make_shell()
    if threading.active_count() != 1:  # a thread does not cross a fork: serve nothing
        print(
            "dpexplore template: an import or the shell started a thread "
            f"({[t.name for t in threading.enumerate()]}); not forking",
            file=sys.stderr,
        )
        return
    gc.collect()
    _MODULE_FILES = _module_files()  # last: its objects lie together, after the collection
    gc.freeze()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the system
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server stops it
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    listener.settimeout(1.0)
    while True:
        if os.getppid() != server_pid:
            return
        try:
            conn, _ = listener.accept()
        except (socket.timeout, InterruptedError):
            continue
        try:
            conn.settimeout(10)
            data = b""
            while not data.endswith(b"\n"):
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
            request = json.loads(data)
            built = _prebuild(request.get("app"))
            if not built:
                request.pop("app", None)
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    _child(conn, listener, request)
                    code = 0
                except SystemExit as e:
                    code = e.code if isinstance(e.code, int) else 0
                except BaseException:  # noqa: BLE001 - reported, then the child ends
                    import traceback

                    traceback.print_exc()
                finally:
                    for stream in (sys.stdout, sys.stderr):
                        try:
                            stream.flush()
                        except Exception:  # noqa: BLE001
                            pass
                    os._exit(code)
            conn.sendall(json.dumps({"pid": pid, "app": built}).encode() + b"\n")
        except Exception as e:  # noqa: BLE001 - the server falls back to a normal start
            try:
                conn.sendall(json.dumps({"error": f"{type(e).__name__}: {e}"}).encode() + b"\n")
            except OSError:
                pass
        finally:
            conn.close()


if __name__ == "__main__":
    serve_template(sys.argv[1], int(sys.argv[2]))
