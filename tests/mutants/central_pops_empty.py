"""A central coordinator (examples/protocols/central.py) whose RELEASE handler pops the queue even when it is empty.

Bug: ``_on_release`` takes ``self.queue.pop(0)`` unconditionally: the first RELEASE with nobody
waiting raises ``IndexError`` in the coordinator's handler — a finding, never a traceback.

Caught by: mutexlab check FILE --nodes 2
Expect: error — node-1 raised IndexError: pop from empty list
"""

import sys
from pathlib import Path

# the correct algorithm this one mutates (docs/your-algorithm.md's), beside the other examples
sys.path.append(str(Path(__file__).resolve().parents[2] / "examples" / "protocols"))

from central import SPEC as CORRECT  # noqa: E402
from central import CentralNode, Grant, Release, Request  # noqa: E402

from mutexlab.protocols.kit import classic_algorithm  # noqa: E402


class EmptyPoppingNode(CentralNode):
    def _on_release(self, msg: Release) -> list:
        self.clock.receive(msg.ts)
        self.holder = None
        return self._grant(self.queue.pop(0))  # the bug: raises IndexError when nobody waits


SPEC = classic_algorithm(
    "mutant-central-pops-empty",
    "central coordinator popping an empty queue",
    EmptyPoppingNode,
    Request,
    Grant,
    Release,
    literature=CORRECT.literature,
)
