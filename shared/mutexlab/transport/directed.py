"""The director: a scenario replayed on real participants over RabbitMQ (``mutexlab replay
--over-rabbitmq``; docs/rabbitmq.md#directed-replay).

``mutexlab run``'s supervisor starts the monitor and the participants, directed (``DIRECTED``,
directing.py): they act only on the director's word. The director (a process forked by the
replaying one, ``direct``) consumes a queue of its own bound to every step's trace batch
(``audit.*``) and status (``status.*``). Once every participant is welcomed (its first status), and before any of them has
started, it moves each participant's protocol bindings (``<TYPE>.<name>``) from the participant's
queue to its own and binds the participant's queue to ``release.<name>``: from then on every
protocol message is held by the director. Then it plays the script (script.py) one action at a
time — start everyone, a local decision, or the release of one held message, chosen by its link
and position as the scenario says (so a message may overtake older ones: ``overtake``; a
``duplicate`` releases a copy and keeps the message held) — and
waits until the action is observed done: every process has recorded the events the simulator
recorded for it up to there, and every message they sent is held. A released message is
renumbered in its link's release order (the receiver's inbox takes it as the next one).

Invariants: one action at a time, the next only once the previous is done; a process that
records another event than the simulator's, or not within ``step_timeout``, or a message not in
flight when due, ends the replay as *diverged at step N* (never SAFE: docs/exit-codes.md, 3).
A trace batch redelivered after a reconnect is taken once (each event ticks its process's own
vector-clock entry). When the scenario is played, every participant gets ``over`` and the monitor ends the run as any
run (complete, or stalled after its stall timeout) and audits its trace.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..bus.amqp import TransportError
from ..bus.rabbit import Bus
from ..bus.topology import Topology
from ..bus.wire import EnvelopeError, envelope, loads, parse_frame, split_step
from .script import Action, Script, signature
from .settings import queue_kind
from .spawn import die_with_parent
from .supervisor import Plan, execute, sweep
from .tracing import unpack_batch


class Diverged(Exception):
    """The real run left the scenario: the message says at which step and how."""


@dataclass
class Directed:
    """What the director saw: ``diverged`` (None when the run followed every step), the enters in
    the order they came, the messages it released and whether a participant rejected one."""

    diverged: str | None = None
    entered: list[str] = field(default_factory=list)
    released: int = 0
    rejected: bool = False
    steps: int = 0  # scenario steps played to the end
    stem_entered: int | None = None  # an unrolled loop: len(entered) when its first round began


class Director:
    def __init__(
        self, plan: Plan, names: dict[int, str], types: list[str], script: Script, step_timeout: float = 10.0
    ) -> None:
        self.plan = plan
        self.names = names  # pid -> name
        self.pids = {n: p for p, n in names.items()}
        self.types = types
        self.script = script
        self.step_timeout = step_timeout
        persistent = plan.delivery == "persistent"
        self.topology = Topology(plan.run_id, queue_kind(plan.amqp_url, "auto", plan.delivery), persistent)
        self.queue = self.topology.queue("director")
        self.bus = Bus(
            plan.amqp_url,
            self.topology,
            connect_timeout=plan.join_timeout,
            on_connect=self._declare,
            name="director",
            secret=plan.secret,
        )
        self.held: dict[tuple[int, int], list[dict]] = {}  # link -> its messages in flight, oldest first
        self.known: set[str] = set()  # every message id the director has held
        self.released: Counter[tuple[int, int]] = Counter()  # link -> messages released on it
        self.events: dict[str, list[dict]] = {n: [] for n in names.values()}
        self.statuses: dict[str, dict] = {}
        self.out = Directed()

    def _declare(self, channel) -> None:
        channel.queue_declare(self.queue, exclusive=True, auto_delete=True)
        for key in ("audit.*", "status.*"):
            channel.queue_bind(self.queue, self.topology.exchange, routing_key=key)

    # -- the replay ------------------------------------------------------------------------------
    def run(self) -> Directed:
        """Direct the run to the end of the script (or to where it diverged); then ``over``."""
        try:
            self.bus.connect()
            self.bus.consume(self.queue)
            admitted = lambda: all(n in self.statuses for n in self.events)  # noqa: E731
            self._until(admitted, self.plan.join_timeout, "the start: the participants were not all admitted")
            self._take_over()
            for action in self.script.actions:
                cycle = self.script.cycle_from
                if cycle is not None and self.out.stem_entered is None and action.step >= cycle:
                    self.out.stem_entered = len(self.out.entered)
                self._act(action)
                if action.refused:  # the simulator's protocol refused it: so must the real one
                    refused = f"step {action.step} ({action.kind}): not refused as in the simulator"
                    self._until(
                        lambda a=action: self._rejected(self.names[a.pid]), self.step_timeout, refused
                    )
                    self.out.rejected = True
                    self.out.steps = action.step
                    break
                undone = f"step {action.step} ({action.kind}): not done"
                self._until(lambda a=action: self._done(a), self.step_timeout, undone, action.expect)
                self.out.steps = action.step
            if not self.out.rejected:
                self._settle()
                self.out.steps = self.script.played
        except Diverged as exc:
            self.out.diverged = str(exc)
        except TransportError as exc:
            self.out.diverged = f"diverged: the director lost the broker: {exc}"
        finally:
            try:
                for name in self.events:
                    self.bus.publish(f"control.{name}", {"kind": "directed", "action": "over"})
            except TransportError:
                pass
            self.bus.close()
        return self.out

    def _take_over(self) -> None:
        """Every protocol message to a participant comes to the director's queue (module doc)."""
        ex = self.topology.exchange

        def move(channel) -> None:
            for name in self.events:
                queue = self.topology.queue(name)
                for t in self.types:
                    channel.queue_bind(self.queue, ex, routing_key=f"{t}.{name}")
                    channel.queue_unbind(queue, ex, routing_key=f"{t}.{name}")
                channel.queue_bind(queue, ex, routing_key=f"release.{name}")

        self.bus.call(move)

    def _act(self, action: Action) -> None:
        if action.kind == "start":
            for name in self.events:
                self.bus.publish(f"control.{name}", {"kind": "directed", "action": "start"})
        elif action.kind in ("request", "exit"):
            self.bus.publish(f"control.{self.names[action.pid]}", {"kind": "directed", "action": action.kind})
        else:
            self._release(action)

    def _release(self, action: Action) -> None:
        link = (action.frm, action.pid)
        queue = self.held.get(link, [])
        if action.index is not None:  # deliver, overtake: by position, as the simulator chose
            if action.index >= len(queue):
                raise Diverged(
                    f"diverged at step {action.step}: {len(queue)} message(s) in flight from "
                    f"{self.names[link[0]]} to {self.names[link[1]]}, none at position {action.index}"
                )
            env = queue[action.index]
            if action.msg_id is not None and env["id"] != action.msg_id:
                raise Diverged(
                    f"diverged at step {action.step}: {env['id']} is where the simulator had {action.msg_id}"
                )
        else:  # a drain's delivery: the message the simulator delivered
            found = next((e for e in queue if e["id"] == action.msg_id), None)
            if found is None:
                raise Diverged(f"diverged at step {action.step}: {action.msg_id} is not in flight")
            env = found
        if not action.keep:  # a duplicate releases a copy: the message stays held
            queue.remove(env)
        self.released[link] += 1
        to = self.names[link[1]]
        body = envelope(
            self.plan.run_id, env["id"], env["from"], to, self.released[link], env["vc"], env["msg"]
        )
        if action.keep:  # the receiver records it as the network's copy (its original is paired)
            body["copy"] = True
        self.bus.publish(f"release.{to}", body)
        self.out.released += 1

    # -- observing ---------------------------------------------------------------------------------
    def _until(self, ready, timeout: float, why: str, expect: dict[str, int] | None = None) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            left = deadline - time.monotonic()
            if left <= 0:
                raise Diverged(f"diverged at {why} within {timeout:g}s{self._lag(expect or {})}")
            for delivery in self.bus.poll(min(0.2, left)):
                self._take(delivery)
                self.bus.ack(delivery)

    def _settle(self, quiet: float = 0.3) -> None:
        """After the last action: nothing more comes that the simulator did not record."""
        end = time.monotonic() + quiet
        while time.monotonic() < end:
            for delivery in self.bus.poll(max(0.0, end - time.monotonic())):
                self._take(delivery)
                self.bus.ack(delivery)

    def _done(self, action: Action) -> bool:
        counts = all(len(self.events[n]) >= k for n, k in action.expect.items())
        sent = all(e["id"] in self.known for evs in self.events.values() for e in evs if e["event"] == "send")
        return counts and sent

    def _rejected(self, name: str) -> bool:
        return bool(self.statuses.get(name, {}).get("rejected"))

    def _lag(self, expect: dict[str, int]) -> str:
        """Who has not recorded the events ``expect`` counts (an action's): how far each got."""
        late = [
            f"{n} recorded {len(self.events[n])} of {k} events"
            for n, k in expect.items()
            if len(self.events[n]) < k
        ]
        return f" ({'; '.join(late)})" if late else ""

    def _take(self, delivery) -> None:
        head, _, rest = delivery.routing_key.partition(".")
        body = delivery.body
        if head == "status":
            data = _json(body)
            if data is not None:
                self.statuses[rest] = data
            return
        protocol, trace = split_step(body) if head == "audit" else (body, b"")
        if head != "audit" or protocol is not trace:
            self._hold(protocol)
        if head == "audit":
            data = _json(trace)
            if data is not None and "events" in data:
                self.record(rest, data)

    def _hold(self, part: bytes) -> None:
        roster = self.pids
        for name in self.events:
            try:
                sender, envs = parse_frame(part, self.plan.run_id, name, roster)
            except EnvelopeError:
                continue
            for env in envs:
                if env["id"] not in self.known:
                    self.known.add(env["id"])
                    link = self.held.setdefault((roster[sender], roster[name]), [])
                    link.append(env)
                    link.sort(key=lambda e: e["seq"])

    def record(self, name: str, batch: dict) -> None:
        """Take a trace batch of ``name``: Diverged when it records what the simulator did not."""
        if name not in self.events or unpack_batch(batch) is not None:
            return
        if isinstance(batch.get("status"), dict):
            self.statuses[name] = batch["status"]
        mine = self.events[name]
        expected, steps = self.script.expected[name], self.script.steps[name]
        for event in batch.get("events") or []:
            own = (event.get("vc") or {}).get(name)
            if isinstance(own, int) and mine and own <= mine[-1]["vc"][name]:
                continue  # a batch redelivered (after a reconnect): its own clock entry says so
            at = len(mine)
            if at >= len(expected):
                last = steps[-1] if steps else 0
                raise Diverged(
                    f"diverged after step {last}: {name} recorded {event.get('event')} beyond the scenario"
                )
            if signature(event) != expected[at]:
                raise Diverged(
                    f"diverged at step {steps[at]}: {name} recorded {_show(signature(event))} where "
                    f"the simulator recorded {_show(expected[at])}"
                )
            mine.append(event)
            if event.get("event") == "enter":
                self.out.entered.append(name)


