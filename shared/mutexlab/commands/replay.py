"""``mutexlab replay SCENARIO.json``: play a scripted schedule (docs/architecture.md#scenario-format).

A scenario is data: the code it replays is a registered algorithm's, or the module or ``.py``
file that ``--algorithm`` names on the command line — never one the scenario names by itself
(``foreign_code``: loading it would run whatever it holds), as the explorer refuses it too."""

from __future__ import annotations

import sys
from pathlib import Path

from ..audit import numbered, verify_events
from ..audit.seen import note_seen
from ..director.scenario import is_program_scenario
from ..protocols import registry
from ..setups import ConfigError
from ..sim.scripted import ScenarioError, load_scenario, replay_scenario
from ..trace import TraceWriter
from ..waiting import cannot
from ..words import count
from .common import add_json_argument, add_trace_argument, fail, print_json, said_seen
from .flags import add_algorithm_argument, disagreement, named_algorithm
from .mpitest import add_arguments as add_mpi_arguments
from .registry import Command
from .replay_rabbit import add_arguments as add_rabbitmq_arguments
from .replay_rabbit import broker_only_flags, over_rabbitmq
from .reporting import add_report_argument, write_report_if_asked
from .test import add_timeouts


def arguments(p) -> None:
    p.add_argument("scenario", help="scenario JSON file")
    add_trace_argument(p)
    add_json_argument(p, "outcome")
    add_report_argument(p)
    add_algorithm_argument(p, "the scenario")
    p.add_argument(
        "--node",
        metavar="CMD",
        help="a program scenario (written by 'mutexlab test --counterexample'): the program to play it on "
        "(required: the program the scenario names is never run by itself)",
    )
    add_timeouts(p, "with --node: seconds the program may take to answer")
    add_rabbitmq_arguments(p)
    add_mpi_arguments(p, replay=True)


def run(args) -> int:
    unused = broker_only_flags(args)
    if unused:
        return fail(unused)
    if args.node is not None or args.mpi is not None or is_program_scenario(args.scenario):
        if args.over_rabbitmq:
            return fail("--over-rabbitmq plays a scenario of a mutexlab algorithm, not a program's (--node)")
        from .test import replay_program

        return replay_program(args)
    try:
        found = named_algorithm(args)
        scenario = load_scenario(args.scenario)
    except (ConfigError, ScenarioError) as exc:
        return fail(str(exc))
    if getattr(args, "over_rabbitmq", False) and (args.json or args.report):
        return fail(
            "--json and --report are not offered with --over-rabbitmq (the monitor prints its summary)"
        )
    wrong = foreign_code(scenario.algorithm, args.algorithm, args.scenario) or disagreement(
        found, scenario.algorithm, args.algorithm, args.scenario
    )
    if wrong:
        return fail(wrong)
    rabbit = getattr(args, "over_rabbitmq", False)  # the real run's monitor writes --trace then
    trace = TraceWriter(args.trace if not rabbit else None, keep=True)
    try:
        with trace:
            result = replay_scenario(scenario, trace)
    except ScenarioError as exc:  # a step it cannot play: exit 2, unless the steps before broke safety
        note_seen(exc, getattr(exc, "before", None))
        if said_seen(exc, "a step could not be played", bool(getattr(args, "json", False))):
            print(f"mutexlab: the replay stopped there: {exc}", file=sys.stderr)
            if rabbit:  # the simulator's replay stopped first: nothing was run on the broker
                print("mutexlab: not run over RabbitMQ: the simulator's replay stops there", file=sys.stderr)
            return 1
        return fail(str(exc))
    except OSError as exc:
        return fail(f"cannot write trace: {exc}")
    events = numbered(result.events)
    verdict = verify_events(events)
    outcome = {
        "algorithm": result.setup.algorithm,
        "entered": result.entered,
        "in_flight": result.in_flight,
        "states": result.states,
        "verdict": verdict.status,
        "safe": verdict.ok,  # the verdict is SAFE: never true for an INCOMPLETE one
        "violations": [v.message for v in verdict.violations],
        "refused": result.refused,
        "raised": result.raised,
        "deadlock": result.deadlock,
        **({"unexplained": result.unexplained} if result.unexplained else {}),
        **({"unprobed": result.unprobed} if result.unprobed else {}),  # steps not taken again
    }
    starving = bool(
        result.loop and result.loop["closes"] and result.loop["waiting"] and not result.loop["unfair"]
    )
    finding = starving or bool(result.refused or result.deadlock)
    if rabbit:
        # the first safety violation, else a starving loop, else what is left unfinished
        shown = verdict.safety or ([] if starving else verdict.violations)
        first = f"[{shown[0].rule}] {shown[0].message}" if shown else ""
        said = result.refused or ("deadlock" if result.deadlock else first)
        said = said or (loop_line(result.loop) if starving and result.loop else verdict.status)
        rules = {v.rule for v in verdict.violations}
        return over_rabbitmq(args, scenario, result, 1 if finding else verdict.exit_code, said, rules)
    if result.loop is not None:
        outcome["loop"] = result.loop
    if args.json:
        print_json(outcome)
    else:
        print(f"{result.setup.algorithm}: {len(result.events)} trace events")
        print("entered, in order: " + (", ".join(result.entered) or "nobody"))
        print("final states: " + ", ".join(f"{n}={s}" for n, s in result.states.items()))
        if result.in_flight:
            print(f"still in flight: {count(result.in_flight, 'message')}")
        print(verdict.render())
        if result.refused:
            said = "RAISED" if result.raised else "REFUSED"  # a handler raised, or the table refused
            print(f"{said}: {result.refused} (the replay stops there)")
        if result.deadlock:
            print(f"DEADLOCK: nothing can move; waiting: {result.waiting}")
        if result.unexplained and not verdict.safety:
            kind = "deadlock" if result.deadlock else "liveness"
            print(f"NOT JUDGED (exit 2, as check says it): {cannot(kind)}: {result.unexplained}")
        if result.loop is not None:
            print(loop_line(result.loop, unknown=bool(result.unexplained)))
        if result.unprobed:
            print(f"NOT PROBED for determinism: {result.unprobed}")
        if args.trace:
            print(f"trace written to {args.trace}")
    if result.loop is not None and not result.loop["closes"]:
        return write_report_if_asked(args, events) or fail(
            "the scenario's loop does not return to the world where it began: it is not a cycle"
        )
    if result.unexplained and not verdict.safety:  # a stall whose cause is unknown: not judged
        return write_report_if_asked(args, events) or 2
    return write_report_if_asked(args, events) or (1 if finding else verdict.exit_code)


