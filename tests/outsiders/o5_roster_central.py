"""Central coordinator, elected from a roster of names.

Every node knows the roster (one name per pid) and agrees on the coordinator without a
message: the roster's first name. The coordinator grants the critical section in the order
requests reach it. Handlers are plain module functions, bound into the class body.

Messages per entry: 3(N-1)/N. Sync delay: 2T.
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

ROSTER = {"ada": 1, "grace": 2, "edsger": 3, "leslie": 4, "barbara": 5, "tony": 6}
# How the coordinator's name is picked from the roster: "sorted" (the smallest name) or "first"
# (whichever name the set gives first: quick, and every node computes the same thing... right?)
ELECTION = "sorted"


def elect(names: frozenset) -> str:
    if ELECTION == "first":
        return next(iter(names))
    return min(names)


class Ask(Message):
    type: Literal["ASK"] = "ASK"


class Go(Message):
    type: Literal["GO"] = "GO"


class Done(Message):
    type: Literal["DONE"] = "DONE"


def on_ask(node, msg):
    node.clock.receive(msg.ts)
    if node.busy is None:
        node.busy = msg.sender
        return [Send(msg.sender, Go(sender=node.pid, ts=node.clock.tick()))]
    node.line = node.line + (msg.sender,)
    return []


def on_done(node, msg):
    node.clock.receive(msg.ts)
    node.busy = None
    if not node.line:
        return []
    nxt, node.line = node.line[0], node.line[1:]
    node.busy = nxt
    return [Send(nxt, Go(sender=node.pid, ts=node.clock.tick()))]


def on_go(node, msg):
    node.clock.receive(msg.ts)
    return node._enter()  # noqa: SLF001 - a handler bound into the class


SERVE = {"ASK": on("coordinator: grant or queue", "_on_ask"), "DONE": on("coordinator: next", "_on_done")}


class RosterNode(ClassicNode):
    TABLE = classic_table(
        request="ASK the coordinator -> WANTED",
        exit="DONE to the coordinator -> RELEASED",
        rows={
            RELEASED: SERVE,
            WANTED: {**SERVE, "GO": on("enter", "_on_go", to=HELD)},
            HELD: SERVE,
        },
        never="a GO answers my own ASK",
    )

    def __init__(self, pid, n, requests=0, clock=0):
        super().__init__(pid, n, requests, clock)
        names = frozenset(name for name, p in ROSTER.items() if p <= n)
        self.boss = ROSTER[elect(names)]
        self.busy = None
        self.line = ()

    _on_ask = on_ask
    _on_done = on_done
    _on_go = on_go

    def _request(self):
        self.state = WANTED
        return [Send(self.boss, Ask(sender=self.pid, ts=self.clock.tick()))]

    def _release(self):
        return [Send(self.boss, Done(sender=self.pid, ts=self.clock.tick()))]


SPEC = classic_algorithm(
    "o5-roster-central",
    "central coordinator elected from a roster of names",
    RosterNode,
    Ask,
    Go,
    Done,
    literature={"messages": ("3(N-1)/N", lambda n: 3 * (n - 1) / n), "sync": ("2T", lambda n: 2)},
)
