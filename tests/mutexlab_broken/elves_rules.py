"""Elves that each break one of the hamster killers' rules (problems/elves_rules.py), planted
for tests/test_elves_rules.py: ``check``, ``simulate`` and ``verify`` must each catch every one.
Each is the correct elf with one change to the effects it returns (``breaking``)."""

from mutexlab.protocol import Enter, Exit, Note
from mutexlab.protocols.elves import Elf, Mayor

__all__ = ["Elf", "Mayor"]
from mutexlab.protocols.elves.messages import POISON


def breaking(name, change):
    """The correct elf, whose effects of every input pass through ``change(elf, effects)``."""

    class Broken(Elf):
        def on_message(self, msg):
            return change(self, super().on_message(msg))

        def on_local(self, action):
            return change(self, super().on_local(action))

    Broken.__name__ = Broken.__qualname__ = name
    return Broken


def _units(resource):
    def change(elf, effects):
        return [
            type(e)(e.resource, e.units + 1) if isinstance(e, Enter | Exit) and e.resource == resource else e
            for e in effects
        ]

    return change


def _without(kinds, prefix):
    def change(elf, effects):
        return [e for e in effects if not (isinstance(e, kinds) and e.resource.startswith(prefix))]

    return change


def _note(change_fields):
    def change(elf, effects):
        return [
            Note(e.event, change_fields(elf, dict(e.fields)))
            if isinstance(e, Note) and e.event == "contract_done"
            else e
            for e in effects
        ]

    return change


def _done_after_poison(elf, effects):
    notes = [e for e in effects if isinstance(e, Note) and e.event == "contract_done"]
    if not notes:
        return effects
    rest = [e for e in effects if e is not notes[0]]
    at = next(n for n, e in enumerate(rest) if isinstance(e, Exit) and e.resource == POISON)
    return [*rest[: at + 1], notes[0], *rest[at + 1 :]]


TooManyPins = breaking("TooManyPins", _units("pins"))
TooMuchPoison = breaking("TooMuchPoison", _units("poison"))
NoContract = breaking("NoContract", _without((Enter, Exit), "contract:"))
NoPins = breaking("NoPins", _without((Enter, Exit), "pins"))
KeepsItsContract = breaking("KeepsItsContract", _without((Exit,), "contract:"))
KeepsItsPins = breaking("KeepsItsPins", _without((Exit,), "pins"))  # and goes home with them
NeverDone = breaking("NeverDone", lambda elf, effects: [e for e in effects if not isinstance(e, Note)])
DoesTheOtherContract = breaking(
    "DoesTheOtherContract", _note(lambda elf, f: {**f, "contract": f["contract"] % 2 + 1})
)
DoneWithoutPoison = breaking("DoneWithoutPoison", _done_after_poison)
DoesAContractOfNoRound = breaking("DoesAContractOfNoRound", _note(lambda elf, f: {**f, "round": 99}))


class IdleElf(Elf):
    """Does nothing and says it is done."""

    def start(self):
        return []

    @property
    def finished(self):
        return True


class IdleMayor(Mayor):
    """Gives no contracts and says it is done."""

    def start(self):
        return []

    @property
    def finished(self):
        return True
