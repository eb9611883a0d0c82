"""Suzuki–Kasami's broadcast protocol (docs/architecture.md#suzuki-kasami): one token, sequence
numbers instead of clocks.

R_i[j] is the largest sequence number p_i has seen in a REQUEST from p_j. The token carries
L[j], the sequence number of p_j's most recently executed request, and Q, the FIFO queue of
waiting sites. A request of p_j is outstanding at the token holder iff R[j] = L[j] + 1, so a
stale request (L[j] already ≥ s) is recognised and ignored.

The state table is ``SuzukiKasamiNode.TABLE`` (docs/protocols.md). A TOKEN comes only to a
site with an outstanding request (R[j] = L[j] + 1), which is WANTED until it comes; one elsewhere,
or that does not fit N processes, is refused (ProtocolError).

Invariants: exactly one token exists, in one node's hands or in flight; a node is HELD only
while it holds the token; messages per entry: 0 (token already here) or N (N−1 REQUESTs and
one TOKEN). A Lamport clock is kept only for the trace's ``ts``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..machine import never, on
from ..messages import Codec, Message
from ..protocol import Send
from ..setups import Setup
from ..show import fmt
from ..spec import Figure
from .classic import (
    ClassicNode,
    State,
    classic_setup,
    classic_spec,
    classic_table,
    expect,
    pid_option,
    refuse_unknown,
    workload_options,
)


class Request(Message):
    """REQUEST(j, s): ``sender`` asks for the ``seq``-th time."""

    type: Literal["REQUEST"] = "REQUEST"
    seq: int = Field(ge=1)


class Token(Message):
    """The token: ``last[j-1]`` = L[j], ``queue`` = Q (pids)."""

    type: Literal["TOKEN"] = "TOKEN"
    last: list[int]
    queue: list[int]


CODEC = Codec(Request, Token)


class SuzukiKasamiNode(ClassicNode):
    TABLE = classic_table(
        request="token here: → HELD at once; else R[i] += 1, REQUEST to all others → WANTED",
        exit="L[i] = R[i]; append every j ∉ Q with R[j] = L[j] + 1; Q non-empty: pop head, TOKEN to it → RELEASED",
        rows={
            State.RELEASED: {
                "REQUEST": on(
                    "R[j] = max(R[j], s); token here and R[j] = L[j] + 1: TOKEN to j", "_on_request"
                ),
                "TOKEN": never("the token comes only to a site that asked for it"),
            },
            State.WANTED: {
                "REQUEST": on("R[j] = max(R[j], s)", "_count_request"),
                "TOKEN": on("keep it", "_on_token", to=(State.HELD,)),
            },
            State.HELD: {
                "REQUEST": on("R[j] = max(R[j], s) (the token is in use: keep it)", "_count_request"),
                "TOKEN": never("it holds the token already"),
            },
        },
    )

    def __init__(self, pid: int, n: int, has_token: bool, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.R = [0] * (n + 1)  # R[j] for j in 1..n (index 0 unused)
        self.token: tuple[list[int], list[int]] | None = ([0] * (n + 1), []) if has_token else None

    @property
    def has_token(self) -> bool:
        return self.token is not None

    def token_view(self) -> tuple[list[int], list[int]] | None:
        """The token as the notes write it: (L as a list over p_1..p_n, Q), or None."""
        if self.token is None:
            return None
        last, queue = self.token
        return last[1:], list(queue)

    def _request(self) -> list:
        if self.token is not None:
            return self._enter()
        self.R[self.pid] += 1
        self.state = State.WANTED
        msg = Request(sender=self.pid, ts=self.clock.tick(), seq=self.R[self.pid])
        return [Send(j, msg) for j in range(1, self.n + 1) if j != self.pid]

    def _send_token(self, to: int) -> Send:
        last, queue = expect(self, self.token, "token")
        self.token = None
        return Send(to, Token(sender=self.pid, ts=self.clock.tick(), last=last[1:], queue=queue))

    def _count_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        self.R[msg.sender] = max(self.R[msg.sender], msg.seq)
        return []

    def _on_request(self, msg: Request) -> list:
        """RELEASED: an idle holder sends the token to an outstanding request."""
        self._count_request(msg)
        j = msg.sender
        if self.token is not None and self.R[j] == self.token[0][j] + 1:
            return [self._send_token(j)]
        return []

    def _on_token(self, msg: Token) -> list:
        if len(msg.last) != self.n or any(not 1 <= q <= self.n for q in msg.queue):
            raise self.refuse(msg, f"the token does not fit {self.n} processes")
        self.clock.receive(msg.ts)
        self.token = ([0] + list(msg.last), list(msg.queue))
        return self._enter()

    def _release(self) -> list:
        last, queue = expect(self, self.token, "token")
        last[self.pid] = self.R[self.pid]
        for j in range(1, self.n + 1):
            if j != self.pid and j not in queue and self.R[j] == last[j] + 1:
                queue.append(j)
        if queue:
            return [self._send_token(queue.pop(0))]
        return []

    def waiting_for(self) -> dict[str, list[int]]:
        return {"TOKEN": []} if self.state is State.WANTED else {}

    def card(self) -> list[tuple[str, str]]:
        token = (
            "no token"
            if self.token is None
            else f"L = {fmt(list(self.token[0][1:]))}, Q = {fmt(list(self.token[1]))}"
        )
        return [("RN", fmt(list(self.R[1:]))), ("token", token)] + super().card()

    def snapshot(self):
        token = None if self.token is None else (tuple(self.token[0]), tuple(self.token[1]))
        return (self.state, self.clock.time, tuple(self.R), token, self.requests_left)


def make_setup(processes: int, options: dict, seed: int = 0) -> Setup:
    refuse_unknown(options, set(SPEC.options), "suzuki-kasami")
    requests, clocks = workload_options(processes, options)
    holder = pid_option(options, "token_holder", processes, "suzuki-kasami", 1)
    return classic_setup(
        "suzuki-kasami",
        processes,
        requests,
        clocks,
        lambda pid, clock: SuzukiKasamiNode(pid, processes, pid == holder, requests, clock),
        CODEC,
        token_holder=holder,
    )


SPEC = classic_spec(
    "suzuki-kasami",
    "Suzuki–Kasami: one token, requests broadcast with sequence numbers",
    make_setup,
    CODEC,
    {"messages": Figure("0 or N", lambda n, p: (0, n)), "sync": Figure("T", lambda n, p: (1, 1))},
    token_holder="pid that holds the token first (default 1)",
)
