"""The options a village takes, checked, and the mayor's plan (``make_setup`` is the package's)."""

from __future__ import annotations

import random
from typing import Any

from ...limits import whole_number
from ...setups import ConfigError

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
