"""Citations as data (the registry dpexplore.bibliography.citations; dpexplore.bibliography.scanner
finds them): every citation in the package's code, docstrings and app texts, and in the notebooks
and the README, names a bibliography entry and a locator the registry holds; bare locators
("Thm 4"), author–years outside the bibliography or ambiguous ("Steinke 2023") and "the post"/"the
slide" without whose fail; docs/references.md lists the registry."""

from __future__ import annotations

import json
import pathlib
import re

import pytest

from dpexplore.bibliography import citations as C
from dpexplore.bibliography import references as R
from dpexplore.bibliography import scanner as S

REPO = pathlib.Path(__file__).resolve().parent.parent


def _problems(found):
    return [f"{f.problem}: …{' '.join(f.text.split())[:140]}…" for f in found if f.problem]


def test_every_citation_in_the_package_resolves_through_the_registry():
    scanned = S.scan()
    assert len(scanned) > 40  # every module of the package
    bad = [f"{path}: {p}" for path, found in scanned.items() for p in _problems(found)]
    assert not bad, "citations that do not resolve (see dpexplore.bibliography.citations):\n" + "\n".join(bad[:40])
    resolved = {(f.key, f.locator) for found in scanned.values() for f in found if f.locator}
    assert len(resolved) >= 120


def _notebook_text(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells)


def test_notebooks_readme_and_docs_cite_through_the_registry():
    texts = {p: _notebook_text(p) for p in sorted((REPO / "notebooks").glob("*.ipynb"))}
    texts.update({p: p.read_text(encoding="utf-8") for p in (REPO / "README.md", REPO / "docs" / "hosting.md")})
    assert len(texts) >= 10
    bad = [f"{p.relative_to(REPO)}: {m}" for p, t in texts.items() for m in _problems(S.scan_text(t))]
    assert not bad, "\n".join(bad)


def test_every_registry_entry_is_cited_somewhere_and_well_formed():
    used = set(S.where_used())
    readme = {(f.key, f.locator) for f in S.scan_text((REPO / "README.md").read_text(encoding="utf-8"))}
    pairs = [(c.key, c.locator) for c in C.CITATIONS]
    assert len(pairs) == len(set(pairs)) >= 120
    assert not set(pairs) - used - readme, "registry entries nothing cites"
    for c in C.CITATIONS:
        assert R.get(c.key) and c.claim and c.checked in C.CHECKS, c
        assert C.normalize_locator(c.locator) == (c.locator,), c
        if c.checked in ("library", "quoted"):
            assert c.source, c  # who quotes the number
        if c.checked == "named":
            assert c.locator.startswith(("result ", "definition ")) and "was cited as" in c.claim, c


@pytest.mark.parametrize(
    "text, problem",
    [
        ("the shifted inverse (Thm 4) and the binary search", "locator without a work"),
        ("Steinke 2023, Figure 1: the loss", "author-year not in the bibliography (or ambiguous)"),
        ("as the slide's footnote explains", "without an author"),
        ("the post's table of results", "without an author"),
        ("RDP of Laplace (Mironov Prop. 6)", "locator without a work"),
        ("KOV Thm 3.3", "locator without a work"),
        ("CKS 2020 Prop. 12", "locator without a work"),
        ("the profile (Liu et al. 2022, Definition 2.2)", "not in the registry"),
        ('cite("liu2022", "Corollary 2.13")', "not in the registry"),
        ("Asoodeh et al. 2019, Theorem 1", "author-year not in the bibliography (or ambiguous)"),
    ],
)
def test_scan_reports_what_a_student_could_not_follow(text, problem):
    found = S.scan_text(text)
    assert any(problem in f.problem for f in found), [(f.key, f.locator, f.problem) for f in found]


