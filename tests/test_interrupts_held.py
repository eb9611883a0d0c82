"""``interrupts.held``: Ctrl-C and SIGTERM wait for the end of a block that must not be cut in two.

A node started and not yet named to the watcher was left behind, stopped, when mutexlab was
stopped between the two (seen once in a full run: ``test_director_outsiders``'s deaf node, its
launcher stopped, parent init, five minutes later). ``NodeProcess`` starts a node inside
``held()``: the stop comes once the watcher knows the node.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from mutexlab import interrupts


def test_a_ctrl_c_inside_the_block_comes_after_it():
    done = []
    with pytest.raises(KeyboardInterrupt), interrupts.held():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # a handler would have run by now
        done.append("the rest of the block")
    assert done == ["the rest of the block"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back


def test_a_sigterm_inside_the_block_is_terminated_after_it():
    before = interrupts.raise_on_sigterm()
    try:
        done = []
        with pytest.raises(interrupts.Terminated), interrupts.held():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            done.append("the rest of the block")
        assert done == ["the rest of the block"]
    finally:
        signal.signal(signal.SIGTERM, before)


def test_nothing_comes_when_nothing_came():
    with interrupts.held():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
