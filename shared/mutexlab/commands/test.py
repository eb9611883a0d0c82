"""``mutexlab test PROBLEM --node CMD``: any program as the nodes, every delivery chosen here
(docs/test-any-program.md). Exit 0 PASS, 1 a finding, 2 bad input, 3 a systematic search whose
budget ended before its tree did, no run at all, or a run cut by --max-steps while still serving."""

from __future__ import annotations

import json
import shlex
from typing import Any

from ..director import problem as problems
from ..director import runner
from ..director.judge import Finding
from ..director.lines import NodeFault
from ..director.process import TEST_START_TIMEOUT
from ..director.scenario import ProgramScenario, save, to_dict
from ..director.search import MAX_STEPS, Outcome, Settings
from ..director.strategies import PCT, Random, Systematic
from ..director.world import Faults
from ..interrupts import Terminated
from ..setups import ConfigError
from ..transport.supervisor import writable_file
from ..words import count
from . import mpitest
from .common import add_json_argument, fail, print_json, real
from .common import count as whole
from .flags import as_program, parse_options
from .registry import Command
from .reporting import write_report_if_asked
from .testtext import coverage, erroneous, text

DEFAULT_RUNS = {"random": 300, "pct": 300, "systematic": 10_000}
TIMEOUT = 5.0
MAX_SECONDS = 86_400  # --time and --timeout: a day at most


def arguments(p) -> None:
    p.set_defaults(unknown_hint=as_program)
    p.add_argument(
        "problem", metavar="PROBLEM", help="the problem the program solves: " + ", ".join(problems.choices())
    )
    p.add_argument(
        "--node",
        metavar="CMD",
        help="the program of every node (split like a shell, never run by one)",
    )
    p.add_argument("--nodes", "-N", type=whole(1), default=3, metavar="N", help="how many nodes (default 3)")
    p.add_argument(
        "--requests",
        "-R",
        type=whole(0),
        default=1,
        metavar="R",
        help="requests per node: the workload of its problem (default 1)",
    )
    p.add_argument(
        "--option",
        "-o",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="a problem option (repeatable)",
    )
    p.add_argument(
        "--strategy",
        choices=tuple(DEFAULT_RUNS),
        default="random",
        help="random walk (default), pct, or systematic search",
    )
    budget = p.add_mutually_exclusive_group()
    budget.add_argument(
        "--runs",
        type=whole(1),
        metavar="K",
        help="runs at most (default: random and pct 300, systematic 10,000)",
    )
    budget.add_argument(
        "--time",
        type=real("seconds", " of seconds", lambda v: v > 0, "> 0", MAX_SECONDS),
        metavar="S",
        help="seconds at most, instead of a number of runs",
    )
    p.add_argument(
        "--seed", type=whole(0), default=0, help="the strategy's seed, also given to every node (default 0)"
    )
    p.add_argument("--depth", type=whole(1), default=3, metavar="D", help="pct: the bug depth d (default 3)")
    p.add_argument(
        "--no-reduction",
        action="store_true",
        help="systematic: every order of steps, without the sleep sets that skip equivalent ones",
    )
    p.add_argument(
        "--reorder", action="store_true", help="deliver any held message, not only the oldest of its link"
    )
    p.add_argument(
        "--duplicate",
        type=whole(0),
        default=0,
        metavar="K",
        help="deliver up to K messages twice per run (default 0)",
    )
    p.add_argument(
        "--crash",
        type=whole(0),
        default=0,
        metavar="K",
        help="kill and restart an idle node up to K times per run (a problem of requests; default 0)",
    )
    add_timeouts(p, "seconds a node may take to answer")
    p.add_argument(
        "--max-steps",
        type=whole(1),
        default=MAX_STEPS,
        metavar="M",
        help=f"steps of a run before it counts as never at rest (default {MAX_STEPS:,})",
    )
    p.add_argument("--no-shrink", action="store_true", help="report a finding as found")
    mpitest.add_arguments(p)
    p.add_argument(
        "--counterexample", metavar="FILE", help="write the (shrunk) failing schedule here, for replay --node"
    )
    p.add_argument("--trace", metavar="FILE", help="write the trace of the failing run (or of the last run)")
    add_json_argument(p, "outcome")


