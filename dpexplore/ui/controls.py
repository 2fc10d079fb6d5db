"""Controls every dashboard shares: sliders with units, an inline message area, a colour-blind-safe
palette, and the :class:`Controller` base class (one per app; the app shell places its widgets).

The controller pattern (frozen specs as cache keys, one controller per app, figures updated in place)::

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

import fractions
import functools
import html
import logging
import math
import os
import threading
import time
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
    "param_slider",
    "dropdown",
    "param_box",
    "MessageArea",
    "Controller",
    "IntLogSlider",
    "LogSlider",
    "LinearSlider",
    "PREFETCHER",
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


class _QuietCanonical:
    """Mixin for sliders with ``canonical(value)``: when the front end sends a value that the
    kernel only canonicalizes (the same grid point up to rounding), the canonical number is NOT
    sent back. The page already shows that position; the extra message cost 5-10 ms per slider
    step in the browser benchmark (the front end re-rendered the slider while the step's plot
    data waited behind it)."""

    def _should_send_property(self, key, value):
        if key == "value" and key in self._property_lock:
            sent = self._property_lock[key]
            if isinstance(sent, (int, float)) and not isinstance(sent, bool):
                try:
                    quiet = sent != value and self.canonical(float(sent)) == value
                except (TypeError, ValueError, OverflowError):
                    quiet = False
                if quiet:
                    if self._holding_sync:
                        self._states_to_send.discard(key)
                    return False
        return super()._should_send_property(key, value)


class _GridSlider(_QuietCanonical):
    """Mixin for a slider whose positions are min + n·step on an axis (``_coord``: the value
    itself, or its logarithm): each position has one canonical value (``_at(n)``), a value the
    front end sends within ``_snap`` (on the axis) of a position becomes it (validator), and
    :meth:`neighbours` names the values one arrow-key step away, so a prefetched setting is the
    very number the next step arrives with."""

    _snap: ClassVar[float] = 1e-9  #: on the axis; LinearSlider scales it by the step

    def _coord(self, v: float) -> float | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _at(self, n: int) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    @traitlets.validate("value")
    def _validate_value(self, proposal):
        return self.canonical(super()._validate_value(proposal))

    def _position(self, v: float) -> tuple[int, float] | None:
        """The nearest grid position n of ``v`` and its distance on the axis (None: no position)."""
        c = self._coord(v)
        if c is None or not (self.step and self.step > 0):
            return None
        n = round((c - self.min) / self.step)
        return n, abs(c - (self.min + n * self.step))

    def canonical(self, value: float) -> float:
        """The number the slider holds for ``value`` (already within its range): the grid
        position's canonical value if ``value`` is that position up to rounding, else ``value``."""
        v = float(value)
        pos = self._position(v)
        return self._at(pos[0]) if pos is not None and pos[1] < self._snap else v

    def neighbours(self, value: float | None = None) -> tuple[float | None, float | None]:
        """The values one step left and right of ``value`` (default: the current value), what an
        arrow key moves the slider to; ``None`` beyond the ends or where that is ``value`` again."""
        v = self.value if value is None else float(value)
        pos = self._position(v)
        if pos is None:
            return None, None
        top = math.floor((self.max - self.min) / self.step + 1e-9)
        out = [self._at(m) if 0 <= m <= top else None for m in (pos[0] - 1, pos[0] + 1)]
        return tuple(None if x == v else x for x in out)


