"""Running one role of a run in this process: ``serve(role)`` for bee, elf, mayor, node and monitor.

Reads the configuration from the environment, sets up logging, hands over to a transport
participant or the monitor. The service entry points (``mutexlab.services``, ``services/<role>/main.py``)
call it, and so does a service forked by ``mutexlab run`` (``supervisor.py``).

Exit codes: 0 done (or refused by membership), 1 the monitor found a safety violation,
2 bad configuration, 3 the run stalled, never started, or the broker was unreachable.
"""

from __future__ import annotations

import logging
import signal
import sys
from typing import Protocol

from ..setup import ConfigError


class Service(Protocol):
    """What a role runs: the monitor or a participant; ``run()`` returns the exit code."""

    def run(self) -> int: ...


def roles() -> tuple[str, ...]:
    """Every participant role of a registered algorithm (membership's), and the monitor."""
    from .membership import ROLES

    return (*ROLES, "monitor")


def serve(role: str) -> int:
    if role not in roles():
        print(
            f"mutexlab service: unknown role {role!r}; choose one of: {', '.join(roles())}", file=sys.stderr
        )
        return 2
    from .amqp import quiet_pika
    from .settings import MonitorSettings, ParticipantSettings, load

    try:
        settings = load(MonitorSettings if role == "monitor" else ParticipantSettings)
        logging.basicConfig(
            level=settings.log_level.upper(),
            stream=sys.stderr,
            format="%(asctime)s %(levelname)s %(message)s",
        )
        quiet_pika()
        service: Service
        if role == "monitor":
            from .monitor import Monitor

            service = Monitor(settings)
        else:
            from .participant import Participant

            service = Participant(role, settings)
    except (ConfigError, ValueError) as exc:
        print(f"mutexlab {role}: {exc}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143 if role == "monitor" else 0))
    try:
        return service.run()
    except KeyboardInterrupt:
        return 130
