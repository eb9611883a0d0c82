"""A whole ``mutexlab test``: search, shrink the finding, confirm it, and the replay of a scenario.

Invariant: every process started here is killed before these functions return, whatever happens
(``Pool.close`` in ``finally``; SIGTERM is turned into an interrupt while they run).
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from ..audit.verdict import Verdict
from ..findings import STEPS_LEFT, Violation
from ..interrupts import raise_on_sigterm
from ..words import count
from .judge import (
    NO_REST,
    NONDETERMINISTIC,
    Finding,
    ended_answering,
    ended_unasked,
    finalize_words,
    wrote_late,
)
from .lines import CRASHED
from .problem import make_problem
from .process import TEST_START_TIMEOUT, Pool
from .scenario import ProgramScenario, program_files, step_text
from .search import END_GRACE, MAX_STEPS, Outcome, Searched, Settings, play, search
from .shrink import Shrinker, Strict
from .world import LATE_GRACE

# Not shrunk: a nondeterministic program gives no stable schedule; a stalled node costs a whole
# timeout per test run.
NOT_SHRUNK = frozenset({NONDETERMINISTIC, "stalled"})
NONDETERMINISM_TRIES = 10  # plays of a recorded nondeterministic schedule before "did NOT reproduce"


@contextmanager
def pool_of(argv: list[str], timeout: float, start_timeout: float = TEST_START_TIMEOUT) -> Iterator[Pool]:
    """A pool whose processes are all killed on the way out, SIGTERM included."""

    previous = raise_on_sigterm()
    pool = Pool(argv, timeout, start_timeout)
    try:
        yield pool
    finally:
        pool.close()
        signal.signal(signal.SIGTERM, previous)


@dataclass
class Tested:
    searched: Searched
    original: Outcome | None  # the finding's run as found
    shown: Outcome | None  # the finding's run after shrinking (or the last run)
    settings: Settings  # the settings of ``shown`` (fewer nodes after shrinking)
    finding: Finding | None
    shrink_tests: int = 0
    note: str | None = None  # why the finding is shown unshrunk (its shrunk schedule did not replay)
    not_shown_on: list[int] = field(default_factory=list)  # fewer nodes tried in full, none showing it
    shrink_cut: bool = False  # the shrinking's budget ran out: a smaller run may show it


def test(
    settings: Settings,
    strategy,
    runs: int | None,
    seconds: float | None,
    timeout: float,
    options: dict[str, Any],
    shrink: bool = True,
    start_timeout: float = TEST_START_TIMEOUT,
    searched_hook: Callable[[], None] | None = None,
) -> Tested:
    """The search, then its finding shrunk; ``searched_hook`` is called between the two (what the
    nodes report from then on comes from the shrinking's smaller runs, not the program's test)."""
    with pool_of(settings.program, timeout, start_timeout) as pool:
        searched = search(settings, pool, strategy, runs, seconds)
        if searched_hook is not None:
            searched_hook()
        if searched.finding is None:
            return Tested(searched, None, searched.last, settings, None)
        found = searched.finding
        assert found.finding is not None
        late = LATE_GRACE if wrote_late(found.finding.rule, found.finding.message) else 0.0
        # A node's end after its last answer shows only when the run's end waits for it: the search
        # may have seen it without the wait (it ended quickly), a smaller run need not (a race).
        ends = END_GRACE if ended_unasked(found.finding.rule, found.finding.message) else searched.end_grace
        after = ended_answering(found.finding.message) if ends else ""
        settings = replace(settings, end_grace=ends, late_grace=late, end_after=after)
        if not shrink or found.finding.rule in NOT_SHRUNK:
            return Tested(searched, found, found, settings, found.finding)
        problem = settings.problem

        def remake(nodes: int):
            return make_problem(problem.name, nodes, problem.requests, options, settings.seed)

        shrinker = Shrinker(settings, pool, remake, found.finding.rule)
        try:
            small_settings, small = shrinker.shrink(found)
            # The shrunk schedule played once more, exactly: a program that answers differently now
            # is nondeterministic, and that is the finding. A crash seen by its timing (a node's end)
            # is played as replay plays it: with the end wait, until it shows (NONDETERMINISM_TRIES).
            rule = small.finding.rule if small.finding is not None else None
            racing = small.finding is not None and wrote_late(rule, small.finding.message)
            small_settings = replace(small_settings, end_grace=_end_wait(small_settings.end_grace, rule))
            for _ in range(_plays(rule, racing)):
                again = play(small_settings, pool, Strict(small.steps), None if racing else small.digests)
                if again.finding is not None:
                    break
        except KeyboardInterrupt:  # Ctrl-C while shrinking: the finding stands, as found
            note = "interrupted while shrinking: the schedule as found is shown, unshrunk"
            return Tested(searched, found, found, settings, found.finding, shrinker.tests, note)
        if again.finding is not None and again.finding.rule == NONDETERMINISTIC:
            return Tested(searched, found, again, small_settings, again.finding, shrinker.tests)
        assert small.finding is not None
        if again.finding is None or again.finding.rule != small.finding.rule:
            # Only a schedule that replays is shown: the unshrunk one, as found.
            shown = f"[{again.finding.rule}]" if again.finding else "no finding"
            note = (
                f"the shrunk schedule ({count(len(small.steps), 'step')}) gave {shown} when played again, not "
                f"[{small.finding.rule}]: the schedule as found is shown, unshrunk"
            )
            return Tested(searched, found, found, settings, found.finding, shrinker.tests, note)
        tested = Tested(searched, found, small, small_settings, small.finding, shrinker.tests)
        tested.shrink_cut = shrinker.cut
        if small_settings.problem.nodes == problem.nodes:  # no fewer nodes showed it: said which
            tested.not_shown_on = shrinker.not_shown
        return tested


@dataclass
class Replayed:
    outcome: Outcome
    finding: Finding | None
    settings: Settings
    diverged: int | None = None  # on another program: the first step it no longer allows
    woken: int = 0  # on another program: wakes played that the scenario has not (it paused there)
    skipped: int = 0  # on another program: the scenario's wakes of a node it did not pause
    unlingered: int = 0  # on another program: the scenario's lingers of a rank not polling there
    onward: int = 0  # on another program: steps past the scenario's last, to the run's end

    def wakes_note(self) -> str:
        """What a replay on another program says of the wakes it added or passed over, and of the
        steps it took past the scenario's last ("" if none)."""
        said = []
        if self.woken:
            said.append(
                f"{count(self.woken, 'wake')} of a rank that paused where the program it was found on did not"
            )
        if self.skipped:
            said.append(f"{count(self.skipped, 'wake')} passed over: the rank did not pause there")
        if self.unlingered:
            said.append(f"{count(self.unlingered, 'linger')} passed over: the rank did not poll there")
        if self.onward:
            said.append(f"{count(self.onward, 'step')} more, in the default order, to the run's end")
        return f" (and {'; '.join(said)})" if said else ""

    def unfinished(self) -> list[str]:
        """The nodes still waiting where the schedule ended with steps left to take: on another
        program (a fix), the schedule found on the first may end before the fix's run does, and
        a rank short of its ``--entries`` (an MPI rank asks without telling) is not yet served."""
        outcome = self.outcome
        if self.finding is not None or self.diverged is not None or outcome.resting:
            return []
        if outcome.verdict is None or outcome.verdict.exit_code != 0:
            return []  # the audit says itself what is unfinished (a --node request unserved)
        return list(outcome.waiting)

    def steps_left(self) -> list[str]:
        """The steps still possible where the schedule ended with nobody waiting (messages held,
        a paused node): on another program (a fix) the schedule may end before its run does, and
        what those steps would do is not played, so the replay proves nothing of it."""
        outcome = self.outcome
        if self.finding is not None or self.diverged is not None or outcome.resting or self.unfinished():
            return []
        if outcome.verdict is None or outcome.verdict.exit_code != 0:
            return []
        return [step_text(step) for step in outcome.left]

    def judged(self) -> Verdict | None:
        """The audit's verdict with each node the schedule left waiting (``unfinished``) as an
        unserved request: INCOMPLETE, as ``verdict_text`` says, for a page drawn of the events."""
        verdict, short, left = self.outcome.verdict, self.unfinished(), self.steps_left()
        if verdict is None or not (short or left):
            return verdict
        waiting = [
            Violation("request-unserved", f"{who} still waits for the resource where the schedule ended")
            for who in short
        ]
        if left:
            waiting.append(Violation(STEPS_LEFT, f"the schedule ended with {_listed(left)} still possible"))
        return replace(verdict, violations=[*verdict.violations, *waiting])

    def verdict_text(self) -> str:
        """The audit's verdict; a run the schedule left unfinished is INCOMPLETE, never SAFE."""
        text = self.outcome.verdict.render() if self.outcome.verdict is not None else ""
        short, left = self.unfinished(), self.steps_left()
        if not (short or left):
            if self.outcome.finalize_pending and self.outcome.finding is None:  # erroneous, no finding
                text += f"\nbut erroneous under MPI: {self.outcome.finalize_pending} ({finalize_words(self.outcome.finalize_pending)})"
            return text
        head, _, rest = text.partition("\n")
        problem = head.split(":", 1)[0]
        if short:
            who = f"{', '.join(short)} still {'waits' if len(short) == 1 else 'wait'} for the resource"
            what = f"{who} and steps are still possible"
        else:
            what = f"nobody waits, but {_listed(left)} {'is' if len(left) == 1 else 'are'} still possible"
        return (
            f"{problem}: INCOMPLETE — the schedule ended before the run did: {what}; no violation "
            f"in what was played, nothing proven of the rest\n{rest}"
        ).rstrip("\n")

    def exit_code(self) -> int:
        """0 SAFE, 3 a diverged, unjudged or unfinished replay, else the verdict's own code
        (a finding's 1 is the caller's)."""
        verdict = self.outcome.verdict
        if self.diverged is not None or verdict is None:
            return 3
        return 3 if self.unfinished() or self.steps_left() else verdict.exit_code


