"""Lamport's mutual exclusion as a mutexlab node, written outside mutexlab from
docs/test-any-program.md: a request queue, an ACK for every REQUEST, entry once its request heads
the queue and every peer has sent something later. It needs FIFO links: under --reorder an ACK
overtakes its sender's earlier REQUEST and two nodes enter."""

import json
import sys


def out(m):
    sys.stdout.write(json.dumps(m) + "\n")


for text in sys.stdin:
    m = json.loads(text)
    t = m["type"]
    if t == "init":
        me, peers = m["id"], m["peers"]
        clock = 0
        queue = set()
        latest = {p: 0 for p in peers}
        mine = None
        inside = False
        out({"type": "done", "reinit": True})
        sys.stdout.flush()
        continue
    if t == "request":
        clock += 1
        mine = (clock, me)
        queue.add(mine)
        for p in peers:
            out({"type": "send", "to": p, "body": {"type": "REQUEST", "ts": clock}})
    elif t == "release":
        inside = False
        queue.discard(mine)
        mine = None
        clock += 1
        out({"type": "exit", "resource": "cs"})
        for p in peers:
            out({"type": "send", "to": p, "body": {"type": "RELEASE", "ts": clock}})
    else:
        b, f = m["body"], m["from"]
        clock = max(clock, b["ts"]) + 1
        latest[f] = max(latest[f], b["ts"])
        if b["type"] == "REQUEST":
            queue.add((b["ts"], f))
            clock += 1
            out({"type": "send", "to": f, "body": {"type": "ACK", "ts": clock}})
        elif b["type"] == "RELEASE":
            queue = {q for q in queue if q[1] != f}
    if mine and not inside and min(queue) == mine and all(latest[p] > mine[0] for p in peers):
        inside = True
        out({"type": "enter", "resource": "cs"})
    out({"type": "done"})
    sys.stdout.flush()
