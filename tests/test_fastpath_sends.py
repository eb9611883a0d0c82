"""The simulator's fast loop reads the type of a broadcast's message once for its P − 1 sends
(``sim/fastpath.py``): ``tests/test_fastpath.py`` holds the loop to the plain one on every
algorithm's seeded runs; here broken variants of that reading are caught there too."""

from __future__ import annotations

import pytest
from test_fastpath import CONFIGS, PlainSimulation, broken_run, observe

from mutexlab.sim import Simulation
from mutexlab.sim import fastpath as sim_fastpath

FAULT_FREE = [c for c in CONFIGS if not c[-1] and c[3] == 0]
BROKEN = {
    "the first message's type kept for the others": ("if msg is not prev:", "if prev is _NO_MESSAGE:"),
    "a send of the type before counted for a new message": ("kind = msg.type", "kind = kind or msg.type"),
}


def test_the_broadcast_reading_runs_where_the_fast_loop_runs():
    # bees and elves broadcast one message to all; their runs take the fast loop (test_fastpath.py)
    assert {c[0] for c in FAULT_FREE} >= {"bees", "elves", "ricart-agrawala"}


@pytest.mark.parametrize("name", BROKEN)
def test_a_broken_broadcast_reading_is_caught(name, monkeypatch):
    old, new = BROKEN[name]
    monkeypatch.setattr(sim_fastpath, "run", broken_run(old, new))
    caught = [
        c for c in FAULT_FREE if observe(Simulation, c, "untraced") != observe(PlainSimulation, c, "untraced")
    ]
    assert caught, f"no configuration told the broken fast loop ({name}) from the plain one"
