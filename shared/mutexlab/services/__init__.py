"""The service entry points: ``main(role)`` for bee, elf, mayor, node and monitor.

Thin by design (docs/architecture.md#layering): read the configuration from the environment, set up logging,
hand over to a transport participant or the monitor. ``services/<role>/main.py`` in the
repository (used by docker compose and by ``mutexlab run``) calls ``main(role)``; so does
``python -m mutexlab.services ROLE``.

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
    from ..transport.membership import ROLES

    return (*ROLES, "monitor")


def main(role: str) -> int:
    if role not in roles():
        print(
            f"mutexlab service: unknown role {role!r}; choose one of: {', '.join(roles())}", file=sys.stderr
        )
        return 2
    from ..transport.settings import MonitorSettings, ParticipantSettings, load

    try:
        settings = load(MonitorSettings if role == "monitor" else ParticipantSettings)
        logging.basicConfig(
            level=settings.log_level.upper(),
            stream=sys.stderr,
            format="%(asctime)s %(levelname)s %(message)s",
        )
        logging.getLogger("pika").setLevel(logging.ERROR)
        service: Service
        if role == "monitor":
            from ..transport.monitor import Monitor

            service = Monitor(settings)
        else:
            from ..transport.participant import Participant

            service = Participant(role, settings)
    except (ConfigError, ValueError) as exc:
        print(f"mutexlab {role}: {exc}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143 if role == "monitor" else 0))
    try:
        return service.run()
    except KeyboardInterrupt:
        return 130
