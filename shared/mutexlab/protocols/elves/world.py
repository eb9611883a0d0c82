"""The elves' state invariant for ``check``: an elf holds pins only while holding a contract and
poison only while holding pins. (Pins, poison, one elf per contract are capacities, which the
model checks for every family.) It reads only the holdings."""

from __future__ import annotations

from typing import Any

from ...spec import WorldInvariant


def holds(model: Any, world: tuple[Any, ...]) -> tuple[str, list[str]] | None:
    held: dict[int, set[str]] = {}
    for rid, i, _ in model.holdings(world):
        held.setdefault(i, set()).add(model.resources[rid].split(":", 1)[0])
    for i, kinds in held.items():
        name = model.names[model.pids[i]]
        if "pins" in kinds and "contract" not in kinds:
            return f"{name} holds pins without a contract", [name]
        if "poison" in kinds and "pins" not in kinds:
            return f"{name} holds poison without pins", [name]
    return None


INVARIANT = WorldInvariant(holds, "pins only with a contract, poison only with pins")
