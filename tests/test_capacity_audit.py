"""The capacity audit as a maximum-weight antichain (audit/capacity.py): exact, with no budget.

* hand-built traces whose largest load and witness are known (units > 1, holders still inside
  at the end, capacity 1 and K);
* a property: on small random traces the flow agrees with the exhaustive clique search the
  audit used before (copied below as the reference) — same verdict, same largest load;
* a property: the greedy chain cover that spares the flow on most correct runs bounds the load
  from above (and a broken cover that ignores causality is caught by the same property);
* the bees with the flower threshold one too low are still caught with K ≥ 2, by a witness
  whose holders pairwise overlap;
* the configuration on which the old search gave up (200 bees, 20 flowers) completes SAFE;
* a trace the audit cannot check gets no verdict (never "incomplete" called a violation).
"""

from __future__ import annotations

import io
import json
from itertools import combinations

import pytest
from conftest import audited, broken
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from mutexlab_broken.bees_variants import FlowerThresholdOneTooLow

from mutexlab.audit import verify_events
from mutexlab.audit.capacity import (
    _Candidates,
    chain_cover_bound,
    check_capacities,
    collect_intervals,
    max_antichain,
    overlap,
)
from mutexlab.cli import main
from mutexlab.protocols import bees
from mutexlab.protocols.bees import Bee
from mutexlab.protocols.registry import make_setup
from mutexlab.sim import SimConfig, Simulation
from mutexlab.trace import Recorder, TraceWriter
from mutexlab.transport.monitor import Monitor, Outcome
from mutexlab.transport.outcome import deciding
from mutexlab.transport.settings import MonitorSettings

# --- the reference: the budgeted clique search the audit used before, copied verbatim -------------
# (its candidates come from the overlap index the audit still uses for witnesses, _Candidates)

SEARCH_LIMIT = 200_000


class GaveUp(Exception):
    pass


def old_search(cap, intervals, limit=20):
    """The old ``_check_resource`` search: the over-capacity cliques it found; GaveUp past its budget."""
    found = []
    candidates = _Candidates(intervals)
    order = {id(iv): n for n, iv in enumerate(intervals)}
    budget = [SEARCH_LIMIT]

    def extend(clique, units, pool):
        if units > cap:
            return clique
        for n, nxt in enumerate(pool):
            budget[0] -= 1
            if budget[0] < 0:
                return None
            if all(overlap(nxt, member) for member in clique[1:]):
                hit = extend(clique + [nxt], units + nxt.units, pool[n + 1 :])
                if hit:
                    return hit
        return None

    for iv in intervals:
        if len(found) >= limit or budget[0] < 0:
            break
        pool = [b for b in candidates.overlapping(iv) if order[id(b)] > order[id(iv)]]
        if not pool:
            continue
        clique = extend([iv], iv.units, pool)
        if clique:
            found.append(clique)
    if budget[0] < 0:
        raise GaveUp
    return found


def old_max_load(intervals):
    """The largest load by the old search: the least capacity at which it finds nothing over."""
    cap = max(iv.units for iv in intervals)
    while old_search(cap, intervals, limit=1):
        cap += 1
    return cap


# --- building traces ---------------------------------------------------------------------------------


class Builder:
    """Processes with vector clocks (the trace's own Recorder), messages delivered by hand."""

    def __init__(self, *pids):
        self.recorders = {p: Recorder(p) for p in pids}
        self.events = []
        self.sent = 0

    def _add(self, event):
        event["_line"] = len(self.events) + 1
        self.events.append(event)
        return event

    def enter(self, pid, units=1, resource="flower"):
        self._add(self.recorders[pid].local("enter", 0.0, 0, resource=resource, units=units))

    def exit(self, pid, units=1, resource="flower"):
        self._add(self.recorders[pid].local("exit", 0.0, 0, resource=resource, units=units))

    def send(self, frm, to):
        self.sent += 1
        event = self._add(self.recorders[frm].send(0.0, 0, "M", to, f"m{self.sent}"))
        return (frm, to, event["id"], dict(event["vc"]))

    def recv(self, message):
        frm, to, msg_id, vc = message
        self._add(self.recorders[to].recv(0.0, 0, "M", frm, msg_id, vc))

    def tell(self, frm, to):
        self.recv(self.send(frm, to))

    def intervals(self, resource="flower"):
        return collect_intervals(self.events)[0][resource]


