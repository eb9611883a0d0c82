"""Chandy–Misra, broken on purpose: a philosopher eats as soon as it holds its left fork.

It picks up only the fork it has: the problem's rule (a philosopher eats only holding both its
forks) is broken at its first meal without the right one, and its neighbour may eat with that
fork meanwhile. ``mutexlab check philosophers`` finds the shortest way there.
"""

from chandy_misra import ChandyMisra, Fork, ReqFork

from mutexlab.protocols.kit import philosophers_algorithm


class OneForkPhilosopher(ChandyMisra):
    def _try_eat(self) -> list:
        if not self.have[self.left]:
            return []
        self.dirty[self.left] = True
        return [self.take(self.left), *self._eat()]

    def _done(self) -> list:
        return [self.put(self.left)] + [
            self._give(f) for f in (self.left, self.right) if self.token[f] and self.have[f]
        ]


SPEC = philosophers_algorithm(
    "chandy-misra-broken",
    "Chandy–Misra eating with the left fork alone",
    OneForkPhilosopher,
    ReqFork,
    Fork,
)
