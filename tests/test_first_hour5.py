"""What a newcomer meets in the first hour (the fifth look): Ctrl-C in the middle of a long
``simulate --trace`` says what it leaves behind; a misspelt flag is answered with the one meant."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mutexlab import cli

ROOT = Path(__file__).resolve().parents[1]


def test_ctrl_c_in_a_long_simulate_names_the_trace_it_leaves(tmp_path):
    """A real SIGINT, as Ctrl-C sends it, once the trace is being written: exit 130, and the
    partial trace is named as cut short (before, only "interrupted", the file left unmentioned)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])}
    command = [sys.executable, "-m", "mutexlab", "simulate", "mutex", "-a", "lamport", "-N", "40"]
    child = subprocess.Popen(
        [*command, "--requests", "100", "--trace", "t.jsonl"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a terminal's job
    )
    trace = tmp_path / "t.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not trace.exists() or trace.stat().st_size < 100_000):
        assert child.poll() is None, child.communicate()
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    assert "interrupted; t.jsonl holds the trace up to the interrupt, cut short" in err
    assert out == ""


def test_only_a_trace_written_by_this_command_is_named(tmp_path, monkeypatch, capsys):
    """An older file of that name (the interrupt came before the run opened it) is not the run's."""
    monkeypatch.chdir(tmp_path)
    old = tmp_path / "old.jsonl"
    old.write_text("{}\n")
    os.utime(old, (1, 1))
    args = type("Args", (), {"command": "simulate", "trace": "old.jsonl"})()
    assert cli.left_behind(args, since=time.time()) == ""
    assert "old.jsonl holds the trace" in cli.left_behind(args, since=0)
    args.command = "verify"  # its "trace" is what it reads, never something it writes
    assert cli.left_behind(args, since=0) == ""
    args.command, args.trace = "replay", "missing.jsonl"
    assert cli.left_behind(args, since=0) == ""


def test_an_interrupt_without_a_trace_says_interrupted_alone(monkeypatch, capsys):
    from mutexlab.commands import simulate

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    for stage in ("_kept", "_streamed", "_measured"):  # whichever the run takes
        monkeypatch.setattr(simulate, stage, interrupted)
    assert cli.main(["simulate", "mutex", "-a", "lamport", "-N", "3"]) == 130
    assert capsys.readouterr().err == "interrupted\n"


def test_a_misspelt_flag_is_answered_with_the_flag_meant(capsys):
    """``--bes 3``: argparse says only "unrecognized arguments"; the flag it was meant to be is
    named, on the unknown-flag path and beside a missing required argument alike."""
    cases = {
        ("simulate", "bees", "--bes", "3"): "unrecognized arguments: --bes 3; did you mean --bees?",
        ("simulate", "bees", "--beees", "3", "--flowrs", "2"): (
            "did you mean --bees for --beees, --flowers for --flowrs?"
        ),
        ("simulate", "mutex", "-a", "lamport", "--nodse", "3"): (
            "required: --nodes/-N; unrecognized arguments: --nodse; did you mean --nodes?"
        ),
        ("check", "mutex", "-N", "2", "--no-reductoin"): "did you mean --no-reduction?",
    }
    for argv, said in cases.items():
        with pytest.raises(SystemExit) as done:
            cli.main(list(argv))
        assert done.value.code == 2
        assert said in capsys.readouterr().err, argv
    with pytest.raises(SystemExit):
        cli.main(["simulate", "bees", "--zzz"])  # nothing close: nothing guessed
    err = capsys.readouterr().err
    assert err.rstrip().endswith("unrecognized arguments: --zzz") and "did you mean" not in err
    with pytest.raises(SystemExit):  # elves' flag on mutex: "--" alike in both is no likeness
        cli.main(["check", "mutex", "-N", "2", "--pins", "2"])
    err = capsys.readouterr().err
    assert "unrecognized arguments: --pins" in err and "did you mean" not in err, err


def test_an_interrupt_after_the_trace_was_written_whole_says_so(tmp_path, monkeypatch, capsys):
    """Ctrl-C after the run ended and its trace closed (here: during the audit that follows): the
    file is the whole run's, and `verify` may well call it SAFE. Before, the message called it cut
    short and "never SAFE" — untrue in that window."""
    from mutexlab import runs

    def interrupted(events):
        raise KeyboardInterrupt

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runs, "verify_events", interrupted)
    assert cli.main(["simulate", "mutex", "-a", "lamport", "-N", "3", "--trace", "t.jsonl"]) == 130
    err = capsys.readouterr().err
    assert "interrupted; t.jsonl holds the whole trace: the run ended before the interrupt" in err, err
    monkeypatch.undo()
    assert cli.main(["verify", str(tmp_path / "t.jsonl")]) == 0, capsys.readouterr()


def test_a_trace_cut_short_is_never_promised_a_verdict_it_may_not_get(tmp_path):
    """A prefix can read SAFE (Lamport's last RELEASE receipts lost after everyone was served), so
    a cut-short trace is only said to be no whole run's, never "never SAFE"."""
    from mutexlab.audit import verify_events
    from mutexlab.trace import read_trace

    path = tmp_path / "t.jsonl"
    assert (
        cli.main(["simulate", "mutex", "-a", "lamport", "-N", "3", "--seed", "1", "--trace", str(path)]) == 0
    )
    events = read_trace(path)
    assert verify_events(events[:-2]).status == "SAFE"  # cut before its last two receipts
    cut = tmp_path / "cut.jsonl"  # as an interrupt leaves it: a file no run here closed whole
    cut.write_text("".join(line + "\n" for line in path.read_text().splitlines()[:-2]))
    said = cli.left_behind(type("Args", (), {"command": "simulate", "trace": str(cut)})(), since=0)
    assert "cut short: it may lack the run's last events" in said and "never SAFE" not in said, said


def test_a_trace_written_in_the_tick_before_its_command_began_is_still_named(tmp_path):
    """A file's mtime lags the clock by up to a tick: a quick run's trace could read older than the
    command that wrote it, and the interrupt then named no file at all (seen in a loaded run)."""
    import os
    import time

    from mutexlab.commands.common import cut_short
    from mutexlab.trace import TraceWriter

    since = time.time()
    path = tmp_path / "t.jsonl"
    TraceWriter(path).close(ended=True)
    os.utime(path, (since - 0.01, since - 0.01))  # the coarse clock's reading
    assert cut_short(str(path), since).endswith("the run ended before the interrupt")


def test_a_trace_written_anew_is_not_taken_for_the_last_one_written_whole(tmp_path):
    """One process writing the same path twice (tests, the explorer): the second, cut short, is
    not the first's whole trace."""
    import time

    from mutexlab.commands.common import cut_short
    from mutexlab.trace import TraceWriter

    path = tmp_path / "t.jsonl"
    TraceWriter(path).close(ended=True)
    since = time.time()
    second = TraceWriter(path)
    second.write({"event": "run", "pid": "monitor"})
    try:
        assert "cut short" in cut_short(str(path), since - 1)
    finally:
        second.close()
