"""A token ring of threads logging with loguru (it never imports mutexlab): each node keeps a vector
clock in loguru's ``extra`` and the format puts it before the message, as ``str(dict)`` writes it
(``{'n0': 3, 'n1': 1}``: Python's quotes, not JSON). The sink is coloured (``colorize=True``, as a
terminal shows it; ``tee`` or ``script`` keep the colour codes in the file). A second sink writes
the same records as loguru's ``serialize=True`` JSON (the fields nested under ``record``).

python3 o16_loguru_ring.py OUT NODES ROUNDS [early] writes OUT.log and OUT.json.
early: a node enters before the token reaches it."""

import queue
import sys
import threading

from loguru import logger

out, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
early = sys.argv[4:] == ["early"]
FORMAT = (
    "<green>{time:YYYY-MM-DD HH:mm:ss.SSS}</green> | <level>{level: <8}</level> | "
    "<cyan>{extra[node]}</cyan> {extra[vc]} | <level>{message}</level>"
)
logger.remove()
logger.add(out + ".log", format=FORMAT, colorize=True, enqueue=False)
logger.add(out + ".json", serialize=True, enqueue=False)
inbox = [queue.Queue() for _ in range(n)]
turn = threading.Lock()  # one record at a time: each node's records in its clock's order


def node(i):
    me, vc = f"n{i}", {}
    log = logger.bind(node=me)

    def say(message):
        with turn:
            vc[me] = vc.get(me, 0) + 1
            log.bind(vc=dict(vc)).info(message)

    for r in range(rounds):
        if early:
            say("request cs")
            say("enter cs")
        if r > 0 or i > 0:
            clock, sender = inbox[i].get()
            for p, c in clock.items():
                vc[p] = max(vc.get(p, 0), c)
            say(f"token from {sender}")
        if not early:
            say("request cs")
            say("enter cs")
        say("exit cs")
        say(f"token to n{(i + 1) % n}")
        inbox[(i + 1) % n].put((dict(vc), me))
    if i == 0:
        clock, sender = inbox[0].get()  # the last token comes home
        for p, c in clock.items():
            vc[p] = max(vc.get(p, 0), c)
        say(f"token from {sender}, ring done")


threads = [threading.Thread(target=node, args=(i,), name=f"n{i}") for i in range(n)]
for t in threads:
    t.start()
for t in threads:
    t.join()
