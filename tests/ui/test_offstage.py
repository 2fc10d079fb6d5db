"""What a slider move sends to a served page (dpexplore/ui/offstage.py, issue 22): the plots of
tabs not shown and the closed "Reproduce in Python" section send nothing while hidden and their
current state, once, when shown; in a notebook kernel (no ``DPEXPLORE_DEFER_HIDDEN``) everything
is sent at once, as before (nbclient's saved widget state is read from the messages)."""

from __future__ import annotations

import ipywidgets as W
import pytest

from dpexplore.apps.rdp_explorer import build_rdp_explorer
from dpexplore.ui.offstage import DEFER_ENV, defer_enabled
from dpexplore.ui.plotwidget import traces_from_wire


@pytest.fixture
def sent(monkeypatch):
    """Every widget message the kernel would send: (widget, message, buffers)."""
    out = []
    monkeypatch.setattr(W.Widget, "_send", lambda self, msg, buffers=None: out.append((self, msg, buffers)))
    return out


def _updates(sent, widget):
    return [m for w, m, _ in sent if w is widget and m.get("method") == "update"]


def _app(monkeypatch, defer: bool):
    monkeypatch.setenv(DEFER_ENV, "1" if defer else "0")
    return build_rdp_explorer(eps=1.0)


def test_defer_is_on_only_for_page_kernels(monkeypatch):
    monkeypatch.delenv(DEFER_ENV, raising=False)
    assert not defer_enabled()
    monkeypatch.setenv(DEFER_ENV, "1")
    assert defer_enabled()


def test_a_move_sends_only_the_shown_plot_and_the_hidden_ones_follow_their_tab(monkeypatch, sent):
    app = _app(monkeypatch, defer=True)
    shown, *hidden = app.figs
    tabs = next(w for w in app.widgets() if isinstance(w, W.Tab))
    assert tabs.selected_index == 0 and len(hidden) == 2
    sent.clear()
    app.controller.controls["eps"].value = 2.0
    assert len(_updates(sent, shown)) == 1 and "data" in _updates(sent, shown)[0]["state"]
    assert all(_updates(sent, f) == [] for f in hidden)
    assert _updates(sent, app._code) == []  # the snippet's section is closed
    # Python holds the current traces of every plot (CSV, tests, the snippet read them)
    assert all("data" in f.unsent for f in hidden)
    app.controller.controls["eps"].value = 3.0
    sent.clear()
    tabs.selected_index = 2  # the page opens the third tab: its plot gets the last setting's data
    (msg,) = _updates(sent, hidden[1])
    ((_, _, buffers),) = [s for s in sent if s[0] is hidden[1]]  # one message, and no other
    state = dict(msg["state"])
    for path, buf in zip(msg["buffer_paths"], buffers):
        target = state
        for k in path[:-1]:
            target = target[k]
        target[path[-1]] = buf
    assert traces_from_wire(state["data"], None) == hidden[1].data
    assert _updates(sent, hidden[0]) == []  # still hidden
    sent.clear()
    app.controller.controls["eps"].value = 0.5  # now the first tab's plot waits
    assert _updates(sent, shown) == [] and len(_updates(sent, hidden[1])) == 1
    sent.clear()
    app.code.selected_index = 0  # opening "Reproduce in Python" sends its text
    (code,) = _updates(sent, app._code)
    assert code["state"]["value"] == app._code.value and "0.5" in app._code.value


def test_in_a_notebook_every_change_is_sent_at_once(monkeypatch, sent):
    app = _app(monkeypatch, defer=False)
    sent.clear()
    app.controller.controls["eps"].value = 2.0
    assert [len(_updates(sent, f)) for f in app.figs] == [1, 1, 1]
    assert len(_updates(sent, app._code)) == 1


def test_a_hidden_plot_gets_presentation_mode_at_once(monkeypatch, sent):
    """``present`` (and ``css_height``) are sent from a closed tab too (PlotlyWidget.always_sent):
    deferred, an opened tab drew its plot in normal mode first, then again in presentation mode.
    Its data still waits for the tab."""
    app = _app(monkeypatch, defer=True)
    shown, *hidden = app.figs
    sent.clear()
    app.bar.present = True
    for f in hidden:
        (msg,) = _updates(sent, f)
        assert msg["state"] == {"present": True} and f.unsent == set()
    app.controller.controls["eps"].value = 2.0
    assert all(
        _updates(sent, f) == [{"method": "update", "state": {"present": True}, "buffer_paths": []}] for f in hidden
    )
    assert all("data" in f.unsent and "present" not in f.unsent for f in hidden)
