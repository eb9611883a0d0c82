#!/usr/bin/env python3
"""Ricart–Agrawala as a mutexlab node, in plain Python (it imports nothing of mutexlab).

    mutexlab test mutex --node "python3 examples/nodes/ricart_agrawala.py" --nodes 3

It reads one JSON object per line on stdin and answers each with its outputs and a done line
(docs/test-any-program.md). A request is (timestamp, id), the smaller first; a node defers a
REQUEST while it holds the critical section or while its own request is earlier.
"""

import json
import sys


class Node:
    def __init__(self, init):
        self.me, self.peers = init["id"], init["peers"]
        self.clock = self.my_ts = 0
        self.requesting = self.holding = False
        self.replies, self.deferred = set(), []

    def handle(self, line, out):
        kind = line["type"]
        if kind == "request":
            self.clock += 1
            self.my_ts, self.requesting, self.replies = self.clock, True, set()
            for peer in self.peers:
                out({"type": "send", "to": peer, "body": {"type": "REQUEST", "ts": self.my_ts}})
        elif kind == "release":
            self.holding = False
            out({"type": "exit", "resource": "cs"})
            for peer in self.deferred:
                self.clock += 1
                out({"type": "send", "to": peer, "body": {"type": "REPLY", "ts": self.clock}})
            self.deferred = []
        elif kind == "recv":
            body, sender = line["body"], line["from"]
            if body["type"] == "REQUEST":
                self.clock = max(self.clock, body["ts"]) + 1
                mine_first = (self.my_ts, self.me) < (body["ts"], sender)
                if self.holding or (self.requesting and mine_first):
                    self.deferred.append(sender)
                else:
                    self.clock += 1
                    out({"type": "send", "to": sender, "body": {"type": "REPLY", "ts": self.clock}})
            elif body["type"] == "REPLY":
                self.replies.add(sender)
        if self.requesting and self.replies >= set(self.peers):
            self.requesting, self.holding = False, True
            out({"type": "enter", "resource": "cs"})


def main():
    node = None

    def out(message):
        sys.stdout.write(json.dumps(message) + "\n")

    for text in sys.stdin:
        line = json.loads(text)
        if line["type"] == "init":
            node = Node(line)
            out({"type": "done", "reinit": True})
        else:
            node.handle(line, out)
            out({"type": "done"})
        sys.stdout.flush()


if __name__ == "__main__":
    main()
