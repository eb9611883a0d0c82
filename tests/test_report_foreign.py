"""``mutexlab report`` on other systems' logs (ShiViz / GoVector, clock-free JSON Lines), placed by
causality (report/layout.py), and ``--expect-entries``: the workload a foreign log should show
(audit/workload.py). The logs are written by examples/instrumented/token_ring.py, which never
imports mutexlab (docs/verify-any-log.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_report import chromium, open_in_chromium  # noqa: F401  (a fixture)
from test_verify_foreign import HANDOVER, python_ring, shiviz, verify

from mutexlab.cli import main
from mutexlab.report import layout


def report(capsys, log: Path, *flags: str) -> tuple[int, dict | None, str]:
    """Run ``mutexlab report``: its exit code, the page's view model, what it printed on stderr."""
    page = log.with_suffix(log.suffix + ".html")
    capsys.readouterr()
    code = main(["report", str(log), "-o", str(page), *flags])
    err = capsys.readouterr().err
    if code != 0:
        return code, None, err
    text = page.read_text()
    data = re.search(r'<script type="application/json" id="data">(.*?)</script>', text, re.S)
    assert data is not None
    model = json.loads(data.group(1))
    model["html"] = text
    return code, model, err


def well_placed(model: dict) -> list[str]:
    """What is wrong with the positions of a page: an arrow that does not go right, or two
    holders of a capacity-1 resource that overlap in t or Lamport time (on a SAFE log)."""
    wrong = []
    for m in model["msgs"]:
        if m[5] is not None and not (m[3] < m[5] and m[4] < m[6]):
            wrong.append(f"message {m[7]} does not go right: t {m[3]} → {m[5]}, Lamport {m[4]} → {m[6]}")
    for axis, (start, end) in (("t", (3, 5)), ("lamport", (4, 6))):
        ivs = sorted((iv for iv in model["ivs"] if iv[1] == "cs"), key=lambda iv: iv[start])
        for a, b in zip(ivs, ivs[1:], strict=False):
            if b[start] <= a[end]:
                wrong.append(f"holders at lines {a[7]} and {b[7]} overlap in {axis}")
    return wrong


@pytest.mark.parametrize("which", [0, 1], ids=["govector", "clock-free"])
def test_a_foreign_log_is_drawn_with_its_hosts_entries_and_verdict(tmp_path, capsys, which):
    log = python_ring(tmp_path, "ring", "4", "3")[which]
    code, model, _ = report(capsys, log)
    assert code == 0 and model is not None
    assert model["procs"] == ["node-0", "node-1", "node-2", "node-3"]
    assert model["stats"]["entries"] == {"cs": 12} and len(model["ivs"]) == 12
    assert model["verdict"]["status"] == "SAFE"
    assert model["title"] == ("ShiViz log", "JSON Lines log")[which]
    assert "positions come from causality" in model["window"]  # the page says how it placed them
    assert "not checked: the workload" in model["verdict"]["text"]
    for name in model["procs"]:
        assert name in model["html"]
    # every token passed is an arrow: inferred from the clocks (ShiViz), or send → recv (clock-free);
    # the ring's very last token is never received: a stub in clock-free, no edge in ShiViz
    assert model["types"] == [[layout.INFERRED], ["TOKEN"]][which]
    assert model["stats"]["delivered"] == 4 * 3 - 1
    assert well_placed(model) == []


def test_the_check_of_the_positions_catches_a_layout_by_own_counts(tmp_path, capsys, monkeypatch):
    log = python_ring(tmp_path, "ring", "3", "2")[0]
    real = layout.lay_out

    def by_own_count(events):  # each host's own clock entry: blind to the messages between hosts
        own = {(e["pid"], e["_line"]): e["vc"][e["pid"]] for e in events if e["event"] != "run"}
        placed, note = real(events)
        for e in placed:
            if (e["pid"], e["_line"]) in own:
                e["t"] = e["lamport"] = own[(e["pid"], e["_line"])]
        return placed, note

    monkeypatch.setattr("mutexlab.report.window.lay_out", by_own_count)
    code, model, _ = report(capsys, log)
    assert code == 0 and model is not None and well_placed(model) != []


