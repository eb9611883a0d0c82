"""From a trace to what the report draws: a compact, JSON-ready view model.

Everything the page needs is computed here, in Python, so the page's script only draws:

* ``procs`` — one entry per participant (the run header's order, then anyone else seen);
* ``msgs`` — one entry per *sent* message, matched to its first receive by ``id`` (``None`` fields
  when it was still in flight at the end of the trace);
* ``copies`` — one entry per later receive of a message id (the network delivered it again:
  docs/trace-format.md#duplicates), a ``msgs`` row with that receive, then the index of its message;
* ``ivs`` — holding intervals, enter → exit per process and resource (exit ``None``: still held);
* ``notes`` — scenario events (egg, death, ...);
* ``occ`` — occupancy step series per resource, with capacity (and cocoons per reed);
* ``verdict`` and ``stats``.

Invariant: every ``send`` event of the trace becomes exactly one entry of ``msgs``, every ``recv``
of a sent id is the receive of exactly one entry of ``msgs`` or ``copies`` (one arrow each); every
interval or note whose trace line a violation names is flagged ``bad``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import UTC, datetime
from typing import Any

from ..audit import numbered, verify_events
from ..audit.verdict import UNFINISHED_NOTE, Verdict
from ..metrics import literature
from ..setups import capacity_of
from ..trace import TraceError

MAX_LANES = 10_000  # processes a page draws at most (one lane each): a trace naming more is refused
MAX_BODIES = 20_000  # beyond this many messages, hover shows id/type/ts only (keeps the file small)
AGGREGATE_OVER = 8  # a resource kind with more resources than this gets one summary chart ...
AGGREGATE_REEDS_OVER = 32  # ... except reeds, whose cocoon counts are worth a chart each
WALL_CLOCK = 1e6  # times above this are wall-clock seconds since the epoch
BASE_FIELDS = {"event", "pid", "t", "lamport", "vc", "_line"}


def _num(event: dict, key: str, line: Any) -> float:
    value = event.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TraceError(
            f"line {line}: {event.get('event')} event of {event.get('pid')} lacks a numeric {key!r}"
        )
    return value


def _reed_of(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return f"reed:{value}"
    if isinstance(value, str):
        if value.startswith("reed:"):
            return value
        if value.isdigit():
            return f"reed:{value}"
    return None


def too_many_lanes(processes: int) -> str:
    """The refusal of a page of more processes than ``MAX_LANES``."""
    return (
        f"the trace names {processes:,} processes; a report draws at most {MAX_LANES:,} (one lane each, "
        "report.model.MAX_LANES): verify it instead"
    )


def literature_figure(algorithm: str | None, processes: int, params: dict) -> str | None:
    """The literature's messages-per-entry figure for this run, as text and value ("2(N−1) = 4");
    None when the literature gives none for ``algorithm``."""
    figure = literature(algorithm).get("messages")
    if figure is None:
        return None
    try:
        return figure.render(processes, params)
    except (TypeError, ValueError, KeyError, AttributeError):  # params of a foreign trace: text only
        return figure.text


def build_model(events: list[dict], verdict: Verdict | None = None, window: str | None = None) -> dict:
    """The view model of a whole trace. Raises TraceError when the trace cannot be drawn.

    ``verdict`` and ``window``: for a page that draws only part of a long trace (``window.py``),
    the verdict of the whole trace and the note saying what the page leaves out."""
    events = numbered(events)
    if verdict is None:
        verdict = verify_events(events)
    run = next(e for e in events if e["event"] == "run")
    body = [e for e in events if e["event"] != "run"]
    # Wall-clock traces (RabbitMQ) are drawn in seconds since their first event.
    stamps = [
        e["t"] for e in body if isinstance(e.get("t"), (int, float)) and not isinstance(e.get("t"), bool)
    ]
    t_origin = min(stamps) if stamps and min(stamps) > WALL_CLOCK else None
    if t_origin is not None:
        body = [dict(e, t=e["t"] - t_origin) if isinstance(e.get("t"), (int, float)) else e for e in body]

    # -- participants -----------------------------------------------------------------------
    declared = run.get("processes") or {}
    names: list[str] = []
    if isinstance(declared, dict):

        def key(item):
            k = item[0]
            return (0, int(k), "") if str(k).lstrip("-").isdigit() else (1, 0, str(k))

        names = [str(n) for _, n in sorted(declared.items(), key=key)]
    for e in body:
        for who in (e["pid"], e.get("to"), e.get("from")):
            if isinstance(who, str) and who not in names:
                names.append(who)
    if len(names) > MAX_LANES:
        raise TraceError(too_many_lanes(len(names)))
    index = {n: i for i, n in enumerate(names)}

    bad_lines = {e.get("_line") for v in verdict.safety for e in v.events}  # drawn red: safety only

    # -- messages ---------------------------------------------------------------------------
    types: list[str] = sorted({str(e.get("type")) for e in body if e["event"] in ("send", "recv")})
    tindex = {t: i for i, t in enumerate(types)}
    recvs: dict[str, list[dict]] = defaultdict(list)  # every receipt of an id, in trace order
    for e in body:
        if e["event"] == "recv" and "id" in e:
            recvs[str(e["id"])].append(e)
    sends = [e for e in body if e["event"] == "send"]
    with_bodies = len(sends) <= MAX_BODIES
    msgs: list[list] = []  # the rows described in the module docstring
    copies: list[list] = []  # a later receipt of a message: its row, then its index in msgs
    matched = set()
    for e in sends:
        line = e["_line"]
        mid = str(e.get("id", ""))
        to = e.get("to")
        if not isinstance(to, str) or to not in index:
            raise TraceError(f"line {line}: send of {e['pid']} names no recipient 'to'")
        receipts = recvs.get(mid, [])
        r = receipts[0] if receipts else None
        if r is not None:
            matched.add(mid)
        msg_body = e.get("msg") if with_bodies else None
        msgs.append(
            [
                index[e["pid"]],
                index[to],
                tindex[str(e.get("type"))],
                _num(e, "t", line),
                e.get("lamport"),
                _num(r, "t", r["_line"]) if r else None,
                r.get("lamport") if r else None,
                mid,
                msg_body,
                1 if line in bad_lines else 0,
            ]
        )
        for again in receipts[1:]:  # the network delivered it again (a duplicates run, or forged)
            row = msgs[-1][:]
            row[5], row[6], row[8] = _num(again, "t", again["_line"]), again.get("lamport"), None
            row[9] = 1 if line in bad_lines or again["_line"] in bad_lines else 0
            copies.append(row + [len(msgs) - 1])
    unmatched_recvs = sum(len(r) for mid, r in recvs.items() if mid not in matched)

    # -- holding intervals and notes --------------------------------------------------------
    ivs: list[list] = []
    open_: dict[tuple[str, str], int] = {}
    held_reed: dict[str, str] = {}
    notes: list[list] = []
    note_names: list[str] = []
    cocoons: dict[str, list[list]] = defaultdict(list)
    occupancy_changes: dict[str, list[tuple[float, int, int, int]]] = defaultdict(list)  # t, seq, delta, proc
    states: list[list] = []
    for seq, e in enumerate(body):
        kind, pid, line = e["event"], e["pid"], e["_line"]
        if kind in ("send", "recv"):
            continue
        t = _num(e, "t", line)
        if kind in ("enter", "exit"):
            resource = e.get("resource")
            if not isinstance(resource, str):
                continue  # the audit already reports it as malformed
            units = e.get("units", 1)
            units = units if isinstance(units, int) and not isinstance(units, bool) else 1
            k = (pid, resource)
            if kind == "enter":
                if k in open_:
                    continue
                open_[k] = len(ivs)
                ivs.append(
                    [
                        index[pid],
                        resource,
                        units,
                        t,
                        e.get("lamport"),
                        None,
                        None,
                        line,
                        None,
                        1 if line in bad_lines else 0,
                    ]
                )
                occupancy_changes[resource].append((t, seq, units, index[pid]))
                if resource.startswith("reed:"):
                    held_reed[pid] = resource
            else:
                i = open_.pop(k, None)
                if i is None:
                    continue
                iv = ivs[i]
                iv[5], iv[6], iv[8] = t, e.get("lamport"), line
                if line in bad_lines:
                    iv[9] = 1
                occupancy_changes[resource].append((t, seq, -iv[2], index[pid]))
                if held_reed.get(pid) == resource:
                    del held_reed[pid]
            continue
        if kind == "state":
            states.append([index[pid], t, e.get("lamport"), str(e.get("state"))])
            continue
        fields = {k: v for k, v in e.items() if k not in BASE_FIELDS}
        if kind not in note_names:
            note_names.append(kind)
        notes.append(
            [
                index[pid],
                t,
                e.get("lamport"),
                note_names.index(kind),
                fields,
                line,
                1 if line in bad_lines else 0,
            ]
        )
        if kind == "egg":
            reed = _reed_of(e.get("reed")) or held_reed.get(pid)
            if reed is not None:
                series = cocoons[reed]
                series.append([t, (series[-1][1] if series else 0) + 1])

    # -- occupancy --------------------------------------------------------------------------
    capacities = run.get("capacities") or {}
    by_kind: dict[str, list[str]] = defaultdict(list)
    for resource in occupancy_changes:
        by_kind[resource.split(":", 1)[0]].append(resource)
    for reed in cocoons:
        if reed not in occupancy_changes:
            by_kind["reed"].append(reed)

    def natural(name: str):
        return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in name.replace(".", ":").split(":")]

    occ = []
    for kind in sorted(by_kind):
        resources = sorted(set(by_kind[kind]), key=natural)
        if len(resources) > (AGGREGATE_REEDS_OVER if kind == "reed" else AGGREGATE_OVER):
            changes = sorted(
                (c for r in resources for c in occupancy_changes.get(r, [])), key=lambda c: c[:2]
            )
            chart = _series(f"{kind}:*", kind, None, changes, aggregate=True)
            chart["resources"] = len(resources)
            occ.append(chart)
            continue
        for resource in resources:
            chart = _series(
                resource,
                kind,
                capacity_of(capacities, resource),
                sorted(occupancy_changes.get(resource, []), key=lambda c: c[:2]),
            )
            if resource in cocoons:
                chart["cocoons"] = cocoons[resource]
                per_reed = (run.get("params") or {}).get("cocoons")
                chart["cocoon_cap"] = (
                    per_reed if isinstance(per_reed, int) and not isinstance(per_reed, bool) else None
                )
            occ.append(chart)

    # -- statistics -------------------------------------------------------------------------
    by_type = Counter(types[m[2]] for m in msgs)
    entries = Counter(iv[1].split(":", 1)[0] for iv in ivs)
    total_entries = sum(entries.values())
    times = (
        [m[3] for m in msgs]
        + [m[5] for m in msgs if m[5] is not None]
        + [iv[3] for iv in ivs]
        + [iv[5] for iv in ivs if iv[5] is not None]
        + [n[1] for n in notes]
        + [s[1] for s in states]
    )
    lamports = [
        x
        for x in (
            [m[4] for m in msgs]
            + [m[6] for m in msgs]
            + [iv[4] for iv in ivs]
            + [iv[6] for iv in ivs]
            + [n[2] for n in notes]
            + [s[2] for s in states]
        )
        if isinstance(x, (int, float)) and not isinstance(x, bool)
    ]
    # Messages per entry of each resource kind, when message types name their kind (REQreed,
    # PINS_REQUEST ...), as ``simulate`` reports them; otherwise all messages over all entries.
    per_kind = {}
    for kind, count in sorted(entries.items()):
        mine = sorted(t for t in by_type if kind.lower() in t.lower())
        if mine and count:
            per_kind[kind] = {
                "types": mine,
                "messages": sum(by_type[t] for t in mine),
                "per_entry": round(sum(by_type[t] for t in mine) / count, 3),
            }
    stats = {
        "per_kind": per_kind,
        "by_type": dict(sorted(by_type.items())),
        "messages": len(msgs),
        "delivered": sum(1 for m in msgs if m[5] is not None),
        "in_flight": sum(1 for m in msgs if m[5] is None),
        "copies": len(copies),
        "unmatched_recvs": unmatched_recvs,
        "entries": dict(sorted(entries.items())),
        "total_entries": total_entries,
        "per_entry": round(len(msgs) / total_entries, 3) if total_entries else None,
        "literature": literature_figure(
            verdict.algorithm, len(declared) if isinstance(declared, dict) else 0, run.get("params") or {}
        ),
        "bodies": with_bodies,
        "requests": sum(1 for e in body if e["event"] == "request"),
    }
    return {
        "title": f"{verdict.algorithm or verdict.subject or 'trace'}",
        "subject": verdict.subject,
        "algorithm": verdict.algorithm,
        "params": _shown_params(run.get("params") or {}),
        "t_origin": None
        if t_origin is None
        else datetime.fromtimestamp(t_origin, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "window": window,
        "procs": names,
        "types": types,
        "msgs": msgs,
        "copies": copies,
        "ivs": ivs,
        "notes": notes,
        "note_names": note_names,
        "states": states,
        "occ": occ,
        "stats": stats,
        "range": {
            "t": [min(times, default=0.0), max(times, default=1.0)],
            "lamport": [min(lamports, default=0), max(lamports, default=1)],
        },
        "verdict": {
            "safe": verdict.safe,
            "status": verdict.status,
            "head": verdict.head(),
            "unfinished_note": UNFINISHED_NOTE,
            "checks": verdict.checks,
            "not_checked": verdict.unchecked,
            "counts": verdict.counts,
            "text": verdict.render(),
            "violations": [
                {
                    "rule": v.rule,
                    "kind": v.kind,
                    "message": v.message,
                    "lines": [e.get("_line") for e in v.events if "_line" in e],
                }
                for v in verdict.violations
            ],
        },
    }


def _shown_params(params: dict) -> dict:
    """The run's parameters as the page shows them. ``requests`` 0 means the nodes ask only when
    told (a scripted replay): the page says "scripted" and counts the requests of the trace."""
    if params.get("requests") == 0:
        return dict(params, requests="scripted")
    return params


def _series(name: str, kind: str, cap: int | None, changes: list, aggregate: bool = False) -> dict:
    """Step series ``[t, units in use, [holder indices]]`` from (t, seq, delta, proc) changes."""
    in_use = 0
    holders: list[int] = []
    series: list[list] = [[changes[0][0], 0, []]] if changes else []
    peak = 0
    for t, _, delta, proc in changes:
        in_use += delta
        if delta > 0:
            holders.append(proc)
        elif proc in holders:
            holders.remove(proc)
        peak = max(peak, in_use)
        point = [t, in_use, sorted(holders)]
        if series and series[-1][0] == t:
            series[-1] = point
        else:
            series.append(point)
    return {"name": name, "kind": kind, "cap": cap, "series": series, "peak": peak, "aggregate": aggregate}
