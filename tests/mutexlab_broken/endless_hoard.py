"""``endless_chatter`` whose nodes also keep a copy of everything they hear, each copy larger than
the last: its memory grows faster than its events, so the event limit alone would let it take
gigabytes. ``simulate`` must stop it at its memory limit (incomplete, exit 3)."""

from mutexlab.protocols.kit import classic_algorithm
from mutexlab_broken import endless_chatter

CHUNK = 64 << 10  # bytes kept per CHATTER heard


class HoardingNode(endless_chatter.ChattyNode):
    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.heard: list[bytes] = []

    def _on_chatter(self, msg: endless_chatter.Chatter) -> list:
        self.heard.append(bytes(CHUNK))
        return super()._on_chatter(msg)


SPEC = classic_algorithm(
    "endless-hoard",
    "endless-chatter whose nodes keep a growing copy of everything they hear",
    HoardingNode,
    endless_chatter.Request,
    endless_chatter.Grant,
    endless_chatter.Release,
    endless_chatter.Chatter,
)
