"""Running one role of a run in this process: ``serve(role)`` for each participant role and the monitor.

Reads the configuration from the environment, sets up logging, hands over to a transport
participant or the monitor. The service entry points (``mutexlab.services``, ``services/<role>/main.py``)
call it, and so does a service forked by ``mutexlab run`` (``supervisor.py``).

Exit codes: 0 done (or refused by membership), 1 the monitor found a safety violation
or a rejected input, 2 bad configuration, 3 the run stalled, never started, or the broker was unreachable.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Protocol

from ..interrupts import Terminated, raise_on_sigterm
from ..setups import ConfigError

# A service's log lines: the time, the level, the message; nothing of where a call was made
# (``spare_log_records``).
LOG_FORMAT = "%(asctime)s %(levelname)s %(message)s"


class Service(Protocol):
    """What a role runs: the monitor or a participant; ``run()`` returns the exit code."""

    def run(self) -> int: ...


def roles(algorithm: str | None = None) -> tuple[str, ...]:
    """Every participant role of a registered algorithm (membership's), those of ``algorithm``
    (a module or file's: its own may be new), and the monitor. Raises ConfigError."""
    from .membership import ROLES

    own = tuple(r for r in _own_roles(algorithm) if r not in ROLES)
    return (*ROLES, *own, "monitor")


def _own_roles(algorithm: str | None) -> tuple[str, ...]:
    """The roles of ``algorithm`` (none without it). Raises ConfigError."""
    if not algorithm:
        return ()
    from ..protocols.registry import solution

    return solution(algorithm).spec.roles


def spare_log_records() -> None:
    """``LOG_FORMAT`` shows the time, the level and the message alone: each record is spared the
    look at its caller's frame, thread and process that no line would show (the logging HOWTO's
    "Optimization" flags; a state line 9.6 -> 7.7 µs, docs/benchmarks.md#state-lines)."""
    logging._srcfile = None  # noqa: SLF001 - the HOWTO names this flag
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False


def stop_on_sigterm(code: int) -> None:
    """SIGTERM raises ``Terminated(code)`` in the main thread (``serve`` returns ``code``)."""
    raise_on_sigterm(code)


def serve(role: str) -> int:
    from .spawn import watch_parent_from_environment

    watch_parent_from_environment()  # started by ``mutexlab run``: ends with it (SIGKILL included)
    algorithm = os.environ.get("ALGORITHM")
    try:
        # a file's roles count once it loads; every role there is, only when it is none of them
        known = ("monitor", *_own_roles(algorithm))
        if role not in known:
            known = roles(algorithm)
    except ConfigError as exc:
        print(f"mutexlab {role}: {exc}", file=sys.stderr)
        return 2
    if role not in known:
        print(f"mutexlab service: unknown role {role!r}; choose one of: {', '.join(known)}", file=sys.stderr)
        return 2
    from ..bus.amqp import quiet_pika
    from .settings import MonitorSettings, ParticipantSettings, load, resolvable_nodes

    try:
        settings = load(MonitorSettings if role == "monitor" else ParticipantSettings)
        logging.basicConfig(
            level=settings.log_level.upper(),
            stream=sys.stderr,
            format=LOG_FORMAT,
        )
        spare_log_records()
        quiet_pika()
        if settings.skip_unresolved_nodes:
            settings, absent = resolvable_nodes(settings)
            if absent:
                logging.info("AMQP_URL: %s left out (no such host: not started)", ", ".join(absent))
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
    stop_on_sigterm(143 if role == "monitor" else 0)
    try:
        return service.run()
    except Terminated as stop:  # before KeyboardInterrupt: it is one
        return stop.code
    except KeyboardInterrupt:
        return 130
