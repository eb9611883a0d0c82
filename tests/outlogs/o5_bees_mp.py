"""Mason bees with multiprocessing: reeds and flowers are tokens passed round a ring of bees.
Every bee appends its own events, in batches, to one shared log (O_APPEND), so the file holds
the bees' lines interleaved out of causal order. usage: bees_mp.py OUT P K T EGGS COCOONS [broken]"""

import json
import multiprocessing as mp
import os
import queue
import random
import sys
import time


def bee(i, P, K, T, E, C, target, inboxes, total, lock, out, broken):
    me, vc, nsent, lines = f"bee-{i}", {}, 0, []
    fd = os.open(out, os.O_WRONLY | os.O_APPEND)
    rng = random.Random(i)

    def log(kind, **f):
        vc[me] = vc.get(me, 0) + 1
        lines.append(json.dumps({"event": kind, "pid": me, "vc": dict(vc), **f}) + "\n")
        if len(lines) >= rng.randint(1, 6):
            flush()

    def flush():
        if lines:
            os.write(fd, "".join(lines).encode())
            lines.clear()

    def send(to, body):
        nonlocal nsent
        nsent += 1
        mid = f"{me}#{nsent}"
        log("send", type=body["type"], to=f"bee-{to}", id=mid, msg=body)
        inboxes[to - 1].put((mid, me, dict(vc), body))

    nxt = i % P + 1
    reed, eggs, state = None, 0, "REST"
    if i == 1:
        for r in range(1, T + 1):
            send(nxt, {"type": "REED", "reed": r, "cocoons": 0})
        for _ in range(K):
            send(nxt, {"type": "FLOWER"})
    log("state", state="WAIT_REED")
    while True:
        try:
            mid, sender, clock, body = inboxes[i - 1].get(timeout=0.05)
        except queue.Empty:
            if total.value >= target:
                break
            continue
        for p, c in clock.items():
            vc[p] = max(vc.get(p, 0), c)
        log("recv", type=body["type"], **{"from": sender}, id=mid)
        if total.value >= target:
            continue  # everything is laid: tokens stop here
        if body["type"] == "REED" and state == "REST" and body["cocoons"] < C:
            reed, state = body, "ON_REED"
            log("enter", resource=f"reed:{reed['reed']}")
            log("state", state="ON_REED")
            continue
        if body["type"] == "FLOWER" and state == "ON_REED":
            if not (broken and eggs == 1):
                log("enter", resource="flower")
                time.sleep(rng.random() * 0.002)
                log("exit", resource="flower")
            eggs += 1
            reed["cocoons"] += 1
            log("egg", reed=reed["reed"], count=eggs, in_reed=reed["cocoons"])
            with lock:
                total.value += 1
            if eggs == E:
                log("exit", resource=f"reed:{reed['reed']}")
                log("death", eggs=eggs)
                log("state", state="DEAD")
                state = "DEAD"
                send(nxt, reed)
        if total.value < target:
            send(nxt, body)
    if state == "REST":
        log("state", state="RETIRED")
    flush()


if __name__ == "__main__":
    out, P, K, T, E, C = sys.argv[1], *map(int, sys.argv[2:7])
    broken = sys.argv[7:] == ["broken"]
    target = min(E * P, C * T)
    with open(out, "w") as f:
        f.write(
            json.dumps(
                {
                    "event": "run",
                    "pid": "run",
                    "problem": "bees",
                    "processes": {str(i): f"bee-{i}" for i in range(1, P + 1)},
                    "capacities": {"reed:*": 1, "flower": K},
                    "params": {"bees": P, "flowers": K, "reeds": T, "eggs": E, "cocoons": C},
                }
            )
            + "\n"
        )
    inboxes = [mp.Queue() for _ in range(P)]
    total, lock = mp.Value("i", 0), mp.Lock()
    procs = [
        mp.Process(target=bee, args=(i, P, K, T, E, C, target, inboxes, total, lock, out, broken))
        for i in range(1, P + 1)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
