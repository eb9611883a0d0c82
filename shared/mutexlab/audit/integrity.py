"""What every trace must hold together, whatever its algorithm: each ``recv`` has its ``send`` and
each resource is one the run header declares.

* **recv-without-send**: a ``recv`` whose ``id`` no ``send`` of the trace carries, or whose ``send``
  went to another process, came from another sender, or is not in the receive's past (its clock
  does not know the send). A message nobody sent was received: the trace is not a run.
  A second ``recv`` of the same ``id`` is such a receive too (a replayed or forged copy), unless
  the run header declares ``"duplicates": true`` (a network that may deliver a message more than
  once): then each receive is paired with the one send, and judged against it, as the first.
* **unknown-resource**: an ``enter`` of a resource the header's ``capacities`` do not name (exactly,
  by ``prefix:*``, or by ``*``): the capacity audit would judge it by a default it was never given.

A run whose header declares ``duplicates`` may receive a message more than once: every receive
of it is paired with its one send and judged against it (a ``"copy": true`` mark, which the
simulator's replay writes, is information only: it excuses nothing).

Fed every send, recv and enter (``feed``) in any order of the file: a send and its recv are paired
whichever comes first, so memory follows the messages not yet paired (in flight, or lost), not the
trace (with duplicates declared, every send is kept to the end: another copy may come).
Events without an ``id`` cannot be paired and are not judged.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..findings import Violation
from ..setups import declares

KINDS = frozenset({"send", "recv", "enter"})  # what ``feed`` reads
Seen = tuple[dict, int]  # an event and its line


def _cited(seen: Seen) -> dict:
    event, line = seen
    return event if "_line" in event else dict(event, _line=line)


class Integrity:
    def __init__(self, run: dict) -> None:
        capacities = run.get("capacities")
        self.capacities = capacities if isinstance(capacities, dict) else {}
        self.sent: dict[object, Seen] = {}  # id → its send, not yet received
        self.unsent: dict[object, Seen] = {}  # id → its recv, whose send has not come (yet)
        self.duplicates = run.get("duplicates") is True  # a message may be received more than once
        self.headless = run.get("_line") == 0  # a foreign log's stand-in header: it has none of its own
        self.copies: dict[object, list[Seen]] = {}  # id → its further recvs before its send (duplicates)
        self.resources: set[object] = set()
        self.found: list[Violation] = []

    def feed(self, event: dict, line: int = 0) -> None:
        """One event of a kind in ``KINDS``; ``line``: its line when it carries no ``_line``."""
        kind = event["event"]
        if kind == "enter":
            resource = event.get("resource")
            if resource not in self.resources:
                self.resources.add(resource)
                if isinstance(resource, str) and not declares(self.capacities, resource):
                    declared = ", ".join(sorted(self.capacities)) or "none"
                    self.found.append(
                        Violation(
                            "unknown-resource",
                            f"{event['pid']} entered {resource}, a resource the run header does not "
                            f"declare (its capacities name: {declared})",
                            [_cited((event, line))],
                        )
                    )
            return
        key = event.get("id")
        if key is None:
            return
        if kind == "send":
            recv = self.unsent.pop(key, None)
            if recv is None or self.duplicates:
                self.sent[key] = (event, line)
            if recv is not None:
                self._pair((event, line), recv)
                for copy in self.copies.pop(key, ()):
                    self._pair((event, line), copy)
        elif kind == "recv":
            send = self.sent.get(key) if self.duplicates else self.sent.pop(key, None)
            if send is not None:
                self._pair(send, (event, line))
            elif key not in self.unsent:
                self.unsent[key] = (event, line)
            elif self.duplicates:  # another copy before its send: paired when the send comes
                self.copies.setdefault(key, []).append((event, line))
            else:  # received twice before any send: this one has none
                self.found.append(_never_sent((event, line), False))

    def feed_all(self, events: Iterable[dict]) -> Integrity:
        for n, event in enumerate(events, 1):
            if event["event"] in KINDS:
                self.feed(event, n)
        return self

    def _pair(self, send_seen: Seen, recv_seen: Seen) -> None:
        send, recv = send_seen[0], recv_seen[0]
        sender, receiver = send["pid"], recv["pid"]
        problem = None
        if recv.get("from", sender) != sender:
            problem = f"says it came from {recv.get('from')}, but {sender} sent it"
        elif send.get("to", receiver) != receiver:
            problem = f"was sent to {send.get('to')}, not to it"
        else:
            sent_vc, recv_vc = send.get("vc"), recv.get("vc")
            if (
                isinstance(sent_vc, dict)
                and isinstance(recv_vc, dict)
                and recv_vc.get(sender, 0) < sent_vc.get(sender, 0)
            ):
                problem = "its clock says was not sent yet (the receive does not know the send)"
        if problem is not None:
            self.found.append(
                Violation(
                    "recv-without-send",
                    f"{receiver} received message {recv['id']}, which {problem}",
                    [_cited(send_seen), _cited(recv_seen)],
                )
            )

    def findings(self) -> list[Violation]:
        """The findings in trace order (by the line of their last event)."""
        late = [seen for copies in self.copies.values() for seen in copies]
        found = self.found + [
            _never_sent(seen, self.duplicates, self.headless) for seen in [*self.unsent.values(), *late]
        ]
        return sorted(found, key=lambda v: v.events[-1].get("_line", 0))


def _never_sent(seen: Seen, duplicates: bool, headless: bool = False) -> Violation:
    recv = seen[0]
    declared = (
        "the log has no run header to declare duplicates"
        if headless
        else "the run header declares no duplicates"
    )
    again = "" if duplicates else f" (or received already: {declared})"
    return Violation(
        "recv-without-send",
        f"{recv['pid']} received message {recv['id']} from {recv.get('from', '?')}, which no send of "
        f"the trace carries{again}",
        [_cited(seen)],
    )
