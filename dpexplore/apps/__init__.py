"""The apps: one module per app, a thin notebook each in ``notebooks/``, and the gallery.

Each app is a module with a ``build_<name>()`` returning its widget, and a thin notebook in
``dpexplore/apps/notebooks/`` that imports, builds and displays it (the package ships them; the
repository's top-level ``notebooks/`` links there), named after the module: ``<module>.ipynb``.
``REGISTRY`` is the gallery's registry, an :class:`AppEntry` per app (module, gallery section,
title, the one-line question it answers); ``APPS`` (notebook, title, question) and ``TOPICS``
(notebook -> section), which the landing page ``index.ipynb``, the tests and the browser benchmark
read, are derived from it. To add an app, append its ``AppEntry``; ``python
tools/make_thumbnails.py`` then draws its gallery picture.

>>> [name for name, _, _ in APPS][:2]
['rdp_explorer.ipynb', 'profile_gdp.ipynb']
>>> sorted(set(TOPICS.values())) == sorted(TOPIC_ORDER)
True
"""

from __future__ import annotations

import base64
import html
import pathlib
from typing import NamedTuple

__all__ = ["APPS", "TOPICS", "TOPIC_ORDER", "REGISTRY", "AppEntry", "gallery_html", "thumbnail_path"]


class AppEntry(NamedTuple):
    """One app of the gallery: its module ``dpexplore.apps.<module>`` (whose ``build_<module>()``
    its notebook ``<module>.ipynb`` displays, and whose ``AppInfo.slug`` is ``<module>``), its
    gallery section, and its card's title and the one-line question it answers."""

    module: str
    topic: str
    title: str
    question: str

    @property
    def notebook(self) -> str:
        """The app's notebook, ``<module>.ipynb``."""
        return f"{self.module}.ipynb"


#: the gallery's sections, in order
TOPIC_ORDER = ("Notions and conversions", "Composition", "Mechanisms", "Labs")

#: the apps, in gallery order: each written once (APPS and TOPICS are read from here)
REGISTRY: tuple[AppEntry, ...] = (
    AppEntry(
        "rdp_explorer",
        "Notions and conversions",
        "Rényi DP explorer",
        "What does pure ε-DP give in Rényi DP and zCDP, and what (ε, δ) comes back out?",
    ),
    AppEntry(
        "profile_gdp",
        "Notions and conversions",
        "Privacy profile vs Gaussian DP",
        "Is a mechanism's δ(ε) curve Gaussian DP, and for which μ?",
    ),
    AppEntry(
        "composition_explorer",
        "Composition",
        "Composition explorer",
        "How fast does ε grow over k steps under basic, advanced, optimal, RDP, zCDP and tight composition?",
    ),
    AppEntry(
        "notion_converter",
        "Notions and conversions",
        "Notion converter",
        "What does one guarantee (ε-DP, (ε, δ), zCDP, GDP, RDP) imply in every other notion, and what is lost?",
    ),
    AppEntry(
        "noise_lab",
        "Mechanisms",
        "Noise lab",
        "How much Laplace, Logistic, Gaussian or Subbotin noise does (ε, δ) need, and which has least variance?",
    ),
    AppEntry(
        "mechanisms_lab",
        "Mechanisms",
        "Mechanisms in action",
        "What do the differencing attack, noisy counts, report noisy max and sparse vector do on data?",
    ),
    AppEntry(
        "local_vs_central",
        "Mechanisms",
        "Local vs central",
        "How much better is inverse sensitivity than Laplace for the median, and what does shuffling buy?",
    ),
    AppEntry(
        "adaptive_lab",
        "Labs",
        "Adaptive data analysis",
        "Why does reusing a holdout overfit, and how does Thresholdout keep it honest?",
    ),
    AppEntry(
        "audit_lab",
        "Labs",
        "Auditing lab",
        "How large must ε be, judging from the outputs alone, and can an audit catch a privacy bug?",
    ),
    AppEntry(
        "dpsgd_planner",
        "Composition",
        "DP-SGD planner",
        "What ε does a DP-SGD training run cost, what σ does a target ε need, and how well can an "
        "attacker then infer membership?",
    ),
    AppEntry(
        "mean_estimation_lab",
        "Labs",
        "Private mean estimation",
        "Why must a private mean's error follow the covariance, and what does clipping without knowing it cost?",
    ),
    AppEntry(
        "filters_lab",
        "Composition",
        "Composition settings and privacy filters",
        "When an analyst picks each budget from earlier answers, which privacy filter answers most, and "
        "which composition results are known?",
    ),
    AppEntry(
        "down_sensitivity_lab",
        "Mechanisms",
        "Down sensitivity",
        "How can a maximum or a per-person sum be released privately when one more item can raise it without limit?",
    ),
    AppEntry(
        "group_privacy_lab",
        "Labs",
        "Privacy for larger groups (open problem)",
        "Does noise proportional to the count give people in larger groups more privacy than the proven "
        "ρ-zCDP? (explored numerically, not proven)",
    ),
    AppEntry(
        "demo",
        "Notions and conversions",
        "Gaussian DP profile (minimal example)",
        "What is the privacy profile δ(ε) of μ-GDP? The smallest app, a template for new ones.",
    ),
)

