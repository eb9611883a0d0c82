"""Ricart–Agrawala that enters the critical section without waiting for any REPLY.

The replies it did not wait for still arrive; it takes them in silently (as the tolerant variant
does), so what goes wrong is only the broken entry: two nodes inside at once."""

from mutexlab.protocols import ricart_agrawala
from mutexlab.protocols.classic import WANTED


class GreedyNode(ricart_agrawala.RicartAgrawalaNode):
    def _request(self) -> list:
        effects = super()._request()
        if self.state == "WANTED":
            effects += self._enter()
        return effects

    def on_message(self, msg) -> list:
        if isinstance(msg, ricart_agrawala.Reply) and self.state is not WANTED:
            self.clock.receive(msg.ts)
            return []
        return super().on_message(msg)


def make_setup(processes: int, options: dict, seed: int = 0):
    setup = ricart_agrawala.make_setup(processes, options, seed)
    for node in setup.protocols.values():
        node.__class__ = GreedyNode
    return setup