def test_a_broken_ring_is_drawn_red_with_the_verdict(tmp_path, capsys):
    for log in python_ring(tmp_path, "broken", "3", "2", "1", "broken"):
        code, model, _ = report(capsys, log)
        assert code == 0 and model is not None  # written, whatever the verdict
        assert model["verdict"]["status"] == "VIOLATION"
        assert any(v["rule"] == "capacity" for v in model["verdict"]["violations"])
        assert any(iv[9] for iv in model["ivs"]), "the overlapping holders are drawn red"


def test_the_flags_of_verify_apply(tmp_path, capsys):
    log, clockfree = python_ring(tmp_path, "two", "3", "2", "2")
    assert report(capsys, log)[1]["verdict"]["status"] == "VIOLATION"  # two tokens, capacity 1
    assert report(capsys, log, "--capacity", "cs=2")[1]["verdict"]["status"] == "SAFE"
    assert (
        report(capsys, clockfree, "--format", "jsonl", "--capacity", "cs=2")[1]["verdict"]["status"] == "SAFE"
    )
    code, _, err = report(capsys, log, "--format", "jsonl")
    assert code == 2 and f"{log}:1: not JSON" in err
    regex = r"(?<timestamp>\d+) (?<host>\w+) (?<clock>{.*}) (?<event>.*)"
    bare = tmp_path / "ts.log"
    bare.write_text("".join(f"{n} {h} {json.dumps(c)} {d}\n" for n, (h, c, d) in enumerate(HANDOVER)))
    assert report(capsys, bare)[0] == 2
    code, model, _ = report(capsys, bare, "--regex", regex)
    assert code == 0 and model["procs"] == ["a", "b"] and model["verdict"]["status"] == "SAFE"
    code, model, _ = report(capsys, bare, "--regex", regex, "--expect-entries", "2")
    assert model["verdict"]["status"] == "INCOMPLETE" and "[workload-short]" in model["verdict"]["text"]


@pytest.mark.parametrize(
    "name, text, problem",
    [
        ("bad.log", 'a {"a": 1}\nenter cs\na {"a": 2,}\nexit cs\n', ":3: the clock"),
        (
            "bad.jsonl",
            '{"event": "enter", "resource": "cs", "pid": "a"}\n{"event": "exit", "pid": \n',
            ":2: not JSON",
        ),
        (
            "lost.jsonl",
            '{"event": "recv", "type": "T", "from": "b", "id": 7, "pid": "a"}\n',
            ":1: a receives message 7, which no send",
        ),
    ],
)
def test_a_malformed_foreign_log_is_exit_2_naming_the_line(tmp_path, capsys, name, text, problem):
    log = tmp_path / name
    log.write_text(text)
    code, _, err = report(capsys, log)
    assert code == 2 and f"{log}{problem}" in err
    assert not log.with_suffix(log.suffix + ".html").exists()


def test_the_page_renders_in_a_browser(chromium, tmp_path, capsys):  # noqa: F811
    log = python_ring(tmp_path, "ring", "3", "2")[0]
    code, _, _ = report(capsys, log)
    assert code == 0
    check = open_in_chromium(chromium, log.with_suffix(".log.html"), screenshot="report-shiviz.png")
    assert check["errors"] == [] and check["console"] == []
    assert check["lines"] == 3 and check["bars"] == 6 and check["arrows"] == 5
    assert "not checked: the workload" in check["dom"]


# -- the workload of a foreign log (--expect-entries) ------------------------------------------
def cut_when_idle(log: Path) -> Path:
    """The log cut just after an exit: every process is idle there, one entry is missing."""
    lines = log.read_text().splitlines(keepends=True)
    exits = [n for n, line in enumerate(lines) if line.startswith(("exit", '{"event": "exit"'))]
    log.write_text("".join(lines[: exits[-2] + 1]))
    return log


@pytest.mark.parametrize("which", [0, 1], ids=["govector", "clock-free"])
def test_a_log_cut_short_while_idle_is_incomplete_once_its_workload_is_stated(tmp_path, capsys, which):
    log = cut_when_idle(python_ring(tmp_path, "cut", "3", "2")[which])
    code, out, _ = verify(capsys, log)
    assert code == 0 and "not checked: the workload" in out  # a log alone cannot tell: it says so
    code, out, _ = verify(capsys, log, "--expect-entries", "2")
    assert code == 3, out
    assert (
        "checked: capacity by happened-before, every request served, nobody holds a resource at the end, "
        "entries per process as stated (--expect-entries)" in out
    )
    assert "not checked" not in out
    assert re.search(r"\[workload-short\] node-\d entered 1 time; --expect-entries states 2 entries", out)
    whole = python_ring(tmp_path, "whole", "3", "2")[which]
    assert verify(capsys, whole, "--expect-entries", "2")[0] == 0


