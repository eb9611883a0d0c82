"""``mutexlab run mutex`` side by side with the raw pika token ring and DistAlgo, in one run.

For each N (default 5 and 10) and each repetition, in turn: ``mutexlab run mutex -a A -N N -r R
--dwell 0`` for Raymond, Suzuki–Kasami, Ricart–Agrawala and Lamport (each ``--tree`` given: the
mutexlab of that source tree, so a baseline and a change are measured interleaved on the same
machine state), the raw pika token ring (``bench/clients.py``'s ring on pika's
``BlockingConnection``, confirmed and transient, ``hops`` handovers), the raw pika Ricart–Agrawala
pattern in each delivery mode given, R entries per process (``bench/raw_pattern.py``: the protocol's
messages alone, the yardstick of ``ricart-agrawala``; when that algorithm is run), and DistAlgo's ``sktoken``, ``ramutex`` and ``lamutex`` with R rounds per process
(``bench/distalgo.py``; skipped with the reason when no Python 3.7 is there). The median of the
repetitions is reported, every repetition's value beside it. ``--delivery`` (repeatable) runs each
mutexlab case in each delivery mode given (docs/wire.md#delivery-modes; ``persistent`` passes no
flag, so an older tree runs too), ``-a`` limits the algorithms.

Columns: ``÷ raw pattern`` is Ricart–Agrawala's entries/s over the raw pattern's in the same
delivery mode; entries/s and token passes/s over the protocol phase (mutexlab: the monitor's welcome to
completion; DistAlgo: first process start to the last entry; ring: the start barrier to the
last member's end); ``wall`` the whole command; ``broker µs/msg`` the broker's (beam.smp's) CPU over the
protocol phase per protocol message (ring: per hop); ``python µs/msg``
the CPU of the command and all its processes, start-up and audit included, per protocol message.

    python -m bench.wire --repeat 3 --requests 50 --tree /work/main --tree . --json /tmp/wire.json
    python -m bench.wire -N 5 -a raymond -a ricart-agrawala --delivery persistent --delivery transient
"""

from __future__ import annotations

import argparse
import itertools
import subprocess
import tempfile
from pathlib import Path

from .common import DEFAULT_AMQP_URL, ROOT, medians, ratio, repeats, save_json, say, table
from .overrabbit import mutexlab_run

ALGORITHMS = ("raymond", "suzuki-kasami", "ricart-agrawala", "lamport")
DELIVERIES = ("persistent", "transient")
# The table's names for the ring's and DistAlgo's figures: {ours: theirs}.
RING = {"token_passes_per_s": "msgs_per_s", "run_s": "seconds", "broker_us_per_msg": "broker_cpu_us_per_msg"}
DISTALGO = dict(entries_per_s="entries_per_s", msgs_per_s="msgs_per_s", run_s="protocol_s", wall_s="wall_s")
DISTALGO |= {"python_us_per_msg": "python_cpu_us_per_msg", "messages": "messages"}
RAW = {"entries_per_s": "entries_per_s", "run_s": "seconds", "broker_us_per_msg": "broker_cpu_us_per_msg"}
RAW |= {"python_us_per_msg": "client_cpu_us_per_msg", "messages": "messages"}


def _pick(row: dict, names: dict[str, str]) -> dict:
    return {ours: row[theirs] for ours, theirs in names.items()}


def _mutexlab(tree: Path, algorithm: str, n: int, requests: int, url: str, delivery: str) -> dict:
    args = ["mutex", "-a", algorithm, "-N", str(n), "-r", str(requests)]
    args += [] if delivery == "persistent" else ["--delivery", delivery]
    row = mutexlab_run(args, url, timeout=900, tree=tree)
    if not (row["safe"] and row["complete"]):
        raise RuntimeError(f"{tree}: mutexlab run {algorithm} N={n} failed: {row}")
    tokens = row["messages_by_type"].get("TOKEN", 0)
    duration = row["duration_s"]
    return {
        "entries_per_s": row["entries_per_s"],
        "token_passes_per_s": round(tokens / duration) if tokens and duration else None,
        "msgs_per_s": row["msgs_per_s"],
        "run_s": round(duration, 3),
        "wall_s": row["wall_s"],
        "broker_us_per_msg": row["broker_cpu_us_per_msg"],
        "python_us_per_msg": round(row["python_cpu_s"] / row["messages"] * 1e6) if row["messages"] else None,
        "messages": row["messages"],
        "duplicates": row["duplicates"],
    }


