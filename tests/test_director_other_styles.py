"""``mutexlab test`` on example nodes written the way other people write them: C++ with a reader
and a worker thread, Lamport in Java (a slow-starting JVM), a bee whose life runs in a thread of
its own, Ricart–Agrawala in awk and in Rust (no crates: the lines read by string search); each
correct one passes, and its broken twin is caught and replays.

The examples are built with g++, javac and rustc into a temporary directory (a skip without them, a
failure under CI). The mistakes such programs make on the way: test_director_node_lines.py.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import missing

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "nodes"
CPP = {
    "ra-threads": ("ricart_agrawala_threads.cpp", []),
    "ra-threads-tie": ("ricart_agrawala_threads.cpp", ["-DBROKEN_TIE"]),
    "bee-threads": ("bee_threads.cpp", []),
    "bee-threads-handoff": ("bee_threads.cpp", ["-DBROKEN_HANDOFF"]),
}
STRATEGIES = ("random", "pct", "systematic")
# The JVM compiling the source file at each of three starts: tens of seconds on a busy machine.
QUICK_LEAVES_OUT = {"test_the_java_source_launcher_runs_the_file_as_it_is"}
COLONY = ["--nodes", "4", "-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=1", "-o", "cocoons=2"]


@pytest.fixture(scope="module")
def cpp(tmp_path_factory) -> dict[str, str]:
    if shutil.which("g++") is None:
        missing("g++ is not installed: the C++ example nodes cannot be built")
    out = tmp_path_factory.mktemp("cpp")
    built = {}
    for name, (source, flags) in CPP.items():
        target = out / name
        compile_ = ["g++", "-O2", "-Wall", "-Werror", "-pthread", *flags, "-o", str(target)]
        subprocess.run([*compile_, str(EXAMPLES / source)], check=True)
        built[name] = str(target)
    return built


@pytest.fixture(scope="module")
def java(tmp_path_factory) -> str:
    """The class path of the compiled Java example."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        missing("javac or java is not installed: the Java example node cannot be built")
    out = tmp_path_factory.mktemp("java")
    subprocess.run(
        ["javac", "-Xlint:all", "-Werror", "-d", str(out), str(EXAMPLES / "LamportNode.java")], check=True
    )
    return str(out)


# -- the C++ Ricart–Agrawala with a reader and a worker thread -----------------------------------
def test_the_threaded_cpp_ricart_agrawala_passes(cli, cpp):
    ran = cli("test", "mutex", "--node", cpp["ra-threads"], "--runs", "60", "--requests", "2")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    ran = cli("test", "mutex", "--node", cpp["ra-threads"], "--nodes", "2", "--strategy", "systematic")
    assert ran.returncode == 0 and "searched exhaustively: 9 schedules" in ran.stdout, ran.stdout


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_threaded_cpp_without_its_tie_break_is_caught_and_replays(cli, cpp, tmp_path, strategy):
    scenario = tmp_path / "tie.json"
    node = cpp["ra-threads-tie"]
    ran = cli("test", "mutex", "--node", node, "--strategy", strategy, "--counterexample", scenario)
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout + ran.stderr
    assert "cs (capacity 1) held by" in ran.stdout
    assert cli("replay", scenario, "--node", node).returncode == 1
    fixed = cli("replay", scenario, "--node", cpp["ra-threads"])  # the fix: the finding is gone
    assert fixed.returncode in (0, 3) and "did NOT reproduce" in fixed.stdout, fixed.stdout


# -- Lamport in Java ------------------------------------------------------------------------------
def test_lamport_in_java_passes(cli, java):
    node = f"java -cp {java} LamportNode"
    ran = cli("test", "mutex", "--node", node, "--runs", "40", "--requests", "2")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    ran = cli("test", "mutex", "--node", node, "--nodes", "2", "--strategy", "systematic")
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_lamport_in_java_whose_queue_drops_a_tie_is_caught_and_replays(cli, java, tmp_path, strategy):
    scenario = tmp_path / "lamport.json"
    node = f"java -cp {java} LamportNode --broken"
    ran = cli("test", "mutex", "--node", node, "--strategy", strategy, "--counterexample", scenario)
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout + ran.stderr
    assert cli("replay", scenario, "--node", node).returncode == 1


