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
deadlock — the safety properties. Liveness needs whole strongly connected components, which a
partial search does not have: it is not checked. Partial-order reduction is off (its cycle
proviso needs the full search's stack); the per-world reductions (canonical snapshots, clock
shifts) stay, since each maps a world to one with the same futures.

The result is honest about its coverage: never a pass, only "no violation found in N worlds
over T s" (N counts every world a worker stored, so worlds seen by two workers count twice).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import random
import time
from dataclasses import dataclass, field, replace
from typing import Any

from ..setups import Setup
from .counterexample import scenario_of

BITS = 1 << 26  # bits per worker's array: 8 MB
CHECK_EVERY = 1024


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

    @property
    def verdict(self) -> str:
        return "violation" if self.finding else "tool-error" if self.errors else "not-found"

    def as_dict(self) -> dict:
        return {
            "search": "swarm",
            "workers": self.workers,
            "seconds": round(self.seconds, 3),
            "states": self.states,
            "transitions": self.transitions,
            "searches": self.searches,
            "searches_ended_early": self.finished,
            "bitstate_bits_per_worker": self.bits,
            "verdict": self.verdict,
            "findings": [self.finding] if self.finding else [],
            "errors": self.errors,
            "properties": [
                "capacity of every resource",
                "the scenario's invariant",
                "no rejected input",
                "deadlock",
            ],
            "not_checked": "liveness (needs the whole graph); partial-order reduction is off",
        }


def _worker(config: Any, setup: Setup | None, seed: int, deadline: float, out: Any, bits: int) -> None:
    """One worker: randomised depth-first searches until ``deadline`` or a finding. Whatever
    happens, it reports once (an error too: the parent never waits for a worker that died)."""
    stats = {"states": 0, "transitions": 0, "searches": 0, "finished": 0}
    try:
        out.put(_work(config, setup, seed, deadline, bits, stats))
    except Exception as exc:  # reported to the parent, which says so: never a silent pass
        out.put(("error", stats, f"{type(exc).__name__}: {exc}", None, None))


def _work(config: Any, setup: Setup | None, seed: int, deadline: float, bits: int, stats: dict) -> tuple:
    from ..sim.scripted import ScenarioError
    from .engine import build_model
    from .properties import invariant_for
    from .search import Search

    rng = random.Random(seed)
    while time.time() < deadline:
        model = build_model(replace(config, partial_order=False), setup)
        invariant, _ = invariant_for(model.setup.algorithm)
        checker = Search(model, invariant)
        stats["searches"] += 1
        found, done = _search(model, checker, rng, deadline, bits, stats)
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
        if nxt is None or overfull is not None:
            found = checker.edge_finding(world, label, nxt, t, overfull)
            found.path = [f[3] for f in frames[1:]] + [label]
            return found, True
        if visit(nxt):
            continue
        stats["states"] += 1
        count += 1
        if count % CHECK_EVERY == 0 and time.time() >= deadline:
            return None, False
        nlabels = labels_of(nxt)
        found = checker.world_finding(nxt) or (None if nlabels else checker.dead_end(nxt))
        if found is not None:
            found.path = [f[3] for f in frames[1:]] + [label]
            return found, True
        frames.append([nxt, nlabels, 0, label])
    return None, True


def run_swarm(
    config: Any, seconds: float, workers: int | None = None, setup: Setup | None = None
) -> SwarmResult:
    """A swarm of ``workers`` (default: every core) for ``seconds``; stops at the first finding."""
    workers = workers or os.cpu_count() or 1
    result = SwarmResult(workers)
    t0 = time.time()
    deadline = t0 + seconds
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [
        ctx.Process(target=_worker, args=(config, setup, 1000003 * (w + 1), deadline, out, BITS), daemon=True)
        for w in range(workers)
    ]
    for p in procs:
        p.start()
    pending = workers
    try:
        while pending:
            try:
                kind, stats, finding, scenario, fields = out.get(timeout=1)
            except queue.Empty:
                if time.time() > deadline + 60 or not any(p.is_alive() for p in procs):
                    result.errors.append("a worker stopped without reporting")
                    break
                continue
            pending -= 1
            for k in ("states", "transitions", "searches", "finished"):
                setattr(result, k, getattr(result, k) + stats[k])
            if kind == "error":
                result.errors.append(finding)
            elif kind == "found" and result.finding is None:
                result.finding, result.scenario = finding | {"fields": fields}, scenario
                break
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join()
    result.seconds = time.time() - t0
    return result
