"""The gallery's pictures: every app in the registry has one, made by tools/make_thumbnails.py,
small enough to inline in the landing page (base64) and to ship in the wheel."""
from __future__ import annotations

import pytest

from dpexplore.apps import APPS, gallery_html, thumbnail_path


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
