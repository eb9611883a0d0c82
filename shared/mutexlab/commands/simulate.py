"""``mutexlab simulate <family>``: one seeded run in the deterministic simulator, summarised and audited.

One subcommand per registered family (``bees``, ``elves``, ``mutex`` ...), its flags and its
summary declared by the family's ``spec.Flags``; ``--algorithm`` names a registered algorithm of
the family, a dotted module or a ``.py`` file. How the run is held follows the family's flags:

* ``streamed``: no trace is held — the audit is fed as the run goes (``--no-audit``: none), and
  ``--report`` keeps only the window its page draws (docs/architecture.md#scaling);
* ``measured``: every process draws its dwell times from its own stream (the same workload for
  every algorithm with the same seed: ``compare``), and the run is measured;
* otherwise the trace is held and audited at the end; with ``partial`` a refused input ends
  the run with a summary saying so (``error``), else it stops the command (exit 1).

Exit codes (``EXIT_CODES``, what ``--help`` says, docs/exit-codes.md): 0 when the run finished
and the audit finds the trace safe; 1 when the audit finds a safety violation, an input was
refused or a handler raised (a finding: process, input, state, exception, the line of the
algorithm's file, and the seed that reaches it again); 2 on bad arguments; 3 when the run stalls or
hits the event limit (or the audit finds it unfinished) without a safety violation; 4 a bug in
mutexlab itself.
"""

from __future__ import annotations

from dataclasses import replace

from .. import memory
from ..audit import numbered, verify_events
from ..audit.seen import note_seen
from ..protocol import ProtocolError
from ..protocols.registry import Solution, build_setup
from ..runs import run_measured
from ..setups import ConfigError, NoName
from ..sim import SimConfig, Simulation
from ..spec import Flags, Simulated
from ..trace import TraceWriter
from ..waiting import WaitsRaised
from .common import add_json_argument, add_trace_argument, fail, print_json, seen
from .flags import SetupArgs, add_dwell_arguments, add_simulator_arguments, resolved
from .longrun import (
    add_events_argument,
    add_memory_argument,
    audit_trace,
    check_memory,
    event_limit,
    growth_watch,
    limit_reached,
    progress_bar,
)
from .registry import Command, family_scenarios
from .reporting import add_report_argument, write_report_if_asked
from .simulating import (
    add_fault_arguments,
    audit_summary,
    exit_code,
    fault_config,
    fault_line,
    outcome_lines,
    unexplained,
)

EXIT_CODES = (
    "exit codes: 0 the run finished and the audit found it safe; 1 a finding: a safety violation, "
    "a refused input, or a handler of the algorithm that raised (named with its process, input, "
    "state, exception, line, and the seed that reaches it again); 2 bad arguments or options; "
    "3 the run stalled or hit its event or memory limit (--max-events, --ignore-memory; or the "
    "audit found it unfinished) without a violation; 4 an internal error of mutexlab"
)


def arguments(flags: Flags):
    def add(p) -> None:
        p.epilog = EXIT_CODES
        add_simulator_arguments(p, flags.seed)
        add_dwell_arguments(p, {d.kind: d.simulated for d in flags.dwell})
        add_trace_argument(p)
        if flags.streamed:
            p.add_argument(
                "--no-audit",
                action="store_true",
                help="do not audit the run (the audit is fed as the run goes and holds no trace; "
                "ignored with --trace or --report)",
            )
        add_json_argument(p, "summary")
        add_report_argument(p)
        add_fault_arguments(p)
        add_memory_argument(p)
        add_events_argument(p)

    return add


def _show(args, run: Simulated) -> dict:
    flags: Flags = args.flags
    summary = flags.summarise(run)
    if run.common.get("incomplete"):
        summary["incomplete"] = run.common["incomplete"]
    if run.common.get("unexplained"):
        summary["unexplained"] = run.common["unexplained"]
    if args.json:
        print_json(summary)
    else:
        print("\n".join(flags.render(run, summary) + outcome_lines(summary)))
    return summary


def _common(args, result, verdict, guard: int, allowance: int | None) -> dict:
    duplicates = result.duplicates_dropped if result is not None else 0
    return {
        "faults": fault_line(args, duplicates),
        "audit": audit_summary(verdict),
        "trace": args.trace,
        "incomplete": limit_reached(result, guard, allowance),
    }


def run(args) -> int:
    flags: Flags = args.flags
    try:
        scenario = args.scenario_config(args)
        solution = resolved(args, scenario, "simulate")
    except ConfigError as exc:
        return fail(str(exc))
    spec = solution.spec
    messages = memory.messages(spec, scenario.processes, scenario.options)
    # Every process keeps P² of state already at setup: the check comes first.
    # a streamed run's audit keeps its holding intervals (not under --no-audit alone)
    audit = not flags.streamed or bool(args.trace or args.report or not args.no_audit)
    prediction = memory.predict(
        messages,
        scenario.processes + len(spec.fixed_roles),
        audited=not flags.streamed,
        intervals=memory.intervals(flags, scenario.processes, scenario.options) if audit else 0,
    )
    refused = check_memory(args, prediction, flags.smaller)
    if refused:
        return refused
    dwell = {d.kind: getattr(args, d.kind) for d in flags.dwell}
    intervals = memory.intervals(flags, scenario.processes, scenario.options)
    guard = event_limit(args, flags.streamed, messages, intervals, prediction.processes)
    allowance = None if args.ignore_memory else memory.growth_allowance(prediction, memory.available_bytes())
    if flags.measured:
        return _measured(args, solution, scenario, messages, dwell, guard, allowance)
    try:
        setup = build_setup(solution, scenario.processes, scenario.options, args.seed)
        config = SimConfig(
            seed=args.seed, delay=args.delay, dwell=dwell, max_events=guard, **fault_config(args)
        )
    except ConfigError as exc:
        return fail(str(exc))
    run = Simulated(spec, setup, scenario.processes, scenario.options, None, args.seed, args.delay, dwell, {})
    if flags.streamed:
        return _streamed(args, run, config, messages, allowance)
    return _kept(args, run, config, messages, allowance)


