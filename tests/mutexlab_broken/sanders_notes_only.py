"""Sanders as the notes write it, without INQUIRE/FAILED/YIELD (``sanders_variants.NotesOnly``),
as an algorithm module: requests that lock each other's arbiters deadlock (``check --swarm``
finds it where the exhaustive search cannot finish)."""

from mutexlab.protocols import sanders
from mutexlab_broken import recast
from mutexlab_broken.sanders_variants import NotesOnly


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(sanders.make_setup(processes, options, seed), NotesOnly)
