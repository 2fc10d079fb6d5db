"""Kernels on Unix sockets in a private folder, not on TCP ports of 127.0.0.1.

A Jupyter kernel listens on five ZeroMQ sockets. Over TCP (jupyter_client's default) they are
ports of 127.0.0.1 that every account of the machine can reach. On a class's hub, where every
student's server runs on one machine under her own account, that let a classmate

* read a kernel's output stream: its IOPub socket is a ZeroMQ PUB socket, which takes any
  subscriber; messages are signed with the kernel's key, not encrypted;
* take, by chance or on purpose, the port a kernel is about to bind: the kernel died at its start
  (``Kernel died before replying to kernel_info``), and the kernel server's restarter brought it
  back on new ports, as a kernel no page held (:func:`dpexplore.voila.pool.guard_page_start` now
  shuts such a kernel down).

Over Unix sockets (``KernelManager.transport = "ipc"``) in a folder of the server's account with
mode 0700, only that account can connect, and no two kernels share a name. (One TCP port stays:
ipykernel's pipe for the output of subprocesses the kernel forks, a PULL socket on 127.0.0.1
whose messages count only with a random 16-byte key of the kernel's; nothing can be read from
it.) The folder is new for each server (:func:`tempfile.mkdtemp`: a name no one can take first)
and short: a Unix socket's path has at most 107 bytes, and Jupyter's runtime folder under a long
home passes it (``/home/dpx-<28 characters>/.local/share/jupyter/runtime/kernel-<uuid>-ipc-1``
has 119).

:func:`use_private_sockets` is called by ``dpexplore serve`` and the apps-only server
(:mod:`dpexplore.voila.apps_only`); this module is also a Jupyter server extension that does only
that, for the hub's lab-mode servers (``deploy/singleuser-lab/jupyter_server_config.json``). It
is not enabled anywhere else: a user's own JupyterLab keeps its kernels as it configured them.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile

__all__ = ["use_private_sockets", "MAX_SOCKET_PATH"]

#: longest path of a Unix socket (``sun_path`` is 108 bytes with its final NUL)
MAX_SOCKET_PATH = 107


def use_private_sockets(km, log=None) -> str:
    """Make the kernels that the multi-kernel manager ``km`` starts from now on speak over Unix
    sockets in a new folder of mode 0700 (removed when the process exits); returns the folder.

    The transport is set in the configuration the kernels' managers read at their creation
    (``km.config``, shared with the server's), the folder as ``km.connection_dir``, where each
    kernel's connection file and sockets go (``kernel-<id>.json``, ``kernel-<id>-ipc-<n>``).
    """
    folder = tempfile.mkdtemp(prefix="dpx-kernels-")  # mode 0700, a fresh name
    atexit.register(shutil.rmtree, folder, True)
    longest = len(folder) + len("/kernel-00000000-0000-0000-0000-000000000000-ipc-99")
    if longest > MAX_SOCKET_PATH:
        raise RuntimeError(
            f"the temporary folder {folder!r} is too long for kernel sockets ({longest} > "
            f"{MAX_SOCKET_PATH} bytes): set TMPDIR to a shorter folder"
        )
    km.config.KernelManager.transport = "ipc"
    km.connection_dir = folder
    if log is not None:
        log.info("dpexplore: kernels speak over Unix sockets in %s (mode 0700)", folder)
    return folder


def _jupyter_server_extension_points():
    return [{"module": "dpexplore.voila.sockets"}]


def _load_jupyter_server_extension(serverapp) -> None:
    use_private_sockets(serverapp.kernel_manager, serverapp.log)