def holders(intervals):
    return sorted((iv.pid, iv.units) for iv in intervals)


def assert_antichain(found, load):
    assert sum(iv.units for iv in found) == load
    assert all(overlap(a, b) for a, b in combinations(found, 2))


# --- known answers -------------------------------------------------------------------------------------


def test_units_are_summed_and_causality_splits_the_holders():
    # a (2 units) and b (3 units) hold at once; c (1 unit) enters after a's exit is known to it.
    t = Builder("a", "b", "c")
    t.enter("a", 2)
    t.enter("b", 3)
    t.exit("a", 2)
    t.tell("a", "c")
    t.enter("c", 1)
    t.exit("b", 3)
    t.exit("c", 1)
    load, found = max_antichain(t.intervals())
    assert load == 5 and holders(found) == [("a", 2), ("b", 3)]
    assert_antichain(found, load)
    assert check_capacities(t.events, {"flower": 5}) == []
    [violation] = check_capacities(t.events, {"flower": 4})
    assert violation.rule == "capacity"
    assert violation.message == (
        "flower (capacity 4) held by a (2 units, line 1), b (3 units, line 2) at once: "
        "no exit among them happened-before another's enter"
    )
    assert [e["_line"] for e in violation.events] == [1, 2]


def test_the_heaviest_antichain_is_not_the_largest_one():
    # p: P1 then P2; q: Q1 (3 units) then Q2; Q1 overlaps P1 only; r: R1 after Q1 and P1.
    t = Builder("p", "q", "r")
    t.enter("p")  # P1
    t.enter("q", 3)  # Q1
    t.exit("q", 3)
    t.exit("p")
    t.tell("q", "r")
    t.tell("p", "r")
    t.enter("r")  # R1
    t.tell("q", "p")  # P2 knows Q1's exit
    t.enter("p")  # P2
    t.enter("q")  # Q2: knows nothing new, overlaps P2 and R1
    load, found = max_antichain(t.intervals())
    assert load == 4 and holders(found) == [("p", 1), ("q", 3)]
    assert_antichain(found, load)
    assert old_max_load(t.intervals()) == 4
    # {P2, R1, Q2} is the largest set (three holders) but weighs 3.
    assert [v.rule for v in check_capacities(t.events, {"flower": 3})] == ["capacity"]


def test_a_holder_left_inside_at_the_end_is_below_nothing():
    # d enters and never leaves; it tells e, which then enters: both are inside at once even
    # though e's enter comes causally after d's.
    t = Builder("d", "e", "f")
    t.enter("d", 2)
    t.tell("d", "e")
    t.enter("e", 1)
    t.exit("e", 1)
    t.tell("e", "f")
    t.enter("f", 1)  # after e's exit: e ≺ f, but d still overlaps f
    load, found = max_antichain(t.intervals())
    assert load == 3
    assert holders(found) in ([("d", 2), ("e", 1)], [("d", 2), ("f", 1)])
    assert_antichain(found, load)
    violations = check_capacities(t.events, {"flower": 2})
    assert [v.rule for v in violations] == ["capacity"] and "d (2 units, line 1)" in violations[0].message


