"""A page whose main thread was too busy for anywidget's 2-second window still follows the kernel.

anywidget's front end rejects a model for good ("[anywidget] Failed to initialize model.") when its
ESM is not imported and bound within 2 s of the model's creation; the model then dropped every
later message from the kernel, so a plot kept its first traces while its sliders moved (seen as
reruns of browser tests on a loaded machine). The page below is made that busy deterministically:
an init script makes the page's main thread work 2.1 s right when anywidget creates the blob URL
of each widget's ESM (the timer has just started; the import cannot finish in time).
``rejoin.js`` must then hand both anywidget models of the page (the shell's bar and the plot) their
messages again, and the plot must follow its slider with the core's values.
"""

from __future__ import annotations

import pytest
from conftest import Dashboard

from dpexplore.accounting.profiles import GaussianDPProfile

pytestmark = pytest.mark.browser

#: the page's main thread busy for 2.1 s each time a JavaScript blob URL is made (anywidget makes
#: one per model, right after starting its 2 s timer, to import the model's ESM)
BUSY_AT_EACH_ESM = """(() => {
  const make = URL.createObjectURL.bind(URL);
  URL.createObjectURL = (blob) => {
    if (blob && blob.type === "text/javascript") {
      const t = performance.now();
      while (performance.now() - t < 2100) { /* the page is busy */ }
    }
    return make(blob);
  };
})();"""


def test_plot_follows_its_slider_after_anywidget_gave_up(browser, served):
    ctx = browser.new_context(viewport={"width": 1200, "height": 1000})
    try:
        page = ctx.new_page()
        page.add_init_script(BUSY_AT_EACH_ESM)
        console = []
        page.on("console", lambda m: console.append(m.text))
        app = Dashboard(page, served.url("demo.ipynb"), served)
        app.press_slider("ε", "ArrowRight", 1)  # waits until the plot is redrawn
        eps = 10 ** (1 / 50)  # one step of the log slider (50 steps per decade) from ε = 1
        marker = app.trace(0, 1)
        assert marker["x"][0] == pytest.approx(eps, rel=1e-9)
        assert marker["y"][0] == pytest.approx(GaussianDPProfile(1.0).delta(eps), rel=1e-9)
        app.set_slider("μ", 2.5)
        curve = app.trace(0, 0)
        i = len(curve["x"]) // 4
        assert curve["y"][i] == pytest.approx(GaussianDPProfile(2.5).delta(curve["x"][i]), rel=1e-9)
        # the page was made busy as meant: anywidget gave up on both of its anywidget models (the
        # shell's bar and the plot), and both were rejoined
        assert page.evaluate("() => window.__dpexploreRejoined || 0") == 2, console
        assert sum("anywidget gave up waiting" in m for m in console) == 2
    finally:
        ctx.close()


def test_no_rejoin_on_a_page_that_was_not_busy(open_app):
    """Where anywidget's wait ended in time, rejoin.js changes nothing (the common case)."""
    app = open_app("demo.ipynb")
    assert app.page.evaluate("() => window.__dpexploreRejoined || 0") == 0
    app.press_slider("ε", "ArrowRight", 1)
    assert app.trace(0, 1)["x"][0] == pytest.approx(10 ** (1 / 50), rel=1e-9)
