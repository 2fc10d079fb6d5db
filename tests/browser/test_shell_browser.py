"""The app shell in the browser: a shared link (the page URL's query string) sets the controls,
"Link to this view" gives the current state back, and a bad or unknown value shows the inline
message (with a short excerpt) while the default is used. With Voilà's preheated kernels the
widgets render before the kernel connection is live: the query must still arrive."""

from __future__ import annotations

import pytest
from conftest import ALL_PLOTS_HAVE_TRACES, PAGE_TIMEOUT_MS

pytestmark = [pytest.mark.browser]


def _open(browser, served, notebook, w, h, query=""):
    ctx = browser.new_context(viewport={"width": w, "height": h})
    page = ctx.new_page()
    page.goto(served.url(notebook) + query)
    page.wait_for_function(ALL_PLOTS_HAVE_TRACES, timeout=PAGE_TIMEOUT_MS)
    return ctx, page


def test_a_shared_link_sets_the_controls_and_bad_values_say_so(browser, served):
    ctx, page = _open(browser, served, "composition_explorer.ipynb", 1280, 720, "?eps=0.5&k=1000")
    try:
        page.wait_for_function(
            """() => [...document.querySelectorAll('.widget-slider .widget-readout')]
                  .map(e => e.textContent.trim()).includes('1,000')""",
            timeout=20_000,
        )
        readouts = page.eval_on_selector_all(
            ".widget-slider .widget-readout", "els => els.map(e => e.textContent.trim())"
        )
        assert "0.500" in readouts and "1,000" in readouts, readouts
        page.locator("button", has_text="Link to this view").click()
        link = page.locator("input.dpexplore-link").input_value()
        assert "eps=0.5" in link and "k=1000" in link, link
    finally:
        ctx.close()
    ctx, page = _open(browser, served, "demo.ipynb", 1280, 720, "?mu=banana&zeta=" + "x" * 5000)
    try:
        page.wait_for_function(
            "() => [...document.querySelectorAll('.dpexplore-message')].some(e => e.offsetParent !== null)",
            timeout=20_000,
        )
        msg = page.locator(".dpexplore-message").inner_text()
        assert "mu" in msg and "not a number" in msg and "default" in msg, msg
        assert "x" * 100 not in msg, "the message echoes the whole bad value"
    finally:
        ctx.close()
