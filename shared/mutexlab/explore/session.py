"""The explorer's session: a path through the worlds of one configuration, taken step by step.

The worlds are ``state.py``'s, re-derived from the steps taken; so ``mutexlab replay`` of
:meth:`Session.scenario` reproduces the path exactly. Undo drops the last step and re-derives
the world; redo replays it; jump moves to any earlier (or, through the redo list, later) step.
Findings are those of ``mutexlab check`` and ``verify``, live (``view.py``). A step whose handler
raises (``protocol.HandlerError``) is a finding too: the path stays where it was (the step never
completed), and the state says which step raised, how, and the scenario that reaches it, until
the next move.

No web code here: ``explore/server.py`` serves this over HTTP.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

from ..audit import verify_events
from ..findings import SAFETY, kind_of
from ..protocols import registry
from ..sim.scripted import ScenarioError, StepRefused, load_scenario
from ..trace import TraceError
from .state import (
    RANDOM_LIMIT,
    RUN_LIMIT,
    Config,
    ExploreError,
    SessionState,
    _dump,
    _parse_step,
    derive,
    step_id,
)

__all__ = ["Config", "ExploreError", "Session", "derive", "session_from_scenario", "step_id"]


class Session:
    """A path through the worlds of one configuration, with undo/redo, jump, random runs and
    import/export. Every method either succeeds or raises and leaves the session unchanged."""

    def __init__(self, config: Config, steps: list[dict] | None = None) -> None:
        self.world = derive(config, list(steps or []))
        self.redo_steps: list[dict] = []  # the undone steps, next one last
        self.raised: dict | None = None  # the step just tried whose handler raised (a finding)

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
        if self.raised is not None:  # a finding that outranks what the path so far shows
            found = out["findings"]
            found["raised"] = self.raised
            found["status"] = "violation"
            found["summary"] = f"VIOLATION at step {len(self.world.steps) + 1}: {self.raised['message']}"
        return out

    def scenario(self) -> dict:
        """The path so far as a scenario ``mutexlab replay`` reproduces exactly."""
        c = self.config
        out: dict = {"algorithm": _portable(c), "processes": c.processes, "options": c.workload}
        if c.seed:
            out["seed"] = c.seed
        out["steps"] = [dict(s) for s in self.world.steps]
        return out

    # -- moving ---------------------------------------------------------------------------
    def step(self, sid: Any) -> dict:
        """Take the enabled step ``sid``. Returns the step taken (or tried, when its handler raised)."""
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
        if not self._advance(step):
            return step  # its handler raised: the finding is in the state, the path as it was
        if self.redo_steps and self.redo_steps[-1] == step:
            self.redo_steps.pop()  # the same step as the one undone: keep the rest
        else:
            self.redo_steps = []  # a different branch
        return step

    def _advance(self, step: dict) -> bool:
        """Take ``step``; False when its handler raised (then ``raised`` holds the finding)."""
        world = self.world
        label = world.label_of(step)
        self.raised = None
        try:
            world.run.play(_parse_step(step), len(world.steps) + 1)
        except ScenarioError as exc:
            self.world = derive(world.config, world.steps)  # the failed step may have half-run
            if isinstance(exc, StepRefused) and exc.raised:  # the algorithm's bug: a finding
                scenario = self.scenario()
                scenario["steps"].append(dict(step))
                self.raised = {"step": dict(step), "label": label, "message": str(exc), "scenario": scenario}
                return False
            raise ExploreError(str(exc)) from None
        world.steps.append(dict(step))
        world.labels.append(label)
        return True

    def undo(self) -> None:
        if not self.world.steps:
            raise ExploreError("nothing to undo: no step taken yet")
        self.jump(len(self.world.steps) - 1)

    def redo(self) -> None:
        if not self.redo_steps:
            raise ExploreError("nothing to redo")
        step = self.redo_steps[-1]
        if self._advance(step):
            self.redo_steps.pop()

    def jump(self, position: Any) -> None:
        """Go to the world after ``position`` steps: back along the history (the steps undone
        can be redone) or forward along the redo list."""
        if isinstance(position, bool) or not isinstance(position, int) or position < 0:
            raise ExploreError(f"'to' must be a whole number of steps ≥ 0, got {position!r}", 400)
        here, ahead = len(self.world.steps), len(self.redo_steps)
        if not 0 <= position <= here + ahead:
            raise ExploreError(f"cannot jump to step {position}: the path has steps 0..{here + ahead}")
        self.raised = None
        if position < here:
            undone = self.world.steps[position:]
            self.world = derive(self.world.config, self.world.steps[:position])
            self.redo_steps += list(reversed(undone))
        while len(self.world.steps) < position and self.raised is None:
            self.redo()

    def reset(self) -> None:
        self.raised = None
        self.world = derive(self.world.config, [])
        self.redo_steps = []

    def random(self, count: Any, seed: Any = 0, to_end: bool = False, deadline: float | None = None) -> dict:
        """Take up to ``count`` steps chosen at random (``random.Random(seed)`` among the enabled
        steps, in their listed order); with ``to_end``, new requests are never chosen and the
        walk goes on until the path ends (at most RUN_LIMIT steps). Stops at the first step
        that shows a violation, or when nothing is enabled, or (``stopped``: "time") once
        ``time.monotonic()`` passes ``deadline``: the same call again goes on from there.
        Returns what happened."""
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
            if deadline is not None and time.monotonic() > deadline:
                stopped = "time"
                break
            choices = [s for s in self.world.enabled() if not (to_end and s["extra"])]
            if not choices:
                stopped = "end"
                break
            if not self._advance(rng.choice(choices)["step"]):
                stopped = "raised"
                break
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

    def run_to_end(self, seed: Any = 0, deadline: float | None = None) -> dict:
        return self.random(RUN_LIMIT, seed, to_end=True, deadline=deadline)

    def copy(self) -> Session:
        """An independent session on the same path (re-derived: worlds are never shared), with
        the same steps ahead: a long walk runs on it outside the server's lock."""
        twin = Session(self.config, self.world.steps)
        twin.redo_steps = [dict(s) for s in self.redo_steps]
        return twin

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

    def _safety_violations(self, world: SessionState | None = None) -> bool:
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
        self.raised = None


