"""k-mutual exclusion with a bank: node 1 keeps a counter of free permits and lends them out.

A node asks the bank for a permit (ASK), enters when it gets one (LOAN), and gives it
back on leaving (REPAY). The bank serves waiting nodes first-come, first-served.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Literal

from mutexlab.protocols.kit import (
    HELD,
    RELEASED,
    WANTED,
    ClassicNode,
    Message,
    Send,
    classic_algorithm,
    classic_table,
    on,
)

BANK = 1


class Ask(Message):
    type: Literal["ASK"] = "ASK"


class Loan(Message):
    type: Literal["LOAN"] = "LOAN"


class Repay(Message):
    type: Literal["REPAY"] = "REPAY"


@dataclass
class Vault:
    """The bank's books (only node 1 uses them)."""

    free: int
    waiting: deque = field(default_factory=deque)

    def lend(self) -> bool:
        if self.free > 0:
            self.free -= 1
            return True
        return False


def stamp(node: Banker, kind: type[Message]) -> Message:
    return kind(sender=node.pid, ts=node.clock.tick())


BANKING = {
    "ASK": on("bank: lend a permit if one is free, else queue", "_bank"),
    "REPAY": on("bank: lend the returned permit to the next in line", "_bank"),
}


class Banker(ClassicNode):
    TABLE = classic_table(
        request="ASK the bank → WANTED",
        exit="REPAY the bank → RELEASED",
        rows={
            RELEASED: BANKING,
            WANTED: {**BANKING, "LOAN": on("enter", "_on_loan", to=[HELD])},
            HELD: BANKING,
        },
        never="a LOAN answers my ASK, one at a time",
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0, k: int = 2) -> None:
        super().__init__(pid, n, requests, clock)
        self.k = k
        self.vault = Vault(k) if pid == BANK else None

    @property
    def is_bank(self) -> bool:
        return self.pid == BANK

    def _request(self) -> list:
        self.state = WANTED
        return [Send(BANK, stamp(self, Ask))]

    def _on_loan(self, msg: Loan) -> list:
        self.clock.receive(msg.ts)
        return self._enter()

    def _release(self) -> list:
        return [Send(BANK, stamp(self, Repay))]

    def _bank(self, msg: Message) -> list:
        self.clock.receive(msg.ts)
        vault = self.vault
        assert vault is not None, "only the bank is asked"
        match msg:
            case Ask(sender=who):
                vault.waiting.append(who)
            case Repay():
                vault.free += 1
        out = []
        while vault.waiting and vault.lend():
            out.append(Send(vault.waiting.popleft(), stamp(self, Loan)))
        return out


SPEC = classic_algorithm(
    "k-bank",
    "k-mutual exclusion: node 1 lends K permits, first come first served",
    Banker,
    Ask,
    Loan,
    Repay,
    literature={"messages": ("3(N−1)/N", lambda n: 3 * (n - 1) / n)},
    problem="kmutex",
)
