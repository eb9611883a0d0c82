"""Render a results JSON of ``python -m bench.run`` as the Markdown of BENCHMARKS.md.

    python -m bench.markdown docs/benchmarks-full.json > BENCHMARKS.md
    python -m bench.markdown docs/benchmarks-full.json --before docs/benchmarks-before-transport.json > BENCHMARKS.md

``--before`` adds part 3's algorithm runs of an earlier results file beside this run's (the
transport before its optimisations: ``docs/benchmarks-before-transport.json`` is ``--full --parts 3``
at commit 8a54f30 on the same machine).

Every number in the output comes from the JSON; the prose around the tables says how each
figure was measured and what explains it.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from . import complexity, overrabbit, simspeed
from .common import fmt, table


def _machine(results: dict) -> list[str]:
    m = results["machine"]
    after = results.get("machine_after", {}).get("load_average")
    lines = [
        f"- **Date**: {m['date']} (mode `{results['mode']}`, {results.get('seconds', '?')} s in all)",
        f"- **Machine**: {m['nproc']} cores ({m.get('cpu', 'unknown CPU')}), {m.get('memory_total_gib')} GiB RAM, "
        f"{m['platform']}",
        f"- **Load average** (1, 5, 15 min) at the start: {m['load_average']}"
        + (f"; at the end: {after}" if after else ""),
        f"- **Software**: Python {m['python']}, pika {m['pika']}, redis-py {m['redis']}, pydantic {m['pydantic']}; "
        f"commit `{m.get('git_commit')}`",
        f"- **Command**: `{results['command']}`",
    ]
    if m.get("free_h"):
        lines += ["", "```", "$ nproc", str(m["nproc"]), "$ free -h", m["free_h"], "```"]
    return lines


def _headlines(results: dict) -> list[str]:
    parts = results["parts"]
    out = []
    if "2" in parts:
        cases = parts["2"]["cases"]
        text = ", ".join(
            f"{c['algorithm']} {c['processes']}: {fmt(c['msgs_per_s'])}/s ({fmt(c['msgs_per_cpu_s'])} per "
            f"CPU-second)"
            for c in cases
        )
        target = parts["2"]["target_msgs_per_s"]
        below = [c for c in cases if (c["msgs_per_s"] or 0) < target]
        verdict = (
            "**Target met in every case**"
            if not below
            else f"**Target met in {len(cases) - len(below)} of {len(cases)} cases**; below it: "
            + ", ".join(
                f"{c['algorithm']} {c['processes']} ({fmt(c['wall_s'], 4)} s for {fmt(c['messages'])} "
                f"messages and {fmt(c['events'] - c['messages'])} local events)"
                for c in below
            )
        )
        out.append(
            f"- **Simulator**, simulated messages per second with tracing off (best of {parts['2']['repeat']}; "
            f"target {fmt(target)}/s): {text}. {verdict}."
        )
        steps = parts["2"].get("optimisation_steps", {}).get("rows", [])
        final = [r for r in steps if r["step"] == steps[-1]["step"]]
        if final:
            out.append(
                "- **Optimisations**, CPU time of the original simulator ÷ now: "
                + ", ".join(f"{r['case']} ×{r['speedup_cpu']}" for r in final)
                + "; traces identical byte for byte."
            )
    if "3" in parts:
        p3 = parts["3"]
        raw = p3["raw"]
        runs = p3["runs"]
        sem = {c["processes"]: c for c in p3["contention"] if c["mechanism"].startswith("queue")}
        streams = stream_rows(p3)
        plain = streams.get(("transport", "messages", 1))
        if plain:
            twin = streams.get(("raw pika", "messages", 1))
            alone, traced = streams.get(("transport", "untapped", 1)), streams.get(("transport", "traced", 1))
            burst, burst_twin = (
                streams.get(("transport", "messages", 4)),
                streams.get(("raw pika", "messages", 4)),
            )
            text = (
                f"- **Transport against raw pika** (same broker, same run): raw pika moves "
                f"{fmt(raw['transient']['msgs_per_s'])} msgs/s transient, {fmt(raw['confirmed']['msgs_per_s'])} "
                f"persistent with a confirm awaited per publish, {fmt(raw['pipelined']['msgs_per_s'])} persistent "
                f"with pipelined confirms. The transport's own message path (envelope, validating codec, link "
                f"sequence numbers, persistent publishes with pipelined confirms, acks held back until the "
                f"confirms, the monitor's tap), one message per input, streams {fmt(plain['msgs_per_s'])} msgs/s"
            )
            if twin:
                cases = [(plain, twin, "one message per input")] + (
                    [(burst, burst_twin, "four (an N = 5 broadcast)")] if burst and burst_twin else []
                )
                verdicts = "; ".join(
                    f"{label}: {fmt(mine['msgs_per_s'])} against {fmt(ref['msgs_per_s'])} msgs/s, "
                    f"**{mine['vs_twin']:.0%}** ({'met' if mine['vs_twin'] >= 0.5 else 'NOT met'})"
                    for mine, ref, label in cases
                )
                text += (
                    f". **Target** (issue 7: at least half of raw pika's rate), measured against raw pika doing "
                    f"the same broker work — persistent, confirmed, `mandatory`, the run's topic exchange, the "
                    f"monitor's copy of every message, a poll per input: what docs/architecture.md#wire "
                    f"requires and any "
                    f"client pays — {verdicts}. Against raw pika's transient rate, which skips all of that, the "
                    f"transport reaches {plain['vs_raw_transient']:.0%}"
                    + (f" and {burst['vs_raw_transient']:.0%}" if len(cases) > 1 else "")
                    + f"; raw pika itself reaches {twin['vs_raw_transient']:.0%}"
                    + (f" and {burst_twin['vs_raw_transient']:.0%}" if len(cases) > 1 else "")
                    + " of it with those guarantees"
                )
            else:  # results written before the twin existed
                met = "met" if plain["vs_raw_transient"] >= 0.5 else "not met"
                text += f": **{plain['vs_raw_transient']:.0%} of raw transient** (target ≥ 50 %: **{met}**)"
            if burst and not (twin and burst_twin):
                text += (
                    f". Four messages per input (an N = 5 broadcast): {fmt(burst['msgs_per_s'])} msgs/s, "
                    f"{burst['vs_raw_transient']:.0%} of raw transient"
                )
            if alone:
                text += (
                    f". Without the monitor's copy of each message {fmt(alone['msgs_per_s'])} msgs/s "
                    f"({alone['vs_raw_transient']:.0%} of raw transient)"
                )
            if traced:
                text += (
                    f"; with a run's trace events (a send and a recv batch per message) "
                    f"{fmt(traced['msgs_per_s'])} msgs/s ({traced['vs_raw_transient']:.0%} of raw transient)"
                )
            out.append(text + ".")
        bounded = [r for r in runs if r.get("msgs_vs_latency_bound")]
        if bounded:
            delays = [r["sync_delay_ms"] for r in bounded]
            out.append(
                f"- **The algorithms over RabbitMQ** move {fmt(min(r['msgs_per_s'] for r in runs))}–"
                f"{fmt(max(r['msgs_per_s'] for r in runs))} protocol msgs/s, a median "
                f"{statistics.median(r['msgs_vs_latency_bound'] for r in bounded):.0%} of what their "
                f"synchronization delay allows (messages per entry ÷ delay; {fmt(min(delays))}–{fmt(max(delays))} ms "
                f"per handover){_what_bounds_the_runs(runs, results['machine'].get('nproc'))}."
            )
        for n in sorted(sem):
            at_n = [r for r in runs if r["n"] == n]
            top = max(at_n, key=lambda r: r["entries_per_s"] or 0)
            redis = {
                c["mechanism"]: c
                for c in p3["contention"]
                if c["processes"] == n and "redis" in c["mechanism"]
            }
            out.append(
                f"- **N = {n}, entries per second**: decentralized {fmt(min(r['entries_per_s'] for r in at_n))}–"
                f"{fmt(top['entries_per_s'])} (best: {top['algorithm']}); queue semaphore "
                f"{fmt(sem[n]['entries_per_s'])} (×{fmt(sem[n]['entries_per_s'] / top['entries_per_s'], 0)} the "
                f"best); "
                + "; ".join(
                    f"{name} {fmt(c['entries_per_s'])} (longest streak of one process "
                    f"{c['longest_streak_one_process']})"
                    for name, c in redis.items()
                )
                + "."
            )
    if "4" in parts:
        rows = parts["4"]["runs"]
        out.append(
            "- **Bees end to end**: "
            + "; ".join(
                f"P={r['bees']}: {fmt(r['duration_s'])} s, {fmt(r['messages'])} messages, "
                f"×{r['ratio_to_sim']} the simulator's"
                for r in rows
            )
            + "."
        )
    return out


PART1_NOTES = """\
How: `mutexlab simulate mutex`'s workload (`mutexlab.runs.run_classic`: per-node think and
critical-section times, exponential message delays with mean T = 1, every trace audited) measured by
`mutexlab.metrics.measure`. **Light load**: mean think time 10,000·N message delays, so requests almost
never overlap (`overlaps` counts the handovers that found someone waiting: 0 or nearly). **Heavy load**:
think time 0 — a node asks again the moment it leaves, everyone is always waiting. Critical sections last
1 T on average. Delays are in units of the mean message delay observed in the same trace. The
literature's figures are each algorithm's `AlgorithmSpec.literature`; where it gives a range, light load is compared
with its low end and heavy load with its high end (Maekawa 3√N / 5√N), Suzuki–Kasami's "0 or N" with N,
and Raymond's heavy load with his "about 4". Ratio = measured ÷ literature.

