"""``mutexlab run bees|elves|mutex``: the real thing over RabbitMQ, without Docker.

Starts the monitor and every participant as its own OS process — the very entry points
docker compose runs (``services/<role>/main.py``) — against a running broker, passes the
monitor's progress, verdict and summary through, stops and reaps its processes, deletes the
run's exchanges and queues, and returns the monitor's exit code (0 safe and complete,
1 violation, 2 bad arguments, 3 stalled or the broker unusable). Every argument is validated
(including building the setup) before the broker is touched.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ..protocols.registry import CLASSIC
from ..setup import ConfigError
from ..transport.membership import build_setup, role_of
from ..transport.settings import check_run_id, check_url
from ..report.options import add_report_argument, write_report_if_asked
from .common import fail, non_negative, positive, seconds

DEFAULT_URL = "amqp://127.0.0.1:5672/%2F"   # no credentials here: pika's defaults apply (guest on localhost)
SERVICES = Path(__file__).resolve().parents[3] / "services"


def service_command(role: str) -> list[str]:
    """The command that runs ``role``: the repository's entry point, as compose runs it."""
    script = SERVICES / role / "main.py"
    if script.is_file():
        return [sys.executable, str(script)]
    return [sys.executable, "-m", "mutexlab.services", role]   # an installed (non-editable) package


def _key_value(text: str) -> tuple[str, float]:
    import argparse

    kind, sep, value = text.partition("=")
    if not sep or not kind:
        raise argparse.ArgumentTypeError(f"expected KIND=SECONDS, got {text!r}")
    return kind, seconds(value)


