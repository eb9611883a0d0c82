"""Broken elves and mayors (tests/test_elves_broken.py, test_elves_exhaustive.py, test_elves_cli.py): each must
be caught by the audit or the explorer, or stall a run."""

from mutexlab.protocol import Schedule, Send
from mutexlab.protocols import elves as E


class IgnoresUnitsAhead(E.Elf):
    """Takes pins or poison whenever its own need fits the total, whoever is ahead."""

    def units_ahead(self, kind):
        return 0


class ReusesContracts(E.Elf):
    """Counts only its own requests when working out its contract: contracts get taken twice."""

    def _check(self):
        if self.phase == E.CONTRACT:
            self.contract_requests = {r for r in self.contract_requests if r[1] == self.pid}
        return super()._check()


class RoundBlind(E.Elf):
    """Ignores the round tags, like an implementation without them: every elf message is handled
    at once as one of the current round — none buffered, none dropped."""

    def on_message(self, msg):
        if msg.type not in E.ELF_MESSAGES:
            return super().on_message(msg)
        self.clock.receive(msg.ts)
        kind, verb = E.ELF_MESSAGES[msg.type]
        msg = msg.model_copy(update={"round": max(self.round, 1)})
        if verb == "REPLY" and (
            self.state != E.ElfState.ELF_REQUESTING or self.phase != kind or msg.sender in self.replies
        ):
            return []  # tolerant of the confusion it causes
        if verb == "RELEASE" and msg.sender not in self.queues[kind]:
            return []
        return self._handle(msg)


class StopsOneEarly(E.Mayor):
    """Sends STOP as soon as all contracts but one are completed."""

    def on_message(self, msg):
        self.clock.receive(msg.ts)
        if self.state != E.MayorState.MAYOR_WAITING or msg.round != self.round:
            return []
        self.completed.add(msg.contract)
        if len(self.completed) < len(self.plan[self.round - 1]) - 1:
            return []
        final = self.round == len(self.plan)
        stop = E.Stop(sender=self.pid, ts=self.clock.tick(), round=self.round, final=final)
        self.state = E.MayorState.MAYOR_DONE if final else E.MayorState.INITIAL
        return [Send(j, stop) for j in range(1, self.n + 1)] + (
            [] if final else [Schedule("request", "pause")]
        )


class DropsEarly(E.Elf):
    """Does what the problem statement's INITIAL says literally: ignores every message but INIT_CONTRACTS,
    so a request of the next round that overtakes this elf's INIT_CONTRACTS is lost."""

    def on_message(self, msg):
        if msg.type in E.ELF_MESSAGES and msg.round > self.round:
            return []
        return super().on_message(msg)


class MuteToPins(E.Elf):
    """elf-2 never answers a pins request."""

    def _on_units_request(self, msg, admitted=False):
        if self.pid != 2 or msg.type != "PINS_REQUEST":
            return super()._on_units_request(msg, admitted)
        if admitted or self._admit(msg):
            self.queues[E.PINS][msg.sender] = (msg.ts, msg.units)
        return []
