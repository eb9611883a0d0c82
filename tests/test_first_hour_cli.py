"""What a newcomer meets first: bare ``mutexlab``, ``compare`` without flags, a refused login, a
run without ``--trace``, ``explore`` without a display, counted nouns, files the tour leaves."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pika
import pytest
from conftest import missing

from mutexlab.bus import amqp
from mutexlab.cli import main
from mutexlab.commands import explore
from mutexlab.commands.simulating import NO_TRACE_NOTE
from mutexlab.sim.explore import Exploration
from mutexlab.transport import supervisor

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ROOT / "tests" / "mutexlab_broken" / "ricart_agrawala_eager.py"


def test_bare_mutexlab_prints_the_commands_and_exits_2(capsys):
    assert main([]) == 2
    err = capsys.readouterr().err
    for command in ("simulate", "replay", "verify", "check", "explore", "compare", "run", "report"):
        assert f"\n    {command} " in err, err
    assert "the following arguments are required" not in err
    assert "mutexlab COMMAND --help" in err


def test_compare_needs_no_flags_and_fits_100_columns(capsys):
    assert main(["compare", "--requests", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("N=5, 1 request per node"), out
    wide = [line for line in out.splitlines() if len(line) > 100]
    assert not wide, wide
    # the formulas are not lost: they stand under the table
    assert "  maekawa: messages 3(|S|−1) to 5(|S|−1) = " in out
    assert "  lamport: messages 2(N−1) to 3(N−1) = 8–12; sync T = 1" in out


def test_a_refused_login_is_called_an_authentication_failure(monkeypatch):
    def refuse(url, configure=None, **_):
        raise pika.exceptions.ProbableAuthenticationError("ACCESS_REFUSED - Login was refused")

    monkeypatch.setattr(amqp, "connect_any", refuse)
    problem = supervisor.broker_problem("amqp://guest:wrong@127.0.0.1:5672/")
    assert problem is not None and "authentication failed" in problem
    assert "is it running" not in problem and "wrong" not in problem  # nor the password


def test_an_unreachable_broker_is_still_asked_whether_it_runs(monkeypatch):
    def lost(url, configure=None, **_):
        raise pika.exceptions.AMQPConnectionError("connection refused")

    monkeypatch.setattr(amqp, "connect_any", lost)
    problem = supervisor.broker_problem("amqp://127.0.0.1:1/")
    assert problem is not None and "is it running?" in problem


@pytest.mark.broker
def test_a_wrong_password_on_the_real_broker(amqp_url):
    wrong = pika.URLParameters(amqp_url.split(",")[0])
    url = f"amqp://{wrong.credentials.username}:surely-not-the-password@{wrong.host}:{wrong.port}/"
    problem = supervisor.broker_problem(url)
    assert problem is not None and "authentication failed" in problem, problem


def test_findings_without_a_trace_file_say_the_lines_are_not_written(tmp_path, capsys):
    argv = ["simulate", "mutex", "-a", str(BROKEN), "-N", "3", "--requests", "2", "--seed", "1"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "[capacity]" in out and "line " in out and out.rstrip().endswith(NO_TRACE_NOTE)
    trace = tmp_path / "t.jsonl"
    assert main([*argv, "--trace", str(trace)]) == 1
    out = capsys.readouterr().out
    assert NO_TRACE_NOTE not in out and f"trace written to {trace}" in out


def test_a_safe_run_without_a_trace_has_no_note(capsys):
    assert main(["simulate", "mutex", "-a", "lamport", "-N", "3", "--requests", "1"]) == 0
    assert NO_TRACE_NOTE not in capsys.readouterr().out


def test_no_display_is_read_from_the_environment(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert explore.no_display()
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    assert not explore.no_display()
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.delenv("WAYLAND_DISPLAY")
    assert not explore.no_display()


@pytest.mark.skipif(sys.platform != "linux", reason="a display is read from DISPLAY on Linux only")
def test_explore_without_a_display_prints_the_address_and_says_no_browser_opened():
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "shared"), str(ROOT), env.get("PYTHONPATH", "")])
    child = subprocess.Popen(
        [sys.executable, "-m", "mutexlab", "explore", "mutex", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines = [child.stdout.readline() for _ in range(3)]  # type: ignore[union-attr]
    finally:
        time.sleep(1)  # serving: Ctrl-C stops it (130 if it comes before the handler is set)
        child.send_signal(signal.SIGINT)
        rest, _ = child.communicate(timeout=60)
    url = lines[1].split()[1]
    assert lines[1].startswith("serving http://127.0.0.1:"), lines
    assert lines[2].strip() == f"no display here, so no browser was opened: open {url} in a browser", lines
    assert child.returncode in (0, 130), rest


def test_counted_nouns_in_findings_and_summaries():
    one = Exploration(states=1, transitions=1, finals=1, max_depth=0, complete=True)
    assert one.summary().startswith(
        "1 state, 1 transition, 1 final state, depth 0, 0 violations, 0 deadlocks"
    )


def test_the_files_the_tour_writes_at_the_top_are_ignored_by_git():
    names = ["ra.jsonl", "ra.html", "sk.jsonl", "reed.json", "reed.html", "tampered.jsonl", "run-bees.jsonl"]
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", *names], cwd=ROOT, capture_output=True, text=True
    )
    if done.returncode == 128:
        missing(f"not a git checkout: {done.stderr.strip()}")  # a failure under CI
    assert sorted(done.stdout.split()) == sorted(names)


def test_nodes_whose_names_do_not_resolve_are_left_out_and_the_queue_type_kept():
    from mutexlab.transport.settings import ParticipantSettings, resolvable_nodes

    url = "amqp://u:p@rabbitmq:5672/%2F,amqp://u:p@rabbitmq-2:5672/%2F,amqp://u:p@rabbitmq-3:5672/%2F"
    settings = ParticipantSettings(amqp_url=url, run_id="r", skip_unresolved_nodes=True)
    kept, absent = resolvable_nodes(settings, resolves=lambda host: host == "rabbitmq")
    assert kept.amqp_url == "amqp://u:p@rabbitmq:5672/%2F" and absent == ["rabbitmq-2", "rabbitmq-3"]
    assert kept.queue_kind == "quorum"  # decided on the three nodes named, as every process decides it
    # all resolve, or none does: nothing changes (the connection error names them all)
    assert resolvable_nodes(settings, resolves=lambda host: True) == (settings, [])
    assert resolvable_nodes(settings, resolves=lambda host: False) == (settings, [])


def test_transient_delivery_is_judged_on_the_nodes_that_resolve():
    """Compose names the three cluster nodes for every service; without the cluster profile only
    one exists, and DELIVERY=transient (one node) runs there. With the profile on it is refused."""
    from mutexlab.transport.settings import ParticipantSettings, resolvable_nodes

    url = "amqp://u:p@rabbitmq:5672/%2F,amqp://u:p@rabbitmq-2:5672/%2F,amqp://u:p@rabbitmq-3:5672/%2F"
    settings = ParticipantSettings(amqp_url=url, run_id="r", delivery="transient", skip_unresolved_nodes=True)
    kept, absent = resolvable_nodes(settings, resolves=lambda host: host == "rabbitmq")
    assert kept.amqp_url == "amqp://u:p@rabbitmq:5672/%2F" and absent == ["rabbitmq-2", "rabbitmq-3"]
    assert kept.queue_kind == "classic"
    with pytest.raises(ValueError, match="DELIVERY=transient runs on one broker node"):
        resolvable_nodes(settings, resolves=lambda host: True)  # the cluster profile is on
    with pytest.raises(ValueError, match="DELIVERY=transient runs on one broker node"):
        resolvable_nodes(settings, resolves=lambda host: host != "rabbitmq")  # two peers of a cluster
    with pytest.raises(ValueError, match="DELIVERY=transient runs on one broker node"):
        ParticipantSettings(amqp_url=url, run_id="r", delivery="transient")  # not told to skip: refused


def test_a_command_imports_no_other_command_module():
    """Start-up: ``mutexlab verify`` builds its own parser only, so the heavy modules of ``check``
    and ``run`` (the search, the supervisor, pydantic-settings) are never imported."""
    probe = (
        "import sys\n"
        "from mutexlab.cli import build_parser, chosen_command\n"
        "build_parser(chosen_command(['verify', 'x.jsonl']))\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('mutexlab.commands.'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    loaded = set(out.split())
    assert "mutexlab.commands.verify" in loaded
    assert not loaded & {"mutexlab.commands.check", "mutexlab.commands.run", "mutexlab.commands.compare"}, (
        loaded
    )
