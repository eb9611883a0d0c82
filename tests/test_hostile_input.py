"""Every reader of outside input is bounded: hostile or broken input is refused
with a message naming the limit, in bounded time and memory — never read without end.

An input that has no end (``/dev/zero``) or that would grow without bound is given to a child
with an address-space limit (``resource.setrlimit``) and a timeout, so a regression fails here
(MemoryError, a traceback, a timeout) instead of eating the machine. A small hostile file, which
a regression could at worst misread, is given to the command in this process (the ``cli`` fixture).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from mutexlab import limits
from mutexlab.protocols.registry import make_setup
from mutexlab.sim import scripted
from mutexlab.sim.scripted import MAX_PROCESSES, ScenarioError, load_scenario

ROOT = Path(__file__).resolve().parent.parent
MEMORY = 1 << 30  # bytes of address space a child may map: several times what a refusal needs


def bounded(*argv: str, memory: int = MEMORY, timeout: float = 60) -> subprocess.CompletedProcess:
    """``mutexlab *argv`` in a child that may map at most ``memory`` bytes."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "shared"), str(ROOT), str(ROOT / "tests"), env.get("PYTHONPATH", "")]
    )
    return subprocess.run(
        [sys.executable, "-m", "mutexlab", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        preexec_fn=limit,
    )


def refused(done, *words: str) -> None:
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-500:])
    for word in words:
        assert word in done.stderr, done.stderr


def _scenario(tmp_path: Path, text: str, name: str = "s.json") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# -- traces ------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", [["verify"], ["report", "-o", "{tmp}/r.html"]])
def test_a_trace_without_end_of_line_is_refused_at_once(command, tmp_path):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in command]
    done = bounded(*argv[:1], "/dev/zero", *argv[1:], timeout=30)
    refused(done, "/dev/zero:1: a line longer than 8,388,608 bytes")


def test_an_overlong_line_is_named_by_its_number(tmp_path, cli):
    header = json.dumps(make_setup("ricart-agrawala", 2, {"requests": 0}).run_event())
    path = tmp_path / "t.jsonl"
    with open(path, "w") as handle:
        handle.write(header + "\n\n")
        handle.write('{"event": "send", "pad": "' + "x" * limits.MAX_LINE + '"}\n')
    refused(cli("verify", str(path)), f"{path}:3: a line longer than")


# -- scenarios ---------------------------------------------------------------------------------
HUGE = '{"algorithm": "ricart-agrawala", "processes": 1e9, "steps": []}'


@pytest.mark.parametrize(
    "command", [["replay"], ["explore", "mutex", "--no-browser", "--scenario"]], ids=["replay", "explore"]
)
def test_a_scenario_of_a_billion_processes_is_refused_up_front(command, tmp_path, cli):
    refused(cli(*command, _scenario(tmp_path, HUGE)), "processes", str(MAX_PROCESSES))


def test_explore_refuses_a_configuration_beyond_the_scenario_bound(cli):
    refused(cli("explore", "mutex", "-N", "100000", "--no-browser"), "at most 1000 processes")


@pytest.mark.parametrize(
    "text, words",
    [
        (
            '{"algorithm": "ricart-agrawala", "processes": 2, "steps": [], "options": '
            + "[" * 100_000
            + "]" * 100_000
            + "}",
            "nested more than 64 deep",
        ),
        (
            '{"algorithm": "ricart-agrawala", "processes": 2, "steps": [], "finding": {"a": '
            + "[" * 70
            + "]" * 70
            + "}}",
            "nested more than 64 deep",
        ),
        (
            '{"algorithm": "ricart-agrawala", "processes": 2, "steps": [{"op": "request", "pid": '
            + "9" * 5000
            + "}]}",
            "digits",
        ),
        ('{"algorithm": "ricart-agrawala", "processes": 2, "seed": 1e999, "steps": []}', "too large"),
        ('{"algorithm": "ricart-agrawala", "processes": NaN, "steps": []}', "NaN is not a JSON number"),
    ],
    ids=["deep", "nested-64", "5000-digits", "1e999", "NaN"],
)
def test_a_scenario_beyond_the_json_bounds_is_refused(text, words, tmp_path, cli):
    refused(cli("replay", _scenario(tmp_path, text)), words)


def test_a_scenario_file_without_end_is_refused(tmp_path):
    refused(
        bounded("replay", "/dev/zero", timeout=30), "larger than 16,777,216 bytes, the limit of a scenario"
    )


def test_an_options_file_without_end_is_refused():
    done = bounded("simulate", "mutex", "-a", "lamport", "-N", "3", "--options", "/dev/zero", timeout=30)
    refused(done, "larger than 16,777,216 bytes, the limit of an options file")


@pytest.mark.slow  # about 3 CPU-s: the replay computes up to its bound before it stops
def test_a_replay_that_would_hold_more_than_its_bound_stops_naming_the_step(tmp_path):
    """400 Lamport nodes all asking, then a drain: some 480,000 messages with clocks of up to 400
    entries (tens of GB); the replay stops at its bound, within the child's 1 GB."""
    steps = [{"op": "request", "pid": p} for p in range(1, 401)] + [{"op": "drain"}]
    text = json.dumps({"algorithm": "lamport", "processes": 400, "steps": steps})
    done = bounded("replay", _scenario(tmp_path, text), timeout=240)
    refused(
        done, "step 401 (drain): the replay would hold a trace of more than 5,000,000 vector-clock entries"
    )


