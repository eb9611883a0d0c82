"""How a participant's protocol object is driven (participant.py): the simulator's ``Driver`` with
RabbitMQ as the network and real timers, and the sink that collects a step's trace events."""

from __future__ import annotations

from typing import Any

from ..sim.driver import Driver


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
