"""``mutexlab run <family>``: the real thing over RabbitMQ, without Docker.

Parses the arguments into a plan and hands it to the process supervisor
(``mutexlab.transport.supervisor``): the monitor and every participant as its own OS process
against a running broker. Returns the monitor's exit code (0 safe and complete, 1 violation or a
rejected input, 2 bad arguments, 3 stalled or the broker unusable), or 128 + N when signal N
(SIGTERM, SIGINT, SIGHUP) stopped the run early, its processes stopped and its queues deleted. Every argument is validated (including
building the setup) before the broker is touched.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from ..findings import Stall
from ..setups import ConfigError
from ..spec import Flags
from ..transport import preflight
from ..transport.headroom import MANAGEMENT_ENV, MANAGEMENT_PORT
from ..transport.settings import DELIVERIES
from ..transport.supervisor import DEFAULT_URL, Plan, execute, make_plan
from .common import add_json_argument, cut_short, fail, non_negative, positive, seconds
from .flags import resolved
from .registry import Command, family_scenarios
from .reporting import add_report_argument, write_report_if_asked


def _key_value(text: str) -> tuple[str, float]:
    kind, sep, value = text.partition("=")
    if not sep or not kind:
        raise argparse.ArgumentTypeError(f"expected KIND=SECONDS, got {text!r}")
    return kind, seconds(value)


def _timeout(text: str) -> float:
    """Seconds > 0: a stall or join timeout of 0 could never be met."""
    value = seconds(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0 seconds, got {text}")
    return value


# Each participant is a process with its own broker connection: beyond this the machine's memory
# and the broker's file descriptors run out (a default RabbitMQ holds about a thousand
# connections). Raised, for a bigger machine and broker, with --max-processes. Where the broker's
# management API answers, the connections it has room for are asked too (transport/headroom.py).
MAX_PROCESSES = 100


def _common(p) -> None:
    p.add_argument(
        "--max-processes",
        type=positive,
        default=MAX_PROCESSES,
        metavar="N",
        help=f"refuse a run of more processes, before anything starts (default {MAX_PROCESSES}: each is a "
        "process with a broker connection)",
    )
    p.add_argument("--seed", type=non_negative, default=0, help="seed for make_setup (initial clocks, plans)")
    p.add_argument(
        "--amqp-url",
        action="append",
        default=None,
        help=f"broker URL (default: $AMQP_URL, else {DEFAULT_URL.replace('%', '%%')}); a cluster: repeat it "
        "once per node, or give the nodes' URLs comma-separated (docs/cluster.md)",
    )
    p.add_argument(
        "--management-url",
        metavar="URL",
        help="RabbitMQ's management API, asked how many more connections the broker can hold before "
        f"anything starts (default: ${MANAGEMENT_ENV}, else port {MANAGEMENT_PORT} of the broker's "
        "host; not answering: --max-processes alone applies)",
    )
    p.add_argument("--run-id", default=None, help="run id naming the exchange and queues (default: random)")
    p.add_argument("--trace", metavar="FILE", help="the monitor writes the trace (JSON Lines) here")
    p.add_argument(
        "--dwell",
        type=seconds,
        default=0.1,
        metavar="SECONDS",
        help="how long every dwell (rest, flower, cs, think ...) lasts, in seconds (default 0.1)",
    )
    p.add_argument(
        "--dwell-kind",
        type=_key_value,
        action="append",
        default=[],
        metavar="KIND=SECONDS",
        help="override one dwell kind, e.g. --dwell-kind flower=0.5 (repeatable)",
    )
    p.add_argument(
        "--stall-timeout",
        type=_timeout,
        default=15.0,
        metavar="SECONDS",
        help="no progress for this long ends the run as stalled (default 15)",
    )
    p.add_argument(
        "--join-timeout",
        type=_timeout,
        default=60.0,
        metavar="SECONDS",
        help="all participants must have joined within this time (default 60)",
    )
    p.add_argument(
        "--logs",
        metavar="DIR",
        help="keep every process's log in DIR (default: a temporary directory, kept only when the run fails)",
    )
    p.add_argument(
        "--keep",
        action="store_true",
        help="leave the run's exchanges and queues on the broker (they expire $QUEUE_EXPIRES seconds, "
        "default 300, after the monitor ends; QUEUE_EXPIRES=0: never)",
    )
    p.add_argument(
        "--delivery",
        choices=DELIVERIES,
        default=None,
        help="persistent (default: $DELIVERY, else persistent): durable queues, persistent confirmed "
        "messages, survives a broker "
        "restart; transient: nothing on disk, end-to-end retransmission, survives lost and duplicated "
        "messages and reconnects but not a broker restart (docs/wire.md#delivery-modes)",
    )
    p.add_argument(
        "--node",
        metavar="CMD",
        help="every node is this program, speaking the node protocol (docs/test-any-program.md); "
        "it replaces --algorithm (the problems `mutexlab test` takes)",
    )
    add_json_argument(p, "monitor's summary")
    add_report_argument(p)


def _dwell_flags(p, what: dict[str, str]) -> None:
    """``--<kind>`` seconds for each dwell kind → what it times; unset, ``--dwell`` applies."""
    for kind, text in what.items():
        p.add_argument(
            f"--{kind}",
            type=seconds,
            default=None,
            metavar="SECONDS",
            help=f"seconds {text} (default: --dwell)",
        )


def arguments(flags: Flags):
    def add(p) -> None:
        _dwell_flags(p, {d.kind: d.real for d in flags.dwell})
        _common(p)
        # --node stands for --algorithm: a family without a default solution (kmutex) asks for one later
        for action in p._actions:  # noqa: SLF001 - argparse offers no public way to relax a parent's flag
            if action.dest == "algorithm":
                action.required = False

    return add


def plan_from_args(args) -> Plan:
    """The supervisor's plan for the parsed arguments; ConfigError on a bad setting."""
    delivery = args.delivery or os.environ.get("DELIVERY") or "persistent"  # as the services read it
    if delivery not in DELIVERIES:
        raise ConfigError(f"DELIVERY={delivery!r} in the environment: persistent or transient")
    if getattr(args, "node", None) is not None:
        from ..director.solution import program_algorithm  # a program's run alone needs the director

        args.algorithm = program_algorithm(args.flags.command, args.node)
    elif args.algorithm is None:
        raise ConfigError(f"run {args.flags.command} needs --algorithm NAME (or --node CMD, a program)")
    scenario = args.scenario_config(args)
    if scenario.processes > args.max_processes:  # before the broker or any process is touched
        raise ConfigError(
            f"{scenario.processes:,} processes: at most {args.max_processes:,} (--max-processes; each is a "
            "process with its own broker connection, and the machine's memory and the broker's file "
            "descriptors are finite)"
        )
    solution = resolved(args, scenario, "run")
    dwell_times = {
        d.kind: getattr(args, d.kind) for d in args.flags.dwell if getattr(args, d.kind) is not None
    }
    dwell_times.update(dict(args.dwell_kind))
    return make_plan(
        scenario.algorithm,
        scenario.processes,
        scenario.options,
        seed=args.seed,
        amqp_url=",".join(args.amqp_url) if args.amqp_url else None,
        run_id=args.run_id,
        dwell=args.dwell,
        dwell_times=dwell_times,
        stall_timeout=args.stall_timeout,
        join_timeout=args.join_timeout,
        trace=args.trace,
        logs=args.logs,
        keep=args.keep,
        outputs={"report": args.report},
        delivery=delivery,
        solution=solution,
    )


