"""``mutexlab check`` beside SPIN on Ricart–Agrawala, same worlds, one run.

    python -m bench.check_spin [--nodes 3] [--requests 1 2] [--json FILE]

For each configuration it writes a Promela model of Ricart–Agrawala that matches the checker's
worlds (one channel per ordered pair of nodes, FIFO; one step = one delivery or one local
decision, each a single ``d_step``; the node state is exactly ``snapshot()``: state, clock,
request timestamp, reply set — kept after exit, as the node keeps it —, deferred requests in
arrival order, requests left; temporaries are ``hidden``), compiles it with ``gcc -O2
-DNOREDUCE -DSAFETY``, runs ``pan``, and runs ``mutexlab check mutex --no-reduction`` — on the
compiled search core, again on its pure-Python twin (``MUTEXLAB_CORE=python``) — and with
reductions. It prints states, transitions, wall time, states/s and peak memory of each, and the
ratios. Requires Debian's ``spin`` and ``gcc`` (``apt-get install -y spin gcc``).

SPIN counts ``transitions`` as stored + matched states, i.e. one more than the edges (the
initial state is stored without an edge): the table shows SPIN's edges (``transitions − 1``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from mutexlab.check.core import CORE_ENV, core_name

from .check_reductions import run as check
from .common import ratio, save_json, say, table


def promela(n: int, requests: int) -> str:
    cap = 2 * requests + 2  # a link never holds more (sends never block)
    links = [(s, t) for s in range(n) for t in range(n) if s != t]
    out = [
        f"#define N {n}",
        "mtype = { REQ, REP };",
        f"chan link[{n * n}] = [{cap}] of {{ mtype, byte }};   /* link[s*N+t] */",
        "byte st[N];            /* 0 RELEASED, 1 WANTED, 2 HELD */",
        "byte clk[N];",
        "byte myts[N];          /* my request's timestamp; 0: none */",
        "byte replies[N];       /* bit set of repliers (kept after exit, as the node keeps it) */",
        f"byte deferred[{n * n}];  /* deferred[i*N+k]: pid+1 of the k-th deferred request */",
        "byte ndef[N];",
        f"byte left[N] = {requests};",
        "byte pend[N] = 1;      /* the pending local decision: 0 none, 1 request, 2 exit */",
        "hidden byte m, ts, j, k, held;",
        "hidden mtype mt;",
        "",
        "inline tick(i) { clk[i] = clk[i] + 1 }",
        "inline enter(i) {",
        "  held = 0; j = 0;",
        "  do :: j < N -> if :: st[j] == 2 -> held++ :: else -> skip fi; j++ :: else -> break od;",
        "  assert(held == 0);",
        "  st[i] = 2; pend[i] = 2",
        "}",
        "init {",
        "end: do",
    ]
    for i in range(n):
        sends = "; ".join(f"link[{i * n + t}]!REQ,clk[{i}]" for t in range(n) if t != i)
        enter_alone = f" if :: N == 1 -> enter({i}) :: else -> skip fi;" if n == 1 else ""
        out.append(
            f"  :: d_step {{ pend[{i}] == 1 -> pend[{i}] = 0;"
            f" if :: left[{i}] > 0 -> left[{i}]-- :: else -> skip fi;"
            f" tick({i}); myts[{i}] = clk[{i}]; replies[{i}] = 0; st[{i}] = 1; {sends};{enter_alone}"
            f" m = 0; ts = 0; j = 0; k = 0; held = 0 }}"
        )
        reply_all = (
            f"k = 0; do :: k < ndef[{i}] -> j = deferred[{i}*N+k] - 1; tick({i}); "
            f"if "
            + " ".join(f":: j == {t} -> link[{i * n + t}]!REP,clk[{i}]" for t in range(n) if t != i)
            + f" fi; deferred[{i}*N+k] = 0; k++ :: else -> break od; ndef[{i}] = 0"
        )
        out.append(
            f"  :: d_step {{ pend[{i}] == 2 -> pend[{i}] = 0; st[{i}] = 0; myts[{i}] = 0; {reply_all};"
            f" if :: left[{i}] > 0 -> pend[{i}] = 1 :: else -> skip fi;"
            f" m = 0; ts = 0; j = 0; k = 0; held = 0 }}"
        )
    for s, t in links:
        k = s * n + t
        out.append(
            f"  :: d_step {{ nempty(link[{k}]) -> link[{k}]?mt,ts;"
            f" if :: clk[{t}] < ts -> clk[{t}] = ts + 1 :: else -> clk[{t}] = clk[{t}] + 1 fi;"
            f" if :: mt == REQ ->"
            f"   if :: st[{t}] == 2 || (st[{t}] == 1 && (myts[{t}] < ts || (myts[{t}] == ts && {t} < {s}))) ->"
            f"        deferred[{t}*N+ndef[{t}]] = {s + 1}; ndef[{t}]++"
            f"      :: else -> tick({t}); link[{t * n + s}]!REP,clk[{t}] fi"
            f"    :: else ->"
            f"   if :: st[{t}] == 1 -> replies[{t}] = replies[{t}] | {1 << s};"
            f"        m = 0; j = 0; do :: j < N -> if :: replies[{t}] & (1 << j) -> m++ :: else -> skip fi; j++"
            f" :: else -> break od;"
            f"        if :: m == N - 1 -> enter({t}) :: else -> skip fi"
            f"      :: else -> skip fi"
            f"  fi; mt = 0; m = 0; ts = 0; j = 0; k = 0; held = 0 }}"
        )
    out += ["od", "}"]
    return "\n".join(out) + "\n"


def run_spin(n: int, requests: int, workdir: str) -> dict:
    path = os.path.join(workdir, f"ra{n}x{requests}.pml")
    with open(path, "w") as f:
        f.write(promela(n, requests))
    subprocess.run(["spin", "-a", os.path.basename(path)], cwd=workdir, check=True, capture_output=True)
    gcc = ["gcc", "-O2", "-DNOREDUCE", "-DSAFETY", "-DMEMLIM=8000", "-o", "pan", "pan.c"]
    subprocess.run(gcc, cwd=workdir, check=True, capture_output=True)
    started = time.perf_counter()
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "MAXRSS %M", "./pan", "-m100000"], cwd=workdir, capture_output=True, text=True
    )
    seconds = time.perf_counter() - started
    text = proc.stdout + proc.stderr
    stored = int(re.search(r"(\d+) states, stored", text).group(1))
    total = int(re.search(r"(\d+) transitions \(= stored\+matched\)", text).group(1))
    errors = int(re.search(r"errors: (\d+)", text).group(1))
    rss = int(re.search(r"MAXRSS (\d+)", text).group(1)) / 1024
    return dict(
        tool="SPIN", states=stored, transitions=total - 1, seconds=seconds, peak_mb=rss, errors=errors
    )


def run_mutexlab(n: int, requests: int, reductions: bool, twin: bool = False) -> dict:
    """``mutexlab check`` of RA N × requests; ``twin``: on the search core's pure-Python twin
    (``MUTEXLAB_CORE=python``), else on the compiled core when it is built."""
    argv = ["mutex", "-a", "ricart-agrawala", "-N", str(n), "--requests", str(requests)]
    env = {CORE_ENV: "python"} if twin else None
    out = check(argv + ([] if reductions else ["--no-reduction"]), timeout=None, max_memory=8000, env=env)
    if out.get("states") is None:
        raise SystemExit(f"mutexlab check {' '.join(argv)}: {out['verdict']}")
    tool = "mutexlab (reductions)" if reductions else "mutexlab, Python core" if twin else "mutexlab"
    return {
        "tool": tool,
        "states": out["states"],
        "transitions": out["transitions"],
        "seconds": out["wall"],
        "search_seconds": out["seconds"],
        "peak_mb": out["peak_mb"],  # VmHWM of the check, as /usr/bin/time reports SPIN's
        "verdict": out["verdict"],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=3)
    p.add_argument("--requests", type=int, nargs="+", default=[1, 2])
    p.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = p.parse_args(argv)
    if not shutil.which("spin") or not shutil.which("gcc"):
        print("needs spin and gcc: apt-get install -y spin gcc", file=sys.stderr)
        return 2
    when = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    say(
        f"{when}, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; search core: {core_name()}"
    )
    rows, notes = [], []
    for requests in args.requests:
        say(f"  RA N={args.nodes} × {requests}: SPIN, mutexlab check without and with reductions ...")
        with tempfile.TemporaryDirectory() as workdir:
            spin = run_spin(args.nodes, requests, workdir)
        plain, reduced = (run_mutexlab(args.nodes, requests, reductions) for reductions in (False, True))
        twin = run_mutexlab(args.nodes, requests, False, twin=True)
        for row in (spin, plain, twin, reduced):
            row["configuration"] = f"RA N={args.nodes} × {requests}"
            row["states_per_s"] = row["states"] / row["seconds"] if row["seconds"] else None
        rows += [spin, plain, twin, reduced]
        same = (spin["states"], spin["transitions"]) == (plain["states"], plain["transitions"])
        notes.append(
            f"RA N={args.nodes} × {requests}: same worlds as SPIN: {'yes' if same else 'NO'}; mutexlab/SPIN: "
            f"wall {ratio(plain['seconds'], spin['seconds'], 1)}×, states/s "
            f"{ratio(plain['states_per_s'], spin['states_per_s'], 3)}×, memory {ratio(plain['peak_mb'], spin['peak_mb'], 1)}×; "
            f"Python core/SPIN: wall {ratio(twin['seconds'], spin['seconds'], 1)}×; "
            f"with reductions/SPIN: wall {ratio(reduced['seconds'], spin['seconds'], 1)}×"
        )
    headers = ["configuration", "tool", "states", "transitions", "wall s", "states/s", "peak MB"]
    keys = ("configuration", "tool", "states", "transitions", "seconds", "states_per_s", "peak_mb")
    say(table(headers, [[row[k] for k in keys] for row in rows], digits=1))
    say("\n".join(notes))
    save_json(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
