"""``mutexlab replay SCENARIO --over-rabbitmq``: the scenario played by real participants over
RabbitMQ, the director holding every message (transport/directed.py; docs/rabbitmq.md#directed-replay).

Exit codes: the real run's (the monitor's: 0 SAFE and complete, 1 a finding), with the simulator's
replay as the reference: a run that left the scenario is *diverged at step N* (3, never SAFE); a
deadlock the simulator found is a finding when the real run followed every step and stalled too;
a real run judged SAFE where the simulator found something is not a reproduction (3).

A ``duplicate`` step releases a copy of the held message (script.py). A scenario with a loop is
played unrolled: the stem, then the cycle ``--rounds`` times (default 3; ``--rounds`` for a
scenario without a loop is refused, exit 2, rather than ignored), against the simulator's
replay of the same steps; a starvation the simulator found (a closed, weakly fair cycle someone
waits throughout) is a finding (1) when the real run followed every round and the waiting
processes entered in none of them — shown for that many rounds, which is all a finite run shows."""

from __future__ import annotations

from ..setups import ConfigError
from ..sim.scripted import ReplayResult, Scenario, ScenarioError, replay_scenario
from ..transport.directed import Directed, direct
from ..transport.script import compile_script, unroll
from ..transport.supervisor import broker_problem, make_plan
from ..words import count as counted
from .common import count, fail, real

EXIT_SAFE, EXIT_FINDING, EXIT_INCOMPLETE = 0, 1, 3
MAX_TIMEOUT = 3_600  # seconds: --step-timeout and --stall-timeout at most
MAX_ROUNDS = 1_000  # --rounds at most: each round is real messages and real waits
DEFAULT_ROUNDS = 3  # a loop's cycle, when --rounds is not given (given for no loop: refused)


def add_arguments(p) -> None:
    p.add_argument(
        "--over-rabbitmq",
        action="store_true",
        help="play the scenario on real participant processes over RabbitMQ, the director holding "
        "every message and releasing it in the scenario's order (docs/rabbitmq.md#directed-replay)",
    )
    p.add_argument(
        "--amqp-url", default=None, help="with --over-rabbitmq: the broker (default: $AMQP_URL, else local)"
    )
    p.add_argument("--run-id", default=None, help="with --over-rabbitmq: the run's id (default: random)")
    p.add_argument(
        "--logs",
        metavar="DIR",
        help="with --over-rabbitmq: keep every process's log in DIR (mutexlab run --logs)",
    )
    p.add_argument(
        "--step-timeout",
        type=real("seconds", " of seconds", lambda v: v > 0, "> 0", MAX_TIMEOUT),
        default=None,
        metavar="SECONDS",
        help="with --over-rabbitmq: a step not done within this long is a divergence (default 10)",
    )
    p.add_argument(
        "--stall-timeout",
        type=real("seconds", " of seconds", lambda v: v > 0, "> 0", MAX_TIMEOUT),
        default=None,
        metavar="SECONDS",
        help="with --over-rabbitmq: the monitor ends the run after this long without an event (default 3)",
    )
    p.add_argument(
        "--rounds",
        type=count(1, MAX_ROUNDS),
        default=None,
        metavar="N",
        help="with --over-rabbitmq: a scenario with a loop plays its cycle N times after the stem "
        f"(default {DEFAULT_ROUNDS}; refused for a scenario without a loop)",
    )


BROKER_ONLY = ("amqp_url", "run_id", "logs", "step_timeout", "stall_timeout", "rounds")
DEFAULT_STEP_TIMEOUT, DEFAULT_STALL_TIMEOUT = 10.0, 3.0


def broker_only_flags(args) -> str | None:
    """An error naming the flags that mean something only over RabbitMQ, when they are given without
    --over-rabbitmq (a replay in the simulator would otherwise ignore them without a word)."""
    if getattr(args, "over_rabbitmq", False):
        return None
    given = [f"--{name.replace('_', '-')}" for name in BROKER_ONLY if getattr(args, name, None) is not None]
    if not given:
        return None
    return f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} only with --over-rabbitmq"


