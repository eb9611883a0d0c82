"""Dining philosophers with forks as travelling tokens, picked in a global order.

Each fork lives with one philosopher at a time. A hungry philosopher asks for the fork it lacks
with the lower number first (Dijkstra's resource hierarchy), then the higher; a philosopher who
holds a fork lends it unless it is eating or has already picked it up for its own meal. A
philosopher's view of its two forks is a ``NamedTuple``, replaced with ``_replace``, never changed.
"""

import random
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

# Ask for the lower-numbered fork first (the hierarchy) — or, when JITTER is on, flip a coin to
# break the symmetry the way a networking textbook would.
JITTER = False


class Hand(NamedTuple):
    here: bool  # the fork is with me
    picked: bool  # I picked it up for my meal: I do not lend it
    asked: bool  # someone asked for it while I held it picked


class Need(Message):
    type: Literal["NEED"] = "NEED"
    fork: int


class Fork(Message):
    type: Literal["FORK"] = "FORK"
    fork: int


HOLDING = {
    "NEED": on("lend the fork unless it is picked", "_on_need"),
    "FORK": on("pick it", "_on_fork", to=EATING),
}


class Hierarchy(Philosopher):
    TABLE = philosopher_table(
        "ask for the lower fork first",
        "put both down, lend the asked ones",
        {
            THINKING: {"NEED": on("lend the fork", "_on_need")},
            HUNGRY: HOLDING,
            EATING: {"NEED": on("remember; lend after the meal", "_on_need")},
        },
        never="a FORK comes only when hungry (asked for)",
    )

    def __init__(self, pid, n, meals=0, clock=0):
        super().__init__(pid, n, meals, clock)
        # fork f starts with the lower-numbered of its two philosophers
        self.hands = {
            f: Hand(here=self._home(f) == pid, picked=False, asked=False) for f in (self.left, self.right)
        }

    def _home(self, f):
        a, b = self._sharers(f)
        return min(a, b)

    def _sharers(self, f):
        # fork f is philosopher f's left and philosopher f-1's right
        return f, (f - 2) % self.n + 1

    def _peer(self, f):
        a, b = self._sharers(f)
        return b if a == self.pid else a

    def _order(self):
        first, second = sorted((self.left, self.right))
        if JITTER and random.random() < 0.5:
            first, second = second, first
        return first, second

    def _ask_next(self):
        for f in self._order():
            hand = self.hands[f]
            if not hand.here:
                return [Send(self._peer(f), Need(sender=self.pid, ts=self.clock.tick(), fork=f))]
            if not hand.picked:
                self.hands[f] = hand._replace(picked=True)
        return [self.take(self.left), self.take(self.right), *self._eat()]

    def _hungry(self):
        return self._ask_next()

    def _on_fork(self, msg):
        self.clock.receive(msg.ts)
        self.hands[msg.fork] = Hand(here=True, picked=False, asked=False)
        return self._ask_next()

    def _on_need(self, msg):
        self.clock.receive(msg.ts)
        hand = self.hands[msg.fork]
        if hand.picked:
            self.hands[msg.fork] = hand._replace(asked=True)
            return []
        self.hands[msg.fork] = Hand(here=False, picked=False, asked=False)
        return [Send(msg.sender, Fork(sender=self.pid, ts=self.clock.tick(), fork=msg.fork))]

    def _done(self):
        out = [self.put(self.left), self.put(self.right)]
        for f, hand in sorted(self.hands.items()):
            if hand.asked:
                self.hands[f] = Hand(here=False, picked=False, asked=False)
                out.append(Send(self._peer(f), Fork(sender=self.pid, ts=self.clock.tick(), fork=f)))
            else:
                self.hands[f] = hand._replace(picked=False)
        return out


SPEC = philosophers_algorithm(
    "o5-phil-hierarchy",
    "forks as tokens, the lower-numbered asked for first",
    Hierarchy,
    Need,
    Fork,
)
