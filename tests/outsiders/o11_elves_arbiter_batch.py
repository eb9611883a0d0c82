#!/usr/bin/env python3
# Hamster killers: the mayor arbitrates. Written from docs/test-any-program.md.
# Elves ask the mayor for work (ASK); the mayor hands a contract together with its pins and
# poison (JOB) when the town has enough of both, takes them back (DONE), and stops the round
# once every contract of it is done. Every answer is built in a list and written with ONE
# os.write (the lines joined by "\n"); on end of input it exits with status 3 ("no more input").
#   --pins-only   the mayor checks the pins before handing out a job, not the poison
import json
import os
import sys

PINS_ONLY = "--pins-only" in sys.argv


class Town:
    def __init__(self, m):
        self.id = m["id"]
        self.o = m["options"]
        self.plan = self.o["plan"]
        self.ts = 0
        self.round = 0
        self.out = []

    def send(self, to, body):
        self.ts += 1
        body = dict(body, sender=self.id, ts=self.ts)
        self.out.append({"type": "send", "to": to, "body": body})

    # ---- mayor -------------------------------------------------------------------
    def begin(self):
        self.round += 1
        self.todo = list(enumerate(self.plan[self.round - 1], 1))
        self.done = 0
        self.asking = []
        self.out.append({"type": "event", "event": "round", "round": self.round})
        for e in range(1, self.o["elves"] + 1):
            self.send(e, {"type": "ROUND", "round": self.round})

    def hand_out(self):
        while self.asking and self.todo:
            idx, ham = self.todo[0]
            pins = self.o["pins_per_elf"]
            poison = ham * self.o["poison_per_hamster"]
            enough = self.pins >= pins and (PINS_ONLY or self.poison >= poison)
            if not enough:
                return
            self.todo.pop(0)
            self.pins -= pins
            self.poison -= poison
            elf = self.asking.pop(0)
            self.send(
                elf,
                {
                    "type": "JOB",
                    "round": self.round,
                    "contract": idx,
                    "hamsters": ham,
                    "pins": pins,
                    "poison": poison,
                },
            )

    def mayor(self, body):
        t = body["type"]
        if t == "ASK" and body["round"] == self.round:
            self.asking.append(body["sender"])
        elif t == "DONE":
            self.pins += body["pins"]
            self.poison += body["poison"]
            self.done += 1
            if self.done == len(self.plan[self.round - 1]):
                for e in range(1, self.o["elves"] + 1):
                    self.ts += 1
                    self.out.append(
                        {
                            "type": "send",
                            "to": e,
                            "body": {"type": "STOP", "sender": 0, "ts": self.ts, "round": self.round},
                        }
                    )
                if self.round < len(self.plan):
                    self.begin()
                else:
                    self.out.append({"type": "state", "state": "MAYOR_DONE"})
                return
        self.hand_out()

    # ---- elf ---------------------------------------------------------------------
    def elf(self, body):
        t = body["type"]
        if t == "ROUND":
            self.round = body["round"]
            self.out.append({"type": "state", "state": "ELF_ASKING"})
            self.send(0, {"type": "ASK", "round": self.round})
        elif t == "JOB":
            r, c = body["round"], body["contract"]
            res = f"contract:{r}.{c}"
            self.out += [
                {"type": "enter", "resource": res},
                {"type": "enter", "resource": "pins", "units": body["pins"]},
                {"type": "enter", "resource": "poison", "units": body["poison"]},
                {
                    "type": "event",
                    "event": "contract_done",
                    "round": r,
                    "contract": c,
                    "hamsters": body["hamsters"],
                },
                {"type": "exit", "resource": "poison", "units": body["poison"]},
                {"type": "exit", "resource": "pins", "units": body["pins"]},
                {"type": "exit", "resource": res},
            ]
            self.send(0, {"type": "DONE", "pins": body["pins"], "poison": body["poison"]})
            self.send(0, {"type": "ASK", "round": r})
        elif t == "STOP":
            if body["round"] == len(self.plan):
                self.out.append({"type": "state", "state": "ELF_DONE"})
            else:
                self.out.append({"type": "state", "state": "ELF_IDLE"})


def write_all(lines):
    data = ("\n".join(json.dumps(x) for x in lines) + "\n").encode()
    while data:
        data = data[os.write(1, data) :]


town = None
while True:
    raw = sys.stdin.readline()
    if not raw:
        sys.stderr.write("no more input\n")
        sys.exit(3)
    msg = json.loads(raw)
    if msg["type"] == "init":
        town = Town(msg)
        if town.id == 0:
            town.pins, town.poison = town.o["pins"], town.o["poison"]
            town.begin()
        write_all(town.out + [{"type": "done", "reinit": True}])
        continue
    town.out = []
    if msg["type"] == "recv":
        (town.mayor if town.id == 0 else town.elf)(msg["body"])
    write_all(town.out + [{"type": "done"}])
