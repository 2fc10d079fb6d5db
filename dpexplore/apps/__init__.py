"""Interactive dashboards (ipywidgets + :class:`PlotlyWidget`), served by ``dpexplore serve``.

Each dashboard is a module with a ``build_<name>()`` returning an ipywidgets box, and a thin
notebook in ``notebooks/`` that imports, builds and displays it. ``APPS`` is the gallery's
registry: the landing page ``notebooks/index.ipynb``, the tests and the browser benchmark read it.
To add a dashboard, append ``(notebook_filename, title, one-line description)``.

>>> [name for name, _, _ in APPS][:2]
['rdp_explorer.ipynb', 'profile_vs_gdp.ipynb']
"""
from __future__ import annotations

__all__ = ["APPS", "gallery_html"]

#: (notebook file in notebooks/, title, one-line description), in gallery order
APPS: list[tuple[str, str, str]] = [
    ("rdp_explorer.ipynb", "Rényi DP explorer",
     "Pure ε-DP as Rényi DP and zCDP (tight, trivial, quadratic), Laplace and Gaussian RDP, and RDP → (ε, δ)."),
    ("profile_vs_gdp.ipynb", "Privacy profile vs Gaussian DP",
     "A mechanism's δ(ε) and trade-off β(α) against μ-GDP, with the GDP verdict: tail μ_t and measured μ bracket."),
    ("composition_explorer.ipynb", "Composition explorer",
     "Total ε of k steps under basic, advanced, optimal (KOV), RDP, zCDP and tight composition, and noise per query."),
    ("notion_converter.ipynb", "Notion converter",
     "One guarantee (pure, (ε, δ), zCDP, GDP, RDP or a mechanism) → every implied notion, how much each conversion loses."),
    ("noise_lab.ipynb", "Noise lab (001)",
     "Least Laplace, Logistic, Gaussian and Subbotin scales for (ε, δ), variances, samples, 001 Figure 1 and Theorem 6."),
    ("mechanisms_in_action.ipynb", "Mechanisms in action (004)",
     "Differencing attack, Laplace error of counting queries, report noisy max and sparse vector, simulated vs exact."),
    ("local_vs_central.ipynb", "Local vs central (000)",
     "Inverse sensitivity vs Laplace for the median, and amplification by shuffling with its validity condition."),
    ("adaptive_data_analysis.ipynb", "Adaptive data analysis (004)",
     "Overfitting by adaptive feature selection, naive holdout reuse vs Thresholdout, generalization-bound calculator."),
    ("auditing_lab.ipynb", "Auditing lab (000)",
     "Empirical lower bounds on ε from distinguishing tests and one-run audits; a mis-calibrated Laplace is exposed."),
    ("demo.ipynb", "Gaussian DP profile (minimal example)",
     "δ(ε) of the μ-GDP profile on a log scale: the smallest dashboard, a template for new ones."),
]


def gallery_html(apps=None) -> str:
    """The gallery's HTML: one card per app, linking to its Voilà page (relative links, so it
    works under any base URL, e.g. on Binder).

    >>> "demo.ipynb" in gallery_html()
    True
    """
    import html

    cards = []
    for nb, title, desc in APPS if apps is None else apps:
        cards.append(
            f'<li class="dpexplore-app"><a href="{html.escape(nb)}" target="_self">'
            f"<b>{html.escape(title)}</b></a><br><span>{html.escape(desc)}</span></li>"
        )
    return ('<ul class="dpexplore-gallery" style="list-style:none;padding-left:0;line-height:1.5">'
            + "".join(cards) + "</ul>")