"""

PART2_NOTES = """\
How: each case in a fresh interpreter (`python -m bench.simspeed --one CASE`), tracing off, the wall
and CPU time of `Simulation.run()` only (best of the repeats: the machine is shared), peak resident set
(VmHWM, interpreter and imports included — `RSS before run` is that baseline) and, in a separate run,
the peak of Python allocations during the run (tracemalloc). Bees: K = 3 flowers, T = ⌈P/3⌉ reeds
(3 bees per reed with 5 eggs and 15 cocoons), so every bee lays. Ricart–Agrawala: 10 requests per node.
`msg exp.` and `time exp.` are the local exponents between consecutive sizes (cost ∝ size^exp).

**Optimisation steps** (`python -m bench.ladder`): each step is a set of file versions from git history
(`sim/engine.py`, `protocols/bees.py`, `messages.py`, `protocol.py`) in a copy of the current library,
run interleaved, best of the repeats. Every step produced identical traces and results (`python -m bench.tracecheck --save` before,
`--compare` after: 414 seeded configurations — every algorithm, three delay models, duplicates, spikes,
reordering, traced and untraced — byte for byte):
1. **plain run loop** (`sim/engine.py`): with tracing off and no fault injection, `Simulation.run` uses a
   loop that inlines `deliver`, `apply` and `transmit` for network sends (the bulk of the work); every
   other effect still goes through `Driver.apply`. A subclass that overrides any of them gets the
   general loop.
