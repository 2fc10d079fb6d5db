"""Cards, ``compare()`` and ``explore()`` in a notebook: executed and opened in JupyterLab 4,
Notebook 7 and Voilà (the cards and the table visible, explore()'s plots drawn, a slider in explore()
redraws), and the same notebook exported by ``jupyter nbconvert --to dpexplore_html`` and plain
``--to html``, opened with JavaScript turned off: the cards (static HTML and SVG) still show.

The servers run from the test environment's own Jupyter (the editable install of ``make setup``),
so the test needs no wheel build.
"""

from __future__ import annotations

import json
import pathlib
import sys

import pytest

from test_install_browser import TOKEN, Proc, Venv, _plots_drawn, _run_notebook, _shot, _status

from conftest import free_port


def _sgd_eps() -> str:
    """The DP-SGD card's ε as the card writes it (the API's value rounded up to 4 digits: 6.189,
    dp_accounting's PLD 6.1877)."""
    from dpexplore.accounting.composition import compose
    from dpexplore.display import format_up
    from dpexplore.mechanisms import Gaussian, subsample

    return format_up(float(compose(subsample(Gaussian(1.0), 0.01), 10000).epsilon(1e-5)))


pytestmark = [pytest.mark.slow]

NOTEBOOK = {
    "cells": [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "c1",
            "metadata": {},
            "outputs": [],
            "source": "from dpexplore.accounting.composition import compose\n"
            "from dpexplore.mechanisms import Gaussian, Laplace, subsample\n"
            "sgd = compose(subsample(Gaussian(1.0), 0.01), 10000)   # DP-SGD: 10⁴ steps\n"
            "sgd",
        },
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "c2",
            "metadata": {},
            "outputs": [],
            "source": "count = Laplace(1.0)   # a Laplace count\ncount",
        },
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "c3",
            "metadata": {},
            "outputs": [],
            "source": "import dpexplore\ndpexplore.compare(sgd, count)",
        },
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "c4",
            "metadata": {},
            "outputs": [],
            "source": "dpexplore.explore(sgd, count)",
        },
    ],
    "metadata": {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    },
    "nbformat": 4,
    "nbformat_minor": 5,
}

#: the cards on the page: visible, with their curve and their ε row
CARDS = """() => [...document.querySelectorAll('.dpx-card')].map(c => {
  const r = c.getBoundingClientRect(); const s = c.querySelector('svg[role=img] polyline');
  const row = [...c.querySelectorAll('th[scope=row]')].find(t => t.textContent === 'ε at δ = 1e-05');
  return {h: Math.round(r.height), w: Math.round(r.width), title: c.querySelector('h3').textContent,
          svg: s ? Math.round(s.getBoundingClientRect().width) : 0,
          eps: row ? row.nextElementSibling.textContent : null}; })"""


class _TestVenv(Venv):
    """The environment running the tests (its own jupyter), with HOME in a temporary folder."""

    def __init__(self, home: pathlib.Path):  # noqa: D107 - no wheel, nothing installed
        self.root, self.wheel, self.install_seconds = pathlib.Path(sys.prefix), None, 0.0
        self.bin = self.root / "bin"
        self.home = home
        home.mkdir(exist_ok=True)


@pytest.fixture
def venv(tmp_path):
    v = _TestVenv(tmp_path / "home")
    if not (v.bin / "jupyter-lab").exists() or not (v.bin / "jupyter-notebook").exists():
        pytest.skip("jupyterlab and notebook are needed (make setup installs them)")
    return v


def _check_cards(page, n=2):
    page.wait_for_function(
        "(n) => document.querySelectorAll('.dpx-card svg polyline').length >= n", arg=n, timeout=120_000
    )
    cards = page.evaluate(CARDS)
    assert len(cards) >= n, cards
    for c in cards[:n]:
        assert c["h"] >= 150 and c["w"] >= 300 and c["svg"] >= 100, c
    assert cards[0]["title"].startswith("Composition of 10000 runs") and cards[1]["title"].startswith("Laplace"), cards
    assert cards[0]["eps"] == _sgd_eps() and cards[1]["eps"] == "1.000", cards
    return cards


