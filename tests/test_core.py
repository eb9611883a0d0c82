"""The library core: clocks, codecs, traces, the simulator and the capacity audit."""

import heapq
import random
from typing import Literal

import pytest
from conftest import audited

from mutexlab.audit.capacity import check_capacities
from mutexlab.clock import LamportClock, VectorClock, happened_before, priority
from mutexlab.messages import Codec, Message, MessageError
from mutexlab.protocol import Protocol, Schedule
from mutexlab.protocols.registry import make_setup
from mutexlab.setups import ConfigError, Setup
from mutexlab.sim import SimConfig, Simulation
from mutexlab.sim.engine import _TIMER
from mutexlab.trace import TraceError, parse_events


class Ping(Message):
    type: Literal["PING"] = "PING"
    n: int


class Pong(Message):
    type: Literal["PONG"] = "PONG"


def test_lamport_clock_ticks_and_jumps_past_received_stamps():
    clock = LamportClock(5)
    assert clock.tick() == 6
    assert clock.receive(3) == 7
    assert clock.receive(20) == 21
    with pytest.raises(ValueError):
        LamportClock(-1)


def test_priority_is_a_total_order_even_with_equal_clocks():
    assert priority(3, 1) < priority(3, 2) < priority(4, 1)


def test_vector_clock_happened_before():
    a, b = VectorClock("a"), VectorClock("b")
    send = a.tick()
    b.tick()  # concurrent with the send
    recv = b.merge(send)
    assert happened_before("a", send, recv)
    assert not happened_before("b", recv, send)


def test_codec_round_trip_and_clear_errors():
    codec = Codec(Ping, Pong)
    msg = Ping(sender=1, ts=2, n=3)
    assert codec.decode(codec.encode(msg)) == msg
    for raw, words in [
        (b"{not json", "not JSON"),
        (b"[1]", "JSON object"),
        (b'{"type": "NOPE", "sender": 1, "ts": 1}', "unknown message type 'NOPE'"),
        (b'{"type": "PING", "sender": 1, "ts": 1}', "invalid PING: n: Field required"),
        (b'{"type": "PONG", "sender": -4, "ts": 1}', "sender"),
        (b'{"type": "PONG", "sender": 1, "ts": 1, "extra": 2}', "extra"),
    ]:
        with pytest.raises(MessageError, match=words):
            codec.decode(raw)


def test_trace_parser_names_the_bad_line():
    header = '{"event":"run","pid":"run","capacities":{"cs":1}}'
    with pytest.raises(TraceError, match="t:2: not JSON"):
        list(parse_events([header, "oops"], "t"))
    with pytest.raises(TraceError, match="t:2: event lacks its vector clock"):
        list(parse_events([header, '{"event":"enter","pid":"node-1"}'], "t"))
    with pytest.raises(TraceError, match="t:1: the run header lacks 'capacities'"):
        list(parse_events(['{"event":"run","pid":"run"}'], "t"))


def test_simulator_is_deterministic_per_seed():
    one = audited(make_setup("ricart-agrawala", 4, {"requests": 3}), 7).events
    two = audited(make_setup("ricart-agrawala", 4, {"requests": 3}), 7).events
    other = audited(make_setup("ricart-agrawala", 4, {"requests": 3}), 8).events
    assert one == two
    assert one != other


def test_simulator_keeps_links_fifo():
    events = audited(make_setup("ricart-agrawala", 5, {"requests": 4}), 3).events
    sent, received = {}, {}
    for e in events:
        if e["event"] == "send":
            sent.setdefault((e["pid"], e["to"]), []).append(e["id"])
        elif e["event"] == "recv":
            received.setdefault((e["from"], e["pid"]), []).append(e["id"])
    assert sent == received


class _Logger(Protocol):
    """Does nothing but note, in ``log``, each local action it is given."""

    def __init__(self, log: list) -> None:
        self.pid, self.state, self.clock, self.log = 1, "IDLE", LamportClock(), log

    def start(self) -> list:
        return []

    def on_local(self, action: str) -> list:
        self.log.append(action)
        return []


