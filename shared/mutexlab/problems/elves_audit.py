"""The hamster killers' checks of a trace that need several processes' events (the ``elves``
problem's, elves.py), on top of the capacity audit (which already decides, by happened-before
with units summed, that pins and poison never exceed their totals and that no contract has two
holders at once) and of the rules one process's own events decide (elves_rules.py, which
``check`` applies too).

What they read is the statement's, whatever the solution: the mayor's ``round`` note at the
start of each round, its ``STOP`` message (a body with the ``round``) to every elf at the end of
one, and an elf's ``contract_done`` note (``round``, ``contract``):

* **contracts** — every contract of every round is done (``contract_done``) exactly once; no
  contract is entered twice;
* **stop** — each STOP of round r is sent after (happened-before) every ``contract_done`` of r;
* **finished** — every round began and was stopped towards every elf.

A run header's plan or message body of the wrong type makes the trace unreadable: TraceError
naming the line, not a verdict. A solution may check more of its own messages (its spec's
``audit``: mutexlab's elves check their rounds' replies and contract positions).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ..clock import happened_before
from ..findings import PROGRESS, SAFETY, Invariants, Violation
from ..trace import event_error, whole
from .elves_rules import CONTRACT_PREFIX, ELF_PREFIX, MAYOR_NAME, RULES

CHECKS = (
    "elves: each contract of each round taken and done exactly once",
    "elves: STOP only after every contract of its round is done (happened-before)",
    "elves: all rounds begun and stopped",
)
STOP = "STOP"  # the mayor's message ending a round (its body names the ``round``)

Plan = list[list[int]]  # the mayor's plan: hamsters per contract, per round
Done = dict[
    tuple[Any, Any], list[dict[str, Any]]
]  # (round, contract), as the trace has them → contract_done events


def _check_fields(events: list[dict[str, Any]], run: dict[str, Any]) -> None:
    """The run parameters and message bodies this audit reads have the statement's types; a
    trace whose do not is unreadable (TraceError naming the line), not unsafe."""
    params = run.get("params") or {}
    plan = params.get("plan")
    if plan is not None and not (
        isinstance(plan, list) and all(isinstance(r, list) and all(whole(h) for h in r) for r in plan)
    ):
        raise event_error(
            run,
            "the run header's params.plan must be a list of rounds, each a list of "
            "whole numbers (hamsters per contract)",
        )
    for key in ("rounds", "poison_per_hamster"):
        if key in params and not whole(params[key]):
            raise event_error(run, f"the run header's params.{key} must be a whole number")
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


def _repeated(rule: str, what: str, verb: str, events: list[dict[str, Any]]) -> Violation:
    """``what`` happened more than once: ``events``, the times it did."""
    by = ", ".join(e["pid"] for e in events)
    return Violation(rule, f"{what} was {verb} {len(events)} times, by {by}", events)


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
        elif e["event"] == "send" and e.get("type") == STOP:
            r = (e.get("msg") or {}).get("round", current)
            count = len(plan[r - 1]) if plan and 1 <= r <= len(plan) else None
            indices = range(1, count + 1) if count else sorted(i for (rr, i) in done if rr == r)
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
                            f"before contract {r}.{i} was done (no happened-before)",
                            [notes[0], e],
                        )
                    )
    return found


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
        elif e["event"] == "send" and e.get("type") == STOP:
            stops[(e.get("msg") or {}).get("round", current)].add(e["to"])
    for r in range(1, min(rounds or 0, len(began)) + 1):  # rounds never begun are reported above
        missing = sorted(set(elves) - stops.get(r, set()))
        if missing:
            found.append(
                Violation(
                    "rounds-unfinished", f"round {r} was never stopped towards " + ", ".join(missing), []
                )
            )
    return found


AUDIT_ONLY = Invariants(
    CHECKS,
    check,
    rules={
        **dict.fromkeys(("contract-twice", "contract-done-twice", "stop-before-done"), SAFETY),
        **dict.fromkeys(("contract-not-done", "rounds-unfinished"), PROGRESS),
    },
)
INVARIANTS = RULES.invariants(beside=AUDIT_ONLY)
