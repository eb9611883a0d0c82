"""The parts of o16_kmutex_split.py that I keep in a module of their own: the messages and the
base class every node of mine starts from (I reuse it for my mutex homework too).

``from __future__ import annotations`` everywhere: the hints are strings until pydantic reads them.
"""

from __future__ import annotations

import functools
from typing import Literal

from mutexlab.protocols.kit import ClassicNode, Message, Send


class Ask(Message):
    type: Literal["ASK"] = "ASK"


class Ok(Message):
    type: Literal["OK"] = "OK"
    for_ts: int  # the stamp of the ASK it answers


class MyBaseNode(ClassicNode):
    """What every node of mine has: its peers, a send helper, and my priority order."""

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)

    @staticmethod
    @functools.cache
    def peers(pid: int, n: int) -> tuple[int, ...]:
        return tuple(j for j in range(1, n + 1) if j != pid)

    def tell(self, to: int, kind: type[Message], stamp: int | None = None, **fields: int) -> Send:
        """``kind`` to ``to``, stamped ``stamp`` (a request's, sent to many) or a fresh tick."""
        return Send(to, kind(sender=self.pid, ts=self.clock.tick() if stamp is None else stamp, **fields))

    @staticmethod
    def before(a: tuple[int, int] | None, b: tuple[int, int] | None) -> bool:
        """Whether request a comes before request b (None: no request, never first)."""
        return a is not None and (b is None or a < b)
