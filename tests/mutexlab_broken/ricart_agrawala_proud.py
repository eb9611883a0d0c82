"""Ricart–Agrawala that defers every REQUEST while it wants the critical section itself, whatever
the timestamps: two nodes that want it at once wait for each other's REPLY forever (deadlock)."""

from mutexlab.protocols import ricart_agrawala
from mutexlab_broken import recast


class ProudNode(ricart_agrawala.RicartAgrawalaNode):
    def on_message(self, msg) -> list:
        if msg.type == "REQUEST" and self.state == "WANTED":
            self.clock.receive(msg.ts)
            self.deferred.append(msg.sender)
            return []
        return super().on_message(msg)


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(ricart_agrawala.make_setup(processes, options, seed), ProudNode)
