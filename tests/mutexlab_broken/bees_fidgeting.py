"""Mason bees that never stop fidgeting: each schedules a local ``fidget`` that schedules another,
for ever. Safe, and every bee ends DEAD or RETIRED, but the run never runs out of events:
``simulate bees``, which holds no trace, must stop it at its event limit (incomplete, exit 3)
within the seconds a hostile input may take, not after millions of events."""

from mutexlab.protocol import Schedule
from mutexlab.protocols import bees
from mutexlab_broken import recast

FAMILY = "bees"


class FidgetingBee(bees.Bee):
    def start(self) -> list:
        return [*super().start(), Schedule("fidget", "rest")]

    def on_local(self, action: str) -> list:
        if action == "fidget":
            return [Schedule("fidget", "rest")]
        return super().on_local(action)


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(bees.make_setup(processes, options, seed), FidgetingBee)
