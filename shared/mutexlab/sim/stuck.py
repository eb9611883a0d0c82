"""Who waits, for which resource, held by whom: a world where nothing can move, in words.

``waiting_for()`` says what a process lacks and from whom (``REPLY from node-2``); this adds what
it waits to enter and who holds that now, where the protocol or the problem knows it:

* the resource kind ``wants()`` names (bees: ``reed``, ``flower``; elves: ``contract``, ``pins``,
  ``poison``), any resource of that kind (``reed:1``) counted;
* a dining philosopher's forks it does not hold (the problem says which are its own);
* otherwise the problem's one resource (``cs`` of mutex and k-mutex), when it has one.

``node-3 for cs (held by nobody): REPLY from node-2``; ``bee-2 (holding reed:2) for flower (held
by bee-1): ACKflower from bee-1``; without a resource known, as before: ``node-3 REPLY from node-2``. Used by ``check``'s deadlock finding and by the
exhaustive exploration of the tests (``sim/explore.py``).
"""

from __future__ import annotations

from typing import Any

from ..problems.philosopher import Philosopher
from ..problems.philosophers import fork
from ..protocol import Protocol
from ..words import lacks


def _kind(resource: str) -> str:
    return resource.split(":", 1)[0]


def wanted(proto: Any, resources: list[str], held: list[str]) -> list[str]:
    """What ``proto`` waits to enter: resource names (``cs``, ``fork:2``) or kinds (``reed``);
    empty when neither it nor its problem says."""
    if isinstance(proto, Philosopher):
        return [fork(f) for f in (proto.left, proto.right) if fork(f) not in held]
    if type(proto).wants is not Protocol.wants:
        kind = proto.wants()
        return [] if kind is None else [kind]
    kinds = {_kind(r) for r in resources}
    return sorted(kinds) if len(kinds) == 1 else []


def stuck_said(model: Any, world: tuple) -> str:
    """Every unfinished process of ``world`` (a ``WorldModel``'s) in words, ``; `` between them."""
    holding: dict[int, list[tuple[str, int]]] = {}
    for rid, i, count in model.holdings(world):
        holding.setdefault(i, []).append((model.resources[rid], count))

    def units(resource: str, u: int) -> str:
        return resource if u == 1 and model.capacity[model.res_ids[resource]] == 1 else f"{resource}×{u}"

    out = []
    for i in range(model.n):
        if model.finished(world[i]):
            continue
        said = model.names[model.pids[i]]
        mine = [r for r, _ in holding.get(i, [])]
        if mine:
            said += f" (holding {', '.join(units(r, u) for r, u in holding[i])})"
        wants = wanted(model.objects[world[i]], list(model.setup.capacities), mine)
        if wants:
            holders = [
                model.names[model.pids[j]]
                for j, held in sorted(holding.items())
                if j != i and any(r in wants or _kind(r) in wants for r, _ in held)
            ]
            said += f" for {', '.join(wants)} (held by {', '.join(holders) or 'nobody'}):"
        what = model.waiting(world[i])
        out.append(
            f"{said} {lacks({k: [model.names.get(p, str(p)) for p in whom] for k, whom in what.items()})}"
        )
    return "; ".join(out)