def test_capacity_one_reports_every_overlapping_pair_and_passes_a_handover():
    t = Builder("a", "b", "c")
    t.enter("a", resource="reed")
    t.exit("a", resource="reed")
    t.tell("a", "b")
    t.enter("b", resource="reed")  # after a's exit: a handover, safe
    t.exit("b", resource="reed")
    assert check_capacities(t.events, {"reed": 1}) == []
    t.tell("a", "c")
    t.enter("c", resource="reed")  # after a's exit, but c never heard of b's
    [violation] = check_capacities(t.events, {"reed": 1})
    assert violation.message.startswith("reed (capacity 1) held by b (1 unit, line ")
    assert ", c (1 unit, line " in violation.message
    assert max_antichain(t.intervals("reed"))[0] == 2


def test_one_holder_over_the_capacity_is_reported_as_such():
    t = Builder("a", "b", "c")
    t.enter("a", 4, resource="pins")
    t.exit("a", 4, resource="pins")
    t.tell("a", "b")
    t.enter("b", 2, resource="pins")
    assert [v.message for v in check_capacities(t.events, {"pins": 3})] == [
        "a took 4 units of pins, more than its capacity 3"
    ]
    t.enter("c", 2, resource="pins")  # overlaps a and b: only b and c are within the capacity
    assert [v.message for v in check_capacities(t.events, {"pins": 3})] == [
        "a took 4 units of pins, more than its capacity 3",
        "pins (capacity 3) held by b (2 units, line 5), c (2 units, line 6) at once: no exit among them "
        "happened-before another's enter",
    ]
    assert max_antichain(t.intervals("pins"))[0] == 6


def test_units_that_are_not_positive_integers_are_malformed():
    t = Builder("a")
    t.enter("a", 0)
    assert [v.rule for v in check_capacities(t.events, {"flower": 3})] == ["malformed"]


# --- against the old search ------------------------------------------------------------------------------


@st.composite
def traces(draw):
    """A random execution: P processes sending, receiving (any order) and holding one resource."""
    pids = [f"p{i}" for i in range(draw(st.integers(2, 5)))]
    t = Builder(*pids)
    inside, in_flight = {}, []
    for _ in range(draw(st.integers(1, 40))):
        pid = draw(st.sampled_from(pids))
        action = draw(st.sampled_from(["hold", "hold", "send", "recv"]))
        if action == "hold" and pid in inside:
            t.exit(pid, inside.pop(pid))
        elif action == "hold":
            inside[pid] = draw(st.integers(1, 3))
            t.enter(pid, inside[pid])
        elif action == "send":
            in_flight.append(t.send(pid, draw(st.sampled_from([p for p in pids if p != pid]))))
        elif in_flight:
            t.recv(in_flight.pop(draw(st.integers(0, len(in_flight) - 1))))
    return t


@pytest.mark.slow  # 300 generated traces, two searches each
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces(), st.integers(1, 6))
def test_the_flow_agrees_with_the_old_search(t, cap):
    intervals = collect_intervals(t.events)[0].get("flower", [])
    assume(intervals)
    try:
        reference = old_max_load(intervals)
        # The old audit reported one holder over the capacity apart from its search.
        old_verdict = bool(old_search(cap, intervals)) or max(iv.units for iv in intervals) > cap
    except GaveUp:
        assume(False)
    load, found = max_antichain(intervals)
    assert load == reference
    assert_antichain(found, load)
    new_verdict = bool([v for v in check_capacities(t.events, {"flower": cap}) if v.rule == "capacity"])
    assert new_verdict == old_verdict == (load > cap)


def bound_holds(bound_of, intervals, cap):
    """What the audit relies on: a bound within ``cap`` is never below the real load."""
    bound = bound_of(intervals, cap)
    return bound is None or (bound <= cap and max_antichain(intervals)[0] <= bound)


@pytest.mark.slow  # 300 generated traces
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces(), st.integers(1, 6))
def test_the_chain_cover_bounds_the_load_from_above(t, cap):
    intervals = collect_intervals(t.events)[0].get("flower", [])
    assert bound_holds(chain_cover_bound, [iv for iv in intervals if iv.units <= cap], cap)


