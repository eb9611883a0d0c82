"""The capacity audit's two max-flow engines agree: pure Python (audit/flow.py, used up to
``capacity.SMALL`` intervals or without scipy) and scipy's compiled Dinic (large resources).

On random executions (test_capacity_audit's generator) both give the same load, an antichain of
exactly that weight, and the same generating edges; both agree with the old exhaustive search.
A deliberately broken pure-Python flow (one that stops after the first augmenting path) is
caught by the same comparison.
"""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_capacity_audit import Builder, GaveUp, assert_antichain, old_max_load, traces

from mutexlab.audit import capacity, flow
from mutexlab.audit.capacity import collect_intervals, generating_edges, generating_pairs, max_antichain

pytest.importorskip("scipy", reason="the side-by-side needs scipy (the 'fast' extra, in '.[test]')")


@pytest.mark.slow  # 300 generated traces, two flows each
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces(), st.integers(1, 6))
def test_python_and_scipy_flows_agree(t, cap):
    intervals = collect_intervals(t.events)[0].get("flower", [])
    assume(intervals)
    src, dst = generating_edges(intervals)
    assert sorted(generating_pairs(intervals)) == sorted(zip(src.tolist(), dst.tolist()))
    by_python = max_antichain(intervals, engine="python")
    by_scipy = max_antichain(intervals, engine="scipy")
    assert by_python[0] == by_scipy[0]
    assert_antichain(by_python[1], by_python[0])
    with contextlib.suppress(GaveUp):
        assert by_python[0] == old_max_load(intervals)


def _three_overlapping_then_one():
    """a, b, c inside at once (load 3); d after a's exit, e after b's: two chains to join, so the
    flow (W − load = 5 − 3) needs two augmenting paths."""
    t = Builder("a", "b", "c", "d", "e")
    for p in "abc":
        t.enter(p)
    t.exit("a")
    t.tell("a", "d")
    t.exit("b")
    t.tell("b", "e")
    t.enter("d")
    t.enter("e")
    for p in "cde":
        t.exit(p)
    return collect_intervals(t.events)[0]["flower"]


def test_a_flow_that_stops_early_is_caught(monkeypatch):
    intervals = _three_overlapping_then_one()
    assert max_antichain(intervals, engine="python")[0] == max_antichain(intervals, engine="scipy")[0] == 3

    def one_path_only(self, source, sink):
        level = self._levels(source)
        return self._push(source, sink, level, [0] * self.n) if level[sink] >= 0 else 0

    monkeypatch.setattr(flow.Network, "max_flow", one_path_only)
    with pytest.raises(AssertionError):  # the cut no longer weighs W − flow, or the load is off
        load, found = max_antichain(intervals, engine="python")
        assert load == max_antichain(intervals, engine="scipy")[0]


def test_auto_uses_python_for_small_resources_and_without_scipy(monkeypatch):
    intervals = _three_overlapping_then_one()
    used = []
    monkeypatch.setattr(capacity, "_cut_python", lambda *a: used.append("python") or (2, [0, 1, 2]))
    monkeypatch.setattr(capacity, "_cut_scipy", lambda *a: used.append("scipy") or (2, [0, 1, 2]))
    max_antichain(intervals)
    monkeypatch.setattr(capacity, "SMALL", 2)
    max_antichain(intervals)
    monkeypatch.setattr(capacity, "scipy_available", lambda: False)
    max_antichain(intervals)
    assert used == ["python", "scipy", "python"]
