"""How a participant's protocol object is driven (participant.py): the simulator's ``Driver`` with
RabbitMQ as the network and real timers, the sink that collects a step's trace events, and the
step's state changes waiting for their log lines."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from ..bus.amqp import LOST
from ..show import state_text
from ..sim.driver import Driver

log = logging.getLogger("mutexlab.participant")


class AuditSink:
    """Where the Driver writes trace events: collected, in effect order, for the input's batch.
    ``recorded`` counts them all (each ticks the process's own vector entry once: it is the entry of
    the last one), so a status can say how much of the trace the monitor must have heard."""

    def __init__(self) -> None:
        self.events: list[dict] = []
        self.recorded = 0

    def write(self, event: dict) -> None:
        if event["event"] == "run":
            return  # the monitor writes the run header
        self.events.append(event)
        self.recorded += 1

    def take(self) -> list[dict]:
        events, self.events = self.events, []
        return events


class ServiceDriver(Driver):
    """The simulator's effect semantics, with RabbitMQ as the network and real timers."""

    def __init__(self, participant: Any, setup) -> None:
        super().__init__(setup, trace=participant.audit, trace_bodies=True)
        self.participant = participant

    def transmit(self, sender: int, to: int, msg: Any, msg_id: str, vc: dict | None) -> None:
        self.participant.send_protocol(to, msg, msg_id, vc)

    def schedule(self, pid: int, action: str, dwell: str) -> None:
        self.participant.add_timer(action, dwell)


class StateLines:
    """A step's state changes, logged once the step's publish is written out, on one line
    (``name state S lamport L``, and ``, state S lamport L`` for each further change of the step,
    in order): a log line takes about 20 µs of a busy host's CPU, and a zero-dwell critical
    section makes three changes in the step whose publish lets the next process enter
    (docs/benchmarks.md#state-lines). Nothing is kept, nor the I/O turned, when the logger would
    drop the line (``LOG_LEVEL`` above INFO)."""

    def __init__(self) -> None:
        self.name = ""
        self.changes: list[str] = []

    def add(self, name: str, state: Any, lamport: int) -> None:
        if not log.isEnabledFor(logging.INFO):
            return
        self.name = name
        self.changes.append(
            f"state {state_text(state)} lamport {lamport}"
        )  # as the trace says it, when it changed

    def log(self, bus: Any = None) -> None:
        """Log the changes; with ``bus`` (``rabbit.Bus``), after a zero-wait turn of its I/O, which
        writes what the step published (the next poll would; a lost connection is left to it)."""
        if not self.changes:
            return
        if bus is not None and bus.conn is not None:
            with contextlib.suppress(*LOST):
                bus.conn.process_data_events(0)
        changes, self.changes = self.changes, []
        log.info("%s %s", self.name, ", ".join(changes))
