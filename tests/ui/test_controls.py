"""Shared dashboard controls (dpexplore/ui/controls.py): canonical slider values on the
grid, ``neighbours()`` (what one arrow-key step reaches), and the background prefetch of the
controller (the next slider step is read from the cache; errors and disabled prefetch)."""

from __future__ import annotations

import dataclasses
import math
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpexplore.ui import controls as C
from dpexplore.apps.composition_explorer import CompositionController, build_composition_explorer
from dpexplore.ui.plotwidget import PlotlyWidget

SETTINGS = settings(max_examples=60, deadline=None)


def _ulps(x: float, n: int) -> float:
    for _ in range(abs(n)):
        x = math.nextafter(x, math.inf if n > 0 else 0.0)
    return x


# ------------------------------------------------------------------------------------------------
# sliders: one canonical value per grid position
# ------------------------------------------------------------------------------------------------
@SETTINGS
@given(
    lo=st.floats(-15, 1),
    decades=st.integers(1, 8),
    spd=st.sampled_from([5, 10, 20, 40]),
    frac=st.floats(0, 1),
    ulps=st.integers(-3, 3),
    dexp=st.sampled_from([0.0, 1e-15, -1e-15, 4e-13]),
)
def test_log_slider_value_from_the_front_end_is_the_neighbour_value(lo, decades, spd, frac, ulps, dexp):
    """The front end sends Math.pow(10, exponent) with the exponent's own rounding: any value a few
    ulps (or a ~1e-13 exponent error) away from a grid point becomes the same number that
    ``neighbours()`` of the adjacent position names, so a prefetched setting is found in the cache."""
    s = C.log_slider("x", 10**lo, 10**lo, 10 ** (lo + decades), steps_per_decade=spd)
    top = round((s.max - s.min) / s.step)
    n = int(round(frac * top))
    sent = _ulps(10 ** (s.min + n * s.step + dexp), ulps)
    s.value = sent
    got = s.value
    assert got == pytest.approx(10 ** (s.min + n * s.step), rel=1e-11)
    if n > 0:
        s.value = 10 ** (s.min + (n - 1) * s.step)
        assert s.neighbours()[1] == got
    if n < top:
        s.value = 10 ** (s.min + (n + 1) * s.step)
        assert s.neighbours()[0] == got


def test_log_slider_keeps_round_and_typed_values():
    s = C.log_slider("ρ", 0.5, 5e-5, 50.0)
    assert s.value == 0.5  # on the grid, written as typed
    s.value = 0.5000000000000002
    assert s.value == 0.5
    d = C.log_slider("δ", 1e-6, 1e-15, 0.1, steps_per_decade=5)
    assert d.value == 1e-6
    d.value = 9.999999999999991e-07  # 10 ** (-15 + 45 * 0.2)
    assert d.value == 1e-6
    assert d.neighbours() == (d._at(44), d._at(46))
    d.value = 3.3e-6  # typed, off the grid: kept
    assert d.value == 3.3e-6
    # its neighbours are those of the nearest grid point (10^-5.4)
    assert d.neighbours() == pytest.approx((10**-5.6, 10**-5.2), rel=1e-12)


def test_log_slider_neighbours_stop_at_the_ends():
    s = C.log_slider("ε", 0.01, 0.01, 100.0)
    assert s.neighbours()[0] is None and s.neighbours()[1] == pytest.approx(10**-1.95)
    s.value = 100.0
    assert s.neighbours()[1] is None and s.neighbours()[0] == pytest.approx(10**1.95)


def test_linear_slider_canonical_and_neighbours():
    s = C.linear_slider("r", 1.5, 1.0, 4.0, 0.05)
    s.value = 1.1500000000000001
    assert s.value == 1.15
    assert s.neighbours() == (1.1, 1.2)
    s.value = 1.123  # off the grid: kept
    assert s.value == 1.123
    s.value = 4.0
    assert s.neighbours() == (3.95, None)


def test_int_log_slider_neighbours_match_the_front_end_positions():
    """The front end keeps the handle on the exponent grid n·step and the kernel rounds: the
    neighbours are round(10^((n ± 1)·step)) (from k = 10 on, where rounding keeps the grid
    positions apart), and never the value itself."""
    s = C.int_log_slider("k", 126, 1, 10_000, steps_per_decade=10)
    assert s.neighbours() == (100.0, 158.0)
    s.value = 1
    assert s.neighbours() == (None, None)  # 10^0.1 rounds to 1 again
    for n in range(10, 40):
        s.value = 10 ** (n / 10)
        left, right = s.neighbours()
        want_left, want_right = float(max(round(10 ** ((n - 1) / 10)), 1)), float(round(10 ** ((n + 1) / 10)))
        assert left == (None if want_left == s.value else want_left)
        assert right == (None if want_right == s.value else want_right)
    s.value = 10_000
    assert s.neighbours()[1] is None


