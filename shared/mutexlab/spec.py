"""What an algorithm is, declared once: each protocol module ends with ``SPEC = AlgorithmSpec(...)``.

An algorithm is a *solution* of a *problem* (problem.py): it names the problem it solves
(``problem="kmutex"``, or the ``Problem``; without one, its ``family``: ``classic`` is ``mutex``),
which says the resources, the workload's options and flags, and the rules every solution keeps;
the spec holds only the coordination (codec, ``make_setup``, literature, reductions).

``protocols/registry.py`` collects the specs (and loads a user's module or file: ``resolve``);
everything that looks an algorithm up (simulate, run, services, membership, monitor, verify,
report, compare, bench) reads it from there. How the commands present a family (its flags, its
summary) is its ``Flags``; what a run of it costs in messages, its ``estimate_messages``.
Core layer: plain data, no imports from higher layers (a family's trace checks are reached
through the ``audit`` hook, which imports them when ``audit/verdict.py`` first calls it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .findings import Invariants
from .messages import Codec
from .reduction import Reductions
from .setups import Setup

if TYPE_CHECKING:
    from .problem import Problem

# A family of algorithms: the algorithms its ``Flags`` present (the registered ones' families, and
# any a module or file declares with flags of its own).
Family = str


@dataclass(frozen=True)
class Figure:
    """A cost the literature quotes, as it writes it, and its value for N processes (and the run's params)."""

    text: str  # as the literature writes it
    value: Callable[
        [int, dict[str, Any]], tuple[float, float] | None
    ]  # (low, high) for N and the run's params

    def range(self, n: int, params: dict[str, Any] | None = None) -> tuple[float, float] | None:
        return self.value(n, params or {})

    def render(self, n: int, params: dict[str, Any] | None = None) -> str:
        span = self.range(n, params)
        if span is None:
            return self.text
        low, high = span
        number = f"{low:.3g}" if math.isclose(low, high) else f"{low:.3g}–{high:.3g}"
        return f"{self.text} = {number}"


@dataclass(frozen=True)
class Flag:
    """One configuration flag: ``--<key with dashes>`` (and its ``shorts``), whose value is the
    option ``key`` (the first flag of a family: the number of processes). A whole number ≥ 1
    unless ``parse`` reads the text (its ValueError's message is the error shown)."""

    key: str
    help: str  # the help before " (default …)"
    metavar: str | None = None
    shorts: tuple[str, ...] = ()
    parse: Callable[[str], Any] | None = None


@dataclass(frozen=True)
class Dwell:
    """A dwell kind the commands let a user time: ``--<kind>``. ``simulated`` is its help in
    virtual time (``simulate``), ``real`` what it times in seconds (``run``)."""

    kind: str
    simulated: str
    real: str


@dataclass(frozen=True)
class Simulated:
    """One simulated run, as a family's ``Flags.summarise`` reads it. ``events``: the trace's
    events when the run kept them; ``metrics``: the run measured (a ``measured`` family);
    ``common``: what the command reports of every run (``faults``, ``audit``, ``trace``...)."""

    spec: AlgorithmSpec
    setup: Setup
    processes: int
    options: dict[str, Any]  # as the flags gave them
    result: Any  # sim.SimResult, or None when an input was refused (``error``)
    seed: int
    delay: str
    dwell: dict[str, float]
    common: dict[str, Any]
    events: list[dict[str, Any]] | None = None
    metrics: Any = None
    error: str | None = None


@dataclass(frozen=True)
class CheckText:
    """``check <command>``'s words for a family that has its own scenario there: its one-line help
    and description, what its ``--seed`` draws, and ``--zero-clocks``'s help ("": no such flag)."""

    help: str
    description: str
    seed: str
    zero_clocks: str = ""


@dataclass(frozen=True)
class Flags:
    """How the commands present a family (``simulate|run|check|explore <command>``): one
    subcommand, its flags, what ``simulate`` prints. The specs of one family share one ``Flags``.

    Invariants: ``flags[0]`` is P; a key of ``defaults`` (or of the command's ``per_command``) has
    a default, ``None`` meaning make_setup's (the help names ``shown[key]``); a key in neither is
    required. ``algorithm`` takes the defaults too (the family's algorithm when none is named)."""

    command: str  # the subcommand: ``simulate <command>``
    title: str  # the problem's name in prose
    sizes: str  # what the flags size: "P processes, K resources"
    description: str  # ``simulate <command>``'s description
    flags: tuple[Flag, ...]
    summarise: Callable[[Simulated], dict[str, Any]]  # the JSON summary of a simulated run
    render: Callable[
        [Simulated, dict[str, Any]], list[str]
    ]  # the summary's lines (the command adds the outcome's)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    per_command: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # check starts small
    shown: Mapping[str, Any] = field(default_factory=dict)
    free_options: bool = False  # ``-o KEY=JSON`` and ``--options FILE``: the options beyond the flags
    dwell: tuple[Dwell, ...] = ()
    seed: str = "random seed"  # what ``simulate``'s seed draws
    smaller: str = "fewer processes"  # what to turn down when a run would not fit in memory
    streamed: bool = False  # simulate holds no trace: the audit is fed as the run goes (``--no-audit``)
    # holding intervals (enter/exit pairs) a run of P with these options makes, about: what the
    # streamed audit keeps (memory.py); None: none counted
    estimate_intervals: Callable[[int, dict[str, Any]], float] | None = None
    measured: bool = False  # one workload for all, measured against the literature (``compare``)
    partial: bool = False  # the summary reports a run a refused input cut short (``error``)
    check: CheckText | None = None  # ``check <command>`` with a seed and the family's flags

    def default(self, command: str, key: str) -> tuple[bool, Any]:
        """(has a default, the default) of ``key`` in ``command``."""
        own = self.per_command.get(command, {})
        if key in own:
            return True, own[key]
        return key in self.defaults, self.defaults.get(key)


@dataclass(frozen=True)
class WorldInvariant:
    """A state invariant ``check`` tests in every reachable world. ``holds(model, world)``: None, or
    (what is wrong, the processes concerned by name); ``reads(process)``: what it reads of one
    process's state (None: only the holdings), so partial-order reduction may postpone a step
    that leaves it unchanged and enters or leaves nothing. ``rules``: the problem's ``rules.Rules``
    it judges by, whose observations the world model keeps with every process state."""

    holds: Callable[[Any, tuple[Any, ...]], tuple[str, list[str]] | None]
    what: str  # one line: what it checks
    reads: Callable[[Any], Any] | None = None
    rules: Any = None


@dataclass(frozen=True)
class AlgorithmSpec:
    """One algorithm: a solution of ``problem`` (None: of the problem its ``family`` names, an alias
    kept while the families move onto problems). ``audit``, ``flags`` and ``world_invariant`` are
    the problem's where it declares them (``registry.problem_of``). Invariants: ``make_setup``
    builds processes named ``<role>-<pid>`` for the scalable role (pids 1..P) plus one process per
    fixed role; its Setup's codec is ``codec``; it refuses any option not in ``options``."""

    name: str
    family: Family
    summary: str
    make_setup: Callable[[int, dict[str, Any], int], Setup]
    codec: Codec
    # its own trace checks, run after its problem's (None: the problem's only; a family without a
    # problem: capacity only)
    audit: Callable[[], Invariants] | None = None
    role: str = "node"  # the scalable role: pids 1..P
    fixed_roles: tuple[str, ...] = ()  # one member each, outside P (a coordinator)
    options: dict[str, str] = field(default_factory=dict)  # --option key → one-line help
    literature: dict[str, Figure] = field(default_factory=dict)  # "messages", "sync" → figure
    # what ``check`` may reduce, for exact classes only (reduction.py); a function returning it
    # when the declaration's module imports the protocol's
    reductions: Reductions | Callable[[], Reductions] | None = None
    # -- how the commands present it (None: its family's, registry.flags_of) ---------------
    flags: Flags | None = None
    # Network messages a run of P processes with these options sends, about (memory.py's model).
    estimate_messages: Callable[[int, dict[str, Any]], float] | None = None
    # the state invariant ``check`` tests in every world (check/properties.py), None: none
    # (a family without a problem of its own; a problem's solution: its problem's ``invariant``)
    world_invariant: WorldInvariant | None = None
    # the problem it solves (problem.py): a built-in problem's name or a Problem; None: ``family``'s
    problem: Problem | str | None = None
    # the commands (``run``, ``explore``) that run this solution when none is named: a problem
    # names no solution, so its default one says so itself
    default_for: tuple[str, ...] = ()

    def declared_reductions(self) -> Reductions | None:
        found = self.reductions
        return found() if callable(found) else found

    @property
    def roles(self) -> tuple[str, ...]:
        return (self.role, *self.fixed_roles)
