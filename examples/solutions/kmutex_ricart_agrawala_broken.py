"""k-Ricart–Agrawala, broken on purpose: it enters after N−K−1 replies, one too few.

Among K+1 nodes, the one with the lowest priority may now enter without an answer from any of
the K ahead of it: K+1 inside at once. ``mutexlab check kmutex`` finds the shortest way there.
"""

from kmutex_ricart_agrawala import KRicartAgrawalaNode, Reply, Request

from mutexlab.protocols.kit import classic_algorithm


class TooEagerNode(KRicartAgrawalaNode):
    def needed(self) -> int:
        return self.n - self.k - 1  # one answer short


SPEC = classic_algorithm(
    "k-ricart-agrawala-broken",
    "k-Ricart–Agrawala entering after N−K−1 replies: more than K inside",
    TooEagerNode,
    Request,
    Reply,
    problem="kmutex",
)
