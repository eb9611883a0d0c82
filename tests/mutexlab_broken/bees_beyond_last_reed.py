"""Mason bees where a bee with no room on the T reeds takes reed T+1, which does not exist, and
lays there (issue: ``check bees`` passed it while ``simulate`` and ``run`` caught it)."""

from mutexlab.protocols import bees
from mutexlab_broken import recast
from mutexlab_broken.bees_rules import LaysBeyondTheLastReed

FAMILY = "bees"


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(bees.make_setup(processes, options, seed), LaysBeyondTheLastReed)
