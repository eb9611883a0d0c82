#!/usr/bin/env python3
"""Ricart-Agrawala for mutexlab's line protocol, written against the doc, event-loop style.

No `for line in sys.stdin`: standard input is made non-blocking and watched with `selectors`;
whatever arrives is appended to a byte buffer and only complete lines are handled (a read may end
in the middle of one). Output goes through os.write on fd 1, looping over partial writes.

--loose-tie compares requests by timestamp alone and lets an equal one through ("the same clock,
nobody is first, so don't make anyone wait"): two nodes asking at the same stamp both reply.
"""

import json
import os
import selectors
import sys

LOOSE = "--loose-tie" in sys.argv[1:]


class Node:
    def __init__(self):
        self.reset(0, [])

    def reset(self, me, peers):
        self.me, self.peers = me, list(peers)
        self.clock = 0
        self.asking = None  # (ts, id) of our own pending request
        self.inside = False
        self.replies = set()
        self.deferred = []

    def before(self, theirs):
        """True when the request `theirs` (ts, id) goes before ours."""
        if LOOSE:
            return theirs[0] <= self.asking[0]
        return theirs < self.asking

    def handle(self, msg):
        out = []
        kind = msg["type"]
        if kind == "init":
            self.reset(msg["id"], msg["peers"])
            return [{"type": "done", "reinit": True}]
        if kind == "request":
            self.clock += 1
            self.asking = (self.clock, self.me)
            self.replies = set()
            for p in self.peers:
                out.append({"type": "send", "to": p, "body": {"type": "REQ", "ts": self.clock}})
            out += self.maybe_enter()
        elif kind == "release":
            self.inside, self.asking = False, None
            out.append({"type": "exit", "resource": "cs"})
            for p in self.deferred:
                out.append({"type": "send", "to": p, "body": {"type": "OK", "ts": self.clock}})
            self.deferred = []
        elif kind == "recv":
            body, sender = msg["body"], msg["from"]
            self.clock = max(self.clock, body.get("ts", 0)) + 1
            if body["type"] == "REQ":
                theirs = (body["ts"], sender)
                if self.inside or (self.asking is not None and not self.before(theirs)):
                    self.deferred.append(sender)
                else:
                    out.append({"type": "send", "to": sender, "body": {"type": "OK", "ts": self.clock}})
            elif body["type"] == "OK":
                self.replies.add(sender)
                out += self.maybe_enter()
        out.append({"type": "done"})
        return out

    def maybe_enter(self):
        if self.asking is not None and not self.inside and self.replies >= set(self.peers):
            self.inside = True
            return [{"type": "enter", "resource": "cs"}]
        return []


def write_all(data):
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(1, view) :]
        except BlockingIOError:
            selectors.DefaultSelector().select(0.01)


def main():
    node = Node()
    os.set_blocking(0, False)
    sel = selectors.DefaultSelector()
    sel.register(0, selectors.EVENT_READ)
    pending = b""
    while True:
        for _key, _mask in sel.select():
            try:
                chunk = os.read(0, 4096)
            except BlockingIOError:
                continue
            if not chunk:
                return
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if line.strip():
                    answer = node.handle(json.loads(line))
                    write_all("".join(json.dumps(o) + "\n" for o in answer).encode())


if __name__ == "__main__":
    main()
