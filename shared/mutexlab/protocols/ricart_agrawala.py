"""Ricart–Agrawala (docs/architecture.md#ricart-agrawala): permission from every other node.

Invariant: a node replies to a request at most once; it enters only with N−1 replies for its
current request, so none is left over, even when links reorder. Messages per entry: exactly
2(N−1). The state table is ``RicartAgrawalaNode.TABLE`` (docs/protocols.md)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from ..clock import priority
from ..machine import on
from ..messages import Message
from ..protocol import Effect, Send
from ..reduction import Reductions
from ..show import attributes
from .classic import ClassicNode, State, classic_table, expect
from .kit import classic_algorithm


class Request(Message):
    type: Literal["REQUEST"] = "REQUEST"


class Reply(Message):
    type: Literal["REPLY"] = "REPLY"


class RicartAgrawalaNode(ClassicNode):
    TABLE = classic_table(
        request="broadcast REQUEST → WANTED (alone: → HELD)",
        exit="reply to deferred → RELEASED",
        rows={
            State.RELEASED: {"REQUEST": on("reply", "_reply_to")},
            State.WANTED: {
                "REQUEST": on("reply if (t, j) < mine, else defer", "_on_request"),
                "REPLY": on("count; all → HELD", "_on_reply", to=(State.HELD,)),
            },
            State.HELD: {"REQUEST": on("defer", "_defer")},
        },
        never="a REPLY answers my current request, and I enter only once all N−1 are in",
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.my_request: tuple[int, int] | None = None  # (ts, pid) while WANTED or HELD
        self.replies: set[int] = set()
        self.deferred: list[int] = []

    def _request(self) -> list[Effect]:
        ts = self.clock.tick()
        self.my_request = priority(ts, self.pid)
        self.replies = set()
        self.state = State.WANTED
        msg = Request(sender=self.pid, ts=ts)
        effects: list[Effect] = [Send(j, msg) for j in self._others()]
        if self.n == 1:
            effects += self._enter()
        return effects

    def _reply_to(self, msg: Request) -> list[Effect]:
        self.clock.receive(msg.ts)
        return [self._reply(msg.sender)]

    def _on_request(self, msg: Request) -> list[Effect]:
        earlier = expect(self, self.my_request, "request") < priority(msg.ts, msg.sender)
        return self._defer(msg) if earlier else self._reply_to(msg)

    def _defer(self, msg: Request) -> list[Effect]:
        self.clock.receive(msg.ts)
        self.deferred.append(msg.sender)
        return []

    def _on_reply(self, msg: Reply) -> list[Effect]:
        self.clock.receive(msg.ts)
        self.replies.add(msg.sender)
        return self._enter() if len(self.replies) == self.n - 1 else []

    def _reply(self, to: int) -> Send:
        return Send(to, Reply(sender=self.pid, ts=self.clock.tick()))

    def _release(self) -> list[Effect]:
        self.my_request = None
        deferred, self.deferred = self.deferred, []
        return [self._reply(j) for j in deferred]

    def waiting_for(self) -> dict[str, list[int]]:
        waiting = self.state is State.WANTED
        return {"REPLY": [j for j in self._others() if j not in self.replies]} if waiting else {}

    def card(self) -> list[tuple[str, str]]:
        return attributes(self, "my_request replies deferred", counts=frozenset({"replies"})) + super().card()

    def snapshot(self) -> tuple[Any, ...]:
        replies, deferred = frozenset(self.replies), tuple(self.deferred)
        return (self.state, self.clock.time, self.my_request, replies, deferred, self.requests_left)


def _reductions() -> Reductions:  # reads RicartAgrawalaNode: imported when check asks
    from .ricart_agrawala_reductions import REDUCTIONS

    return REDUCTIONS


SPEC = classic_algorithm(
    "ricart-agrawala",
    "Ricart–Agrawala: permission from every other node, replies deferred",
    RicartAgrawalaNode,
    Request,
    Reply,
    literature={"messages": ("2(N−1)", lambda n: 2 * (n - 1)), "sync": ("T", lambda n: 1)},
    reductions=_reductions,
)
SPEC = replace(SPEC, default_for=("run", "explore"))  # the mutex problem's solution when none is named
CODEC = SPEC.codec
make_setup = SPEC.make_setup  # what the variants in tests build on
