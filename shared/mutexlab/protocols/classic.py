"""What the six classic algorithms share: the workload around the critical section ``cs``.

A node asks ``requests`` times (the simulator's workload): after ``start`` and after each exit
it schedules its next ``request`` after a ``think`` dwell; after entering it schedules its
``exit`` after a ``cs`` dwell. With ``requests = 0`` it acts only when told (scripted replay).
Every local request is recorded as a ``request`` note (trace event ``request``, resource
``cs``) before the algorithm's own messages, so the audit can check that every request was
served (classic_audit.py).

Every classic node is in one of the three states of ``State``: ``RELEASED`` (``IDLE_STATE``:
it neither wants nor holds the critical section), ``WANTED`` and ``HELD``. The local inputs
are the same for all six: ``request`` only in RELEASED, ``exit`` only in HELD; anything else
is refused (ProtocolError).
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterator
from enum import StrEnum
from typing import Any, TypeGuard, TypeVar

from .. import problems
from ..clock import LamportClock
from ..findings import Invariants
from ..machine import Cell, Table, on
from ..messages import Codec
from ..problems.mutex import OPTIONS as WORKLOAD_OPTIONS
from ..problems.mutex_flags import workload_estimate
from ..protocol import Effect, Enter, Exit, Note, Protocol, ProtocolError, Schedule, hook_effects
from ..reduction import Reductions
from ..setups import ConfigError, Setup, positive_int, refuse_options
from ..spec import AlgorithmSpec, Figure


class State(StrEnum):
    RELEASED = "RELEASED"
    WANTED = "WANTED"
    HELD = "HELD"


IDLE_STATE = State.RELEASED
CS = "cs"


# The effects of every entry, immutable values made once (a frozen dataclass is slow to build:
# rebuilt per entry they cost Raymond N = 100 10 % of its run, bench/instructions.py).
ENTER_CS, EXIT_CS = Enter(CS), Exit(CS)
THEN_REQUEST, THEN_EXIT = Schedule("request", "think"), Schedule("exit", "cs")  # after a dwell


def node_name(pid: int) -> str:
    return f"node-{pid}"


T = TypeVar("T")


def expect(node: Protocol, value: T | None, what: str) -> T:
    """``value``, which ``node``'s state guarantees is set (its own request while WANTED or HELD,
    the token while HELD ...); a ProtocolError naming the broken guarantee if it is not."""
    if value is None:
        raise ProtocolError(f"{node.name} in state {node.state} has no {what}")
    return value


class ClassicNode(Protocol):
    """Base of a classic algorithm's node: the request budget and enter/exit bookkeeping.

    Subclasses implement ``_request()`` and ``_release()`` (returning effects) and call
    ``_enter()`` when their entry condition holds.
    """

    state: State

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        self.pid = pid
        self.n = n
        self.clock = LamportClock(clock)
        self.state = State.RELEASED
        self.requests_left = requests
        self.entries = 0

    # -- the workload ------------------------------------------------------------------
    def start(self) -> list[Effect]:
        return [THEN_REQUEST] if self.requests_left > 0 else []

    @property
    def name(self) -> str:
        return node_name(self.pid)

    def _local_request(self, _action: str) -> list[Effect]:
        if self.requests_left > 0:
            self.requests_left -= 1
        return [Note("request", {"resource": CS}), *hook_effects(self, "_request", "request")]

    def _local_exit(self, _action: str) -> list[Effect]:
        self.state = State.RELEASED
        effects = [EXIT_CS, *hook_effects(self, "_release", "exit")]
        if self.requests_left > 0:
            effects.append(THEN_REQUEST)
        return effects

    def refuse_local(self, action: str) -> ProtocolError:
        if action == "request":
            return ProtocolError(f"{self.name} cannot request in state {self.state}")
        if action == "exit":
            return ProtocolError(
                f"{self.name} cannot exit: it is not in the critical section (state {self.state})"
            )
        return self.refuse(f"local action {action!r}", "unknown action")

    def _receive(self, msg: Any) -> list[Effect]:
        """Take the message's clock, nothing else (a message the table ignores)."""
        self.clock.receive(msg.ts)
        return []

    def _others(self) -> Iterator[int]:
        """Every other node's pid, in ascending order."""
        return (j for j in range(1, self.n + 1) if j != self.pid)

    def _enter(self) -> list[Effect]:
        """The entry condition holds: enter, and schedule the exit."""
        self.state = State.HELD
        self.entries += 1
        return [ENTER_CS, THEN_EXIT]

    @property
    def finished(self) -> bool:
        return self.state is State.RELEASED and self.requests_left == 0

    def card(self) -> list[tuple[str, str]]:
        return [("requests left", str(self.requests_left)), ("entries", str(self.entries))]

    # -- to implement --------------------------------------------------------------------
    def _request(self) -> list[Effect]:  # pragma: no cover - interface
        raise NotImplementedError(
            f"{type(self).__name__} does not define _request(), which a solution writes"
        )

    def _release(self) -> list[Effect]:  # pragma: no cover - interface
        raise NotImplementedError(
            f"{type(self).__name__} does not define _release(), which a solution writes"
        )


