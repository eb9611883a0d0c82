"""``mutexlab verify``: decide a whole trace.

Every trace gets the capacity audit (capacity.py) and the integrity checks (integrity.py: each
recv has its send, each resource is declared). A trace whose ``run`` header names an algorithm
with its own invariants also gets that family's checks: the ``Invariants`` (findings.py) its
spec's ``audit`` hook gives; any other trace gets the generic ones (generic.py: requests served,
nobody holding at the end), and a header naming an algorithm mutexlab does not know is
undecided — its invariants were not checked.

The verdict, and the exit code every command that prints one uses:

* ``SAFE`` (0) — no finding: safe, and everyone finished;
* ``VIOLATION`` (1) — a safety property is broken in what the trace shows;
* (2 is for a trace or arguments that cannot be read — no verdict);
* ``INCOMPLETE`` (3) — no safety violation in what the trace shows, but it ends unfinished
  (someone holding or waiting, a request unserved, a process not in its final state) or the
  audit could not decide everything. A trace alone cannot tell "cut short" from "stalled".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..findings import PROGRESS, SAFETY, UNDECIDED, Invariants, Violation
from ..problem import Problem
from ..problems import find as find_problem
from ..protocols import registry
from ..trace import TraceError, parse_events
from . import generic
from .capacity import check_capacities
from .clocks import consistent
from .cut import excuse, proven_cut
from .integrity import KINDS as INTEGRITY_KINDS
from .integrity import Integrity
from .rules import joined, problem_checks

EXIT_SAFE, EXIT_VIOLATION, EXIT_BAD_INPUT, EXIT_INCOMPLETE = 0, 1, 2, 3
EXIT_CODES = {"SAFE": EXIT_SAFE, "VIOLATION": EXIT_VIOLATION, "INCOMPLETE": EXIT_INCOMPLETE}
UNFINISHED_NOTE = "the trace ends unfinished — cut short or stalled, a trace alone cannot tell"
UNDECIDED_NOTE = "the audit could not decide these"


def family_checks(algorithm: str | None) -> Invariants | None:
    """The invariants of the problem ``algorithm`` solves (its audit and its holding rules:
    rules.py), then the solution's own (its spec's ``audit``), or None: a registered algorithm,
    or one a module or file loaded in this process declares."""
    found = registry.lookup(algorithm)
    if found is None:
        return None
    problem = registry.problem_of(found)
    checks = problem_checks(problem)
    if found.audit is None or found.audit is problem.audit:
        return checks
    own = found.audit()  # the solution's own checks of its messages, after the problem's
    return own if checks is None else joined(checks, own)


def checks_of(algorithm: str | None, problem: object = None) -> Invariants:
    """The checks a trace of ``algorithm`` gets: its family's, or the generic ones (generic.py).
    A header whose algorithm is none mutexlab knows but which names a built-in ``problem`` (a
    program's run: ``mutexlab test``, ``run --node``) gets that problem's checks and rules: an
    algorithm's are its problem's."""
    found = family_checks(algorithm)
    if found is None:
        declared = named_problem(problem)
        found = problem_checks(declared) if declared is not None else None
    return found or generic.INVARIANTS


def named_problem(problem: object) -> Problem | None:
    """The built-in problem a header's ``problem`` field names, else None."""
    return find_problem(problem) if isinstance(problem, str) else None


def subject_of(run: dict) -> str | None:
    """What a header naming no algorithm but a built-in problem is the run of: that problem."""
    problem = run.get("problem")
    return problem if run.get("algorithm") is None and named_problem(problem) is not None else None


def not_checked(algorithm: object, problem: object = None) -> Violation | None:
    """The undecided finding of a header naming an algorithm mutexlab does not know (nor the
    built-in problem it solves), else None."""
    if algorithm is None or family_checks(algorithm if isinstance(algorithm, str) else None) is not None:
        return None
    if named_problem(problem) is not None:
        return None
    return Violation(
        "algorithm-unknown",
        f"the run header names the algorithm {algorithm!r}, which this mutexlab does not know: "
        "its invariants were not checked, only the checks listed above (--algorithm names the module "
        "or .py file that declares it)",
    )


@dataclass
class Verdict:
    algorithm: str | None
    violations: list[Violation]
    checks: list[str]
    counts: dict[str, int] = field(default_factory=dict)  # events by kind
    subject: str | None = None  # what was decided, when no algorithm names it ("ShiViz log")
    unchecked: list[str] = field(default_factory=list)  # what no check covered (a foreign log's workload)

    @property
    def safety(self) -> list[Violation]:
        """The safety violations: what the trace shows already breaks a property."""
        return [v for v in self.violations if v.kind == SAFETY]

    @property
    def safe(self) -> bool:
        """No safety violation in what the trace shows (it may still be unfinished)."""
        return not self.safety

    @property
    def ok(self) -> bool:
        """No finding at all: safe and finished (verdict SAFE)."""
        return not self.violations

    @property
    def status(self) -> str:
        return "VIOLATION" if not self.safe else ("INCOMPLETE" if self.violations else "SAFE")

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def head(self) -> str:
        """``SAFE``, ``VIOLATION (n)`` (n safety violations) or ``INCOMPLETE (n)`` (n findings)."""
        if self.ok:
            return "SAFE"
        return f"VIOLATION ({len(self.safety)})" if not self.safe else f"INCOMPLETE ({len(self.violations)})"

    def finding_lines(self, unfinished: str = UNFINISHED_NOTE) -> list[str]:
        """The findings, safety violations first, then the unfinished and the undecided, each group
        under a line saying what it means (``unfinished``: what the unfinished mean, for a reader
        who knows more than the trace — a run that came to rest)."""
        lines = ["  " + v.describe() for v in self.safety]
        for kind, name, note in (
            (PROGRESS, "unfinished", unfinished),
            (UNDECIDED, "undecided", UNDECIDED_NOTE),
        ):
            group = [v for v in self.violations if v.kind == kind]
            if group:
                lines.append(f"{name} ({len(group)}): {note}")
                lines += ["  " + v.describe() for v in group]
        return lines

    def render(self) -> str:
        head = f"{self.algorithm or self.subject or 'unknown algorithm'}: {self.head()}"
        if self.status == "INCOMPLETE":
            head += " — no safety violation in what the trace shows"
        lines = [
            head,
            "checked: " + ", ".join(self.checks),
            *(["not checked: " + "; ".join(self.unchecked)] if self.unchecked else []),
            "events: " + (", ".join(f"{k} {v}" for k, v in sorted(self.counts.items())) or "none"),
        ]
        return "\n".join(lines + self.finding_lines())

    def as_dict(self) -> dict:
        """The verdict as JSON: ``violations`` lists every finding with its ``kind``."""
        return {
            "algorithm": self.algorithm,
            "verdict": self.status,
            "exit_code": self.exit_code,
            "safe": self.ok,  # the verdict is SAFE: never true for an INCOMPLETE one
            "checks": self.checks,
            "not_checked": self.unchecked,
            "counts": self.counts,
            "violations": [
                {
                    "rule": v.rule,
                    "kind": v.kind,
                    "message": v.message,
                    "lines": [e.get("_line") for e in v.events],
                }
                for v in self.violations
            ],
        }


def numbered(events: list[dict]) -> list[dict]:
    """The events with their 1-based position in the trace as ``_line`` (kept where an event has
    one already, as ``read_trace`` gives): what a finding cites. ``verify_events`` numbers this way."""
    return [e if "_line" in e else dict(e, _line=n) for n, e in enumerate(events, 1)]


def verify_events(events: list[dict]) -> Verdict:
    """The verdict of a whole trace (its ``run`` header included); events without ``_line`` are
    numbered by their position (``numbered``), so findings always cite lines."""
    events = numbered(events)
    run = next((e for e in events if e["event"] == "run"), None)
    if run is None:
        raise TraceError("the trace has no 'run' header: its algorithm and capacities are unknown")
    body = [e for e in events if e["event"] != "run"]
    integrity = Integrity(run).feed_all(e for e in body if e["event"] in INTEGRITY_KINDS)
    return decide(run, body, dict(Counter(e["event"] for e in body)), integrity=integrity.findings())


def decide(
    run: dict,
    body: list[dict],
    counts: dict[str, int],
    family_found: list[Violation] | None = None,
    streamed: tuple[list[Violation], dict[str, list[Violation]]] | None = None,
    integrity: list[Violation] | None = None,
) -> Verdict:
    """The verdict from the run header, the events the checks read (all of them, or what
    ``stream.StreamAudit`` kept) and the count of every event by kind; ``family_found``: the
    family's findings when its checks were fed event by event (its ``Invariants.stream``);
    ``streamed``: the capacity findings of the resources checked as the events came;
    ``integrity``: the findings of ``integrity.Integrity`` fed every event."""
    capacities = run.get("capacities")
    if not isinstance(capacities, dict):
        raise TraceError("the trace's run header lacks 'capacities'")
    algorithm = run.get("algorithm")
    violations = check_capacities(body, capacities, streamed=streamed) + list(integrity or [])
    checks = ["capacity by happened-before"]
    problem = run.get("problem") if algorithm is None or isinstance(algorithm, str) else None
    checker = checks_of(algorithm, problem)
    violations += checker.check(body, run) if family_found is None else family_found
    checks += checker.checks
    unknown = not_checked(algorithm, problem)
    if unknown is not None:
        violations.append(unknown)
    verdict = Verdict(algorithm, violations, checks, counts, subject_of(run))
    if checker.workload is not None and checker.workload not in (run.get("params") or {}):
        verdict.unchecked.append(
            f"the workload (the run header states no params.{checker.workload}, so a trace cut short "
            "while everyone is idle reads as finished)"
        )
    return verdict


def _fed(path: str | Path, audit, see: Callable[[dict], None] | None = None, read: _Read | None = None):
    """``audit`` fed the trace file at ``path``, line by line; ``see`` is shown each event after it;
    ``read`` learns each process's latest clock and a last line cut mid-write."""
    read = read if read is not None else _Read()

    def events() -> Iterator[dict]:
        latest = read.latest
        with open(path, "rb") as handle:
            for event in consistent(parse_events(handle, str(path), read.cut), str(path)):
                vc = event.get("vc")
                if isinstance(vc, dict):
                    latest[event["pid"]] = vc
                yield event

    return feed_events(audit, events(), path, see)


class _Read:
    """What a pass over a trace file learnt besides its events: each process's latest clock (the
    clocks only grow: what it knows of every process) and the sentence naming a last line cut
    mid-write, if one was."""

    def __init__(self) -> None:
        self.latest: dict[str, dict] = {}
        self.cut: list[str] = []

    def judged(self, verdict: Verdict) -> Verdict:
        """``verdict`` with what the file alone proves missing made undecided (``cut.excuse``:
        the processes whose events others' clocks know beyond their own last one, all of them
        suspects, as no final status tells them apart here), and the cut line named."""
        names = {p for vc in self.latest.values() for p in vc}
        last = [{"pid": p, "vc": vc} for p, vc in self.latest.items()]
        verdict.violations = excuse(verdict.violations, proven_cut(last, names))
        verdict.violations += [line_cut_off(line) for line in self.cut]
        return verdict


def line_cut_off(sentence: str) -> Violation:
    """The undecided finding of a log's last line cut mid-write (``trace.cut_off``), ``sentence``
    naming it."""
    return Violation("line-cut-off", f"{sentence}: the log ends early, what that line held is not judged")


def feed_events(audit, events: Iterable[dict], path: str | Path, see: Callable[[dict], None] | None = None):
    """``audit`` fed ``events`` (read from ``path``), ``see`` shown each after it; a failure to
    read is a TraceError naming ``path``."""
    try:
        for event in events:
            try:
                audit.feed(event)
            except TraceError as exc:  # an event the audit cannot use: "line N: ..." gets the file's name
                raise TraceError(f"{path}: {exc}") from None
            if see is not None:
                see(event)
    except OSError as exc:
        raise TraceError(f"cannot read {path}: {exc.strerror or exc}") from None
    return audit


def verify_file(path: str | Path, seer: Callable[[], Callable[[dict], None]] | None = None) -> Verdict:
    """The verdict of the trace file at ``path``, read as a stream (only what the checks need is
    kept: ``stream.StreamAudit``, its capacity-1 intervals forgotten once settled when the file
    allows, ``exclusive.py``); TraceError (naming the file) when it cannot be read. ``seer``, when
    given, makes what is shown every event of a pass over the file: a fresh one per pass (the file
    is read again, keeping every interval, when it cannot be decided bounded)."""
    from .exclusive import InexactStream
    from .stream import StreamAudit

    read = _Read()
    try:
        audit = _fed(path, StreamAudit(bounded=True), seer and seer(), read)
    except InexactStream:  # not in a causal order, or a process heard of late: keep every interval
        read = _Read()
        audit = _fed(path, StreamAudit(), seer and seer(), read)
    if audit.run is None:
        raise TraceError(f"{path}: the trace is empty (no events)")
    try:
        return read.judged(audit.verdict())
    except TraceError as exc:  # an event the audit cannot use: "line N: ..." gets the file's name
        raise TraceError(f"{path}: {exc}") from None
