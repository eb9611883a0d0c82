"""``mutexlab check --metrics``: worst (and best) cases over every interleaving.

Three figures per resource, each a property of a *path*, not of a world:

* **messages per entry** — every protocol message sent is charged to one request (an entry):
  a message addressed to a process that is waiting and awaits it (its ``waiting_for()`` names
  the message's type, and the sender or nobody in particular) is charged to that process's
  request; any other message to the request that caused the step sending it — the request
  itself for a ``request`` decision, the charged request of the message delivered for a
  delivery, the process's own latest request for its other decisions (an exit). A request's
  figure is final when the run ends: min and max are over every request of every complete run.
  Beside it, the run's average: every message a complete run sent ÷ its entries;
* **synchronisation delay** — after an exit while someone waits, the number of message hops on
  the longest causal chain from that exit to the next entry: the time between them when every
  message takes one unit and local steps none (each process and each message in flight carries
  the longest chain since the latest exit it causally follows). Beside it, the worst case of
  the *shortest* such chain: hops the entry could not have come sooner than;
* **bypass** — how many entries by others happen between a process's request and its entry.

A request is the protocol's ``Note("request", {"resource": r})`` (what the audit reads too);
an entry and an exit are its ``Enter``/``Exit`` of r. Protocols that note no requests (the
families' own scenarios) have no figures here, and the result says so.

The figures depend on the path, so the search runs on *augmented* worlds: the model's world
with the charges and hops of the messages in flight, each process's open request, bypass count
and hops, the charge of every request so far, whether a handover is being measured. Two paths
to the same augmented world have the same futures and the same figures ahead, so the search
stores each augmented world once and the figures stay exact. It runs on the plain model: the
reductions merge worlds whose histories differ (clock shift, canonical snapshots) or skip
interleavings (partial-order reduction), so ``--metrics`` searches without them.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..protocol import Note
from .model import LOCAL, Model
from .result import rss_mb

CHECK_EVERY = 4096
NONE = -1  # no request / no hops known


@dataclass
class Extreme:
    value: int
    path: list[tuple]  # the step labels of a run reaching it
    who: str = ""  # the process concerned


@dataclass
class Figures:
    """The figures of one resource."""

    messages_min: Extreme | None = None
    messages_max: Extreme | None = None
    sync_max: Extreme | None = None
    sync_short_max: Extreme | None = None  # the shortest causal chain's hops, at its worst
    bypass_max: Extreme | None = None
    average_min: float | None = None  # every message of a complete run ÷ its entries, fewest
    average_max: float | None = None
    entries: int = 0  # requests whose figure was taken (over every complete run)
    unlinked: int = 0  # entries after a waited-on exit that no causal chain leads to

    def as_dict(self) -> dict:
        def val(e: Extreme | None):
            return None if e is None else e.value

        return {
            "messages_per_entry": {"min": val(self.messages_min), "max": val(self.messages_max)},
            "messages_per_entry_run_average": {"min": _r(self.average_min), "max": _r(self.average_max)},
            "sync_delay": {"max": val(self.sync_max), "max_shortest_chain": val(self.sync_short_max)},
            "bypass": {"max": val(self.bypass_max)},
        }


@dataclass
class MetricsResult:
    figures: dict[str, Figures] = field(default_factory=dict)  # resource → figures
    states: int = 0
    transitions: int = 0
    seconds: float = 0.0
    complete: bool = False
    stopped: str | None = None
    defined: bool = True  # False: the protocol notes no requests
    runs: int = 0  # complete runs (final worlds reached, counted once per augmented world)

    def as_dict(self) -> dict:
        out: dict = {
            "complete": self.complete,
            "stopped": self.stopped,
            "states": self.states,
            "transitions": self.transitions,
            "seconds": round(self.seconds, 3),
            "reductions": "none (the figures depend on the path: every reduction is off)",
        }
        if not self.complete:
            return out  # no figure is proven
        if not self.defined:
            out["why"] = "the protocol notes no requests (Note 'request'): no figures are defined"
            return out
        out["resources"] = {r: f.as_dict() for r, f in sorted(self.figures.items())}
        if len(self.figures) == 1:
            out |= next(iter(self.figures.values())).as_dict()
        return out


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


class Tracker:
    """Requests, charges and hops of one model; ``step`` maps an augmented world forward."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self._requests: dict[tuple[int, int], int] = {}  # (state id, code) → resource id or -1

    def requested(self, sid: int, code: int) -> int:
        """The resource the input ``code`` to state ``sid`` requests (its Note), or -1."""
        key = (sid, code)
        got = self._requests.get(key)
        if got is None:
            got = NONE
            if code & 1:
                model = self.model
                twin = copy.deepcopy(model.objects[sid])
                for effect in twin.on_local(model.actions[code >> 1]):
                    if type(effect) is Note and effect.event == "request":
                        got = model.res_id(str(effect.fields.get("resource")))
            self._requests[key] = got
        return got

    def initial(self, world: tuple) -> tuple:
        """The augmented initial world: the start's messages charged to nobody."""
        m = self.model
        tags = tuple(tuple((NONE, NONE, NONE) for _ in m.seqs[world[m.n + k]]) for k in range(m.L))
        procs = tuple((NONE, NONE, 0, NONE, NONE) for _ in range(m.n))  # open, own, bypass, hops ×2
        return (tags, procs, (), (), False, 0)  # charges, requests' (resource, process), measuring, uncharged

    def awaits(self, world: tuple, q: int, i: int, mid: int) -> bool:
        m = self.model
        lacks = m.waiting(world[q])
        whom = lacks.get(m.messages[mid].type) if lacks else None
        return whom is not None and (not whom or m.pids[i] in whom)

    def step(self, world: tuple, aux: tuple, label: tuple, nxt: tuple, t, seen: Callable) -> tuple:
        """The augmented successor; ``seen(kind, value, who)`` records a figure reached."""
        m = self.model
        tags, procs, charges, kinds, measuring, uncharged = aux
        tags_l = list(tags)
        procs_l = [list(p) for p in procs]
        charges_l = list(charges)
        kinds_l = list(kinds)
        kind, x, y = label
        if kind == LOCAL:
            i = x
            rid = self.requested(world[i], 2 * y + 1)
            if rid != NONE:
                cause = len(charges_l)
                charges_l.append(0)
                kinds_l.append((rid, i))
                procs_l[i][0] = procs_l[i][1] = cause
                procs_l[i][2] = 0
            else:
                cause = procs_l[i][1]
        else:
            i = m.link_to[x]
            (cause, longest, shortest), tags_l[x] = tags_l[x][0], tags_l[x][1:]
            p = procs_l[i]
            if longest != NONE and longest + 1 > p[3]:
                p[3] = longest + 1
            if shortest != NONE and (p[4] == NONE or shortest + 1 < p[4]):
                p[4] = shortest + 1
        name = m.names[m.pids[i]]
        for sign, rid, _ in t.holds:
            if sign > 0:
                mine = procs_l[i][0]
                if mine != NONE and kinds_l[mine][0] == rid:
                    seen(rid, "bypass", procs_l[i][2], name)
                    procs_l[i][0] = NONE
                for j, p in enumerate(procs_l):
                    if j != i and p[0] != NONE and kinds_l[p[0]][0] == rid:
                        p[2] += 1
                if measuring:
                    seen(rid, "sync", procs_l[i][3], name)
                    seen(rid, "sync_short", procs_l[i][4], name)
                    measuring = False
            elif sign < 0:
                # the exit every later hop count starts from; measured if someone waits
                tags_l = [tuple((c, NONE, NONE) for c, _, _ in q) for q in tags_l]
                for p in procs_l:
                    p[3] = p[4] = NONE
                procs_l[i][3] = procs_l[i][4] = 0
                measuring = any(p[0] != NONE and kinds_l[p[0]][0] == rid for p in procs_l)
        longest, shortest = procs_l[i][3], procs_l[i][4]
        for k, mid in t.sends:
            q = m.link_to[k]
            opened = procs_l[q][0]
            charge = opened if opened != NONE and self.awaits(nxt, q, i, mid) else cause
            if charge != NONE:
                charges_l[charge] += 1
            else:
                uncharged += 1
            tags_l[k] = tags_l[k] + ((charge, longest, shortest),)
        return (
            tuple(tags_l),
            tuple(tuple(p) for p in procs_l),
            tuple(charges_l),
            tuple(kinds_l),
            measuring,
            uncharged,
        )


