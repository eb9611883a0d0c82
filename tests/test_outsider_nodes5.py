"""``mutexlab test`` and ``run --node`` on node programs written elsewhere from the docs alone, in
styles the other outsider tests do not cover (tests/outsiders/):

* ``KSemNode.java`` — kmutex, a semaphore server at node 1, a reader thread feeding a
  ``BlockingQueue`` and a worker answering through a ``PrintWriter`` (``--broken``: K + 1 inside;
  ``--no-autoflush``: never flushed; ``--string-ids``);
* ``elves_town_async.js`` — the hamster killers, the mayor dealing contracts and keeping the tools,
  ``for await`` over readline (``--greedy``: poison beyond the supply; ``--late``: a report in a
  ``setImmediate``; ``--pretty``: multi-line JSON; ``--quit``: the mayor exits 0);
* ``bees_asyncio_hive.py`` — the mason bees, bee 1 the hive's registrar, stdin through
  ``connect_read_pipe`` (``--broken``: K + 1 on the flowers; ``--two-per-line``, ``--banner``,
  ``--segv``, ``--flood``, ``--stderr-mb N``);
* ``phil_forkhome.cpp`` — philosophers, each fork lent by its home, ``std::getline`` and
  ``std::cout << '\\n'`` (``-DBROKEN_LEFT_FIRST``: a deadlock; ``-DNO_FLUSH``, ``-DUNTIE``,
  ``-DDEBUG_STDOUT``).

A toolchain that is absent (javac, node, g++) is a skip, a failure under CI.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import live_commands, missing
from outsider_edits import OUTSIDERS, said

from mutexlab.cli import main
from mutexlab.director.node import COMMAND_ENV

BEES = f"{sys.executable} {OUTSIDERS / 'bees_asyncio_hive.py'}"
SMALL_HIVE = ("-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=1", "-o", "cocoons=2")


def running(directory: str) -> list[str]:
    """The command lines of live processes naming ``directory`` (nothing may be left behind)."""
    return live_commands(lambda argv: directory in " ".join(argv))


@pytest.fixture(scope="module")
def java(tmp_path_factory) -> str:
    if shutil.which("javac") is None or shutil.which("java") is None:
        missing("javac or java is not installed: the Java outsider node cannot be built")
    out = tmp_path_factory.mktemp("ksem")
    subprocess.run(["javac", "-d", str(out), str(OUTSIDERS / "KSemNode.java")], check=True)
    return f"java -cp {out} KSemNode"


@pytest.fixture(scope="module")
def elves() -> str:
    if shutil.which("node") is None:
        missing("node (Node.js) is not installed: the JavaScript outsider node cannot run")
    return f"node {OUTSIDERS / 'elves_town_async.js'}"


@pytest.fixture(scope="module")
def phil(tmp_path_factory) -> dict[str, str]:
    if shutil.which("g++") is None:
        missing("g++ is not installed: the C++ outsider node cannot be built")
    out = tmp_path_factory.mktemp("forkhome")
    built = {}
    for name, flags in {
        "ok": [],
        "left-first": ["-DBROKEN_LEFT_FIRST"],
        "no-flush": ["-DNO_FLUSH"],
        "untied": ["-DNO_FLUSH", "-DUNTIE"],
        "debug": ["-DDEBUG_STDOUT"],
    }.items():
        target = out / name
        source = str(OUTSIDERS / "phil_forkhome.cpp")
        subprocess.run(
            ["g++", "-O2", "-std=c++17", "-Wall", "-Werror", *flags, "-o", str(target), source], check=True
        )
        built[name] = str(target)
    return built


# -- Java: a reader thread, a worker, a PrintWriter --------------------------------------------------
@pytest.mark.slow  # builds with javac / g++ and searches exhaustively
def test_the_java_semaphore_passes_and_its_off_by_one_is_found_and_replayed(cli, java, tmp_path):
    done = cli("test", "kmutex", "--node", java, "--nodes", "3", "--strategy", "systematic")
    assert done.returncode == 0 and "PASS — searched exhaustively" in done.stdout, said(done)
    found = tmp_path / "k.json"
    broken = f"{java} --broken"
    done = cli(
        "test", "kmutex", "--node", broken, "--nodes", "3", "--strategy", "pct", "--counterexample", found
    )
    assert done.returncode == 1 and "[capacity] cs (capacity 2) held by" in done.stdout, said(done)
    done = cli("replay", found, "--node", broken)
    assert done.returncode == 1 and "the recorded finding reproduced" in done.stdout, said(done)
    done = cli("replay", found, "--node", java)  # the fix: the schedule proves nothing there
    assert done.returncode == 3 and "did NOT reproduce" in done.stdout, said(done)


def test_a_java_printwriter_never_flushed_is_named_as_buffered(cli, java):
    done = cli(
        "test",
        "kmutex",
        "--node",
        f"{java} --no-autoflush",
        "--timeout",
        "1",
        "--start-timeout",
        "12",  # a JVM under CI's load took over 4 s to reach its first read once: then it is "busy"
        "--runs",
        "1",
    )
    assert done.returncode == 1 and "FINDING [stalled]" in done.stdout, said(done)
    assert "wrote nothing at all within 12 s" in done.stdout and "Java's PrintWriter" in done.stdout, said(
        done
    )
    done = cli("test", "kmutex", "--node", f"{java} --string-ids", "--runs", "1")
    assert done.returncode == 1 and 'a send to "1" (a string: an id is a JSON number)' in done.stdout, said(
        done
    )


# -- Node.js: for await, setImmediate, pretty-printing ------------------------------------------------
def test_the_js_town_passes_and_its_greedy_mayor_is_found_and_replayed(cli, elves, tmp_path):
    small = ("-N", "2", "-o", "contracts=2", "-o", "rounds=1", "-o", "hamsters=[4,4]", "-o", "poison=6")
    done = cli("test", "elves", "--node", elves, *small, "--strategy", "systematic")
    assert done.returncode == 0 and "PASS — searched exhaustively" in done.stdout, said(done)
    found = tmp_path / "el.json"
    greedy = f"{elves} --greedy"
    done = cli("test", "elves", "--node", greedy, *small, "--counterexample", found)
    assert done.returncode == 1 and "[capacity] poison (capacity 6) held by elf-" in done.stdout, said(done)
    done = cli("replay", found, "--node", greedy)
    assert done.returncode == 1 and "the recorded finding reproduced" in done.stdout, said(done)


def test_the_js_town_relies_on_fifo_links_and_reorder_shows_it(cli, elves):
    """Its elf takes a round's STOP as the round's end: a STOP of round 1 overtaken by the final
    one leaves it INITIAL at the end."""
    done = cli(
        "test", "elves", "--node", elves, "-N", "1", "-o", "contracts=1", "-o", "rounds=2",
        "--reorder", "--strategy", "systematic",
    )  # fmt: skip
    assert done.returncode == 1 and "elf-1 ended in INITIAL, not ELF_DONE" in done.stdout, said(done)


@pytest.mark.parametrize(
    "flag, words",
    [
        # past its done line, or after it: when the line came; node 2's fault of three elves is
        # shown on one elf (renumbered 1) when the shrinker's smaller runs show the late line too
        ("--late", r"node [12] wrote "),
        ("--quit", re.escape("node 0 exited with status 0 while handling recv")),
        # before: "(standard output carries protocol lines only: debugging goes to standard error …): {"
        (
            "--pretty",
            re.escape("a JSON object that does not end on its line: one object per line — pretty-printed"),
        ),
    ],
)
def test_the_js_towns_protocol_slips_are_named(cli, elves, flag, words):
    done = cli("test", "elves", "--node", f"{elves} {flag}", "--runs", "5")
    assert done.returncode == 1 and re.search(words, done.stdout), said(done)


# -- Python asyncio: connect_read_pipe, one write per answer ------------------------------------------
def test_the_asyncio_hive_passes_and_its_extra_flower_is_found_and_replayed(cli, tmp_path):
    done = cli("test", "bees", "--node", BEES, "--nodes", "3", *SMALL_HIVE, "--strategy", "systematic")
    assert done.returncode == 0 and "PASS — searched exhaustively" in done.stdout, said(done)
    found, broken = tmp_path / "bz.json", f"{BEES} --broken"
    done = cli("test", "bees", "--node", broken, "--nodes", "3", *SMALL_HIVE, "--counterexample", found)
    assert done.returncode == 1 and "[capacity] flower (capacity 1) held by" in done.stdout, said(done)
    done = cli("replay", found, "--node", broken)
    assert done.returncode == 1 and "the recorded finding reproduced" in done.stdout, said(done)


LATE_ENTER = """\
import json
import sys
import threading

