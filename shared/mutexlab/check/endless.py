"""Whether an endless workload's worlds are infinite, said before the search runs into a limit.

With ``--endless`` every process requests forever, so a Lamport clock that counts its events
grows forever too. Clock-offset normalisation, where the protocol declares it, shifts every
world down to its smallest live timestamp — but a timestamp that stays put (an idle process's
old entry) holds that minimum down while the others rise. Either way no world comes back, and
the search would stop only at ``--max-states`` or ``--max-memory``.

``unbounded`` follows a few runs before the search — a fair one (each step from the process or
link served least recently) and, for each process, one that keeps it idle as long as anything
else can move — and reports a clock that keeps rising while no world repeats. A world that
repeats proves nothing, and other counters (sequence numbers) are not watched: the search's
limits still stand behind it.
"""

from __future__ import annotations

from ..protocols import registry
from .model import DELIVER, LOCAL, Model
from .reductions import notes_of

PROBE_STEPS = 2_000


def _clock(proto) -> int:
    time = getattr(getattr(proto, "clock", None), "time", None)
    return time if isinstance(time, int) else 0


def _owner(model: Model, label: tuple) -> tuple:
    """What fairness serves: one link's deliveries, or one process's local decisions."""
    kind, x, _ = label
    return (DELIVER, x) if kind == DELIVER else (LOCAL, x)


def _rising(model: Model, idle: int | None, steps: int) -> int | None:
    """The clock a run reaches when it rises steadily without the run coming back to a world
    (``idle``: a process whose local decisions wait while anything else can move)."""
    world, _ = model.initial()
    seen = {world}
    served: dict[tuple, int] = {}
    clocks = []
    for n in range(steps):
        labels = model.steps(world)
        if idle is not None:
            labels = [lb for lb in labels if lb[0] != LOCAL or lb[1] != idle] or labels
        if not labels:
            return None  # a dead end: the search reports it
        label = min(labels, key=lambda lb: served.get(_owner(model, lb), -1))
        served[_owner(model, label)] = n
        nxt, _, _ = model.step(world, label)
        if nxt is None or nxt in seen:
            return None
        seen.add(nxt)
        world = nxt
        clocks.append(max(_clock(model.objects[world[i]]) for i in range(model.n)))
    q = steps // 4
    return clocks[-1] if clocks[q] < clocks[2 * q] < clocks[3 * q] < clocks[-1] else None


def _workload_flag(model: Model) -> str:
    """The flag of the workload an endless one replaces (``requests``; the philosophers' ``meals``)."""
    found = registry.lookup(model.setup.algorithm)
    key = registry.problem_of(found).endless if found is not None else None
    return (key or "requests").replace("_", "-")


def unbounded(model: Model, steps: int = PROBE_STEPS) -> str | None:
    """Why the worlds of ``model`` (an endless workload) are infinite, or None."""
    for idle in (None, *range(model.n)):
        top = _rising(model, idle, steps)
        if top is None:
            continue
        note = next(n for n in notes_of(model) if n.name == "clock-offset normalisation")
        who = "" if idle is None else f" in which {model.names[model.pids[idle]]} stays idle"
        why = (
            f"clock-offset normalisation applies ({note.why.split(':')[0]}) but a timestamp that stays "
            "put holds the smallest one down"
            if note.applied
            else f"clock-offset normalisation, which would keep clocks bounded, does not apply ({note.why})"
        )
        return (
            f"--endless: the worlds of this workload are infinite — a{' fair' if idle is None else ''} run "
            f"of {steps:,} steps{who} never came back to a world while the largest clock rose steadily to {top:,}, and {why}. Check a "
            f"bounded workload (--{_workload_flag(model)} N), or declare clock offsets that bound it "
            "(docs/check.md#reductions)"
        )
    return None
