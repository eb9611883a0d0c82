"""The greedy Ricart–Agrawala (``ricart_agrawala``: enters without waiting for any REPLY) that also
takes in silently the replies it did not wait for, where the greedy one is refused by its table.
What goes wrong is then only the broken entry: two nodes inside at once."""

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
