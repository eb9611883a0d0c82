#!/usr/bin/env python3
# Mason bees, bee 1 keeping the flowers -- written on Windows from docs/test-any-program.md.
# Reeds as the C example deals them: bee i on reed ((i-1) % T) + 1, the (i-1)//T-th on it,
# waiting for the one before it there (NEXT); a bee beyond cocoons/eggs retires. Flowers: a bee
# asks the keeper (WANT), the keeper lets K out at a time (GO), each comes back (BACK).
# Input is read as raw bytes from stdin and cut into lines by hand.
#   --crlf     cuts the input at "\r\n" (how the author's test harness on Windows sent it)
#   --greedy   the keeper lets a bee out without counting the flowers in use
import json
import os
import sys

CRLF = "--crlf" in sys.argv
GREEDY = "--greedy" in sys.argv
SEP = b"\r\n" if CRLF else b"\n"


class Bee:
    def __init__(self, m):
        o = m["options"]
        self.me, self.n = m["id"], m["nodes"]
        self.K, self.T, self.eggs, self.cocoons = o["flowers"], o["reeds"], o["eggs"], o["cocoons"]
        self.reed = (self.me - 1) % self.T + 1
        self.slot = (self.me - 1) // self.T
        self.laid = 0
        self.out = []
        self.in_use, self.queue = 0, []  # the keeper's (bee 1)

    def start(self):
        if self.slot >= self.cocoons // self.eggs:
            self.out.append({"type": "state", "state": "RETIRED"})
        elif self.slot == 0:
            self.on_reed()

    def on_reed(self):
        self.out.append({"type": "enter", "resource": f"reed:{self.reed}"})
        self.ask()

    def ask(self):
        self.to_keeper({"type": "WANT", "bee": self.me})

    def to_keeper(self, body):
        if self.me == 1:
            self.keeper(body)
        else:
            self.out.append({"type": "send", "to": 1, "body": body})

    def keeper(self, body):
        if body["type"] == "WANT":
            self.queue.append(body["bee"])
        else:
            self.in_use -= 1
        while self.queue and (GREEDY or self.in_use < self.K):
            bee = self.queue.pop(0)
            self.in_use += 1
            if bee == 1:
                self.go()
            else:
                self.out.append({"type": "send", "to": bee, "body": {"type": "GO"}})

    def go(self):
        self.out.append({"type": "enter", "resource": "flower"})
        self.out.append({"type": "exit", "resource": "flower"})
        self.laid += 1
        self.out.append(
            {
                "type": "event",
                "event": "egg",
                "reed": self.reed,
                "count": self.laid,
                "in_reed": self.slot * self.eggs + self.laid,
            }
        )
        self.to_keeper({"type": "BACK"})
        if self.laid < self.eggs:
            self.ask()
            return
        self.out.append({"type": "exit", "resource": f"reed:{self.reed}"})
        nxt = self.me + self.T
        if nxt <= self.n and self.slot + 1 < self.cocoons // self.eggs:
            self.out.append({"type": "send", "to": nxt, "body": {"type": "NEXT"}})
        self.out.append({"type": "state", "state": "DEAD"})

    def recv(self, body):
        t = body["type"]
        if t in ("WANT", "BACK"):
            self.keeper(body)
        elif t == "GO":
            self.go()
        elif t == "NEXT":
            self.on_reed()


def say(lines):
    os.write(1, "".join(json.dumps(x) + "\r\n" for x in lines).encode())


bee = None
pending = b""
while True:
    chunk = os.read(0, 4096)
    if not chunk:
        break
    pending += chunk
    while SEP in pending:
        raw, pending = pending.split(SEP, 1)
        line = raw.decode().rstrip("\r")
        if not line:
            continue
        m = json.loads(line)
        if m["type"] == "init":
            bee = Bee(m)
            bee.start()
            say(bee.out + [{"type": "done", "reinit": True}])
            continue
        bee.out = []
        if m["type"] == "recv":
            bee.recv(m["body"])
        say(bee.out + [{"type": "done"}])
