"""The outcome of a run over RabbitMQ (docs/architecture.md#monitor): verdict, exit code, summary.

``decide`` runs the audit (``mutexlab.audit.verify_events``, the code behind ``mutexlab
verify``) over the recorded trace and sets the verdict and the exit code: 0 safe and complete,
1 a safety violation or a rejected input, 2 bad configuration, 3 stalled or never started (or no
verdict: a trace the audit cannot check, ``decide`` then raises the ``TraceError``). A stalled
run fails its family's progress checks by construction, so it exits 1 only when the capacity
audit (safety by happened-before) finds a violation, else 3. A rejected input (a participant's
protocol refused a message, ``ProtocolError``) is a finding as in ``check``, ``replay`` and
``simulate``: never SAFE, exit 1, named in the summary; the monitor stops the run at it. A
handler that left a state of no name (a plain ``Enum``'s) makes the run REFUSED, exit 2 — unless
the audit saw a safety violation before it: then a violation, exit 1, the refusal said beside it.
``render`` is the summary the monitor prints;
``Outcome.as_dict`` is the JSON summary.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..audit import verify_events
from ..audit.cut import excuse, proven_cut
from ..audit.stall import explain_stall
from ..setups import LEFT_UNNAMED
from ..waiting import WAITS_RAISED
from ..words import PROGRAM_FAULT, count
from .membership import role_of

EXIT_SAFE, EXIT_VIOLATION, EXIT_CONFIG, EXIT_STALLED = 0, 1, 2, 3


@dataclass
class Outcome:
    """What the monitor concluded; also the JSON summary."""

    run_id: str
    algorithm: str
    processes: int
    complete: bool
    stalled: dict[str, Any] = field(default_factory=dict)
    # with ``stalled``: resource → who holds it at the end; a stalled process → what it waits to
    # enter, where its problem says (its forks, the one resource): what the stall explanation names
    holding: dict[str, list[str]] = field(default_factory=dict)
    wants: dict[str, list[str]] = field(default_factory=dict)
    safe: bool = True
    verdict: str = ""
    violations: list[str] = field(default_factory=list)
    started: float = 0.0  # the welcome that starts the run, Unix time (duration counts from it)
    duration: float = 0.0
    messages: dict[str, int] = field(default_factory=dict)
    tapped: int = 0
    entries: dict[str, int] = field(default_factory=dict)
    notes: dict[str, int] = field(default_factory=dict)
    states: dict[str, str] = field(default_factory=dict)
    duplicates: int = 0
    redelivered: int = 0
    dead_letters: int = 0
    forged: int = 0  # deliveries without a valid MAC (auth.py), dead-lettered: they changed nothing
    forgeries: list[str] = field(default_factory=list)  # the first reasons, "<who>: <reason> (<key>)"
    reconnects: int = 0
    refused: list[dict] = field(default_factory=list)  # {"instance", "role", "reason"} per refused joiner
    # {"process", "count", "reasons"} per participant whose protocol refused a message (a finding)
    rejected: list[dict] = field(default_factory=list)
    trace: str | None = None
    cleaned_up: bool = False  # the run's exchanges and queues were deleted (CLEANUP)
    delivery: str = "persistent"  # DELIVERY (docs/wire.md#delivery-modes)
    retransmitted: int = 0  # protocol messages sent again end to end (transient delivery)
    lost: str | None = None  # why the run cannot be judged: the broker lost its transient queues
    exit_code: int = 0
    os_pids: dict[str, int] = field(default_factory=dict)  # name -> its process's pid (from its join)
    # the participants whose final status never came: their last trace batch may be lost (audit/cut.py)
    no_final_status: list[str] = field(default_factory=list)
    # a run a stop ended (docs/exit-codes.md#stopped-json): what stopped it, in words, and the
    # safety violations of the trace up to it ([] when none); None and [] for a run not stopped
    stopped: str | None = None
    seen: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def deciding(outcome: Outcome, events: list[dict]) -> Callable[[], int]:
    """``decide`` started now, on a thread of its own; the function returned waits for it and
    returns its exit code, or raises what it raised. The monitor deletes the run's queues
    meanwhile: the broker does that work while the audit runs here."""
    done: list[tuple[int | None, BaseException | None]] = []

    def audit() -> None:
        try:
            done.append((decide(outcome, events), None))
        except BaseException as exc:  # noqa: BLE001 - raised again by the caller's wait
            done.append((None, exc))

    thread = threading.Thread(target=audit, name="audit", daemon=True)
    thread.start()

    def wait() -> int:
        thread.join()
        code, error = done[0]
        if error is not None:
            raise error
        assert code is not None  # decide returned
        return code

    return wait


def decide(outcome: Outcome, events: list[dict]) -> int:
    """Audit the trace's ``events`` (as recorded, in order) into ``outcome``; return its exit code.

    Raises ``TraceError`` for a trace the audit cannot check (no verdict)."""
    if outcome.lost is not None:  # messages may be lost: what the trace shows is not the run
        outcome.verdict = (
            f"INCOMPLETE, NOT JUDGED: {outcome.lost}; transient delivery does not survive that "
            "(DELIVERY=persistent does); the partial trace is not audited for a verdict"
        )
        outcome.complete = outcome.safe = False  # not judged: neither SAFE nor a violation (exit 3)
        outcome.exit_code = EXIT_STALLED
        return outcome.exit_code
    verdict = verify_events(events)  # numbers the events (``_line``) as it reads them
    if not outcome.complete:  # a participant stopped between its messages and their events' batch
        verdict.violations = excuse(verdict.violations, proven_cut(events, outcome.no_final_status))
    outcome.violations = [v.describe() for v in verdict.violations]
    outcome.verdict = verdict.render()
    # Safety decides "violation"; a run cut short fails only progress checks (findings.py).
    outcome.safe = verdict.safe
    unnamed = [x for r in outcome.rejected for x in r["reasons"] if LEFT_UNNAMED in x]
    if unnamed:
        outcome.stopped = "a handler left a state of no name: refused"
        outcome.seen = [v.describe() for v in verdict.safety]
    if unnamed and outcome.safe:  # a handler left a state of no name: refused, as check, simulate
        outcome.verdict = f"REFUSED (exit 2, as check, simulate and replay refuse it): {unnamed[0]}"
        outcome.safe = False
        outcome.exit_code = EXIT_CONFIG
        return outcome.exit_code
    if unnamed:  # the refusal never hides a violation the audit saw before it: exit 1, said beside
        outcome.verdict = (
            f"VIOLATION (exit 1), then REFUSED (the run was stopped there): {unnamed[0]}\n"
            "the audit of the trace until the refusal (safety VIOLATED):\n"
            + "\n".join("  " + line for line in outcome.verdict.splitlines())
        )
        outcome.exit_code = EXIT_VIOLATION
        return outcome.exit_code
    if outcome.rejected:  # a finding whatever the trace shows: never SAFE
        total = sum(r["count"] for r in outcome.rejected)
        outcome.violations = [
            f"rejected input: {rejection_text(r)}" for r in outcome.rejected
        ] + outcome.violations
        cut = "" if outcome.complete else "; progress not judged, the run was cut short"
        raised = [
            r["process"] for r in outcome.rejected if any("handler raised: " in x for x in r["reasons"])
        ]
        # every handler that raised was a hosted program's (``run --node``): its fault, as ``test`` says
        programs = bool(raised) and raised == [
            r["process"] for r in outcome.rejected if program_failed(r["reasons"])
        ]
        outcome.stopped = "a handler raised" if raised else "an input was refused"
        outcome.seen = [v.describe() for v in verdict.safety]
        said = (
            f"PROGRAM FAILED: the program of {', '.join(raised)} failed (what it did, named below: "
            "not a line of mutexlab)"
            if programs
            else f"HANDLER RAISED: a handler of {', '.join(raised)} raised (the algorithm's code, named below)"
            if raised
            else f"REJECTED INPUT: {count(total, 'protocol message')} refused by the protocol of "
            f"{', '.join(r['process'] for r in outcome.rejected)}"
        )
        outcome.verdict = (
            f"{said} (a finding, as in {'test' if programs else 'check, replay and simulate'})"
            f"{'' if outcome.complete else '; the run was stopped there'}\n"
            f"the audit of the trace (safety {'SAFE' if outcome.safe else 'VIOLATED'}{cut}):\n"
            + "\n".join("  " + line for line in outcome.verdict.splitlines())
        )
        outcome.safe = False
        outcome.exit_code = EXIT_VIOLATION
        return outcome.exit_code
    if not outcome.complete:
        outcome.verdict = (
            "the run stalled: progress checks fail because it was cut short; safety: "
            f"{'no violation in what was recorded (not SAFE: incomplete)' if outcome.safe else 'VIOLATED'}\n"
            + outcome.verdict
        )
    outcome.exit_code = (
        EXIT_VIOLATION
        if not outcome.safe
        else (EXIT_SAFE if outcome.complete and verdict.ok else EXIT_STALLED)
    )
    raised = waits_raised(outcome)
    if raised and outcome.exit_code == EXIT_STALLED:  # as check and simulate: exit 2, not judged
        outcome.verdict += (
            f"\nNOT JUDGED (exit 2, as check and simulate say it): the stall cannot be explained: {raised[0]}"
        )
        outcome.exit_code = EXIT_CONFIG
    return outcome.exit_code


def waits_raised(outcome: Outcome) -> list[str]:
    """What each stalled participant whose ``waiting_for()`` raised said of it (its status's hint,
    ``waiting.waits``): the run's stall cannot be explained, as ``check`` and ``simulate`` refuse it."""
    return [str(i["hint"]) for i in outcome.stalled.values() if WAITS_RAISED in str(i.get("hint", ""))]