def test_a_replay_stops_at_its_bound_naming_the_step(tmp_path, cli, monkeypatch):
    """The bound of the test above, lowered so that 20 nodes reach it: the same refusal, in this process."""
    monkeypatch.setattr(scripted, "MAX_HELD", 5_000)
    steps = [{"op": "request", "pid": p} for p in range(1, 21)] + [{"op": "drain"}]
    text = json.dumps({"algorithm": "lamport", "processes": 20, "steps": steps})
    refused(
        cli("replay", _scenario(tmp_path, text)),
        "step 21 (drain): the replay would hold a trace of more than 5,000 vector-clock entries",
    )


def test_a_parsed_scenario_is_held_to_the_same_bounds():
    deep: dict = {}
    here = deep
    for _ in range(100):
        here["a"] = {}
        here = here["a"]
    with pytest.raises(ScenarioError, match="nested more than 64 deep"):
        load_scenario({"algorithm": "ricart-agrawala", "processes": 2, "steps": [], "finding": deep})
    with pytest.raises(ScenarioError, match="less than or equal to 1000"):
        load_scenario({"algorithm": "ricart-agrawala", "processes": 10**8, "steps": []})


def test_the_json_bounds_themselves():
    assert limits.nesting(1) == 0 and limits.nesting([]) == 1 and limits.nesting({"a": [[]]}) == 3
    assert limits.loads("[" * 64 + "]" * 64) is not None
    with pytest.raises(limits.InputError, match="nested more than 64"):
        limits.loads("[" * 65 + "]" * 65)
    with pytest.raises(limits.InputError, match="Infinity is not a JSON number"):
        limits.loads('{"a": -Infinity}')


def _incomplete(done, *words: str) -> None:
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 3, (done.returncode, done.stdout[-800:], done.stderr[-800:])
    for word in words:
        assert word in done.stdout, done.stdout[-1500:]
    assert "audit of the run so far:" in done.stdout  # its SAFE vouches for no more than the run made


def test_a_protocol_that_never_ends_stops_at_its_event_limit():
    """Nodes that answer every message with another never let the run end; it held its trace until
    MemoryError (3.85 GB). Now it stops at what its held trace may take: exit 3, in the child's 1 GB
    and the 30 s a hostile input may take, naming the limit and the flag that raises it."""
    chatter = str(ROOT / "tests" / "mutexlab_broken" / "endless_chatter.py")
    done = bounded("simulate", "mutex", "--algorithm", chatter, "-N", "3", timeout=30)
    _incomplete(
        done, "incomplete: the event limit (", "events) was reached before the run ended", "--max-events"
    )


def test_a_protocol_whose_memory_grows_faster_than_its_events_stops_at_its_memory_limit():
    """Each event keeps 64 KB more: the event limit alone would let it take gigabytes."""
    hoard = str(ROOT / "tests" / "mutexlab_broken" / "endless_hoard.py")
    done = bounded("simulate", "mutex", "--algorithm", hoard, "-N", "3", timeout=30)
    _incomplete(done, "incomplete: the run grew by more than its memory limit (", "--ignore-memory")


def test_a_streamed_run_that_never_ends_stops_within_seconds():
    """``simulate bees`` holds no trace, so memory never stopped it: bees that fidget for ever ran
    to the old floor of 5,000,000 events (25 CPU-s, 100 s on a loaded machine)."""
    fidgeting = str(ROOT / "tests" / "mutexlab_broken" / "bees_fidgeting.py")
    done = bounded("simulate", "bees", "--algorithm", fidgeting, timeout=30)
    _incomplete(done, "incomplete: the event limit (500,000 events) was reached", "--max-events")


def test_compare_cuts_a_run_that_never_ends_as_simulate_does():
    chatter = str(ROOT / "tests" / "mutexlab_broken" / "endless_chatter.py")
    done = bounded("compare", "-N", "3", "--algorithms", f"ricart-agrawala,{chatter}", timeout=30)
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 3, (done.returncode, done.stdout[-800:], done.stderr[-800:])
    assert "endless-chatter: incomplete: the event limit (" in done.stdout, done.stdout
    assert [line.split()[-1] for line in done.stdout.splitlines()[4:6]] == ["ok", "INCOMPLETE"], done.stdout


def test_max_events_cuts_a_run_short_and_says_so(cli):
    done = cli("simulate", "mutex", "-a", "mutexlab_broken.endless_chatter", "-N", "3", "--max-events", "500")
    _incomplete(done, "incomplete: the event limit (500 events) was reached", "--max-events N raises it")
    done = cli(
        "simulate",
        "mutex",
        "-a",
        "mutexlab_broken.endless_chatter",
        "-N",
        "3",
        "--max-events",
        "500",
        "--json",
    )
    summary = json.loads(done.stdout)
    assert done.returncode == 3 and summary["truncated"] is True
    assert summary["incomplete"].startswith("the event limit (500 events)")
    assert cli("simulate", "mutex", "-a", "lamport", "-N", "3", "--max-events", "0").returncode == 2
