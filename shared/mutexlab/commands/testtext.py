"""The text ``mutexlab test`` prints of its outcome (``--json`` prints the outcome itself)."""

from __future__ import annotations

import shlex
from typing import Any

from ..director import runner
from ..director.judge import finalize_words
from ..director.scenario import step_text
from ..director.world import LINGERS_AT_REST
from ..words import count


def text(outcome: dict[str, Any], tested: runner.Tested, args) -> list[str]:
    searched = f"{outcome['strategy']}: {count(outcome['runs'], 'run')}, {count(outcome['steps'], 'step')} in {outcome['seconds']:.1f} s"
    head = f"{outcome['problem']} on {shlex.join(outcome['program'])}, N={outcome['nodes']}"
    if tested.finding is None:
        if outcome.get("nothing_entered"):
            return [
                f"{head}: INCOMPLETE — no rank entered the resource ({searched}): give "
                "--regex matching what the program prints on its standard output when it enters and "
                "leaves (its standard error is not matched), or call mutexlab_enter/mutexlab_exit; "
                "or, if it does, every rank waited for ever before entering: --entries 1 makes that "
                "the deadlock finding (docs/mpi.md); nothing proven"
            ]
        if outcome.get("interrupted"):
            return [f"{head}: INCOMPLETE — interrupted, no finding in {searched}; nothing proven"]
        if outcome["verdict"] == "PASS" and tested.searched.exhausted:
            return [
                f"{head}: PASS — searched exhaustively: "
                f"{count(outcome['runs'], 'schedule')} ({searched}"
                + (
                    f", {outcome['sleep_set_blocked']} cut short as equivalent to one searched)"
                    if outcome.get("sleep_set_blocked")
                    else ")"
                )
                + gap(outcome)
            ]
        if outcome["verdict"] == "PASS":
            sample = "a sample of the schedules, not all of them"
            return [f"{head}: PASS — no finding in {searched} ({sample}){gap(outcome)}"]
        if outcome["undecided_runs"] and outcome.get("spinning"):
            return [
                f"{head}: INCOMPLETE — no finding in {searched}, but {outcome['spinning']} kept running "
                f"without an MPI call mutexlab can direct, so {count(outcome['undecided_runs'], 'run')} "
                "could not be decided; nothing proven of this:",
                f"  {outcome['undecided']}",
            ]
        if outcome["undecided_runs"]:
            return [
                f"{head}: INCOMPLETE — no finding in {searched}, but the audit could not decide "
                f"everything in {count(outcome['undecided_runs'], 'run')}; nothing proven of this:",
                f"  {outcome['undecided']}",
            ]
        if outcome["incomplete_runs"]:
            return [
                f"{head}: INCOMPLETE — {count(outcome['incomplete_runs'], 'run')} reached --max-steps "
                f"({args.max_steps:,}) with requests still being served; give more --max-steps or fewer "
                f"--requests: {searched}; nothing proven"
            ]
        if tested.searched.exhausted:  # every schedule it could reach, but a jump left some out
            return [
                f"{head}: INCOMPLETE — no finding in every schedule it could reach ({searched}){gap(outcome)}"
            ]
        covered = outcome.get("deviations_covered")
        if covered is None:
            return [
                f"{head}: INCOMPLETE — the budget ended before the search did: {searched}; nothing proven"
            ]
        return [
            f"{head}: INCOMPLETE — the budget ended before the search did: {searched}; no finding within "
            f"deviation bound {covered} (every schedule with at most {count(covered, 'deviation')} from the "
            "default order), "
            f"the rest not searched in full{gap(outcome)}"
        ]
    lines = [f"{head}: {tested.finding.render()}", f"found by {searched}"]
    shrunk = outcome["shrunk"]
    if tested.original is not None and tested.shown is not tested.original:
        lines.append(
            f"shrunk from {count(shrunk['steps'][0], 'step')} on {count(shrunk['nodes'][0], 'node')} to "
            f"{count(shrunk['steps'][1], 'step')} on {count(shrunk['nodes'][1], 'node')} ({count(shrunk['tests'], 'test run')})"
            + _limits(shrunk)
        )
    elif tested.original is not None and shrunk["tests"] and not tested.note:
        # Tried and none smaller showed it (a deadlock of a long run: every shorter schedule leaves
        # messages undelivered, a run cut short, not at rest): said, so no line is not a puzzle.
        lines.append(
            f"not shrunk: no smaller run showed [{tested.finding.rule}] ({count(shrunk['tests'], 'test run')})"
            + _limits(shrunk)
        )
    if tested.note:
        lines.append(tested.note)
    lines.extend(outcome.get("hints", []))
    if tested.shown is not None:
        lines.append(
            "schedule: " + (_schedule(tested.shown.steps) or "none: the nodes' answers to init show it")
        )
    if args.counterexample:
        lines.append(
            f"counterexample written to {args.counterexample}; play it again: mutexlab replay {args.counterexample} "
            + (f"--mpi {shlex.join(args.mpi)}" if args.mpi else f"--node {shlex.quote(args.node)}")
        )
    if args.trace:
        lines.append(f"trace written to {args.trace}")
    return lines


