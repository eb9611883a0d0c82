"""Sanders nodes without one part of the deadlock resolution (tests/test_sanders.py): each must deadlock or stall."""

from mutexlab.protocol import Send
from mutexlab.protocols import sanders


class NotesOnly(sanders.SandersNode):
    """The notes' protocol as written: REQUEST/GRANT/RELEASE, no INQUIRE/FAILED/YIELD."""

    def _arbitrate(self):
        effects = []
        while self.lock is None and self.queue:
            head = self.queue.pop(0)
            effects.append(Send(head[1], sanders.Grant(sender=self.pid, ts=self.clock.tick())))
            if head[1] in self.tracks:
                self.lock = head
        return effects


class AnswersOnlyAtInquire(sanders.SandersNode):
    """Decides on an INQUIRE when it arrives and forgets it: a FAILED arriving later no longer
    makes it yield."""

    def on_message(self, msg):
        effects = super().on_message(msg)
        self.inquiries = set()
        return effects


class FailsOnlyOnArrival(sanders.SandersNode):
    """Maekawa's original rule: FAILED or INQUIRE only when a request arrives, never when the
    lock changes (after a YIELD or RELEASE) to a request better than those still queued."""

    def _arbitrate(self):
        before = self.lock
        effects = NotesOnly._arbitrate(self)  # noqa: SLF001 - a broken variant reuses its base's step; the plain grants, no FAILED or INQUIRE ...
        if self.lock is not before:  # ... and a new lock has not been inquired yet
            self.inquired = False
        return effects

    def on_message(self, msg):
        if msg.type != "REQUEST":
            return super().on_message(msg)
        self.clock.receive(msg.ts)
        mine = (msg.ts, msg.sender)
        self.queue = sorted(self.queue + [mine])
        effects = self._arbitrate()
        if self.lock is not None and mine in self.queue:
            if mine > self.lock:
                effects.append(
                    Send(msg.sender, sanders.Failed(sender=self.pid, ts=self.clock.tick(), req=msg.ts))
                )
            elif not self.inquired:
                self.inquired = True
                effects.append(
                    Send(
                        self.lock[1],
                        sanders.Inquire(sender=self.pid, ts=self.clock.tick(), req=self.lock[0]),
                    )
                )
        return effects
