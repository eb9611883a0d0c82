"""How the next step of a run is chosen. A strategy hands out one ``chooser`` per run
(``next_run``, None when it has nothing more to try) and hears how the run went (``ran``).

* ``Random``: each step uniformly among the enabled ones, a fresh seed per run;
* ``PCT``: probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010) over the run's
  *chains* (a node's workload; the messages of one link): random priorities, the highest
  enabled chain moves, and at d−1 random steps the chain that moves drops below all others. A
  bug of depth d is found with probability at least 1/(n·k^(d−1)) per run (n chains, k steps);
* ``Systematic``: search over the tree of choices, stateless: every run restarts the programs
  and replays a prefix, then takes the first choice at every new step; the next run changes the
  deepest choice that has an untried sibling within the deviation bound, which grows once the
  bound's schedules are all run (iterative deviation bounding), pruned by sleep sets (steps
  given to different nodes commute). ``exhausted`` when none is left.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .world import Action

Chooser = Callable[[int, list[Action]], Action | None]


@dataclass
class Lingers:
    """Linger steps that changed nothing (``Run.quiet_linger``, docs/mpi.md#linger), not offered
    again. ``exact`` (a systematic search): by the step's id, the rank's state — the same loop in
    the same state goes round alike; the search stops a run at a quiet one, whose world is the one
    before it, explored by its siblings. Else (a random or pct sample) by the place the rank's
    loops wait alone: a loop that went round once without giving up is not lingered again there,
    an economy a sample may make."""

    exact: bool
    quiet: set[tuple[Any, ...]] = field(default_factory=set)
    stopped: int = 0  # runs stopped at a quiet linger (``exact``), as equivalent to one searched

    def key(self, action: Action) -> tuple[Any, ...]:
        return action if self.exact else (action[1], action[2].partition(".")[0])

    def known(self, action: Action) -> bool:
        return action[0] == "linger" and self.key(action) in self.quiet

    def offered(self, enabled: list[Action]) -> list[Action]:
        return [a for a in enabled if not self.known(a)]


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
        self.lingers = Lingers(exact=False)

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

    def __init__(self, seed: int, depth: int, reorder: bool = False) -> None:
        self.seed, self.depth, self.count = seed, depth, 0
        # Reordering links: every message a chain of its own (a link's chain moves its oldest first,
        # so no message would ever overtake another).
        self.reorder = reorder
        self.length = 20  # k: the steps of the longest run so far (change points fall within it)
        self.lingers = Lingers(exact=False)

    def next_run(self) -> Chooser | None:
        rng = random.Random(f"pct:{self.seed}:{self.count}")
        self.count += 1
        changes = sorted(rng.sample(range(self.length), min(self.depth - 1, self.length)))
        low = {step: rank for rank, step in enumerate(changes)}  # below every initial priority
        priority: dict[tuple[str, int, str], float] = {}

        def key(action: Action) -> tuple[str, int, str]:
            return action if self.reorder and action[0] == "deliver" else chain(action)

        def choose(depth: int, enabled: list[Action]) -> Action:
            for action in enabled:
                if key(action) not in priority:
                    priority[key(action)] = self.depth + rng.random()
            best = max(enabled, key=lambda a: priority[key(a)])
            if depth in low:
                priority[key(best)] = low[depth]
            return best

        return choose

    def ran(self, result: Ran) -> None:
        self.length = max(self.length, len(result.trail))

    def expected(self) -> list[str]:
        return []


def independent(a: Action, b: Action) -> bool:
    """Whether steps ``a`` and ``b`` commute wherever both are enabled, and neither disables the
    other: steps given to different nodes (each changes only its node, its counters and the tails
    of that node's outgoing links), except two duplicates or two crashes (they share a budget)."""
    return a[1] != b[1] and not (a[0] == b[0] and a[0] in ("duplicate", "crash"))


Path = tuple["Path", Action] | None  # the steps chosen before a frame, shared with its siblings
NOTHING: frozenset[Action] = frozenset()
MAX_KEPT = 50_000  # steps kept for a higher deviation bound (some 1 kB each, with their answers)


@dataclass(slots=True)
class Frame:
    """One step of the current schedule: what was enabled, what is taken, the siblings already
    explored (``done``), the steps a sibling explored already covers (``sleep``), the deviations
    of the steps before it (``base``) and those steps (``path``)."""

    enabled: list[Action]
    chosen: Action
    sleep: frozenset[Action]
    done: set[Action] = field(default_factory=set)
    base: int = 0
    path: Path = None

    @property
    def cost(self) -> int:
        """The deviations of the schedule up to and with this step: ``base``, and one more if
        this step's choice is not its first."""
        return self.base + (1 if self.done else 0)


class Systematic:
    """Depth-first search over schedules with sleep sets (Godefroid 1996) when ``reduce``: after
    a step t has been explored from a world, its later siblings need not take t again while only
    steps independent of t follow — that order was already covered. Runs reaching a world whose
    every enabled step sleeps stop there (``blocked``): a prefix of a schedule explored elsewhere,
    judged for safety only. The audit decides by happened-before, which is the same for every
    order of independent steps, so nothing it could find is skipped.

    Iterative deviation bounding (as iterative context bounding, Musuvathi and Qadeer, PLDI 2007)
    when ``bounded``: the same tree, its schedules taken by their deviations (steps that take
    other than their first choice): the default schedule (every first choice) first, then each
    with one deviation, then two, … (``bound``). A step whose next choice would pass the bound is
    kept (``later``: its frame, the answers of the path to it) and taken up when the bound grows,
    so every schedule of the tree is still run exactly once — the plain search's schedules and
    count, its sleep sets too (a choice is taken only after every earlier one) — and a bug a few
    deviations deep is found before the search sinks into the tail of one long prefix. (Delay
    bounding, a step's k-th choice costing k, found two ACK bugs sooner but missed a third.)"""

    name = "systematic"
    exhaustive = True

    def __init__(self, reduce: bool = True, bounded: bool = True) -> None:
        self.reduce = reduce
        self.stack: list[Frame] = []
        self.previous: list[str] = []  # the last run's answer digests
        self.done = False
        self.blocked = 0  # runs stopped because every enabled step slept
        self.bound: int | None = 0 if bounded else None  # deviations allowed now
        self.floor = 0  # the depth of the kept step being searched (its ancestors are fixed)
        self.now: list[tuple[Frame, list[str], int]] = []  # kept steps of this bound, a stack
        self.later: list[tuple[Frame, list[str], int]] = []  # (frame, digests, how many the path gave)
        self.lingers = Lingers(exact=True)  # a quiet linger is a leaf; the same one elsewhere, none

    @property
    def covered(self) -> int | None:
        """Every schedule of the tree with at most this many deviations was run (None: not even
        the default schedule, an unbounded search, or sleep sets). Sleep sets prune a schedule as
        equivalent to one in an earlier sibling's subtree, which may have more deviations and so
        wait for a higher bound: with them, no bound is covered until the whole tree is (a bounded
        partial-order reduction would be needed, Coons, Musuvathi and McKinley, OOPSLA 2013)."""
        if self.bound is None or self.done or self.bound == 0 or self.reduce:
            return None
        return self.bound - 1

    def next_run(self) -> Chooser | None:
        if self.done:
            return None
        replay = len(self.stack)
        self.stopped = False

        def choose(depth: int, enabled: list[Action]) -> Action | None:
            if depth < replay:
                return self.stack[depth].chosen
            sleep, base, path = NOTHING, 0, None
            if depth > 0:
                parent = self.stack[depth - 1]
                base, path = parent.cost, (parent.path, parent.chosen)
                if self.reduce:
                    sleep = frozenset(t for t in parent.sleep | parent.done if independent(t, parent.chosen))
            awake = [t for t in enabled if t not in sleep]
            if not awake:
                self.stopped = True
                return None
            self.stack.append(Frame(enabled, awake[0], sleep or NOTHING, base=base, path=path))
            return awake[0]

        return choose

    def expected(self) -> list[str]:
        """Answers the next run must repeat: every input before its changed choice is the same."""
        return self.previous

    def ran(self, result: Ran) -> None:
        if self.stopped:
            self.blocked += 1
        inits = len(result.digests) - len(result.trail)
        del self.stack[len(result.trail) :]  # a run ended early (a finding) leaves no frames beyond
        while len(self.stack) > self.floor:
            top = self.stack[-1]
            top.done.add(top.chosen)
            following = self._following(top)
            if following and self.bound is not None and top.cost > self.bound and self.room():
                self.later.append((top, result.digests, inits + len(self.stack) - 1))
            elif following:
                top.chosen = following[0]
                self.previous = result.digests[: inits + len(self.stack) - 1]  # inits, unchanged steps
                return
            self.stack.pop()
        self._resume()

    def _following(self, frame: Frame) -> list[Action]:
        """The choices of ``frame`` still to take: not taken, not asleep, no linger known quiet."""
        return [
            t
            for t in frame.enabled
            if t not in frame.done and t not in frame.sleep and not self.lingers.known(t)
        ]

    def room(self) -> bool:
        """Whether another step may be kept: past ``MAX_KEPT`` a step beyond the bound is searched
        at once, as the plain search does (the bound's schedules are all still run first or with
        it: only their order changes), so that memory stays bounded."""
        return len(self.now) + len(self.later) < MAX_KEPT

    def _resume(self) -> None:
        """The next kept step of this bound (of the next bound once this one's are all searched),
        its next choice taken; ``done`` when none is left."""
        while True:
            if not self.now and self.later:
                assert self.bound is not None
                self.bound += 1
                self.now, self.later = self.later, []  # popped from its end: the last kept first
            if not self.now:
                self.done = True
                return
            top, digests, kept = self.now.pop()
            following = self._following(top)  # a linger kept may since be known quiet
            if following:
                break
        top.chosen = following[0]
        path: list[Action] = []
        link = top.path
        while link is not None:
            link, chosen = link
            path.append(chosen)
        self.stack = [Frame([chosen], chosen, NOTHING) for chosen in reversed(path)] + [top]
        self.floor = len(path)
        self.previous = digests[:kept]
