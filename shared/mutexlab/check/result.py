"""What a search of ``mutexlab check`` found (``CheckFinding``, ``Result``) and what it measures the
process by (``rss_mb``, ``peak_mb``); ``search.py`` fills them in."""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass, field

from .model import Model


@dataclass
class CheckFinding:
    kind: str  # "capacity", "invariant", "deadlock", "liveness", "error"
    message: str
    path: list[tuple]  # step labels from the initial world
    cycle: list[tuple] = field(default_factory=list)  # liveness: the steps that repeat forever
    processes: list[str] = field(default_factory=list)  # the processes concerned, by name
    resource: str | None = None
    texts: list[str] | None = None  # the steps in words, path then cycle (counterexample.py)
    # a deadlock (or a liveness cycle) some process's waiting_for() raised at: the error
    # (WaitsRaised.short) — the stall cannot be explained (nor the cycle judged), so the check is
    # not judged (exit 2), its path shown all the same
    unexplained: str | None = None

    def as_dict(self, model: Model) -> dict:
        texts = self.texts or [model.describe(s) for s in self.path + self.cycle]
        out = {
            "kind": self.kind,
            "message": self.message,
            "processes": self.processes,
            "steps": texts[: len(self.path)],
        }
        if self.resource is not None:
            out["resource"] = self.resource
        if self.cycle:
            out["cycle"] = texts[len(self.path) :]
        if self.unexplained is not None:
            out["unexplained"] = self.unexplained
        return out


@dataclass
class Result:
    states: int = 0
    transitions: int = 0
    finals: int = 0  # worlds where nothing can move and everyone finished
    depth: int = 0
    seconds: float = 0.0
    peak_mb: float = 0.0
    complete: bool = False
    stopped: str | None = None  # why an incomplete search stopped
    findings: list[CheckFinding] = field(default_factory=list)
    cycles: bool = False  # the graph has a cycle (liveness was analysed)
    search: str = "dfs"
    exact: bool = False
    phase: str = ""  # what the check is doing, for progress reports (budget.py)
    # the first refused step (a handler left a state of no name, setups.NoName), in its words: the
    # search took it as a dead end and went on, so the worlds past it are unchecked and no
    # component closed after it was judged for liveness; with no finding, the verdict is REFUSED
    refusal: str | None = None
    refusals: int = 0  # refused (state, input) pairs met: each refused step once
    liveness_unjudged: bool = False  # a component closed after a refusal: not judged

    @property
    def verdict(self) -> str:
        if self.findings:
            return "not-judged" if self.findings[0].unexplained is not None else "violation"
        if self.refusal is not None:
            return "refused"
        return "pass" if self.complete else "incomplete"

    @property
    def collision_bound(self) -> float:
        return 0.0 if self.exact else self.states**2 / 2**65


def rss_mb() -> float:
    """The resident memory of this process now, in MB."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return peak_mb()


def peak_mb() -> float:
    """The peak resident memory of this program image, in MB: ``VmHWM`` (getrusage's maxrss
    survives exec on Linux, so a process started by a large one would report its parent's)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
