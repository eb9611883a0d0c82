"""Ricart–Agrawala that forgets its deferred requests on leaving the critical section (rule 4
ignored): whoever it deferred waits for a REPLY forever."""

from mutexlab.protocols import ricart_agrawala
from mutexlab_broken import recast


class ForgetfulNode(ricart_agrawala.RicartAgrawalaNode):
    def _release(self) -> list:
        self.my_request, self.deferred = None, []
        return []


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(ricart_agrawala.make_setup(processes, options, seed), ForgetfulNode)
