"""Runs under a strategy until a finding or the budget's end; one run at a time (``play``).

``play`` is the one loop every use shares (the search, the shrinker, a scenario's replay): it
starts (or re-initialises) the nodes, asks the chooser for each step among the enabled ones,
compares every answer with ``expected`` (an earlier run of the same schedule: a difference is
the program's nondeterminism, named by step and node), and judges the run when nothing can move,
the chooser stops, a node misbehaves or ``max_steps`` is reached.

A run cut by ``max_steps`` is a ``no-rest`` finding only when it had stopped getting anywhere; a
driven run still serving requests in its second half (``serving``) is incomplete: the workload
needs more steps, which shows nothing about the program.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..interrupts import Terminated
from .judge import (
    DEADLOCK,
    HANG,
    NO_PROGRESS_SEEN,
    NO_REST,
    NONDETERMINISTIC,
    Finding,
    ended_unasked,
    from_fault,
    judge,
    undecided,
)
from .lines import START, NodeFault
from .problem import Problem
from .process import Pool
from .strategies import Chooser, Lingers, Ran
from .world import LATE_GRACE, LINGER_POLLS, STRETCH_SECONDS, Action, Faults, Run

DIVERGED_GRACE = 0.3  # seconds a node whose answer differs has to show a line written past its done
MAX_STEPS = 2_000  # default steps of one run before it counts as never coming to rest
# A kept node that ended after a run (seen at the next run's init) is that run's finding: its
# schedule is played again, its end waiting this long for a node's output to end.
END_GRACE = 1.5  # a Python node under load takes most of a second to end after its last line


@dataclass
class Outcome:
    finding: Finding | None
    steps: list[Action]
    digests: list[str]
    events: list[dict[str, Any]]
    trail: list[tuple[int, int]]
    resting: bool = False
    verdict: Any = None
    incomplete: str | None = None  # why the run proves nothing (cut by max_steps while serving)
    undecided: str | None = None  # what its audit could not decide (judge.undecided)
    clock_jumped: bool = False  # a node's timeout loop jumped the clock: no delivery before its deadline
    finalize_pending: str = ""  # an MPI rank called MPI_Finalize with a thread still in a call
    read_held: bool = False  # a node held a read until its bytes changed: a re-read going on not driven
    lingers_cut: bool = False  # a rank's loop acted at every linger up to the cap (Run.lingers_cut)
    after_ended: Finding | None = None  # a kept node had ended after the run before: the finding
    # seen at this run's init, which was then played again on fresh processes
    waiting: list[str] = field(default_factory=list)  # the nodes still waiting when it was judged
    left: list[Action] = field(default_factory=list)  # the steps still possible when it was judged
    spinning: str = ""  # undecided as its ranks' threads named here kept running (rank 0's thread 1)


@dataclass
class Settings:
    problem: Problem
    program: list[str]
    seed: int = 0
    faults: Faults = field(default_factory=Faults)
    max_steps: int = MAX_STEPS
    unread_output: bool = False  # MPI ranks: their lines read through a filter (some unread), their
    # messages their memory as it is (director/answers.py)
    end_grace: float = 0.0  # seconds a run's end waits for a node ending after its last answer
    late_grace: float = 0.0  # seconds a run's end waits for a line written after the last done
    end_after: str = ""  # the end awaited comes after an answer to this input (judge.ended_answering):
    # a node whose last answer was to another is not waited for ("": every kept node is)


def play(
    settings: Settings,
    pool: Pool,
    chooser: Chooser,
    expected: list[str] | None = None,
    lingers: Lingers | None = None,
) -> Outcome:
    """One run; the pool's processes are discarded when a node failed (their state is unknown).
    ``lingers``: linger steps known quiet are not offered, a quiet one is added, and (``exact``: a
    systematic search) the run stops at it — the world after it is the world before."""
    steps: list[Action] = []
    trail: list[tuple[int, int]] = []
    run: Run | None = None
    spun: str | None = None  # a finding not claimed: it may need a thread stopped running
    expected = expected or []
    try:
        run = Run(
            settings.problem, pool, settings.faults, settings.seed, settings.program, settings.unread_output
        )
        diverged = _diverged(run, expected, 0)
        stretched: set[int] = set()  # ranks whose stopped threads ran a stretch since the last step
        lingered: Counter[int] = Counter()  # ranks whose own loops of polls lingered since then
        while diverged is None:
            enabled = run.enabled()
            # at rest (no step, so also at --max-steps: a run cut there is at rest only if these
            # leave it so, never a deadlock a loop's next timeout would have moved on from)
            if not enabled and run.stretch(stretched):
                continue  # a thread stopped running (docs/mpi.md#busy) ran on alone
            if not enabled and run.linger(lingered):
                continue  # nothing arrives: a rank's own loop of polls went round (#linger)
            if not enabled or len(steps) >= settings.max_steps:
                break
            action = chooser(len(steps), lingers.offered(enabled) if lingers else enabled)
            if action is None:
                break
            if action not in enabled:  # a replayed prefix the program no longer allows
                diverged = Finding(
                    NONDETERMINISTIC,
                    f"step {len(steps) + 1} ({action[0]} to node {action[1]}) of an earlier run of this "
                    "schedule is not possible now: the program behaved differently before it",
                    action[1],
                    len(steps) + 1,
                )
                break
            steps.append(action)  # before it is taken: a node's fault in it is part of the schedule
            trail.append((enabled.index(action), len(enabled)))
            run.do(action)
            stretched.clear()
            lingered.clear()
            diverged = _diverged(run, expected, len(steps))
            if run.quiet_linger and lingers is not None and diverged is None:
                lingers.quiet.add(lingers.key(action))
                if lingers.exact:
                    lingers.stopped += 1
                    break  # only a count went up: the rest of the run is its siblings' (#linger)
        if diverged is not None:
            if diverged.node in run.procs:  # a line it wrote past its done explains the difference
                run.procs[diverged.node].late(DIVERGED_GRACE)  # that fault, told why (NodeFault)
            return Outcome(diverged, steps, run.digests, run.events, trail)
        # A line written after a done is the program's fault, not a deadlock nor a pass: looked
        # for before the run is judged, and a moment longer before a deadlock is called one.
        run.settle(settings.late_grace, settings.end_grace, settings.end_after)
        left = run.enabled()
        resting = not left
        waiting = sorted(run.names[n] for n in run.waiting)
        faults = settings.faults
        verdict, finding = judge(
            run.events,
            resting,
            waiting,
            len(steps),
            settings.unread_output,
            run.never_ended(),
            faults.reorder or faults.duplicate > 0,
            run.sync_sends,
        )
        if resting and finding is not None and finding.rule == DEADLOCK and run.lingering:
            finding = replace(finding, message=finding.message + _still_polling(run))
        if (
            resting
            and run.spinning
            and (finding is None or finding.rule in (DEADLOCK, NO_PROGRESS_SEEN, HANG))
        ):
            spun = _still_spinning(run, finding)  # a thread still running: neither a pass nor a deadlock
            finding = None
        if finding is not None and finding.rule in (DEADLOCK, NO_PROGRESS_SEEN, HANG):
            run.settle(LATE_GRACE)
    except NodeFault as fault:
        pool.discard()
        if fault.rule == START:  # the program cannot be started: bad input, not a finding
            raise
        events = run.events if run is not None else []
        # The step the fault came in is the schedule's last (0: in answer to the first inits).
        if fault.fields.get("between"):  # the run before's doing: this run is played on fresh processes
            again = play(settings, pool, chooser, expected, lingers)
            again.after_ended = from_fault(fault, 0)
            return again
        return Outcome(
            from_fault(fault, len(steps), events), steps, run.digests if run else [], events, trail
        )
    incomplete = None
    if finding is None and not resting and len(steps) >= settings.max_steps and serving(run, len(steps)):
        incomplete = (
            f"the run reached --max-steps ({settings.max_steps:,}) with requests still being served: "
            "the workload needs more steps"
        )
    elif finding is None and not resting and len(steps) >= settings.max_steps:
        held = run.in_flight
        finding = Finding(
            NO_REST,
            f"the run did not come to rest within {settings.max_steps:,} steps "
            f"({held} message{'' if held == 1 else 's'} still held)" + _kept_busy(run, steps),
            None,
            len(steps),
        )
    unsure = (spun or undecided(verdict)) if finding is None else None
    return Outcome(
        finding,
        steps,
        run.digests,
        run.events,
        trail,
        resting,
        verdict,
        incomplete,
        unsure,
        run.clock_jumped,
        run.finalize_pending,
        read_held=run.read_held,
        lingers_cut=run.lingers_cut,
        waiting=waiting,
        left=list(left),
        spinning="; ".join(run.spinning.values()) if spun and unsure == spun else "",
    )


def _still_spinning(run: Run, finding: Finding | None) -> str:
    """Why a run at rest with a thread stopped running is undecided: it may have run on."""
    who = "; ".join(run.spinning.values())
    claimed = f"the {finding.rule} finding" if finding is not None else "a pass"
    return (
        f"{who} kept running without a call mutexlab can direct (stopped with nothing new in its rank, "
        f"even after {STRETCH_SECONDS} s of processor time alone): a busy wait never ended, or a computation "
        f"longer still; {claimed} this run would give needs it never to run on, so none is claimed "
        "(docs/mpi.md#busy)"
    )


def serving(run: Run, steps: int) -> bool:
    """Whether a driven run still had requests to serve and served one in its second half: it
    was making progress, not keeping itself busy (nodes chattering after the workload's end, or
    a livelock since before the halfway step, are no-rest)."""
    if not run.problem.driven:
        return False
    outstanding = run.waiting or any(left > 0 for left in run.requests_left.values())
    last = max((e["t"] for e in run.events if e["event"] == "enter"), default=0.0)
    return bool(outstanding) and last > steps / 2


def _kept_busy(run: Run, steps: list[Action]) -> str:
    """What kept a run that never rested busy in its second half: the messages its nodes sent
    (by type, the most sent first) and whether every request had been served by then, and the
    nodes woken only to pause again."""
    half = len(steps) // 2
    sent = Counter(str(e.get("type", "?")) for e in run.events if e["event"] == "send" and e["t"] > half)
    woken = Counter(run.names[node] for kind, node, _ in steps[half:] if kind == "wake")
    said = []
    if sent:
        kinds = ", ".join(f"{kind} {number:,}" for kind, number in sent.most_common(4))
        more = ", …" if len(sent) > 4 else ""
        served = run.problem.driven and not run.waiting and not any(run.requests_left.values())
        said.append(
            f"the nodes keep each other busy — in its last {len(steps) - half:,} steps they sent "
            f"{sum(sent.values()):,} messages ({kinds}{more})"
            + (
                ", every request served: messages passed on while nothing is asked (a token sent "
                "round though nobody wants it, say) keep a run from ever coming to rest"
                if served
                else ""
            )
        )
    if woken:
        names = [name for name, _ in woken.most_common(3)] + (["…"] if len(woken) > 3 else [])
        each = f" ({', '.join(f'{name} {number:,}' for name, number in woken.most_common(3))})"
        said.append(
            f"{', '.join(names)} {'was' if len(woken) == 1 else 'were'} woken "
            f"{sum(woken.values()):,} times in its last {len(steps) - half:,} steps"
            f"{each if len(woken) > 1 else ''}, pausing again each time: a node that answers every "
            "wake with another pause never lets a run end"
        )
    return ": " + "; ".join(said) if said else ": the nodes keep each other busy"


def _still_polling(run: Run) -> str:
    """What a deadlock's words add where a rank still polls in a loop of its own at rest: that loop
    went round LINGER_POLLS times with nothing arriving, and waits for ever only if it has no count."""
    ranks = ", ".join(f"rank {n - run.problem.first}" for n in sorted(run.lingering))
    return (
        f" ({ranks} still {'polls' if len(run.lingering) == 1 else 'poll'} in a loop of its own, "
        f"{LINGER_POLLS:,} polls on with nothing arriving: a loop with no count waits for ever, one "
        "with a longer count would give up later — docs/mpi.md#linger)"
    )


def _diverged(run: Run, expected: list[str], step: int) -> Finding | None:
    """A finding when an answer of this step (of the inits, at step 0) differs from the same
    input's in ``expected``."""
    first = len(run.digests) - 1 if step else 0
    for index in range(first, min(len(run.digests), len(expected))):
        if expected[index] not in (run.digests[index], *run.other_digests[index]):
            node, what = run.said[index]
            return Finding(
                NONDETERMINISTIC,
                f"node {node} answered {what} differently from an earlier run of the same schedule "
                "(it reads the clock, an unseeded random or its own timing, or did not start afresh on init)",
                node,
                step,
            )
    return None


