"""Ricart–Agrawala nodes that stall a run (tests/test_stall.py, test_report.py): the stall diagnosis must explain each."""

from mutexlab.protocols.ricart_agrawala import RicartAgrawalaNode


class HoardingRicartAgrawala(RicartAgrawalaNode):
    """Broken on purpose: defers every request forever (never replies, not even on exit)."""

    def on_message(self, msg):
        self.clock.receive(msg.ts)
        if msg.type == "REQUEST":
            self.deferred.append(msg.sender)
        return []

    def _release(self):
        return []


class MuteNode(RicartAgrawalaNode):
    """A node that has crashed as far as the others can tell: it never answers anything."""

    def on_message(self, msg):
        return []
