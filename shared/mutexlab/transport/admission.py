"""The monitor's first phase (docs/rabbitmq.md#membership): admitting the participants.

Joins arrive on the monitor's queue; ``membership.Roster`` decides who is admitted with which pid
and when the roster closes (P known, or the discovery window over); this phase carries the
messages: each refusal (named, with its reason), the welcome that starts the run (re-sent to a
member that joins again), the members' queues declared before anyone is welcomed. A reconnect
while participants join starts the discovery window again. ``monitor.Monitor`` runs it first.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from functools import partial
from typing import IO

from ..bus.amqp import TransportError
from ..bus.inbox import Delivery
from ..bus.rabbit import Bus
from ..bus.topology import Topology
from ..protocols.registry import Solution, build_setup
from ..setups import ConfigError, Setup
from ..trace import TraceWriter
from ..words import article
from .feed import AuditFeed
from .membership import REJOIN_GRACE, Member, Roster, role_of
from .outcome import EXIT_CONFIG, EXIT_STALLED
from .settings import MonitorSettings
from .view import LiveView

log = logging.getLogger("mutexlab.monitor")


class Admission:
    """Admitting the participants, as a part of ``monitor.Monitor`` (whose state it shares)."""

    settings: MonitorSettings
    out: IO[str]
    solution: Solution  # resolved once from settings.algorithm (Monitor)
    setup: Setup | None
    topology: Topology
    bus: Bus
    roster: Roster
    members: dict[str, Member]
    welcomes: dict[str, dict]  # instance -> its welcome (re-sent if it joins again)
    trace: TraceWriter
    progress: LiveView
    feed: AuditFeed
    refused: list[dict]  # each refused instance once: instance, role, reason
    _declared: Setup | None  # the setup whose members' queues are declared
    started: float

    def _dispatch(self, delivery: Delivery) -> None:
        raise NotImplementedError  # the monitor's: joins come with everything else on its queue

    def _renew_leases(self) -> None:
        raise NotImplementedError  # the monitor's: the run's queues live while it does

    def _gather(self) -> int | None:
        deadline = time.monotonic() + self.settings.join_timeout
        generation = self.bus.generation
        while time.monotonic() < deadline:
            for delivery in self.bus.poll(0.2):
                self._dispatch(delivery)
            self._renew_leases()
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
        self._declared = None  # declared again before the welcome, on the new connection
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
                else build_setup(self.solution, p, self.settings.options, self.settings.seed)
            )
            self.members = self.roster.close(setup)
            self.feed.members = self.members
        except ConfigError as exc:
            print(f"monitor: cannot start with P={p}: {exc}", file=self.out)
            for member in self.roster.members:
                self._send_control(
                    member.instance,
                    {"kind": "refused", "instance": member.instance, "reason": f"cannot start: {exc}"},
                )
            return EXIT_CONFIG
        setup.duplicates = self.settings.duplicates
        self.setup = setup
        header = dict(setup.run_event(), run_id=self.settings.run_id, transport="rabbitmq")
        self.trace.write(header)
        self._declare_members(setup)
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
            # sent together, confirmed together: one wait for the broker, not one per member
            self.bus.send(f"control.{member.instance}", self.welcomes[member.instance])
        try:
            self.bus.flush()
        except TransportError as exc:  # a joiner gone, or the broker refused one
            log.warning("monitor: a welcome was not delivered: %s", exc)
        print(
            f"monitor: run {self.settings.run_id}: {setup.algorithm} with "
            f"{', '.join(sorted(self.members, key=lambda n: self.members[n].pid or 0))} — started",
            file=self.out,
            flush=True,
        )
        self.progress.begin([setup.names[p] for p in sorted(setup.names)])
        self.feed.last_progress = time.monotonic()
        return None

    def _declare_members(self, setup: Setup) -> None:
        """Every member's queue: declared before anyone is welcomed (and may send to it)."""
        if self._declared is not setup:
            names = list(setup.names.values())
            self.bus.call(partial(self.topology.declare_participants, names=names, types=setup.codec.types))
            self._declared = setup

    def _send_control(self, target: str, body: dict) -> None:
        try:
            self.bus.publish(f"control.{target}", body)
        except TransportError as exc:  # the joiner is gone (its queue was exclusive)
            log.warning("monitor: cannot reach %s: %s", target, exc)

    def _join(self, data: dict) -> None:
        """Idempotent by instance id: a participant re-announces its join after each reconnect, and
        the broker may hand a join over twice; the answer is the same each time."""
        instance, role = str(data.get("instance", "")), str(data.get("role", ""))
        if not instance:
            return
        again = self.roster.member(instance) is not None or instance in self.roster.refusals
        wants = data.get("wants")
        wants = wants if isinstance(wants, str) and role_of(wants) == role else None
        before = {m.instance for m in self.roster.members}
        reason = self.roster.join(instance, role, time.monotonic(), wants)
        for gone in before - {m.instance for m in self.roster.members}:
            log.warning(
                "monitor: %s (%s) replaced by %s, a later joiner with its stable name", gone, wants, instance
            )
        if reason is not None:
            if again:
                log.info("monitor: %s joined again; refusal re-sent", instance)
            else:
                self.refused.append({"instance": instance, "role": role, "reason": reason})
                log.warning("monitor: refused %s (%s): %s", instance, role, reason)
                print(f"monitor: refused {role} {instance}: {reason}", file=self.out, flush=True)
            self._send_control(instance, {"kind": "refused", "instance": instance, "reason": reason})
            return
        member = self.roster.member(instance)
        os_pid = data.get("os_pid")
        if member is not None and member.os_pid is None and type(os_pid) is int:
            member.os_pid = os_pid
        if instance in self.welcomes:  # a member that lost its connection before its welcome arrived
            log.info("monitor: %s joined again; welcome re-sent", instance)
            self._send_control(instance, self.welcomes[instance])
            return
        if again:
            log.info("monitor: %s joined again (after a reconnect); already in the roster", instance)
            return
        log.info("monitor: %s joined as %s (%d so far)", instance, article(role), len(self.roster.members))
