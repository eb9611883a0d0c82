"""The MPI examples are unchanged MPI programs (docs/mpi.md#real-mpi): each examples/mpi/*.c, and
each broken twin, builds with Debian's Open MPI and MPICH compiler wrappers (``mpicc.openmpi``,
``mpicc.mpich``); the correct ones run under that MPI's own ``mpirun``, end, and print lines that
the regexes docs/mpi.md gives turn into the entries, exits, eggs and ends the problem expects.

Debian's packages (openmpi-bin libopenmpi-dev mpich libmpich-dev) are installed by .ci/run; without
them the tests skip saying which is missing (under CI that is a failure)."""

from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import regex
from conftest import missing

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "mpi"
HEADER_DIR = ROOT / "shared" / "mutexlab" / "mpi" / "include"  # for mutexlab.h only (-idirafter)
REGEX = re.compile("(?P<enter>enters)|(?P<exit>leaves)")  # docs/mpi.md's quick start
PRINTED_REGEX = re.compile((EXAMPLES / "bees_printf.regex").read_text().strip())
# hive.regex repeats group names in alternatives: the regex module's syntax, as --regex reads it.
HIVE_REGEX = regex.compile((EXAMPLES / "hive.regex").read_text().strip())
ELVES_REGEX = regex.compile((EXAMPLES / "elves.regex").read_text().strip())
PHILOSOPHERS_REGEX = regex.compile((EXAMPLES / "philosophers.regex").read_text().strip())
PACKAGES = {"openmpi": "openmpi-bin libopenmpi-dev", "mpich": "mpich libmpich-dev"}
# Open MPI refuses root without the first flag; the second lets 5 ranks share 2 cores.
MPIRUN_FLAGS = {"openmpi": ["--allow-run-as-root", "--oversubscribe"], "mpich": []}
VARIANTS = {
    "ricart_agrawala": ["", "-DBROKEN_NO_PRIORITY", "-DBROKEN_FORGET_DEFERRED"],
    "bees": ["", "-DBROKEN_REED", "-DBROKEN_FLOWERS"],
    "bees_printf": ["", "-DBROKEN_REED", "-DBROKEN_FLOWER", "-DBROKEN_STALE_COCOONS"],
    "hive": ["", "-DBROKEN_COUNT"],
    "elves": ["", "-DBROKEN_TIES", "-DBROKEN_MAYOR_STOP"],
    "philosophers": ["", "-DBROKEN_NO_PRIORITY"],
}
SUFFIX = {"hive": ".cpp", "elves": ".cpp"}
SECONDS = 120


def tools(impl: str) -> tuple[str, str]:
    cc, run = shutil.which(f"mpicc.{impl}"), shutil.which(f"mpirun.{impl}")
    if cc is None or run is None:
        missing(f"Debian's {impl} is not installed (apt-get install {PACKAGES[impl]})")
    return cc, run


def build(impl: str, source: Path, flag: str, out: Path) -> str:
    cc, _ = tools(impl)
    if source.suffix == ".cpp":
        cc = cc.replace("mpicc.", "mpicxx.")
    binary = out / f"{source.stem}{flag.replace('-D', '-')}-{impl}"
    argv = [cc, "-O2", "-Wall", "-Werror", "-idirafter", str(HEADER_DIR), *([flag] if flag else [])]
    made = subprocess.run(
        [*argv, "-o", str(binary), str(source)], capture_output=True, text=True, timeout=SECONDS
    )
    assert made.returncode == 0, f"{' '.join(argv)} {source.name}:\n{made.stderr}"
    return str(binary)


def mpirun(impl: str, np: int, program: str, *args: str) -> list[str]:
    _, run = tools(impl)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI", "HYDRA"))}
    done = subprocess.run(
        [run, *MPIRUN_FLAGS[impl], "-np", str(np), program, *args],
        capture_output=True,
        text=True,
        timeout=SECONDS,
        env=env,
    )
    assert done.returncode == 0, f"{impl} mpirun exit {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout.splitlines()


def read(lines: list[str], regex, resource: str) -> collections.Counter:
    """What the lines mean, by mutexlab's own reading of a printed line (rank.py)."""
    from mutexlab.mpi.rank import meaning

    counts: collections.Counter = collections.Counter()
    for line in lines:
        found = regex.search(line)
        if found is None:
            continue
        meant = meaning(found.groupdict(), resource)
        assert not isinstance(meant, str), f"{line!r}: {meant}"
        for item in meant:
            what = item.get("resource") or item.get("state") or item.get("event")
            counts[(item["type"], what.split(":")[0])] += 1
    return counts


@pytest.mark.parametrize("impl", sorted(PACKAGES))
@pytest.mark.parametrize("example", sorted(VARIANTS))
def test_every_example_and_its_broken_twins_build_with_debians_mpicc(impl, example, tmp_path):
    for flag in VARIANTS[example]:
        assert Path(build(impl, EXAMPLES / f"{example}{SUFFIX.get(example, '.c')}", flag, tmp_path)).is_file()


