"""Nothing unchecked is called SAFE: each gap a new user found is now a finding.

* a trace with fewer entries than its header's workload, everyone idle → INCOMPLETE;
* a ``recv`` with no matching ``send`` → VIOLATION naming its line;
* a header naming an algorithm mutexlab does not know → INCOMPLETE, saying its invariants were not checked;
* a resource the header does not declare → VIOLATION.

Each case was SAFE, exit 0, before these checks. The checks are shown catching broken
variants too: a node that quits its workload early (tests/mutexlab_broken/quits_early.py), and
traces whose messages were tampered with."""

from __future__ import annotations

import json

import pytest
from conftest import audited, broken

from mutexlab.audit import verify_events, verify_file
from mutexlab.cli import main
from mutexlab.protocols.registry import make_setup


def write(path, events) -> str:
    path.write_text("".join(json.dumps({k: v for k, v in e.items() if k != "_line"}) + "\n" for e in events))
    return str(path)


def verify(capsys, path) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", str(path)])
    return code, capsys.readouterr().out


def ra_run(requests=3, seed=0, **config):
    return audited(make_setup("ricart-agrawala", 3, {"requests": requests}, seed), seed=seed, **config)


def idle_prefix(events: list[dict], entries: int) -> list[dict]:
    """The first prefix of a trace with ``entries`` entries after which nobody holds or waits: the
    shape of a trace cut short while every node happened to be idle."""
    for k in range(len(events)):
        prefix = events[: k + 1]
        if sum(e["event"] == "enter" for e in prefix) == entries and {
            v.rule for v in verify_events(prefix).violations
        } == {"workload-short"}:
            return prefix
    raise AssertionError(f"no prefix with {entries} entries and everyone idle")


# -- the header's workload ------------------------------------------------------------------------
def test_a_trace_cut_after_two_entries_with_everyone_idle_is_incomplete(tmp_path, capsys):
    events = ra_run(dwell={"think": 50.0}).events  # long thinking: idle moments between entries
    cut = idle_prefix(events, 2)
    code, out = verify(capsys, write(tmp_path / "cut.jsonl", cut))
    assert code == 3 and "ricart-agrawala: INCOMPLETE (" in out
    assert "the run header's workload asks 3 times (requests = 3)" in out and "[workload-short]" in out
    assert verify(capsys, write(tmp_path / "whole.jsonl", events))[0] == 0


def test_a_node_that_quits_its_workload_early_is_caught():
    quits = broken("quits_early")
    caught = []
    for seed in range(4):
        run = audited(quits.make_setup(3, {"requests": 3}, seed), seed=seed)
        assert run.result.ok  # the simulator sees every node finished: only the header tells
        rules = {v.rule for v in run.verdict.violations}
        caught.append(rules == {"workload-short"})
        assert ra_run(3, seed).verdict.ok  # the correct node, same seed
    assert all(caught)


# -- messages -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "tamper, message",
    [
        ("lose-send", "received message {id} from {frm}, which no send of the trace carries"),
        ("other-sender", "received message {id}, which says it came from node-9, but {frm} sent it"),
    ],
)
def test_a_recv_without_its_send_is_a_violation_naming_its_line(tmp_path, capsys, tamper, message):
    events = [dict(e) for e in ra_run(1).events]
    k = next(k for k, e in enumerate(events) if e["event"] == "recv")
    recv = events[k]
    send = next(e for e in events if e["event"] == "send" and e["id"] == recv["id"])
    if tamper == "lose-send":  # the send is there, but no longer carries the id (a dropped one would
        send["id"] = "lost"  # leave a gap in its sender's clock: unreadable, below)
    else:
        recv["from"] = "node-9"
    code, out = verify(capsys, write(tmp_path / "t.jsonl", events))
    assert code == 1 and "[recv-without-send]" in out, out
    assert message.format(id=recv["id"], frm=recv["from"] if tamper != "other-sender" else send["pid"]) in out
    assert f"line {k + 1} ({recv['pid']} recv)" in out


@pytest.mark.parametrize(
    "tamper, problem",
    [
        ("drop-send", "'s own entry skips events"),
        ("early", "recv of message {key} says it knows event 0 of {frm}; it knew"),
    ],
)
def test_a_recv_whose_clock_contradicts_its_send_is_unreadable(tmp_path, capsys, tamper, problem):
    """Clocks that contradict each other are refused before any verdict (audit/clocks.py)."""
    events = [dict(e) for e in ra_run(1).events]
    k = next(k for k, e in enumerate(events) if e["event"] == "recv")
    recv = events[k]
    send = next(j for j, e in enumerate(events) if e["event"] == "send" and e["id"] == recv["id"])
    if tamper == "drop-send":
        line = next(j for j, e in enumerate(events) if j > send and e["pid"] == events[send]["pid"]) - 1
        del events[send]
    else:
        recv["vc"] = {recv["pid"]: recv["vc"][recv["pid"]]}  # as if it knew nothing of the sender
        line = k
    path = write(tmp_path / "t.jsonl", events)
    capsys.readouterr()
    code = main(["verify", path])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (code, out, err)
    assert err.startswith(f"mutexlab: error: {path}:{line + 1}: the vector clocks contradict each other")
    assert problem.format(frm=recv["from"], key=recv["id"]) in err and err.count("\n") == 1, err


def test_a_recv_before_its_send_in_the_file_is_not_a_finding(tmp_path):
    events = ra_run(1).events
    sends = {e["id"]: j for j, e in enumerate(events) if e["event"] == "send"}
    k, send = next(  # a recv whose process has no event between its send and it: each process's order kept
        (k, sends[e["id"]])
        for k, e in enumerate(events)
        if e["event"] == "recv" and all(x["pid"] != e["pid"] for x in events[sends[e["id"]] : k])
    )
    moved = events[:send] + [events[k]] + events[send:k] + events[k + 1 :]
    assert moved.index(events[k]) < moved.index(events[send])
    assert verify_file(write(tmp_path / "moved.jsonl", moved)).ok


# -- the header ---------------------------------------------------------------------------------------
def test_an_unknown_algorithm_says_its_invariants_were_not_checked(tmp_path, capsys):
    events = [dict(e) for e in ra_run(1).events]
    events[0]["algorithm"] = "my-algorithm"
    code, out = verify(capsys, write(tmp_path / "mine.jsonl", events))
    assert code == 3
    assert out.splitlines()[:2] == [
        "my-algorithm: INCOMPLETE (1) — no safety violation in what the trace shows",
        "checked: capacity by happened-before, every request served, nobody holds a resource at the end",
    ]
    assert "undecided (1): the audit could not decide these" in out
    assert (
        "[algorithm-unknown] the run header names the algorithm 'my-algorithm', which this mutexlab does not "
        "know: its invariants were not checked" in out
    )


def test_a_resource_the_header_does_not_declare_is_a_violation(tmp_path, capsys):
    events = [dict(e) for e in ra_run(1).events]
    for e in events:
        if e.get("resource") == "cs" and e["pid"] == "node-2":
            e["resource"] = "printer"
    code, out = verify(capsys, write(tmp_path / "printer.jsonl", events))
    assert (
        code == 1
        and "[unknown-resource] node-2 entered printer, a resource the run header does not declare" in out
    )
