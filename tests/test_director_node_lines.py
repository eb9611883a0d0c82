"""What programs written elsewhere get wrong on the way to speaking the node protocol, each told
apart clearly by ``mutexlab test``: buffered output, a slow start (the JVM), a line left without
its newline, a banner line, a doubled newline, an id written as a string; and a node's fault in
a step is part of the schedule, so its counterexample replays.

The nodes are one small Python script written here, one variant per mistake.
"""

from __future__ import annotations

import json
import sys

import pytest

# A node that enters when asked and leaves when told: right for one node, wrong for two (a
# violation any schedule shows), and each variant adds one way of writing its lines.
NODE = """import json, os, sys, time
how = sys.argv[1]
if how == 'slow':
    time.sleep(float(sys.argv[2]))  # a slow start: the JVM, a big interpreter
if how == 'buffered':
    sys.stdout = open(1, 'w', buffering=1 << 16)  # block-buffered: a C or C++ program's stdout
if how == 'banner':
    print('node starting', flush=True)
for line in sys.stdin:
    kind = json.loads(line)['type']
    out = []
    if kind == 'request':
        out.append({'type': 'enter', 'resource': 'cs'})
        if how == 'string-id':
            out.append({'type': 'send', 'to': '2', 'body': {}})
        if how == 'float-id':  # as Lua, jq or a double-only language may write a number
            out.append({'type': 'send', 'to': 2.0, 'body': {}})
    elif kind == 'release':
        out.append({'type': 'exit', 'resource': 'cs', **({'units': '1'} if how == 'string-units' else {})})
    if how == 'bom':  # a UTF-8 byte order mark before its first line, as some writers put
        sys.stdout.write('\ufeff'); how = ''
    for o in out:
        print(json.dumps(o))
    end = '\\n\\n' if how == 'blank' else '\\r' if how == 'cr' else '\\n'
    if how == 'partial' and kind == 'request':
        sys.stdout.write('{"type":"do'); sys.stdout.flush(); time.sleep(60)
    sys.stdout.write(json.dumps({'type': 'done'}) + end)
    if how != 'buffered':
        sys.stdout.flush()
"""


def node(tmp_path, how: str, *more: str) -> str:
    program = tmp_path / "node.py"
    program.write_text(NODE)
    return " ".join([sys.executable, str(program), how, *more])


def test_blank_lines_are_skipped_not_garbage(cli, tmp_path):
    ran = cli("test", "mutex", "--node", node(tmp_path, "blank"), "--nodes", "1", "--runs", "3", "-R", "2")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # the same node on two nodes: the violation, not a complaint about its blank lines
    ran = cli("test", "mutex", "--node", node(tmp_path, "blank"), "--nodes", "2", "--runs", "3")
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout


def test_a_flood_of_blank_lines_is_still_a_flood(cli, tmp_path):
    program = tmp_path / "blanks.py"
    program.write_text(
        "import sys\nfor line in sys.stdin:\n"
        "    sys.stdout.write('\\n' * 5000 + '{\"type\":\"done\"}\\n'); sys.stdout.flush()\n"
    )
    ran = cli("test", "mutex", "--node", f"{sys.executable} {program}", "--runs", "1")
    assert ran.returncode == 1 and "FINDING [flood]" in ran.stdout, ran.stdout


def test_a_buffered_node_is_told_to_flush(cli, tmp_path):
    ran = cli(
        "test",
        "mutex",
        "--node",
        node(tmp_path, "buffered"),
        "--start-timeout",
        "2",
        "--timeout",
        "1",
        "--runs",
        "1",
    )
    assert ran.returncode == 1 and "FINDING [stalled]" in ran.stdout, ran.stdout + ran.stderr
    assert "wrote nothing at all within 2 s of its start" in ran.stdout
    assert "must flush it after each done line" in ran.stdout
    # it waits for its next input (/proc shows it): not a slow starter, so no --start-timeout
    assert "blocked reading its standard input" in ran.stdout and "--start-timeout" not in ran.stdout


def test_a_slow_starter_gets_the_start_timeout_and_only_its_first_answer_does(cli, tmp_path):
    slow = node(tmp_path, "slow", "2")
    ran = cli("test", "mutex", "--node", slow, "--nodes", "1", "--timeout", "1", "--runs", "2")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    ran = cli("test", "mutex", "--node", slow, "--timeout", "1", "--start-timeout", "1", "--runs", "1")
    assert ran.returncode == 1 and "wrote nothing at all within 1 s of its start" in ran.stdout, ran.stdout


def test_a_line_left_without_its_newline_is_named(cli, tmp_path):
    ran = cli("test", "mutex", "--node", node(tmp_path, "partial"), "--timeout", "1", "--runs", "1")
    assert ran.returncode == 1 and "FINDING [stalled]" in ran.stdout, ran.stdout
    assert "part of a line and no newline" in ran.stdout and '{"type":"do' in ran.stdout


@pytest.mark.parametrize(
    "how, words",
    [
        ("banner", "a line that is not JSON (standard output carries protocol lines only"),
        ("string-id", 'a send to "2" (a string: an id is a JSON number); its peers are [2, 3]'),
        ("float-id", "a send to 2.0 (written with a fraction or an exponent: an id is a whole number, as 2)"),
        # before: skipped silently (json.loads of bytes drops it), on any line
        ("bom", "a line that starts with a UTF-8 byte order mark (bytes EF BB BF)"),
    ],
)
def test_a_bad_line_says_what_was_expected(cli, tmp_path, how, words):
    ran = cli("test", "mutex", "--node", node(tmp_path, how), "--runs", "1")
    assert ran.returncode == 1 and "FINDING [garbage]" in ran.stdout and words in ran.stdout, ran.stdout


