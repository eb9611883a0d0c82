"""Ricart–Agrawala whose node 1 drops a REQUEST that arrives before it has made its own first
request (a real deadlock: the asker waits for node 1's REPLY forever), declaring Ricart–Agrawala's
reductions with a *wrong* send bound that forgets that requesting sends: "a node sends only to
whom it deferred or who asked it". Partial-order reduction then lets node 1 always request
first, and the reduced search never meets the bug. ``check --cross-check`` must report the
disagreement; with Ricart–Agrawala's own bound the reduced search finds the deadlock."""

from dataclasses import replace

from mutexlab.protocols import ricart_agrawala, ricart_agrawala_reductions
from mutexlab.protocols.classic import State
from mutexlab.reduction import SendBound
from mutexlab_broken import recast


class EarlyDeafNode(ricart_agrawala.RicartAgrawalaNode):
    def _reply_to(self, msg) -> list:  # RELEASED × REQUEST (and a later request while WANTED)
        if self.pid == 1 and self.state is State.RELEASED and self.entries == 0 and self.my_request is None:
            self.clock.receive(msg.ts)
            return []  # not listening yet
        return super()._reply_to(msg)


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(ricart_agrawala.make_setup(processes, options, seed), EarlyDeafNode)


def _wrong(p, pending, inflight, x) -> bool:
    return x.pid in p.deferred or any(m.type == "REQUEST" for m in inflight)


SPEC = replace(
    ricart_agrawala.SPEC,
    make_setup=make_setup,
    reductions=replace(
        ricart_agrawala_reductions.REDUCTIONS.only(EarlyDeafNode),
        sends=SendBound(_wrong, "wrong on purpose: a node with a request to make sends REQUESTs"),
    ),
)