def _portable(c: Config) -> str:
    """The algorithm as an exported scenario names it: a solution's file by the name its SPEC
    declares, never by a path (where the browser saves the download is not known here, and a path
    of this machine means nothing on another): ``replay`` and ``explore --scenario`` take it with
    ``--algorithm FILE`` from anywhere. A registered name or a module as it is."""
    if not registry.is_file(c.algorithm):
        return c.algorithm
    spec = c.resolved().spec
    return spec.name if registry.lookup(spec.name) is spec else c.algorithm  # a variant: its path


def _scenario_path(source: str | Path | dict) -> tuple[Config, list[dict]]:
    """A scenario's configuration and steps, every step checked by playing it. Raises ScenarioError."""
    scenario = load_scenario(source)
    config = Config(
        scenario.algorithm, scenario.processes, dict(scenario.options), int(getattr(scenario, "seed", 0) or 0)
    )
    steps = list(scenario.steps)
    try:
        world = derive(config, steps)
    except StepRefused as exc:
        if not exc.raised:
            raise
        # a step whose handler raises (check's counterexample of it) ends the path: taken, it is the finding
        world = derive(config, steps[: exc.number - 1])
        return config, [*world.steps, _dump(steps[exc.number - 1])]
    return config, world.steps


def session_from_scenario(source: str | Path | dict) -> Session:
    """A session at step 0 of a scenario, its steps ahead (``Session.load``). Raises ScenarioError."""
    config, steps = _scenario_path(source)
    session = Session(config)
    session.redo_steps = list(reversed(steps))
    return session
