"""Chandy–Misra's hygienic forks, kept as a dict of sets.

Written from the user docs only (docs/problems-and-solutions.md). Where the example keeps one
dict per fork attribute, this philosopher keeps ``self.forks``: a dict of three sets of fork
numbers — those it holds ``clean``, those it holds ``dirty``, and the request ``tokens`` it
holds. A fork is held iff it is in ``clean | dirty``. Hungry, it sends its token for each fork
it lacks; a dirty fork is yielded when asked (cleaned on the way), a clean one kept.

GIVE_BACK = "forget": the philosopher sends a fork but keeps it among its own, so it may eat
with a fork its neighbour holds.
"""

from __future__ import annotations

from typing import Literal

from mutexlab.protocols.kit import (
    EATING,
    HUNGRY,
    THINKING,
    Message,
    Philosopher,
    Send,
    on,
    philosopher_table,
    philosophers_algorithm,
)

GIVE_BACK = "discard"  # "forget": a fork sent stays in my sets


class AskFork(Message):
    type: Literal["ASKFORK"] = "ASKFORK"
    fork: int


class PassFork(Message):
    type: Literal["PASSFORK"] = "PASSFORK"
    fork: int


class SetPhilosopher(Philosopher):
    TABLE = philosopher_table(
        hungry="both forks held: eat; else ASKFORK for each missing one",
        done="all forks dirty; PASSFORK every fork a neighbour's token asks for",
        rows={
            THINKING: {"ASKFORK": on("a dirty fork goes, cleaned", "_on_ask")},
            HUNGRY: {
                "ASKFORK": on("dirty: give it and ask it back; clean: keep it", "_on_ask"),
                "PASSFORK": on("the fork arrives clean; both held: eat", "_on_pass", to=[EATING]),
            },
            EATING: {"ASKFORK": on("keep the token until the meal ends", "_on_ask")},
        },
        never="a PASSFORK answers my ASKFORK, sent only while hungry",
    )

    def __init__(self, pid: int, n: int, meals: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, meals, clock)
        self.other = {self.left: (pid - 2) % n + 1, self.right: self.right}
        mine = {f for f in (self.left, self.right) if pid < self.other[f]}
        self.forks: dict[str, set[int]] = {
            "clean": set(),
            "dirty": set(mine),
            "tokens": {self.left, self.right} - mine,
        }

    def _holding(self) -> set[int]:
        return self.forks["clean"] | self.forks["dirty"]

    def _msg(self, kind: type[Message], fork: int) -> Send:
        return Send(self.other[fork], kind(sender=self.pid, ts=self.clock.tick(), fork=fork))

    def _hungry(self) -> list:
        eat = self._eat_if_both()
        if eat:
            return eat
        asks = []
        for f in sorted({self.left, self.right} - self._holding()):
            if f in self.forks["tokens"]:
                self.forks["tokens"].discard(f)
                asks.append(self._msg(AskFork, f))
        return asks

    def _eat_if_both(self) -> list:
        if not {self.left, self.right} <= self._holding():
            return []
        self.forks["dirty"] |= self.forks["clean"]
        self.forks["clean"] = set()
        return [self.take(self.left), self.take(self.right), *self._eat()]

    def _give(self, f: int) -> Send:
        if GIVE_BACK == "discard":
            self.forks["dirty"].discard(f)
            self.forks["clean"].discard(f)
        return self._msg(PassFork, f)

    def _on_ask(self, msg: AskFork) -> list:
        self.clock.receive(msg.ts)
        self.forks["tokens"].add(msg.fork)
        if self.state is EATING or msg.fork not in self.forks["dirty"]:
            return []
        out = [self._give(msg.fork)]
        if self.state is HUNGRY:
            self.forks["tokens"].discard(msg.fork)
            out.append(self._msg(AskFork, msg.fork))
        return out

    def _on_pass(self, msg: PassFork) -> list:
        self.clock.receive(msg.ts)
        self.forks["clean"].add(msg.fork)
        return self._eat_if_both()

    def _done(self) -> list:
        out = [self.put(self.left), self.put(self.right)]
        for f in sorted(self.forks["tokens"] & self._holding()):
            out.append(self._give(f))
        return out

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is not HUNGRY:
            return {}
        return {"PASSFORK": [self.other[f] for f in sorted({self.left, self.right} - self._holding())]}


SPEC = philosophers_algorithm(
    "o11-hygiene-sets",
    "Chandy–Misra's hygienic forks kept as a dict of sets (clean, dirty, tokens)",
    SetPhilosopher,
    AskFork,
    PassFork,
)