def classic_table(
    request: str,
    exit: str,
    rows: dict[State, dict[str, Cell]],
    never: str = "",
    entered: tuple[State, ...] = (State.WANTED, State.HELD),
    legend: str = "",
) -> Table:
    """A classic algorithm's table: its message ``rows``, plus the two local inputs every classic
    node shares (``request`` in RELEASED, described as ``request``, moving to ``entered``; ``exit``
    in HELD, described as ``exit``, back to RELEASED), first in each row."""
    local: dict[State, dict[str, Cell]] = {
        State.RELEASED: {"request": on(request, "_local_request", to=entered)},
        State.HELD: {"exit": on(exit, "_local_exit", to=(State.RELEASED,))},
    }
    return Table(
        State,
        {state: {**local.get(state, {}), **rows.get(state, {})} for state in State},
        never=never,
        legend=legend,
    )


def read_pid(key: Any, processes: int, what: str) -> int:
    """A pid given as a JSON object's key (``"3"``) in the option ``what``: 1..``processes``, else
    ConfigError naming the key."""
    try:
        pid = int(key)
    except (TypeError, ValueError):
        raise ConfigError(f"{what}: {key!r} is not a pid") from None
    if not 1 <= pid <= processes:
        raise ConfigError(f"{what}: pid {pid} is outside 1..{processes}")
    return pid


def is_pid(value: Any, processes: int) -> TypeGuard[int]:
    """A whole number in 1..``processes`` (a bool is not)."""
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= processes


def pid_option(options: dict[str, Any], key: str, processes: int, algorithm: str, default: int) -> int:
    """The option ``key`` naming one process (``token_holder``), ``default`` when absent."""
    value = options.get(key, default)
    if not is_pid(value, processes):
        raise ConfigError(f"{algorithm}: option {key!r} must be a pid in 1..{processes}, got {value!r}")
    return value


def pid_map(raw: Any, processes: int, key: str, shape: str, read: Callable[[int, Any], T]) -> dict[int, T]:
    """The option ``key``: a JSON object pid → value (``shape`` says what a value is), each value
    read by ``read(pid, value)``; a key that is no pid in 1..``processes``, or a pid given twice,
    is refused."""
    if not isinstance(raw, dict):
        raise ConfigError(f"option {key!r} must map each pid to {shape}")
    found: dict[int, T] = {}
    for k, value in raw.items():
        pid = read_pid(k, processes, key)
        if pid in found:
            raise ConfigError(f"{key}: process {pid} is given twice")
        found[pid] = read(pid, value)
    return found


def pid_list(value: Any, processes: int, what: str) -> list[int]:
    """``value``, a list of pids in 1..``processes``; ``what`` names it in errors."""
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(m, int) and not isinstance(m, bool) for m in value
    ):
        raise ConfigError(f"{what} must be a list of pids, got {value!r}")
    outside = sorted(m for m in value if not 1 <= m <= processes)
    if outside:
        raise ConfigError(f"{what} names {outside}, outside 1..{processes}")
    return list(value)


def workload_options(processes: int, options: dict[str, Any]) -> tuple[int, dict[int, int]]:
    """The options every classic algorithm takes: ``requests`` and ``initial_clocks``."""
    requests = positive_int(options, "requests", default=0, minimum=0)
    raw = options.get("initial_clocks", {}) or {}
    if not isinstance(raw, dict):
        raise ConfigError("option 'initial_clocks' must map pid → clock value")
    clocks: dict[int, int] = {}
    for key, value in raw.items():
        pid = read_pid(key, processes, "initial_clocks")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"initial_clocks: the clock of {pid} must be a whole number ≥ 0, got {value!r}")
        clocks[pid] = value
    return requests, clocks


# The --option keys every classic algorithm takes (each spec adds its own): the mutex problem's.
KNOWN_WORKLOAD_OPTIONS = set(WORKLOAD_OPTIONS)


def refuse_unknown(options: dict[str, Any], allowed: set[str], algorithm: str) -> None:
    refuse_options(
        algorithm, set(options) - allowed - KNOWN_WORKLOAD_OPTIONS, allowed | KNOWN_WORKLOAD_OPTIONS
    )


