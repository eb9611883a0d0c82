"""Mason bees that take a flower without waiting for a single ACKflower."""

from mutexlab.protocols import bees

FAMILY = "bees"  # membership: these are bees


class GreedyBee(bees.Bee):
    def flower_threshold(self) -> int:
        return 0


def make_setup(processes: int, options: dict, seed: int = 0):
    setup = bees.make_setup(processes, options, seed)
    for bee in setup.protocols.values():
        bee.__class__ = GreedyBee
    return setup
