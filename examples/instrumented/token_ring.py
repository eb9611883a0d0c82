"""A token ring of threads that writes its log for `mutexlab verify` (it never imports mutexlab).

python3 token_ring.py NAME NODES ROUNDS [TOKENS [broken]] writes NAME.log (ShiViz / GoVector,
vector clocks) and NAME.jsonl (clock-free JSON Lines). TOKENS tokens go round: that many nodes
may be inside at once. broken: a node enters before it has a token."""

import json
import queue
import sys
import threading

name, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tokens, broken = int((sys.argv[4:] or [1])[0]), sys.argv[5:] == ["broken"]
inbox = [queue.Queue() for _ in range(n)]
shiviz, jsonl, lock = open(name + ".log", "w"), open(name + ".jsonl", "w"), threading.Lock()


def node(i):
    me, vc = f"node-{i}", {}

    def log(text, event):  # every event ticks my own entry once, then is written
        vc[me] = vc.get(me, 0) + 1
        with lock:
            shiviz.write(f"{me} {json.dumps(vc)}\n{text}\n")
            jsonl.write(json.dumps({**event, "pid": me}) + "\n")

    def critical_section():
        for kind in ("request", "enter", "exit"):
            log(f"{kind} cs", {"event": kind, "resource": "cs"})

    for r in range(rounds):
        if broken:
            critical_section()
        if r > 0 or i >= tokens:  # wait for a token; merge the clock it carries
            clock, sender, msg = inbox[i].get()
            for p, c in clock.items():
                vc[p] = max(vc.get(p, 0), c)
            log(f"token from {sender}", {"event": "recv", "type": "TOKEN", "from": sender, "id": msg})
        if not broken:
            critical_section()
        to, msg = f"node-{(i + 1) % n}", f"{me}#{r}"
        log(f"token to {to}", {"event": "send", "type": "TOKEN", "to": to, "id": msg})
        inbox[(i + 1) % n].put((dict(vc), me, msg))  # the token carries my clock


threads = [threading.Thread(target=node, args=(i,)) for i in range(n)]
for t in threads:
    t.start()
for t in threads:
    t.join()
shiviz.close()
jsonl.close()