def _timeout(text: str) -> float:
    """Seconds > 0: a stall or join timeout of 0 could never be met."""
    import argparse

    value = seconds(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0 seconds, got {text}")
    return value


def _option(text: str) -> tuple[str, object]:
    import argparse

    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE (VALUE as JSON), got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def _common(p) -> None:
    p.add_argument("--seed", type=non_negative, default=0, help="seed for make_setup (initial clocks, plans)")
    p.add_argument("--amqp-url", default=None,
                   help=f"broker URL (default: $AMQP_URL, else {DEFAULT_URL.replace('%', '%%')})")
    p.add_argument("--run-id", default=None, help="run id naming the exchange and queues (default: random)")
    p.add_argument("--trace", metavar="FILE", help="the monitor writes the trace (JSON Lines) here")
    p.add_argument("--dwell", type=seconds, default=0.1, metavar="SECONDS",
                   help="how long every dwell (rest, flower, cs, think ...) lasts, in seconds (default 0.1)")
    p.add_argument("--dwell-kind", type=_key_value, action="append", default=[], metavar="KIND=SECONDS",
                   help="override one dwell kind, e.g. --dwell-kind flower=0.5 (repeatable)")
    p.add_argument("--stall-timeout", type=_timeout, default=15.0, metavar="SECONDS",
                   help="no progress for this long ends the run as stalled (default 15)")
    p.add_argument("--join-timeout", type=_timeout, default=60.0, metavar="SECONDS",
                   help="all participants must have joined within this time (default 60)")
    p.add_argument("--logs", metavar="DIR", help="keep every process's log in DIR (default: a temporary "
                                                "directory, kept only when the run fails)")
    p.add_argument("--keep", action="store_true", help="leave the run's exchanges and queues on the broker")
    p.add_argument("--json", action="store_true", help="print the monitor's summary as one JSON object")
    add_report_argument(p)


def register(sub) -> None:
    p = sub.add_parser("run", help="run a scenario over RabbitMQ, one OS process per participant",
                       description="Start the monitor and every participant as separate processes against a "
                                   "running RabbitMQ; print the monitor's verdict and summary. Exit 0 safe and "
                                   "complete, 1 violation, 2 bad arguments, 3 stalled or broker unusable.")
    group = p.add_subparsers(dest="scenario", metavar="SCENARIO", required=True)

    bees = group.add_parser("bees", help="the mason bees: P bees, K flowers, T reeds")
    bees.add_argument("--bees", "-P", type=positive, default=10, metavar="P", help="number of bees (default 10)")
    bees.add_argument("--flowers", "-K", type=positive, default=3, metavar="K", help="flowers (default 3)")
    bees.add_argument("--reeds", "-T", type=positive, default=3, metavar="T", help="reeds (default 3)")
    bees.add_argument("--eggs", type=positive, default=5, help="eggs per bee (default 5)")
    bees.add_argument("--cocoons", type=positive, default=15, help="cocoons per reed (default 15)")
    _common(bees)
    bees.set_defaults(func=run, algorithm="bees")

    elves = group.add_parser("elves", help="the hamster killers: a mayor and N elves")
    elves.add_argument("--elves", "-N", type=positive, default=4, help="number of elves (default 4)")
    elves.add_argument("--rounds", type=positive, default=None, help="rounds of contracts")
    elves.add_argument("--contracts", type=positive, default=None, help="contracts per round")
    elves.add_argument("--pins", type=positive, default=None, help="safety pins in total")
    elves.add_argument("--poison", type=positive, default=None, help="poison portions in total")
    elves.add_argument("--hamsters", default=None, metavar="LOW-HIGH", help="hamsters per contract, e.g. 1-5")
    elves.add_argument("--pins-per-elf", type=positive, default=None, help="pins an elf needs")
    elves.add_argument("--poison-per-hamster", type=positive, default=None, help="poison portions per hamster")
    for kind, what in (("work", "an elf works on a contract"), ("rest", "between a contract done and the next "
                                                                        "request"), ("pause", "the mayor waits between rounds")):
        elves.add_argument(f"--{kind}", type=seconds, default=None, metavar="SECONDS",
                           help=f"seconds {what} (default: --dwell)")
    _common(elves)
    elves.set_defaults(func=run, algorithm="elves")

    mutex = group.add_parser("mutex", help="a classic algorithm on N nodes")
    mutex.add_argument("--algorithm", "-a", default="ricart-agrawala",
                       help=f"one of {', '.join(CLASSIC)} (default ricart-agrawala), or a module path "
                            "offering make_setup")
    mutex.add_argument("--nodes", "-N", type=positive, default=5, help="number of nodes (default 5)")
    mutex.add_argument("--requests", "-M", "-r", type=positive, default=3, metavar="M",
                       help="critical-section requests per node (default 3)")
    mutex.add_argument("--think", type=seconds, default=None, metavar="SECONDS",
                       help="seconds before each request (default: --dwell)")
    mutex.add_argument("--cs", type=seconds, default=None, metavar="SECONDS",
                       help="seconds inside the critical section (default: --dwell)")
    mutex.add_argument("--option", "-o", type=_option, action="append", default=[], metavar="KEY=JSON",
                       help="an algorithm option, VALUE as JSON (e.g. -o token_holder=2); repeatable")
    mutex.add_argument("--options", metavar="FILE.json", help="algorithm options from a JSON object file")
    _common(mutex)
    mutex.set_defaults(func=run)


@dataclass
class Plan:
    """Everything one run needs; validated before any process starts."""

    algorithm: str
    processes: int
    options: dict
    seed: int = 0
    amqp_url: str = DEFAULT_URL
    run_id: str = field(default_factory=lambda: "run-" + uuid.uuid4().hex[:10])
    dwell: float = 0.1
    dwell_times: dict = field(default_factory=dict)
    stall_timeout: float = 15.0
    join_timeout: float = 60.0
    trace: str | None = None
    logs: str | None = None
    keep: bool = False
    extra_participants: dict[str, int] = field(default_factory=dict)   # role -> extra processes (tests)

    def roles(self) -> list[str]:
        """One entry per participant process to start."""
        setup = build_setup(self.algorithm, self.processes, self.options, self.seed)
        roles = [role_of(setup.names[p]) for p in sorted(setup.names)]
        for role, extra in self.extra_participants.items():
            roles += [role] * extra
        return roles

    def names(self) -> list[str]:
        setup = build_setup(self.algorithm, self.processes, self.options, self.seed)
        return list(setup.names.values())


def plan_from_args(args) -> Plan:
    if args.scenario == "bees":
        processes = args.bees
        options = {"flowers": args.flowers, "reeds": args.reeds, "eggs": args.eggs, "cocoons": args.cocoons}
        algorithm = "bees"
    elif args.scenario == "elves":
        processes = args.elves
        options = {k: v for k, v in {"rounds": args.rounds, "contracts": args.contracts, "pins": args.pins,
                                     "poison": args.poison, "pins_per_elf": args.pins_per_elf,
                                     "poison_per_hamster": args.poison_per_hamster}.items() if v is not None}
        if args.hamsters is not None:
            low, _, high = args.hamsters.partition("-")
            try:
                options["hamsters"] = [int(low), int(high or low)]
            except ValueError:
                raise ConfigError(f"--hamsters must be LOW-HIGH, got {args.hamsters!r}") from None
        algorithm = "elves"
    else:
        from .simulate_mutex import collect_options

        processes = args.nodes
        options = {"requests": args.requests, **collect_options(args)}
        algorithm = args.algorithm
        if algorithm not in CLASSIC and "." not in algorithm:
            raise ConfigError(f"unknown classic algorithm {algorithm!r}; choose one of: {', '.join(CLASSIC)}")
    url = args.amqp_url or os.environ.get("AMQP_URL") or DEFAULT_URL
    try:
        check_url(url)
        run_id = check_run_id(args.run_id) if args.run_id else "run-" + uuid.uuid4().hex[:10]
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    for what, path in (("trace", args.trace), ("report", args.report)):
        if path and not Path(path).resolve().parent.is_dir():
            raise ConfigError(f"cannot write the {what} {path}: directory {Path(path).resolve().parent} "
                              "does not exist")
    dwell_times = {kind: getattr(args, kind) for kind in ("work", "rest", "pause", "think", "cs")
                   if getattr(args, kind, None) is not None}
    dwell_times.update(dict(args.dwell_kind))
    plan = Plan(algorithm, processes, options, args.seed, url, run_id, args.dwell, dwell_times,
                args.stall_timeout, args.join_timeout, args.trace, args.logs, args.keep)
    plan.roles()   # builds the setup: a bad option is refused here, before the broker is touched
    return plan


def run(args) -> int:
    try:
        plan = plan_from_args(args)
    except ConfigError as exc:
        return fail(str(exc))
    problem = broker_problem(plan.amqp_url)
    if problem:
        return fail(problem, code=3)
    if args.report and not plan.trace:   # the report is built from the monitor's trace: keep it beside
        plan.trace = str(Path(args.report).with_suffix(".jsonl"))
    summary: dict = {}
    code = execute(plan, json_out=args.json, summary=summary)
    if args.report and summary.get("trace"):
        stalled = {name: info.get("waiting", {}) for name, info in (summary.get("stalled") or {}).items()}
        return write_report_if_asked(args, summary["trace"], stalled or None, summary.get("states")) or code
    return code


def broker_problem(url: str) -> str | None:
    """One quick connection attempt, so a missing broker is reported at once, not after timeouts."""
    import pika

    from ..transport.rabbit import redact

    params = pika.URLParameters(url)
    params.socket_timeout = params.blocked_connection_timeout = 5
    params.connection_attempts = 1
    try:
        pika.BlockingConnection(params).close()
    except pika.exceptions.AMQPError as exc:
        return (f"cannot use RabbitMQ at {redact(url)}: {exc!r} — is it running? "
                "(locally: rabbitmq-server -detached; or pass --amqp-url / set AMQP_URL)")
    return None


def execute(plan: Plan, json_out: bool = False, out=None, summary: dict | None = None) -> int:
    """Start the monitor and the participants, wait for the verdict, clean up; the monitor's exit code.

    ``summary``, when given, is filled with the monitor's summary (its JSON form)."""
    out = out or sys.stdout
    roles = plan.roles()
    logs = Path(plan.logs) if plan.logs else Path(tempfile.mkdtemp(prefix=f"mutexlab-{plan.run_id}-"))
    logs.mkdir(parents=True, exist_ok=True)
    summary_path = logs / "summary.json"
    base = dict(os.environ, AMQP_URL=plan.amqp_url, RUN_ID=plan.run_id, JOIN_TIMEOUT=str(plan.join_timeout),
                PYTHONUNBUFFERED="1")
    base.pop("DWELL", None)
    base.pop("DWELL_TIMES", None)
    monitor_env = dict(base, ALGORITHM=plan.algorithm, PROCESSES=str(plan.processes),
                       OPTIONS=json.dumps(plan.options), SEED=str(plan.seed), DWELL=str(plan.dwell),
                       DWELL_TIMES=json.dumps(plan.dwell_times), STALL_TIMEOUT=str(plan.stall_timeout),
                       SUMMARY_JSON=str(summary_path), CLEANUP="false" if plan.keep else "true")
    if plan.trace:
        monitor_env["TRACE"] = str(Path(plan.trace).resolve())
    else:
        monitor_env.pop("TRACE", None)
    procs: list[tuple[str, subprocess.Popen]] = []
    handles = []
    code = 3
    try:
        monitor_log = open(logs / "monitor.log", "w")
        handles.append(monitor_log)
        monitor_out = None
        if json_out:    # the monitor's own text goes to a file, written as it goes (the JSON to stdout)
            monitor_out = open(logs / "monitor.out", "w")
            handles.append(monitor_out)
        monitor = subprocess.Popen(service_command("monitor"), env=monitor_env, stdout=monitor_out,
                                   stderr=monitor_log, text=True)
        procs.append(("monitor", monitor))
        for n, role in enumerate(roles, 1):
            handle = open(logs / f"{role}-{n}.log", "w")
            handles.append(handle)
            proc = subprocess.Popen(service_command(role), env=base, stdout=handle, stderr=subprocess.STDOUT)
            procs.append((f"{role}-{n}", proc))
        code = monitor.wait()
        monitor_stdout = (logs / "monitor.out").read_text() if json_out else ""
        result = json.loads(summary_path.read_text()) if summary_path.exists() else None
        if summary is not None and result is not None:
            summary.update(result)
        if json_out and result is not None:
            json.dump(result, out, indent=2)
            out.write("\n")
        elif json_out:
            print(monitor_stdout, file=out)
    except KeyboardInterrupt:
        code = 130
    finally:
        _reap(procs)
        for handle in handles:
            handle.close()
        if not plan.keep:
            try:
                from ..transport.rabbit import delete_run

                delete_run(plan.amqp_url, plan.run_id, plan.names())
            except Exception:  # noqa: BLE001 - the monitor normally cleaned up already
                pass
    failed = [name for name, proc in procs[1:] if proc.returncode not in (0, None)]
    if code != 0 or failed or plan.logs:
        if failed:
            print(f"participants that failed: {', '.join(failed)}", file=sys.stderr)
        print(f"process logs: {logs}", file=sys.stderr)
    else:
        shutil.rmtree(logs, ignore_errors=True)
    return code


def _reap(procs: list[tuple[str, subprocess.Popen]], grace: float = 5.0) -> None:
    """Participants exit on the monitor's stop; anything left is terminated, then killed."""
    deadline = time.monotonic() + grace
    for _, proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)
    for _, proc in procs:
        try:
            proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
