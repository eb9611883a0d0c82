"""Sanders' generalized protocol (docs/architecture.md#sanders): request sets R_i, inform sets I_i, status sets ST_i.

Every node plays two roles. As a *requester* it asks every member of R_i for a GRANT and
enters with all of them; on leaving it sends RELEASE to every member of I_i. As an
*arbiter* it keeps a timestamp-ordered queue of requests and CSSTAT, its knowledge of who is
in the critical section — but it only tracks the processes of its status set
ST_i = {p_j : p_i ∈ I_j}, since only they tell it when they leave. A GRANT to a tracked
process *locks* the arbiter (CSSTAT = that request) until its RELEASE; a GRANT to an untracked
process leaves CSSTAT free, so the arbiter may grant again at once (the notes' p2 does so).

Mutual exclusion holds iff p_i ∈ I_i, I_i ⊆ R_i, and every pair (i, j) has I_i ∩ I_j ≠ ∅
(a common arbiter that tracks both) or p_i ∈ R_j and p_j ∈ R_i (each needs the other's grant,
which each withholds while it holds its own self-grant). ``make_setup`` refuses sets that
break it, naming the pair.

The notes' protocol (REQUEST/GRANT/RELEASE only) deadlocks as soon as two arbiters lock on
different requests that each need the other (two nodes of the Ricart–Agrawala-like sets that
request at once each lock on themselves). As in Singhal's presentation, deadlocks are resolved
the way Maekawa does: an arbiter locked on a request r that sees an earlier request INQUIREs
r's owner; an arbiter tells a request queued behind a better locked one that it FAILED; a
requester that has FAILED somewhere (or already yielded) gives back an inquired grant with
YIELD — at once, or later when the FAILED arrives. A requester never yields once inside.
Self-messages are handled locally by the driver (no network message).

Requester (state × input → action):

| state    | request (local)         | GRANT(m)           | FAILED(m, r)             | INQUIRE(m, r)          | exit (local)              |
|----------|-------------------------|--------------------|--------------------------|------------------------|---------------------------|
| RELEASED | REQUEST to R_i → WANTED | (never)            | ignore (stale)           | ignore (stale)         | error                     |
| WANTED   | error                   | record; all of R_i | r mine, m not granting:  | r mine and m granted:  | error                     |
|          |                         |   → HELD           |   record; answer pending |   pending; answer if   |                           |
|          |                         |                    |   INQUIREs; else ignore  |   FAILED/yielded; else |                           |
|          |                         |                    |   (stale)                |   ignore (stale)       |                           |
| HELD     | error                   | (never)            | ignore                   | ignore (RELEASE will   | RELEASE to I_i → RELEASED |
|          |                         |                    |                          |   follow)              |                           |

Arbiter (CSSTAT × input → action); after every input it grants the queue's head while
CSSTAT is free (locking when the head is tracked), then keeps two invariants:
every queued request later than the locked one has been told FAILED, and if an earlier
request is queued, one INQUIRE for the current lock has been sent.

| CSSTAT                | REQUEST r                      | RELEASE from j              | YIELD from j                |
|-----------------------|--------------------------------|-----------------------------|-----------------------------|
| free                  | queue r; grant head(s)         | (never)                     | (never)                     |
| locked on f's request | queue r; FAILED if r > lock,   | j = f: free; grant head(s); | j = f: requeue f's request; |
|                       |   INQUIRE f if r < lock (once) |   else (never)              |   free; grant head(s); else |
|                       |                                |                             |   (never)                   |

"(never)" inputs are refused (ProtocolError), even when links reorder: a GRANT answers my
current request, once per member of R_i, and I enter only with all of them; a RELEASE or YIELD
comes only from the process whose request the arbiter is locked on (a RELEASE goes to I_i,
whose members all track p_i, so they locked on its request when they granted it; a YIELD
answers their INQUIRE), and only once per grant.

Invariants: an arbiter is locked on at most one request; a requester holds a grant only for
its current request; it enters only with a grant from every member of R_i.
"""

