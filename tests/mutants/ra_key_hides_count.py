"""Ricart–Agrawala (_ricart_agrawala.py, beside it) that stops answering after its second deferral, under a key that ignores the count.

Bug: the node counts the requests it has deferred in ``deferrals`` and, once it has deferred two,
leaves the critical section without answering them ("a quota"): the asker waits forever.

The file also declares a canonical key without ``deferrals`` ("only counted, never read") —
false for this code, whose exit reads it: two states the key merges can differ in what their
exit sends. A wrong declaration must not buy a wrong verdict: here the search, with the key
applied, still reaches the deadlock, and the counterexample replays on the real code (which
no key touches).

Caught by: mutexlab check FILE --nodes 2 --requests 2
Expect: deadlock — nothing can move
"""

from _ricart_agrawala import Reply, Request, RicartAgrawalaNode

from mutexlab.protocols.kit import Canonical, Reductions, classic_algorithm


class QuotaNode(RicartAgrawalaNode):
    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.deferrals = 0  # requests I deferred so far

    def _defer(self, sender: int) -> None:
        super()._defer(sender)
        self.deferrals += 1

    def _release(self) -> list:
        if self.deferrals >= 2:  # the bug: past the quota, nobody is answered
            self.mine, self.deferred = None, []
            return []
        return super()._release()


def _key(node: QuotaNode) -> tuple:
    return tuple(part for part in node.snapshot() if part[0] not in ("deferrals", "entries"))


# The declaration the bug makes false: ``deferrals`` is read by the exit.
REDUCTIONS = Reductions(
    frozenset({QuotaNode}),
    canonical=Canonical(_key, "`deferrals` and `entries` are only counted; no handler reads them"),
)

SPEC = classic_algorithm(
    "mutant-ra-key-hides-count",
    "Ricart–Agrawala with a deferral quota its key hides",
    QuotaNode,
    Request,
    Reply,
    reductions=REDUCTIONS,
)
