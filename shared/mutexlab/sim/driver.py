"""Carrying out a protocol's effects: the part both in-memory drivers share.

Invariants kept here:
* effects are applied in the order the protocol returned them;
* a message to oneself is handled at once, locally, and is not a network message;
* a ``state`` event is written whenever an input changed a process's state;
* every network message gets a unique id ``<sender>#<n>``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..messages import MessageError
from ..protocol import (
    Effect,
    Enter,
    Exit,
    NotAnEffect,
    Note,
    Schedule,
    Send,
    Undecodable,
    UnknownMessage,
    UnknownPeer,
)
from ..setups import Setup
from ..show import state_text
from ..trace import EventSink, Recorder
from ..waiting import WaitsRaised, waits


def resource_kind(resource: str) -> str:
    """``slot:2`` → ``slot``; ``task:1.3`` → ``task``; ``cs`` → ``cs``."""
    return resource.split(":", 1)[0]


class Driver:
    """Applies effects, counts messages and entries, and writes the trace (when asked)."""

    def __init__(self, setup: Setup, trace: EventSink | None = None, trace_bodies: bool = True) -> None:
        self.setup = setup
        self.protocols = setup.protocols
        self.names = setup.names
        self.trace = trace
        self.trace_bodies = trace_bodies
        # A TraceWriter chooses its recorders (local-event clocks for an audit alone); any other
        # writer (the participant's batch of trace events) gets the full vector clocks.
        recorder = getattr(trace, "recorder", Recorder)
        self.recorders = {pid: recorder(name) for pid, name in self.names.items()} if trace else {}
        self.now: float = 0.0
        self.messages: Counter[str] = Counter()
        self.entries: Counter[str] = Counter()
        self.notes: Counter[str] = Counter()
        self._sent: Counter[int] = Counter()  # per sender, for message ids
        self.message_types = frozenset(setup.codec.models)  # what may go over a link
        if trace is not None:
            trace.write(setup.run_event())

    # -- the driver-specific parts -------------------------------------------------------
    def transmit(self, sender: int, to: int, msg: Any, msg_id: str, vc: dict | None) -> None:
        raise NotImplementedError

    def schedule(self, pid: int, action: str, dwell: str) -> None:
        raise NotImplementedError

    def holding_changed(self, pid: int, effect: Enter | Exit) -> None:
        """Hook: a process entered or left a resource (the explorer tracks occupancy here)."""

    def noted(self, pid: int, effect: Note) -> None:
        """Hook: a process noted a scenario event (``check`` folds it into the problem's rules)."""

    # -- inputs --------------------------------------------------------------------------
    def start_all(self) -> None:
        for pid in sorted(self.protocols):
            self.feed(pid, lambda p: p.start())

    def feed(self, pid: int, step) -> None:
        """Run one input on ``pid`` (``step(protocol) -> effects``) and apply its effects."""
        proto = self.protocols[pid]
        before = proto.state
        effects = step(proto)
        self.apply(pid, effects)
        if self.trace is not None and proto.state != before:
            self.trace.write(
                self.recorders[pid].local("state", self.now, proto.clock.time, state=proto.state)
            )

    def deliver(
        self, sender: int, to: int, msg: Any, msg_id: str, vc: dict | None, copy: bool = False
    ) -> None:
        """Hand ``msg`` to ``to``; ``copy``: a second delivery of a message the network duplicated
        (a scenario's ``duplicate`` step), whose ``recv`` says so (``"copy": true``)."""
        if self.trace is not None:
            proto = self.protocols[to]
            # The receive event is recorded after the handler so `lamport` is the clock after it
            # (and a refused message, ProtocolError, ticks no vector clock: no gap in the trace);
            # effects of the handler come after the recv in the trace.
            rec = self.recorders[to]
            before = proto.state
            effects = proto.on_message(msg)
            event = rec.recv(
                self.now, proto.clock.time, msg.trace_type(), self.names[sender], msg_id, vc or {}
            )
            if copy:
                event["copy"] = True
            self.trace.write(event)
            self.apply(to, effects)
            if proto.state != before:
                self.trace.write(rec.local("state", self.now, proto.clock.time, state=proto.state))
        else:
            self.apply(to, self.protocols[to].on_message(msg))

    # -- effects -------------------------------------------------------------------------
    def apply(self, pid: int, effects: Iterable[Effect]) -> None:
        """Carry out ``pid``'s effects in order: the one place that says what each effect means
        (sim/fastpath.py, the simulator's fast loop, writes out its network ``Send``)."""
        trace = self.trace
        effect: Any  # dispatched on ``kind = type(effect)`` below, which mypy does not narrow through
        for effect in effects:
            kind = type(effect)
            if kind is Send:
                if effect.to == pid:
                    self.feed(pid, lambda p, m=effect.msg: p.on_message(m))
                    continue
                try:
                    unknown = effect.to not in self.protocols
                except TypeError:  # unhashable (a list): no process's id either
                    unknown = True
                if unknown:  # the algorithm's bug (its handler said so): a finding
                    known = ", ".join(str(p) for p in sorted(self.protocols))
                    state = state_text(self.protocols[pid].state)
                    raise UnknownPeer(self.names[pid], state, effect.msg.type, effect.to, known)
                if effect.msg.type not in self.message_types:  # no receiver could decode it: a finding
                    state, known = state_text(self.protocols[pid].state), ", ".join(self.setup.codec.models)
                    raise UnknownMessage(self.names[pid], state, effect.msg.type, known)
                self.messages[effect.msg.type] += 1
                self._sent[pid] += 1
                msg_id = f"{self.names[pid]}#{self._sent[pid]}"
                vc = None
                if trace is not None:
                    body = effect.msg.trace_body() if self.trace_bodies else None
                    traced = effect.msg.trace_type()
                    event = self.recorders[pid].send(
                        self.now, effect.msg.ts, traced, self.names[effect.to], msg_id, body
                    )
                    if traced != effect.msg.type:  # a program's message: the type it travels as
                        event["via"] = effect.msg.type
                    vc = event["vc"]
                    trace.write(event)
                self.transmit(pid, effect.to, effect.msg, msg_id, vc)
            elif kind is Schedule:
                self.schedule(pid, effect.action, effect.dwell)
            elif kind is Enter or kind is Exit:
                if kind is Enter:
                    self.entries[resource_kind(effect.resource)] += 1
                self.holding_changed(pid, effect)
                if trace is not None:
                    fields = {"resource": effect.resource}
                    if effect.units != 1:
                        fields["units"] = effect.units
                    trace.write(
                        self.recorders[pid].local(
                            "enter" if kind is Enter else "exit",
                            self.now,
                            self.protocols[pid].clock.time,
                            **fields,
                        )
                    )
            elif kind is Note:
                self.notes[effect.event] += 1
                self.noted(pid, effect)
                if trace is not None:
                    trace.write(
                        self.recorders[pid].local(
                            effect.event, self.now, self.protocols[pid].clock.time, **effect.fields
                        )
                    )
            else:  # the algorithm's bug (its handler returned it): a finding
                raise NotAnEffect(self.names[pid], state_text(self.protocols[pid].state), effect)

    def undecodable(self, pid: int, msg: Any, exc: MessageError) -> Undecodable:
        """The finding for ``pid``'s ``msg``, whose own JSON does not decode (``Codec.received``
        raised ``exc``): a receiver over the wire would refuse it, so its sender is at fault."""
        why, text = str(exc).removeprefix(f"invalid {msg.type}: "), msg.model_dump_json()
        why += f"; its JSON: {text if len(text) <= 200 else text[:200] + '…'}"  # NaN shows as null
        return Undecodable(self.names[pid], state_text(self.protocols[pid].state), msg.type, why)

    # -- end of run ----------------------------------------------------------------------
    def waiting(self) -> dict[str, dict[str, list[str]]]:
        """Who waits for what from whom, by name, for every process not finished. A process whose
        ``waiting_for()`` raised: ``WaitsRaised`` (the first), once every other one was asked, with
        every such process in its ``unknown`` and what the others wait for in its ``stalled``."""
        report, raised = {}, None
        for pid, proto in sorted(self.protocols.items()):
            if proto.finished:
                continue
            try:
                lacks = waits(proto)
            except WaitsRaised as exc:
                if raised is None:
                    raised = exc
                else:
                    raised.unknown.append(exc.process)
                continue
            report[self.names[pid]] = {
                what: [self.names.get(p, str(p)) for p in whom] for what, whom in lacks.items()
            }
        if raised is not None:
            raised.stalled = report
            raise raised
        return report
