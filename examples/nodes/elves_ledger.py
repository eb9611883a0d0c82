#!/usr/bin/env python3
"""The hamster killers (``mutexlab test elves``) without an arbiter, as one program: node 0 is the
mayor, nodes 1..N the elves. Imports nothing of mutexlab: it speaks the node protocol
(docs/test-any-program.md) on standard input and output.

The mayor hands out each round's contracts (``options.plan``) and, once every one is done,
sends STOP to every elf, then begins the next round. The elves keep, each, a copy of a *ledger*
(contracts taken per round, pins and poison free), changed under a Ricart–Agrawala lock: with
every LEDGER_REPLY in, an elf takes all it can (its next contract, its pins, its poison), tells
the others (LEDGER_UPDATE, sent before the replies it deferred: links are FIFO) and passes the
lock on. Giving back needs no lock (RELEASE to every elf). An elf holding a contract, its pins
and its poison does the contract in the same answer (nothing arrives unasked) and tells the
mayor (CONTRACT_COMPLETED). The design of examples/solutions/elves_no_arbiter.py.

``--broken``: an elf answers every ledger request at once, even when its own comes first, so
two elves can take the same contract. ``--broken-mayor``: the mayor stops a round of two or more
contracts as soon as all but one are done (the problem's audit: ``stop-before-done``).
"""

import json
import sys

BROKEN = "--broken" in sys.argv[1:]
BROKEN_MAYOR = "--broken-mayor" in sys.argv[1:]
PINS, POISON = "pins", "poison"


def out(line):
    sys.stdout.write(json.dumps(line) + "\n")


