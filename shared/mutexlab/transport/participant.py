"""One participant (a problem's process, a fixed role, or a node) running its protocol object over RabbitMQ.

The effects are carried out by ``ServiceDriver``, a ``sim.driver.Driver``: the same code as the
simulator applies them in order, handles sends to oneself locally, numbers messages and
records the trace events (``driving.py``). Only two things differ: network sends leave as confirmed
publishes (below; persistent, or transient and kept for retransmission: ``links.py``), a ``Schedule`` is a real timer (dwell seconds per kind), and the trace events go to
the monitor instead of a file.

The inputs taken in one round of the loop (the deliveries of one poll, the timers due, then those
they made due at once: ``FOLD_ROUNDS``) form one step, whose protocol messages are published when
the round ends as one message in effect order (``wire.frame``: an envelope, or a step frame),
routed to its first addressee by its key and to the others by the ``BCC`` header (the broker
strips it: no receiver decodes it); then the acks of its deliveries, in delivery order. Its
trace events wait with those of the steps after it (``tracing.TraceBuffer``) and go to the
monitor (``audit.<name>``) as one batch ``{"events": [...], "status": {...}}`` (the latest status:
``_flush_trace``) once the oldest waited ``TRACE_FLUSH`` seconds, when many wait, at the heartbeat,
once the process has finished, when it stops. A delivery is acked only behind its sends and the batch holding its events (persistent: the bus
holds the ack until both are confirmed; transient: the link's acknowledgement waits for that
batch). The monitor pairs a receipt heard before its send (feed.py): no order between processes.

Invariants: a protocol input is handled at most once and in its link's order (per-link sequence
numbers drop redelivered duplicates, and hold one ahead of a missing one back until it comes)
and acked only after its effects are confirmed by the broker (the bus holds the ack back without
stopping the next input; a held-back message's delivery is acked once it is handled: ``Bus.unblock``); every
state change is logged (name, state, Lamport clock) and reported to the monitor with what the
process waits for (and to enter, ``wants``); malformed input is dead-lettered, never a crash.
A message the protocol refuses (``ProtocolError``: its state does not accept it) is logged,
dead-lettered with the error as reason and reported in the status (``rejected``: how many,
``rejections``: the first reasons), at once: a rejected input is a finding, the monitor stops the
run (docs/faults.md); a local input it refuses (a timer) is a bug of this process: logged, and the
process exits with EXIT_FAILED. A handler that raises (``HandlerError``, on any input) is a rejected
input alike (``handler raised: …``); the process then takes nothing more until the monitor's stop.
A handler of a solution's file that never returns raises ``HandlerHung`` after ``hung.SECONDS``."""

from __future__ import annotations

import heapq
import logging
import os
import socket
import time
import uuid
from collections import Counter
from typing import Any

from ..bus.amqp import LOST, TransportError
from ..bus.inbox import Delivery, LinkInbox
from ..bus.links import Retransmission
from ..bus.rabbit import Bus
from ..bus.topology import Topology, send_frames
from ..bus.wire import EnvelopeError, frames, parse_frame
from ..messages import MessageError
from ..protocol import HandlerError, ProtocolError
from ..protocols import registry
from ..setups import ConfigError, Setup
from ..show import state_text
from ..sim.hung import watching
from ..sim.stuck import told
from ..waiting import waits
from ..words import PROGRAM_FAULT
from . import control, directing, joining
from .driving import AuditSink, ServiceDriver, StateLines
from .membership import role_of
from .outcome import kept_reason
from .probes import ConsumerProbe
from .settings import ParticipantSettings
from .tracing import TraceBuffer

log = logging.getLogger("mutexlab.participant")

EXIT_OK, EXIT_CONFIG, EXIT_FAILED = 0, 2, 3
FINAL_FLUSH = 10.0  # seconds to wait for the confirms of the last publishes after the stop
FOLD_ROUNDS = 2  # a step's rounds of due timers: those due, then those they made due (dwell 0)
REJECTIONS_KEPT = 10  # the reasons of the first rejected inputs a status carries (the count is exact)


