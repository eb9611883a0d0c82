"""Part 1: message complexity and synchronization delay of the six classic algorithms.

Every algorithm runs in the simulator (exponential message delays, mean T = 1) with
``mutexlab simulate mutex``'s workload (``mutexlab.runs.run_classic``: per-node think
and critical-section times, audited trace) and is measured by ``mutexlab.metrics.measure``:

* **light load** — one requester at a time: the mean think time is 10,000·N message delays, so
  requests almost never overlap; the run reports how many handovers found someone waiting
  (``overlaps``, expected 0 or nearly). Messages per entry and response time (request → enter).
* **heavy load** — everyone always waiting: think time 0, so a node asks again as soon as it
  leaves. Messages per entry and the synchronization delay (exit → next enter while others wait).

Delays are in units of the mean message delay observed in the trace (T). The literature's figures
come from each algorithm's spec (``AlgorithmSpec.literature``); where it gives a range, light load
is compared with its low end and heavy load with its high end (Maekawa: 3(|S|−1) light, 5(|S|−1)
heavy, |S| the run's quorum size), except Lamport's, the other way round (no overlap: every REPLY
is sent, 3(N−1); everyone waiting: REPLYs suppressed, 2(N−1)); Suzuki–Kasami's "0 or N" is
compared with N (0 only when the token holder asks again); Raymond's heavy-load figure is his own
"about 4" (not in the spec's figures). Ratio = measured / literature.
"""

from __future__ import annotations

import itertools
import math
import time

from .common import ratio, say, table

SIZES = (3, 5, 9, 13, 31)
RAYMOND_HEAVY = 4.0  # Raymond (1989): about four messages per entry under saturation
LIGHT_THINK = 10_000.0  # light load: mean think time per node, in message delays, times N


def literature(
    algorithm: str, n: int, params: dict, load: str, kind: str = "messages"
) -> tuple[str, float | None]:
    """The literature's figure and its value at this size: ``kind`` "messages" per entry under
    ``load`` (see the module's docstring), or "sync", the synchronization delay (its low end)."""
    from mutexlab.protocols.registry import spec

    figure = spec(algorithm).literature[kind]
    span = figure.range(n, params)
    if kind == "messages" and algorithm == "raymond" and load == "heavy":
        return "≈4 (Raymond)", RAYMOND_HEAVY
    if span is None:
        return figure.text, None
    low, high = span
    if kind == "sync":
        return f"{figure.text} = {low:.3g}", low
    if algorithm == "suzuki-kasami":
        return f"N = {n}", float(n)
    low_end = (load == "light") != (algorithm == "lamport")
    value = low if low_end else high
    text = figure.text
    if " to " in text and not math.isclose(low, high):
        text = text.split(" to ")[0 if low_end else 1]
    return f"{text} = {value:.3g}", value


def raymond_light_model(n: int) -> float:
    """Raymond under light load on the default (heap-shaped) tree: the token travels from the last
    holder to the next requester and the request the other way, so 2 × the mean tree distance
    between two nodes drawn independently (the same node: 0 messages)."""
    from mutexlab.protocols.trees import default_parents

    parents = default_parents(n)
    paths = []  # each node's way to the root
    for x in range(1, n + 1):
        paths.append([x])
        while paths[-1][-1] in parents:
            paths[-1].append(parents[paths[-1][-1]])
    total = sum(min(a.index(c) + b.index(c) for c in set(a) & set(b)) for a in paths for b in paths)
    return round(2 * total / (n * n), 3)


def requests_for(n: int, load: str, full: bool) -> int:
    if load == "light":
        return max(3 if full else 2, math.ceil((240 if full else 60) / n))
    return 15 if full else 4


def one(algorithm: str, n: int, load: str, full: bool, seed: int = 0) -> dict:
    from mutexlab.runs import run_classic

    requests = requests_for(n, load, full)
    think = LIGHT_THINK * n if load == "light" else 0.0
    started = time.perf_counter()
    run = run_classic(algorithm, n, requests, seed, {}, "exp", think=think, cs=1.0)
    m = run.metrics
    params = run.setup.params
    text, value = literature(algorithm, n, params, load)
    out = {
        "algorithm": algorithm,
        "n": n,
        "load": load,
        "requests_per_node": requests,
        "seed": seed,
        "think": think,
        "cs": 1.0,
        "entries": m.entries,
        "messages": m.total_messages,
        "messages_by_type": dict(sorted(m.messages.items())),
        "messages_per_entry": _r(m.per_entry),
        "literature": text,
        "literature_value": _r(value),
        "ratio": ratio(m.per_entry, value),
        "response_time_T": _r(m.response_time),
        "sync_delay_T": _r(m.sync_delay),
        "handovers_with_waiters": len(m.sync_delays),
        "mean_delay": _r(m.mean_delay),
        "safe": run.verdict.safe,
        "complete": run.result.ok,
        "seconds": round(time.perf_counter() - started, 2),
    }
    if algorithm == "raymond" and load == "light":
        out["model"] = raymond_light_model(n)
    if algorithm == "maekawa":
        sizes = [len(s) for s in params.get("quorum_sets", {}).values()]
        out["quorum"] = f"{params.get('quorums')} K={min(sizes)}" + (
            f"–{max(sizes)}" if max(sizes) != min(sizes) else ""
        )
    if load == "heavy":
        stext, svalue = literature(algorithm, n, params, load, "sync")
        out.update(
            sync_literature=stext, sync_literature_value=_r(svalue), sync_ratio=ratio(m.sync_delay, svalue)
        )
    return out


def _r(value, digits: int = 3):
    return None if value is None else round(value, digits)


def run(full: bool, algorithms: list[str] | None = None, sizes: tuple[int, ...] = SIZES) -> dict:
    from mutexlab.protocols.registry import CLASSIC

    rows = []
    for algorithm, n in itertools.product(algorithms or CLASSIC, sizes):
        rows += [one(algorithm, n, load, full) for load in ("light", "heavy")]
        say(
            f"  {algorithm} N={n}: light {rows[-2]['messages_per_entry']} msgs/entry, "
            f"heavy {rows[-1]['messages_per_entry']} msgs/entry, sync {rows[-1]['sync_delay_T']} T"
        )
    return {"sizes": list(sizes), "delay_model": "exp (mean T = 1)", "runs": rows}


def render(part: dict) -> str:
    heavy = {(r["algorithm"], r["n"]): r for r in part["runs"] if r["load"] == "heavy"}
    rows = []
    for lo in (r for r in part["runs"] if r["load"] == "light"):
        hi = heavy[lo["algorithm"], lo["n"]]
        name = lo["algorithm"] + (f" ({lo['quorum']})" if "quorum" in lo else "")
        rows.append(
            [name, lo["n"], lo["messages_per_entry"], lo["literature"], lo["ratio"], lo["response_time_T"]]
            + [lo["handovers_with_waiters"], hi["messages_per_entry"], hi["literature"], hi["ratio"]]
            + [hi["sync_delay_T"], hi["sync_literature"], hi["sync_ratio"]]
            + [lo["safe"] and hi["safe"] and lo["complete"] and hi["complete"]]
        )
    headers = "algorithm|N|light msgs/entry|literature|ratio|light response (T)|overlaps|heavy msgs/entry"
    return table(
        (headers + "|literature|ratio|sync delay (T)|literature|ratio|safe+complete").split("|"), rows
    )
