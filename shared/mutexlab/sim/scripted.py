"""Scripted schedules (docs/architecture.md#scenario-format): the scenario, not chance, picks every interleaving.

Steps: ``request`` / ``exit`` (a local decision of ``pid``), ``deliver`` (the oldest message in
flight on the link from → to), ``drain`` (deliver everything, links in ascending (from, to)
order, one message per link per pass, until nothing is in flight). ``Schedule`` effects are
not fired by themselves here: the scenario decides when a process acts.
Virtual time ``t`` is the number of the step being played (from 1).
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..protocol import ProtocolError
from ..protocols.registry import make_setup
from ..setup import ConfigError, Setup
from ..trace import TraceWriter
from .driver import Driver

DRAIN_LIMIT = 1_000_000


class ScenarioError(ValueError):
    """An invalid scenario or a step that cannot be played; the message says which and why."""


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


Step = Annotated[Union[RequestStep, ExitStep, DeliverStep, DrainStep], Field(discriminator="op")]


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")
    algorithm: str
    processes: int = Field(ge=1)
    options: dict[str, Any] = Field(default_factory=dict)
    steps: list[Step]


@dataclass
class ReplayResult:
    setup: Setup
    events: list[dict]
    entered: list[str]                      # names, in the order they entered (any resource)
    in_flight: int                          # messages still in flight at the end
    states: dict[str, str] = field(default_factory=dict)

    @property
    def protocols(self):
        return self.setup.protocols


class ScriptedRun(Driver):
    def __init__(self, setup: Setup, trace: TraceWriter) -> None:
        super().__init__(setup, trace)
        self.links: dict[tuple[int, int], deque] = {}
        self.entered: list[str] = []

    def transmit(self, sender: int, to: int, msg: Any, msg_id: str, vc: dict | None) -> None:
        self.links.setdefault((sender, to), deque()).append((msg, msg_id, vc))

    def schedule(self, pid: int, action: str, dwell: str) -> None:
        pass  # the scenario decides when processes act

    def deliver_oldest(self, sender: int, to: int) -> None:
        link = self.links.get((sender, to))
        if not link:
            raise ScenarioError(f"no message in flight from {sender} to {to}")
        msg, msg_id, vc = link.popleft()
        self.deliver(sender, to, msg, msg_id, vc)

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
            if delivered > DRAIN_LIMIT:
                raise ScenarioError(f"drain did not reach quiescence after {DRAIN_LIMIT} deliveries")


def load_scenario(source: str | Path | dict) -> Scenario:
    if not isinstance(source, dict):
        try:
            source = json.loads(Path(source).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ScenarioError(f"cannot read scenario {source}: {exc.strerror}") from None
        except json.JSONDecodeError as exc:
            raise ScenarioError(f"scenario is not JSON: {exc}") from None
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
        if rest and rest[0] == op:          # the union's tag, already named
            rest = rest[1:]
        head = f"step {loc[1] + 1}" + (f" ({op})" if isinstance(op, str) else "")
        return head + (f": {'.'.join(rest)}" if rest else "")
    return ".".join(str(p) for p in loc) or "scenario"


def replay_scenario(source: str | Path | dict | Scenario, trace: TraceWriter | None = None) -> ReplayResult:
    scenario = source if isinstance(source, Scenario) else load_scenario(source)
    try:
        setup = make_setup(scenario.algorithm, scenario.processes, scenario.options, seed=0)
    except ConfigError as exc:
        raise ScenarioError(f"invalid scenario: {exc}") from None
    trace = trace or TraceWriter(None, keep=True)
    run = ScriptedRun(setup, trace)
    run.start_all()
    for number, step in enumerate(scenario.steps, 1):
        run.now = float(number)
        for pid in _pids_of(step):
            if pid not in setup.protocols:
                raise ScenarioError(f"step {number} ({step.op}): no process {pid} "
                                    f"(processes are 1..{scenario.processes})")
        before = len(trace.events) if trace.events is not None else 0
        try:
            if isinstance(step, RequestStep):
                run.feed(step.pid, lambda p: p.on_local("request"))
            elif isinstance(step, ExitStep):
                run.feed(step.pid, lambda p: p.on_local("exit"))
            elif isinstance(step, DeliverStep):
                run.deliver_oldest(step.frm, step.to)
            else:
                run.drain()
        except (ProtocolError, ScenarioError) as exc:
            raise ScenarioError(f"step {number} ({step.op}): {exc}") from None
        if trace.events is not None:
            run.entered += [e["pid"] for e in trace.events[before:] if e["event"] == "enter"]
    return ReplayResult(setup=setup, events=trace.events or [], entered=run.entered,
                        in_flight=sum(len(q) for q in run.links.values()),
                        states={setup.names[p]: proto.state for p, proto in sorted(setup.protocols.items())})


def _pids_of(step) -> list[int]:
    if isinstance(step, (RequestStep, ExitStep)):
        return [step.pid]
    if isinstance(step, DeliverStep):
        return [step.frm, step.to]
    return []
