"""A central coordinator (examples/protocols/central.py) that grants every REQUEST, whoever holds the grant.

Bug: ``_on_request`` grants at once without looking at ``holder``: the second asker enters
while the first is inside.

Caught by: mutexlab check FILE --nodes 2
Expect: capacity — cs (capacity 1) held by node-1×1, node-2×1
"""

import sys
from pathlib import Path

# the correct algorithm this one mutates (docs/your-algorithm.md's), beside the other examples
sys.path.append(str(Path(__file__).resolve().parents[2] / "examples" / "protocols"))

from central import SPEC as CORRECT  # noqa: E402
from central import CentralNode, Grant, Release, Request  # noqa: E402

from mutexlab.protocols.kit import classic_algorithm  # noqa: E402


class GrantingNode(CentralNode):
    def _on_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        return self._grant(msg.sender)  # the bug: busy or not


SPEC = classic_algorithm(
    "mutant-central-grants-always",
    "central coordinator granting every request",
    GrantingNode,
    Request,
    Grant,
    Release,
    literature=CORRECT.literature,
)
