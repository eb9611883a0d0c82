"""The process supervisor behind ``mutexlab run``: one run over RabbitMQ, without Docker.

Starts the monitor and every participant as its own OS process — the very entry points
docker compose runs (``services/<role>/main.py``) — against a running broker, passes the
monitor's progress, verdict and summary through, stops and reaps its processes, deletes the
run's exchanges and queues, and returns the monitor's exit code (docs/exit-codes.md). A monitor that
gives no verdict is named, never passed on (``monitor_failure``): killed by a signal, exit 3; failed
itself, exit 4. ``make_plan`` validates every setting (including building the setup) before the
broker is touched. Each participant's log is ``<name>.log`` after the run (``node-2.log``: the
name the monitor gave the process, by its pid), ``<role>.<pid>.log`` while it runs.

Every service dies with this process, SIGKILL included (spawn.py), and the run's queues and
exchanges expire ``QUEUE_EXPIRES`` seconds after its monitor is gone (topology.py; ``--keep``
leaves them that long): a run killed outright leaves nothing behind for long.

SIGTERM, SIGINT and SIGHUP (``execute`` in the main thread) end the run early: every process it
started is stopped (SIGTERM, then SIGKILL after ``STOP_GRACE`` seconds), the run's queues and
exchanges are deleted, and ``execute`` returns 128 + the signal's number (143, 130, 129). A signal
that comes while the services start is acted on once they all have started (none is left
unknown), a second one while it cleans up does not cut the cleanup short.
"""

from __future__ import annotations

import gc
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from .. import watcher
from ..bus.auth import SECRET_ENV, SECRET_FILE_ENV, new_secret
from ..protocols.registry import Solution, build_setup, canonical, solution
from ..setups import ConfigError
from .membership import role_of
from .settings import QUEUE_EXPIRES, check_run_id, check_url, queue_kind
from .spawn import Forked, can_fork, preload, service_command

DEFAULT_URL = "amqp://127.0.0.1:5672/%2F"  # no credentials here: pika's defaults apply (guest on localhost)
STOPPING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)  # each ends a run early: exit 128 + its number
# The run's exit code when the monitor gave none: killed (incomplete), or failed itself (internal).
EXIT_NO_VERDICT, EXIT_INTERNAL = 3, 4
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # a member's name, as a log's file name
STOP_GRACE = 2.0  # seconds a stopped service has to exit after SIGTERM before SIGKILL


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
    extra_participants: dict[str, int] = field(default_factory=dict)  # role -> extra processes (tests)
    delivery: str = "persistent"  # DELIVERY: persistent or transient (docs/wire.md#delivery-modes)
    # Seconds the run's queues outlive their monitor (QUEUE_EXPIRES, topology.py); 0: for ever.
    queue_expires: float = QUEUE_EXPIRES
    # The run's secret (auth.py), handed to its processes in their environment, never on a command
    # line: a fresh one for every plan (a test may set it, to publish as a process of the run).
    secret: str = field(default_factory=new_secret, repr=False)
    # More environment for the participants alone (``DIRECTED``: mutexlab replay --over-rabbitmq).
    participant_env: dict[str, str] = field(default_factory=dict)
    # The header declares that a message may be delivered twice (a replay with duplicate steps).
    duplicates: bool = False
    # The solution, resolved at the command's edge; else once, when first asked (``resolved``).
    # The services, processes started anew, resolve ``algorithm`` themselves.
    solution: Solution | None = field(default=None, repr=False, compare=False)

    def resolved(self) -> Solution:
        if self.solution is None:
            self.solution = solution(self.algorithm)
        return self.solution

    def roles(self) -> list[str]:
        """One entry per participant process to start."""
        setup = build_setup(self.resolved(), self.processes, self.options, self.seed)
        roles = [role_of(setup.names[p]) for p in sorted(setup.names)]
        for role, extra in self.extra_participants.items():
            roles += [role] * extra
        return roles

    def names(self) -> list[str]:
        setup = build_setup(self.resolved(), self.processes, self.options, self.seed)
        return list(setup.names.values())


