"""The hamster killers' workload (the ``elves`` problem's, elves.py): the options a town takes,
checked alike for every solution, and the mayor's plan, drawn alike for every solution.

``town(elves, options, seed)`` is what a solution's ``make_setup`` starts from: it refuses,
up front, any configuration that could never finish (docs/elves.md, decision 2) and returns the
run's parameters, the plan included (what the rules and the audit read from a trace header).
"""

from __future__ import annotations

import random
from typing import Any

from ..limits import whole_number
from ..setups import ConfigError, positive_int

OPTIONS = {
    "pins": "pins in the village (default 3)",
    "poison": "poison portions (default 10)",
    "contracts": "contracts per round (default 6)",
    "hamsters": "hamsters per contract, MIN-MAX (default 1-5)",
    "rounds": "rounds of contracts (default 2)",
    "pins_per_elf": "pins an elf needs (default 1)",
    "poison_per_hamster": "poison portions per hamster (default 1)",
}
DEFAULTS = {
    "pins": 3,
    "poison": 10,
    "contracts": 6,
    "hamsters": (1, 5),
    "rounds": 2,
    "pins_per_elf": 1,
    "poison_per_hamster": 1,
}


def hamster_range(value: Any) -> tuple[int, int]:
    """``[min, max]``, ``(min, max)``, one number, or ``"MIN-MAX"`` → (min, max), both ≥ 1."""
    if isinstance(value, str):
        text, parts = value, value.split("-")
        try:
            value = [whole_number(p) for p in parts] if len(parts) in (1, 2) else None
        except ValueError:
            value = None
        if value is None:
            raise ConfigError(f"hamsters must be MIN-MAX (e.g. 1-5), got {text!r}")
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value, value]
    if (
        not isinstance(value, (list, tuple))
        or len(value) not in (1, 2)
        or any(isinstance(v, bool) or not isinstance(v, int) for v in value)
    ):
        raise ConfigError(f"option 'hamsters' must be [min, max] whole numbers, got {value!r}")
    low, high = value[0], value[-1]
    if low < 1:
        raise ConfigError(f"a contract must have at least 1 hamster, got min {low}")
    if low > high:
        raise ConfigError(f"hamsters: min {low} is above max {high}")
    return low, high


def make_plan(rounds: int, contracts: int, hamsters: tuple[int, int], seed: int) -> list[tuple[int, ...]]:
    """The mayor's contracts for every round, drawn from one seeded RNG (same seed, same plan)."""
    rng = random.Random(f"elves-mayor-{seed}")
    return [tuple(rng.randint(*hamsters) for _ in range(contracts)) for _ in range(rounds)]


def feasible(opts: dict[str, Any]) -> tuple[int, int, int, int, tuple[int, int]]:
    """``pins``, ``poison``, ``pins_per_elf``, ``poison_per_hamster`` and the hamster range of
    ``opts`` (DEFAULTS filled in); ConfigError for a configuration that could never finish. The
    problem's ``resources`` asks it too, so a solution that skips ``town`` is refused alike."""
    pins = positive_int(opts, "pins")
    poison = positive_int(opts, "poison")
    pins_per_elf = positive_int(opts, "pins_per_elf")
    per_hamster = positive_int(opts, "poison_per_hamster")
    low, high = hamster_range(opts["hamsters"])
    if pins_per_elf > pins:
        raise ConfigError(
            f"an elf needs {pins_per_elf} pins but only {pins} exist: no contract could ever be done"
        )
    if high * per_hamster > poison:
        raise ConfigError(
            f"a contract of {high} hamsters needs {high * per_hamster} poison portions "
            f"({per_hamster} per hamster) but only {poison} exist: it could never be done; "
            f"lower the hamster maximum or add poison"
        )
    return pins, poison, pins_per_elf, per_hamster, (low, high)


def town(elves: int, options: dict[str, Any], seed: int) -> dict[str, Any]:
    """The run's parameters (``elves``, ``pins``, ``poison``, ``contracts``, ``hamsters``,
    ``rounds``, ``pins_per_elf``, ``poison_per_hamster``, ``plan``, ``seed``) for ``elves`` elves
    and ``options`` (DEFAULTS filled in); ConfigError for an option no solution takes or a
    configuration that could never finish."""
    if isinstance(elves, bool) or not isinstance(elves, int) or elves < 1:
        raise ConfigError(f"the hamster killers need at least one elf, got {elves!r}")
    unknown = set(options) - set(OPTIONS)
    if unknown:
        raise ConfigError(
            f"elves do not take option(s) {', '.join(sorted(unknown))}; "
            f"they take {', '.join(sorted(OPTIONS))}"
        )
    opts = {**DEFAULTS, **options}
    pins, poison, pins_per_elf, per_hamster, (low, high) = feasible(opts)
    contracts = positive_int(opts, "contracts")
    rounds = positive_int(opts, "rounds")
    plan = make_plan(rounds, contracts, (low, high), seed)
    return {
        "elves": elves,
        "pins": pins,
        "poison": poison,
        "contracts": contracts,
        "hamsters": [low, high],
        "rounds": rounds,
        "pins_per_elf": pins_per_elf,
        "poison_per_hamster": per_hamster,
        "plan": [list(p) for p in plan],
        "seed": seed,
    }