@pytest.mark.parametrize(
    "units, words",
    [
        ("1.0", "units are 1.0 (written with a fraction or an exponent: units are a whole number ≥ 1, as 2)"),
        ("1e0", "units are 1.0 (written with a fraction or an exponent: units are a whole number ≥ 1, as 2)"),
        ('"1"', 'units are "1" (units are a whole number ≥ 1, as 2)'),
        ("0", "units are 0 (units are a whole number ≥ 1, as 2)"),
    ],
)
def test_bad_units_say_what_was_written_and_why(units, words):
    """``1.0`` reads as whole to its writer (awk, jq, a double-only language): the fault says that
    a fraction or an exponent is what is refused, as it does for a send's ``to``."""
    from mutexlab.director.lines import NodeFault, parse

    raw = b'{"type":"enter","resource":"cs","units":' + units.encode() + b"}"
    with pytest.raises(NodeFault) as caught:
        parse(raw, 1, frozenset({2}))
    assert caught.value.rule == "garbage" and words in caught.value.message, caught.value.message


def test_lines_ended_by_a_carriage_return_alone_are_named(cli, tmp_path):
    """Old Mac line ends: the lines are all there, none ends; not "is its output flushed?"."""
    ran = cli(
        "test",
        "mutex",
        "--node",
        node(tmp_path, "cr"),
        "--timeout",
        "1",
        "--start-timeout",
        "1",
        "--runs",
        "1",
    )
    assert ran.returncode == 1 and "FINDING [stalled]" in ran.stdout, ran.stdout
    assert "lines ended with a carriage return (\\r) alone, no newline" in ran.stdout, ran.stdout


@pytest.mark.parametrize(
    "after, words",
    [
        (b"\x00", "text after its JSON object, from character 15 ('\\x00')"),
        (b" ;", "text after its JSON object, from character 16 (';')"),
        (b'{"type":"done"}', "two JSON values on one line, the first ending at character 15"),
    ],
)
def test_what_follows_a_lines_object_is_named_for_what_it_is(after, words):
    """A NUL or a stray character after the object is no second JSON value."""
    from mutexlab.director.lines import NodeFault, parse

    with pytest.raises(NodeFault) as caught:
        parse(b'{"type":"done"}' + after, 1, frozenset({2}))
    assert words in caught.value.message, caught.value.message


def test_a_fault_in_a_step_is_part_of_the_schedule_and_replays(cli, tmp_path):
    """The step a node misbehaved in is the schedule's last: the counterexample plays up to it
    and shows the same fault (it once stopped one step short, and reproduced nothing)."""
    scenario = tmp_path / "units.json"
    program = node(tmp_path, "string-units")
    ran = cli("test", "mutex", "--node", program, "--nodes", "2", "--counterexample", scenario)
    assert ran.returncode == 1 and "FINDING [garbage] (step 2)" in ran.stdout, ran.stdout
    assert "schedule: request 1, release 1" in ran.stdout and "unshrunk" not in ran.stdout
    steps = json.loads(scenario.read_text())["steps"]
    assert steps == [{"do": "request", "node": 1}, {"do": "release", "node": 1}]
    replayed = cli("replay", scenario, "--node", program)
    assert replayed.returncode == 1 and "the recorded finding reproduced" in replayed.stdout, replayed.stdout


def test_replay_takes_the_timeouts_of_a_slow_program(cli, tmp_path):
    scenario = tmp_path / "slow.json"
    slow = node(tmp_path, "slow", "2")
    ran = cli("test", "mutex", "--node", slow, "--nodes", "2", "--counterexample", scenario, "--no-shrink")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert cli("replay", scenario, "--node", slow).returncode == 1  # its start within --start-timeout
    stalled = cli("replay", scenario, "--node", slow, "--start-timeout", "1", "--timeout", "1")
    assert stalled.returncode == 1 and "FINDING [stalled]" in stalled.stdout, stalled.stdout
    assert cli("replay", scenario, "--node", slow, "--timeout", "0").returncode == 2


def test_a_node_that_promised_to_start_afresh_and_ended_is_told_so(cli, tmp_path):
    program = tmp_path / "once.py"
    program.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    kind = json.loads(line)['type']\n"
        "    out = [{'type': 'enter', 'resource': 'cs'}] if kind == 'request' else []\n"
        "    out += [{'type': 'exit', 'resource': 'cs'}] if kind == 'release' else []\n"
        "    out.append({'type': 'done', 'reinit': True} if kind == 'init' else {'type': 'done'})\n"
        "    print('\\n'.join(json.dumps(o) for o in out), flush=True)\n"
        "    if kind == 'release':\n"
        "        sys.exit(0)  # its work is done: it leaves\n"
    )
    ran = cli("test", "mutex", "--node", f"{sys.executable} {program}", "--nodes", "1", "--runs", "3")
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, ran.stdout
    # the run it ended in is the finding (not the next run's init, of no step): it replays
    assert (
        "exited with status 0 after answering release, with nothing asked of it: it answered its "
        "first init with reinit: true" in ran.stdout
    ), ran.stdout
    assert "schedule: request 1, release 1" in ran.stdout, ran.stdout


def test_a_bee_that_never_reports_a_state_is_told_so(cli, tmp_path):
    program = tmp_path / "idle_bee.py"
    program.write_text('import sys\nfor line in sys.stdin:\n    print(\'{"type":"done"}\', flush=True)\n')
    ran = cli("test", "bees", "--node", f"{sys.executable} {program}", "--nodes", "2", "--runs", "1")
    assert ran.returncode == 1 and "FINDING [deadlock]" in ran.stdout, ran.stdout
    assert "bee-1 reported no state (it started in REST), not DEAD or RETIRED" in ran.stdout, ran.stdout
