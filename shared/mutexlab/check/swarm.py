"""``mutexlab check --swarm``: randomised depth-first searches on every core, for a time budget.

Where a state space is too big to finish, a swarm (as SPIN's swarm verification) runs
independent depth-first searches, each on its own worker process with its own model, its own
random order of successors and its own **bitstate** visited set (a bit array indexed by two
hashes of the world, SPIN's ``-DBITSTATE``): a world whose two bits are both set is taken as
seen, so a search may skip worlds it never visited — coverage is partial by design, never a
proof. A worker whose search ends before the budget starts again with a new seed and a cleared
array. The first violation any worker finds ends the swarm: the worker writes it as a scenario
(``counterexample.py``) and the parent replays it.

What is checked on every world reached: capacity, the scenario's invariant, rejected inputs and
deadlock — the safety properties. The declared reductions are sampled as in the plain check
(``sampling.py``): a sample that disagrees drops the worker's search, and its next ones go without
the refused reduction (``reductions_refused``), never a worker's failure. Liveness needs whole strongly connected components, which a
partial search does not have: it is not checked. Partial-order reduction is off (its cycle
proviso needs the full search's stack); the per-world reductions (canonical snapshots, clock
shifts) stay, since each maps a world to one with the same futures.

The result is honest about its coverage: never a pass, only "no violation found in N worlds
over T s" (N counts every world a worker stored, so worlds seen by two workers count twice).
N includes the workers still searching when the swarm ends: at the budget, or at another
worker's finding, every worker is told to stop and reports what it stored; one that does not
report within ``GRACE`` seconds (a step or a model build that takes long) is stopped, and the
counts it last published (every ``CHECK_EVERY`` steps, in shared memory) are added, so N is a
count of worlds really stored, at most ``CHECK_EVERY`` per such worker short.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import random
import time
from dataclasses import dataclass, field, replace
from typing import Any

from ..setups import ConfigError, Setup
from .counterexample import scenario_of

BITS = 1 << 26  # bits per worker's array: 8 MB
CHECK_EVERY = 1024  # steps between looks at the clock and publications of the counts
GRACE = 10.0  # seconds a worker has to report once the swarm ends
COUNTS = ("states", "transitions", "searches", "finished")


@dataclass
class SwarmResult:
    workers: int
    seconds: float = 0.0
    states: int = 0  # worlds stored, summed over workers and restarts
    transitions: int = 0
    searches: int = 0  # searches started (a worker restarts when its search ends early)
    finished: int = 0  # searches that ended before the budget (their bitstate space exhausted)
    finding: dict | None = None  # kind, message, processes, resource, steps (in words)
    scenario: dict | None = None
    bits: int = BITS
    errors: list[str] = field(default_factory=list)  # workers that failed: the swarm is then a tool error
    per_worker: list[int] = field(default_factory=list)  # worlds stored by each worker
    stopped: int = 0  # workers stopped without a report (their published counts are included)
    # reductions a worker's sample refused (name → why): its searches went on without them
    refused: dict[str, str] = field(default_factory=dict)
    # the first refusal a worker met: a step leaving a state of no name (a dead end, its search went
    # on past it), or a worker's model refused (it stopped, ConfigError). A finding wins over it,
    # whichever came first; without one the verdict is REFUSED (exit 2), never "not found"
    refusal: str | None = None
    config: str | None = (
        None  # the first worker's model refused (ConfigError): raised at the end without a finding
    )

    @property
    def verdict(self) -> str:
        if self.finding:
            return "not-judged" if self.finding.get("unexplained") else "violation"
        return "tool-error" if self.errors else "refused" if self.refusal else "not-found"

    def as_dict(self) -> dict:
        return {
            "search": "swarm",
            "workers": self.workers,
            "seconds": round(self.seconds, 3),
            "states": self.states,
            "transitions": self.transitions,
            "searches": self.searches,
            "searches_ended_early": self.finished,
            "states_per_worker": self.per_worker,
            "workers_stopped_unreported": self.stopped,
            "bitstate_bits_per_worker": self.bits,
            "verdict": self.verdict,
            "findings": [self.finding] if self.finding else [],
            "errors": self.errors,
            "reductions_refused": self.refused,
            "refused": self.refusal,
            "properties": [
                "capacity of every resource",
                "the scenario's invariant",
                "no rejected input",
                "deadlock",
            ],
            "not_checked": "liveness (needs the whole graph); partial-order reduction is off",
        }


class Stats(dict):
    """A worker's counts, published to its slots of the shared array on ``publish()``."""

    def __init__(self, shared: Any = None, slot: int = 0, stop: Any = None) -> None:
        super().__init__((k, 0) for k in COUNTS)
        self.shared, self.slot, self.stop = shared, slot, stop

    def publish(self) -> None:
        if self.shared is not None:
            base = self.slot * len(COUNTS)
            for k, name in enumerate(COUNTS):
                self.shared[base + k] = self[name]

    def stopped(self) -> bool:
        """The swarm has ended (another worker's finding)."""
        return self.stop is not None and self.stop.is_set()