lock = threading.Lock()


def out(o):
    with lock:
        sys.stdout.write(json.dumps(o) + "\\n")
        sys.stdout.flush()


me = None
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "init":
        me = m["id"]
        out({"type": "done", "reinit": True})
    elif m["type"] == "request" and me == 1:  # a worker thread enters, a moment after the done
        out({"type": "done"})
        threading.Timer(0.005, out, [{"type": "enter", "resource": "cs"}]).start()
    elif m["type"] == "request":
        out({"type": "enter", "resource": "cs"})
        out({"type": "done"})
    elif m["type"] == "release":
        out({"type": "exit", "resource": "cs"})
        out({"type": "done"})
    else:
        out({"type": "done"})
"""


def test_a_line_written_after_the_last_steps_done_is_shrunk_to_and_replays(cli, tmp_path):
    """Whether a late line shows depends on when it arrives: the search sees it at the node's next
    input or at rest. Before: the shrunk schedule and the replay ended at the late step's done
    without waiting for it — "the shrunk schedule (2 steps) gave no finding when played again
    …: unshrunk", and a counterexample whose finding "did NOT reproduce" (seeds 1-4, each)."""
    program = tmp_path / "late_enter.py"
    program.write_text(LATE_ENTER)
    node, found = f"{sys.executable} {program}", tmp_path / "late.json"
    for seed in ("1", "2"):
        done = cli("test", "mutex", "--node", node, "--nodes", "2", "--seed", seed, "--counterexample", found)
        assert done.returncode == 1 and "FINDING [protocol] (step 1): node 1 wrote" in done.stdout, said(done)
        assert "its done line (answering request)" in done.stdout and "unshrunk" not in done.stdout, said(
            done
        )
        assert "\nschedule: request 1\n" in done.stdout, said(done)
        done = cli("replay", found, "--node", node)
        assert done.returncode == 1 and "the recorded finding reproduced" in done.stdout, said(done)


