"""Ricart–Agrawala comparing timestamps as text, under a clock-offset reduction it declares.

Bug: a WANTED node defers a request when ``(str(ts), pid)`` of its own is smaller — right while
stamps have one digit, wrong from two on ("10" < "9"): a node that answered a request and then
asks with a later, two-digit stamp believes it comes first, and both enter.

The file also declares ``ClockOffsets`` ("only the order of timestamps is read"), which is
false for this code: applied, it would shift every world down to stamps 0, 1, 2 … where the bug
never shows. ``check`` samples every declared reduction on the worlds it visits and refuses this
one (``not applied: clock-offset normalisation — refused: …``), so the search runs on the real
stamps, from clocks at 8.

Caught by: mutexlab check FILE --nodes 3 -o 'initial_clocks={"1": 8, "2": 8, "3": 8}'
Expect: capacity — cs (capacity 1) held by
Refused: clock-offset normalisation
"""

import copy
from typing import Literal

from mutexlab.protocols.kit import (
    HELD,
    RELEASED,
    WANTED,
    ClassicNode,
    ClockOffsets,
    Message,
    Reductions,
    Send,
    classic_algorithm,
    classic_table,
    on,
)


class Request(Message):
    type: Literal["REQUEST"] = "REQUEST"


class Reply(Message):
    type: Literal["REPLY"] = "REPLY"


class Node(ClassicNode):
    TABLE = classic_table(
        request="REQUEST to the others → WANTED",
        exit="REPLY to the deferred → RELEASED",
        rows={
            RELEASED: {"REQUEST": on("REPLY", "_on_request")},
            WANTED: {
                "REQUEST": on("mine first: defer; else REPLY", "_on_request"),
                "REPLY": on("count it; all → HELD", "_on_reply", to=[HELD]),
            },
            HELD: {"REQUEST": on("defer", "_on_request")},
        },
        never="a REPLY answers my request, and I enter only once all have come",
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.mine: tuple[int, int] | None = None
        self.replies: set[int] = set()
        self.deferred: list[int] = []

    def _request(self) -> list:
        ts = self.clock.tick()
        self.mine, self.replies = (ts, self.pid), set()
        self.state = WANTED
        return [Send(j, Request(sender=self.pid, ts=ts)) for j in self._others()]

    def _on_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        mine = (str(self.mine[0]), self.pid) if self.mine else None
        if self.state is HELD or (self.state is WANTED and mine < (str(msg.ts), msg.sender)):  # the bug
            self.deferred.append(msg.sender)
            return []
        return [Send(msg.sender, Reply(sender=self.pid, ts=self.clock.tick()))]

    def _on_reply(self, msg: Reply) -> list:
        self.clock.receive(msg.ts)
        self.replies.add(msg.sender)
        return self._enter() if len(self.replies) == self.n - 1 else []

    def _release(self) -> list:
        self.mine = None
        deferred, self.deferred = self.deferred, []
        return [Send(j, Reply(sender=self.pid, ts=self.clock.tick())) for j in deferred]


def _low(node: Node) -> int:
    return min(node.clock.time, node.mine[0]) if node.mine else node.clock.time


def _shift(node: Node, d: int) -> Node:
    twin = copy.deepcopy(node)
    twin.clock.time = node.clock.time - d
    if node.mine is not None:
        twin.mine = (node.mine[0] - d, node.mine[1])
    return twin


# The declaration the bug makes false: the stamps are read as text, not only in order.
REDUCTIONS = Reductions(
    frozenset({Node}),
    clocks=ClockOffsets(_low, _shift, "timestamps are only compared, as (ts, pid)"),
)

SPEC = classic_algorithm(
    "mutant-ra-text-stamps-declared",
    "Ricart–Agrawala comparing stamps as text",
    Node,
    Request,
    Reply,
    reductions=REDUCTIONS,
)