def _listed(steps: list[str], most: int = 3) -> str:
    """ "1 step (deliver node-1#3→2)", the first ``most`` of more named and the rest counted."""
    shown = ", ".join(steps[:most]) + (f", … {len(steps) - most} more" if len(steps) > most else "")
    return f"{count(len(steps), 'step')} ({shown})"


def _end_wait(grace: float, rule: str | None) -> float:
    """The end wait of a schedule played again for a finding of ``rule``: a crash seen by a node's
    end shows only when the run waits for that end."""
    return max(grace, END_GRACE) if rule == CRASHED else grace


def _plays(rule: str | None, racing: bool = False) -> int:
    """How often a schedule is played again before a finding of ``rule`` counts as not shown: a
    nondeterminism, a crash seen by its timing or a line that raced its done (``racing``) shows
    only when the program does it again."""
    return NONDETERMINISM_TRIES if rule in (NONDETERMINISTIC, CRASHED) or racing else 1


def replay(
    scenario: ProgramScenario,
    argv: list[str],
    timeout: float,
    start_timeout: float = TEST_START_TIMEOUT,
    unread_output: bool = False,
) -> Replayed:
    """Play ``scenario`` on ``argv``. On the program it was found on, every answer must be the
    recorded one and every step possible, else the program is nondeterministic (a finding); on
    another program (a fix) answers may differ, and a step no longer possible ends the replay
    (``diverged``), which proves nothing either way."""
    # the same command on the same files (a fix made in place is another program)
    same = argv == scenario.program and scenario.files in (None, program_files(argv))
    problem = make_problem(
        scenario.problem, scenario.nodes, scenario.requests, scenario.options, scenario.seed
    )
    recorded = (scenario.finding or {}).get("rule")
    # A node's end after its run shows only when the run's end waits for it: a recorded crash on
    # the program it was found on is replayed with that wait, whether or not its search needed it.
    ends = _end_wait(scenario.end_grace, recorded) if same else scenario.end_grace
    # A line written after the last step's done shows only if it arrives before the run is judged.
    # Such a line races its done: counted in the step's answer one time, after it the next — the
    # same fault, so on the program it was found on the answers are not compared, the play repeated.
    written_late = wrote_late(recorded, str((scenario.finding or {}).get("message", "")))
    racing = same and written_late
    late = LATE_GRACE if written_late else 0.0
    # another program goes on past the scenario's last step to its end, within test's own cap
    most = (
        len(scenario.steps) + 1
        if same
        else max(2 * len(scenario.steps) + Strict.MAX_WAKES + 1, len(scenario.steps) + MAX_STEPS)
    )
    if recorded == NO_REST:  # a run never at rest shows it at the cap it was found at: its steps
        most = len(scenario.steps)
    settings = Settings(problem, argv, scenario.seed, scenario.faults, most, unread_output, ends, late)
    # A recorded nondeterminism (or a crash seen by its timing) shows only when the program does it
    # again: played up to NONDETERMINISM_TRIES times on the program it was found on, until it shows.
    tries = _plays(recorded, racing) if same else 1
    with pool_of(argv, timeout, start_timeout) as pool:
        for _ in range(tries):
            chooser = Strict(scenario.steps, wakes=not same)
            outcome = play(settings, pool, chooser, scenario.answers if same and not racing else None)
            if outcome.finding is not None or (chooser.stuck is not None and not racing):
                break
    finding = outcome.finding
    if chooser.stuck is not None and not same:
        return Replayed(
            outcome,
            finding,
            settings,
            chooser.stuck + 1,
            woken=chooser.woken,
            skipped=chooser.skipped,
            onward=chooser.onward,
            unlingered=chooser.unlingered,
        )
    if chooser.stuck is not None and (finding is None or finding.rule != NONDETERMINISTIC):
        kind, node, ident = scenario.steps[chooser.stuck]
        what = f"{kind} {ident} to node {node}" if ident else f"{kind} by node {node}"
        finding = Finding(
            NONDETERMINISTIC,
            f"step {chooser.stuck + 1} ({what}) is not possible on this program: it behaved differently "
            "before it (the nodes' answers to the earlier steps lead elsewhere)",
            node,
            chooser.stuck + 1,
        )
    return Replayed(
        outcome,
        finding,
        settings,
        woken=chooser.woken,
        skipped=chooser.skipped,
        onward=chooser.onward,
        unlingered=chooser.unlingered,
    )