def search_metrics(
    model: Model,
    max_states: int | None = None,
    max_memory: float | None = None,
    progress: Callable | None = None,
) -> MetricsResult:
    """Every reachable augmented world, depth-first; the figures with a run reaching each."""
    out = MetricsResult()
    t0 = time.perf_counter()
    base = rss_mb()
    tracker = Tracker(model)
    world, _ = model.initial()
    if any(t.holds for _, t in model.start_transitions):
        raise ValueError("--metrics: a process holds a resource from its start: no request precedes it")
    root = (world, tracker.initial(world))
    frames: list = [[root, model.steps(world), 0, None]]
    seen_states = {root}
    out.states = 1
    names = model.resources

    def figures(rid: int) -> Figures:
        return out.figures.setdefault(names[rid], Figures())

    def record(rid: int, kind: str, value: int, who: str) -> None:
        f = figures(rid)
        path = [fr[3] for fr in frames[1:]] + [current]
        if kind == "bypass":
            if f.bypass_max is None or value > f.bypass_max.value:
                f.bypass_max = Extreme(value, path, who)
        elif value == NONE:
            f.unlinked += kind == "sync"
        elif kind == "sync":
            if f.sync_max is None or value > f.sync_max.value:
                f.sync_max = Extreme(value, path, who)
        elif f.sync_short_max is None or value > f.sync_short_max.value:
            f.sync_short_max = Extreme(value, path, who)

    current: tuple | None = None
    requested_any = False
    while frames:
        frame = frames[-1]
        (world, aux), labels, pos = frame[0], frame[1], frame[2]
        if pos >= len(labels):
            frames.pop()
            continue
        frame[2] = pos + 1
        current = labels[pos]
        nxt, t, _ = model.step(world, current)
        out.transitions += 1
        if nxt is None:
            continue  # a rejected input is the plain check's finding, not a run
        naux = tracker.step(world, aux, current, nxt, t, record)
        if naux[3]:
            requested_any = True
        state = (nxt, naux)
        if state in seen_states:
            continue
        seen_states.add(state)
        out.states += 1
        if max_states is not None and out.states >= max_states:
            out.stopped = f"state limit {max_states:,} reached"
            break
        if out.states % CHECK_EVERY == 0:
            if max_memory is not None and rss_mb() - base > max_memory:
                out.stopped = f"memory limit {max_memory:g} MB reached"
                break
            if progress is not None:
                progress(out.states, out.transitions, time.perf_counter() - t0)
        labels = model.steps(nxt)
        if not labels and model.all_finished(nxt):
            _final(out, naux, names, [fr[3] for fr in frames[1:]] + [current], model)
        frames.append([state, labels, 0, current])
    out.seconds = time.perf_counter() - t0
    out.complete = out.stopped is None
    out.defined = requested_any
    return out


def _final(out: MetricsResult, aux: tuple, names: list, path: list, model: Model) -> None:
    """A complete run: every request's charge is final."""
    _, _, charges, kinds, _, uncharged = aux
    out.runs += 1
    if kinds:
        # the run's average: every message it sent over its entries (one resource's runs only)
        average = (sum(charges) + uncharged) / len(kinds)
        f = out.figures.setdefault(names[kinds[0][0]], Figures())
        f.average_min = average if f.average_min is None else min(f.average_min, average)
        f.average_max = average if f.average_max is None else max(f.average_max, average)
    for charge, (rid, i) in zip(charges, kinds):
        f = out.figures.setdefault(names[rid], Figures())
        f.entries += 1
        who = model.names[model.pids[i]]
        if f.messages_min is None or charge < f.messages_min.value:
            f.messages_min = Extreme(charge, path, who)
        if f.messages_max is None or charge > f.messages_max.value:
            f.messages_max = Extreme(charge, path, who)
