"""Three small systems, each logging as its own stack does, with the fields `verify` needs
(request/enter/exit of a resource, each message's send and receive with an id, and where the
stack has room for it a vector clock over process names):

* lockd (mutex, Java): clients c1, c2 ask server s for the lock; log4j2's JsonLayout left at its
  default, compact="false": each event one JSON object over many lines (clock-free);
* desk (k-mutex, permits: 2): workers w1..w3 ask desk d for one of two permits; a CSV file, its
  vector clock one quoted column written `d:2;w1:1`, as a C program's fprintf makes it;
* table (philosophers, Go with logrus): forks fork:1..3 each held by one philosopher at a time,
  passed by messages; logfmt lines (clock-free);
* meter (mutex, C with sd_journal_send): `journalctl -o json` of it, the fields upper case;
* ledger (k-mutex, permits: 2, C# with Serilog): CLEF lines (`@t`, `@mt`), properties PascalCase;
* beam (mutex, Elixir Logger): the default console format (a blank line before each record,
  `$time $metadata[$level] $message`), the vector clock JSON in the `vc` metadata.

python3 o15_stacks.py SYSTEM [broken] > LOG. broken: lockd's and meter's server grants c2 while
c1 holds; desk and ledger grant a third permit while two are out; table's phil-2 takes fork:2
before phil-1 gave it back; beam's b0 grants b2 while b1 holds."""

import json
import sys


