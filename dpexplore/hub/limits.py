"""Per-student limits the kernel enforces: memory, tasks and CPU for all of one student's processes.

Each student's single-user server and everything it starts (kernels, terminals) go into a
control group of their own, ``dpexplore-hub/<account>``: ``memory`` (the whole group's resident
memory, page cache included; past it the kernel's OOM killer ends the group's largest process —
the kernel that grew, not another student's), ``pids`` (processes and threads) and ``cpu`` (a
quota of cores per period, and, as every student's group has the same weight, an equal share of
a busy machine). Both cgroup v1 (``memory``, ``pids`` and ``cpu`` hierarchies, as on this
project's CI machine) and v2 (the unified hierarchy with those controllers enabled for the hub's
subtree) are supported. The spawner
writes the server's pid into the group in the forked child, before it drops root, so every
descendant is inside from its first instruction.

Where no cgroup can be made (not root, no memory controller, v2 without delegation), the
fallback is rlimits: ``RLIMIT_AS`` (address space per process) at the memory limit and
``RLIMIT_NPROC`` (tasks per account: each student has an account of her own) at the task limit;
the hub's log says which is in force. ``RLIMIT_NPROC`` is set in both cases.

>>> parse_bytes("1G"), parse_bytes("512M"), parse_bytes(1000)
(1073741824, 536870912, 1000)
"""

from __future__ import annotations

import os
import pathlib
import resource
import signal
import time

__all__ = ["parse_bytes", "CgroupLimits", "cgroup_roots", "set_rlimits"]

