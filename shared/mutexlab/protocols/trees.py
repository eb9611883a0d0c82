"""Raymond's trees (raymond.py): the default heap shape, the ``parents`` option checked to be a
tree, and the HOLDER pointers toward the token.

A tree is given as child → parent, its one root without a parent; every process reaches the
root by following parents (no cycle).
"""

from __future__ import annotations

from ..setups import ConfigError
from .classic import is_pid, pid_map


def default_parents(processes: int) -> dict[int, int]:
    """A balanced (heap-shaped) tree: the parent of i is i // 2; the root is 1."""
    return {i: i // 2 for i in range(2, processes + 1)}


def read_parents(raw, processes: int) -> dict[int, int]:
    """The option ``parents``, ``{"child": parent, ...}`` (the root absent or null), checked to be a
    tree; absent: ``default_parents``."""
    if raw is None:
        return default_parents(processes)

    def parent(child: int, value) -> int | None:
        if value is not None and not is_pid(value, processes):
            raise ConfigError(
                f"parents: the parent of {child} must be a pid in 1..{processes}, got {value!r}"
            )
        if value == child:
            raise ConfigError(f"parents: process {child} cannot be its own parent")
        return value

    given = pid_map(raw, processes, "parents", 'its parent pid, e.g. {"2": 1, "3": 1}', parent)
    parents = {child: p for child, p in given.items() if p is not None}
    roots = [p for p in range(1, processes + 1) if p not in parents]
    if len(roots) != 1:
        raise ConfigError(
            f"parents: a tree has exactly one root (a process without a parent), found {len(roots)}: {roots}"
        )
    for start in parents:
        path = [start]
        while path[-1] in parents:
            path.append(parents[path[-1]])
            if path[-1] in path[:-1]:
                cycle = path[path.index(path[-1]) :]
                raise ConfigError(f"parents: not a tree, there is a cycle {' → '.join(map(str, cycle))}")
    return parents


def holders_toward(parents: dict[int, int], token_holder: int) -> dict[int, int]:
    """HOLDER_i for every i: the first hop on the tree path from i to the token holder — its parent,
    except on the path from the token holder up to the root, whose edges point down instead."""
    holder = dict(parents)
    node: int | None = token_holder
    below = token_holder
    while node is not None:
        holder[node], below, node = below, node, parents.get(node)
    return holder
