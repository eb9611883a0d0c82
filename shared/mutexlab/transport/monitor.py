"""The monitor (docs/architecture.md#monitor): admits the participants, records the trace, decides the run.

It consumes ``mutexlab.<run>.monitor`` (bound to ``#``), so it sees every join, trace event
(``audit.*``, one batch per step of a participant), status (``status.*``) and protocol
message. It

* runs membership (membership.py): pids, P, the welcome that starts the run, refusals (each
  named with its reason in the log, the summary and the verdict's text); a reconnect while
  participants join starts the discovery window again;
* writes the trace (docs/architecture.md#trace-format): the ``run`` header first, then events as they arrive;
* shows progress: one line per state change (a live table on a terminal);
* ends the run when every participant is finished and every sent message was received
  (complete), or when no trace event arrived for ``STALL_TIMEOUT`` seconds (stalled: it names
  who waits for whom, and who went silent);
* then stops the participants, decides safety with ``mutexlab.audit.verify_events`` (the
  code behind ``mutexlab verify``), prints the verdict and a summary, and exits
  0 safe and complete, 1 a safety violation, 2 bad configuration, 3 stalled or never started
  (or no verdict: a trace the audit cannot check).
  A stalled run fails its family's progress checks by construction, so it exits 1 only when
  the capacity audit (safety by happened-before) finds a violation, else 3.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import IO, Any

from ..audit import verify_events
from ..audit.stall import explain_stall
from ..protocols import registry
from ..protocols.registry import build_setup, family_of
from ..setup import ConfigError, Setup
from ..sim.driver import resource_kind
from ..trace import TraceError, TraceWriter
from ..words import article, count
from .membership import REJOIN_GRACE, Member, Roster, role_of
from .rabbit import Bus, Delivery, Topology, TransportError
from .settings import MonitorSettings

log = logging.getLogger("mutexlab.monitor")

EXIT_SAFE, EXIT_VIOLATION, EXIT_CONFIG, EXIT_STALLED = 0, 1, 2, 3
PROTOCOL_EVENTS = {"send", "recv", "enter", "exit", "state"}


# The monitor taps every message of the run: a deep window keeps the broker streaming to it.
MONITOR_PREFETCH = 1000


@dataclass
class Outcome:
    """What the monitor concluded; also the JSON summary."""

    run_id: str
    algorithm: str
    processes: int
    complete: bool
    stalled: dict[str, Any] = field(default_factory=dict)
    safe: bool = True
    verdict: str = ""
    violations: list[str] = field(default_factory=list)
    started: float = 0.0  # the welcome that starts the run, Unix time (duration counts from it)
    duration: float = 0.0
    messages: dict[str, int] = field(default_factory=dict)
    tapped: int = 0
    entries: dict[str, int] = field(default_factory=dict)
    notes: dict[str, int] = field(default_factory=dict)
    states: dict[str, str] = field(default_factory=dict)
    duplicates: int = 0
    redelivered: int = 0
    dead_letters: int = 0
    reconnects: int = 0
    refused: list[dict] = field(default_factory=list)  # {"instance", "role", "reason"} per refused joiner
    trace: str | None = None
    exit_code: int = 0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class Progress:
    """The live view: one plain line per state change (not a terminal, e.g. compose logs), or a
    continuously updated table (a terminal): each participant's state, Lamport clock, entries,
    eggs (bees) or contracts done (elves) and what it waits for; who holds which resource; eggs
    per reed; messages per second (over the last ``WINDOW`` seconds and over the whole run).

    ``table()`` builds the table from what was fed so far; it is pure, so it is testable without
    a terminal. Invariant: holders reflect exactly the enter/exit events seen (units summed).
    """

    WINDOW = 5.0

    def __init__(self, out: IO[str], clock=time.monotonic) -> None:
        self.out = out
        self.clock = clock
        self.live = None
        self.rows: dict[str, dict] = {}
        self.holders: dict[str, Counter[str]] = {}  # resource -> {holder: units}
        self.eggs_per_reed: Counter[str] = Counter()
        # Arrival times of the sends, oldest first; invariant: none older than WINDOW before the last one.
        self.sends: deque[float] = deque()
        self.total_sends = 0
        self.began = clock()
        self._drawn = 0.0

    @staticmethod
    def _row() -> dict:
        return {"state": "-", "lamport": 0, "entries": 0, "eggs": 0, "contracts": 0, "waiting": ""}

    def begin(self, names: list[str]) -> None:
        self.rows = {n: self._row() for n in names}
        self.began = self.clock()
        if self.out.isatty():
            from rich.console import Console
            from rich.live import Live

            self.live = Live(
                self.table(), refresh_per_second=4, transient=False, console=Console(file=self.out)
            )
            self.live.start()

    def _forget_before(self, now: float) -> None:
        """Drop the sends that left the window (from the old end: O(1) per send, amortised)."""
        while self.sends and self.sends[0] <= now - self.WINDOW:
            self.sends.popleft()

    def rate(self) -> tuple[float, float]:
        """(messages/s over the last WINDOW seconds, messages/s since the start)."""
        now = self.clock()
        self._forget_before(now)
        recent = len(self.sends) / min(self.WINDOW, max(now - self.began, 1e-9))
        overall = self.total_sends / max(now - self.began, 1e-9)
        return recent, overall

    def table(self):
        from rich.table import Table

        recent, overall = self.rate()
        bees = any(r["eggs"] for r in self.rows.values()) or any(k.startswith("reed") for k in self.holders)
        elves = any(r["contracts"] for r in self.rows.values())
        held = (
            "; ".join(
                f"{res} {', '.join(h if units == 1 else f'{h}×{units}' for h, units in sorted(who.items()))}"
                for res, who in sorted(self.holders.items())
                if who
            )
            or "nothing held"
        )
        caption = [
            f"holders: {held}",
            f"messages/s: {recent:.1f} (last {self.WINDOW:g}s), "
            f"{overall:.1f} overall, {self.total_sends} sent",
        ]
        if self.eggs_per_reed:
            caption.append(
                "eggs per reed: " + ", ".join(f"{r} {n}" for r, n in sorted(self.eggs_per_reed.items()))
            )
        table = Table(title="mutexlab monitor", caption="\n".join(caption), caption_justify="left")
        columns = (
            ["process", "state", "lamport", "entries"]
            + (["eggs"] if bees else [])
            + (["contracts"] if elves else [])
            + ["waiting for"]
        )
        for col in columns:
            table.add_column(col)
        for name, row in self.rows.items():
            cells = [name, row["state"], str(row["lamport"]), str(row["entries"])]
            cells += [str(row["eggs"])] if bees else []
            cells += [str(row["contracts"])] if elves else []
            table.add_row(*cells, row["waiting"])
        return table

    def _redraw(self, force: bool = False) -> None:
        if self.live is not None and (force or self.clock() - self._drawn >= 0.25):
            self._drawn = self.clock()
            self.live.update(self.table())

    def event(self, name: str, event: dict) -> None:
        """Every trace event of a member, in arrival order."""
        row = self.rows.setdefault(name, self._row())
        kind = event.get("event")
        if isinstance(event.get("lamport"), int):
            row["lamport"] = event["lamport"]
        units = event.get("units", 1) if isinstance(event.get("units"), int) else 1
        if kind == "send":
            self.total_sends += 1
            now = self.clock()
            self.sends.append(now)
            self._forget_before(now)  # off a terminal nobody asks for the rate: keep the window small
        elif kind == "enter":
            row["entries"] += 1
            self.holders.setdefault(str(event.get("resource")), Counter())[name] += units
        elif kind == "exit":
            held = self.holders.get(str(event.get("resource")))
            if held is not None:
                held[name] -= units
                if held[name] <= 0:
                    del held[name]
        elif kind == "egg":
            row["eggs"] += 1
            self.eggs_per_reed[f"reed:{event.get('reed')}"] += 1
        elif kind == "contract_done":
            row["contracts"] += 1
        elif kind == "state":
            row["state"] = str(event.get("state"))
            if self.live is None:
                print(
                    f"{float(event.get('t', 0)):9.3f}s  {name:<10} {row['state']:<22} lamport {row['lamport']}",
                    file=self.out,
                    flush=True,
                )
            self._redraw(force=True)
            return
        self._redraw()

    def status(self, name: str, status: dict) -> None:
        row = self.rows.get(name)
        if row is not None:
            waiting = status.get("waiting") if isinstance(status.get("waiting"), dict) else {}
            row["waiting"] = "; ".join(
                f"{what} from {', '.join(map(str, whom))}"
                for what, whom in waiting.items()
                if isinstance(whom, list)
            )
            row["lamport"] = status.get("lamport", row["lamport"])
            self._redraw()

    def end(self) -> None:
        if self.live is not None:
            self.live.update(self.table())
            self.live.stop()
            self.live = None


class Monitor:
    def __init__(self, settings: MonitorSettings, out: IO[str] | None = None) -> None:
        self.settings = settings
        self.out = out or sys.stdout
        self.family = family_of(settings.algorithm)
        # Validate the configuration before touching the broker.
        self.setup: Setup | None = None
        if settings.processes:
            self.setup = build_setup(settings.algorithm, settings.processes, settings.options, settings.seed)
        elif settings.algorithm in registry.SPECS:
            registry.spec(settings.algorithm)  # P is discovered later; the name is checked now
        else:
            build_setup(settings.algorithm, 1, settings.options, settings.seed)  # a plugin module must load
        self.topology = Topology(settings.run_id, settings.queue_kind)
        self.bus = Bus(
            settings.amqp_url,
            self.topology,
            connect_timeout=settings.join_timeout,
            name="monitor",
            prefetch=MONITOR_PREFETCH,
        )
        self.roster = Roster(self.family, settings.processes, settings.join_window)
        self.members: dict[str, Member] = {}
        self.welcomes: dict[str, dict] = {}  # instance -> its welcome (re-sent if it joins again)
        self.trace = TraceWriter(settings.trace, keep=True)
        self.progress = Progress(self.out)
        self.status: dict[str, dict] = {}
        self.heard: dict[str, float] = {}
        self.sent: dict[str, str] = {}  # message id -> destination, until received
        self.messages: Counter[str] = Counter()
        self.entries: Counter[str] = Counter()
        self.notes: Counter[str] = Counter()
        self.tapped = 0
        self.last_own: dict[str, int] = {}
        self.audit_duplicates = 0
        self.refused: list[dict] = []  # each refused instance once: instance, role, reason
        self.last_progress = time.monotonic()
        self.started = 0.0

    # -- entry point ----------------------------------------------------------------------
    def run(self) -> int:
        try:
            self.bus.connect()
            self.bus.consume(self.topology.monitor_queue)
            log.info(
                "monitor: run %s (%s) waiting for participants (%s)",
                self.settings.run_id,
                self.settings.algorithm,
                f"P={self.settings.processes}"
                if self.settings.processes
                else f"discovery, window {self.settings.join_window:g}s",
            )
            code = self._gather()
            if code is not None:
                return code
            outcome = self._watch()
            self._stop(outcome)
            return self._report(outcome)
        except TransportError as exc:
            log.error("monitor: %s", exc)
            return EXIT_STALLED
        finally:
            self.progress.end()
            self.trace.close()
            self.bus.close()

    # -- membership -------------------------------------------------------------------------
    def _gather(self) -> int | None:
        deadline = time.monotonic() + self.settings.join_timeout
        generation = self.bus.generation
        while time.monotonic() < deadline:
            for delivery in self.bus.poll(0.2):
                self._dispatch(delivery)
            if self.bus.generation != generation:  # cut off from the broker while participants joined
                generation = self.bus.generation
                self._reconnected_while_gathering()
            if self.roster.ready(time.monotonic()):
                return self._close()
        joined = Counter(m.role for m in self.roster.members)
        print(
            f"monitor: membership never completed within {self.settings.join_timeout:g}s: joined "
            f"{dict(joined) or 'nobody'} (run {self.settings.run_id}, {self.settings.algorithm}"
            f"{f', P={self.settings.processes}' if self.settings.processes else ''})",
            file=self.out,
        )
        for member in self.roster.members:
            self._send_control(
                member.instance,
                {
                    "kind": "refused",
                    "instance": member.instance,
                    "reason": "membership never completed; run abandoned",
                },
            )
        return EXIT_STALLED

    def _reconnected_while_gathering(self) -> None:
        """Joins may have been held up by the outage: re-announced by participants only now that they
        are back too. In discovery the window starts again (at least ``REJOIN_GRACE``)."""
        self.roster.reconnected(time.monotonic())
        if self.settings.processes:
            log.warning(
                "monitor: reconnected while participants were joining (%d so far); still waiting for P=%d",
                len(self.roster.members),
                self.settings.processes,
            )
            return
        log.warning(
            "monitor: reconnected while participants were joining (%d so far); the join window starts "
            "again: membership stays open at least %gs for participants cut off by the outage to re-join",
            len(self.roster.members),
            max(self.settings.join_window, REJOIN_GRACE),
        )

    def _close(self) -> int | None:
        p = self.roster.count(self.roster.scalable)
        try:
            setup = (
                self.setup
                if self.setup is not None
                else build_setup(self.settings.algorithm, p, self.settings.options, self.settings.seed)
            )
            self.members = self.roster.close(setup)
        except ConfigError as exc:
            print(f"monitor: cannot start with P={p}: {exc}", file=self.out)
            for member in self.roster.members:
                self._send_control(
                    member.instance,
                    {"kind": "refused", "instance": member.instance, "reason": f"cannot start: {exc}"},
                )
            return EXIT_CONFIG
        self.setup = setup
        header = dict(setup.run_event(), run_id=self.settings.run_id, transport="rabbitmq")
        self.trace.write(header)
        for name in setup.names.values():
            self.bus.call(
                lambda channel, name=name: self.topology.declare_participant(channel, name, setup.codec.types)
            )
        self.started = time.time()
        names = {name: member.instance for name, member in self.members.items()}
        for name, member in self.members.items():
            self.welcomes[member.instance] = {
                "kind": "welcome",
                "instance": member.instance,
                "name": name,
                "pid": member.pid,
                "run_id": self.settings.run_id,
                "algorithm": self.settings.algorithm,
                "processes": p,
                "options": self.settings.options,
                "seed": self.settings.seed,
                "dwell": self.settings.dwell,
                "dwell_times": self.settings.dwell_times,
                "roster": names,
                "start": self.started,
            }
            self._send_control(member.instance, self.welcomes[member.instance])
        print(
            f"monitor: run {self.settings.run_id}: {setup.algorithm} with "
            f"{', '.join(sorted(self.members, key=lambda n: self.members[n].pid))} — started",
            file=self.out,
            flush=True,
        )
        self.progress.begin([setup.names[p] for p in sorted(setup.names)])
        self.last_progress = time.monotonic()
        return None

    def _send_control(self, target: str, body: dict) -> None:
        try:
            self.bus.publish(f"control.{target}", body)
        except TransportError as exc:  # the joiner is gone (its queue was exclusive)
            log.warning("monitor: cannot reach %s: %s", target, exc)

    # -- the run ------------------------------------------------------------------------------
    def _watch(self) -> Outcome:
        while True:
            for delivery in self.bus.poll(0.2):
                self._dispatch(delivery)
            if self._complete():
                return self._outcome(complete=True)
            if time.monotonic() - self.last_progress > self.settings.stall_timeout:
                return self._outcome(complete=False)

    def _complete(self) -> bool:
        return (
            self.setup is not None
            and not self.sent
            and all(
                self.status.get(n, {}).get("finished") and not self.status[n].get("timers")
                for n in self.setup.names.values()
            )
        )

    def _dispatch(self, delivery: Delivery) -> None:
        key = delivery.routing_key
        head, _, rest = key.partition(".")
        try:
            data = json.loads(delivery.body) if head in ("join", "audit", "status") else None
        except ValueError:
            data = None
        if head in ("join", "audit", "status") and not isinstance(data, dict):
            self.bus.dead_letter(delivery, f"monitor: {head} message is not a JSON object")
            return
        if head == "join":
            self._join(data)
        elif head == "audit":
            events = data.get("events", [data])  # a batch (one step's events), or a single event
            if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
                self.bus.dead_letter(delivery, "monitor: an audit batch must hold a list of JSON objects")
                return
            for event in events:
                self._audit(rest, event)
            if isinstance(data.get("status"), dict):  # the batch of an input that changed the state
                self._status(rest, data["status"])
        elif head == "status":
            self._status(rest, data)
        elif head == "control":
            pass  # the monitor's own roster, refusal and stop signals
        elif self._protocol_key(head, rest):
            self.tapped += 1  # a protocol message, tapped
        else:
            self.bus.dead_letter(
                delivery,
                f"monitor: unexpected routing key {key!r} (not a join, trace, status, "
                f"control or protocol message of this run)",
            )
            return
        self.bus.ack(delivery)

    def _protocol_key(self, head: str, rest: str) -> bool:
        """``<TYPE>.<dest>``: a message type of the run's algorithm to a member of the run."""
        return self.setup is not None and head in self.setup.codec.types and rest in self.members

    def _join(self, data: dict) -> None:
        """Idempotent by instance id: a participant re-announces its join after each reconnect, and
        the broker may hand a join over twice; the answer is the same each time."""
        instance, role = str(data.get("instance", "")), str(data.get("role", ""))
        if not instance:
            return
        again = self.roster.member(instance) is not None or instance in self.roster.refusals
        reason = self.roster.join(instance, role, time.monotonic())
        if reason is not None:
            if again:
                log.info("monitor: %s joined again; refusal re-sent", instance)
            else:
                self.refused.append({"instance": instance, "role": role, "reason": reason})
                log.warning("monitor: refused %s (%s): %s", instance, role, reason)
                print(f"monitor: refused {role} {instance}: {reason}", file=self.out, flush=True)
            self._send_control(instance, {"kind": "refused", "instance": instance, "reason": reason})
            return
        if instance in self.welcomes:  # a member that lost its connection before its welcome arrived
            log.info("monitor: %s joined again; welcome re-sent", instance)
            self._send_control(instance, self.welcomes[instance])
            return
        if again:
            log.info("monitor: %s joined again (after a reconnect); already in the roster", instance)
            return
        log.info("monitor: %s joined as %s (%d so far)", instance, article(role), len(self.roster.members))

    def _status(self, name: str, status: dict) -> None:
        if name in self.members:
            self.status[name] = status
            self.heard[name] = time.monotonic()
            self.progress.status(name, status)

    def _audit(self, name: str, event: dict) -> None:
        own = event.get("vc", {}).get(name) if isinstance(event.get("vc"), dict) else None
        if name not in self.members or event.get("pid") != name or not isinstance(own, int):
            log.warning("monitor: ignored a trace event claiming to be from %r", name)
            return
        # Each event ticks its process's own vector entry once, and a process's events arrive in
        # order: an entry not above the last one seen is a redelivered or re-published duplicate.
        if own <= self.last_own.get(name, 0):
            self.audit_duplicates += 1
            return
        self.last_own[name] = own
        self.trace.write(event)
        self.last_progress = time.monotonic()
        self.heard[name] = self.last_progress
        kind = event["event"]
        self.progress.event(name, event)
        if kind == "send":
            self.messages[event.get("type", "?")] += 1
            self.sent[event.get("id")] = event.get("to")
        elif kind == "recv":
            self.sent.pop(event.get("id"), None)
        elif kind == "enter":
            self.entries[resource_kind(str(event.get("resource")))] += 1
        elif kind not in PROTOCOL_EVENTS:
            self.notes[kind] += 1

    # -- the end --------------------------------------------------------------------------------
    def _outcome(self, complete: bool) -> Outcome:
        setup = self.setup
        stalled: dict[str, Any] = {}
        if not complete:
            now = time.monotonic()
            for name in setup.names.values():
                status = self.status.get(name, {})
                if status.get("finished") and not status.get("timers"):
                    continue
                stalled[name] = {
                    "state": status.get("state", "unknown"),
                    "waiting": status.get("waiting", {}),
                    "silent_for": round(now - self.heard.get(name, now - 1e9), 1)
                    if name in self.heard
                    else None,
                }
            in_flight = Counter(self.sent.values())
            for dest, n in in_flight.items():
                stalled.setdefault(
                    dest,
                    {
                        "state": self.status.get(dest, {}).get("state", "unknown"),
                        "waiting": {},
                        "silent_for": None,
                    },
                )["undelivered"] = n
        return Outcome(
            run_id=self.settings.run_id,
            algorithm=setup.algorithm,
            processes=self.roster.count(self.roster.scalable),
            complete=complete,
            stalled=stalled,
            started=round(self.started, 3),
            duration=round(time.time() - self.started, 3),
            messages=dict(sorted(self.messages.items())),
            tapped=self.tapped,
            entries=dict(sorted(self.entries.items())),
            notes=dict(sorted(self.notes.items())),
            states={
                n: self.status.get(n, {}).get("state", "unknown")
                for n in (setup.names[p] for p in sorted(setup.names))
            },
            refused=list(self.refused),
            trace=self.settings.trace,
        )

    def _stop(self, outcome: Outcome) -> None:
        reason = "run complete" if outcome.complete else "run stalled"
        self.bus.publish("control.all", {"kind": "stop", "reason": reason})
        # Collect the final statuses (their counters), briefly; a dead participant never answers.
        deadline = time.monotonic() + 3.0
        names = set(self.setup.names.values())
        alive = {
            n
            for n in names
            if n not in outcome.stalled
            or (outcome.stalled[n].get("silent_for") or 0) < self.settings.stall_timeout
        }
        while time.monotonic() < deadline and not all(self.status.get(n, {}).get("final") for n in alive):
            for delivery in self.bus.poll(0.2):
                self._dispatch(delivery)
        for name in names:
            status = self.status.get(name, {})
            outcome.duplicates += int(status.get("duplicates", 0))
            outcome.reconnects += int(status.get("reconnects", 0))
            outcome.redelivered += int(status.get("redelivered", 0))
        try:
            dead = self.bus.channel.queue_declare(self.topology.dead_queue, passive=True)
            outcome.dead_letters = dead.method.message_count
        except Exception:  # noqa: BLE001 - the count is informative only
            outcome.dead_letters = sum(int(self.status.get(n, {}).get("dead_letters", 0)) for n in names)
        outcome.reconnects += self.bus.reconnects
        outcome.redelivered += self.bus.redelivered
        outcome.duplicates += self.audit_duplicates
        if self.settings.cleanup:
            try:
                self.topology.delete(self.bus.channel, sorted(names))
            except Exception as exc:  # noqa: BLE001
                log.warning("monitor: cleanup failed: %r", exc)

    def _report(self, outcome: Outcome) -> int:
        self.progress.end()
        events = [dict(e, _line=n) for n, e in enumerate(self.trace.events or [], 1)]
        try:
            verdict = verify_events(events)
        except TraceError as exc:  # a participant recorded what the audit cannot check: no verdict
            self.trace.close()
            print(f"monitor: no verdict, the trace cannot be audited: {exc}", file=self.out, flush=True)
            return EXIT_STALLED
        outcome.violations = [v.describe() for v in verdict.violations]
        outcome.verdict = verdict.render()
        # Safety decides "violation"; a run cut short fails only progress checks (audit/model.py).
        outcome.safe = verdict.safe
        if not outcome.complete:
            outcome.verdict = (
                "the run stalled: progress checks fail because it was cut short; "
                f"safety: {'SAFE' if outcome.safe else 'VIOLATED'}\n" + outcome.verdict
            )
        outcome.exit_code = (
            EXIT_VIOLATION
            if not outcome.safe
            else (EXIT_SAFE if outcome.complete and verdict.ok else EXIT_STALLED)
        )
        self.trace.close()
        print(render(outcome), file=self.out, flush=True)
        if self.settings.summary_json:
            with open(self.settings.summary_json, "w", encoding="utf-8") as handle:
                json.dump(outcome.as_dict(), handle, indent=2)
        return outcome.exit_code


