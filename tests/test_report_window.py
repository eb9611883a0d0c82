"""The report of a trace file read once as a stream (report/window.py): a trace within the window
is drawn exactly as the whole trace is; a longer one is drawn in part, with the verdict of the
whole trace (also when the violation lies beyond the window) and a note saying what is left out;
every message and holding interval of the window is drawn complete."""

from __future__ import annotations

import json

import pytest
from conftest import broken
from mutexlab_broken import recast
from mutexlab_broken.bees_variants import FlowerThresholdOneTooLow

from mutexlab.audit import verify_file
from mutexlab.cli import main
from mutexlab.protocols import bees
from mutexlab.protocols.registry import make_setup
from mutexlab.report import build_model, read_window
from mutexlab.sim import SimConfig, Simulation
from mutexlab.trace import TraceWriter, read_trace

EAGER = broken("ricart_agrawala_eager")


def written(path, setup, seed=1, **config):
    with TraceWriter(path) as trace:
        Simulation(setup, SimConfig(seed=seed, **config), trace).run()
    return path


TRACES = {
    "ra": lambda: make_setup("ricart-agrawala", 4, {"requests": 3}, 1),
    "ra-eager": lambda: EAGER.make_setup(3, {"requests": 2}),
    "bees": lambda: bees.make_setup(8, {"flowers": 2, "reeds": 3}, 1),
    "bees-one-ack-short": lambda: recast(
        bees.make_setup(10, {"flowers": 3, "reeds": 4}, 1), FlowerThresholdOneTooLow
    ),
}


def without_clocks(events):
    return [{k: v for k, v in e.items() if k != "vc"} for e in events]


@pytest.mark.parametrize("name", TRACES)
def test_a_trace_within_the_window_is_drawn_as_the_whole_trace(name, tmp_path):
    path = written(tmp_path / f"{name}.jsonl", TRACES[name](), dwell={"cs": 3.0})
    shown = read_window(path)
    assert shown.whole and shown.note() is None
    whole = read_trace(path)
    assert shown.events == without_clocks(whole)
    assert shown.verdict.as_dict() == verify_file(path).as_dict()
    assert build_model(shown.events, shown.verdict) == build_model(whole)
    if name in ("ra-eager", "bees-one-ack-short"):  # the broken variants are caught
        assert shown.verdict.status == "VIOLATION"


@pytest.mark.parametrize("name", TRACES)
def test_a_longer_trace_is_drawn_in_part_with_the_whole_verdict(name, tmp_path):
    path = written(tmp_path / f"{name}.jsonl", TRACES[name](), dwell={"cs": 3.0})
    whole = read_trace(path)
    body = [e for e in whole if e["event"] != "run"]
    window = len(body) // 3
    shown = read_window(path, window)
    assert not shown.whole and shown.total == len(body) and shown.shown == window
    assert shown.verdict.as_dict() == verify_file(path).as_dict()
    drawn = [e for e in shown.events if e["event"] != "run"]
    first = body[:window]
    assert drawn[:window] == without_clocks(first)
    # after the window: only the receives and exits completing it, in trace order
    later = drawn[window:]
    assert len(later) == shown.completing
    sent = {e["id"] for e in first if e["event"] == "send"}
    entered = {(e["pid"], e["resource"]) for e in first if e["event"] == "enter"}
    for e in later:
        assert (e["event"] == "recv" and e["id"] in sent) or (
            e["event"] == "exit" and (e["pid"], e["resource"]) in entered
        )
    received = {e["id"] for e in body if e["event"] == "recv"}
    model = build_model(shown.events, shown.verdict, shown.note())
    assert len(model["msgs"]) == len(sent)
    assert all((m[5] is not None) == (m[7] in received) for m in model["msgs"])  # arrows complete
    assert model["verdict"]["status"] == shown.verdict.status
    assert f"first {window:,} of the trace's {len(body):,} events" in model["window"]
    left = len(body) - window - shown.completing
    assert f"the other {left:,} events" in model["window"]


def test_a_violation_beyond_the_window_is_still_the_verdict(tmp_path, capsys):
    path = written(tmp_path / "eager.jsonl", EAGER.make_setup(3, {"requests": 2}), dwell={"cs": 3.0})
    verdict = verify_file(path)
    assert not verdict.safe
    first_bad = min(e["_line"] for v in verdict.safety for e in v.events)
    page = tmp_path / "eager.html"
    assert main(["report", str(path), "-o", str(page), "--window", str(first_bad // 2)]) == 0
    out = capsys.readouterr().out
    assert f"report written to {page}" in out and "events: --window)" in out
    text = page.read_text()
    data = json.loads(text.split('<script type="application/json" id="data">')[1].split("</script>")[0])
    assert data["verdict"]["status"] == "VIOLATION" and data["window"].startswith("This page draws")
    assert main(["report", str(path), "--window", "0"]) == 2
    assert "--window must be at least 1" in capsys.readouterr().err
