"""Behaviour check for simulator optimisations: a fingerprint of many seeded runs.

Every optimisation of the simulator (``sim/engine.py``, ``sim/driver.py``) or of a protocol's
hot path must leave every trace identical, byte for byte. This module runs a fixed matrix of
configurations (every registered algorithm, the three delay models, the fault-injection
options, with and without tracing) and hashes each trace (JSON Lines, exactly as
``TraceWriter`` writes it) and each ``SimResult``. Record before a change, compare after::

    python -m bench.tracecheck --save /tmp/before.json
    # ... change the simulator ...
    python -m bench.tracecheck --compare /tmp/before.json     # exit 1 on any difference
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import mutexlab
from mutexlab.protocols.registry import SPECS, make_setup
from mutexlab.setups import ConfigError
from mutexlab.sim import SimConfig, Simulation
from mutexlab.trace import TraceWriter

CLASSIC_SIZES = (3, 5, 9)
SEEDS = (0, 1, 7)
FAULTS = (
    {},
    {"delay": "uniform"},
    {"delay": "fixed"},
    {"duplicate": 0.2},
    {"spike": 0.1, "spike_delay": 20.0},
    {"reorder": True},
)


def configurations() -> list[tuple[str, int, dict, int, dict]]:
    """(algorithm, processes, options, seed, sim options) — the matrix every check runs."""
    out = []
    for algorithm in SPECS:
        if algorithm == "bees":
            sizes = [(4, {"flowers": 2, "reeds": 2}), (9, {"reeds": 3}), (20, {"flowers": 4, "reeds": 3})]
        elif algorithm == "elves":
            sizes = [(3, {}), (5, {})]
        else:
            sizes = [(n, {"requests": 3}) for n in CLASSIC_SIZES]
        for n, options in sizes:
            for seed in SEEDS:
                for faults in FAULTS:
                    out.append((algorithm, n, options, seed, faults))
    return out


def _result_key(result) -> str:
    names = ("duration", "events", "messages", "entries", "notes", "states", "stalled", "truncated")
    fields = {name: getattr(result, name) for name in (*names, "duplicates_dropped")}
    return json.dumps(fields, sort_keys=True)


def fingerprint(algorithm: str, n: int, options: dict, seed: int, faults: dict) -> dict:
    out = {}
    for traced in (True, False):
        try:
            setup = make_setup(algorithm, n, options, seed)
        except ConfigError as exc:
            return {"config_error": str(exc)}
        trace = TraceWriter(None, keep=True) if traced else None
        config = SimConfig(seed=seed, max_events=200_000, **faults)
        try:
            result = Simulation(setup, config, trace).run()
        except Exception as exc:  # noqa: BLE001 - a failing run is part of the behaviour
            out["traced" if traced else "plain"] = f"raised {type(exc).__name__}: {exc}"
            continue
        digest = hashlib.sha256()
        if trace is not None:
            for event in trace.events:
                digest.update((json.dumps(event, separators=(",", ":")) + "\n").encode())
        digest.update(_result_key(result).encode())
        out["traced" if traced else "plain"] = digest.hexdigest()
    return out


def run_all() -> dict[str, dict]:
    return {
        json.dumps([a, n, o, s, f], sort_keys=True): fingerprint(a, n, o, s, f)
        for a, n, o, s, f in configurations()
    }


def protocol_sources() -> dict[str, str]:
    """Hashes of the protocol modules: a difference there (someone else's edit) explains a trace change."""
    folder = Path(mutexlab.__file__).parent / "protocols"
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()[:16] for p in sorted(folder.glob("*.py"))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tracecheck", description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--save", metavar="FILE", help="write the fingerprints here")
    group.add_argument("--compare", metavar="FILE", help="compare with fingerprints saved earlier")
    args = parser.parse_args(argv)
    prints = run_all()
    if args.save:
        with open(args.save, "w", encoding="utf-8") as handle:
            json.dump({"sources": protocol_sources(), "runs": prints}, handle, indent=1, sort_keys=True)
        print(f"{len(prints)} configurations fingerprinted → {args.save}")
        return 0
    with open(args.compare, encoding="utf-8") as handle:
        saved = json.load(handle)
    before = saved["runs"]
    changed = [name for name, digest in protocol_sources().items() if saved["sources"].get(name) != digest]
    if changed:
        print(f"note: protocol modules changed since the fingerprints were saved: {', '.join(changed)}")
    differ = [key for key in sorted(set(before) | set(prints)) if before.get(key) != prints.get(key)]
    for key in differ:
        print(f"DIFFERENT: {key}: {before.get(key)} → {prints.get(key)}")
    print(f"{len(prints)} configurations: {len(differ)} different")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
