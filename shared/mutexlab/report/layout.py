"""Positions for a log that carries no times (ShiViz / GoVector, clock-free JSON Lines), derived
from causality alone, so the report draws it as it draws a trace.

* ``t`` — the size of the event's causal past, itself included: the sum of its vector clock;
* ``lamport`` — the length of the longest happened-before chain ending at the event (Lamport's
  clock, one tick per event): 1 + the largest of its direct predecessors' (its process's previous
  event, and the event it received from).

Invariant: both grow along every happened-before edge (a → b ⇒ pos(a) < pos(b)), so every arrow
goes right, and in a log the audit calls SAFE no two holders of a capacity-1 resource overlap
on either axis (their intervals are ordered by happened-before, hence in position).

Messages: a ``send``/``recv`` pair (clock-free logs, exported ones) is one arrow, as in a trace.
A ShiViz log's messages are no events of their own; as ShiViz does, an event whose clock rises
in another host's entry above what its own host knew heard from that host's event of that count,
unless that event happened before another such source (the news came through a third host).
Each such edge is drawn as an inferred message of type ``INFERRED``.
"""

from __future__ import annotations

from collections.abc import Iterator

from .model import MAX_BODIES

INFERRED = "(from clocks)"
NOTE = (
    "This log carries no times: positions come from causality. t is the number of events in each "
    "event's causal past (the sum of its vector clock) and the Lamport clock is the longest "
    "happened-before chain ending at it; both grow along every message, so a holder drawn after "
    "another came after it."
)
NOTE_TEXTS = (
    f" It has more than {MAX_BODIES:,} other events: hovering them shows no description (a smaller page)."
)
NOTE_INFERRED = (
    " Its messages are not events: each arrow joins an event to the one whose clock it first "
    f"shows, as ShiViz infers them (type {INFERRED})."
)


def lay_out(events: list[dict]) -> tuple[list[dict], str]:
    """``events`` (the run header first, each other with its vector clock ``vc``) with ``t`` and
    ``lamport`` set, in a causal order, plus inferred messages when the log has no ``send``; and
    the note saying how they were placed. The clocks are dropped (the page does not read them)."""
    head = [e for e in events if e["event"] == "run"]
    body = sorted((e for e in events if e["event"] != "run"), key=lambda e: sum(e["vc"].values()))
    infer = not any(e["event"] == "send" for e in body)
    others = sum(1 for e in body if e["event"] == "other")
    quiet = others > MAX_BODIES  # as for message bodies: the page stays small
    by_count: dict[tuple[str, int], dict] = {}  # (host, own count) → the event, laid out
    last: dict[str, dict] = {}  # host → its latest event laid out
    sent: dict[object, dict] = {}  # message id → its send
    out: list[dict] = []
    for event in body:
        pid, vc = event["pid"], event["vc"]
        before = last.get(pid)
        sources = list(_heard(event, before, by_count)) if infer else []
        if not infer and event["event"] == "recv" and event.get("id") in sent:
            sources = [sent[event["id"]]]
        lamport = 1 + max([before["lamport"] if before else 0] + [s["lamport"] for s in sources])
        placed = {k: v for k, v in event.items() if k != "vc" and not (quiet and k == "text")}
        placed.update(t=sum(vc.values()), lamport=lamport)
        for source in sources if infer else ():
            out += _message(source, placed)
        out.append(placed)
        if event["event"] == "send":
            sent[event.get("id")] = placed
        placed["_vc"] = vc  # until every later event is placed (``_heard`` compares clocks)
        by_count[(pid, vc[pid])] = last[pid] = placed
    for placed in out:
        placed.pop("_vc", None)
    inferred = infer and any(e["event"] == "send" for e in out)
    return head + out, NOTE + (NOTE_INFERRED if inferred else "") + (NOTE_TEXTS if quiet else "")


def _heard(event: dict, before: dict | None, by_count: dict[tuple[str, int], dict]) -> Iterator[dict]:
    """The events ``event`` heard from directly: those of other hosts whose count its clock shows
    first, less any that happened before another of them."""
    vc, pid = event["vc"], event["pid"]
    known = before["_vc"] if before else {}
    found = [
        by_count[(host, n)]
        for host, n in vc.items()
        if host != pid and n > known.get(host, 0) and (host, n) in by_count
    ]
    for source in found:
        host, n = source["pid"], source["_vc"][source["pid"]]
        if not any(other is not source and other["_vc"].get(host, 0) >= n for other in found):
            yield source


def _message(source: dict, received: dict) -> list[dict]:
    """An inferred message from ``source`` to ``received``: its send and its receive."""
    mid = f"{source['pid']}#{source['_vc'][source['pid']]}>{received['pid']}#{received['_line']}"
    common = {"type": INFERRED, "id": mid}
    return [
        {
            **common,
            "event": "send",
            "pid": source["pid"],
            "to": received["pid"],
            "t": source["t"],
            "lamport": source["lamport"],
            "_line": None,
        },
        {
            **common,
            "event": "recv",
            "pid": received["pid"],
            "from": source["pid"],
            "t": received["t"],
            "lamport": received["lamport"],
            "_line": None,
        },
    ]
