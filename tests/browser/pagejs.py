"""What the browser tests, the browser benchmarks and the screenshot tools share (benchmarks/ and
tools/ put this folder on their path): Debian's Chromium and the arguments it is started with, and
the JavaScript they wait on, so a page counts as drawn by one rule everywhere."""

#: Debian's Chromium (never a browser Playwright downloads), headless, with no network of its own
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

ALL_PLOTS_HAVE_TRACES = r"""() => {
  // every dpexplore plot of the page, drawn or not yet: counting only the ones Plotly has drawn
  // (.js-plotly-plot) once let a page pass with 2 of rdp_explorer's 3 plots, the third still being
  // drawn (the plots are drawn one by one as plotly.js and the widget views come in)
  const g = [...document.querySelectorAll('.dpexplore-plot')];
  // an app's page says how many plots it holds (AppShell: class dpexplore-nplots-N): the views
  // come in one by one, and a page once passed with 4 of composition_explorer's 5 plots drawn
  const complete = [...document.querySelectorAll('.dpexplore-app')].every(a => {
    const m = /(?:^|\s)dpexplore-nplots-(\d+)(?:\s|$)/.exec(a.className);
    return !m || a.querySelectorAll('.dpexplore-plot').length >= Number(m[1]); });
  return complete && g.length > 0 && g.every(d => d.classList.contains('js-plotly-plot') && d.data &&
                                      d.data.length > 0 && d.data.every(t => t.x && t.x.length > 0));
}"""
