"""SIGTERM as an interrupt: ``Terminated``, the one exception every layer stops on.

A ``mutexlab`` command (``__main__``, from its first import on), the director's programs
(``director.runner.pool_of``) and a service (``transport.service``) all turn SIGTERM into
``Terminated``: a ``KeyboardInterrupt``, so whatever Ctrl-C unwinds SIGTERM unwinds too, carrying
the exit code its catcher returns (143 = 128 + SIGTERM, as a shell reports it; a participant
service 0). Not ``SystemExit``: a solution's handler running when it comes would take it for its
own ``sys.exit()`` (a finding, ``protocol.py``), and the process would go on until SIGKILL.

Imported before anything else of mutexlab's (``__main__``): the standard library only."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

SIGTERM_EXIT = 143  # 128 + SIGTERM


class Terminated(KeyboardInterrupt):  # noqa: N818 - a stop, like KeyboardInterrupt
    """SIGTERM's stop: an interrupt whose catcher exits ``code``."""

    def __init__(self, code: int = SIGTERM_EXIT) -> None:
        super().__init__(code)
        self.code = code


def raise_on_sigterm(code: int = SIGTERM_EXIT) -> Any:
    """From now on SIGTERM raises ``Terminated(code)`` in this process's main thread; the previous
    handler is returned (to put back). A child forked from here (a ``check --swarm`` worker, the
    director of a directed run) is not this process: SIGTERM there ends it as the default does."""
    owner = os.getpid()

    def stop(signum: int, frame: object) -> None:
        if os.getpid() != owner:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        raise Terminated(code)

    return signal.signal(signal.SIGTERM, stop)


@contextmanager
def held() -> Iterator[None]:
    """Ctrl-C and SIGTERM held back while the block runs, then acted on as they came (the first):
    a process started and not yet named to the watcher would be left behind by a stop between
    the two (``director.process``), a compiled module's import would fail with the exception
    (``__main__``). Their handlers are swapped, not their mask: a mask would pass to a child
    started meanwhile, its signals blocked for its life. In the main thread only (where Python
    runs its handlers); elsewhere, as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[tuple[int, Any]] = []
    kinds = (signal.SIGINT, signal.SIGTERM)
    before: dict[int, Any] = {
        kind: signal.signal(kind, lambda signum, frame: came.append((signum, frame))) for kind in kinds
    }
    try:
        yield
    finally:
        for kind, handler in before.items():
            signal.signal(kind, handler)
        if came:
            signum, frame = came[0]
            handler = before[signum]
            if callable(handler):
                handler(signum, frame)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), signum)
