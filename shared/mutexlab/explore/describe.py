"""What a process card and a message chip show: each protocol's own state, in its own words.

``describe_process(proto, setup)`` gives ``[[label, text], ...]``: first the fields each
protocol's state table talks about (bees: reed, eggs, ACK counts; Maekawa: locked for, queue;
Raymond: holder, request queue; Suzuki–Kasami: RN and the token's L and Q ...), then every
other attribute the object has (so nothing is hidden when a protocol grows a field), minus
identity and fixed configuration (pid, n, clock and state — the card shows those itself).
Requests are ``(timestamp, pid)`` pairs, shown as ``ts@pid``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from ..setup import Setup

# Fixed per process or per run: shown in the page's header (params), not on every card.
HIDDEN = {
    "pid",
    "n",
    "clock",
    "state",
    "flowers",
    "reeds",
    "eggs",
    "cocoons",
    "per_reed",
    "totals",
    "pins_per_elf",
    "poison_per_hamster",
    "plan",
}


def fmt(value: Any) -> str:
    """A compact, deterministic rendering of a state value."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(fmt(v) for v in sorted(value, key=_order)) + "}"
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return f"{value[0]}@{value[1]}"
    if isinstance(value, (list, tuple, deque)):
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: _order(kv[0]))
        return "{" + ", ".join(f"{fmt(k)}: {fmt(v)}" for k, v in items) + "}"
    if hasattr(value, "model_dump"):
        return describe_message(value)
    return str(value)


def _order(value: Any) -> tuple:
    return (
        (0, value, "")
        if isinstance(value, (int, float)) and not isinstance(value, bool)
        else (1, 0, repr(value))
    )


def describe_message(msg: Any) -> str:
    """``REQUEST ts 3`` / ``ACKflower ts 7 req_ts 4`` / ``TOKEN ts 5 last [..] queue [..]``."""
    fields = msg.model_dump()
    parts = [str(fields.pop("type", type(msg).__name__))]
    fields.pop("sender", None)
    if "ts" in fields:
        parts.append(f"ts {fields.pop('ts')}")
    parts += [f"{k} {fmt(v)}" for k, v in fields.items()]
    return " ".join(parts)


def _count(items: Any) -> str:
    return f"{len(items)} {fmt(set(items))}"


# -- per protocol: (label, text) rows in the order of the protocol's state table -----------------
# A protocol's card; the attributes it reads are not shown again below it (``_Reads``).
Card = list[tuple[str, str]]

# How a card labels an attribute its name does not say well enough (otherwise: the name, "_" → " ").
LABELS = {
    "R": "request set R",
    "I": "inform set I",
    "yielded": "yielded to",
    "inquiries": "INQUIRE from",
    "inquirers": "INQUIRE from",
    "lock": "locked for",
    "csstat": "CSSTAT (locked for)",
    "inquired": "INQUIRE sent",
    "told": "told not first",
    "failed_sent": "FAILED sent to",
}
COUNTED = {"grants", "replies"}  # sets of pids shown as their size and members


def _attributes(p, names: str, **labels: str) -> Card:
    """A row for each attribute in ``names`` (space-separated), labelled by ``labels`` or LABELS."""
    return [
        (
            labels.get(name) or LABELS.get(name) or name.replace("_", " "),
            (_count if name in COUNTED else fmt)(getattr(p, name)),
        )
        for name in names.split()
    ]


def _bee(p) -> Card:
    own = p.requests.get(p.pid)
    return [
        ("reed", "—" if not p.reed else f"reed:{p.reed}"),
        ("eggs laid", f"{p.laid} of {p.eggs}"),
        ("my reed request", fmt(own)),
        ("ACKreed", f"{_count(p.reed_acks)}; live {p.reed_live_acks} of {len(p.alive)} needed"),
        ("my flower request", fmt(p.flower_request)),
        ("ACKflower", f"{_count(p.flower_acks)}; live {p.flower_live_acks}, needed {p.flower_threshold()}"),
        ("deferred REQflower", fmt([f"{j}@ts{ts}" for j, ts in p.deferred])),
        ("not gone", fmt(p.alive)),
        ("reed requests seen", fmt(sorted(p.requests.values()))),
        ("eggs per reed (from RELEASEreed)", fmt(p.reed_eggs)),
    ]


def _mayor(p) -> Card:
    round_plan = p.plan[p.round - 1] if 1 <= p.round <= len(p.plan) else ()
    return [
        ("round", f"{p.round} of {len(p.plan)}"),
        ("contracts (hamsters)", fmt(list(round_plan))),
        ("completed", fmt(p.completed)),
    ]


def _elf(p) -> Card:
    return _attributes(p, "round phase my_request replies holding contracts contract_requests") + [
        ("pins queue", fmt(p.queues.get("pins", {}))),
        ("poison queue", fmt(p.queues.get("poison", {}))),
        ("done", fmt(p.done)),
    ]


def _classic(p) -> Card:
    return [("requests left", str(p.requests_left)), ("entries", str(p.entries))]


def _lamport(p) -> Card:
    queue = sorted((ts, j, kind) for j, (kind, ts) in p.q.items())
    return [("queue (last message per node)", ", ".join(f"{kind} {ts}@{j}" for ts, j, kind in queue))]


def _ricart(p) -> Card:
    return _attributes(p, "my_request replies deferred")


def _maekawa(p) -> Card:
    return [("quorum", fmt(list(p.quorum)))] + _attributes(
        p, "my_request grants failed yielded inquiries lock queue inquired told", grants="grants (REPLY)"
    )


def _sanders(p) -> Card:
    return _attributes(p, "R I my_request grants failed yielded inquirers csstat queue inquired failed_sent")


def _suzuki(p) -> Card:
    token = "no token" if p.token is None else f"L = {fmt(list(p.token[0][1:]))}, Q = {fmt(list(p.token[1]))}"
    return [("RN", fmt(list(p.R[1:]))), ("token", token)]


def _raymond(p) -> Card:
    return [
        ("holder", "self" if p.holder == p.pid else str(p.holder)),
        ("request queue", fmt(list(p.queue))),
        ("asked", fmt(p.asked)),
    ]


# The most specific class first: matched by name along the object's MRO (variants subclass them).
CARDS: dict[str, Callable[[Any], Card]] = {
    "Bee": _bee,
    "Mayor": _mayor,
    "Elf": _elf,
    "LamportNode": _lamport,
    "RicartAgrawalaNode": _ricart,
    "MaekawaNode": _maekawa,
    "SandersNode": _sanders,
    "SuzukiKasamiNode": _suzuki,
    "RaymondNode": _raymond,
}


class _Reads:
    """A process as its card sees it: every attribute the card reads is remembered, so the rows
    of the remaining attributes below the card never show one twice."""

    def __init__(self, proto: Any) -> None:
        self._proto = proto
        self.names: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        self.names.add(name)
        return getattr(self._proto, name)


def describe_process(proto: Any, setup: Setup | None = None) -> list[list[str]]:
    reads = _Reads(proto)
    rows: Card = []
    for cls in type(proto).__mro__:
        card = CARDS.get(cls.__name__)
        if card is not None:
            rows += card(reads)
            break
    if any(c.__name__ == "ClassicNode" for c in type(proto).__mro__):
        rows += _classic(reads)
    for name, value in vars(proto).items():
        if name in reads.names or name in HIDDEN or name.startswith("_"):
            continue
        rows.append((name.replace("_", " "), fmt(value)))
    return [[label, text] for label, text in rows]