def _json(body: bytes) -> dict | None:
    try:
        data = loads(body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _show(sig: tuple[Any, ...]) -> str:
    keys = ("event", "id", "resource", "state", "type", "to", "from")
    return " ".join(f"{k}={v}" if k != "event" else str(v) for k, v in zip(keys, sig) if v is not None)


def direct(
    plan: Plan, names: dict[int, str], types: list[str], script: Script, step_timeout: float, summary: dict
) -> tuple[int, Directed]:
    """Run ``plan`` (supervisor.execute: the monitor prints as it goes) with the director beside it;
    the monitor's exit code and what the director saw. ``summary`` is filled with the monitor's
    summary. The director runs in a forked process of its own where the system forks (this process
    stays single-threaded, so the supervisor may fork the services: spawn.can_fork), else in a
    thread. Invariant: once the director has ended, nothing of the run is left on the broker (but
    with ``--keep``): its ``over`` can come after the monitor's clean-up, and its bus, finding the
    run's exchange gone, reconnects and declares the base again (exchanges, monitor's and dead
    letters' queues), so the run is swept once more."""
    director = Director(plan, names, types, script, step_timeout)
    wait = step_timeout * (len(script.actions) + 1) + plan.join_timeout
    lost = Directed(diverged="diverged: the director did not finish")
    if not hasattr(os, "fork"):
        seen: list[Directed] = []
        thread = threading.Thread(target=lambda: seen.append(director.run()), name="director", daemon=True)
        thread.start()
        code = execute(plan, summary=summary)
        thread.join(timeout=wait)
        sweep(plan)
        return code, (seen[0] if seen else lost)
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(
        target=_direct, args=(director, sender, os.getpid()), name="director", daemon=True
    )
    child.start()
    sender.close()
    try:
        code = execute(plan, summary=summary)
        result = receiver.recv() if receiver.poll(wait) else lost
    except EOFError:  # the director died without a word
        result = lost
    finally:
        child.join(timeout=2.0)
        if child.is_alive():
            child.terminate()
            child.join()
        sweep(plan)
    return code, result


def _direct(director: Director, sender, parent: int) -> None:
    """The director's process: run it, send back what it saw. It dies with ``parent`` (the
    command's process), even a SIGKILLed one, whose ``finally`` never ends it."""
    die_with_parent(parent)
    sender.send(director.run())
    sender.close()
