"""The elves' invariant for ``check``: the hamster killers' rules (``rules.py``, the one definition
the audit applies too), judged in every reachable world on the observations the world model
keeps of each process; in a final world the end of the run too. (Pins, poison, one elf per
contract are capacities, which the model checks for every problem.)"""

from __future__ import annotations

from .rules import RULES

INVARIANT = RULES.world_invariant()
