"""Maekawa's request sets (quorums): constructions and validation.

Invariants every accepted family of sets keeps (docs/architecture.md#maekawa): one set per process 1..N, each
holding its owner (``i ∈ S_i``), members within 1..N, and every two sets intersecting
(``S_i ∩ S_j ≠ ∅``), so every pair of processes has a mediator.

Constructions:

* ``plane`` — when N = q²+q+1 with q prime: the lines of the finite projective plane PG(2, q)
  over GF(q). Every set has K = q+1 members, every two meet in exactly one, every process lies
  in exactly K sets. Points and lines are both the N one-dimensional subspaces of GF(q)³; a
  point lies on a line when their dot product is 0. Each process is given a line through it by
  a perfect matching of the (q+1)-regular point–line incidence graph (one exists by Hall).
* ``grid`` — any N: processes fill a grid of ⌈√N⌉ columns row by row (the last row may be
  short); S_i is i's row ∪ i's column. Two sets meet at (row of i, column of j) or at
  (row of j, column of i): at least one of these cells exists, because only the last row is
  short. Sizes are about 2√N − 1.
"""

from __future__ import annotations

import math
from itertools import combinations

from ..setups import ConfigError
from .classic import pid_list, pid_map

Quorums = dict[int, tuple[int, ...]]


def is_prime(q: int) -> bool:
    return q >= 2 and all(q % d for d in range(2, math.isqrt(q) + 1))


def plane_order(n: int) -> int | None:
    """q when n = q²+q+1 with q prime, else None."""
    q = (math.isqrt(4 * n - 3) - 1) // 2 if n >= 1 else 0
    return q if q * q + q + 1 == n and is_prime(q) else None


def _points(q: int) -> list[tuple[int, int, int]]:
    """The N = q²+q+1 points of PG(2, q), each as its normalised vector (first non-zero = 1)."""
    pts = [(1, y, z) for y in range(q) for z in range(q)]
    pts += [(0, 1, z) for z in range(q)]
    pts.append((0, 0, 1))
    return pts


def plane(n: int) -> Quorums:
    """The projective-plane sets for n = q²+q+1, q prime; ConfigError otherwise."""
    q = plane_order(n)
    if q is None:
        raise ConfigError(
            f"a projective plane needs N = q²+q+1 with q prime (7, 13, 31, 57, ...); N = {n} is not"
        )
    pts = _points(q)
    lines = pts  # by duality the same normalised vectors name the lines
    on = [[li for li, line in enumerate(lines) if sum(a * b for a, b in zip(p, line)) % q == 0] for p in pts]
    line_of = _perfect_matching(on, len(lines))
    members = {
        li: tuple(pi for pi, p in enumerate(pts) if sum(a * b for a, b in zip(p, lines[li])) % q == 0)
        for li in range(len(lines))
    }
    return {pi + 1: tuple(sorted(m + 1 for m in members[line_of[pi]])) for pi in range(n)}


def _perfect_matching(adj: list[list[int]], right: int) -> list[int]:
    """A perfect matching left → right (augmenting paths; deterministic)."""
    match_right: list[int | None] = [None] * right

    def augment(u: int, seen: set[int]) -> bool:
        for v in adj[u]:
            if v in seen:
                continue
            seen.add(v)
            if (held := match_right[v]) is None or augment(held, seen):
                match_right[v] = u
                return True
        return False

    for u in range(len(adj)):
        if not augment(u, set()):  # pragma: no cover - regular bipartite graphs always match
            raise ConfigError("no perfect matching of points to lines")
    line_of = [0] * len(adj)
    for v, point in enumerate(match_right):
        if point is None:  # pragma: no cover - as many points as lines: a perfect matching covers all
            raise ConfigError(f"line {v} is matched to no point")
        line_of[point] = v
    return line_of


def grid(n: int) -> Quorums:
    """Row ∪ column on a grid of ⌈√n⌉ columns filled row by row."""
    cols = math.isqrt(n - 1) + 1 if n > 1 else 1
    sets = {}
    for i in range(1, n + 1):
        row, col = divmod(i - 1, cols)
        same_row = range(row * cols + 1, min(n, (row + 1) * cols) + 1)
        same_col = range(col + 1, n + 1, cols)
        sets[i] = tuple(sorted(set(same_row) | set(same_col)))
    return sets


def default(n: int) -> tuple[str, Quorums]:
    """The projective plane when it exists, the grid otherwise."""
    if plane_order(n) is not None:
        return "plane", plane(n)
    return "grid", grid(n)


def validate(sets: Quorums, n: int) -> Quorums:
    """Refuse a family that misses a process, names a stranger, misses an owner or has a disjoint pair."""
    missing = [i for i in range(1, n + 1) if i not in sets]
    if missing:
        raise ConfigError(f"quorums: no set for process(es) {', '.join(map(str, missing))}")
    for i, members in sets.items():
        if not 1 <= i <= n:
            raise ConfigError(f"quorums: process {i} is outside 1..{n}")
        strangers = [m for m in members if not 1 <= m <= n]
        if strangers:
            raise ConfigError(f"quorums: the set of {i} names {strangers[0]}, outside 1..{n}")
        if i not in members:
            raise ConfigError(f"quorums: the set of {i} {sorted(members)} does not contain {i} itself")
    for i, j in combinations(sorted(sets), 2):
        if not set(sets[i]) & set(sets[j]):
            raise ConfigError(
                f"quorums: the sets of {i} {sorted(sets[i])} and {j} {sorted(sets[j])} do not intersect"
            )
    return sets


def from_option(value, n: int) -> tuple[str, Quorums]:
    """The ``quorums`` option: absent (default), ``"plane"``, ``"grid"`` or explicit sets {"1": [1, 2, 3], ...}."""
    if value is None:
        return default(n)
    if value == "plane":
        return "plane", plane(n)
    if value == "grid":
        return "grid", grid(n)
    if not isinstance(value, dict):
        raise ConfigError(
            f'option \'quorums\' must be "plane", "grid" or a map pid → list of pids, got {value!r}'
        )
    sets = read_sets(value, n, "quorums")
    for pid, members in sets.items():
        if len(set(members)) != len(members):
            raise ConfigError(f"quorums: the set of {pid} names a process twice: {members!r}")
    return "explicit", validate({pid: tuple(sorted(members)) for pid, members in sets.items()}, n)


def read_sets(raw, n: int, key: str) -> dict[int, list[int]]:
    """The option ``key``: a set per process 1..n, as pid → list of pids (``{"1": [1, 2], ...}``)."""
    sets = pid_map(
        raw,
        n,
        key,
        'a list of pids, e.g. {"1": [1, 2]}',
        lambda pid, m: pid_list(m, n, f"{key}: the set of {pid}"),
    )
    missing = [i for i in range(1, n + 1) if i not in sets]
    if missing:
        raise ConfigError(f"{key}: no set for process(es) {', '.join(map(str, missing))}")
    return sets
