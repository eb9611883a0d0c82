"""The monitor's stop at a run's end, without a broker: what it publishes and when.

Transient delivery: participants consume their queues without acks, so a stop lost with a
connection is gone; the monitor sends it again every second until every final status is in.
Persistent delivery: the broker keeps the stop until it is acked, so it is sent once.
"""

from __future__ import annotations

import io

import pytest

from mutexlab.transport import monitor as monitor_module
from mutexlab.transport.monitor import Monitor, Outcome
from mutexlab.transport.settings import MonitorSettings


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class SilentBus:
    """A bus whose participants never answer: each poll lets its timeout pass on the fake clock."""

    channel = None
    reconnects = 0
    forged = 0
    redelivered = 0
    forgeries: list[str] = []

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.published: list[tuple[float, str, dict, bool]] = []

    def publish(self, key: str, body: dict, mandatory: bool = True) -> None:
        self.published.append((self.clock.now, key, body, mandatory))

    def poll(self, timeout: float) -> list:
        self.clock.now += timeout
        return []


def _stopped(delivery: str, monkeypatch) -> SilentBus:
    clock = FakeClock()
    monkeypatch.setattr(monitor_module.time, "monotonic", clock)
    settings = MonitorSettings(
        amqp_url="amqp://127.0.0.1:1/%2F",
        run_id="offline",
        algorithm="ricart-agrawala",
        processes=2,
        delivery=delivery,
    )
    monitor = Monitor(settings, out=io.StringIO())
    bus = SilentBus(clock)
    monitor.bus = bus  # type: ignore[assignment] - no broker: what would be sent is kept
    monitor._stop(Outcome(run_id="offline", algorithm="ricart-agrawala", processes=2, complete=True))  # noqa: SLF001
    return bus


def test_a_transient_run_sends_its_stop_again_every_second_until_the_finals_are_in(monkeypatch):
    bus = _stopped("transient", monkeypatch)
    stops = [(t, mandatory) for t, key, body, mandatory in bus.published if body.get("kind") == "stop"]
    assert all(key == "control.all" for _, key, _, _ in bus.published)
    assert len(stops) >= 3, f"one stop and at least two again in the 3 s wait, got {stops}"
    assert stops[0][1] is True and all(m is False for _, m in stops[1:]), "again: not mandatory"
    gaps = [b - a for (a, _), (b, _) in zip(stops, stops[1:])]
    assert all(1.0 <= g <= 1.3 for g in gaps), gaps


def test_a_persistent_run_sends_its_stop_once(monkeypatch):
    bus = _stopped("persistent", monkeypatch)
    stops = [body for _, _, body, _ in bus.published if body.get("kind") == "stop"]
    assert len(stops) == 1, stops


@pytest.mark.parametrize("delivery", ["transient", "persistent"])
def test_the_stop_wait_ends_at_its_deadline_when_no_final_status_comes(delivery, monkeypatch):
    bus = _stopped(delivery, monkeypatch)
    first = bus.published[0][0]
    assert bus.clock.now - first < 3.5, "the wait for final statuses is bounded (3 s)"
