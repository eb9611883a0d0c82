"""``check --metrics``' flags, its run after the plain check, and its lines (check/metrics.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..setups import ConfigError

if TYPE_CHECKING:
    from ..check.engine import CheckConfig


def add_arguments(g) -> None:
    g.add_argument(
        "--metrics",
        action="store_true",
        help="after a passing check, the worst and best cases over every interleaving: messages per "
        "entry, synchronisation delay, bypass (searched again without partial-order reduction)",
    )
    g.add_argument(
        "--metrics-witness",
        metavar="DIR",
        help="with --metrics: write the run reaching each figure as a scenario in DIR (replayed to confirm)",
    )


def refused(args) -> str | None:
    """Why --metrics cannot run with these flags, or None."""
    if getattr(args, "metrics_witness", None) and not args.metrics:
        return "--metrics-witness needs --metrics"
    if not args.metrics:
        return None
    for flag, on in (
        ("--endless", getattr(args, "endless", False)),
        ("--reorder", args.reorder),
        ("--duplicate", args.duplicate),
    ):
        if on:
            return f"--metrics needs a bounded workload on FIFO links without duplicates: not with {flag}"
    return None


def run_metrics(args, config: CheckConfig, result, progress=None, model=None) -> dict:
    """The figures (``metrics`` of the JSON); only after a complete check that found nothing.
    ``model``: the check's, whose transitions are computed already (else one is built)."""
    from dataclasses import replace

    from ..check.engine import build_model
    from ..check.metrics import search_metrics
    from ..check.witness import write_witnesses

    if result.findings or not result.complete or result.refusal is not None:
        why = (
            "the check found a violation"
            if result.findings
            else "the check met a refused step (a state of no name): the worlds past it are unknown"
            if result.refusal is not None
            else "the check did not complete"
        )
        return {"complete": False, "stopped": f"not computed: {why}"}
    # the per-world reductions the protocol declares keep the figures (docs/check.md#metrics);
    # partial-order reduction, which skips interleavings, is never used by the figures' search
    if model is None:
        model = build_model(replace(config, partial_order=False))
    try:
        found = search_metrics(model, config.max_states, config.max_memory_mb, progress, config.exact)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    out = found.as_dict()
    if model.refusals:  # a step the figures' search took as a dead end: figures of a pruned graph
        return {"complete": False, "stopped": "not computed: a step was refused (a state of no name)"}
    if args.metrics_witness and found.complete and found.defined:
        try:
            out["witnesses"] = write_witnesses(
                model,
                found,
                config.algorithm,
                config.processes,
                config.options,
                config.seed,
                args.metrics_witness,
                config.solution,
            )
        except OSError as exc:
            raise ConfigError(f"cannot write into {args.metrics_witness}: {exc.strerror}") from None
    return out


def lines(m: dict) -> list[str]:
    """The metrics in words, under the verdict."""
    if m.get("stopped") and not m.get("states"):
        return [f"metrics:      {m['stopped']}"]
    head = (
        f"metrics:      {m['states']:,} worlds with their histories, {m['transitions']:,} transitions, "
        f"{m['seconds']:.2f} s — {_reductions(m['reductions'])}"
    )
    if not m["complete"]:
        return [head, f"metrics:      INCOMPLETE — {m['stopped']}: no figure is proven"]
    if "why" in m:
        return [head, f"metrics:      none — {m['why']}"]
    out = [head]
    for resource, f in m["resources"].items():
        msg, sync, byp = f["messages_per_entry"], f["sync_delay"], f["bypass"]
        avg = f["messages_per_entry_run_average"]
        average = (
            f" (a run's average: {avg['min']:g} to {avg['max']:g})"
            if avg["min"] is not None
            else " (a run's average: only with one kind of resource)"
        )
        out.append(
            f"  {resource}: messages per entry min {_v(msg['min'])}, max {_v(msg['max'])}{average}; "
            f"synchronisation delay max {_v(sync['max'])} hops (shortest chain, at its worst: "
            f"{_v(sync['max_shortest_chain'])}); bypass max {_v(byp['max'])}"
        )
    for w in m.get("witnesses", []):
        ok, why = w["reproduced"]
        out.append(
            f"  {w['figure']} {w['value']} written to {w['file']} (replay reaches it: {'yes' if ok else 'NO'} — {why})"
        )
    return out


def _reductions(applied: list[str]) -> str:
    off = "partial-order reduction off (the figures depend on the interleaving)"
    return f"with {', '.join(applied)}; {off}" if applied else f"no reduction; {off}"


def _v(x) -> str:
    return "— (no exit while someone waited)" if x is None else str(x)