def test_scan_resolves_the_forms_the_code_uses():
    cases = {
        "(Liu et al. 2022, Theorem 2.1 and Thm 3.3)": [("liu2022", "Theorem 2.1"), ("liu2022", "Theorem 3.3")],
        "Mironov (2017, Prop. 3): ε_α": [("mironov2017", "Proposition 3")],
        "Feldman & Zrnic (2021, result “Rényi filter”)": [("feldman2021individual", 'result "Rényi filter"')],
        "(Steinke 2023b, Theorem 4 and its footnote 4, eqs. (A)–(B))": [
            ("steinke2023down", "Theorem 4"),
            ("steinke2023down", "footnote 4"),
            ("steinke2023down", "eq. (A)–(B)"),
        ],
        'Bassi 2019, slide "Detour: AboveThreshold algorithm"': [
            ("bassi2019", 'slide "Detour: AboveThreshold algorithm"')
        ],
        "Algorithm 1 of Pujol & Desfontaines 2023": [("pujol2023groups", "Algorithm 1")],
        'cite("steinke2023down", "Lemmas 1–2")': [("steinke2023down", "Lemma 1–2")],
        "(Wang, Balle & Kasiviswanathan 2019, Theorem 9, in the strengthened form of their Theorem 27)": [
            ("wang2019subsampled", "Theorem 9"),
            ("wang2019subsampled", "Theorem 27"),
        ],
    }
    for text, want in cases.items():
        found = S.scan_text(text)
        assert not _problems(found), (text, _problems(found))
        assert [(f.key, f.locator) for f in found if f.locator] == want, text


def test_resolve_gives_the_claim_and_how_it_was_checked():
    (c,) = S.resolve("the tight bound (Steinke 2024, Theorem 5)")
    assert "ε tanh(ε/2)" in c.claim and c.checked == "corrected"
    assert C.find("mironov2017", "Prop. 6").how_checked().startswith("the same number is quoted")
    with pytest.raises(KeyError, match="Definition 2.2"):
        C.find("liu2022", "Definition 2.2")
    with pytest.raises(KeyError, match="not in"):
        S.resolve("Canonne 2022, eq. (4)")


def test_the_six_wrong_citations_of_issue_25_are_gone():
    index = {(c.key, c.locator) for c in C.CITATIONS}
    for wrong in [
        ("steinke2023inverse", "eq. (1)"),
        ("canonne2022doona", "eq. (4)–(5)"),
        ("canonne2022doona", "eq. (8)"),
        ("liu2022", "Definition 2.2"),
        ("liu2022", "Corollary 2.13"),
        ("liu2022", "Corollary 3.3"),
        ("bun2016concentrated", "Proposition 1.4 tight"),
        ("bassi2019", 'slide "Composition theorem"'),
        ("bassi2019", 'slide "Advanced, k-fold"'),
    ]:
        assert wrong not in index, wrong
    for right in [
        ("canonne2022doona", "eq. (1)"),
        ("steinke2023inverse", "eq. (4)–(5)"),
        ("steinke2023inverse", "eq. (8)"),
        ("liu2022", "Section 2"),
        ("dong2022gaussian", "Corollary 2.13"),
        ("dong2022gaussian", "Corollary 3.3"),
        ("steinke2024pdp", "Theorem 5"),
    ]:
        assert right in index, right


def test_every_entry_has_a_stable_link_and_says_which_numbering_it_follows():
    stable = re.compile(r"^https://(doi\.org/10\.\d{4,}/\S+|arxiv\.org/abs/\d{4}\.\d{4,5}(v\d+)?)$")
    for r in R.REFERENCES:
        assert stable.match(r.url) or r.key in R.NO_DOI_OR_ARXIV, r
        assert r.url or r.key == "bassi2019", r  # the slides have no public copy
    numbered = {c.key for c in C.CITATIONS}
    for key in numbered:
        assert R.get(key).numbered_as(), key
    assert R.get("dong2022gaussian").numbered_as().startswith("arXiv:1905.02383")
    assert R.get("canonne2020discrete").numbered_as() == "arXiv:2004.00010v4"
    out = R.cite("mironov2017", "Proposition 6")
    assert 'href="https://arxiv.org/abs/1702.07476v3"' in out and "Numbered as in arXiv:1702.07476v3." in out
    assert "Numbered as in" not in R.cite("mironov2017")  # no locator, no numbering to state
    assert "Numbered as in arXiv:1905.02383" in R.bibliography_html(["dong2022gaussian"])


def test_docs_table_lists_every_citation_with_where_and_how():
    text = (REPO / "docs" / "references.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| [")]
    assert len(rows) == len(C.CITATIONS)
    row = next(r for r in rows if "(#steinke2024pdp) | Theorem 5 |" in r)
    assert "`dpexplore.accounting.composition.theorems`" in row and "corrected in issue 25" in row
    assert f"{len(C.CITATIONS)} distinct citations with a locator" in text