def run(args) -> int:
    try:
        plan = plan_from_args(args)
    except ConfigError as exc:
        return fail(str(exc))
    try:  # the broker's room and reachability, asked while the services' modules are imported
        too_many, problem = preflight.check(plan, args.management_url)
    except ValueError as exc:
        return fail(str(exc))
    if too_many:
        return fail(too_many)
    if problem:
        return fail(problem, code=3)
    if args.report and not plan.trace:  # the report is built from the monitor's trace: keep it beside
        plan.trace = str(Path(args.report).with_suffix(".jsonl"))
    summary: dict = {}
    started = time.time()
    code = execute(plan, json_out=args.json, summary=summary)
    if code >= 128 and (left := cut_short(plan.trace, started)):  # stopped by a signal
        print(f"mutexlab run: {left}", file=sys.stderr)
    if args.report and summary.get("trace"):
        waits = {name: info.get("waiting", {}) for name, info in (summary.get("stalled") or {}).items()}
        stalled = Stall(waits, summary.get("holding"), summary.get("wants")) if waits else None
        return write_report_if_asked(args, summary["trace"], stalled, summary.get("states")) or code
    return code


COMMAND = Command(
    "run",
    "run a scenario over RabbitMQ, one OS process per participant",
    """Start the monitor and every participant as separate processes against a running RabbitMQ; print the
    monitor's verdict and summary. Exit 0 safe and complete, 1 violation or a rejected input, 2 bad
    arguments or a stall the solution's waiting_for() cannot explain (it raised), 3 stalled, broker unusable, the monitor killed (no verdict) or a participant failed (a
    nonzero exit: the run cannot vouch for it; a violation stays 1), 4 the monitor failed; SIGTERM, SIGINT or SIGHUP stops every process of the run and
    deletes its queues, exit 128 + the signal's number (143, 130, 129).""",
    scenarios=family_scenarios(run, arguments),
)