def foreign_code(named: str, given: str | None, what: str, command: str = "replay") -> str | None:
    """Why the scenario ``what`` may not be played (by ``command``) as it is: it names a module or
    file (``named``) that ``--algorithm`` (``given``) does not name; None when it may."""
    if not (registry.is_file(named) or registry.is_module(named)):
        if given or registry.lookup(named) is not None:
            return None  # a plain name: registered, or one --algorithm's code declares (else unknown)
        return (  # a solution's file, named by its SPEC's name (as the explorer exports it)
            f"{what}: unknown algorithm {named!r}, not a built-in one: pass --algorithm FILE, the "
            f"solution's .py file (or module) that declares it"
        )
    if given and named in (given, registry.canonical(given)):
        return None
    if _loaded(named):
        return None  # loaded in this process already (a caller's own): replaying it runs nothing new
    kind = "file" if registry.is_file(named) else "module"
    named = registry.shown(named)  # as the user would type it here
    return (
        f"{what} names the algorithm {kind} {named}: {command} runs only registered algorithms and the "
        f"one --algorithm names on its command line, never code a scenario names; to run it, "
        f"pass --algorithm {named}"
    )


def _loaded(named: str) -> bool:
    """Whether the module or file ``named`` is imported in this process already."""
    if registry.is_file(named):
        return registry.module_name(Path(named).expanduser().resolve()) in sys.modules
    return named in sys.modules


def loop_line(loop: dict, unknown: bool = False) -> str:
    """The loop of a replayed scenario in words; ``unknown``: a waiting_for() raised in it."""
    if not loop["closes"]:
        return f"loop: the last {loop['steps']} steps do NOT return to the world where they began"
    back = "the world where they began" + (f" (up to {loop['up_to']})" if loop.get("up_to") else "")
    if loop.get("unfair"):
        return (
            f"loop: the last {loop['steps']} steps return to {back}, but the loop is not weakly fair: "
            f"{', '.join(loop['unfair'])} could move throughout and never does (not a starvation)"
        )
    if unknown:
        return f"loop: the last {loop['steps']} steps return to {back}; who waits throughout is unknown"
    if loop["waiting"]:
        return (
            f"LIVENESS: the last {loop['steps']} steps return to {back}, and "
            f"{', '.join(loop['waiting'])} waits throughout: a run can repeat them forever"
        )
    return f"loop: the last {loop['steps']} steps return to {back}; nobody waits throughout"


COMMAND = Command(
    "replay",
    "play a scripted schedule step by step",
    """Replay a scenario (algorithm, processes, options, steps), write its trace and audit it. Exit 0 SAFE; 1
    on a finding, as mutexlab check reports them: a safety violation, a delivery the protocol refuses (the
    replay stops there), a deadlock (the scenario ends where nothing can move and someone is not finished)
    or a closed, weakly fair loop (every delivery and pending decision possible throughout it is taken in
    it) in which someone waits throughout; 2 on an invalid scenario (one naming a module or .py file
    replays only with --algorithm naming the same: a scenario never runs code of its own); 3 INCOMPLETE (no finding,
    but the scenario stops while something could still move and someone is still holding, waiting or not in
    a final state). With --over-rabbitmq the real participant processes play it over RabbitMQ, a director
    releasing every message in the scenario's order (a duplicate as a copy; a loop's cycle --rounds times,
    a starvation a finding when no waiting process enters in any round; docs/rabbitmq.md#directed-replay):
    the real run's exit code (0 SAFE, 1 a finding), 3 if it diverged from the scenario.""",
    run,
    arguments,
)