class LogSlider(_GridSlider, W.FloatLogSlider):
    """A :class:`ipywidgets.FloatLogSlider` whose values on its grid are canonical: a value within
    a relative ~1e-9 of a grid point base^(min + n·step) becomes exactly that grid point (the front
    end computes Math.pow(base, exponent) with the exponent's own rounding, so the same slider
    position can arrive as values an ulp apart). Values off the grid (typed in the readout) are
    kept. With canonical values, a slider step hits the cache that :meth:`neighbours` filled.

    >>> s = log_slider("ε", 1.0, 0.01, 100.0)
    >>> s.value = 10 ** (-0.3 + 1e-13); s.value
    0.5011872336273
    >>> s.neighbours()
    (0.446683592151, 0.5623413251903)
    >>> s.value = 0.5; s.value
    0.5
    >>> s.value = 0.1000000000000001; s.value
    0.1
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # the page's accessibility code (a11y.js) announces base^position, the number shown,
        # instead of the exponent noUiSlider holds
        self.add_class(f"dpexplore-log-base-{self.base:g}")

    def _coord(self, v: float) -> float | None:
        return math.log(v, self.base) if v > 0 and math.isfinite(v) else None

    def _at(self, n: int) -> float:
        """The canonical value of grid position n: base^(min + n·step) written with the fewest
        significant digits that stay within a relative 1e-13 of it (at most 14): 0.5, not
        0.5000000000000002; 1e-08, not 9.99999999999935e-09 (-300 + 2920·0.1 in floating
        point); 0.1122018454302 for 10^-0.95. Grid points are ≥ 1 % apart, so this is one
        number per position, and a round number a user types stays that number."""
        step = fractions.Fraction(self.step).limit_denominator(1000)
        if abs(float(step) - self.step) <= 1e-15 * self.step:  # 1/20 rather than 0.05000000000000000277
            e = self.min + (n * step.numerator) / step.denominator
        else:
            e = self.min + n * self.step
        raw = float(self.base**e)
        for digits in range(1, 15):
            nice = float(f"{raw:.{digits}g}")
            if abs(nice - raw) <= 1e-13 * raw:
                return nice
        return raw  # pragma: no cover - 14 digits are always within 1e-13


def log_slider(
    description: str,
    value: float,
    min: float,
    max: float,
    unit: str = "",
    *,
    steps_per_decade: int = 20,
    readout_format: str = ".3g",
    continuous_update: bool = True,
    **kwargs,
) -> LogSlider:
    """A base-10 log slider (a :class:`LogSlider`) over [``min``, ``max``] (actual values, not exponents) with a readable
    readout (``readout_format``, d3-format) and the unit in its label. The readout is an editable
    text box (ipywidgets 8): typed values are clamped to the range.

    >>> s = log_slider("δ", 1e-6, 1e-12, 1e-1, steps_per_decade=10)
    >>> s.min, s.max, s.step, s.readout_format
    (-12.0, -1.0, 0.1, '.3g')
    """
    if not (0 < min < max):
        raise ValueError(f"log slider needs 0 < min < max, got min={min!r}, max={max!r}")
    return _decade_slider(
        LogSlider, description, value, min, max, unit, steps_per_decade, readout_format, continuous_update, kwargs
    )


def _decade_slider(cls, description, value, lo, hi, unit, steps_per_decade, readout_format, continuous_update, kwargs):
    """A base-10 slider of class ``cls`` over [``lo``, ``hi``] (actual values), ``steps_per_decade``
    grid points a decade, the unit in its label (:func:`log_slider`, :func:`int_log_slider`)."""
    return cls(
        value=value,
        base=10,
        min=math.log10(lo),
        max=math.log10(hi),
        step=1.0 / steps_per_decade,
        description=_label(description, unit),
        readout_format=readout_format,
        continuous_update=continuous_update,
        style=_STYLE,
        layout=W.Layout(**_LAYOUT),
        **kwargs,
    )


class IntLogSlider(LogSlider):
    """A log-scale slider whose value is always a whole number (ipywidgets has no IntLogSlider):
    the front end moves on a log scale, the kernel rounds the value to the nearest integer.

    >>> s = IntLogSlider(value=10, min=0, max=4)
    >>> s.value = 31.6
    >>> s.value
    32.0
    """

    @staticmethod
    def canonical(value: float) -> float:
        """The whole number (≥ 1) the slider holds for ``value``; the page, which shows the
        value with no decimals, is not sent it back (:class:`_QuietCanonical`)."""
        return float(max(round(value), 1))

    def _at(self, n: int) -> float:
        """The whole number at grid position n (the front end keeps the position on the exponent
        grid, the kernel rounds): neighbours of 126 on a 10-per-decade grid are 100 and 158.

        >>> IntLogSlider(value=126, min=0, max=4, step=0.1).neighbours()
        (100.0, 158.0)
        """
        return self.canonical(self.base ** (self.min + n * self.step))


def int_log_slider(
    description: str = "k",
    value: int = 1,
    min: int = 1,
    max: int = 10000,
    unit: str = "",
    *,
    steps_per_decade: int = 20,
    continuous_update: bool = True,
    **kwargs,
) -> IntLogSlider:
    """An integer slider on a log scale (k compositions: 1 … 10⁴), integer readout (``,.0f``).
    Read it with ``int(slider.value)``.

    >>> s = int_log_slider("k", 1000)
    >>> int(s.value), s.readout_format
    (1000, ',.0f')
    """
    if not (1 <= min < max):
        raise ValueError(f"integer log slider needs 1 <= min < max, got min={min!r}, max={max!r}")
    return _decade_slider(
        IntLogSlider, description, value, min, max, unit, steps_per_decade, ",.0f", continuous_update, kwargs
    )


class LinearSlider(_GridSlider, W.FloatSlider):
    """A :class:`ipywidgets.FloatSlider` whose values on its grid min + n·step are canonical (see
    :class:`LogSlider`), with :meth:`neighbours`.

    >>> s = linear_slider("r", 1.5, 1.0, 4.0, 0.05)
    >>> s.value = 1.1500000000000001; s.value
    1.15
    >>> s.neighbours()
    (1.1, 1.2)
    """

    def _coord(self, v: float) -> float | None:
        return v if math.isfinite(v) else None

    @property
    def _snap(self) -> float:
        return 1e-9 * self.step

    def _at(self, n: int) -> float:
        """Grid point n, min + n·step, rounded to 12 significant digits of the step (1.15, not
        1.1500000000000001)."""
        digits = max(0, 12 - math.floor(math.log10(self.step)))
        return float(round(self.min + n * self.step, digits))


def linear_slider(
    description: str,
    value: float,
    min: float,
    max: float,
    step: float | None = None,
    unit: str = "",
    *,
    readout_format: str = ".3g",
    continuous_update: bool = True,
    **kwargs,
) -> LinearSlider:
    """A linear float slider (a :class:`LinearSlider`) with the unit in its label (default 200 steps over the range).

    >>> s = linear_slider("μ", 1.0, 0.1, 10.0, 0.05)
    >>> s.value, s.step
    (1.0, 0.05)
    """
    if not (min < max):
        raise ValueError(f"slider needs min < max, got min={min!r}, max={max!r}")
    return LinearSlider(
        value=value,
        min=min,
        max=max,
        step=step if step is not None else (max - min) / 200,
        description=_label(description, unit),
        readout_format=readout_format,
        continuous_update=continuous_update,
        style=_STYLE,
        layout=W.Layout(**_LAYOUT),
        **kwargs,
    )


def int_slider(
    description: str,
    value: int,
    min: int,
    max: int,
    step: int = 1,
    unit: str = "",
    *,
    continuous_update: bool = True,
    **kwargs,
) -> W.IntSlider:
    """A linear integer slider with the unit in its label.

    >>> int_slider("n", 5, 1, 10).value
    5
    """
    return W.IntSlider(
        value=value,
        min=min,
        max=max,
        step=step,
        description=_label(description, unit),
        continuous_update=continuous_update,
        style=_STYLE,
        layout=W.Layout(**_LAYOUT),
        **kwargs,
    )


def dropdown(description: str, options, value, *, width: str | None = None, **kwargs) -> W.Dropdown:
    """A dropdown whose description is shown whole (not cut at the default label width) and, with
    ``width`` (CSS length, e.g. ``"360px"``), at most that wide on a wide panel (``min(100%, width)``).

    >>> d = dropdown("mode", ["a", "b"], "b", width="360px")
    >>> d.value, d.style.description_width, d.layout.width
    ('b', 'initial', 'min(100%, 360px)')
    """
    if width is not None:
        kwargs["layout"] = W.Layout(width=f"min(100%, {width})")
    return W.Dropdown(options=options, value=value, description=description, style=dict(_STYLE), **kwargs)


def param_slider(param, value, **kwargs) -> W.Widget:
    """The slider of an app parameter described by a ``dpexplore.apps._checks.Param`` (its range,
    scale, label, unit, grid), at ``value``; ``kwargs`` go to the slider (``continuous_update``).

    >>> from dpexplore.apps._checks import Param
    >>> s = param_slider(Param("n", 10, 3000, "log", unit="people", integer=True, steps_per_decade=10), 300)
    >>> type(s).__name__, s.description, int(s.value)
    ('IntLogSlider', 'n [people]', 300)
    """
    p = param
    if p.scale == "log":
        if p.integer:
            return int_log_slider(p.text, value, p.lo, p.hi, p.unit, steps_per_decade=p.steps_per_decade, **kwargs)
        if p.readout_format is not None:
            kwargs.setdefault("readout_format", p.readout_format)
        return log_slider(p.text, value, p.lo, p.hi, p.unit, steps_per_decade=p.steps_per_decade, **kwargs)
    if p.integer:
        return int_slider(p.text, value, p.lo, p.hi, int(p.step or 1), p.unit, **kwargs)
    if p.readout_format is not None:
        kwargs.setdefault("readout_format", p.readout_format)
    return linear_slider(p.text, value, p.lo, p.hi, p.step, p.unit, **kwargs)


def param_box(param, value) -> W.IntText:
    """The number box of a whole-number app parameter (a seed: ``dpexplore.apps._checks.SEED``, any
    whole number its ``check`` accepts), at ``value``. The box keeps its ``Param`` as
    ``dpexplore_param``: the page's URL parsing checks a value against it (a box has no bounds).

    >>> from dpexplore.apps._checks import SEED
    >>> b = param_box(SEED, 7)
    >>> b.description, b.value, b.dpexplore_param is SEED
    ('seed', 7, True)
    """
    if not param.integer:
        raise ValueError(f"a number box is for whole numbers, got the real parameter {param.name!r}")
    box = W.IntText(
        value=value, description=_label(param.text, param.unit), style=_STYLE, layout=W.Layout(width="220px")
    )
    box.dpexplore_param = param
    return box


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
    return (
        "This setting could not be computed (" + type(exc).__name__ + "); the plot still shows the last valid setting."
    )


class _OthersLoad:
    """The machine's load per CPU *apart from this process*: the 1-minute load average
    (``os.getloadavg``; OSError where there is none) less this process's own CPU rate, averaged
    the way the kernel averages the load (exponentially, over one minute), both per CPU.

    The kernel's own step and its prefetch must not count: with them a visitor alone on a
    2-core machine (their browser beside the kernel) stopped their own prefetch, and every step
    of the adaptive lab's "n rows" slider re-ran its simulation (76 ms instead of 18 ms). What
    the prefetch stands down for is other work: the rest of a class.

    >>> f = _OthersLoad(loadavg=lambda: (3.0, 0, 0), cpus=2, cpu_time=iter([0.0, 0.0]).__next__,
    ...                 clock=iter([0.0, 60.0]).__next__)
    >>> f(), f()          # no CPU used by this process: all of the load is others'
    (1.5, 1.5)
    >>> g = _OthersLoad(loadavg=lambda: (1.0, 0, 0), cpus=2, cpu_time=iter([0.0, 600.0]).__next__,
    ...                 clock=iter([0.0, 600.0]).__next__)
    >>> g(), round(g(), 3)  # this process ran one CPU flat out for 10 minutes: none is others'
    (0.5, 0.0)
    """

    window = 60.0  # seconds: the 1-minute load average's time constant

    def __init__(
        self, loadavg=os.getloadavg, cpus: int | None = None, cpu_time=time.process_time, clock=time.monotonic
    ):
        self._loadavg, self._cpu_time, self._clock = loadavg, cpu_time, clock
        self._cpus = cpus or os.cpu_count() or 1
        self._lock = threading.Lock()
        self._last: tuple[float, float] | None = None  # (clock, cpu time) at the last call
        self._own = 0.0  # own CPU rate, CPUs, smoothed

    def __call__(self) -> float:
        load = self._loadavg()[0]
        with self._lock:
            now, cpu = self._clock(), self._cpu_time()
            if self._last is not None and now > self._last[0]:
                dt = now - self._last[0]
                rate = max(cpu - self._last[1], 0.0) / dt
                keep = math.exp(-dt / self.window)
                self._own = keep * self._own + (1.0 - keep) * rate
            self._last = (now, cpu)
            own = self._own
        return max(load - own, 0.0) / self._cpus


class _Prefetcher:
    """One daemon thread per kernel that computes, between slider steps, the settings the next
    step is likely to ask for (the values one slider step away), into the controllers' caches.

    The page waits for the kernel only on a step whose setting is not cached; a visitor stepping a
    slider with the arrow keys or small moves then mostly reads the cache. Tasks are
    ``(fn, spec)`` with ``fn`` an ``lru_cache``-wrapped pure compute; a new slider step drops the
    tasks not yet started (:meth:`settle`), and waits for the running one only when it computes the
    very setting asked for. Errors in a task are ignored (the step itself will report them).
    """

    #: seconds between a step and the start of its prefetch: the step's own redraw comes first
    #: (on a machine that runs both the kernel and the browser, a prefetch running during the
    #: page's Plotly.react slowed that redraw by half)
    delay: ClassVar[float] = 0.1

    #: the machine counts as busy (no prefetch) while its 1-minute load average per CPU, less
    #: this kernel's own CPU use (:class:`_OthersLoad`), is at least this: a class of 30 moving
    #: sliders on 2 cores then gets the CPU for the settings actually asked for (a prefetch
    #: doubles the kernels' work per move and mostly misses when moves jump; it is the first
    #: thing to drop under load), while a visitor alone keeps theirs
    busy_load_per_cpu: ClassVar[float] = 0.75

    def __init__(self, enabled: bool = True, load: Callable[[], float] | None = None):
        #: off: nothing is prefetched (environment DPEXPLORE_PREFETCH=0, e.g. a crowded server
        #: that would rather not spend CPU on settings nobody may ask for)
        self.enabled = enabled
        #: the load per CPU of everything but this kernel (default :class:`_OthersLoad`); tests
        #: replace it
        self.load = load if load is not None else _OthersLoad()
        #: tasks dropped unstarted because the machine was busy (tests, benchmarks)
        self.skipped = 0
        self._cv = threading.Condition()
        self._tasks: list[tuple[Callable, Hashable]] = []
        self._start_at = 0.0
        self._running: tuple[Callable, Hashable, threading.Event] | None = None
        self._thread: threading.Thread | None = None

    def submit(self, tasks) -> None:
        """Replace the pending tasks by ``tasks`` (an iterable of ``(fn, spec)``)."""
        if not self.enabled:
            return
        with self._cv:
            self._tasks = list(tasks)
            self._start_at = time.monotonic() + self.delay
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="dpexplore-prefetch", daemon=True)
                self._thread.start()
            self._cv.notify()

    def settle(self, fn: Callable, spec: Hashable, timeout: float = 30.0) -> None:
        """Drop the pending tasks; if the running task computes ``fn(spec)``, wait until it is done
        (the result is then in ``fn``'s cache)."""
        with self._cv:
            self._tasks = []
            run = self._running
            self._cv.notify_all()  # idle() waiters: nothing pending any more
        if run is not None and run[0] is fn and run[1] == spec:
            run[2].wait(timeout)

    def busy(self) -> bool:
        """True while the machine is too loaded to compute settings nobody asked for yet."""
        try:
            return self.load() >= self.busy_load_per_cpu
        except OSError:  # no load average on this platform: never busy
            return False

    def idle(self, timeout: float = 30.0) -> bool:
        """Wait until no task is pending or running (tests); True if it became idle."""
        with self._cv:
            return self._cv.wait_for(lambda: not self._tasks and self._running is None, timeout)

    def _loop(self) -> None:
        while True:
            with self._cv:
                while not self._tasks or time.monotonic() < self._start_at:
                    # sleep until the tasks are due; a submit (new tasks and due time) wakes it
                    self._cv.wait(max(self._start_at - time.monotonic(), 0.0) if self._tasks else None)
                if self.busy():
                    # checked before every task: a class arriving mid-prefetch stops it at once
                    self.skipped += len(self._tasks)
                    self._tasks = []
                    self._cv.notify_all()
                    continue
                fn, spec = self._tasks.pop(0)
                ev = threading.Event()
                self._running = (fn, spec, ev)
            try:
                fn(spec)
            except Exception:  # noqa: BLE001 - a bad neighbour setting; the step reports it
                pass
            finally:
                with self._cv:
                    self._running = None
                    self._cv.notify_all()
                ev.set()


#: the kernel's one prefetch thread (see :class:`_Prefetcher` and ``Controller.prefetch``)
PREFETCHER = _Prefetcher(enabled=os.environ.get("DPEXPLORE_PREFETCH", "1") != "0")


def _int_neighbours(slider, value) -> tuple:
    """(value − step, value + step) of an integer slider, ``None`` past its ends.

    >>> _int_neighbours(W.IntSlider(min=0, max=3, step=1), 3)
    (2, None)
    """
    v, step = int(value), int(slider.step or 1)
    return (v - step if v - step >= slider.min else None, v + step if v + step <= slider.max else None)


class _Fixed:
    """A stand-in for a control during :meth:`Controller._spec_with`: its ``value`` is fixed, every
    other attribute is the real widget's."""

    def __init__(self, widget, value):
        self._widget = widget
        self.value = value

    def __getattr__(self, name):
        return getattr(self._widget, name)


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
    * ``render(self, result)``: update the figures in place (e.g. ``fig.update(data=...)``);
    * optionally ``sync_controls(self)``: show, hide, enable or disable controls for the current
      setting (only the chosen mechanism's sliders, say); run once built and before every update;
    * optionally ``readout_widgets`` (a class attribute: attribute name → CSS class, "" for none)
      and ``write_readouts(self, result)``: the controller's text readouts, an empty ``W.HTML``
      each made before the first compute and filled by ``write_readouts`` once built and after
      every ``render``.

    With ``prefetch = True`` (a class attribute), after each step of a slider that has
    ``neighbours()`` (:class:`LogSlider`, :class:`LinearSlider`) the settings one more step away
    (in the direction moved first) are computed in the background (:data:`PREFETCHER`), so the next
    step reads the cache; ``compute`` must then be safe to run in a second thread (pure numpy and
    ``functools.lru_cache`` are).

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
    prefetch: ClassVar[bool] = False
    readout_widgets: ClassVar[Mapping[str, str]] = {}
    _cached: ClassVar[Callable[[Hashable], Any]]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        compute = cls.__dict__.get("compute")
        if compute is not None:
            fn = compute.__func__ if isinstance(compute, staticmethod) else compute
            cls._cached = staticmethod(functools.lru_cache(maxsize=cls.cache_size)(fn))

    def __init__(self, controls: Mapping[str, W.ValueWidget], message: MessageArea | None = None):
        self._listeners: list[Callable[[], None]] = []
        for name, css_class in self.readout_widgets.items():
            setattr(self, name, W.HTML())
            if css_class:
                getattr(self, name).add_class(css_class)
        self.controls = dict(controls)
        self.message = message if message is not None else MessageArea()
        self.last_error: BaseException | None = None
        self.spec = self.read_spec()
        self.result = self._cached(self.spec)
        self.figs: Sequence[PlotlyWidget] = list(self.figures(self.result))
        for w in self.controls.values():
            w.observe(self._on_change, names="value")
        self.sync_controls()
        self.write_readouts(self.result)

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

    def sync_controls(self) -> None:
        """Controls that matter only for some settings follow the current one (default: none)."""

    def write_readouts(self, result: Any) -> None:
        """Fill the ``readout_widgets`` for ``result`` (default: none)."""

    def snippet(self) -> str | None:
        """Python source that prints the numbers the app's readouts show for the current setting,
        calling dpexplore's public API (the app shell shows it under "Reproduce in Python");
        ``None``: this app has none."""
        return None

    def on_update(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` after every successful update (the app shell: link and snippet)."""
        self._listeners.append(callback)

    # -- machinery --------------------------------------------------------------------------
    def _on_change(self, change) -> None:
        if change.get("old") is not None and change.get("old") == change.get("new"):
            # a front end echo that validates to the value the kernel holds (a log slider's
            # grid point): nothing to redraw, and a note just shown must stay
            return
        self.update()
        if self.prefetch and self.last_error is None:
            self._prefetch_neighbours(change)

    def _spec_with(self, name: str, value) -> Hashable:
        """``read_spec()`` as if control ``name`` had ``value`` (the widgets are not touched)."""
        controls = self.controls
        self.controls = {**controls, name: _Fixed(controls[name], value)}
        try:
            return self.read_spec()
        finally:
            self.controls = controls

    def _prefetch_neighbours(self, change) -> None:
        """Queue the settings one step further along the slider just moved, the direction of the
        move first (the step back is usually the setting just left, already cached)."""
        owner = change.get("owner")
        neighbours = getattr(owner, "neighbours", None)
        if neighbours is None and isinstance(owner, W.IntSlider):  # a plain integer slider (a seed)
            neighbours = functools.partial(_int_neighbours, owner)
        name = next((n for n, w in self.controls.items() if w is owner), None)
        if neighbours is None or name is None:
            return
        left, right = neighbours(change["new"])
        try:
            up = float(change["new"]) >= float(change["old"])
        except (TypeError, ValueError):
            up = True
        tasks = []
        for v in (right, left) if up else (left, right):
            if v is None:
                continue
            try:
                tasks += self.prefetch_tasks(self._spec_with(name, v))
            except ValueError:
                continue
        if tasks:
            PREFETCHER.submit(tasks)

    def prefetch_tasks(self, spec: Hashable) -> list:
        """What the prefetcher computes for a neighbouring setting: ``(fn, spec)`` pairs, by
        default the cached compute (a controller that draws more on a step adds its own)."""
        return [(self._cached, spec)]

    def update(self) -> None:
        """Read the widgets, compute (cached), redraw in place; errors become a message."""
        self.sync_controls()
        ok = False
        try:
            spec = self.read_spec()
            if self.prefetch:
                PREFETCHER.settle(self._cached, spec)
            result = self._cached(spec)
            self.render(result)
            self.write_readouts(result)
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
        if ok:
            for callback in getattr(self, "_listeners", ()):
                callback()
