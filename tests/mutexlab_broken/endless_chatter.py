"""A central coordinator whose nodes never stop talking: each starts a CHATTER to its neighbour and
answers every CHATTER with another, so the run never ends however well the critical section is
served. ``simulate`` must stop it at its event limit (incomplete, exit 3), never run until the
machine refuses it memory."""

import sys
from dataclasses import replace
from pathlib import Path
from typing import Literal

# the correct coordinator this one makes endless (docs/your-algorithm.md's), beside the examples
sys.path.append(str(Path(__file__).resolve().parents[2] / "examples" / "protocols"))

from central import CentralNode, Grant, Release, Request  # noqa: E402

from mutexlab.protocols.kit import Message, Send, classic_algorithm, on  # noqa: E402


class Chatter(Message):
    type: Literal["CHATTER"] = "CHATTER"


CHATTER = on("answer with another CHATTER", "_on_chatter")


class ChattyNode(CentralNode):
    # central's table, with a CHATTER taken in every state
    TABLE = replace(
        CentralNode.TABLE,
        rows={state: {**row, "CHATTER": CHATTER} for state, row in CentralNode.TABLE.rows.items()},
    )

    def start(self) -> list:
        neighbour = self.pid % self.n + 1
        return [*super().start(), Send(neighbour, Chatter(sender=self.pid, ts=self.clock.tick()))]

    def _on_chatter(self, msg: Chatter) -> list:
        self.clock.receive(msg.ts)
        return [Send(msg.sender, Chatter(sender=self.pid, ts=self.clock.tick()))]


SPEC = classic_algorithm(
    "endless-chatter",
    "central coordinator whose nodes answer every CHATTER with another, forever",
    ChattyNode,
    Request,
    Grant,
    Release,
    Chatter,
)
