"""What a run shows: the audit's verdict on its trace, and the findings only the director sees.

The audit (``audit.verify_events``) decides safety by happened-before, the capacities and the
problem's own invariants. The director adds what a trace alone cannot tell: a run that came to
rest (nothing to deliver, no workload step left) with a request unserved or the audit still
missing something is a deadlock, not a run cut short — unless, in a run of an MPI program, the
problem's role (node 0) recorded nothing but messages: none of rank 0's printed lines was read
(``--regex`` matches none), no progress of it seen, which is no deadlock (``no-progress-seen``).
A run at rest with every request served but an MPI rank's main thread still waiting in what
nothing can complete (``Run.never_ended``) is a hang: that rank never ends. A node that crashed,
stalled, wrote garbage or flooded is a finding about that node (``lines.NodeFault``).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from ..audit import verify_events
from ..audit.verdict import UNFINISHED_NOTE, Verdict
from ..findings import PROGRESS, UNDECIDED
from .lines import CRASHED, PAST_DONE, UNASKED, NodeFault

SAFETY = "violation"
DEADLOCK = "deadlock"
UNFINISHED = "nothing can move and the run is not finished"  # by the problem's own end
NO_REST = "no-rest"
# The unfinished of a run mutexlab played until nothing could move: stuck, not cut short
AT_REST = "left undone when the run came to rest (nothing could move: no message held, no step left)"
HANG = "hang"
# A rank called MPI_Finalize while another of its threads was still in an MPI call: erroneous
# under MPI, but not a finding (docs/mpi.md#finalize); said after a PASS or a SAFE replay.
FINALIZE_PENDING = (
    "MPI says every thread's calls end before MPI_Finalize: MPICH ends such a program with a fatal "
    "error, Open MPI lets it pass; docs/mpi.md#finalize"
)
# ... or with a request still pending (an MPI_Irecv never completed): erroneous too, a note as well
FINALIZE_REQUEST = (
    "MPI says every request completes before MPI_Finalize: Open MPI 4.1 and MPICH 4.0 let it pass, "
    "MPICH warning of a request not returned; docs/mpi.md#finalize"
)


def finalize_words(said: str) -> str:
    """Why a rank's MPI_Finalize was erroneous (``said``: the rank's own words), and what MPIs do."""
    return FINALIZE_REQUEST if "with a request still pending" in said else FINALIZE_PENDING


SYNC_HANG = (  # a standard send waited for its receive: the program relies on its being buffered
    "under an MPI whose standard sends wait for their receive (as MPI allows: Open MPI 4.1 past "
    "4,040 bytes, MPICH 4.0 past 8,255; --sync-sends makes every one wait) this program never ends"
)
NO_PROGRESS_SEEN = "no-progress-seen"
NONDETERMINISTIC = "nondeterministic"
PROTOCOL = "protocol"
IDLE_NAMED_OTHERWISE = (
    "nothing can move and every request was served, but a node's last state line is not the "
    "problem's idle state (below): no deadlock — a node that writes state lines ends in that one"
)


@dataclass
class Finding:
    rule: str  # violation, deadlock, hang, no-progress-seen, no-rest, nondeterministic, or a NodeFault's rule
    message: str
    node: int | None = None
    step: int | None = None  # the step (1-based; 0: the inits) where it showed
    details: list[str] = field(default_factory=list)  # the verdict's finding lines
    line: str | None = None  # a node fault's line, shown at the message's end (not written out)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "line"}

    def render(self) -> str:
        where = f" (step {self.step})" if self.step else ""
        return "\n".join([f"FINDING [{self.rule}]{where}: {self.message}", *self.details])


def wrote_late(rule: str | None, message: str) -> bool:
    """Whether a finding is a line written after a done (a timer's, another thread's): whether it
    shows depends on when that line arrives, so a run that is to show it again (shrinking, a
    replay) waits a moment at its end for it, as a run at rest does."""
    return rule == "protocol" and PAST_DONE in message


def ended_unasked(rule: str | None, message: str) -> bool:
    """Whether a finding is a kept node that ended after its last answer (``process.gone``): seen
    by its end, so a run that is to show it again (shrinking, a replay) waits a moment for it."""
    return rule == CRASHED and UNASKED in message


def ended_answering(message: str) -> str:
    """The input a node ended after answering, as an ``ended_unasked`` finding names it (``release``
    in "… after answering release, with nothing asked of it"), else ""."""
    said = re.search(r"after answering (\w+), " + re.escape(UNASKED), message)
    return said.group(1) if said else ""


def from_fault(fault: NodeFault, step: int, events: list[dict[str, Any]] | None = None) -> Finding:
    """The finding of a node's ``fault`` in ``step`` — or, when the ``events`` recorded before it
    already break safety (a node let in while another held the resource, which then went wrong
    in another way), that violation: the graver and the earlier, the fault said after it."""
    if events and not (verdict := verify_events(events)).safe:
        safety = ["  " + v.describe() for v in verdict.safety]
        then = f"  then, in step {step}: {fault}" if step else f"  then: {fault}"
        return Finding(SAFETY, f"the audit: {verdict.head()}", None, step, [*safety, then])
    return Finding(fault.rule, str(fault), fault.node, step, line=fault.line)


def judge(
    events: list[dict[str, Any]],
    resting: bool,
    waiting: list[str],
    step: int,
    unread_output: bool = False,
    never_ended: dict[str, str] | None = None,
    out_of_mpi_order: bool = False,
    sync_sends: bool = False,
) -> tuple[Verdict, Finding | None]:
    """The verdict of a run's ``events`` and its finding, if any. ``resting``: nothing could move
    any more; ``waiting``: the nodes with a request unserved; ``unread_output``: the nodes' lines
    are read through a filter (an MPI program's ranks), so some may go unread; ``never_ended``:
    the MPI ranks whose main thread waits, by node name, what in; ``out_of_mpi_order``: the run
    reordered or duplicated deliveries, which no MPI does; ``sync_sends``: the ranks' standard sends
    waited for their receive (``--sync-sends``), which an MPI may do or not."""
    verdict = verify_events(events)
    # A run at rest is no trace cut short: mutexlab ran it until nothing could move.
    details = verdict.finding_lines(AT_REST if resting else UNFINISHED_NOTE)
    if not verdict.safe:
        safety = ["  " + v.describe() for v in verdict.safety]
        return verdict, Finding(SAFETY, f"the audit: {verdict.head()}", None, step, safety)
    if resting and waiting:
        return verdict, Finding(
            DEADLOCK,
            f"nothing can move and {', '.join(waiting)} still {'waits' if len(waiting) == 1 else 'wait'} "
            "for the resource",
            None,
            step,
            details,
        )
    if resting and any(v.kind == PROGRESS for v in verdict.violations):
        if unread_output and (role := _unread_role(events)) is not None:
            return verdict, Finding(
                NO_PROGRESS_SEEN,
                f"the run is not finished and nothing of {role} (node 0) was read but its messages — no "
                "state, entry or event: its output unread (with --mpi: does --regex read rank 0's "
                "lines?), no progress of it seen; perhaps not a deadlock",
                0,
                step,
                details,
            )
        progress = [v for v in verdict.violations if v.kind == PROGRESS]
        if all(v.rule == "not-idle-at-end" for v in progress):  # served, only named otherwise
            return verdict, Finding(PROTOCOL, IDLE_NAMED_OTHERWISE, None, step, details)
        return verdict, Finding(DEADLOCK, UNFINISHED, None, step, details)
    if resting and never_ended:
        names = list(never_ended)
        return verdict, Finding(
            HANG,
            f"nothing can move and {', '.join(names)} never ended: {'; '.join(never_ended.values())} — "
            "no request seen unserved, but "
            + (
                "this run never ends (with --reorder or --duplicate, which no MPI does)"
                if out_of_mpi_order
                else SYNC_HANG
                if sync_sends
                else "under any MPI this program never ends"
            ),
            None,
            step,
            details,
        )
    return verdict, None  # what the audit could not decide is no finding, nor a pass (undecided)


def _unread_role(events: list[dict[str, Any]]) -> str | None:
    """The problem's role (node 0 of the run header), when it recorded nothing but messages: in a
    run whose lines are read through a filter, what the filter does not match is the program's own
    output, so the role's lines may have gone unread (a ``--node`` program's every line is read)."""
    header = next((e for e in events if e.get("event") == "run"), {})
    processes = header.get("processes")
    role = processes.get("0") if isinstance(processes, dict) else None
    if role is None or any(e.get("pid") == role and e.get("event") not in ("send", "recv") for e in events):
        return None
    return str(role)


def undecided(verdict: Verdict | None) -> str | None:
    """What the audit of a run without a finding could not decide (its first such finding,
    others counted), else None: such a run proves nothing about what was not checked."""
    found = [v for v in (verdict.violations if verdict is not None else []) if v.kind == UNDECIDED]
    if not found:
        return None
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return found[0].describe() + more
