"""A broken variant of elves_no_arbiter.py (beside it): an elf answers every ledger request at
once, even when its own request comes first, so two elves can hold the ledger's lock together,
both read contract 1 as free and both take it. ``mutexlab check elves`` finds the interleaving
and writes it as a scenario ``mutexlab replay`` plays again (exit 1)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from elves_no_arbiter import SPEC as CORRECT
from elves_no_arbiter import Ask, Elf, Grant
from elves_no_arbiter import make_setup as correct_setup

from mutexlab.protocol import Send
from mutexlab.setups import Setup

NAME = "elves-no-arbiter-broken"


class EagerElf(Elf):
    def _ask(self, msg: Ask) -> list:
        self.clock.receive(msg.ts)  # never defers: the lock is no lock
        return [Send(msg.sender, Grant(sender=self.pid, ts=self.clock.tick(), answers=msg.ts))]


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    setup = correct_setup(processes, options, seed)
    for pid, process in setup.protocols.items():
        if pid:
            process.__class__ = EagerElf
    return replace(setup, algorithm=NAME)


SPEC = replace(
    CORRECT,
    name=NAME,
    summary="elves_no_arbiter, answering every ledger request at once",
    make_setup=make_setup,
)
