"""Accessibility of the app pages (WCAG 2.1 level AA): what a screen reader, a keyboard and a
low-vision reader need, kept in one place.

* :data:`PAGE_JS` (``a11y.js``, run by the app shell's toolbar): slider handles named after their
  controls and announcing the number shown (a log slider's value, not its exponent), the Theory /
  Reproduce headers operable with Enter and Space, a "Skip to plots" link, and the readouts
  announced politely once a slider stops moving.
* :data:`PLOT_JS` (``plot_a11y.js``, appended to every :class:`~dpexplore.ui.plotwidget.PlotlyWidget`):
  each plot a figure named by its title and described by a text generated from its traces (axis
  ranges, each curve's ends, the values at the marked points), with (shown on hover and on
  keyboard focus, like plotly's own toolbar, so that they never hide a title) a "Data table" button and an
  audio trace ("Listen": the arrow keys move along a curve, a tone's pitch follows y and the
  point is announced); plotly's own toolbar is one Tab stop whose buttons the arrow keys move along.
* :data:`PAGE_CSS` and :data:`PLOT_CSS`: a visible focus ring (text boxes too: ipywidgets takes
  theirs away with a more specific ``outline: none !important``, which left a 1 px light blue
  border), text contrast of at least 4.5:1
  (WCAG 2.1 success criterion 1.4.3) for the tab labels and section headers that ipywidgets draws
  in a lighter grey, and the visually hidden text class.
* :func:`text_colour`: a curve's colour darkened until text in it reaches 4.5:1 (a readout table's
  legend entries are written in the colour of their curve).

>>> text_colour("#E69F00")          # Okabe-Ito orange: 2.1:1 on the panel, too light for text
'#986900'
>>> round(contrast_ratio(text_colour("#E69F00"), "#f6f8fa"), 2) >= 4.5
True
>>> text_colour("#0072B2")          # dark enough already
'#0072B2'
"""

from __future__ import annotations

import pathlib
import re

__all__ = ["PAGE_JS", "PLOT_JS", "PAGE_CSS", "PLOT_CSS", "text_colour", "contrast_ratio", "PANEL_BACKGROUND"]

_HERE = pathlib.Path(__file__).resolve().parent

PAGE_JS = (_HERE / "a11y.js").read_text(encoding="utf-8")
PLOT_JS = (_HERE / "plot_a11y.js").read_text(encoding="utf-8")

#: the side panel's background (``.dpexplore-panel`` in the shell's CSS), where readouts are drawn
PANEL_BACKGROUND = "#f6f8fa"

#: the focus ring and outline colour (9:1 on white, 8.5:1 on the panel)
FOCUS = "#0b5cad"

#: text that a screen reader reads but that takes no room on screen
_SR_ONLY = (
    "position:absolute!important;width:1px!important;height:1px!important;padding:0!important;"
    "margin:-1px!important;overflow:hidden!important;clip:rect(0,0,0,0)!important;"
    "white-space:nowrap!important;border:0!important;"
)

PLOT_CSS = f"""
.dpexplore-sr-only {{ {_SR_ONLY} }}
.dpexplore-figure {{ position: relative; }}
.dpexplore-figure .dpexplore-plot-tools {{ position: absolute; top: 2px; left: 2px; z-index: 5; display: flex; gap: 4px;
  opacity: 0; }}
.dpexplore-figure:hover .dpexplore-plot-tools, .dpexplore-figure .dpexplore-plot-tools:focus-within,
.dpexplore-figure .dpexplore-plot-tools.dpexplore-open {{ opacity: 1; }}
.dpexplore-figure .dpexplore-table-button {{ height: 24px; padding: 0 8px; font-size: 12px; line-height: 22px; color: #1f1f1f; background: #ffffff;
  border: 1px solid #767676; border-radius: 3px; cursor: pointer; }}
.dpexplore-figure .dpexplore-table-button:focus-visible {{ outline: 3px solid {FOCUS}; outline-offset: 2px; }}
.dpexplore-data {{ max-height: 420px; overflow: auto; margin: 4px 0; font-size: 13px; }}
.dpexplore-data table {{ border-collapse: collapse; margin: 0 0 8px; }}
.dpexplore-data caption {{ text-align: left; font-weight: bold; padding: 2px 0; }}
.dpexplore-data th, .dpexplore-data td {{ border: 1px solid #c8c8c8; padding: 1px 6px; text-align: right; }}
.dpexplore-data thead th {{ background: #eef1f4; }}
"""

