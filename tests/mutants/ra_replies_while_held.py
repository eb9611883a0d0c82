"""Ricart–Agrawala (_ricart_agrawala.py, beside it) that answers a REQUEST at once while it is inside the critical section.

Bug: only a WANTED node with priority defers; a HELD node replies like a RELEASED one, so the
asker enters while this node is still inside — two nodes in the critical section.

Caught by: mutexlab check FILE --nodes 2
Expect: capacity — cs (capacity 1) held by node-1×1, node-2×1
"""

from _ricart_agrawala import Reply, Request, RicartAgrawalaNode

from mutexlab.protocols.kit import WANTED, classic_algorithm


class RepliesInsideNode(RicartAgrawalaNode):
    def _on_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        if self.state is WANTED and self._mine_first(msg):  # the bug: a HELD node does not defer
            self._defer(msg.sender)
            return []
        return [self._reply(msg.sender)]


SPEC = classic_algorithm(
    "mutant-ra-replies-while-held",
    "Ricart–Agrawala replying while inside",
    RepliesInsideNode,
    Request,
    Reply,
)
