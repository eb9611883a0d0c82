"""The bees' invariant for ``check``: the bees' rules (``rules.py``, the one definition the audit
applies too), judged in every reachable world on the observations the world model keeps of each
bee; in a final world the end of the run too. (One bee per reed and K on flowers are
capacities, which the model checks for every problem.)"""

from __future__ import annotations

from .rules import RULES

INVARIANT = RULES.world_invariant()
