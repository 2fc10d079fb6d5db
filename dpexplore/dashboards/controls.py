"""Controls every dashboard shares: sliders with units, an inline message area, a colour-blind-safe
palette, and the :class:`Controller` base class (one per dashboard; design.md, "dashboards").

The controller pattern (design practices 1, 8 and 9)::

    widgets ──observe──▶ Controller.update()
                           spec   = read_spec()            # frozen dataclass: hashable
                           result = compute(spec)          # ONE pure function, lru-cached on spec
                           render(result)                  # update the figures in place
                         ValueError (or any error) → MessageArea, the last good plot stays

>>> s = log_slider("ε", 1.0, 0.01, 100.0)
>>> round(s.value, 6), s.description
(1.0, 'ε')
>>> k = int_log_slider("k", 37)
>>> k.value, k.min, k.max
(37.0, 0.0, 4.0)
"""
from __future__ import annotations

import functools
import html
import logging
import math
from typing import Any, Callable, ClassVar, Hashable, Mapping, Sequence

import ipywidgets as W
import traitlets

from .plotwidget import PlotlyWidget

__all__ = [
    "OKABE_ITO",
    "log_slider",
    "int_log_slider",
    "linear_slider",
    "int_slider",
    "MessageArea",
    "Controller",
    "IntLogSlider",
]

log = logging.getLogger(__name__)

#: Okabe & Ito (2008) colour-blind-safe palette, in the recommended order (black last).
OKABE_ITO = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "#000000",  # black
)

_STYLE = {"description_width": "initial"}
_LAYOUT = {"width": "min(100%, 520px)"}


def _label(description: str, unit: str) -> str:
    return f"{description} [{unit}]" if unit else description


def log_slider(description: str, value: float, min: float, max: float, unit: str = "", *,
               steps_per_decade: int = 20, readout_format: str = ".3g",
               continuous_update: bool = True, **kwargs) -> W.FloatLogSlider:
    """A base-10 log slider over [``min``, ``max``] (actual values, not exponents) with a readable
    readout (``readout_format``, d3-format) and the unit in its label. The readout is an editable
    text box (ipywidgets 8): typed values are clamped to the range.

    >>> s = log_slider("δ", 1e-6, 1e-12, 1e-1, steps_per_decade=10)
    >>> s.min, s.max, s.step, s.readout_format
    (-12.0, -1.0, 0.1, '.3g')
    """
    if not (0 < min < max):
        raise ValueError(f"log slider needs 0 < min < max, got min={min!r}, max={max!r}")
    return W.FloatLogSlider(
        value=value, base=10, min=math.log10(min), max=math.log10(max), step=1.0 / steps_per_decade,
        description=_label(description, unit), readout_format=readout_format,
        continuous_update=continuous_update, style=_STYLE, layout=W.Layout(**_LAYOUT), **kwargs,
    )


class IntLogSlider(W.FloatLogSlider):
    """A log-scale slider whose value is always a whole number (ipywidgets has no IntLogSlider):
    the front end moves on a log scale, the kernel rounds the value to the nearest integer.

    >>> s = IntLogSlider(value=10, min=0, max=4)
    >>> s.value = 31.6
    >>> s.value
    32.0
    """

    @traitlets.validate("value")
    def _validate_value(self, proposal):
        v = super()._validate_value(proposal)
        return float(max(round(v), 1))


def int_log_slider(description: str = "k", value: int = 1, min: int = 1, max: int = 10_000,
                   unit: str = "", *, steps_per_decade: int = 20, continuous_update: bool = True,
                   **kwargs) -> IntLogSlider:
    """An integer slider on a log scale (k compositions: 1 … 10⁴), integer readout (``,.0f``).
    Read it with ``int(slider.value)``.

    >>> s = int_log_slider("k", 1000)
    >>> int(s.value), s.readout_format
    (1000, ',.0f')
    """
    if not (1 <= min < max):
        raise ValueError(f"integer log slider needs 1 <= min < max, got min={min!r}, max={max!r}")
    return IntLogSlider(
        value=value, base=10, min=math.log10(min), max=math.log10(max), step=1.0 / steps_per_decade,
        description=_label(description, unit), readout_format=",.0f",
        continuous_update=continuous_update, style=_STYLE, layout=W.Layout(**_LAYOUT), **kwargs,
    )


def linear_slider(description: str, value: float, min: float, max: float, step: float | None = None,
                  unit: str = "", *, readout_format: str = ".3g", continuous_update: bool = True,
                  **kwargs) -> W.FloatSlider:
    """A linear float slider with the unit in its label (default 200 steps over the range).

    >>> s = linear_slider("μ", 1.0, 0.1, 10.0, 0.05)
    >>> s.value, s.step
    (1.0, 0.05)
    """
    if not (min < max):
        raise ValueError(f"slider needs min < max, got min={min!r}, max={max!r}")
    return W.FloatSlider(
        value=value, min=min, max=max, step=step if step is not None else (max - min) / 200,
        description=_label(description, unit), readout_format=readout_format,
        continuous_update=continuous_update, style=_STYLE, layout=W.Layout(**_LAYOUT), **kwargs,
    )


def int_slider(description: str, value: int, min: int, max: int, step: int = 1, unit: str = "", *,
               continuous_update: bool = True, **kwargs) -> W.IntSlider:
    """A linear integer slider with the unit in its label.

    >>> int_slider("n", 5, 1, 10).value
    5
    """
    return W.IntSlider(
        value=value, min=min, max=max, step=step, description=_label(description, unit),
        continuous_update=continuous_update, style=_STYLE, layout=W.Layout(**_LAYOUT), **kwargs,
    )


