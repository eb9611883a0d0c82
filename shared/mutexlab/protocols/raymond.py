"""Raymond's tree-based protocol (docs/architecture.md#raymond): the token travels along the edges of a tree.

HOLDER_i names p_i's neighbour in the direction of the token (p_i itself when it holds it);
Q_i is p_i's FIFO queue of requesters (neighbours, or p_i itself); ``asked`` records that p_i
has sent a REQUEST to HOLDER_i that the token has not answered yet.

The state table is ``RaymondNode.TABLE`` (docs/protocols.md, with what "ask" and "pass" do). The
token comes only to a node that asked for it, so one with a non-empty queue; a TOKEN at a node
whose queue is empty, or that holds the token already (as when HELD), is refused (ProtocolError).

Invariants: the HOLDER pointers always form a tree oriented toward the token (or toward the
link it travels on); an idle token holder has an empty queue; a node is in its own queue at
most once and HELD only while holding the token. Messages per entry: O(log N) on a
balanced tree (at most twice the tree's diameter).
"""

from __future__ import annotations

import math
from collections import deque
from typing import Literal

from ..machine import never, on
from ..messages import Codec, Message
from ..protocol import Send
from ..setups import Setup
from ..show import fmt
from ..spec import Figure
from . import trees
from .classic import (
    ClassicNode,
    State,
    classic_setup,
    classic_spec,
    classic_table,
    pid_option,
    refuse_unknown,
    workload_options,
)


class Request(Message):
    type: Literal["REQUEST"] = "REQUEST"


class Token(Message):
    type: Literal["TOKEN"] = "TOKEN"


CODEC = Codec(Request, Token)


class RaymondNode(ClassicNode):
    TABLE = classic_table(
        request="token here: → HELD at once; else Q += i, ask → WANTED",
        exit="Q not empty: pass → RELEASED",
        legend="ask = REQUEST to HOLDER unless asked already or the token is here; pass = pop the head j "
        "of Q, TOKEN to j, HOLDER = j, and ask j if Q is still not empty",
        rows={
            State.RELEASED: {
                "REQUEST": on("token here: TOKEN to j, HOLDER = j; else Q += j, ask", "_on_request"),
                "TOKEN": on("HOLDER = i; pass (the head is a neighbour); Q empty: (never)", "_on_token"),
            },
            State.WANTED: {
                "REQUEST": on("Q += j, ask", "_queue"),
                "TOKEN": on("HOLDER = i; head is i: pop it → HELD; else pass", "_on_token", to=(State.HELD,)),
            },
            State.HELD: {
                "REQUEST": on("Q += j (the token is in use)", "_queue"),
                "TOKEN": never("it holds the token already"),
            },
        },
    )

    def __init__(self, pid: int, n: int, holder: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.holder = holder
        self.queue: deque[int] = deque()
        self.asked = False

    def _ask(self) -> list:
        """Ask: REQUEST toward the token unless already done (or the token is here)."""
        if self.asked or self.holder == self.pid or not self.queue:
            return []
        self.asked = True
        return [Send(self.holder, Request(sender=self.pid, ts=self.clock.tick()))]

    def _pass(self) -> list:
        """Hand the token to the head of the queue; ask for it back if others still wait here."""
        j = self.queue.popleft()
        self.holder = j
        effects = [Send(j, Token(sender=self.pid, ts=self.clock.tick()))]
        return effects + self._ask()

    def _request(self) -> list:
        if self.holder == self.pid:
            return self._enter()  # an idle holder has an empty queue
        self.queue.append(self.pid)
        self.state = State.WANTED
        return self._ask()

    def _queue(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        self.queue.append(msg.sender)
        return self._ask()

    def _on_request(self, msg: Request) -> list:
        """RELEASED: an idle holder hands the token over at once."""
        if self.holder != self.pid:
            return self._queue(msg)
        self.clock.receive(msg.ts)
        self.holder = msg.sender
        return [Send(msg.sender, Token(sender=self.pid, ts=self.clock.tick()))]

    def _on_token(self, msg: Token) -> list:
        if self.holder == self.pid:
            raise self.refuse(msg, "it holds the token already")
        if not self.queue:
            raise self.refuse(msg)
        self.clock.receive(msg.ts)
        self.holder = self.pid
        self.asked = False
        if self.queue[0] == self.pid:
            self.queue.popleft()
            return self._enter()
        return self._pass()

    def _release(self) -> list:
        return self._pass() if self.queue else []

    def waiting_for(self) -> dict[str, list[int]]:
        return {"TOKEN": [self.holder]} if self.state is State.WANTED else {}

    def card(self) -> list[tuple[str, str]]:
        return [
            ("holder", "self" if self.holder == self.pid else str(self.holder)),
            ("request queue", fmt(list(self.queue))),
            ("asked", fmt(self.asked)),
        ] + super().card()

    def snapshot(self):
        return (self.state, self.clock.time, self.holder, tuple(self.queue), self.asked, self.requests_left)


def make_setup(processes: int, options: dict, seed: int = 0) -> Setup:
    """Options: ``parents`` (default: heap-shaped, root 1) and ``token_holder`` (default: the root)."""
    refuse_unknown(options, set(SPEC.options), "raymond")
    requests, clocks = workload_options(processes, options)
    parents = trees.read_parents(options.get("parents"), processes)
    root = next(p for p in range(1, processes + 1) if p not in parents)
    token_holder = pid_option(options, "token_holder", processes, "raymond", root)
    holder = trees.holders_toward(parents, token_holder)
    return classic_setup(
        "raymond",
        processes,
        requests,
        clocks,
        lambda pid, clock: RaymondNode(pid, processes, holder[pid], requests, clock),
        CODEC,
        token_holder=token_holder,
        parents={str(c): p for c, p in sorted(parents.items())},
    )


SPEC = classic_spec(
    "raymond",
    "Raymond: the token travels along the edges of a tree",
    make_setup,
    CODEC,
    {
        "messages": Figure("O(log N)", lambda n, p: (math.log2(n),) * 2 if n > 1 else (0, 0)),
        # Kshemkalyani & Singhal: (T log N)/2 — the token travels half the tree's diameter on average.
        "sync": Figure("(T·log N)/2", lambda n, p: (math.log2(n) / 2,) * 2 if n > 1 else (0, 0)),
    },
    parents="tree as child pid → parent pid (default: heap-shaped, root 1)",
    token_holder="pid that holds the token first (default: the root)",
)
