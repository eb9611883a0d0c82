"""k-mutual exclusion with one token that carries a counter of free permits (Suzuki–Kasami's
broadcast of request numbers, the token holding the count of free places, LN and a queue).

A node needs the token to take a permit (to enter) and to give one back (after leaving). Needing
it, it broadcasts REQ(n) with its next request number; the holder, when it needs the token no
more, hands it to the first node of the token's queue. Holding the token: give back what I owe,
then take a permit if one is free and I want one. A node that wants in but finds no free permit
hands the token on to a node that gives one back and asks again.
FORGET_PERMIT = True is its bug: a node takes a permit without counting it, so K+1 get in.
"""

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

FORGET_PERMIT = False


class Req(Message):
    type: Literal["REQ"] = "REQ"
    n: int
    returning: bool  # the asker owes a permit


class Token(Message):
    type: Literal["TOKEN"] = "TOKEN"
    free: int
    ln: list[int]  # ln[j - 1]: the request number of j served last
    queue: list[int]


class CounterTokenNode(ClassicNode):
    TABLE = classic_table(
        request="token: take a permit if free; else REQ to all → WANTED (or HELD)",
        exit="token: permit back, pass it on; else REQ to all → RELEASED",
        rows={
            RELEASED: {
                "REQ": on("note it; pass the token if idle", "_on_req"),
                "TOKEN": on("give back what I owe, pass it on", "_on_token"),
            },
            WANTED: {
                "REQ": on("note it; pass the token if I cannot use it", "_on_req"),
                "TOKEN": on("permit free: take it → HELD", "_on_token", to=[HELD]),
            },
            HELD: {
                "REQ": on("note it; pass the token", "_on_req"),
                "TOKEN": on("pass it on", "_on_token"),
            },
        },
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0, k: int = 1) -> None:
        super().__init__(pid, n, requests, clock)
        self.rn = [0] * n  # highest request number heard from each node
        self.token: tuple[int, tuple[int, ...], tuple[int, ...]] | None = (
            (k, (0,) * n, ()) if pid == 1 else None
        )
        self.owe = 0  # permits to give back
        self.asked = False  # a REQ of mine is out, not yet served
        self.returning = [False] * n  # each node's last REQ: to give a permit back

    def _needs(self) -> bool:
        return self.state is WANTED or self.owe > 0

    def _ask(self) -> list:
        if self.asked:
            return []
        self.asked = True
        self.rn[self.pid - 1] += 1
        ts = self.clock.tick()
        return [
            Send(j, Req(sender=self.pid, ts=ts, n=self.rn[self.pid - 1], returning=self.owe > 0))
            for j in self._others()
        ]

    def _request(self) -> list:
        self.state = WANTED
        return self._use() if self.token is not None else self._ask()

    def _release(self) -> list:
        self.owe += 1
        return self._use() if self.token is not None else self._ask()

    def _use(self) -> list:
        """I hold the token: give back, take, queue the waiting, hand it on if I can."""
        assert self.token is not None
        free, ln, queue = self.token
        free, self.owe = free + self.owe, 0
        effects: list = []
        if self.state is WANTED and free > 0:
            free -= 0 if FORGET_PERMIT else 1
            effects += self._enter()
        ln = tuple(self.rn[j] if j == self.pid - 1 else ln[j] for j in range(self.n))
        waiting = [j for j in self._others() if self.rn[j - 1] == ln[j - 1] + 1 and j not in queue]
        queue = (*queue, *waiting)
        self.token, self.asked = (free, ln, queue), False
        if self.state is WANTED and free == 0:  # only one who gives back helps me: no ping-pong
            queue = tuple(j for j in queue if self.returning[j - 1]) + tuple(
                j for j in queue if not self.returning[j - 1]
            )
            if not (queue and self.returning[queue[0] - 1]):
                self.token = (free, ln, queue)
                return effects
        if queue:
            head, rest = queue[0], queue[1:]
            self.token = None
            effects.append(
                Send(
                    head,
                    Token(sender=self.pid, ts=self.clock.tick(), free=free, ln=list(ln), queue=list(rest)),
                )
            )
            if self.state is WANTED:  # no permit: ask again, behind the others
                effects += self._ask()
        return effects

    def _on_req(self, msg: Req) -> list:
        self.clock.receive(msg.ts)
        if msg.n > self.rn[msg.sender - 1]:
            self.rn[msg.sender - 1], self.returning[msg.sender - 1] = msg.n, msg.returning
        return self._use() if self.token is not None else []

    def _on_token(self, msg: Token) -> list:
        self.clock.receive(msg.ts)
        self.token = (msg.free, tuple(msg.ln), tuple(msg.queue))
        return self._use()


SPEC = classic_algorithm(
    "o6-k-token-counter",
    "k-mutual exclusion: one Suzuki–Kasami token carrying the count of free permits",
    CounterTokenNode,
    Req,
    Token,
    problem="kmutex",
)
