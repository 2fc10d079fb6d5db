"""Finding citations: in any text (:func:`scan_text`, :func:`resolve`) and in the package's own
source (:func:`scan`, :func:`where_used`), and the docs page that lists them
(:func:`docs_markdown`: ``python -m dpexplore.bibliography > docs/references.md``).

A citation is "Author Year, Theorem N" or "Author (Year), Theorem N" with the entry's short form
(``Reference.short``), or ``cite("key", "Theorem N")`` in app text; each resolves to a
:data:`~.citations.CITATIONS` entry. ``tests/test_citations.py`` fails on a locator that is not in
the registry, on a locator with no work before it ("Thm 4"), on an author–year that is not in the
bibliography or is ambiguous ("Steinke 2023" beside Steinke 2023a/2023b), and on "the post" /
"the slide" without whose. ``docs/references.md`` lists the registry with where each citation is
used (:func:`citation_table_markdown`). The tests and the docs page use this module; the backend,
the apps and the UI do not import it.

>>> [c.key for c in resolve("Mironov 2017, Proposition 6 and Bun & Steinke 2016, Proposition 1.6")]
['mironov2017', 'bun2016concentrated']
"""

from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass

from . import references as _refs
from .citations import _LOCLIST, _TO_SCANNER, CHECKS, CITATIONS, LOC_RE, Citation, _index, normalize_locator

#: the names citations._TO_SCANNER forwards here (with a warning) for the callers of the old module
__all__ = list(_TO_SCANNER)

#: a title or an arXiv number between a work and its locator: 'Canonne 2022, "Privacy Doona", eq. (1)'
_TITLE = r"(?:\"[^\"\n]{3,100}\"|arXiv:\d{4}\.\d{4,5}(?:v\d+)?)"


def _short_alternatives():
    alts = []
    for r in sorted(_refs.REFERENCES, key=lambda r: -len(r.short)):
        name, year = r.short.rsplit(" ", 1)
        for s in {r.short, *r.aliases}:
            n, y = s.rsplit(" ", 1)
            pat = re.escape(n).replace(r"\ ", r"\s+").replace("\\&", "(?:&amp;|&|and)")
            pat = pat.replace(",", r",?")
            alts.append((rf"{pat}(?:'s)?\s+(?:{y}|\({y}\)|\({y}(?=,))(?:'s)?", r.key))
    return alts


_CACHE: dict = {}


def _patterns():
    if not _CACHE:
        alts = _short_alternatives()
        _CACHE["keys"] = [k for _, k in alts]
        short = "|".join(f"(?P<k{i}>{p})" for i, (p, _) in enumerate(alts))
        _CACHE["cite"] = re.compile(rf"(?<!\w)(?=[A-ZÀ-Ý])(?:{short})(?![\w])(?:,?\s*{_TITLE})?")
        _CACHE["before"] = re.compile(rf"(?P<locs>{_LOCLIST})\s+(?:of|in)\s+(?:{short})(?![\w])")
        _CACHE["call"] = re.compile(
            r"""\b(?:cite|cite_text|c)\(\s*["'](?P<key>\w+)["']\s*(?:,\s*["'](?P<loc>[^"']*)["'])?\s*\)"""
        )
    return _CACHE


#: an author–year that is no bibliography entry: "Name 2020", "Name et al. 2021", "Name (2019)"
_AUTHOR_YEAR = re.compile(
    r"(?<![\w.])(?:[A-Z][a-zäöüéè'’-]+(?:\s+et\s+al\.)?)(?:'s)?\s+"
    r"(?:(?:19|20)\d\d[a-z]?|\((?:19|20)\d\d[a-z]?\))(?![\w])"
)
#: whose post, whose slide: "the post", "the slide's footnote" need an author
_WHOSE = re.compile(r"\b[Tt]he\s+(?:post|slide|blog post|paper|lecture)s?(?:'s)?\b")


@dataclass(frozen=True)
class Found:
    """One citation found in text: the work, the locator (normalized, "" for the work as a whole)
    and the matched text; ``problem`` says what is wrong with it ("" if nothing)."""

    key: str
    locator: str
    text: str
    problem: str = ""


def _key_of(m) -> str:
    keys = _patterns()["keys"]
    for name, val in m.groupdict().items():
        if val is not None and name.startswith("k") and name[1:].isdigit():
            return keys[int(name[1:])]
    raise AssertionError(m.group(0))


