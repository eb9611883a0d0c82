"""A world of the explorer: where a path of steps leads from one configuration's start.

A *world* is the setup plus the list of steps taken from its start; it is never stored, only
re-derived: protocols are deterministic, so replaying the same steps (``sim/scripted.py``'s
``ScriptedRun``, the very driver behind ``mutexlab replay``) gives the same world and the same
trace, byte for byte. A step is a scenario step (``{"op": "deliver", "from": 1, "to": 2}`` ...),
so the path so far *is* a scenario.

The enabled steps of a world are ``sim/world.py``'s: every process's pending local decisions
(the ``Schedule`` effects it asked for and that have not been taken, as ``request``/``exit``)
and the head of every non-empty link (links are FIFO); holding is checked against capacity
by ``sim/world.py``'s ``overfull``. With a workload of 0 requests (a hand-written scenario:
nodes act "only when told") an idle classic node may also make a new ``request``: such steps
are marked ``extra`` and "run to the end" does not take them (else it would never end). With an
endless workload (``Config.endless``, as ``check --endless``) a new request of an idle node is
an ordinary step: every node requests forever, and a path ends only where nothing can move.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..protocol import Enter, Exit, HandlerError, ProtocolError
from ..protocols import registry
from ..protocols.registry import Solution, build_setup
from ..setups import ConfigError, Setup, capacity_of
from ..show import state_text
from ..sim.scripted import MAX_PROCESSES, ScenarioError, ScriptedRun, Step, load_scenario
from ..sim.world import enabled, endless_options, overfull
from ..trace import TraceWriter
from .describe import describe_message
from .view import findings, view

LOCAL_OPS = ("request", "exit")
RUN_LIMIT = 20_000  # steps "run to the end" takes at most before it says it stopped short
RANDOM_LIMIT = 10_000  # steps one "random ×N" may ask for


class ExploreError(ValueError):
    """A request the session refuses (a step not enabled, nothing to undo ...); state unchanged.

    ``status`` is the HTTP status the server answers with."""

    def __init__(self, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Config:
    """What ``build_setup(algorithm, processes, options, seed)`` takes."""

    algorithm: str  # what the user or the scenario named (shown, written into scenarios)
    processes: int
    options: dict = field(default_factory=dict)
    seed: int = 0
    endless: bool = False  # every node requests forever (``sim/world.py``'s endless workload)
    # the solution, resolved at the command's edge; else (a scenario file or a posted one names
    # it) once, when first asked (``resolved``): every setup of the session is built from it
    solution: Solution | None = field(default=None, compare=False, repr=False)

    def resolved(self) -> Solution:
        if self.solution is None:
            try:
                found = registry.solution(self.algorithm)
            except ConfigError as exc:
                raise ScenarioError(f"invalid configuration: {exc}") from None
            object.__setattr__(self, "solution", found)  # frozen: set once, as a cache
            return found
        return self.solution

    @property
    def workload(self) -> dict:
        """The options the setup is built with (an endless workload has no budget)."""
        if not self.endless:
            return dict(self.options)
        return endless_options(self.options, self.resolved().problem.endless)

    def setup(self) -> Setup:
        if self.processes > MAX_PROCESSES:  # refused before anything is built
            raise ScenarioError(
                f"invalid configuration: at most {MAX_PROCESSES} processes, got {self.processes}"
            )
        solution = self.resolved()
        try:
            return build_setup(solution, self.processes, self.workload, self.seed)
        except ConfigError as exc:
            raise ScenarioError(f"invalid configuration: {exc}") from None


def step_id(step: dict) -> str:
    """A step's id: ``request:2``, ``exit:1``, ``deliver:1-3``, ``drain``, ``overtake:1-3:1`` ..."""
    op = step["op"]
    if op in LOCAL_OPS:
        return f"{op}:{step['pid']}"
    if op == "drain":
        return "drain"
    base = f"{op}:{step['from']}-{step['to']}"
    return base if op == "deliver" else f"{base}:{step.get('index', 0)}"


class ExplorerRun(ScriptedRun):
    """``ScriptedRun`` (same trace as ``replay``) that also keeps what the explorer shows:
    the pending local decisions and who holds what right now."""

    def __init__(self, setup: Setup, trace: TraceWriter) -> None:
        super().__init__(setup, trace)
        self.events = trace.kept  # the trace so far (the writer keeps it in memory)
        self.overfull: list[str] = []  # capacity breaches, as they happened
        self.overfull_resources: set[str] = set()  # the resources they breached

    def holding_changed(self, pid: int, effect: Enter | Exit) -> None:
        super().holding_changed(pid, effect)  # ``holdings``: resource → [(pid, units)], in entry order
        if isinstance(effect, Enter):
            cap = capacity_of(self.setup.capacities, effect.resource)
            held = self.holdings[effect.resource]
            found = overfull(effect.resource, cap, [(self.names[p], u) for p, u in held])
            if found is not None:
                self.overfull.append(f"{found} at once (step {int(self.now)})")
                self.overfull_resources.add(effect.resource)


