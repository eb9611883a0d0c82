#!/usr/bin/env python3
"""Dining philosophers with a waiter, written from docs/test-any-program.md.

Philosopher 1 doubles as the waiter: everyone (itself too) asks it for a seat at the table
(ASK), it seats a philosopher when neither neighbour eats (SEAT) and hears when the meal is over
(LEFT). A reader thread puts stdin's lines on a queue.Queue, the main thread handles them.

  --left-only   the waiter looks at the left neighbour alone (two neighbours eat at once)
  --lazy        flushes stdout only after a line that sends something (a recv that sends
                nothing leaves its done line in the buffer)
"""

import json
import queue
import sys
import threading

LEFT_ONLY = "--left-only" in sys.argv
LAZY = "--lazy" in sys.argv

inbox = queue.Queue()


def reader():
    for line in sys.stdin:
        inbox.put(line)
    inbox.put(None)


class Phil:
    def __init__(self, init):
        self.me = init["id"]
        self.n = init["nodes"]
        self.eating = False
        # the waiter's books (philosopher 1 only)
        self.seated = set()
        self.waiting = []

    def left(self, i):
        return (i - 2) % self.n + 1

    def right(self, i):
        return i % self.n + 1

    def can_sit(self, i):
        if LEFT_ONLY:
            return self.left(i) not in self.seated
        return self.left(i) not in self.seated and self.right(i) not in self.seated

    def waiter(self, kind, who, out):
        if kind == "ASK":
            self.waiting.append(who)
        elif kind == "LEFT":
            self.seated.discard(who)
        still = []
        for i in self.waiting:
            if self.can_sit(i):
                self.seated.add(i)
                self.tell(i, "SEAT", out)
            else:
                still.append(i)
        self.waiting = still

    def tell(self, to, kind, out):
        if to == self.me:  # the waiter's own seat: no message
            self.handle_body({"type": kind}, out)
        else:
            out.append({"type": "send", "to": to, "body": {"type": kind, "who": self.me}})

    def to_waiter(self, kind, out):
        if self.me == 1:
            self.waiter(kind, 1, out)
        else:
            out.append({"type": "send", "to": 1, "body": {"type": kind, "who": self.me}})

    def handle_body(self, body, out):
        if body["type"] == "SEAT":
            a, b = self.me, self.right(self.me)
            out.append({"type": "enter", "resource": f"fork:{a}"})
            out.append({"type": "enter", "resource": f"fork:{b}"})
            out.append({"type": "enter", "resource": "meal"})
            out.append({"type": "state", "state": "EATING"})
            self.eating = True
        else:
            self.waiter(body["type"], body["who"], out)

    def handle(self, msg):
        out = []
        kind = msg["type"]
        if kind == "request":
            out.append({"type": "state", "state": "HUNGRY"})
            self.to_waiter("ASK", out)
        elif kind == "release":
            self.eating = False
            out.append({"type": "exit", "resource": "meal"})
            out.append({"type": "exit", "resource": f"fork:{self.me}"})
            out.append({"type": "exit", "resource": f"fork:{self.right(self.me)}"})
            out.append({"type": "state", "state": "THINKING"})
            self.to_waiter("LEFT", out)
        elif kind == "recv":
            self.handle_body(msg["body"], out)
        return out


def main():
    threading.Thread(target=reader, daemon=True).start()
    phil = None
    while True:
        line = inbox.get()
        if line is None:
            break
        msg = json.loads(line)
        if msg["type"] == "init":
            phil = Phil(msg)
            print(json.dumps({"type": "done", "reinit": True}), flush=True)
            continue
        out = phil.handle(msg)
        for o in out:
            print(json.dumps(o))
        print(json.dumps({"type": "done"}))
        if not LAZY or any(o["type"] == "send" for o in out):
            sys.stdout.flush()


main()
