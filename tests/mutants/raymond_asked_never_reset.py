"""Raymond's tree-based token (TOCS 1989) that never forgets it has asked.

The nodes form a fixed tree (the parent of i is i div 2; node 1, the root, holds the token).
Each node points ``holder`` towards the token, queues who asked it (itself or a child), and asks
its holder once on behalf of its whole queue (``asked``). Holding the token and idle, it serves
the head of its queue: enters if that is itself, else sends the TOKEN down and points
``holder`` at it; then, with requests still queued, asks the new holder for the token back.

Bug: serving the queue does not reset ``asked``: a node that passed the token on believes it
has already asked for it back, so it never does. Its second request waits forever.

Caught by: mutexlab check FILE --nodes 2 --requests 2
Expect: deadlock — nothing can move; waiting: node-2 for cs: TOKEN from a sender
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


class Token(Message):
    type: Literal["TOKEN"] = "TOKEN"


class Node(ClassicNode):
    TABLE = classic_table(
        request="queue myself; serve or ask → WANTED (or HELD)",
        exit="serve the queue's head; ask if more → RELEASED",
        rows={
            RELEASED: {
                "REQUEST": on("queue it; serve or ask", "_on_request"),
                "TOKEN": on("holder = me; pass it down, ask if more", "_on_token"),
            },
            WANTED: {
                "REQUEST": on("queue it; serve or ask", "_on_request"),
                "TOKEN": on("holder = me; serve the head (me: → HELD)", "_on_token", to=[HELD]),
            },
            HELD: {"REQUEST": on("queue it", "_on_request")},
        },
        never="a TOKEN comes to a node that asked for it, and it asks only while it has no token",
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.holder = pid if pid == 1 else pid // 2  # towards the token
        self.queue: list[int] = []  # who asked me, oldest first (me among them)
        self.asked = False  # I have asked my holder on behalf of my queue

    def _request(self) -> list:
        self.state = WANTED
        self.queue.append(self.pid)
        return self._serve() + self._ask()

    def _on_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        self.queue.append(msg.sender)
        return self._serve() + self._ask()

    def _on_token(self, msg: Token) -> list:
        self.clock.receive(msg.ts)
        self.holder = self.pid
        return self._serve() + self._ask()

    def _release(self) -> list:
        return self._serve() + self._ask()

    def _serve(self) -> list:
        if self.holder != self.pid or self.state is HELD or not self.queue:
            return []
        head = self.queue.pop(0)
        # the bug: ``self.asked = False`` is missing
        if head == self.pid:
            return self._enter()
        self.holder = head
        return [Send(head, Token(sender=self.pid, ts=self.clock.tick()))]

    def _ask(self) -> list:
        if self.holder == self.pid or not self.queue or self.asked:
            return []
        self.asked = True
        return [Send(self.holder, Request(sender=self.pid, ts=self.clock.tick()))]


SPEC = classic_algorithm(
    "mutant-raymond-asked-never-reset",
    "Raymond's tree token never resetting its asked flag",
    Node,
    Request,
    Token,
)
