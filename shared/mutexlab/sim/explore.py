"""Exhaustive exploration: every interleaving that FIFO links and local decisions allow.

The worlds and steps are ``world.py``'s (the model checker's too, without its reductions); each
distinct world is expanded once, depth-first. Checked in every reachable world: no resource
holds more units than its capacity (these are real global states, so occupancy is exact). A
world with no step left is *final* when every process is ``finished``, otherwise a *deadlock*.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..setups import Setup
from ..words import count
from .stuck import stuck_said
from .world import WorldModel


@dataclass
class ExploreFinding:
    kind: str  # "violation", "deadlock" or "error"
    message: str
    path: list[str]  # the steps from the initial world


@dataclass
class Exploration:
    states: int = 0
    transitions: int = 0
    finals: int = 0
    max_depth: int = 0
    complete: bool = True
    violations: list[ExploreFinding] = field(default_factory=list)
    deadlocks: list[ExploreFinding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.complete and not self.violations and not self.deadlocks

    def summary(self) -> str:
        return (
            f"{count(self.states, 'state')}, {count(self.transitions, 'transition')}, "
            f"{count(self.finals, 'final state')}, depth {self.max_depth}, "
            f"{count(len(self.violations), 'violation')}, {count(len(self.deadlocks), 'deadlock')}"
            + ("" if self.complete else " (INCOMPLETE: state limit reached)")
        )


def explore(
    setup_factory: Callable[[], Setup], max_states: int = 200_000, max_findings: int = 5
) -> Exploration:
    """Explore every reachable world of ``setup_factory()`` (a fresh setup with a bounded workload)."""
    model = WorldModel(setup_factory())
    start, overfull = model.initial()
    result = Exploration()
    parents: dict[tuple, tuple[tuple, tuple] | None] = {start: None}  # world → (parent, step)

    def path_to(world: tuple, last: tuple | None = None) -> list[str]:
        out = [] if last is None else [model.describe(last)]
        while (parent := parents[world]) is not None:
            world, label = parent
            out.append(model.describe(label))
        return out[::-1]

    if overfull is not None:
        result.violations.append(ExploreFinding("violation", overfull, []))
    stack: list[tuple[Any, int]] = [(start, 0)]
    while stack:
        world, depth = stack.pop()
        result.states += 1
        result.max_depth = max(result.max_depth, depth)
        labels = model.steps(world)
        if not labels:
            if model.all_finished(world):
                result.finals += 1
            elif len(result.deadlocks) < max_findings:
                result.deadlocks.append(
                    ExploreFinding(
                        "deadlock",
                        f"nothing can move; waiting: {stuck_said(model, world)}",
                        path_to(world),
                    )
                )
            continue
        for label in labels:
            nxt, transition, overfull = model.step(world, label)
            if nxt is None:  # the process refused the input
                result.violations.append(
                    ExploreFinding("error", str(transition.error), path_to(world, label))
                )
                continue
            result.transitions += 1
            if overfull is not None:
                if len(result.violations) < max_findings:
                    result.violations.append(ExploreFinding("violation", overfull, path_to(world, label)))
                continue
            if nxt in parents:
                continue
            if len(parents) >= max_states:
                result.complete = False
                return result
            parents[nxt] = (world, label)
            stack.append((nxt, depth + 1))
    return result
