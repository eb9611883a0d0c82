"""Stall diagnosis: who waits for whom, cycles in the wait-for graph, and who blocks the rest."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from mutexlab_broken.ricart_agrawala_variants import HoardingRicartAgrawala, MuteNode

from mutexlab.audit.stall import deadlocked_groups, explain_stall, find_cycles, wait_for_graph
from mutexlab.protocols.registry import make_setup
from mutexlab.protocols.ricart_agrawala import RicartAgrawalaNode
from mutexlab.sim import SimConfig, Simulation


def simulate_with(nodes: dict[int, RicartAgrawalaNode], seed: int = 0):
    setup = make_setup("ricart-agrawala", len(nodes), {"requests": 1})
    setup.protocols = nodes
    return Simulation(setup, SimConfig(seed=seed)).run()


def test_nobody_waiting_explains_nothing():
    assert explain_stall({}) == ""


def test_a_deadlocking_variant_in_the_simulator_is_explained_as_a_wait_for_cycle():
    n = 3
    result = simulate_with({pid: HoardingRicartAgrawala(pid, n, requests=1) for pid in range(1, n + 1)})
    assert not result.truncated
    assert set(result.stalled) == {"node-1", "node-2", "node-3"}  # the queue emptied with everyone waiting
    text = explain_stall(result.stalled, result.states)
    lines = text.splitlines()
    assert lines[0] == "stalled: 3 processes cannot finish"
    assert "  node-1 (WANTED) waits for cs: REPLY from node-2, node-3" in lines
    assert "  node-3 (WANTED) waits for cs: REPLY from node-1, node-2" in lines
    assert "deadlock: node-1, node-2, node-3 wait for each other (e.g. node-1 → node-2 → node-1)" in lines
    assert not any(line.startswith("blocked on") for line in lines)


def test_a_silent_peer_is_named_as_the_one_everybody_waits_for():
    nodes = {
        1: RicartAgrawalaNode(1, 3, requests=1),
        2: RicartAgrawalaNode(2, 3, requests=1),
        3: MuteNode(3, 3, requests=0),
    }
    result = simulate_with(nodes, seed=4)
    assert set(result.stalled) == {"node-1", "node-2"}
    text = explain_stall(result.stalled, result.states)
    assert "blocked on node-3: node-3 is not waiting (state RELEASED); waited for by node-1, node-2" in text
    assert "deadlock" not in text  # the waits form a chain ending at node-3, not a cycle


def test_a_peer_nobody_can_see_is_called_lost():
    text = explain_stall(
        {"bee-1": {"ACKflower": ["bee-3"]}, "bee-2": {"ACKreed": ["bee-3"], "ACKflower": ["bee-1"]}}
    )
    assert text.splitlines() == [
        "stalled: 2 processes cannot finish",
        "  bee-1 waits for ACKflower from bee-3",
        "  bee-2 waits for ACKreed from bee-3; ACKflower from bee-1",
        "blocked on bee-3: bee-3 is not waiting: it finished, died or is lost; waited for by bee-1, bee-2",
    ]


def test_waiting_for_oneself_and_waiting_for_nothing():
    text = explain_stall({"a": {"TOKEN": ["a"]}, "b": {}})
    assert "deadlock: a waits for itself" in text
    assert "b has not finished but waits for nothing from anyone" in text
    assert explain_stall({"b": {"X": []}}).splitlines()[-1].startswith("nobody waits for a peer")


def _has_cycle(graph: dict[str, list[str]]) -> bool:
    """Reference: Kahn's algorithm leaves nodes over exactly when there is a cycle."""
    nodes = set(graph) | {p for ps in graph.values() for p in ps}
    indegree = {v: 0 for v in nodes}
    for ps in graph.values():
        for p in set(ps):
            indegree[p] += 1
    ready = [v for v in nodes if indegree[v] == 0]
    seen = 0
    while ready:
        v = ready.pop()
        seen += 1
        for p in set(graph.get(v, [])):
            indegree[p] -= 1
            if indegree[p] == 0:
                ready.append(p)
    return seen < len(nodes)


names = st.sampled_from([f"p{i}" for i in range(7)])


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        names,
        st.dictionaries(st.sampled_from(["REPLY", "TOKEN"]), st.lists(names, max_size=4), max_size=2),
        max_size=7,
    )
)
def test_cycles_found_are_real_and_found_exactly_when_one_exists(stalled):
    graph = wait_for_graph(stalled)
    cycles = find_cycles(graph)
    assert bool(cycles) == _has_cycle(graph)
    for cycle in cycles:
        assert len(set(cycle)) == len(cycle)
        for a, b in zip(cycle, cycle[1:] + cycle[:1]):
            assert b in graph[a], f"{a} → {b} is not a wait in {graph}"
    groups = [set(g) for g, _ in deadlocked_groups(graph)]
    assert all(not (g & h) for i, g in enumerate(groups) for h in groups[i + 1 :])  # disjoint groups
    text = explain_stall(stalled)
    assert bool(stalled) == bool(text)
    assert ("deadlock" in text) == bool(cycles)
