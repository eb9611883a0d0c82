"""Chandy–Misra's hygienic philosophers (examples/solutions/chandy_misra.py) yielding a fork mid-meal.

Bug: a REQFORK for a dirty fork is answered at once even while eating — the check "not while I
eat" is left out. Forks get dirty when a meal starts, so the neighbour who asked gets the fork
and eats with it while this philosopher still holds it: one fork held by two.

Caught by: mutexlab check FILE --philosophers 3
Expect: capacity — fork:3 (capacity 1) held by philosopher-2×1, philosopher-3×1
"""

import sys
from pathlib import Path

# the correct solution this one mutates, beside the other examples
sys.path.append(str(Path(__file__).resolve().parents[2] / "examples" / "solutions"))

from chandy_misra import ChandyMisra, Fork, ReqFork  # noqa: E402

from mutexlab.protocols.kit import HUNGRY, philosophers_algorithm  # noqa: E402


class YieldsWhileEating(ChandyMisra):
    def _on_reqfork(self, msg: ReqFork) -> list:
        self.clock.receive(msg.ts)
        f = msg.fork
        self.token[f] = True
        if not self.dirty[f]:  # the bug: ``self.state is EATING or`` is missing
            return []
        effects = [self._give(f)]
        if self.state is HUNGRY:
            effects.append(self._ask(f))
        return effects


SPEC = philosophers_algorithm(
    "mutant-chandy-misra-yields-while-eating",
    "Chandy–Misra giving a dirty fork away during the meal",
    YieldsWhileEating,
    ReqFork,
    Fork,
)
