"""Lamport's algorithm comparing the array's timestamps as text, ``(str(ts), pid)``: right while
every timestamp has one digit, wrong from two on ("10" < "9"), so with clocks starting at 8 two
nodes can each find their own request the earliest: both enter. It declares no reduction: under
Lamport's clock shift (once applied to any subclass) its counterexamples did not replay."""

from mutexlab.protocols import lamport
from mutexlab_broken import recast


class TextStampLamport(lamport.LamportNode):
    def _key(self, j: int) -> tuple:
        return (str(self.q[j][1]), j)


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(lamport.make_setup(processes, options, seed), TextStampLamport)