def program_failed(reasons: list[str]) -> bool:
    """Whether a participant's rejected inputs are all its hosted program's fault (``run --node``:
    the program exited, stalled, wrote garbage: ``words.PROGRAM_FAULT``), not an algorithm's."""
    return bool(reasons) and all(PROGRAM_FAULT in reason for reason in reasons)


REASON_CHARS = 1_000  # of one rejected input's reason: a program's fault with its advice fits whole


def kept_reason(text: str) -> str:
    """``text`` as a participant's status carries it: whole up to ``REASON_CHARS``, else cut with a
    ``…`` saying so (cut silently at 500, a program's fault once lost its advice)."""
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"


def rejection_text(r: dict) -> str:
    """One participant's rejected inputs: ``node-2 rejected 2: <first reason>; ...``."""
    shown = "; ".join(r["reasons"]) or "reasons not reported"
    more = r["count"] - len(r["reasons"])
    return f"{r['process']} rejected {r['count']}: {shown}" + (f" (and {more} more)" if more > 0 else "")


def save_json(outcome: Outcome, path: str) -> None:
    """The JSON summary (``--json``, ``SUMMARY_JSON``)."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(outcome.as_dict(), handle, indent=2)


def render(o: Outcome) -> str:
    total = sum(o.messages.values())
    rate = total / o.duration if o.duration > 0 else 0.0
    roles = Counter(role_of(name) for name in o.states)
    lines = [
        f"{o.algorithm} over RabbitMQ, run {o.run_id}: "
        + ", ".join(count(n, role) for role, n in roles.items())
        + f", {o.duration:.2f}s wall clock — "
        + (
            "complete"
            if o.complete
            else "STOPPED: a program failed"
            if o.rejected and all(program_failed(r["reasons"]) for r in o.rejected)
            else "STOPPED: a handler raised"
            if any("handler raised: " in x for r in o.rejected for x in r["reasons"])
            else "STOPPED: a rejected input"
            if o.rejected
            else "INCOMPLETE"
            if o.lost
            else "STALLED"
        )
        + (f" ({o.delivery} delivery)" if o.delivery != "persistent" else ""),
        f"messages: {total} ({', '.join(f'{k} {v}' for k, v in o.messages.items()) or 'none'}), "
        f"{rate:.0f} messages/s; tapped {o.tapped}",
        "entries: " + (", ".join(f"{k} {v}" for k, v in o.entries.items()) or "none"),
    ]
    if o.notes:
        lines.append("events: " + ", ".join(f"{k} {v}" for k, v in o.notes.items()))
    lines.append("final states: " + ", ".join(f"{n}={s}" for n, s in o.states.items()))
    lines.append(
        f"transport: duplicates dropped {o.duplicates}, dead-lettered {o.dead_letters}, "
        f"reconnects {o.reconnects}, redelivered {o.redelivered}, refused joiners {len(o.refused)}, "
        f"rejected inputs {sum(r['count'] for r in o.rejected)}, forged (no valid MAC) {o.forged}"
        + (f", retransmitted {o.retransmitted}" if o.delivery != "persistent" else "")
    )
    lines += [f"  forged: {f}" for f in o.forgeries]
    lines += [f"  rejected input: {rejection_text(r)}" for r in o.rejected]
    if o.refused:
        lines.append(f"membership: {count(len(o.refused), 'joiner')} refused, not part of this run:")
        lines += [f"  refused: {r['role']} {r['instance']} — {r['reason']}" for r in o.refused]
    if o.stalled:
        # The simulator's explanation (who waits for whom, cycles, who everybody waits for), from
        # each participant's last status; then what only the transport knows (silence, lost messages).
        # a process whose waiting_for() raised waits for what nobody knows: not "nothing"
        unknown = [n for n, i in o.stalled.items() if WAITS_RAISED in str(i.get("hint", ""))]
        known = {n: i.get("waiting", {}) for n, i in o.stalled.items() if n not in unknown}
        if known:
            states = {n: s for n, s in o.states.items() if s != "unknown"}
            lines.append(explain_stall(known, states, o.holding, o.wants))
        lines += [
            f"{n} ({o.states.get(n, '?')}) has not finished; what it waits for is unknown: "
            "its waiting_for() raised (below)"
            for n in unknown
        ]
    if o.stalled:
        lines.append("as the monitor last heard them:")
    for name, info in o.stalled.items():
        lacks = info.get("waiting", {}).items()  # a type from nobody (``RELEASEreed: []``) is no wait
        waits = "; ".join(f"{what} from {', '.join(whom)}" for what, whom in lacks if whom)
        extra = []
        if info.get("undelivered"):
            extra.append(f"{count(info['undelivered'], 'message')} sent to it never received")
        if info.get("missing_events"):
            extra.append(
                f"its trace events from its #{info['missing_events']} on never heard (later ones held back)"
            )
        if info.get("hint"):
            extra.append(str(info["hint"]))
        if info.get("silent_for") is None:
            extra.append("never reported")
        elif info["silent_for"] > 5:
            extra.append(f"silent for {info['silent_for']}s (lost?)")
        lines.append(
            f"  stalled: {name} in {info.get('state')} waits for "
            + (
                waits
                or ("what nobody knows" if WAITS_RAISED in str(info.get("hint")) else "nothing reported")
            )
            + (f" — {', '.join(extra)}" if extra else "")
        )
    lines.append(o.verdict)
    if o.trace:
        lines.append(f"trace written to {o.trace}")
    return "\n".join(lines)


# The run's ``status`` in its JSON summary, by its exit code (docs/exit-codes.md).
STATUS = {0: "safe", 1: "violation", 2: "bad configuration", 3: "incomplete", 4: "internal error"}


def run_summary(monitor: dict, code: int, failed: list[str]) -> dict:
    """The JSON summary of ``mutexlab run``: the monitor's, made to agree with the run's exit
    ``code``. ``status`` names the code; ``participants_failed`` the participants that exited
    nonzero. When they turned the monitor's SAFE into incomplete (3), the run vouches for nothing:
    ``complete`` and ``safe`` are false (neither SAFE nor a violation), as for a run not judged,
    and ``exit_code`` is the run's (``monitor_exit_code`` the monitor's)."""
    out = dict(monitor)
    out["monitor_exit_code"] = monitor.get("exit_code")
    out["exit_code"] = code
    out["status"] = STATUS.get(code, "stopped by a signal" if code >= 128 else f"exit {code}")
    out["participants_failed"] = list(failed)
    if failed and code == EXIT_STALLED and monitor.get("exit_code") == EXIT_SAFE:
        out["complete"] = out["safe"] = False
        out["verdict"] = (
            f"INCOMPLETE: participants that failed: {', '.join(failed)}; the run cannot vouch for "
            "what they did\n" + str(monitor.get("verdict", ""))
        )
    return out
