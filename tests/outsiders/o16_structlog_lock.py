"""A lock server and its clients as threads, logging with structlog's JSONRenderer to stdout (it
never imports mutexlab). structlog keeps the message under "event", so ``log.info("enter",
resource="cs")`` writes mutexlab's clock-free event shape beside structlog's "level" and
"timestamp"; a receive names its sender with ``**{"from": …}`` (``from`` is Python's keyword).

python3 o16_structlog_lock.py CLIENTS ROUNDS [eager] > OUT 2>&1

The first client's thread dies after its work (a goodbye it waits for never comes): its traceback
goes to stderr, into OUT among the events, as ``2>&1`` puts it. eager: the server grants every
request as it arrives, holder or not."""

import queue
import sys
import threading
import time

import structlog

structlog.configure(
    processors=[
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso"),
        structlog.processors.JSONRenderer(),
    ],
    logger_factory=structlog.PrintLoggerFactory(sys.stdout),
)
clients, rounds = int(sys.argv[1]), int(sys.argv[2])
eager = sys.argv[3:] == ["eager"]
boxes = {name: queue.Queue() for name in ["lockd"] + [f"c{i}" for i in range(1, clients + 1)]}
sent = {name: 0 for name in boxes}


def send(log, me, to, kind):
    sent[me] += 1
    msg = f"{me}#{sent[me]}"
    log.info("send", type=kind, to=to, id=msg)
    boxes[to].put((kind, me, msg))


def receive(log, me, timeout=None):
    kind, sender, msg = boxes[me].get(timeout=timeout)
    log.info("recv", type=kind, id=msg, **{"from": sender})
    return kind, sender


def server():
    log = structlog.get_logger().bind(pid="lockd")
    holder, waiting = None, []
    for _ in range(2 * clients * rounds):
        kind, sender = receive(log, "lockd")
        if kind == "REQUEST":
            if holder is None or eager:
                holder = sender
                send(log, "lockd", sender, "GRANT")
            else:
                waiting.append(sender)
        elif kind == "RELEASE":
            holder = waiting.pop(0) if waiting else None
            if holder is not None:
                send(log, "lockd", holder, "GRANT")


def client(me):
    log = structlog.get_logger().bind(pid=me)
    for _ in range(rounds):
        log.info("request", resource="cs")
        send(log, me, "lockd", "REQUEST")
        receive(log, me)
        log.info("enter", resource="cs")
        time.sleep(0.002)
        log.info("exit", resource="cs")
        send(log, me, "lockd", "RELEASE")
    if me == "c1":
        receive(log, me, timeout=0.01)  # a goodbye nobody sends: queue.Empty, the thread dies


threads = [threading.Thread(target=server)]
threads += [threading.Thread(target=client, args=(f"c{i}",)) for i in range(1, clients + 1)]
for t in threads:
    t.start()
for t in threads:
    t.join()
