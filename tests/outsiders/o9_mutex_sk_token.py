"""Suzuki–Kasami: one token, its queue and last-served numbers travelling inside it.

Written from the user docs only. The node keeps the TOKEN message it received (``self.token``)
and changes its lists in place when it leaves, then sends it on with a new sender and time
stamp (``model_copy``). A request is broadcast with its sequence number; the holder sends the
token to an idle asker at once, or queues it on leaving.

Messages per entry: N (N−1 REQUESTs and the TOKEN), 0 when the holder asks again.
"""

import random
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

PICK = "first"  # "random": serve the queue in a random order (random.choice)
HISTORY = False  # True: remember whom the token went to in a default argument


class Request(Message):
    type: Literal["REQUEST"] = "REQUEST"
    seq: int


class Token(Message):
    type: Literal["TOKEN"] = "TOKEN"
    served: list[int]  # LN: the last request of each node served (index pid − 1)
    queue: list[int]


ASK = on("note the request; hand the token to an idle asker", "_on_request")


class SKNode(ClassicNode):
    TABLE = classic_table(
        request="enter if I hold the token, else REQUEST all → WANTED",
        exit="queue the askers; TOKEN to the first → RELEASED",
        rows={
            RELEASED: {"REQUEST": ASK},
            WANTED: {"REQUEST": ASK, "TOKEN": on("keep it; enter", "_on_token", to=[HELD])},
            HELD: {"REQUEST": ASK},
        },
        never="the token comes only to a node that asked for it",
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.asked = [0] * n  # RN: the latest request number heard from each node
        self.token: Token | None = Token(sender=pid, ts=0, served=[0] * n, queue=[]) if pid == 1 else None

    def _request(self) -> list:
        if self.token is not None:
            return self._enter()
        self.asked[self.pid - 1] += 1
        self.state = WANTED
        seq = self.asked[self.pid - 1]
        return [Send(j, Request(sender=self.pid, ts=self.clock.tick(), seq=seq)) for j in self._others()]

    def _owed(self, j: int) -> bool:
        assert self.token is not None
        return self.asked[j - 1] == self.token.served[j - 1] + 1

    def _on_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        j = msg.sender
        self.asked[j - 1] = max(self.asked[j - 1], msg.seq)
        if self.token is not None and self.state is RELEASED and self._owed(j):
            return self._pass(j)
        return []

    def _on_token(self, msg: Token) -> list:
        self.clock.receive(msg.ts)
        self.token = msg
        return self._enter()

    def _release(self) -> list:
        token = self.token
        assert token is not None
        token.served[self.pid - 1] = self.asked[self.pid - 1]
        for j in self._others():
            if j not in token.queue and self._owed(j):
                token.queue.append(j)
        if not token.queue:
            return []
        nxt = random.choice(token.queue) if PICK == "random" else token.queue[0]
        token.queue.remove(nxt)
        return self._pass(nxt)

    def _pass(self, to: int, history: list = []) -> list:  # noqa: B006 - read only unless HISTORY
        if HISTORY:
            history.append(to)
        token, self.token = self.token, None
        assert token is not None
        return [Send(to, token.model_copy(update={"sender": self.pid, "ts": self.clock.tick()}))]


SPEC = classic_algorithm(
    "o9-sk-token",
    "Suzuki–Kasami: the received TOKEN kept and changed in place, sent on as a copy",
    SKNode,
    Request,
    Token,
    literature={"messages": ("0 to N", lambda n: (0, n))},
)
