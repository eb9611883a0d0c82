"""``mutexlab test`` on node programs written elsewhere from the docs alone, in languages and
styles the other outsider tests do not cover (tests/outsiders/, ``o6_*`` and ``WaiterPhil.java``):

* ``o6_central.sh`` — a central lock in pure bash (``read -r`` and ``[[ =~ ]]``), its lines with
  quirks the docs allow: ``\\r\\n`` ends, each line in three writes (or an answer in one),
  unknown fields, unicode, 200 lines of stderr per input, exit 3 at the end of its input
  (``broken``: the coordinator forgets it holds the lock itself);
* ``o6_elves_mayor.pl`` — the hamster killers in Perl with JSON::PP, the mayor handing out each
  contract with its tools (``--no-reset``: the count of contracts done is never reset, so round 2
  is stopped early);
* ``o6_bees_queen.js`` — the mason bees in Node.js, readline's ``line`` event and a promise chain,
  bee 1 the queen (``--leaky``: a flower handed to a waiting bee is not counted);
* ``o6_kmutex_ra.rs`` — Raymond's k-Ricart–Agrawala in Rust without a JSON crate (``--cfg
  stale``: a REPLY to an older request is counted);
* ``WaiterPhil.java`` — philosophers with a waiter, a reader thread and a ``BlockingQueue``
  (``--broken``: the right fork computed as (i + 1) mod n).

Each correct one passes, each bug is found, shrunk and replayed on the program.
A toolchain that is absent is a skip, a failure under CI.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import missing
from outsider_edits import OUTSIDERS

CENTRAL = str(OUTSIDERS / "o6_central.sh")
QUIRKS = "crlf split unicode extra exit3"


def found_and_replayed(cli, tmp_path, node: str, *args: str, rule: str = "violation") -> str:
    scenario = tmp_path / "ce.json"
    ran = cli("test", *args, "--node", node, "--counterexample", scenario)
    assert ran.returncode == 1 and f"FINDING [{rule}]" in ran.stdout, ran.stdout
    replayed = cli("replay", scenario, "--node", node)
    assert replayed.returncode == 1 and "the recorded finding reproduced" in replayed.stdout, replayed.stdout
    return ran.stdout


def test_a_bash_node_with_every_allowed_quirk_passes_and_its_bug_replays(cli, tmp_path):
    ran = cli("test", "mutex", "--node", f"{CENTRAL} {QUIRKS}", "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 51 schedules" in ran.stdout, ran.stdout
    out = found_and_replayed(
        cli, tmp_path, f"{CENTRAL} broken crlf batch noisy", "mutex", "--strategy", "systematic"
    )
    assert "[capacity] cs (capacity 1) held by node-1" in out and "to 4 steps on 2 nodes" in out, out


@pytest.fixture(scope="module")
def perl() -> str:
    if shutil.which("perl") is None or subprocess.run(["perl", "-MJSON::PP", "-e", "1"]).returncode:
        missing("perl with JSON::PP (a core module) is not installed")
    return f"perl {OUTSIDERS / 'o6_elves_mayor.pl'}"


def test_a_perl_mayor_passes_and_one_that_never_resets_its_count_is_found(cli, tmp_path, perl):
    small = ("-N", "2", "-o", "contracts=2", "-o", "rounds=2")
    ran = cli("test", "elves", "--node", perl, *small, "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively" in ran.stdout, ran.stdout
    out = found_and_replayed(cli, tmp_path, f"{perl} --no-reset", "elves", *small)
    assert "[stop-before-done] mayor stopped round 2" in out, out


@pytest.fixture(scope="module")
def bees() -> str:
    if shutil.which("node") is None:
        missing("node (Node.js) is not installed: the JavaScript outsider node cannot run")
    return f"node {OUTSIDERS / 'o6_bees_queen.js'}"


def test_a_javascript_queen_passes_and_a_leaky_one_is_found(cli, tmp_path, bees):
    hive = ("-o", "reeds=1", "-o", "flowers=1", "-o", "eggs=1", "-o", "cocoons=2")
    ran = cli("test", "bees", "--node", bees, "-N", "3", *hive, "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 18 schedules" in ran.stdout, ran.stdout
    hive = ("-o", "reeds=3", "-o", "flowers=1", "-o", "eggs=2", "-o", "cocoons=2")
    out = found_and_replayed(cli, tmp_path, f"{bees} --leaky", "bees", "-N", "4", *hive)
    assert "[capacity] flower (capacity 1) held by" in out, out


def test_a_rust_k_mutex_passes_and_a_stale_reply_is_found(cli, tmp_path):
    if shutil.which("rustc") is None:
        missing("rustc is not installed: the Rust outsider node cannot be built")
    built = {}
    for name, flags in (("ok", []), ("stale", ["--cfg", "stale"])):
        built[name] = str(tmp_path / f"kmutex-{name}")
        source = str(OUTSIDERS / "o6_kmutex_ra.rs")
        subprocess.run(["rustc", "-O", *flags, "-o", built[name], source], check=True)
    ran = cli("test", "kmutex", "--node", built["ok"], "-N", "4", "-R", "2", "--runs", "40")
    assert ran.returncode == 0 and "PASS — no finding in random: 40 runs" in ran.stdout, ran.stdout
    out = found_and_replayed(cli, tmp_path, built["stale"], "kmutex", "-N", "3", "-R", "2")
    assert "[capacity] cs (capacity 2) held by" in out, out


def test_a_java_waiter_passes_and_its_wrong_right_fork_is_found(cli, tmp_path):
    if shutil.which("javac") is None or shutil.which("java") is None:
        missing("javac or java is not installed: the Java outsider node cannot be built")
    subprocess.run(["javac", "-d", str(tmp_path), str(OUTSIDERS / "WaiterPhil.java")], check=True)
    node = f"java -cp {tmp_path} WaiterPhil"
    ran = cli("test", "philosophers", "--node", node, "-N", "2", "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 5 schedules" in ran.stdout, ran.stdout
    out = found_and_replayed(cli, tmp_path, f"{node} --broken", "philosophers", "--strategy", "systematic")
    assert "[capacity] fork:3 (capacity 1) held by" in out, out