def classic_setup(
    algorithm: str,
    processes: int,
    requests: int,
    clocks: dict[int, int],
    node: Callable[[int, int], ClassicNode],
    codec: Codec,
    capacity: int = 1,
    **params: Any,
) -> Setup:
    """A classic algorithm's ``Setup``: nodes 1..``processes``, each ``node(pid, initial clock)``
    and named ``node-<pid>``, one critical section ``cs`` of ``capacity`` (the kmutex problem's
    K); its params are ``nodes``, ``requests``, then the algorithm's own ``params`` in their order."""
    nodes: dict[int, Protocol] = {pid: node(pid, clocks.get(pid, 0)) for pid in range(1, processes + 1)}
    return Setup(
        algorithm,
        nodes,
        {pid: node_name(pid) for pid in nodes},
        codec,
        {CS: capacity},
        {"nodes": processes, "requests": requests, **params},
    )


def workload_setup(
    algorithm: str,
    processes: int,
    options: dict[str, Any],
    node: Callable[..., ClassicNode],
    codec: Codec,
    problem: str = "mutex",
) -> Setup:
    """The ``Setup`` of an algorithm that takes only its problem's options and whose node is
    ``node(pid, processes, requests, initial clock)`` (Lamport, Ricart–Agrawala), given the
    problem's own options beyond the workload's as keywords (kmutex: ``k=K``); ``cs`` has the
    capacity the problem states."""
    solved = problems.named(problem)
    refuse_unknown(options, set(solved.options), algorithm)
    requests, clocks = workload_options(processes, options)
    capacity = (solved.capacities(processes, options) or {}).get(CS, 1)
    own = {k: options.get(k, solved.defaults.get(k)) for k in solved.options if k not in WORKLOAD_OPTIONS}
    takes_options(node, processes, requests, own, problem)
    return classic_setup(
        algorithm,
        processes,
        requests,
        clocks,
        lambda pid, clock: node(pid, processes, requests, clock, **own),
        codec,
        capacity,
        **own,
    )


def takes_options(
    node: Callable[..., Any], processes: int, requests: int, own: dict[str, Any], problem: str
) -> None:
    """ConfigError, saying what to write, when ``node`` cannot be called as the problem calls it:
    ``node(pid, n, requests, clock, **own)`` (kmutex: ``k=K``)."""
    try:
        signature = inspect.signature(node)
    except (TypeError, ValueError):  # nothing to read it by: the call says for itself
        return
    try:
        signature.bind(1, processes, requests, 0, **own)
    except TypeError as exc:
        name = getattr(node, "__qualname__", repr(node))
        where = getattr(sys.modules.get(getattr(node, "__module__", "")), "__file__", None)
        given = "".join(f", {key}={value!r}" for key, value in own.items())
        code = getattr(getattr(node, "__init__", None), "__code__", None)
        line = f" (line {code.co_firstlineno})" if code is not None and code.co_filename == where else ""
        extra = "".join(f", {k}=..." for k in own)
        raise ConfigError(
            (f"{where}: " if where else "")
            + f"a {problem} node is built as {name}(pid, n, requests, clock{given}), and {name} "
            f"cannot be: {exc}; its __init__{line} must take them all"
            f" (def __init__(self, pid, n, requests=0, clock=0{extra}))"
        ) from None


def classic_invariants() -> Invariants:
    """The mutex problem's trace checks (problems/mutex_audit.py)."""
    return problems.named("mutex").audit()  # type: ignore[misc]  # mutex declares its audit


def classic_spec(
    name: str,
    summary: str,
    make_setup: Callable[[int, dict[str, Any], int], Setup],
    codec: Codec,
    literature: dict[str, Figure],
    per_entry: Callable[[int], float] | None = None,
    reductions: Reductions | Callable[[], Reductions] | None = None,
    problem: str = "mutex",
    **options: str,
) -> AlgorithmSpec:
    """A classic algorithm's ``SPEC``: a solution of ``problem`` (``mutex``, family ``classic``;
    or ``kmutex``), audited and presented as its problem says, taking the problem's options and
    its own ``options`` (key → one-line help). Its memory estimate: entries × the literature's
    messages per entry, else ``per_entry(N)`` (default 3(N−1)). ``reductions``: what ``check``
    may reduce, for the exact classes it names (a function returning it may import it when
    ``check`` asks)."""
    solved = problems.named(problem)
    return AlgorithmSpec(
        name,
        "classic" if solved.name == "mutex" else solved.name,
        summary,
        make_setup,
        codec,
        solved.audit,
        options={**solved.options, **options},
        literature=literature,
        flags=solved.flags,
        estimate_messages=workload_estimate(literature, per_entry),
        reductions=reductions,
        problem=solved.name,
    )


# The local inputs alone: the table of a classic node whose subclass declares none of its own.
ClassicNode.TABLE = classic_table("request", "exit", {})
ClassicNode._transitions = ClassicNode.TABLE.compile(ClassicNode)  # noqa: SLF001 - __init_subclass__ compiles subclasses only
