"""Ricart–Agrawala (_ricart_agrawala.py, beside it) that takes a second copy of a deferred REQUEST as its withdrawal.

Bug: a REQUEST from a node already deferred removes it from the deferred list ("asked twice:
it gave up"). On FIFO links that deliver each message once this never happens and the
algorithm is correct; on links that duplicate, the reply is forgotten and the asker waits
forever.

Caught by: mutexlab check FILE --nodes 2 --duplicate 1
Expect: deadlock — nothing can move; waiting: node-2 for cs: REPLY from a sender
"""

from dataclasses import replace

from _ricart_agrawala import Reply, Request, RicartAgrawalaNode

from mutexlab.protocols.kit import HELD, RELEASED, WANTED, classic_algorithm, ignore

ROWS = RicartAgrawalaNode.TABLE.rows


class DuplicateCancelsNode(RicartAgrawalaNode):
    # links that duplicate: a second copy of a REPLY is taken and ignored, not refused
    TABLE = replace(
        RicartAgrawalaNode.TABLE,
        rows={
            RELEASED: {
                **ROWS[RELEASED],
                "REPLY": ignore("a second copy of a REPLY I was served by", "_receive"),
            },
            WANTED: ROWS[WANTED],
            HELD: {**ROWS[HELD], "REPLY": ignore("a second copy of a REPLY I entered by", "_receive")},
        },
        never="",
    )

    def _on_request(self, msg: Request) -> list:
        if msg.sender in self.deferred:  # the bug: a duplicate cancels the deferral
            self.clock.receive(msg.ts)
            self.deferred.remove(msg.sender)
            return []
        return super()._on_request(msg)


SPEC = classic_algorithm(
    "mutant-ra-duplicate-cancels",
    "Ricart–Agrawala dropping a request seen twice",
    DuplicateCancelsNode,
    Request,
    Reply,
)
