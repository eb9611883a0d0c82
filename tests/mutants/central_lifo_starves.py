"""A central coordinator (examples/protocols/central.py) that serves its queue newest first (a stack).

Bug: ``_on_release`` grants ``self.queue.pop()``, the last asker, instead of the first. With
three nodes asking forever, two of them pass the grant between them while the third, queued
at the bottom, waits forever in a cycle that is fair to every other step: starvation, which a
bounded workload cannot show (every run ends), an endless one does.

For the endless worlds to be finite the node keeps its clock at 0 (it never reads a stamp)
and its ``snapshot()`` leaves out the kit's ``entries`` count, which only grows.

Caught by: mutexlab check FILE --nodes 3 --endless
Expect: liveness — waits forever
"""

import sys
from pathlib import Path

# the correct algorithm this one mutates (docs/your-algorithm.md's), beside the other examples
sys.path.append(str(Path(__file__).resolve().parents[2] / "examples" / "protocols"))

from central import SPEC as CORRECT  # noqa: E402
from central import CentralNode, Grant, Release, Request  # noqa: E402

from mutexlab.protocols.kit import classic_algorithm  # noqa: E402


class StoppedClock:
    """A Lamport clock that stays at 0: every message is stamped 0."""

    time = 0

    def tick(self) -> int:
        return 0

    def receive(self, stamp: int) -> int:
        return 0


class NewestFirstNode(CentralNode):
    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.clock = StoppedClock()  # endless worlds, finite: no stamp grows

    def snapshot(self) -> tuple:
        return (self.state, self.requests_left, self.holder, tuple(self.queue))

    def _on_release(self, msg: Release) -> list:
        self.clock.receive(msg.ts)
        self.holder = None
        return self._grant(self.queue.pop()) if self.queue else []  # the bug: newest first


SPEC = classic_algorithm(
    "mutant-central-lifo-starves",
    "central coordinator serving newest first",
    NewestFirstNode,
    Request,
    Grant,
    Release,
    literature=CORRECT.literature,
)
