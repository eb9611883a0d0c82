"""What the explorer's page shows of a world on a path: its processes, links and enabled steps
(``view``), and the live findings (``findings``): exact occupancy (who holds what, a real global
state, against each capacity), the audit (``audit/``) of the trace of the path so far, and at the
end of a path, deadlock with the stall explanation (``audit/stall.py``). Audit rules about how a
run *ends* (requests served, everyone finished) are judged only at the end: in the middle of a
path a waiting request is not a fault."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..audit import numbered, verify_events
from ..audit.stall import explain_stall
from ..findings import PROGRESS, UNDECIDED, kind_of
from ..setups import capacity_of
from ..show import state_text
from ..sim.stuck import said as stuck_said
from ..sim.stuck import wanted
from ..trace import TraceError
from ..waiting import WaitsRaised, waits
from ..words import count
from .describe import describe_message, describe_process

if TYPE_CHECKING:
    from .state import SessionState


def findings(world: SessionState, enabled: list[dict] | None = None) -> dict:
    """The live findings of the path so far (see ``session.py``): capacity now, the audit of the
    trace, deadlock at the end; the status and summary line the page shows."""
    run, setup = world.run, world.setup
    names = setup.names
    end = world.at_end(enabled)
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
    events = numbered(world.events)
    try:
        verdict = verify_events(events)
        audit_error = None
    except TraceError as exc:  # cannot happen for a trace the driver wrote; said, not hidden
        verdict, audit_error = None, str(exc)
    violations: list[dict[str, str]] = []
    at_end: list[dict[str, str]] = []
    incomplete: list[dict[str, str]] = []
    again: set[int] = set()  # the audit's capacity findings the exact occupancy states already
    for v in verdict.violations if verdict else []:
        item = {"rule": v.rule, "message": v.message, "text": v.describe()}
        if v.rule == "capacity" and {e.get("resource") for e in v.events} & run.overfull_resources:
            again.add(id(item))  # listed, but said once in the headline
        # Progress findings (findings.py) are about the end of a run: judged only once
        # the path has reached its end.
        kind = kind_of(v.rule)
        (incomplete if kind == UNDECIDED else at_end if kind == PROGRESS else violations).append(item)
    violations = [
        {"rule": "capacity-now", "message": m, "text": f"[capacity-now] {m}"} for m in run.overfull
    ] + violations
    unfinished = [p for p, proto in sorted(run.protocols.items()) if not proto.finished]
    deadlock, waited = None, dict[str, dict[str, list[str]]]()
    if end and unfinished:
        states = {names[p]: state_text(proto.state) for p, proto in run.protocols.items()}
        holding = {r: [names[p] for p, _ in hs] for r, hs in run.holdings.items() if hs}
        wants = {
            names[p]: wanted(
                run.protocols[p], list(setup.capacities), [r for r, hs in holding.items() if names[p] in hs]
            )
            for p in unfinished
        }
        waited, raised = _stalled(run)
        explained = explain_stall(waited, states, holding, wants) + (f"\n{raised}" if raised else "")
        deadlock = explained or "nothing can move, yet not every process finished"
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
        said = [v for v in violations if id(v) not in again]
        summary = f"VIOLATION after {count(len(world.steps), 'step')}: " + "; ".join(
            v["message"] for v in (said or at_end)
        )
    elif status == "deadlock":
        summary = (
            f"DEADLOCK after {count(len(world.steps), 'step')}: nothing can move; waiting: "
            + stuck_said(
                setup.capacities,
                [(names[p], run.protocols[p], waited[names[p]]) for p in unfinished],
                {r: [(names[p], u) for p, u in hs] for r, hs in run.holdings.items() if hs},
            )
        )
    elif status == "end":
        summary = f"END after {count(len(world.steps), 'step')}: every process finished; no violation"
    else:
        summary = f"no violation in the {count(len(world.steps), 'step')} so far (the path is not finished)"
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


def _stalled(run) -> tuple[dict, str]:
    """What each unfinished process of ``run`` waits for (``UNKNOWN`` for one whose
    ``waiting_for()`` raised), and the error, if one raised: said as ``run`` and ``simulate`` say
    it — what it waits for is unknown — never an internal error."""
    try:
        return run.waiting(), ""
    except WaitsRaised as exc:
        return exc.waiting(run.names[pid] for pid in sorted(run.protocols)), exc.short


def _waiting(proto, names: dict) -> dict[str, list[str]]:
    """What ``proto`` waits for, by name. A ``waiting_for()`` that raises is shown as what it is:
    the card is drawn at every step, stalled or not, and one raising in some state (``check`` and
    ``simulate`` ask only at a stall) must not stop the explorer from drawing the world."""
    try:
        lacks = waits(proto)
    except WaitsRaised as exc:
        if proto.finished:
            return {}
        return {f"unknown: {exc.why}": []}  # what it raised, and its line
    return {what: [names.get(p, str(p)) for p in whom] for what, whom in lacks.items()}


def view(world: SessionState) -> dict:
    """Everything the page shows of ``world``: processes, links, enabled steps, findings."""
    run, setup = world.run, world.setup
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
                "state": state_text(proto.state),
                "clock": proto.clock.time,
                "start_clock": world.start_clocks[pid],
                "holds": sorted(held.get(pid, [])),
                "finished": bool(proto.finished),
                "waiting": _waiting(proto, names),
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
                        {"id": mid, "type": msg.type, "text": describe_message(msg)} for msg, mid, _ in queue
                    ],
                }
            )
    enabled = world.enabled()
    return {
        "algorithm": setup.algorithm,
        "processes": world.config.processes,
        "options": world.config.options,
        "params": setup.params,
        "capacities": setup.capacities,
        "procs": procs,
        "links": links,
        "steps": [
            {"id": s["id"], "label": s["label"], "op": s["step"]["op"], "extra": s["extra"]} for s in enabled
        ],
        "findings": findings(world, enabled),
        "free": world.free,
        "endless": world.config.endless,
    }
