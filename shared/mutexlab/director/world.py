"""One run of the node programs under the director: held messages, the workload, the trace.

Invariants: a message a node sends is held (``links``, FIFO per link) until a step delivers it;
every step is one input line to one node, and the node's answer (up to its ``done``) is applied
before the next step, so the trace is exactly the effects of the steps in order. Every event
ticks its process's own vector-clock entry once; a ``recv`` first takes the element-wise maximum
with the clock its message carried (docs/trace-format.md). Memory: the events of one run, bounded
by ``MAX_EVENTS``.
"""

from __future__ import annotations

import hashlib
import json
import select
import time
from collections import Counter, deque
from dataclasses import dataclass
from typing import Any

from ..messages import body_lacks
from ..sim.driver import resource_kind
from ..trace import check_event
from . import answers
from .lines import NodeFault, shorten
from .problem import Problem
from .process import NodeProcess, Pool

# A step: (kind, node, message id or ""). Kinds: request and release (the workload, driven
# problems), deliver (a held message to its receiver), duplicate (a delivered message again),
# crash (an idle node killed and started afresh; the messages held for it stay held), wake (a
# node that paused goes on: an MPI rank's sleep inside its critical section), land (a held
# message reaches an MPI rank whose threads poll, none of them running: it finds it at its next
# step with what came meanwhile, as messages may come in between two polls under any MPI),
# linger (an MPI rank's own loops of polls go round with nothing arriving while the run is not at
# rest, so a bounded one may give up before a message comes; its id says where the rank stands:
# the place its loops wait and a digest of its inputs so far, so the same id is the same rank state).
Action = tuple[str, int, str]
MAX_EVENTS = 200_000  # trace events of one run: what bounds its memory (some 100 MB)
MAX_RUN_BYTES = 64 << 20  # bytes of the lines one run's answers hold (long lines: fewer events)
# Seconds a run at rest with someone waiting gives the nodes to show a line written after a done
# (a timer's, another thread's) before it is called a deadlock.
LATE_GRACE = 0.05
# At rest, an MPI rank's thread stopped running (a busy wait, a long computation) runs alone up to
# this much processor time with nothing new: the `stretch` input gives it to mutexlab's MPI (its
# "ns"), the one source of that limit (docs/mpi.md#busy).
STRETCH_SECONDS = 1.5
# At rest nothing is in flight, so under any MPI nothing arrives while an MPI rank's own loop of
# polls, sleeps or timed waits goes round, and a bounded one (``for (i = 0; i < 500 && !flag;
# i++) { MPI_Iprobe(…); usleep(…); }``) gives up: the `linger` input lets such loops go round up
# to this many polls with nothing new, the one source of that count (docs/mpi.md#linger).
LINGER_POLLS = 20_000
# Lingers of one rank between two steps: another only after one in which it said something (a
# line read as an entry, a state, a send), as a loop that gave up may start another. A loop that
# acts at each round (a send ends a linger) is let go round no further (``lingers_cut``).
LINGERS_AT_REST = 8


def _entries(problem: Problem) -> dict[int, int]:
    """How often each node must enter (``--entries``: K for all, or a list rank by rank)."""
    wanted = problem.options.get("entries") or 0
    nodes = sorted(problem.names)
    if isinstance(wanted, list):
        return dict(zip(nodes, map(int, wanted), strict=False))
    return dict.fromkeys(nodes, int(wanted)) if int(wanted) > 0 else {}


@dataclass(frozen=True)
class Faults:
    reorder: bool = False  # any held message may be delivered, not only the oldest on its link
    duplicate: int = 0  # deliveries of an already delivered message allowed per run
    crash: int = 0  # crash-and-restart steps allowed per run (of an idle node, driven problems)


@dataclass
class Message:
    id: str
    src: int
    dst: int
    body: Any
    vc: dict[str, int]


