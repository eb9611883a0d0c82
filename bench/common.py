"""What the benchmarks share: the machine's description, tables, child runs, processes against the
broker behind a start barrier, the local broker's CPU."""

from __future__ import annotations

import contextlib
import json
import multiprocessing as mp
import os
import platform
import queue as queue_module
import socket
import statistics
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlparse

import psutil

ROOT = Path(__file__).resolve().parents[1]


def machine() -> dict:
    """Cores, memory, load, Python and library versions: the context every number needs."""
    memory = psutil.virtual_memory()
    info = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "memory_total_gib": round(memory.total / 1024**3, 1),
        "memory_available_gib": round(memory.available / 1024**3, 1),
    }
    with contextlib.suppress(OSError, StopIteration):
        lines = Path("/proc/cpuinfo").read_text(errors="replace").splitlines()
        info["cpu"] = next(line.split(":", 1)[1].strip() for line in lines if line.startswith("model name"))
    git = ["git", "rev-parse", "--short", "HEAD"]
    try:
        info["git_commit"] = subprocess.run(
            git, cwd=ROOT, capture_output=True, text=True, timeout=5
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        info["git_commit"] = None
    for lib in ("pika", "redis", "pydantic"):
        try:
            info[lib] = __import__(lib).__version__
        except Exception:  # noqa: BLE001 - informative only
            info[lib] = None
    return info


def ratio(a: float | None, b: float | None, digits: int = 2) -> float | None:
    return None if a is None or b in (None, 0) else round(a / b, digits)


def fmt(value, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def table(headers: list[str], rows: list[list], digits: int = 2) -> str:
    """A Markdown table (readable in a terminal as well)."""
    cells = [[fmt(v, digits).replace("|", "\\|") for v in row] for row in rows]  # a "|" would split the cell
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    line = lambda values: "| " + " | ".join(v.rjust(w) for v, w in zip(values, widths)) + " |"  # noqa: E731
    out = [line(headers), "|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|"]
    out += [line(r) for r in cells]
    return "\n".join(out)


def medians(runs: list[dict], keys=None) -> dict:
    """Per key (default: the first run's keys), the median of the runs' values; None without any."""
    values = {key: [r[key] for r in runs if r.get(key) is not None] for key in keys or runs[0]}
    return {key: statistics.median(v) if v else None for key, v in values.items()}


def repeats(row: dict, key: str) -> str | None:
    """Each repetition's ``key`` (``row["repeats"]``), rounded, for a table's "(repeats)" column."""
    return "/".join(str(round(x[key])) for x in row["repeats"]) if row.get(key) else None


def run_json(args: list[str], timeout: float) -> dict:
    """Run ``python -m ...`` in a fresh interpreter; its last stdout line is a JSON object."""
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(args)} failed (exit {proc.returncode}): {proc.stderr.strip()[-800:]}")
    return json.loads(lines[-1])


def save_json(path: str | Path | None, data: object) -> None:
    """Write ``data`` as JSON to ``path`` (a benchmark's ``--json FILE``), when one is given."""
    if path:
        with open(path, "w") as f:
            json.dump(data, f, indent=1)


def say(text: str = "") -> None:
    print(text, flush=True)


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children so far."""
    times = os.times()
    return times.children_user + times.children_system


def mutexlab_run_json(args: list[str], tree: Path | None, timeout: float) -> tuple:
    """``python -m mutexlab run ARGS --json`` of ``tree`` (its ``shared`` and root first on PYTHONPATH;
    None: the mutexlab this interpreter imports): (its summary, exit code, Unix time at its start and
    at its end, CPU seconds of the command and all its processes)."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree / "shared"), str(tree), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "mutexlab", "run", *args, "--json"]
    cpu, began = children_cpu(), time.time()
    proc = subprocess.run(command, cwd=tree or ROOT, capture_output=True, text=True, timeout=timeout, env=env)
    ended, cpu = time.time(), children_cpu() - cpu
    try:
        return json.loads(proc.stdout), proc.returncode, began, ended, cpu
    except json.JSONDecodeError:
        raise RuntimeError(
            f"{tree or ROOT}: mutexlab run {' '.join(args)} (exit {proc.returncode}) printed no summary: "
            f"{proc.stdout[-400:]} {proc.stderr[-800:]}"
        ) from None


# -- processes against the broker: queues, and workers released together by a start barrier -------
CTX = mp.get_context("fork")


def connect(url: str, confirmed: bool, prefetch: int | None = None):
    """A pika ``BlockingConnection`` and its channel, with publisher confirms and a prefetch if asked."""
    import pika

    conn = pika.BlockingConnection(pika.URLParameters(url))
    ch = conn.channel()
    if confirmed:
        ch.confirm_delivery()
    if prefetch:
        ch.basic_qos(prefetch_count=prefetch)
    return conn, ch


def declare_queues(url: str, names: list[str], durable: bool, arguments: dict | None = None) -> None:
    """Each queue declared and emptied."""
    conn, ch = connect(url, False)
    with conn:
        for name in names:
            ch.queue_declare(name, durable=durable, arguments=arguments)
            ch.queue_purge(name)


def delete_queues(url: str, names: list[str]) -> None:
    """A clean-up, also after a failure: without a broker there is nothing to delete."""
    import pika

    with contextlib.suppress(pika.exceptions.AMQPConnectionError):
        conn, ch = connect(url, False)
        with conn:
            for name in names:
                ch.queue_delete(name)


def run_workers(target, args_list: list[tuple], timeout: float = 300.0, stamp=None) -> list:
    """Start one process per args tuple (each calls ``target(barrier, *args)``); collect one result
    each. ``stamp``: called once every worker passed the barrier and again once every result is in,
    its two values appended to the results."""
    barrier = CTX.Barrier(len(args_list) + 1)
    results = CTX.Queue()
    procs = [CTX.Process(target=_guard, args=(target, barrier, results, *a), daemon=True) for a in args_list]
    for proc in procs:
        proc.start()
    try:
        with contextlib.suppress(threading.BrokenBarrierError):  # a worker failed: its error is below
            barrier.wait(timeout=120)
        before = stamp() if stamp else None
        out = []
        deadline = time.monotonic() + timeout
        while len(out) < len(procs):
            try:
                item = results.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue_module.Empty:
                raise RuntimeError(f"{target.__name__}: workers did not finish within {timeout:g}s") from None
            if isinstance(item, dict) and "error" in item:
                raise RuntimeError(f"{target.__name__}: a worker failed: {item['error']}")
            out.append(item)
        return out + [before, stamp()] if stamp else out
    finally:
        for proc in procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5)