def make_plan(
    algorithm: str,
    processes: int,
    options: dict,
    *,
    seed: int = 0,
    amqp_url: str | None = None,
    run_id: str | None = None,
    dwell: float = 0.1,
    dwell_times: dict | None = None,
    stall_timeout: float = 15.0,
    join_timeout: float = 60.0,
    trace: str | None = None,
    logs: str | None = None,
    keep: bool = False,
    outputs: dict[str, str | None] | None = None,
    delivery: str = "persistent",
    solution: Solution | None = None,
) -> Plan:
    """A ``Plan`` whose every setting is checked and whose setup builds; ConfigError otherwise.

    ``amqp_url`` defaults to ``$AMQP_URL``, else ``DEFAULT_URL``; ``run_id`` to a random one.
    ``outputs`` names other files the caller will write (``{"report": path}``): their directory
    must exist, like the trace's."""
    url = amqp_url or os.environ.get("AMQP_URL") or DEFAULT_URL
    try:
        url = check_url(url)  # one node, or a cluster's nodes comma-separated (docs/cluster.md)
        queue_kind(url, os.environ.get("QUEUE_TYPE") or "auto", delivery)  # e.g. quorum with transient
        run_id = check_run_id(run_id) if run_id else "run-" + uuid.uuid4().hex[:10]
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    for what, path in (("trace", trace), *(outputs or {}).items()):
        if path:
            writable_file(what, path)
    if logs:
        writable_dir("logs", logs)
    plan = Plan(
        canonical(algorithm),  # a file by its absolute path: every service finds it
        processes,
        options,
        seed,
        url,
        run_id,
        dwell,
        dict(dwell_times or {}),
        stall_timeout,
        join_timeout,
        trace,
        logs,
        keep,
        delivery=delivery,
        solution=solution,
    )
    plan.queue_expires = queue_expires()
    plan.roles()  # builds the setup: a bad option is refused here, before the broker is touched
    return plan


def queue_expires() -> float:
    """``$QUEUE_EXPIRES`` (seconds ≥ 0) when set, else the default; ConfigError when not a number."""
    text = os.environ.get("QUEUE_EXPIRES") or ""
    if not text:
        return QUEUE_EXPIRES
    try:
        value = float(text) if text.isascii() else -1.0
    except ValueError:
        value = -1.0
    if not 0 <= value <= 86400 * 365:
        raise ConfigError(f"QUEUE_EXPIRES={text!r} in the environment: seconds, 0 to a year")
    return value


def writable_file(what: str, path: str) -> None:
    """``path`` can be written (its directory exists, it is no directory, it opens for writing);
    ConfigError naming ``what`` otherwise. Nothing is left behind: a file it made is removed."""
    target = Path(path)
    if not target.resolve().parent.is_dir():
        raise ConfigError(
            f"cannot write the {what} {path}: directory {target.resolve().parent} does not exist"
        )
    existed = target.exists()
    try:  # never blocks (a FIFO without a reader), never truncates
        os.close(os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o644))
    except OSError as exc:
        raise ConfigError(f"cannot write the {what} {path}: {exc.strerror or exc}") from None
    if not existed:
        target.unlink(missing_ok=True)


def writable_dir(what: str, path: str) -> None:
    """``path`` is (or can be made) a directory to write files in; ConfigError otherwise."""
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise ConfigError(f"cannot write the {what} in {path}: {exc.strerror or exc}") from None