class Node:
    def __init__(self, init):
        self.id, self.peers = init["id"], [p for p in init["peers"] if p != 0]
        opts = init["options"]
        self.plan = opts["plan"]
        self.clock, self.state = 0, None
        if self.id == 0:  # the mayor
            self.round, self.done = 0, set()
            self.begin()
            return
        self.pins_per_elf, self.per_hamster = opts["pins_per_elf"], opts["poison_per_hamster"]
        self.round, self.active, self.contracts = 0, False, []
        self.taken = {}  # round -> contracts taken, as far as I know
        self.free = {PINS: opts["pins"], POISON: opts["poison"]}
        self.holding = None  # (contract, hamsters)
        self.has = {PINS: 0, POISON: 0}
        self.asking, self.replies, self.deferred = None, set(), []
        self.set_state("ELF_IDLE")

    def tick(self):
        self.clock += 1
        return self.clock

    def seen(self, body):
        self.clock = max(self.clock, body.get("ts", 0))

    def send(self, to, kind, **fields):
        out(
            {"type": "send", "to": to, "body": {"type": kind, "sender": self.id, "ts": self.tick(), **fields}}
        )

    def set_state(self, state):
        if state != self.state:
            self.state = state
            out({"type": "state", "state": state})

    # -- the mayor ----------------------------------------------------------------------------
    def begin(self):
        self.round, self.done = self.round + 1, set()
        contracts = self.plan[self.round - 1]
        out({"type": "event", "event": "round", "round": self.round, "contracts": contracts})
        for elf in sorted(self.peers):
            self.send(elf, "INIT_CONTRACTS", round=self.round, contracts=contracts)
        self.set_state("MAYOR_WAITING")

    def mayor_recv(self, body):
        if body.get("type") != "CONTRACT_COMPLETED" or body.get("round") != self.round:
            return
        self.done.add(body["contract"])
        needed = len(self.plan[self.round - 1])
        if len(self.done) < (max(1, needed - 1) if BROKEN_MAYOR else needed):
            return
        final = self.round == len(self.plan)
        for elf in sorted(self.peers):
            self.send(elf, "STOP", round=self.round, final=final)
        if final:
            self.set_state("MAYOR_DONE")
        else:
            self.begin()

    # -- an elf ---------------------------------------------------------------------------------
    def others(self):
        return [j for j in sorted(self.peers) if j != self.id]

    def need(self):
        if self.holding is None:
            left = self.active and self.taken.get(self.round, 0) < len(self.contracts)
            return ("contract", 1) if left else None
        if not self.has[PINS]:
            return PINS, self.pins_per_elf
        return (POISON, self.holding[1] * self.per_hamster) if not self.has[POISON] else None

    def go_on(self):
        if self.state == "ELF_DONE":
            return
        need = self.need()
        if self.asking is not None:
            self.set_state("ELF_REQUESTING")
            return
        if need is None:
            if self.has[POISON]:
                self.finish()
            else:
                self.set_state("ELF_IDLE")
            return
        kind, units = need
        if kind != "contract" and self.free[kind] < units:
            self.set_state("ELF_WAIT_FOR_RELEASE")
            return
        self.set_state("ELF_REQUESTING")
        self.asking, self.replies = self.tick(), set()
        for j in self.others():
            out(
                {
                    "type": "send",
                    "to": j,
                    "body": {"type": "LEDGER_REQUEST", "sender": self.id, "ts": self.asking},
                }
            )
        if not self.others():
            self.critical()

    def critical(self):
        took = {"contract": 0, PINS: 0, POISON: 0}
        while (need := self.need()) is not None:
            kind, units = need
            if kind == "contract":
                index = self.taken[self.round] = self.taken.get(self.round, 0) + 1
                self.holding, took["contract"] = (index, self.contracts[index - 1]), index
                out({"type": "enter", "resource": f"contract:{self.round}.{index}"})
            elif self.free[kind] >= units:
                self.free[kind] -= units
                self.has[kind] = took[kind] = units
                out({"type": "enter", "resource": kind, "units": units})
            else:
                break
        if any(took.values()):
            for j in self.others():
                self.send(j, "LEDGER_UPDATE", round=self.round, **took)
        for j, ts in self.deferred:
            self.send(j, "LEDGER_REPLY", answers=ts)
        self.asking, self.replies, self.deferred = None, set(), []
        self.go_on()

    def finish(self):
        index, hamsters = self.holding
        pins, poison = self.has[PINS], self.has[POISON]
        out(
            {
                "type": "event",
                "event": "contract_done",
                "round": self.round,
                "contract": index,
                "hamsters": hamsters,
            }
        )
        out({"type": "exit", "resource": POISON, "units": poison})
        out({"type": "exit", "resource": PINS, "units": pins})
        out({"type": "exit", "resource": f"contract:{self.round}.{index}"})
        self.free[PINS] += pins
        self.free[POISON] += poison
        self.holding, self.has = None, {PINS: 0, POISON: 0}
        for j in self.others():
            self.send(j, "RELEASE", pins=pins, poison=poison)
        self.send(0, "CONTRACT_COMPLETED", round=self.round, contract=index)
        self.go_on()

    def elf_recv(self, body):
        kind = body.get("type")
        self.seen(body)
        if kind == "LEDGER_REQUEST":
            mine = self.asking is not None and (self.asking, self.id) < (body["ts"], body["sender"])
            if mine and not BROKEN:
                self.deferred.append((body["sender"], body["ts"]))
            else:
                self.send(body["sender"], "LEDGER_REPLY", answers=body["ts"])
        elif kind == "LEDGER_REPLY":
            if body["answers"] == self.asking:
                self.replies.add(body["sender"])
                if len(self.replies) == len(self.others()):
                    self.critical()
        elif kind == "LEDGER_UPDATE":
            if body["contract"]:
                self.taken[body["round"]] = max(self.taken.get(body["round"], 0), body["contract"])
            self.free[PINS] -= body[PINS]
            self.free[POISON] -= body[POISON]
        elif kind == "RELEASE":
            self.free[PINS] += body[PINS]
            self.free[POISON] += body[POISON]
            if self.state == "ELF_WAIT_FOR_RELEASE":
                self.go_on()
        elif kind == "INIT_CONTRACTS":
            self.round, self.contracts, self.active = body["round"], body["contracts"], True
            self.go_on()
        elif kind == "STOP":
            self.active = False
            if body["final"]:
                self.set_state("ELF_DONE")
            elif self.asking is None:
                self.set_state("ELF_IDLE")

    def recv(self, body):
        if self.id == 0:
            self.seen(body)
            self.mayor_recv(body)
        else:
            self.elf_recv(body)


def main():
    node = None
    for raw in sys.stdin:
        if not raw.strip():
            continue
        line = json.loads(raw)
        if line["type"] == "init":
            node = Node(line)
            out({"type": "done", "reinit": True})
        else:
            if line["type"] == "recv":
                node.recv(line["body"])
            out({"type": "done"})
        sys.stdout.flush()


if __name__ == "__main__":
    main()
