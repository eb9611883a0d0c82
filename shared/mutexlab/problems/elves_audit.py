"""The hamster killers' checks of a trace that need several processes' events (the ``elves``
problem's, elves.py), on top of the capacity audit (which already decides, by happened-before
with units summed, that pins and poison never exceed their totals and that no contract has two
holders at once) and of the rules one process's own events decide (elves_rules.py, which
``check`` applies too).

What they read is the statement's, whatever the solution: the mayor's ``round`` note at the
start of each round, its ``STOP`` message (a body with the ``round``) to every elf at the end of
one — or its ``stop`` note (``round``), its STOP to every elf as a program whose messages
mutexlab cannot read reports it (an MPI program's) — and an elf's ``contract_done`` note
(``round``, ``contract``):

* **contracts** — every contract of every round is done (``contract_done``) exactly once; no
  contract is entered twice;
* **stop** — each STOP of round r is sent after (happened-before) every ``contract_done`` of r;
* **finished** — every round began and was stopped towards every elf.

The plan (hamsters per contract, per round) is the run header's; a header without one (a mayor
that drew its own: ``mutexlab test --mpi``) takes each round's from the mayor's ``round`` note,
its ``contracts``. A round whose note names no contracts leaves what needs the plan — every
contract done, none done that the mayor did not hand out, the poison by the contract's hamsters —
undecided (``plan-unreported``): never safe, never a violation.

A run header's plan or hamsters, or a message body, of the wrong type makes the trace unreadable: TraceError
naming the line, not a verdict. A solution may check more of its own messages (its spec's
``audit``: mutexlab's elves check their rounds' replies and contract positions).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ..clock import happened_before
from ..findings import PROGRESS, SAFETY, UNDECIDED, Invariants, Violation
from ..trace import event_error, whole
from ..words import count
from .elves_rules import CONTRACT_PREFIX, ELF_PREFIX, MAYOR_NAME, RULES

CHECKS = (
    "elves: each contract of each round taken and done exactly once",
    "elves: STOP only after every contract of its round is done (happened-before)",
    "elves: all rounds begun and stopped",
)
STOP = "STOP"  # the mayor's message ending a round (its body names the ``round``)
STOP_NOTE = "stop"  # the mayor's note that it stopped a round towards every elf (its ``round``)

Plan = list[list[int]]  # the mayor's plan: hamsters per contract, per round
Done = dict[
    tuple[Any, Any], list[dict[str, Any]]
]  # (round, contract), as the trace has them → contract_done events


def _check_params(run: dict[str, Any]) -> None:
    """The run header's parameters this audit reads have the statement's types (TraceError naming
    the line and the field, the value shown cut short, if not)."""
    params = run.get("params") or {}
    hamsters = params.get("hamsters")
    if hamsters is not None and not (
        isinstance(hamsters, list)
        and 1 <= len(hamsters) <= 2
        and all(whole(h) and h >= 1 for h in hamsters)
        and hamsters[0] <= hamsters[-1]
    ):
        raise event_error(
            run,
            "the run header's params.hamsters must be a list [min, max] of whole numbers, "
            f"1 ≤ min ≤ max (hamsters per contract), not {hamsters!r:.40}",
        )
    plan = params.get("plan")
    if plan is not None and not (
        isinstance(plan, list)
        and all(isinstance(r, list) and all(whole(h) and h >= 1 for h in r) for r in plan)
    ):
        raise event_error(
            run,
            "the run header's params.plan must be a list of rounds, each a list of "
            "whole numbers ≥ 1 (hamsters per contract)",
        )
    for key in ("rounds", "poison_per_hamster"):
        if key in params and not whole(params[key]):
            raise event_error(run, f"the run header's params.{key} must be a whole number")


def _check_fields(events: list[dict[str, Any]], run: dict[str, Any]) -> None:
    """The run parameters and message bodies this audit reads have the statement's types; a
    trace whose do not is unreadable (TraceError naming the line), not unsafe."""
    _check_params(run)
    for e in events:
        body = e.get("msg")
        if e["event"] == "send" and body is not None:
            if e["type"] == STOP:
                missing = [k for k in ("sender", "ts", "round") if k not in body]
                if missing:
                    raise event_error(e, f"{e['type']} body lacks {', '.join(missing)}")
            bad = [k for k in ("sender", "ts", "round") if k in body and not whole(body[k])]
            if bad:
                raise event_error(e, f"{e['type']} body's {bad[0]!r} must be a whole number")


def check(events: list[dict[str, Any]], run: dict[str, Any]) -> list[Violation]:
    _check_fields(events, run)
    params = run.get("params") or {}
    names = {str(n) for n in (run.get("processes") or {}).values()}
    elves = sorted(n for n in names if n.startswith(ELF_PREFIX))
    plan = params.get("plan")
    mayor: list[dict[str, Any]] = [e for e in events if e["pid"] == MAYOR_NAME]
    done: Done = defaultdict(list)
    for e in events:
        if e["event"] == "contract_done":
            done[(e.get("round"), e.get("contract"))].append(e)
    return [
        *_exactly_once(events, plan, done),
        *_stop_after_done(mayor, plan, done),
        *_finished(mayor, elves, params),
    ]


SHOWN = 10  # the times a repeated taking names (a run looping on one contract repeats it 24,000 times)


def _repeated(rule: str, what: str, verb: str, events: list[dict[str, Any]]) -> Violation:
    """``what`` happened more than once: ``events``, the times it did (the first ``SHOWN``)."""
    by = ", ".join(e["pid"] for e in events[:SHOWN])
    more = f", … (the first {SHOWN} shown)" if len(events) > SHOWN else ""
    return Violation(rule, f"{what} was {verb} {len(events)} times, by {by}{more}", events[:SHOWN])


def _exactly_once(events: list[dict[str, Any]], plan: Plan | None, done: Done) -> list[Violation]:
    found = []
    entered: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in events:
        if e["event"] == "enter" and e.get("resource", "").startswith(CONTRACT_PREFIX):
            entered[e["resource"]].append(e)
    for resource, enters in sorted(entered.items()):
        if len(enters) > 1:
            found.append(_repeated("contract-twice", resource, "taken", enters))
    for (r, i), notes in sorted(done.items(), key=lambda kv: str(kv[0])):
        if len(notes) > 1:
            found.append(_repeated("contract-done-twice", f"contract {r}.{i}", "done", notes))
    if plan is not None:
        for r, contracts in enumerate(plan, 1):
            for i in range(1, len(contracts) + 1):
                if not done.get((r, i)):
                    found.append(Violation("contract-not-done", f"contract {r}.{i} was never done", []))
    return found


def _stop_after_done(mayor: list[dict[str, Any]], plan: Plan | None, done: Done) -> list[Violation]:
    found = []
    current = 0
    reported: set[tuple[int, int]] = set()
    for e in mayor:
        if e["event"] == "round":
            current = e.get("round", current + 1)
        elif _stopped(e):
            r = _stop_round(e, current)
            size = len(plan[r - 1]) if plan and 1 <= r <= len(plan) else None
            indices = range(1, size + 1) if size else sorted(i for (rr, i) in done if rr == r)
            for i in indices:
                notes = done.get((r, i), [])
                if (r, i) in reported:
                    continue
                if not notes:
                    reported.add((r, i))
                    found.append(
                        Violation(
                            "stop-before-done",
                            f"mayor stopped round {r} but contract {r}.{i} was never done",
                            [e],
                        )
                    )
                elif not any(happened_before(n["pid"], n["vc"], e["vc"]) for n in notes):
                    reported.add((r, i))
                    found.append(
                        Violation(
                            "stop-before-done",
                            f"mayor sent STOP of round {r} to {e.get('to')} "
                            f"before contract {r}.{i} was done (no happened-before)"
                            if e["event"] == "send"
                            else f"mayor stopped round {r} before contract {r}.{i} was done "
                            "(no happened-before)",
                            [notes[0], e],
                        )
                    )
    return found


def _stopped(e: dict[str, Any]) -> bool:
    """The mayor's STOP message, or its ``stop`` note (a STOP to every elf)."""
    return (e["event"] == "send" and e.get("type") == STOP) or e["event"] == STOP_NOTE


