"""The hamster killers' elves (``mutexlab.protocols.elves``, docs/elves.md) ordering requests by stamp alone.

An elf takes pins (then poison) when the units the requests ordered before its own ask for leave
enough for its need; requests are ordered by (timestamp, pid).

Bug: ``units_ahead`` orders by timestamp alone, dropping the pid that breaks ties: two elves
whose requests carry the same stamp each count the other as behind it, and both take the one
safety pin.

Caught by: mutexlab check FILE --elves 2 --pins 1 --poison 2 --contracts 2 --hamsters 1-2
Expect: capacity — pins (capacity 1)
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mutexlab.protocols import elves
from mutexlab.setups import Setup

NAME = "mutant-elves-stamp-only-ahead"


class StampOnlyElf(elves.Elf):
    def units_ahead(self, kind: str) -> int:
        mine = self.my_request  # (ts, pid)
        assert mine is not None
        # the bug: ``priority(ts, pid) < mine`` compared on the stamps only
        return sum(units for pid, (ts, units) in self.queues[kind].items() if ts < mine[0])


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    setup = elves.make_setup(processes, options, seed)
    for proto in setup.protocols.values():
        if type(proto) is elves.Elf:
            proto.__class__ = StampOnlyElf
    return replace(setup, algorithm=NAME)


SPEC = replace(elves.SPEC, name=NAME, summary="elves ordering requests by stamp alone", make_setup=make_setup)