def test_simulator_queue_takes_events_in_time_order_and_ties_in_scheduling_order():
    # Times from a small set, so most are shared: the queue must give (time, order queued), what
    # its earlier heap of (time, sequence number) tuples gave.
    log: list = []
    sim = Simulation(Setup("log", {1: _Logger(log)}, {1: "p1"}, Codec(Ping), {}))
    rng = random.Random(4)
    queued = [(float(rng.randrange(6)), n) for n in range(300)]
    for at, n in queued:
        sim.push((at, _TIMER, 1, n))
    result = sim.run()
    assert log == [n for _, n in sorted(queued)]
    assert result.events == 300 and not result.truncated


class _Echo(_Logger):
    """Logs its actions; the first few schedule another at once (a dwell of 0: the same time)."""

    def on_local(self, action) -> list:
        self.log.append(action)
        return [Schedule(f"{action}+", "now")] if len(self.log) < 120 and action.count("+") < 2 else []


@pytest.mark.parametrize("scale", [0.25, 1.0, 4.0, 64.0])
@pytest.mark.parametrize("fast", [True, False])
def test_simulator_queue_order_does_not_depend_on_its_buckets(scale, fast):
    # The same order, (time, order queued), whatever the buckets' width and in both loops, with
    # actions scheduled for the very time being drained (dwell 0) among those queued before.
    def run() -> list:
        log: list = []
        sim = Simulation(
            Setup("log", {1: _Echo(log)}, {1: "p1"}, Codec(Ping), {}), SimConfig(dwell={"now": 0})
        )
        sim.fast, sim._scale = fast, scale  # noqa: SLF001 - the width under test
        rng = random.Random(5)
        for n in range(300):
            sim.push((rng.randrange(12) / 4, _TIMER, 1, str(n)))
        assert sim.run().events == len(log)
        return log

    log = run()
    expected: list = []
    rng = random.Random(5)
    heap = [(rng.randrange(12) / 4, n, str(n)) for n in range(300)]
    heapq.heapify(heap)
    order = 300
    while heap:  # the reference: a heap of (time, sequence number), as the engine once was
        at, _, action = heapq.heappop(heap)
        expected.append(action)
        if len(expected) < 120 and action.count("+") < 2:
            heapq.heappush(heap, (at, order, f"{action}+"))
            order += 1
    assert log == expected


def test_bad_simulator_settings_are_refused():
    with pytest.raises(ConfigError, match="delay model"):
        SimConfig(delay="gauss")
    with pytest.raises(ConfigError, match="dwell time for 'cs'"):
        SimConfig(dwell={"cs": -1})
    with pytest.raises(ConfigError, match="unknown algorithm"):
        make_setup("dekker", 2)


def _event(kind, pid, vc, resource="r", **extra):
    return {"event": kind, "pid": pid, "vc": vc, "resource": resource, **extra}


def test_capacity_audit_uses_causality_not_order():
    # a enters and exits; b enters after receiving a's message sent after the exit: safe,
    # even though the events are listed out of real-time order.
    safe = [
        _event("enter", "b", {"a": 3, "b": 2}),
        _event("enter", "a", {"a": 1}),
        _event("exit", "a", {"a": 2}),
        _event("exit", "b", {"a": 3, "b": 3}),
    ]
    assert check_capacities(safe, {"r": 1}) == []
    # b's enter does not know a's exit: both may hold r at once.
    unsafe = [
        _event("enter", "a", {"a": 1}),
        _event("enter", "b", {"a": 1, "b": 2}),
        _event("exit", "a", {"a": 2}),
        _event("exit", "b", {"a": 1, "b": 3}),
    ]
    violations = check_capacities(unsafe, {"r": 1})
    assert [v.rule for v in violations] == ["capacity"]


def test_capacity_audit_sums_units_of_multi_unit_resources():
    events = [
        _event("enter", "a", {"a": 1}, "pins", units=2),
        _event("enter", "b", {"b": 1}, "pins", units=2),
        _event("enter", "c", {"c": 1}, "pins", units=1),
    ]
    assert check_capacities(events, {"pins": 5}) == []
    assert [v.rule for v in check_capacities(events, {"pins": 4})] == ["capacity"]
