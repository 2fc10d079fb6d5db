"""Controllers with cached stages: a bounded memo with a membership test (:class:`Memo`) and a
:class:`~dpexplore.ui.controls.Controller` that runs its expensive stages behind a progress bar
(:class:`StagedController`), for the apps whose simulations take seconds (adaptive data
analysis, auditing, group privacy)."""

from __future__ import annotations

import collections
import threading
from typing import Callable

import ipywidgets as W

from .controls import PREFETCHER, Controller

__all__ = ["Memo", "StagedController"]


class Memo:
    """A bounded LRU memo of a pure function, with ``key in memo`` (``functools.lru_cache`` has
    no membership test; the controllers need one to decide whether to show a progress bar).

    >>> sq = Memo(lambda x: x * x, maxsize=2)
    >>> sq(3), 3 in sq, 4 in sq
    (9, True, False)
    """

    def __init__(self, fn: Callable, maxsize: int = 32):
        self.fn = fn
        self.maxsize = maxsize
        self._d: collections.OrderedDict = collections.OrderedDict()
        # the kernel's prefetch thread fills it too (ui.controls.PREFETCHER): the dict is only
        # touched under the lock, the function runs outside it
        self._lock = threading.Lock()

    def __contains__(self, key) -> bool:
        with self._lock:
            return key in self._d

    def __call__(self, *key):
        k = key if len(key) != 1 else key[0]
        with self._lock:
            if k in self._d:
                self._d.move_to_end(k)
                return self._d[k]
        out = self.fn(*key)
        with self._lock:
            self._d[k] = out
            self._d.move_to_end(k)
            if len(self._d) > self.maxsize:
                self._d.popitem(last=False)
        return out


class StagedController(Controller):
    """A :class:`Controller` whose expensive parts are cached stages: before the usual update,
    :meth:`stages` lists ``(memo, key, estimated_seconds, label)`` for the spec; the stages not yet
    computed run one by one behind ``self.progress`` (an ``IntProgress``) when their estimated
    total exceeds ``PROGRESS_AFTER`` seconds. ``compute(spec)`` then reads the warm memos.
    Errors in a stage are left to ``compute``, which raises them again into the message area."""

    PROGRESS_AFTER = 1.0

    def __init__(self, controls, message=None):
        self.progress = W.IntProgress(
            value=0, min=0, max=1, description="simulating", bar_style="info", layout=W.Layout(display="none")
        )
        super().__init__(controls, message)

    def stages(self, spec) -> list:  # pragma: no cover - abstract
        return []

    def check(self, spec) -> None:
        """Validate ``spec`` before any stage runs (raise ValueError); the default accepts all."""

    def warm(self, spec) -> None:
        todo = [(m, k, est, label) for m, k, est, label in self.stages(spec) if k not in m]
        if not todo:
            return
        # a short run leaves the hidden bar alone: setting its value and label per stage sent the
        # page up to 19 widget messages a slider step (audit, group privacy labs)
        show = sum(t[2] for t in todo) > self.PROGRESS_AFTER
        if show:
            self.progress.max = len(todo)
            self.progress.value = 0
            self.progress.layout.display = None
        try:
            for i, (memo, key, _est, label) in enumerate(todo):
                if show:
                    self.progress.description = label
                memo(*key) if isinstance(key, tuple) else memo(key)
                if show:
                    self.progress.value = i + 1
        except Exception:  # noqa: BLE001 - compute() raises it again, into the message area
            pass
        finally:
            if show:
                self.progress.layout.display = "none"

    def update(self) -> None:
        try:
            spec = self.read_spec()
            self.check(spec)
        except Exception:  # noqa: BLE001 - the base class shows it (compute raises it again)
            spec = None
        if spec is not None:
            if self.prefetch:  # a prefetch computing this very setting: wait for it, not twice
                PREFETCHER.settle(self._cached, spec)
            self.warm(spec)
        super().update()
