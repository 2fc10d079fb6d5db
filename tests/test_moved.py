"""The modules that moved into layer packages (``dpexplore._moved``): their old names are the
same module objects, with one DeprecationWarning that points at the user's own line; nothing in the
project uses an old name any more."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest

from dpexplore import _moved

REPO = pathlib.Path(__file__).resolve().parents[1]


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-W", "always::DeprecationWarning", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )


@pytest.mark.parametrize("old", sorted(_moved.MOVED))
def test_an_old_name_is_the_new_module_with_a_warning_on_the_users_line(old):
    new = f"dpexplore.{_moved.MOVED[old]}.{old}"
    out = _run(
        f"import importlib, dpexplore.{old} as a\n"
        f"b = importlib.import_module({new!r})\n"
        "assert a is b, (a, b)\n"
        f"assert a.__name__ == a.__spec__.name == {new!r}, (a.__name__, a.__spec__.name)\n"
        "print('ok')"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
    assert re.search(rf"<string>:1: DeprecationWarning: dpexplore\.{old} moved to {re.escape(new)}", out.stderr)
    assert out.stderr.count("DeprecationWarning") == 1, out.stderr


def test_from_the_package_and_submodules_of_a_moved_module():
    out = _run(
        "from dpexplore import composition\n"
        "from dpexplore.filters import PureDPFilter\n"
        "import dpexplore, dpexplore.accounting.filters as F\n"
        "assert PureDPFilter is F.PureDPFilter and composition is dpexplore.accounting.composition\n"
        "print(composition.__name__)"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["dpexplore.accounting.composition"]
    assert "<string>:1: DeprecationWarning: dpexplore.composition moved" in out.stderr
    assert "<string>:2: DeprecationWarning: dpexplore.filters moved" in out.stderr
    assert out.stderr.count("DeprecationWarning") == 2, out.stderr


#: what dpexplore.citations offered before the scanner moved on to dpexplore.bibliography.scanner
_OLD_CITATIONS_NAMES = [
    "Citation",
    "CITATIONS",
    "CHECKS",
    "find",
    "normalize_locator",
    "Found",
    "resolve",
    "scan",
    "scan_text",
    "where_used",
    "citation_table_markdown",
    "citation_summary_markdown",
    "docs_markdown",
]


def test_the_old_citations_module_still_offers_the_scanner_with_a_warning_for_each_name():
    out = _run(
        "from dpexplore.citations import scan, docs_markdown\n"
        "import dpexplore.citations as C, dpexplore.bibliography.scanner as S\n"
        "import dpexplore.bibliography.citations as N\n"
        "assert C is N and scan is S.scan and docs_markdown is S.docs_markdown\n"
        f"names = {_OLD_CITATIONS_NAMES!r}\n"
        "want = {n: getattr(S, n) if n in S.__all__ else vars(N)[n] for n in names}\n"
        "print([n for n in names if getattr(C, n) is not want[n]])\n"
        "print(sorted(set(S.__all__) ^ set(C._TO_SCANNER)))"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["[]", "[]"], out.stdout
    for name in ("scan", "docs_markdown"):
        assert re.search(
            rf"<string>:1: DeprecationWarning: dpexplore\.citations\.{name} moved to "
            rf"dpexplore\.bibliography\.scanner\.{name};",
            out.stderr,
        ), out.stderr
    assert "<string>:1: DeprecationWarning: dpexplore.citations moved to dpexplore.bibliography.citations" in out.stderr
    # the module and 2 names at line 1; the scanner's 8 names at line 7 (the registry's 5 warn nothing)
    assert out.stderr.count("DeprecationWarning") == 3 + 8, out.stderr
    assert out.stderr.count("<string>:7: DeprecationWarning") == 8, out.stderr
    with pytest.raises(AttributeError, match="nosuch"):
        _moved.moved_names("dpexplore.bibliography.citations", "dpexplore.bibliography.scanner", ["scan"])("nosuch")


def test_the_old_commands_run_the_new_ones():
    """``python -m dpexplore.citations > docs/references.md`` wrote the docs page: it still does."""
    from dpexplore.bibliography.scanner import docs_markdown

    out = subprocess.run(
        [sys.executable, "-m", "dpexplore.citations"], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == docs_markdown()
    want = "DeprecationWarning: python -m dpexplore.citations moved to python -m dpexplore.bibliography\n"
    assert want in out.stderr and out.stderr.count("Warning") == 1, out.stderr
    out = subprocess.run(
        [sys.executable, "-m", "dpexplore.references"], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert out.returncode == 0 and out.stdout.startswith('- <a id="abadi2016deep"></a>'), out.stderr
    assert "python -m dpexplore.references moved to python -m dpexplore.bibliography.references" in out.stderr


def test_the_new_names_warn_nothing():
    names = ", ".join(sorted(f"dpexplore.{pkg}.{m}" for m, pkg in _moved.MOVED.items()))
    out = _run(f"import {names}\nimport dpexplore.apps.demo, dpexplore.display, dpexplore.algorithms")
    assert out.returncode == 0 and "DeprecationWarning" not in out.stderr, out.stderr


def test_other_names_are_not_the_finders():
    assert _moved.new_name("dpexplore.mechanisms") is None
    assert _moved.new_name("dpexplore.compositionx") is None
    assert _moved.new_name("numpy.pld") is None
    assert _moved.new_name("dpexplore.pld.sub") == "dpexplore.accounting.pld.sub"
    assert _moved.old_name("dpexplore.accounting.pld.sub") == "dpexplore.pld.sub"
    assert _moved.old_name("dpexplore.bibliography.citations") == "dpexplore.citations"
    assert _moved.old_name("dpexplore.bibliography.scanner") is None
    assert _moved.old_name("dpexplore.accounting.plds") is None
    with pytest.raises(ModuleNotFoundError):
        __import__("dpexplore.nosuchmodule")


_OLD = re.compile(
    r"\bdpexplore\.(" + "|".join(_moved.MOVED) + r")\b(?![\w/])"
    r"|from dpexplore import [^\n\\]*\b(" + "|".join(_moved.MOVED) + r")\b"
)


def test_nothing_in_the_project_uses_an_old_name():
    """Code, tests, docs, notebooks and tools use the new names (the history in CHANGELOG.md and
    docs/results.md, and the alias module and this test, excepted)."""
    files = subprocess.run(["git", "ls-files"], capture_output=True, text=True, cwd=REPO, check=True).stdout.split()
    skip = {"CHANGELOG.md", "docs/results.md", "dpexplore/_moved.py", "tests/test_moved.py", "dpexplore/__init__.py"}
    bad = []
    for f in files:
        p = REPO / f
        if f in skip or p.suffix not in {".py", ".md", ".ipynb", ".toml", ".txt", ".json", ".sh", ".cfg"}:
            continue
        if not p.is_file():
            continue
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            olds = {m.group(1) or m.group(2) for m in _OLD.finditer(line)}
            # a line that names an old name beside its new one documents the move
            if any(f"dpexplore.{_moved.MOVED[o]}.{o}" not in line for o in olds):
                bad.append(f"{f}:{i}: {line.strip()[:100]}")
    assert not bad, "\n".join(bad[:40])