_UNITS = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_bytes(value) -> int:
    """Bytes of ``1G``, ``512M``, ``2048K`` or a plain number; ``ValueError`` otherwise."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value <= 0:
            raise ValueError(f"memory limit must be positive, got {value!r}")
        return int(value)
    text = str(value).strip().upper().removesuffix("B").removesuffix("I")
    try:
        if text and text[-1] in _UNITS:
            out = int(float(text[:-1]) * _UNITS[text[-1]])
        else:
            out = int(text)
    except ValueError:
        raise ValueError(f"memory limit must be like 1G, 512M or bytes, got {value!r}") from None
    if out <= 0:
        raise ValueError(f"memory limit must be positive, got {value!r}")
    return out


def _mounts(path: str = "/proc/self/mounts") -> list[tuple[str, str, set[str]]]:
    out = []
    try:
        for line in pathlib.Path(path).read_text().splitlines():
            parts = line.split()
            if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
                out.append((parts[2], parts[1], set(parts[3].split(","))))
    except OSError:
        pass
    return out


def cgroup_roots() -> dict[str, pathlib.Path] | None:
    """Where the hub's per-student groups go: ``{"memory": path, "pids": path}`` (v1, one path
    per hierarchy) or ``{"v2": path}``; ``None`` where neither can be written here."""
    if os.geteuid() != 0:
        return None
    mounts = _mounts()
    v1 = {}
    for kind, where, opts in mounts:
        if kind == "cgroup":
            for ctl in ("memory", "pids", "cpu"):
                if ctl in opts:
                    v1[ctl] = pathlib.Path(where) / "dpexplore-hub"
    if "memory" in v1:
        return v1
    for kind, where, _ in mounts:
        if kind == "cgroup2":
            root = pathlib.Path(where)
            try:
                ctls = set((root / "cgroup.controllers").read_text().split())
            except OSError:
                continue
            if "memory" in ctls:
                return {"v2": root / "dpexplore-hub"}
    return None


class CgroupLimits:
    """One student's control group(s): :meth:`create` (as root, in the hub), :meth:`join` (in
    the forked child, before dropping root), :meth:`remove` (after the server stopped: ends
    whatever is left in the group, then removes it)."""

    #: the CPU quota's period (µs)
    PERIOD = 100_000

    def __init__(self, roots: dict[str, pathlib.Path], name: str, memory: int, tasks: int, cpu: float | None = None):
        self.roots, self.name, self.memory, self.tasks = roots, name, int(memory), int(tasks)
        self.cpu = cpu  # cores (None: no quota)

    @property
    def dirs(self) -> list[pathlib.Path]:
        return [root / self.name for root in self.roots.values()]

    def create(self) -> None:
        if "v2" in self.roots:
            top = self.roots["v2"]
            top.mkdir(exist_ok=True)
            wanted = {"memory", "pids", "cpu"} & set(
                (top.parent / "cgroup.subtree_control").read_text().split()
                + (top.parent / "cgroup.controllers").read_text().split()
            )
            (top.parent / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in wanted))
            (top / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in wanted))
            group = top / self.name
            group.mkdir(exist_ok=True)
            (group / "memory.max").write_text(str(self.memory))
            if (group / "memory.swap.max").exists():
                (group / "memory.swap.max").write_text("0")
            if (group / "pids.max").exists():
                (group / "pids.max").write_text(str(self.tasks))
            if self.cpu and (group / "cpu.max").exists():
                (group / "cpu.max").write_text(f"{int(self.cpu * self.PERIOD)} {self.PERIOD}")
            return
        for ctl, top in self.roots.items():
            top.mkdir(exist_ok=True)
            group = top / self.name
            group.mkdir(exist_ok=True)
            if ctl == "memory":
                (group / "memory.limit_in_bytes").write_text(str(self.memory))
                sw = group / "memory.memsw.limit_in_bytes"
                if sw.exists():
                    try:
                        sw.write_text(str(self.memory))
                    except OSError:  # swap accounting off
                        pass
            elif ctl == "pids":
                (group / "pids.max").write_text(str(self.tasks))
            elif ctl == "cpu" and self.cpu:
                (group / "cpu.cfs_period_us").write_text(str(self.PERIOD))
                (group / "cpu.cfs_quota_us").write_text(str(int(self.cpu * self.PERIOD)))

    def join(self, pid: int | None = None) -> None:
        """Moves ``pid`` (default: this process) into every group; safe to call in a forked
        child (plain writes, no allocation worth speaking of)."""
        pid = os.getpid() if pid is None else pid
        for d in self.dirs:
            with open(d / "cgroup.procs", "w") as f:
                f.write(str(pid))

    def pids(self) -> list[int]:
        out: set[int] = set()
        for d in self.dirs:
            try:
                out.update(int(x) for x in (d / "cgroup.procs").read_text().split())
            except OSError:
                pass
        return sorted(out)

    def _stat(self, files: tuple[str, ...], key: str) -> int:
        """The value of ``key`` in the first of ``files`` (``key value`` lines) of any of the
        group's folders that has it; 0 if none does."""
        for d in self.dirs:
            for name in files:
                try:
                    for line in (d / name).read_text().splitlines():
                        k, _, val = line.partition(" ")
                        if k == key:
                            return int(val)
                except OSError:
                    continue
        return 0

    def throttled(self) -> int:
        """How many periods the CPU quota held this group back (0 if unknown)."""
        return self._stat(("cpu.stat",), "nr_throttled")

    def oom_kills(self) -> int:
        """How many processes the memory limit has ended in this group (0 if unknown)."""
        return self._stat(("memory.oom_control", "memory.events"), "oom_kill")

    def remove(self, wait: float = 5.0) -> None:
        deadline = time.monotonic() + wait
        while True:
            left = self.pids()
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        # a process just killed may hold its group for a moment (EBUSY): try until the deadline
        left = list(self.dirs)
        while left:
            for d in list(left):
                try:
                    d.rmdir()
                    left.remove(d)
                except FileNotFoundError:
                    left.remove(d)
                except OSError:
                    pass
            if not left or time.monotonic() > deadline + wait:
                break
            time.sleep(0.1)


def set_rlimits(*, tasks: int | None = None, memory: int | None = None) -> None:
    """In a forked child: ``RLIMIT_NPROC`` (tasks of the account) and ``RLIMIT_AS`` (bytes of
    address space per process), each only lowered."""
    for kind, value in ((resource.RLIMIT_NPROC, tasks), (resource.RLIMIT_AS, memory)):
        if value is None:
            continue
        soft, hard = resource.getrlimit(kind)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(kind, (cap, cap))
