"""Mason bees that broadcast to every other bee, also to the dead and retired ones (which ignore
everything): safe and live, but a bee whose peers are all gone still pays a REQreed per dead
peer instead of entering its reed for nothing. ``check --metrics`` must see the fewest messages
per reed entry rise from 0."""

from mutexlab.protocol import Send
from mutexlab.protocols.bees import Bee


class LoudBee(Bee):
    def _broadcast(self, msg):
        return [Send(j, msg) for j in range(1, self.n + 1) if j != self.pid]