def broker_problem(url: str) -> str | None:
    """One quick connection attempt (to each node of a cluster in turn, until one answers), so a
    missing broker is reported at once, not after timeouts."""
    import pika

    from ..bus.amqp import connect_any, redact

    def quick(params) -> None:
        params.socket_timeout = params.blocked_connection_timeout = 5
        params.connection_attempts = 1

    try:
        connect_any(url, configure=quick)[0].close()
    except (pika.exceptions.AuthenticationError, pika.exceptions.ProbableAuthenticationError):
        # The broker answered and refused the login: "is it running?" would send the user astray.
        return (
            f"RabbitMQ at {redact(url)} refused the login: authentication failed — check the user "
            "and password in --amqp-url / AMQP_URL (the default is guest:guest, allowed only from localhost)"
        )
    except pika.exceptions.AMQPError as exc:
        return (
            f"cannot use RabbitMQ at {redact(url)}: {exc!r} — is it running? "
            "(locally: rabbitmq-server -detached; or pass --amqp-url / set AMQP_URL)"
        )
    return None


class Interrupted(Exception):
    """A stopping signal came (``Stop``): the run ends early."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


class Stop:
    """The supervisor's handlers of ``STOPPING`` while a run goes on (main thread only: elsewhere
    Python cannot install handlers, and the caller handles signals). The first signal raises
    ``Interrupted`` once ``armed`` (at once if armed then, else when ``arm`` is called); later
    ones are remembered, never raised (the cleanup runs to its end)."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.armed = False
        self.raised = False
        self.previous: dict[int, object] = {}

    def __enter__(self) -> Stop:
        import threading

        if threading.current_thread() is threading.main_thread():
            for sig in STOPPING:
                self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]

    def _handle(self, signum: int, frame: object) -> None:
        if self.signum is None:
            self.signum = signum
        if self.armed:
            self._raise()

    def arm(self) -> None:
        self.armed = True
        if self.signum is not None:
            self._raise()

    def disarm(self) -> None:
        self.armed = False

    def _raise(self) -> None:
        if not self.raised and self.signum is not None:
            self.raised = True
            raise Interrupted(self.signum)


def sweep(plan: Plan) -> None:
    """Delete what run ``plan`` declared (not with ``--keep``); name on stderr the queues kept."""
    try:
        from ..bus.topology import delete_run  # pika is imported once a run ends

        left = [] if plan.keep else delete_run(plan.amqp_url, plan.run_id, plan.names())
    except Exception:  # noqa: BLE001 - best effort: the broker may be gone
        left = []
    if left:
        print(f"the run's queues not removed (delete them by hand): {', '.join(left)}", file=sys.stderr)


def execute(plan: Plan, json_out: bool = False, out=None, summary: dict | None = None) -> int:
    """Start the monitor and the participants, wait for the verdict, clean up; the monitor's exit
    code, or 128 + the number of a stopping signal that ended the run early (module doc).

    ``summary``, when given, is filled with the monitor's summary (its JSON form)."""
    with Stop() as stop:
        return _execute(plan, json_out, out, summary, stop)


