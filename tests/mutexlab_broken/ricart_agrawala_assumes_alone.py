"""Ricart–Agrawala that takes a node which has heard from nobody (its clock still 0) when it
first asks to be alone: it sends its REQUESTs and enters at once, ignoring the REPLYs that follow
(``tolerant_ricart_agrawala``). Two nodes asking before either hears from the other both enter.
The depth-first order of the exhaustive search tries a delivery before a second request, so it
meets that interleaving only after the whole subtree below the first request's delivery —
which a larger workload does not finish; a randomised search meets it at once."""

from mutexlab.protocols import ricart_agrawala
from mutexlab_broken import recast
from mutexlab_broken.tolerant_ricart_agrawala import TolerantNode


class AssumesAloneNode(TolerantNode):
    def _request(self) -> list:
        alone = self.clock.time == 0  # nothing received, nothing sent: "nobody else is here"
        effects = super()._request()
        return effects + self._enter() if alone and self.n > 1 else effects


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(ricart_agrawala.make_setup(processes, options, seed), AssumesAloneNode)
