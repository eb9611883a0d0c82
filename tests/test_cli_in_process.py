"""The ``cli`` fixture (conftest.py) runs a command in the test's process as a child would: its exit
code, its output, and the process's global state put back after, whatever the command changed."""

from __future__ import annotations

import logging
import os
import signal
import sys

import pytest


def meddling(tmp_path):
    """A command that changes everything a real one may change, then exits with a message."""

    def run() -> int:
        signal.signal(signal.SIGTERM, lambda *_: None)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        logging.basicConfig(level=logging.DEBUG, force=True)
        logging.getLogger("pika").addHandler(logging.NullHandler())
        os.environ["MUTEXLAB_MEDDLED"] = "yes"
        os.chdir(tmp_path)
        print("out", sys.argv[1:])
        print("err", file=sys.stderr)
        sys.exit("stopped: a message")

    return run


def test_a_command_in_process_leaves_the_process_as_it_found_it(cli, tmp_path):
    before = (
        signal.getsignal(signal.SIGTERM),
        signal.getsignal(signal.SIGINT),
        list(logging.getLogger().handlers),
        logging.getLogger().level,
        list(logging.getLogger("pika").handlers),
        dict(os.environ),
        os.getcwd(),
        sys.argv,
    )
    done = cli._call(["simulate", "x"], meddling(tmp_path), None, {"GIVEN": "1"}, bare=False)  # noqa: SLF001 - the fixture's own machinery, with a command of the test's
    assert done.returncode == 1 and done.stdout == "out ['simulate', 'x']\n"
    assert done.stderr == "err\nstopped: a message\n"
    after = (
        signal.getsignal(signal.SIGTERM),
        signal.getsignal(signal.SIGINT),
        list(logging.getLogger().handlers),
        logging.getLogger().level,
        list(logging.getLogger("pika").handlers),
        dict(os.environ),
        os.getcwd(),
        sys.argv,
    )
    assert after == before


def test_exit_codes_and_output_are_the_commands(cli, tmp_path):
    done = cli("simulate", "mutex", "-a", "nope")  # argparse: SystemExit(2)
    assert done.returncode == 2 and "invalid choice: 'nope'" in done.stderr and done.stdout == ""
    done = cli("--version")  # SystemExit(0)
    assert done.returncode == 0 and done.stdout.startswith("mutexlab ")
    done = cli("simulate", "mutex", "-a", "ricart-agrawala", "-N", "2", "--trace", "t.jsonl", cwd=tmp_path)
    assert done.returncode == 0 and "audit: SAFE" in done.stdout
    assert (tmp_path / "t.jsonl").is_file() and not os.path.exists("t.jsonl")


def test_a_service_sees_only_the_environment_it_is_given(cli, monkeypatch):
    monkeypatch.setenv("AMQP_URL", "amqp://127.0.0.1:1/%2F")  # would satisfy the node, were it passed on
    done = cli.service("node", {"RUN_ID": "r"})
    assert done.returncode == 2 and "AMQP_URL" in done.stderr
    assert os.environ["AMQP_URL"] == "amqp://127.0.0.1:1/%2F"


def test_explore_in_process_never_serves(cli):
    with pytest.raises(BaseException, match="would serve until stopped"):
        cli("explore", "mutex", "--no-browser", "--port", "0")
