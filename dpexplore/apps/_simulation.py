"""The machinery the two simulation labs share (mechanisms in action, local vs central): a
progress bar for slow steps, one seeded generator per section, their seed and trials parameters
and the controller that runs its compute under the bar."""

from __future__ import annotations

import ipywidgets as W
import numpy as np

from ..ui.controls import Controller, param_slider, param_box
from ..ui.shell import app_shell
from ._checks import SEED, Param

#: simulations draw at most this many noise values per curve (trials are capped to fit)
SIM_BUDGET = 200000
#: the trials of every simulation (its seed is ``_checks.SEED``, a number box)
TRIALS = Param("trials", 100, 10000, "log", unit="runs", integer=True, steps_per_decade=10)


# progress of a running simulation: the controller installs a callback for the duration of one
# update; the (cached, pure) section functions only report how far they are — it never changes
# a result. The bar appears once a step has run for PROGRESS_AFTER seconds.
PROGRESS_AFTER = 1.0
_PROGRESS: list = [None]


def _report(section: str, fraction: float) -> None:
    cb = _PROGRESS[0]
    if cb is not None:
        cb(section, fraction)


class _ProgressBar:
    """A FloatProgress shown while an update runs for more than PROGRESS_AFTER seconds."""

    def __init__(self):
        self.bar = W.FloatProgress(
            value=0.0,
            min=0.0,
            max=1.0,
            description="simulating",
            style={"description_width": "initial"},
            layout=W.Layout(display="none"),
        )
        self._t0 = 0.0

    def __enter__(self):
        import time

        self._time = time.perf_counter
        self._t0 = self._time()
        self._shown = False
        _PROGRESS[0] = self._tick
        return self

    def _tick(self, section: str, fraction: float) -> None:
        # the bar is touched only once shown: a fast step sent ~28 updates of a hidden bar to
        # the page (each a websocket message the page handles), a third of its kernel time
        if not self._shown:
            if self._time() - self._t0 < PROGRESS_AFTER:
                return
            self._shown = True
            self.bar.layout.display = None
        self.bar.description = f"simulating: {section}"
        self.bar.value = min(max(fraction, 0.0), 1.0)

    def __exit__(self, *exc):
        _PROGRESS[0] = None
        if self._shown:
            self.bar.layout.display = "none"
        return False


def _rng(seed: int, section: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), section])


def _seed_and_trials(spec) -> dict:
    """The two controls every simulation lab starts with: the seed box and the trials slider."""
    return {"seed": param_box(SEED, spec.seed), "trials": param_slider(TRIALS, spec.trials)}


def _gap(y):
    """δ-like values ≤ 0 cannot be drawn on a log axis: NaN (a gap) instead."""
    y = np.asarray(y, float)
    return np.where(y > 0, y, np.nan)


class _SimulationController(Controller):
    """A Controller whose simulations run under a progress bar (shown past one second) and that
    fills its HTML readouts (``readout_keys``) with ``_write_readouts(result)`` once built."""

    readout_keys: tuple = ()

    def __init__(self, controls, message=None):
        self.readouts = {k: W.HTML() for k in self.readout_keys}
        self.progress = _ProgressBar()
        with self.progress:
            super().__init__(controls, message)
        self._write_readouts(self.result)

    def update(self) -> None:
        """As Controller.update, with a progress bar if the simulations take over a second."""
        with self.progress:
            super().update()


def wrap_row(*widgets) -> W.HBox:
    """Widgets side by side, wrapping onto more lines where the plot area is narrow (a tab's
    sliders, its pair of plots)."""
    return W.HBox(list(widgets), layout=W.Layout(flex_flow="row wrap"))


def simulation_shell(info, ctrl: _SimulationController, controls, tabs) -> W.Widget:
    """A simulation lab in the app shell: its tabs, and in a narrow panel the seed, the trials and
    the simulations' progress bar (each tab holds its own sliders)."""
    panel = [controls["seed"], controls["trials"], ctrl.progress.bar]
    return app_shell(info, ctrl, controls=panel, plots=tabs, panel_width="300px")