def _parse_step(raw: dict) -> Any:
    """A step dict → the parsed step model of ``sim/scripted.py`` (whatever ops it knows)."""
    return load_scenario({"algorithm": "-", "processes": 1, "steps": [raw]}).steps[0]


def _dump(step: Any) -> dict:
    return step.model_dump(by_alias=True)


@dataclass
class SessionState:
    """The world reached by ``steps`` from ``config``'s start (derived, never edited by hand)."""

    config: Config
    run: ExplorerRun
    steps: list[dict]
    labels: list[str]
    start_clocks: dict[int, int]  # each process's Lamport clock as its setup built it

    @property
    def setup(self) -> Setup:
        return self.run.setup

    @property
    def events(self) -> list[dict]:
        return self.run.events

    @property
    def free(self) -> bool:
        """Nodes act only when told (a classic workload of 0 requests): new requests are steps."""
        return self.setup.params.get("requests") == 0

    # -- the steps a user may take ----------------------------------------------------------
    def enabled(self) -> list[dict]:
        """Every enabled step (``sim/world.py``'s ``enabled``): ``{"id", "label", "step", "extra"}``;
        pending local decisions first (by pid), then new requests of an endless workload, then the
        head of each non-empty link (by (from, to)), then new requests of a free one."""
        run, names = self.run, self.setup.names
        dwell: dict[tuple[int, str], str] = {}  # the first pending one of each action
        for pid, asked in run.pending.items():
            for action, after in asked:
                dwell.setdefault((pid, action), after)
        pending = {pid: [a for a, _ in run.pending.get(pid, []) if a in LOCAL_OPS] for pid in run.protocols}
        decisions, links = enabled(pending, run.links)

        def item(step: dict, label: str, extra: bool = False) -> dict:
            return {"id": step_id(step), "step": step, "extra": extra, "label": label}

        out = [
            item(
                {"op": a, "pid": pid},
                f"{names[pid]}: {a} (after {dwell[pid, a]}; state {run.protocols[pid].state})",
            )
            for pid, a in decisions
        ]
        new = []  # new requests of idle nodes, when nodes act only when told
        if self.free:
            endless = self.config.endless  # then an idle node's request is an ordinary step
            why = "endless workload" if endless else "a new request"
            new = [
                item(
                    {"op": "request", "pid": pid},
                    f"{names[pid]}: request ({why}; state {state_text(proto.state)})",
                    not endless,
                )
                for pid, proto in sorted(run.protocols.items())
                if "request" not in pending[pid] and _accepts(proto, "request")
            ]
            out, new = (out + new, []) if endless else (out, new)
        for sender, to in links:
            head = describe_message(run.links[sender, to][0][0])
            out.append(
                item(
                    {"op": "deliver", "from": sender, "to": to}, f"deliver {head} {names[sender]}→{names[to]}"
                )
            )
        return out + new

    def label_of(self, step: dict) -> str:
        """What taking ``step`` from this world means, in words (for the history)."""
        names, op = self.setup.names, step["op"]
        if op in LOCAL_OPS:
            return f"{names.get(step['pid'], step['pid'])}: {op}"
        if op == "drain":
            return "drain: deliver everything in flight"
        queue = self.run.links.get((step["from"], step["to"]))
        index = step.get("index", 0)
        what = describe_message(queue[index][0]) if queue and index < len(queue) else "?"
        arrow = f"{names.get(step['from'], step['from'])}→{names.get(step['to'], step['to'])}"
        if op == "deliver":
            return f"deliver {what} {arrow}"
        return f"{op} #{index} {what} {arrow}"

    def at_end(self, enabled: list[dict] | None = None) -> bool:
        """No step left to take but new requests."""
        steps = self.enabled() if enabled is None else enabled
        return not any(not s["extra"] for s in steps)

    def findings(self, enabled: list[dict] | None = None) -> dict:
        return findings(self, enabled)

    def view(self) -> dict:
        return view(self)


def _accepts(proto: Any, action: str) -> bool:
    """Would ``proto`` accept the local ``action`` now? (tried on a copy, which is thrown away; a
    handler that raises accepts it: taken, the step is the finding)"""
    try:
        copy.deepcopy(proto).on_local(action)
    except HandlerError:
        return True
    except ProtocolError:
        return False
    return True


def derive(config: Config, steps: Sequence[dict | Step]) -> SessionState:
    """The world ``steps`` (dicts or parsed steps) lead to from ``config``'s start. Raises ScenarioError naming the step."""
    setup = config.setup()
    starts = {pid: proto.clock.time for pid, proto in setup.protocols.items()}  # before anything runs
    run = ExplorerRun(setup, TraceWriter(None, keep=True))
    run.start_all()
    world = SessionState(config, run, [], [], starts)
    for number, raw in enumerate(steps, 1):
        step = _parse_step(raw) if isinstance(raw, dict) else raw
        label = world.label_of(_dump(step))
        run.play(step, number)
        world.steps.append(_dump(step))
        world.labels.append(label)
    return world
