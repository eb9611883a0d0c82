"""Broken or literal-reading Maekawa arbiters (tests/test_maekawa.py): each deadlocks, stalls or breaks mutual exclusion."""

import bisect

from mutexlab.clock import priority
from mutexlab.protocol import Send
from mutexlab.protocols import maekawa as mk


class NoInquire(mk.MaekawaNode):
    """Broken: the arbiter never inquires, so nobody ever yields (plain Maekawa without rule 3)."""

    def _inquire(self):
        return []


class SeedRuleOnly(mk.MaekawaNode):
    """The notes' rule 2 to the letter: FAILED only to a request that arrives later than the lock,
    never to a queued request that a later grant overtakes."""

    def _on_request(self, msg):
        self.clock.receive(msg.ts)
        r = priority(msg.ts, msg.sender)
        if self.lock is None:
            self.lock, self.inquired = r, False
            return [Send(r[1], mk.Reply(sender=self.pid, ts=self.clock.tick()))]
        bisect.insort(self.queue, r)
        if r < self.lock:
            return [] if self.inquired else self._inquire()
        self.told.add(r)
        return [Send(r[1], mk.Failed(sender=self.pid, ts=self.clock.tick()))]

    def _arbitrate(self):
        if self.lock is None and self.queue:
            self.lock, self.inquired = self.queue.pop(0), False
            self.told.discard(self.lock)
            return [Send(self.lock[1], mk.Reply(sender=self.pid, ts=self.clock.tick()))]
        return []


class GrantsEveryone(mk.MaekawaNode):
    """Broken: an arbiter that grants every request, locked or not."""

    def _on_request(self, msg):
        self.clock.receive(msg.ts)
        return [Send(msg.sender, mk.Reply(sender=self.pid, ts=self.clock.tick()))]

    def _on_release(self, msg):
        self.clock.receive(msg.ts)
        return []