class Run:
    """Events in a causal order, each with its process's vector clock (ticked once an event; a
    receive first merges the clock its message carried)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict, dict]] = []
        self.clocks: dict[str, dict[str, int]] = {}
        self.carried: dict[str, dict[str, int]] = {}
        self.sent = 0

    def log(self, pid: str, kind: str, **fields) -> None:
        vc = self.clocks.setdefault(pid, {})
        if kind == "recv":
            for p, c in self.carried.pop(fields["id"]).items():
                vc[p] = max(vc.get(p, 0), c)
        vc[pid] = vc.get(pid, 0) + 1
        if kind == "send":
            self.carried[fields["id"]] = dict(vc)
        self.events.append((pid, kind, fields, dict(vc)))

    def message(self, sender: str, receiver: str, kind: str) -> None:
        self.sent += 1
        mid = f"{sender}-{self.sent}"
        self.log(sender, "send", type=kind, to=receiver, id=mid)
        self.log(receiver, "recv", type=kind, id=mid, **{"from": sender})


def lock_server(broken: bool, server: str = "s", clients: tuple[str, ...] = ("c1", "c2")) -> Run:
    run = Run()
    for c in clients:
        run.log(c, "request", resource="cs")
    run.message(clients[0], server, "REQUEST")
    run.message(server, clients[0], "GRANT")
    run.log(clients[0], "enter", resource="cs")
    run.message(clients[1], server, "REQUEST")
    if broken:  # granted at once: the server forgot c1 holds the lock
        run.message(server, clients[1], "GRANT")
        run.log(clients[1], "enter", resource="cs")
    run.log(clients[0], "exit", resource="cs")
    run.message(clients[0], server, "RELEASE")
    if not broken:
        run.message(server, clients[1], "GRANT")
        run.log(clients[1], "enter", resource="cs")
    run.log(clients[1], "exit", resource="cs")
    run.message(clients[1], server, "RELEASE")
    return run


def permit_desk(broken: bool, desk: str = "d", workers: tuple[str, ...] = ("w1", "w2", "w3")) -> Run:
    run = Run()
    for w in workers:
        run.log(w, "request", resource="permit")
        run.message(w, desk, "ASK")
    for w in workers[:2]:
        run.message(desk, w, "PERMIT")
        run.log(w, "enter", resource="permit")
    if broken:  # a third permit out while two are held
        run.message(desk, workers[2], "PERMIT")
        run.log(workers[2], "enter", resource="permit")
    run.log(workers[0], "exit", resource="permit")
    run.message(workers[0], desk, "RETURN")
    if not broken:
        run.message(desk, workers[2], "PERMIT")
        run.log(workers[2], "enter", resource="permit")
    for w in workers[1:]:
        run.log(w, "exit", resource="permit")
        run.message(w, desk, "RETURN")
    return run


def table(broken: bool) -> Run:
    """phil-i eats with fork:i and fork:i+1 (fork:3 and fork:1 for phil-3); a fork passes between
    neighbours as a FORK message. phil-1 eats first, then phil-2, then phil-3."""
    run = Run()
    phils = ("phil-1", "phil-2", "phil-3")
    forks = {"phil-1": ("fork:1", "fork:2"), "phil-2": ("fork:2", "fork:3"), "phil-3": ("fork:3", "fork:1")}

    def eat(p: str) -> None:
        for f in forks[p]:
            run.log(p, "enter", resource=f)
        for f in forks[p]:
            run.log(p, "exit", resource=f)

    for p in phils:
        for f in forks[p]:
            run.log(p, "request", resource=f)
    if broken:  # phil-2 takes fork:2 while phil-1 still eats with it
        run.log("phil-1", "enter", resource="fork:1")
        run.log("phil-1", "enter", resource="fork:2")
        eat("phil-2")
        run.log("phil-1", "exit", resource="fork:1")
        run.log("phil-1", "exit", resource="fork:2")
        run.message("phil-1", "phil-2", "FORK")
    else:
        eat("phil-1")
        run.message("phil-1", "phil-2", "FORK")
        eat("phil-2")
    run.message("phil-2", "phil-3", "FORK")
    run.message("phil-1", "phil-3", "FORK")
    eat("phil-3")
    return run


def ts(i: int) -> str:
    return f"2026-12-02T11:00:{i // 1000:02d}.{i % 1000:03d}Z"


def write_lockd(run: Run) -> None:  # log4j2 JsonLayout, compact="false": objects over lines
    for i, (pid, kind, fields, _) in enumerate(run.events):
        obj = {
            "instant": {"epochSecond": 1764673200 + i // 1000, "nanoOfSecond": (i % 1000) * 10**6},
            "thread": f"{pid}-main",
            "level": "INFO",
            "loggerName": f"lab.lockd.{'Server' if pid == 's' else 'Client'}",
            "message": f"{kind} {fields.get('resource') or fields.get('type')}",
            "endOfBatch": False,
            "loggerFqcn": "org.apache.logging.log4j.spi.AbstractLogger",
            "contextMap": {},
            "threadId": 11 + i % 3,
            "threadPriority": 5,
            "pid": pid,
            "event": kind,
            **fields,
        }
        print(json.dumps(obj, indent=2))


def write_desk(run: Run) -> None:  # CSV, the clock a quoted column `d:2;w1:1`
    print("ts,process,event,clock")
    for i, (pid, kind, fields, vc) in enumerate(run.events):
        text = f"{kind} {fields['resource']}" if "resource" in fields else f"{kind} {fields['type']}"
        print(f'{ts(i)},{pid},{text},"{";".join(f"{p}:{c}" for p, c in sorted(vc.items()))}"')


def write_table(run: Run) -> None:  # logrus's TextFormatter with DisableColors: logfmt
    for i, (pid, kind, fields, _) in enumerate(run.events):
        pairs = " ".join(f"{k}={v}" for k, v in fields.items())
        print(f'time="{ts(i)}" level=info msg="{kind}" pid={pid} event={kind} {pairs}')


def write_meter(run: Run) -> None:  # journalctl -o json of sd_journal_send("EVENT=%s", …)
    for i, (pid, kind, fields, _) in enumerate(run.events):
        entry = {
            "__CURSOR": f"s=6c1f;i={0x1A00 + i:x};b=9e2d;m={i:x};t=61f0;x=77aa",
            "__REALTIME_TIMESTAMP": str(1764673200000000 + i * 1000),
            "__MONOTONIC_TIMESTAMP": str(8800000000 + i * 1000),
            "_BOOT_ID": "9e2d",
            "PRIORITY": "6",
            "SYSLOG_IDENTIFIER": "meter",
            "_PID": str(2100 + ["s", "c1", "c2"].index(pid)),
            "_COMM": "meter",
            "MESSAGE": f"{kind} {fields.get('resource') or fields.get('type')}",
            "PID": pid,
            "EVENT": kind,
            **{k.upper(): v for k, v in fields.items()},
        }
        print(json.dumps(entry, separators=(",", ":")))


def write_ledger(run: Run) -> None:  # Serilog's CompactJsonFormatter: CLEF, PascalCase properties
    for i, (pid, kind, fields, _) in enumerate(run.events):
        entry = {"@t": ts(i), "@mt": "{Pid} {Event} {Resource}", "Pid": pid, "Event": kind}
        entry.update({k.capitalize(): v for k, v in fields.items()})
        entry["SourceContext"] = "Ledger.Permits"
        print(json.dumps(entry, separators=(",", ":")))


def write_beam(run: Run) -> None:  # Elixir Logger's default: "\n$time $metadata[$level] $message\n"
    for i, (pid, kind, fields, vc) in enumerate(run.events):
        text = f"{kind} {fields['resource']}" if "resource" in fields else f"{kind} {fields['type']}"
        clock = json.dumps(vc, separators=(",", ":"))
        print(
            f"\n11:00:{i // 1000:02d}.{i % 1000:03d} pid=<0.{140 + i % 7}.0> node={pid} vc={clock} [info] {text}"
        )


SYSTEMS = {
    "lockd": (lambda b: lock_server(b), write_lockd),
    "desk": (lambda b: permit_desk(b), write_desk),
    "table": (table, write_table),
    "meter": (lambda b: lock_server(b), write_meter),
    "ledger": (lambda b: permit_desk(b, "ledger", ("t1", "t2", "t3")), write_ledger),
    "beam": (lambda b: lock_server(b, "b0", ("b1", "b2")), write_beam),
}

if __name__ == "__main__":
    made, write = SYSTEMS[sys.argv[1]]
    write(made("broken" in sys.argv[2:]))
