"""Verdicts that never overstate, and stops that name what stopped them (verdict18).

* A trace coloured by ``jq -C`` (colour codes around each key, value and bracket) is read as the
  plain trace: the same verdict, the same words; an escape byte inside a value or another code
  is refused naming it. Before: ``not JSON (Expecting value)``, exit 2, the colours unnamed.
* ``test --mpi``: a read of a window that mutexlab held (docs/mpi.md#rma) leaves schedules undriven
  (its origin never read the same bytes again and went on): ``systematic`` is INCOMPLETE (exit 3),
  never "searched exhaustively"; ``random`` and ``pct`` PASS saying what was not driven; ``--json``
  carries ``exhaustive: false``, ``read_held_runs`` and ``not_driven``. And a read that came while a
  lock request already waited for its origin's lock was held for ever: a false ``deadlock``.
* A run stopped midway by an error other than a state of no name, after the trace broke safety,
  names that error as its stop (``a waiting_for() that raised``); before, the words said "a handler
  left a state of no name: refused", in text and in ``--json``'s ``stopped``.
* A solution's sibling module imported lazily (inside a handler) is watched as one imported at the
  top of the file: a handler changing its global is the shared-state finding. Before: SAFE, PASS.
  Never a test module's (``test_*.py``) nor the standard library's.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import missing
from test_mpi import Builds, shared_cache

ROOT = Path(__file__).resolve().parent.parent
BROKEN_KMUTEX = ROOT / "examples" / "solutions" / "kmutex_ricart_agrawala_broken.py"

KEY, PUNCT, STRING, NUMBER, OFF = "\x1b[34;1m", "\x1b[1;39m", "\x1b[0;32m", "\x1b[0;39m", "\x1b[0m"


def said(done) -> str:
    return f"exit {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}"


def coloured(value: object, key: bool = False) -> str:
    """``value`` as ``jq -C -c .`` writes it (jq 1.6/1.7): each key, value and bracket coloured."""
    if isinstance(value, dict):
        inner = f"{PUNCT},{OFF}".join(
            f"{KEY}{json.dumps(k)}{OFF}{PUNCT}:{OFF}{coloured(v)}" for k, v in value.items()
        )
        return f"{PUNCT}{{{OFF}{inner}{PUNCT}{PUNCT}}}{OFF}"
    if isinstance(value, list):
        inner = f"{PUNCT},{OFF}".join(coloured(v) for v in value)
        return f"{PUNCT}[{inner}{PUNCT}{PUNCT}]{OFF}"
    colour = STRING if isinstance(value, str) else NUMBER
    return f"{colour}{json.dumps(value)}{OFF}"


def colour_file(plain: Path, out: Path) -> Path:
    lines = [json.loads(line) for line in plain.read_text().splitlines() if line.strip()]
    out.write_text("".join(coloured(event) + "\n" for event in lines))
    return out


@pytest.fixture
def traces(cli, tmp_path) -> dict[str, Path]:
    safe, broken = tmp_path / "safe.jsonl", tmp_path / "broken.jsonl"
    done = cli("simulate", "mutex", "-a", "ricart-agrawala", "-N", "3", "--seed", "1", "--trace", safe)
    assert done.returncode == 0, said(done)
    done = cli("simulate", BROKEN_KMUTEX, "-N", "4", "--seed", "1", "--trace", broken)
    assert done.returncode == 1, said(done)
    return {"safe": safe, "broken": broken}


@pytest.mark.parametrize(("name", "code"), [("safe", 0), ("broken", 1)])
def test_a_trace_coloured_by_jq_reads_as_the_plain_trace(cli, tmp_path, traces, name, code):
    plain = traces[name]
    shown = colour_file(plain, tmp_path / f"{name}-c.jsonl")
    assert f'{KEY}"event"{OFF}{PUNCT}:{OFF}{STRING}"run"{OFF}' in shown.read_text()
    want, done = cli("verify", plain), cli("verify", shown)
    assert want.returncode == done.returncode == code, said(done)
    assert done.stdout == want.stdout and done.stderr == want.stderr, said(done)
    assert cli("verify", shown, "--json").stdout == cli("verify", plain, "--json").stdout


def test_the_real_jq_colours_read_as_the_plain_trace(cli, tmp_path, traces):
    if shutil.which("jq") is None:
        missing("jq is not installed (the emulation above runs)")
    for name, code in (("safe", 0), ("broken", 1)):
        shown = tmp_path / f"{name}-jq.jsonl"
        with open(traces[name], "rb") as given, open(shown, "wb") as out:
            subprocess.run(["jq", "-C", "-c", "."], stdin=given, stdout=out, check=True)
        assert "\x1b[" in shown.read_text()
        want, done = cli("verify", traces[name]), cli("verify", shown)
        assert want.returncode == done.returncode == code and done.stdout == want.stdout, said(done)


def test_an_escape_inside_a_value_or_another_code_is_refused_by_name(cli, tmp_path, traces):
    events = [json.loads(line) for line in traces["safe"].read_text().splitlines()]
    text = [coloured(e) for e in events]
    inside = text[1].replace(f'{STRING}"request"{OFF}', '"req\x1b[1muest"', 1)  # in a string: no JSON
    other = "\x1b[2J" + text[1]  # a code that clears the screen: no colour
    for line, column in ((inside, inside.index("\x1b[1mu") + 1), (other, 1)):
        log = tmp_path / "bad.jsonl"
        log.write_text("\n".join([text[0], line, *text[2:]]) + "\n")
        done = cli("verify", log)
        assert done.returncode == 2 and done.stdout == "", said(done)
        assert f"{log}:2: an escape byte that is no colour code between JSON tokens" in done.stderr, said(
            done
        )
        assert f"column {column})" in done.stderr and "jq -M" in done.stderr, said(done)


def test_a_clock_free_log_keeps_its_colours_apart_from_its_values(cli, tmp_path):
    """The clock-free reader took every escape code out, inside a string too (a name changed)."""
    log = tmp_path / "free.jsonl"
    lines = [
        {"event": "request", "pid": "a", "resource": "cs"},
        {"event": "enter", "pid": "a", "resource": "cs"},
        {"event": "exit", "pid": "a", "resource": "cs"},
    ]
    log.write_text("".join(coloured(e) + "\n" for e in lines))
    done = cli("verify", log)
    assert done.returncode == 0 and "JSON Lines log: SAFE" in done.stdout, said(done)
    log.write_text(log.read_text().replace(f'{STRING}"a"{OFF}', '"\x1b[1ma"', 1))
    done = cli("verify", log)
    assert done.returncode == 2 and re.search(r":1: an escape byte that is no colour code", done.stderr), (
        said(done)
    )


# -- a read held: what was not driven is said, never "searched exhaustively" -----------------------

# Rank 1 waits for a flag in rank 0's window by re-reading it (MPI_Get, a read mutexlab holds while
# it finds what it read last time); rank 0 sets it once it has left its section, where it sleeps.
# -DGIVE_UP: after two reads that find it unset, rank 1 enters anyway — under any MPI while rank 0
# may be inside; mutexlab's held read never lets two such reads happen, so that bug is not driven.
HELD_READ = r"""
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank, *mem, flag = 0, one = 1;
#ifdef GIVE_UP
    int tries = 0;
