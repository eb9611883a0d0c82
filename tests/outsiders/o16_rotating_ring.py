"""A token ring of threads logging with Python's ``logging`` through a RotatingFileHandler (it
never imports mutexlab): each record one line, ``TIME NODE {vector clock as JSON} message``; when
the file passes MAXBYTES it is renamed OUT.1 (OUT.1 to OUT.2, …) and a new OUT begun, so the
newest file starts in the middle of the run.

python3 o16_rotating_ring.py OUT NODES ROUNDS MAXBYTES [early]

early: node n1 enters before the token reaches it."""

import json
import logging
import logging.handlers
import queue
import sys
import threading

out, n, rounds, maxbytes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
early = sys.argv[5:] == ["early"]
handler = logging.handlers.RotatingFileHandler(out, maxBytes=maxbytes, backupCount=9)
handler.setFormatter(logging.Formatter("%(asctime)s %(node)s %(vc)s %(message)s"))
log = logging.getLogger("ring")
log.addHandler(handler)
log.setLevel(logging.INFO)
inbox = [queue.Queue() for _ in range(n)]
turn = threading.Lock()


def node(i):
    me, vc = f"n{i}", {}

    def say(message):
        with turn:  # tick and write together: the file keeps each node's clock order
            vc[me] = vc.get(me, 0) + 1
            log.info(message, extra={"node": me, "vc": json.dumps(vc)})

    def critical():
        for word in ("request", "enter", "exit"):
            say(f"{word} cs")

    for r in range(rounds):
        jumps = early and i == 1 and r == 0
        if jumps:
            critical()
        if r > 0 or i > 0:
            clock, sender = inbox[i].get()
            with turn:
                for p, c in clock.items():
                    vc[p] = max(vc.get(p, 0), c)
            say(f"token from {sender}")
        if not jumps:
            critical()
        say(f"token to n{(i + 1) % n}")
        with turn:
            clock = dict(vc)
        inbox[(i + 1) % n].put((clock, me))
    if i == 0:
        clock, sender = inbox[0].get()
        with turn:
            for p, c in clock.items():
                vc[p] = max(vc.get(p, 0), c)
        say(f"token from {sender}, ring done")


threads = [threading.Thread(target=node, args=(i,)) for i in range(n)]
for t in threads:
    t.start()
for t in threads:
    t.join()
