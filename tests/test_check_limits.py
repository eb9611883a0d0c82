"""--max-memory and --max-states hold in every phase of ``mutexlab check`` (the model, the
persistent sets, the liveness analysis, the lasso), the visited table's next reallocation is
foreseen, progress is reported when stderr is not a terminal, and a configuration past the
largest docs/check.md lists as complete is warned about up front (check/budget.py, largest.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import missing

from mutexlab.check import budget as budget_module
from mutexlab.check import core
from mutexlab.check import search as search_module
from mutexlab.check.budget import growth, list_growth
from mutexlab.check.engine import CheckConfig, run_check
from mutexlab.cli import main
from mutexlab.protocols.checked import LARGEST

ROOT = Path(__file__).resolve().parents[1]
# -N 300 (1.5 CPU-s: choosing a persistent set among 300 nodes) for the full run only; -N 2000
# (the model's memory) stays in the quick subset.
QUICK_LEAVES_OUT = {"test_a_huge_configuration_stops_promptly_at_its_limits_incomplete[300]"}


@pytest.mark.parametrize("nodes", [300, 2000])
def test_a_huge_configuration_stops_promptly_at_its_limits_incomplete(nodes):
    """Before: -N 300 spent minutes choosing the first persistent set and -N 2000 building the
    model (2 GB), both past --max-memory 100 and printing nothing."""
    argv = ["check", "mutex", "-a", "ricart-agrawala", "-N", str(nodes), "--requests", "1"]
    argv += ["--max-states", "100", "--max-memory", "100", "--json"]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mutexlab", *argv], capture_output=True, text=True, timeout=240, cwd=ROOT
    )
    seconds = time.monotonic() - started
    out = json.loads(done.stdout)
    assert done.returncode == 3, done.stderr
    assert out["verdict"] == "incomplete" and not out["complete"] and not out["findings"]
    assert "limit" in out["stopped"] and out["peak_mb"] > 0
    # the base (the interpreter and the package) is not the check's: 100 MB on top of it
    assert out["peak_mb"] < 100 + 150, out
    assert seconds < 120, seconds
    assert "past the largest configurations docs/check.md lists as complete" in done.stderr


def test_growth_foresees_every_reallocation_of_a_growing_dict():
    d: dict = {}
    left, need = growth(d)
    for i in range(50_000):
        before = sys.getsizeof(d)
        d[hash((i, "x"))] = i
        if left == 0:
            assert sys.getsizeof(d) > before and sys.getsizeof(d) - before <= need
        else:
            assert sys.getsizeof(d) == before
        left, need = growth(d)


# (limit in MB, the states at which the visited table's next growth would pass it): a dict of
# 2^14 slots is full (the next, 2^15, takes 1 MB); the compiled core's set grows a 256th at a
# time, by half: the first of its parts to fill 216 slots (to grow to 324, 2,592 bytes) does
# so at world 32,747 of Sanders' (the fingerprints, hence the parts, are the same every run)
FULL_BEFORE = {"python": (0.5, (2 << 14) // 3), "compiled": (0.002, 32_747)}


@pytest.mark.parametrize("which", ["python", "compiled"])
def test_the_search_stops_before_a_reallocation_that_would_pass_the_limit(which, monkeypatch):
    """A table reallocates at once (gigabytes for tens of millions of worlds): Lamport N=4 under a
    4096 MB limit ended at 6528 MB. With the memory flat (no look could see growth) and a small
    limit, the search stops where its visited table would next grow past it — never after — on
    either search core (check/core.py)."""
    if which == "compiled" and core.CCore is None:
        missing("the compiled search core (pip install -e . builds check/_core.c with gcc)")
    monkeypatch.setattr(core, "core_name", lambda: which)
    monkeypatch.setattr(budget_module, "rss_mb", lambda: 1_000.0)
    # Sanders N=3 × 1: 49,344 worlds, more than either table holds before it reaches 1 MB
    limit, full = FULL_BEFORE[which]
    result, _ = run_check(CheckConfig("sanders", 3, {"requests": 1}, reductions=False, max_memory_mb=limit))
    assert result.verdict == "incomplete" and "the next step would add" in result.stopped, result
    assert result.states == full
    unlimited, _ = run_check(CheckConfig("sanders", 3, {"requests": 1}, reductions=False))
    assert unlimited.complete and unlimited.states > result.states


def test_list_growth_foresees_every_reallocation_of_a_growing_list():
    items: list = []
    left, need = list_growth(items)
    for i in range(50_000):
        before = sys.getsizeof(items)
        items.append(i)
        if left == 0:
            assert sys.getsizeof(items) > before and sys.getsizeof(items) - before <= need
        else:
            assert sys.getsizeof(items) == before
        left, need = list_growth(items)


@pytest.mark.parametrize("which", ["python", "compiled"])
def test_a_search_whose_tarjan_stack_grows_stops_before_it_passes_the_limit(which, monkeypatch, capsys):
    """An endless workload is one large component: every world stays on the Tarjan stack, whose
    map and arrays in the compiled core double at once (hundreds of MB with millions of worlds),
    unseen by --max-memory, which foresaw only the visited set's growth: under a 1 MB limit with
    the memory flat, that core searched all 340,218 worlds and passed (exit 0). Now either core
    stops INCOMPLETE (exit 3) before a growth of its stack would pass the limit."""
    if which == "compiled" and core.CCore is None:
        missing("the compiled search core (pip install -e . builds check/_core.c with gcc)")
    monkeypatch.setattr(core, "core_name", lambda: which)
    monkeypatch.setattr(budget_module, "rss_mb", lambda: 1_000.0)
    argv = ["check", "mutex", "-a", "ricart-agrawala", "-N", "3", "--endless", "--max-memory", "1"]
    assert main([*argv, "--json", "--quiet"]) == 3
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "incomplete" and "the next step would add" in out["stopped"], out
    assert 0 < out["states"] < 340_218 and not out["findings"]


def test_the_memory_limit_holds_in_the_liveness_analysis(monkeypatch):
    """The watchdog interrupts a phase that never looks at the memory itself: here a liveness
    analysis that grows by 10 MB at a time. Incomplete, never the starvation it would find."""
    real = search_module.fair_starvation

    def greedy(model, worlds):
        held = []
        for _ in range(60):
            held.append(bytearray(10 << 20))
            time.sleep(0.02)
        return real(model, worlds)

    monkeypatch.setattr(search_module, "fair_starvation", greedy)
    config = CheckConfig("mutexlab_broken.raymond_newest_first", 3, {"requests": 0}, endless=True)
    result, _ = run_check(replace_memory(config, 100))
    assert result.verdict == "incomplete" and not result.findings
    assert result.stopped.startswith("memory limit 100 MB reached (liveness analysis"), result.stopped
    found, _ = run_check(config)
    assert found.verdict == "violation"  # with the memory it needs, the same check finds it


def replace_memory(config: CheckConfig, mb: float) -> CheckConfig:
    from dataclasses import replace

    return replace(config, max_memory_mb=mb)


def test_progress_goes_to_stderr_as_lines_when_it_is_not_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr(budget_module, "PROGRESS_EVERY", 0.3)
    argv = ["check", "mutex", "-a", "lamport", "-N", "3", "--max-states", "15000", "--json"]
    started = time.monotonic()
    main(argv)
    seconds = time.monotonic() - started
    captured = capsys.readouterr()
    json.loads(captured.out)  # stdout stays one JSON document
    lines = [ln for ln in captured.err.splitlines() if ln.startswith("check: ")]
    assert len(lines) >= max(1, int(seconds / 0.3) - 2), (seconds, captured.err)
    assert all(re.fullmatch(r"check: [\d,]+ states, [\d,]+ states/s, \d+ MB, \d+ s.*", ln) for ln in lines)
    main([*argv[:-2], "2000", "--json", "--quiet"])
    assert "check: " not in capsys.readouterr().err


def test_a_configuration_past_the_largest_complete_one_is_warned_about(capsys):
    assert main(["check", "mutex", "-a", "lamport", "-N", "4", "--max-states", "10", "--quiet"]) == 3
    err = capsys.readouterr().err
    assert "warning: lamport with processes 4, requests 1 is past the largest" in err
    assert main(["check", "mutex", "-a", "lamport", "-N", "2", "--quiet"]) == 0
    assert "past the largest" not in capsys.readouterr().err
    assert main(["check", "bees", "--eggs", "6", "--cocoons", "6", "--max-states", "10", "--quiet"]) == 3
    # the options in the list's own order, whatever the string hash seed
    assert (
        "warning: bees with processes 2, flowers 1, reeds 1, eggs 6, cocoons 6 is past"
        in capsys.readouterr().err
    )
    assert main(["check", "elves", "--max-states", "10", "--quiet"]) == 3  # the defaults: listed
    assert "past the largest" not in capsys.readouterr().err


def test_the_list_of_largest_configurations_is_the_table_of_the_docs():
    table = (ROOT / "docs" / "check.md").read_text().split("## The largest configurations checked")[1]
    table = table.split("The commands")[0]
    for algorithm, entries in LARGEST.items():
        for entry in entries:
            if set(entry) == {"processes", "requests"}:
                assert f"N={entry['processes']} × {entry['requests']}" in table, (algorithm, entry)
    assert "eggs 5, cocoons 15" in table and "3 elves × 2 rounds of 1 contract" in table
    assert "2 elves × 2 rounds of 2 contracts" in table
