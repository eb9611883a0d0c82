"""Ricart–Agrawala whose node-1 greets every other node with a REPLY nobody asked for, at its
start: each addressee, RELEASED while it thinks, refuses it (ProtocolError). Mutual exclusion
holds and every node still finishes, so a run that ignored the refusals would look complete and
safe."""

from mutexlab.protocol import Send
from mutexlab.protocols import ricart_agrawala
from mutexlab.protocols.ricart_agrawala import Reply
from mutexlab_broken import recast


class SpuriousNode(ricart_agrawala.RicartAgrawalaNode):
    def start(self) -> list:
        greetings = [Send(p, Reply(sender=self.pid, ts=self.clock.tick())) for p in range(2, self.n + 1)]
        return greetings + super().start()


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(ricart_agrawala.make_setup(processes, options, seed), SpuriousNode, pids={1})