def test_expected_entries_per_host_and_for_a_host_never_seen(tmp_path, capsys):
    log = python_ring(tmp_path, "ring", "3", "2")[0]
    assert verify(capsys, log, "--expect-entries", "2", "--expect-entries", "node-1=2")[0] == 0
    code, out, _ = verify(capsys, log, "--expect-entries", "node-1=3", "--expect-entries", "node-7=1")
    assert code == 3
    assert "[workload-short] node-1 entered 2 times; --expect-entries states 3 entries" in out
    assert "[workload-short] node-7 entered 0 times (it never appears in the log); " in out
    code, _, err = verify(capsys, log, "--expect-entries", "node-1=many")
    assert code == 2 and "write N (entries of every process) or HOST=N" in err


def test_expected_entries_are_refused_where_a_header_states_the_workload(tmp_path, capsys):
    trace = tmp_path / "ra.jsonl"
    assert (
        main(["simulate", "mutex", "-a", "ricart-agrawala", "-N", "2", "-r", "1", "--trace", str(trace)]) == 0
    )
    code, _, err = verify(capsys, trace, "--expect-entries", "1")
    assert code == 2 and "--expect-entries is for foreign logs" in err
    exported = tmp_path / "ra.log"
    assert main(["export", str(trace), "-o", str(exported)]) == 0
    code, _, err = verify(capsys, exported, "--expect-entries", "1")
    assert code == 2 and "names the algorithm 'ricart-agrawala'" in err
    assert "not checked" not in verify(capsys, exported)[1]  # its family checks the workload


def test_the_handover_log_is_placed_by_causality(tmp_path, capsys):
    code, model, _ = report(capsys, shiviz(tmp_path / "ok.log", HANDOVER))
    assert code == 0
    # b's "got the token" heard from a's 4th event: one inferred message a → b
    assert [(m[0], m[1], m[3], m[5]) for m in model["msgs"]] == [(0, 1, 4, 6)]
    assert [(iv[0], iv[3], iv[5]) for iv in model["ivs"]] == [(0, 2, 3), (1, 7, 8)]


def test_other_events_show_their_description_unless_there_are_too_many(tmp_path, capsys, monkeypatch):
    log = shiviz(tmp_path / "ok.log", HANDOVER)
    texts = [note[4].get("text") for note in report(capsys, log)[1]["notes"]]
    assert "send token to b" in texts and "got the token" in texts
    monkeypatch.setattr(layout, "MAX_BODIES", 1)  # 2 other events: more than the page describes
    model = report(capsys, log)[1]
    assert all("text" not in note[4] for note in model["notes"])
    assert "hovering them shows no description" in model["window"]


def test_a_process_that_never_enters_is_told_how_to_state_it(tmp_path, capsys):
    """--expect-entries N is every process's: a lock server in the log that never enters reads as
    short, and the finding says how to state it (it said only `entered 0 times; … states 1 entry`)."""
    lines = [
        {"event": "request", "resource": "cs", "pid": "c1"},
        {"event": "send", "type": "ASK", "to": "srv", "id": "c1#1", "pid": "c1"},
        {"event": "recv", "type": "ASK", "from": "c1", "id": "c1#1", "pid": "srv"},
        {"event": "send", "type": "OK", "to": "c1", "id": "srv#1", "pid": "srv"},
        {"event": "recv", "type": "OK", "from": "srv", "id": "srv#1", "pid": "c1"},
        {"event": "enter", "resource": "cs", "pid": "c1"},
        {"event": "exit", "resource": "cs", "pid": "c1"},
    ]
    log = tmp_path / "server.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, out, _ = verify(capsys, log, "--expect-entries", "1")
    assert code == 3, out
    assert (
        "[workload-short] srv entered 0 times (N is per process: one that never enters is stated "
        "--expect-entries srv=0); --expect-entries states 1 entry" in out
    )
    assert "c1 entered" not in out
    assert verify(capsys, log, "--expect-entries", "1", "--expect-entries", "srv=0")[0] == 0
