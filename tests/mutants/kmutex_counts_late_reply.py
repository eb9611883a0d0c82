"""k-mutual exclusion à la Ricart–Agrawala (examples/solutions/kmutex_ricart_agrawala.py) counting late replies.

A node enters once N−K of the others have answered its REQUEST; a REPLY echoes the stamp of the
request it answers.

Bug: ``_on_reply`` counts every REPLY, without comparing the stamp it echoes with the current
request's. A node that entered on N−K answers leaves K−1 answers in flight; asking again, it
counts those late ones for its new request and enters without the answers that keep the count
inside at K: K+1 nodes in the critical section.

Breadth-first: the shortest way there is 13 steps, found after some 60,000 worlds, where the
depth-first search wanders much deeper first.

Caught by: mutexlab check FILE --nodes 3 -k 2 --requests 2 --search bfs
Expect: capacity — cs (capacity 2) held by node-1×1, node-2×1, node-3×1
"""

import sys
from pathlib import Path

# the correct solution this one mutates, beside the other examples
sys.path.append(str(Path(__file__).resolve().parents[2] / "examples" / "solutions"))

from kmutex_ricart_agrawala import SPEC as CORRECT  # noqa: E402
from kmutex_ricart_agrawala import KRicartAgrawalaNode, Reply, Request  # noqa: E402

from mutexlab.protocols.kit import classic_algorithm  # noqa: E402


class LateCountingNode(KRicartAgrawalaNode):
    def _on_reply(self, msg: Reply) -> list:
        self.clock.receive(msg.ts)
        self.answered.add(msg.sender)  # the bug: ``msg.answers == self.mine[0]`` unchecked
        return self._enter() if len(self.answered) >= self.needed() else []


SPEC = classic_algorithm(
    "mutant-k-ricart-agrawala-counts-late-reply",
    "k-Ricart–Agrawala counting a reply to an earlier request",
    LateCountingNode,
    Request,
    Reply,
    problem="kmutex",
    literature=CORRECT.literature,
)
