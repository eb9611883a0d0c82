"""What a parallel ``mutexlab check`` would pay to move worlds between processes, against what
the sequential search spends per transition.

    python -m bench.check_parallel [--states N]

A hash-partitioned search sends every successor whose fingerprint another worker owns. The
checker's worlds are tuples of ids into tables that belong to one process (process states,
messages, link contents), so a world must travel in a form another process can read: each
process's snapshot key, each link's messages as (type, JSON), the pending decisions and the
holdings. This measures, on Ricart–Agrawala N=3 × 2 without reductions, the sequential search's
CPU time per transition and the CPU time to encode, pickle, unpickle and decode such a world
(decoding as dictionary look-ups only: a worker that meets a new snapshot would also need the
protocol object, which a snapshot cannot rebuild). For comparison: the same worlds pickled as
the int tuples themselves in batches of 1,000 — what a fork-based level-parallel search could
send if every worker shared the tables, plus the parent's de-duplication of them.
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time

from mutexlab.check.engine import CheckConfig, build_model
from mutexlab.check.search import Search


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--states", type=int, default=200_000)
    args = p.parse_args(argv)
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, load average {os.getloadavg()[0]:.1f}")
    model = build_model(CheckConfig("ricart-agrawala", 3, {"requests": 2}, reductions=False))
    worlds: list[tuple] = []

    def keep(_model, world):
        worlds.append(world)

    started = time.process_time()
    result = Search(model, keep, args.states).dfs()
    search = time.process_time() - started
    print(
        f"sequential search: {result.states:,} states, {result.transitions:,} transitions, {search:.2f} CPU-s: "
        f"{search / result.transitions * 1e6:.2f} µs per transition (recording each world)"
    )
    keys = {sid: key for key, sid in model.state_ids.items()}
    texts = {mid: (m.type, m.model_dump_json()) for mid, m in enumerate(model.messages)}
    n, L, P0, seqs = model.n, model.L, model.P0, model.seqs

    def portable(w: tuple) -> tuple:
        return (
            tuple(keys[w[i]] for i in range(n)),
            tuple(tuple(texts[m] for m in seqs[w[n + k]]) for k in range(L)),
            tuple(tuple(model.actions[a] for a in seqs[w[P0 + i]]) for i in range(n)),
            seqs[w[model.H]],
        )

    sid_of = dict(model.state_ids)
    mid_of = {text: mid for mid, text in texts.items()}

    def decode(world: tuple) -> tuple:
        procs, links, _, _ = world
        return tuple(sid_of[k] for k in procs) + tuple(
            model.seq_id(tuple(mid_of[m] for m in link)) for link in links
        )

    costs = {}
    encoded = timed(costs, "encode", lambda: [portable(w) for w in worlds])
    blobs = timed(costs, "pickle", lambda: [pickle.dumps(e, protocol=5) for e in encoded])
    back = timed(costs, "unpickle", lambda: [pickle.loads(b) for b in blobs])
    timed(costs, "decode", lambda: [decode(w) for w in back])
    batches = [worlds[i : i + 1000] for i in range(0, len(worlds), 1000)]
    packed = timed(costs, "int tuples: pickle", lambda: [pickle.dumps(b, protocol=5) for b in batches])
    unpacked = timed(costs, "int tuples: unpickle", lambda: [pickle.loads(b) for b in packed])
    timed(costs, "int tuples: de-duplicate", lambda: len({hash(w) for batch in unpacked for w in batch}))
    count = len(worlds)
    for name, seconds in costs.items():
        print(f"  {name:<26} {seconds / count * 1e6:6.2f} µs per world")
    print(
        f"  bytes per world: portable {sum(map(len, blobs)) / count:.0f}, "
        f"int tuples {sum(map(len, packed)) / count:.0f}"
    )
    return 0


def timed(costs: dict, name: str, work):
    started = time.process_time()
    out = work()
    costs[name] = time.process_time() - started
    return out


if __name__ == "__main__":
    sys.exit(main())