def over_rabbitmq(
    args, scenario: Scenario, result: ReplayResult, sim_code: int, sim_finding: str, sim_rules: set[str]
) -> int:
    """Replay ``scenario`` over RabbitMQ; ``result``, ``sim_code``, ``sim_finding`` and
    ``sim_rules`` (the rules its audit found broken) are the simulator's replay."""
    if args.step_timeout is None:
        args.step_timeout = DEFAULT_STEP_TIMEOUT
    if args.stall_timeout is None:
        args.stall_timeout = DEFAULT_STALL_TIMEOUT
    for flag, value in (("--step-timeout", args.step_timeout), ("--stall-timeout", args.stall_timeout)):
        if not 0 < value <= MAX_TIMEOUT:  # nan and inf too: a wait that never ends, or overflows
            return fail(f"{flag} must be more than 0 and at most {MAX_TIMEOUT:,} seconds, got {value:g}")
    if args.rounds is not None and scenario.loop is None:  # nothing to repeat: not silently ignored
        return fail("--rounds applies to a scenario with a loop; this one has none")
    rounds = DEFAULT_ROUNDS if args.rounds is None else args.rounds
    if result.loop is not None and not result.loop["closes"]:
        return fail("the scenario's loop does not return to the world where it began: it is not a cycle")
    played, reference, cycle_from = scenario, result, None
    try:
        if scenario.loop is not None:
            played, cycle_from = unroll(scenario, rounds)
            reference = replay_scenario(played)  # the simulator's events for every round
        script = compile_script(played, reference)
        script.cycle_from = cycle_from
        plan = make_plan(
            scenario.algorithm,
            scenario.processes,
            scenario.options,
            seed=scenario.seed,
            amqp_url=args.amqp_url,
            stall_timeout=args.stall_timeout,
            trace=args.trace,
            run_id=args.run_id,
            logs=args.logs,
        )
    except (ConfigError, ScenarioError) as exc:
        return fail(str(exc))
    problem = broker_problem(plan.amqp_url)
    if problem:
        return fail(problem, code=EXIT_INCOMPLETE)
    plan.participant_env = {"DIRECTED": "true"}
    plan.duplicates = any(step.op == "duplicate" for step in played.steps)  # declared in the header
    print(f"simulator: {sim_finding} (exit {sim_code})")
    print(f"replaying over RabbitMQ as run {plan.run_id}, the director holding every message", flush=True)
    summary: dict = {}
    types = list(reference.setup.codec.types)
    code, seen = direct(plan, dict(reference.setup.names), types, script, args.step_timeout, summary)
    unrolled = ""
    if cycle_from is not None:
        cycle = len(scenario.steps) - (cycle_from - 1)
        stem = counted(cycle_from - 1, "step")
        unrolled = f" (a stem of {stem}, then the {cycle}-step cycle {_times(rounds)})"
    print(
        f"over RabbitMQ: {seen.steps} of {len(played.steps)} steps played{unrolled}, "
        f"{seen.released} messages released by the director"
    )
    print("entered, in order: " + (", ".join(seen.entered) or "nobody"))
    if seen.diverged:
        said = seen.diverged.removeprefix("diverged")
        print(f"DIVERGED{said} — the real run did not follow the scenario (not judged against it)")
        return EXIT_INCOMPLETE
    rules = {v[1:].split("]", 1)[0] for v in summary.get("violations") or [] if v.startswith("[")}
    if result.deadlock and code == EXIT_INCOMPLETE:  # followed every step and stalled where it did
        print(f"DEADLOCK, as in the simulator: nothing can move; not finished: {', '.join(result.deadlock)}")
        code = EXIT_FINDING
    waiting = starvation_shown(result, seen)
    if waiting and code == EXIT_INCOMPLETE:
        print(
            f"LIVENESS, as in the simulator: the cycle played {_times(rounds)} on the real "
            f"participants with no entry of {', '.join(waiting)}, waiting throughout: the "
            "starvation the simulator found (there the cycle returns to the world where it "
            "began: a run can repeat it forever)"
        )
        code = EXIT_FINDING
    # the same outcome, and every rule the simulator's audit found broken broken here too
    same = (code == EXIT_FINDING) == (sim_code == EXIT_FINDING) and sim_rules <= rules
    print(
        f"reproduces the simulator's outcome: {'yes' if same else 'NO'} (real run exit {code}"
        + (f"; broken: {', '.join(sorted(rules))}" if rules else "")
        + ")"
    )
    if not same and code == EXIT_SAFE:
        return EXIT_INCOMPLETE  # a finding the real run did not show: never SAFE
    return code


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def starvation_shown(result: ReplayResult, seen: Directed) -> list[str]:
    """Who starves on the real participants as in the simulator: the processes that wait
    throughout the scenario's loop, when the simulator found it a starvation (a closed, weakly fair
    cycle) and the real run played every round of it (``seen``: not diverged) with none of them
    entering; empty otherwise."""
    loop = result.loop
    if not loop or not loop["closes"] or loop["unfair"] or seen.diverged or seen.stem_entered is None:
        return []
    waiting = list(loop["waiting"])
    return [] if set(seen.entered[seen.stem_entered :]) & set(waiting) else waiting
