"""ruff over the repository (settings in pyproject.toml): pyflakes, pycodestyle and bugbear
findings fail the suite, and so does a Python file ``ruff format`` would change.

Not yet enforced: line length (E501). The formatter wraps code, not strings or comments; the lines
over the 120-column limit that remain are held by a ratchet — their number may only fall — until
they are wrapped and E501 is selected.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent

#: lines over 120 columns when the ratchet was set; lower it as lines are wrapped
LONG_LINES_AT_MOST = 132


def _ruff(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("ruff", path=str(pathlib.Path(sys.executable).parent)) or shutil.which("ruff")
    if exe is None:
        pytest.fail("ruff is missing: it is in the test extra (make setup installs it)")
    return subprocess.run([exe, *args], cwd=REPO, capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing():
    r = _ruff("check", "--output-format", "concise", ".")
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_format_changes_nothing():
    r = _ruff("format", "--check", ".")
    assert r.returncode == 0, r.stdout + r.stderr


def test_long_lines_only_fall():
    r = _ruff("check", "--output-format", "concise", "--select", "E501", "--exit-zero", ".")
    found = [line for line in r.stdout.splitlines() if " E501 " in line]
    assert len(found) <= LONG_LINES_AT_MOST, (
        f"{len(found)} lines over 120 columns (at most {LONG_LINES_AT_MOST}); new ones:\n" + "\n".join(found[:40])
    )
