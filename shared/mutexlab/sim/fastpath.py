"""The simulator's one speed shortcut: its event loop with the network ``Send`` carried out inline.

``Simulation._run`` is the plain loop: each message through ``Driver.deliver``, each timer
through ``Driver.feed``, every effect through ``Driver.apply`` — the one statement of what the
effects mean. ``run`` below is that loop with ``deliver``, ``feed`` and, for a network ``Send``
(the bulk of the work), ``apply`` and ``Simulation.transmit`` written out with everything in
locals; every other effect, and a send to oneself or to an unknown pid, still goes through
``apply``. It runs only where ``mode`` says it is the same run:

* no fault injection (no duplicate filter, delay spikes or reordering), and ``transmit`` and
  ``apply`` not overridden;
* untraced — or with an audit fed as the run goes that only counts sends and receives
  (``TraceWriter.tally`` with local-event clocks, ``deliver`` and ``feed`` not overridden): then
  each message carries its sender's clock token, the receive merges it, and ``tally.skip``
  stands for the send and recv events, counted and numbered as if written. The skips are
  gathered and handed over before the next event written, so every written event keeps its
  number. The state before and after each input is read from the process's own attributes where
  that is ``proto.state`` (``state_source``; ``tests/test_fastpath_state.py``).

Invariants: the same inputs reach the same processes in the same order at the same virtual
times, with the same random draws, as in the plain loop; a message carries no id (the plain loop's
``<name>#<n>``; the senders are still counted), because nothing here reads ids (only traces and
the duplicate filter do).
``tests/test_fastpath.py`` runs both loops on the same seeded configurations, every algorithm
with and without faults, and compares what every process received and the audit's event stream
byte for byte; broken variants of this loop are caught there.
A message's type is read once per message, not per send: a broadcast's P − 1 sends share it;
reading it per send, bees P = 100 took ×1.021 the instructions while a message model's reads went
through pydantic's ``__getattr__`` hook (now ``fastpath.plain_reads``: a plain read, cheaper still)
(``tests/test_fastpath_sends.py`` catches broken variants).
Gain: with the plain loop a run takes 1.20–1.44× the instructions (every case of
``python -m bench.instructions``; docs/scaling.md#fast-paths); building and feeding each
send and recv event to the audit instead of skipping it took ×1.30 the time (bees P = 150).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Callable
from copy import deepcopy
from math import log
from typing import TYPE_CHECKING, Any, Literal

from ..protocol import Send
from . import engine
from .driver import Driver

if TYPE_CHECKING:
    from .engine import Simulation

Mode = Literal["untraced", "tallied"]
_NO_MESSAGE = object()  # the message before the first send of an effect list: none is this one


def mode(sim: Simulation) -> Mode | None:
    """How the fast loop may run ``sim``, or None: only the plain loop is the same run."""
    config, trace = sim.config, sim.trace
    if config.duplicate or config.spike or config.reorder:
        return None
    if type(sim).transmit is not engine.Simulation.transmit or type(sim).apply is not Driver.apply:
        return None
    if trace is None:
        return "untraced"
    tally = getattr(trace, "tally", None)
    if (
        tally is not None
        and getattr(trace, "clocks", None) is not None
        and not tally.reads("send")
        and not tally.reads("recv")
        and type(sim).deliver is Driver.deliver
        and type(sim).feed is Driver.feed
    ):
        return "tallied"
    return None


def run(sim: Simulation, limit: int, how: Mode) -> None:
    """``Simulation._run(limit)`` for a ``sim`` that ``mode`` gave ``how``."""
    protocols, apply = sim.protocols, sim.apply
    # the event queue (engine.py's docstring): the bucket being drained and its number, the later
    # buckets and the heap of their numbers. ``sim._now`` and ``sim._bucket`` stay current: an
    # effect carried out by ``apply`` may schedule (``Simulation.push``) into the drained bucket.
    drained, bucket, later, starts, scale = sim._now, sim._bucket, sim._later, sim._starts, sim._scale  # noqa: SLF001 - the fast loop runs on the engine's own state
    find, next_bucket, latest_first = later.get, engine.next_bucket, engine._latest_first  # noqa: SLF001 - see above
    trace = sim.trace
    light = how == "tallied"
    tally = getattr(trace, "tally", None)
    skip: Callable[[str, int], None] = tally.skip if light and tally is not None else _count_nothing
    recvs = sends = 0  # skips gathered, not yet handed to ``skip``
    recorders = sim.recorders
    # each process's local-event clock and its merge, bound once a run (a recorder keeps its clock
    # for the whole run; a run with progress or watch comes here once a slice)
    bound = sim._fast_clocks  # noqa: SLF001 - see above
    if bound is None and light:
        clocks = {pid: recorder.vc for pid, recorder in recorders.items()}
        # the compiled clock's merge without its table of serials last read (fastclock/merge.c:
        # the clock itself, called, is its ``merge_unseen``: no bound method to touch a receive)
        # with where its state is read (``state_source``) and the process: one lookup an input
        # (the process bound once a run, as its attributes are: ``protocols[pid]`` a second
        # lookup an input was 4% of the audit's instructions at bees P = 200)
        merges = {
            pid: (clock if callable(clock) else clock.merge, state_source(protocols[pid]), protocols[pid])
            for pid, clock in clocks.items()
        }
        bound = sim._fast_clocks = (clocks, merges)  # noqa: SLF001 - see above
    clocks, merges = bound if bound is not None else ({}, {})
    token = None  # the clock token a send carries: the receiving process's, kept current
    messages, sent, link_last, delay = sim.messages, sim._sent, sim._link_last, sim._delay  # noqa: SLF001 - see above
    uniform = sim._random if sim.config.delay == "exp" else None  # noqa: SLF001 - see above; ``_delay`` inlined: -log(1 - u)
    pop, push = heapq.heappop, heapq.heappush
    events, types = sim.events, sim.message_types
    changeable = sim._changeable  # noqa: SLF001 - see above
    message = engine._MESSAGE  # noqa: SLF001 - see above
    try:
        while events < limit:
            if drained:  # as ``Simulation.pop``
                entry = drained.pop()
            elif starts:
                bucket = sim._bucket = pop(starts)  # noqa: SLF001 - see above
                drained = sim._now = later.pop(bucket)  # noqa: SLF001 - see above
                if len(drained) > 1:  # (one item: in order already)
                    next_bucket(drained)
                entry = drained.pop()
            else:
                break
            at = sim.now = entry[0]
            events += 1
            if entry[1] == message:
                _, _, pid, sender, msg, msg_id, vc = entry
                if light:  # as ``deliver``: merge, handle, the recv event, its effects, the state
                    merge, attrs, proto = merges[pid]
                    token = merge(vc)  # the token after the merge: what its sends carry
                    try:  # ``proto.state`` (``state_source``)
                        before = attrs["state"]
                    except KeyError:
                        before = proto.state
                    effects = proto.on_message(msg)
                    recvs += 1
                else:
                    effects = protocols[pid].on_message(msg)
            else:
                _, _, pid, payload = entry
                if light:  # as ``feed``
                    _, attrs, proto = merges[pid]
                    token = clocks[pid].token
                    try:  # ``proto.state`` (``state_source``)
                        before = attrs["state"]
                    except KeyError:
                        before = proto.state
                    effects = proto.on_local(payload)
                else:
                    effects = protocols[pid].on_local(payload)
            if effects:
                links = link_last[pid]
                # the message of the send before, its type, whether the network carries that type
                # (``known``) and whether each receiver gets its own copy (``copied``), both set with
                # ``kind`` at an effect list's first network send: a broadcast's P − 1 sends of one
                # message read them once (a frozen model's type cannot change between them)
                prev, kind = _NO_MESSAGE, ""
                for effect in effects:
                    network = False  # a Send ``apply`` would transmit: to another known int pid
                    if type(effect) is Send:
                        to = effect.to
                        if not to == pid and type(to) is int and to in protocols:  # noqa: SIM201 - ``==`` as apply's
                            msg = effect.msg
                            if msg is not prev:
                                kind = msg.type
                                prev = msg
                                known = kind in types
                                copied = kind in changeable
                            network = known
                    if not network:
                        if recvs or sends:
                            recvs, sends = _flush(skip, recvs, sends)
                        apply(pid, (effect,))  # (an unknown receiver, or no int: the driver's finding)
                        if light:  # an enter, exit or note ticked the clock: later sends carry that
                            token = clocks[pid].token
                        continue
                    # as ``apply`` for a network Send: count, number, the send event
                    messages[kind] += 1
                    number = sent[pid] + 1
                    sent[pid] = number
                    if light:  # a send does not tick a local-event clock: ``token`` is current
                        sends += 1
                    # as ``transmit``: the delay, FIFO per link, then ``push``
                    when = at - log(1.0 - uniform()) if uniform is not None else at + delay()
                    last = links[to]
                    if when < last:  # never overtake an earlier message on the same link
                        when = last
                    links[to] = when
                    # as ``transmit``: each receiver its own copy of a message that may change
                    held = deepcopy(msg) if copied else msg
                    entry = (when, message, to, pid, held, None, token)  # no id: nothing here reads it
                    slot = int(when * scale)  # as ``Simulation.push``
                    if slot > bucket:
                        held = find(slot)
                        if held is None:
                            later[slot] = [entry]
                            push(starts, slot)
                        else:
                            held.append(entry)
                    else:
                        drained.insert(bisect_left(drained, -when, key=latest_first), entry)
            if light:
                try:  # ``proto.state`` (``state_source``)
                    after = attrs["state"]
                except KeyError:
                    after = proto.state
                if after != before:
                    if recvs or sends:
                        recvs, sends = _flush(skip, recvs, sends)
                    trace.write(recorders[pid].local("state", at, proto.clock.time, state=proto.state))  # type: ignore[union-attr]
    finally:
        sim.events = events
        _flush(skip, recvs, sends)


def state_source(proto: object) -> Any:
    """Where the tallied loop reads ``proto.state`` from: the instance's own attributes (its
    ``__dict__``: one dict lookup) when ``proto.state`` reads them, else ``proto`` through a
    stand-in. The interpreter (3.11) does not specialise ``proto.state`` on a ``Protocol`` (it
    names ``__dict__`` in its ``__slots__``): each read took the generic attribute lookup, type
    first, about 180 instructions, two per input (bees P = 400: 540 M of the audit's 4,350 M).
    The dict is that read whenever ``state`` is in it: the type has no data descriptor named
    ``state`` (a property would come first) and does not override ``__getattribute__``; a state
    not in it (deleted) raises KeyError there, and the loop then reads ``proto.state`` itself."""
    kind = type(proto)
    attrs = getattr(proto, "__dict__", None)
    if type(attrs) is dict and kind.__getattribute__ is object.__getattribute__:
        declared = next((c.__dict__["state"] for c in kind.__mro__ if "state" in c.__dict__), None)
        if not hasattr(type(declared), "__set__") and not hasattr(type(declared), "__delete__"):
            return attrs
    return _Attributes(proto)


class _Attributes:
    """``proto``'s attributes read by name as ``proto.<name>`` reads them (``state_source``)."""

    __slots__ = ("proto",)

    def __init__(self, proto: object) -> None:
        self.proto = proto

    def __getitem__(self, name: str) -> Any:
        return getattr(self.proto, name)


def _flush(skip: Callable[[str, int], None], recvs: int, sends: int) -> tuple[int, int]:
    """Hand the gathered skips over (receives first: within one input the recv comes before the
    sends); returns the counts left, (0, 0)."""
    if recvs:
        skip("recv", recvs)
    if sends:
        skip("send", sends)
    return 0, 0


def _count_nothing(kind: str, count: int = 1) -> None:
    """``skip`` where no tally counts (never called: only the tallied loop counts)."""
