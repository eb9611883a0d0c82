"""A process whose trace provably ends early: its safety findings are not judged.

Over RabbitMQ a participant's trace events travel in batches behind its protocol messages
(transport/participant.py): a participant stopped or killed between the two has sent messages, and
left an exit, whose events never reached the monitor. The receiver's clock then knows events of
that process the trace lacks — a ``recv`` without its ``send``, a holder with no ``exit`` — and a
finding built on them would be a false violation.

``proven_cut(events, suspects)``: of ``suspects`` (the processes that may have lost their last batch:
no final status), those the trace proves cut — some event's clock knows more of p than p's own
last recorded event. ``excuse(violations, cut)``: each safety finding that cites an event of a cut
process, or a receipt from one, and some event whose clock knows that process beyond its last
recorded event, becomes the undecided ``audit-incomplete``, naming why. Nothing is excused for a
process whose trace the clocks do not prove short (one stopped while holding, with nothing shipped
after its ``enter``), nor a finding none of whose events knows the lost part (two holders, neither
enter knowing the cut one's lost events: its exit cannot come before the other's enter), which is
still judged.

One rule for ``run`` and ``verify``; only the suspects differ. The monitor knows which participants
sent no final status and suspects those alone (one that did had every batch heard: a trace short
of it is a finding). ``mutexlab verify`` has the trace alone, which cannot tell who was stopped:
every process is a suspect (``verdict.verify_file``), so what is only missing is never called a
violation, while an overlap proven among the events present still is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..findings import SAFETY, Violation

Cut = dict[str, tuple[int, int]]  # process -> (its own last clock entry recorded, the most others know)


def proven_cut(events: Iterable[dict], suspects: Iterable[str]) -> Cut:
    """The ``suspects`` whose recorded events end before an event other processes know of."""
    wanted = set(suspects)
    own: dict[str, int] = dict.fromkeys(wanted, 0)
    known: dict[str, int] = dict.fromkeys(wanted, 0)
    for event in events:
        vc = event.get("vc")
        if not isinstance(vc, dict):
            continue
        pid = event.get("pid")
        for p in wanted.intersection(vc):
            value = vc[p]
            if not isinstance(value, int):
                continue
            if p == pid:
                own[p] = max(own[p], value)
            else:
                known[p] = max(known[p], value)
    return {p: (own[p], known[p]) for p in sorted(wanted) if known[p] > own[p]}


def excuse(violations: list[Violation], cut: Mapping[str, tuple[int, int]]) -> list[Violation]:
    """``violations`` with each safety finding resting on a cut process's events made undecided."""
    if not cut:
        return violations
    return [_excused(v, cut) if v.kind == SAFETY else v for v in violations]


def _knows(event: dict, p: str) -> int:
    vc = event.get("vc")
    value = vc.get(p, 0) if isinstance(vc, dict) else 0
    return value if isinstance(value, int) else 0


def _excused(v: Violation, cut: Mapping[str, tuple[int, int]]) -> Violation:
    cited: set[str] = {str(e.get("pid")) for e in v.events if e.get("pid") in cut}
    cited |= {str(e.get("from")) for e in v.events if e.get("event") == "recv" and e.get("from") in cut}
    # Only when a cited event knows more of p than its trace holds can p's lost events (an exit, a
    # send) undo the finding: one resting on p's recorded prefix alone stands.
    involved = sorted(p for p in cited if any(_knows(e, p) > cut[p][0] for e in v.events))
    if not involved:
        return v
    why = "; ".join(
        f"{p}'s events end at its clock {cut[p][0]}, others know it at {cut[p][1]}" for p in involved
    )
    return Violation(
        "audit-incomplete",
        f"not judged ({v.rule}: {v.message}): the trace of {', '.join(involved)} is cut short — "
        f"{why} (its last events are missing: stopped or killed before they reached the trace)",
        v.events,
    )