# ------------------------------------------------------------------------------------------------
# the prefetch
# ------------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _Spec:
    a: float


_CALLS: list = []


class _Counting(C.Controller):
    prefetch = True

    def read_spec(self):
        return _Spec(float(self.controls["a"].value))

    @staticmethod
    def compute(spec):
        _CALLS.append((threading.current_thread().name, spec.a))
        if spec.a > 50:
            raise ValueError(f"a must be <= 50, got {spec.a}")
        return spec.a

    def figures(self, result):
        return [PlotlyWidget(data=[{"x": [0.0, 1.0], "y": [0.0, result]}])]

    def render(self, result):
        self.figs[0].update_traces(0, y=[0.0, result])


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch):
    """Every test starts with an empty compute cache (it is per controller class), on what the
    prefetcher takes for a quiet machine (the real load average would turn it off at random)."""
    monkeypatch.setattr(C.PREFETCHER, "load", lambda: 0.0)
    _Counting._cached.cache_clear()
    yield
    assert C.PREFETCHER.idle()


def test_a_busy_machine_prefetches_nothing_and_every_step_still_draws_its_setting(monkeypatch):
    """Under load the prefetch is the first thing to drop: nothing is computed ahead, and each
    step computes and draws exactly its own setting."""
    monkeypatch.setattr(C.PREFETCHER, "load", lambda: 2.0)
    skipped = C.PREFETCHER.skipped
    _CALLS.clear()
    c = _Counting({"a": C.log_slider("a", 1.0, 0.01, 100.0, steps_per_decade=10)})
    a = c.controls["a"]
    for _ in range(3):
        a.value = a.neighbours()[1]
        assert C.PREFETCHER.idle()
        assert c.figs[0].data[0]["y"][1] == a.value
    assert [name for name, _ in _CALLS] == ["MainThread"] * 4
    assert C.PREFETCHER.skipped == skipped + 3 * 2  # two neighbours per step, none started


def test_the_prefetch_stops_as_soon_as_the_machine_gets_busy(monkeypatch):
    """The load is looked at before every task: a class arriving mid-queue drops the rest."""
    load = [0.0]
    monkeypatch.setattr(C.PREFETCHER, "load", lambda: load[0])
    seen = []

    def task(spec):
        seen.append(spec)
        load[0] = 1.0  # the machine gets busy meanwhile

    C.PREFETCHER.submit([(task, 1), (task, 2), (task, 3)])
    assert C.PREFETCHER.idle()
    assert seen == [1]


def test_no_load_average_counts_as_a_quiet_machine(monkeypatch):
    def none():
        raise OSError("no getloadavg here")

    monkeypatch.setattr(C.PREFETCHER, "load", none)
    assert C.PREFETCHER.busy() is False
    monkeypatch.setattr(C.PREFETCHER, "load", lambda: C.PREFETCHER.busy_load_per_cpu)
    assert C.PREFETCHER.busy() is True


def test_the_next_step_is_computed_in_the_background():
    _CALLS.clear()
    c = _Counting({"a": C.log_slider("a", 1.0, 0.01, 100.0, steps_per_decade=10)})
    a = c.controls["a"]
    left, right = a.neighbours()
    a.value = right  # a step right: computed in the step
    assert C.PREFETCHER.idle()
    prefetched = [v for name, v in _CALLS if name == "dpexplore-prefetch"]
    nxt = a.neighbours()[1]
    assert prefetched[0] == nxt  # the direction of the move first
    before = len(_CALLS)
    a.value = nxt  # read from the cache
    assert c.figs[0].data[0]["y"][1] == nxt
    assert [v for name, v in _CALLS[before:] if name != "dpexplore-prefetch"] == []
    assert C.PREFETCHER.idle()
    # moving left, back to the start: the value further left is prefetched first
    a.value = a.neighbours()[0]
    assert C.PREFETCHER.idle()
    _CALLS.clear()
    a.value = a.neighbours()[0]
    assert a.value == 1.0 and C.PREFETCHER.idle()
    pre = [v for name, v in _CALLS if name == "dpexplore-prefetch"]
    assert pre and pre[0] == pytest.approx(10 ** (math.log10(a.value) - 0.1))


