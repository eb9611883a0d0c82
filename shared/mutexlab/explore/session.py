"""The explorer's session: a path through the worlds of one configuration, taken step by step.

A *world* is the setup plus the list of steps taken from its start; it is never stored, only
re-derived: protocols are deterministic, so replaying the same steps (``sim/scripted.py``'s
``ScriptedRun``, the very driver behind ``mutexlab replay``) gives the same world and the same
trace, byte for byte. Hence:

* a step is a scenario step (``{"op": "deliver", "from": 1, "to": 2}`` ...), so the path so far
  *is* a scenario, and ``mutexlab replay`` of :meth:`Session.scenario` reproduces it exactly;
* undo drops the last step and re-derives the world; redo replays it; jump moves to any
  earlier (or, through the redo list, later) step.

The enabled steps of a world: every process's pending local decisions (the ``Schedule``
effects it asked for and that have not been taken, as ``request``/``exit``) and the head of
every non-empty link (links are FIFO). With a workload of 0 requests (a hand-written scenario:
nodes act "only when told") an idle classic node may also make a new ``request``: such steps
are marked ``extra`` and "run to the end" does not take them (else it would never end).

Findings are those of ``mutexlab check`` and ``verify``, live: exact occupancy (who holds what,
a real global state, against each capacity), the audit (``audit/``) of the trace of the path
so far, and at the end of a path, deadlock with the stall explanation (``audit/stall.py``).
Audit rules about how a run *ends* (requests served, everyone finished) are judged only at
the end: in the middle of a path a waiting request is not a fault.

No web code here: ``explore/server.py`` serves this over HTTP.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..audit import numbered, verify_events
from ..audit.stall import explain_stall
from ..findings import PROGRESS, SAFETY, UNDECIDED, kind_of
from ..protocol import Enter, Exit, ProtocolError
from ..protocols.registry import build_setup
from ..setup import ConfigError, Setup, capacity_of
from ..sim.scripted import MAX_PROCESSES, ScenarioError, ScriptedRun, Step, load_scenario
from ..trace import TraceError, TraceWriter
from ..words import count
from .describe import describe_message, describe_process

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

    algorithm: str
    processes: int
    options: dict = field(default_factory=dict)
    seed: int = 0

    def setup(self) -> Setup:
        if self.processes > MAX_PROCESSES:  # refused before anything is built
            raise ScenarioError(
                f"invalid configuration: at most {MAX_PROCESSES} processes, got {self.processes}"
            )
        try:
            return build_setup(self.algorithm, self.processes, dict(self.options), self.seed)
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
        self.holdings: dict[str, list[tuple[int, int]]] = {}  # resource → [(pid, units)], in entry order
        self.overfull: list[str] = []  # capacity breaches, as they happened

    def holding_changed(self, pid: int, effect: Enter | Exit) -> None:
        held = self.holdings.setdefault(effect.resource, [])
        if isinstance(effect, Enter):
            held.append((pid, effect.units))
            cap = capacity_of(self.setup.capacities, effect.resource)
            if sum(u for _, u in held) > cap:
                self.overfull.append(
                    f"{effect.resource} (capacity {cap}) held by "
                    + ", ".join(f"{self.names[p]}" + (f"×{u}" if u != 1 else "") for p, u in held)
                    + f" at once (step {int(self.now)})"
                )
        elif (pid, effect.units) in held:
            held.remove((pid, effect.units))


def _parse_step(raw: dict) -> Any:
    """A step dict → the parsed step model of ``sim/scripted.py`` (whatever ops it knows)."""
    return load_scenario({"algorithm": "-", "processes": 1, "steps": [raw]}).steps[0]


def _dump(step: Any) -> dict:
    return step.model_dump(by_alias=True)


@dataclass
class World:
    """The world reached by ``steps`` from ``config``'s start (derived, never edited by hand)."""

    config: Config
    run: ExplorerRun
    steps: list[dict]
    labels: list[str]

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
        """Every enabled step: ``{"id", "label", "step", "extra"}``; pending local decisions
        first (by pid), then the head of each non-empty link (by (from, to)), then new requests."""
        run, names = self.run, self.setup.names
        out, extra = [], []
        for pid in sorted(run.protocols):
            actions: list[tuple[str, str]] = []
            for action, dwell in run.pending.get(pid, []):
                if action in LOCAL_OPS and action not in [a for a, _ in actions]:
                    actions.append((action, dwell))
            for action, dwell in sorted(actions):
                step = {"op": action, "pid": pid}
                out.append(
                    {
                        "id": step_id(step),
                        "step": step,
                        "extra": False,
                        "label": f"{names[pid]}: {action} (after {dwell}; state {run.protocols[pid].state})",
                    }
                )
            if (
                self.free
                and "request" not in [a for a, _ in actions]
                and _accepts(run.protocols[pid], "request")
            ):
                step = {"op": "request", "pid": pid}
                extra.append(
                    {
                        "id": step_id(step),
                        "step": step,
                        "extra": True,
                        "label": f"{names[pid]}: request (a new request; state {run.protocols[pid].state})",
                    }
                )
        for (sender, to), queue in sorted(run.links.items()):
            if queue:
                step = {"op": "deliver", "from": sender, "to": to}
                out.append(
                    {
                        "id": step_id(step),
                        "step": step,
                        "extra": False,
                        "label": f"deliver {describe_message(queue[0][0])} {names[sender]}→{names[to]}",
                    }
                )
        return out + extra

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

    # -- findings ------------------------------------------------------------------------
    def at_end(self, enabled: list[dict] | None = None) -> bool:
        """No step left to take but new requests."""
        steps = self.enabled() if enabled is None else enabled
        return not any(not s["extra"] for s in steps)

    def findings(self, enabled: list[dict] | None = None) -> dict:
        run, setup = self.run, self.setup
        names = setup.names
        end = self.at_end(enabled)
        capacity = []
        for resource, held in sorted(run.holdings.items()):
            if not held:
                continue
            cap = capacity_of(setup.capacities, resource)
            used = sum(u for _, u in held)
            capacity.append(
                {
                    "resource": resource,
                    "capacity": cap,
                    "in_use": used,
                    "over": used > cap,
                    "holders": [{"name": names[p], "units": u} for p, u in held],
                }
            )
        events = numbered(self.events)
        try:
            verdict = verify_events(events)
            audit_error = None
        except TraceError as exc:  # cannot happen for a trace the driver wrote; said, not hidden
            verdict, audit_error = None, str(exc)
        violations: list[dict[str, str]] = []
        at_end: list[dict[str, str]] = []
        incomplete: list[dict[str, str]] = []
        for v in verdict.violations if verdict else []:
            item = {"rule": v.rule, "message": v.message, "text": v.describe()}
            # Progress findings (findings.py) are about the end of a run: judged only once
            # the path has reached its end.
            kind = kind_of(v.rule)
            (incomplete if kind == UNDECIDED else at_end if kind == PROGRESS else violations).append(item)
        violations = [
            {"rule": "capacity-now", "message": m, "text": f"[capacity-now] {m}"} for m in run.overfull
        ] + violations
        unfinished = [p for p, proto in sorted(run.protocols.items()) if not proto.finished]
        deadlock = None
        if end and unfinished:
            states = {names[p]: proto.state for p, proto in run.protocols.items()}
            deadlock = (
                explain_stall(run.waiting(), states) or "nothing can move, yet not every process finished"
            )
        if violations:
            status = "violation"
        elif deadlock:
            status = "deadlock"
        elif end:
            status = "violation" if at_end else "end"
        else:
            status = "running"
        checks = (verdict.checks if verdict else []) + [
            "capacity in every world (exact occupancy)",
            "deadlock",
        ]
        if status == "violation":
            summary = f"VIOLATION after {count(len(self.steps), 'step')}: " + "; ".join(
                v["message"] for v in (violations or at_end)
            )
        elif status == "deadlock":
            summary = (
                f"DEADLOCK after {count(len(self.steps), 'step')}: nothing can move and "
                f"{', '.join(names[p] for p in unfinished)} not finished"
            )
        elif status == "end":
            summary = f"END after {count(len(self.steps), 'step')}: every process finished; no violation"
        else:
            summary = (
                f"no violation in the {count(len(self.steps), 'step')} so far (the path is not finished)"
            )
        if incomplete:
            summary += " — the audit gave up on part of the trace (incomplete, not a verdict)"
        if audit_error:
            summary += f" — the audit could not read the trace: {audit_error}"
        return {
            "status": status,
            "summary": summary,
            "at_end": end,
            "capacity": capacity,
            "violations": violations,
            "end_violations": at_end if end else [],
            "open_at_end": [] if end else at_end,
            "incomplete": incomplete,
            "deadlock": deadlock,
            "checks": checks,
            "entered": list(run.entered),
        }

    # -- the view --------------------------------------------------------------------------
    def view(self) -> dict:
        run, setup = self.run, self.setup
        names = setup.names
        held: dict[int, list[str]] = {}
        for resource, holders in run.holdings.items():
            for p, units in holders:
                held.setdefault(p, []).append(resource + (f" ×{units}" if units != 1 else ""))
        procs = []
        for pid, proto in sorted(run.protocols.items()):
            procs.append(
                {
                    "pid": pid,
                    "name": names[pid],
                    "state": proto.state,
                    "clock": proto.clock.time,
                    "holds": sorted(held.get(pid, [])),
                    "finished": bool(proto.finished),
                    "waiting": {
                        what: [names.get(p, str(p)) for p in whom]
                        for what, whom in proto.waiting_for().items()
                    },
                    "pending": [f"{a} (after {d})" for a, d in run.pending.get(pid, [])],
                    "fields": describe_process(proto, setup),
                }
            )
        links = []
        for (sender, to), queue in sorted(run.links.items()):
            if queue:
                links.append(
                    {
                        "from": sender,
                        "to": to,
                        "label": f"{names[sender]}→{names[to]}",
                        "messages": [
                            {"id": mid, "type": msg.type, "text": describe_message(msg)}
                            for msg, mid, _ in queue
                        ],
                    }
                )
        enabled = self.enabled()
        return {
            "algorithm": setup.algorithm,
            "processes": self.config.processes,
            "options": self.config.options,
            "params": setup.params,
            "capacities": setup.capacities,
            "procs": procs,
            "links": links,
            "steps": [
                {"id": s["id"], "label": s["label"], "op": s["step"]["op"], "extra": s["extra"]}
                for s in enabled
            ],
            "findings": self.findings(enabled),
            "free": self.free,
        }


