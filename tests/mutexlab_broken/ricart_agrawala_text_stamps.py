"""Ricart–Agrawala that compares request timestamps as text, ``(str(ts), pid)``: right while
every timestamp has one digit, wrong from two on ("10" < "9"). With clocks starting at 8, two
nodes asking at once can each see its own request as the earlier one: both enter. It declares
no reduction, so ``check`` applies only the generic ones and finds it with default settings."""

from mutexlab.protocols import ricart_agrawala
from mutexlab.protocols.classic import State, expect
from mutexlab_broken import recast


class TextStampNode(ricart_agrawala.RicartAgrawalaNode):
    def _on_request(self, msg) -> list:
        self.clock.receive(msg.ts)
        if self.state is State.HELD or (
            self.state is State.WANTED
            and (str(expect(self, self.my_request, "request")[0]), self.pid) < (str(msg.ts), msg.sender)
        ):
            self.deferred.append(msg.sender)
            return []
        return [self._reply(msg.sender)]


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(ricart_agrawala.make_setup(processes, options, seed), TextStampNode)
