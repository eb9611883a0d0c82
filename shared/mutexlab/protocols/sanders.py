"""Sanders' generalized protocol (docs/architecture.md#sanders): request sets R_i, inform sets I_i, status sets ST_i.

A requester asks every member of R_i for a GRANT and enters with all of them; on leaving it sends
RELEASE to every member of I_i. An arbiter keeps CSSTAT, its knowledge of who is in the critical
section — but only for the processes of its status set ST_i = {p_j : p_i ∈ I_j}, since only they
tell it when they leave. A GRANT to a tracked process *locks* the arbiter (CSSTAT = that
request) until its RELEASE; a GRANT to an untracked process leaves CSSTAT free, so the arbiter
may grant again at once (the notes' p2 does so). The requester and arbiter are arbitration.py's,
which Maekawa shares (CSSTAT is its ``lock``); the state table is ``SandersNode.TABLE``
(docs/protocols.md).

Mutual exclusion holds iff p_i ∈ I_i, I_i ⊆ R_i, and every pair (i, j) has I_i ∩ I_j ≠ ∅ (a
common arbiter that tracks both) or p_i ∈ R_j and p_j ∈ R_i (each withholds its grant while it
holds its own); ``make_setup`` refuses sets that break it, naming the pair.

The notes' protocol (REQUEST/GRANT/RELEASE only) deadlocks as soon as two arbiters lock on
different requests that each need the other. As in Singhal's presentation, deadlocks are resolved
the way Maekawa does, with INQUIRE / FAILED / YIELD; FAILED and INQUIRE name the request they
are about (``req``, its timestamp), so a stale one — about a request that is over, or from an
arbiter that granted since — is recognised and ignored.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import Field

from ..messages import Codec, Message
from ..protocol import Effect, Send
from ..setups import ConfigError, Setup
from ..show import attributes
from ..spec import Figure
from .arbitration import ArbitratedNode, Release, Req, Request, Yield, arbitration_table
from .classic import classic_setup, classic_spec, refuse_unknown, workload_options
from .quorums import read_sets


class Grant(Message):
    type: Literal["GRANT"] = "GRANT"


class Failed(Message):
    """The request stamped ``req`` waits behind an earlier locked request."""

    type: Literal["FAILED"] = "FAILED"
    req: int = Field(ge=0)


class Inquire(Message):
    """The arbiter, locked on the receiver's request stamped ``req``, asks for it back."""

    type: Literal["INQUIRE"] = "INQUIRE"
    req: int = Field(ge=0)


CODEC = Codec(Request, Grant, Release, Failed, Inquire, Yield)


class SandersNode(ArbitratedNode):
    TABLE = arbitration_table(
        "GRANT",
        "R_i",
        "I_i",
        failed="r is mine and m not granting: failed += m, answer pending INQUIREs; else ignore (stale)",
        inquire="r is mine and m granting: keep it pending, answer if failed or yielded; else ignore (stale)",
        stale="stale",
    )
    GRANT = Grant

    def __init__(
        self,
        pid: int,
        n: int,
        request_set: Iterable[int],
        inform_set: Iterable[int],
        status_set: Iterable[int],
        requests: int = 0,
        clock: int = 0,
    ) -> None:
        super().__init__(pid, n, request_set, inform_set, frozenset(status_set), requests, clock)

    def _release(self) -> list[Effect]:
        self.my_request = None
        self.grants = set()
        msg = Release(sender=self.pid, ts=self.clock.tick())
        return [Send(j, msg) for j in self.informs]

    def _on_failed(self, msg: Failed) -> list[Effect]:
        self.clock.receive(msg.ts)
        if self.my_request != (msg.req, self.pid) or msg.sender in self.grants:
            return []  # stale: the request is over, or this arbiter granted it since
        self.failed.add(msg.sender)
        return self._answer_inquiries()

    def _on_inquire(self, msg: Inquire) -> list[Effect]:
        self.clock.receive(msg.ts)
        if self.my_request != (msg.req, self.pid) or msg.sender not in self.grants:
            return []  # stale: the request is over, or the grant was already given back
        self.inquiries.add(msg.sender)
        return self._answer_inquiries()

    def _failed(self, r: Req) -> Failed:
        return Failed(sender=self.pid, ts=self.clock.tick(), req=r[0])

    def _inquiry(self, lock: Req) -> Inquire:
        return Inquire(sender=self.pid, ts=self.clock.tick(), req=lock[0])

    def card(self) -> list[tuple[str, str]]:
        names = "asks informs tracks my_request grants failed yielded inquiries lock queue inquired told"
        labels = {"asks": "request set R", "informs": "inform set I", "tracks": "status set ST"}
        labels |= {"yielded": "yielded to", "inquiries": "INQUIRE from", "lock": "CSSTAT (locked for)"}
        labels |= {"inquired": "INQUIRE sent", "told": "FAILED sent to"}
        return attributes(self, names, counts=frozenset({"grants"}), **labels) + super().card()


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


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    """Defaults: I_i = {i}, R_i = all processes (the Ricart–Agrawala-like sets). When only
    ``inform_sets`` is given, R_i defaults to all processes; when only ``request_sets``, I_i = {i}."""
    refuse_unknown(options, set(SPEC.options), "sanders")
    requests, clocks = workload_options(processes, options)
    everyone = frozenset(range(1, processes + 1))

    def sets(key: str, default: dict[int, frozenset[int]]) -> dict[int, frozenset[int]]:
        raw = options.get(key)
        return (
            default if raw is None else {i: frozenset(s) for i, s in read_sets(raw, processes, key).items()}
        )

    request = sets("request_sets", {i: everyone for i in everyone})
    inform = sets("inform_sets", {i: frozenset({i}) for i in everyone})
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


def _literature_messages(n: int, params: dict[str, Any]) -> tuple[float, float] | None:
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
    lambda n: 5 * n**0.5,  # messages per entry when the sets say nothing simpler (like Maekawa)
    request_sets="R_i per pid (default: everyone)",
    inform_sets="I_i per pid (default: {i})",
)