def _execute(plan: Plan, json_out: bool, out, summary: dict | None, stop: Stop) -> int:
    out = out or sys.stdout
    roles = plan.roles()
    logs = Path(plan.logs) if plan.logs else Path(tempfile.mkdtemp(prefix=f"mutexlab-{plan.run_id}-"))
    logs.mkdir(parents=True, exist_ok=True)
    if not plan.logs:  # a temporary one: removed by the watcher if this process is killed
        watcher.watch_dir(str(logs))
    summary_path = logs / "summary.json"
    base = dict(
        os.environ,
        ALGORITHM=plan.algorithm,  # the participants load a file up front, and take part in this alone
        AMQP_URL=plan.amqp_url,
        RUN_ID=plan.run_id,
        JOIN_TIMEOUT=str(plan.join_timeout),
        DELIVERY=plan.delivery,
        PYTHONUNBUFFERED="1",
        # every service ends with this process, SIGKILL included (spawn.py); the queues of a run
        # whose monitor is gone expire (topology.py): --keep leaves them that long (0: for ever)
        MUTEXLAB_PARENT_PID=str(os.getpid()),
        QUEUE_EXPIRES=str(plan.queue_expires),
    )
    # This run's secret (auth.py): its processes alone hold it, in their environment (never argv).
    base[SECRET_ENV] = plan.secret
    base.pop(SECRET_FILE_ENV, None)
    base.pop("DWELL", None)
    base.pop("DWELL_TIMES", None)
    monitor_env = dict(
        base,
        ALGORITHM=plan.algorithm,
        PROCESSES=str(plan.processes),
        OPTIONS=json.dumps(plan.options),
        SEED=str(plan.seed),
        DWELL=str(plan.dwell),
        DWELL_TIMES=json.dumps(plan.dwell_times),
        STALL_TIMEOUT=str(plan.stall_timeout),
        SUMMARY_JSON=str(summary_path),
        CLEANUP="false" if plan.keep else "true",
        DUPLICATES="true" if plan.duplicates else "false",
    )
    if plan.trace:
        monitor_env["TRACE"] = str(Path(plan.trace).resolve())
    else:
        monitor_env.pop("TRACE", None)
    procs: list[tuple[str, subprocess.Popen]] = []
    handles = []
    code = 3
    result: dict | None = None  # the monitor's summary
    answer, monitor_stdout = False, ""  # --json: the summary to write once the run is over
    try:
        monitor_log = open(logs / "monitor.log", "w")  # noqa: SIM115 - the monitor's log, closed when it ends
        handles.append(monitor_log)
        monitor_out = None
        if json_out:  # the monitor's own text goes to a file, written as it goes (the JSON to stdout)
            monitor_out = open(logs / "monitor.out", "w")  # noqa: SIM115 - the monitor's output, closed when it ends
            handles.append(monitor_out)
        fork = can_fork()
        if fork:
            preload(plan.resolved())

        def start(role: str, env: dict, stdout, stderr):
            if fork:
                return Forked(role, env, stdout, stderr)
            return subprocess.Popen(
                service_command(role),
                env=env,
                stdout=stdout,
                stderr=subprocess.STDOUT if stderr is stdout else stderr,
            )

        if fork:  # the services inherit what is alive now as frozen: their collections skip it
            gc.freeze()  # (and leave its pages shared), as the gc module advises before a fork
        try:
            monitor = start("monitor", monitor_env, monitor_out, monitor_log)
            procs.append(("monitor", monitor))
            for n, role in enumerate(roles, 1):
                # its log is named by its pid (its name comes with its welcome), by its name after
                # the run (``name_logs``): the start order says nothing of which node it becomes
                starting = logs / f".{role}-{n}.starting.log"
                handle = open(starting, "w")  # noqa: SIM115 - a service's log, closed when it ends
                handles.append(handle)
                proc = start(role, {**base, **plan.participant_env}, handle, handle)
                procs.append((f"{role}.{proc.pid}", proc))
                starting.rename(logs / f"{role}.{proc.pid}.log")
        finally:
            if fork:
                gc.unfreeze()  # this process collects as before
        stop.arm()  # every service is known now: a signal stops them all
        code = monitor.wait()
        monitor_stdout = (logs / "monitor.out").read_text() if json_out else ""
        result = json.loads(summary_path.read_text()) if summary_path.exists() else None
        failure = monitor_failure(code, result)
        if failure is not None:  # no verdict: never passed on as the monitor's exit code
            why, code = failure
            print(f"mutexlab run: {why}: no verdict (its log: {logs / 'monitor.log'})", file=sys.stderr)
        if summary is not None and result is not None:
            summary.update(result)
        answer = (
            json_out  # the JSON is written once the participants' exits are known: it says the run's code
        )
    except Interrupted as exc:
        code = 128 + exc.signum
        print(f"mutexlab run: {exc}: stopping the run's processes, deleting its queues", file=sys.stderr)
    except KeyboardInterrupt:  # SIGINT outside the main thread's handler
        code = 130
    finally:
        stop.disarm()
        _reap(procs, grace=0.0 if code >= 128 else 5.0)
        for handle in handles:
            handle.close()
        if not (result or {}).get("cleaned_up"):  # the monitor did not (it stopped early)
            sweep(plan)
    named = name_logs(logs, procs[1:], (result or {}).get("os_pids"))
    failed = [named.get(label, label) for label, proc in procs[1:] if proc.returncode not in (0, None)]
    code = with_failed(code, failed)
    if answer and result is not None:
        from .outcome import run_summary

        json.dump(run_summary(result, code, failed), out, indent=2)
        out.write("\n")
    elif answer:
        print(monitor_stdout, file=out)
    stopped = code >= 128 and not failed  # a signal ended it (Ctrl-C): no failure to look into
    if (code != 0 and not stopped) or failed or plan.logs:
        if failed:
            print(f"participants that failed: {', '.join(failed)}", file=sys.stderr)
            if code == EXIT_NO_VERDICT:
                print(
                    "INCOMPLETE: the run cannot vouch for what the failed participants did (exit 3)",
                    file=sys.stderr,
                )
        print(f"process logs: {logs}", file=sys.stderr)
    else:
        shutil.rmtree(logs, ignore_errors=True)
    watcher.unwatch_dir(str(logs))  # kept (and named above) or removed
    return code