class Participant:
    def __init__(self, role: str, settings: ParticipantSettings, instance: str | None = None) -> None:
        self.role = role
        self.settings = settings
        # resolved once, before joining: a bad file is a configuration error (exit 2); none: the welcome's
        self.solution = registry.solution(settings.algorithm) if settings.algorithm else None
        self.instance = instance or f"{role}-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        durable, expires = settings.delivery == "persistent", settings.queue_expires
        self.topology = Topology(settings.run_id, settings.queue_kind, durable=durable, expires=expires)
        self.bus = Bus(
            settings.amqp_url,
            self.topology,
            connect_timeout=settings.join_timeout,
            on_connect=self._declare,
            name=self.instance,
            secret=settings.run_secret,
        )
        self.links: Retransmission | None = None  # transient delivery: links.py, once admitted
        self.join_queue = self.topology.queue(f"join.{self.instance}")
        self.phase, self.name = "join", f"{role}?"
        self.pid: int | None = None
        self.setup: Setup | None = None
        self.driver: ServiceDriver | None = None
        self.roster: dict[str, int] = {}
        self.inbox = LinkInbox()
        self.link_seq: Counter[int] = Counter()
        self.audit = AuditSink()
        # The step being handled (module doc): its messages in effect order, deliveries to ack, state changed?
        self.outbox: list[tuple[str, int, str, dict, dict]] = []  # (to, seq, id, vc, msg)
        self.outkeys: dict[str, None] = {}  # their routing keys <TYPE>.<dest>, in order, once each
        self.handled: list[Delivery] = []
        self.trace = TraceBuffer(self.audit, 0.0 if settings.directed else settings.trace_flush)
        self.changed, self.lines = False, StateLines()  # lines: the step's state changes, logged at its end
        self.timers: list[tuple[float, int, str]] = []
        self._timer_seq, self.dead_letters, self.rejected = 0, 0, 0  # rejected: inputs refused (findings)
        self.dwell: dict[str, float] = {}
        self.default_dwell = 0.2
        self.start_time = time.time()
        self.rejections: list[str] = []  # the first REJECTIONS_KEPT of them: who sent what, why
        self.broken: str | None = None  # why a handler raised: no input is taken any more
        self.stopped = False
        self._last_status = 0.0
        self._monitor_seen = self._monitor_checked = time.monotonic()
        # Seconds between looks at the monitor's queue: a tenth of MONITOR_TIMEOUT, at most every heartbeat.
        self._monitor_check_every = max(settings.heartbeat, settings.monitor_timeout / 10)
        self._monitor_probe = ConsumerProbe(self.topology.monitor_queue)  # its channel kept between looks

    # -- topology ---------------------------------------------------------------------------
    def _declare(self, channel) -> None:
        """On every (re)connect: the queue this process listens on. (A reconnect while joining also
        re-announces the join, from ``_join``: the exclusive queue, with any answer in it, is gone.)"""
        if self.phase == "join":
            channel.queue_declare(self.join_queue, exclusive=True, auto_delete=True)
            channel.queue_bind(
                self.join_queue, self.topology.exchange, routing_key=f"control.{self.instance}"
            )
        elif self.setup is not None:
            self.topology.declare_participant(channel, self.name, self.setup.codec.types)

    # -- the run --------------------------------------------------------------------------
    def run(self) -> int:
        try:
            self.bus.connect()
            code = self._join()
            if code is not None:
                return code
            with watching(self.setup):
                return EXIT_OK if self._work() else EXIT_FAILED
        except TransportError as exc:
            log.error("%s: %s", self.name, exc)
            return EXIT_FAILED
        except ProtocolError as exc:  # a local input (start, a timer) the protocol refuses
            log.error("%s: protocol error on a local input, giving up: %s", self.name, exc)
            return EXIT_FAILED
        finally:
            self.lines.log()
            if self.setup is not None and self.pid is not None:  # a node that runs a program kills it
                getattr(self.setup.protocols[self.pid], "close", lambda: None)()
            self.bus.close()

    def _join(self) -> int | None:
        """Ask the monitor to be admitted (``joining.ask``): None once welcomed, else the exit code."""
        answer = joining.ask(self.bus, self.role, self.instance, self.join_queue, self.settings)
        if answer is None:
            return EXIT_FAILED
        if answer.get("kind") == "refused":
            self._linger()
            return EXIT_OK
        try:
            self._welcome(answer)
        except ConfigError as exc:
            log.error("%s: cannot take part: %s", self.role, exc)
            return EXIT_CONFIG
        return None

    def _welcome(self, data: dict) -> None:
        self.name, self.pid = data["name"], int(data["pid"])
        if role_of(self.name) != self.role:
            raise ConfigError(f"the monitor gave the {self.role} the name {self.name}")
        algorithm = str(data["algorithm"])
        mine = self.settings.algorithm
        if mine and registry.canonical(algorithm) != registry.canonical(mine):
            raise ConfigError(f"the monitor runs {algorithm}, but this participant was started for {mine}")
        if registry.is_file(algorithm) and not mine:  # never run a file only a message names
            raise ConfigError(
                f"the monitor runs the file {algorithm}: name it in this participant's ALGORITHM"
            )
        processes, options, seed = int(data["processes"]), data.get("options") or {}, int(data.get("seed", 0))
        self.setup = registry.build_setup(self.solution or algorithm, processes, options, seed)
        self.roster = {name: pid for pid, name in self.setup.names.items()}
        if self.roster.get(self.name) != self.pid:
            raise ConfigError(f"the roster does not give {self.name} pid {self.pid}")
        self.start_time = float(data.get("start", time.time()))
        self.default_dwell = (
            self.settings.dwell if self.settings.dwell is not None else float(data.get("dwell", 0.2))
        )
        self.dwell = {**(data.get("dwell_times") or {}), **self.settings.dwell_times}
        self.driver = ServiceDriver(self, self.setup)
        if self.settings.delivery == "transient":
            self.links = Retransmission(self.settings.run_id, self.name)
        admitted = (self.instance, self.name, self.pid, len(self.roster), self.settings.run_id)
        log.info("%s: admitted as %s (pid %d) of %d in run %s (%s)", *admitted, self.setup.algorithm)
        # Its queue declared by the monitor before the welcome (and on reconnects: _declare); the join queue goes.
        self.bus.cancel(self.join_queue)
        self.phase = "work"

    def _work(self) -> bool:
        """Run the protocol until the monitor's stop (True) or until the monitor is gone (False)."""
        self._monitor_seen = self._monitor_checked = time.monotonic()
        auto = self.links is not None and not self.settings.directed  # senders keep custody: links.py
        self.bus.consume(self.topology.queue(self.name), auto_ack=auto)
        if self.settings.directed:  # the director starts it (directing.py)
            directing.hold(self)
        else:
            self._input(lambda p: p.start())
        self._status()  # the monitor knows at once where this process stands, even if start changed nothing
        self.lines.log(self.bus)
        while not self.stopped:
            now = time.monotonic()
            wake = now + 0.5
            if self.timers:
                wake = min(wake, self.timers[0][0])
            wake = min(wake, self._last_status + self.settings.heartbeat, self.trace.due_at())
            if self.links is not None:
                wake = min(wake, self.links.next_due(self.trace.traced, now))
            for delivery in self.bus.poll(max(0.0, wake - now)):
                self._handle(delivery)
                if self.stopped:
                    break
            self._due_timers()
            self._publish_step()
            self.lines.log(self.bus)  # once its publish is written: off the path to the next entry
            if self.links is not None:
                self.links.tick(self.bus, self.trace.traced, time.monotonic())
            if time.monotonic() - self._last_status >= self.settings.heartbeat:
                self._status(beat=True)
            if (
                time.monotonic() - self._monitor_checked >= self._monitor_check_every
                and not self._monitor_present()
            ):
                return False
        self._status(final=True)
        try:
            self.bus.flush(timeout=FINAL_FLUSH)  # the final status and every ack reach the broker
        except TransportError as exc:
            log.warning("%s: could not confirm the final status: %s", self.name, exc)
        end = (self.name, self.inbox.duplicates, self.dead_letters, self.bus.reconnects)
        log.info("%s: stopped by the monitor (duplicates dropped %d, dead-lettered %d, reconnects %d)", *end)
        self._linger()
        return True

    def _monitor_present(self) -> bool:
        """False once nobody has consumed the run's monitor queue for ``MONITOR_TIMEOUT`` seconds:
        the monitor died, and no stop will ever come. Asked on a channel of its own, kept between
        looks (``ConsumerProbe``); a lost connection says nothing either way."""
        now = self._monitor_checked = time.monotonic()
        conn = self.bus.conn
        if conn is None or not conn.is_open:
            return True  # reconnecting: decide later
        try:
            consumers = self._monitor_probe.consumers(conn)
        except LOST as exc:  # the connection itself was lost: the bus reconnects
            self.bus.reconnect(exc)
            return True
        if consumers:
            self._monitor_seen = now
            return True
        if now - self._monitor_seen < self.settings.monitor_timeout:
            return True
        gone = (self.name, self.topology.monitor_queue, self.settings.monitor_timeout)
        log.error("%s: the monitor is gone (nobody has consumed %s for %gs); giving up without a stop", *gone)
        return False

    def _linger(self) -> None:
        """Stay (idle, disconnected) for ``LINGER`` seconds before exiting: under
        ``docker compose up --exit-code-from monitor`` the monitor must be the first to exit."""
        if self.settings.linger > 0:
            self.bus.close()
            time.sleep(self.settings.linger)

    # -- inputs ---------------------------------------------------------------------------
    def _joined(self) -> tuple[Setup, ServiceDriver, int]:
        """The run's setup, the driver and this process's pid: known once the monitor welcomed it."""
        if self.setup is None or self.driver is None or self.pid is None:
            raise TransportError(f"{self.name}: a protocol step before the monitor's welcome")
        return self.setup, self.driver, self.pid

    def _input(self, step) -> None:
        """A local input (the start, a timer): its effects join the step."""
        _, driver, pid = self._joined()
        try:
            self._apply(lambda: driver.feed(pid, step))
        except (HandlerError, ConfigError) as exc:  # reported at once: the monitor stops the run
            self.rejected, why = self.rejected + 1, f"a local input: handler raised: {exc}"
            self.rejections = [*self.rejections, kept_reason(why)][:REJECTIONS_KEPT]
            self._status()

    def _due_timers(self) -> None:
        """The step's timers: those due, then those they made due at once (``FOLD_ROUNDS``)."""
        for _round in range(FOLD_ROUNDS):
            now = time.monotonic()
            while self.timers and self.timers[0][0] <= now and not self.stopped:
                action = heapq.heappop(self.timers)[2]
                self._input(lambda p, a=action: p.on_local(a))

    def _apply(self, action) -> None:
        """Carry out one input through the driver; a state change is logged at the step's end."""
        setup, driver, pid = self._joined()
        proto, driver.now = setup.protocols[pid], time.time() - self.start_time
        before = proto.state
        if self.broken is not None:  # refused, whose fault kept: a timer left is never due (below)
            first = PROGRAM_FAULT if PROGRAM_FAULT in self.broken else "a handler"
            raise ProtocolError(f"{self.name} takes nothing more: {first} raised first (the first reason)")
        try:
            action()
        except (HandlerError, ConfigError) as exc:  # a raise, a state of no name (setups.LEFT_UNNAMED)
            self.broken, self.timers = str(exc), []
            raise
        finally:
            if proto.state != before:
                self.changed = True
                self.lines.add(self.name, proto.state, proto.clock.time)

    def _handle(self, delivery: Delivery) -> None:
        if delivery.routing_key.startswith("control."):
            control.act(self, delivery.body, self._input)
            self.handled.append(delivery)
            return
        setup, _, _ = self._joined()
        acks: dict[str, int] | None = None if self.links is None else {}  # carried acknowledgements
        try:
            sender, envs = parse_frame(delivery.body, self.settings.run_id, self.name, self.roster, acks)
        except EnvelopeError as exc:
            self._dead_letter(delivery, str(exc))
            return
        if acks and self.links is not None:
            self.links.acked(acks, time.monotonic())
        decoded, copies = [], []  # copies: seqs of a signed delivery's messages handled already
        try:
            for env in envs:  # signed, so its MAC says a run's process made it: a copy is not read
                if delivery.signed and self.inbox.handled(sender, env["seq"]):
                    copies.append(env["seq"])
                    continue
                msg = setup.codec.decode(env["msg"])
                if msg.sender != self.roster[sender]:
                    raise EnvelopeError(f"message claims sender {msg.sender} but comes from {sender}")
                decoded.append((env, msg))
        except (EnvelopeError, MessageError) as exc:
            self._dead_letter(delivery, str(exc))
            for env in envs:  # what waited behind their places in the link goes on
                for held_env, held_msg, taken in self.inbox.refuse(sender, env["seq"]):
                    self._deliver(held_env, held_msg, taken, current=False)
            return
        refused: list[str] = []  # why the protocol refused messages of this delivery
        for env, msg in decoded:
            ready = self.inbox.accept(sender, env["seq"], (env, msg, delivery))
            if not ready and self.inbox.waits(sender, env["seq"]):  # in memory only: its ack waits
                log.info("%s: held back %s from %s (seq %d)", self.name, env["id"], sender, env["seq"])
            elif not ready:
                copies.append(env["seq"])
            for held_env, held_msg, taken in ready:  # this message, then those held back behind it
                problem = self._deliver(held_env, held_msg, taken, current=taken is delivery)
                if problem is not None:
                    refused.append(problem)
        if copies:  # our acknowledgement of the link may have been lost: it goes again
            if self.links is not None:
                self.links.acks.again(sender)
            log.info("%s: dropped duplicates from %s (seq %s)", self.name, sender, copies)
        # Acked once, in order, behind all its messages' effects (held-back ones too); with any refusals' reasons.
        if refused:
            self._dead_letter(delivery, "; ".join(refused), ack=False)
        self.handled.append(delivery)

    def _deliver(self, env: dict, msg: Any, delivery: Delivery, current: bool) -> str | None:
        """Apply one protocol message, next in its link's order (a director's duplicate, ``copy``,
        recorded so). When the protocol refuses it, a message of the ``current`` delivery gives the
        reason back (``_handle`` dead-letters and acks that delivery once); one held back from an
        earlier delivery (whose ack waits for it: ``_publish_step``) is dead-lettered here."""
        _, driver, pid = self._joined()
        frm, copy = self.roster[env["from"]], self.settings.directed and env.get("copy") is True
        try:
            self._apply(lambda: driver.deliver(frm, pid, msg, env["id"], env["vc"], copy))
            return None
        except ProtocolError as exc:  # the state does not accept this message: the sender's fault, or a bug
            log.error("%s: refused %s from %s: %s", self.name, env["id"], env["from"], exc)
            problem = f"{'handler raised' if isinstance(exc, HandlerError) else 'protocol error'}: {exc}"
        except Exception as exc:  # noqa: BLE001 - a protocol failing on its input must not kill the process
            log.exception("%s: the protocol failed on %s", self.name, env["id"])
            problem = f"the protocol failed on it: {exc!r}"  # what it did before failing happened
        self.rejected += 1
        if len(self.rejections) < REJECTIONS_KEPT:
            self.rejections.append(kept_reason(f"{msg.type} {env['id']} from {env['from']}: {problem}"))
        if current:
            return problem
        self._dead_letter(delivery, problem, ack=False)
        return None

    def _dead_letter(self, delivery: Delivery, reason: str, ack: bool = True) -> None:
        self._publish_step(flush=True)  # the step and its batch first: this ack goes behind its events
        self.dead_letters += 1
        log.warning("%s: dead-lettered a message (%s): %s", self.name, delivery.routing_key, reason)
        self.bus.dead_letter(delivery, reason, ack=ack)
        self._status()

    # -- outputs --------------------------------------------------------------------------
    def send_protocol(self, to: int, msg: Any, msg_id: str, vc: dict | None) -> None:
        setup, _, _ = self._joined()
        dest = setup.names[to]
        self.link_seq[to] += 1
        entry = (dest, self.link_seq[to], msg_id, vc or {}, setup.codec.to_dict(msg))
        self.outbox.append(entry)
        self.outkeys[f"{msg.type}.{dest}"] = None
        if self.links is not None:  # kept until the addressee acknowledges it (transient delivery)
            self.links.outbox.keep(f"{msg.type}.{dest}", entry, time.monotonic())

    def _publish_step(self, flush: bool = False) -> None:
        """End the step: the trace batch when due (``flush``: now; with the latest status when a
        state changed), its protocol messages (``frame``, to the first addressee by its key
        ``<TYPE>.<dest>``, to the others by ``BCC``), the acks of its deliveries: held by the bus
        behind everything published before, and while its events wait, behind their batch."""
        handled, self.handled = self.handled, []
        self.trace.deliveries += len(handled)
        setup, _, pid = self._joined()
        finished = self.changed and bool(setup.protocols[pid].finished)  # told at once (tracing.py)
        if self.trace.due(time.monotonic(), flush, self.changed, finished):
            self._flush_trace()
        outbox, self.outbox = self.outbox, []
        if outbox:
            keys, self.outkeys = list(self.outkeys), {}
            acks = None  # transient delivery: the acknowledgements this step carries to its addressees
            if self.links is not None:
                acks = self.links.carried({e[0]: None for e in outbox}, self.trace.traced)
            send_frames(self.bus, frames(self.settings.run_id, self.name, outbox, acks, keys))
        # A message held back (ahead of a missing one) lives only in memory: its delivery's ack is
        # blocked until it is handled, else a kill would lose it (the broker would not redeliver it).
        later, held = self.trace.waiting(), {id(item[2]) for item in self.inbox.holding()}
        if len(held) >= self.bus.prefetch:  # the window full of them: the missing one would never come,
            held = set()  # so they are acked, kept in memory alone (as before; docs/wire.md)
        for delivery in handled:
            self.bus.ack(delivery, later=later, blocked=id(delivery) in held)
        self.bus.unblock(lambda d: id(d) not in held, later=later)

    def _flush_trace(self) -> None:
        """Send the trace batch (``audit.<name>``); the acks that wait for it wait for its confirm. It
        carries the status when a state changed, or when the heartbeat is near (``carries_status``)."""
        status, now = None, time.monotonic()
        if self.changed or self.trace.carries_status(now - self._last_status, self.settings.heartbeat):
            status = self._status_body()
            self._last_status, self.changed = now, False
        body = self.trace.take(status, self.inbox.last)
        if body is not None:
            self.bus.send(f"audit.{self.name}", body)
        self.bus.made()

    def add_timer(self, action: str, dwell: str) -> None:
        if self.settings.directed:
            return  # the director decides when this process acts (directing.py)
        seconds = self.dwell.get(dwell, self.default_dwell)
        self._timer_seq += 1
        heapq.heappush(self.timers, (time.monotonic() + seconds, self._timer_seq, action))

    def _status(self, final: bool = False, beat: bool = False) -> None:
        """A status (the start, the heartbeat, a dead letter, the end) after the step so far (never ahead
        of the trace): in the batch if one goes now, else (and the final one) alone (``status.<name>``);
        no heartbeat (``beat``) that would repeat a finished process's last status (``quiet``)."""
        if beat and self.trace.quiet(self._status_body()):
            self._last_status = time.monotonic()
            return
        self._last_status = float("-inf")  # owed: a batch going now carries it (``_flush_trace``)
        self._publish_step(flush=True)
        if final or self._last_status == float("-inf"):
            self.bus.send(f"status.{self.name}", self.trace.tell(self._status_body(final)))
            self._last_status = time.monotonic()

    def _status_body(self, final: bool = False) -> dict:
        setup, _, pid = self._joined()
        proto = setup.protocols[pid]
        names = setup.names
        try:  # the solution's code (waiting.waits): a raise is told in the status, never a crash here
            waiting, hint = {w: [names.get(p, str(p)) for p in who] for w, who in waits(proto).items()}, None
        except ConfigError as exc:
            waiting, hint = {}, str(exc)
        return {
            "kind": "status",
            "name": self.name,
            "pid": self.pid,
            "state": state_text(proto.state),  # a plain Enum's member by its name, never its value
            "lamport": proto.clock.time,
            "finished": bool(proto.finished),
            "waiting": waiting,
            "wants": told(proto),  # what it waits to enter: a stall's report names it (sim/stuck.py)
            "hint": hint or proto.stall_hint(),
            "timers": len(self.timers),
            "duplicates": self.inbox.duplicates,
            "gaps": self.inbox.gaps,
            "dead_letters": self.dead_letters,
            "rejected": self.rejected,
            "rejections": self.rejections,
            **{key: getattr(self.bus, key) for key in ("forged", "forgeries", "reconnects", "redelivered")},
            "final": final,
            **({} if self.links is None else {"retransmitted": self.links.outbox.retransmitted}),
            "events": self.audit.recorded,
            "t": time.time() - self.start_time,
        }
