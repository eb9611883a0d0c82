#!/usr/bin/env python3
"""Central-server mutex, node 1 the coordinator, written from the protocol doc only.

Every node starts a "metrics agent" at init -- fork, setsid, fork again, the classic daemon --
which appends a heartbeat to the file named by argv[1] every 50 ms, forever. A client (any node
but 1) that has made all its requests has nothing left to do: once it has answered its last
release it exits by itself, status 0, and leaves its agent behind.
"""

import json
import os
import sys
import time


def daemonize(path):
    ready_r, ready_w = os.pipe()  # the agent says "up" once it has written its first heartbeat
    first = os.fork()
    if first:
        os.close(ready_w)
        os.waitpid(first, 0)
        os.read(ready_r, 1)
        os.close(ready_r)
        return
    os.close(ready_r)
    os.setsid()
    if os.fork():
        os._exit(0)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    while True:
        with open(path, "a") as f:
            f.write(f"{os.getpid()} {time.time()}\n")
        if ready_w is not None:
            os.write(ready_w, b"u")
            os.close(ready_w)
            ready_w = None
        time.sleep(0.05)


def out(**obj):
    sys.stdout.write(json.dumps(obj) + "\n")


me, left, queue, holder = None, 0, [], None

for raw in sys.stdin:
    msg = json.loads(raw)
    kind = msg["type"]
    if kind == "init":
        me, left = msg["id"], msg["options"]["requests"]
        daemonize(sys.argv[1])
    elif kind == "request":
        left -= 1
        if me == 1:
            if holder is None:
                holder = 1
                out(type="enter", resource="cs")
            else:
                queue.append(1)
        else:
            out(type="send", to=1, body={"type": "ASK"})
    elif kind == "release":
        out(type="exit", resource="cs")
        if me == 1:
            holder = queue.pop(0) if queue else None
            if holder == 1:
                out(type="enter", resource="cs")
            elif holder is not None:
                out(type="send", to=holder, body={"type": "GRANT"})
        else:
            out(type="send", to=1, body={"type": "FREE"})
    elif kind == "recv":
        body = msg["body"]
        if body["type"] == "ASK":
            if holder is None:
                holder = msg["from"]
                out(type="send", to=msg["from"], body={"type": "GRANT"})
            else:
                queue.append(msg["from"])
        elif body["type"] == "FREE":
            holder = queue.pop(0) if queue else None
            if holder == 1:
                out(type="enter", resource="cs")
            elif holder is not None:
                out(type="send", to=holder, body={"type": "GRANT"})
        elif body["type"] == "GRANT":
            out(type="enter", resource="cs")
    out(type="done")
    sys.stdout.flush()
    if kind == "release" and me != 1 and left == 0:
        sys.exit(0)  # all asked and done: nothing left for this client to do
