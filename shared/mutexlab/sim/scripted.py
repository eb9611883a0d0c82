"""Scripted schedules (docs/architecture.md#scenario-format): the scenario, not chance, picks every interleaving.

Steps: ``request`` / ``exit`` (a local decision of ``pid``), ``deliver`` (the oldest message in
flight on the link from → to), ``drain`` (deliver everything, links in ascending (from, to)
order, one message per link per pass, until nothing is in flight). Faults, as ``mutexlab check
--reorder/--duplicate`` explores them: ``overtake`` (deliver the message at position ``index``
of the link, 0 = oldest, ahead of the older ones) and ``duplicate`` (deliver a copy of the
message at ``index``; it stays in flight). ``loop`` (optional) marks ``steps[loop:]`` as a cycle: replaying checks that it ends in the world
where it began (so a run may repeat it forever) and names who waits throughout it. ``seed`` is the
setup's seed (it draws e.g. a role's plan); ``finding`` is free text from the tool that wrote the
scenario. ``Schedule`` effects are not fired by themselves here: the scenario decides when a process
acts (they are kept as the pending local decisions, which is what tells a scenario that stops early
from a deadlock). Virtual time ``t`` is the number of the step being played (from 1).

Bounds (docs/architecture.md#scenario-format): a scenario file of at most ``limits.MAX_FILE`` bytes,
JSON nested at most ``limits.MAX_DEPTH`` deep, at most ``MAX_PROCESSES`` processes (all refused
before anything is built), a kept trace of at most ``MAX_HELD`` clock entries (else ScenarioError).

Outcomes beyond the audit's: a delivery the protocol refuses (``ProtocolError``, e.g. a duplicated
token) ends the replay there as a finding, not as an invalid scenario; and a scenario whose end
leaves nothing able to move (no message in flight, no pending decision) while someone is not
finished is a deadlock — the same findings ``mutexlab check`` reports.
"""

from __future__ import annotations

import copy
import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .. import limits
from ..messages import MessageError
from ..protocol import Enter, Exit, HandlerError, ProtocolError
from ..protocols import registry
from ..protocols.registry import Solution, build_setup, declarations
from ..setups import ConfigError, Setup, class_state, class_state_changed, uncopyable
from ..show import state_text
from ..trace import TraceWriter
from ..waiting import WaitsRaised, who_waits
from . import determinism, hung
from .driver import Driver
from .stuck import said

DRAIN_LIMIT = 1_000_000
MAX_PROCESSES = 1000  # a scenario is stepped through by hand or replayed: far beyond any written one
# Vector-clock entries (plus EVENT_COST per event) a replay's kept trace may hold: about 0.6 GB.
MAX_HELD = 5_000_000
EVENT_COST = 8


class ScenarioError(ValueError):
    """An invalid scenario or a step that cannot be played; the message says which and why."""


class StepRefused(ScenarioError):
    """The protocol refused a step (a ``ProtocolError``), or its handler raised (``raised``): a
    finding about the protocol, not a fault of the scenario."""

    raised = False
    number = 0  # the step, counted from 1


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class RequestStep(_Step):
    op: Literal["request"]
    pid: int


class ExitStep(_Step):
    op: Literal["exit"]
    pid: int


class DeliverStep(_Step):
    op: Literal["deliver"]
    frm: int = Field(alias="from")
    to: int


class DrainStep(_Step):
    op: Literal["drain"]


class OvertakeStep(_Step):
    op: Literal["overtake"]
    frm: int = Field(alias="from")
    to: int
    index: int = Field(ge=0)


class DuplicateStep(_Step):
    op: Literal["duplicate"]
    frm: int = Field(alias="from")
    to: int
    index: int = Field(default=0, ge=0)


Step = Annotated[
    RequestStep | ExitStep | DeliverStep | DrainStep | OvertakeStep | DuplicateStep,
    Field(discriminator="op"),
]


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")
    algorithm: str
    processes: int = Field(ge=1, le=MAX_PROCESSES)
    options: dict[str, Any] = Field(default_factory=dict)
    seed: int = Field(default=0, ge=0)
    steps: list[Step]
    loop: int | None = Field(default=None, ge=0)
    finding: dict[str, Any] | None = None


