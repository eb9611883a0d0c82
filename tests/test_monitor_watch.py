"""The monitor's watch over a run, without a broker: a stall is judged on what has come in, never
while deliveries wait unread behind the monitor's own slow work (the queues' leases)."""

from __future__ import annotations

import io
import time
from types import SimpleNamespace

from mutexlab.transport import monitor as monitor_module
from mutexlab.transport.monitor import Monitor
from mutexlab.transport.settings import MonitorSettings


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_what_came_while_the_leases_were_renewed_is_read_before_a_stall_is_judged(monkeypatch):
    """Renewing the leases is a round trip per queue: 16-20 s for 52 queues at load 54, longer
    than ``STALL_TIMEOUT`` (15 s), while the participants' trace batches kept coming. The monitor
    judged the run stalled before reading them (bees P = 50, docs/benchmarks.md#frame-decode)."""
    clock = FakeClock()
    monkeypatch.setattr(monitor_module.time, "monotonic", clock)
    settings = MonitorSettings(
        amqp_url="amqp://127.0.0.1:1/%2F", run_id="offline", algorithm="ricart-agrawala", processes=2
    )
    monitor = Monitor(settings, out=io.StringIO())
    waiting: list[str] = []
    heard: list[str] = []

    class Bus:
        def poll(self, timeout: float) -> list[str]:
            got = waiting[:]
            waiting.clear()
            if not got:
                clock.now += timeout
            return got

    def renew() -> None:  # slower than the stall timeout; a batch with new events comes meanwhile
        clock.now += settings.stall_timeout + 5
        waiting.append("batch")

    def dispatch(delivery: str) -> None:
        heard.append(delivery)
        monitor.feed.last_progress = time.monotonic()

    monitor.bus = Bus()  # type: ignore[assignment]
    monitor.setup = SimpleNamespace(names={})  # type: ignore[assignment]
    monkeypatch.setattr(monitor, "_renew_leases", renew)
    monkeypatch.setattr(monitor, "_dispatch", dispatch)
    monkeypatch.setattr(monitor.feed, "complete", lambda names: bool(heard))
    monkeypatch.setattr(monitor, "_outcome", lambda complete, rejected=False: (complete, heard[:]))
    assert monitor._watch() == (True, ["batch"])  # noqa: SLF001
