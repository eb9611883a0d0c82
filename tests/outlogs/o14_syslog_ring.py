"""A token ring of threads that logs RFC 5424 syslog lines, as a program handing its records to a
syslog daemon does: <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID STRUCTURED-DATA MSG. Each node
is a host (n1.lab …), keeps a vector clock over host names, and writes it as JSON at the start of
MSG ({"n1.lab":3} enter cs). With `sd`, the clock goes in structured data instead,
[vc@32473 n1.lab="3" n2.lab="1"], and MSG is the description alone.

python3 o14_syslog_ring.py NODES ROUNDS [sd] [early|udp] > LOG
early: n2.lab enters once before its first token; udp: the transport (UDP, as RFC 5426) loses one
datagram, n2.lab's second record."""

import json
import queue
import sys
import threading

n, rounds = int(sys.argv[1]), int(sys.argv[2])
sd, early, udp = "sd" in sys.argv[3:], "early" in sys.argv[3:], "udp" in sys.argv[3:]
out, count, sent = threading.Lock(), [0], {}
inbox = [queue.Queue() for _ in range(n)]


def node(i: int) -> None:
    me, vc = f"n{i + 1}.lab", {}

    def log(msgid: str, text: str) -> None:
        vc[me] = vc.get(me, 0) + 1
        with out:
            count[0] += 1
            sent[me] = sent.get(me, 0) + 1
            if udp and me == "n2.lab" and sent[me] == 2:
                return  # the datagram never arrives
            ts = f"2026-12-02T00:40:{count[0] // 1000:02d}.{count[0] % 1000:03d}Z"
            if sd:
                params = " ".join(f'{h}="{c}"' for h, c in sorted(vc.items()))
                line = f"<134>1 {ts} {me} ring {4700 + i} {msgid} [vc@32473 {params}] {text}"
            else:
                line = f"<134>1 {ts} {me} ring {4700 + i} {msgid} - {json.dumps(vc, separators=(',', ':'))} {text}"
            print(line, flush=True)

    def critical_section() -> None:
        log("CS", "request cs")
        log("CS", "enter cs")
        log("CS", "exit cs")

    for r in range(rounds):
        if early and i == 1 and r == 0:
            critical_section()
        if r > 0 or i > 0:
            clock, sender = inbox[i].get()
            for h, c in clock.items():
                vc[h] = max(vc.get(h, 0), c)
            log("TOKEN", f"token from {sender}")
        if not (early and i == 1 and r == 0):
            critical_section()
        if i == n - 1 and r == rounds - 1:
            break
        log("TOKEN", f"token to n{(i + 1) % n + 1}.lab")
        inbox[(i + 1) % n].put((dict(vc), me))


threads = [threading.Thread(target=node, args=(i,)) for i in range(n)]
for t in threads:
    t.start()
for t in threads:
    t.join()
