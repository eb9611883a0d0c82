"""k-mutual exclusion by a coordinator thread handing out K permits; workers are threads.

Every event is logged through the standard `logging` module, one line a record:
2026-11-30 11:30:00,123 INFO [worker-2] vc={"coordinator": 4, "worker-2": 3} enter pool
python3 o8_kmutex_logging.py OUT WORKERS ROUNDS K [broken]   (broken: the coordinator hands out K+1)
"""

import json
import logging
import queue
import random
import sys
import threading
import time

out, workers, rounds, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
broken = sys.argv[5:] == ["broken"]
logging.basicConfig(
    filename=out,
    filemode="w",
    level=logging.INFO,
    format="%(asctime)s %(levelname)s [%(threadName)s] %(message)s",
)
log = logging.getLogger("kmutex")
boxes = {name: queue.Queue() for name in ["coordinator"] + [f"worker-{i}" for i in range(workers)]}


class Clock:
    def __init__(self, me):
        self.me, self.vc = me, {}

    def tick(self, what):
        self.vc[self.me] = self.vc.get(self.me, 0) + 1
        log.info("vc=%s %s", json.dumps(self.vc), what)

    def send(self, to, kind):
        self.tick(f"send {kind} to {to}")
        boxes[to].put((self.me, kind, dict(self.vc)))

    def recv(self):
        sender, kind, clock = boxes[self.me].get()
        for p, c in clock.items():
            self.vc[p] = max(self.vc.get(p, 0), c)
        self.tick(f"recv {kind} from {sender}")
        return sender, kind


def coordinator():
    c, free, waiting, done = Clock("coordinator"), k + (1 if broken else 0), [], 0
    while done < workers * rounds:
        sender, kind = c.recv()
        if kind == "ASK":
            waiting.append(sender)
        else:
            free, done = free + 1, done + 1
        while free and waiting:
            free -= 1
            c.send(waiting.pop(0), "PERMIT")


def worker(me):
    c = Clock(me)
    for _ in range(rounds):
        c.tick("request pool")
        c.send("coordinator", "ASK")
        c.recv()
        c.tick("enter pool")
        time.sleep(random.uniform(0.001, 0.005))
        c.tick("exit pool")
        c.send("coordinator", "DONE")


threads = [threading.Thread(target=coordinator, name="coordinator")]
threads += [
    threading.Thread(target=worker, args=(f"worker-{i}",), name=f"worker-{i}") for i in range(workers)
]
for t in threads:
    t.start()
for t in threads:
    t.join()
