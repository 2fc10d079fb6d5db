"""The hook that gives every privacy object its notebook card.

:class:`CardMixin` is a base of every mechanism, profile and filter; its ``_repr_html_`` asks
:mod:`dpexplore.display` (a presentation layer on top of the core: it reads every notion's public
API) for the card. The layer is bound by name when a card is asked for, as the top package binds
its submodules, so no core module imports it and ``import dpexplore.profiles`` stays as light as
before.
"""

from __future__ import annotations

import importlib

__all__ = ["CardMixin"]


class CardMixin:
    """Gives a privacy object its notebook card (``_repr_html_``: :func:`dpexplore.display.card_html`)."""

    def _repr_html_(self) -> str:
        return importlib.import_module("dpexplore.display").card_html(self)
