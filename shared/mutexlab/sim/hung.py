"""A handler that never returns (an endless loop in the algorithm's code) is a finding, not a hang.

While a simulation runs in the main thread, a watchdog thread looks at the main thread's stack
every ``LOOK_EVERY`` seconds (``sys._current_frames``: nothing is added to the event loop, whose
speed is the simulator's). When the outermost frame of the algorithm's own files is one and the
same call for ``SECONDS``, the watchdog interrupts the main thread (``_thread.interrupt_main``
with a handler of its own), which raises ``HandlerHung`` inside that loop: the protocol's dispatch
makes it a ``HandlerError`` like any other exception of a handler — the process, the input, the
state and the line of the algorithm's file where it was running.
"""

from __future__ import annotations

import _thread
import ctypes
import signal
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from types import FrameType
from typing import Any

SECONDS = 30.0  # how long one call of a handler may run before it is taken for an endless loop
LOOK_EVERY = 0.25  # seconds between the watchdog's looks (at most; a quarter of SECONDS if less)
_SIGNAL = getattr(signal, "SIGUSR1", signal.SIGINT)  # (check's budget trips SIGUSR2)


class HandlerHung(Exception):  # noqa: N818 - the name a finding shows: "raised HandlerHung: …"
    """Raised inside a handler that ran for ``SECONDS`` without returning (in another thread than
    the main one it is raised by its class, made without arguments: the message is its own)."""

    def __init__(self, *args: object) -> None:
        super().__init__(
            *(args or (f"the handler ran for {SECONDS:g} s without returning (an endless loop?)",))
        )


def outermost(
    frame: FrameType | None, files: frozenset[str], outside: frozenset[int] = frozenset()
) -> FrameType | None:
    """The outermost frame of ``frame``'s stack whose code is in one of ``files``, or None; the
    frames of ``outside`` (ids: the stack that entered ``watch_handlers``) and below are not
    looked at — a file of the algorithm that drives the run itself is no handler running."""
    found = None
    while frame is not None and id(frame) not in outside:
        if frame.f_code.co_filename in files:
            found = frame
        frame = frame.f_back
    return found


def innermost(frame: FrameType | None, files: frozenset[str]) -> FrameType | None:
    """The innermost frame of ``frame``'s stack whose code is in one of ``files``, or None."""
    while frame is not None and frame.f_code.co_filename not in files:
        frame = frame.f_back
    return frame


@contextmanager
def watch_handlers(files: Iterable[str], seconds: float | None = None) -> Iterator[None]:
    """Watch the handlers of ``files`` (the algorithm's source files) while the block runs: the
    calls of theirs made inside the block (not the frames that entered it). In the main thread
    by a signal; in another thread (no signal reaches it) by an exception set in that thread."""
    files = frozenset(files)
    entered = _stack()  # held, so that no frame made in the block takes one of their ids
    outside = frozenset(map(id, entered))
    limit = SECONDS if seconds is None else seconds
    if not files:
        yield
        return
    if threading.current_thread() is not threading.main_thread():
        with _watch_thread(files, limit, outside):
            yield
        return
    tripped = threading.Event()
    timed: list[FrameType | None] = [None]  # the call the watchdog tripped on

    def trip(signum: int, frame: Any) -> None:
        if tripped.is_set():
            tripped.clear()
            if outermost(frame, files, outside) is not timed[0]:
                return  # it returned between the watchdog's look and now: nothing hangs
            hung = HandlerHung(f"the handler ran for {limit:g} s without returning (an endless loop?)")
            inner = innermost(frame, files)  # the line of the algorithm's file it was running
            if inner is not None:
                code = inner.f_code
                hung.raised_where = f"{code.co_filename}:{inner.f_lineno} (in {code.co_name})"  # type: ignore[attr-defined]
            raise hung

    try:
        previous = signal.signal(_SIGNAL, trip)
    except ValueError:  # (not the main thread after all)
        yield
        return
    done = threading.Event()
    main = threading.main_thread().ident
    thread = threading.Thread(
        target=_watch, args=(done, tripped, timed, main, files, limit, outside), daemon=True
    )
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        signal.signal(_SIGNAL, previous)
        timed[0] = None


def _watch(
    done: threading.Event,
    tripped: threading.Event,
    timed: list[FrameType | None],
    main: int | None,
    files: frozenset[str],
    limit: float,
    outside: frozenset[int],
    target: int | None = None,
) -> None:
    """Look at thread ``main``'s stack; trip ``tripped`` when one call of ``files`` runs ``limit``
    seconds: by a signal to the main thread, or (``target``, another thread's id) by an exception
    set in that thread."""
    held: FrameType | None = None  # the call being timed (a strong reference: its id is not reused)
    since = 0.0
    while not done.wait(min(LOOK_EVERY, limit / 4)):
        frame = outermost(sys._current_frames().get(main or 0), files, outside)  # noqa: SLF001 - the documented way to see another thread's stack
        now = time.monotonic()
        if frame is not held:
            held, since = frame, now
        elif frame is not None and now - since >= limit and (target is not None or not tripped.is_set()):
            # (``tripped``: the main thread's handler clears it; set in a thread, it stays set for
            # ``_watch_thread`` to withdraw one not taken, and each ``limit`` sets the exception again)
            timed[0] = frame
            tripped.set()
            if target is None:
                _thread.interrupt_main(_SIGNAL)
            else:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(target), ctypes.py_object(HandlerHung)
                )
            since = now  # once per limit: a handler that catches it is tripped again later
        del frame


@contextmanager
def _watch_thread(files: frozenset[str], limit: float, outside: frozenset[int]) -> Iterator[None]:
    """``watch_handlers`` in a thread no signal reaches (the explorer's requests): the exception is
    set asynchronously in that thread (``PyThreadState_SetAsyncExc``), and withdrawn if the block
    ends before the thread takes it."""
    done, tripped = threading.Event(), threading.Event()
    timed: list[FrameType | None] = [None]
    me = threading.get_ident()
    thread = threading.Thread(
        target=_watch, args=(done, tripped, timed, me, files, limit, outside, me), daemon=True
    )
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if tripped.is_set():  # not taken yet (it returned just then): withdrawn
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(me), None)
        timed[0] = None


def _stack() -> tuple[FrameType, ...]:
    """This thread's frames, from the caller's up."""
    frames = []
    frame: FrameType | None = sys._getframe(1)  # noqa: SLF001 - the documented way to see the stack
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    return tuple(frames)


def watching(setup: Any | None) -> AbstractContextManager[None]:
    """``watch_handlers`` of ``setup``'s own files (``algorithm_files``); nothing without a setup."""
    return watch_handlers(algorithm_files(setup) if setup is not None else ())


def algorithm_files(setup: Any) -> frozenset[str]:
    """The source files of ``setup``'s own classes outside mutexlab (a solution's file): the code
    ``watch_handlers`` times. A built-in algorithm has none."""
    files = set()
    for proto in setup.protocols.values():
        for cls in type(proto).__mro__:
            if cls is object or cls.__module__.startswith("mutexlab."):
                continue
            path = getattr(sys.modules.get(cls.__module__), "__file__", None)
            if path:
                files.add(path)
    return frozenset(files)