@pytest.mark.parametrize(
    "flag, words",
    [
        # before: "(standard output carries protocol lines only: debugging goes to standard error …)"
        (
            "--two-per-line",
            "two JSON values on one line, the first ending at character 36: one object per line",
        ),
        ("--banner", "(standard output carries protocol lines only: debugging goes to standard error"),
        ("--segv", "node 2 was killed by signal 11 (SIGSEGV) while handling recv"),
        ("--flood", "node 2 wrote more than 1000 lines in answer to one input (recv)"),
    ],
)
def test_the_asyncio_hives_slips_are_named(cli, tmp_path, flag, words):
    hive = tmp_path / "hive.py"  # a copy of its own: the processes left behind are this test's
    shutil.copy(OUTSIDERS / "bees_asyncio_hive.py", hive)
    options = ("-o", "eggs=2", "-o", "cocoons=4") if flag == "--segv" else SMALL_HIVE
    done = cli(
        "test", "bees", "--node", f"{sys.executable} {hive} {flag}", "--nodes", "3", *options, "--runs", "3"
    )
    assert done.returncode == 1 and words in done.stdout, said(done)
    assert running(str(hive)) == []


def test_megabytes_of_stderr_debugging_are_no_finding(cli):
    done = cli("test", "bees", "--node", f"{BEES} --stderr-mb 8", "--nodes", "3", *SMALL_HIVE, "--runs", "2")
    assert done.returncode == 0 and "PASS" in done.stdout, said(done)


