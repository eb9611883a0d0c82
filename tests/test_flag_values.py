"""No traceback for any value a flag accepts: infinities and NaN are refused
with exit 2 and a message naming the flag, ports are validated, and a file `run` cannot write
is refused before the broker is touched."""

from __future__ import annotations

import argparse
import math

import pytest
from test_flags import NOWHERE

from mutexlab.cli import build_parser, main
from mutexlab.transport import service

ODD = ["inf", "-inf", "Infinity", "nan", "NaN", "1e309", "-1e309", "1e308", "99999999999999999999999"]


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, parser) of every (sub)command that has no subcommands of its own."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]  # noqa: SLF001 - argparse lists no subparsers publicly
    if not subs:
        yield path, parser
        return
    for name, child in subs[0].choices.items():
        yield from _leaves(child, (*path, name))


def _typed_flags():
    for path, parser in _leaves(build_parser()):
        for action in parser._actions:  # noqa: SLF001 - argparse lists no actions publicly
            if action.option_strings and action.type is not None and action.nargs in (None, "?"):
                yield " ".join(path), action


@pytest.mark.parametrize("where, action", list(_typed_flags()), ids=lambda v: getattr(v, "dest", v))
def test_every_number_a_flag_takes_is_finite_and_bounded(where, action):
    for text in ODD:
        try:
            value = action.type(text)
        except (argparse.ArgumentTypeError, ValueError, TypeError):
            continue  # refused: argparse reports it as "argument --flag: ..." (exit 2)
        if isinstance(value, float):
            assert math.isfinite(value) and abs(value) <= 1e9, (where, action.option_strings, text, value)


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["simulate", "mutex", "-a", "ricart-agrawala", "-N", "3", "--think", "inf"], "--think"),
        (["simulate", "mutex", "-a", "lamport", "-N", "3", "--cs", "inf"], "--cs"),
        (["simulate", "elves", "--work", "inf"], "--work"),
        (["simulate", "elves", "--rest", "inf"], "--rest"),
        (["simulate", "elves", "--pause", "inf"], "--pause"),
        (["compare", "-N", "3", "--think", "inf"], "--think"),
        (
            ["simulate", "mutex", "-a", "lamport", "-N", "3", "--spike", "0.5", "--spike-delay", "inf"],
            "--spike-delay",
        ),
        (["simulate", "mutex", "-a", "lamport", "-N", "3", "--think", "nan"], "--think"),
        (["simulate", "bees", "--spike-delay", "1e308"], "--spike-delay"),
        (["check", "mutex", "-a", "lamport", "-N", "2", "--max-memory", "inf"], "--max-memory"),
        (["run", "mutex", "--amqp-url", NOWHERE, "--dwell", "inf"], "--dwell"),
        (["run", "mutex", "--amqp-url", NOWHERE, "--stall-timeout", "nan"], "--stall-timeout"),
        (["run", "mutex", "--amqp-url", NOWHERE, "--dwell-kind", "cs=inf"], "--dwell-kind"),
        (["explore", "mutex", "--no-browser", "--port", "70000"], "--port"),
    ],
)
def test_an_infinite_or_out_of_range_value_is_refused_naming_the_flag(argv, flag, capsys):
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2, err
    assert f"argument {flag}" in err and "Traceback" not in err, err


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--logs", "/proc/x"], "cannot write the logs in /proc/x"),
        (["--trace", "/proc/x.jsonl"], "cannot write the trace /proc/x.jsonl"),
        (["--trace", "."], "cannot write the trace .: Is a directory"),
        (["--report", "/proc/r.html"], "cannot write the report /proc/r.html"),
        (["--logs", "/dev/null"], "cannot write the logs in /dev/null"),
    ],
)
def test_run_refuses_a_file_it_cannot_write_before_the_broker(extra, words, capsys, monkeypatch):
    """Exit 2 (with a broker nowhere, touching it would be exit 3), nothing started."""
    import mutexlab.commands.run as run_command

    monkeypatch.setattr(run_command, "execute", lambda *a, **k: pytest.fail("processes started"))
    code = main(["run", "mutex", "--amqp-url", NOWHERE, "-N", "2", *extra])
    err = capsys.readouterr().err
    assert code == 2 and words in err and "Traceback" not in err, err


def test_the_monitor_refuses_a_trace_it_cannot_write_before_the_broker(monkeypatch, capsys):
    for key, value in {
        "AMQP_URL": NOWHERE,
        "RUN_ID": "run-unwritable",
        "ALGORITHM": "ricart-agrawala",
        "PROCESSES": "2",
        "TRACE": "/proc/x.jsonl",
    }.items():
        monkeypatch.setenv(key, value)
    assert service.serve("monitor") == 2
    assert "cannot write the trace /proc/x.jsonl" in capsys.readouterr().err


def test_json_output_holds_no_nan_or_infinity(capsys):
    """The largest spike delay a flag takes still gives finite figures: the output is JSON."""
    import json

    argv = [
        "simulate",
        "mutex",
        "-a",
        "lamport",
        "-N",
        "3",
        "--spike",
        "0.5",
        "--spike-delay",
        "1e6",
        "--json",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    json.loads(out, parse_constant=lambda name: pytest.fail(f"{name} in the JSON output"))
