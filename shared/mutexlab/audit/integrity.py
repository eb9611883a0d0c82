"""What every trace must hold together, whatever its algorithm: each ``recv`` has its ``send`` and
each resource is one the run header declares.

* **recv-without-send**: a ``recv`` whose ``id`` no ``send`` of the trace carries, or whose ``send``
  went to another process, came from another sender, or is not in the receive's past (its clock
  does not know the send). A message nobody sent was received: the trace is not a run.
* **unknown-resource**: an ``enter`` of a resource the header's ``capacities`` do not name (exactly,
  by ``prefix:*``, or by ``*``): the capacity audit would judge it by a default it was never given.

A ``recv`` marked ``"copy": true`` is a second delivery of a message the network duplicated (the
replay of a ``check --duplicate`` scenario): its message was received before, and it is not paired
again.

Fed every send, recv and enter (``feed``) in any order of the file: a send and its recv are paired
whichever comes first, so memory follows the messages not yet paired (in flight, or lost), not the
trace. Events without an ``id`` cannot be paired and are not judged.
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
            if recv is None:
                self.sent[key] = (event, line)
            else:
                self._pair((event, line), recv)
        elif kind == "recv":
            if event.get("copy") is True:  # the network's duplicate: its original is paired
                return
            send = self.sent.pop(key, None)
            if send is not None:
                self._pair(send, (event, line))
            elif key in self.unsent:  # received twice before any send: this one has none
                self.found.append(_never_sent((event, line)))
            else:
                self.unsent[key] = (event, line)

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
        found = self.found + [_never_sent(seen) for seen in self.unsent.values()]
        return sorted(found, key=lambda v: v.events[-1].get("_line", 0))


def _never_sent(seen: Seen) -> Violation:
    recv = seen[0]
    return Violation(
        "recv-without-send",
        f"{recv['pid']} received message {recv['id']} from {recv.get('from', '?')}, which no send of "
        "the trace carries",
        [_cited(seen)],
    )
