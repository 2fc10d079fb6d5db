"""The documentation site (``make docs``): it builds from the repository with every warning an
error, its worked examples execute, and its pages say what they must — the API page of
``composition.dpsgd_epsilon`` (signature, guarantee and rounding, citations), the class-serving
page (lecture mode, ``--expect``), the gallery (every app with its picture) and the results page
that holds the measurements the hosting guide no longer interleaves."""

from __future__ import annotations

import html
import os
import pathlib
import re
import subprocess
import sys

import pytest
from aio import in_a_thread

for _name in ("sphinx", "myst_nb", "pydata_sphinx_theme"):  # the `docs` extra (make setup)
    try:
        __import__(_name)
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"{_name} is missing: pip install -e '.[docs]'", allow_module_level=True)

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> pathlib.Path:
    """Build the site afresh, as ``make docs`` does (``-E -W --keep-going``), into a temporary
    folder; a warning fails the build, and its text is the failure's message."""
    out = tmp_path_factory.mktemp("docs")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-b",
            "html",
            "-E",
            "-W",
            "--keep-going",
            "-q",
            "-d",
            str(out / "doctrees"),
            str(DOCS),
            str(out / "html"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    warnings = "\n".join(
        line for line in proc.stderr.splitlines() if "WARNING" in line or "ERROR" in line or "Error" in line
    )
    assert proc.returncode == 0, f"the docs build failed:\n{warnings or proc.stderr[-5000:]}"
    return out / "html"


def _text(page: pathlib.Path, sep: str = " ") -> str:
    """A page's visible text, tags replaced by ``sep`` and whitespace collapsed (``sep=""`` keeps
    a highlighted code line, split into one tag per token, whole)."""
    raw = page.read_text(encoding="utf-8")
    raw = re.sub(r"<(script|style)\b.*?</\1>", " ", raw, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", sep, raw)))


def _entry(page: pathlib.Path, anchor: str) -> str:
    """The text of one API entry: from its anchor to the next entry of the page."""
    raw = page.read_text(encoding="utf-8")
    start = raw.index(f'id="{anchor}"')
    end = raw.find('<dl class="py', start + 1)
    chunk = raw[start : end if end > 0 else len(raw)]
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", chunk)))


def test_dpsgd_epsilon_api_page(site):
    """Its signature, the guarantee and the rounding of each accountant, and the citations."""
    entry = _entry(site / "api" / "composition.html", "dpexplore.accounting.composition.dpsgd_epsilon")
    signature = entry.split("¶")[0]
    for part in ("dpsgd_epsilon", "sigma", "q", "steps", "delta", "accountant", "'pld'", "grid_size"):
        assert part in signature, (part, signature)
    assert "never below the truth" in entry  # the "pld" accountant's side
    assert "AN APPROXIMATION, NOT A GUARANTEE" in entry  # the "gdp" one
    assert "6.1877" in entry  # its doctest, against PLD
    for citation in ("Mironov, Talwar & Zhang 2019", "Bu, Dong, Long & Su 2020", "Canonne, Kamath & Steinke 2020"):
        assert citation in entry, citation
    # |x| of the docstrings shows as written, not as an undefined substitution
    shift = _entry(site / "api" / "down_sensitivity.html", "dpexplore.teaching.down_sensitivity.shifted_inverse_tau")
    assert "τ = ⌈(2/ε) log(|Y|/β)⌉" in shift, shift


def test_class_serving_page(site):
    text = _text(site / "teachers" / "serve-a-class.html", sep="")
    assert "Serving a class" in text
    assert "dpexplore serve --ip 127.0.0.1 --port 8866 --no-browser" in text
    assert "--expect 30 --apps rdp_explorer,composition_explorer" in text
    assert "lecture mode" in text and "is filled with" in text
    assert "DPEXPLORE_HUB_USERS=ana,ben,chloe" in text  # the hub, step by step
    hosting = _text(site / "hosting.html")
    assert "Options of dpexplore serve" in hosting and "--expect N" in hosting
    assert "DPEXPLORE_PREFETCH" in hosting and "DPEXPLORE_HUB_MAX_PAGES" in hosting


def test_gallery_shows_every_app_with_its_picture(site):
    from dpexplore.apps import APPS

    page = (site / "teachers" / "gallery.html").read_text(encoding="utf-8")
    for notebook, title, _question in APPS:
        stem = notebook.removesuffix(".ipynb")
        assert html.escape(title, quote=False) in page, title
        assert f"_images/{stem}.jpg" in page, stem
        assert (site / "_images" / f"{stem}.jpg").stat().st_size > 1000, stem


def test_examples_ran_at_build_time(site):
    """The outputs of the worked examples are in the pages (computed by the build)."""
    dpsgd = _text(site / "practitioners" / "examples" / "dpsgd.html")
    assert "Rényi DP overstates ε by" in dpsgd
    assert re.search(r"ε = 3\.0: σ = 0\.\d{4} \(gives ε = 2\.9\d{3}\)", dpsgd), dpsgd[-2000:]
    risk = _text(site / "practitioners" / "examples" / "attack-risk.html")
    # the DP-SGD run's ε at δ = 1e-5, within the accountant's target of dp_accounting's 6.187745
    assert re.search(r"6\.18[78]\d{3}", risk), risk[-2000:]
    mixed = _text(site / "practitioners" / "examples" / "mixed-pipeline.html")
    assert re.search(r"tight: ε = 6\.71\d; split δ and added", mixed)


def test_measurements_moved_to_results(site):
    """docs/hosting.md holds instructions; the runs it used to interleave are on the results
    page, each with its load average."""
    hosting = (DOCS / "hosting.md").read_text(encoding="utf-8")
    results = (DOCS / "results.md").read_text(encoding="utf-8")
    assert "## A class arriving at once" in results and "## Through JupyterHub" in results
    assert "| 30 on rdp_explorer, `--expect 30` |" in results
    assert "| 30 on rdp_explorer, `--expect 30` |" not in hosting
    assert "Memory of one page" in _text(site / "results.html")


AXE = ROOT / "tests" / "browser" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
#: a page of each kind: landing pages, prose, executed examples with cards, an API page, tables
AXE_PAGES = [
    "index.html",
    "teachers/index.html",
    "teachers/serve-a-class.html",
    "teachers/gallery.html",
    "practitioners/notebooks.html",
    "practitioners/examples/dpsgd.html",
    "api/composition.html",
    "api/risk.html",
    "operators.html",
    "hosting.html",
    "results.html",
    "references.html",
    "accessibility.html",
]
#: the dark theme and 320 px wide on fewer pages (the same templates)
AXE_PAGES_VARIANTS = [
    "index.html",
    "teachers/serve-a-class.html",
    "practitioners/notebooks.html",
    "api/composition.html",
    "results.html",
]


@pytest.mark.browser
@pytest.mark.flaky(reruns=0)  # static files opened from disk: nothing timed to retry for
def test_site_passes_axe(site):
    """The site is held to what the apps are (docs/accessibility.md): axe-core finds no WCAG 2.0
    and 2.1 A or AA violation, in the light and the dark theme and 320 px wide. Opened from disk
    with every other request refused."""
    if not AXE.exists():
        msg = f"{AXE} is missing: run `make axe` (npm ci in tests/browser/axe)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    pytest.importorskip("playwright.sync_api")
    source = AXE.read_text(encoding="utf-8")
    found = in_a_thread(_axe_violations, site, source)  # not inside the suite's Playwright loop
    assert not found, "\n".join(found)


def _axe_violations(site, source) -> list:
    """axe-core's violations on the site's pages, one line each (Playwright's sync API)."""
    from playwright import sync_api as playwright

    found = []
    with playwright.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        try:
            for scheme, width in (("light", 1280), ("dark", 1280), ("light", 320)):
                ctx = browser.new_context(viewport={"width": width, "height": 800}, color_scheme=scheme)
                ctx.route(
                    "**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort()
                )
                page = ctx.new_page()
                for name in AXE_PAGES if (scheme, width) == ("light", 1280) else AXE_PAGES_VARIANTS:
                    page.goto((site / name).as_uri())
                    page.add_script_tag(content=source)
                    result = page.evaluate(
                        "(tags) => axe.run(document, {runOnly: {type: 'tag', values: tags},"
                        " resultTypes: ['violations']})",
                        AXE_TAGS,
                    )
                    found += [
                        f"{name} ({scheme}, {width} px): {v['id']}: {v['help']} — "
                        + "; ".join(n["html"][:120] for n in v["nodes"][:3])
                        for v in result["violations"]
                    ]
                ctx.close()
        finally:
            browser.close()
    return found


def test_serve_options_table_lists_every_option(capsys):
    """docs/hosting.md's table of ``dpexplore serve`` options has a row for each option the
    command takes, and none it does not (no build needed)."""
    from dpexplore.cli import parse_args

    with pytest.raises(SystemExit):
        parse_args(["serve", "--help"])
    accepted = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", capsys.readouterr().out)) - {"--help"}
    hosting = (DOCS / "hosting.md").read_text(encoding="utf-8")
    table = hosting.split("### Options of `dpexplore serve`", 1)[1].split("\n### ", 1)[0]
    rows = set(re.findall(r"^\| `(--[a-z][a-z-]*)", table, flags=re.M))
    assert rows - {"--version"} == accepted, (sorted(accepted - rows), sorted(rows - accepted))
