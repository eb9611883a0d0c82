"""A program as a participant: ``ProgramNode`` (director/node.py) and ``mutexlab run PROBLEM --node``.

The C examples are built with gcc into a temporary directory (a skip without gcc, a failure under
CI). Every test that starts programs checks that none is left running afterwards: a program's
command line names the test's own directory, so any process still running it is found in /proc.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import build_c_nodes, live_commands

from mutexlab.cli import main
from mutexlab.director.node import COMMAND_ENV, ProgramMessage, ProgramNode
from mutexlab.director.solution import module_of, program_solution
from mutexlab.protocol import Enter, HandlerError, Note, Schedule, Send
from mutexlab.protocols import registry
from mutexlab.setups import ConfigError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "nodes"
VARIANTS = {
    "ra": ("ricart_agrawala.c", []),
    "ra-reply-in-cs": ("ricart_agrawala.c", ["-DBROKEN_REPLY_IN_CS"]),
    "bee": ("bee.c", []),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, str]:
    return build_c_nodes(tmp_path_factory.mktemp("programs"), EXAMPLES, VARIANTS)


def running(directory: str) -> list[str]:
    """The command lines of live processes that run something in ``directory``."""
    return live_commands(lambda argv: bool(argv) and argv[0].startswith(directory))


# -- the adapter alone -----------------------------------------------------------------------------
def test_a_program_node_turns_lines_into_effects_and_is_killed_on_close(built):
    init = {"seed": 0, "problem": "mutex", "options": {"requests": 1, "resource": "cs"}}
    one = ProgramNode(1, 2, built["ra"], init, requests=1, resource="cs")
    two = ProgramNode(2, 2, built["ra"], init, requests=1, resource="cs")
    try:
        assert one.process is None  # nothing runs before the start
        assert one.start() == [Schedule("request", "think")]
        two.start()
        asked = one.on_local("request")
        assert asked[0] == Note("request", {"resource": "cs"}) and one.state == "WANTED"
        request = asked[1]
        assert isinstance(request, Send) and request.to == 2 and isinstance(request.msg, ProgramMessage)
        reply = two.on_message(request.msg)
        assert [type(e) for e in reply] == [Send]
        entered = one.on_message(reply[0].msg)
        assert entered == [Enter("cs"), Schedule("exit", "cs")] and one.state == "HELD"
        one.on_local("exit")
        assert one.state == "RELEASED" and one.finished
    finally:
        one.close()
        two.close()
    assert running(str(Path(built["ra"]).parent)) == []
    one.close()  # idempotent


def test_a_program_that_enters_unasked_is_a_finding(tmp_path):
    rogue = tmp_path / "rogue.py"
    rogue.write_text(
        "import sys, json\n"
        "for line in sys.stdin:\n"
        '    print(json.dumps({"type": "enter", "resource": "cs"}))\n'
        '    print(json.dumps({"type": "done"}), flush=True)\n'
    )
    node = ProgramNode(1, 2, f"{sys.executable} {rogue}", {}, requests=1, resource="cs")
    try:
        with pytest.raises(HandlerError, match="without a request pending"):
            node.start()
    finally:
        node.close()


def test_the_command_comes_from_the_environment_at_start(monkeypatch, built):
    monkeypatch.delenv(COMMAND_ENV, raising=False)
    setup = program_solution("mutex").make_setup(2, {"requests": 1}, 0)  # builds, runs nothing
    assert setup.algorithm == "program-mutex" and setup.capacities == {"cs": 1}
    with pytest.raises(HandlerError, match=COMMAND_ENV):
        setup.protocols[1].start()
    monkeypatch.setenv(COMMAND_ENV, built["ra"])
    node = setup.protocols[1]
    try:
        assert node.start() == [Schedule("request", "think")]
    finally:
        node.close()
    kmutex = program_solution("kmutex").make_setup(3, {"requests": 1, "k": 2}, 0)
    assert kmutex.algorithm == "program-kmutex" and kmutex.capacities == {"cs": 2}
    bees = program_solution("bees").make_setup(4, {"flowers": 1, "reeds": 2, "eggs": 1, "cocoons": 2}, 0)
    assert bees.algorithm == "bees" and set(bees.names.values()) == {f"bee-{i}" for i in range(1, 5)}


def test_run_node_refuses_what_it_cannot_run(capsys, monkeypatch):
    monkeypatch.setenv(COMMAND_ENV, "")  # run --node sets it: restored after the test
    assert main(["run", "mutex", "--node", "/no/such/program", "--amqp-url", "amqp://127.0.0.1:1/%2F"]) == 2
    assert "not an executable" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="run --node takes") as refused:
        module_of("hamsters")
    assert all(problem in str(refused.value) for problem in ("mutex", "kmutex", "bees", "elves"))
    assert main(["run", "kmutex", "--amqp-url", "amqp://127.0.0.1:1/%2F"]) == 2  # no default solution
    assert "needs --algorithm NAME (or --node CMD" in capsys.readouterr().err
    # a malformed $NODE_START_TIMEOUT is the user's setting: exit 2 before anything runs, not a
    # finding of every node's handler
    monkeypatch.setenv("NODE_START_TIMEOUT", "soon")
    assert main(["run", "mutex", "--node", "true", "--amqp-url", "amqp://127.0.0.1:1/%2F"]) == 2
    assert "NODE_START_TIMEOUT='soon': expected seconds" in capsys.readouterr().err


# -- over RabbitMQ -----------------------------------------------------------------------------------
def run(capsys, amqp_url: str, problem: str, program: str, *flags: str) -> tuple[int, dict]:
    """``mutexlab run PROBLEM --node PROGRAM``: its exit code and the monitor's summary."""
    argv = ["run", problem, "--node", program, "--amqp-url", amqp_url, "--dwell", "0", "--json", *flags]
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.broker
@pytest.mark.slow
def test_run_mutex_on_the_c_ricart_agrawala_is_safe(amqp_url, built, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(COMMAND_ENV, "")
    trace = tmp_path / "ra.jsonl"
    code, summary = run(
        capsys, amqp_url, "mutex", built["ra"], "-N", "3", "--requests", "2", "--trace", str(trace)
    )
    assert code == 0, summary
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert events[0]["algorithm"] == "program-mutex"
    assert sum(e["event"] == "enter" for e in events) == 6
    assert running(str(Path(built["ra"]).parent)) == []


@pytest.mark.broker
@pytest.mark.slow
def test_the_broken_c_ricart_agrawala_is_caught_over_rabbitmq(amqp_url, built, monkeypatch, capsys):
    """Two nodes, no think time, a long critical section: node 1 leaves, answers node 2 and asks
    again at once; node 2, inside, gets that request behind the reply on the same FIFO link and —
    the bug — answers it: node 1 enters while node 2 is inside (0.5 s, far beyond a delivery)."""
    monkeypatch.setenv(COMMAND_ENV, "")
    flags = ("-N", "2", "--requests", "2", "--think", "0", "--cs", "0.5")
    code, summary = run(capsys, amqp_url, "mutex", built["ra-reply-in-cs"], *flags)
    assert code == 1, summary
    assert "capacity" in json.dumps(summary)
    assert running(str(Path(built["ra"]).parent)) == []
    code, summary = run(capsys, amqp_url, "mutex", built["ra"], *flags)  # the same run, correct
    assert code == 0, summary


@pytest.mark.broker
@pytest.mark.slow
def test_run_bees_on_the_c_bee_is_safe(amqp_url, built, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(COMMAND_ENV, "")
    trace = tmp_path / "bees.jsonl"
    flags = ("-P", "4", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "2", "--trace", str(trace))
    code, summary = run(capsys, amqp_url, "bees", built["bee"], *flags)
    assert code == 0, summary
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert events[0]["algorithm"] == "bees"  # the bees' own audit judged it
    assert sum(e["event"] == "egg" for e in events) == 4
    assert main(["verify", str(trace)]) == 0
    assert running(str(Path(built["bee"]).parent)) == []


# -- as compose services (read, not run: scripts/compose-check.sh runs the project's file) -----------
def test_the_compose_example_scales_the_c_bee_as_participants_of_one_run():
    root = EXAMPLES.parent.parent
    compose = yaml.safe_load((EXAMPLES / "compose.yml").read_text())
    project = yaml.safe_load((root / "docker-compose.yml").read_text())
    monitor, bee = compose["services"]["program-monitor"], compose["services"]["program-bee"]
    for service in (monitor, bee):
        assert service["profiles"] == ["program"] and service["pull_policy"] == "build"
        assert "container_name" not in service and "ports" not in service  # --scale can copy it
        assert (root / service["build"]["dockerfile"]).is_file()
        assert service["environment"]["MUTEXLAB_RUN_SECRET"].startswith(
            "${MUTEXLAB_RUN_SECRET:?"
        )  # authenticated
    for key in ("ALGORITHM", "RUN_ID", "AMQP_URL", "MUTEXLAB_RUN_SECRET"):  # one run, alike
        assert monitor["environment"][key] == bee["environment"][key]
    assert "traces" in project["volumes"] and "rabbitmq" in project["services"]
    spec = registry.resolve(bee["environment"]["ALGORITHM"])
    assert bee["command"] == ["python", f"services/{spec.role}/main.py"]
    assert bee["environment"]["NODE_COMMAND"] == "/usr/local/bin/bee"
    dockerfile = (root / bee["build"]["dockerfile"]).read_text()
    assert (
        "-o /programs/bee /src/bee.c" in dockerfile
        and "COPY --from=programs /programs/ /usr/local/bin/" in dockerfile
    )
    options = json.loads(re.sub(r"\$\{\w+:-(\w+)\}", r"\1", monitor["environment"]["OPTIONS"]))
    setup = spec.make_setup(4, options, 0)  # the options the monitor is given build a run of 4
    assert setup.algorithm == "bees" and len(setup.protocols) == 4


SLOW_START = """import json, sys, time
time.sleep(2)  # a slow start: the JVM compiling a source file, a big interpreter
for line in sys.stdin:
    print(json.dumps({'type': 'done'}), flush=True)
"""


def test_a_slow_starting_program_gets_its_start_timeout_and_a_clear_fault_past_it(tmp_path, monkeypatch):
    from mutexlab.director.node import START_ENV

    program = tmp_path / "slow.py"
    program.write_text(SLOW_START)
    init = {"seed": 0, "problem": "mutex", "options": {"requests": 1, "resource": "cs"}}
    monkeypatch.delenv(START_ENV, raising=False)
    monkeypatch.setattr("mutexlab.director.node.TIMEOUT", 1.0)  # every later answer: 1 s
    node = ProgramNode(1, 2, f"{sys.executable} {program}", init, requests=1, resource="cs")
    try:
        assert Schedule("request", "think") in node.start()  # 2 s: more than 1, within the 12 of a start
    finally:
        node.close()
    monkeypatch.setenv(START_ENV, "1")
    node = ProgramNode(1, 2, f"{sys.executable} {program}", init, requests=1, resource="cs")
    try:
        with pytest.raises(HandlerError, match="wrote nothing at all within 1 s of its start"):
            node.start()
    finally:
        node.close()
    for bad in ("soon", "0", "nan", "inf"):
        monkeypatch.setenv(START_ENV, bad)
        with pytest.raises(HandlerError, match=f"ConfigError: {START_ENV}="):  # as an unset $NODE_COMMAND
            ProgramNode(1, 2, f"{sys.executable} {program}", init, requests=1, resource="cs").start()
    assert running(str(tmp_path)) == []


def test_each_start_timeout_is_named_for_where_it_applies(monkeypatch, capsys):
    """Two first-answer timeouts, two names: ``mutexlab test``'s own processes (its
    ``--start-timeout`` default) and a node of ``run --node`` over RabbitMQ, which must answer
    within the monitor's default stall timeout to be this node's fault rather than a stalled run."""
    from mutexlab.director import node, process
    from mutexlab.transport.settings import MonitorSettings

    assert not hasattr(process, "START_TIMEOUT") and not hasattr(node, "START_TIMEOUT")
    monkeypatch.delenv(node.START_ENV, raising=False)
    assert node.start_timeout() == node.RUN_START_TIMEOUT
    stall = MonitorSettings.model_fields["stall_timeout"].default
    assert stall > node.RUN_START_TIMEOUT, (node.RUN_START_TIMEOUT, stall)
    with pytest.raises(SystemExit):
        main(["test", "--help"])
    assert f"(default {process.TEST_START_TIMEOUT:g}:" in capsys.readouterr().out


def test_a_programs_bad_line_is_placed_in_the_program_not_in_mutexlab(tmp_path):
    # Before: "node-1 raised NodeFault: node 1 wrote a line that is not JSON …: ready at
    # …/mutexlab/director/lines.py:69 (in parse)", as if mutexlab's own code were at fault.
    chatty = tmp_path / "chatty.py"
    chatty.write_text("import sys\nprint('ready', flush=True)\nfor line in sys.stdin:\n    pass\n")
    node = ProgramNode(1, 2, f"{sys.executable} {chatty}", {}, requests=1, resource="cs")
    try:
        with pytest.raises(HandlerError, match="not JSON") as raised:
            node.start()
    finally:
        node.close()
    assert "lines.py" not in str(raised.value) and "at the program's answer" in str(raised.value)
    assert not running(str(tmp_path))


LATE = (
    "import json, sys, time\n"
    "for line in sys.stdin:\n"
    "    print(json.dumps({'type': 'done'}), flush=True)\n"
    "    if json.loads(line)['type'] == 'request':\n"
    "        time.sleep(0.2)\n"
    "        print(json.dumps({'type': 'enter', 'resource': 'cs'}), flush=True)  # after its done\n"
)


def test_a_program_node_names_the_lines_it_wrote_after_its_done(tmp_path):
    """Nothing reads a program between its inputs: lines written after a done (a timer's, another
    thread's) wait unread, and the node's stall hint names them (the stall report shows it)."""
    late = tmp_path / "late.py"
    late.write_text(LATE)
    node = ProgramNode(1, 2, f"{sys.executable} {late}", {}, requests=1, resource="cs")
    try:
        node.start()
        assert node.stall_hint() is None, "its init answered, nothing after"
        node.on_local("request")
        hint = None
        for _ in range(100):  # the late line comes 0.2 s after the done
            if (hint := node.stall_hint()) is not None:
                break
            time.sleep(0.05)
        assert hint is not None and "wrote after its done line (answering request)" in hint, hint
        assert 'unread: {"type": "enter"' in hint, hint
    finally:
        node.close()


@pytest.mark.broker
def test_a_run_stalled_on_a_programs_late_lines_says_what_was_late(amqp_url, tmp_path, monkeypatch, capsys):
    """Each node enters only after its request's done: nothing reads that line, the run stalls
    with both nodes waiting. The stall report said no more than that (STALLED, waits for nothing
    reported); it now names the lines written after the done, unread."""
    monkeypatch.setenv(COMMAND_ENV, "")
    late = tmp_path / "late.py"
    late.write_text(LATE)
    program = f"{sys.executable} {late}"
    code, summary = run(
        capsys, amqp_url, "mutex", program, "-N", "2", "--requests", "1", "--stall-timeout", "4"
    )
    assert code == 3, summary
    hints = [info.get("hint", "") for info in summary["stalled"].values()]
    assert hints and all("wrote after its done line (answering request)" in h for h in hints), summary
