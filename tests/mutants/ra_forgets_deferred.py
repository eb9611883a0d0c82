"""Ricart–Agrawala (_ricart_agrawala.py, beside it) that forgets the requests it deferred when it leaves.

Bug: on exit the deferred list is emptied without a REPLY to anyone: a node that asked while
this one was inside waits forever.

Caught by: mutexlab check FILE --nodes 2
Expect: deadlock — nothing can move; waiting: node-2 for cs: REPLY from a sender
"""

from _ricart_agrawala import Reply, Request, RicartAgrawalaNode

from mutexlab.protocols.kit import classic_algorithm


class ForgetfulNode(RicartAgrawalaNode):
    def _release(self) -> list:
        self.mine = None
        self.deferred = []  # the bug: nobody is answered
        return []


SPEC = classic_algorithm(
    "mutant-ra-forgets-deferred",
    "Ricart–Agrawala forgetting its deferred requests",
    ForgetfulNode,
    Request,
    Reply,
)