2. **bees entry checks** (`protocols/bees.py`): `alive <= reed_acks` instead of building
   `alive − reed_acks` on every ACKreed; the requests sorted once per reed check instead of twice;
   `_try_flower` skips the set intersection while fewer ACKflowers than needed have arrived at all.
3. **inline exponential draw, no id strings** (`sim/engine.py`): `-log(1 − random())` instead of calling
   `expovariate(1.0)` (then checked equal at import; now the formula itself, no check), and no `"<name>#<n>"` message-id
   strings in the plain loop, where nothing can observe them.

4. **bees: no per-message scans** (`protocols/bees.py`): the sorted request order (and the bee's rank in
   it) is cached until a request arrives, instead of re-sorting on every ACKreed and RELEASEreed; counts of
   ACKs from live bees replace the subset test on every ACKreed and the set intersection on every late
   ACKflower; the deferred list is rebuilt on RELEASEreed only when it is not empty. This was the work
   that grew with P.
5. **trusted construction** (`messages.py`): `Model.trusted(sender, ts, ...)` builds a protocol's own,
   known-valid message without validation — the same object validation would build, checked against
   real validation at import (it falls back to validating if pydantic ever differs); `Codec.decode` of
   anything from outside still validates. The bees build their ACKs with it.
6. **per-sender link table** (`sim/engine.py`): no tuple key per message; the link sequence number in a
   local; empty effect lists skipped.
7. **`Send` construction** (`protocol.py`): `Send.__init__` sets its two slots directly — the same frozen
   dataclass (equality, hash, signature), about half the cost per message.

