"""Suzuki–Kasami's broadcast token (TOCS 1985) forgetting to record the request it served.

Every node counts the requests it has heard of, RN[j]; the token carries LN[j], the number of
node j's requests served, and a queue. A node without the token broadcasts REQUEST(n = RN[i]);
the holder, idle, sends the token to j when RN[j] = LN[j] + 1. On leaving, the holder sets
LN[i] = RN[i], queues every j with RN[j] = LN[j] + 1 and passes the token to the queue's head.
Node 1 holds the token at the start.

Bug: on leaving, the holder does not set LN[i] = RN[i]: the token still says its request is
outstanding. A later holder takes that for a fresh request and sends the token to a node that
is idle and never asked — an input its table refuses.

Caught by: mutexlab check FILE --nodes 2
Expect: error — cannot take TOKEN in state RELEASED
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


class Request(Message):
    type: Literal["REQUEST"] = "REQUEST"
    n: int  # the sender's request number


class Token(Message):
    type: Literal["TOKEN"] = "TOKEN"
    ln: tuple[int, ...]  # LN[1..N]: requests served, per node
    queue: tuple[int, ...]


class Node(ClassicNode):
    TABLE = classic_table(
        request="token here: → HELD; else REQUEST to all → WANTED",
        exit="LN[i] = RN[i]; TOKEN to the queue's head → RELEASED",
        rows={
            RELEASED: {"REQUEST": on("RN[j]; idle holder: TOKEN to j", "_on_request")},
            WANTED: {
                "REQUEST": on("RN[j]", "_on_request"),
                "TOKEN": on("enter", "_on_token", to=[HELD]),
            },
            HELD: {"REQUEST": on("RN[j]", "_on_request")},
        },
        never="the token goes only to a node with a request outstanding, WANTED until it comes",
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.rn = [0] * (n + 1)  # RN[j], index 0 unused
        self.ln: list[int] | None = [0] * (n + 1) if pid == 1 else None  # the token's LN, if here
        self.queue: list[int] = []  # the token's queue, if here

    def _request(self) -> list:
        self.rn[self.pid] += 1
        if self.ln is not None:
            return self._enter()
        self.state = WANTED
        ts = self.clock.tick()
        return [Send(j, Request(sender=self.pid, ts=ts, n=self.rn[self.pid])) for j in self._others()]

    def _on_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        j = msg.sender
        self.rn[j] = max(self.rn[j], msg.n)
        if self.ln is not None and self.state is RELEASED and self.rn[j] == self.ln[j] + 1:
            return self._pass(j)
        return []

    def _on_token(self, msg: Token) -> list:
        self.clock.receive(msg.ts)
        self.ln, self.queue = [0, *msg.ln], list(msg.queue)
        return self._enter()

    def _release(self) -> list:
        assert self.ln is not None
        # the bug: ``self.ln[self.pid] = self.rn[self.pid]`` is missing
        for j in self._others():
            if j not in self.queue and self.rn[j] == self.ln[j] + 1:
                self.queue.append(j)
        return self._pass(self.queue.pop(0)) if self.queue else []

    def _pass(self, to: int) -> list:
        assert self.ln is not None
        token = Token(sender=self.pid, ts=self.clock.tick(), ln=tuple(self.ln[1:]), queue=tuple(self.queue))
        self.ln, self.queue = None, []
        return [Send(to, token)]


SPEC = classic_algorithm(
    "mutant-suzuki-kasami-stale-ln",
    "Suzuki–Kasami not recording the request it served",
    Node,
    Request,
    Token,
)
