"""The dining philosophers' workload, the base of every solution's node: ``Philosopher``.

A philosopher starts ``THINKING``; after a ``think`` dwell it gets hungry (local ``request``:
it notes a ``request`` of ``meal`` and calls the solution's ``_hungry()``); the solution calls
``_eat()`` once it holds both its forks (having returned ``Enter(fork)`` for each, in the same
or earlier steps); after an ``eat`` dwell the local ``exit`` leaves ``meal`` and calls the
solution's ``_done()``, which gives the forks back (``Exit``) and answers whoever waits. It
repeats ``meals`` times; with ``meals`` = 0 it acts only when told (scripted replay, --endless).

``philosopher_table`` adds the two local inputs to a solution's message rows;
``philosophers_setup`` builds the ``Setup`` (names ``philosopher-<pid>``, the problem's
resources, params ``philosophers`` and ``meals``).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from ..clock import LamportClock
from ..machine import Cell, Table, on
from ..messages import Codec
from ..protocol import Effect, Enter, Exit, Note, Protocol, Schedule, hook_effects
from ..setups import ConfigError, Setup, positive_int, refuse_options
from .philosophers import MEAL, PROBLEM, fork, forks_of


class Phil(StrEnum):
    THINKING = "THINKING"
    HUNGRY = "HUNGRY"
    EATING = "EATING"


THINKING, HUNGRY, EATING = Phil.THINKING, Phil.HUNGRY, Phil.EATING
THEN_HUNGRY, THEN_DONE = Schedule("request", "think"), Schedule("exit", "eat")


def philosopher_name(pid: int) -> str:
    return f"philosopher-{pid}"


class Philosopher(Protocol):
    """Base of a solution's philosopher: the meals, the two local inputs, ``meal``'s entry and
    exit. Subclasses implement ``_hungry()`` and ``_done()`` (returning effects) and call
    ``_eat()`` when they hold both forks (``take(side)`` enters one)."""

    state: Phil
    final_states = frozenset({THINKING})

    def __init__(self, pid: int, n: int, meals: int = 0, clock: int = 0) -> None:
        self.pid = pid
        self.n = n
        self.clock = LamportClock(clock)
        self.state = THINKING
        self.meals_left = meals
        self.eaten = 0
        self.left, self.right = forks_of(pid, n)

    @property
    def name(self) -> str:
        return philosopher_name(self.pid)

    def start(self) -> list[Effect]:
        return [THEN_HUNGRY] if self.meals_left > 0 else []

    @property
    def finished(self) -> bool:
        return self.state is THINKING and self.meals_left == 0

    def _local_request(self, _action: str) -> list[Effect]:
        if self.meals_left > 0:
            self.meals_left -= 1
        self.state = HUNGRY
        return [Note("request", {"resource": MEAL}), *hook_effects(self, "_hungry", "request")]

    def _local_exit(self, _action: str) -> list[Effect]:
        self.state = THINKING
        effects: list[Effect] = [Exit(MEAL), *hook_effects(self, "_done", "exit")]
        if self.meals_left > 0:
            effects.append(THEN_HUNGRY)
        return effects

    def take(self, f: int) -> Enter:
        """The effect of picking fork ``f`` up to eat with it."""
        return Enter(fork(f))

    def put(self, f: int) -> Exit:
        """The effect of putting fork ``f`` down after eating."""
        return Exit(fork(f))

    def _eat(self) -> list[Effect]:
        """Both forks are held: eat, and schedule the end of the meal."""
        self.state = EATING
        self.eaten += 1
        return [Enter(MEAL), THEN_DONE]

    def waiting_for(self) -> dict[str, list[int]]:
        return {"forks": []} if self.state is HUNGRY else {}

    def card(self) -> list[tuple[str, str]]:
        return [("meals left", str(self.meals_left)), ("eaten", str(self.eaten))]

    # -- to implement --------------------------------------------------------------------
    def _hungry(self) -> list[Effect]:  # pragma: no cover - interface
        raise NotImplementedError(f"{type(self).__name__} does not define _hungry(), which a solution writes")

    def _done(self) -> list[Effect]:  # pragma: no cover - interface
        raise NotImplementedError(f"{type(self).__name__} does not define _done(), which a solution writes")


def philosopher_table(hungry: str, done: str, rows: dict[Phil, dict[str, Cell]], never: str = "") -> Table:
    """A philosopher's table: its message ``rows`` plus the local ``request`` (THINKING → HUNGRY
    or EATING, described as ``hungry``) and ``exit`` (EATING → THINKING, as ``done``). A row for
    no state of a philosopher (``StrEnum``'s ``auto()`` makes ``'thinking'``) is refused, named:
    it was dropped without a word, and the table then refused every message of the state."""
    stray = [s for s in rows if not any(s == p for p in Phil)]
    if stray:
        raise ValueError(
            f"philosopher_table: rows for {', '.join(repr(str.__str__(s)) for s in stray)}, no state "
            f"of a philosopher ({', '.join(p.value for p in Phil)}): a state is read by its value, "
            "and a StrEnum's auto() makes it lowercase; use the kit's THINKING, HUNGRY, EATING"
        )
    local: dict[Phil, dict[str, Cell]] = {
        THINKING: {"request": on(hungry, "_local_request", to=(HUNGRY, EATING))},
        EATING: {"exit": on(done, "_local_exit", to=(THINKING,))},
    }
    return Table(Phil, {s: {**local.get(s, {}), **rows.get(s, {})} for s in Phil}, never=never)


def philosophers_setup(
    algorithm: str,
    processes: int,
    options: dict[str, Any],
    node: Callable[[int, int, int, int], Philosopher],
    codec: Codec,
    own: frozenset[str] = frozenset(),
) -> Setup:
    """The ``Setup`` of a solution whose philosopher is ``node(pid, n, meals, clock)``; it takes
    the problem's options and ``own``."""
    refuse_options(algorithm, set(options) - set(PROBLEM.options) - set(own), set(PROBLEM.options) | own)
    capacities = PROBLEM.capacities(processes, options) or {}
    meals = positive_int(options, "meals", default=0, minimum=0)
    clocks = initial_clocks(options.get("initial_clocks") or {}, processes)
    nodes: dict[int, Protocol] = {
        pid: node(pid, processes, meals, clocks.get(pid, 0)) for pid in range(1, processes + 1)
    }
    names = {pid: philosopher_name(pid) for pid in nodes}
    return Setup(algorithm, nodes, names, codec, capacities, {"philosophers": processes, "meals": meals})


def initial_clocks(raw: Any, processes: int) -> dict[int, int]:
    """The option ``initial_clocks``: a JSON object pid → whole number ≥ 0; ConfigError otherwise."""
    if not isinstance(raw, dict):
        raise ConfigError("option 'initial_clocks' must map pid → clock value")
    clocks: dict[int, int] = {}
    for key, value in raw.items():
        pid = int(key) if isinstance(key, str) and key.isdigit() else None
        if pid is None or not 1 <= pid <= processes:
            raise ConfigError(f"initial_clocks: {key!r} is not a pid in 1..{processes}")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"initial_clocks: the clock of {pid} must be a whole number ≥ 0, got {value!r}")
        clocks[pid] = value
    return clocks


# The local inputs alone: the table of a philosopher whose subclass declares none of its own.
Philosopher.TABLE = philosopher_table("get hungry", "put the forks down", {})
Philosopher._transitions = Philosopher.TABLE.compile(Philosopher)  # noqa: SLF001 - __init_subclass__ compiles subclasses only
