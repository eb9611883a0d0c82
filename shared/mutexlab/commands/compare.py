"""``mutexlab compare``: the six classic algorithms on the same workload, one table.

Same N, requests per node, seed, delay model and per-node think/critical-section times for all
(see ``mutexlab.runs`` and ``mutexlab.sim.workload``). Exit 0 when every run serves every request and is
safe; 1 when any run has a safety violation; 2 on bad arguments (or options an algorithm refuses);
3 when a run stalls without a safety violation. The first of 1, 2, 3 that applies wins.
"""

from __future__ import annotations

from .. import memory
from ..metrics import literature
from ..protocols.registry import CLASSIC
from ..runs import run_classic
from ..setup import ConfigError
from ..words import count
from .common import fail, format_number, print_json
from .flags import add_workload_arguments
from .longrun import add_memory_argument, check_memory
from .registry import Command
from .simulating import exit_code

COLUMNS = (
    "algorithm",
    "entries",
    "messages",
    "msgs/entry",
    "literature",
    "sync (T)",
    "literature",
    "response (T)",
    "verdict",
)


def arguments(p) -> None:
    add_workload_arguments(p)
    add_memory_argument(p)
    p.add_argument(
        "--algorithms",
        metavar="A,B,...",
        default=",".join(CLASSIC),
        help="a comma-separated subset (default: all six)",
    )


def _row(name: str, outcome, n: int) -> dict:
    lit = literature(name)
    params = outcome.setup.params
    m = outcome.metrics
    verdict = (
        "ok"
        if outcome.ok
        else ("UNSAFE" if not outcome.verdict.safe else "STALLED" if not outcome.result.ok else "INCOMPLETE")
    )
    return {
        "algorithm": name,
        **m.as_dict(),
        "literature_messages": lit["messages"].render(n, params) if "messages" in lit else None,
        "literature_sync": lit["sync"].render(n, params) if "sync" in lit else None,
        "verdict": verdict,
        "stalled": outcome.result.stalled,
        "violations": [v.describe() for v in outcome.verdict.violations],
    }


def render(rows: list[dict], args) -> str:
    table = [COLUMNS]
    for r in rows:
        if r.get("error"):
            table.append((r["algorithm"], "—", "—", "—", "—", "—", "—", "—", r["error"]))
            continue
        table.append(
            (
                r["algorithm"],
                f"{r['entries']}/{r['requests']}",
                str(r["total_messages"]),
                format_number(r["messages_per_entry"]),
                r["literature_messages"] or "",
                format_number(r["sync_delay"]),
                r["literature_sync"] or "",
                format_number(r["response_time"]),
                r["verdict"],
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    lines = [
        f"N={args.nodes}, {count(args.requests, 'request')} per node, seed {args.seed}, delay {args.delay}, "
        f"think {args.think:g}, cs {args.cs:g} (times in units of the observed mean message delay T)"
    ]
    for k, row in enumerate(table):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def run(args) -> int:
    names = [a.strip() for a in args.algorithms.split(",") if a.strip()]
    unknown = [a for a in names if a not in CLASSIC]
    if unknown or not names:
        return fail(
            f"unknown algorithm(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(CLASSIC)}"
        )
    # One run at a time: the largest of them must fit.
    need = max(
        (memory.predict(memory.classic_messages(a, args.nodes, args.requests), args.nodes) for a in names),
        key=lambda p: p.bytes,
    )
    refused = check_memory(args, need, "fewer nodes or requests")
    if refused:
        return refused
    rows = []
    codes = set()
    for name in names:
        try:
            outcome = run_classic(
                name, args.nodes, args.requests, args.seed, {}, args.delay, args.think, args.cs
            )
        except ConfigError as exc:
            rows.append({"algorithm": name, "error": str(exc)})
            codes.add(2)
            continue
        row = _row(name, outcome, args.nodes)
        codes.add(exit_code(outcome.verdict, outcome.result.ok))
        rows.append(row)
    if args.json:
        print_json(
            {
                "nodes": args.nodes,
                "requests_per_node": args.requests,
                "seed": args.seed,
                "delay": args.delay,
                "think": args.think,
                "cs": args.cs,
                "runs": rows,
            }
        )
    else:
        print(render(rows, args))
        for r in rows:
            for v in r.get("violations", []):
                print(f"{r['algorithm']}: {v}")
            for name, what in (r.get("stalled") or {}).items():
                print(f"{r['algorithm']}: STALLED {name} waits for {what}")
    return next((code for code in (1, 2, 3) if code in codes), 0)


COMMAND = Command(
    "compare",
    "all six classic algorithms on the same workload, one table",
    """Run Lamport, Ricart–Agrawala, Maekawa, Sanders, Suzuki–Kasami and Raymond on the same workload (default
    options) and print one table: messages per entry, synchronization delay and response time in units of
    the mean message delay T, beside the literature's figures. Exit 0 when every run is safe and serves
    every request, 1 when any run has a safety violation, 2 on bad arguments, 3 when a run stalls without
    one.""",
    run,
    arguments,
    family="mutex",
    family_options={"choose": False},
)
