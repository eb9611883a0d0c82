"""A broken variant of bees_reed_tokens.py (beside it): a bee takes a flower one ACK too early,
so K + 1 bees can be on the K flowers. ``mutexlab check bees`` finds the interleaving and writes
it as a scenario ``mutexlab replay`` plays again (exit 1)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bees_reed_tokens import SPEC as CORRECT
from bees_reed_tokens import ReedTokenBee
from bees_reed_tokens import make_setup as correct_setup

from mutexlab.protocol import Enter, Schedule
from mutexlab.setups import Setup

NAME = "bees-reed-tokens-broken"


class EagerBee(ReedTokenBee):
    def _try_flower(self) -> list:
        if len(self.acks & self.alive) < len(self.alive) - self.flowers:  # should be K − 1
            return []
        self.state = type(self.state)("ON_FLOWER")
        return [Enter("flower"), Schedule("exit", "flower")]


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    setup = correct_setup(processes, options, seed)
    for bee in setup.protocols.values():
        bee.__class__ = EagerBee
    return replace(setup, algorithm=NAME)


SPEC = replace(
    CORRECT, name=NAME, summary="bees_reed_tokens, taking a flower one ACK too early", make_setup=make_setup
)