def _worker(
    config: Any,
    setup: Setup | None,
    seed: int,
    deadline: float,
    out: Any,
    bits: int,
    shared: Any = None,
    slot: int = 0,
    stop: Any = None,
    parent: int | None = None,
) -> None:
    """One worker: randomised depth-first searches until ``deadline``, a finding or ``stop``.
    Whatever happens, it reports once (an error too: the parent never waits for a worker that
    died), its slot of the shared counts up to date first. It ends with ``parent`` (the pid of the
    process that forked it), however that ends: SIGKILLed, it would leave workers at full CPU
    until the budget ran out."""
    from ..sim import hung
    from ..transport.spawn import die_with_parent

    if parent is not None:
        die_with_parent(parent)

    stats = Stats(shared, slot, stop)
    try:
        built = setup if setup is not None else config.setup()  # for the files of its code
        with hung.watching(built):  # an endless handler: a finding
            got = _work(config, setup, seed, deadline, bits, stats)
    except ConfigError as exc:  # the algorithm cannot be checked (its state cannot be kept): exit 2
        got = ("config", stats, str(exc), None, None)
    except Exception as exc:  # reported to the parent, which says so: never a silent pass
        got = ("error", stats, f"{type(exc).__name__}: {exc}", None, None)
    stats.publish()
    out.put((got[0], {**got[1], "slot": slot}, *got[2:]))


def _work(config: Any, setup: Setup | None, seed: int, deadline: float, bits: int, stats: dict) -> tuple:
    from ..sim.scripted import ScenarioError
    from .engine import build_model
    from .properties import invariant_for
    from .sampling import Refused
    from .search import Search

    rng = random.Random(seed)
    refused: dict[str, str] = {}  # reductions a sample refused: the searches after go without them
    while time.time() < deadline and not (isinstance(stats, Stats) and stats.stopped()):
        model = build_model(replace(config, partial_order=False), setup, refused)
        invariant, _ = invariant_for(model)
        checker = Search(model, invariant)
        stats["searches"] += 1
        try:
            found, done = _search(model, checker, rng, deadline, bits, stats)
        except Refused as no:  # as the plain check: this search is dropped, the next goes without it
            refused.update(no.refusals)
            stats["refused"] = dict(refused)
            continue
        stats["finished"] += done
        if found is not None:
            try:
                scenario = scenario_of(
                    model, found, config.algorithm, config.processes, config.options, config.seed
                )
            except ScenarioError:
                scenario = None  # the finding stands; it has no scenario form
            return ("found", stats, found.as_dict(model), scenario, _finding_fields(found))
    return ("done", stats, None, None, None)


def _finding_fields(found) -> dict:
    return {
        "kind": found.kind,
        "message": found.message,
        "processes": found.processes,
        "resource": found.resource,
    }


