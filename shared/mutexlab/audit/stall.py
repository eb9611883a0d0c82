"""Stall diagnosis: who waits for whom, and whether the waiting closes a cycle.

Input is what drivers collect from ``Protocol.waiting_for()`` by name:
``{waiter: {what: [peers]}}`` (``SimResult.stalled``; the monitor builds the same shape).
The wait-for graph has an edge waiter → peer for every peer it lacks something from. A cycle in
that graph is a deadlock: nobody on it can move until someone else on it does. A peer that is
waited for but waits for nothing itself is named too: it is idle, finished, dead or lost, and
it is the one to look at when there is no cycle.

The text is the same wherever a stall is reported (simulator, monitor, report, explorer), so one
explanation reads the same in every tool. Where the driver knows who holds which resource
(``holding``) and what each waiter waits to enter (``wants``: resources or kinds, as
``sim/stuck.py`` finds them), the explanation names both as ``check``'s deadlock does:
``philosopher-2 (HUNGRY) waits for fork:2 (held by philosopher-1): FORK from philosopher-1`` —
a holder only where one entered, never "held by nobody".
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

from ..findings import Stalled
from ..waiting import UNKNOWN

Node = TypeVar("Node", bound=Hashable)


def _kind(resource: str) -> str:
    return resource.split(":", 1)[0]


def wait_for_graph(stalled: Stalled) -> dict[str, list[str]]:
    """waiter → the distinct peers it waits for, in first-mentioned order."""
    graph: dict[str, list[str]] = {}
    for waiter, lacks in stalled.items():
        peers: list[str] = []
        for whom in lacks.values():
            for peer in whom:
                if peer not in peers:
                    peers.append(peer)
        graph[waiter] = peers
    return graph


def strongly_connected(nodes: Collection[Node], succ: Callable[[Node], Iterable[Node]]) -> list[list[Node]]:
    """Tarjan's strongly connected components of the graph ``nodes`` / ``succ``, edges to a node
    outside ``nodes`` left out. Iterative, so long chains cannot hit Python's recursion limit; the
    stall explanation and the model checker's liveness search (check/properties.py) share it."""
    index: dict[Node, int] = {}
    low: dict[Node, int] = {}
    on: set[Node] = set()
    stack: list[Node] = []
    out: list[list[Node]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(succ(root)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in nodes:
                    continue
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(succ(w))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out


def deadlocked_groups(graph: Mapping[str, Sequence[str]]) -> list[tuple[list[str], list[str]]]:
    """Each group of processes that wait for each other (a strongly connected component with a
    cycle), sorted, with one shortest cycle through its smallest name.

    A cycle lists every node once: ``[a, b, c]`` reads a → b → c → a; ``[a]`` waits for itself.
    """
    components = strongly_connected(set(graph), lambda node: graph[node])
    groups = []
    for component in components:
        members = set(component)
        start = min(component)
        if len(component) == 1:
            if start in graph.get(start, ()):
                groups.append(([start], [start]))
            continue
        groups.append((sorted(component), _cycle_through(start, members, graph)))
    return sorted(groups)


def find_cycles(graph: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """One elementary cycle per deadlocked group, starting at the group's smallest name."""
    return [cycle for _, cycle in deadlocked_groups(graph)]


def _cycle_through(start: str, members: set[str], graph: Mapping[str, Sequence[str]]) -> list[str]:
    """A shortest cycle from ``start`` back to itself inside one strongly connected component."""
    parent: dict[str, str] = {}
    frontier = [start]
    seen = {start}
    while frontier:
        nxt_frontier = []
        for node in frontier:
            for peer in sorted(graph.get(node, ())):
                if peer == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return list(reversed(path))
                if peer in members and peer not in seen:
                    seen.add(peer)
                    parent[peer] = node
                    nxt_frontier.append(peer)
        frontier = nxt_frontier
    return [start]  # unreachable for a real component; kept total


def _join(names: Sequence[str]) -> str:
    return ", ".join(names)


def explain_stall(
    stalled: Stalled,
    states: Mapping[str, str] | None = None,
    holding: Mapping[str, Sequence[str]] | None = None,
    wants: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """A readable account of a stall: what each process lacks from whom, cycles, and culprits.

    ``states`` (name → protocol state), when given, is shown beside each name. ``holding``
    (resource → holders' names) and ``wants`` (waiter → resources or kinds it waits to enter),
    when given or carried by a ``Stall``, name what each holds and waits for, and who holds that.
    Returns ``""`` when nobody is stuck.
    """
    if not stalled:
        return ""
    states = states or {}
    holding = holding if holding is not None else getattr(stalled, "holding", {})
    wants = wants if wants is not None else getattr(stalled, "wants", {})
    holds: dict[str, list[str]] = {}
    for resource, holders in holding.items():
        for holder in holders:
            holds.setdefault(holder, []).append(resource)

    def who(name: str) -> str:
        said = [states[name]] if name in states else []
        said += [f"holding {_join(holds[name])}"] if name in holds else []
        return f"{name} ({', '.join(said)})" if said else name

    def target(name: str) -> str:
        """``fork:2 (held by philosopher-1): `` — what ``name`` waits to enter, and its holders."""
        wanted = list(wants.get(name, ()))
        if not wanted:
            return ""
        others = sorted(
            {h for r, hs in holding.items() if r in wanted or _kind(r) in wanted for h in hs} - {name}
        )
        return _join(wanted) + (f" (held by {_join(others)})" if others else "") + ": "

    lines = [f"stalled: {len(stalled)} process{'es' if len(stalled) != 1 else ''} cannot finish"]
    for waiter in sorted(stalled):
        lacks = stalled[waiter]
        wanted = [(what, list(whom)) for what, whom in lacks.items() if whom]
        if UNKNOWN in lacks:
            lines.append(
                f"  {who(waiter)} has not finished; what it waits for is unknown: its waiting_for() raised"
            )
            continue
        if not wanted:
            lines.append(f"  {who(waiter)} has not finished but waits for nothing from anyone")
            continue
        parts = [f"{what} from {_join(whom)}" for what, whom in wanted]
        lines.append(f"  {who(waiter)} waits for {target(waiter)}" + "; ".join(parts))
    graph = wait_for_graph(stalled)
    for group, cycle in deadlocked_groups(graph):
        if len(cycle) == 1:
            lines.append(f"deadlock: {cycle[0]} waits for itself")
            continue
        loop = " → ".join(cycle + [cycle[0]])
        if len(group) == len(cycle):
            lines.append(f"deadlock: wait-for cycle {loop}")
        else:
            lines.append(f"deadlock: {_join(group)} wait for each other (e.g. {loop})")
    waited_on = sorted({peer for peers in graph.values() for peer in peers})
    blockers = [p for p in waited_on if not graph.get(p)]
    for peer in blockers:
        waiters = sorted(w for w, peers in graph.items() if peer in peers)
        held = f", holding {_join(holds[peer])}" if peer in holds else ""
        if UNKNOWN in stalled.get(peer, {}):
            status = "has not finished; what it waits for is unknown" + held
        elif peer in stalled:
            status = "has not finished yet waits for nothing" + held
        elif peer in states:
            status = f"is not waiting (state {states[peer]}" + (
                f", holding {_join(holds[peer])})" if peer in holds else ")"
            )
        else:
            status = "is not waiting: it finished, died or is lost"
        lines.append(f"blocked on {peer}: {peer} {status}; waited for by {_join(waiters)}")
    if not any(graph.values()) and not any(UNKNOWN in lacks for lacks in stalled.values()):
        lines.append("nobody waits for a peer: the stuck processes have nothing left to receive")
    return "\n".join(lines)
