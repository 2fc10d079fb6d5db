"""The gallery's registry and pictures: every app is written once in the registry (its module, which
names its notebook and its page), and has a picture made by tools/make_thumbnails.py, small enough
to inline in the landing page (base64) and to ship in the wheel."""

from __future__ import annotations

import pytest

from dpexplore.apps import APPS, REGISTRY, TOPIC_ORDER, TOPICS, gallery_html, thumbnail_path
from dpexplore.cli import default_root

NB_DIR = default_root()


@pytest.mark.parametrize("notebook", [nb for nb, _, _ in APPS])
def test_every_app_has_a_small_picture(notebook):
    path = thumbnail_path(notebook)
    assert path.is_file(), f"no gallery picture for {notebook}: run python tools/make_thumbnails.py --apps {notebook}"
    data = path.read_bytes()
    assert data[:3] == b"\xff\xd8\xff", "not a JPEG"
    assert 2_000 < len(data) <= 60_000, f"{path.name} is {len(data)} bytes"


def test_cards_show_the_pictures():
    html = gallery_html()
    assert html.count('<img src="data:image/jpeg;base64,') == len(APPS)
    assert 'class="dpexplore-noimg"' not in html


@pytest.mark.parametrize("entry", REGISTRY, ids=[e.module for e in REGISTRY])
def test_registry_entry_is_its_module_its_notebook_and_its_page(entry):
    """One entry per app: its module builds it, its notebook is named after it, and the page's
    ``AppInfo.slug`` (CSV file names) is the same name."""
    import importlib

    from dpexplore.ui.shell import AppInfo

    module = importlib.import_module(f"dpexplore.apps.{entry.module}")
    assert callable(getattr(module, f"build_{entry.module}"))
    assert (NB_DIR / entry.notebook).is_file()
    slugs = {v.slug for v in vars(module).values() if isinstance(v, AppInfo)}
    assert entry.module in slugs
    assert slugs <= {e.module for e in REGISTRY}
    assert entry.topic in TOPIC_ORDER


def test_apps_and_topics_are_read_from_the_registry():
    assert APPS == [(e.notebook, e.title, e.question) for e in REGISTRY]
    assert TOPICS == {e.notebook: e.topic for e in REGISTRY}
    assert len({e.module for e in REGISTRY}) == len(REGISTRY)
