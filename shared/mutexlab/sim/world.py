"""The world model: one definition of a global state and its steps, for search and stepping.

A *world* (a global state) is every process's state, the messages in flight on each link, the local
decisions each process has pending (its ``Schedule`` effects, fired in any order) and who holds what.
One step either delivers a message (the oldest of its link: links are FIFO) or fires one pending local
decision; what its effects mean is ``Driver.apply``'s (driver.py, run here through ``_Effects``). A
world with no step left is *final* when every process is ``finished``, otherwise a *deadlock*.

Used by the plain exhaustive exploration (``explore.py``), the model checker (``check/``, with reductions)
and, for its enabled steps and capacity check, the explorer (``explore/state.py``).

The representation is compact:

* a process state is an *id*: protocols are deterministic and ``snapshot()`` decides a process's
  future, so each distinct (process, snapshot) is kept once, as a representative, numbered;
* a message is an id per distinct (type, JSON body), decoded from that JSON as a receiver over
  the wire gets it (one that does not decode is a finding against its sender); an action too;
* a transition of one process — (state id, input) → (new state id, sends, schedules,
  enters/exits) — is computed once, by running the real protocol code on a copy of the
  representative, and cached: a search then works on tuples of small ints, without copying
  or re-running protocol objects for inputs already seen;
* a link's contents, a process's pending decisions and the holdings are tuples interned to
  ids too, with their edits (append, remove, tail) cached: a world is one flat tuple of ints —
  process states, links, pending decisions, holdings. Its fingerprint is Python's 64-bit ``hash``
  of that tuple (all ints: the same in every run, whatever ``PYTHONHASHSEED``); a step rebuilds it.

An **endless workload** (``endless``, for processes with the classic local inputs): every process
has a ``request`` pending from the start and again after each ``exit`` — processes request forever,
so starvation shows as a cycle (the setup gives no budget: the protocol schedules nothing itself).

Faults, off by default (they leave the algorithms' model on purpose): ``reorder`` (a link is a
multiset, any message in flight may be delivered next); ``duplicate = D`` (each message may be
delivered up to D extra times, staying in flight; they reach the protocol, not the transport).
Reductions (``check/reductions.py``) plug in as a ``canonical`` snapshot and a ``normalise`` hook."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sized
from typing import Any, NamedTuple

from ..messages import MessageError
from ..protocol import Enter, Exit, HandlerError, Note, ProtocolError
from ..rules import SEEN
from ..setups import Setup, capacity_of, class_state, class_state_changed, unkeepable
from ..waiting import waits
from .determinism import TRIES, not_deterministic, seeded
from .driver import Driver

DELIVER, LOCAL, DUPLICATE = 0, 1, 2  # label kinds
ENDLESS_FLAG = "requests"  # the workload flag an endless workload replaces
# The first inputs run twice, each on its own copy: a handler that reads random numbers or the
# time gives itself away (both runs must end in one state with the same effects).
PROBED = 256


def endless_options(options: dict, key: str | None = ENDLESS_FLAG) -> dict:
    """Options with no budget (``key``, ``requests`` 0): the model or the explorer asks for each request."""
    return {**options, (key or ENDLESS_FLAG): 0}


def enabled(
    pending: Mapping[int, Iterable[str]], links: Mapping[tuple[int, int], Sized]
) -> tuple[list[tuple[int, str]], list[tuple[int, int]]]:
    """The steps enabled in a world held as objects (the explorer's, stepped by scripted replay): each
    process's distinct pending ``(pid, action)`` and each link ``(from, to)`` with a message in flight
    (its oldest arrives: FIFO), sorted. ``WorldModel.steps`` lists the same of its compact worlds."""
    decisions = [(pid, a) for pid, actions in sorted(pending.items()) for a in sorted(set(actions))]
    return decisions, [link for link, queue in sorted(links.items()) if queue]


def overfull(resource: str, capacity: int, holders: list[tuple[str, int]]) -> str | None:
    """None while ``holders``' units fit ``resource``'s ``capacity``, else ``cs (capacity 1) held by node-1×1, …``."""
    if sum(units for _, units in holders) <= capacity:
        return None
    return f"{resource} (capacity {capacity}) held by " + ", ".join(f"{n}×{u}" for n, u in holders)


def _intern(ids: dict[str, int], values: list[str], value: str) -> int:
    """The number of ``value`` in ``values`` (appended when new)."""
    got = ids.get(value)
    if got is None:
        got = ids[value] = len(values)
        values.append(value)
    return got


class Transition(NamedTuple):
    """What one input does to one process (cached per (state id, input))."""

    state: int  # the new state id
    sends: tuple  # ((link index, message id), ...) in the order sent
    schedules: tuple  # action ids added to the pending decisions
    holds: tuple  # ((+1 enter | -1 exit, resource id, units), ...)
    error: str | None = None  # the ProtocolError the input raised (state unchanged)
    refused: bool = False  # ``error`` is a state of no name (setups.NoName): a dead end (check/model.py)


class WorldModel:
    """The worlds of one configuration: interning tables, the initial world and the step function."""

    def __init__(
        self,
        setup: Setup,
        reorder: bool = False,
        duplicate: int = 0,
        canonical: Callable[[Any], Any] | None = None,
        endless: bool = False,
        rules: Any = None,
    ) -> None:
        self.setup = setup
        # the problem's rules (``mutexlab.rules.Rules``): each step's observed events are folded
        # into the stepped process's new state, which is keyed by its observation too
        self.rules = rules
        self.rule_params = rules.params(setup.params, list(setup.names.values())) if rules else None
        self.endless = endless
        self.names, self.pids = setup.names, sorted(setup.protocols)
        self.n = n = len(self.pids)
        self.index = {pid: i for i, pid in enumerate(self.pids)}
        self.reorder = reorder
        self.dup = duplicate
        self.canonical = canonical
        self.normalise: Callable[[tuple], tuple] | None = None  # a world-level reduction
        # links: every ordered pair of distinct processes
        self.links = [(s, t) for s in self.pids for t in self.pids if s != t]
        self.link_index = {link: k for k, link in enumerate(self.links)}
        self.link_to = [self.index[t] for _, t in self.links]
        self.L = len(self.links)
        self.P0 = n + self.L  # first pending slot
        self.H = 2 * n + self.L  # the holdings slot
        # interning tables
        self.state_ids: dict[tuple, int] = {}
        self.objects: list[Any] = []  # state id → representative protocol object
        self.owner: list[int] = []  # state id → process index
        self.trans: list[dict] = []  # state id → {input code: Transition}
        self.msg_ids: dict[tuple, int] = {}
        self.messages: list[Any] = []
        self._msg_by_obj: dict[int, tuple[Any, int]] = {}
        self.action_ids: dict[str, int] = {}
        self.actions: list[str] = []
        self.res_ids: dict[str, int] = {}
        self.resources: list[str] = []
        self.capacity: list[int] = []
        self._finished: list[bool | None] = []
        self._waiting: list[Any] = []
        # interned tuples (seq_id): id → tuple, its tail's id, its head; cached edits
        self.seqs: list[tuple] = []
        self.seq_ids: dict[tuple, int] = {}
        self.seq_tail: list[int] = []
        self.seq_head: list[int] = []
        self._push: list[dict] = []
        self._add: list[dict] = []
        self._drop: list[dict] = []
        self._holds: dict[tuple, tuple[int, str | None]] = {}
        self.seq_id(())
        self._effects = _Effects(self)
        self._probes, self._class_state = 0, class_state(setup)
        self.refused: ProtocolError | None = None  # the last input refused (run_input)

    # -- interning -----------------------------------------------------------------------
    def state_id(self, i: int, proto: Any) -> int:
        try:  # the algorithm's snapshot (or canonical key) and its hash: its fault if either fails
            snap = proto.snapshot() if self.canonical is None else self.canonical(proto)
            key = (i, snap) if self.rules is None else (i, snap, getattr(proto, SEEN, None))
            sid = self.state_ids.get(key)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the algorithm's code (sys.exit() too)
            raise unkeepable(proto, exc) from exc
        if sid is None:
            sid = self.state_ids[key] = len(self.objects)
            self.objects.append(proto)
            self.owner.append(i)
            self.trans.append({})
            self._finished.append(None)
            self._waiting.append(None)
        return sid

    def msg_id(self, msg: Any) -> int:
        hit = self._msg_by_obj.get(id(msg))
        if hit is not None and hit[0] is msg:
            return hit[1]
        key = (msg.type, msg.model_dump_json())
        mid = self.msg_ids.get(key)
        if mid is None:  # received as it comes off a wire: decoded from its JSON, an int key a string
            mid = self.msg_ids[key] = len(self.messages)
            self.messages.append(self.setup.codec.received(msg, key[1]))
        self._msg_by_obj.update({id(msg): (msg, mid)} if msg.is_value() else ())  # a list can change
        return mid

    def action_id(self, action: str) -> int:
        return _intern(self.action_ids, self.actions, action)

    def res_id(self, resource: str) -> int:
        rid = _intern(self.res_ids, self.resources, resource)
        if rid == len(self.capacity):  # new
            self.capacity.append(capacity_of(self.setup.capacities, resource))
        return rid

    def finished(self, sid: int) -> bool:
        done = self._finished[sid]
        if done is None:
            done = self._finished[sid] = bool(self.objects[sid].finished)
        return done

    def waiting(self, sid: int) -> dict:
        """What the process in state ``sid`` waits for (``waiting_for()``; empty: nothing)."""
        got = self._waiting[sid]
        if got is None:
            got = self._waiting[sid] = waits(self.objects[sid])
        return got

    # -- running the real protocol code ----------------------------------------------------
    def run_input(self, i: int, proto: Any, call: Callable[[Any], list]) -> Transition:
        """Run ``call(copy of proto)``; the copy becomes the new state's representative if new."""
        twin, run = copy.deepcopy(proto), self._effects.run
        probe = copy.deepcopy(proto) if self._probes < PROBED else None
        try:  # a probed step draws from `random` seeded 0, as replay's first copy does
            sends, schedules, holds = seeded(None if probe is None else 0, run, self.pids[i], twin, call)
        except ProtocolError as exc:
            self.refused = exc  # the last refusal, as itself (initial() raises a start's again)
            return Transition(-1, (), (), (), str(exc))
        if probe is not None:
            self._probes += 1
            differs = self._differs(i, proto, call, twin, probe, (sends, schedules, holds))
            if differs is not None:
                return Transition(-1, (), (), (), differs)
        if self.rules is not None:
            pid = self.pids[i]
            self.rules.step(twin, self.rule_params, self.names[pid], proto, self._effects.seen)
        return Transition(self.state_id(i, twin), sends, schedules, holds)

    def _differs(self, i: int, proto: Any, call: Callable, twin: Any, probe: Any, done: tuple) -> str | None:
        """Why ``call`` is no function of ``proto`` (a class's state changed; a copy differs), or None."""
        seen, shared = self._effects.seen, class_state_changed(self._class_state)
        key = (lambda p: p.snapshot()) if self.canonical is None else self.canonical
        if shared is not None:
            return shared
        for seed in range(1, TRIES + 1):  # on copies, seeded 1 .. TRIES as replay's: the same step
            probe = probe if seed == 1 else copy.deepcopy(proto)
            try:
                again = seeded(seed, self._effects.run, self.pids[i], probe, call)
            except ProtocolError:
                again = None
            try:
                mine, same = key(twin), again == done and self._effects.seen == seen
                if same and (key(probe) == mine or key(copy.deepcopy(twin)) != mine):  # by value only
                    continue
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - the algorithm's snapshot (sys.exit() too)
                raise unkeepable(twin, exc) from exc
            who, what = self.names[self.pids[i]], "state" if same else "effects"
            return not_deterministic(who, proto.state, what, proto)
        return None  # the same on every copy

    def transition(self, sid: int, code: int) -> Transition:
        """Input ``code``: ``2·message id`` (a delivery) or ``2·action id + 1`` (a local decision)."""
        table = self.trans[sid]
        got = table.get(code)
        if got is None:
            proto = self.objects[sid]
            if code & 1:
                action = self.actions[code >> 1]
                got = self.run_input(self.owner[sid], proto, lambda p: p.on_local(action))
                if self.endless and action == "exit" and got.error is None:
                    again = self.action_id("request")  # endless: wants it again
                    if again not in got.schedules:
                        got = got._replace(schedules=got.schedules + (again,))
            else:
                msg = self.messages[code >> 1]  # one that can change: each world's copy its own
                got = self.run_input(self.owner[sid], proto, lambda p: p.on_message(copy.deepcopy(msg)))
            table[code] = got
        return got

    def entry(self, mid: int) -> int:
        """A link entry: the message id, with its remaining duplicates when duplicates are on."""
        return mid * (self.dup + 1) + self.dup if self.dup else mid

    # -- interned sequences: link contents, pending decisions, holdings ------------------------
    def seq_id(self, items: tuple) -> int:
        """The id of a tuple (0 is the empty one); its tail and head are recorded with it."""
        sid = self.seq_ids.get(items)
        if sid is None:
            tail = self.seq_id(items[1:]) if items else 0
            sid = self.seq_ids[items] = len(self.seqs)
            self.seqs.append(items)
            self.seq_tail.append(tail)
            self.seq_head.append(items[0] if items else -1)
            self._push.append({})
            self._add.append({})
            self._drop.append({})
        return sid

    def push(self, q: int, e: int) -> int:
        """The sequence ``q`` with ``e`` appended (a FIFO link)."""
        got = self._push[q].get(e)
        if got is None:
            got = self._push[q][e] = self.seq_id(self.seqs[q] + (e,))
        return got

    def add(self, q: int, e: int) -> int:
        """The sorted sequence ``q`` with ``e`` added (a multiset: reordering links, pending)."""
        got = self._add[q].get(e)
        if got is None:
            got = self._add[q][e] = self.seq_id(tuple(sorted(self.seqs[q] + (e,))))
        return got

    def drop(self, q: int, e: int) -> int:
        """The sequence ``q`` without its first ``e``."""
        got = self._drop[q].get(e)
        if got is None:
            items = list(self.seqs[q])
            items.remove(e)
            got = self._drop[q][e] = self.seq_id(tuple(items))
        return got

    def link(self, world: tuple, k: int) -> tuple:
        """The entries in flight on link ``k`` (oldest first; sorted with reordering)."""
        return self.seqs[world[self.n + k]]

    def holdings(self, world: tuple) -> tuple:
        """((resource id, process index, units), ...) held in ``world``."""
        return self.seqs[world[self.H]]

    # -- worlds ----------------------------------------------------------------------------
    def initial(self) -> tuple[tuple, str | None]:
        """The initial world (every process started, in pid order) and an overfull message, if any."""
        n, L = self.n, self.L
        world: list = [0] * (2 * n + L + 1)
        states = []
        for i, pid in enumerate(self.pids):
            states.append(self.state_id(i, self.setup.protocols[pid]))
        overfull = None
        self.start_transitions = []
        for i, pid in enumerate(self.pids):
            t = self.run_input(i, self.objects[states[i]], lambda p: p.start())
            self.start_transitions.append((i, t))
            if t.error:  # the algorithm's code that raised at the start: that finding, as itself
                if isinstance(self.refused, HandlerError):
                    raise self.refused
                raise ProtocolError(f"{self.names[pid]} cannot start: {t.error}")
            if self.endless and self.action_id("request") not in t.schedules:
                t = t._replace(schedules=t.schedules + (self.action_id("request"),))
            states[i] = t.state
            world[i] = t.state
            overfull = self._apply_effects(world, i, t) or overfull
        start = tuple(world)
        return (self.normalise(start) if self.normalise else start), overfull

    def _apply_effects(self, world: list, i: int, t: Transition) -> str | None:
        """Put ``t``'s sends, schedules and holdings into ``world`` (a list); the overfull message."""
        n = self.n
        put = self.add if self.reorder else self.push
        for k, mid in t.sends:
            world[n + k] = put(world[n + k], self.entry(mid))
        if t.schedules:
            slot = self.P0 + i
            for a in t.schedules:
                world[slot] = self.add(world[slot], a)
        return self.hold(world, i, t.holds) if t.holds else None

    def hold(self, world: list, i: int, holds: tuple) -> str | None:
        """Apply enters and exits of process ``i`` to ``world``'s holdings; the overfull message."""
        key = (world[self.H], i, holds)
        got = self._holds.get(key)
        if got is None:
            got = self._holds[key] = self._hold(world, i, holds)
        world[self.H] = got[0]
        return got[1]

    def _hold(self, world: list, i: int, holds: tuple) -> tuple[int, str | None]:
        found = None
        held = list(self.seqs[world[self.H]])
        for sign, rid, units in holds:
            if sign > 0:
                held.append((rid, i, units))
                holders = [(self.names[self.pids[j]], u) for r, j, u in sorted(held) if r == rid]
                found = found or overfull(self.resources[rid], self.capacity[rid], holders)
            elif (rid, i, units) in held:
                held.remove((rid, i, units))
        return self.seq_id(tuple(sorted(held))), found

    def steps(self, world: tuple) -> list[tuple]:
        """The labels of every step possible in ``world``: deliveries by link, then local
        decisions by process and action (``enabled``'s steps, links first). A label is ``(DELIVER, k, entry)``,
        ``(DUPLICATE, k, entry)`` or ``(LOCAL, i, action id)``."""
        n, seqs = self.n, self.seqs
        out = []
        for k in range(self.L):
            q = world[n + k]
            if not q:
                continue
            heads = sorted(set(seqs[q])) if self.reorder else (self.seq_head[q],)
            for e in heads:
                out.append((DELIVER, k, e))
                if self.dup and e % (self.dup + 1):
                    out.append((DUPLICATE, k, e))
        P0 = self.P0
        for i in range(n):
            q = world[P0 + i]
            if q:
                last = None
                for a in seqs[q]:  # sorted: distinct actions once each
                    if a != last:
                        out.append((LOCAL, i, a))
                        last = a
        return out

    def step(self, world: tuple, label: tuple) -> tuple[tuple | None, Transition, str | None]:
        """One step: (successor world, None if the input was rejected; the transition; overfull or None)."""
        kind, x, y = label
        w = list(world)
        if kind == LOCAL:
            i = x
            w[self.P0 + i] = self.drop(w[self.P0 + i], y)
            code = 2 * y + 1
        else:
            n = self.n
            q = w[n + x]
            if kind == DUPLICATE:
                if self.reorder:
                    w[n + x] = self.add(self.drop(q, y), y - 1)
                else:
                    w[n + x] = self.seq_id((y - 1,) + self.seqs[q][1:])
            elif self.reorder:
                w[n + x] = self.drop(q, y)
            else:
                w[n + x] = self.seq_tail[q]
            i = self.link_to[x]
            code = 2 * (y // (self.dup + 1) if self.dup else y)
        t = self.transition(w[i], code)
        if t.error is not None:
            return None, t, None
        w[i] = t.state
        overfull = self._apply_effects(w, i, t) if (t.sends or t.schedules or t.holds) else None
        nxt = tuple(w)
        return (self.normalise(nxt) if self.normalise else nxt), t, overfull

    # -- reading a world -----------------------------------------------------------------
    def all_finished(self, world: tuple) -> bool:
        return all(self.finished(world[i]) for i in range(self.n))

    def waiters(self, world: tuple) -> dict[str, dict]:
        """Every unfinished process and what it waits for, by name."""
        out = {}
        for i in range(self.n):
            sid = world[i]
            if not self.finished(sid):
                lacks = self.waiting(sid)
                out[self.names[self.pids[i]]] = {
                    what: [self.names.get(p, str(p)) for p in whom] for what, whom in lacks.items()
                }
        return out

    def describe(self, label: tuple, world: tuple | None = None) -> str:
        """A step in words, e.g. ``deliver REPLY node-2→node-1`` or ``node-1 exit``."""
        kind, x, y = label
        if kind == LOCAL:
            return f"{self.names[self.pids[x]]} {self.actions[y]}"
        s, t = self.links[x]
        mid = y // (self.dup + 1) if self.dup else y
        what = "duplicate" if kind == DUPLICATE else "deliver"
        return f"{what} {self.messages[mid].type} {self.names[s]}→{self.names[t]}"


class _Effects(Driver):
    """Runs one input on one process with ``Driver``'s effect semantics and records, interned,
    what it sends over a link, schedules, enters and leaves (a send to oneself is handled at once)."""

    def __init__(self, model: WorldModel) -> None:
        super().__init__(model.setup, trace=None)
        self.model = model
        self.running: dict[int, Any] = dict(model.setup.protocols)  # the process being run: its copy
        self.protocols = self.running
        self.sends: list = []
        self.schedules: list = []
        self.holds: list = []
        self.seen: list[tuple[str, dict]] = []  # what the trace would record: enters, exits, notes

    def run(self, pid: int, proto: Any, call: Callable[[Any], list]) -> tuple[tuple, tuple, tuple]:
        self.running[pid] = proto
        self.sends, self.schedules, self.holds, self.seen = [], [], [], []
        self.apply(pid, call(proto))
        return tuple(self.sends), tuple(self.schedules), tuple(self.holds)

    def transmit(self, sender: int, to: int, msg: Any, msg_id: str, vc: dict | None) -> None:
        try:
            mid = self.model.msg_id(msg)
        except MessageError as exc:  # it does not decode from its JSON: a finding against the sender
            raise self.undecodable(sender, msg, exc) from None
        self.sends.append((self.model.link_index[(sender, to)], mid))

    def schedule(self, pid: int, action: str, dwell: str) -> None:
        self.schedules.append(self.model.action_id(action))

    def holding_changed(self, pid: int, effect: Enter | Exit) -> None:
        sign = 1 if type(effect) is Enter else -1
        self.holds.append((sign, self.model.res_id(effect.resource), effect.units))
        kind = "enter" if sign > 0 else "exit"
        self.seen.append((kind, {"resource": effect.resource, "units": effect.units}))

    def noted(self, pid: int, effect: Note) -> None:
        self.seen.append((effect.event, effect.fields))