from __future__ import annotations

import bisect
from typing import Literal

from pydantic import Field

from ..clock import priority
from ..messages import Codec, Message
from ..protocol import Send
from ..setup import ConfigError, Setup
from ..show import attributes
from ..spec import Figure
from .classic import (
    WANTED,
    ClassicNode,
    classic_setup,
    classic_spec,
    node_name,
    read_pid,
    refuse_unknown,
    workload_options,
)


class Request(Message):
    type: Literal["REQUEST"] = "REQUEST"


class Grant(Message):
    type: Literal["GRANT"] = "GRANT"


class Release(Message):
    type: Literal["RELEASE"] = "RELEASE"


class Failed(Message):
    """The request stamped ``req`` waits behind an earlier locked request."""

    type: Literal["FAILED"] = "FAILED"
    req: int = Field(ge=0)


class Inquire(Message):
    """The arbiter, locked on the receiver's request stamped ``req``, asks for it back."""

    type: Literal["INQUIRE"] = "INQUIRE"
    req: int = Field(ge=0)


class Yield(Message):
    type: Literal["YIELD"] = "YIELD"


CODEC = Codec(Request, Grant, Release, Failed, Inquire, Yield)


class SandersNode(ClassicNode):
    def __init__(
        self, pid: int, n: int, request_set, inform_set, status_set, requests: int = 0, clock: int = 0
    ) -> None:
        super().__init__(pid, n, requests, clock)
        self.R = frozenset(request_set)
        self.I = frozenset(inform_set)
        self.ST = frozenset(status_set)
        # requester side
        self.my_request: tuple[int, int] | None = None
        self.grants: set[int] = set()
        self.failed: set[int] = set()  # arbiters that said FAILED and have not granted since
        self.yielded: set[int] = set()  # arbiters I yielded to and that have not granted again
        self.inquirers: set[int] = set()  # arbiters whose INQUIRE waits for my YIELD
        # arbiter side
        self.queue: list[tuple[int, int]] = []  # (ts, pid), sorted: the head is the earliest
        self.csstat: tuple[int, int] | None = None  # the locked request of a tracked process
        self.inquired = False  # INQUIRE sent for the current lock
        self.failed_sent: set[tuple[int, int]] = set()  # queued requests already told FAILED

    # -- requester ---------------------------------------------------------------------------
    def _request(self) -> list:
        ts = self.clock.tick()
        self.my_request = priority(ts, self.pid)
        self.grants, self.failed, self.yielded, self.inquirers = set(), set(), set(), set()
        self.state = WANTED
        msg = Request(sender=self.pid, ts=ts)
        return [Send(j, msg) for j in sorted(self.R)]

    def _release(self) -> list:
        self.my_request = None
        self.grants = set()
        msg = Release(sender=self.pid, ts=self.clock.tick())
        return [Send(j, msg) for j in sorted(self.I)]

    def _mine(self, req: int) -> bool:
        return self.state is WANTED and self.my_request == (req, self.pid)

    def _on_grant(self, m: int) -> list:
        if self.state is not WANTED:
            raise self.refuse(f"GRANT from {node_name(m)}")
        self.grants.add(m)
        self.failed.discard(m)
        self.yielded.discard(m)
        if self.grants >= self.R:
            self.failed, self.yielded, self.inquirers = set(), set(), set()
            return self._enter()
        return []

    def _answer_inquiries(self) -> list:
        """Give back every inquired grant once this request is known to wait anyway."""
        if self.state is not WANTED or not self.inquirers or not (self.failed or self.yielded):
            return []
        effects = []
        for m in sorted(self.inquirers):
            self.grants.discard(m)
            self.yielded.add(m)
            effects.append(Send(m, Yield(sender=self.pid, ts=self.clock.tick())))
        self.inquirers = set()
        return effects

    # -- arbiter -----------------------------------------------------------------------------
    def _arbitrate(self) -> list:
        effects = []
        while self.csstat is None and self.queue:
            head = self.queue.pop(0)
            self.failed_sent.discard(head)
            effects.append(Send(head[1], Grant(sender=self.pid, ts=self.clock.tick())))
            if head[1] in self.ST:
                self.csstat, self.inquired = head, False
        if self.csstat is not None:
            for r in self.queue:
                if r > self.csstat and r not in self.failed_sent:
                    self.failed_sent.add(r)
                    effects.append(Send(r[1], Failed(sender=self.pid, ts=self.clock.tick(), req=r[0])))
            if not self.inquired and self.queue and self.queue[0] < self.csstat:
                self.inquired = True
                effects.append(
                    Send(self.csstat[1], Inquire(sender=self.pid, ts=self.clock.tick(), req=self.csstat[0]))
                )
        return effects

    def _unlock(self, j: int, what: str) -> tuple[int, int]:
        """CSSTAT is free again: the locked request's owner ``j`` released or yielded it (returned)."""
        if self.csstat is None or self.csstat[1] != j:
            locked = "free" if self.csstat is None else f"locked on {node_name(self.csstat[1])}'s request"
            raise self.refuse(f"{what} from {node_name(j)}", f"CSSTAT is {locked}")
        freed, self.csstat = self.csstat, None
        return freed

    # -- inputs ------------------------------------------------------------------------------
    def on_message(self, msg) -> list:
        self.clock.receive(msg.ts)
        j = msg.sender
        match msg.type:  # by the type tag (protocol.py: dispatch)
            case "REQUEST":  # arbiter
                bisect.insort(self.queue, priority(msg.ts, j))
                return self._arbitrate()
            case "RELEASE":  # arbiter
                self._unlock(j, "RELEASE")
                return self._arbitrate()
            case "YIELD":  # arbiter
                locked = self._unlock(j, "YIELD")
                bisect.insort(self.queue, locked)
                self.failed_sent.add(locked)  # the yielder knows it waits
                return self._arbitrate()
            case "GRANT":  # requester
                return self._on_grant(j)
            case "FAILED":  # requester
                if not self._mine(msg.req) or j in self.grants:
                    return []  # stale: the request is over, or this arbiter granted it since
                self.failed.add(j)
                return self._answer_inquiries()
            case "INQUIRE":  # requester
                if not self._mine(msg.req) or j not in self.grants:
                    return []  # stale: the request is over, or the grant was already given back
                self.inquirers.add(j)
                return self._answer_inquiries()
            case _:
                raise self.refuse(msg)

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is not WANTED:
            return {}
        return {"GRANT": sorted(self.R - self.grants)}

    def card(self) -> list[tuple[str, str]]:
        names = "R I my_request grants failed yielded inquirers csstat queue inquired failed_sent"
        labels = {
            "R": "request set R",
            "I": "inform set I",
            "yielded": "yielded to",
            "inquirers": "INQUIRE from",
        }
        labels |= {
            "csstat": "CSSTAT (locked for)",
            "inquired": "INQUIRE sent",
            "failed_sent": "FAILED sent to",
        }
        return attributes(self, names, counts=frozenset({"grants"}), **labels) + super().card()

    def snapshot(self):
        return (
            self.state,
            self.clock.time,
            self.my_request,
            frozenset(self.grants),
            frozenset(self.failed),
            frozenset(self.yielded),
            frozenset(self.inquirers),
            tuple(self.queue),
            self.csstat,
            self.inquired,
            frozenset(self.failed_sent),
            self.requests_left,
        )


