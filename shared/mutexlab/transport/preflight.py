"""Before a run starts (``mutexlab run``): the broker's checks and the services' imports, together.

Three things wait on another process: the broker's room for the run's connections
(``headroom.refusal``: its management API over HTTP), whether the broker answers at all
(``supervisor.broker_problem``: one connection) and, for a run without ``--logs``, the start of
the watcher that removes its temporary directory (``watcher.start``: a small interpreter). Each
runs on a thread of its own while this thread imports what the forked services need
(``spawn.preload``), instead of one after the other before it.

Invariants: the answers are taken in the order the checks had one after the other (a refusal
before an unreachable broker); a bad ``--management-url`` is refused before any thread starts
or the broker is touched; every thread is joined before ``check`` returns, so the services are
forked from a process with one thread (``spawn.can_fork``). When the imports raise (Ctrl-C, a
solution that does not import), nothing will be forked: the error goes up at once, without
waiting for the broker's checks (daemon threads, gone with the command).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import cast

from .. import watcher
from . import headroom
from .spawn import can_fork, preload
from .supervisor import Plan, broker_problem


class _Call(threading.Thread):
    """``fn()`` on a thread; ``result()`` joins it and returns its value or raises its exception."""

    def __init__(self, fn: Callable[[], object]) -> None:
        super().__init__(daemon=True)
        self.fn = fn
        self.value: object = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.value = self.fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller by result()
            self.error = exc

    def result(self) -> object:
        self.join()
        if self.error is not None:
            raise self.error
        return self.value


def check(plan: Plan, management_url: str | None) -> tuple[str | None, str | None]:
    """(why the broker has no room for the run, why it cannot be used), each None when fine.
    ValueError for a bad ``management_url``, raised before anything is asked."""
    headroom.management_url(plan.amqp_url, management_url)  # ValueError: bad input, nothing asked
    fork = can_fork()  # asked before this function's threads start: as the supervisor will find it
    connections = len(plan.roles()) + 2  # every process holds one, and so does this command while it checks
    calls = [
        _Call(lambda: headroom.refusal(plan.amqp_url, connections, management_url)),
        _Call(lambda: broker_problem(plan.amqp_url)),
    ]
    if not plan.logs:
        calls.append(_Call(watcher.start))
    for call in calls:
        call.start()
    if fork:
        preload(plan.resolved())  # Ctrl-C here leaves at once: nothing is forked, the threads are daemons
    for call in calls:
        call.join()
    too_many, problem = cast("str | None", calls[0].result()), cast("str | None", calls[1].result())
    for call in calls[2:]:
        call.result()
    return too_many, problem
