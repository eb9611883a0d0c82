"""A "mutex" that cheats: every node reads one board shared by the whole interpreter.

Enter when the board says nobody is inside; on exit, wake the waiters (a WAKE message each).
In one interpreter this is mutual exclusion with almost no messages; over RabbitMQ each node
has a board of its own, and every node enters at once.
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
    ignore,
    on,
)

SHARE = "global"  # where the board lives: global, closure, object, default, registry


BOARD = {"inside": None, "waiting": []}


def _mk():
    state = {"inside": None, "waiting": []}

    def get() -> dict:
        return state

    return get


_closed = _mk()


class _Board:
    def __init__(self) -> None:
        self.d = {"inside": None, "waiting": []}


_B = _Board()


def _default(_d: dict = {"inside": None, "waiting": []}) -> dict:  # noqa: B006 - the point
    return _d


class Registry:
    d: dict = {"inside": None, "waiting": []}

    @classmethod
    def get(cls) -> dict:
        return cls.d


def board() -> dict:
    if SHARE == "closure":
        return _closed()
    if SHARE == "object":
        return _B.d
    if SHARE == "default":
        return _default()
    if SHARE == "registry":
        return Registry.get()
    return BOARD


class Wake(Message):
    type: Literal["WAKE"] = "WAKE"


class BoardNode(ClassicNode):
    TABLE = classic_table(
        request="board free: enter; else WANTED",
        exit="free the board, WAKE the waiters → RELEASED",
        rows={
            RELEASED: {"WAKE": ignore("stale", "_receive")},
            WANTED: {"WAKE": on("try the board", "_on_wake", to=[HELD])},
            HELD: {"WAKE": ignore("stale", "_receive")},
        },
    )

    def _try(self) -> list:
        b = board()
        if b["inside"] is None:
            b["inside"] = self.pid
            if self.pid in b["waiting"]:
                b["waiting"].remove(self.pid)
            return self._enter()
        if self.pid not in b["waiting"]:
            b["waiting"].append(self.pid)
        self.state = WANTED
        return []

    def _request(self) -> list:
        return self._try()

    def _on_wake(self, msg: Wake) -> list:
        self.clock.receive(msg.ts)
        return self._try()

    def _release(self) -> list:
        b = board()
        b["inside"] = None
        return [Send(j, Wake(sender=self.pid, ts=self.clock.tick())) for j in list(b["waiting"])]


SPEC = classic_algorithm("o7-board", "a board shared through the interpreter", BoardNode, Wake)
