#!/usr/bin/env python3
"""Naimi-Trehel token mutual exclusion (1987; a dynamic tree of `last` pointers and a `next`
queue) for mutexlab's node protocol, docs/test-any-program.md.

The algorithm runs in a worker process (multiprocessing, the "spawn" start method, so it works
the same on macOS and Windows); the main process only moves lines: each input goes down a Pipe,
the worker sends back the list of output objects, the main process prints them and the done.

Node 1 holds the token at the start; everyone else's `last` points at node 1.

    --forget-next   on leaving, hands the token to `next` but does not clear it (the next
                    release hands it again: two tokens)
"""

import json
import multiprocessing as mp
import sys


class NaimiTrehel:
    def __init__(self):
        self.me = 0
        self.last = None  # probable owner; None: I am the root of the tree
        self.next = None  # who gets the token after me
        self.token = False
        self.requesting = False
        self.out = []

    def reset(self, me):
        self.me = me
        self.token = me == 1
        self.last = None if me == 1 else 1
        self.next = None
        self.requesting = False

    def send(self, to, kind, **fields):
        self.out.append({"type": "send", "to": to, "body": {"type": kind, **fields}})

    def enter(self):
        self.out.append({"type": "enter", "resource": "cs"})
        self.out.append({"type": "state", "state": "HELD"})

    def on_request(self):
        self.requesting = True
        self.out.append({"type": "state", "state": "WANTED"})
        if self.last is not None:
            self.send(self.last, "REQUEST", origin=self.me)
            self.last = None
        elif self.token:
            self.enter()

    def on_release(self, forget_next):
        self.requesting = False
        self.out.append({"type": "exit", "resource": "cs"})
        self.out.append({"type": "state", "state": "RELEASED"})
        if self.next is not None:
            self.send(self.next, "TOKEN")
            self.token = False
            if not forget_next:
                self.next = None

    def on_message(self, sender, body):
        if body["type"] == "REQUEST":
            origin = body["origin"]
            if self.last is None:
                if self.requesting:
                    self.next = origin
                else:
                    self.token = False
                    self.send(origin, "TOKEN")
            else:
                self.send(self.last, "REQUEST", origin=origin)
            self.last = origin
        elif body["type"] == "TOKEN":
            self.token = True
            if self.requesting:
                self.enter()


def worker(conn, forget_next):
    node = NaimiTrehel()
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        node.out = []
        kind = msg["type"]
        if kind == "init":
            node.reset(msg["id"])
        elif kind == "request":
            node.on_request()
        elif kind == "release":
            node.on_release(forget_next)
        elif kind == "recv":
            node.on_message(msg["from"], msg["body"])
        conn.send(node.out)


def main():
    ctx = mp.get_context("spawn")
    here, there = ctx.Pipe()
    proc = ctx.Process(target=worker, args=(there, "--forget-next" in sys.argv), daemon=True)
    proc.start()
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        here.send(msg)
        for out in here.recv():
            print(json.dumps(out))
        done = {"type": "done", "reinit": True} if msg["type"] == "init" else {"type": "done"}
        print(json.dumps(done), flush=True)


if __name__ == "__main__":
    main()
