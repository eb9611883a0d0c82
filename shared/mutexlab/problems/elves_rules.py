"""The hamster killers' rules that one process's own events decide (the ``elves`` problem's,
elves.py), defined once (``rules.Rules``): judged alike by ``check`` in every world and by the
audit on every trace. Capacities (pins, poison, one elf per contract) are the capacity audit's
and the model's, for every problem.

Per elf, in its own order:
* it takes pins only while holding a contract (``pins-without-contract``), with the configured
  units (``pins-units``), and poison only while holding pins (``poison-without-pins``), as much
  as its contract's hamsters need (``poison-units``);
* it holds one contract at a time (``two-contracts``) and leaves none undone
  (``contract-abandoned``), nor goes home (ELF_DONE) with a contract, pins or poison still in
  hand (``went-home-holding``: the tools never given back, the contract never reported);
* it does (``contract_done``) only the contract it holds (``done-by-non-holder``), one of the
  mayor's plan (``contract-unknown``), holding pins and poison (``done-without-tools``).
At the end of a whole run every elf is ELF_DONE and the mayor MAYOR_DONE (``not-finished``).

What needs more than one process's events — each contract taken and done exactly once, STOP
after every contract of its round (happened-before), every round begun and stopped — the audit
alone checks (elves_audit.py); ``check`` does not say it checked them.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Any, NamedTuple

from ..findings import PROGRESS, SAFETY
from ..rules import Broken, Observation, Rules
from ..words import count

# The statement's words: the shared resources, the processes' names and their final states.
PINS, POISON, CONTRACT_PREFIX = "pins", "poison", "contract:"
MAYOR_NAME, ELF_PREFIX = "mayor", "elf-"
MAYOR_DONE, ELF_DONE = "MAYOR_DONE", "ELF_DONE"
WAIT_FOR_RELEASE = "ELF_WAIT_FOR_RELEASE"  # an elf waiting for units to be released (the summary's waits)


def contract_resource(round_: int, index: int) -> str:
    """Contract ``index`` of round ``round_``: the resource ``contract:<round>.<index>``."""
    return f"{CONTRACT_PREFIX}{round_}.{index}"


def elf_name(pid: int) -> str:
    """The name of elf ``pid`` (1..N); the mayor is ``mayor`` (pid 0)."""
    return MAYOR_NAME if pid == 0 else f"{ELF_PREFIX}{pid}"


CHECKS = (
    "elves: pins only with a contract, poison only with pins, configured units",
    "elves: one contract at a time, done by its holder with its tools, never abandoned",
    "elves: no elf goes home holding a contract, pins or poison (went-home-holding)",
    "elves: every elf ends ELF_DONE, the mayor MAYOR_DONE",
)
Plan = tuple[tuple[int, ...], ...]  # hamsters per contract, per round


class Town(NamedTuple):
    plan: Plan | None
    pins_per_elf: int | None
    poison_per_hamster: int
    finals: tuple[tuple[str, str], ...]  # (process, its final state)


class ElfSeen(NamedTuple):
    """What the rules keep of one elf: the contract it holds, whether it holds pins and poison,
    whether it has done the contract it holds."""

    contract: tuple[int, int] | None = None
    pins: bool = False
    poison: bool = False
    completed: bool = False


def contract_of(resource: str) -> tuple[int, int] | None:
    """``contract:2.3`` → (2, 3)."""
    try:
        r, i = resource.split(":", 1)[1].split(".")
        return int(r), int(i)
    except (IndexError, ValueError):
        return None


def in_plan(plan: Plan, round_: Any, index: Any) -> bool:
    return (
        isinstance(round_, int)
        and isinstance(index, int)
        and 1 <= round_ <= len(plan)
        and 1 <= index <= len(plan[round_ - 1])
    )


def params(given: Mapping[str, Any], names: list[str]) -> Town:
    plan = given.get("plan")
    pins = given.get("pins_per_elf")
    finals = [(MAYOR_NAME, MAYOR_DONE)] if MAYOR_NAME in names else []
    finals += [(n, ELF_DONE) for n in sorted(n for n in names if n.startswith(ELF_PREFIX))]
    return Town(
        tuple(tuple(r) for r in plan) if plan is not None else None,
        int(pins) if pins is not None else None,
        int(given.get("poison_per_hamster", 1)),
        tuple(finals),
    )


def start(town: Town) -> ElfSeen:
    return ElfSeen()


def observe(
    town: Town, name: str, seen: Observation, kind: str, fields: Mapping[str, Any]
) -> tuple[ElfSeen, tuple[Broken, ...]]:
    elf: ElfSeen = seen  # type: ignore[assignment]
    resource, units = str(fields.get("resource", "")), fields.get("units", 1)
    broken: list[Broken] = []
    if kind == "enter" and resource.startswith(CONTRACT_PREFIX):
        if elf.contract is not None:
            held = f"{elf.contract[0]}.{elf.contract[1]}"
            broken.append(
                Broken("two-contracts", f"{name} took {resource} while still holding contract {held}")
            )
        elf = elf._replace(contract=contract_of(resource), completed=False)
    elif kind == "enter" and resource == PINS:
        if elf.contract is None:
            broken.append(Broken("pins-without-contract", f"{name} took pins without a contract"))
        elif town.pins_per_elf is not None and units != town.pins_per_elf:
            need = town.pins_per_elf
            broken.append(
                Broken("pins-units", f"{name} took {count(units, 'pin')}, not the {need} every elf needs")
            )
        elf = elf._replace(pins=True)
    elif kind == "enter" and resource == POISON:
        if not elf.pins:
            broken.append(Broken("poison-without-pins", f"{name} took poison without holding pins"))
        elif town.plan and elf.contract is not None and in_plan(town.plan, *elf.contract):
            r, i = elf.contract
            need = town.plan[r - 1][i - 1] * town.poison_per_hamster
            if units != need:
                broken.append(
                    Broken(
                        "poison-units", f"{name} took {units} poison for contract {r}.{i}, which needs {need}"
                    )
                )
        elf = elf._replace(poison=True)
    elif kind == "exit" and resource == PINS:
        elf = elf._replace(pins=False)
    elif kind == "exit" and resource == POISON:
        elf = elf._replace(poison=False)
    elif kind == "exit" and resource.startswith(CONTRACT_PREFIX):
        if not elf.completed:
            broken.append(Broken("contract-abandoned", f"{name} left {resource} without doing it"))
        elf = elf._replace(contract=None, completed=False)  # only the contract held counts
    elif kind == "contract_done":
        key = (fields.get("round"), fields.get("contract"))
        if town.plan is not None and not in_plan(town.plan, *key):
            broken.append(
                Broken("contract-unknown", f"contract {key[0]}.{key[1]} is not in the mayor's plan")
            )
        if elf.contract != key:
            held = "no contract" if elf.contract is None else f"contract {elf.contract[0]}.{elf.contract[1]}"
            broken.append(
                Broken("done-by-non-holder", f"{name} did contract {key[0]}.{key[1]} while holding {held}")
            )
        elif not (elf.pins and elf.poison):
            tool = "pins" if not elf.pins else "poison"
            broken.append(
                Broken("done-without-tools", f"{name} did contract {key[0]}.{key[1]} without holding {tool}")
            )
        elf = elf._replace(completed=True)
    return elf, tuple(broken)


def tallies(seen: Observation) -> Iterable[tuple[Hashable, int]]:
    return ()


def limit(town: Town, key: Hashable, total: int) -> Broken | None:
    return None


def end(town: Town, processes: Mapping[str, tuple[Observation, str | None]]) -> list[Broken]:
    found = []
    for name, final in town.finals:
        seen, state = processes.get(name, (None, None))
        if state != final:
            found.append(
                Broken("not-finished", f"{name} ended in {state or 'its first state'}, not {final}", (name,))
            )
        elif final == ELF_DONE and isinstance(seen, ElfSeen):
            held = [f"contract {seen.contract[0]}.{seen.contract[1]}"] if seen.contract else []
            held += [tool for tool, has in ((PINS, seen.pins), (POISON, seen.poison)) if has]
            if held:
                found.append(
                    Broken(
                        "went-home-holding",
                        f"{name} ended {final} still holding {', '.join(held)}: never given back",
                        (name,),
                    )
                )
    return found


RULES = Rules(
    CHECKS,
    {
        **dict.fromkeys(
            (
                "two-contracts",
                "pins-without-contract",
                "pins-units",
                "poison-without-pins",
                "poison-units",
                "contract-abandoned",
                "went-home-holding",
                "done-by-non-holder",
                "done-without-tools",
                "contract-unknown",
            ),
            SAFETY,
        ),
        "not-finished": PROGRESS,
    },
    frozenset({"enter", "exit", "contract_done"}),
    params,
    start,
    observe,
    tallies,
    limit,
    end,
)