#endif
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    *mem = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("rank 0 enters\n");
        fflush(stdout);
        usleep(1000);
        printf("rank 0 leaves\n");
        fflush(stdout);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
    } else if (rank == 1) {
        while (!flag) {
#ifdef GIVE_UP
            if (tries++ == 2) break;
#endif
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            MPI_Get(&flag, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
            MPI_Win_unlock(0, win);
        }
        printf("rank 1 enters\n");
        printf("rank 1 leaves\n");
        fflush(stdout);
    }
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
"""
CS = "(?P<enter>enters)|(?P<exit>leaves)"
NOT_DRIVEN = "not driven: a read of another rank's window (MPI_Get, an MPI_NO_OP fetch) that found what"


@pytest.fixture(scope="module")
def held(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None:
        missing("gcc is not installed: mutexlab's MPI cannot be built")
    out, cache = tmp_path_factory.mktemp("verdicts18"), shared_cache(tmp_path_factory)
    table = {"held": ("held_read.c", []), "gives-up": ("held_read.c", ["-DGIVE_UP"])}
    return Builds(table, out, cache, {"held_read.c": HELD_READ}, strict=True)


def mpi_test(cli, program: str, strategy: str, *more: str):
    return cli("test", "mutex", "--np", "2", "--entries", "1", "--strategy", strategy, "--regex", CS,
               *more, "--mpi", program)  # fmt: skip


@pytest.mark.parametrize("name", ["held", "gives-up"])
def test_systematic_with_a_read_held_is_incomplete_saying_what_was_not_driven(cli, held, name):
    """Before: ``held`` a false FINDING [deadlock] (its read came while rank 0's lock request waited
    for rank 1's lock, and was held for ever); ``gives-up``, with that fixed alone, PASS — searched
    exhaustively, on a program that enters while another rank is inside under any MPI."""
    done = mpi_test(cli, held[name], "systematic")
    assert done.returncode == 3, said(done)
    assert "INCOMPLETE — no finding in every schedule it could reach (systematic: " in done.stdout, said(done)
    assert NOT_DRIVEN in done.stdout and "searched exhaustively" not in done.stdout, said(done)
    summary = json.loads(mpi_test(cli, held[name], "systematic", "--json").stdout)
    assert summary["verdict"] == "INCOMPLETE" and summary["exhaustive"] is False, summary
    assert summary["read_held_runs"] >= 1 and "was held until the bytes changed" in summary["not_driven"]


@pytest.mark.parametrize("strategy", ["random", "pct"])
def test_a_sample_with_a_read_held_passes_saying_what_was_not_driven(cli, held, strategy):
    """Seed 10: a read held within 20 runs (random holds about one run in 300 here, pct one in 8)."""
    done = mpi_test(cli, held["held"], strategy, "--runs", "20", "--seed", "10")
    assert done.returncode == 0 and ": PASS — no finding in " in done.stdout, said(done)
    assert NOT_DRIVEN in done.stdout, said(done)
    summary = json.loads(
        mpi_test(cli, held["held"], strategy, "--runs", "20", "--seed", "10", "--json").stdout
    )
    assert summary["verdict"] == "PASS" and summary["exhaustive"] is False and summary["read_held_runs"] >= 1


def test_a_program_with_no_read_held_is_still_searched_exhaustively(cli, tmp_path, held):
    """What was exhaustive stays so: no read held, no note (MPI_Win_lock itself as the lock)."""
    done = cli("test", "mutex", "--np", "2", "--entries", "1", "--strategy", "systematic",
               "--regex", "(?P<enter>in critical)|(?P<exit>out of critical)",
               "--json", "--mpi", Builds({"w": ("o16_rma_winlock.c", [])}, tmp_path, held.cache)["w"], "1")  # fmt: skip
    summary = json.loads(done.stdout)
    assert done.returncode == 0 and summary["exhaustive"] is True and "not_driven" not in summary, said(done)


# -- a sibling imported inside a handler: its globals watched -----------------------------------------

KMUTEX = ROOT / "examples" / "solutions" / "kmutex_ricart_agrawala.py"


def lazy_solution(folder: Path, module: str, body: str) -> Path:
    """The k-mutex example, its ``_on_request`` importing ``module`` (beside it, ``body``) and
    calling its ``note`` with the request: imported at the first request, not at load."""
    folder.mkdir()
    (folder / f"{module}.py").write_text(body)
    text = KMUTEX.read_text()
    handler = "    def _on_request(self, msg: Request) -> list:\n"
    assert handler in text
    text = text.replace(
        handler,
        handler
        + f"        import {module}  # lazily: at the first request\n\n        {module}.note(msg.sender, msg.ts)\n",
    )
    solution = folder / "tallied.py"
    solution.write_text(text)
    return solution


TALLY = "SEEN: dict = {}\n\n\ndef note(pid, ts):\n    SEEN[pid] = ts\n"
READS = "LIMIT = {'ts': 10**9}\n\n\ndef note(pid, ts):\n    assert ts < LIMIT['ts']\n"


@pytest.mark.parametrize("command", ["simulate", "check"])
def test_a_global_of_a_sibling_imported_in_a_handler_is_watched(cli, tmp_path, command):
    module = f"tally_v18_{command}"
    solution = lazy_solution(tmp_path / "lazy", module, TALLY)
    done = cli(command, solution, "-N", "3")
    assert done.returncode == 1, said(done)
    where = f"the global SEEN of {tmp_path / 'lazy' / module}.py"
    assert f"{where} is a mutable global of the module, and a handler changed it" in done.stdout + done.stderr


def test_a_sibling_imported_in_a_handler_that_only_reads_its_globals_is_no_finding(cli, tmp_path):
    solution = lazy_solution(tmp_path / "reads", "limits_v18", READS)
    done = cli("simulate", solution, "-N", "3")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    done = cli("check", solution, "-N", "3")
    assert done.returncode == 0 and "verdict:      PASS" in done.stdout, said(done)


ARRAYS = "import numpy\n\nWEIGHTS = [numpy.zeros(3)]\n\n\ndef note(pid, ts):\n    return WEIGHTS[0][0]\n"


def test_a_sibling_whose_globals_no_copy_compares_is_imported_as_it_would_be(cli, tmp_path):
    # before: the watch compared a copy of [numpy.zeros(3)] with ==, and the handler's own import
    # raised "The truth value of an array ... is ambiguous": a raise blamed on the solution
    solution = lazy_solution(tmp_path / "arrays", "weights_v18", ARRAYS)
    done = cli("simulate", solution, "-N", "3")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)


@pytest.mark.parametrize("module", ["test_tally_v18", "tally_v18_test"])
def test_a_test_module_imported_in_a_handler_is_never_watched(cli, tmp_path, module):
    """A test module is a harness's, whose globals it changes between runs: not the solution's."""
    solution = lazy_solution(tmp_path / module, module, TALLY)
    done = cli("simulate", solution, "-N", "3")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)


# -- a stop named by its own error ------------------------------------------------------------------


def stopped_by(monkeypatch, exc: Exception) -> None:
    """``mutexlab verify`` made to stop as a run does midway: ``exc`` raised, with the safety
    violations its trace had shown (``audit.seen``)."""
    from dataclasses import replace

    import mutexlab.commands.verify as verify

    def run(args):
        exc.seen = ["[capacity] cs (capacity 1) held by node-1, node-2 at once"]
        raise exc

    monkeypatch.setattr(verify, "COMMAND", replace(verify.COMMAND, run=run))


def test_a_stop_after_a_violation_is_named_by_its_own_error(cli, monkeypatch, tmp_path):
    from mutexlab.waiting import WaitsRaised

    raised = "its waiting_for() raised KeyError: 'x' at my_algo.py:12, in state WANTED"
    stopped_by(monkeypatch, WaitsRaised("node-2", raised, "node-2", "WANTED"))
    done = cli("verify", tmp_path / "t.jsonl")
    assert done.returncode == 1, said(done)
    assert done.stdout.startswith(
        f"VIOLATION (exit 1), seen before the run stopped (asking node-2 what it waits for: {raised}):\n"
    ), said(done)
    assert "state of no name" not in done.stdout + done.stderr, said(done)
    assert f"mutexlab: stopped as well: asking node-2 what it waits for: {raised}" in done.stderr, said(done)
    summary = json.loads(cli("verify", tmp_path / "t.jsonl", "--json").stdout)
    assert summary["verdict"] == "violation" and summary["stopped"].endswith(raised), summary


def test_a_refusal_after_a_violation_keeps_its_words(cli, monkeypatch, tmp_path):
    from mutexlab.setups import NoName

    stopped_by(monkeypatch, NoName("node-1's handler left it in state _Gone.DONE"))
    done = cli("verify", tmp_path / "t.jsonl")
    assert done.returncode == 1, said(done)
    assert done.stdout.startswith(
        "VIOLATION (exit 1), seen before the run stopped (a handler left a state of no name: refused):\n"
    ), said(done)
    assert "mutexlab: refused as well: node-1's handler left it in state _Gone.DONE" in done.stderr


def test_an_error_without_words_is_named_by_its_type(cli, monkeypatch, tmp_path):
    from mutexlab.setups import ConfigError

    class Unsaid(ConfigError):
        pass

    stopped_by(monkeypatch, Unsaid())
    monkeypatch.setattr("mutexlab.commands.common.seen", lambda exc: [])  # no violation before it
    done = cli("verify", tmp_path / "t.jsonl")
    assert done.returncode == 2 and done.stderr.strip().endswith("mutexlab: error: Unsaid"), said(done)
