"""Every citation dpexplore makes, as data: which work, which locator (theorem, lemma, section, …),
what it supports there, and how the locator was checked against the work.

Code, docstrings and app texts cite through the bibliography (:mod:`.references`): app texts with
``cite("key", "Theorem 4")`` (or a plain "Short Year, Theorem 4" that
:func:`.references.autolink` links), docstrings and comments in the plain form
"Author Year, Theorem N" or "Author (Year), Theorem N", where "Author Year" is the entry's short
form (``Reference.short``). :mod:`.scanner` finds all of them in the package source and resolves
each to a :data:`CITATIONS` entry (``tests/test_citations.py`` fails on any that does not
resolve); ``docs/references.md`` lists the registry with where each citation is used.

>>> find("dong2022gaussian", "Cor. 2.13").locator
'Corollary 2.13'
>>> normalize_locator("Prop. 6")
('Proposition 6',)

The scanner's names (:func:`~.scanner.scan`, :func:`~.scanner.scan_text`, :class:`~.scanner.Found`,
:func:`~.scanner.resolve`, :func:`~.scanner.where_used` and the docs page's generators) were in this
module before :mod:`.scanner` had them: taken from here, or from this module's old name, they
still work, with a DeprecationWarning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .._moved import moved_names
from . import references as _refs

__all__ = ["Citation", "CITATIONS", "CHECKS", "find", "normalize_locator"]


@dataclass(frozen=True)
class Citation:
    """One (work, locator) the project cites: ``claim`` is what it supports there, ``checked`` how
    the locator was checked (a :data:`CHECKS` key) and ``source`` who quotes the same number, for
    the checks that rest on a quotation."""

    key: str
    locator: str
    claim: str
    checked: str
    source: str = ""

    def how_checked(self) -> str:
        """The "how checked" text of docs/references.md."""
        return CHECKS[self.checked] + (f" ({self.source})" if self.source else "")


#: how a locator was checked (the "how checked" column of docs/references.md)
CHECKS = {
    "read": "read in the work itself",
    "corrected": "read in the work itself; corrected in issue 25 (the claim says what it was)",
    "library": "the same number is quoted by a library's source code",
    "quoted": "the same number is quoted by another public text",
    "review": "checked against the work in the citation review of issue 25; not re-read since",
    "named": "number not confirmed from a readable source, so cited by the result's name",
}

_WORDS = {  # abbreviation → the locator word it stands for
    "theorem": "Theorem",
    "theorems": "Theorem",
    "thm": "Theorem",
    "thm.": "Theorem",
    "lemma": "Lemma",
    "lemmas": "Lemma",
    "proposition": "Proposition",
    "prop.": "Proposition",
    "prop": "Proposition",
    "propositions": "Proposition",
    "corollary": "Corollary",
    "corollaries": "Corollary",
    "cor.": "Corollary",
    "cor": "Corollary",
    "definition": "Definition",
    "definitions": "Definition",
    "def.": "Definition",
    "remark": "Remark",
    "example": "Example",
    "algorithm": "Algorithm",
    "alg.": "Algorithm",
    "alg": "Algorithm",
    "section": "Section",
    "sections": "Section",
    "sec.": "Section",
    "§": "Section",
    "§§": "Section",
    "figure": "Figure",
    "fig.": "Figure",
    "eq.": "eq.",
    "eqs.": "eq.",
    "equation": "eq.",
    "equations": "eq.",
    "table": "Table",
    "appendix": "Appendix",
    "slide": "slide",
    "slides": "slide",
    "footnote": "footnote",
    "fn.": "footnote",
    "claim": "Claim",
    "result": "result",
}
_WORD_RE = (
    r"(?:Theorems?|Thm\.?|Lemmas?|Propositions?|Prop\.?|Corollar(?:y|ies)|Cor\.?|"
    r"Definitions?|Def\.|Remark|Example|Algorithm|Alg\.?|Sections?|Sec\.|§§?|Figure|Fig\.|"
    r"[Ee]qs?\.|Table|Appendix|[Ss]lides?|[Ff]ootnote|fn\.|Claim|result|definition)"
)
_NUM = r"(?:\(\d+\)|\([A-Z]\)|[A-Z]?\d+(?:\.\d+)*[a-z]?(?![\w.]\w)|[A-Z](?:\.\d+)+)"
_NUMS = rf"{_NUM}(?:\s*[–-]\s*{_NUM})?"
_QUOTED = r"(?:\"[^\"\n]{3,80}\"|“[^”\n]{3,80}”|'[A-Z][^'\n]{3,80}')"
#: one locator: a word and a number ("Theorem 3.3", "eq. (4)–(5)", "§6.2") or a quoted name
LOC_RE = re.compile(rf"(?<![\w.])(?P<word>{_WORD_RE})\s*(?P<what>{_NUMS}|{_QUOTED})")
_SEP = r"(?:\s*(?:,|;|/|and|&|or)\s*(?:and\s+|the\s+|its\s+)?|\s+)"
_LOCLIST = (
    rf"{LOC_RE.pattern.replace('?P<word>', '?:').replace('?P<what>', '?:')}"
    rf"(?:{_SEP}(?:{_WORD_RE}\s*)?(?:{_NUMS}|{_QUOTED}))*"
)


def normalize_locator(text: str) -> tuple[str, ...]:
    """The locators ``text`` names, each as "Word number" with the word spelled out.

    >>> normalize_locator("Thm. 21")
    ('Theorem 21',)
    >>> normalize_locator("Theorems 4 and 5")
    ('Theorem 4', 'Theorem 5')
    >>> normalize_locator("eq. (4)–(5)")
    ('eq. (4)–(5)',)
    """
    out, word = [], None
    for m in re.finditer(rf"(?P<word>{_WORD_RE})?\s*(?P<what>{_NUMS}|{_QUOTED})", text):
        if m.group("word"):
            w = m.group("word")
            word = w if w in ("result", "definition") else _WORDS[w.lower()]
        if word is None:
            continue
        what = m.group("what").replace("“", '"').replace("”", '"')
        if not what.startswith(('"', "'")):
            what = re.sub(r"\s*[–-]\s*", "–", what)
        if what.startswith("'"):
            what = '"' + what[1:-1] + '"'
        out.append(f"{word} {what}" if word != "Section" or not what[0].isdigit() else f"Section {what}")
    return tuple(out)


#: the registry as written: work | locator | claim | how checked (a CHECKS key) | who quotes it
_REGISTRY = """
balle2018improving | Theorem 8 | the Gaussian mechanism's exact privacy profile (analytic Gaussian mechanism) | review |
balle2018subsampling | Theorem 2 | advanced joint convexity of the hockey-stick divergence | quoted | quoted as "Theorem 2 of (Balle et al., 2018) (an identity called Advanced Joint Convexity)" in another paper's text
balle2018subsampling | Theorem 9 | ε-DP base without replacement (substitution): log(1 + q(e^ε − 1)) | review |
balle2018subsampling | result "amplification by Poisson subsampling" | ε-DP base under Poisson sampling: log(1 + q(e^ε − 1)) (was cited as Theorem 8) | named |
balle2020hypothesis | Theorem 21 | the improved RDP → (ε, δ) conversion | review |
bassi2019 | slide "A differencing attack" | why exact counts leak | read |
bassi2019 | slide "AboveThreshold algorithm" | AboveThreshold | read |
bassi2019 | slide "Advanced adaptive composition" | advanced composition of k adaptive mechanisms (was cited as "Advanced, k-fold", which is no slide) | corrected |
bassi2019 | slide "Approx. max-information of DP algorithms for i.i.d. datasets" | approximate max-information of ε-DP algorithms | read |
bassi2019 | slide "Composition of several DP mechanisms" | basic composition (was cited as "Composition theorem", which is no slide) | corrected |
bassi2019 | slide "Corollary for statistical queries" | generalization of DP statistical queries | read |
bassi2019 | slide "Detour: AboveThreshold algorithm" | AboveThreshold | read |
bassi2019 | slide "Generalization and holdout" | the adaptive data analysis part of the lecture | read |
bassi2019 | slide "Generalization via DP for i.i.d. datasets" | generalization of ε-DP algorithms on i.i.d. data | read |
bassi2019 | slide "Generalization via differential privacy" | generalization via DP | read |
bassi2019 | slide "Pure max-information of pure DP algorithms" | pure max-information of ε-DP algorithms | read |
bassi2019 | slide "Report Noisy Max" | Report Noisy Max | read |
bassi2019 | slide "Reusable holdout" | the reusable holdout | read |
bassi2019 | slide "Sparse vector mechanism (again)" | the sparse vector mechanism | read |
bassi2019 | slide "Sparse vector mechanism" | the sparse vector mechanism | read |
bassi2019 | slide "The Report Noisy Max algorithm is (ε, 0)-DP" | Report Noisy Max is ε-DP | read |
bassi2019 | slide "Thresholdout (cont.)" | Thresholdout's privacy and its footnote on the factor 2 | read |
bassi2019 | slide "Unrealistic example" | overfitting a reused holdout by adaptive selection | read |
bassi2019 | slide "Usefulness of max-information" | max-information bounds the probability of bad events | read |
bassi2019 | slide "ℓ₁-sensitivity" | ℓ₁-sensitivity and the Laplace mechanism | read |
bu2020deep | result "CLT approximation of noisy SGD" | μ = q√(T(e^{1/σ²} − 1)) for T Poisson-subsampled Gaussian steps (was cited as Theorem 5) | named |
bun2016concentrated | Definition 1.1 | ρ-zCDP | review |
bun2016concentrated | Proposition 1.3 | ρ-zCDP ⇒ (ρ + 2√(ρ log(1/δ)), δ)-DP | review |
bun2016concentrated | Proposition 1.4 | ε-DP ⇒ ε²/2-zCDP (not tight; the tight bound is Steinke 2024, Theorem 5) | review |
bun2016concentrated | Proposition 1.6 | the Gaussian mechanism is Δ²/(2σ²)-zCDP | review |
bun2016concentrated | result "composition of zCDP" | zCDP composes additively (was cited as Lemma 2.3) | named |
canonne2020discrete | Proposition 12 | the improved RDP → (ε, δ) conversion | library | dp_accounting's rdp_privacy_accountant: "Proposition 12 (in v4)"
canonne2020discrete | Theorem 7 | the discrete Gaussian's exact δ(ε) | review |
canonne2020discrete | definition "discrete Gaussian" | P(y) ∝ e^{−y²/(2σ²)} on ℤ (was cited as Definition 1) | named |
canonne2020discrete | result "the discrete Gaussian is ρ-zCDP" | ρ = Δ²/(2σ²) (was cited as Theorem 4; dp_accounting cites Proposition 5) | named |
canonne2022doona | eq. (1) | central ε after shuffling ε_L-LDP reports, after Feldman, McMillan & Talwar (formerly misattributed to Steinke 2023a) | corrected |
dong2022gaussian | Corollary 2.13 | μ-GDP ⇔ (ε, δ_μ(ε))-DP for all ε (was attributed to Liu et al. in one place) | quoted | quoted as "Corollary 2.13" by Liu et al. 2022, Theorem 3.1
dong2022gaussian | Corollary 3.3 | μ-GDP composes as √(Σ μ_i²) (was cited as Liu et al.'s) | corrected |
dong2022gaussian | Definition 2.1 | the trade-off function T(P, Q)(α) | quoted | quoted as "Dong et al., 2019, Definition 2.1" and "Proposition 2.5" (with Kairouz et al., 2015, Theorem 2.1) in another paper's appendix
dong2022gaussian | definition "μ-GDP" | μ-GDP, G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) (was cited as Definition 2.6) | named |
dong2022gaussian | Proposition 2.5 | (ε, δ)-DP is f_{ε,δ}-DP | quoted | quoted as "Dong et al., 2019, Definition 2.1" and "Proposition 2.5" (with Kairouz et al., 2015, Theorem 2.1) in another paper's appendix
dong2022gaussian | result "central limit theorem for subsampled composition" | composed subsampled mechanisms tend to GDP (was cited as Corollary 5.4) | named |
dong2022gaussian | result "characterization of trade-off functions" | trade-off functions are convex and non-increasing (was cited as Proposition 2.2) | named |
dong2022gaussian | result "composition of f-DP" | f-DP composes by the tensor product (was cited as Theorem 3.2) | named |
dong2022gaussian | result "f-DP as (ε, δ(ε))-DP for all ε" | a trade-off function and its privacy profile determine each other (was cited as Proposition 2.12) | named |
dong2022gaussian | result "subsampling for f-DP" | the trade-off function of a subsampled mechanism (was cited as Theorem 4.2) | named |
doroshenko2022connect | Algorithm 1 | the connect-the-dots (pessimistic) PLD discretization (was cited as Theorem 3.3) | library | dp_accounting's pld_pmf: "Algorithm 1 (PLD Discretization)"
dwork2006calibrating | Proposition 1 | the Laplace mechanism is ε-DP | review |
dwork2014algorithmic | Algorithm 1 | AboveThreshold | review |
dwork2014algorithmic | Algorithm 2 | Sparse | review |
dwork2014algorithmic | Claim 3.9 | Report Noisy Max is ε-DP | review |
dwork2014algorithmic | Corollary 3.21 | advanced composition in its small-ε form | review |
dwork2014algorithmic | Theorem 2.2 | group privacy | review |
dwork2014algorithmic | Theorem 3.20 | advanced composition | review |
dwork2014algorithmic | Theorem 3.23 | AboveThreshold is ε-DP | review |
dwork2014algorithmic | Theorem 3.23–3.26 | the sparse vector technique (privacy and accuracy) | review |
dwork2014algorithmic | Theorem 3.24 | AboveThreshold's accuracy | review |
dwork2014algorithmic | Theorem 3.26 | Sparse's accuracy | review |
feldman2021clones | Theorem 3.1 | amplification by shuffling (the closed form behind Canonne 2022, eq. (1)) | review |
feldman2021individual | result "Rényi filter" | a filter on Σ ε_i(α) ≤ B_α is (α, B_α)-RDP (was cited as Theorem 3.1) | named |
kairouz2015composition | Theorem 2.1 | (ε, δ)-DP as a bound on hypothesis tests | quoted | quoted as "Dong et al., 2019, Definition 2.1" and "Proposition 2.5" (with Kairouz et al., 2015, Theorem 2.1) in another paper's appendix
kairouz2015composition | Theorem 3.3 | the optimal composition of k (ε, δ)-DP mechanisms | library | dp_accounting's pld accountant: "Theorem 3.3 of https://arxiv.org/pdf/1311.0776.pdf"
liu2022 | Figure 1 | privacy profiles: naive vs refined (left), Laplace vs GDP (right) | read |
liu2022 | Lemma 3.1 | the tail bound used for GDP identification | read |
liu2022 | Section 1 | GDP as a single-parameter privacy notion | read |
liu2022 | Section 2 | privacy profiles and the exact partial order on (ε, δ)-DP conditions (the profile is defined here, unnumbered; it was cited as Definition 2.2) | corrected |
liu2022 | Section 3 | the identification of GDP algorithms | read |
liu2022 | Theorem 2.1 | (ε₀, δ₀)-DP ⇒ (ε, δ)-DP iff δ ≥ δ₀ + (1 − δ₀)(e^{ε₀} − e^ε)₊/(1 + e^{ε₀}) | read |
liu2022 | Theorem 3.1 | μ-GDP ⇔ (ε, δ_μ(ε))-DP for all ε (restating Dong, Roth & Su 2022, Corollary 2.13) | read |
liu2022 | Theorem 3.2 | an algorithm is GDP iff it is tail-GDP | read |
liu2022 | Theorem 3.3 | the tail value μ_t = lim ε/√(−2 log δ(ε)) | read |
liu2022 | eq. (1) | δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) | read |
liu2022 | result "GDPT" | the Gaussian Differential Privacy Transformation (GDPT) that brackets the optimal μ (was cited as Section 4) | named |
liu2022 | result "all ε-DP algorithms are GDP" | pure ε-DP ⇒ 2Φ⁻¹(e^ε/(1 + e^ε))-GDP (was cited as Section 5) | named |
mcsherry2009privacy | result "parallel composition" | disjoint parts cost the largest budget, not the sum (was cited as Theorem 4) | named |
mironov2017 | Definition 3 | (α, ε)-RDP | review |
mironov2017 | Proposition 1 | RDP composes additively | review |
mironov2017 | Proposition 3 | RDP → (ε̂(α) + log(1/δ)/(α − 1), δ)-DP | library | dp_accounting's rdp_privacy_accountant: "Proposition 3 in v3"
mironov2017 | Proposition 6 | the Laplace mechanism's RDP | library | dp_accounting: "See Proposition 6 of Mironov (2017)"; also Steinke 2024
mironov2017 | Proposition 7 | the Gaussian mechanism's RDP αΔ²/(2σ²) | review |
mironov2019sampled | Section 3.3 | computing the sampled Gaussian's RDP at integer and fractional orders (was cited as Theorem 6) | library | dp_accounting's rdp_privacy_accountant: "Computation derived in Sec 3.3 of https://arxiv.org/pdf/1908.10530"
press2007numerical | Section 6.2 | the incomplete gamma function by continued fraction (modified Lentz) | review |
pujol2023groups | Algorithm 1 | the two-step Gaussian mechanism for group-wise zCDP | read |
steinke2022composition | Theorem "Advanced Composition Starting from Pure DP" | ε = ½Σε_j² + √(2 log(1/δ) Σε_j²) | read |
steinke2022composition | Theorem "Basic Composition" | ε = Σ ε_j | read |
steinke2022composition | footnote 1 | (ε_j, δ_j)-DP steps add Σ δ_j | read |
steinke2022composition | footnote 2 | Laplace(√(k/2ρ)) noise and ρ = ε²/(4 log(1/δ) + 4ε) | read |
steinke2023down | Figure 1 | the loss for the maximum of the Binomial(5, ½) dataset | read |
steinke2023down | Lemma 1–2 | the loss is monotone and 1-Lipschitz in removals | read |
steinke2023down | Proposition 3 | the loss has global sensitivity 1 for monotone f | read |
steinke2023down | Theorem 4 | the shifted inverse sensitivity mechanism | read |
steinke2023down | Theorem 5 | the noisy binary search (ρ-zCDP) | read |
steinke2023down | eq. (1) | k-down sensitivity | read |
steinke2023down | eq. (3) | monotonicity | read |
steinke2023down | eq. (4) | the loss ℓ(x, y) | read |
steinke2023down | eq. (A) | the strict loss (in footnote 4) | read |
steinke2023down | eq. (A)–(B) | the strict and the shifted loss (in footnote 4) | read |
steinke2023down | eq. (B) | the shifted loss ℓ* (in footnote 4) | read |
steinke2023down | footnote 4 | the exponential mechanism on the shifted loss | read |
steinke2023inverse | Lemma 1 | the inverse-sensitivity loss has sensitivity 1 | read |
steinke2023inverse | Lemma 3 | the exponential mechanism's loss bound | read |
steinke2023inverse | Theorem 2 | the inverse sensitivity mechanism is ε-DP | read |
steinke2023inverse | Theorem 4 | accuracy in terms of local sensitivity | read |
steinke2023inverse | eq. (3) | the median's k-local sensitivity | read |
steinke2023inverse | eq. (4) | the inverse-sensitivity loss | read |
steinke2023inverse | eq. (4)–(5) | the loss and the mechanism (formerly misattributed to Canonne 2022) | corrected |
steinke2023inverse | eq. (5) | the inverse sensitivity mechanism | read |
steinke2023inverse | eq. (8) | the Laplace mechanism's accuracy (formerly misattributed to Canonne 2022) | corrected |
steinke2024pdp | Theorem 4 | pure ε-DP → RDP, tight | read |
steinke2024pdp | Theorem 5 | pure ε-DP → ρ = ε tanh(ε/2)-zCDP, tight (was attributed to Bun & Steinke 2016) | corrected |
vinterbo2022 | Definition 3 | MLR-boundedness | read |
vinterbo2022 | Figure 1 | variance-ratio maps over (ε, δ) | review |
vinterbo2022 | Lemma 1 | the exact (ε, δ) condition for symmetric log-concave noise | read |
vinterbo2022 | Lemma 1–2 | the exact condition and the monotone scale | read |
vinterbo2022 | Lemma 2 | δ is monotone in the scale | read |
vinterbo2022 | Lemma 8 | withdrawn by the author (not implemented) | read |
vinterbo2022 | Remark 4 | the privacy loss is monotone | read |
vinterbo2022 | Section 2.1 | Subbotin densities | read |
vinterbo2022 | Section 2–3 | the one-dimensional results | read |
vinterbo2022 | Section 4 | withdrawn by the author (not implemented) | read |
vinterbo2022 | Theorem 3 | the Laplace condition and minimum scale | read |
vinterbo2022 | Theorem 4 | the Logistic condition in closed form | read |
vinterbo2022 | Theorem 5 | the Gaussian condition | read |
vinterbo2022 | Theorem 6 | MLR-unbounded noise needs δ > 0 | read |
vinterbo2022 | Theorem 9 | withdrawn by the author (not implemented) | read |
wang2019subsampled | Corollary 10 | the chord rule for fractional orders | library | dp_accounting's rdp_privacy_accountant: "Corollary 10 of [WBK19]"
wang2019subsampled | Theorem 27 | the strengthened bound for the Gaussian | library | dp_accounting's rdp_privacy_accountant: "Theorem 27 of https://arxiv.org/pdf/1808.00087.pdf"
wang2019subsampled | Theorem 9 | the RDP of subsampling without replacement | quoted | quoted as "Theorem 9 in Subsampled Rényi Differential Privacy" by public accountant code
whitehouse2023fully | result "advanced composition filter" | a filter matching advanced composition with constants (was cited as Theorem 2) | named |
zhu2022optimal | result "dominating pairs for Poisson subsampling" | the symmetric pair for Poisson subsampling (was cited as Section 5) | named |
"""


def _parse(text: str) -> tuple[Citation, ...]:
    out = []
    for line in text.strip().splitlines():
        key, loc, claim, checked, source = (f.strip() for f in line.split("|", 4))
        locs = normalize_locator(loc)
        if len(locs) != 1 or locs[0] != loc or checked not in CHECKS:
            raise ValueError(f"malformed citation registry line {line!r}")
        out.append(Citation(_refs.get(key).key, loc, claim, checked, source))
    return tuple(out)


#: every citation with a locator, ordered by work and locator (docs/references.md lists them)
CITATIONS: tuple[Citation, ...] = _parse(_REGISTRY)

_BY = {}


def _index():
    if not _BY:
        for c in CITATIONS:
            _BY[(c.key, c.locator)] = c
    return _BY


def find(key: str, locator: str) -> Citation:
    """The registry entry for ``key`` at ``locator`` (any spelling :func:`normalize_locator`
    reads); ``KeyError`` naming both when the project does not cite it there."""
    _refs.get(key)
    locs = normalize_locator(locator)
    if len(locs) != 1:
        raise KeyError(f"locator {locator!r} names {len(locs)} locators, not one")
    try:
        return _index()[(key, locs[0])]
    except KeyError:
        raise KeyError(f"{key!r} at {locs[0]!r} is not in dpexplore.bibliography.citations.CITATIONS") from None


#: the names :mod:`.scanner` took from here, for the callers of the old ones (with a warning)
_TO_SCANNER = (
    "Found",
    "scan_text",
    "resolve",
    "scan",
    "where_used",
    "citation_summary_markdown",
    "citation_table_markdown",
    "docs_markdown",
)
__getattr__ = moved_names(__name__, f"{__package__}.scanner", _TO_SCANNER)
