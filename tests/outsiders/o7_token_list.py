"""Suzuki–Kasami written with lists: the TOKEN carries the queue and the last served request of
every node as two lists.

A node wanting in asks everyone (ASK with its sequence number); every node keeps the highest it
heard of each; the holder, idle, passes the TOKEN to the first node whose request is newer than
the one the token last served. MUTATE = True keeps the TOKEN it sent and marks in it an ASK
that reaches it later as served (a message changed after sending).
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

MUTATE = False


class Ask(Message):
    type: Literal["ASK"] = "ASK"
    seq: int


class Token(Message):
    type: Literal["TOKEN"] = "TOKEN"
    queue: list[int]
    served: list[int]  # served[j - 1]: the last request of node j the token served


class TokenNode(ClassicNode):
    TABLE = classic_table(
        request="token here: enter; else ASK all → WANTED",
        exit="pass the TOKEN to the queue's head → RELEASED",
        rows={
            RELEASED: {"ASK": on("holder: queue it or pass the token", "_on_ask")},
            WANTED: {"ASK": on("queue", "_on_ask"), "TOKEN": on("enter", "_on_token", to=[HELD])},
            HELD: {"ASK": on("queue", "_on_ask")},
        },
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.has = pid == 1
        self.asked = [0] * n  # the highest request number heard of each node
        self.queue: list[int] = []  # the token's, while here
        self.served = [0] * n  # the token's, while here
        self.sent: Token | None = None

    def _request(self) -> list:
        self.asked[self.pid - 1] += 1
        if self.has:
            return self._enter()
        self.state = WANTED
        seq = self.asked[self.pid - 1]
        return [Send(j, Ask(sender=self.pid, ts=self.clock.tick(), seq=seq)) for j in self._others()]

    def _on_ask(self, msg: Ask) -> list:
        self.clock.receive(msg.ts)
        self.asked[msg.sender - 1] = max(self.asked[msg.sender - 1], msg.seq)
        if MUTATE and self.sent is not None and not self.has:
            self.sent.served[msg.sender - 1] = msg.seq  # "the token knows now": it is gone
        return self._pass() if self.has and self.state is RELEASED else []

    def _pass(self) -> list:
        for j in range(1, self.n + 1):
            if j not in self.queue and self.asked[j - 1] == self.served[j - 1] + 1:
                self.queue.append(j)
        if not self.queue:
            return []
        head, rest = self.queue[0], self.queue[1:]
        self.has = False
        token = Token(sender=self.pid, ts=self.clock.tick(), queue=rest, served=self.served)
        self.queue, self.served = [], [0] * self.n
        if MUTATE:
            self.sent = token
        return [Send(head, token)]

    def _on_token(self, msg: Token) -> list:
        self.clock.receive(msg.ts)
        self.has = True
        self.queue, self.served = list(msg.queue), list(msg.served)
        return self._enter()

    def _release(self) -> list:
        self.served[self.pid - 1] = self.asked[self.pid - 1]
        return self._pass()


SPEC = classic_algorithm("o7-token-list", "Suzuki–Kasami with lists in its token", TokenNode, Ask, Token)