def _prepare(text: str) -> str:
    """Source text with adjacent string literals and comment continuations joined, HTML entities
    and tags that sit inside citations removed, and whitespace runs made one space."""
    text = re.sub(r"""(["'])\s*\n\s*(?:\+\s*)?[rRfFbBuU]*(["'])""", "", text)
    text = re.sub(r"""(["'])\s*\+\s*[rRfFbBuU]*(["'])""", "", text)
    text = re.sub(r"\n\s*(?:#:?|\*|-)?\s*", " ", text)
    text = text.replace("&amp;", "&").replace("&nbsp;", " ").replace("\\n", " ")
    return re.sub(r"[ \t]+", " ", text)


_ABBR = re.compile(r"(?:\bfn|\beqs?|Eqs?|Prop|Thm|Cor|Def|Sec|Fig|Alg|\bal|cf|e\.g|i\.e|vs|\bp|pp)$")
_STOP_TAG = re.compile(r"</?(?:p|li|ul|h\d|br|tr|td|th|table|div)\b")


def _scope_end(text: str, start: int, limit: int) -> int:
    """Where the locators of a citation that ends at ``start`` stop: at the ")" that closes its
    parentheses, a ";" or ":" outside parentheses, the end of the sentence, an HTML block tag, the
    next citation (``limit``) or 160 characters on."""
    depth, end, i = 0, min(limit, start + 160), start - 1
    while i + 1 < end:
        i += 1
        ch = text[i]
        if ch in '"“':  # a quoted name ('slide "Detour: AboveThreshold"') is one token
            close = text.find("”" if ch == "“" else '"', i + 1, end)
            i = close if close > 0 else i
        elif ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                return i
            depth -= 1
        elif depth == 0 and ch in ";:":
            return i
        elif (
            depth == 0 and ch == "." and text[i + 1 : i + 2] in (" ", "") and not _ABBR.search(text[max(0, i - 4) : i])
        ):
            return i
        elif ch == "<" and _STOP_TAG.match(text, i):
            return i
    return end


def scan_text(text: str) -> list[Found]:
    """Every citation in ``text``, resolved, with the problems of those that do not resolve.

    >>> [(f.key, f.locator) for f in scan_text("(Liu et al. 2022, Theorem 2.1 and Thm 3.3)")]
    [('liu2022', 'Theorem 2.1'), ('liu2022', 'Theorem 3.3')]
    >>> scan_text("as Theorem 4 shows")[0].problem
    'locator without a work'
    """
    text = _prepare(text)
    P = _patterns()
    found, covered = [], []
    cites = list(P["cite"].finditer(text))
    names = [m.span() for m in cites]

    def add(key, locs, span, s):
        covered.append(span)
        if not locs:
            found.append(Found(key, "", s))
        for loc in locs:
            ok = (key, loc) in _index()
            found.append(Found(key, loc, s, "" if ok else "not in the registry"))

    def inside(span):
        return any(a <= span[0] and span[1] <= b for a, b in covered)

    for m in P["before"].finditer(text):
        covered.append(m.span())
    for m in P["call"].finditer(text):
        add(m.group("key"), normalize_locator(m.group("loc") or ""), m.span(), m.group(0))
    starts = sorted([m.start() for m in P["call"].finditer(text)] + [m.start() for m in cites])
    for m in cites:
        nxt = next((s for s in starts if s > m.start()), len(text))
        end = _scope_end(text, m.end(), nxt)
        locs = [x for x in LOC_RE.finditer(text, m.end(), end) if not inside(x.span())]
        add(
            _key_of(m),
            tuple(loc for x in locs for loc in normalize_locator(x.group(0))),
            (m.start(), end),
            text[m.start() : end],
        )
    for m in P["before"].finditer(text):
        add(_key_of(m), normalize_locator(m.group("locs")), m.span(), m.group(0))

    for m in LOC_RE.finditer(text):
        if inside(m.span()):
            continue
        # "their Theorem 27", "its Algorithm 1": the work cited last, at most 400 characters back
        last = [n for n in cites if m.start() - 400 <= n.start() and n.end() <= m.start()]
        if re.search(r"\b(?:[Tt]heir|[Ii]ts)\s+$", text[max(0, m.start() - 7) : m.start()]) and last:
            add(_key_of(last[-1]), normalize_locator(m.group(0)), m.span(), m.group(0))
        else:
            ctx = text[max(0, m.start() - 60) : m.end() + 20]
            found.append(Found("", normalize_locator(m.group(0))[0], ctx, "locator without a work"))
    for m in _AUTHOR_YEAR.finditer(text):
        if not any(a <= m.start() and m.end() <= b for a, b in names):
            ctx = text[max(0, m.start() - 40) : m.end() + 20]
            found.append(Found("", "", ctx, "author-year not in the bibliography (or ambiguous)"))
    for m in _WHOSE.finditer(text):
        ctx = text[max(0, m.start() - 40) : m.end() + 20]
        found.append(Found("", "", ctx, f"{m.group(0)!r} without an author"))
    return found


