"""The monitor (docs/architecture.md#monitor): admits the participants, records the trace, decides the run.

It consumes ``mutexlab.<run>.monitor``, bound to joins (``join.*``), trace events (``audit.*``,
a participant's batch of the events of its steps since the last one) and statuses (``status.*``),
and to the run exchange's alternate exchange: a message no queue takes (a protocol message whose
addressee has no queue, an unknown key) reaches it there and is dead-lettered with its reason.
No protocol message reaches it otherwise (docs/wire.md): a step routed to a queue it names
nothing for is dead-lettered by that queue's participant, and a message that never reaches its
addressee stays in the feed's sent messages, named at the end (``undelivered``: a stall, never
SAFE). This module only routes what arrives and runs the phases; each concern has its module:

* membership (membership.py decides, admission.py carries it out): pids, P, the welcome that starts the run, refusals (each
  named with its reason in the log, the summary and the verdict's text); a reconnect while
  participants join starts the discovery window again. The monitor carries the messages;
* the audit feed (feed.py): the trace (docs/architecture.md#trace-format), the ``run`` header
  first, then events as they arrive, de-duplicated; the run ends when every participant is
  finished and every sent message was received (complete), or when no trace event arrived for
  ``STALL_TIMEOUT`` seconds (stalled: who waits for whom, and who went silent), or as soon as a
  participant reports a rejected input (its protocol refused a message: a finding, exit 1, as in
  ``check``, ``replay`` and ``simulate``);
* the live view (view.py): one line per state change (a live table on a terminal);
* the outcome (outcome.py): after stopping the participants, the verdict of
  ``mutexlab.audit.verify_events`` (the code behind ``mutexlab verify``), the printed summary,
  the JSON summary and the exit code: 0 safe and complete, 1 a safety violation or a rejected
  input, 2 bad configuration, 3 stalled or never started (or no verdict: a trace the audit
  cannot check).
"""

from __future__ import annotations

import logging
import math
import sys
import time
from collections.abc import Callable
from typing import IO

from ..bus.amqp import TransportError
from ..bus.inbox import Delivery
from ..bus.rabbit import Bus
from ..bus.topology import Topology
from ..bus.wire import loads
from ..protocol import Protocol
from ..protocols import registry
from ..protocols.registry import build_setup
from ..setups import ConfigError, Setup
from ..sim.stuck import wanted
from ..trace import TraceError, TraceWriter
from .admission import Admission
from .feed import PROTOCOL_EVENTS, AuditFeed
from .membership import Member, Roster
from .outcome import (
    EXIT_CONFIG,
    EXIT_SAFE,
    EXIT_STALLED,
    EXIT_VIOLATION,
    Outcome,
    deciding,
    render,
    save_json,
)
from .probes import queue_exists, renew
from .settings import MonitorSettings
from .view import LiveView

# What other modules and the tests import from here.
__all__ = [
    "EXIT_CONFIG",
    "EXIT_SAFE",
    "EXIT_STALLED",
    "EXIT_VIOLATION",
    "MONITOR_PREFETCH",
    "PROTOCOL_EVENTS",
    "Monitor",
    "Outcome",
    "LiveView",
    "render",
]

log = logging.getLogger("mutexlab.monitor")


# Every participant's trace batches and statuses come to the monitor: a deep window keeps the
# broker streaming to it.
MONITOR_PREFETCH = 1000