def _streamed(args, run: Simulated, config: SimConfig, messages: float, allowance: int | None) -> int:
    audit = bool(args.trace) or bool(args.report) or not args.no_audit
    window = None
    if args.report:
        from ..report import WindowFeed  # the page's code is imported only for a page

        window = WindowFeed()
    trace, auditor = audit_trace(run.setup, args.trace, window) if audit else (None, None)
    if isinstance(trace, str):
        return fail(trace)
    raised = None
    try:
        try:
            with progress_bar(args, messages, run.spec.name) as progress:
                # Without a written trace the audit reads no message bodies: none are made.
                simulation = Simulation(
                    run.setup, config, trace, trace_bodies=bool(args.trace or args.report)
                )
                simulation.progress = progress
                simulation.watch = growth_watch(allowance)
                try:
                    result = simulation.run()
                except WaitsRaised as exc:  # the run ended; its stall cannot be explained
                    if exc.result is None:
                        raise
                    result, raised = exc.result, exc
                if trace is not None:
                    trace.close(ended=True)
        finally:
            if trace is not None:
                trace.close()
    except (ProtocolError, ConfigError) as exc:  # stopped midway: what it broke before is said too
        raise note_seen(exc, auditor.verdict if auditor is not None else None) from None
    verdict = auditor.verdict() if auditor is not None else None
    common = _common(args, result, verdict, config.max_events, allowance)
    if raised is not None:
        common["unexplained"] = unexplained(raised, None, args.trace)
    _show(args, replace(run, result=result, common=common))
    code = exit_code(verdict, result.ok, unexplained=raised is not None)
    shown = window.window_of(verdict) if window is not None and verdict is not None else None
    return write_report_if_asked(args, shown, result.stalled, result.states) or code


def _kept(args, run: Simulated, config: SimConfig, messages: float, allowance: int | None) -> int:
    try:
        trace = TraceWriter(args.trace, keep=True)
    except OSError as exc:
        return fail(f"cannot write trace {args.trace}: {exc.strerror}")
    result, error, raised = None, None, None
    try:
        with progress_bar(args, messages, run.spec.name) as progress:
            simulation = Simulation(run.setup, config, trace)
            simulation.progress = progress
            simulation.watch = growth_watch(allowance)
            try:
                result = simulation.run()
            except WaitsRaised as exc:  # the run ended; its stall cannot be explained
                if exc.result is None:
                    raise
                result, raised = exc.result, exc
            trace.close(ended=True)
    except ProtocolError as exc:
        if not args.flags.partial:  # stopped midway: what it broke before is said too
            raise note_seen(exc, trace.kept) from None
        error = str(exc)
    except ConfigError as exc:  # a state of no name, midway: what it broke before is said too
        raise note_seen(exc, trace.kept) from None
    finally:
        trace.close()
    events = numbered(trace.kept)
    verdict = verify_events(events)
    common = _common(args, result, verdict, config.max_events, allowance)
    if raised is not None:
        common["unexplained"] = unexplained(raised, events, None)
    _show(args, replace(run, result=result, common=common, events=events, error=error))
    code = exit_code(
        verdict, result is not None and result.ok, failed=error is not None, unexplained=raised is not None
    )
    stalled, states = (result.stalled, result.states) if result else (None, None)
    return write_report_if_asked(args, trace, stalled, states) or code


def _measured(
    args,
    solution: Solution,
    scenario: SetupArgs,
    messages: float,
    dwell: dict,
    guard: int,
    allowance: int | None,
) -> int:
    spec = solution.spec
    raised = None
    try:
        with progress_bar(args, messages, spec.name) as progress:
            outcome = run_measured(
                solution,
                scenario.processes,
                scenario.options,
                args.seed,
                args.delay,
                dwell,
                args.trace,
                {**fault_config(args), "max_events": guard},
                progress,
                growth_watch(allowance),
            )
    except WaitsRaised as exc:  # the run ended, audited; its stall cannot be explained
        if exc.result is None:
            return fail(str(exc))
        outcome, raised = exc.result, exc
    except ConfigError as exc:
        if seen(exc) or isinstance(exc, NoName):  # a state of no name: the command line says it (exit 1
            raise  # after a violation, both said; else exit 2, in --json the stop's shape)
        return fail(str(exc))
    except OSError as exc:
        return fail(f"cannot write trace {args.trace}: {exc.strerror}")
    result = outcome.result
    common = _common(args, result, outcome.verdict, guard, allowance)
    if raised is not None:
        common["unexplained"] = unexplained(raised, outcome.events, None)
    run = Simulated(
        spec,
        outcome.setup,
        scenario.processes,
        scenario.options,
        result,
        args.seed,
        args.delay,
        dwell,
        common,
        outcome.events,
        outcome.metrics,
    )
    _show(args, run)
    return write_report_if_asked(args, outcome.events, result.stalled, result.states) or exit_code(
        outcome.verdict, result.ok, unexplained=raised is not None
    )


COMMAND = Command(
    "simulate",
    "run a scenario in the deterministic simulator",
    "Seeded, deterministic simulation in virtual time (mean message delay = 1). " + EXIT_CODES + ".",
    scenarios=family_scenarios(run, arguments, description=lambda f: f.description),
)