@dataclass
class Searched:
    runs: int
    steps: int
    seconds: float
    exhausted: bool  # the strategy tried every schedule
    finding: Outcome | None
    last: Outcome | None
    started: int  # processes started
    incomplete: int = 0  # runs that prove nothing (Outcome.incomplete): never a PASS
    undecided: int = 0  # runs whose audit could not decide everything (Outcome.undecided): no PASS
    unsure: str | None = None  # the first such run's undecided finding
    clock_jumped: int = 0  # runs in which a node's timeout loop jumped the clock (Outcome.clock_jumped)
    read_held: int = 0  # runs in which a node held a read until its bytes changed (Outcome.read_held)
    lingers_cut: int = 0  # runs in which a rank's loop acted at every linger it had (Outcome.lingers_cut)
    finalize_pending: int = 0  # runs with an MPI rank erroneous at MPI_Finalize (Outcome.finalize_pending)
    pending_said: str = ""  # the first such run's words
    spinning: str = ""  # the first undecided run's spinning threads, if that was why (Outcome.spinning)
    end_grace: float = 0.0  # the finding's settings.end_grace (a node ended after its run)
    interrupted: bool = False  # Ctrl-C (SIGINT) or SIGTERM ended it: the runs so far, nothing proven
    terminated: bool = False  # that interrupt was SIGTERM: the command exits 143, not 130


