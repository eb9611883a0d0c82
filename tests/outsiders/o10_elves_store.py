#!/usr/bin/env python3
"""The hamster killers for ``mutexlab test elves --node``: the whole town in one program.

The mayor (node 0) keeps the contracts *and* the town's store of pins and poison: an elf asks
(ASK), the mayor hands it a contract with its tools (GIVE) when it has them, else keeps the elf
waiting; the elf does the job in the same answer and brings the tools back (DONE). Once every
contract of a round is back the mayor stops the round (STOP) and opens the next (OPEN).

Written the way I write filters: select() on fd 0 and os.read() in small chunks (lines arrive
split across reads), output by os.write with CRLF ends, keys in my own order, non-ASCII escaped
and a space or two where I like them, and lots of chatter on standard error.

Flags: --early-stop   the mayor stops a round once every contract is *given*, not done
       --lose-poison  the mayor forgets to take back the poison of a contract of 5 hamsters
"""

import json
import os
import select
import sys

EARLY_STOP = "--early-stop" in sys.argv
LOSE_POISON = "--lose-poison" in sys.argv


def say(**fields):
    # odd but valid JSON: spaces after the colon, ASCII escapes, CRLF line ends
    text = json.dumps(fields, ensure_ascii=True, separators=(" ,", ":  "))
    os.write(1, text.encode() + b"\r\n")


def chat(*words):
    print("[elves]", *words, file=sys.stderr, flush=True)


class Town:
    def init(self, m):
        self.me, o = m["id"], m["options"]
        self.elves = o["elves"]
        self.plan, self.rounds = o["plan"], o["rounds"]
        self.ppe, self.pph = o["pins_per_elf"], o["poison_per_hamster"]
        self.pins, self.poison = o["pins"], o["poison"]
        self.ts = 0
        if self.me == 0:
            self.round = 0
            self.open_round()

    # -- the mayor --------------------------------------------------------------------------
    def open_round(self):
        self.round += 1
        self.todo = list(range(1, len(self.plan[self.round - 1]) + 1))  # contracts not given
        self.out = set()  # given, not back
        self.waiting = []
        say(type="event", event="round", round=self.round)
        chat("mayor opens round", self.round, "contracts", self.plan[self.round - 1])
        for elf in range(1, self.elves + 1):
            self.send(elf, type="OPEN", round=self.round, note="ronde ouverte, élu")

    def send(self, to, **body):
        self.ts += 1
        body.setdefault("ts", self.ts)
        say(body=body, to=to, type="send")

    def give(self, elf):
        contract = self.todo[0]
        hamsters = self.plan[self.round - 1][contract - 1]
        if self.pins < self.ppe or self.poison < hamsters * self.pph:
            chat("mayor: elf", elf, "waits for tools", self.pins, self.poison)
            self.waiting.append(elf)
            return
        self.todo.pop(0)
        self.out.add(contract)
        self.pins -= self.ppe
        self.poison -= hamsters * self.pph
        self.send(elf, type="GIVE", round=self.round, contract=contract, hamsters=hamsters)
        if EARLY_STOP and not self.todo:
            self.stop()

    def ask(self, elf):
        if self.todo:
            self.give(elf)
        else:
            self.send(elf, type="NONE", round=self.round)

    def done(self, b):
        self.pins += self.ppe
        if not (LOSE_POISON and b["hamsters"] == 5):
            self.poison += b["hamsters"] * self.pph
        self.out.discard(b["contract"])
        waiting, self.waiting = self.waiting, []
        for elf in waiting:
            self.ask(elf)
        if not self.todo and not self.out and not EARLY_STOP:
            self.stop()

    def stop(self):
        self.ts += 1
        for elf in range(1, self.elves + 1):
            say(type="send", to=elf, body={"type": "STOP", "sender": 0, "ts": self.ts, "round": self.round})
        if self.round < self.rounds:
            self.open_round()
        else:
            say(type="state", state="MAYOR_DONE")

    # -- an elf -----------------------------------------------------------------------------
    def job(self, b):
        r, c, h = b["round"], b["contract"], b["hamsters"]
        name = f"contract:{r}.{c}"
        say(resource=name, type="enter")
        say(units=self.ppe, resource="pins", type="enter")
        say(units=h * self.pph, resource="poison", type="enter")
        say(type="event", event="contract_done", round=r, contract=c, hamsters=h)
        say(type="exit", resource="poison", units=h * self.pph)
        say(type="exit", resource="pins", units=self.ppe)
        say(type="exit", resource=name)
        chat(f"elf {self.me} killed {h} hamsters (contract {r}.{c})")
        self.send(0, type="DONE", round=r, contract=c, hamsters=h)
        self.send(0, type="ASK")

    def recv(self, frm, b):
        kind = b["type"]
        self.ts = max(self.ts, b.get("ts", 0)) + 1
        if self.me == 0:
            if kind == "ASK":
                self.ask(frm)
            elif kind == "DONE":
                self.done(b)
        elif kind == "OPEN":
            self.send(0, type="ASK")
        elif kind == "GIVE":
            self.job(b)
        elif kind == "STOP" and b["round"] == self.rounds:
            say(type="state", state="ELF_DONE")


def main():
    town, pending = Town(), b""
    while True:
        select.select([0], [], [])
        chunk = os.read(0, 7)  # small reads: a line comes in pieces
        if not chunk:
            chat("stdin ended, bye")
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            m = json.loads(line)
            chat("got", m["type"])
            if m["type"] == "init":
                town.init(m)
                say(reinit=True, type="done")
                continue
            if m["type"] == "recv":
                town.recv(m["from"], m["body"])
            say(type="done")


main()