def with_failed(code: int, failed: list[str]) -> int:
    """The run's exit code once ``failed`` participants (a nonzero exit) are counted: a SAFE (0)
    from the monitor cannot vouch for what they did, so it is incomplete (3); a violation (1), an
    incomplete run or a failed monitor stays as it is."""
    return EXIT_NO_VERDICT if failed and code == 0 else code


def monitor_failure(code: int, summary: dict | None) -> tuple[str, int] | None:
    """Why the monitor's exit ``code`` is no verdict, and the run's exit code instead; None when it
    is one. The monitor ends 0 or 1 only with its summary written, 2 or 3 on its own: killed by a
    signal (SIGTERM and SIGINT: its handlers' 143 and 130) the run ended incomplete, exit 3; any other
    code, or 0 or 1 without the summary, is a failure of the monitor itself, exit 4."""
    if code < 0 or code in (128 + signal.SIGTERM, 128 + signal.SIGINT):
        number = -code if code < 0 else code - 128
        try:
            name = f"signal {number}, {signal.Signals(number).name}"
        except ValueError:  # a real-time signal has no name
            name = f"signal {number}"
        return f"the monitor died ({name})", EXIT_NO_VERDICT
    if code in (0, 1) and summary is None:
        return f"the monitor ended (exit {code}) without writing its verdict", EXIT_INTERNAL
    if code not in (0, 1, 2, 3):
        return f"the monitor failed (exit {code})", EXIT_INTERNAL
    return None


def name_logs(logs: Path, procs: list[tuple[str, subprocess.Popen]], os_pids: object) -> dict[str, str]:
    """Rename each participant's log ``<role>.<pid>.log`` to ``<name>.log`` (``node-2.log``) by the
    pids the monitor's summary gives its members (``os_pids``); returns label -> name of those
    renamed. A process the monitor never named keeps its log by pid."""
    by_pid = {pid: name for name, pid in os_pids.items()} if isinstance(os_pids, dict) else {}
    named = {}
    for label, proc in procs:
        name = by_pid.get(proc.pid)
        if isinstance(name, str) and SAFE_NAME.fullmatch(name):
            try:
                (logs / f"{label}.log").rename(logs / f"{name}.log")
            except OSError:
                continue
            named[label] = name
    return named


def _reap(procs: list[tuple[str, subprocess.Popen]], grace: float = 5.0) -> None:
    """Participants exit on the monitor's stop; anything left after ``grace`` seconds (0: a run
    stopped early, no stop will come) is terminated, then killed after ``STOP_GRACE``."""
    deadline = time.monotonic() + grace
    for _, proc in procs:
        try:
            if grace <= 0:
                raise subprocess.TimeoutExpired("stop", 0)
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)
    for _, proc in procs:
        try:
            proc.wait(timeout=STOP_GRACE)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
