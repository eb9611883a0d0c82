"""Ricart–Agrawala with clocks that never move: every request is stamped 0, so the pid alone
decides who goes first. From 3 nodes it is unsafe (a node that replied to node 3 then asks with
the smaller stamp (0, 2), and both enter: `check` finds it). With 2 nodes FIFO links keep it
safe and every request is served, but node 1 may enter twice while node 2 waits: waiting is no
longer bounded by one entry per other node. ``check --metrics`` must see the bypass rise."""

from mutexlab.protocols import ricart_agrawala
from mutexlab_broken.starving import FrozenClock


def make_setup(processes: int, options: dict, seed: int = 0):
    setup = ricart_agrawala.make_setup(processes, options, seed)
    for node in setup.protocols.values():
        node.clock = FrozenClock(0)
    return setup
