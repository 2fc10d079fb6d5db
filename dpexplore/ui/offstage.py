"""State of widgets that are not shown is sent when they are shown, on a dashboard page's kernel.

On a served page (``dpexplore serve`` or a hub's apps-only server) every slider move redrew every
plot of an app, also the ones in the tabs not shown, and rewrote the closed "Reproduce in Python"
section: rdp_explorer sent three plots' arrays and the snippet on each move where the page shows one
plot, and the kernel's serialisation plus the server's relay of those messages are most of what a
move costs when a class moves its sliders at once (issue 22). A widget of :class:`Offstage` that
is inside a tab not selected, or a closed accordion section, keeps its changes in Python (its
traits always hold the current values: tests, the CSV and the snippet read them) and sends the
names changed meanwhile, in one message with their current values, when it is shown again (the tab
or section is opened: the page tells the kernel its ``selected_index``). What is drawn in the end
is always the last setting's.

Only kernels that serve pages defer (:data:`DEFER_ENV` = ``1`` in their environment, set by
``dpexplore serve`` and the apps-only server): in a notebook, nbclient's saved widget state
(``store_widget_state``) is read from the messages sent, so there every change is sent at once.

>>> import ipywidgets as W
>>> class Html(Offstage, W.HTML):
...     pass
>>> a, b = Html("a"), Html("b")
>>> tabs = W.Tab([W.VBox([a]), W.VBox([b])], selected_index=0)
>>> track_offstage(tabs, defer=True)
>>> a.offstage, b.offstage
(False, True)
>>> b.value = "b2"; b.unsent
{'value'}
>>> tabs.selected_index = 1
>>> a.offstage, b.offstage, b.unsent, b.value
(True, False, set(), 'b2')
"""

from __future__ import annotations

import os
import weakref

import ipywidgets as W

__all__ = ["Offstage", "track_offstage", "DEFER_ENV", "defer_enabled"]

#: the environment variable that turns deferring on in a kernel (``dpexplore serve`` and the
#: apps-only server set it for the kernels they start)
DEFER_ENV = "DPEXPLORE_DEFER_HIDDEN"

#: containers that show one child (Tab) or at most one (Accordion) of their children
_SELECTORS = (W.Tab, W.Accordion, W.Stack)


def defer_enabled() -> bool:
    """Whether this kernel serves a page (:data:`DEFER_ENV` is ``"1"``)."""
    return os.environ.get(DEFER_ENV, "0") == "1"


class Offstage:
    """Mixin for a widget class: while :attr:`offstage`, changed trait names are collected in
    :attr:`unsent` instead of sent; :meth:`set_offstage` ``(False)`` sends them (their current
    values) in one message."""

    offstage = False
    #: trait names sent at once even while offstage: small ones that decide how the widget is
    #: laid out when it is shown (a plot's presentation mode: deferred, a tab opened on a
    #: projector first drew its plot in normal mode, then again in presentation mode)
    always_sent: frozenset = frozenset()

    @property
    def unsent(self) -> set:
        return self.__dict__.setdefault("_offstage_unsent", set())

    def send_state(self, key=None):
        if self.offstage:
            keys = list(self.keys if key is None else [key] if isinstance(key, str) else key)
            now = [k for k in keys if k in self.always_sent]
            self.unsent.update(k for k in keys if k not in self.always_sent)
            if now:
                super().send_state(now)
            return
        super().send_state(key)

    def set_offstage(self, hidden: bool) -> None:
        self.offstage = bool(hidden)
        if not self.offstage and self.unsent:
            keys = sorted(self.unsent)
            self.unsent.clear()
            super().send_state(keys)


def _children(w) -> list:
    return list(getattr(w, "children", None) or ())


def track_offstage(root: W.Widget, defer: bool | None = None) -> None:
    """Keep every :class:`Offstage` widget under ``root`` marked offstage while it is in a child
    of a tab / accordion / stack that is not selected (at any depth), and shown otherwise; the
    marks follow ``selected_index`` and ``children`` changes of the boxes under ``root``.
    ``defer`` (default :func:`defer_enabled`) off: nothing is marked (every change is sent)."""
    if not (defer_enabled() if defer is None else defer):
        return
    watched: weakref.WeakSet = weakref.WeakSet()  # boxes observed (each once)

    def mark(w, hidden: bool) -> None:
        if isinstance(w, Offstage) and w.offstage != hidden:
            w.set_offstage(hidden)
        kids = _children(w)
        if not kids:
            return
        if w not in watched:
            watched.add(w)
            w.observe(refresh, names="children")
            if isinstance(w, _SELECTORS):
                w.observe(refresh, names="selected_index")
        shown = getattr(w, "selected_index", None) if isinstance(w, _SELECTORS) else None
        for i, c in enumerate(kids):
            mark(c, hidden or (isinstance(w, _SELECTORS) and i != shown))

    def refresh(_change=None) -> None:
        mark(root, False)

    refresh()
