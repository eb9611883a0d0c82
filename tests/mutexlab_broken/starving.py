"""Ricart–Agrawala that starves a process without ever deadlocking. Every request is stamped 0
(the clocks never move), so the pid alone decides priority; node 1 wants the critical section
again and again and never answers the requests it deferred. Node 1 can always move; a node it
deferred once waits forever, replying to each of node 1's new requests (node 1 comes first).
The state space is finite, so the starvation is a cycle: a liveness finding, not a deadlock."""

from mutexlab.clock import LamportClock
from mutexlab.protocol import Schedule
from mutexlab.protocols import ricart_agrawala


class FrozenClock(LamportClock):
    def tick(self) -> int:
        return self.time

    def receive(self, stamp: int) -> int:
        return self.time


class SelfishNode(ricart_agrawala.RicartAgrawalaNode):
    def on_local(self, action: str) -> list:
        effects = super().on_local(action)
        if action == "exit" and not any(isinstance(e, Schedule) for e in effects):
            effects.append(Schedule("request", "think"))  # wants it again, forever
        return effects

    def _release(self) -> list:
        self.my_request = None
        return []  # the deferred requests are never answered


def make_setup(processes: int, options: dict, seed: int = 0):
    setup = ricart_agrawala.make_setup(processes, options, seed)
    for node in setup.protocols.values():
        if node.pid == 1:
            node.__class__ = SelfishNode
        node.clock = FrozenClock(0)
    return setup
