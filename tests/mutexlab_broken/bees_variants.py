"""Broken mason bees, one per decision of docs/bees.md and per audit rule (tests/test_bees_broken.py):
each must be caught by the audit or the explorer on some seed."""

from mutexlab.protocol import Exit, Note
from mutexlab.protocols import bees
from mutexlab.protocols.bees import Bee


class FlowerThresholdOneTooLow(Bee):
    def flower_threshold(self):
        return max(0, super().flower_threshold() - 1)


class IgnoresReedOrder(Bee):
    """Decision 2: takes its reed as soon as it knows its rank, without waiting for the bee before it."""

    def predecessors(self, rank, order=None):
        return []


class SeedLiteralComparison(Bee):
    """The literal reading of the problem statement's WAIT_FLOWER row: ACK a *later* request, defer an earlier one."""

    def on_message(self, msg):
        if msg.type == "REQflower" and self.state == "WAIT_FLOWER":
            self.clock.receive(msg.ts)
            if msg.ts > self.flower_request[0]:
                return [self._ack_flower(msg.sender, msg.ts)]
            self.deferred.append((msg.sender, msg.ts))
            return []
        return super().on_message(msg)


class NoPidTiebreak(Bee):
    """Decision 6: compares timestamps only, so two requests with one timestamp both get ACKed."""

    def on_message(self, msg):
        if msg.type == "REQflower" and self.state == "WAIT_FLOWER":
            self.clock.receive(msg.ts)
            if self.flower_request[0] < msg.ts:
                self.deferred.append((msg.sender, msg.ts))
                return []
            return [self._ack_flower(msg.sender, msg.ts)]
        return super().on_message(msg)


class CountsStaleAcks(Bee):
    """Decision 1: counts every ACKflower while waiting, also those answering an older request."""

    def on_message(self, msg):
        if msg.type == "ACKflower" and self.state == "WAIT_FLOWER":
            msg = bees.ACKflower(sender=msg.sender, ts=msg.ts, req_ts=self.flower_request[0])
        return super().on_message(msg)


class IgnoresDeaths(Bee):
    """Decision 3: never learns that a bee died, so waits for its replies forever."""

    def on_message(self, msg):
        if msg.type == "RELEASEreed" and self.state not in bees.FINAL_STATES:
            self.clock.receive(msg.ts)
            return []
        return super().on_message(msg)


class SurplusWaits(Bee):
    """Decision 4: a bee with no room left waits for a place instead of retiring."""

    def _retire(self, reed, rank):
        return []


class WaitsForAllP(Bee):
    """Decision 5: waits for ACKreed from all P bees, itself included — which never comes."""

    def _try_reed(self):
        if self.state == "WAIT_REED" and self.pid not in self.reed_acks:
            return []
        return super()._try_reed()


class OneEggTooMany(Bee):
    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.eggs += 1


class OneBeeTooManyPerReed(Bee):
    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.per_reed += 1


class EggOnTheFlower(Bee):
    """Lays its egg before leaving the flower (no nectar brought back to the reed)."""

    def _leave_flower(self, action="exit"):
        effects = super()._leave_flower(action)
        egg = next(e for e in effects if isinstance(e, Note) and e.event == "egg")
        effects.remove(egg)
        return [egg] + effects


class LastEggAfterLeaving(Bee):
    """Lays its last egg after it has left its reed."""

    def _leave_flower(self, action="exit"):
        effects = super()._leave_flower(action)
        if self.state == bees.BeeState.DEAD:
            egg = next(e for e in effects if isinstance(e, Note) and e.event == "egg")
            effects.remove(egg)
            at = next(
                n for n, e in enumerate(effects) if isinstance(e, Exit) and e.resource.startswith("reed:")
            )
            effects.insert(at + 1, egg)
        return effects


class NeverAsks(Bee):
    """Stays at rest for ever (never schedules its reed request)."""

    def start(self):
        return []


class FliesOffItsReed(Bee):
    """Leaves its reed as soon as it got it, then goes on to the flowers anyway."""

    def _try_reed(self):
        effects = super()._try_reed()
        if self.state == bees.BeeState.ON_REED:
            effects.insert(1, Exit(bees.reed_name(self.reed)))
        return effects


class DeafToDeaths(Bee):
    """Drops every RELEASEreed (a bee's death) unread: whoever waits on the dead bee waits forever."""

    def on_message(self, msg):
        if msg.type == "RELEASEreed":
            return []
        return super().on_message(msg)
