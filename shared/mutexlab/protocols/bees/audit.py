"""The mason bees' own invariants, checked on a trace (capacities are capacity.py's job).

Per bee, in its own event order (its vector-clock entry):
* it lays at most ``eggs`` eggs, each while holding the reed the egg names, and each after a
  flower visit (a ``flower`` exit) that followed its previous egg or its entry on the reed;
* it visits a flower only while holding a reed;
* its last state is a proper end (DEAD or RETIRED), never a waiting state.
Over the whole trace: every reed named (an ``enter``/``exit`` of ``reed:i``, an egg's ``reed``) is
one of the run's T reeds, 1 ≤ i ≤ T (under "eggs per reed"); a reed receives at most ``cocoons``
eggs, and a complete run lays exactly min(eggs·P, cocoons·T) eggs (fewer: unfinished; more: a
violation).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ...findings import PROGRESS, SAFETY, Invariants, Violation
from ...trace import event_error, whole
from ...words import count
from .messages import FINAL_STATES, FLOWER, WAITING_STATES, expected_eggs

CHECKS = (
    "eggs per bee",
    "eggs per reed",
    "eggs laid on the held reed after a flower visit",
    "flowers visited only from a reed",
    "total eggs = min(eggs·P, cocoons·T)",
    "every bee ends DEAD or RETIRED, nobody left waiting",
)
# The event kinds ``check`` reads, each by its own clock entry only: a streamed audit keeps no others.
EVENTS = frozenset({"enter", "exit", "egg", "state"})


def _params(run: dict[str, Any]) -> tuple[int, int, int, int]:
    params = run.get("params") or {}
    return (
        int(params.get("bees", len(run.get("processes") or {}))),
        int(params.get("reeds", 1)),
        int(params.get("eggs", 5)),
        int(params.get("cocoons", 15)),
    )


def _unknown_reed(reed: Any, reeds: int) -> bool:
    """Whether ``reed`` (an index, or its text) names none of reeds 1..``reeds``."""
    text = str(reed)
    return not (text.isdigit() and 1 <= int(text) <= reeds)


def check(events: list[dict[str, Any]], run: dict[str, Any]) -> list[Violation]:
    for key in ("bees", "reeds", "eggs", "cocoons"):
        if key in (run.get("params") or {}) and not whole(run["params"][key]):
            raise event_error(run, f"the run header's params.{key} must be a whole number")
    bees, reeds, eggs, cocoons = _params(run)
    names = list((run.get("processes") or {}).values())
    per_bee: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for event in events:
        per_bee.setdefault(event["pid"], []).append(event)
    found: list[Violation] = []
    per_reed: Counter[Any] = Counter()  # by the egg's reed as the trace gives it
    over_reed: set[Any] = set()
    total = 0
    for name, own in per_bee.items():
        own.sort(key=lambda e: e["vc"].get(name, 0))
        holding: str | None = None
        visited = False  # a flower visit since the last egg / the reed entry
        on_flower = False
        laid = 0
        last_state = None
        for event in own:
            kind = event["event"]
            resource = event.get("resource", "")
            if kind == "state":
                last_state = event
                continue
            if (
                kind in ("enter", "exit")
                and resource.startswith("reed:")
                and _unknown_reed(resource[5:], reeds)
                or kind == "egg"
                and _unknown_reed(event.get("reed"), reeds)
            ):
                where = resource if kind != "egg" else f"reed:{event.get('reed')}"
                verb = {"enter": "entered", "exit": "left", "egg": "laid an egg in"}[kind]
                found.append(
                    Violation(
                        "reed-unknown", f"{name} {verb} {where}, but the run has T={reeds} reeds", [event]
                    )
                )
            if kind == "enter" and resource.startswith("reed:"):
                holding, visited = resource, False
            elif kind == "exit" and resource.startswith("reed:"):
                holding = None if holding == resource else holding
            elif kind == "enter" and resource == FLOWER:
                on_flower = True
                if holding is None:
                    found.append(
                        Violation(
                            "flower-without-reed", f"{name} went to a flower without holding a reed", [event]
                        )
                    )
            elif kind == "exit" and resource == FLOWER:
                on_flower, visited = False, True
            elif kind == "egg":
                laid += 1
                total += 1
                reed = event.get("reed")
                per_reed[reed] += 1
                if laid == eggs + 1:
                    found.append(
                        Violation("eggs-per-bee", f"{name} laid a {laid}th egg (at most {eggs})", [event])
                    )
                if per_reed[reed] == cocoons + 1:
                    over_reed.add(reed)
                    found.append(
                        Violation(
                            "eggs-per-reed",
                            f"reed:{reed} got a {cocoons + 1}th egg (at most {cocoons}), laid by {name}",
                            [event],
                        )
                    )
                if holding != f"reed:{reed}":
                    found.append(
                        Violation(
                            "egg-off-reed",
                            f"{name} laid an egg in reed:{reed} while holding {holding or 'no reed'}",
                            [event],
                        )
                    )
                elif on_flower or not visited:
                    found.append(
                        Violation(
                            "egg-without-nectar",
                            f"{name} laid an egg in reed:{reed} without a "
                            f"flower visit since its previous egg",
                            [event],
                        )
                    )
                visited = False
        final = last_state["state"] if last_state is not None else "REST"
        if final in WAITING_STATES:
            found.append(
                Violation(
                    "left-waiting", f"{name} was left waiting in {final}", [last_state] if last_state else []
                )
            )
        elif final not in FINAL_STATES:
            found.append(
                Violation(
                    "unfinished",
                    f"{name} ended in {final}, not DEAD or RETIRED",
                    [last_state] if last_state else [],
                )
            )
    want = expected_eggs(bees, reeds, eggs, cocoons)
    if total != want:
        # Too few: not laid yet (progress). Too many: laid beyond what exists (safety).
        found.append(
            Violation(
                "too-few-eggs" if total < want else "too-many-eggs",
                f"{count(total, 'egg')} laid; {count(bees, 'bee')} with {count(eggs, 'egg')} each and "
                f"{count(reeds, 'reed')} of {count(cocoons, 'cocoon')} must lay min({eggs}·{bees}, {cocoons}·{reeds}) "
                f"= {want}",
                [],
            )
        )
    return found


INVARIANTS = Invariants(
    CHECKS,
    check,
    events=EVENTS,
    rules={
        **dict.fromkeys(
            (
                "flower-without-reed",
                "eggs-per-bee",
                "eggs-per-reed",
                "egg-off-reed",
                "egg-without-nectar",
                "too-many-eggs",
                "reed-unknown",
            ),
            SAFETY,
        ),
        **dict.fromkeys(("left-waiting", "unfinished", "too-few-eggs"), PROGRESS),
    },
)
