"""Ricart–Agrawala (_ricart_agrawala.py, beside it) that orders requests by timestamp alone, without the pid to break ties.

Bug: a WANTED node defers every request whose stamp is not below its own (``<=`` on the stamps),
so two requests with equal stamps each defer the other: both nodes wait forever.

Caught by: mutexlab check FILE --nodes 2
Expect: deadlock — nothing can move
"""

from _ricart_agrawala import Reply, Request, RicartAgrawalaNode

from mutexlab.protocols.kit import classic_algorithm


class StampOnlyNode(RicartAgrawalaNode):
    def _mine_first(self, msg: Request) -> bool:
        return self.mine[0] <= msg.ts  # the bug: equal stamps, and no pid to break the tie


SPEC = classic_algorithm(
    "mutant-ra-stamp-only-priority",
    "Ricart–Agrawala ordering by timestamp alone",
    StampOnlyNode,
    Request,
    Reply,
)