def add_timeouts(p, answer: str) -> None:
    """``--timeout`` (``answer`` is its help) and ``--start-timeout``: test's, and replay's with --node."""
    p.add_argument(
        "--timeout",
        type=real("seconds", " of seconds", lambda v: v > 0, "> 0", MAX_SECONDS),
        default=TIMEOUT,
        metavar="S",
        help=f"{answer} (default {TIMEOUT:g})",
    )
    p.add_argument(
        "--start-timeout",
        type=real("seconds", " of seconds", lambda v: v > 0, "> 0", MAX_SECONDS),
        default=TEST_START_TIMEOUT,
        metavar="S",
        help="seconds a node just started may take to answer its first init, when more than "
        f"--timeout (default {TEST_START_TIMEOUT:g}: a JVM starts slowly)",
    )


def program_argv(text: str) -> list[str]:
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise ConfigError(f"--node {text!r}: {exc}") from None
    if not argv:
        raise ConfigError("--node is empty: name the program to run")
    return argv


# The options of an MPI program that a --node program has no use for, each with why.
MPI_ONLY = (
    ("--stdin", "a --node program's standard input is the node protocol"),
    ("--np", "a --node program's count is --nodes"),
    ("--regex", "a --node program says its enters and exits in the node protocol"),
    ("--regex-file", "a --node program says its enters and exits in the node protocol"),
    ("--sync-sends", "a --node program's sends are the director's to deliver"),
)


