"""The greedy Ricart–Agrawala (``ricart_agrawala``: enters without waiting for any REPLY) that also
takes in silently the replies it did not wait for (``tolerant_ricart_agrawala``), where the greedy
one is refused by its table. What goes wrong is then only the broken entry: two nodes inside at once."""

from mutexlab.protocols import ricart_agrawala
from mutexlab_broken import recast
from mutexlab_broken.ricart_agrawala import GreedyNode
from mutexlab_broken.tolerant_ricart_agrawala import TolerantNode


class QuietGreedyNode(TolerantNode, GreedyNode):
    """GreedyNode's entry, TolerantNode's silence about late replies."""


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(ricart_agrawala.make_setup(processes, options, seed), QuietGreedyNode)