class MessageArea(W.HTML):
    """An inline message in plain language; hidden while there is nothing to say.

    The text is HTML-escaped. CSS class ``dpexplore-message`` (and ``dpexplore-message-<kind>``)
    lets tests and styles find it.

    >>> m = MessageArea()
    >>> m.layout.display
    'none'
    >>> m.show("eps must be >= 0, got -1.0")
    >>> m.layout.display, m.text
    (None, 'eps must be >= 0, got -1.0')
    >>> m.clear(); m.layout.display
    'none'
    """

    _COLOURS: ClassVar[dict] = {"error": ("#8a1c00", "#fdece6"), "info": ("#00466e", "#e8f3fb")}
    text = traitlets.Unicode("")

    def __init__(self, **kwargs):
        super().__init__(value="", layout=W.Layout(display="none"), **kwargs)
        self.add_class("dpexplore-message")

    def show(self, text: str, kind: str = "error") -> None:
        """Show ``text`` (``kind`` is ``"error"`` or ``"info"``)."""
        fg, bg = self._COLOURS.get(kind, self._COLOURS["error"])
        self.text = str(text)
        self.value = (
            f'<div class="dpexplore-message-{kind}" role="alert" style="color:{fg};background:{bg};'
            f'border-left:4px solid {fg};padding:6px 10px;margin:4px 0;">{html.escape(self.text)}</div>'
        )
        self.layout.display = None

    def clear(self) -> None:
        """Hide the message."""
        self.text = ""
        self.value = ""
        self.layout.display = "none"


def _plain(exc: BaseException) -> str:
    if isinstance(exc, ValueError):
        return f"{exc} — the plot still shows the last valid setting."
    return ("This setting could not be computed (" + type(exc).__name__ + "); "
            "the plot still shows the last valid setting.")


class Controller:
    """Base class: one controller per dashboard.

    Subclasses provide

    * ``read_spec(self)``: read the widgets in ``self.controls`` into a frozen, hashable spec
      (a ``@dataclass(frozen=True)``); may raise ``ValueError`` for a bad combination;
    * ``compute``: a **static** pure function ``spec → result`` computing every array of every
      plot of the dashboard at once; it is wrapped in an ``lru_cache`` (size ``cache_size``) keyed
      on the spec, shared by all instances of the subclass;
    * ``figures(self, result)``: the dashboard's list of :class:`PlotlyWidget`, constructed with
      the initial traces (called once);
    * ``render(self, result)``: update the figures in place (e.g. ``fig.update(data=...)``).

    Every widget in ``controls`` is observed; any value change calls :meth:`update`. Errors never
    reach the page as tracebacks: ``ValueError`` (and any other exception, logged to the kernel
    log) becomes a plain message in ``self.message`` while the last good plot stays.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Spec:
    ...     a: float
    >>> class Square(Controller):
    ...     def read_spec(self):
    ...         if self.controls["a"].value > 5:
    ...             raise ValueError(f"a must be <= 5, got {self.controls['a'].value}")
    ...         return Spec(self.controls["a"].value)
    ...     @staticmethod
    ...     def compute(spec):
    ...         return [0.0, 1.0], [0.0, spec.a ** 2]
    ...     def figures(self, result):
    ...         return [PlotlyWidget(data=[{"x": result[0], "y": result[1]}])]
    ...     def render(self, result):
    ...         self.figs[0].update_traces(0, y=result[1])
    >>> c = Square({"a": linear_slider("a", 2.0, 0.0, 10.0)})
    >>> c.figs[0].data[0]["y"]
    [0.0, 4.0]
    >>> c.controls["a"].value = 3.0; c.figs[0].data[0]["y"]
    [0.0, 9.0]
    >>> c.controls["a"].value = 7.0; c.figs[0].data[0]["y"], c.message.text[:20]
    ([0.0, 9.0], 'a must be <= 5, got ')
    >>> c.controls["a"].value = 1.0; c.figs[0].data[0]["y"], c.message.text
    ([0.0, 1.0], '')
    """

    cache_size: ClassVar[int] = 256
    _cached: ClassVar[Callable[[Hashable], Any]]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        compute = cls.__dict__.get("compute")
        if compute is not None:
            fn = compute.__func__ if isinstance(compute, staticmethod) else compute
            cls._cached = staticmethod(functools.lru_cache(maxsize=cls.cache_size)(fn))

    def __init__(self, controls: Mapping[str, W.ValueWidget], message: MessageArea | None = None):
        self.controls = dict(controls)
        self.message = message if message is not None else MessageArea()
        self.last_error: BaseException | None = None
        self.spec = self.read_spec()
        self.result = self._cached(self.spec)
        self.figs: Sequence[PlotlyWidget] = list(self.figures(self.result))
        for w in self.controls.values():
            w.observe(self._on_change, names="value")

    # -- to implement ------------------------------------------------------------------------
    def read_spec(self) -> Hashable:  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def compute(spec: Hashable) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def figures(self, result: Any) -> Sequence[PlotlyWidget]:  # pragma: no cover - abstract
        raise NotImplementedError

    def render(self, result: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- machinery --------------------------------------------------------------------------
    def _on_change(self, _change) -> None:
        self.update()

    def update(self) -> None:
        """Read the widgets, compute (cached), redraw in place; errors become a message."""
        ok = False
        try:
            spec = self.read_spec()
            result = self._cached(spec)
            self.render(result)
            self.spec, self.result = spec, result
            ok = True
        except ValueError as exc:
            self.last_error = exc
            self.message.show(_plain(exc))
        except Exception as exc:  # noqa: BLE001 - never a traceback in the page
            self.last_error = exc
            log.exception("dashboard update failed for %r", type(self).__name__)
            self.message.show(_plain(exc))
        finally:
            if ok:
                self.last_error = None
                self.message.clear()
