"""Suzuki–Kasami whose token holder broadcasts its REQUEST even when the token is already here
(and then enters at once): safe and live — the others only raise their count of its requests,
which the token's L catches up with at its exit — but an entry with the token at hand costs
N−1 messages instead of 0. ``check --metrics`` must see the fewest messages per entry rise."""

from mutexlab.protocol import Send
from mutexlab.protocols import suzuki_kasami as sk
from mutexlab_broken import recast


class LoudNode(sk.SuzukiKasamiNode):
    def _request(self) -> list:
        if self.token is None:
            return super()._request()
        self.R[self.pid] += 1
        msg = sk.Request(sender=self.pid, ts=self.clock.tick(), seq=self.R[self.pid])
        return [Send(j, msg) for j in range(1, self.n + 1) if j != self.pid] + self._enter()


def make_setup(processes: int, options: dict, seed: int = 0):
    return recast(sk.make_setup(processes, options, seed), LoudNode)
