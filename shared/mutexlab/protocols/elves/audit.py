"""The hamster killers' checks of a trace, on top of the capacity audit (which already decides, by
happened-before with units summed, that pins and poison never exceed their totals and that
no contract has two holders at once).

The rules one process's own events decide are ``rules.py``'s, the one definition ``check``
applies too (holding order and units, a contract done by its holder with its tools, never
abandoned, every process finished). The audit alone checks what needs several processes'
events (message bodies of ``send`` events carry the rounds):

* **contracts** — every contract of every round is done (``contract_done``) exactly once; no
  contract is entered twice;
* **stop** — each STOP of round r is sent after (happened-before) every ``contract_done`` of r;
* **rounds** — an elf enters a resource only after a REPLY *of the same round* from every
  other elf to its latest request, and the contract it takes is the position of its request
  among that round's requests only (requests of other rounds never counted);
* **finished** — every round began and was stopped towards every elf.

A request sent without its body (``msg``) makes the trace uncheckable: TraceError, not a verdict.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ...clock import happened_before
from ...findings import PROGRESS, SAFETY, Invariants, Violation
from ...trace import TraceError, event_error, whole
from .rules import RULES, contract_of

CHECKS = (
    "elves: each contract of each round taken and done exactly once",
    "elves: STOP only after every contract of its round is done (happened-before)",
    "elves: replies and contract positions counted within their own round",
    "elves: all rounds begun and stopped",
)

Plan = list[list[int]]  # the mayor's plan: hamsters per contract, per round
Done = dict[
    tuple[Any, Any], list[dict[str, Any]]
]  # (round, contract), as the trace has them → contract_done events
_KIND = {"CONTRACT": "contract", "PINS": "pins", "POISON": "poison"}


def _kind_verb(msg_type: str) -> tuple[str | None, str | None]:
    head, _, verb = msg_type.rpartition("_")
    return _KIND.get(head), verb


def _check_fields(events: list[dict[str, Any]], run: dict[str, Any]) -> None:
    """The run parameters and message bodies this audit reads have the protocol's types; a trace
    whose do not is unreadable (TraceError naming the line), not unsafe."""
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
            if e["type"].endswith("_REQUEST") or e["type"] == "STOP":
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
    elves = sorted(n for n in names if n.startswith("elf-"))
    plan = params.get("plan")
    per_process: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for event in events:
        per_process[event["pid"]].append(event)
    sends = {e["id"]: e for e in events if e["event"] == "send" and "id" in e}
    found: list[Violation] = []
    done: Done = defaultdict(list)
    for e in events:
        if e["event"] == "contract_done":
            done[(e.get("round"), e.get("contract"))].append(e)
    found += _exactly_once(events, plan, done)
    found += _stop_after_done(per_process.get("mayor", []), plan, done)
    if len(elves) > 1:
        requests = _contract_requests(events)
        for elf in elves:
            found += _rounds(elf, per_process.get(elf, []), elves, sends, requests)
    found += _finished(per_process, elves, params)
    return found


def _repeated(rule: str, what: str, verb: str, events: list[dict[str, Any]]) -> Violation:
    """``what`` happened more than once: ``events``, the times it did."""
    by = ", ".join(e["pid"] for e in events)
    return Violation(rule, f"{what} was {verb} {len(events)} times, by {by}", events)


def _exactly_once(events: list[dict[str, Any]], plan: Plan | None, done: Done) -> list[Violation]:
    found = []
    entered: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in events:
        if e["event"] == "enter" and e.get("resource", "").startswith("contract:"):
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
        elif e["event"] == "send" and e.get("type") == "STOP":
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


def _contract_requests(events: list[dict[str, Any]]) -> dict[int, set[tuple[int, str]]]:
    """Round → the (ts, pid number) of every CONTRACT_REQUEST sent in it (one per broadcast)."""
    out: dict[int, set[tuple[int, str]]] = defaultdict(set)
    for e in events:
        if e["event"] == "send" and e.get("type") == "CONTRACT_REQUEST" and e.get("msg"):
            out[e["msg"]["round"]].add((e["msg"]["ts"], e["msg"]["sender"]))
    return out


def _rounds(
    elf: str,
    events: list[dict[str, Any]],
    elves: list[str],
    sends: dict[Any, dict[str, Any]],
    requests: dict[int, set[tuple[int, str]]],
) -> list[Violation]:
    found = []
    others = set(elves) - {elf}
    current: dict[str, tuple[int, int] | None] = {}  # kind → (round, ts) of the latest request
    replies: dict[str, dict[str, set[Any]]] = {}  # kind → {from: rounds of replies since the request}
    contract_round = None
    for e in events:
        kind = e["event"]
        if kind == "send" and e.get("type", "").endswith("_REQUEST"):
            res, _ = _kind_verb(e["type"])
            body = e.get("msg")
            if body is None:  # the trace cannot be checked, which is neither safe nor a violation
                raise TraceError(
                    f"line {e.get('_line', '?')}: {elf}'s {e['type']} carries no message body "
                    "'msg': the elves audit needs the round it names"
                )
            key = (body["round"], body["ts"])
            if res is not None and current.get(res) != key:  # (None: not an elves resource)
                current[res], replies[res] = key, {}
        elif kind == "recv" and e.get("type", "").endswith("_REPLY"):
            res, _ = _kind_verb(e["type"])
            body = (sends.get(e.get("id")) or {}).get("msg") or {}
            if res in replies:
                replies[res].setdefault(e["from"], set()).add(body.get("round"))
        elif kind == "enter":
            resource = e.get("resource", "")
            if resource.startswith("contract:"):
                res, held = "contract", contract_of(resource)
                round_ = held[0] if held else None
                contract_round = round_
            elif resource in ("pins", "poison"):
                res, round_, held = resource, contract_round, None
            else:
                continue
            request = current.get(res)
            if request is None or request[0] != round_:
                found.append(
                    Violation(
                        "round-mixed",
                        f"{elf} entered {resource} in round {round_} without a "
                        f"request of that round (latest: {request})",
                        [e],
                    )
                )
                continue
            got = {who for who, rounds in replies[res].items() if round_ in rounds}
            missing = sorted(others - got)
            if missing:
                stale = sorted(who for who, rounds in replies[res].items() if rounds - {round_})
                found.append(
                    Violation(
                        "round-mixed",
                        f"{elf} entered {resource} in round {round_} without a "
                        f"round-{round_} REPLY from {', '.join(missing)}"
                        + (f" (it had stale replies from {', '.join(stale)})" if stale else ""),
                        [e],
                    )
                )
            if res == "contract" and held is not None:
                mine = (request[1], int(elf.split("-")[1]))
                position = 1 + sum(1 for other in requests.get(round_, ()) if other < mine)
                if held[1] != position:
                    found.append(
                        Violation(
                            "contract-position",
                            f"{elf} took contract {held[0]}.{held[1]} but its "
                            f"request is number {position} among round {round_}'s requests",
                            [e],
                        )
                    )
    return found


def _finished(
    per_process: dict[str, list[dict[str, Any]]], elves: list[str], params: dict[str, Any]
) -> list[Violation]:
    found = []
    mayor = per_process.get("mayor", [])
    rounds = params.get("rounds")
    began = [e.get("round") for e in mayor if e["event"] == "round"]
    if rounds is not None and (len(began) != rounds or began != list(range(1, rounds + 1))):
        found.append(Violation("rounds-unfinished", f"the mayor began rounds {began}, not 1..{rounds}", []))
    stops: dict[int, set[str]] = defaultdict(set)
    current = 0
    for e in mayor:
        if e["event"] == "round":
            current = e.get("round", current + 1)
        elif e["event"] == "send" and e.get("type") == "STOP":
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
        **dict.fromkeys(
            ("contract-twice", "contract-done-twice", "stop-before-done", "round-mixed", "contract-position"),
            SAFETY,
        ),
        **dict.fromkeys(("contract-not-done", "rounds-unfinished"), PROGRESS),
    },
)
INVARIANTS = RULES.invariants(beside=AUDIT_ONLY)