def render(o: Outcome) -> str:
    total = sum(o.messages.values())
    rate = total / o.duration if o.duration > 0 else 0.0
    roles = Counter(role_of(name) for name in o.states)
    lines = [
        f"{o.algorithm} over RabbitMQ, run {o.run_id}: "
        + ", ".join(count(n, role) for role, n in roles.items())
        + f", {o.duration:.2f}s wall clock — "
        + ("complete" if o.complete else "STALLED"),
        f"messages: {total} ({', '.join(f'{k} {v}' for k, v in o.messages.items()) or 'none'}), "
        f"{rate:.0f} messages/s; tapped {o.tapped}",
        "entries: " + (", ".join(f"{k} {v}" for k, v in o.entries.items()) or "none"),
    ]
    if o.notes:
        lines.append("events: " + ", ".join(f"{k} {v}" for k, v in o.notes.items()))
    lines.append("final states: " + ", ".join(f"{n}={s}" for n, s in o.states.items()))
    lines.append(
        f"transport: duplicates dropped {o.duplicates}, dead-lettered {o.dead_letters}, "
        f"reconnects {o.reconnects}, redelivered {o.redelivered}, refused joiners {len(o.refused)}"
    )
    if o.refused:
        lines.append(f"membership: {count(len(o.refused), 'joiner')} refused, not part of this run:")
        lines += [f"  refused: {r['role']} {r['instance']} — {r['reason']}" for r in o.refused]
    if o.stalled:
        # The simulator's explanation (who waits for whom, cycles, who everybody waits for), from
        # each participant's last status; then what only the transport knows (silence, lost messages).
        lines.append(
            explain_stall(
                {n: i.get("waiting", {}) for n, i in o.stalled.items()},
                {n: s for n, s in o.states.items() if s != "unknown"},
            )
        )
    if o.stalled:
        lines.append("as the monitor last heard them:")
    for name, info in o.stalled.items():
        waits = "; ".join(f"{what} from {', '.join(whom)}" for what, whom in info.get("waiting", {}).items())
        extra = []
        if info.get("undelivered"):
            extra.append(f"{count(info['undelivered'], 'message')} sent to it never received")
        if info.get("silent_for") is None:
            extra.append("never reported")
        elif info["silent_for"] > 5:
            extra.append(f"silent for {info['silent_for']}s (lost?)")
        lines.append(
            f"  stalled: {name} in {info.get('state')} waits for {waits or 'nothing reported'}"
            + (f" — {', '.join(extra)}" if extra else "")
        )
    lines.append(o.verdict)
    if o.trace:
        lines.append(f"trace written to {o.trace}")
    return "\n".join(lines)
