"""Dining philosophers with one token around the table, its ledger a frozen dataclass.

Written from the user docs only. Whoever holds the token may eat (both its forks: the token
goes to one philosopher at a time, so no fork is ever wanted by two). The token carries how many
meals each philosopher still has; the holder keeps it as a frozen ``Ledger`` and changes it with
``dataclasses.replace``. A holder with meals still to eat keeps the token until it is hungry (a
token going round while its holders think would go round forever); one with none passes it on.
Once every meal is eaten the token stops where it is.

Messages per meal: up to N TOKENs (one lap) — no fork messages at all.
"""

from dataclasses import dataclass, replace
from typing import Literal

from mutexlab.protocols.kit import (
    HUNGRY,
    THINKING,
    Message,
    Philosopher,
    Send,
    on,
    philosopher_table,
    philosophers_algorithm,
)

HOLDERS = (1,)  # who starts with a token: (1, 3) puts a second one on the table "for speed"


class Token(Message):
    type: Literal["TOKEN"] = "TOKEN"
    left: tuple[int, ...]  # meals still to eat, philosopher 1 first


@dataclass(frozen=True)
class Ledger:
    left: tuple[int, ...]

    def eaten_by(self, pid: int) -> "Ledger":
        left = list(self.left)
        left[pid - 1] -= 1
        return replace(self, left=tuple(left))

    def finished(self) -> bool:
        return not any(self.left)


class Seat(Philosopher):
    TABLE = philosopher_table(
        hungry="eat if I hold the token, else wait for it",
        done="mark my meal in the ledger; pass the token on when I am done",
        rows={
            THINKING: {"TOKEN": on("keep it while I have meals, else pass it on", "_on_token_thinking")},
            HUNGRY: {"TOKEN": on("keep it and eat", "_on_token_hungry", to="EATING")},
        },
        never="the token comes to one philosopher at a time, and an eater holds it",
    )

    def __init__(self, pid: int, n: int, meals: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, meals, clock)
        self.ledger: Ledger | None = Ledger((meals,) * n) if pid in HOLDERS else None

    def _next(self) -> int:
        return self.pid % self.n + 1

    def _pass(self) -> list:
        assert self.ledger is not None
        token = Token(sender=self.pid, ts=self.clock.tick(), left=self.ledger.left)
        self.ledger = None
        return [Send(self._next(), token)]

    def _hungry(self) -> list:
        return self._meal() if self.ledger is not None else []

    def _meal(self) -> list:
        return [self.take(self.left), self.take(self.right), *self._eat()]

    def _on_token_thinking(self, msg: Token) -> list:
        self.clock.receive(msg.ts)
        self.ledger = Ledger(msg.left)
        if self.ledger.finished() or self.meals_left:
            return []
        return self._pass()

    def _on_token_hungry(self, msg: Token) -> list:
        self.clock.receive(msg.ts)
        self.ledger = Ledger(msg.left)
        return self._meal()

    def _done(self) -> list:
        assert self.ledger is not None
        self.ledger = self.ledger.eaten_by(self.pid)
        out = [self.put(self.left), self.put(self.right)]
        if self.meals_left or self.ledger.finished():
            return out  # I eat again first, or nobody needs it
        return out + self._pass()

    def waiting_for(self) -> dict[str, list[int]]:
        return {"TOKEN": []} if self.state is HUNGRY and self.ledger is None else {}


SPEC = philosophers_algorithm(
    "o9-token-ledger",
    "one token around the table, its meal ledger a frozen dataclass changed with replace()",
    Seat,
    Token,
)
