"""k-mutual exclusion: Ricart–Agrawala entering after N−K answers, its rules made by closures.

Written from the user docs only. ``priority(pid)`` returns a function closing over the node's
pid that tells whether an asker comes before me; ``make_counter()`` is the kind of helper that
would number my requests in a ``nonlocal``, so the number is kept in an attribute instead (the
docs say why); answers are tallied per request number in a ``collections.Counter``, and who is
owed an answer sits in a ``defaultdict(list)`` by the number of the request owed.
"""

from collections import Counter, defaultdict
from collections.abc import Callable
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

SLACK = 0  # 1: enter one answer early (K + 1 inside)
NONLOCAL = False  # True: number my requests with a counter in a closure (nonlocal)


class Ask(Message):
    type: Literal["ASK"] = "ASK"
    seq: int


class Answer(Message):
    type: Literal["ANSWER"] = "ANSWER"
    to_seq: int


def priority(me: int) -> Callable[[int, int, int], bool]:
    """A rule closing over my pid: does the asker (ts, pid) come before my request at ``mine``?"""

    def before(ts: int, pid: int, mine: int) -> bool:
        return (ts, pid) < (mine, me)

    return before


def make_counter() -> Callable[[], int]:
    count = 0

    def bump() -> int:
        nonlocal count
        count += 1
        return count

    return bump


class KNode(ClassicNode):
    TABLE = classic_table(
        request="ASK the others → WANTED",
        exit="ANSWER the owed → RELEASED",
        rows={
            RELEASED: {"ASK": on("answer", "_on_ask"), "ANSWER": ignore("an extra answer", "_late")},
            WANTED: {
                "ASK": on("answer if earlier, else owe", "_on_ask"),
                "ANSWER": on("count; enough → HELD", "_on_answer", to=[HELD]),
            },
            HELD: {"ASK": on("owe", "_on_ask"), "ANSWER": ignore("an extra answer", "_late")},
        },
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0, k: int = 1) -> None:
        super().__init__(pid, n, requests, clock)
        self.k = k
        self.before = priority(pid)
        self.numbered = make_counter() if NONLOCAL else None
        self.seq = 0  # my requests so far
        self.mine: int | None = None
        self.tally: Counter[int] = Counter()  # answers per request number of mine
        self.owed: defaultdict[int, list[tuple[int, int]]] = defaultdict(list)  # asker -> [(ts, seq)]

    def _late(self, msg: Answer) -> list:
        self.clock.receive(msg.ts)
        return []

    def _request(self) -> list:
        if self.numbered is not None:
            self.seq = self.numbered()
        else:
            self.seq += 1
        self.mine = self.clock.tick()
        if self.n - self.k - SLACK <= 0:
            return self._enter()
        self.state = WANTED
        return [Send(j, Ask(sender=self.pid, ts=self.mine, seq=self.seq)) for j in self._others()]

    def _on_ask(self, msg: Ask) -> list:
        self.clock.receive(msg.ts)
        if self.state is HELD or (self.state is WANTED and not self.before(msg.ts, msg.sender, self.mine)):
            self.owed[msg.sender].append((msg.ts, msg.seq))
            return []
        return [Send(msg.sender, Answer(sender=self.pid, ts=self.clock.tick(), to_seq=msg.seq))]

    def _on_answer(self, msg: Answer) -> list:
        self.clock.receive(msg.ts)
        self.tally[msg.to_seq] += 1
        if self.tally[self.seq] >= self.n - self.k - SLACK:
            return self._enter()
        return []

    def _release(self) -> list:
        out = [
            Send(j, Answer(sender=self.pid, ts=self.clock.tick(), to_seq=seq))
            for j in sorted(self.owed)
            for _ts, seq in self.owed[j]
        ]
        self.owed.clear()
        self.mine = None
        return out


SPEC = classic_algorithm(
    "o9-kclosures",
    "k-mutex: Ricart–Agrawala after N−K answers, its priority a closure over the pid",
    KNode,
    Ask,
    Answer,
    problem="kmutex",
    literature={"messages": ("2(N−1)", lambda n: 2 * (n - 1))},
)
