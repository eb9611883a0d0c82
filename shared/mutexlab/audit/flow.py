"""Maximum flow and its minimum cut in pure Python, for the capacity audit's small networks.

``capacity.max_antichain`` solves its flow with scipy's compiled Dinic when the network is large
and scipy is installed (the ``fast`` extra), else here: importing numpy and scipy costs about
1.4 s, more than this solves a few hundred intervals in, and without them the audit stays exact.
Both give the same value and the same cut (tests/test_capacity_flow.py, side by side).

Dinic's algorithm: BFS levels from the source, then blocking flows by DFS along increasing
levels, until the sink is unreachable. The cut is what the source reaches in the final residual
network. Capacities are integers; ``INF`` marks an uncapacitated edge.
"""

from __future__ import annotations

from collections import deque

INF = 2**62


class Network:
    """A directed network on nodes 0..n−1; each edge has its reverse at index ``e ^ 1``."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.head: list[list[int]] = [[] for _ in range(n)]  # node → its edges' indices
        self.to: list[int] = []
        self.cap: list[int] = []  # residual capacity

    def add(self, u: int, v: int, cap: int) -> None:
        self.head[u].append(len(self.to))
        self.to.append(v)
        self.cap.append(cap)
        self.head[v].append(len(self.to))
        self.to.append(u)
        self.cap.append(0)

    def _levels(self, source: int) -> list[int]:
        level = [-1] * self.n
        level[source] = 0
        queue = deque([source])
        while queue:
            u = queue.popleft()
            for e in self.head[u]:
                v = self.to[e]
                if self.cap[e] > 0 and level[v] < 0:
                    level[v] = level[u] + 1
                    queue.append(v)
        return level

    def _push(self, source: int, sink: int, level: list[int], nxt: list[int]) -> int:
        """One augmenting path along increasing levels (iterative DFS); its flow, or 0."""
        path: list[int] = []  # edge indices from the source
        u = source
        while True:
            if u == sink:
                pushed = min(self.cap[e] for e in path)
                for e in path:
                    self.cap[e] -= pushed
                    self.cap[e ^ 1] += pushed
                return pushed
            edges = self.head[u]
            while nxt[u] < len(edges):
                e = edges[nxt[u]]
                v = self.to[e]
                if self.cap[e] > 0 and level[v] == level[u] + 1:
                    break
                nxt[u] += 1
            else:  # dead end: retreat, and never try this node again in this phase
                if not path:
                    return 0
                level[u] = -1
                e = path.pop()
                u = self.to[e ^ 1]
                nxt[u] += 1
                continue
            path.append(edges[nxt[u]])
            u = self.to[edges[nxt[u]]]

    def max_flow(self, source: int, sink: int) -> int:
        total = 0
        while True:
            level = self._levels(source)
            if level[sink] < 0:
                return total
            nxt = [0] * self.n
            while pushed := self._push(source, sink, level, nxt):
                total += pushed

    def reached(self, source: int) -> list[bool]:
        """The nodes the source reaches in the residual network (after ``max_flow``: the cut)."""
        return [lv >= 0 for lv in self._levels(source)]
