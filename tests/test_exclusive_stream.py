"""The capacity-1 check fed event by event (audit/exclusive.py), as ``mutexlab verify`` runs it on a
trace file: the same verdict and findings as the whole-trace check, on correct runs and broken
variants (over the limit of findings too); its memory follows the intervals still in question, not
the trace's length; a trace it cannot decide that way (not in a causal order, a process heard of
late) is decided whole; and forgetting too early is caught by the same comparison."""

from __future__ import annotations

import json

import pytest
from conftest import broken
from test_capacity_audit import Builder

from mutexlab.audit import verify_events, verify_file
from mutexlab.audit.exclusive import InexactStream
from mutexlab.audit.stream import StreamAudit
from mutexlab.protocols.registry import make_setup
from mutexlab.report import read_window
from mutexlab.sim import SimConfig, Simulation
from mutexlab.trace import TraceWriter, parse_events, read_trace

EAGER = broken("ricart_agrawala_eager")


def written(path, setup, seed=1, **config):
    with TraceWriter(path) as trace:
        Simulation(setup, SimConfig(seed=seed, **config), trace).run()
    return path


def bounded(path, cls=None):
    audit = StreamAudit(bounded=True)
    with open(path, "rb") as handle:
        for event in parse_events(handle, str(path)):
            if cls is not None and audit.exclusive is not None and type(audit.exclusive) is not cls:
                audit.exclusive.__class__ = cls
            audit.feed(event)
    return audit


def same(a, b):
    return a.render() == b.render() and a.as_dict() == b.as_dict()


@pytest.mark.parametrize(
    "name, setup, config",
    [
        ("ra", lambda: make_setup("ricart-agrawala", 5, {"requests": 60}, 1), {}),
        ("ra-faults", lambda: make_setup("ricart-agrawala", 4, {"requests": 20}, 2), {"duplicate": 0.2}),
        ("ra-reordered", lambda: make_setup("ricart-agrawala", 4, {"requests": 20}, 3), {"reorder": True}),
        ("suzuki-kasami", lambda: make_setup("suzuki-kasami", 5, {"requests": 20}, 1), {}),
        ("eager", lambda: EAGER.make_setup(4, {"requests": 30}), {"dwell": {"cs": 3.0}}),
        ("eager-few", lambda: EAGER.make_setup(3, {"requests": 2}), {"dwell": {"cs": 3.0}}),
    ],
)
def test_the_streamed_check_decides_as_the_whole_trace(name, setup, config, tmp_path):
    path = written(tmp_path / f"{name}.jsonl", setup(), **config)
    whole = verify_events(read_trace(path))
    audit = bounded(path)
    assert audit.exclusive is not None  # the classic families check event by event: bounded
    assert same(audit.verdict(), whole) and same(verify_file(path), whole)
    if name == "eager":  # more findings than the limit: the same first ones
        assert sum(v.rule == "capacity" for v in whole.violations) == 20
    if name.startswith("eager"):
        assert not whole.safe


def test_memory_follows_the_intervals_in_question_not_the_trace():
    peaks = []
    for requests in (50, 400):
        setup = make_setup("ricart-agrawala", 5, {"requests": requests}, 1)
        trace = TraceWriter(None, keep=True)
        Simulation(setup, SimConfig(seed=1), trace).run()
        audit = StreamAudit(bounded=True).feed_all(trace.events)
        assert audit.verdict().ok and audit.kept == []  # no enter or exit of cs is kept
        peaks.append(audit.exclusive.peak_live)
    assert peaks[1] <= max(peaks[0], 130) < 5 * 400  # 2,000 intervals, never more than a few kept


