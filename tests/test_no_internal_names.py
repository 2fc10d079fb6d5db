"""Nothing in the project names the internal files the sources came as (their numbered labels, the
notes, the design sketch, the folder beside the repository): code, docstrings, notebooks, app text,
docs, README, benchmarks, tools and tests cite by author, year and theorem instead
(``dpexplore.bibliography.references``). The patterns are assembled from pieces so that this file
names none."""

from __future__ import annotations

import pathlib
import re
import subprocess

REPO = pathlib.Path(__file__).resolve().parent.parent

_ZZ = "0" * 2
_LABEL = (
    r"(?<![\w.\-/,#])(?<!\d\s)" + _ZZ + r"[0-4]"
    r"(?=[ ,)]*(Thm|Theorem|Fig|Figure|Lemma|Section|Sec\.|Cor|Def|Prop|eq|Remark|\"|,|'s|\)))"
)
_NAMES = ["NOTES" + r"\.md", "design" + r"\.md", r"\.\./" + "shared", "/work/" + "shared"]
PATTERN = re.compile(_LABEL + "|" + "|".join(_NAMES))
#: a label standing alone in parentheses, as in a title "Noise lab (label)"
PAREN = re.compile(r"\(" + _ZZ + r"[0-4]\)")


def _files():
    out = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    for name in out.split():
        p = REPO / name
        if p.is_symlink() or not p.is_file() or p.suffix in {".png", ".jpg", ".ico"}:
            continue
        if "static" in p.parts or p.name in {"package-lock.json"} or p.parts[-2:-1] == (".ci",):
            continue
        yield p


def test_no_file_names_the_internal_sources():
    hits = []
    for p in _files():
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for i, line in enumerate(text.splitlines(), 1):
            if PATTERN.search(line) or PAREN.search(line):
                hits.append(f"{p.relative_to(REPO)}:{i}: {line.strip()[:120]}")
    assert not hits, "internal names (cite by author, year and theorem):\n" + "\n".join(hits[:40])