def _accepts(proto: Any, action: str) -> bool:
    """Would ``proto`` accept the local ``action`` now? (tried on a copy, which is thrown away)"""
    try:
        copy.deepcopy(proto).on_local(action)
    except ProtocolError:
        return False
    return True


def derive(config: Config, steps: Sequence[dict | Step]) -> World:
    """The world ``steps`` (dicts or parsed steps) lead to from ``config``'s start. Raises ScenarioError naming the step."""
    setup = config.setup()
    run = ExplorerRun(setup, TraceWriter(None, keep=True))
    run.start_all()
    world = World(config, run, [], [])
    for number, raw in enumerate(steps, 1):
        step = _parse_step(raw) if isinstance(raw, dict) else raw
        label = world.label_of(_dump(step))
        run.play(step, number)
        world.steps.append(_dump(step))
        world.labels.append(label)
    return world


class Session:
    """A path through the worlds of one configuration, with undo/redo, jump, random runs and
    import/export. Every method either succeeds or raises and leaves the session unchanged."""

    def __init__(self, config: Config, steps: list[dict] | None = None) -> None:
        self.world = derive(config, list(steps or []))
        self.redo_steps: list[dict] = []  # the undone steps, next one last

    # -- reading --------------------------------------------------------------------------
    @property
    def config(self) -> Config:
        return self.world.config

    def state(self) -> dict:
        out = self.world.view()
        out["history"] = [
            {"n": n, "id": step_id(s), "label": label, "step": s}
            for n, (s, label) in enumerate(zip(self.world.steps, self.world.labels), 1)
        ]
        out["redo"] = [step_id(s) for s in reversed(self.redo_steps)]
        out["position"] = len(self.world.steps)
        return out

    def scenario(self) -> dict:
        """The path so far as a scenario ``mutexlab replay`` reproduces exactly."""
        c = self.config
        out: dict = {"algorithm": c.algorithm, "processes": c.processes, "options": c.options}
        if c.seed:
            out["seed"] = c.seed
        out["steps"] = [dict(s) for s in self.world.steps]
        return out

    # -- moving ---------------------------------------------------------------------------
    def step(self, sid: Any) -> dict:
        """Take the enabled step ``sid``. Returns the step taken."""
        if not isinstance(sid, str):
            raise ExploreError(
                f"a step id is a string such as 'request:1' or 'deliver:1-2', got {sid!r}", 400
            )
        enabled = {s["id"]: s for s in self.world.enabled()}
        if sid not in enabled:
            raise ExploreError(
                f"step {sid!r} is not enabled now; enabled: "
                + (", ".join(enabled) or "none (the path has ended)")
            )
        step = enabled[sid]["step"]
        self._advance(step)
        if self.redo_steps and self.redo_steps[-1] == step:
            self.redo_steps.pop()  # the same step as the one undone: keep the rest
        else:
            self.redo_steps = []  # a different branch
        return step

    def _advance(self, step: dict) -> None:
        world = self.world
        label = world.label_of(step)
        try:
            world.run.play(_parse_step(step), len(world.steps) + 1)
        except ScenarioError as exc:
            self.world = derive(world.config, world.steps)  # the failed step may have half-run
            raise ExploreError(str(exc)) from None
        world.steps.append(dict(step))
        world.labels.append(label)

    def undo(self) -> None:
        if not self.world.steps:
            raise ExploreError("nothing to undo: no step taken yet")
        self.jump(len(self.world.steps) - 1)

    def redo(self) -> None:
        if not self.redo_steps:
            raise ExploreError("nothing to redo")
        step = self.redo_steps[-1]
        self._advance(step)
        self.redo_steps.pop()

    def jump(self, position: Any) -> None:
        """Go to the world after ``position`` steps: back along the history (the steps undone
        can be redone) or forward along the redo list."""
        if isinstance(position, bool) or not isinstance(position, int):
            raise ExploreError(f"'to' must be a whole number of steps, got {position!r}", 400)
        here, ahead = len(self.world.steps), len(self.redo_steps)
        if not 0 <= position <= here + ahead:
            raise ExploreError(f"cannot jump to step {position}: the path has steps 0..{here + ahead}")
        if position < here:
            undone = self.world.steps[position:]
            self.world = derive(self.world.config, self.world.steps[:position])
            self.redo_steps += list(reversed(undone))
        while len(self.world.steps) < position:
            self.redo()

    def reset(self) -> None:
        self.world = derive(self.world.config, [])
        self.redo_steps = []

    def random(self, count: Any, seed: Any = 0, to_end: bool = False) -> dict:
        """Take up to ``count`` steps chosen at random (``random.Random(seed)`` among the enabled
        steps, in their listed order); with ``to_end``, new requests are never chosen and the
        walk goes on until the path ends (at most RUN_LIMIT steps). Stops at the first step
        that shows a violation, or when nothing is enabled. Returns what happened."""
        for name, value in (("n", count), ("seed", seed)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ExploreError(f"{name!r} must be a whole number ≥ 0, got {value!r}", 400)
        limit = RUN_LIMIT if to_end else RANDOM_LIMIT
        if count > limit:
            raise ExploreError(f"at most {limit} random steps at once, got {count}", 400)
        rng = random.Random(seed)
        start = len(self.world.steps)
        taken, stopped = 0, "count"
        overfull_before = len(self.world.run.overfull)
        watch = not self._safety_violations()  # a violation already there stops nothing
        clean = start  # the last position audited without a violation
        while taken < count:
            choices = [s for s in self.world.enabled() if not (to_end and s["extra"])]
            if not choices:
                stopped = "end"
                break
            self._advance(rng.choice(choices)["step"])
            taken += 1
            if len(self.world.run.overfull) > overfull_before:
                stopped = "violation"
                break
            if watch and self._audit_due(taken):
                if self._safety_violations():
                    stopped = "violation"
                    break
                clean = len(self.world.steps)
        else:
            if to_end:
                stopped = "limit"
        if stopped != "violation" and watch and clean < len(self.world.steps) and self._safety_violations():
            stopped = "violation"
        if stopped == "violation" and watch and clean < len(self.world.steps) - 1:
            self._back_to_first_violation(clean)
        if taken:
            self.redo_steps = []
        return {"taken": len(self.world.steps) - start, "stopped": stopped, "position": len(self.world.steps)}

    def run_to_end(self, seed: Any = 0) -> dict:
        return self.random(RUN_LIMIT, seed, to_end=True)

    def _audit_due(self, taken: int) -> bool:
        """Audit after every step while the trace is short; on long walks every 25 steps (the
        exact capacity check runs every step; a late find is traced back by bisection)."""
        return len(self.world.events) < 300 or taken % 25 == 0

    def _back_to_first_violation(self, clean: int) -> None:
        """The audit found a violation at the current position and none at ``clean``: move back
        to the first position that shows it (a safety violation stays in every longer path)."""
        steps, config = self.world.steps, self.world.config
        low, high = clean, len(steps)  # low: clean, high: violating
        while high - low > 1:
            mid = (low + high) // 2
            if self._safety_violations(derive(config, steps[:mid])):
                high = mid
            else:
                low = mid
        self.world = derive(config, steps[:high])

    def _safety_violations(self, world: World | None = None) -> bool:
        events = (world or self.world).events
        try:
            verdict = verify_events(events)
        except TraceError:
            return False
        return any(kind_of(v.rule) == SAFETY for v in verdict.violations)

    def load(self, source: str | Path | dict) -> None:
        """Start over from a scenario (a file or its JSON object): its configuration, at step 0,
        with its steps ahead to redo one by one (or jump to). Every step is played first, so an
        invalid scenario raises ExploreError (422) naming the step and changes nothing."""
        try:
            config, steps = _scenario_path(source)
        except ScenarioError as exc:
            raise ExploreError(str(exc), 422) from None
        self.world = derive(config, [])
        self.redo_steps = list(reversed(steps))


def _scenario_path(source: str | Path | dict) -> tuple[Config, list[dict]]:
    """A scenario's configuration and steps, every step checked by playing it. Raises ScenarioError."""
    scenario = load_scenario(source)
    config = Config(
        scenario.algorithm, scenario.processes, dict(scenario.options), int(getattr(scenario, "seed", 0) or 0)
    )
    world = derive(config, list(scenario.steps))
    return config, world.steps


def session_from_scenario(source: str | Path | dict) -> Session:
    """A session at step 0 of a scenario, its steps ahead (``Session.load``). Raises ScenarioError."""
    config, steps = _scenario_path(source)
    session = Session(config)
    session.redo_steps = list(reversed(steps))
    return session