def _replayed(settings: Settings, pool: Pool, outcome: Outcome) -> Outcome:
    """``outcome``'s schedule played again, exactly."""
    steps = outcome.steps
    return play(settings, pool, lambda i, enabled: steps[i] if i < len(steps) else None, outcome.digests)


def search(
    settings: Settings,
    pool: Pool,
    strategy,
    runs: int | None,
    seconds: float | None,
    progress: Callable[[int], None] | None = None,
) -> Searched:
    """Runs until a finding, the strategy's end, ``runs`` runs or ``seconds`` of wall time; an
    interrupt (KeyboardInterrupt: Ctrl-C, or SIGTERM in ``runner.pool_of``) ends it too, the run it
    cut short not counted, so that the caller can say how far it got."""
    start = time.monotonic()
    count = total = cut = unsure = jumped = pending = held = capped = 0
    pending_said = spinning = ""
    first_unsure: str | None = None
    last: Outcome | None = None
    end_grace = 0.0
    interrupted = terminated = False
    try:
        while (runs is None or count < runs) and (seconds is None or time.monotonic() - start < seconds):
            chooser = strategy.next_run()
            if chooser is None:
                break
            previous, last = last, play(settings, pool, chooser, strategy.expected(), strategy.lingers)
            count += 1
            total += len(last.steps)
            if last.after_ended is not None and previous is not None:
                # A node ended after the last run (seen at this one's init): that run's schedule, played
                # again with a moment at its end for the node's output to end, shows it (else, as seen).
                again = _replayed(replace(settings, end_grace=END_GRACE), pool, previous)
                count, total = count + 1, total + len(again.steps)
                if again.finding is not None:  # its end waited for; a late line needs no wait
                    last = again
                    end_grace = END_GRACE if ended_unasked(again.finding.rule, again.finding.message) else 0.0
                else:
                    last = Outcome(last.after_ended, [], [], [], [])
            if last.finding is not None:
                return Searched(
                    count,
                    total,
                    time.monotonic() - start,
                    False,
                    last,
                    last,
                    pool.started,
                    cut,
                    unsure,
                    first_unsure,
                    end_grace=end_grace,
                )
            cut += last.incomplete is not None
            unsure += last.undecided is not None
            jumped += last.clock_jumped
            held += last.read_held
            capped += last.lingers_cut
            pending += bool(last.finalize_pending)
            pending_said = pending_said or last.finalize_pending
            if first_unsure is None and last.undecided is not None:
                first_unsure, spinning = last.undecided, last.spinning
            strategy.ran(Ran(last.trail, last.digests))
            if progress is not None:
                progress(count)
    except KeyboardInterrupt as stop:
        interrupted = True
        terminated = isinstance(stop, Terminated)
    exhausted = not interrupted and strategy.exhaustive and strategy.next_run() is None
    return Searched(
        count,
        total,
        time.monotonic() - start,
        exhausted,
        None,
        last,
        pool.started,
        cut,
        unsure,
        first_unsure,
        jumped,
        finalize_pending=pending,
        read_held=held,
        lingers_cut=capped,
        pending_said=pending_said,
        spinning=spinning,
        interrupted=interrupted,
        terminated=terminated,
    )