def _search(model, checker, rng: random.Random, deadline: float, bits: int, stats: dict):
    """One randomised depth-first search with a bitstate visited set: (finding or None, ended)."""
    salt = rng.getrandbits(62)
    seen = bytearray(bits >> 3)
    mask = bits - 1

    def visit(world) -> bool:
        """Mark ``world``; True when both its bits were already set (taken as seen)."""
        h = hash(world)
        a, b = h & mask, (hash((h, salt)) >> 7) & mask
        old = (seen[a >> 3] >> (a & 7)) & (seen[b >> 3] >> (b & 7)) & 1
        seen[a >> 3] |= 1 << (a & 7)
        seen[b >> 3] |= 1 << (b & 7)
        return bool(old)

    root = checker.initial_world()
    if root is None:
        return checker.result.findings[0], True
    visit(root)
    stats["states"] += 1

    def labels_of(world) -> list:
        labels = model.steps(world)
        rng.shuffle(labels)
        return labels

    frames: list = [[root, labels_of(root), 0, None]]
    found = checker.world_finding(root) or (None if frames[0][1] else checker.dead_end(root))
    if found is not None:
        return found, True
    count = 0
    publish = stats.publish if isinstance(stats, Stats) else None
    stopped = stats.stopped if isinstance(stats, Stats) else lambda: False
    while frames:
        frame = frames[-1]
        world, labels, pos = frame[0], frame[1], frame[2]
        if pos >= len(labels):
            frames.pop()
            continue
        frame[2] = pos + 1
        label = labels[pos]
        nxt, t, overfull = model.step(world, label)
        stats["transitions"] += 1
        count += 1
        if count % CHECK_EVERY == 0:  # by steps: a search meeting only seen worlds looks too
            if publish is not None:
                publish()
            if time.time() >= deadline or stopped():
                return None, False
        if nxt is None and t.refused:  # a state of no name: a dead end, the search goes on
            stats.setdefault("refusal", t.error)
            continue
        if nxt is None or overfull is not None:
            found = checker.edge_finding(world, label, nxt, t, overfull)
            found.path = [f[3] for f in frames[1:]] + [label]
            return found, True
        if visit(nxt):
            continue
        stats["states"] += 1
        nlabels = labels_of(nxt)
        found = checker.world_finding(nxt) or (None if nlabels else checker.dead_end(nxt))
        if found is not None:
            found.path = [f[3] for f in frames[1:]] + [label]
            return found, True
        frames.append([nxt, nlabels, 0, label])
    return None, True


def _take(report: tuple, reported: dict[int, dict], result: SwarmResult) -> bool:
    """Record one worker's report; True when it is the first finding. A refusal (a worker's model
    refused, or a step it took as a dead end) is kept, and the swarm goes on: a finding of
    another worker, before or after it, wins."""
    kind, stats, finding, scenario, fields = report
    reported[stats["slot"]] = stats
    result.refused.update(stats.get("refused", {}))
    result.refusal = result.refusal or stats.get("refusal")
    if kind == "config":
        result.refusal = result.refusal or finding
        result.config = result.config or finding
    elif kind == "error":
        result.errors.append(finding)
    elif kind == "found" and result.finding is None:
        result.finding, result.scenario = finding | {"fields": fields}, scenario
        return True
    return False


def run_swarm(
    config: Any, seconds: float, workers: int | None = None, setup: Setup | None = None
) -> SwarmResult:
    """A swarm of ``workers`` (default: every core) for ``seconds``; stops at the first finding.
    Every worker's worlds are counted, those of the workers still searching at the end too.
    Raises ConfigError when a worker's model was refused and no worker found anything."""
    workers = workers or os.cpu_count() or 1
    result = SwarmResult(workers)
    t0 = time.time()
    deadline = t0 + seconds
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    shared = ctx.Array("q", workers * len(COUNTS), lock=False)  # each worker writes its own slot
    stop = ctx.Event()
    procs = [
        ctx.Process(
            target=_worker,
            args=(config, setup, 1000003 * (w + 1), deadline, out, BITS, shared, w, stop, os.getpid()),
            daemon=True,
        )
        for w in range(workers)
    ]
    for p in procs:
        p.start()
    reported: dict[int, dict] = {}
    ended = None  # when the swarm ended (a finding, or the budget): the grace runs from there
    try:
        while len(reported) < workers:
            now = time.time()
            if ended is None and now >= deadline:
                ended = deadline
            if ended is not None and now > ended + GRACE:
                break  # the rest are stopped below; their published counts stand
            try:
                report = out.get(timeout=0.2)
            except queue.Empty:
                if not any(p.is_alive() for p in procs) and out.empty():
                    result.errors.append("a worker stopped without reporting")
                    break
                continue
            if _take(report, reported, result):
                stop.set()  # the others stop and report what they stored
                ended = time.time()
    finally:
        stop.set()
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join()
    while True:  # what was queued after the grace ran out: a finding is never dropped
        try:
            _take(out.get_nowait(), reported, result)
        except queue.Empty:
            break
    for w in range(workers):
        counts = reported.get(w) or dict(zip(COUNTS, shared[w * len(COUNTS) : (w + 1) * len(COUNTS)]))
        result.stopped += w not in reported
        result.per_worker.append(counts["states"])
        for k in COUNTS:
            setattr(result, k, getattr(result, k) + counts[k])
    result.seconds = time.time() - t0
    if result.config is not None and result.finding is None:  # no finding won over it: exit 2, as before
        raise ConfigError(result.config)
    return result
