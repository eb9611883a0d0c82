"""Ricart–Agrawala that refuses every REPLY (raises ``ProtocolError``): a run stops at its first
REPLY, which a check reports as an error finding."""

from mutexlab.protocol import ProtocolError
from mutexlab.protocols import ricart_agrawala
from mutexlab.protocols.ricart_agrawala import Reply
from mutexlab_broken import recast


class RejectingNode(ricart_agrawala.RicartAgrawalaNode):
    def on_message(self, msg) -> list:
        if isinstance(msg, Reply):
            raise ProtocolError("REPLY refused")
        return super().on_message(msg)


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(ricart_agrawala.make_setup(processes, options, seed), RejectingNode)