@dataclass
class ReplayResult:
    setup: Setup
    events: list[dict]
    entered: list[str]  # names, in the order they entered (any resource)
    in_flight: int  # messages still in flight at the end
    states: dict[str, str] = field(default_factory=dict)
    loop: dict | None = None  # with ``loop``: closes, waiting (names throughout)
    refused: str | None = None  # the step the protocol refused, and why (the replay stops there)
    raised: bool = False  # ``refused`` is a handler that raised (protocol.HandlerError)
    deadlock: list[str] = field(default_factory=list)  # not finished, and nothing can move
    waiting: str = ""  # with ``deadlock``: who waits for which resource held by whom (``stuck.said``)
    unprobed: str | None = None  # a process whose steps could not be taken again (it does not copy)
    unexplained: str | None = None  # with ``deadlock``: a waiting_for() raised (WaitsRaised.short)

    @property
    def protocols(self):
        return self.setup.protocols


class ScriptedRun(Driver):
    def __init__(self, setup: Setup, trace: TraceWriter) -> None:
        super().__init__(setup, trace)
        self.writer = trace  # the trace as a TraceWriter: what was kept so far is read back
        self.links: dict[tuple[int, int], deque] = {}
        self.entered: list[str] = []
        self.unexplained: str | None = None  # ``stuck_said``: a waiting_for() raised, so said
        self.pending: dict[int, list[tuple[str, str]]] = {}  # pid → [(action, dwell)], oldest first
        self.held = 0  # vector-clock entries (and EVENT_COST per event) of the kept trace
        self.counted = 0  # kept events counted in ``held``
        self.shared = class_state(setup)  # a class's or module's state a handler changes: a finding
        self.unprobed: str | None = None  # the first process that would not copy, and why
        self.holdings: dict[str, list[tuple[int, int]]] = {}  # resource → [(pid, units)], in entry order

    def holding_changed(self, pid: int, effect: Enter | Exit) -> None:
        held = self.holdings.setdefault(effect.resource, [])
        if isinstance(effect, Enter):
            held.append((pid, effect.units))
        elif (pid, effect.units) in held:
            held.remove((pid, effect.units))

    def transmit(self, sender: int, to: int, msg: Any, msg_id: str, vc: dict | None) -> None:
        try:  # as the wire and check hand it over; one that does not decode is a finding on the sender
            msg = self.setup.codec.received(msg, msg.model_dump_json())
        except MessageError as exc:
            raise self.undecodable(sender, msg, exc) from None
        self.links.setdefault((sender, to), deque()).append((msg, msg_id, vc))

    def schedule(self, pid: int, action: str, dwell: str) -> None:
        self.pending.setdefault(pid, []).append((action, dwell))  # the scenario decides when

    def play(self, step: Any, number: int) -> None:
        """Play parsed scenario step ``step`` as step ``number``. Raises ScenarioError naming the
        step: StepRefused when the protocol refused a delivery, plain ScenarioError when the
        scenario asks for something impossible (no such process, no message on that link, a
        local decision the process refuses)."""
        self.now = float(number)
        for pid in _pids_of(step):
            if pid not in self.protocols:
                raise ScenarioError(
                    f"step {number} ({step.op}): no process {pid} "
                    f"(processes are {', '.join(map(str, sorted(self.protocols)))})"
                )
        kept = self.writer.events  # the writer's list, growing (None when it keeps nothing)
        before = len(kept) if kept is not None else 0
        # the process as it was: the step is taken again on copies of it (sim/determinism.py)
        probe = self._probe(step) if number <= determinism.PROBED_STEPS else None
        try:
            if isinstance(step, (RequestStep, ExitStep)):
                self._consume(step.pid, step.op)
                self.feed(step.pid, lambda p: p.on_local(step.op))
            elif isinstance(step, DeliverStep):
                self.deliver_oldest(step.frm, step.to)
            elif isinstance(step, (OvertakeStep, DuplicateStep)):
                self.deliver_at(step.frm, step.to, step.index, keep=isinstance(step, DuplicateStep))
            else:
                self.drain()
        except ProtocolError as exc:
            # a refused delivery is a finding about the protocol (what the network may do); a
            # refused local decision is the scenario asking a process for what it cannot do
            # (a handler that raised is the algorithm's fault whatever the step: a finding)
            local = isinstance(step, (RequestStep, ExitStep)) and not isinstance(exc, HandlerError)
            error = (ScenarioError if local else StepRefused)(f"step {number} ({step.op}): {exc}")
            error.raised, error.number = isinstance(exc, HandlerError), number  # type: ignore[attr-defined]
            raise self._seen(error) if local else error from None
        except (ScenarioError, ConfigError) as exc:  # ConfigError: a state of a plain Enum (exit 2)
            raise self._seen(ScenarioError(f"step {number} ({step.op}): {exc}")) from None
        shared = class_state_changed(self.shared) if self.shared else None
        if shared is not None:  # every process's state at once: the algorithm's fault, as a raise
            error = StepRefused(f"step {number} ({step.op}): {shared}")
            error.raised, error.number = True, number  # type: ignore[attr-defined]
            raise error
        differs = determinism.differs(self.names[probe[0]], probe[1], probe[2]) if probe else None
        if differs is not None:  # as check finds it (sim/world.py): the algorithm's fault, as a raise
            error = StepRefused(f"step {number} ({step.op}): {differs}")
            error.raised, error.number = True, number  # type: ignore[attr-defined]
            raise error
        if kept is not None:
            self.entered += [e["pid"] for e in kept[before:] if e["event"] == "enter"]
            self._weigh(f"step {number} ({step.op}): ")

    def _seen(self, error: ScenarioError) -> ScenarioError:  # with the events before it: audit.seen's
        error.before = self.writer.events or None  # type: ignore[attr-defined]
        return error

    def _probe(self, step: Any) -> tuple[int, Any, Callable[[Any], Any]] | None:
        """The process ``step`` moves, a copy of it as it is now and the step's input (None for a
        drain, or a step that cannot be played: it fails by itself)."""
        if isinstance(step, (RequestStep, ExitStep)):
            pid, op = step.pid, step.op
            call: Callable[[Any], Any] = lambda p: p.on_local(op)  # noqa: E731
        elif isinstance(step, (DeliverStep, OvertakeStep, DuplicateStep)):
            link, index = self.links.get((step.frm, step.to)), getattr(step, "index", 0)
            if not link or index >= len(link):
                return None
            pid, msg = step.to, copy.deepcopy(link[index][0])  # as it is before the step changes it
            call = lambda p: p.on_message(copy.deepcopy(msg))  # noqa: E731 - each copy its own
        else:
            return None
        proto = self.protocols.get(pid)
        before = determinism.twins(proto) if proto is not None else None
        if before is None and proto is not None and self.unprobed is None:
            try:  # said, not skipped silently: this replay cannot tell whether its steps are deterministic
                copy.deepcopy(proto)
            except Exception as exc:  # noqa: BLE001 - the algorithm's state, named as check names it
                why = exc if isinstance(exc, ConfigError) else uncopyable(proto, exc)  # the kit's says it
                self.unprobed = str(why).replace(" to check it", "", 1)
        return None if before is None else (pid, before, call)

    def _weigh(self, where: str = "") -> None:
        """Count what the kept trace holds since the last call; ScenarioError past ``MAX_HELD``."""
        kept = self.writer.events
        if kept is None:
            return
        self.held += sum(len(e.get("vc") or ()) + EVENT_COST for e in kept[self.counted :])
        self.counted = len(kept)
        if self.held > MAX_HELD:
            raise ScenarioError(
                f"{where}the replay would hold a trace of more than {MAX_HELD:,} vector-clock entries "
                f"({self.counted:,} events of {len(self.protocols)} processes so far): stopped before it "
                "exhausts the memory (sim/scripted.py MAX_HELD)"
            )

    def _consume(self, pid: int, action: str) -> None:
        queue = self.pending.get(pid, [])
        for i, (pending, _) in enumerate(queue):
            if pending == action:
                del queue[i]
                return

    def stuck(self) -> list[str]:
        """Who is not finished when nothing can move (no message in flight, no pending local
        decision): a deadlock. Empty when something can still move or everyone is finished."""
        if any(self.links.values()) or any(self.pending.values()):
            return []
        return [self.names[p] for p, proto in sorted(self.protocols.items()) if not proto.finished]

    def stuck_said(self) -> str:
        """The unfinished processes in words: the resource each waits for, its holders, the
        messages lacked (``stuck.said``, as ``check`` says a deadlock)."""
        names = self.names
        try:
            waiting = self.waiting()
        except WaitsRaised as exc:  # the stall is said all the same: what those wait for is unknown
            waiting, self.unexplained = exc.waiting(), exc.short
        stuck = [
            (names[p], proto, waiting[names[p]])
            for p, proto in sorted(self.protocols.items())
            if not proto.finished
        ]
        holdings = {r: [(names[p], u) for p, u in hs] for r, hs in self.holdings.items() if hs}
        return said(self.setup.capacities, stuck, holdings)

    def deliver_oldest(self, sender: int, to: int) -> None:
        self.deliver_at(sender, to, 0)

    def deliver_at(self, sender: int, to: int, index: int, keep: bool = False) -> None:
        """Deliver the message at ``index`` of the link (0 = oldest); ``keep``: a duplicate (it stays)."""
        link = self.links.get((sender, to))
        if not link or index >= len(link):
            raise ScenarioError(
                f"no message in flight from {sender} to {to}"
                if not link
                else f"only {len(link)} message(s) in flight from {sender} to {to}, no index {index}"
            )
        msg, msg_id, vc = link[index]
        if not keep:
            del link[index]
        self.deliver(sender, to, msg, msg_id, vc, copy=keep)

    def world(self) -> tuple:
        """Every process's snapshot and every link's messages: what a loop must return to."""
        return (
            tuple(p.snapshot() for _, p in sorted(self.protocols.items())),
            tuple(
                sorted(
                    (link, tuple(m.model_dump_json() for m, _, _ in queue))
                    for link, queue in self.links.items()
                    if queue
                )
            ),
        )

    def message_lists(self) -> dict[tuple[int, int], list]:
        """Every link's messages in flight, oldest first."""
        return {link: [m for m, _, _ in queue] for link, queue in self.links.items()}

    def drain(self) -> None:
        delivered = 0
        while True:
            busy = sorted(link for link, queue in self.links.items() if queue)
            if not busy:
                return
            for sender, to in busy:
                if self.links[(sender, to)]:
                    self.deliver_oldest(sender, to)
                    delivered += 1
                    if not delivered % 1024:  # one pass may deliver P² messages
                        self._weigh()
            if delivered > DRAIN_LIMIT:
                raise ScenarioError(f"drain did not reach quiescence after {DRAIN_LIMIT} deliveries")


