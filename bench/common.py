"""What every benchmark part shares: the machine's description, tables, timing helpers."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def machine() -> dict:
    """Cores, memory, load, Python and library versions: the context every number needs."""
    info = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "nproc": os.cpu_count(),
            "python": platform.python_version(), "platform": platform.platform(),
            "load_average": [round(x, 2) for x in os.getloadavg()]}
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            mem = dict(line.split(":", 1) for line in handle)
        info["memory_total_gib"] = round(int(mem["MemTotal"].split()[0]) / 1024 ** 2, 1)
        info["memory_available_gib"] = round(int(mem["MemAvailable"].split()[0]) / 1024 ** 2, 1)
    except (OSError, KeyError, ValueError):
        pass
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            models = [line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")]
        if models:
            info["cpu"] = models[0]
    except OSError:
        pass
    try:
        info["git_commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                            text=True, timeout=5).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        info["git_commit"] = None
    try:
        info["free_h"] = subprocess.run(["free", "-h"], capture_output=True, text=True, timeout=5).stdout.rstrip()
    except (OSError, subprocess.SubprocessError):
        info["free_h"] = None
    for lib in ("pika", "redis", "pydantic"):
        try:
            info[lib] = __import__(lib).__version__
        except Exception:  # noqa: BLE001 - informative only
            info[lib] = None
    return info


def ratio(a: float | None, b: float | None, digits: int = 2) -> float | None:
    if a is None or b in (None, 0):
        return None
    return round(a / b, digits)


def fmt(value, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def table(headers: list[str], rows: list[list], digits: int = 2) -> str:
    """A Markdown table (readable in a terminal as well)."""
    cells = [[fmt(v, digits).replace("|", "\\|") for v in row] for row in rows]   # a "|" would split the cell
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    line = lambda values: "| " + " | ".join(v.rjust(w) for v, w in zip(values, widths)) + " |"  # noqa: E731
    out = [line(headers), "|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|"]
    out += [line(r) for r in cells]
    return "\n".join(out)


def run_json(args: list[str], timeout: float, env: dict | None = None) -> dict:
    """Run ``python -m ...`` in a fresh interpreter; its last stdout line is a JSON object."""
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(args)} failed (exit {proc.returncode}): {proc.stderr.strip()[-800:]}")
    data = json.loads(lines[-1])
    data.setdefault("subprocess_seconds", round(time.perf_counter() - started, 3))
    return data


def say(text: str = "") -> None:
    print(text, flush=True)


def broker_cpu_seconds() -> float | None:
    """CPU time (user + system) the local RabbitMQ node (``beam.smp``) has used so far, or None
    when no broker runs on this machine (a remote ``--amqp-url``) or /proc cannot say."""
    try:
        tick = os.sysconf("SC_CLK_TCK")
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/comm", encoding="ascii") as handle:
                    if not handle.read().startswith("beam"):
                        continue
                with open(f"/proc/{entry}/stat", encoding="ascii") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
                return (int(fields[11]) + int(fields[12])) / tick   # utime, stime (fields 14, 15)
            except OSError:
                continue
    except (OSError, ValueError):
        return None
    return None
