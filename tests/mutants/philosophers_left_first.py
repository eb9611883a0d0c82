"""The textbook philosophers: each starts with its left fork and keeps what it holds while hungry.

Written on Chandy–Misra's messages (examples/solutions/chandy_misra.py): a philosopher asks its
neighbour for a missing fork with REQFORK and gets it as FORK.

Bug: every philosopher starts holding its left fork (the symmetric placement, where Chandy–Misra
gives each fork to the lower-numbered neighbour), and a hungry philosopher keeps every fork it
holds until it has eaten. All hungry at once, each holds its left fork and waits for its right
one, which its neighbour keeps: a cycle of waits.

Caught by: mutexlab check FILE --philosophers 3
Expect: deadlock — nothing can move; waiting: philosopher-1 for fork:2: FORK from philosopher-2
"""

import sys
from pathlib import Path

# the solution whose messages and table this one reuses, beside the other examples
sys.path.append(str(Path(__file__).resolve().parents[2] / "examples" / "solutions"))

from chandy_misra import ChandyMisra, Fork, ReqFork  # noqa: E402

from mutexlab.protocols.kit import THINKING, philosophers_algorithm  # noqa: E402


class LeftFirst(ChandyMisra):
    def __init__(self, pid: int, n: int, meals: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, meals, clock)
        self.have = {self.left: True, self.right: False}  # the bug: everyone holds its left fork
        self.token = {self.left: False, self.right: True}

    def _on_reqfork(self, msg: ReqFork) -> list:
        self.clock.receive(msg.ts)
        self.token[msg.fork] = True
        if self.state is not THINKING:  # the bug: hungry, it keeps the fork
            return []
        return [self._give(msg.fork)]


SPEC = philosophers_algorithm(
    "mutant-philosophers-left-first",
    "philosophers starting with the left fork, keeping it while hungry",
    LeftFirst,
    ReqFork,
    Fork,
)
