"""mutexlab's own elves' checks of a trace, beyond the ``elves`` problem's (problems/elves_audit.py
and elves_rules.py, which every solution's traces get): what its Lamport-style requests promise.

* **rounds** — an elf enters a resource only after a REPLY *of the same round* from every
  other elf to its latest request, and the contract it takes is the position of its request
  among that round's requests only (requests of other rounds never counted).

A request sent without its body (``msg``) makes the trace uncheckable: TraceError, not a verdict.
``SPEC.audit`` gives them; the audit runs them after the problem's.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ...findings import SAFETY, Invariants, Violation
from ...problems.elves_rules import contract_of
from ...trace import TraceError, event_error

CHECKS = ("elves: replies and contract positions counted within their own round",)
_KIND = {"CONTRACT": "contract", "PINS": "pins", "POISON": "poison"}


def _kind_verb(msg_type: str) -> tuple[str | None, str | None]:
    head, _, verb = msg_type.rpartition("_")
    return _KIND.get(head), verb


def check(events: list[dict[str, Any]], run: dict[str, Any]) -> list[Violation]:
    for e in events:
        body = e.get("msg")
        if e["event"] == "send" and body is not None and e["type"].endswith("_REQUEST"):
            missing = [k for k in ("sender", "ts", "round") if k not in body]
            if missing:
                raise event_error(e, f"{e['type']} body lacks {', '.join(missing)}")
    names = {str(n) for n in (run.get("processes") or {}).values()}
    elves = sorted(n for n in names if n.startswith("elf-"))
    if len(elves) < 2:
        return []
    per_process: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for event in events:
        per_process[event["pid"]].append(event)
    sends = {e["id"]: e for e in events if e["event"] == "send" and "id" in e}
    requests = _contract_requests(events)
    return [v for elf in elves for v in _rounds(elf, per_process.get(elf, []), elves, sends, requests)]


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


INVARIANTS = Invariants(CHECKS, check, rules=dict.fromkeys(("round-mixed", "contract-position"), SAFETY))
