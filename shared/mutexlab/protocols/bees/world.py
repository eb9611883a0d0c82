"""The bees' state invariant for ``check``: a bee lays at most ``eggs`` eggs, a reed receives at
most ``cocoons``, a bee on a flower holds a reed. (One bee per reed and K on flowers are
capacities, which the model checks for every family.)"""

from __future__ import annotations

from typing import Any

from ...spec import WorldInvariant


def holds(model: Any, world: tuple[Any, ...]) -> tuple[str, list[str]] | None:
    per_reed: dict[int, list[int]] = {}
    for i in range(model.n):
        bee = model.objects[world[i]]
        name = model.names[model.pids[i]]
        if bee.laid > bee.eggs:
            return f"{name} laid {bee.laid} eggs (at most {bee.eggs})", [name]
        if bee.reed:
            per_reed.setdefault(bee.reed, []).append(i)
        if bee.state == "ON_FLOWER" and not bee.reed:
            return f"{name} is on a flower without a reed", [name]
    for reed, layers in per_reed.items():
        cocoons = model.objects[world[0]].cocoons
        eggs = sum(model.objects[world[i]].laid for i in layers)
        if eggs > cocoons:
            return (
                f"reed:{reed} received {eggs} eggs (at most {cocoons})",
                [model.names[model.pids[i]] for i in layers],
            )
    return None


INVARIANT = WorldInvariant(
    holds,
    "eggs per bee and per reed, flowers only from a reed",
    lambda bee: (bee.laid, bee.reed, bee.state == "ON_FLOWER"),
)
