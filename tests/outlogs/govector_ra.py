"""Ricart-Agrawala over threads, each process writing its own GoVector log (NAME-Log.txt) as
GoVector does (``NAME {"NAME":1, ...}`` then the message); it never imports mutexlab.
``python3 govector_ra.py DIR NODES ROUNDS [broken]``, then ``cat DIR/*-Log.txt > all.log``:
how govector-ra.log (3 2) and govector-ra-broken.log (3 2 broken: a request always answered
at once, so two may enter together) were made."""

import json
import os
import queue
import sys
import threading

where, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
broken = "broken" in sys.argv[4:]
os.makedirs(where, exist_ok=True)
names = [f"proc{i}" for i in range(n)]
inbox = {p: queue.Queue() for p in names}


class GoVec:
    def __init__(self, me):
        self.me, self.vc = me, {me: 0}
        self.out = open(os.path.join(where, f"{me}-Log.txt"), "w")  # noqa: SIM115 - closed at the end
        self.log("Initialization Complete")

    def log(self, msg):
        self.vc[self.me] += 1
        self.out.write(f"{self.me} {json.dumps(self.vc)}\n{msg}\n")

    def prepare_send(self, msg):
        self.log(msg)
        return dict(self.vc)

    def unpack_receive(self, msg, vc):
        for k, v in vc.items():
            self.vc[k] = max(self.vc.get(k, 0), v)
        self.log(msg)


def node(i):
    me, g = names[i], GoVec(names[i])
    state = {"lamport": 0, "mine": None, "replies": 0}
    deferred, finished = [], set()
    others = [p for p in names if p != me]

    def reply(to):
        inbox[to].put(("REPLY", me, state["lamport"], g.prepare_send(f"Sending REPLY to {to}")))

    def handle(kind, frm, ts, vc):
        state["lamport"] = max(state["lamport"], ts) + 1
        g.unpack_receive(f"Received {kind} from {frm}", vc)
        if kind == "REQ":
            mine = state["mine"]
            if mine is not None and not broken and mine < (ts, frm):
                deferred.append(frm)
            else:
                reply(frm)
        elif kind == "REPLY":
            state["replies"] += 1
        else:
            finished.add(frm)

    for _ in range(rounds):
        state["lamport"] += 1
        state["mine"], state["replies"] = (state["lamport"], me), 0
        g.log("request cs")
        for p in others:
            inbox[p].put(("REQ", me, state["lamport"], g.prepare_send(f"Sending REQ to {p}")))
        while state["replies"] < len(others):
            handle(*inbox[me].get())
        g.log("enter cs")
        g.log("exit cs")
        state["mine"] = None
        for p in deferred:
            reply(p)
        deferred.clear()
    for p in others:
        inbox[p].put(("DONE", me, state["lamport"], g.prepare_send(f"Sending DONE to {p}")))
    while len(finished) < len(others):
        handle(*inbox[me].get())
    g.out.close()


threads = [threading.Thread(target=node, args=(i,)) for i in range(n)]
for t in threads:
    t.start()
for t in threads:
    t.join()
