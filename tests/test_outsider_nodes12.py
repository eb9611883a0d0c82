"""``mutexlab test`` on node programs written elsewhere from the docs alone, in languages and habits
the other outsider tests do not cover (tests/outsiders/, ``o12_*``):

* ``o12_token_ring.go`` — a token ring in Go: a goroutine reading stdin into a channel, another
  writing every output handed to it, encoding/json structs with ``omitempty``; the token moves on
  only when somebody asked; ``-eager`` hands it on while inside, ``-circulate`` passes it on for
  ever (Le Lann's ring), ``-panic`` indexes past its table on a second request;
* ``o12_lamport_mpsc.rs`` — Lamport's queue in Rust: a reader thread, a worker over an mpsc
  channel and a logger thread writing ``log`` lines to the same stdout; ``--cfg early`` enters
  when its request heads the queue, without a later stamp from every peer;
* ``o12_kmutex_permits.F90`` — K-mutual exclusion in Fortran, node 1 keeping the permits: fixed
  length strings padded with blanks, ``index()``, ``flush(6)``; ``-DBROKEN_BACK`` counts a permit
  node 1 gives back twice;
* ``o12_bees_coroutines.lua`` — mason bees in Lua 5.4, each bee's life a coroutine that yields
  what it waits for, a JSON reader of its own, bee 1 keeping the flowers; ``--early-next`` hands
  the reed on before leaving it;
* ``o12_phil_homes.py`` — philosophers whose forks live at home and are lent, a dataclass, CRLF
  line ends, unicode bodies with extra fields, ``print`` never flushed (written where
  PYTHONUNBUFFERED was set); ``--left-first`` (a deadlock), ``--flush``.

Each correct one passes every strategy, each bug is found, shrunk and replayed. What they showed
of mutexlab: a token passed round for ever was ``no-rest`` "not shrunk" after 400 test runs and
40 s (a shorter schedule can never reach --max-steps), its counterexample did not reproduce on
replay (exit 3: the replay stopped one step short of the cap), and its message did not say what
kept moving; a node writing its answers to standard error, and one reading two lines per input,
were told only of buffered output.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest
from conftest import missing
from outsider_edits import OUTSIDERS, said


def tool(name: str) -> str:
    if shutil.which(name) is None:
        missing(f"{name} is not installed")
    return name


def found(cli, tmp_path, node: str, *args: str, rule: str) -> str:
    scenario = tmp_path / "ce.json"
    ran = cli("test", *args, "--node", node, "--seed", "1", "--counterexample", scenario)
    assert ran.returncode == 1 and f"FINDING [{rule}]" in ran.stdout, said(ran)
    again = cli("replay", scenario, "--node", node)
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, said(again)
    return ran.stdout


def passes(cli, problem: str, node: str, *args: str) -> None:
    for strategy in ("random", "pct"):
        ran = cli("test", problem, "--node", node, *args, "--strategy", strategy, "--runs", "30")
        assert ran.returncode == 0 and "PASS — no finding" in ran.stdout, said(ran)


@pytest.fixture(scope="module")
def ring(tmp_path_factory) -> str:
    built = tmp_path_factory.mktemp("go") / "ring"
    subprocess.run(
        [tool("go"), "build", "-o", str(built), str(OUTSIDERS / "o12_token_ring.go")],
        check=True,
        env={**os.environ, "GOCACHE": str(built.parent / "cache")},
    )
    return str(built)


def test_a_go_token_ring_passes_and_an_eager_hand_on_is_found(cli, tmp_path, ring):
    ran = cli("test", "mutex", "--node", ring, "-N", "2", "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 10 schedules" in ran.stdout, said(ran)
    passes(cli, "mutex", ring, "-N", "4", "-R", "3")
    out = found(cli, tmp_path, f"{ring} -eager", "mutex", "-N", "3", rule="violation")
    assert "cs (capacity 1) held by" in out and "steps on 2 nodes" in out, out


def test_a_token_passed_round_for_ever_is_no_rest_named_shrunk_and_replayed(cli, tmp_path, ring):
    start = time.monotonic()
    out = found(cli, tmp_path, f"{ring} -circulate", "mutex", "-N", "3", rule="no-rest")
    # before: "not shrunk: no smaller run showed [no-rest] (400 test runs)", some 40 s, and the
    # replay said "the recorded finding [no-rest] did NOT reproduce" (exit 3)
    assert "shrunk from 2000 steps on 3 nodes to 2000 steps on 2 nodes" in out, out
    assert time.monotonic() - start < 20, out
    # before: "(1 messages still held): the nodes keep each other busy", and nothing of the token
    assert "(1 message still held)" in out and "they sent 1,000 messages (TOKEN 1,000)" in out, out
    assert "every request served" in out and "a token sent round" in out, out


def test_a_go_panic_mid_run_is_a_crash_named_by_its_panic(cli, tmp_path, ring):
    out = found(cli, tmp_path, f"{ring} -panic", "mutex", "-N", "3", "-R", "2", rule="crashed")
    assert "exited with status 2 while handling request" in out, out
    assert "panic: runtime error: index out of range" in out and "to 3 steps on 1 node" in out, out


@pytest.fixture(scope="module")
def lamport(tmp_path_factory) -> dict[str, str]:
    where = tmp_path_factory.mktemp("rust")
    built = {}
    for name, flags in (("ok", []), ("early", ["--cfg", "early"])):
        built[name] = str(where / name)
        subprocess.run(
            [tool("rustc"), "-O", *flags, "-o", built[name], str(OUTSIDERS / "o12_lamport_mpsc.rs")],
            check=True,
            capture_output=True,
        )
    return built


def test_a_threaded_rust_lamport_passes_and_an_early_entry_is_found(cli, tmp_path, lamport):
    ran = cli("test", "mutex", "--node", lamport["ok"], "-N", "2", "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 20 schedules" in ran.stdout, said(ran)
    passes(cli, "mutex", lamport["ok"], "-N", "4", "-R", "2")
    out = found(cli, tmp_path, lamport["early"], "mutex", "-N", "3", rule="violation")
    assert "to 2 steps on 2 nodes" in out and "schedule: request 2, request 1" in out, out


@pytest.fixture(scope="module")
def permits(tmp_path_factory) -> dict[str, str]:
    where = tmp_path_factory.mktemp("fortran")
    built = {}
    for name, flags in (("ok", []), ("back", ["-DBROKEN_BACK"])):
        built[name] = str(where / name)
        subprocess.run(
            [
                tool("gfortran"),
                "-cpp",
                "-O2",
                *flags,
                "-o",
                built[name],
                str(OUTSIDERS / "o12_kmutex_permits.F90"),
            ],
            check=True,
        )
    return built


def test_a_fortran_permit_keeper_passes_and_a_permit_counted_twice_is_found(cli, tmp_path, permits):
    ran = cli("test", "kmutex", "--node", permits["ok"], "-N", "3", "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 143 schedules" in ran.stdout, said(ran)
    passes(cli, "kmutex", permits["ok"], "-N", "4", "-R", "2")
    out = found(cli, tmp_path, permits["back"], "kmutex", "-N", "4", "-R", "2", rule="violation")
    assert "cs (capacity 2) held by" in out and "steps on 3 nodes" in out, out


def bees(*flags: str) -> str:
    return " ".join([tool("lua5.4"), str(OUTSIDERS / "o12_bees_coroutines.lua"), *flags])


def test_coroutine_bees_in_lua_pass_and_an_early_hand_on_is_found(cli, tmp_path):
    small = ("-N", "3", "-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=1", "-o", "cocoons=2")
    ran = cli("test", "bees", "--node", bees(), *small, "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 7 schedules" in ran.stdout, said(ran)
    hive = ("-N", "5", "-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=2", "-o", "cocoons=4")
    passes(cli, "bees", bees(), *hive)
    out = found(cli, tmp_path, bees("--early-next"), "bees", *hive, rule="violation")
    assert "reed:1 (capacity 1) held by bee-1" in out and "to 1 step on 3 nodes" in out, out


def phil(*flags: str) -> str:
    return " ".join([sys.executable, str(OUTSIDERS / "o12_phil_homes.py"), *flags])


def test_philosophers_with_forks_at_home_pass_and_left_first_deadlocks(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONUNBUFFERED", "1")  # where it was written: print() reaches the pipe
    ran = cli("test", "philosophers", "--node", phil(), "-N", "3", "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 251 schedules" in ran.stdout, said(ran)
    passes(cli, "philosophers", phil(), "-N", "5", "-R", "2")
    out = found(cli, tmp_path, phil("--left-first"), "philosophers", "-N", "3", rule="deadlock")
    assert "to 4 steps on 2 nodes" in out and "philosopher-2 ends in state HUNGRY" in out, out


def test_a_python_node_that_never_flushes_is_told_its_answer_is_buffered(cli, monkeypatch):
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)  # print into a pipe: block-buffered
    quick = ("-N", "2", "--seed", "1", "--timeout", "1", "--start-timeout", "1")
    ran = cli("test", "philosophers", "--node", phil(), *quick)
    assert ran.returncode == 1 and "FINDING [stalled]: node 1 wrote nothing at all" in ran.stdout, said(ran)
    assert "its answer sits in its output buffer" in ran.stdout, said(ran)
    assert "Python's print into a pipe" in ran.stdout and "must flush it after each done" in ran.stdout
    # before: the general advice alone, nothing of Python's own switch nor of the variable
    assert "— Python: print(…, flush=True), or python3 -u — PYTHONUNBUFFERED=1" in ran.stdout, said(ran)
    ran = cli("test", "philosophers", "--node", phil("--flush"), *quick, "--runs", "20")
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)


def test_answers_written_to_standard_error_are_named_so(cli, tmp_path):
    node = tmp_path / "wrong_stream.py"  # console.error / System.err.println / eprintln! style
    node.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    print(json.dumps({'type': 'done', 'reinit': True}), file=sys.stderr, flush=True)\n"
    )
    args = ("-N", "1", "--seed", "1", "--timeout", "1", "--start-timeout", "1")
    ran = cli("test", "mutex", "--node", f"{sys.executable} {node}", *args)
    assert ran.returncode == 1 and "FINDING [stalled]" in ran.stdout, said(ran)
    # before: only "… either its answer sits in its output buffer …"
    assert 'its standard error holds a protocol line ({"type": "done", "reinit": true})' in ran.stdout, said(
        ran
    )
    assert "mutexlab reads the protocol on standard output only" in ran.stdout, said(ran)


def test_a_node_that_reads_two_lines_per_answer_is_told_so(cli, tmp_path):
    node = tmp_path / "two_lines.py"
    node.write_text(
        "import json, sys\n"
        "while line := sys.stdin.readline():\n"
        "    if json.loads(line)['type'] != 'init':\n"
        "        sys.stdin.readline()  # the request and its release together, thought the author\n"
        "    print(json.dumps({'type': 'done', 'reinit': True}), flush=True)\n"
    )
    args = ("-N", "1", "--seed", "1", "--timeout", "1", "--no-shrink")
    ran = cli("test", "mutex", "--node", f"{sys.executable} {node}", *args)
    assert ran.returncode == 1 and "FINDING [stalled] (step 1)" in ran.stdout, said(ran)
    # before: only "… most likely still in its output buffer (or never written)"
    assert "or it reads another line before it answers this one" in ran.stdout, said(ran)


NATIVE_PRINTS = {
    "python": ("print({'type': 'done', 'reinit': True}, flush=True)", "py"),
    "node": ("console.log({ type: 'done', reinit: true })", "js"),
    "ruby": ('$stdout.sync = true; puts({ "type" => "done", "reinit" => true }.to_s)', "rb"),
}
READ_LINES = {
    "python": "import sys\nfor line in sys.stdin:\n    {}\n",
    "node": "require('readline').createInterface({{ input: process.stdin }}).on('line', () => {{ {} }});\n",
    "ruby": "STDIN.each_line {{ |line| {} }}\n",
}


@pytest.mark.parametrize("language", sorted(NATIVE_PRINTS))
def test_an_object_printed_without_json_is_named_so(cli, tmp_path, language):
    interpreter = sys.executable if language == "python" else tool(language)
    statement, suffix = NATIVE_PRINTS[language]
    node = tmp_path / f"native.{suffix}"
    node.write_text(READ_LINES[language].format(statement))
    ran = cli("test", "mutex", "--node", f"{interpreter} {node}", "-N", "1", "--seed", "1")
    assert ran.returncode == 1 and "FINDING [garbage]" in ran.stdout, said(ran)
    # before: "(standard output carries protocol lines only: debugging goes to standard error …)",
    # of the very line meant as the protocol's
    if language == "python":  # a single quote first: named as Python's print(d), whose remedy is json.dumps
        assert "a dict printed as it is (Python's print(d)) is no JSON: write json.dumps(d)" in ran.stdout, (
            said(ran)
        )
        return
    assert "an object in its language's own notation, not JSON" in ran.stdout, said(ran)
    assert "encode a protocol line with a JSON library" in ran.stdout, said(ran)


def test_an_asyncio_node_awaiting_what_never_comes_is_told_it_waits_in_its_event_loop(cli, tmp_path):
    node = tmp_path / "grants.py"
    node.write_text(
        "import asyncio, json, sys\n"
        "async def main():\n"
        "    loop = asyncio.get_running_loop()\n"
        "    reader = asyncio.StreamReader()\n"
        "    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)\n"
        "    grants = asyncio.Queue()  # filled by a GRANT nobody sends\n"
        "    while line := await reader.readline():\n"
        "        if json.loads(line)['type'] == 'request':\n"
        "            await grants.get()\n"
        "        print(json.dumps({'type': 'done', 'reinit': True}), flush=True)\n"
        "asyncio.run(main())\n"
    )
    args = ("-N", "1", "--seed", "1", "--timeout", "1", "--no-shrink")
    ran = cli("test", "mutex", "--node", f"{sys.executable} {node}", *args)
    assert ran.returncode == 1 and "FINDING [stalled] (step 1)" in ran.stdout, said(ran)
    # before: "node 1 did not answer request within 1 s (no done line): stalled or unresponsive"
    assert "it waits in its event loop with nothing to do" in ran.stdout, said(ran)
    assert "a coroutine awaiting what never comes" in ran.stdout, said(ran)


def test_a_node_js_callback_that_returns_before_its_done_is_told_so(cli, tmp_path):
    node = tmp_path / "early_return.js"
    node.write_text(
        "require('readline').createInterface({ input: process.stdin }).on('line', (line) => {\n"
        "  if (JSON.parse(line).type === 'init') return;  // nothing to set up, thought the author\n"
        "  console.log(JSON.stringify({ type: 'done' }));\n"
        "});\n"
    )
    args = ("-N", "1", "--seed", "1", "--timeout", "1", "--start-timeout", "1")
    ran = cli("test", "mutex", "--node", f"{tool('node')} {node}", *args)
    assert ran.returncode == 1 and "FINDING [stalled]: node 1 wrote nothing at all" in ran.stdout, said(ran)
    # before: "… its answer sits in its output buffer …; one that reads all its input …; one slow
    # to start needs a longer --start-timeout" (nothing of what /proc shows)
    assert "it has most likely handled its init without writing its done line" in ran.stdout, said(ran)


def test_a_node_that_pauses_at_every_wake_is_named_not_busy_nodes(cli, tmp_path):
    node = tmp_path / "tidy.py"
    node.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    kind = json.loads(line)['type']\n"
        "    if kind == 'request':\n"
        "        print(json.dumps({'type': 'enter', 'resource': 'cs'}))\n"
        "    elif kind == 'release':\n"
        "        print(json.dumps({'type': 'exit', 'resource': 'cs'}))\n"
        "        print(json.dumps({'type': 'pause'}))  # tidy up later\n"
        "    elif kind == 'wake':\n"
        "        print(json.dumps({'type': 'pause'}))  # still tidying\n"
        "    print(json.dumps({'type': 'done', 'reinit': True}), flush=True)\n"
    )
    out = found(
        cli, tmp_path, f"{sys.executable} {node}", "mutex", "-N", "1", "--max-steps", "300", rule="no-rest"
    )
    # before: "(0 messages still held): the nodes keep each other busy", of one node and no message
    assert "node-1 was woken 150 times in its last 150 steps, pausing again each time" in out, out
    assert "keep each other busy" not in out, out


def test_a_ruby_node_without_sync_is_told_ruby_s_own_switch(cli, tmp_path):
    node = tmp_path / "unsynced.rb"
    node.write_text(
        "require 'json'\n"
        "STDIN.each_line do |line|\n"
        "  puts({ type: 'done', reinit: true }.to_json)  # $stdout into a pipe: buffered\n"
        "end\n"
    )
    args = ("-N", "1", "--seed", "1", "--timeout", "1", "--start-timeout", "1")
    ran = cli("test", "mutex", "--node", f"{tool('ruby')} {node}", *args)
    assert ran.returncode == 1 and "FINDING [stalled]: node 1 wrote nothing at all" in ran.stdout, said(ran)
    # before: "(C stdio, C++ std::cout, Java's PrintWriter, Python's print …, mawk)", no Ruby
    assert "must flush it after each done line — Ruby: $stdout.sync = true" in ran.stdout, said(ran)