@pytest.mark.parametrize("impl", sorted(PACKAGES))
def test_ricart_agrawala_runs_under_mpirun_and_its_lines_read_as_the_docs_say(impl, tmp_path):
    program = build(impl, EXAMPLES / "ricart_agrawala.c", "", tmp_path)
    lines = mpirun(impl, 3, program, "2")  # each rank enters twice
    counts = read(lines, REGEX, "cs")
    assert counts == {("enter", "cs"): 6, ("exit", "cs"): 6}, lines
    for rank in range(3):
        assert sum(f"rank {rank} enters" in line for line in lines) == 2, lines


@pytest.mark.parametrize("impl", sorted(PACKAGES))
def test_printed_bees_run_under_mpirun_and_their_regex_reads_the_colony(impl, tmp_path):
    program = build(impl, EXAMPLES / "bees_printf.c", "", tmp_path)
    lines = mpirun(impl, 5, program, "2", "1", "1", "2")  # docs/mpi.md's colony
    counts = read(lines, PRINTED_REGEX, "")
    # 2 reeds of 2 cocoons, 1 egg a bee: four bees lay and die, the fifth finds no room.
    assert counts == {
        ("enter", "reed"): 4,
        ("exit", "reed"): 4,
        ("enter", "flower"): 4,
        ("exit", "flower"): 4,
        ("event", "egg"): 4,
        ("event", "death"): 4,
        ("state", "DEAD"): 4,
        ("state", "RETIRED"): 1,
    }, lines


@pytest.mark.parametrize("impl", sorted(PACKAGES))
def test_the_bees_with_mutexlab_h_run_under_mpirun_and_end(impl, tmp_path):
    # mutexlab.h's calls do nothing under another MPI; the bees end by their DONE messages.
    program = build(impl, EXAMPLES / "bees.c", "", tmp_path)
    lines = mpirun(impl, 5, program)  # the problem's defaults: 3 reeds, 3 flowers, 5 eggs, 15 cocoons
    assert sum(" lays egg " in line for line in lines) == 25, lines
    assert sorted(line for line in lines if line.endswith(" dies")) == [f"bee {b} dies" for b in range(1, 6)]


@pytest.mark.parametrize("impl", sorted(PACKAGES))
def test_the_cxx_hive_runs_under_mpirun_and_its_regex_reads_the_colony(impl, tmp_path):
    program = build(impl, EXAMPLES / "hive.cpp", "", tmp_path)
    lines = mpirun(impl, 5, program)  # the problem's defaults: every bee lays 5 eggs
    counts = read(lines, HIVE_REGEX, "")
    assert counts == {
        ("enter", "reed"): 5,
        ("exit", "reed"): 5,
        ("enter", "flower"): 25,
        ("exit", "flower"): 25,
        ("event", "egg"): 25,
        ("event", "death"): 5,
        ("state", "DEAD"): 5,
    }, lines
    assert "colony laid 25 eggs" in "\n".join(lines)  # MPI_Reduce's sum, by the real MPI


@pytest.mark.parametrize("impl", sorted(PACKAGES))
def test_the_cxx_elves_run_under_mpirun_and_their_regex_reads_the_town(impl, tmp_path):
    program = build(impl, EXAMPLES / "elves.cpp", "", tmp_path)
    lines = mpirun(impl, 4, program)  # the problem's defaults: 2 rounds of 6 contracts, 3 elves
    counts = read(lines, ELVES_REGEX, "")
    counts.pop(("state", "ELF_WAIT_FOR_RELEASE"), None)  # as the real MPI's timing has it
    assert counts == {
        ("event", "round"): 2,
        ("enter", "contract"): 12,
        ("enter", "pins"): 12,
        ("enter", "poison"): 12,
        ("event", "contract_done"): 12,
        ("exit", "poison"): 12,
        ("exit", "pins"): 12,
        ("exit", "contract"): 12,
        ("event", "stop"): 2,
        ("state", "ELF_DONE"): 3,
        ("state", "MAYOR_DONE"): 1,
    }, lines


@pytest.mark.parametrize("impl", sorted(PACKAGES))
def test_the_philosophers_run_under_mpirun_and_their_regex_reads_the_table(impl, tmp_path):
    program = build(impl, EXAMPLES / "philosophers.c", "", tmp_path)
    lines = mpirun(impl, 3, program, "2")  # three philosophers, two meals each
    counts = read(lines, PHILOSOPHERS_REGEX, "")
    assert counts == {
        ("enter", "fork"): 12,
        ("exit", "fork"): 12,
        ("enter", "meal"): 6,
        ("exit", "meal"): 6,
        ("state", "THINKING"): 6,
    }, lines
