"""Bees that each break one of the bees' rules (problems/bees_rules.py), planted for
tests/test_bees_rules.py: ``check``, ``simulate`` and ``verify`` must each catch every one."""

from mutexlab.protocol import Enter, Exit, Note, Schedule
from mutexlab.protocols import bees
from mutexlab.protocols.bees import Bee, BeeState


class LaysBeyondTheLastReed(Bee):
    """A bee with no room on the T reeds takes reed T+1, which does not exist, and lays there."""

    def _retire(self, reed, rank):
        self.state = BeeState.ON_REED
        self.reed = self.reeds + 1
        self.reed_eggs[self.reed] = 0
        return [Enter(bees.reed_name(self.reed)), Schedule("request", "reed")]


class DiesAtOnce(Bee):
    """Leaves its reed and dies as soon as it has it, without laying an egg."""

    def _try_reed(self):
        effects = super()._try_reed()
        if self.state == BeeState.ON_REED:
            self.state = BeeState.DEAD
            msg = bees.RELEASEreed(
                sender=self.pid, ts=self.clock.tick(), reed=self.reed, status="AVAILABLE", cocoons=0
            )
            return [effects[0], Exit(bees.reed_name(self.reed)), *self._broadcast(msg)]
        return effects


class StopsAtRest(Bee):
    """Never asks for a reed and says it is done: a proper end by its own account, not a bee's."""

    def start(self):
        return []

    @property
    def finished(self):
        return True


class EggInTheWrongReed(Bee):
    """Writes its first egg down in the next reed (its own reed + 1 within 1..T)."""

    def _leave_flower(self, action="exit"):
        effects = super()._leave_flower(action)
        for n, e in enumerate(effects):
            if isinstance(e, Note) and e.event == "egg" and e.fields["count"] == 1:
                effects[n] = Note("egg", {**e.fields, "reed": self.reed % self.reeds + 1})
        return effects