def test_a_trace_not_in_causal_order_is_decided_whole(tmp_path):
    path = written(tmp_path / "ra.jsonl", EAGER.make_setup(3, {"requests": 3}), dwell={"cs": 3.0})
    events = read_trace(path)
    run, body = events[0], events[1:]
    by_process = sorted(body, key=lambda e: e["pid"])  # each process's own order, not a causal one
    shuffled = tmp_path / "by-process.jsonl"
    shuffled.write_text(
        "".join(json.dumps({k: v for k, v in e.items() if k != "_line"}) + "\n" for e in [run, *by_process])
    )
    with pytest.raises(InexactStream):
        bounded(shuffled)
    whole = verify_events(read_trace(shuffled))
    assert not whole.safe and same(verify_file(shuffled), whole)
    assert same(read_window(shuffled).verdict, whole)  # the report reads it again too


def handovers(t, rounds):
    for _ in range(rounds):
        t.enter("a", resource="cs")
        t.exit("a", resource="cs")
        t.tell("a", "b")
        t.enter("b", resource="cs")
        t.exit("b", resource="cs")
        t.tell("b", "a")


def header(*names):
    processes = {str(i): n for i, n in enumerate(names, 1)}
    return {"event": "run", "pid": "run", "capacities": {"cs": 1}, "processes": processes, "_line": 0}


def test_a_process_heard_of_late_is_decided_whole(tmp_path):
    t = Builder("a", "b", "c")
    handovers(t, 60)  # a and b hand cs over 120 times: the settled intervals are forgotten
    t.enter("c", resource="cs")  # c, not in the header, knows nothing: it overlaps every one
    events = [header("a", "b"), *t.events]
    with pytest.raises(InexactStream):
        StreamAudit(bounded=True).feed_all(events)
    path = tmp_path / "late.jsonl"
    path.write_text("".join(json.dumps({k: v for k, v in e.items() if k != "_line"}) + "\n" for e in events))
    whole = verify_events(read_trace(path))
    assert [v.rule for v in whole.safety] == ["capacity"] * 20
    assert same(verify_file(path), whole)


def test_forgetting_too_early_is_caught():
    forgetful = broken("exclusive_forgetful").ForgetsAtExit
    t = Builder("a", "b")
    handovers(t, 3)
    t.enter("a", resource="cs")
    t.exit("a", resource="cs")
    t.enter("b", resource="cs")  # b did not hear of a's last exit: they overlap
    events = [header("a", "b"), *t.events]
    whole = verify_events(events)
    assert not whole.safe
    right = StreamAudit(bounded=True).feed_all(events)
    assert same(right.verdict(), whole)
    wrong = StreamAudit(bounded=True)
    for event in events:
        wrong.feed(event)
        if wrong.exclusive is not None:
            wrong.exclusive.__class__ = forgetful
    assert wrong.verdict().safe  # the broken check misses the overlap: the comparison above catches it


@pytest.mark.parametrize("resources", [1, 4000], ids=["one-resource", "a-resource-each"])
def test_a_log_of_one_process_forgets_its_intervals(resources):
    # One process alone (a log of one process, or before any other is heard of): no other's later
    # enter can overlap its exits, yet none was ever forgotten — each enter scanned every interval
    # before it (20,000 entries: 11 s of CPU against 2 s at 10,000), and with a resource each,
    # every enter summed over every resource seen. Now a few are kept, and the verdict is the same.
    events = [{"event": "run", "pid": "run", "processes": {}, "capacities": {"*": 1}}]
    for i in range(4000):
        resource = f"r{i % resources}"
        for own, kind in ((2 * i + 1, "enter"), (2 * i + 2, "exit")):
            events.append({"event": kind, "pid": "a", "resource": resource, "vc": {"a": own}})
    audit = StreamAudit(bounded=True).feed_all(events)
    assert audit.verdict().ok and audit.verdict().safe
    assert audit.exclusive.peak_live <= 130 and len(audit.exclusive.live) <= 130  # before: 4,000
    late = {"event": "enter", "pid": "b", "resource": "r0", "vc": {"b": 1}}  # knows no exit of a
    with pytest.raises(InexactStream):
        StreamAudit(bounded=True).feed_all([*events, late])
