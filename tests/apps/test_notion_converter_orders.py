"""Typed input of the notion converter's Rényi orders (issue 11, Must fix 6, in part)."""

import pytest

from dpexplore.apps.notion_converter import parse_orders


def test_orders_duplicates_listed_once():
    assert parse_orders("2, 8, 2, 8.0") == (2.0, 8.0)


@pytest.mark.parametrize("text", ["inf", "2, inf", "Infinity"])
def test_orders_inf_refused(text):
    with pytest.raises(ValueError, match="finite"):
        parse_orders(text)


def test_orders_near_one_kept_and_labelled_exactly():
    (a,) = parse_orders("1.0000000001")
    assert a > 1 and f"{a:.12g}" == "1.0000000001"


def test_orders_long_paste_echoed_short():
    with pytest.raises(ValueError) as e:
        parse_orders("x" * 10_000)
    assert len(str(e.value)) < 120


def test_demo_mu_slider_end_is_accepted():
    """Issue 11 (6): the demo's μ slider reached 10 while μ > 8 was always refused."""
    from dpexplore.apps import demo

    box = demo.build_demo(eps=0.5, mu=2.0)
    sliders = [w for w in _walk(box) if getattr(w, "description", "").startswith("μ")]
    assert sliders and all(s.max <= demo.MU_LIMIT for s in sliders)
    demo.compute_demo(demo.DemoSpec(eps=0.5, mu=sliders[0].max))  # no ValueError


def _walk(w):
    yield w
    for c in getattr(w, "children", ()):
        yield from _walk(c)
