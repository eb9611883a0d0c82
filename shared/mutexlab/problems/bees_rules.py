"""The mason bees' rules (the ``bees`` problem's, bees.py), defined once (``rules.Rules``): what every solution to the bees keeps,
judged alike by ``check`` in every world and by the audit on every trace. Capacities (one bee per
reed, K bees on flowers) are the capacity audit's and the model's, for every problem.

Per bee, in its own order:
* every reed it names (an ``enter``/``exit`` of ``reed:i``, an egg's ``reed``) is one of the
  run's T reeds, 1 ≤ i ≤ T (``reed-unknown``);
* it visits a flower only while holding a reed (``flower-without-reed``);
* it lays at most ``eggs`` eggs (``eggs-per-bee``), each while holding the reed the egg names
  (``egg-off-reed``) and after a flower visit (a ``flower`` exit) that followed its previous egg
  or its entry on the reed (``egg-without-nectar``).
Over every bee, at any moment: a reed receives at most ``cocoons`` eggs (``eggs-per-reed``) and
the colony lays at most min(eggs·P, cocoons·T) (``too-many-eggs``).
At the end of a whole run: every bee is DEAD or RETIRED (``left-waiting`` in a waiting state,
``unfinished`` otherwise), and exactly min(eggs·P, cocoons·T) eggs were laid (``too-few-eggs``).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Any, NamedTuple

from ..findings import PROGRESS, SAFETY
from ..rules import Broken, Observation, Rules
from ..words import count, ordinal

# The statement's words: the flowers' resource, a bee's proper ends and its waits (a solution's
# states are strings; mutexlab's own bees name theirs so).
FLOWER = "flower"
FINAL_STATES = ("DEAD", "RETIRED")
WAITING_STATES = ("WAIT_REED", "WAIT_FLOWER")


def reed_name(reed: int) -> str:
    return f"reed:{reed}"


def expected_eggs(bees: int, reeds: int, eggs: int = 5, cocoons: int = 15) -> int:
    """Eggs a complete run lays: every bee that fits on a reed lays all of its eggs."""
    return min(eggs * bees, cocoons * reeds)


CHECKS = (
    "eggs per bee",
    "eggs per reed",
    "eggs laid on the held reed after a flower visit",
    "flowers visited only from a reed",
    "reeds 1..T only",
    "total eggs = min(eggs·P, cocoons·T)",
    "every bee ends DEAD or RETIRED, nobody left waiting",
)
TOTAL = "eggs"  # the tally of every egg a bee laid (the others: a reed's number)


class Colony(NamedTuple):
    bees: int
    reeds: int
    eggs: int
    cocoons: int


class BeeSeen(NamedTuple):
    """What the rules keep of one bee: the reed it holds, whether it has been to a flower since
    its last egg (or its entry on the reed), whether it is on a flower, its eggs by reed."""

    holding: str | None = None
    visited: bool = False
    on_flower: bool = False
    laid: tuple[tuple[str, int], ...] = ()  # (the egg's reed as written, eggs), sorted


def params(given: Mapping[str, Any], names: list[str]) -> Colony:
    from ..trace import whole

    for key in ("bees", "reeds", "eggs", "cocoons"):
        if key in given and not whole(given[key]):
            raise ValueError(f"the run header's params.{key} must be a whole number")
    if "reeds" not in given:  # no default: T=1 would make every reed:2 a violation
        raise ValueError("the run header's params lack reeds (T): reeds 1..T cannot be checked without it")
    return Colony(
        int(given.get("bees", len(names))),
        int(given["reeds"]),
        int(given.get("eggs", 5)),
        int(given.get("cocoons", 15)),
    )


def _unknown(reed: Any, reeds: int) -> bool:
    """Whether ``reed`` (an index, or its text) names none of reeds 1..``reeds``."""
    text = str(reed)
    return not (text.isdigit() and 1 <= int(text) <= reeds)


def start(colony: Colony) -> BeeSeen:
    return BeeSeen()


def observe(
    colony: Colony, name: str, seen: Observation, kind: str, fields: Mapping[str, Any]
) -> tuple[BeeSeen, tuple[Broken, ...]]:
    bee: BeeSeen = seen  # type: ignore[assignment]
    resource = str(fields.get("resource", ""))
    broken: list[Broken] = []
    reed_event = kind in ("enter", "exit") and resource.startswith("reed:")
    if (
        reed_event
        and _unknown(resource[5:], colony.reeds)
        or kind == "egg"
        and _unknown(fields.get("reed"), colony.reeds)
    ):
        where = resource if kind != "egg" else f"reed:{fields.get('reed')}"
        verb = {"enter": "entered", "exit": "left", "egg": "laid an egg in"}[kind]
        broken.append(
            Broken("reed-unknown", f"{name} {verb} {where}, but the run has T={colony.reeds} reeds")
        )
    if reed_event and kind == "enter":
        bee = bee._replace(holding=resource, visited=False)
    elif reed_event:
        bee = bee._replace(holding=None if bee.holding == resource else bee.holding)
    elif kind == "enter" and resource == FLOWER:
        bee = bee._replace(on_flower=True)
        if bee.holding is None:
            broken.append(Broken("flower-without-reed", f"{name} went to a flower without holding a reed"))
    elif kind == "exit" and resource == FLOWER:
        bee = bee._replace(on_flower=False, visited=True)
    elif kind == "egg":
        reed = str(fields.get("reed"))
        laid = dict(bee.laid)
        laid[reed] = laid.get(reed, 0) + 1
        total = sum(laid.values())
        if total == colony.eggs + 1:
            broken.append(
                Broken("eggs-per-bee", f"{name} laid a {ordinal(total)} egg (at most {colony.eggs})")
            )
        if bee.holding != f"reed:{reed}":
            broken.append(
                Broken(
                    "egg-off-reed",
                    f"{name} laid an egg in reed:{reed} while holding {bee.holding or 'no reed'}",
                )
            )
        elif bee.on_flower or not bee.visited:
            broken.append(
                Broken(
                    "egg-without-nectar",
                    f"{name} laid an egg in reed:{reed} without a flower visit since its previous egg",
                )
            )
        bee = bee._replace(visited=False, laid=tuple(sorted(laid.items())))
    return bee, tuple(broken)


def tallies(seen: Observation) -> Iterable[tuple[Hashable, int]]:
    bee: BeeSeen = seen  # type: ignore[assignment]
    yield from bee.laid
    if bee.laid:
        yield TOTAL, sum(n for _, n in bee.laid)


def limit(colony: Colony, key: Hashable, total: int) -> Broken | None:
    bees, reeds, eggs, cocoons = colony
    if key == TOTAL:
        want = expected_eggs(bees, reeds, eggs, cocoons)
        if total > want:
            return Broken(
                "too-many-eggs",
                f"{count(total, 'egg')} laid; {count(bees, 'bee')} with {count(eggs, 'egg')} each and "
                f"{count(reeds, 'reed')} of {count(cocoons, 'cocoon')} lay at most "
                f"min({eggs}·{bees}, {cocoons}·{reeds}) = {want}",
            )
        return None
    if total > cocoons:
        return Broken("eggs-per-reed", f"reed:{key} got a {ordinal(total)} egg (at most {cocoons})")
    return None


def end(colony: Colony, bees: Mapping[str, tuple[Observation, str | None]]) -> list[Broken]:
    found = []
    total = 0
    for name, (seen, state) in bees.items():
        total += sum(n for _, n in seen.laid)  # type: ignore[attr-defined]
        final = state or "REST"
        if final in WAITING_STATES:
            found.append(Broken("left-waiting", f"{name} was left waiting in {final}", (name,)))
        elif final not in FINAL_STATES:
            how = f"ended in {final}" if state else "reported no state (it started in REST)"
            found.append(Broken("unfinished", f"{name} {how}, not DEAD or RETIRED", (name,)))
    want = expected_eggs(*colony)
    if total < want:  # too many is a safety rule (``limit``), broken as it happens
        bees_, reeds, eggs, cocoons = colony
        found.append(
            Broken(
                "too-few-eggs",
                f"{count(total, 'egg')} laid; {count(bees_, 'bee')} with {count(eggs, 'egg')} each and "
                f"{count(reeds, 'reed')} of {count(cocoons, 'cocoon')} must lay "
                f"min({eggs}·{bees_}, {cocoons}·{reeds}) = {want}",
            )
        )
    return found


RULES = Rules(
    CHECKS,
    {
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
    frozenset({"enter", "exit", "egg"}),
    params,
    start,
    observe,
    tallies,
    limit,
    end,
)
