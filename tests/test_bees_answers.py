"""The bees' hot handlers written short (``LamportClock.answer``: a receive and the ACK's tick in
one call; ``_on_ackflower``'s request, "try flower"'s threshold and ``_leave_flower``'s deferred
ACKs without a call) against
their plain statement (``Plain`` below: the handlers as first written): the same traces, message
bodies and clocks included, event for event; broken variants of the short ones are caught."""

from __future__ import annotations

import pytest

from mutexlab.clock import LamportClock
from mutexlab.protocol import Enter, Schedule, Send
from mutexlab.protocols.bees import FLOWER, Bee, BeeState, make_setup
from mutexlab.protocols.bees.machine import make_ackflower, make_ackreed
from mutexlab.protocols.classic import expect
from mutexlab.sim import SimConfig, Simulation
from mutexlab.trace import TraceWriter


class Plain(Bee):
    """The handlers as first written: receive, then tick, each its own call."""

    def _on_reqreed(self, msg):
        self.clock.receive(msg.ts)
        self._note_request(msg.sender, msg.ts)
        return [Send(msg.sender, make_ackreed(self.pid, self.clock.tick(), msg.ts))]

    def _ack_reqflower(self, msg):
        self.clock.receive(msg.ts)
        return [self._ack_flower(msg.sender, msg.ts)]

    def _on_ackflower(self, msg):
        self.clock.receive(msg.ts)
        if msg.req_ts != expect(self, self.flower_request, "flower request")[0]:
            return []
        if msg.sender not in self.flower_acks:
            self.flower_acks.add(msg.sender)
            if msg.sender in self.alive:
                self._flower_live += 1
        return self._try_flower()

    def _leave_flower(self, _action="exit"):
        acks = [self._ack_flower(j, ts) for j, ts in self.deferred]  # first, as first written
        self.deferred = []
        effects = super()._leave_flower(_action)  # [Exit(flower), the egg's Note, ...]
        return effects[:1] + acks + effects[1:]

    def _try_flower(self):
        if self._flower_live < self.flower_threshold():
            return []
        self.state = BeeState.ON_FLOWER
        return [Enter(FLOWER), Schedule("exit", "flower")]


class LandsEarly(Bee):
    """Broken: "try flower" one ACK short of the threshold (an override ``_try_flower`` must ask)."""

    def flower_threshold(self):
        return super().flower_threshold() - 1


def test_a_threshold_of_a_subclass_is_asked():
    assert Bee._own_threshold and not LandsEarly._own_threshold  # noqa: SLF001 - the switch under test


class AnswersLate(Bee):
    """Broken: the ACKflower's time one past the receive alone (the tick forgotten)."""

    def _ack_reqflower(self, msg):
        return [Send(msg.sender, make_ackflower(self.pid, self.clock.receive(msg.ts), msg.ts))]


class AcksOutOfOrder(Bee):
    """Broken: the deferred ACKs answered last first."""

    def _leave_flower(self, _action="exit"):
        self.deferred.reverse()
        return super()._leave_flower(_action)


class CountsStaleAcks(Bee):
    """Broken: an ACKflower counted whichever request it echoes (a late one too)."""

    def _on_ackflower(self, msg):
        request = self.flower_request
        if request is not None:
            self.flower_request = (msg.req_ts, request[1])
        try:
            return super()._on_ackflower(msg)
        finally:
            self.flower_request = request


RUNS = [
    (7, {"flowers": 2, "reeds": 2, "eggs": 2, "cocoons": 4}, {}),
    (9, {"flowers": 3, "reeds": 3, "eggs": 3, "cocoons": 6}, {"reorder": True}),
    (12, {"flowers": 4, "reeds": 4, "eggs": 2, "cocoons": 6}, {"delay": "fixed"}),
    (8, {"flowers": 9, "reeds": 2, "eggs": 1, "cocoons": 2}, {"duplicate": 0.2}),  # K > P: threshold 0
]


def trace_as(kind: type[Bee], processes: int, options: dict, config: dict, seed: int) -> list[dict]:
    """The run's whole trace (message bodies and vector clocks) with every bee made a ``kind``."""
    setup = make_setup(processes, options, seed)
    for bee in setup.protocols.values():
        bee.__class__ = kind
    trace = TraceWriter(keep=True)
    Simulation(setup, SimConfig(seed=seed, **config), trace, trace_bodies=True).run()
    return trace.kept


def test_answer_is_a_receive_then_a_tick():
    for start in (0, 3, 9):
        for stamp in (0, 2, 3, 4, 10):
            short, plain = LamportClock(start), LamportClock(start)
            plain.receive(stamp)
            assert short.answer(stamp) == plain.tick() == short.time == plain.time


@pytest.mark.parametrize("processes, options, config", RUNS)
def test_the_short_handlers_make_the_plain_ones_traces(processes, options, config):
    for seed in (0, 1):
        short = trace_as(Bee, processes, options, config, seed)
        assert short == trace_as(Plain, processes, options, config, seed)
        assert any(e["event"] == "enter" for e in short)


@pytest.mark.parametrize("broken", [AnswersLate, AcksOutOfOrder, CountsStaleAcks, LandsEarly])
def test_broken_short_handlers_are_caught(broken):
    assert any(trace_as(broken, *run, 0) != trace_as(Plain, *run, 0) for run in RUNS), (
        f"{broken.__name__} went unnoticed"
    )
