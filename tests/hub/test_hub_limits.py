"""Per-student limits (``dpexplore.hub.limits``) on this machine's kernel: a process in a
student's control group that allocates past the memory limit is ended by the OOM killer and
nothing outside the group is; the task limit stops the group's threads; removing the group ends
what is left in it. The rlimit fallback limits a process's address space.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import uuid

import pytest

from dpexplore.hub.limits import CgroupLimits, cgroup_roots, parse_bytes, set_rlimits

ROOTS = cgroup_roots()
needs_cgroups = pytest.mark.skipif(ROOTS is None, reason="no writable cgroup here (needs root)")

ALLOCATE = "import sys\nb = []\nfor i in range(int(sys.argv[1])):\n    b.append(bytearray(2**24))\nprint('survived')"


@pytest.mark.parametrize(
    "text, value",
    [
        ("1G", 2**30),
        ("512M", 2**29),
        ("2048K", 2**21),
        ("1.5G", int(1.5 * 2**30)),
        ("1GiB", 2**30),
        ("1000", 1000),
        (123, 123),
    ],
)
def test_parse_bytes(text, value):
    assert parse_bytes(text) == value


@pytest.mark.parametrize("text", ["", "lots", "-1G", "0", 0, -5, "1X"])
def test_parse_bytes_refuses(text):
    with pytest.raises(ValueError):
        parse_bytes(text)


@pytest.fixture
def group():
    g = CgroupLimits(ROOTS, f"dpxt-{uuid.uuid4().hex[:8]}", memory=96 * 2**20, tasks=24, cpu=0.1)
    g.create()
    yield g
    g.remove()
    assert not any(d.exists() for d in g.dirs)


def _run_in(group, *args, timeout=120):
    return subprocess.run(
        [sys.executable, *args], preexec_fn=group.join, capture_output=True, text=True, timeout=timeout
    )


@needs_cgroups
def test_memory_limit_ends_the_process_in_the_group_only(group):
    outside = subprocess.Popen(
        [sys.executable, "-c", ALLOCATE, "16"], stdout=subprocess.PIPE, text=True
    )  # 256 MiB outside the group: untouched
    r = _run_in(group, "-c", ALLOCATE, "16")  # 256 MiB in a group of 96 MiB
    assert r.returncode == -9 and "survived" not in r.stdout, (r.returncode, r.stderr[-300:])
    assert group.oom_kills() >= 1
    assert outside.communicate(timeout=120)[0].strip() == "survived"
    r = _run_in(group, "-c", ALLOCATE, "2")  # 32 MiB: within the limit
    assert r.returncode == 0 and r.stdout.strip() == "survived"


@needs_cgroups
def test_task_limit_stops_threads(group):
    code = (
        "import threading, time\nn = 0\ntry:\n"
        "    for i in range(100):\n"
        "        threading.Thread(target=time.sleep, args=(5,), daemon=True).start(); n += 1\n"
        "except RuntimeError:\n    pass\nprint(n)"
    )
    r = _run_in(group, "-c", code)
    assert r.returncode == 0, r.stderr[-300:]
    assert 0 < int(r.stdout) < 24  # the group's 24 tasks include the main thread


@needs_cgroups
@pytest.mark.skipif(ROOTS is not None and "cpu" not in ROOTS and "v2" not in ROOTS, reason="no cpu controller here")
def test_cpu_quota_holds_a_busy_group_back(group):
    """0.1 core: a process spinning for a second of wall time is throttled (the kernel's own
    count of periods it held the group back), so a student cannot take the machine's cores."""
    before = group.throttled()
    r = _run_in(
        group,
        "-c",
        "import time\nt = time.monotonic()\nwhile time.monotonic() - t < 1.0:\n    pass\nprint(time.process_time())",
    )
    assert r.returncode == 0, r.stderr[-300:]
    assert group.throttled() > before
    assert float(r.stdout) < 0.6  # CPU seconds in one second of wall time at 0.1 core


@needs_cgroups
def test_remove_ends_what_is_left(group):
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], preexec_fn=group.join)
    assert p.pid in group.pids()
    group.remove()
    assert p.wait(10) == -9
    assert not any(d.exists() for d in group.dirs)


def test_rlimit_fallback_bounds_a_process():
    def limited():
        set_rlimits(tasks=None, memory=200 * 2**20)

    r = subprocess.run(
        [sys.executable, "-c", ALLOCATE, "32"], preexec_fn=limited, capture_output=True, text=True, timeout=120
    )
    assert r.returncode != 0 and "MemoryError" in r.stderr
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    assert soft == resource.RLIM_INFINITY or soft > 200 * 2**20  # this process is untouched
