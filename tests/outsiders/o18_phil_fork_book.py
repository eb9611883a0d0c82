"""Dining philosophers with a waiter who keeps a book of forks.

Philosopher 1 waits at table as well as eating. Its book says, for every fork, who has it
(``Entry(holder, meal)``, a NamedTuple: I like records I can unpack). A hungry philosopher
sends ASK with the pair of forks it needs; the waiter, going down its list of askers in order,
gives each one whose two forks are free in the book (GIVE, the same pair); the philosopher eats
and sends the pair BACK. The waiter's own hunger goes through the same book, without messages.

All the payloads are NamedTuples: ``Pair(left, right)`` travels inside each message (the wire
carries it as a JSON array; the codec makes it a Pair again).

Planted bug (a module constant the tests edit):

* BOOK_LEFT_ONLY = True: the waiter looks only at the left fork of a pair in its book, so two
  neighbours may be given the fork between them.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from mutexlab.protocols.kit import (
    EATING,
    HUNGRY,
    THINKING,
    Message,
    Philosopher,
    Send,
    on,
    philosopher_table,
    philosophers_algorithm,
)

NAME = "o18-phil-fork-book"
WAITER = 1
BOOK_LEFT_ONLY = False


class Pair(NamedTuple):
    left: int
    right: int


class Entry(NamedTuple):
    holder: int
    meal: int  # the holder's meal number, for my own reading in explore


class Ask(Message):
    type: Literal["ASK"] = "ASK"
    forks: Pair


class Give(Message):
    type: Literal["GIVE"] = "GIVE"
    forks: Pair


class Back(Message):
    type: Literal["BACK"] = "BACK"
    forks: Pair


WAITING_AT_TABLE = {
    "ASK": on("waiter: note the asker; give whoever can eat", "_on_ask", to=[EATING]),
    "BACK": on("waiter: strike the pair out; give whoever can eat", "_on_back", to=[EATING]),
}


class BookPhilosopher(Philosopher):
    TABLE = philosopher_table(
        hungry="ASK the waiter for my pair → HUNGRY",
        done="my pair BACK to the waiter → THINKING",
        rows={
            THINKING: WAITING_AT_TABLE,
            HUNGRY: {**WAITING_AT_TABLE, "GIVE": on("eat", "_on_give", to=[EATING])},
            EATING: WAITING_AT_TABLE,
        },
        never="GIVE answers my ASK, and I ask only when hungry",
    )

    def __init__(self, pid: int, n: int, meals: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, meals, clock)
        self.pair = Pair(self.left, self.right)
        self.meal = 0
        # the waiter's
        self.book: dict[int, Entry] = {}
        self.askers: list[tuple[int, Pair]] = []

    def _say(self, to: int, model: type[Message], forks: Pair) -> Send:
        return Send(to, model(sender=self.pid, ts=self.clock.tick(), forks=forks))

    # -- the philosopher ------------------------------------------------------------------------
    def _hungry(self) -> list:
        self.meal += 1
        if self.pid == WAITER:
            self.askers.append((self.pid, self.pair))
            return self._serve()
        return [self._say(WAITER, Ask, self.pair)]

    def _eat_now(self) -> list:
        return [self.take(self.left), self.take(self.right), *self._eat()]

    def _on_give(self, msg: Give) -> list:
        self.clock.receive(msg.ts)
        return self._eat_now()

    def _done(self) -> list:
        out: list = [self.put(self.left), self.put(self.right)]
        if self.pid == WAITER:
            return out + self._strike(self.pair)
        return [*out, self._say(WAITER, Back, self.pair)]

    # -- the waiter -----------------------------------------------------------------------------
    def _free(self, pair: Pair) -> bool:
        if BOOK_LEFT_ONLY:
            return pair.left not in self.book
        return pair.left not in self.book and pair.right not in self.book

    def _serve(self) -> list:
        out: list = []
        for asker in list(self.askers):
            who, pair = asker
            if not self._free(pair):
                continue
            self.askers.remove(asker)
            for fork in pair:
                self.book[fork] = Entry(who, self.meal if who == self.pid else 0)
            out += self._eat_now() if who == self.pid else [self._say(who, Give, pair)]
        return out

    def _strike(self, pair: Pair) -> list:
        for fork in pair:
            self.book.pop(fork, None)
        return self._serve()

    def _on_ask(self, msg: Ask) -> list:
        self.clock.receive(msg.ts)
        self.askers.append((msg.sender, Pair(*msg.forks)))
        return self._serve()

    def _on_back(self, msg: Back) -> list:
        self.clock.receive(msg.ts)
        return self._strike(Pair(*msg.forks))

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is not HUNGRY or self.pid == WAITER:
            return {}
        return {"GIVE": [WAITER]}

    def snapshot(self) -> tuple:
        book = tuple(sorted(self.book.items()))
        return (self.state, self.clock.time, self.meals_left, self.meal, book, tuple(self.askers))


SPEC = philosophers_algorithm(
    NAME, "philosophers: philosopher 1 waits at table, with a book of who holds which fork", BookPhilosopher,
    Ask, Give, Back,
)  # fmt: skip