def run(args) -> int:
    try:
        mpi = args.mpi is not None
        options = parse_options(args.option)
        if mpi:  # the ranks ask on their own: no requests
            args.nodes, args.requests = mpitest.processes(args, options), 0
        elif args.node is None:
            raise ConfigError("give the program: --node CMD, or --mpi PROGRAM for an MPI program")
        else:
            argv = program_argv(args.node)
        if not mpi:  # an --mpi option given to a --node program is refused, never silently ignored
            for given, why in MPI_ONLY:
                if getattr(args, given.lstrip("-").replace("-", "_"), None) not in (None, False):
                    raise ConfigError(f"{given} is for --mpi ({why})")
        if args.entries is not None:
            if not mpi:
                raise ConfigError("--entries is for --mpi (a --node program is asked with --requests)")
            if isinstance(args.entries, list) and len(args.entries) != args.nodes:
                raise ConfigError(
                    f"--entries gives {len(args.entries)} counts for {args.nodes} ranks: one per rank, "
                    "rank 0 first"
                )
            options["entries"] = args.entries
        for name, value, least in (
            ("--runs", args.runs, 1),
            ("--depth", args.depth, 1),
            ("--max-steps", args.max_steps, 1),
            ("--duplicate", args.duplicate, 0),
            ("--crash", args.crash, 0),
        ):
            if value is not None and value < least:
                raise ConfigError(f"{name} must be at least {least}, got {value}")
        for name, value in (("--time", args.time), ("--timeout", args.timeout)):
            if value is not None and not 0 < value <= MAX_SECONDS:  # beyond: select() overflows
                raise ConfigError(
                    f"{name} must be more than 0 and at most {MAX_SECONDS:,} seconds, got {value:g}"
                )
        for what, path in (("counterexample", args.counterexample), ("trace", args.trace)):
            if path:  # refused before the search, not after it, its finding lost
                writable_file(what, path)
        problem = problems.make_problem(args.problem, args.nodes, args.requests, options, args.seed)
        if mpi:
            one = len(problem.capacities) == 1  # else the ranks name their resources (mutexlab.h)
            argv = mpitest.node_command(args, problem.resource if one else "")
        if not mpi and problems.is_driven(problem.name) and problem.requests < 1:  # nothing exercised
            raise ConfigError(
                f"--requests must be at least 1 for {problem.name} (its nodes act only when asked), "
                f"got {problem.requests}"
            )
        if args.crash and not problem.driven:
            raise ConfigError(f"--crash restarts an idle node; the nodes of {problem.name} act on their own")
    except ConfigError as exc:
        return fail(str(exc))
    strategy: Random | PCT | Systematic
    if args.strategy == "pct":
        strategy = PCT(args.seed, args.depth, args.reorder)
    elif args.strategy == "systematic":
        strategy = Systematic(reduce=not args.no_reduction)
    else:
        strategy = Random(args.seed)
    runs = args.runs if args.runs is not None or args.time is not None else DEFAULT_RUNS[args.strategy]
    settings = Settings(
        problem,
        argv,
        args.seed,
        Faults(args.reorder, args.duplicate, args.crash),
        args.max_steps,
        mpitest.unread_output(argv),
    )
    try:
        with mpitest.errors() as unsupported:
            tested = runner.test(
                settings,
                strategy,
                runs,
                args.time,
                args.timeout,
                options,
                not args.no_shrink,
                args.start_timeout,
                unsupported.mark,
            )
    except NodeFault as fault:  # the program cannot be started at all
        return fail(str(fault))
    except ConfigError as exc:
        return fail(str(exc))
    if unsupported:
        return fail(mpitest.unsupported(unsupported))
    searched = tested.searched
    outcome: dict[str, Any] = {
        "problem": problem.name,
        "program": mpitest.shown(argv),
        "nodes": problem.nodes,
        "requests": problem.requests,
        "strategy": strategy.name,
        "runs": searched.runs,
        "steps": searched.steps,
        "seconds": round(searched.seconds, 3),
        "processes_started": searched.started,
        "exhaustive": searched.exhausted,
        "incomplete_runs": searched.incomplete,  # cut by --max-steps while still serving requests
        "undecided_runs": searched.undecided,  # runs whose audit could not decide everything
    }
    coverage(outcome, searched.clock_jumped, searched.read_held, searched.lingers_cut)  # not all covered
    erroneous(outcome, searched.finalize_pending, searched.pending_said)  # MPI calls it an error
    if searched.unsure:
        outcome["undecided"] = searched.unsure
    if searched.spinning:  # why: threads that kept running, not the audit (docs/mpi.md#busy)
        outcome["spinning"] = searched.spinning
    if isinstance(strategy, Systematic):
        # runs stopped where every step slept, or at a linger that changed nothing (docs/mpi.md#linger)
        outcome["sleep_set_blocked"] = strategy.blocked + strategy.lingers.stopped
        outcome["deviations_covered"] = strategy.covered  # every schedule with at most this many ran
    written = []
    if tested.finding is not None and tested.shown is not None:
        outcome["verdict"] = "FINDING"
        tested.finding.message = mpitest.as_rank(tested.finding) if mpi else tested.finding.message
        outcome["finding"] = tested.finding.as_dict()
        outcome["schedule"] = [list(s) for s in tested.shown.steps]
        outcome["shrunk"] = {
            "steps": [len(tested.original.steps) if tested.original else None, len(tested.shown.steps)],
            "nodes": [problem.nodes, tested.settings.problem.nodes],
            "tests": tested.shrink_tests,
        }
        if tested.note:
            outcome["shrunk"]["fallback"] = tested.note
        if tested.not_shown_on:  # the smaller sizes tried in full: none showed the finding
            outcome["shrunk"]["not_shown_on"] = tested.not_shown_on
        if tested.shrink_cut:  # its budget ran out: a smaller run may show it
            outcome["shrunk"]["budget_spent"] = True
        if mpi and (
            hints := mpitest.hints(
                tested.shown.events, tested.settings.problem.options, tested.finding, mpitest.regex_of(args)
            )
        ):
            outcome["hints"] = hints  # every note that applies, the likeliest cause first
        if args.counterexample:
            written.append(
                _write(
                    args.counterexample,
                    lambda p: save(p, to_dict(tested.settings, tested.shown, tested.finding)),
                    "counterexample",
                )
            )
        code = 1
    elif searched.interrupted:  # Ctrl-C or SIGTERM: how far it got is said, then cli.py's 130 or 143
        outcome["verdict"], outcome["interrupted"], code = "INCOMPLETE", True, 130
    elif (
        searched.runs
        and not searched.incomplete
        and not searched.undecided
        and (
            (searched.exhausted and not (searched.clock_jumped or searched.read_held or searched.lingers_cut))
            or strategy.name != "systematic"
        )
    ):  # no run, a run cut short or not all decided, or schedules a jump or a held read left out
        outcome["verdict"] = "PASS"
        code = 0
        if mpi and mpitest.nothing_entered(
            settings, tested.shown.events if tested.shown else [], args.timeout
        ):
            outcome["verdict"], code = "INCOMPLETE", 3  # nothing entered: nothing was tested
            outcome["nothing_entered"] = True
    else:
        outcome["verdict"] = "INCOMPLETE"
        code = 3
    if args.trace and tested.shown is not None:
        written.append(_write(args.trace, lambda p: _write_trace(p, tested.shown), "trace"))
    if None in written:
        return 2
    if args.json:
        print_json(outcome)
    else:
        print("\n".join(text(outcome, tested, args)))
    if searched.interrupted:
        raise Terminated if searched.terminated else KeyboardInterrupt
    return code


def _write(path: str, how, what: str) -> str | None:
    try:
        how(path)
    except OSError as exc:
        fail(f"cannot write the {what} {path}: {exc.strerror or exc}")
        return None
    return path


