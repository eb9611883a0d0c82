"""Raymond's algorithm serving its queue newest first (a stack instead of Q's FIFO): a node that
keeps asking jumps ahead of one that asked earlier, so under an endless workload two nodes can
pass the token between them forever while a third waits — starvation, not deadlock (someone
can always move).

Raymond's clock only stamps messages (for the trace): no decision reads a timestamp. So this
variant declares, for itself, a canonical key without the clock and every message's timestamp
dead: with them the endless workload's worlds are finite, and ``check --endless`` finds the
starvation as a lasso that replays (its loop comes back to the same world up to the clocks)."""

from dataclasses import replace

from mutexlab.protocols import raymond
from mutexlab.reduction import NOTHING_LIVE, Canonical, ClockOffsets, Reductions
from mutexlab_broken import recast


class NewestFirstNode(raymond.RaymondNode):
    def _request(self) -> list:
        effects = super()._request()
        if self.queue and self.queue[-1] == self.pid:
            self.queue.rotate(1)  # its own request goes first
        return effects

    def on_message(self, msg) -> list:
        queued = len(self.queue)
        effects = super().on_message(msg)
        if msg.type == "REQUEST" and len(self.queue) > queued:
            self.queue.rotate(1)  # the newest request goes first
        return effects


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(raymond.make_setup(processes, options, seed), NewestFirstNode)


UNREAD = "the clock only stamps messages for the trace: no decision reads a timestamp"

SPEC = replace(
    raymond.SPEC,
    make_setup=make_setup,
    reductions=Reductions(
        frozenset({NewestFirstNode}),
        canonical=Canonical(lambda p: (p.snapshot()[0], *p.snapshot()[2:]), UNREAD),  # without the clock
        clocks=ClockOffsets(lambda p: NOTHING_LIVE, lambda p, d: p, UNREAD, dead=lambda msg, receiver: True),
    ),
)
