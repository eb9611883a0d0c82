"""Solutions written in other people's styles (tests/outsiders/o16_*.py), each with a planted bug
caught with its witness, and the defects session 16 found in a solution split over two files (a
module beside it, imported by name): ``compare`` gave the second of two such files the first's
module of the same name (its messages, its constants), and a handler changing a global of such a
module — every process's at once — went unseen: ``check`` said PASS; and a TABLE a base class's
``__init_subclass__`` built after ``super().__init_subclass__()`` had every input refused. Small
bounds: seconds each."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from outsider_edits import OUTSIDERS, Explorer, edited, said

KMUTEX = OUTSIDERS / "o16_kmutex_split.py"
PARTS = OUTSIDERS / "o16_kmutex_split_parts.py"
PHIL = OUTSIDERS / "o16_phil_polski.py"
BEES = OUTSIDERS / "o16_bees_frozen_memory.py"
ELVES = OUTSIDERS / "o16_elves_registry.py"
MUTEX = OUTSIDERS / "o16_mutex_dataclass.py"
ELVES_SMALL = ("--elves", "2", "--pins", "1", "--poison", "4", "--hamsters", "1-2")
SHARED = str(Path(__file__).resolve().parents[1] / "shared")


def _split(where: Path, *edits: tuple[str, str], name: str = "split") -> Path:
    """The two-file kmutex copied to ``where`` (its parts beside it), with ``edits`` made."""
    where.mkdir(parents=True, exist_ok=True)
    shutil.copy(PARTS, where / PARTS.name)
    return edited(where, KMUTEX.name, "o16-kmutex-split", "o16", name, *edits)


# -- outsiders of session 16 -----------------------------------------------------------------------
def test_a_kmutex_split_over_two_files_is_safe_from_elsewhere(cli, tmp_path):
    path = _split(tmp_path / "mine")
    done = cli("simulate", "kmutex", "-a", path, "-N", "5", "-k", "2", "--seed", "1", cwd=tmp_path)
    assert done.returncode == 0 and "entries:            15 of 15 requests" in done.stdout, said(done)
    assert "messages:           ASK 60, OK 60 (total 120)" in done.stdout, said(done)
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "2", "--requests", "1", cwd=tmp_path)
    assert done.returncode == 0 and "verdict:      PASS" in done.stdout, said(done)


def test_one_answer_short_is_caught_in_two_files_and_replayed(cli, tmp_path):
    short = _split(tmp_path / "mine", ("ONE_SHORT = False", "ONE_SHORT = True"), name="short")
    ce = tmp_path / "short.json"
    done = cli(
        "check", "kmutex", "-a", short, "-N", "3", "-k", "2", "--requests", "1", "--counterexample", ce
    )
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: cs (capacity 2) held by node-1×1, node-2×1, node-3×1" in done.stdout
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", short)
    assert done.returncode == 1 and "[capacity] cs (capacity 2) held by node-" in done.stdout, said(done)


def test_polish_philosophers_with_a_flag_of_forks_pass(cli):
    done = cli("simulate", "philosophers", "-a", PHIL, "--seed", "1")
    assert done.returncode == 0 and "meals eaten: 10 of 10" in done.stdout, said(done)
    assert "messages:    DAJE 10, ODDAJE 10, PROSZE 10 (total 30)" in done.stdout, said(done)
    done = cli("check", "philosophers", "-a", PHIL, "-N", "3", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)


def test_a_flag_tested_for_any_fork_is_caught_and_replayed(cli, tmp_path):
    any_fork = edited(tmp_path, PHIL.name, "o16-phil-polski", "o16", "kazdy",
                      ("KAZDY_WYSTARCZY = False", "KAZDY_WYSTARCZY = True"))  # fmt: skip
    ce = tmp_path / "kazdy.json"
    done = cli("check", "philosophers", "-a", any_fork, "-N", "3", "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: fork:3 (capacity 1) held by philosopher-2×1, philosopher-3×1" in done.stdout
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", any_fork)
    assert done.returncode == 1 and "[capacity] fork:3 (capacity 1) held by philosopher-2" in done.stdout
    done = cli("simulate", "philosophers", "-a", any_fork, "--seed", "1")
    assert done.returncode == 1 and "[capacity] fork:4 (capacity 1) held by philosopher-3" in done.stdout


def test_bees_with_a_frozen_memory_and_one_match_pass(cli):
    done = cli("simulate", "bees", "-a", BEES, "-P", "5", "-T", "2", "--seed", "1")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    assert "eggs per reed: reed:1 15, reed:2 10 (total 25, expected 25)" in done.stdout, said(done)
    done = cli("check", "bees", "-a", BEES, "-P", "3", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1",
               "--cross-check")  # fmt: skip
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)


def test_a_replaced_memory_not_kept_deadlocks_and_is_replayed(cli, tmp_path):
    drop = edited(tmp_path, BEES.name, "o16-bees-frozen-memory", "o16", "drop",
                  ("DROP_REPLACE = False", "DROP_REPLACE = True"))  # fmt: skip
    ce = tmp_path / "drop.json"
    small = ("-P", "2", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1")
    done = cli("check", "bees", "-a", drop, *small, "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "VIOLATION — deadlock: nothing can move; waiting: bee-2 (holding reed:2) ACKflower from bee-1" in (
        done.stdout
    ), said(done)
    done = cli("replay", ce, "-a", drop)
    assert done.returncode == 1 and "[left-waiting] bee-2 was left waiting in WAIT_FLOWER" in done.stdout
    done = cli("simulate", "bees", "-a", drop, "-P", "3", "-T", "2", "-K", "1", "--seed", "1")
    assert done.returncode == 3 and "deadlock: wait-for cycle bee-1 → bee-2 → bee-1" in done.stdout, said(
        done
    )


def test_elves_with_a_table_gathered_in_init_subclass_pass(cli):
    """Before: `FAILED: elf-1 cannot take ROUND in state WAITING`, exit 1 — the TABLE its base's
    ``__init_subclass__`` built after ``super().__init_subclass__()`` was never compiled."""
    done = cli("simulate", "elves", "-a", ELVES, "--seed", "3")
    assert done.returncode == 0 and "contracts done: 12 of 12" in done.stdout, said(done)
    done = cli("check", "elves", "-a", ELVES, *ELVES_SMALL, "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)


def test_a_mayor_checking_pins_alone_is_caught_and_replayed(cli, tmp_path):
    pins = edited(tmp_path, ELVES.name, "o16-elves-registry", "o16", "pinsonly",
                  ("PINS_ONLY = False", "PINS_ONLY = True"))  # fmt: skip
    ce = tmp_path / "pins.json"
    wide = ("--elves", "2", "--pins", "2", "--poison", "2", "--hamsters", "1-2")
    done = cli("check", "elves", "-a", pins, *wide, "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: poison (capacity 2) held by elf-1×2, elf-2×2" in done.stdout, said(done)
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", pins)
    assert done.returncode == 1 and "[capacity] poison (capacity 2) held by elf-1" in done.stdout, said(done)
    done = cli("simulate", "elves", "-a", pins, "--seed", "3")
    assert done.returncode == 1 and "[capacity] poison (capacity 10) held by elf-3" in done.stdout, said(done)


def test_a_journal_kept_in_the_base_class_body_is_a_finding(cli, tmp_path):
    journal = edited(tmp_path, ELVES.name, "o16-elves-registry", "o16", "journal",
                     ("CLASS_JOURNAL = False", "CLASS_JOURNAL = True"))  # fmt: skip
    done = cli("check", "elves", "-a", journal, *ELVES_SMALL)
    assert done.returncode == 1, said(done)
    assert "Townsfolk.journal is an attribute of the class, and a handler changed it" in done.stdout, said(
        done
    )


def test_a_table_set_after_the_class_was_made_is_compiled_when_the_setup_is_built(tmp_path):
    """The unit of the fix: a Protocol whose TABLE is set after the class was made (fresh classes:
    the file under a name of its own) dispatches by it once its setup is built (``missing_parts``)."""
    from mutexlab.protocols.registry import build_setup, resolve

    fresh = edited(tmp_path, ELVES.name, "o16-elves-registry", "o16", "fresh")
    module = sys.modules[resolve(str(fresh)).make_setup.__module__]
    elf = module.Elf
    assert ("WAITING", "ROUND") not in elf._transitions  # noqa: SLF001 - as the class was made: nothing
    setup = build_setup(str(fresh), 2, {"contracts": 2, "rounds": 1}, 0)
    assert type(setup.protocols[1]) is module.Elf
    assert ("WAITING", "ROUND") in elf._transitions  # noqa: SLF001 - the compiled dispatch itself
    assert elf._compiled_from == elf.TABLE.shape()  # noqa: SLF001
    assert setup.protocols[1].on_message(module.Round(sender=0, ts=1, round=1))  # a WANT, not a refusal


def test_ricart_agrawala_as_a_dataclass_passes_and_a_tie_by_stamp_is_caught(cli, tmp_path):
    done = cli("simulate", "mutex", "-a", MUTEX, "-N", "3", "--seed", "1")
    assert done.returncode == 0 and "entries:            9 of 9 requests" in done.stdout, said(done)
    done = cli("check", "mutex", "-a", MUTEX, "-N", "3", "--requests", "1", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    tie = edited(
        tmp_path,
        MUTEX.name,
        "o16-mutex-dataclass",
        "o16",
        "tie",
        ("TIE_BY_STAMP = False", "TIE_BY_STAMP = True"),
    )
    ce = tmp_path / "tie.json"
    done = cli("check", "mutex", "-a", tie, "-N", "2", "--requests", "1", "--counterexample", ce)
    assert (
        done.returncode == 1
        and "VIOLATION — capacity: cs (capacity 1) held by node-1×1, node-2×1" in done.stdout
    )
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", tie)
    assert done.returncode == 1 and "[capacity] cs (capacity 1) held by node-" in done.stdout, said(done)


def test_compare_takes_each_file_beside_another_solution_of_its_problem(cli):
    done = cli(
        "compare", "--nodes", "3", "--algorithms", f"{OUTSIDERS / 'o15_phil_dispatch_forks.py'},{PHIL}"
    )
    assert done.returncode == 0 and done.stdout.count("    ok") == 2, said(done)
    done = cli("compare", "--nodes", "3", "--algorithms", f"{BEES},{OUTSIDERS / 'o15_bees_reed_heap.py'}",
               "-o", "flowers=1", "-o", "reeds=2")  # fmt: skip
    assert done.returncode == 0 and done.stdout.count("    ok") == 2, said(done)


@pytest.mark.parametrize(
    ("problem", "name", "flags"),
    [
        ("kmutex", "split", ("-N", "3", "-k", "2", "--requests", "1")),
        ("philosophers", PHIL.name, ("-N", "3", "--meals", "1")),
        ("bees", BEES.name, ("-P", "2", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1")),
        ("elves", ELVES.name, ELVES_SMALL),
        ("mutex", MUTEX.name, ("-N", "3", "--requests", "1")),
    ],
    ids=["kmutex-two-files", "philosophers", "bees", "elves", "mutex"],
)
def test_explore_serves_each_and_its_path_replays(cli, tmp_path, problem, name, flags):
    if name == "split":
        path = _split(tmp_path / "mine")
    else:
        path = tmp_path / "mine" / name
        path.parent.mkdir()
        shutil.copy(OUTSIDERS / name, path)
    explorer = Explorer(tmp_path, problem, "-a", str(path), *flags)
    try:
        assert explorer.banner.startswith("mutexlab explore: o16-"), explorer.banner
        findings = explorer.call("POST", "/api/run", {"seed": 1})["findings"]
        assert findings["status"] == "end" and not findings.get("violations"), findings
        scenario = explorer.call("GET", "/api/scenario")
    finally:
        assert explorer.stop() == 0
    (tmp_path / "path.json").write_text(json.dumps(scenario), encoding="utf-8")
    done = cli("replay", "path.json", "-a", path, cwd=tmp_path)
    assert done.returncode == 0 and ": SAFE" in done.stdout, said(done)


# -- a solution's modules beside it ------------------------------------------------------------------
def _twin(where: Path, who: str, short: bool) -> Path:
    """A solution in directory ``who`` importing its messages and its name from ``common.py``
    beside it: two such directories hold two ``common`` modules, each its own."""
    common = PARTS.read_text().replace("class MyBaseNode", f'WHO = "{who}"\n\n\nclass MyBaseNode')
    (where / who).mkdir(parents=True)
    (where / who / "common.py").write_text(common)
    edits = [("from o16_kmutex_split_parts import Ask, MyBaseNode, Ok", "from common import WHO, Ask, MyBaseNode, Ok"),
             ('NAME = "o16-split"', 'NAME = f"twin-{WHO}"')]  # fmt: skip
    if short:
        edits.append(("ONE_SHORT = False", "ONE_SHORT = True"))
    return edited(where / who, KMUTEX.name, "o16-kmutex-split", "o16", "split", *edits)


def test_compare_gives_each_file_its_own_module_beside_it(cli, tmp_path):
    """Before: the second file's ``import common`` found the first's (its directory came first on
    the path, and the module was loaded already): `b/split.py declares the algorithm 'twin-a', as
    a/split.py does: rename one`, exit 2 — or, with another name, the first's messages and code."""
    a, b = _twin(tmp_path, "a", short=False), _twin(tmp_path, "b", short=True)
    done = cli("compare", "--nodes", "4", "--algorithms", f"{a},{b}", "-o", "k=2", cwd=tmp_path)
    assert done.returncode == 1, said(done)  # b is one answer short: UNSAFE, a is not
    rows = {
        line.split()[0]: line for line in done.stdout.splitlines() if line.startswith(("twin-a ", "twin-b "))
    }
    assert set(rows) == {"twin-a", "twin-b"}, said(done)
    assert rows["twin-a"].rstrip().endswith(" ok") and rows["twin-b"].rstrip().endswith("UNSAFE"), said(done)
    done = cli("compare", "--nodes", "4", "--algorithms", f"{b},{a}", "-o", "k=2", cwd=tmp_path)
    rows = {
        line.split()[0]: line for line in done.stdout.splitlines() if line.startswith(("twin-a ", "twin-b "))
    }
    assert set(rows) == {"twin-a", "twin-b"} and rows["twin-a"].rstrip().endswith(" ok"), said(done)