Since then (one place per shortcut, issue 15; one module for them, issue 25): the simulator's loop,
`Simulation._run`, takes every effect through `Driver.apply`; untraced and without fault injection it
runs `sim/fastpath.py`'s loop instead, which carries out a network `Send` inline (steps 1, 3 and 6; the
general loop is gone) and is tested against the plain loop (`tests/test_fastpath.py`). The exponential delay
is `-log(1 − random())` everywhere, what `expovariate(1.0)` computes, so no import-time check is needed.
Each remaining shortcut (this loop; `fastpath.trusted`, which `Model.trusted` calls; `fastpath.slot_init`,
`Send`'s constructor; the bees' order cache and live-ACK counts, the bees' and elves' `__deepcopy__`)
carries its measured reason in a comment beside it (docs/architecture.md#fast-paths).

What is left in a profile (bees P = 200): the protocol handlers themselves, validating the messages
that are not built with `trusted`, `Send` objects and the engine loop.
"""

PART3_NOTES = """\
How: **raw pika** and the **transport stream** are measured in turns, best of 3 in full mode (every
repeat's rate is in the `repeats` column: the machine is shared). **Raw pika**, one producer and one
consumer process on one queue: `transient` = no confirm, not persistent, auto-ack (the physical limit of
this machine); `confirmed` = persistent, a confirm awaited per publish
(`BlockingChannel.confirm_delivery`), manual ack per delivery; `pipelined` = persistent, confirms
received asynchronously and awaited at the end, one cumulative ack per 50 deliveries — the transport's
guarantees done the fastest way raw pika can. One-hop latency by ping-pong. **Transport stream**
(`bench/stream.py`): one sender process streams Ricart–Agrawala REQUESTs to one receiver through the
participant's own code path (`envelope`, the codec, `Bus.send` on the run's topology, `parse_envelope`,
the validating decode, `LinkInbox`, `Bus.ack`) while a third process taps the monitor queue with the
monitor's prefetch; the sender polls after each input of 1 message (a REPLY) or of 4 (an N = 5
broadcast); `untapped` leaves the monitor queue unbound (the transport's path without the monitor's copy
of each message); `traced` adds a one-event audit batch per message from each side, as a run does. Its
**raw pika twin** does the same broker work with pika alone: the same topology and envelope bytes (built
before the clock starts), persistent, `mandatory`, confirms taken in asynchronously, the same poll per
input, cumulative acks every 25 deliveries (the Bus's batch) and the monitor's prefetch on the tap;
`÷ raw pika same work` is the transport over its twin. `broker CPU µs/msg` is the local RabbitMQ node's
CPU time (from /proc) over the measurement divided by the messages (worker connections included: an
upper bound). **Algorithms** (each run 3 times in full mode: the median by entries/s is shown, with
every run's rate beside it; a failed run would be shown instead): started exactly as a user does
(`mutexlab run mutex -a ALG -N n -r R --dwell 0`): the monitor and n participants as separate OS
processes, every protocol message a persistent, confirmed publish, each step's trace events one batch
to the monitor, the trace audited at the end. `duration` is the monitor's (from the welcome that starts
the run to completion); entries/s and msgs/s are over it, and so are `CPU busy` (the share of all the
machine's cores busy, from /proc/stat sampled every 20 ms) and `broker CPU µs/msg` (the local broker's
CPU per protocol message: the message, the monitor's copy, its share of trace batches, statuses,
confirms and acks). `sync delay` (exit → next entry while someone waits) and `send→recv` come from the
trace (wall clock). `latency bound` = messages per entry ÷ sync delay: the rate if every handover took
exactly the measured delay and nothing else. The **queue semaphore** is one token message, take =
consume with prefetch 1, give back = confirmed publish + ack; **redis-py's `Lock`** polls every 0.1 s
(its default) or 1 ms. Each contender records its critical sections on the system-wide monotonic clock:
`overlaps` counts overlapping critical sections (0 = mutual exclusion held), `longest streak` the most
consecutive entries by one process (1 = perfectly alternating).

**Optimisations of the transport** (issue 7), each measured with the same `mutexlab run` cases:
1. *pipelined publisher confirms*: `Bus.send` no longer waits for each publish's confirm (pika's
   `BlockingChannel.confirm_delivery` does: one broker round trip and disk sync per publish); confirms
   arrive asynchronously, and the invariant "a delivery is acked only after its effects are on the
   broker" is kept by holding each ack back until everything published before it is confirmed, then
   sending one cumulative ack;
2. *one trace batch per input*: an input's trace events go to the monitor as one message (before the
   input's protocol messages, so a send is always known before its receipt), carrying the new status
   when the state changed — instead of one confirmed publish per event and one per status;
3. *the monitor* acks cumulatively once per batch of deliveries, with a prefetch of 1,000;
4. *one write per input*: pika sends each frame with its own system call (three per publish); the Bus
   joins what an input buffered into one write, so the broker reads one segment instead of 3k;
5. *one trace batch per step* (session 4): the inputs a participant takes in one round of its loop (the
   deliveries of one poll, then the timers due) share one batch, published before their messages,
   with their acks after both — at saturation about 45% fewer audit messages (Ricart–Agrawala N = 5,
   200 requests per node: some 1,100 batches per node instead of 2,000);
6. *the monitor's message-rate window* (session 4) is trimmed from its old end on each send; it was
   rebuilt on every send once more than 4,096 sends fell inside its 5 s window, which took 39% of the
   monitor's CPU in a long run (the short runs of earlier full runs never reached it).

Why the decentralized algorithms stay far behind the centralized mechanisms in entries per second:
- **messages per entry**: a semaphore entry is one publish and one delivery; Ricart–Agrawala needs
  2(N−1) messages, Lamport up to 3(N−1), Suzuki–Kasami N, Maekawa about 3–5·K, each a persistent
  publish, a delivery, a validating decode and a trace batch;
- **synchronization delay**: the next node enters only after at least one message hop after an exit
  (two for Maekawa), and a hop under load crosses the broker and two busy Python processes;
- **CPU**: n + 1 Python processes and the broker share the machine's cores, and every protocol message
  costs the broker a persistent publish routed to two queues (the receiver's and the monitor's tap), a
  share of a trace batch, the confirms and the acks (the `CPU busy` and `broker CPU µs/msg` columns).
- **the broker's disk syncs**: the broker confirms a persistent message only after an fsync, which it
  shares among the messages that reach a queue while it is busy; a run's traffic comes in small bursts
  to many queues, so the syncs are shared poorly. Counted with `strace -f -c -e trace=fsync -p <beam.smp
  pid>` (session 4, not part of the benchmark): 4,121 fsyncs while Ricart–Agrawala N = 5 exchanged
  4,000 protocol messages (`mutexlab run mutex -a ricart-agrawala -N 5 -r 100 --dwell 0`), against 685
  while the transport's stream moved 12,000 (`bench.stream.stream(url, 12000)`).
