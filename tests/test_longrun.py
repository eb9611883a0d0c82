"""Long simulations: memory predicted up front (refused above what the machine has, with the
predicted size, the available memory and the flag to override), and a progress bar with events/s
on a terminal only — never with --json, never when stderr is not a terminal."""

from __future__ import annotations

import io
import json
import re
import resource
import subprocess
import sys

import pytest
from conftest import missing

from mutexlab import memory
from mutexlab.cli import main
from mutexlab.commands import longrun, simulate
from mutexlab.protocols.registry import flags_of, make_setup, spec
from mutexlab.sim import SimConfig, Simulation, engine, workload
from mutexlab.trace import TraceWriter

GB = 1 << 30


@pytest.fixture
def machine(monkeypatch):
    """Pretend the machine has ``machine.available`` bytes available; forbid running the simulator
    when ``machine.forbid_run`` (a refused configuration must be refused without running it)."""

    class Machine:
        available = 16 * GB
        forbid_run = False

    def available(meminfo="/proc/meminfo"):
        return Machine.available

    def guarded(real):
        def build(*args, **kwargs):
            # A refused configuration must not even be set up: P processes hold P² of state.
            assert not Machine.forbid_run, "a refused configuration was set up"
            return real(*args, **kwargs)

        return build

    monkeypatch.setattr(memory, "available_bytes", available)
    for module in (simulate, workload):  # workload: simulate of a measured family, and compare
        monkeypatch.setattr(module, "build_setup", guarded(module.build_setup))
    monkeypatch.setattr(Simulation, "run", guarded(Simulation.run))
    return Machine


@pytest.mark.parametrize(
    "argv, knob",
    [
        (["simulate", "bees", "--bees", "20000", "--report", "r.html"], "fewer bees"),
        (["simulate", "bees", "--bees", "20000", "--no-audit"], "fewer bees"),
        (["simulate", "mutex", "-a", "lamport", "-N", "3000"], "fewer nodes or requests"),
        (["compare", "-N", "3000"], "fewer nodes or requests"),
        (["simulate", "elves", "--elves", "800", "--contracts", "200"], "fewer elves, contracts or rounds"),
    ],
)
def test_a_configuration_predicted_too_large_is_refused_without_running(argv, knob, machine, capsys):
    machine.forbid_run = True
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert re.search(r"predicted to need about [\d.]+ (GB|TB|PB)", err), err
    assert "but 16.0 GB is available (MemAvailable in /proc/meminfo)" in err
    assert knob in err and "--ignore-memory to run it anyway" in err


def test_the_real_machine_refuses_bees_20000_with_a_report(capsys):
    """Against this machine's own /proc/meminfo: P = 20,000 is predicted near 220 GB by its P²
    tables and messages in flight alone (--report holds no trace, only the window its page
    draws: docs/architecture.md#scaling)."""
    available = memory.available_bytes()
    if available is None:  # not Linux; CI runs on Linux, where its absence is a failure
        missing("no /proc/meminfo here: the check does not apply")
    assert (
        available
        < memory.predict(
            memory.messages(spec("bees"), 20000, {"reeds": 3, "eggs": 5, "cocoons": 15}), 20000, audited=False
        ).bytes
    )

    def limited():  # should the check fail, the run dies at 2 GB instead of filling a shared machine
        resource.setrlimit(resource.RLIMIT_AS, (2 * GB, 2 * GB))

    done = subprocess.run(
        [sys.executable, "-m", "mutexlab", "simulate", "bees", "--bees", "20000", "--report", "r.html"],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limited,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "predicted to need about" in done.stderr and "MemAvailable" in done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "bees"],
        ["simulate", "bees", "--bees", "1"],
        ["simulate", "elves"],
        ["simulate", "mutex", "-a", "maekawa", "-N", "13"],
        ["compare", "-N", "4"],
    ],
)
def test_small_configurations_run_without_a_word_about_memory(argv, machine, capsys):
    assert main(argv) == 0
    assert capsys.readouterr().err == ""