def measure(args: argparse.Namespace) -> dict:
    """Every case of ``main``'s options (``args``, completed there), interleaved as the module's docstring says."""
    from . import clients, raw_pattern
    from . import distalgo as da

    url, requests = args.amqp_url, args.requests
    python, skipped = None, None
    if args.distalgo:
        try:
            python = da.venv()
        except da.Unavailable as exc:
            skipped = str(exc)
            say(f"  DistAlgo skipped: {skipped}")
    samples: dict[tuple, list[dict]] = {}
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="mutexlab-wire-") as tmp:
        for rep, n in itertools.product(range(args.repeat), args.sizes):
            say(f"  repetition {rep + 1}/{args.repeat}, N = {n} ...")
            for algorithm, tree, delivery in itertools.product(args.algorithm, args.tree, args.delivery):
                try:
                    row = _mutexlab(tree, algorithm, n, requests, url, delivery)
                except (RuntimeError, subprocess.TimeoutExpired) as exc:  # reported, never averaged
                    say(f"  FAILED: {exc}")
                    failures.append(f"{tree} {delivery} {algorithm} N={n}: {str(exc)[:300]}")
                    continue
                what = str(tree) if delivery == "persistent" else f"{tree} {delivery}"
                samples.setdefault(("mutexlab", what, algorithm, n), []).append(row)
            for mode, client in (("confirmed", "blocking"), ("transient", "transient")):
                ring = clients.measure(url, client, "ring", n, args.hops)
                samples.setdefault(("ring", mode, "", n), []).append(_pick(ring, RING))
            for delivery in args.delivery if "ricart-agrawala" in args.algorithm else ():
                raw = raw_pattern.measure(url, n, requests, delivery)
                samples.setdefault(("raw", delivery, "ricart-agrawala", n), []).append(_pick(raw, RAW))
            for algorithm, example in da.EXAMPLES.items() if python is not None else ():
                if algorithm in args.algorithm:
                    r = da.example(python, example, n, requests, Path(tmp))
                    samples.setdefault(("distalgo", example, algorithm, n), []).append(_pick(r, DISTALGO))
    rows = [
        {"kind": kind, "what": what, "algorithm": algorithm, "n": n, "repeats": runs, **medians(runs)}
        for (kind, what, algorithm, n), runs in samples.items()
    ]
    return {
        "sizes": args.sizes,
        "repeat": args.repeat,
        "requests_per_node": requests,
        "ring_hops": args.hops,
        "trees": [str(t) for t in args.tree],
        "deliveries": args.delivery,
        "distalgo_skipped": skipped,
        "failures": failures,
        "rows": rows,
    }


def _tree_name(what: str) -> str:
    """A mutexlab row's tree by its directory's name, and its delivery mode unless persistent."""
    tree, transient = what.removesuffix(" transient"), what.endswith(" transient")
    return Path(tree).name + (", transient" if transient else "")


def render(result: dict) -> str:
    out = []
    for n in result["sizes"]:
        here = [r for r in result["rows"] if r["n"] == n]
        ring_c = next(r for r in here if r["kind"] == "ring" and r["what"] == "confirmed")
        distalgo = {r["algorithm"]: r for r in here if r["kind"] == "distalgo"}
        raw = {r["what"]: r for r in here if r["kind"] == "raw"}
        rows = []
        for r in here:
            name = {
                "mutexlab": f"mutexlab run -a {r['algorithm']} ({_tree_name(r['what'])})",
                "ring": f"raw pika token ring, {r['what']}",
                "raw": f"raw pika Ricart–Agrawala pattern, {r['what']}",
            }.get(r["kind"], f"DistAlgo {r['what']} ({r['algorithm']})")
            ours, da = r["kind"] == "mutexlab", distalgo.get(r["algorithm"])
            pattern = raw.get("transient" if r["what"].endswith(" transient") else "persistent")
            pattern = pattern if ours and r["algorithm"] == "ricart-agrawala" else None
            rows.append(
                [name, r.get("entries_per_s"), repeats(r, "entries_per_s"), r.get("token_passes_per_s")]
                + [ratio(r.get("token_passes_per_s"), ring_c["token_passes_per_s"]) if ours else None]
                + [ratio(r.get("entries_per_s"), da and da["entries_per_s"]) if ours else None]
                + [ratio(r.get("entries_per_s"), pattern["entries_per_s"]) if pattern else None]
                + [r.get(k) for k in ("run_s", "wall_s", "broker_us_per_msg", "python_us_per_msg")]
            )
        out.append(
            f"N = {n}, {result['requests_per_node']} requests per node, ring {result['ring_hops']} hops:\n"
        )
        headers = ["", "entries/s", "(repeats)", "token passes/s", "÷ ring confirmed", "÷ DistAlgo"]
        headers += ["÷ raw pattern"]
        headers += ["protocol s", "wall s", "broker µs/msg", "python µs/msg"]
        out += [table(headers, rows), ""]
    out += [f"FAILED (not in the medians): {failure}" for failure in result["failures"]]
    if result["distalgo_skipped"]:
        out.append(f"DistAlgo skipped: {result['distalgo_skipped']}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--amqp-url", default=DEFAULT_AMQP_URL)
    sizes_help = "processes (repeatable; default 5 and 10)"
    parser.add_argument("-N", type=int, action="append", dest="sizes", help=sizes_help)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--requests", type=int, default=50, help="entries per process (default 50)")
    parser.add_argument("--hops", type=int, default=2000, help="token ring handovers (default 2000)")
    tree_help = "a mutexlab source tree to run (repeatable; default this one)"
    parser.add_argument("--tree", type=Path, action="append", help=tree_help)
    parser.add_argument("--no-distalgo", action="store_true")
    delivery_help = "run each mutexlab case in this delivery mode (repeatable; default persistent)"
    parser.add_argument("--delivery", action="append", choices=DELIVERIES, help=delivery_help)
    algorithm_help = "only this algorithm (repeatable)"
    parser.add_argument("-a", "--algorithm", action="append", choices=ALGORITHMS, help=algorithm_help)
    parser.add_argument("--json", help="write the figures here too")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.requests < 1 or args.hops < 1:
        parser.error("--repeat, --requests and --hops must be >= 1")
    args.tree = [t.resolve() for t in (args.tree or [ROOT])]
    for tree in args.tree:
        if not (tree / "shared" / "mutexlab").is_dir():
            parser.error(f"--tree {tree}: not a mutexlab source tree (no shared/mutexlab)")
    args.sizes, args.distalgo = args.sizes or [5, 10], not args.no_distalgo
    args.delivery = list(dict.fromkeys(args.delivery or ["persistent"]))
    args.algorithm = list(dict.fromkeys(args.algorithm or ALGORITHMS))
    result = measure(args)
    save_json(args.json, result)
    print(render(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
