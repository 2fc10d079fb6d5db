"""The hooks that give every privacy object its notebook card.

:class:`CardMixin` is a base of every mechanism, profile and filter; its ``_repr_html_`` asks
:mod:`dpexplore.display` (a presentation layer on top of the core: it reads every notion's public
API) for the card. The layer is bound by name when a card is asked for, as the top package binds
its submodules, so no core module imports it and ``import dpexplore.accounting.profiles`` stays as light as
before.

What a card says of an object, the object states itself: ``_card_describe(info)`` fills the
card's description ``info`` (its profile or why it has none, its kind, and what it knows in
closed form of μ, ρ and Rényi DP: the fields of ``dpexplore.display._Info``). So a new kind of
privacy object brings its card with it, and the presentation layer names no class.
"""

from __future__ import annotations

import importlib

__all__ = ["CardMixin"]


class CardMixin:
    """Gives a privacy object its notebook card (``_repr_html_``: :func:`dpexplore.display.card_html`)."""

    #: whether a card may be kept while the object lives: its numbers depend on its parameters
    #: only (not so for a filter, whose state changes as it is used)
    _card_cacheable = True

    def _repr_html_(self) -> str:
        return importlib.import_module("dpexplore.display").card_html(self)

    def _card_describe(self, info) -> None:
        """Fill the card's description ``info`` (see the module docstring). Every privacy object
        overrides it; here: not one."""
        raise ValueError(f"obj must be a dpexplore privacy object, got {type(self).__name__}")

    def _card_settings(self, name: str, limit: int) -> list:
        """The objects :func:`dpexplore.display.compare` makes one row each of: itself."""
        return [self]