#: (notebook file in notebooks/, title, the one-line question the app answers), in gallery order
APPS: list[tuple[str, str, str]] = [(a.notebook, a.title, a.question) for a in REGISTRY]

#: notebook -> gallery section
TOPICS: dict[str, str] = {a.notebook: a.topic for a in REGISTRY}

_THUMBS = pathlib.Path(__file__).resolve().parent / "thumbnails"

_CSS = """
.dpexplore-gallery{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:1400px}
.dpexplore-gallery h3{margin:18px 0 8px;font-size:20px}
.dpexplore-cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:14px}
.dpexplore-card{display:block;border:1px solid #d0d7de;border-radius:8px;overflow:hidden;
  text-decoration:none;color:inherit;background:#fff}
.dpexplore-card:hover,.dpexplore-card:focus{border-color:#0072B2;box-shadow:0 2px 8px rgba(0,0,0,.15)}
.dpexplore-card img,.dpexplore-card .dpexplore-noimg{display:block;width:100%;aspect-ratio:16/9;
  object-fit:cover;object-position:top;background:#f3f5f7}
.dpexplore-card .dpexplore-card-text{padding:8px 10px 10px}
.dpexplore-card b{display:block;font-size:16px;margin-bottom:4px;color:#0b3d66}
.dpexplore-card span{font-size:14px;line-height:1.35;color:#333}
"""


def thumbnail_path(notebook: str) -> pathlib.Path:
    """Where the gallery picture of ``notebook`` is kept (``tools/make_thumbnails.py`` writes it).

    >>> thumbnail_path("demo.ipynb").name
    'demo.jpg'
    """
    return _THUMBS / (pathlib.PurePath(notebook).stem + ".jpg")


def _img(notebook: str, title: str) -> str:
    path = thumbnail_path(notebook)
    if not path.is_file():
        return '<div class="dpexplore-noimg"></div>'
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (
        f'<img src="data:image/jpeg;base64,{data}" alt="{html.escape(title, quote=True)}: '
        f'a picture of the app" loading="lazy">'
    )


def gallery_html(apps=None) -> str:
    """The gallery's HTML: the apps as cards in a grid, grouped by topic; each card has the app's
    picture, its title and the question it answers, and links to its page (relative links, so it
    works under any base URL, e.g. on Binder or JupyterHub).

    >>> out = gallery_html()
    >>> 'href="demo.ipynb"' in out and out.count('class="dpexplore-card"') == len(APPS)
    True
    """
    apps = APPS if apps is None else apps
    sections = []
    for topic in TOPIC_ORDER + ("Other",):
        cards = []
        for nb, title, question in apps:
            if TOPICS.get(nb, "Other") != topic:
                continue
            cards.append(
                f'<a class="dpexplore-card" href="{html.escape(nb, quote=True)}" target="_self">'
                f'{_img(nb, title)}<div class="dpexplore-card-text"><b>{html.escape(title)}</b>'
                f"<span>{html.escape(question)}</span></div></a>"
            )
        if cards:
            sections.append(f'<h3>{html.escape(topic)}</h3><div class="dpexplore-cards">{"".join(cards)}</div>')
    return f'<div class="dpexplore-gallery"><style>{_CSS}</style>' + "".join(sections) + "</div>"