def test_the_java_source_launcher_runs_the_file_as_it_is(cli, java):
    """``java File.java`` compiles at every start: seconds on a busy machine, in the first
    answer's --start-timeout, not the 5 s of --timeout."""
    node = f"java {EXAMPLES / 'LamportNode.java'}"
    ran = cli("test", "mutex", "--node", node, "--runs", "5")
    assert ran.returncode == 0, ran.stdout + ran.stderr


# -- a bee in C++, its life in a thread ------------------------------------------------------------
def test_a_threaded_cpp_bee_colony_is_safe(cli, cpp, tmp_path):
    trace = tmp_path / "bees.jsonl"
    ran = cli("test", "bees", "--node", cpp["bee-threads"], *COLONY, "--runs", "40", "--trace", trace)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    verified = cli("verify", trace)
    assert verified.returncode == 0 and verified.stdout.startswith("bees: SAFE"), verified.stdout
    more = ["--nodes", "5", "-o", "reeds=2", "-o", "flowers=2", "-o", "eggs=2", "-o", "cocoons=4"]
    assert cli("test", "bees", "--node", cpp["bee-threads"], *more, "--runs", "20").returncode == 0


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_bee_handing_its_reed_on_before_leaving_it_is_caught(cli, cpp, tmp_path, strategy):
    scenario = tmp_path / "bee.json"
    node = cpp["bee-threads-handoff"]
    ran = cli("test", "bees", "--node", node, *COLONY, "--strategy", strategy, "--counterexample", scenario)
    assert ran.returncode == 1 and "reed:1 (capacity 1) held by" in ran.stdout, ran.stdout + ran.stderr
    assert cli("replay", scenario, "--node", node).returncode == 1


# -- Ricart–Agrawala in awk --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def awk() -> str:
    """An awk that reads a pipe line by line: gawk, or mawk told to (``-W interactive``)."""
    if shutil.which("gawk"):
        return "gawk"
    if shutil.which("mawk"):
        return "mawk -W interactive"
    return missing("neither gawk nor mawk is installed")


def test_ricart_agrawala_in_awk_passes_and_its_broken_twin_is_caught(cli, awk, tmp_path):
    program = f"{awk} -f {EXAMPLES / 'ricart_agrawala.awk'}"
    assert cli("test", "mutex", "--node", program, "--runs", "40", "--requests", "2").returncode == 0
    ran = cli("test", "mutex", "--node", program, "--nodes", "2", "--strategy", "systematic")
    assert ran.returncode == 0 and "searched exhaustively: 9 schedules" in ran.stdout, ran.stdout
    scenario = tmp_path / "awk.json"
    broken = f"{awk} -v broken=1 -f {EXAMPLES / 'ricart_agrawala.awk'}"
    ran = cli("test", "mutex", "--node", broken, "--strategy", "pct", "--counterexample", scenario)
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout
    assert cli("replay", scenario, "--node", broken).returncode == 1


# -- Ricart–Agrawala in Rust, the standard library alone -----------------------------------------
@pytest.fixture(scope="module")
def rust(tmp_path_factory) -> dict[str, str]:
    if shutil.which("rustc") is None:
        missing("rustc is not installed: the Rust example node cannot be built")
    out = tmp_path_factory.mktemp("rust")
    built = {}
    for name, flags in (("ra-rs", []), ("ra-rs-broken", ["--cfg", "broken"])):
        target = out / name
        compile_ = ["rustc", "-O", "-D", "warnings", *flags, "-o", str(target)]
        subprocess.run([*compile_, str(EXAMPLES / "ricart_agrawala.rs")], check=True)
        built[name] = str(target)
    return built


def test_ricart_agrawala_in_rust_passes(cli, rust):
    assert cli("test", "mutex", "--node", rust["ra-rs"], "--runs", "60", "--requests", "2").returncode == 0
    ran = cli("test", "mutex", "--node", rust["ra-rs"], "--nodes", "2", "--strategy", "systematic")
    assert ran.returncode == 0 and "searched exhaustively: 9 schedules" in ran.stdout, ran.stdout


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_ricart_agrawala_in_rust_replying_in_its_section_is_caught_and_replays(cli, rust, tmp_path, strategy):
    scenario = tmp_path / "rs.json"
    ran = cli(
        "test", "mutex", "--node", rust["ra-rs-broken"], "--strategy", strategy, "--counterexample", scenario
    )
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout
    replayed = cli("replay", scenario, "--node", rust["ra-rs-broken"])
    assert replayed.returncode == 1 and "the recorded finding reproduced" in replayed.stdout, replayed.stdout
