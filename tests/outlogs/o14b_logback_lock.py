"""A lock server and two clients, logging as a Java service does with logback: each line the
shape of logstash-logback-encoder's LogstashEncoder (MDC entries at the top level), or with
--nested of logback's own ch.qos.logback.classic.encoder.JsonEncoder (MDC under "mdc"). The MDC
holds strings only, so the vector clock is a string holding its JSON: "vc": "{\"server\":3}".

The first line is the run header, written to the file before logging starts (capacities: cs 1).
--grant-early: the server grants the lock to the second client while the first still holds it.

    python o14b_logback_lock.py > o14b-logback-lock.log
    python o14b_logback_lock.py --grant-early > o14b-logback-lock-early.log
    python o14b_logback_lock.py --nested > o14b-logback-lock-nested.log
"""

import json
import sys

NESTED = "--nested" in sys.argv
EARLY = "--grant-early" in sys.argv
STAMP = 1764637200000  # 2026-12-02T01:00:00Z, in ms
clocks: dict[str, dict[str, int]] = {"server": {}, "c1": {}, "c2": {}}
lines = [json.dumps({"event": "run", "pid": "run", "capacities": {"cs": 1}}, separators=(",", ":"))]
sent: dict[str, dict[str, int]] = {}
sequence = 0


def log(pid: str, text: str, **mdc: str) -> None:
    global sequence
    clock = clocks[pid]
    clock[pid] = clock.get(pid, 0) + 1
    fields = {"pid": pid, **mdc, "vc": json.dumps(clock, separators=(",", ":"))}
    if NESTED:  # logback's JsonEncoder
        record = {
            "sequenceNumber": sequence,
            "timestamp": STAMP + sequence,
            "nanoseconds": 0,
            "level": "INFO",
            "threadName": f"{pid}-worker",
            "loggerName": f"lab.lock.{pid}",
            "context": {"name": "default", "birthdate": STAMP, "properties": {}},
            "mdc": fields,
            "message": text,
            "throwable": None,
        }
    else:  # logstash-logback-encoder
        record = {
            "@timestamp": f"2026-12-02T01:00:00.{sequence:03d}Z",
            "@version": "1",
            "message": text,
            "logger_name": f"lab.lock.{pid}",
            "thread_name": f"{pid}-worker",
            "level": "INFO",
            "level_value": 20000,
            **fields,
        }
    sequence += 1
    lines.append(json.dumps(record, separators=(",", ":")))


def send(pid: str, to: str, kind: str, n: int) -> None:
    ident = f"{pid}-{n}"
    log(pid, f"{kind} to {to}", event="send", type=kind, to=to, id=ident)
    sent[ident] = dict(clocks[pid])


def recv(pid: str, sender: str, kind: str, n: int) -> None:
    ident = f"{sender}-{n}"
    clock = clocks[pid]
    for p, c in sent.pop(ident).items():
        clock[p] = max(clock.get(p, 0), c)
    log(pid, f"{kind} from {sender}", event="recv", type=kind, id=ident, **{"from": sender})


for client, n in (("c1", 1), ("c2", 1)):
    log(client, "wants the lock", event="request", resource="cs")
    send(client, "server", "REQUEST", n)
recv("server", "c1", "REQUEST", 1)
recv("server", "c2", "REQUEST", 1)
send("server", "c1", "GRANT", 1)
recv("c1", "server", "GRANT", 1)
log("c1", "holds the lock", event="enter", resource="cs")
if EARLY:  # the bug: the queue's head is granted without waiting for the holder's release
    send("server", "c2", "GRANT", 2)
    recv("c2", "server", "GRANT", 2)
    log("c2", "holds the lock", event="enter", resource="cs")
log("c1", "releases the lock", event="exit", resource="cs")
send("c1", "server", "RELEASE", 2)
recv("server", "c1", "RELEASE", 2)
if not EARLY:
    send("server", "c2", "GRANT", 2)
    recv("c2", "server", "GRANT", 2)
    log("c2", "holds the lock", event="enter", resource="cs")
log("c2", "releases the lock", event="exit", resource="cs")
send("c2", "server", "RELEASE", 2)
recv("server", "c2", "RELEASE", 2)
print("\n".join(lines))
