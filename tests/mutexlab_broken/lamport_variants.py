"""Broken Lamport nodes (tests/test_lamport.py): the audit must catch each."""

from mutexlab.protocol import Send
from mutexlab.protocols import lamport


class EnterOnEarliestRequest(lamport.LamportNode):
    """Broken: rule 3a only — enters when its request is the earliest it knows of."""

    def may_enter(self):
        mine = self._key(self.pid)
        return self.state == "WANTED" and all(
            mine < self._key(j) for j in self._others() if self.q[j][0] == "REQUEST"
        )


class NeverReplies(lamport.LamportNode):
    """Broken: drops rule 2's REPLY altogether — a lone request waits for ever."""

    def on_message(self, msg):
        return [e for e in super().on_message(msg) if not (isinstance(e, Send) and e.msg.type == "REPLY")]


class SelfFirstOnTies(lamport.LamportNode):
    """Broken: a broken tie-break — on equal timestamps each node puts its own request first, so
    two requests stamped alike both come first and both enter."""

    def _key(self, j):
        return (self.q[j][1], j != self.pid)