The Redis lock is fast but unfair with its default 0.1 s polling: the releasing process re-acquires at
once, so one process takes long streaks while the others sleep.
"""

PART4_NOTES = """\
How: `mutexlab run bees -P p -T ⌈p/3⌉ --dwell 0 --seed 0` (monitor and p bee processes), against
`Simulation` of the same setup (same seed, hence the same initial Lamport clocks) with zero dwell times.

Why the counts differ (slightly): the model fixes every count except one — a bee broadcasts REQflower
and RELEASEreed only to the bees it does not yet know to be gone, and answers REQflowers with ACKflower
only while alive. How many bees have died when a broadcast is made depends on the interleaving, which
differs between the simulator's random delays and the real scheduling of p processes on 2 cores. Per bee
the protocol is the same: every bee lays its 5 eggs, every reed entry and flower entry happens, and the
audit finds the run safe.
"""


def _part1_findings(part: dict) -> str:
    """What the ratios say, with the figures taken from this run."""
    runs = part["runs"]
    light = {(r["algorithm"], r["n"]): r for r in runs if r["load"] == "light"}
    heavy = {(r["algorithm"], r["n"]): r for r in runs if r["load"] == "heavy"}

    def growth(algorithm: str) -> str:
        values = [
            heavy[k]["messages_per_entry"] / light[k]["messages_per_entry"] - 1
            for k in light
            if k[0] == algorithm and light[k]["messages_per_entry"]
        ]
        return f"{min(values):+.0%} to {max(values):+.0%}" if values else "–"

    def sync(algorithm: str) -> str:
        values = [
            heavy[k]["sync_delay_T"]
            for k in heavy
            if k[0] == algorithm and heavy[k]["sync_delay_T"] is not None
        ]
        return f"{min(values):.2f}–{max(values):.2f} T" if values else "–"

    return f"""What the ratios say:
- **Ricart–Agrawala** costs exactly 2(N−1) under any load and hands over in about one message delay
  ({sync("ricart-agrawala")}).
- **Lamport** costs exactly 3(N−1) when alone but only 2(N−1) under saturation (ratio 0.67): this
  implementation's rule 2 sends no REPLY to a node while its own request is pending — under heavy load
  everyone's is, so only REQUEST and RELEASE travel. Handover {sync("lamport")}.
- **Maekawa** follows its quorum size K rather than √N: a projective plane when N = q²+q+1 with q prime
  (13, 31: K ≈ √N, ratios below 1 because a node's messages to itself are local), a grid otherwise
  (5, 9: K ≈ 2√N − 1, ratios above 1). Saturation adds INQUIRE/FAILED/YIELD: {growth("maekawa")} messages
  per entry over light load. Handover {sync("maekawa")} against the textbook 2T (RELEASE to the arbiter,
  REPLY to the next): shorter when the leaving node is itself one of the next requester's arbiters (its
  RELEASE to itself is handled locally, only the REPLY travels), longer when an INQUIRE/YIELD exchange
  sits between the exit and the next entry.
- **Sanders** with its default sets (R_i = everyone, I_i = {{i}}: the Ricart–Agrawala-like sets) costs the
  uncontended 2(N−1) when alone; under saturation its Maekawa-style deadlock resolution (INQUIRE, FAILED,
  YIELD) adds {growth("sanders")}. Handover {sync("sanders")}.
- **Suzuki–Kasami** costs N (N−1 REQUESTs and the TOKEN) except when the holder asks again (0), so the
  light-load ratio approaches 1 from below as N grows. Handover {sync("suzuki-kasami")}: the TOKEN's one hop.
- **Raymond** under light load costs twice the tree distance between consecutive requesters, which on the
  default heap-shaped tree grows like 2·log₂N — about twice the "O(log N)" figure read as log₂N (the model
  figures follow this list). Under saturation requests and the token share edges: below Raymond's 4 per entry, and the
  handover ({sync("raymond")}) stays of the order of the textbook's (T·log₂N)/2 and grows more slowly than it,
  because the token mostly moves to a neighbour.