class Run:
    def __init__(
        self,
        problem: Problem,
        pool: Pool,
        faults: Faults,
        seed: int,
        program: list[str],
        memory_bodies: bool = False,
    ) -> None:
        self.memory_bodies = memory_bodies  # messages carry a program's memory as it is (answers.py)
        self.problem, self.pool, self.faults = problem, pool, faults
        self.names = problem.names
        self.events: list[dict[str, Any]] = [problem.header(program, faults.duplicate > 0)]
        self.clocks: dict[int, dict[str, int]] = {n: {} for n in self.names}
        self.links: dict[tuple[int, int], deque[Message]] = {}
        self.delivered: dict[str, Message] = {}  # for duplicates: delivered once, not yet again
        self.duplicates_left = faults.duplicate
        self.crashes_left = faults.crash if problem.driven else 0
        self.seed, self.program = seed, program
        self.sent: Counter[int] = Counter()
        self.bytes = 0  # of the answers' lines so far (MAX_RUN_BYTES)
        self.clock_jumped = False  # a node said a timeout loop of its passed its deadline at once
        self.lingers_cut = False  # a rank's loop acted at LINGERS_AT_REST lingers in a row: no more
        self.read_held = False  # a node held a read of its window until the bytes changed (not driven)
        self.sync_sends = False  # a waiting rank's standard sends were synchronous (--sync-sends)
        self.finalize_pending = ""  # an MPI rank's thread still in a call at its MPI_Finalize
        self.requests_left = dict.fromkeys(self.names, problem.requests)
        self.waiting: set[int] = set()
        # Nodes asking on their own, each told to enter ``entries`` times (one count, or one per
        # rank in node order): waiting until they have.
        self.entries_left = _entries(problem) if problem.algorithm is None and not problem.driven else {}
        self.waiting.update(node for node, left in self.entries_left.items() if left > 0)
        self.holding: dict[int, Counter[str]] = {n: Counter() for n in self.names}
        self.paused: Counter[int] = Counter()  # pauses of each node not yet woken
        # MPI ranks whose main thread has not ended, by their last done: what it waits in (a hang at rest)
        self.blocked: dict[int, str] = {}
        self.astir: set[int] = set()  # MPI ranks in a loop of their own (polls, sleeps): no hang is claimed
        self.polling: set[int] = set()  # MPI ranks a thread of which polls: messages may land there
        self.lingering: set[int] = set()  # MPI ranks a thread of which waits in a loop of its own
        self.loops: dict[int, str] = {}  # of those, where their loops wait (the done's "loops")
        # Per node, a digest of its inputs so far but quiet lingers: with ``loops``, a linger step's
        # id, the same for the same state of the rank in any run (its program is deterministic).
        self.history: dict[int, bytes] = {}
        self.quiet_linger = False  # the last step was a linger that changed nothing (docs/mpi.md#linger)
        self.lingers_in_a_row: Counter[int] = Counter()  # linger steps of a rank since its last other input
        self.landed: set[int] = set()  # MPI ranks a message landed for since their last other input
        # MPI ranks with a thread stopped running with nothing new (docs/mpi.md#busy), by its words
        self.spinning: dict[int, str] = {}
        self.step = 0
        # per input (inits first, then one per step): a digest of the node's answer; the inputs at
        # rest (stretch, linger) are no steps and have none, so the same steps give the same list
        self.digests: list[str] = []
        self.other_digests: list[tuple[str, ...]] = []  # the same as older scenarios hold them
        self.said: list[tuple[int, str]] = []  # per input: (node, what it was), for messages
        self.procs: dict[int, NodeProcess] = pool.fresh(problem.nodes, problem.first)
        inits = {node: self._init_line(node) for node in sorted(self.procs)}
        for node, line in inits.items():  # every init sent before any answer is read: the nodes
            self.procs[node].tell(line)  # start in parallel; answers are applied in id order
        for node, line in inits.items():
            self._advance(node, line)
            self._apply_answer(node, line, "init", self.procs[node].answer(line))

    def _init(self, node: int, restarted: bool = False) -> None:
        self._input(node, self._init_line(node, restarted), "init")

    def _init_line(self, node: int, restarted: bool = False) -> dict[str, Any]:
        return {
            "type": "init",
            "id": node,
            "name": self.names[node],
            "peers": sorted(self.procs[node].peers),
            "nodes": self.problem.nodes,
            "seed": self.seed,
            "problem": self.problem.name,
            "options": self.problem.options,
            **({"restarted": True} if restarted else {}),
        }

    # -- what may happen next --------------------------------------------------------------
    def enabled(self) -> list[Action]:
        """Every step possible now, in a fixed order (the same world gives the same list)."""
        found: list[Action] = []
        for (_, dst), held in sorted(self.links.items()):
            if held:
                found += [("deliver", dst, m.id) for m in (held if self.faults.reorder else (held[0],))]
        found += [("wake", node, "") for node in sorted(self.paused) if self.paused[node] > 0]
        found += self._landings()
        if self.duplicates_left > 0:
            found += [("duplicate", m.dst, m.id) for m in self.delivered.values()]
        if found and self.lingering:  # not at rest: a loop of polls may give up before the rest comes
            # at most LINGERS_AT_REST in a row, then its other inputs' turn; none while messages
            # landed for it (they would arrive with it: a delivery in place of the landing is that)
            cut = {n for n in self.lingering - self.landed if self.lingers_in_a_row[n] >= LINGERS_AT_REST}
            self.lingers_cut |= bool(cut)
            found += [("linger", n, self._linger_id(n)) for n in sorted(self.lingering - cut - self.landed)]
        if self.problem.driven:  # after the deliveries: a first choice holds the resource long
            resource = self.problem.resource
            for node in sorted(self.names):
                if self.holding[node][resource] > 0:
                    found.append(("release", node, ""))
                elif self.requests_left[node] > 0 and node not in self.waiting and not self.holding[node]:
                    found.append(("request", node, ""))
        if self.crashes_left > 0:
            found += [
                ("crash", n, "") for n in sorted(self.names) if not self.holding[n] and n not in self.waiting
            ]
        return found

    def _linger_id(self, node: int) -> str:
        return f"{self.loops.get(node, '')[:16]}.{self.history.get(node, b'').hex()}"

    def _landings(self) -> list[Action]:
        """A held message may land at a polling MPI rank while another is held for it: that one's
        step comes later, and the rank finds both at once (so no landed message is left unseen)."""
        found: list[Action] = []
        for node in sorted(self.polling):
            links = [link for (_, dst), link in sorted(self.links.items()) if dst == node and link]
            if sum(map(len, links)) >= 2:
                found += [("land", node, link[0].id) for link in links]
        return found

    def settle(self, grace: float, ends: float = 0.0, after: str = "") -> None:
        """NodeFault if a node wrote after its last done (waiting up to ``grace`` seconds for it), or
        a kept node's output ended (waiting up to ``ends`` seconds for it; ``after``: only for a
        node whose last answer was to that input — the end of another is another finding)."""
        deadline = time.monotonic() + grace
        for node in sorted(self.procs):
            self.procs[node].late(max(deadline - time.monotonic(), 0.0))
        if ends > 0:  # a moment for a kept node's output to end, cut short when one does
            kept = {
                p.out: p
                for p in self.procs.values()
                if p.reusable and not p.eof and (not after or p.answered == after)
            }
            end = time.monotonic() + ends
            while kept and not any(p.eof for p in self.procs.values()) and time.monotonic() < end:
                for fd in select.select(list(kept), [], [], max(end - time.monotonic(), 0.0))[0]:
                    kept[fd].late()  # reads what is there: a line is a fault, the end is noted
        for node in sorted(self.procs):
            self.procs[node].gone()

    def never_ended(self) -> dict[str, str]:
        """The MPI ranks whose main thread waits (by their last done), by node name: at rest, for
        ever — none while a rank is astir: its loop may end and serve them."""
        first = self.problem.first
        if self.astir:
            return {}
        return {self.names[n]: f"rank {n - first} waits in {why}" for n, why in sorted(self.blocked.items())}

    def stretch(self, stretched: set[int]) -> bool:
        """At rest: let a rank's threads stopped running run alone a longer stretch (a long computation
        ends), once for each rank not in ``stretched`` (added to it); False when none is left."""
        node = next((n for n in sorted(self.spinning) if n not in stretched), None)
        if node is None:
            return False
        stretched.add(node)
        line = {"ns": int(STRETCH_SECONDS * 1e9), "type": "stretch"}
        self._input(node, line, "stretch", step=False, history=False)
        self._advance(node, line)  # the same schedule gives the same stretches: its history has it
        return True

    def linger(self, lingered: Counter[int]) -> bool:
        """At rest: let a rank's own loops of polls go on with nothing arriving (docs/mpi.md#linger),
        each rank in ``lingered`` (counted there) again only after a linger it said something in,
        at most ``LINGERS_AT_REST`` times; False when none is left."""
        node = next(
            (n for n in sorted(self.lingering) if lingered[n] == 0 or 0 < lingered[n] < LINGERS_AT_REST),
            None,
        )
        self.lingers_cut |= any(lingered[n] >= LINGERS_AT_REST for n in self.lingering)
        if node is None:
            return False
        before, line = len(self.events), {"polls": LINGER_POLLS, "type": "linger"}
        self._input(node, line, "linger", step=False, history=False)
        if len(self.events) > before:  # it said something: its loop gave up, its state is another
            lingered[node] += 1
            self._advance(node, line)
        else:  # quiet: never again before the next step (negative: no count reaches it)
            lingered[node] = -1
        return True

    @property
    def in_flight(self) -> int:
        return sum(len(held) for held in self.links.values())

    # -- taking a step ---------------------------------------------------------------------
    def do(self, action: Action) -> None:
        """Take ``action`` (one of ``enabled()``); NodeFault when the node misbehaves."""
        kind, node, ident = action
        self.step += 1
        self.quiet_linger = False
        resource = self.problem.resource if self.problem.driven else ""
        if kind == "request":
            self.requests_left[node] -= 1
            self.waiting.add(node)
            self._record(node, "request", resource=resource)
            self._input(node, {"type": "request", "resource": resource}, f"request {resource}")
        elif kind == "release":
            held = self.holding[node][resource]
            self._input(node, {"type": "release", "resource": resource}, f"release {resource}")
            if (left := self.holding[node][resource]) > 0:
                raise NodeFault(
                    "protocol",
                    node,
                    f"node {node} did not exit {resource} when asked to release it"
                    if left == held
                    else f"node {node} exited {held - left} of the {held} units of {resource} it held when "
                    "asked to release it (an exit's units, 1 unless written, are those it entered)",
                )
        elif kind in ("deliver", "land"):
            message = self._take(node, ident)
            self._deliver(message, f"message {ident}", land=kind == "land")
            if self.faults.duplicate:
                self.delivered[ident] = message
        elif kind == "wake":
            self.paused[node] -= 1
            self._input(node, {"type": "wake"}, "wake")
        elif kind == "linger":
            self._linger_step(node)
        elif kind == "crash":
            self.crashes_left -= 1
            self.paused[node] = 0
            self._record(node, "crash")
            self.procs = self.pool.restart(node)
            self._init(node, restarted=True)
        elif kind == "duplicate":
            message = self.delivered.pop(ident)
            self.duplicates_left -= 1
            self._deliver(message, f"a duplicate of message {ident}", copy=True)
        else:
            raise ValueError(f"unknown step {action!r}")

    def _linger_step(self, node: int) -> None:
        """A rank's own loops of polls go round with nothing arriving while other steps are possible
        (docs/mpi.md#linger). Quiet (``quiet_linger``) when it said and sent nothing, paused not,
        and its loops wait where they waited: only a count went up, which a loop with no count, or
        with a longer one than the linger's, does not act on — the rank's state is taken as the one
        before it (its history unchanged), and a search need not go on from it."""
        line = {"polls": LINGER_POLLS, "type": "linger"}
        where = self._stands(node)
        self._input(node, line, "linger", history=False)
        self.quiet_linger = node in self.lingering and self._stands(node) == where
        if not self.quiet_linger:
            self._advance(node, line)
        else:  # only one that acted counts towards LINGERS_AT_REST in a row
            self.lingers_in_a_row[node] -= 1

    def _stands(self, node: int) -> tuple[Any, ...]:
        """What a rank's done and its outputs said of it, as far as a linger may change it."""
        flags = (node in self.lingering, node in self.polling, node in self.astir)
        return (len(self.events), sum(self.sent.values()), self.paused[node], self.loops.get(node),
                self.blocked.get(node), self.spinning.get(node), flags)  # fmt: skip

    def _advance(self, node: int, line: dict[str, Any]) -> None:
        """``node``'s history with one more input."""
        digest = hashlib.blake2b(self.history.get(node, b""), digest_size=8)
        digest.update(json.dumps(line, sort_keys=True, default=str).encode())
        self.history[node] = digest.digest()

    def _take(self, dst: int, ident: str) -> Message:
        for (_, to), held in self.links.items():
            if to == dst:
                for message in held:
                    if message.id == ident:
                        held.remove(message)
                        return message
        raise ValueError(f"message {ident} is not held for node {dst}")

    def _deliver(self, message: Message, what: str, copy: bool = False, land: bool = False) -> None:
        """Hand ``message`` to its receiver; ``copy``: the network's second delivery of it, whose
        ``recv`` says so (``"copy": true``: the audit pairs its send with the first one only);
        ``land``: an MPI rank's library keeps it, none of its threads running (``"land": true``)."""
        node = message.dst
        own = self.clocks[node]
        for name, tick in message.vc.items():
            if own.get(name, 0) < tick:
                own[name] = tick
        type_ = message.body.get("type") if isinstance(message.body, dict) else None
        self._record(
            node,
            "recv",
            type=type_ if isinstance(type_, str) else "message",
            id=message.id,
            **{"from": self.names[message.src]},
            **({"copy": True} if copy else {}),
        )
        line = {"type": "recv", "from": message.src, "body": message.body, **({"land": True} if land else {})}
        self._input(node, line, what)

    def _input(
        self, node: int, line: dict[str, Any], what: str, step: bool = True, history: bool = True
    ) -> None:
        if step and history:
            self._advance(node, line)
        if step:
            self.lingers_in_a_row[node] = self.lingers_in_a_row[node] + 1 if line["type"] == "linger" else 0
            (self.landed.add if line.get("land") else self.landed.discard)(node)
        self._apply_answer(node, line, what, self.procs[node].ask(line), step)

    def _apply_answer(self, node: int, line: dict[str, Any], what: str, answer, step: bool = True) -> None:
        """Apply a node's answer; ``step``: an init or a step's input, whose answer's digest is
        kept (an input at rest is neither: its digest would shift every later one)."""
        outputs, raw, done = answer
        self.bytes += len(raw)
        if self.procs[node].clock_jumped:  # its deadline passed before anything could arrive
            self.procs[node].clock_jumped, self.clock_jumped = False, True
        if self.procs[node].read_held:  # no run read the same bytes again and went on
            self.procs[node].read_held, self.read_held = False, True
        if said := self.procs[node].finalize_pending:  # erroneous under MPI: the PASS says so
            self.procs[node].finalize_pending = ""
            self.finalize_pending = self.finalize_pending or said
        if self.bytes > MAX_RUN_BYTES:
            raise NodeFault(
                "flood",
                node,
                f"the run's answers passed {MAX_RUN_BYTES >> 20} MB of lines (node {node} wrote the last)",
            )
        if step:
            digest, *others = answers.digests(outputs, raw, self.memory_bodies)
            self.digests.append(digest)
            self.other_digests.append(tuple(others))
            self.said.append((node, what))
        if line["type"] == "init":
            self.procs[node].reusable = done.get("reinit") is True
        rank = done if self.memory_bodies else {}  # what mutexlab's MPI alone says (mpi/src/hangs.c)
        if isinstance(blocked := rank.get("blocked"), str):
            self.blocked[node] = blocked[:200]
        else:
            self.blocked.pop(node, None)
        (self.astir.add if rank.get("astir") is True else self.astir.discard)(node)  # may move yet
        self.sync_sends |= rank.get("sync_sends") is True  # a hang may be one only where sends wait
        (self.polling.add if rank.get("polls") is True else self.polling.discard)(node)
        (self.lingering.add if rank.get("lingers") is True else self.lingering.discard)(node)
        if isinstance(loops := rank.get("loops"), str):
            self.loops[node] = loops[:16]
        else:
            self.loops.pop(node, None)
        if isinstance(spinning := rank.get("spinning"), str):
            self.spinning[node] = spinning[:100]
        else:
            self.spinning.pop(node, None)
        for output in outputs:
            self._apply(node, output)

    def _apply(self, node: int, output: dict[str, Any]) -> None:
        kind = output["type"]
        if kind == "send":
            self.sent[node] += 1
            ident = f"{self.names[node]}#{self.sent[node]}"
            to, body = output["to"], output["body"]
            type_ = body.get("type") if isinstance(body, dict) else None
            if (unread := body_lacks(body, self.problem.messages, self.problem.name)) is not None:
                raise NodeFault("protocol", node, f"node {node} sent {unread}", shorten(json.dumps(body)))
            event = self._record(
                node,
                "send",
                type=type_ if isinstance(type_, str) else "message",
                to=self.names[to],
                id=ident,
                msg=body if isinstance(body, dict) else {"body": body},  # a trace's msg is an object
            )
            message = Message(ident, node, to, body, dict(event["vc"]))
            self.links.setdefault((node, to), deque()).append(message)
        elif kind in ("enter", "exit"):
            resource, units = output["resource"], output.get("units", 1)
            extra = {"units": units} if units != 1 else {}
            if kind == "enter":
                if self.problem.driven and node not in self.waiting:
                    raise NodeFault(
                        "protocol", node, f"node {node} entered {resource} without a request pending"
                    )
                wanted = resource_kind(resource) == self.problem.resource  # "cs:3": an index read by a regex
                served = not self.problem.driven or wanted
                if node in self.entries_left and wanted:
                    self.entries_left[node] -= 1  # meals are counted, not the forks they need
                if served and self.entries_left.get(node, 0) <= 0:
                    self.waiting.discard(node)
                self.holding[node][resource] += units
                if not self.problem.driven and wanted and self.problem.algorithm is None:
                    # A node of a problem of requests asking on its own (an MPI rank): its entry
                    # of the requested resource (cs, a meal; not the forks a meal needs) says it
                    # asked, when it asked the director cannot see; the audit counts a request
                    # per entry. (A problem whose nodes act on their own has no requests to count.)
                    self._record(node, "request", resource=resource)
            else:
                self.holding[node][resource] -= units
                if self.holding[node][resource] <= 0:
                    del self.holding[node][resource]
            self._record(node, kind, resource=resource, **extra)
        elif kind == "state":
            self._record(node, "state", state=output["state"])
        elif kind == "pause":
            self.paused[node] += 1
        elif kind == "event":
            fields = {k: v for k, v in output.items() if k not in ("type", "event", "pid", "vc", "t")}
            name = self.names[node]  # fields the audit reads must have their types, as in a trace file
            problem = check_event({"event": output["event"], "pid": name, "vc": {name: 1}, **fields})
            if problem is not None:
                raise NodeFault(
                    "garbage", node, f"node {node} wrote an event the audit cannot read: {problem}"
                )
            self._record(node, output["event"], **fields)

    def _record(self, node: int, kind: str, /, **fields: Any) -> dict[str, Any]:
        """Record an event; positional-only, so a node's own fields may be named anything."""
        if len(self.events) >= MAX_EVENTS:
            raise NodeFault(
                "flood", node, f"the run passed {MAX_EVENTS:,} trace events (node {node} wrote the last)"
            )
        name = self.names[node]
        clock = self.clocks[node]
        clock[name] = clock.get(name, 0) + 1
        event = {"event": kind, "pid": name, "t": float(self.step), "vc": dict(clock), **fields}
        self.events.append(event)
        return event
