"""How the next step of a run is chosen. A strategy hands out one ``chooser`` per run
(``next_run``, None when it has nothing more to try) and hears how the run went (``ran``).

* ``Random``: each step uniformly among the enabled ones, a fresh seed per run;
* ``PCT``: probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010) over the run's
  *chains* (a node's workload; the messages of one link): random priorities, the highest
  enabled chain moves, and at d−1 random steps the chain that moves drops below all others. A
  bug of depth d is found with probability at least 1/(n·k^(d−1)) per run (n chains, k steps);
* ``Systematic``: depth-first search over the tree of choices, stateless: every run restarts
  the programs and replays a prefix, then takes the first choice at every new step; the next run
  changes the deepest choice that has an untried sibling. ``exhausted`` when none is left.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from .world import Action

Chooser = Callable[[int, list[Action]], Action | None]


@dataclass
class Ran:
    """What the search tells a strategy after a run: the index of every choice among its options."""

    trail: list[tuple[int, int]]  # per step: (chosen index, number of enabled steps)
    digests: list[str] = field(default_factory=list)


class Random:
    name = "random"
    exhaustive = False

    def __init__(self, seed: int) -> None:
        self.seed, self.count = seed, 0

    def next_run(self) -> Chooser | None:
        rng = random.Random(f"random:{self.seed}:{self.count}")
        self.count += 1
        return lambda depth, enabled: enabled[rng.randrange(len(enabled))]

    def ran(self, result: Ran) -> None:
        pass

    def expected(self) -> list[str]:
        return []


def chain(action: Action) -> tuple[str, int, str]:
    """The chain a step belongs to: a node's workload, or one link's (or one duplicate's) messages."""
    kind, node, ident = action
    if kind in ("request", "release"):
        return ("workload", node, "")
    if kind == "deliver":
        return ("link", node, ident.rsplit("#", 1)[0])
    return (kind, node, ident)


class PCT:
    name = "pct"
    exhaustive = False

    def __init__(self, seed: int, depth: int) -> None:
        self.seed, self.depth, self.count = seed, depth, 0
        self.length = 20  # k: the steps of the longest run so far (change points fall within it)

    def next_run(self) -> Chooser | None:
        rng = random.Random(f"pct:{self.seed}:{self.count}")
        self.count += 1
        changes = sorted(rng.sample(range(self.length), min(self.depth - 1, self.length)))
        low = {step: rank for rank, step in enumerate(changes)}  # below every initial priority
        priority: dict[tuple[str, int, str], float] = {}

        def choose(depth: int, enabled: list[Action]) -> Action:
            for action in enabled:
                if chain(action) not in priority:
                    priority[chain(action)] = self.depth + rng.random()
            best = max(enabled, key=lambda a: priority[chain(a)])
            if depth in low:
                priority[chain(best)] = low[depth]
            return best

        return choose

    def ran(self, result: Ran) -> None:
        self.length = max(self.length, len(result.trail))

    def expected(self) -> list[str]:
        return []


class Systematic:
    name = "systematic"
    exhaustive = True

    def __init__(self) -> None:
        self.prefix: list[tuple[int, int]] = []
        self.previous: list[str] = []  # the last run's answer digests
        self.done = False
        self.started = False

    def next_run(self) -> Chooser | None:
        if self.done:
            return None
        self.started = True
        prefix = [index for index, _ in self.prefix]

        def choose(depth: int, enabled: list[Action]) -> Action:
            index = prefix[depth] if depth < len(prefix) else 0
            return enabled[min(index, len(enabled) - 1)]

        return choose

    def expected(self) -> list[str]:
        """Answers the next run must repeat: every input before its changed choice is the same."""
        return self.previous

    def ran(self, result: Ran) -> None:
        trail = list(result.trail)
        inits = len(result.digests) - len(trail)
        while trail and trail[-1][0] + 1 >= trail[-1][1]:
            trail.pop()
        if not trail:
            self.done = True
            return
        index, options = trail[-1]
        trail[-1] = (index + 1, options)
        self.prefix = trail
        self.previous = result.digests[: inits + len(trail) - 1]  # the inits and the unchanged steps