def test_a_module_beside_the_file_comes_before_an_installed_one_of_its_name(cli, tmp_path):
    """As in a script: ``parts.py`` beside the file, not a module of that name found on the path
    (before, the file's directory was appended to the path: the other one won)."""
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "o16_kmutex_split_parts.py").write_text('raise ImportError("the wrong one")\n')
    path = _split(tmp_path / "mine")
    sys.path.insert(0, str(tmp_path / "elsewhere"))
    try:
        done = cli("simulate", "kmutex", "-a", path, "-N", "3", "-k", "2", "--requests", "1", cwd=tmp_path)
    finally:
        sys.path.remove(str(tmp_path / "elsewhere"))
    assert done.returncode == 0 and "entries:            3 of 3 requests" in done.stdout, said(done)


STATS = "SEEN = []\n\n\ndef note(who):\n    SEEN.append(who)\n"


@pytest.mark.parametrize(
    ("imported", "call"),
    [("import o16_stats", "o16_stats.note(msg.sender)"), ("from o16_stats import SEEN", "SEEN.append(msg.sender)"),
     ("import o16_stats", "o16_stats.SEEN.append(msg.sender)"), ("from o16_stats import note", "note(msg.sender)")],
    ids=["module-function", "imported-list", "module-attribute", "imported-function"],
)  # fmt: skip
def test_a_global_of_a_module_beside_the_file_that_a_handler_changes_is_a_finding(
    cli, tmp_path, imported, call
):
    """Before: PASS, every world checked — though every process appended to one list (over
    RabbitMQ each its own). Now the finding a global of the file itself gets, naming the module."""
    edits = (("import bisect\n", f"import bisect\n\n{imported}\n"),
             ("        self.clock.receive(msg.ts)\n        if self.state == HELD",
              f"        self.clock.receive(msg.ts)\n        {call}\n        if self.state == HELD"))  # fmt: skip
    path = _split(tmp_path / "mine", *edits, name="stats")
    (tmp_path / "mine" / "o16_stats.py").write_text(STATS)
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "2", "--requests", "1", cwd=tmp_path)
    assert done.returncode == 1, said(done)
    assert "the global SEEN of " in done.stdout and ".py is a mutable global of the module" in done.stdout
    if imported.startswith("import"):  # (SEEN imported into the file is the file's global: caught before)
        assert "o16_stats.py is a mutable global of the module" in done.stdout, said(done)


