"""Dining philosophers for `mutexlab test philosophers`, written from docs/test-any-program.md.

Every fork lives at home: philosopher i owns fork i (its left) and lends it to philosopher i - 1
(whose right fork it is) when asked and not using it; a borrowed fork goes home after the meal.
Forks are taken lowest number first (Dijkstra's hierarchy), so philosopher N takes fork 1 first.

Style: a dataclass for the state, sys.stdin.readline() in a while loop, bodies with unicode
(ensure_ascii=False) and fields nobody needs, every line ended with "\\r\\n" (written on Windows),
and print() without flush=... — written on a machine whose Python ran unbuffered.

--left-first takes its own fork first (a cycle of waits: a deadlock); --flush adds flush=True.
"""

import json
import sys
from dataclasses import dataclass, field

LEFT_FIRST = "--left-first" in sys.argv
FLUSH = "--flush" in sys.argv


def say(kind, **fields):
    print(json.dumps({"type": kind, **fields}, ensure_ascii=False), end="\r\n", flush=FLUSH)


@dataclass
class Philosopher:
    me: int = 0
    n: int = 0
    hungry: bool = False
    eating: bool = False
    have: set = field(default_factory=set)  # forks in my hands
    lent: bool = False  # my own fork is at a neighbour's
    asked: bool = False  # my left neighbour asked for my fork while I used it

    def forks(self):
        mine, right = self.me, self.me % self.n + 1
        return [mine, right] if LEFT_FIRST else sorted([mine, right])

    def next_fork(self):
        for fork in self.forks():
            if fork not in self.have:
                return fork
        return None

    def go_on(self):
        """Take the next fork, or eat with both."""
        fork = self.next_fork()
        if fork is None:
            self.hungry, self.eating = False, True
            left, right = self.me, self.me % self.n + 1
            say("enter", resource=f"fork:{left}")
            say("enter", resource=f"fork:{right}")
            say("enter", resource="meal")
            say("state", state="EATING")
        elif fork == self.me:
            if not self.lent:
                self.have.add(fork)
                self.go_on()
        else:
            say("send", to=fork, body={"type": "ASK", "fork": fork, "who": f"φιλόσοφος {self.me}"})

    def lend(self):
        neighbour = (self.me - 2) % self.n + 1
        self.lent, self.asked = True, False
        say("send", to=neighbour, body={"type": "LEND", "fork": self.me, "note": "🍴"})


p = Philosopher()
while True:
    line = sys.stdin.readline()
    if not line:
        break
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "init":
        p = Philosopher(me=msg["id"], n=msg["nodes"])
        say("state", state="THINKING")
        say("done", reinit=True)
        continue
    if kind == "request":
        p.hungry = True
        say("state", state="HUNGRY")
        p.go_on()
    elif kind == "release":
        p.eating = False
        left, right = p.me, p.me % p.n + 1
        say("exit", resource="meal")
        say("exit", resource=f"fork:{left}")
        say("exit", resource=f"fork:{right}")
        say("state", state="THINKING")
        p.have.clear()
        say("send", to=right, body={"type": "HOME", "fork": right})
        if p.asked:
            p.lend()
    elif kind == "recv":
        body = msg["body"]
        if body["type"] == "ASK":
            if p.lent:
                raise SystemExit("asked for a fork already lent")
            if p.me in p.have:
                p.asked = True
            else:
                p.lend()
        elif body["type"] == "LEND":
            p.have.add(body["fork"])
            p.go_on()
        elif body["type"] == "HOME":
            p.lent = False
            if p.hungry and p.next_fork() == p.me:
                p.go_on()
    say("done")