def _names(classes) -> str:
    return ", ".join(sorted(c.__name__ for c in classes))


def load_scenario(source: str | Path | dict) -> Scenario:
    """A scenario file or its parsed JSON, validated within the bounds above. Raises ScenarioError."""
    if not isinstance(source, dict):
        where = source
        try:
            source = limits.loads(limits.read_file(source, "a scenario"))
        except OSError as exc:
            raise ScenarioError(f"cannot read scenario {source}: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise ScenarioError(f"scenario {source} is not UTF-8 text: {exc.reason}") from None
        except limits.InputError as exc:
            raise ScenarioError(f"invalid scenario {source}: {exc}") from None
        except json.JSONDecodeError as exc:
            raise ScenarioError(f"scenario is not JSON: {exc}") from None
        if isinstance(source, dict) and isinstance(source.get("algorithm"), str):
            # a file named relative to the scenario's directory: the two move together
            source["algorithm"] = registry.from_beside(source["algorithm"], where)
    elif limits.nesting(source) > limits.MAX_DEPTH:
        raise ScenarioError(f"invalid scenario: JSON nested more than {limits.MAX_DEPTH} deep")
    try:
        return Scenario.model_validate(source)
    except ValidationError as exc:
        problems = "; ".join(f"{_where(e['loc'], source)}: {e['msg']}" for e in exc.errors())
        raise ScenarioError(f"invalid scenario: {problems}") from None


def _where(loc: tuple, source: Any) -> str:
    """A validation error's place, with steps counted from 1 as when they are played:
    ``('steps', 0, 'request', 'pid')`` → ``step 1 (request): pid``."""
    if len(loc) >= 2 and loc[0] == "steps" and isinstance(loc[1], int):
        steps = source.get("steps") if isinstance(source, dict) else None
        step = steps[loc[1]] if isinstance(steps, list) and loc[1] < len(steps) else None
        op = step.get("op") if isinstance(step, dict) else None
        rest = [str(p) for p in loc[2:]]
        if rest and rest[0] == op:  # the union's tag, already named
            rest = rest[1:]
        head = f"step {loc[1] + 1}" + (f" ({op})" if isinstance(op, str) else "")
        return head + (f": {'.'.join(rest)}" if rest else "")
    return ".".join(str(p) for p in loc) or "scenario"


def replay_scenario(
    source: str | Path | dict | Scenario, trace: TraceWriter | None = None, solution: Solution | None = None
) -> ReplayResult:
    """Play a scenario. ``solution``: the one it names, resolved already (a command that made the
    scenario); else what the scenario names is resolved here, once."""
    scenario = source if isinstance(source, Scenario) else load_scenario(source)
    try:
        solution = solution if solution is not None else registry.solution(scenario.algorithm)
        setup = build_setup(solution, scenario.processes, scenario.options, scenario.seed)
    except ConfigError as exc:
        raise ScenarioError(f"invalid scenario: {exc}") from None
    setup.duplicates = any(isinstance(step, DuplicateStep) for step in scenario.steps)
    trace = trace or TraceWriter(None, keep=True)
    run = ScriptedRun(setup, trace)
    run.start_all()
    if scenario.loop is not None and scenario.loop >= len(scenario.steps):
        raise ScenarioError(
            f"invalid scenario: loop {scenario.loop} is past the last step ({len(scenario.steps)} steps)"
        )
    loop_start = None
    # what the protocol declares for its exact classes (mutexlab.reduction), for a loop's return
    declared = next((d for d in declarations(solution) if d.covers(setup.protocols.values())), None)
    normal_start = None
    waiting: set[int] = set()
    owed: set | None = None  # in the loop: what could move before every step of it (fairness)
    taken: set = set()
    refused, raised = None, False
    with hung.watching(setup):  # a handler that never returns: a finding, not a hang
        for number, step in enumerate(scenario.steps, 1):
            if scenario.loop is not None and number - 1 == scenario.loop:
                loop_start = run.world()
                if declared is not None and (declared.clocks or declared.canonical):
                    normal_start = declared.normal_form(setup.protocols, run.message_lists())
                waiting, unknown = who_waits(setup.protocols)  # unknown: a waiting_for() raised
                run.unexplained = run.unexplained or unknown
            elif loop_start is not None:
                now, unknown = who_waits(setup.protocols)
                waiting, run.unexplained = waiting & now, run.unexplained or unknown
            if loop_start is not None:
                here = _could_move(run)
                owed = here if owed is None else owed & here
                taken.add(_moves(step))
            try:
                run.play(step, number)
            except StepRefused as exc:
                refused, raised = str(exc), exc.raised  # a finding: the replay ends at the refused step
                break
    loop = None
    if loop_start is not None and refused is None and scenario.loop is not None:  # (loop_start implies loop)
        closes = run.world() == loop_start
        up_to = None
        if not closes and declared is not None and normal_start is not None:
            # clocks rise on every turn: back to the same world up to what the protocol declares
            # changes no behaviour (a clock offset, its canonical key)
            closes = declared.normal_form(setup.protocols, run.message_lists()) == normal_start
            up_to = _names(declared.classes) if closes else None
        loop = {
            "steps": len(scenario.steps) - scenario.loop,
            "closes": closes,
            "waiting": [setup.names[p] for p in sorted(waiting)] if closes else [],
            # weak fairness: what could move before every step of the loop and never does
            "unfair": [_move_text(m, setup.names) for m in sorted((owed or set()) - taken, key=repr)],
        }
        if up_to is not None:
            loop["up_to"] = f"the clock offsets and canonical key {up_to} declares"
    return ReplayResult(
        setup=setup,
        events=trace.events or [],
        entered=run.entered,
        in_flight=sum(len(q) for q in run.links.values()),
        states={setup.names[p]: state_text(proto.state) for p, proto in sorted(setup.protocols.items())},
        loop=loop,
        refused=refused,
        raised=raised,
        deadlock=[] if refused else run.stuck(),
        waiting="" if refused or not run.stuck() else run.stuck_said(),
        unprobed=run.unprobed,
        unexplained=run.unexplained,
    )


def _could_move(run: ScriptedRun) -> set:
    """What may move now: the oldest message of each non-empty link, each pending local decision."""
    moves = {("deliver", link) for link, queue in run.links.items() if queue}
    return moves | {(action, pid) for pid, queue in run.pending.items() for action, _ in queue}


def _moves(step) -> tuple | None:
    """What ``step`` serves, as ``_could_move`` names it (a duplicate serves nothing)."""
    if isinstance(step, (RequestStep, ExitStep)):
        return (step.op, step.pid)
    if isinstance(step, (DeliverStep, OvertakeStep)):
        return ("deliver", (step.frm, step.to))
    return None


def _move_text(move: tuple, names: dict) -> str:
    what, who = move
    if what == "deliver":
        return f"deliver {names[who[0]]}→{names[who[1]]}"
    return f"{names[who]} {what}"


def _pids_of(step) -> list[int]:
    if isinstance(step, (RequestStep, ExitStep)):
        return [step.pid]
    if isinstance(step, (DeliverStep, OvertakeStep, DuplicateStep)):
        return [step.frm, step.to]
    return []