class Monitor(Admission):
    def __init__(self, settings: MonitorSettings, out: IO[str] | None = None) -> None:
        self.settings = settings
        self.out = out or sys.stdout
        # Validate the configuration before touching the broker: the algorithm resolves (a file
        # loads), and with P known its setup builds (else P is discovered later).
        # A process started anew from a name: it resolves the solution once, here (registry.solution).
        self.solution = registry.solution(settings.algorithm)
        self.setup: Setup | None = None
        if settings.processes:
            self.setup = build_setup(self.solution, settings.processes, settings.options, settings.seed)
        persistent = settings.delivery == "persistent"
        self.topology = Topology(
            settings.run_id, settings.queue_kind, durable=persistent, expires=settings.queue_expires
        )
        self.bus = Bus(
            settings.amqp_url,
            self.topology,
            connect_timeout=settings.join_timeout,
            name="monitor",
            prefetch=MONITOR_PREFETCH,
            secret=settings.run_secret,
            on_connect=None if persistent else self._epoch,
        )
        # Transient delivery: why the run's queues cannot be trusted any more (the broker lost them).
        self.lost: str | None = None
        self.roster = Roster(
            settings.algorithm, settings.processes, settings.join_window, solution=self.solution
        )
        self.members: dict[str, Member] = {}
        self.welcomes: dict[str, dict] = {}  # instance -> its welcome (re-sent if it joins again)
        try:
            self.trace = TraceWriter(settings.trace, keep=True)
        except OSError as exc:  # before the broker is touched: bad configuration
            raise ConfigError(f"cannot write the trace {settings.trace}: {exc.strerror or exc}") from None
        self.progress = LiveView(self.out)
        self.feed = AuditFeed(self.trace, self.progress)
        self.refused: list[dict] = []  # each refused instance once: instance, role, reason
        self._declared: Setup | None = None  # the setup whose members' queues are declared
        self.started = 0.0
        self._renewed = time.monotonic()  # when the run's queues' leases were last renewed

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
            if self.setup is not None:  # P is known: the members' queues are made while they join
                self._declare_members(self.setup)
            code = self._gather()
            if code is not None:
                return code
            outcome = self._watch()
            self._stop(outcome)
            verdict = deciding(outcome, self.trace.events or [])  # the audit runs while the queues go
            self._cleanup(outcome)
            return self._report(outcome, verdict)
        except TransportError as exc:
            log.error("monitor: %s", exc)
            return EXIT_STALLED
        finally:
            self.progress.end()
            self.trace.close()
            self.bus.close()

    def _epoch(self, channel) -> None:
        """Transient delivery, on every (re)connect: the run's epoch queue, declared at the first
        connect and never deleted before the end, is gone only if the broker lost the run's
        queues (a restart): messages may be lost, and the run cannot be judged (``_watch``)."""
        if self.bus.generation and not queue_exists(self.bus.conn, self.topology.epoch):
            self.lost = "the broker lost the run's transient queues (a restart?): messages may be lost"
            log.error("monitor: %s; the run ends without a verdict on it", self.lost)
        channel.queue_declare(self.topology.epoch, durable=False, arguments=self.topology.lease() or None)

    def _renew_leases(self) -> None:
        """Every quarter of ``QUEUE_EXPIRES``: renew the lease of each of the run's queues its
        consumers do not keep alive (the dead letters', the epoch, a member's that is not consumed
        while it joins or reconnects): while the monitor lives none expires; once it is gone (killed
        with ``mutexlab run``), they all do, and the exchanges with them (topology.py)."""
        every = self.topology.expires / 4
        if not every or time.monotonic() - self._renewed < every:
            return
        self._renewed = time.monotonic()
        queues = [self.topology.monitor_queue, self.topology.dead_queue]
        if not self.topology.durable:
            queues.append(self.topology.epoch)
        if self._declared is not None:
            queues += [self.topology.queue(name) for name in self._declared.names.values()]
        gone = self.bus.call(lambda _channel: renew(self.bus.conn, queues))
        if gone:  # expired while the monitor could not renew them (stopped longer than QUEUE_EXPIRES)
            log.warning("monitor: the run's queues are gone: %s", ", ".join(gone))

    # -- the run ------------------------------------------------------------------------------
    def _watch(self) -> Outcome:
        while True:
            # The leases first: their passive declares (one round trip for all: probes.renew) may
            # take seconds on a loaded host, and what came meanwhile is read before any stall is judged.
            self._renew_leases()
            for delivery in self.bus.poll(0.2):
                self._dispatch(delivery)
            self.progress.flush(LiveView.PRINT_EVERY)
            if self.lost is not None:  # transient delivery does not survive it: never judged SAFE
                return self._outcome(complete=False)
            if self.setup is not None and self.feed.complete(self.setup.names.values()):
                return self._outcome(complete=True)
            if self.feed.rejected(self.members):  # a finding: the run stops here, as a simulation does
                return self._outcome(complete=False, rejected=True)
            if self.feed.silent_for(self.settings.stall_timeout):
                return self._outcome(complete=False)

    def _dispatch(self, delivery: Delivery) -> None:
        key = delivery.routing_key
        head, _, rest = key.partition(".")
        problem: str | None = None  # why the delivery is dead-lettered
        if head in ("join", "audit", "status"):
            try:
                data = loads(delivery.body)
            except ValueError:
                data = None
            if not isinstance(data, dict):
                problem = f"monitor: {head} message is not a JSON object"
            elif head == "join":
                self._join(data)
            elif head == "audit":
                problem = self.feed.batch(rest, data)
            else:
                self.feed.report(rest, data)
        elif head == "control":
            pass  # a roster, refusal or stop of the monitor's own no queue took (its joiner is gone)
        elif self._protocol_key(head, rest):
            # Only unrouted messages reach the monitor (its queue is not bound to protocol keys): a
            # message to a member whose queue no longer takes it is lost for its addressee.
            self.bus.dead_letter(delivery, f"monitor: no queue of the addressee took {key!r}")
            return
        else:
            problem = (
                f"monitor: unexpected routing key {key!r} (not a join, trace, status, "
                f"control or protocol message of this run)"
            )
        if problem is None:
            self.bus.ack(delivery)
        else:
            self.bus.dead_letter(delivery, problem)

    def _protocol_key(self, head: str, rest: str) -> bool:
        """``<TYPE>.<dest>``: a message type of the run's algorithm to a member of the run."""
        return self.setup is not None and head in self.setup.codec.types and rest in self.members

    # -- the end --------------------------------------------------------------------------------
    def _outcome(self, complete: bool, rejected: bool = False) -> Outcome:
        setup = self._setup()
        feed = self.feed
        stalled = {} if complete or rejected else feed.stalled(setup.names.values())
        holding = {r: list(hs) for r, hs in feed.holding.items() if hs} if stalled else {}
        return Outcome(
            run_id=self.settings.run_id,
            algorithm=setup.algorithm,
            processes=self.roster.count(self.roster.scalable),
            complete=complete,
            stalled=stalled,
            holding=holding,
            wants=waiting_to_enter(setup, stalled, holding),
            started=round(self.started, 3),
            duration=round(time.time() - self.started, 3),
            messages=dict(sorted(feed.messages.items())),
            # the protocol messages the monitor learned of: their senders' send events (the broker
            # no longer copies each one to the monitor's queue)
            tapped=sum(feed.messages.values()),
            entries=dict(sorted(feed.entries.items())),
            notes=dict(sorted(feed.notes.items())),
            states=feed.states(setup.names[p] for p in sorted(setup.names)),
            refused=list(self.refused),
            rejected=feed.rejected(setup.names[p] for p in sorted(setup.names)) if rejected else [],
            trace=self.settings.trace,
            delivery=self.settings.delivery,
            lost=self.lost,
            os_pids={n: m.os_pid for n, m in sorted(self.members.items()) if m.os_pid is not None},
        )

    def _setup(self) -> Setup:
        """The run's setup: known once the roster closed (the run's phases after it use it)."""
        if self.setup is None:
            raise RuntimeError("monitor: the run has no setup before its roster closes")
        return self.setup

    def _stop(self, outcome: Outcome) -> None:
        reason = "run complete" if outcome.complete else "run stalled"
        if outcome.rejected:
            reason = "a participant rejected an input"
        stopped = time.monotonic()
        self.bus.publish("control.all", {"kind": "stop", "reason": reason})
        # Collect the final statuses (their counters), briefly; a dead participant never answers.
        deadline = stopped + 3.0
        names = set(self._setup().names.values())
        status = self.feed.status
        alive = {
            n
            for n in names
            if n not in outcome.stalled
            or (outcome.stalled[n].get("silent_for") or 0) < self.settings.stall_timeout
        }
        # Transient: participants take their queues unacked, so a stop lost with a connection is
        # sent again every second until every final status is in (a duplicate stop is harmless).
        again = stopped + 1.0 if self.settings.delivery == "transient" else math.inf
        while time.monotonic() < deadline and not all(status.get(n, {}).get("final") for n in alive):
            if time.monotonic() > again:
                again = time.monotonic() + 1.0  # not mandatory: every queue may be gone by now
                self.bus.publish("control.all", {"kind": "stop", "reason": reason}, mandatory=False)
            for delivery in self.bus.poll(0.2):
                self._dispatch(delivery)
        finals = sum(bool(status.get(n, {}).get("final")) for n in names)
        outcome.no_final_status = sorted(n for n in names if not status.get(n, {}).get("final"))
        log.info(
            "monitor: stop sent (%s); final statuses of %d of %d in %.3fs",
            reason,
            finals,
            len(names),
            time.monotonic() - stopped,
        )
        for name in names:
            last = status.get(name, {})
            outcome.duplicates += int(last.get("duplicates", 0))
            outcome.reconnects += int(last.get("reconnects", 0))
            outcome.redelivered += int(last.get("redelivered", 0))
            outcome.retransmitted += int(last.get("retransmitted", 0))
        try:
            channel = self.bus.channel
            if channel is None:
                raise TransportError("monitor: not connected")
            dead = channel.queue_declare(self.topology.dead_queue, passive=True)
            outcome.dead_letters = dead.method.message_count
        except Exception:  # noqa: BLE001 - the count is informative only
            outcome.dead_letters = sum(int(status.get(n, {}).get("dead_letters", 0)) for n in names)
        outcome.rejected = self.feed.rejected(self._setup().names[p] for p in sorted(self._setup().names))
        # What came in while stopping (a run stopped at a finding: steps in flight, final statuses)
        # is in the trace the audit reads: the summary counts it too, so the two agree.
        feed = self.feed
        outcome.messages = dict(sorted(feed.messages.items()))
        outcome.tapped = sum(feed.messages.values())
        outcome.entries = dict(sorted(feed.entries.items()))
        outcome.notes = dict(sorted(feed.notes.items()))
        outcome.states = feed.states(self._setup().names[p] for p in sorted(self._setup().names))
        outcome.reconnects += self.bus.reconnects
        outcome.forged = self.bus.forged + sum(int(status.get(n, {}).get("forged", 0)) for n in names)
        outcome.forgeries = [f"monitor: {f}" for f in self.bus.forgeries] + [
            f"{n}: {f}" for n in sorted(names) for f in status.get(n, {}).get("forgeries", [])[:10]
        ][:10]
        outcome.redelivered += self.bus.redelivered
        outcome.duplicates += self.feed.duplicates

    def _cleanup(self, outcome: Outcome) -> None:
        """Delete the run's exchanges and queues (``CLEANUP``); ``outcome.cleaned_up`` once all are gone."""
        names = set(self._setup().names.values())
        if self.settings.cleanup:
            started = time.monotonic()
            try:
                left = self.topology.delete(self.bus.channel, sorted(names))
            except Exception as exc:  # noqa: BLE001 - mutexlab run tries again
                log.warning("monitor: cleanup failed: %r", exc)
            else:
                took = time.monotonic() - started
                if left:  # mutexlab run tries again, and names what stays
                    log.warning("monitor: cleanup (%.3fs): queues not deleted: %s", took, ", ".join(left))
                else:
                    outcome.cleaned_up = True
                    log.info("monitor: the run's exchanges and queues deleted in %.3fs", took)

    def _report(self, outcome: Outcome, verdict: Callable[[], int]) -> int:
        """The verdict (``verdict``: ``outcome.deciding``'s wait) printed and saved; the exit code."""
        self.progress.end()
        try:
            verdict()
        except TraceError as exc:  # a participant recorded what the audit cannot check: no verdict
            self.trace.close()
            print(f"monitor: no verdict, the trace cannot be audited: {exc}", file=self.out, flush=True)
            return EXIT_STALLED
        self.trace.close()
        print(render(outcome), file=self.out, flush=True)
        if self.settings.summary_json:
            save_json(outcome, self.settings.summary_json)
        return outcome.exit_code


def waiting_to_enter(setup: Setup, stalled: dict, holding: dict[str, list[str]]) -> dict[str, list[str]]:
    """What each stalled process waits to enter: where its problem says so whatever its state (a
    philosopher's forks, the one resource of mutex), from the problem; else as the participant
    told in its last status (a bee's ``reed``: the monitor's protocol objects are not the
    participants', so a ``wants()`` that reads a process's state is asked there, sim/stuck.told)."""
    wants = {}
    for pid, proto in setup.protocols.items():
        name = setup.names[pid]
        if name in stalled and type(proto).wants is Protocol.wants:
            mine = [r for r, hs in holding.items() if name in hs]
            wants[name] = wanted(proto, list(setup.capacities), mine)
        elif name in stalled and stalled[name].get("wants"):
            wants[name] = list(stalled[name]["wants"])
    return wants