def test_a_failing_neighbour_is_ignored_and_reported_only_when_stepped_on():
    _CALLS.clear()
    c = _Counting({"a": C.log_slider("a", 10**1.6, 0.01, 100.0, steps_per_decade=10)})
    a = c.controls["a"]
    a.value = a.neighbours()[1]  # 10^1.7 ≈ 50.1 would fail
    assert C.PREFETCHER.idle()
    assert c.message.text.startswith("a must be <= 50")
    a.value = a.neighbours()[0]
    assert c.message.text == "" and c.figs[0].data[0]["y"][1] == pytest.approx(10**1.6)


def test_disabled_prefetcher_computes_nothing_ahead(monkeypatch):
    monkeypatch.setattr(C.PREFETCHER, "enabled", False)
    _CALLS.clear()
    c = _Counting({"a": C.log_slider("a", 1.0, 0.01, 100.0)})
    c.controls["a"].value = c.controls["a"].neighbours()[1]
    assert C.PREFETCHER.idle()
    assert [name for name, _ in _CALLS] == ["MainThread", "MainThread"]


def test_settle_waits_for_the_running_task_of_the_same_setting():
    started, release = threading.Event(), threading.Event()
    seen = []

    def slow(spec):
        started.set()
        release.wait(5)
        seen.append(spec)

    C.PREFETCHER.submit([(slow, 1), (slow, 2)])
    assert started.wait(5)
    threading.Timer(0.2, release.set).start()
    C.PREFETCHER.settle(slow, 1)  # waits for the running task ...
    assert seen == [1]
    assert C.PREFETCHER.idle()
    assert seen == [1]  # ... and drops the pending one


def test_composition_explorer_steps_read_the_prefetched_setting():
    """On the dashboard that needs it most (its ε, δ′ and ε_T steps cost 35–100 ms of exact
    numerics each): after a step and an idle kernel, the next step of each slider is a cache hit."""
    box = build_composition_explorer()
    ctrl = box.controller
    for name in ("eps", "delta_total", "eps_budget", "k"):
        w = ctrl.controls[name]
        w.value = w.neighbours()[1]
        assert C.PREFETCHER.idle()
        hits = CompositionController._cached.cache_info().hits
        w.value = w.neighbours()[1]
        assert CompositionController._cached.cache_info().hits == hits + 1, name
        assert ctrl.message.text == ""
        assert ctrl.result.spec == ctrl.read_spec()
        np.testing.assert_allclose(np.asarray(ctrl.figs[0].data[0]["x"], float), ctrl.result.curves["basic"][0])
        assert C.PREFETCHER.idle()


@pytest.mark.parametrize("env, enabled", [("0", False), ("1", True), (None, True)])
def test_prefetch_environment_switch(env, enabled):
    """DPEXPLORE_PREFETCH=0 (``dpexplore serve --no-prefetch``) turns the prefetch off in a kernel."""
    import os
    import subprocess
    import sys

    e = {k: v for k, v in os.environ.items() if k != "DPEXPLORE_PREFETCH"}
    if env is not None:
        e["DPEXPLORE_PREFETCH"] = env
    out = subprocess.run(
        [sys.executable, "-c", "from dpexplore.ui.controls import PREFETCHER; print(PREFETCHER.enabled)"],
        env=e,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.stdout.strip() == str(enabled), out.stderr


class _Comm:
    """Records what a widget sends to the front end."""

    kernel = True
    comm_id = "test"

    def __init__(self):
        self.sent = []

    def send(self, data=None, metadata=None, buffers=None):
        self.sent.append((data.get("method"), dict(data.get("state", {}))))

    def on_msg(self, *a):
        pass

    def close(self, *a, **k):
        pass


@pytest.mark.parametrize(
    "make",
    [
        lambda: C.log_slider("ε", 0.1, 0.001, 50.0),
        lambda: C.linear_slider("r", 1.5, 1.0, 4.0, 0.05),
        lambda: C.int_log_slider("k", 126, 1, 10_000, steps_per_decade=10),
    ],
)
def test_canonicalizing_a_front_end_value_sends_nothing_back(make):
    """The front end sends the grid point with its own rounding; the kernel holds the canonical
    number and does not send it back (one message less per step: only ipywidgets' echo)."""
    w = make()
    comm = _Comm()
    w.comm = comm
    lo, hi = w.neighbours()
    sent = math.nextafter(hi, math.inf) if not isinstance(w, C.IntLogSlider) else 10**2.2  # 158.49 → 158
    comm.sent.clear()
    w.set_state({"value": sent})
    assert w.value == hi != sent
    assert [m for m, _ in comm.sent] == ["echo_update"]
    comm.sent.clear()
    w.value = lo  # a change made in the kernel is sent as usual
    assert comm.sent == [("update", {"value": lo})]
    w.close()