"""


def _per_message(row: dict) -> str:
    return f"{row['wall_s'] / row['messages'] * 1e6:.1f}" if row["messages"] else "–"


def _part2_findings(part: dict) -> str:
    lines = []
    for algorithm in ("bees", "ricart-agrawala"):
        rows = [r for r in part["cases"] if r["algorithm"] == algorithm]
        msg = [r.get("messages_exponent") for r in rows if r.get("messages_exponent") is not None]
        tim = [r.get("wall_s_exponent") for r in rows if r.get("wall_s_exponent") is not None]
        if msg:
            lines.append(
                f"- {algorithm}: messages grow with exponents {', '.join(f'{x:.2f}' for x in msg)} "
                f"(∝ size²: every request is a broadcast answered by everyone), time with "
                f"{', '.join(f'{x:.2f}' for x in tim)}: {_per_message(rows[0])} µs per message at "
                f"{rows[0]['processes']}, {_per_message(rows[-1])} µs at {rows[-1]['processes']}; memory "
                f"grows with the messages in flight (tracemalloc peak "
                f"{rows[-1].get('tracemalloc_peak_mib')} MiB at {rows[-1]['processes']})."
            )
    return (
        "Scaling (local exponents between consecutive sizes, cost ∝ size^exponent):\n"
        + "\n".join(lines)
        + "\n"
    )


def _same_cases(results: dict, before: dict) -> list[tuple[dict, dict]]:
    """(run now, run then) for every part-3 algorithm case both results files hold."""
    then = {(r["algorithm"], r["n"]): r for r in before.get("parts", {}).get("3", {}).get("runs", [])}
    return [
        (r, then[(r["algorithm"], r["n"])])
        for r in results["parts"].get("3", {}).get("runs", [])
        if (r["algorithm"], r["n"]) in then
    ]


def before_after(results: dict, before: dict) -> str:
    """Part 3's algorithm runs beside the same cases of an earlier full run (the transport before
    the optimisations): entries/s, msgs/s and synchronization delay, with the ratio now ÷ then."""
    rows = []
    for r, old in _same_cases(results, before):
        rows.append(
            [
                r["algorithm"],
                r["n"],
                old["entries_per_s"],
                r["entries_per_s"],
                f"×{r['entries_per_s'] / old['entries_per_s']:.1f}" if old["entries_per_s"] else "–",
                old["msgs_per_s"],
                r["msgs_per_s"],
                f"×{r['msgs_per_s'] / old['msgs_per_s']:.1f}" if old["msgs_per_s"] else "–",
                old["sync_delay_ms"],
                r["sync_delay_ms"],
            ]
        )
    if not rows:
        return ""
    m = before["machine"]
    raw_then = before["parts"]["3"]["raw"]["transient"]["msgs_per_s"]
    raw_now = results["parts"]["3"]["raw"]["transient"]["msgs_per_s"]
    now_m = results["machine"]
    same = (m.get("cpu"), m.get("nproc")) == (now_m.get("cpu"), now_m.get("nproc"))
    where = (
        "on the same kind of machine"
        if same
        else f"on a different machine ({m.get('nproc')} cores, {m.get('cpu')} then; {now_m.get('nproc')} cores, "
        f"{now_m.get('cpu')} now)"
    )
    if raw_then and abs(raw_now / raw_then - 1) <= 0.1:
        baseline = (
            f"Raw pika's transient rate was {fmt(raw_then)} msgs/s then and {fmt(raw_now)} now: the machine "
            f"ran alike in both."
        )
    else:
        baseline = (
            f"The baseline moved too (raw pika transient: {fmt(raw_then)} msgs/s then, {fmt(raw_now)} now), "
            f"so read these ratios as approximate; within one run the figures are comparable."
        )
    note = f" {before['note']}" if before.get("note") else ""
    return "\n".join(
        [
            f"Before and after the transport's optimisations: the same cases in the full run of {m['date']} "
            f"(commit `{m.get('git_commit')}`, file `{before.get('_path', 'before')}`), {where}.{note} {baseline}",
            "",
            table(
                [
                    "algorithm",
                    "N",
                    "entries/s before",
                    "entries/s now",
                    "ratio",
                    "msgs/s before",
                    "msgs/s now",
                    "ratio",
                    "sync delay ms before",
                    "sync delay ms now",
                ],
                rows,
                digits=1,
            ),
            "",
        ]
    )


def stream_rows(p3: dict) -> dict[tuple[str, str, int], dict]:
    """Part 3's streams by (code, mode, messages per input); results written before the twin existed
    hold only the transport at one message per input."""
    return {(s.get("code", "transport"), s["mode"], s.get("per_input", 1)): s for s in p3.get("stream", [])}


CPU_BOUND = 0.85  # a run that keeps the machine's cores this busy waits for the CPU


def _what_bounds_the_runs(runs: list[dict], nproc: int | None) -> str:
    """A clause saying, from the measured CPU, whether the runs waited for the CPU or for handovers
    (empty for results written before the CPU was measured)."""
    measured = [r for r in runs if r.get("machine_busy") is not None]
    busy = [r["machine_busy"] for r in measured]
    broker = [r["broker_cpu_us_per_msg"] for r in runs if r.get("broker_cpu_us_per_msg") is not None]
    if not busy:
        return ""
    cores = f"{nproc} cores" if nproc else "cores"
    text = (
        f": during the runs the machine's {cores} were {min(busy):.0%}–{max(busy):.0%} busy "
        f"(median {statistics.median(busy):.0%})"
    )
    if broker:
        text += f", the broker taking {fmt(min(broker))}–{fmt(max(broker))} µs of CPU per protocol message"
    if statistics.median(busy) >= CPU_BOUND:
        idle = [r for r in measured if r["machine_busy"] < CPU_BOUND]
        text += (
            " — they are bound by CPU (the broker's and the n + 1 Python processes'), which each handover "
            "waits for"
        )
        if idle:
            text += (
                "; not so "
                + ", ".join(f"{r['algorithm']} N = {r['n']} ({r['machine_busy']:.0%} busy)" for r in idle)
                + ", which wait"
                + ("s" if len(idle) == 1 else "")
                + " for handovers more than for the CPU"
            )
        return text
    return text + " — they wait for handovers more than for the CPU"


def _part3_findings(p3: dict) -> str:
    """Why the transport's own stream stays where it is, with this run's figures."""
    streams = stream_rows(p3)
    raw = p3["raw"]
    plain, twin = streams.get(("transport", "messages", 1)), streams.get(("raw pika", "messages", 1))
    if not plain or not twin or plain.get("broker_cpu_us_per_msg") is None:
        return ""
    cpu = {mode: raw[mode].get("broker_cpu_us_per_msg") for mode in raw}
    lines = [
        "Why the transport's stream stays below half of raw pika's transient rate:",
        f"- **the guarantees cost that much with any client**: raw pika doing exactly the stream's broker work — "
        f"persistent messages, publisher confirms, `mandatory` routing through the run's topic exchange, the "
        f"monitor's copy of every message, a write after each input — reaches {fmt(twin['msgs_per_s'])} msgs/s, "
        f"{twin['vs_raw_transient']:.0%} of raw transient. The project's wire conventions "
        f"(docs/architecture.md#wire) ask for all of these; half the "
        f"transient rate at one message per input is out of reach for any client that keeps them on this "
        f"machine;",
        f"- **the broker does most of the work**: the local RabbitMQ node spends {fmt(cpu['transient'], 0)} µs of "
        f"CPU per transient message, {fmt(twin['broker_cpu_us_per_msg'], 0)} µs per message of the twin and "
        f"{fmt(plain['broker_cpu_us_per_msg'], 0)} µs per message of the transport (each: the message and the "
        f"monitor's copy); a slower sender hands it smaller batches, which cost more per message;",
        f"- **what mutexlab's own code costs**: the transport reaches {plain['vs_twin']:.2f} × the twin at one "
        f"message per input; the rest goes to building and checking each message (JSON envelope, validating "
        f"codec, link sequence numbers) and to the confirm and ack bookkeeping that keeps an ack behind its "
        f"effects;",
    ]
    burst, burst_twin = streams.get(("transport", "messages", 4)), streams.get(("raw pika", "messages", 4))
    if burst and burst_twin:
        lines.append(
            f"- **several messages per input** leave in one write (the Bus joins pika's frames): at four "
            f"per input the transport streams {fmt(burst['msgs_per_s'])} msgs/s, {burst['vs_twin']:.2f} × the "
            f"twin's {fmt(burst_twin['msgs_per_s'])}."
        )
    bound = _what_bounds_the_runs(p3["runs"], None)
    if bound:
        lines.append(
            "The algorithm runs move far fewer protocol messages per second than the stream, as each "
            "brings a share of trace batches, a protocol step and the monitor's audit with it" + bound + "."
        )
    return "\n".join(lines) + "\n"


def _transport_headline(results: dict, before: dict) -> list[str]:
    gains = [
        r["entries_per_s"] / old["entries_per_s"]
        for r, old in _same_cases(results, before)
        if old["entries_per_s"]
    ]
    if not gains:
        return []
    return [
        f"- **Transport optimisations** (pipelined confirms, one trace batch per input then per step, batched "
        f"acks, one write per input, the monitor's rate window): "
        f"entries per second ×{min(gains):.1f}–×{max(gains):.1f} (median ×{statistics.median(gains):.1f}) "
        f"against the full run of {before['machine']['date']} (table at the end of part 3)."
    ]


def render(results: dict, before: dict | None = None, wire: str | None = None) -> str:
    parts = results["parts"]
    out = [
        "# Benchmarks",
        "",
        "The latest **full** run of `python -m bench.run --full` (issue 7). Benchmarks report; they are not "
        "timed tests. Everything below was measured in one invocation on one machine; ratios sit beside the "
        "absolute figures. Rerun: see [How to run](#how-to-run).",
        "",
    ]
    out += _machine(results) + ["", "## Headlines", ""] + _headlines(results)
    if before is not None:
        out += _transport_headline(results, before)
    if "1" in parts:
        model = [r for r in parts["1"]["runs"] if r.get("model") is not None]
        extra = (
            (
                "\nRaymond under light load, measured against the model (2 × mean tree distance on the heap-shaped "
                "tree): "
                + ", ".join(f"N={r['n']}: {r['messages_per_entry']} vs {r['model']}" for r in model)
                + ".\n"
            )
            if model
            else ""
        )
        out += [
            "",
            "## 1. Message complexity and synchronization delay (simulator)",
            "",
            complexity.render(parts["1"]),
            "",
            PART1_NOTES,
            _part1_findings(parts["1"]) + extra,
        ]
    if "2" in parts:
        out += [
            "",
            "## 2. Simulator speed and scaling",
            "",
            simspeed.render(parts["2"]),
            "",
            PART2_NOTES,
            _part2_findings(parts["2"]),
        ]
    if "3" in parts:
        p3 = parts["3"]
        out += [
            "",
            "## 3. Over RabbitMQ: the classic algorithms against raw pika, a queue semaphore and a Redis lock",
            "",
            f"Zero dwell, saturation: {p3['requests_per_node']} requests per node; "
            f"{p3['contention_rounds_per_process']} entries per contending process for the centralized "
            "mechanisms.",
            "",
            overrabbit.render3(p3),
            "",
            PART3_NOTES,
        ]
        out += [_part3_findings(p3)]
        if before is not None:
            out += ["", before_after(results, before)]
    if "4" in parts:
        worst = max(
            (abs(r["ratio_to_sim"] - 1) for r in parts["4"]["runs"] if r["ratio_to_sim"]), default=0.0
        )
        spread = []
        for r in parts["4"]["runs"]:
            if "sim_other_delays" in r:
                low, high = r["sim_other_delays"]
                where = (
                    "inside"
                    if low <= r["messages"] <= high
                    else f"{min(abs(r['messages'] - low), abs(r['messages'] - high)) / low:.2%} outside"
                )
                spread.append(f"P={r['bees']}: {r['messages']:,} is {where} the simulator's {low:,}–{high:,}")
        out += [
            "",
            "## 4. The bees end to end over RabbitMQ",
            "",
            overrabbit.render4(parts["4"]),
            "",
            PART4_NOTES
            + f"Here the RabbitMQ count is within {worst:.1%} of the simulator's for the same seed. The simulator's "
            "own count moves just as much when only its delay draws change (same setup, same initial clocks, "
            "10 other delay seeds)" + (": " + "; ".join(spread) if spread else "") + ".\n",
        ]
    if wire:
        out += ["", wire.rstrip()]
    out += [
        "",
        "## How to run",
        "",
        "```sh",
        "pip install -e '.[test]'                      # pika, redis-py, ...",
        "python -m bench.run --quick                   # a few minutes, every part, small sizes",
        "python -m bench.run --full --out docs/benchmarks-full.json   # what this page shows (8-20 min)",
        "python -m bench.markdown docs/benchmarks-full.json --before docs/benchmarks-before-transport.json \\",
        "    --wire docs/benchmarks-wire.md > BENCHMARKS.md  # --before: part 3 of an earlier run, side by side;",
        "                                              # --wire: section 5 (python -m bench.wire, issue 18)",
        "python -m bench.run --quick --parts 1,2       # simulator only: no broker, no Redis",
        "python -m bench.tracecheck --save /tmp/before.json   # before changing the simulator ...",
        "python -m bench.tracecheck --compare /tmp/before.json  # ... and after: exit 1 on any difference",
        "```",
        "",
        "Parts 3 and 4 need RabbitMQ (`--amqp-url`, else `$AMQP_URL`, else guest@127.0.0.1:5672) and part 3 a "
        "Redis (`--redis-url`, else `$REDIS_URL`, else 127.0.0.1:6379). Queues, exchanges and keys the "
        "benchmark creates are deleted at the end. Details: [docs/benchmarks.md](docs/benchmarks.md).",
    ]
    return "\n".join(out) + "\n"


def _load(path: str) -> dict:
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if not isinstance(data, dict) or "parts" not in data or "machine" not in data:
        raise ValueError("not a results file of python -m bench.run")
    data["_path"] = path
    return data


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.markdown", description="Render BENCHMARKS.md.")
    parser.add_argument("results", help="a results JSON of python -m bench.run")
    parser.add_argument("--before", metavar="OLD.json", help="an earlier full run: part 3 before/after table")
    parser.add_argument(
        "--wire",
        metavar="SECTION.md",
        help="a section to include before 'How to run' (docs/benchmarks-wire.md)",
    )
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    wire = None
    if args.wire:
        try:
            wire = Path(args.wire).read_text(encoding="utf-8")
        except OSError as exc:
            print(f"error: cannot read {args.wire}: {exc}", file=sys.stderr)
            return 2
    loaded = []
    for path in [args.results] + ([args.before] if args.before else []):
        try:
            loaded.append(_load(path))
        except (OSError, ValueError) as exc:
            print(f"error: cannot read {path}: {exc}", file=sys.stderr)
            return 2
    sys.stdout.write(render(loaded[0], loaded[1] if args.before else None, wire))
    return 0


if __name__ == "__main__":
    sys.exit(main())