def _limits(shrunk: dict) -> str:
    """What the shrinking could not do: the fewer nodes it tried in vain, its budget's end."""
    said = []
    if tried := shrunk.get("not_shown_on"):  # "not shown on 1 or 2 nodes" read as "on some nodes"
        sizes = " and ".join(", ".join(str(n) for n in tried).rsplit(", ", 1))
        said.append(
            f"not shown on fewer nodes: {sizes} tried (the schedule's steps, then a short random search, at"
            " each size: a sample, not every schedule)"
        )
    if shrunk.get("budget_spent"):
        said.append("its budget ran out: a smaller run may show it")
    return "; " + "; ".join(said) if said else ""


SHOWN_STEPS = 10  # a long schedule's text: its first and last this many steps (--json: all)


def _schedule(steps) -> str:
    """The steps, a long list's middle elided and counted (a no-rest run has thousands)."""
    if len(steps) <= 3 * SHOWN_STEPS:
        return ", ".join(step_text(s) for s in steps)
    first = ", ".join(step_text(s) for s in steps[:SHOWN_STEPS])
    last = ", ".join(step_text(s) for s in steps[-SHOWN_STEPS:])
    elided = count(len(steps) - 2 * SHOWN_STEPS, "step")
    return f"{first}, … {elided} elided (--json or --counterexample has them all) …, {last}"


# A rank's timeout loop jumps mutexlab's clock (src/mpi.c, poll_point) so that its deadline passes
# within the step, before any message not yet delivered: no run takes the other branch.
NOT_COVERED = (
    "a message arriving before an MPI_Wtime deadline passed (or one on the machine's clock): a rank's "
    "timeout loop moved mutexlab's "
    "clock past its deadline at once, so every run took the timeout (docs/mpi.md#threads)"
)


# A read held (docs/mpi.md#rma): its origin waits until the bytes change, so no run has it read the
# same bytes again and go on, and what a loop does after some identical reads is never run.
NOT_DRIVEN = (
    "a read of another rank's window (MPI_Get, an MPI_NO_OP fetch) that found what its origin read "
    "last time was held until the bytes changed, so no run read the same value again and went on: "
    "a loop that gives up after some identical reads never reached its giving up (docs/mpi.md#rma)"
)


# A send ends a linger, and a rank has at most LINGERS_AT_REST lingers in a row (director/world.py):
# a loop that sends at every round is let go round that many times before its other inputs come.
LINGERS_CUT = (
    f"a rank's loop that acts as it waits (a request sent again at each timeout, a heartbeat) went "
    f"round acting {LINGERS_AT_REST} times in a row and was let go no further before its other "
    "input came: what it does after more rounds (gives up after 10 tries, say) never ran "
    "(docs/mpi.md#linger)"
)


def coverage(outcome: dict[str, Any], jumped: int, held: int = 0, cut: int = 0) -> None:
    """``outcome`` of a search in which ``jumped`` runs had a rank's timeout loop jump the clock,
    ``held`` runs a rank's read held and ``cut`` runs a rank's acting loop let go no further: not
    exhaustive, whatever the strategy ran, and saying what it did not cover or drive."""
    if jumped:
        outcome.update(exhaustive=False, clock_jumped_runs=jumped, not_covered=NOT_COVERED)
    if cut:
        said = f"{outcome['not_covered']}; {LINGERS_CUT}" if jumped else LINGERS_CUT
        outcome.update(exhaustive=False, lingers_cut_runs=cut, not_covered=said)
    if held:
        outcome.update(exhaustive=False, read_held_runs=held, not_driven=NOT_DRIVEN)


def erroneous(outcome: dict[str, Any], runs: int, said: str) -> None:
    """``outcome`` of a search in which ``runs`` runs had a rank call MPI_Finalize while another of
    its threads was still in an MPI call (``said``: the first): erroneous under MPI, which MPICH
    ends with a fatal error and Open MPI lets pass — a note on the verdict, not a finding."""
    if runs:
        outcome.update(finalize_pending_runs=runs, finalize_pending=said)


def gap(outcome: dict[str, Any]) -> str:
    """What a PASS line adds when its search did not cover or drive everything (``coverage``), or when a
    rank was still in an MPI call at its MPI_Finalize (``erroneous``)."""
    said = f"; not covered: {outcome['not_covered']}" if "not_covered" in outcome else ""
    said += f"; not driven: {outcome['not_driven']}" if "not_driven" in outcome else ""
    if "finalize_pending" in outcome:
        runs = outcome["finalize_pending_runs"]
        said += (
            f"; but erroneous under MPI, in {runs} run{'s' if runs != 1 else ''}: "
            f"{outcome['finalize_pending']} ({finalize_words(outcome['finalize_pending'])})"
        )
    return said
