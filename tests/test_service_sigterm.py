"""SIGTERM stops a service even while a solution's handler runs: since a handler's own
``sys.exit()`` is a finding (protocol.py takes SystemExit), the stop must not be a SystemExit."""

from __future__ import annotations

import os
import signal
from enum import StrEnum
from typing import Any, Literal

import pytest

from mutexlab.machine import Table, on
from mutexlab.messages import Message
from mutexlab.protocol import Protocol
from mutexlab.transport import service


class Ping(Message):
    type: Literal["PING"] = "PING"


class On(StrEnum):
    ON = "ON"


class Busy(Protocol):
    """A node whose handler is running when the supervisor's SIGTERM comes."""

    TABLE = Table(On, {On.ON: {"PING": on("log", "_ping")}})

    def __init__(self) -> None:
        self.pid, self.state, self.log = 1, On.ON, []

    def _ping(self, msg: Any) -> list:
        os.kill(os.getpid(), signal.SIGTERM)
        return []


def test_sigterm_inside_a_handler_stops_the_service_not_a_finding():
    previous = signal.getsignal(signal.SIGTERM)
    try:
        service.stop_on_sigterm(0)
        with pytest.raises(service.Terminated) as stop:
            Busy().on_message(Ping(sender=2, ts=0))
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert stop.value.code == 0