def _write_trace(path: str, outcome: Outcome) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for event in outcome.events:
            handle.write(json.dumps(event, separators=(",", ":")) + "\n")


def replay_program(args) -> int:
    """``mutexlab replay SCENARIO --node CMD`` of a program scenario (``--trace``, ``--report``, ``--json``)."""
    path, node, trace, as_json = args.scenario, args.node, args.trace, args.json
    from ..director.scenario import ScenarioFileError, load

    try:
        scenario: ProgramScenario = load(path)
        if args.mpi is not None:
            argv = mpitest.replay_command(args, scenario.program, "cs")
        elif not node:  # a file never chooses what runs (as replay refuses a scenario's own code)
            named = shlex.join(scenario.program) or "none"
            raise ConfigError(
                f"{path} is a program scenario: give the program to play it on with --node CMD "
                f"(it was found on {named}; mutexlab never runs a program a file names)"
            )
        else:
            argv = program_argv(node)
        replayed = runner.replay(
            scenario, argv, args.timeout, args.start_timeout, mpitest.unread_output(argv)
        )
    except (ScenarioFileError, ConfigError) as exc:
        return fail(str(exc))
    except NodeFault as fault:
        return fail(str(fault))
    finding: Finding | None = replayed.finding
    if trace and _write(trace, lambda p: _write_trace(p, replayed.outcome), "trace") is None:
        return 2
    before = scenario.finding or {}
    same = finding is not None and finding.rule == before.get("rule")
    result = {
        "program": mpitest.shown(argv),
        "steps": len(replayed.outcome.steps),
        "finding": finding.as_dict() if finding else None,
        "recorded": before or None,
        "reproduced": same,
        "diverged_at": replayed.diverged,
        "unfinished": replayed.unfinished(),  # nodes still waiting where the schedule ended
        "steps_left": replayed.steps_left(),  # steps still possible there, nobody waiting
        "wakes": {"added": replayed.woken, "passed_over": replayed.skipped},  # on another program
        "lingers_passed_over": replayed.unlingered,
        "onward": replayed.onward,  # on another program: steps past the scenario's last, to its end
    }
    if as_json:
        print_json(result)
    else:
        played = len(replayed.outcome.steps) - replayed.woken - replayed.onward
        print(
            f"{scenario.problem} on {shlex.join(mpitest.shown(argv))}, N={scenario.nodes}: {count(played, 'step')} of {len(scenario.steps)} played{replayed.wakes_note()}"
        )
        if finding is not None:
            print(finding.render())
            print(
                "the recorded finding reproduced"
                if same
                else f"recorded: [{before.get('rule')}] {before.get('message')}"
            )
        else:
            verdict = replayed.outcome.verdict
            if replayed.diverged is not None:
                print(
                    f"step {replayed.diverged} is not possible on this program (it is not the one the scenario "
                    "was found on, and it answered differently): the schedule proves nothing here"
                )
            elif verdict is not None:
                print(replayed.verdict_text())
            if before:
                print(f"the recorded finding [{before.get('rule')}] did NOT reproduce")
    if write_report_if_asked(args, replayed.outcome.events, verdict=replayed.judged()):
        return 2
    if finding is not None:
        return 1
    return replayed.exit_code()


COMMAND = Command(
    "test",
    "test any program as the nodes of a run, every delivery chosen by mutexlab",
    """Start N copies of a program that speaks the node protocol on its standard input and output
    (docs/test-any-program.md), hold every message between them and deliver it when the strategy says:
    random (a random walk), pct (probabilistic concurrency testing of bug depth --depth) or systematic
    (every schedule, those deviating least from the default order first, restarting the programs for
    each). Every run is audited; a failing schedule is shrunk and written with --counterexample for 'mutexlab replay FILE --node CMD'. Exit 0 PASS
    (no finding: every schedule when systematic says exhaustively, else a sample), 1 a finding (a violation,
    a deadlock, a node that crashed, stalled, wrote garbage or flooded, or behaved nondeterministically),
    2 bad input or a program that cannot be started, 3 a systematic search whose budget ended first
    (or a --time too short for a single run, or a run that reached --max-steps while requests were
    still being served, or one whose audit could not decide everything, or, with --mpi, no rank that
    entered the resource, or a systematic search that left schedules out: a rank's MPI_Wtime timeout
    loop, a read of a window held until its bytes changed, a loop that acts as it waits cut at its
    eighth linger — random and pct say PASS for these, with a "not covered" or "not driven" note).""",
    run,
    arguments,
)
