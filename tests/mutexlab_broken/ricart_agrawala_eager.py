"""Ricart–Agrawala that replies to every REQUEST at once, even from inside the critical section
(rule 2a ignored): a node that asks while another holds the section enters beside it."""

from mutexlab.protocols import ricart_agrawala
from mutexlab.protocols.ricart_agrawala import Request
from mutexlab_broken import recast


class EagerNode(ricart_agrawala.RicartAgrawalaNode):
    def on_message(self, msg) -> list:
        if isinstance(msg, Request):
            self.clock.receive(msg.ts)
            return [self._reply(msg.sender)]
        return super().on_message(msg)


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(ricart_agrawala.make_setup(processes, options, seed), EagerNode)
