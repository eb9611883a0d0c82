"""Ricart–Agrawala that silently ignores a REPLY outside WANTED (as the code once did), where its
state table says such a REPLY never comes and is refused."""

from mutexlab.protocols import ricart_agrawala
from mutexlab.protocols.classic import State
from mutexlab_broken import recast


class TolerantNode(ricart_agrawala.RicartAgrawalaNode):
    def on_message(self, msg) -> list:
        if isinstance(msg, ricart_agrawala.Reply) and self.state is not State.WANTED:
            self.clock.receive(msg.ts)
            return []
        return super().on_message(msg)


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(ricart_agrawala.make_setup(processes, options, seed), TolerantNode)
