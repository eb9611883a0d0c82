"""The report of a trace file read once as a stream (report/window.py): a trace within the window
is drawn exactly as the whole trace is; a longer one is drawn in part, with the verdict of the
whole trace (also when the violation lies beyond the window) and a note saying what is left out;
every message and holding interval of the window is drawn complete."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import broken
from mutexlab_broken import recast
from mutexlab_broken.bees_variants import FlowerThresholdOneTooLow

from mutexlab.audit import verify_file
from mutexlab.cli import main
from mutexlab.protocols import bees
from mutexlab.protocols.registry import make_setup
from mutexlab.report import build_model, build_report, read_window
from mutexlab.report import window as window_module
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
    with pytest.raises(SystemExit) as refused:  # argparse's count type, as every whole-number flag
        main(["report", str(path), "--window", "0"])
    assert refused.value.code == 2 and "--window: must be at least 1, got 0" in capsys.readouterr().err


# ``simulate bees --report`` keeps no trace: the page is drawn from a window collected as the run goes
# (report.WindowFeed), with the verdict of the audit fed as the run goes.
SIMULATIONS = {
    "bees": ["--bees", "8", "--flowers", "2", "--reeds", "3", "--seed", "1"],
    "bees-violation": ["--bees", "6", "--flowers", "1", "--reeds", "2", "--seed", "19"]
    + ["--reorder", "--duplicate", "0.3"],
}


@pytest.mark.parametrize("name", SIMULATIONS)
def test_simulate_bees_report_within_the_window_is_the_page_of_the_whole_trace(name, tmp_path, capsys):
    """The page is the one built from every event of the run in memory (as it was before the
    window): the same with --trace (full clocks) and without (local-event clocks)."""
    trace, page, bare = tmp_path / "t.jsonl", tmp_path / "t.html", tmp_path / "bare.html"
    code = main(["simulate", "bees", *SIMULATIONS[name], "--trace", str(trace), "--report", str(page)])
    assert code == (1 if name == "bees-violation" else 0)  # the reordered run breaks the flowers' capacity
    assert page.read_text() == build_report(read_trace(trace))
    assert main(["simulate", "bees", *SIMULATIONS[name], "--report", str(bare)]) == code
    assert bare.read_text() == page.read_text()
    assert "draws" not in capsys.readouterr().out


def test_simulate_bees_report_of_a_run_longer_than_the_window_draws_the_window(tmp_path, monkeypatch, capsys):
    """Past the window the page is what ``mutexlab report --window`` draws of the run's trace file,
    and says what it leaves out."""
    monkeypatch.setattr(window_module, "WINDOW_EVENTS", 300)
    trace, page, again = tmp_path / "t.jsonl", tmp_path / "t.html", tmp_path / "again.html"
    assert main(["simulate", "bees", *SIMULATIONS["bees"], "--trace", str(trace), "--report", str(page)]) == 0
    total = len(trace.read_text().splitlines()) - 1
    assert total > 1000
    assert f"(it draws 300 of the trace's {total:,} events)" in capsys.readouterr().out
    text = page.read_text()
    assert f"This page draws the first 300 of the trace's {total:,} events" in text
    assert main(["report", str(trace), "-o", str(again), "--window", "300"]) == 0
    assert again.read_text() == text


def _peak_rss_mib(args: list[str], window: int | None = None) -> float:
    """The command's peak resident memory: run in a fresh interpreter started by a small probe
    interpreter, which reads its child's ``ru_maxrss`` (as tests/test_longrun.py measures; started
    from this test process instead, the child would inherit this process's peak at exec)."""
    code = "import sys\nimport mutexlab.report.window as w\n"
    if window is not None:
        code += f"w.WINDOW_EVENTS = {window}\n"
    code += "from mutexlab.cli import main\nsys.exit(main(sys.argv[1:]))"
    probe = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run([sys.executable, '-c', sys.argv[1], *sys.argv[2:]], capture_output=True, text=True)\n"
        "assert done.returncode == 0, done.stderr\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, code, *args], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout) / 1024


@pytest.mark.slow  # simulates and draws large runs
def test_simulate_bees_report_memory_is_bounded_by_the_window(tmp_path):
    """A run of 67,276 trace events with a window of 2,000: the command with --report needs little
    more memory than the audited run without it. (Holding the whole trace took 203 MiB against 54.)"""
    run = ["simulate", "bees", "--bees", "60", "--reeds", "20", "--flowers", "6", "--seed", "1"]
    audited = _peak_rss_mib(run)
    reported = _peak_rss_mib([*run, "--report", str(tmp_path / "p.html")], window=2000)
    assert reported < 1.5 * audited, f"{reported:.0f} MiB with --report, {audited:.0f} MiB without"