# -- the sets --------------------------------------------------------------------------------
def status_sets(inform: dict[int, frozenset[int]]) -> dict[int, frozenset[int]]:
    """ST_i = {p_j : p_i ∈ I_j}."""
    return {i: frozenset(j for j, members in inform.items() if i in members) for i in inform}


def check_sets(request: dict[int, frozenset[int]], inform: dict[int, frozenset[int]]) -> None:
    """Raise ConfigError unless the notes' condition for mutual exclusion holds."""
    for i in sorted(inform):
        if i not in inform[i]:
            raise ConfigError(f"sanders: process {i} must be in its own inform set I_{i}")
        if not inform[i] <= request[i]:
            extra = sorted(inform[i] - request[i])
            raise ConfigError(f"sanders: I_{i} must be a subset of R_{i}, but {extra} are not in R_{i}")
    pids = sorted(inform)
    for a, i in enumerate(pids):
        for j in pids[a + 1 :]:
            if inform[i] & inform[j]:
                continue
            if i in request[j] and j in request[i]:
                continue
            missing = " and ".join(f"{x} ∉ R_{y}" for x, y in ((j, i), (i, j)) if x not in request[y])
            raise ConfigError(
                f"sanders: processes {i} and {j} could be in the critical section together: "
                f"I_{i} ∩ I_{j} is empty and {missing}"
            )


