"""The bibliography (dpexplore.bibliography.references): well-formed entries, citations that resolve, and
docs/references.md generated from it."""

from __future__ import annotations

import pathlib
import re

import pytest

from dpexplore.bibliography import references as R

REPO = pathlib.Path(__file__).resolve().parent.parent


def test_keys_unique_and_entries_complete():
    keys = [r.key for r in R.REFERENCES]
    assert len(keys) == len(set(keys))
    for r in R.REFERENCES:
        assert r.authors and r.title and r.venue and r.short, r
        assert 1900 < r.year < 2100, r
        assert r.short.endswith(str(r.year)) or re.search(rf"{r.year}[a-z]$", r.short), r
        assert r.url == "" or r.url.startswith("https://"), r


def test_unknown_key_names_it():
    with pytest.raises(KeyError, match="nosuch"):
        R.cite("nosuch")


def test_cite_links_and_escapes():
    out = R.cite("kairouz2015composition", "Theorem 3.4")
    assert 'href="https://arxiv.org/abs/1311.0776"' in out
    assert ">Kairouz, Oh &amp; Viswanath 2015, Theorem 3.4</a>" in out
    assert R.cite_text("steinke2023down", "Section 2") == "Steinke (2023b), Section 2"


def test_docs_references_md_is_generated_from_the_module():
    text = (REPO / "docs" / "references.md").read_text(encoding="utf-8")
    from dpexplore.bibliography.scanner import docs_markdown

    assert text == docs_markdown(), "docs/references.md is stale: python -m dpexplore.bibliography > docs/references.md"
