"""Mason bees that take a flower without waiting for a single ACKflower."""

from mutexlab.protocols import bees
from mutexlab_broken import recast

FAMILY = "bees"  # membership: these are bees


class GreedyBee(bees.Bee):
    def flower_threshold(self) -> int:
        return 0


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(bees.make_setup(processes, options, seed), GreedyBee)
