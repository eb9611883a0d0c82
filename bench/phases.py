"""Where a ``mutexlab run`` command's CPU goes, by phase and by process (``bench.startup --split``).

A thread samples, every ``EVERY`` seconds, the CPU time (user + system) of the command, of each
process it started (the monitor is the first: ``supervisor.py`` forks it before the
participants) and of the broker (the machine's ``beam.smp``: other programs' traffic counts there
too; "other" is any child not a service: the watcher of the run's temporary directory). At any sample, the command's CPU so far is exact: its own time, that of its children it
has reaped (the kernel adds them to its ``cutime``) and that of those still alive or unreaped.
The phases are cut at the summary's ``started`` (the welcome) and ``started + duration`` (the
protocol phase's end), each cut placed between the two samples around it (linear in time).
"""

from __future__ import annotations

import bisect
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

from .common import children_cpu

EVERY = 0.05  # seconds between samples
FIND_EVERY = 0.2  # seconds between looks for new children


def _cpu(proc: psutil.Process, children: bool = False) -> float | None:
    try:
        t = proc.cpu_times()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None
    return t.user + t.system + ((t.children_user + t.children_system) if children else 0.0)


def broker_process() -> psutil.Process | None:
    for proc in psutil.process_iter(["name"]):
        if proc.info["name"] == "beam.smp":
            return proc
    return None


def _role(pid: int) -> str:
    """A child's role by its standard error: the monitor's ``monitor.log``, a participant's
    ``<role>...log`` in the run's log directory, anything else (the watcher) "other"."""
    try:
        err = os.readlink(f"/proc/{pid}/fd/2")
    except OSError:
        return "other"
    if err.endswith("/monitor.log"):
        return "monitor"
    return "participant" if err.endswith(".log") else "other"


class Sampler(threading.Thread):
    """Samples ``(time, command's own CPU, command + its children, monitor, other, broker)``."""

    def __init__(self, root: int, broker: psutil.Process | None) -> None:
        super().__init__(daemon=True)
        self.root = psutil.Process(root)
        self.broker = broker
        self.kids: dict[int, psutil.Process] = {}
        self.role: dict[int, str] = {}  # each child: "monitor", "participant" or "other" (the watcher)
        self.last: dict[int, float] = {}  # each child's CPU at its last sample
        self.samples: list[tuple[float, float, float, float, float, float]] = []
        self.done = threading.Event()

    def _find(self) -> None:
        try:
            kids = self.root.children()
        except psutil.NoSuchProcess:
            return
        for kid in kids:
            if kid.pid not in self.kids:
                self.kids[kid.pid] = kid
                self.role[kid.pid] = _role(kid.pid)

    def run(self) -> None:
        found = 0.0
        while not self.done.is_set():
            now = time.time()
            if now - found > FIND_EVERY:
                self._find()
                found = now
            own = _cpu(self.root)
            whole = _cpu(self.root, children=True)
            if own is None or whole is None:
                break
            for pid, kid in self.kids.items():
                c = _cpu(kid)
                if c is not None:
                    self.last[pid] = c
                    whole += c  # alive or not yet reaped: not yet in the command's cutime
            mon = sum(c for p, c in self.last.items() if self.role[p] == "monitor")
            other = sum(c for p, c in self.last.items() if self.role[p] == "other")
            broker = _cpu(self.broker) if self.broker else None
            self.samples.append((now, own, whole, mon, other, broker or 0.0))
            self.done.wait(EVERY)

    def at(self, t: float) -> tuple[float, ...]:
        """(own, whole, monitor, other, broker) CPU at Unix time ``t``, between the samples around it."""
        times = [s[0] for s in self.samples]
        i = bisect.bisect_left(times, t)
        if i <= 0:
            return self.samples[0][1:]
        if i >= len(self.samples):
            return self.samples[-1][1:]
        (a, *va), (b, *vb) = self.samples[i - 1], self.samples[i]
        w = (t - a) / (b - a) if b > a else 1.0
        return tuple(x + (y - x) * w for x, y in zip(va, vb, strict=True))  # type: ignore[return-value]


def split_run(args: list[str], tree: Path | None, timeout: float) -> tuple[dict, int, float, float, dict]:
    """``python -m mutexlab run ARGS --json`` of ``tree``, sampled: (summary, exit code, its start
    and end in Unix time, the CPU seconds per phase and process)."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree / "shared"), str(tree), env.get("PYTHONPATH", "")])
    broker = broker_process()
    command = [sys.executable, "-m", "mutexlab", "run", *args, "--json"]
    cpu0, began = children_cpu(), time.time()
    broker0 = _cpu(broker) if broker else None
    proc = subprocess.Popen(
        command, cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    sampler = Sampler(proc.pid, broker)
    sampler.start()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()  # its services die with it (spawn.die_with_parent)
        proc.communicate()
        raise
    finally:
        sampler.done.set()
    ended, cpu = time.time(), children_cpu() - cpu0
    sampler.join()
    summary = json.loads(out) if out.strip().startswith("{") else None
    if summary is None or not sampler.samples:
        raise RuntimeError(
            f"mutexlab run {' '.join(args)} (exit {proc.returncode}): {out[-400:]} {err[-800:]}"
        )
    cuts = [began, summary["started"], summary["started"] + summary["duration"]]
    points = [(0.0, 0.0, 0.0, 0.0, broker0 or 0.0)] + [sampler.at(t) for t in cuts[1:]]
    own, _whole, mon, other, brk = sampler.samples[-1][1:]
    points.append((own, cpu, mon, other, _cpu(broker) if broker else brk))  # the whole: exact, once reaped
    split: dict[str, dict[str, float]] = {"samples": len(sampler.samples)}  # type: ignore[dict-item]
    for name, a, b in zip(("start", "protocol", "after"), points, points[1:], strict=False):
        own, whole, mon, other, brk = (y - x for x, y in zip(a, b, strict=True))
        split[name] = {
            "all": round(whole, 2),
            "command": round(own, 2),
            "monitor": round(mon, 2),
            "participants": round(whole - own - mon - other, 2),
            "other": round(other, 2),
            "broker": round(brk, 2),
        }
    return summary, proc.returncode, began, ended, split
