"""What ``mutexlab check`` may reduce for the hamster killers: the exact classes ``Mayor`` and
``Elf`` only (reduction.py). ``elves.SPEC`` declares
``REDUCTIONS``. A variant may read its fields elsewhere (``RoundBlind`` handles messages after
ELF_DONE), so a setup with any other class gets none of them.

**Dead variables** (``canonical``): a field whose value no future input reads is left out of
the state's key, so states that differ only there merge.

* An ELF_DONE elf drops every elf message of its round (stale) before its clock moves, and
  ignores its stale timers: only its round and its count of timers are read again.
* ``replies`` is read only in ELF_REQUESTING (a REPLY elsewhere is refused by state alone,
  and ``_request`` starts an empty set); ``my_request`` only in ELF_REQUESTING and
  ELF_WAIT_FOR_RELEASE (ELF_CRITICAL is left by ``exit``, which does not read it).
* In INITIAL an elf makes no request until the next INIT_CONTRACTS (none left this round, or
  between rounds), which starts fresh ``contract_requests``, ``queues`` and ``contracts``; until
  then those are only written, except that a RELEASE checks the units of its sender's queued
  request: the queues keep their units, their timestamps go.
* The mayor's ``completed`` is read only in MAYOR_WAITING (``_begin`` starts it empty).
  Its clock is dead in MAYOR_DONE (it never sends again). Not in MAYOR_WAITING before the
  round's first CONTRACT_COMPLETED: that one's timestamp is above the mayor's own clock, but a
  key without the clock merges mayors of other worlds, and the one kept may have a clock above
  this world's completion, which ``receive`` then reads (``check``'s sampling showed it).

**Clock shift** (``live``/``shift``): the elves and the mayor use timestamps only in ``(ts,
pid)`` priorities (the order of contract requests, the units ahead in a queue) and move clocks
by ``tick`` and ``receive``; nothing else reads one (the round numbers and contract positions
are counts, not times; no timestamp is printed into a decision). So adding one constant to
every clock, stored timestamp and timestamp in flight changes no behaviour, and each world is
shifted down until its smallest *live* timestamp (those kept in the key above, and every
message in flight) is 0. Round numbers are not shifted: the mayor's plan differs per round.

**Whom a process may send to** (``sends_to``, for partial-order reduction): while elf ``x`` does
not move, process ``q`` can still send to ``x`` unless one of these holds (and no request of
``x`` is in flight to ``q``, which ``q`` would answer):

* ``q`` is ELF_DONE (it never sends again), or is the mayor in MAYOR_DONE;
* ``q`` is the mayor waiting for completions while ``x`` holds a contract (STOP waits for it;
  INIT_CONTRACTS comes only after STOP);
* ``q`` asks for pins or poison and lacks ``x``'s reply, none in flight: it holds a contract,
  so no STOP can end the round, and it needs that reply to move on;
* ``q`` asks for a contract and lacks ``x``'s reply (none in flight), or is in INITIAL with none
  left, while ``x`` holds a contract of the same round: nothing but STOP(r) would let it on;
* ``q`` waits for a release and ``x``'s queued request ahead of its own, with no release in
  flight, leaves too few units even if everyone else released (new requests cannot get ahead:
  every other elf has seen ``q``'s request);
* ``x`` is the mayor (who gets only CONTRACT_COMPLETED) and ``q`` is in INITIAL with no
  INIT_CONTRACTS in flight from it: ``q`` gets no contract before the mayor moves.
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

from ...clock import LamportClock
from ...reduction import (
    NOTHING_LIVE,
    Canonical,
    ClockOffsets,
    Reductions,
    RetiredClocks,
    SendBound,
    declare_parts,
)
from ...setups import Setup
from .elf import Elf
from .mayor import Mayor
from .messages import CONTRACT, PINS, POISON, ElfState, InitContracts, MayorState, XRelease, XReply, XRequest


# -- dead variables ---------------------------------------------------------------------------
def _request_live(e: Elf) -> bool:
    return e.state is ElfState.ELF_REQUESTING or e.state is ElfState.ELF_WAIT_FOR_RELEASE


def _mayor_clock_live(m: Mayor) -> bool:
    return m.state is not MayorState.MAYOR_DONE


def canonical(p: Any) -> tuple[Any, ...]:
    """The key of a mayor's or an elf's state: what its future reads (see the module)."""
    if type(p) is Mayor:
        return (
            p.state,
            p.clock.time if _mayor_clock_live(p) else 0,
            p.round,
            frozenset(p.completed) if p.state is MayorState.MAYOR_WAITING else None,
        )
    if p.state is ElfState.ELF_DONE:
        return (ElfState.ELF_DONE, p.round, p.rest_timers)
    initial = p.state is ElfState.INITIAL
    return (
        p.state,
        p.clock.time,
        p.round,
        p.active,
        None if initial else p.contracts,
        None if initial else frozenset(p.contract_requests),
        tuple(sorted((j, units) for j, (_, units) in p.queues[PINS].items()))
        if initial
        else tuple(sorted(p.queues[PINS].items())),
        tuple(sorted((j, units) for j, (_, units) in p.queues[POISON].items()))
        if initial
        else tuple(sorted(p.queues[POISON].items())),
        p.phase,
        p.my_request if _request_live(p) else None,
        frozenset(p.replies) if p.state is ElfState.ELF_REQUESTING else None,
        p.holding,
        tuple(p.future),
        p.rest_timers,
    )


# -- clock shift ------------------------------------------------------------------------------
def live(p: Any) -> list[int]:
    """The live timestamps of a mayor's or an elf's state (those its key keeps)."""
    if type(p) is Mayor:
        return [p.clock.time] if _mayor_clock_live(p) else []
    if p.state is ElfState.ELF_DONE:
        return []
    return [p.clock.time] + [m.ts for m in p.future] + request_stamps(p)


def request_stamps(p: Any) -> list[int]:
    """The live timestamps of requests an elf keeps (its own and those it queued)."""
    if type(p) is Mayor or p.state is ElfState.ELF_DONE:
        return []
    values = []
    if p.state is not ElfState.INITIAL:
        values += [ts for ts, _ in p.contract_requests]
        values += [ts for queue in p.queues.values() for ts, _ in queue.values()]
    if _request_live(p):
        values.append(p.my_request[0])  # set in both states
    return values


def shift(p: Any, d: int, clock: int | None = None) -> Any:
    """``p`` with every timestamp lowered by ``d`` (its clock set to ``clock`` if given). A dead
    clock may be below ``d``: it becomes 0 (a clock cannot be negative; its value is never read)."""
    twin = copy.deepcopy(p)
    twin.clock.time = max(p.clock.time - d, 0) if clock is None else clock
    if type(p) is Mayor:
        return twin
    twin.contract_requests = {(ts - d, j) for ts, j in p.contract_requests}
    twin.queues = {kind: {j: (ts - d, u) for j, (ts, u) in q.items()} for kind, q in p.queues.items()}
    if p.my_request is not None:
        twin.my_request = (p.my_request[0] - d, p.my_request[1])
    twin.future = [m.model_copy(update={"ts": m.ts - d}) for m in p.future]
    return twin


def low(p: Any) -> int:
    return min(live(p), default=NOTHING_LIVE)


def done(p: Any, pending: tuple[str, ...], setup: Setup) -> bool:
    """``will_not_request`` in the setup's last round."""
    return will_not_request(p, max(len(q.plan) for q in setup.protocols.values() if type(q) is Mayor))


