"""Ricart–Agrawala whose nodes keep the class ``RicartAgrawalaNode`` but get another clock: one
that wraps at 10 (``(t + 1) mod 10``), so a late request can look earlier than an old one and
two nodes both enter. The class is exact, so a declaration matched by class alone would apply
Ricart–Agrawala's clock shift, which keeps every clock small and never lets one wrap: the
reduced search would pass a real bug. ``check`` must see that the clock is not the declared
one (or that the shifted twin behaves otherwise) and refuse the reductions."""

from dataclasses import replace

from mutexlab.protocols import ricart_agrawala

WRAP = 10


class WrappingClock:
    """A Lamport clock that forgets its tens."""

    __slots__ = ("time",)

    def __init__(self, initial: int = 0) -> None:
        self.time = initial % WRAP

    def tick(self) -> int:
        self.time = (self.time + 1) % WRAP
        return self.time

    def receive(self, stamp: int) -> int:
        self.time = (max(self.time, stamp) + 1) % WRAP
        return self.time


def make_setup(processes: int, options: dict, seed: int = 0):
    setup = ricart_agrawala.make_setup(processes, options, seed)
    for node in setup.protocols.values():
        node.clock = WrappingClock(node.clock.time)
    return setup


SPEC = replace(ricart_agrawala.SPEC, make_setup=make_setup)
