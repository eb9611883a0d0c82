"""Mason bees that lay one egg too many: after the last egg of its budget, a bee lays another
before it leaves its reed. Capacity is never broken (one bee per reed, K on flowers): only the
bees' own invariant (at most ``eggs`` eggs per bee) catches it."""

from mutexlab.protocol import Note
from mutexlab.protocols import bees
from mutexlab_broken import recast

FAMILY = "bees"


class ExtraEggBee(bees.Bee):
    def _leave_flower(self, action: str = "exit") -> list:
        effects = super()._leave_flower(action)
        if self.state == bees.BeeState.DEAD:
            self.laid += 1
            at = next(n for n, e in enumerate(effects) if isinstance(e, Note) and e.event == "egg")
            effects.insert(
                at + 1,
                Note(
                    "egg", {"reed": self.reed, "count": self.laid, "in_reed": self.reed_eggs[self.reed] + 1}
                ),
            )
        return effects


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(bees.make_setup(processes, options, seed), ExtraEggBee)
