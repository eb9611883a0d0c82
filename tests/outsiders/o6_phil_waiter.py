"""Dining philosophers with a waiter: philosopher 1 also waits at table.

The waiter keeps which forks lie on the table. A hungry philosopher asks it (SEAT); the waiter
grants (SERVE) when both the asker's forks are free and marks them taken; after the meal the
philosopher says so (CLEAR) and the waiter puts its forks back and serves whoever waits, in the
order they asked. The waiter's own hunger is served the same way, without messages.
ONE_FORK = True is its bug: the waiter marks only the asker's left fork taken.
"""

from typing import Literal

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

WAITER = 1
ONE_FORK = False


class Seat(Message):
    type: Literal["SEAT"] = "SEAT"


class Serve(Message):
    type: Literal["SERVE"] = "SERVE"


class Clear(Message):
    type: Literal["CLEAR"] = "CLEAR"


def forks_of(pid: int, n: int) -> tuple[int, int]:
    return pid, pid % n + 1


class Diner(Philosopher):
    TABLE = philosopher_table(
        hungry="waiter: serve myself if my forks are free; else SEAT to the waiter → HUNGRY",
        done="waiter: forks back, serve the queue; else CLEAR → THINKING",
        rows={
            THINKING: {
                "SEAT": on("waiter: queue it, serve what can be", "_on_seat"),
                "CLEAR": on("waiter: forks back, serve what can be", "_on_clear"),
            },
            HUNGRY: {
                "SEAT": on("waiter: queue it, serve what can be", "_on_seat"),
                "CLEAR": on("waiter: forks back, serve what can be", "_on_clear", to=[EATING]),
                "SERVE": on("eat", "_on_serve", to=[EATING]),
            },
            EATING: {
                "SEAT": on("waiter: queue it, serve what can be", "_on_seat"),
                "CLEAR": on("waiter: forks back, serve what can be", "_on_clear"),
            },
        },
    )

    def __init__(self, pid: int, n: int, meals: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, meals, clock)
        self.free = [True] * (n + 1) if pid == WAITER else []  # the waiter's table: fork → on it
        self.queue: list[int] = []  # the waiter's: who asked, in order

    def _msg(self, to: int, kind: type[Message]) -> Send:
        return Send(to, kind(sender=self.pid, ts=self.clock.tick()))

    def _hungry(self) -> list:
        if self.pid != WAITER:
            return [self._msg(WAITER, Seat)]
        self.queue.append(self.pid)
        return self._serve()

    def _serve(self) -> list:
        effects: list = []
        for who in list(self.queue):
            a, b = forks_of(who, self.n)
            if self.free[a] and self.free[b]:
                self.free[a] = False
                self.free[b] = ONE_FORK
                self.queue.remove(who)
                effects += self._eat_now() if who == self.pid else [self._msg(who, Serve)]
        return effects

    def _eat_now(self) -> list:
        return [self.take(self.left), self.take(self.right), *self._eat()]

    def _on_seat(self, msg: Seat) -> list:
        self.clock.receive(msg.ts)
        self.queue.append(msg.sender)
        return self._serve()

    def _on_clear(self, msg: Clear) -> list:
        self.clock.receive(msg.ts)
        for f in forks_of(msg.sender, self.n):
            self.free[f] = True
        return self._serve()

    def _on_serve(self, msg: Serve) -> list:
        self.clock.receive(msg.ts)
        return self._eat_now()

    def _done(self) -> list:
        puts = [self.put(self.left), self.put(self.right)]
        if self.pid != WAITER:
            return [*puts, self._msg(WAITER, Clear)]
        for f in forks_of(self.pid, self.n):
            self.free[f] = True
        return puts + self._serve()


SPEC = philosophers_algorithm(
    "o6-waiter", "a waiter (philosopher 1) hands out both forks at once", Diner, Seat, Serve, Clear
)