def _guard(target, barrier, results, *args) -> None:
    try:
        results.put(target(barrier, *args))
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        results.put({"error": f"{type(exc).__name__}: {exc}"})
        with contextlib.suppress(Exception):  # the others are told; nothing more to report
            barrier.abort()


LOOPBACK = {"127.0.0.1", "localhost", "::1", "ip6-localhost"}
DEFAULT_AMQP_URL = "amqp://guest:guest@127.0.0.1:5672/%2F"


def broker_pid(url: str | None = None) -> int | None:
    """The local RabbitMQ node serving ``url`` (default ``$AMQP_URL``, else 127.0.0.1:5672): the
    Erlang VM (``beam*``) that holds the socket listening on the URL's port in this network
    namespace. Not merely the first ``beam*``: another VM (a private test node, a broker in a
    container, listening in its own namespace) would be measured instead. None when the URL names
    another machine, no VM here listens on that port, or the system cannot say."""
    where = urlparse(url or os.environ.get("AMQP_URL") or DEFAULT_AMQP_URL)
    if (where.hostname or "127.0.0.1") not in LOOPBACK | {socket.gethostname()}:
        return None
    with contextlib.suppress(psutil.Error, OSError):
        for conn in psutil.net_connections("tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr.port == (where.port or 5672) and conn.pid:
                with contextlib.suppress(psutil.Error):
                    if psutil.Process(conn.pid).name().startswith("beam"):
                        return conn.pid
    return None


def broker_cpu_seconds(pid: int | None) -> float | None:
    """CPU seconds (user + system) the process ``pid`` (from ``broker_pid``, found once per
    measurement) has used so far, or None when there is none or it cannot be read."""
    if pid is None:
        return None
    with contextlib.suppress(psutil.Error):
        times = psutil.Process(pid).cpu_times()
        return times.user + times.system
    return None


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine so far (idle and iowait are not busy; guest
    time is counted inside user time, so not again)."""
    times = psutil.cpu_times()._asdict()
    total = sum(v for k, v in times.items() if not k.startswith("guest"))
    return total - times["idle"] - times.get("iowait", 0.0), total


class CpuSampler(threading.Thread):
    """Samples, every ``period`` seconds in a thread, the machine's busy and total CPU time and the
    CPU time of the local broker serving ``url``, stamped with Unix time; ``window(t0, t1)`` then
    tells how busy the machine was and how much CPU the broker took between two moments of a run
    (for instance from the welcome that starts it to its completion, without the processes' start-up)."""

    def __init__(self, period: float = 0.02, url: str | None = None) -> None:
        super().__init__(daemon=True)
        self.period, self.broker = period, broker_pid(url)
        self.samples: list[tuple[float, float, float, float | None]] = []
        self._done = threading.Event()

    def _sample(self) -> None:
        self.samples.append((time.time(), *machine_cpu(), broker_cpu_seconds(self.broker)))

    def run(self) -> None:
        while not self._done.is_set():
            self._sample()
            self._done.wait(self.period)

    def __enter__(self) -> CpuSampler:
        self.start()
        return self

    def __exit__(self, *_exc) -> None:
        self._done.set()
        self.join()
        self._sample()

    def window(self, t0: float, t1: float) -> dict | None:
        """Between the last sample at or before ``t0`` and the first at or after ``t1``: the machine's
        busy fraction (of all its cores) and the broker's CPU seconds; None without two such samples."""
        before = [s for s in self.samples if s[0] <= t0]
        after = [s for s in self.samples if s[0] >= t1]
        if not before or not after:
            return None
        first, last = before[-1], after[0]
        total = last[2] - first[2]
        broker = None if first[3] is None or last[3] is None else round(last[3] - first[3], 3)
        return {
            "seconds": round(last[0] - first[0], 3),
            "machine_busy": round((last[1] - first[1]) / total, 3) if total > 0 else None,
            "broker_cpu_s": broker,
        }
