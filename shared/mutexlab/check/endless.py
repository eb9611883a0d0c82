"""Whether an endless workload's worlds are infinite, said before the search runs into a limit.

With ``--endless`` every process requests forever, so a Lamport clock that counts its events
grows forever too. Clock-offset normalisation, where the protocol declares it, shifts every
world down to its smallest live timestamp — but a timestamp that stays put (an idle process's
old entry) holds that minimum down while the others rise. Either way no world comes back, and
the search would stop only at ``--max-states`` or ``--max-memory``.

A counter of the protocol's own that ``snapshot()`` holds (a sequence number, a count of
messages seen) makes every world new just the same, and no clock offset bounds it.

``unbounded`` follows a few runs before the search — a fair one (each step from the process or
link served least recently) and, for each process, one that keeps it idle as long as anything
else can move — and reports what keeps rising while no world repeats: a process's whole-number
attribute that its ``snapshot()`` depends on (named; the clock is not one of them), else the
largest clock. A world that repeats proves nothing, and a counter held deeper (in a list, a
dict) is not watched: the search's limits still stand behind it.
"""

from __future__ import annotations

import copy

from ..slots import attributes
from .model import DELIVER, LOCAL, Model
from .reductions import Note, notes_of

PROBE_STEPS = 2_000
CLOCK = "clock"  # the key of the largest Lamport clock among what is watched


def _clock(proto) -> int:
    time = getattr(getattr(proto, "clock", None), "time", None)
    return time if isinstance(time, int) else 0


def _held(proto, name: str, value: int) -> bool:
    """Does ``proto.snapshot()`` depend on its attribute ``name`` (``value``)? Tried on a copy."""
    try:
        twin = copy.deepcopy(proto)
        setattr(twin, name, value + 1)
        return twin.snapshot() != proto.snapshot()
    except Exception:  # noqa: BLE001 - a snapshot that cannot take the change: not this counter
        return False


def _watched(model: Model, world: tuple) -> dict:
    """What might grow in ``world``: the largest clock, and each process's whole-number attributes
    that its snapshot holds (``(process index, name)``)."""
    protos = [model.objects[world[i]] for i in range(model.n)]
    out: dict = {CLOCK: max(_clock(p) for p in protos)}
    for i, proto in enumerate(protos):
        for name, value in attributes(proto).items():
            if type(value) is int and not name.startswith("__") and _held(proto, name, value):
                out[i, name] = value
    return out


def _owner(model: Model, label: tuple) -> tuple:
    """What fairness serves: one link's deliveries, or one process's local decisions."""
    kind, x, _ = label
    return (DELIVER, x) if kind == DELIVER else (LOCAL, x)


def _rising(model: Model, idle: int | None, steps: int) -> dict | None:
    """What rises steadily (``_watched``'s keys, with the value reached) on a run that never comes
    back to a world (``idle``: a process whose local decisions wait while anything else can move);
    None when it comes back, ends, or nothing rises."""
    world, _ = model.initial()
    seen = {world}
    served: dict[tuple, int] = {}
    q = steps // 4
    # the ends of the run's quarters: what rises steadily rises from each to the next
    marks = {q - 1, 2 * q - 1, 3 * q - 1, steps - 1}
    samples = []
    for n in range(steps):
        labels = model.steps(world)
        if idle is not None:
            labels = [lb for lb in labels if lb[0] != LOCAL or lb[1] != idle] or labels
        if not labels:
            return None  # a dead end: the search reports it
        for label in sorted(labels, key=lambda lb: served.get(_owner(model, lb), -1)):
            nxt, t, _ = model.step(world, label)
            if nxt is not None or not t.refused:
                break  # (a refused step is a dead end, as in the search: the next one is taken)
        served[_owner(model, label)] = n
        if nxt is None or nxt in seen:
            return None
        seen.add(nxt)
        world = nxt
        if n in marks:
            samples.append(_watched(model, world))
    rising = {
        key: samples[-1][key]
        for key in samples[0]
        if all(key in s for s in samples) and all(a[key] < b[key] for a, b in zip(samples, samples[1:]))
    }
    return rising or None


CLOCK_NOTE = "clock-offset normalisation"


def _workload_flag(model: Model) -> str:
    """The flag of the workload an endless one replaces (``requests``, or a problem's own)."""
    key = model.problem.endless if model.problem is not None else None
    return (key or "requests").replace("_", "-")


def unbounded(model: Model, steps: int = PROBE_STEPS) -> str | None:
    """Why the worlds of ``model`` (an endless workload) are infinite, or None."""
    for idle in (None, *range(model.n)):
        rising = _rising(model, idle, steps)
        if rising is None:
            continue
        who = "" if idle is None else f" in which {model.names[model.pids[idle]]} stays idle"
        counters = [
            f"{model.names[model.pids[key[0]]]}'s {key[1]} (to {top:,})"
            for key, top in rising.items()
            if key != CLOCK
        ]
        note = next(
            (n for n in notes_of(model) if n.name == CLOCK_NOTE),
            Note(CLOCK_NOTE, False, "--no-reduction turns every reduction off"),  # no notes then
        )
        if counters:  # a counter snapshot() holds: no clock offset bounds it
            clock = (
                f"; the largest clock rose too (to {rising[CLOCK]:,}), and clock-offset normalisation does "
                f"not apply ({note.why})"
                if CLOCK in rising and not note.applied
                else ""
            )
            return (
                f"--endless: the worlds of this workload are infinite — a{' fair' if idle is None else ''} run "
                f"of {steps:,} steps{who} never came back to a world while {', '.join(counters)} rose steadily, "
                f"and snapshot() holds {'it' if len(counters) == 1 else 'them'}: every world is new (clock offsets "
                f"bound clocks, not counters){clock}. Check a bounded workload (--{_workload_flag(model)} N), or keep what "
                "grows without bound out of snapshot() (docs/check.md#endless)"
            )
        if CLOCK not in rising:
            continue
        top = rising[CLOCK]
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
