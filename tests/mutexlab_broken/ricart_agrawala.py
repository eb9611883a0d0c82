"""Ricart–Agrawala that enters the critical section without waiting for any REPLY."""

from mutexlab.protocols import ricart_agrawala
from mutexlab_broken import recast


class GreedyNode(ricart_agrawala.RicartAgrawalaNode):
    def _request(self) -> list:
        effects = super()._request()
        if self.state == "WANTED":
            effects += self._enter()
        return effects


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(ricart_agrawala.make_setup(processes, options, seed), GreedyNode)
