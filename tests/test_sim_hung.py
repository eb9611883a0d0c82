"""``sim/hung.py``: a handler that catches the watchdog's ``HandlerHung`` and loops on is tripped
again once per ``SECONDS``, in the main thread (a signal) and in another (an exception set in it)."""

from __future__ import annotations

import threading
import time

from mutexlab.sim import hung


def _stubborn(caught: list, until: float) -> None:
    """Busy-waits, catching ``HandlerHung`` once and spinning on; returns after the second."""
    while len(caught) < 2 and time.monotonic() < until:
        try:
            while time.monotonic() < until:
                pass
        except hung.HandlerHung:
            caught.append(time.monotonic())


def test_a_handler_that_catches_the_first_trip_is_tripped_again_in_another_thread(monkeypatch):
    """Before, the watchdog of a thread (the explorer's requests) tripped once: a handler that
    caught it spun for ever, holding the explorer's lock."""
    monkeypatch.setattr(hung, "SECONDS", 0.3)
    caught: list = []

    def body() -> None:
        with hung.watch_handlers({__file__}):
            _stubborn(caught, time.monotonic() + 8)

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    thread.join(12)
    assert not thread.is_alive() and len(caught) == 2, caught


def test_a_handler_that_catches_the_first_trip_is_tripped_again_in_the_main_thread(monkeypatch):
    monkeypatch.setattr(hung, "SECONDS", 0.3)
    caught: list = []
    with hung.watch_handlers({__file__}):
        _stubborn(caught, time.monotonic() + 8)
    assert len(caught) == 2, caught


def test_a_file_of_the_algorithm_that_drives_the_run_is_no_handler_running(monkeypatch):
    """The frames that entered the watch are not timed: a script (or test) of the algorithm's own
    file that runs a long simulation itself was interrupted, HandlerHung raised in the simulator
    with no handler running, once the run passed ``SECONDS``."""
    monkeypatch.setattr(hung, "SECONDS", 0.3)
    until = time.monotonic() + 1.5
    with hung.watch_handlers({__file__}):
        while time.monotonic() < until:  # the driver's own work, in this file: no handler of it
            pass
    caught: list = []
    with hung.watch_handlers({__file__}):  # a call of this file made inside the block still is
        _stubborn(caught, time.monotonic() + 8)
    assert len(caught) == 2, caught
