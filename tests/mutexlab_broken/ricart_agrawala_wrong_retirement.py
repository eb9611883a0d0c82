"""Ricart–Agrawala that takes a REPLY stamped no later than its own request as stale and ignores
it — harmless in a real run, where a REPLY is always stamped after the request it answers — and
*wrongly declares* Ricart–Agrawala's reductions, retired clocks included: retired clocks set
REPLY timestamps to 0, claiming nothing reads them, and this node does. The reduced search
then sees replies ignored and reports a deadlock that the code cannot reach.
``check --cross-check`` must report the disagreement."""

from dataclasses import replace

from mutexlab.protocols import ricart_agrawala, ricart_agrawala_reductions
from mutexlab.protocols.classic import State
from mutexlab_broken import recast


class StaleReplyNode(ricart_agrawala.RicartAgrawalaNode):
    def _on_reply(self, msg) -> list:
        if self.state is State.WANTED and self.my_request is not None and msg.ts <= self.my_request[0]:
            self.clock.receive(msg.ts)
            return []  # "stale": cannot happen in a real run
        return super()._on_reply(msg)


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(ricart_agrawala.make_setup(processes, options, seed), StaleReplyNode)


SPEC = replace(
    ricart_agrawala.SPEC,
    make_setup=make_setup,
    reductions=ricart_agrawala_reductions.REDUCTIONS.only(
        StaleReplyNode
    ),  # wrong on purpose: it reads REPLY stamps
)
