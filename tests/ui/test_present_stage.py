"""Presentation mode's layout of tabs that hold their own controls and several plots (the shell's
``_PresentStage``), on the kernel side: the tab's controls and text move into the side panel
while the tab is shown, its plots show one at a time at full width with buttons to choose one,
and normal mode gets the app's own layout back, widget for widget."""

from __future__ import annotations

import ipywidgets as W

from dpexplore.apps.composition_explorer import PRESENT_THEOREMS, THEOREMS, build_composition_explorer
from dpexplore.apps.local_vs_central import build_local_vs_central


def _tabs(app):
    main = next(w for w in app.widgets() if "dpexplore-main" in w._dom_classes)
    return next(w for w in main.children if isinstance(w, W.Tab))


def _panel(app):
    return next(w for w in app.widgets() if "dpexplore-panel" in w._dom_classes)


def test_present_mode_moves_the_tab_controls_to_the_panel_and_shows_one_plot():
    app = build_local_vs_central()
    tabs, panel = _tabs(app), _panel(app)
    normal_tabs = [list(b.children) for b in tabs.children]
    normal_panel = list(panel.children)
    c = app.controller.controls
    med, cdf, shuffle = app.controller.fig_med_mean, app.controller.fig_med_cdf, app.controller.fig_shuffle

    app.bar.present = True
    first = list(tabs.children[0].children)
    chooser = first[0]
    assert isinstance(chooser, W.ToggleButtons) and [o[0] for o in chooser.options] == [
        "Median: mean |error| vs ε (data in [0, 1])",
        "Median: distribution of |error| at the chosen ε",
    ]
    assert not any(c["med_eps"] in (w.children if hasattr(w, "children") else ()) for w in first)
    assert (med.layout.display, cdf.layout.display) == (None, "none")
    assert med.layout.width == cdf.layout.width == "100%"
    extra = [w for w in panel.children if "dpexplore-tab-controls" in w._dom_classes]
    assert len(extra) == 1 and app.controller.readouts["median"] in extra[0].children
    assert panel.children[-1] is normal_panel[-1]  # the readouts stay last
    assert panel.children[: len(normal_panel) - 1] == tuple(normal_panel[:-1])

    chooser.value = 1  # the other plot
    assert (med.layout.display, cdf.layout.display) == ("none", None)
    tabs.selected_index = 1  # the second tab's controls
    extra = [w for w in panel.children if "dpexplore-tab-controls" in w._dom_classes]
    assert len(extra) == 1 and app.controller.readouts["shuffle"] in extra[0].children
    assert list(tabs.children[1].children) == [shuffle]  # a single plot: no chooser
    assert shuffle.layout.display is None

    app.bar.present = False  # the app's own layout, as it was
    assert [list(b.children) for b in tabs.children] == normal_tabs
    assert list(panel.children) == normal_panel
    assert med.layout.display is None and cdf.layout.display is None
    assert med.layout.width == cdf.layout.width == "calc(50% - 4px)"


def test_tab_switches_reuse_the_panel_boxes():
    """A tab switch hands the panel one of the boxes made when the app was built: switching to
    and fro makes no widget (a client cannot grow the kernel by clicking tabs)."""
    app = build_local_vs_central()
    tabs, panel = _tabs(app), _panel(app)
    app.bar.present = True
    seen = set()
    for i in (0, 1, 0, 1, 0):
        tabs.selected_index = i
        seen.update(id(w) for w in panel.children if "dpexplore-tab-controls" in w._dom_classes)
    assert len(seen) == 2


def test_composition_legend_has_short_present_names_with_full_names_kept():
    """Presentation mode's legend names (``meta.present_name``) are shorter; the trace name the
    description and the data table read keeps the full name and its citation."""
    main = build_composition_explorer().controller.figs[0]
    named = [t for t in main.data if "meta" in t]
    full = {t["name"].removesuffix(" (at 9 k)") for t in named}
    assert set(THEOREMS.values()) <= full
    assert "advanced (Dwork, Rothblum & Vadhan 2010)" in full
    short = [t["meta"]["present_name"] for t in named]
    assert max(map(len, short)) <= len("from pure DP (Steinke 2022) (at 9 k)")
    assert all(len(s) < len(t["name"]) or s == t["name"] for s, t in zip(short, named))
    assert set(PRESENT_THEOREMS) == set(THEOREMS)


def test_present_mode_lets_a_fixed_height_plot_fill_the_window():
    """The filters lab's session plot has a fixed height in the app's layout (the text above it
    changes length with its sliders); in presentation mode that text is in the side panel and the
    plot fills the window's height; normal mode gets the fixed height back."""
    from dpexplore.apps.filters_lab import build_filters_lab
    from dpexplore.ui.shell import FILL_PLOT_HEIGHT

    app = build_filters_lab()
    fig, main = app.controller.fig_session, app.controller.fig_main
    assert fig.css_height == "400px"
    main_height = main.css_height
    app.bar.present = True
    assert fig.css_height == FILL_PLOT_HEIGHT == "fill"
    assert main.css_height == main_height  # a plot alone in its tab: as it was
    app.bar.present = False
    assert fig.css_height == "400px"
    app.bar.present = True
    assert fig.css_height == "fill"


def test_a_stacked_table_names_each_cell_by_its_column():
    """``stacked_table``: in presentation mode each cell is shown after its column's name (its
    ``data-label``, the header's text without markup); the header row stays in the table, for screen
    readers, with explicit roles (a ``display: block`` table loses its semantics in some browsers)."""
    from dpexplore.ui.shell import SHELL_CSS, stacked_table

    t = stacked_table(
        ["privacy <i>allowed</i>", "failure ≤"],
        [("Row <b>one</b>", ["ε ≤ 1", ("no <b>ε</b>", "colspan='1'")])],
        cls="x",
        corner="result",
    )
    assert t.startswith("<table role='table' class='dpexplore-stack x'")
    assert (
        "<tr class='dpexplore-stack-head' role='row'><th role='columnheader' style='text-align:left'>result</th>" in t
    )
    assert "<th scope='col' role='columnheader'>privacy <i>allowed</i></th>" in t
    assert "<th scope='row' role='rowheader' style='text-align:left'>Row <b>one</b></th>" in t
    assert "<td role='cell' data-label='privacy allowed' >ε ≤ 1</td>" in t
    assert "<td role='cell' data-label='failure ≤' colspan='1'>no <b>ε</b></td>" in t
    assert 'content: attr(data-label) ": " / ""' in SHELL_CSS


def test_the_shell_reads_its_css_and_toolbar_script_from_files():
    """shell.css and shell.js (package data beside shell.py) are the page's CSS and the toolbar's
    script, the query-string cap filled in; the accessibility script follows the toolbar's, then
    rejoin.js (shared with the plot widget)."""
    import pathlib

    from dpexplore.ui import shell
    from dpexplore.ui.a11y import PAGE_JS
    from dpexplore.ui.plotwidget import REJOIN_JS

    here = pathlib.Path(shell.__file__).parent
    assert shell.SHELL_CSS.startswith("\n" + (here / "shell.css").read_text(encoding="utf-8"))
    assert shell.SHELL_CSS.startswith("\n.dpexplore-app { max-width: 1900px;")
    esm = shell.ShellBar._esm
    assert "__MAX_QUERY__" not in esm and esm.count('(location.search || "").slice(0, 2000);') == 1
    assert esm.startswith("\nfunction render({ model, el }) {") and esm.endswith(PAGE_JS + REJOIN_JS)
    assert REJOIN_JS.count("async function dpexploreRejoin(model) {") == 1
    assert shell.MAX_QUERY == 2000