def resolve(text: str) -> list[Citation]:
    """The registry entries of the citations with a locator in ``text``; ``KeyError`` on the
    first that is not in the registry."""
    out = []
    for f in scan_text(text):
        if f.problem:
            raise KeyError(f"{f.text!r}: {f.problem}")
        if f.locator:
            out.append(_index()[(f.key, f.locator)])
    return out


#: the bibliography's own folder: its text is the bibliography itself, not citations
_HERE = pathlib.Path(__file__).resolve().parent
_PACKAGE = _HERE.parent


def scan(root: pathlib.Path = _PACKAGE) -> dict[str, list[Found]]:
    """Every citation in the package's Python source, by file (relative to the package's parent)."""
    out = {}
    for p in sorted(root.rglob("*.py")):
        if p.parent == _HERE:
            continue
        out[str(p.relative_to(root.parent))] = scan_text(p.read_text(encoding="utf-8"))
    return out


def where_used() -> dict:
    """(key, locator) → the sorted modules of the package that cite it there."""
    used: dict = {}
    for path, founds in scan().items():
        mod = path[:-3].replace("/", ".").removesuffix(".__init__")
        for f in founds:
            if f.locator and not f.problem:
                used.setdefault((f.key, f.locator), set()).add(mod)
    return {k: sorted(v) for k, v in used.items()}


def citation_summary_markdown() -> str:
    """How many citations were checked how, and the corrections (for docs/references.md)."""
    n = {k: sum(c.checked == k for c in CITATIONS) for k in CHECKS}
    fixed = [c for c in CITATIONS if "was cited as" in c.claim or c.checked == "corrected"]
    lines = [
        f"{len(CITATIONS)} distinct citations with a locator (theorem, lemma, proposition, "
        f"corollary, definition, equation, section, figure, footnote, algorithm, slide or a named "
        f"result). Checked against a source: {n['read'] + n['corrected']} read in the work "
        f"itself ({n['corrected']} of them corrected), {n['library'] + n['quoted']} by the same "
        f"number quoted in a library's code or another text, {n['review']} in the review of "
        f"issue 25 (not re-read since); {n['named']} whose number could not be confirmed are "
        f"cited by the result's name instead.",
        "",
        "Corrected or re-worded:",
        "",
    ]
    for c in fixed:
        lines.append(f"- {_refs.get(c.key).short}, {c.locator}: {c.claim}")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def citation_table_markdown() -> str:
    """The registry as a Markdown table: work, locator, claim, where used (modules), how checked."""
    used = where_used()
    lines = ["| work | locator | claim | where used | how checked |", "|---|---|---|---|---|"]
    for c in CITATIONS:
        ref = _refs.get(c.key)
        where = ", ".join(f"`{m}`" for m in used.get((c.key, c.locator), ())) or "README"
        lines.append(
            f"| [{_cell(ref.short)}](#{c.key}) | {_cell(c.locator)} | {_cell(c.claim)} | "
            f"{where} | {_cell(c.how_checked())} |"
        )
    return "\n".join(lines) + "\n"


def docs_markdown() -> str:
    """``docs/references.md``: the bibliography, then how the citations were checked and the table of
    every citation with a locator (``python -m dpexplore.bibliography > docs/references.md``; a test
    keeps the committed file equal to this)."""
    head = [
        "# References",
        "",
        "Every work dpexplore's code, apps and documentation cite (generated from "
        "`dpexplore/bibliography/references.py` and `dpexplore/bibliography/citations.py`: "
        "`python -m dpexplore.bibliography > docs/references.md`). Code and docstrings cite as "
        "*Author Year, Theorem N* with the entry's short form; theorem numbers follow the "
        "version each entry names.",
        "",
    ]
    return "\n".join(
        head
        + [
            _refs.bibliography_markdown(),
            "",
            "## Citations",
            "",
            citation_summary_markdown(),
            "",
            citation_table_markdown(),
        ]
    )