PAGE_CSS = f"""
.dpexplore-app .dpexplore-skip {{ {_SR_ONLY} }}
.dpexplore-app .dpexplore-skip:focus {{ position: static !important; width: auto !important; height: auto !important;
  margin: 0 0 4px !important; clip: auto !important; overflow: visible !important; display: inline-block;
  padding: 4px 10px !important; background: #ffffff; color: {FOCUS}; font-size: 16px; font-weight: bold;
  outline: 3px solid {FOCUS}; outline-offset: 1px; }}
.dpexplore-app :focus-visible {{ outline: 3px solid {FOCUS} !important; outline-offset: 2px; }}
.dpexplore-app .widget-inline-hbox input:focus-visible, .dpexplore-app .widget-textarea textarea:focus-visible {{
  outline: 3px solid {FOCUS} !important; outline-offset: 1px; }}
.dpexplore-app .noUi-handle:focus-visible, .dpexplore-app .noUi-handle:focus {{
  outline: 3px solid {FOCUS} !important; outline-offset: 1px; box-shadow: 0 0 0 5px #ffffff; }}
.dpexplore-app .jupyter-widget-Collapse-header:focus-visible, .dpexplore-app .lm-TabBar-tab:focus-visible,
.dpexplore-app .p-TabBar-tab:focus-visible {{ outline-offset: -3px; }}
.dpexplore-app .dpexplore-main:focus {{ outline: 2px dashed {FOCUS}; outline-offset: 2px; }}
.dpexplore-app .lm-TabBar-tab, .dpexplore-app .lm-TabBar-tab .lm-TabBar-tabLabel,
.dpexplore-app .p-TabBar-tab, .dpexplore-app .p-TabBar-tab .p-TabBar-tabLabel {{ color: #3d3d3d; }}
.dpexplore-app .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel,
.dpexplore-app .p-TabBar-tab.p-mod-current .p-TabBar-tabLabel {{ color: #000000; }}
.dpexplore-app .jupyter-widget-Collapse-header, .dpexplore-app .jupyter-widget-Collapse-header span {{ color: #2b2b2b; }}
"""


def _luminance(colour: str) -> float:
    """Relative luminance of an sRGB ``#rrggbb`` colour (WCAG 2.1, definition of relative luminance)."""
    m = re.fullmatch(r"#?([0-9a-fA-F]{6})", colour.strip())
    if not m:
        raise ValueError(f"colour must be #rrggbb, got {colour!r}")
    out = []
    for i in (0, 2, 4):
        c = int(m.group(1)[i : i + 2], 16) / 255
        out.append(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4)
    r, g, b = out
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a: str, b: str) -> float:
    """(L1 + 0.05) / (L2 + 0.05) of two ``#rrggbb`` colours, L1 the lighter (WCAG 2.1, definition
    of contrast ratio; success criterion 1.4.3 asks 4.5:1 for text).

    >>> round(contrast_ratio("#000000", "#ffffff"), 1)
    21.0
    """
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def text_colour(colour: str, background: str = PANEL_BACKGROUND, ratio: float = 4.5) -> str:
    """``colour`` if text in it reaches ``ratio`` on ``background``, else the same hue darkened
    (each channel scaled down in steps of 1 %) until it does: a legend entry keeps the hue of its
    curve and is readable. ``ValueError`` for a colour that is not ``#rrggbb``.

    >>> text_colour("#009E73")
    '#00825e'
    """
    if contrast_ratio(colour, background) >= ratio:
        return colour
    h = colour.strip().lstrip("#")
    rgb = [int(h[i : i + 2], 16) for i in (0, 2, 4)]
    for pct in range(99, -1, -1):
        out = "#" + "".join(f"{round(c * pct / 100):02x}" for c in rgb)
        if contrast_ratio(out, background) >= ratio:
            return out
    return "#000000"  # pragma: no cover - black reaches 4.5:1 on any background lighter than #767676