@pytest.mark.parametrize("app, path", [("lab", "lab/tree/cards.ipynb"), ("notebook", "notebooks/cards.ipynb")])
def test_cards_compare_and_explore_in_jupyter(venv, browser, tmp_path, app, path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "cards.ipynb").write_text(json.dumps(NOTEBOOK))
    port = free_port()
    cmd = [
        "jupyter",
        app,
        "--no-browser",
        "--allow-root",
        f"--port={port}",
        "--ServerApp.ip=127.0.0.1",
        f"--IdentityProvider.token={TOKEN}",
        "--expose-app-in-browser",
        f"--ServerApp.root_dir={work}",
    ]
    srv = Proc(venv, cmd, work, tmp_path / f"{app}.log")
    base = f"http://127.0.0.1:{port}/"
    ctx = None
    try:
        srv.wait_url(base + "api/status?token=" + TOKEN)
        assert _status(base + "api/status?token=" + TOKEN) == 200
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        _run_notebook(page, f"{base}{path}?token={TOKEN}")
        _check_cards(page)
        # compare(): the DataFrame's HTML table, one row per object
        page.wait_for_function(
            "() => [...document.querySelectorAll('.jp-OutputArea table.dataframe tbody tr')].length === 2",
            timeout=60_000,
        )
        # explore(): its first view (the privacy profiles) drawn
        boxes = _plots_drawn(page, 1)
        assert boxes[0]["h"] >= 250 and boxes[0]["traces"] >= 4, boxes
        page.locator(".dpx-card").first.scroll_into_view_if_needed()
        _shot(page, tmp_path, f"cards-{app}.png")
        # a slider in explore() redraws: δ = 1e-8 moves the ε(δ) markers
        marks = """() => { const d = [...document.querySelectorAll('.js-plotly-plot')]
            .find(e => e.getBoundingClientRect().height > 0);
            return d.data.filter(t => t.mode === 'markers').map(t => t.x[0]); }"""
        before = page.evaluate(marks)
        slider = page.locator(".jp-OutputArea .widget-slider").filter(has_text="δ").first
        slider.scroll_into_view_if_needed()
        readout = slider.locator(".widget-readout")
        readout.click()
        page.keyboard.press("Control+A")
        page.keyboard.type("1e-8")
        page.keyboard.press("Enter")
        page.wait_for_function(
            f"(b) => {{ const a = ({marks})(); return JSON.stringify(a) !== JSON.stringify(b); }}",
            arg=before,
            timeout=60_000,
        )
        after = page.evaluate(marks)
        assert all(a > b for a, b in zip(after, before)), (before, after)  # ε(1e-8) > ε(1e-5)
        text = page.evaluate("() => document.body.textContent")
        assert "ε at δ = 1e-08" in text and "Traceback" not in text
        page.wait_for_timeout(500)
        _shot(page, tmp_path, f"explore-{app}.png")
    finally:
        if ctx is not None:
            ctx.close()
        srv.stop()


@pytest.mark.parametrize("to", ["dpexplore_html", "html"])
def test_exported_notebook_shows_the_cards_without_javascript(venv, browser, tmp_path, to):
    work = tmp_path / "export"
    work.mkdir()
    (work / "cards.ipynb").write_text(json.dumps(NOTEBOOK))
    r = venv.run(
        "jupyter",
        "nbconvert",
        "--to",
        to,
        "--execute",
        "--ExecutePreprocessor.store_widget_state=True",
        "cards.ipynb",
        cwd=work,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    html = work / "cards.html"
    text = html.read_text()
    # (the exporters may re-serialize the HTML: attributes in another order)
    assert text.count('class="dpx-card"') >= 2 and text.count("<polyline") >= 2 and 'aria-label="δ(ε) curve' in text
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, java_script_enabled=False)
    page = ctx.new_page()
    page.route(lambda url: not url.startswith("file:"), lambda route: route.abort())  # offline
    try:
        page.goto(html.as_uri())
        _check_cards(page)
        rows = page.evaluate("() => document.querySelectorAll('table.dataframe tbody tr').length")
        assert rows == 2
        page.locator(".dpx-card").first.scroll_into_view_if_needed()
        _shot(page, tmp_path, f"export-{to}.png")
    finally:
        ctx.close()


def test_cards_and_explore_in_voila(venv, browser, tmp_path):
    """The same notebook as a Voilà page: the cards show and a slider in explore() redraws."""
    if not (venv.bin / "voila").exists():
        pytest.skip("voila is needed")
    work = tmp_path / "voila"
    work.mkdir()
    (work / "cards.ipynb").write_text(json.dumps(NOTEBOOK))
    port = free_port()
    srv = Proc(
        venv,
        ["voila", f"--port={port}", "--no-browser", "--Voila.ip=127.0.0.1", "cards.ipynb"],
        work,
        tmp_path / "voila.log",
    )
    ctx = None
    try:
        srv.wait_url(f"http://127.0.0.1:{port}/voila/static/")
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        page.goto(f"http://127.0.0.1:{port}/")
        _check_cards(page)
        _plots_drawn(page, 1, 180_000)
        marks = """() => [...document.querySelectorAll('.js-plotly-plot')][0].data
            .filter(t => t.mode === 'markers').map(t => t.x[0])"""
        before = page.evaluate(marks)
        page.locator(".dpexplore-app").first.scroll_into_view_if_needed()
        readout = page.locator(".widget-slider").filter(has_text="δ").first.locator(".widget-readout")
        readout.click()
        page.keyboard.press("Control+A")
        page.keyboard.type("1e-9")
        page.keyboard.press("Enter")
        page.wait_for_function(f"(b) => JSON.stringify(({marks})()) !== JSON.stringify(b)", arg=before, timeout=60_000)
        after = page.evaluate(marks)
        assert all(a > b for a, b in zip(after, before)), (before, after)
        assert "Traceback" not in page.evaluate("() => document.body.textContent")
        _shot(page, tmp_path, "explore-voila.png")
    finally:
        if ctx is not None:
            ctx.close()
        srv.stop()
