"""Ricart-Agrawala between processes (multiprocessing, one Queue each), clock-free JSON Lines on
the shared standard output: every process prints its own events, unbuffered, as they happen.

python3 o8_ra_processes.py NODES ROUNDS [eager|crash] > OUT
eager: a node answers every request at once, even while inside; crash: node 2 is killed inside
the critical section in its second round, in the middle of writing a line.
"""

import json
import multiprocessing as mp
import os
import sys


def node(me, n, rounds, boxes, mode):
    name, lamport, seq, deferred, replies = f"p{me}", 0, 0, [], 0
    state, my_ts = "idle", None
    done_peers = 0

    def out(event, **fields):
        os.write(1, (json.dumps({"event": event, **fields, "pid": name, "lamport": lamport}) + "\n").encode())

    def send(to, kind, **body):
        nonlocal seq, lamport
        lamport += 1
        seq += 1
        mid = f"{name}.{seq}"
        out("send", type=kind, to=f"p{to}", id=mid)
        boxes[to].put((me, kind, lamport, mid, body))

    def handle(msg):
        nonlocal lamport, replies, done_peers
        sender, kind, ts, mid, body = msg
        lamport = max(lamport, ts) + 1
        out("recv", type=kind, **{"from": f"p{sender}"}, id=mid)
        if kind == "REQUEST":
            mine_first = state == "held" or (state == "wanted" and (my_ts, me) < (body["ts"], sender))
            if mine_first and mode != "eager":
                deferred.append(sender)
            else:
                send(sender, "REPLY")
        elif kind == "REPLY":
            replies += 1
        elif kind == "DONE":
            done_peers += 1

    for r in range(rounds):
        state, my_ts, replies = "wanted", lamport + 1, 0
        out("request", resource="cs")
        for p in range(n):
            if p != me:
                send(p, "REQUEST", ts=my_ts)
        while replies < n - 1:
            handle(boxes[me].get())
        state = "held"
        out("enter", resource="cs")
        while not boxes[me].empty():
            handle(boxes[me].get())
        if mode == "crash" and me == 2 and r == 1:
            os.write(1, b'{"event": "exit", "resource": "c')
            os._exit(9)
        out("exit", resource="cs")
        state = "idle"
        for p in deferred:
            send(p, "REPLY")
        deferred.clear()
    for p in range(n):
        if p != me:
            send(p, "DONE")
    while done_peers < n - 1:
        handle(boxes[me].get())


if __name__ == "__main__":
    n, rounds, mode = int(sys.argv[1]), int(sys.argv[2]), (sys.argv[3:] or [""])[0]
    boxes = [mp.Queue() for _ in range(n)]
    procs = [mp.Process(target=node, args=(i, n, rounds, boxes, mode)) for i in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=10)
    for p in procs:
        if p.is_alive():
            p.kill()