# -- C++: std::getline, std::cout << '\n' --------------------------------------------------------------
@pytest.mark.slow  # builds with javac / g++ and searches exhaustively
def test_the_forkhome_philosopher_passes_and_left_first_deadlocks(cli, phil, tmp_path):
    done = cli("test", "philosophers", "--node", phil["ok"], "--nodes", "3", "--strategy", "systematic")
    assert done.returncode == 0 and "PASS — searched exhaustively" in done.stdout, said(done)
    found = tmp_path / "ph.json"
    done = cli("test", "philosophers", "--node", phil["left-first"], "--counterexample", found)
    assert done.returncode == 1 and "FINDING [deadlock]" in done.stdout, said(done)
    assert "shrunk from" in done.stdout and "on 2 nodes" in done.stdout, said(done)
    done = cli("replay", found, "--node", phil["left-first"])
    assert done.returncode == 1 and "the recorded finding reproduced" in done.stdout, said(done)


def test_std_cout_is_flushed_by_reading_std_cin_until_they_are_untied(cli, phil):
    """std::cin is tied to std::cout: every getline flushes it, so a node that never flushes by
    hand still answers; ``std::cin.tie(nullptr)`` (the "fast I/O" idiom) unties them, and then
    nothing does."""
    done = cli("test", "philosophers", "--node", phil["no-flush"], "--runs", "5")
    assert done.returncode == 0 and "PASS" in done.stdout, said(done)
    done = cli(
        "test",
        "philosophers",
        "--node",
        phil["untied"],
        "--timeout",
        "1",
        "--start-timeout",
        "1",
        "--runs",
        "1",
    )
    assert done.returncode == 1 and "wrote nothing at all within 1 s" in done.stdout, said(done)
    assert "C++ std::cout" in done.stdout, said(done)
    done = cli("test", "philosophers", "--node", phil["debug"], "--runs", "1")
    assert (
        done.returncode == 1
        and "not JSON" in done.stdout
        and "philosopher 1 now has 1 fork(s)" in done.stdout
    )


# -- over RabbitMQ ----------------------------------------------------------------------------------
def run(capsys, amqp_url: str, problem: str, program: str, *flags: str) -> tuple[int, dict]:
    argv = ["run", problem, "--node", program, "--amqp-url", amqp_url, "--dwell", "0", "--json", *flags]
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.broker
@pytest.mark.slow
def test_the_js_town_and_the_asyncio_hive_run_safe_over_rabbitmq(amqp_url, elves, monkeypatch, capsys):
    monkeypatch.setenv(COMMAND_ENV, "")
    code, summary = run(capsys, amqp_url, "elves", elves, "-N", "3")
    assert code == 0 and summary["states"]["mayor"] == "MAYOR_DONE", summary
    code, summary = run(
        capsys, amqp_url, "bees", BEES, "-P", "4", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "2"
    )
    assert code == 0, summary


@pytest.mark.broker
@pytest.mark.slow
def test_a_silent_program_over_rabbitmq_is_told_what_gives_it_more_time(amqp_url, phil, monkeypatch, capsys):
    """Before: the participant cut each rejected input's reason at 500 characters, silently, and
    the program's fault lost its last words — the advice for a slow start over RabbitMQ
    (``$NODE_START_TIMEOUT``), after ``test``'s flag, which ``run`` does not have."""
    monkeypatch.setenv(COMMAND_ENV, "")
    monkeypatch.setenv("NODE_START_TIMEOUT", "1")
    code, summary = run(capsys, amqp_url, "philosophers", phil["untied"], "-N", "2")
    assert code == 1, summary
    reasons = [reason for r in summary["rejected"] for reason in r["reasons"]]
    assert reasons and all("wrote nothing at all" in r for r in reasons), summary
    assert all(r.endswith("taking its start in state THINKING") for r in reasons), reasons
    # its cout is buffered and untied, and it waits reading its input: told so, not to wait longer
    assert all("its answer sits in its output buffer" in r for r in reasons), reasons
    assert not any("--start-timeout" in r for r in reasons), reasons
    assert running(str(Path(phil["untied"]).parent)) == []