def will_not_request(p: Any, final: int) -> bool:
    """Whether ``p`` makes no request any more (``final``: the last round): the mayor in the last
    round; an elf done, or in the last round with none left (INITIAL), or past its last
    request: asking for or holding poison, or resting, while it knows as many contract requests
    as there are contracts (``_next_contract`` then goes straight to INITIAL; the set only
    grows within a round)."""
    if type(p) is Mayor:
        return p.round == final
    if p.state is ElfState.ELF_DONE:
        return True
    if p.round != final or not p.active:
        return False
    return p.state is ElfState.INITIAL or (
        (p.phase == POISON or p.state is ElfState.ELF_FINISHED)
        and len(p.contract_requests) >= len(p.contracts)
    )


def dead_message(msg: Any, receiver: Any) -> bool:
    """Whether ``receiver`` will drop ``msg`` before its clock reads the timestamp: an elf message
    of a round it has already seen stopped, or of an earlier one (``Elf.on_message``)."""
    return (
        type(receiver) is Elf
        and isinstance(msg, (XRequest, XReply, XRelease))
        and (msg.round < receiver.round or (msg.round == receiver.round and not receiver.active))
    )


# -- whom a process may send to ---------------------------------------------------------------
def sends_to(q: Any, pending: tuple[Any, ...], inflight: tuple[Any, ...], x: Any) -> bool:
    """Whether ``q`` may send to ``x`` while ``x`` does not move (see the module); ``inflight``:
    the messages on the link from ``x`` to ``q``."""
    if any(isinstance(m, XRequest) for m in inflight):
        return True  # q answers it
    if type(q) is Mayor:
        return q.state is not MayorState.MAYOR_DONE and not (
            q.state is MayorState.MAYOR_WAITING and x.holding is not None
        )
    if q.state is ElfState.ELF_DONE:
        return False
    if type(x) is Mayor:
        return q.state is not ElfState.INITIAL or any(isinstance(m, InitContracts) for m in inflight)
    x_holds = x.holding is not None and x.round == q.round
    if (
        q.state is ElfState.ELF_REQUESTING
        and x.pid not in q.replies
        and not any(isinstance(m, XReply) for m in inflight)
    ):
        return q.phase == CONTRACT and not x_holds
    if q.state is ElfState.INITIAL and q.active:
        return not x_holds
    if q.state is ElfState.ELF_WAIT_FOR_RELEASE and not any(isinstance(m, XRelease) for m in inflight):
        queue = q.queues[q.phase]
        mine, ahead = q.my_request, queue.get(x.pid)
        if ahead is not None and (ahead[0], x.pid) < mine and q.totals[q.phase] - ahead[1] < queue[q.pid][1]:
            return False
    return True


