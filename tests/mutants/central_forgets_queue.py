"""A central coordinator (examples/protocols/central.py) that frees the grant on RELEASE but never serves its queue.

Bug: ``_on_release`` clears ``holder`` and returns nothing: a node queued behind the holder
waits forever.

Caught by: mutexlab check FILE --nodes 2
Expect: deadlock — nothing can move; waiting: node-2 for cs: GRANT from a sender its waiting_for() does not name
"""

import sys
from pathlib import Path

# the correct algorithm this one mutates (docs/your-algorithm.md's), beside the other examples
sys.path.append(str(Path(__file__).resolve().parents[2] / "examples" / "protocols"))

from central import SPEC as CORRECT  # noqa: E402
from central import CentralNode, Grant, Release, Request  # noqa: E402

from mutexlab.protocols.kit import classic_algorithm  # noqa: E402


class QueueForgettingNode(CentralNode):
    def _on_release(self, msg: Release) -> list:
        self.clock.receive(msg.ts)
        self.holder = None
        return []  # the bug: the queue is never served


SPEC = classic_algorithm(
    "mutant-central-forgets-queue",
    "central coordinator that never serves its queue",
    QueueForgettingNode,
    Request,
    Grant,
    Release,
    literature=CORRECT.literature,
)