def test_a_module_beside_the_file_that_keeps_nothing_is_not_a_finding(tmp_path):
    """The control: a module beside it whose globals no handler changes, and installed or
    mutexlab's own modules, are none of the solution's (``beside`` walks only the file's folder)."""
    from mutexlab.beside import beside, own_module
    from mutexlab.protocols.registry import resolve

    path = _split(tmp_path / "mine")
    module = sys.modules[type(resolve(str(path)).make_setup(3, {"k": 2}, 0).protocols[1]).__module__]
    assert [m.__name__ for m in beside(module)] == ["o16_kmutex_split_parts"]
    assert not own_module(pytest, str(Path(pytest.__file__).parent))  # installed: never the user's


def test_the_standard_library_is_never_a_module_beside_the_file():
    """A file whose folder holds the interpreter (a solution in /root, Python in /root/.pyenv):
    before, ``re`` it imported counted as the user's own, and its cache (``re._cache``), which a
    handler compiling a pattern fills, would have been called state every process shares."""
    import re

    from mutexlab.beside import own_module

    above = str(Path(re.__file__).resolve().parents[2])  # …/lib, which holds python3.x/re/
    assert not own_module(re, above) and not own_module(re, "/")
    assert not own_module(json, above)


# -- over RabbitMQ -------------------------------------------------------------------------------------------
@pytest.mark.broker
@pytest.mark.slow
@pytest.mark.parametrize(
    ("problem", "name", "flags", "spawn"),
    [
        ("kmutex", "split", ("-N", "4", "-k", "2", "--requests", "2"), "fork"),
        ("kmutex", "split", ("-N", "3", "-k", "2", "--requests", "1"), "exec"),
        ("philosophers", PHIL.name, ("-N", "3", "--meals", "1"), "fork"),
        ("bees", BEES.name, ("-P", "3", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1"), "fork"),
        ("elves", ELVES.name, ("--elves", "2", "--contracts", "2", "--rounds", "1"), "exec"),
        ("mutex", MUTEX.name, ("-N", "3", "--requests", "2"), "fork"),
    ],
    ids=["kmutex-two-files", "kmutex-two-files-exec", "philosophers", "bees", "elves-exec", "mutex"],
)
def test_each_runs_safe_over_rabbitmq(cli, tmp_path, amqp_url, monkeypatch, problem, name, flags, spawn):
    if spawn == "exec":  # fresh interpreters, each loading the file and the module beside it anew
        monkeypatch.setenv("MUTEXLAB_SPAWN", "exec")
        monkeypatch.setenv("PYTHONPATH", SHARED)
    path = _split(tmp_path / "mine") if name == "split" else OUTSIDERS / name
    done = cli(
        "run", problem, "-a", path, *flags, "--amqp-url", amqp_url, "--dwell", "0", "--json", cwd=tmp_path
    )
    summary = json.loads(done.stdout)
    assert done.returncode == 0 and summary["safe"] and summary["complete"], said(done)
    assert summary["algorithm"].startswith("o16-"), summary
