"""``check --swarm``: its flags, its run instead of the exhaustive search, and its report
(check/swarm.py). Never a pass: exit 5 when nothing was found, 1 on a violation."""

from __future__ import annotations

import os
import sys
from dataclasses import replace

from ..protocols import registry
from ..waiting import WaitsRaised, cannot
from ..words import count, settings
from .common import positive, print_json

EXIT_NOT_FOUND = 5
EXIT_TOOL_ERROR = 4  # as --cross-check's: an error of the tool, never a verdict
EXIT_NOT_JUDGED = 2  # a stall its waiting_for() cannot explain: as the plain check's
EXIT_FINDING = 1
EXIT_REFUSED = 2  # a step leaving a state of no name, and no finding: as the plain check's REFUSED


def add_arguments(g) -> None:
    g.add_argument(
        "--swarm",
        action="store_true",
        help="instead of the exhaustive search: randomised depth-first searches with bitstate storage "
        "on every core for --time seconds; finds violations, proves nothing (exit 5 when none found)",
    )
    g.add_argument(
        "--time", type=positive, default=60, metavar="S", help="with --swarm: the budget (default 60 s)"
    )
    g.add_argument(
        "--workers", type=positive, metavar="N", help="with --swarm: worker processes (default: every core)"
    )


WORKERS_PER_CORE = 4  # a worker is a process with a model of its own: more only wait for a core


def max_workers() -> int:
    return WORKERS_PER_CORE * (os.cpu_count() or 1)


def refused(args) -> str | None:
    """Why the swarm flags cannot run as given, the first problem first: a swarm flag without
    ``--swarm`` before the values it carries (a ``--workers`` too large for a swarm not asked for)."""
    if not args.swarm:
        for flag, given in (("--workers", args.workers is not None), ("--time", args.time != 60)):
            if given:
                return f"{flag} needs --swarm"
        return None
    if args.workers is not None and args.workers > max_workers():
        return (
            f"--workers {args.workers:,}: at most {max_workers()} ({WORKERS_PER_CORE} per core of "
            "this machine: each worker is a process with its own model)"
        )
    for flag, on in (
        ("--metrics", args.metrics),
        ("--cross-check", args.cross_check),
        ("--endless", getattr(args, "endless", False)),
        ("--search bfs", args.search == "bfs"),
        ("--exact", args.exact),
    ):
        if on:
            return f"--swarm is a randomised partial search of safety: not with {flag}"
    return None


def run(args, config) -> int:
    from ..check.counterexample import reproduces, write_scenario
    from ..check.engine import build_model
    from ..check.result import CheckFinding
    from ..check.swarm import run_swarm

    build_model(replace(config, partial_order=False))  # bad input is exit 2 here, not a worker's error
    result = run_swarm(config, args.time, args.workers)
    s = {
        "algorithm": config.algorithm,
        "processes": config.processes,
        "options": config.options,
    } | result.as_dict()
    if result.finding and result.scenario is None:
        s["reproduced"] = [False, "the finding has no scenario form"]
    if result.finding and result.scenario is not None:
        f = result.finding["fields"]
        finding = CheckFinding(f["kind"], f["message"], [], processes=f["processes"], resource=f["resource"])
        s["reproduced"] = reproduces(result.scenario, finding, config.solution)
        if args.counterexample:
            try:
                s["counterexample"] = str(write_scenario(result.scenario, args.counterexample))
            except OSError as exc:
                from .common import fail

                return fail(f"cannot write counterexample {args.counterexample}: {exc.strerror}")
    if args.json:
        print_json(s)
    else:
        print(render(s))
    if result.refusal:  # on stderr too, as simulate says a refusal (beside a finding, or alone)
        print(
            f"mutexlab: {'refused as well' if result.finding else 'error'}: {result.refusal}", file=sys.stderr
        )
    if result.finding and result.finding.get("unexplained"):
        return EXIT_NOT_JUDGED
    if result.finding:
        return EXIT_FINDING
    return EXIT_TOOL_ERROR if result.errors else EXIT_REFUSED if result.refusal else EXIT_NOT_FOUND


def render(s: dict) -> str:
    lines = [
        f"{registry.shown(s['algorithm'])}: {s['processes']} processes, "
        + settings(s["options"])
        + f" — swarm: {s['workers']} workers × randomised depth-first, bitstate "
        f"({s['bitstate_bits_per_worker'] >> 23} MB each), {s['searches']} searches",
        f"states:       {s['states']:,} stored (summed over workers: some worlds twice; per worker: "
        + ", ".join(f"{n:,}" for n in s["states_per_worker"])
        + (
            f"; {s['workers_stopped_unreported']} stopped at the end without a report: counted as last published"
            if s["workers_stopped_unreported"]
            else ""
        )
        + ")",
        f"transitions:  {s['transitions']:,}",
        f"time:         {s['seconds']:.2f} s",
        "checked:      " + ", ".join(s["properties"]) + f" — not: {s['not_checked']}",
    ]
    lines += [
        f"refused:      {name} — {why} (a sample disagreed: the searches went on without it)"
        for name, why in s["reductions_refused"].items()
    ]
    if s["refused"]:
        lines.append(f"refused:      {s['refused']} (the worker's search took it as a dead end, or stopped)")
    if s["errors"] and not s["findings"]:
        lines.append(f"verdict:      TOOL ERROR — a worker failed: {s['errors'][0]}: nothing is proven")
        return "\n".join(lines)
    if s["refused"] and not s["findings"]:
        lines.append("verdict:      REFUSED (exit 2) — a step leaves a state of no name: nothing is proven")
        return "\n".join(lines)
    if not s["findings"]:
        lines.append(
            f"verdict:      NO VIOLATION FOUND in {s['states']:,} states over {s['seconds']:.0f} s — a partial "
            "search: nothing is proven"
        )
        return "\n".join(lines)
    f = s["findings"][0]
    judged = "NOT JUDGED (exit 2)" if f.get("unexplained") else "VIOLATION"
    lines.append(f"verdict:      {judged} — {f['kind']}: {f['message']}")
    lines.append(f"path ({count(len(f['steps']), 'step')}):")
    lines += [f"  {n:>3}. {step}" for n, step in enumerate(f["steps"], 1)]
    if f.get("unexplained"):
        lines.append(f"{cannot(f['kind'])}: {f['unexplained']}. {WaitsRaised.ADVICE}")
    ok, why = s["reproduced"]
    where = f"written to {s['counterexample']} " if s.get("counterexample") else ""
    lines.append(f"counterexample {where}(replay reproduces it: {'yes' if ok else 'NO'} — {why})")
    return "\n".join(lines)
