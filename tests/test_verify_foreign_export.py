"""``mutexlab export``: any trace as a ShiViz log or as clock-free JSON Lines, which ``verify``
judges exactly as the trace — for all eight algorithms, correct, cut short and broken.

A ShiViz record takes two lines after the regex, the delimiter line and the run header, so the
event on line k of the trace is the record on line 2k of the log; the clock-free export keeps
every line where it was, and its derived clocks are the trace's own."""

from __future__ import annotations

import contextlib
import json
import re

import pytest
from conftest import audited
from test_bees_broken import audit as broken_bees

from mutexlab.audit import verify_events, verify_file
from mutexlab.audit.foreign import verify_log
from mutexlab.cli import main
from mutexlab.protocol import ProtocolError
from mutexlab.protocols.registry import SPECS, make_setup
from mutexlab.sim import SimConfig, Simulation
from mutexlab.trace import TraceWriter, read_trace

SIZES = {"bees": (4, {"flowers": 2, "reeds": 2}), "elves": (3, {"rounds": 2})}


def write(path, events) -> str:
    path.write_text("".join(json.dumps({k: v for k, v in e.items() if k != "_line"}) + "\n" for e in events))
    return str(path)


def shiviz_lines(verdict: dict) -> dict:
    """The verdict of a trace as its ShiViz export cites it: line k → line 2k."""
    text = re.sub(r"line (\d+)", lambda m: f"line {2 * int(m.group(1))}", json.dumps(verdict))
    moved = json.loads(text)
    for v in moved["violations"]:
        v["lines"] = [2 * n for n in v["lines"]]
    return moved


def assert_round_trip(tmp_path, trace: str, capsys=None) -> dict:
    own = verify_file(trace)
    log, flat = tmp_path / "trace.log", tmp_path / "trace.cf.jsonl"
    assert main(["export", trace, "-o", str(log)]) == 0
    assert main(["export", trace, "--format", "jsonl", "-o", str(flat)]) == 0
    assert verify_log(flat).as_dict() == own.as_dict()
    assert verify_log(log).as_dict() == shiviz_lines(own.as_dict())
    assert verify_log(log, "shiviz").render() == re.sub(
        r"line (\d+)", lambda m: f"line {2 * int(m.group(1))}", own.render()
    )
    return own.as_dict()


@pytest.mark.parametrize("algorithm", list(SPECS))
def test_every_algorithm_round_trips_whole_and_cut_short(tmp_path, algorithm):
    n, options = SIZES.get(algorithm, (4, {"requests": 2}))
    run = audited(make_setup(algorithm, n, options, 1), seed=1)
    whole = write(tmp_path / "whole.jsonl", run.events)
    assert assert_round_trip(tmp_path, whole)["verdict"] == "SAFE"
    cut = write(tmp_path / "cut.jsonl", run.events[: len(run.events) // 2])
    assert assert_round_trip(tmp_path, cut)["verdict"] == "INCOMPLETE"


def test_broken_variants_round_trip_to_the_same_violation(tmp_path):
    from mutexlab_broken import ricart_agrawala_greedy_quiet as greedy
    from mutexlab_broken.bees_variants import OneEggTooMany

    runs = {
        "greedy": audited(greedy.make_setup(3, {"requests": 2}), seed=0, dwell={"cs": 3.0}).events,
        "bees": next(
            r.events
            for seed in range(8)
            if not (r := broken_bees(OneEggTooMany, 4, {"flowers": 2, "reeds": 2}, False, seed)).verdict.safe
        ),
        "elves": next(e for seed in range(12) if not verify_events(e := elves_ignoring_units(seed)).safe),
    }
    for name, events in runs.items():
        verdict = assert_round_trip(tmp_path, write(tmp_path / f"{name}.jsonl", events))
        assert verdict["verdict"] == "VIOLATION", name


def elves_ignoring_units(seed: int) -> list[dict]:
    """A run of elves that ignore the units ahead of them (test_elves_broken's case)."""
    from mutexlab_broken.elves_variants import IgnoresUnitsAhead

    options = dict(pins=2, poison=6, contracts=6, hamsters=[2, 5], rounds=1)
    setup = make_setup("elves", 4, options, seed)
    p = setup.params
    for pid in range(1, 5):
        setup.protocols[pid] = IgnoresUnitsAhead(
            pid, 4, p["pins"], p["poison"], p["pins_per_elf"], p["poison_per_hamster"]
        )
    writer = TraceWriter(None, keep=True)
    with contextlib.suppress(ProtocolError):  # the trace so far is evidence all the same
        Simulation(setup, SimConfig(seed=seed, dwell={"work": 3}), writer).run()
    return writer.kept


def test_the_shiviz_log_has_the_regex_a_blank_delimiter_and_govector_records(tmp_path):
    run = audited(make_setup("ricart-agrawala", 2, {"requests": 1}, 0))
    trace = write(tmp_path / "ra.jsonl", run.events)
    log = tmp_path / "ra.log"
    assert main(["export", trace, "-o", str(log)]) == 0
    lines = log.read_text().splitlines()
    assert lines[0] == r"(?<host>\S*) (?<clock>{.*})\n(?<event>.*)" and lines[1] == ""
    assert lines[2].startswith("#mutexlab-run={") and " " not in lines[2]  # ShiViz's regex skips it
    events = read_trace(trace)
    assert len(lines) == 3 + 2 * (len(events) - 1)
    for k, event in enumerate(events[1:], 2):
        host, clock = lines[2 * k - 1].split(" ", 1)  # on line 2k
        assert host == event["pid"] and json.loads(clock) == event["vc"]
    enter = next(k for k, e in enumerate(events) if e["event"] == "enter")
    assert lines[2 * (enter + 1)] == "enter cs " + json.dumps(
        {k: v for k, v in events[enter].items() if k in ("t", "lamport")}, separators=(",", ":")
    )


def test_an_unreadable_trace_is_exit_2_and_the_trace_is_never_overwritten(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"event":"enter","pid":"a"}\n')
    assert main(["export", str(bad), "-o", str(tmp_path / "x.log")]) == 2
    assert f"{bad}:1: the trace has no 'run' header" in capsys.readouterr().err
    assert main(["export", str(bad), "-o", str(bad)]) == 2
    assert "would overwrite its own trace" in capsys.readouterr().err


@pytest.mark.parametrize("form", ["shiviz", "jsonl"])
def test_a_trace_cut_mid_write_is_named_and_no_log_of_its_first_part_is_left(tmp_path, capsys, form):
    """A log of the whole lines alone would read as a whole run's (a prefix can verify SAFE), so
    export refuses it, naming the cut line as verify does; before: "not JSON", at that line."""
    trace = tmp_path / "t.jsonl"
    assert main(["simulate", "mutex", "-a", "lamport", "-N", "3", "--trace", str(trace)]) == 0
    whole = trace.read_bytes()
    trace.write_bytes(whole[: whole.rindex(b"\n", 0, len(whole) - 1) + 20])  # the last line cut
    lines = whole.count(b"\n")
    capsys.readouterr()
    out = tmp_path / "t.log"
    assert main(["export", str(trace), "--format", form, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert (
        f"line {lines}, the last, is cut off mid-write" in err and "export converts a whole trace" in err
    ), err
    assert not out.exists() and list(tmp_path.iterdir()) == [trace]
    assert main(["verify", str(trace)]) == 3  # what it holds: INCOMPLETE, as the message says
