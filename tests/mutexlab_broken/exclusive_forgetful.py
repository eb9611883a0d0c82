"""A broken streamed capacity-1 check: it forgets every interval as soon as it is left, without
asking whether a later enter could still overlap it, and never gives up (test_exclusive_stream.py
shows the comparison with the whole-trace check catching it)."""

from __future__ import annotations

from mutexlab.audit.exclusive import ExclusiveStream


class ForgetsAtExit(ExclusiveStream):
    def _prune(self) -> int:
        for resource, live in self.live.items():
            self.live[resource] = [entry for entry in live if entry[1].exit is None]
        return sum(len(each) for each in self.live.values())

    def _enter(self, b) -> None:
        self._prune()  # every interval already left is forgotten before b is compared
        self.forgotten.clear()  # and no guard: what was forgotten is never asked about again
        super()._enter(b)
