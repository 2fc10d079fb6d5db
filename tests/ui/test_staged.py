"""dpexplore.ui.staged: the bounded memo the staged controllers read (membership, LRU order, one
call per key)."""

from __future__ import annotations

from dpexplore.ui.staged import Memo


def test_memo_is_lru():
    m = Memo(lambda a, b: a + b, maxsize=2)
    assert m(1, 2) == 3 and (1, 2) in m
    m(2, 2), m(3, 3)
    assert (1, 2) not in m and (3, 3) in m


def test_memo_calls_once_per_key_and_refreshes_on_hit():
    calls = []
    m = Memo(lambda x: calls.append(x) or x * 2, maxsize=2)
    assert m(1) == 2 and m(1) == 2 and calls == [1]  # a single argument is its own key
    m(2)
    m(1)  # a hit moves 1 to the newest end: 2 is evicted next
    m(3)
    assert 1 in m and 2 not in m and 3 in m and calls == [1, 2, 3]