def _read_sets(options: dict, key: str, processes: int) -> dict[int, frozenset[int]] | None:
    raw = options.get(key)
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ConfigError(f'option {key!r} must map every pid to a list of pids, e.g. {{"1": [1, 2]}}')
    sets: dict[int, frozenset[int]] = {}
    for k, members in raw.items():
        pid = read_pid(k, processes, key)
        if pid in sets:
            raise ConfigError(f"{key}: process {pid} is given twice")
        if not isinstance(members, list) or not all(
            isinstance(m, int) and not isinstance(m, bool) for m in members
        ):
            raise ConfigError(f"{key}: the set of {pid} must be a list of pids, got {members!r}")
        outside = sorted(m for m in members if not 1 <= m <= processes)
        if outside:
            raise ConfigError(f"{key}: the set of {pid} names {outside}, outside 1..{processes}")
        sets[pid] = frozenset(members)
    missing = [p for p in range(1, processes + 1) if p not in sets]
    if missing:
        raise ConfigError(f"{key}: no set for process(es) {missing}")
    return sets


def make_setup(processes: int, options: dict, seed: int = 0) -> Setup:
    """Defaults: I_i = {i}, R_i = all processes (the Ricart–Agrawala-like sets). When only
    ``inform_sets`` is given, R_i defaults to all processes; when only ``request_sets``, I_i = {i}."""
    refuse_unknown(options, set(SPEC.options), "sanders")
    requests, clocks = workload_options(processes, options)
    everyone = frozenset(range(1, processes + 1))
    request = _read_sets(options, "request_sets", processes) or {i: everyone for i in everyone}
    inform = _read_sets(options, "inform_sets", processes) or {i: frozenset({i}) for i in everyone}
    check_sets(request, inform)
    status = status_sets(inform)
    return classic_setup(
        "sanders",
        processes,
        requests,
        clocks,
        lambda pid, clock: SandersNode(
            pid, processes, request[pid], inform[pid], status[pid], requests, clock
        ),
        CODEC,
        request_sets={str(p): sorted(request[p]) for p in sorted(request)},
        inform_sets={str(p): sorted(inform[p]) for p in sorted(inform)},
    )


def _literature_messages(n: int, params: dict) -> tuple[float, float] | None:
    """Uncontended cost of Sanders' sets: REQUEST and GRANT for each other member of R_i, RELEASE
    for each other member of I_i, averaged over i (contention adds FAILED/INQUIRE/YIELD)."""
    request, inform = params.get("request_sets"), params.get("inform_sets")
    if not isinstance(request, dict) or not isinstance(inform, dict) or not request:
        return None
    costs = [2 * len(set(request[k]) - {int(k)}) + len(set(inform.get(k, [])) - {int(k)}) for k in request]
    value = sum(costs) / len(costs)
    return value, value


SPEC = classic_spec(
    "sanders",
    "Sanders' generalization: request sets R_i and inform sets I_i",
    make_setup,
    CODEC,
    {
        "messages": Figure("sets: 2|R∖i|+|I∖i| uncontended", _literature_messages),
        "sync": Figure("T to 2T (sets)", lambda n, p: (1, 2)),
    },
    request_sets="R_i per pid (default: everyone)",
    inform_sets="I_i per pid (default: {i})",
)
