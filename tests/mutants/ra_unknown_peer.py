"""Ricart–Agrawala (_ricart_agrawala.py, beside it) that asks one node too many: pids 1..N+1.

Bug: ``_others()``, the nodes a REQUEST goes to, runs over ``range(1, self.n + 2)``: a message
to a process that does not exist. The setup has N nodes, so the send names an unknown peer.

Caught by: mutexlab check FILE --nodes 2
Expect: error — sent REQUEST to process 3, which is not one of this setup's (1, 2)
"""

from _ricart_agrawala import Reply, Request, RicartAgrawalaNode

from mutexlab.protocols.kit import classic_algorithm


class OneTooManyNode(RicartAgrawalaNode):
    def _others(self) -> list:
        return [j for j in range(1, self.n + 2) if j != self.pid]  # the bug: N + 1


SPEC = classic_algorithm(
    "mutant-ra-unknown-peer",
    "Ricart–Agrawala asking a node that does not exist",
    OneTooManyNode,
    Request,
    Reply,
)
