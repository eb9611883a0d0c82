"""Maekawa without INQUIRE (``maekawa_variants.NoInquire``) as an algorithm module: nobody ever
yields, so requests that lock each other's arbiters deadlock (``check --swarm`` finds it where
the exhaustive search cannot finish)."""

from mutexlab.protocols import maekawa
from mutexlab_broken import recast
from mutexlab_broken.maekawa_variants import NoInquire


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(maekawa.make_setup(processes, options, seed), NoInquire)