def _stop_round(e: dict[str, Any], current: int) -> Any:
    return (e.get("msg") or {}).get("round", current) if e["event"] == "send" else e.get("round", current)


def _finished(mayor: list[dict[str, Any]], elves: list[str], params: dict[str, Any]) -> list[Violation]:
    found = []
    rounds = params.get("rounds")
    began = [e.get("round") for e in mayor if e["event"] == "round"]
    if rounds is not None and (len(began) != rounds or began != list(range(1, rounds + 1))):
        found.append(Violation("rounds-unfinished", f"the mayor began rounds {began}, not 1..{rounds}", []))
    stops: dict[int, set[str]] = defaultdict(set)
    current = 0
    for e in mayor:
        if e["event"] == "round":
            current = e.get("round", current + 1)
        elif _stopped(e):
            stops[_stop_round(e, current)] |= {e["to"]} if e["event"] == "send" else set(elves)
    for r in range(1, min(rounds or 0, len(began)) + 1):  # rounds never begun are reported above
        missing = sorted(set(elves) - stops.get(r, set()))
        if missing:
            found.append(
                Violation(
                    "rounds-unfinished", f"round {r} was never stopped towards " + ", ".join(missing), []
                )
            )
    return found


def reported(events: list[dict[str, Any]], params: dict[str, Any]) -> tuple[Plan | None, list[Violation]]:
    """The plan as the mayor reported it, each round's ``contracts`` in its ``round`` note (one
    number: one contract), and what could not be decided: the plan (None) when a round's note
    names none or no round began; a round unlike the town the header describes (its number of
    contracts, its hamsters): the program was given another town than the options."""
    plan: Plan = []
    unlike: list[Violation] = []
    for e in events:
        if e["pid"] != MAYOR_NAME or e["event"] != "round":
            continue
        contracts = e.get("contracts")
        contracts = [contracts] if whole(contracts) else contracts
        r = e.get("round", len(plan) + 1)
        if not (isinstance(contracts, list) and contracts and all(whole(h) and h >= 1 for h in contracts)):
            said = "names no contracts" if contracts is None else f"has contracts {contracts!r:.40}"
            return None, [
                Violation(
                    "plan-unreported",
                    f"the mayor's round {r} note {said} (hamsters per contract) and the run header "
                    f"has no plan: {UNCHECKED} were not checked",
                    [e],
                )
            ]
        plan.append(list(contracts))
        low, high = (params.get("hamsters") or [1, None])[0], (params.get("hamsters") or [1, None])[-1]
        per_round = params.get("contracts")
        if not unlike and (
            (per_round is not None and len(contracts) != per_round)
            or any(h < low or (high is not None and h > high) for h in contracts)
        ):
            unlike.append(
                Violation(
                    "plan-unlike-town",
                    f"the mayor's round {r} hands out {count(len(contracts), 'contract')} (hamsters "
                    f"{' '.join(map(str, contracts))}), the run header's town {per_round} of {low} to "
                    f"{high} hamsters: the program was given another town than the one judged",
                    [e],
                )
            )
    if not plan:
        return None, [
            Violation(
                "plan-unreported",
                f"the mayor began no round and the run header has no plan: {UNCHECKED} were not checked",
            )
        ]
    return plan, unlike


UNCHECKED = (
    "whether every contract was done, whether one was done that the mayor never handed out, and "
    "the poison each contract's hamsters need"
)


AUDIT_ONLY = Invariants(
    CHECKS,
    check,
    rules={
        **dict.fromkeys(("contract-twice", "contract-done-twice", "stop-before-done"), SAFETY),
        **dict.fromkeys(("contract-not-done", "rounds-unfinished"), PROGRESS),
    },
)
_BOTH = RULES.invariants(beside=AUDIT_ONLY)


def _judged(events: list[dict[str, Any]], run: dict[str, Any]) -> list[Violation]:
    """The rules and the audit, the plan the header's or else the one the mayor reported."""
    _check_params(run)  # before ``reported`` reads them
    params = run.get("params") or {}
    if "plan" in params:
        return _BOTH.check(events, run)
    plan, undecided = reported(events, params)
    if plan is not None:
        run = {**run, "params": {**params, "plan": plan}}
    return [*_BOTH.check(events, run), *undecided]


INVARIANTS = Invariants(
    _BOTH.checks,
    _judged,
    events=_BOTH.events,
    rules={**_BOTH.rules, **dict.fromkeys(("plan-unreported", "plan-unlike-town"), UNDECIDED)},
)
