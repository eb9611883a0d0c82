"""The simulator and its audit at scale (issue 19): time, peak memory and the audit's share.

    python -m bench.scale table [--sizes 100,200,500,1000]   # the scaling table of BENCHMARKS.md
    python -m bench.scale ratio [--repeat 3]                 # simulate bees --bees 100 --seed 1, ± --no-audit
    python -m bench.scale bigtrace FILE [--events 10000000]  # write a long trace, then verify and report it
    python -m bench.scale record P AUDITED.json AUDITED.time PLAIN.json PLAIN.time --out RESULTS
        # a table row from two runs measured by hand (``--json`` output, ``/usr/bin/time -v`` output)

Every measured command runs in its own interpreter, one at a time; its wall time, CPU time (user +
system) and peak resident set (``ru_maxrss`` of that child alone, from ``os.wait4``) are read
from outside. On a shared machine wall time swings with the load: the CPU time is the steadier
figure, and the ratios (audited ÷ ``--no-audit``) are measured side by side in one invocation.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

PY = sys.executable


def measure(argv: list[str], stdout=subprocess.DEVNULL, limit_gb: float | None = None) -> dict:
    """Run ``argv`` (a child interpreter) and return its wall s, CPU s, peak RSS MiB and exit code;
    ``limit_gb`` caps its address space (a run that would fill a shared machine dies instead)."""

    def cap() -> None:
        if limit_gb is not None:
            size = int(limit_gb * (1 << 30))
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE, preexec_fn=cap)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    err = child.stderr.read().decode() if child.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    return {
        "wall": round(wall, 2),
        "cpu": round(usage.ru_utime + usage.ru_stime, 2),
        "rss_mib": round(usage.ru_maxrss / 1024, 1),
        "exit": code,
        "stderr": err[-500:],
    }


def bees_argv(p: int, audit: bool, seed: int = 1) -> list[str]:
    argv = [PY, "-m", "mutexlab", "simulate", "bees", "--bees", str(p), "--reeds", str(math.ceil(p / 3))]
    argv += ["--flowers", str(max(1, p // 10)), "--seed", str(seed), "--json"]
    return argv + ([] if audit else ["--no-audit"])


def summary_of(argv: list[str]) -> tuple[dict, dict]:
    """Measure a ``--json`` simulate command and return (measurement, its parsed summary)."""
    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-scale-{os.getpid()}.json"
    with open(out, "wb") as handle:
        m = measure(argv, stdout=handle)
    try:
        summary = json.loads(out.read_text())
    except ValueError:
        summary = {}
    out.unlink(missing_ok=True)
    return m, summary


def paired(audited: dict, plain: dict) -> dict:
    """An audited run beside its ``--no-audit`` twin: both measurements and their ratios."""
    return {
        "audited": audited,
        "no_audit": plain,
        "audit_share_cpu": round(1 - plain["cpu"] / audited["cpu"], 3) if audited["cpu"] else None,
        "wall_ratio": round(audited["wall"] / plain["wall"], 2) if plain["wall"] else None,
        "cpu_ratio": round(audited["cpu"] / plain["cpu"], 2) if plain["cpu"] else None,
        "rss_ratio": round(audited["rss_mib"] / plain["rss_mib"], 2) if plain["rss_mib"] else None,
    }


def pair_cells(row: dict, digits: int) -> str:
    """``wall | CPU | peak RSS`` of the audited run, then of the ``--no-audit`` one."""
    return " | ".join(
        f"{m['wall']:.{digits}f} | {m['cpu']:.{digits}f} | {m['rss_mib']:.0f}"
        for m in (row["audited"], row["no_audit"])
    )


def table_row(p: int, audited: dict, s_audit: dict, plain: dict, s_plain: dict) -> dict:
    """A row of the scaling table from the two measurements and the two ``--json`` summaries."""
    return {
        "P": p,
        "reeds": math.ceil(p / 3),
        "flowers": max(1, p // 10),
        "messages": s_audit.get("messages_total"),
        "events": s_audit.get("events"),
        "eggs": f"{s_audit.get('eggs_total')}/{s_audit.get('eggs_expected')}",
        "verdict": (s_audit.get("audit") or {}).get("verdict"),
        "same_run": s_plain.get("events") == s_audit.get("events"),
        **paired(audited, plain),
    }


def table(sizes: list[int]) -> list[dict]:
    rows = []
    for p in sizes:
        plain, s_plain = summary_of(bees_argv(p, audit=False))
        audited, s_audit = summary_of(bees_argv(p, audit=True))
        row = table_row(p, audited, s_audit, plain, s_plain)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def time_v(path: Path) -> dict:
    """A measurement as ``measure`` gives it, read from the output of ``/usr/bin/time -v``."""
    fields = {}
    for line in path.read_text().splitlines():
        key, _, value = line.strip().rpartition(": ")
        fields[key] = value
    wall = 0.0
    for part in fields["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":"):
        wall = wall * 60 + float(part)
    return {
        "wall": round(wall, 2),
        "cpu": round(float(fields["User time (seconds)"]) + float(fields["System time (seconds)"]), 2),
        "rss_mib": round(int(fields["Maximum resident set size (kbytes)"]) / 1024, 1),
        "exit": int(fields["Exit status"]),
        "stderr": "",
    }


def record(p: int, audited: tuple[Path, Path], plain: tuple[Path, Path], how: str) -> dict:
    """A table row from runs measured by hand: each a ``--json`` summary and a ``time -v`` output."""
    row = table_row(
        p,
        time_v(audited[1]),
        json.loads(audited[0].read_text()),
        time_v(plain[1]),
        json.loads(plain[0].read_text()),
    )
    row["how"] = how
    print(json.dumps(row), flush=True)
    return row


def markdown(rows: list[dict]) -> str:
    head = (
        "| P | reeds | flowers | messages | events | eggs | verdict | audited wall s | audited CPU s "
        "| audited peak RSS MiB | --no-audit wall s | --no-audit CPU s | --no-audit peak RSS MiB "
        "| audit share (CPU) | CPU × | RSS × |"
    )
    lines = [head, "|" + "---:|" * 16]
    for r in rows:
        lines.append(
            f"| {r['P']} | {r['reeds']} | {r['flowers']} | {r['messages']:,} | {r['events']:,} | {r['eggs']} "
            f"| {r['verdict']} | {pair_cells(r, 1)} | {r['audit_share_cpu']:.0%} | {r['cpu_ratio']:.2f} "
            f"| {r['rss_ratio']:.2f} |"
        )
    lines += [f"\nP = {r['P']}: {r['how']}" for r in rows if r.get("how")]
    return "\n".join(lines)


def ratio(repeat: int) -> list[dict]:
    """``simulate bees --bees 100 --seed 1`` with the audit and with ``--no-audit``, alternated."""
    base = [PY, "-m", "mutexlab", "simulate", "bees", "--bees", "100", "--seed", "1"]
    rows = []
    for i in range(repeat):
        audited = measure(base)
        plain = measure(base + ["--no-audit"])
        row = {"round": i + 1, **paired(audited, plain)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def bigtrace(path: Path, events: int, nodes: int, limit_gb: float = 4.0) -> dict:
    """Write a Ricart–Agrawala trace of about ``events`` events (its own interpreter), then measure
    ``mutexlab verify`` and ``mutexlab report`` on it."""
    per_entry = 2 * 2 * (nodes - 1) + 5  # send and recv of REQUEST and REPLY, request/enter/exit/states
    requests = max(1, events // (per_entry * nodes))
    write = (
        "import sys\n"
        "from mutexlab.protocols.registry import make_setup\n"
        "from mutexlab.sim import SimConfig, Simulation\n"
        "from mutexlab.trace import TraceWriter\n"
        f"setup = make_setup('ricart-agrawala', {nodes}, {{'requests': {requests}}}, 1)\n"
        f"with TraceWriter({str(path)!r}) as trace:\n"
        f"    result = Simulation(setup, SimConfig(seed=1, max_events={events * 2}), trace).run()\n"
        "print(result.events, result.ok)\n"
    )
    made = measure([PY, "-c", write])
    with open(path, "rb") as handle:
        lines = sum(1 for _ in handle)
    verify = measure([PY, "-m", "mutexlab", "verify", str(path)])
    report_path = path.with_suffix(".html")
    report = measure([PY, "-m", "mutexlab", "report", str(path), "-o", str(report_path)], limit_gb=limit_gb)
    result = {
        "trace": str(path),
        "lines": lines,
        "bytes": path.stat().st_size,
        "write": made,
        "verify": verify,
        "report": report,
        "report_bytes": report_path.stat().st_size if report_path.exists() else None,
    }
    print(json.dumps(result), flush=True)
    return result


def save(path: Path | None, key: str, value) -> None:
    """Merge ``value`` under ``key`` into the results file ``path`` (a JSON object), with the date."""
    if path is None:
        return
    data = json.loads(path.read_text()) if path.exists() else {}
    data[key] = value
    data.setdefault("dates", {})[key] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    data.setdefault("load", {})[key] = list(os.getloadavg())
    path.write_text(json.dumps(data, indent=1) + "\n")


def render(data: dict) -> str:
    """The BENCHMARKS.md section of a results file."""
    out = []
    if "table" in data:
        out += [
            f"Scaling table ({data['dates']['table']}, load average at the end "
            f"{', '.join(f'{x:.1f}' for x in data['load']['table'])}): `python -m bench.scale table`",
            "",
            markdown(data["table"]),
            "",
        ]
    if "ratio" in data:
        rows = data["ratio"]
        out += [
            f"`simulate bees --bees 100 --seed 1`, audited against `--no-audit`, alternated "
            f"({data['dates']['ratio']}): `python -m bench.scale ratio`",
            "",
            "| round | audited wall s | CPU s | peak RSS MiB | --no-audit wall s | CPU s | peak RSS MiB "
            "| wall × | CPU × | RSS × |",
            "|" + "---:|" * 10,
        ]
        for r in rows:
            out.append(
                f"| {r['round']} | {pair_cells(r, 2)} | {r['wall_ratio']:.2f} | {r['cpu_ratio']:.2f} "
                f"| {r['rss_ratio']:.2f} |"
            )
        out.append("")
    if "partial" in data:  # runs followed from outside (their peak RSS sampled), some stopped early
        out += [
            "| command | finished | wall s | CPU s | peak RSS MiB | note |",
            "|---|---|---:|---:|---:|---|",
        ]
        for r in data["partial"]:
            out.append(
                f"| `{r['command']}` | {r['finished']} | {r['wall']:.0f} | {r['cpu']:.0f} "
                f"| {r['rss_mib']:.0f} | {r['note']} |"
            )
        out.append("")
    if "bigtrace" in data:
        b = data["bigtrace"]
        out += [
            f"A long trace ({data['dates']['bigtrace']}): `python -m bench.scale bigtrace FILE` — "
            f"Ricart–Agrawala, {b['lines']:,} lines, {b['bytes'] / 2**30:.2f} GiB",
            "",
            "| step | exit | wall s | CPU s | peak RSS MiB |",
            "|---|---:|---:|---:|---:|",
        ]
        for step in ("write", "verify", "report"):
            m = b[step]
            out.append(f"| {step} | {m['exit']} | {m['wall']:.1f} | {m['cpu']:.1f} | {m['rss_mib']:.0f} |")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    t = sub.add_parser("table")
    t.add_argument("--sizes", default="100,200,500,1000")
    r = sub.add_parser("ratio")
    r.add_argument("--repeat", type=int, default=3)
    b = sub.add_parser("bigtrace")
    b.add_argument("file", type=Path)
    b.add_argument("--events", type=int, default=10_000_000)
    b.add_argument("--nodes", type=int, default=5)
    rec = sub.add_parser("record", help="add a table row from two runs measured with /usr/bin/time -v")
    rec.add_argument("P", type=int)
    for name in ("audited_json", "audited_time", "plain_json", "plain_time"):
        rec.add_argument(name, type=Path)
    rec.add_argument(
        "--how", required=True, help="how, when and at what load the runs were made (a note under the table)"
    )
    m = sub.add_parser("markdown", help="print the BENCHMARKS.md section of a results file")
    m.add_argument("results", type=Path)
    for each in (t, r, b, rec):
        each.add_argument("--out", type=Path, help="merge the results into this JSON file")
    args = parser.parse_args(argv)
    if args.what == "table":
        rows = table([int(x) for x in args.sizes.split(",")])
        save(args.out, "table", rows)
        print(markdown(rows))
    elif args.what == "ratio":
        save(args.out, "ratio", ratio(args.repeat))
    elif args.what == "record":
        row = record(
            args.P, (args.audited_json, args.audited_time), (args.plain_json, args.plain_time), args.how
        )
        if args.out is not None:  # the row replaces any of the same P; the table's own date stays
            data = json.loads(args.out.read_text()) if args.out.exists() else {}
            rows = [r for r in data.get("table", []) if r["P"] != args.P] + [row]
            data["table"] = sorted(rows, key=lambda r: r["P"])
            args.out.write_text(json.dumps(data, indent=1) + "\n")
    elif args.what == "bigtrace":
        save(args.out, "bigtrace", bigtrace(args.file, args.events, args.nodes))
    else:
        print(render(json.loads(args.results.read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