# every attribute of the mayor and of an elf and its exact types: the reasons above are about these
PARTS = declare_parts(
    pid=int,
    n=int,
    clock=LamportClock,
    round=int,
    plan=list,
    state=(MayorState, ElfState),
    completed=set,
    totals=dict,
    pins_per_elf=int,
    poison_per_hamster=int,
    active=bool,
    contracts=tuple,
    contract_requests=set,
    queues=dict,
    phase=(str, None),
    my_request=(tuple, None),
    replies=set,
    holding=(tuple, None),
    future=list,
    rest_timers=int,
    done=dict,
    waits=Counter,
)

REDUCTIONS = Reductions(
    frozenset({Mayor, Elf}),
    canonical=Canonical(
        canonical,
        "the key drops what no future input reads: a done elf's clock and queues, replies outside "
        "ELF_REQUESTING, the mayor's clock once done",
    ),
    clocks=ClockOffsets(
        low,
        shift,
        "timestamps are only compared as (ts, pid) priorities and clocks move only by tick and "
        "receive; a message of a round its receiver has seen stopped is dropped unread",
        dead=dead_message,
    ),
    retired=RetiredClocks(
        done,
        request_stamps,
        lambda msg: isinstance(msg, XRequest),
        lambda p, d: shift(p, d, 0),
        "in the last round, once every elf is past its last request, clocks feed only clocks and "
        "timestamps nobody compares; request timestamps are only compared with each other",
    ),
    sends=SendBound(
        sends_to,
        "a done elf or mayor never sends again; a waiting elf sends nothing to x until x replies, "
        "releases or holds no contract",
        reads_receiver=True,
    ),
    parts=PARTS,
)