def test_a_cover_that_ignores_causality_is_caught():
    broken_bound = broken("capacity_bound").chain_cover_bound
    t = Builder("a", "b")
    t.enter("a")
    t.enter("b")
    t.exit("a")
    t.exit("b")  # two holders at once, nothing between them
    assert not bound_holds(broken_bound, t.intervals(), 1)
    assert bound_holds(chain_cover_bound, t.intervals(), 1)
    assert chain_cover_bound(t.intervals(), 2) == 2


def test_a_correct_bees_run_is_proved_safe_by_the_cover_alone():
    setup = bees.make_setup(40, {"flowers": 4, "reeds": 14}, 1)
    intervals = collect_intervals(audited(setup, 1).events)[0]["flower"]
    assert chain_cover_bound(intervals, 4) == max_antichain(intervals)[0] == 4


# --- the bees ---------------------------------------------------------------------------------------------


def bee_trace(cls, processes, options, seed):
    setup = bees.make_setup(processes, options, seed)
    for bee in setup.protocols.values():
        bee.__class__ = cls
    return audited(setup, seed).events


def test_bees_one_ack_short_overfill_k_flowers_and_the_witness_shows_it():
    options = {"flowers": 3, "reeds": 4}
    caught = 0
    for seed in range(6):
        events = bee_trace(FlowerThresholdOneTooLow, 10, options, seed)
        intervals = collect_intervals(events)[0]["flower"]
        load, found = max_antichain(intervals)
        flower = [v for v in verify_events(events).violations if v.message.startswith("flower (capacity 3)")]
        assert bool(flower) == (load > 3)
        if flower:
            caught += 1
            [violation] = flower
            assert len(violation.events) == len(found) and load >= 4
            assert_antichain(found, load)
            for held in found:
                assert f"{held.pid} (1 unit, line {held.enter['_line']})" in violation.message
        correct = bee_trace(Bee, 10, options, seed)
        assert max_antichain(collect_intervals(correct)[0]["flower"])[0] <= 3
        assert verify_events(correct).safe
    assert caught


@pytest.mark.slow
def test_two_hundred_bees_on_twenty_flowers_complete_safe(capsys):
    """The configuration on which the old search gave up after 200,000 steps and said VIOLATION."""
    code = main(["simulate", "bees", "--bees", "200", "--flowers", "20", "--reeds", "67", "--seed", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "audit: SAFE" in out and "bees: 200 dead" in out
    assert "incomplete" not in out and "gave up" not in out


def test_a_trace_the_audit_cannot_check_gets_no_verdict(tmp_path, capsys):
    """Elves requests recorded without their bodies: the rounds cannot be checked. verify says so
    (exit 2, the line named) and the monitor gives no verdict (exit 3); neither calls it a violation."""
    writer = TraceWriter(None, keep=True)
    Simulation(make_setup("elves", 3, {"contracts": 2, "rounds": 1}, 1), SimConfig(seed=1), writer).run()
    events = [
        {k: v for k, v in e.items() if not (k == "msg" and e.get("type", "").endswith("_REQUEST"))}
        for e in writer.events
    ]
    path = tmp_path / "bodiless.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    assert main(["verify", str(path)]) == 2
    err = capsys.readouterr().err
    assert "carries no message body 'msg'" in err and "line " in err
    out = io.StringIO()
    monitor = Monitor(
        MonitorSettings(
            amqp_url="amqp://guest:guest@127.0.0.1:1/%2F", run_id="bodiless", algorithm="elves", processes=3
        ),
        out=out,
    )
    monitor.trace.events[:] = events
    outcome = Outcome("bodiless", "elves", 3, complete=True)
    assert monitor._report(outcome, deciding(outcome, events)) == 3  # noqa: SLF001 - the monitor's report step alone
    assert "no verdict, the trace cannot be audited" in out.getvalue()
    assert "VIOLATION" not in out.getvalue() and "SAFE" not in out.getvalue()