def test_between_half_and_all_of_the_memory_warns_and_runs(machine, capsys):
    options = {"reeds": 3, "eggs": 5, "cocoons": 15}
    flags = flags_of(spec("bees"))  # its problem's
    assert flags is not None  # the audit keeps its holding intervals: they count
    need = memory.predict(
        memory.messages(spec("bees"), 10, options),
        10,
        audited=False,
        intervals=memory.intervals(flags, 10, options),
    ).bytes
    machine.available = int(need / 0.8)
    assert main(["simulate", "bees"]) == 0
    out, err = capsys.readouterr()
    assert "mason bees: P=10" in out
    assert (
        err.startswith("mutexlab: warning: this run is predicted to need about") and "more than half" in err
    )


def test_the_flag_overrides_the_refusal(machine, capsys):
    machine.available = 1 << 20
    assert main(["simulate", "bees"]) == 2
    assert "--ignore-memory" in capsys.readouterr().err
    assert main(["simulate", "bees", "--ignore-memory"]) == 0
    assert capsys.readouterr().err == ""


def test_meminfo_is_read_in_bytes_and_its_absence_disables_the_check(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(
        "MemTotal:       32000000 kB\nMemFree:         1000000 kB\nMemAvailable:   21221348 kB\n"
    )
    assert memory.available_bytes(meminfo) == 21221348 * 1024
    assert memory.available_bytes(tmp_path / "nope") is None
    huge = memory.predict(1e12, 10_000)
    assert memory.verdict(huge, None, "less") == (None, None)
    error, warning = memory.verdict(huge, 8 * GB, "less")
    assert warning is None and "8.0 GB is available" in error


def test_the_model_is_within_a_factor_two_of_a_measured_run(tmp_path):
    """Peak RSS of a real run holding its trace (``simulate mutex`` keeps its events) against the
    prediction (the constants were fitted on larger runs)."""
    nodes = 60
    predicted = memory.predict(memory.messages(spec("lamport"), nodes, {"requests": 3}), nodes).bytes
    probe = (
        "import resource, subprocess, sys; subprocess.run([sys.executable, '-m', 'mutexlab', 'simulate', "
        f"'mutex', '-a', 'lamport', '-N', '{nodes}', '--json'], stdout=subprocess.DEVNULL, "
        "stderr=subprocess.DEVNULL, check=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)"
    )
    measured = int(
        subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=600
        ).stdout
    )
    assert 0.5 < measured / predicted < 2, f"measured {measured >> 20} MB, predicted {predicted >> 20} MB"


# -- progress ------------------------------------------------------------------------------------
class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_progress_callback_sees_the_run_without_changing_it():
    def trace(progress):
        writer = TraceWriter(None, keep=True)
        simulation = Simulation(make_setup("bees", 20, {}, 3), SimConfig(seed=3), writer)
        simulation.progress = progress
        result = simulation.run()
        return [json.dumps(e) for e in writer.events], result

    calls = []
    plain, plain_result = trace(None)
    watched, watched_result = trace(lambda events, now: calls.append((events, now)))
    assert watched == plain and watched_result.events == plain_result.events
    assert len(calls) == -(
        -plain_result.events // engine.PROGRESS_EVERY
    )  # one per slice, the last at the end
    assert [c[0] for c in calls] == sorted(c[0] for c in calls) and calls[-1][0] == plain_result.events


def test_the_bar_shows_events_per_second_on_a_terminal_and_goes(monkeypatch, capsys):
    terminal = Terminal()
    monkeypatch.setattr(longrun, "SHOW_AFTER", 0.0)
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["simulate", "bees", "--bees", "20"]) == 0
    shown = terminal.getvalue()
    assert "events/s" in shown and re.search(r"[\d,]+ of ~[\d,]+ events", shown), shown
    out = capsys.readouterr().out
    assert out.startswith("mason bees: P=20") and "events/s" not in out


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "bees", "--bees", "20", "--json"],
        ["simulate", "elves", "--json"],
        ["simulate", "mutex", "-a", "lamport", "-N", "5", "--json"],
    ],
)
def test_no_bar_with_json(argv, monkeypatch, capsys):
    terminal = Terminal()
    monkeypatch.setattr(longrun, "SHOW_AFTER", 0.0)
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(argv) == 0
    assert terminal.getvalue() == ""
    json.loads(capsys.readouterr().out)


def test_no_bar_when_stderr_is_not_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr(longrun, "SHOW_AFTER", 0.0)
    for argv in (
        ["simulate", "bees", "--bees", "20"],
        ["simulate", "elves"],
        ["simulate", "mutex", "-a", "lamport", "-N", "5"],
    ):
        assert main(argv) == 0
        assert capsys.readouterr().err == ""
