"""Every mutant in tests/mutants/ is caught by ``mutexlab check`` in the configuration its note
gives, and its counterexample replays.

Each mutant is a solution file written against the public file API (docs/your-algorithm.md,
docs/problems-and-solutions.md, docs/your-bees.md) with one deliberate bug. Its docstring is
the single source of how it is caught::

    Caught by: mutexlab check FILE --nodes 2
    Expect: capacity — cs (capacity 1) held by

``Caught by`` gives the flags after the file; ``Expect`` the finding's kind (capacity,
invariant, deadlock, liveness, error) and a piece of its message; an optional ``Refused:`` line
names a reduction the file declares that ``check`` must refuse (its sampling shows it unsound
for the mutant's code). The test runs ``check`` on
the file by its absolute path from a directory outside the checkout, asks for the
counterexample, and then ``replay``s it with ``--algorithm FILE``: exit 1 both times.

A mutant imports the correct file it breaks and overrides only the broken piece: an example
(examples/solutions/, examples/protocols/) or, for the mutants of one algorithm no example
writes on the kit, a correct base beside them (``_*.py``: no mutant; ``check`` must find it
safe). A mutant whose algorithm is written on the kit nowhere else stands alone.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "tests" / "mutants"
FILES = sorted(p for p in MUTANTS.glob("*.py") if not p.name.startswith("_"))
BASES = sorted(MUTANTS.glob("_*.py"))  # correct files the mutants import, where no example is
CAUGHT = re.compile(r"^Caught by: mutexlab check FILE (?P<flags>.+)$", re.M)
EXPECT = re.compile(r"^Expect: (?P<kind>[a-z]+)(?: — (?P<message>.+))?$", re.M)
REFUSED = re.compile(r"^Refused: (?P<reduction>.+)$", re.M)
KINDS = {"capacity", "invariant", "deadlock", "liveness", "error"}


def note(path: Path) -> tuple[list[str], str, str, list[str]]:
    """The flags, the finding's kind, a piece of its message and the reductions to be refused,
    from the file's docstring."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    caught, expect = CAUGHT.findall(doc), list(EXPECT.finditer(doc))
    assert len(caught) == 1, f"{path.name}: the docstring needs one 'Caught by: mutexlab check FILE …' line"
    assert len(expect) == 1, f"{path.name}: the docstring needs one 'Expect: KIND — message' line"
    kind, message = expect[0]["kind"], expect[0]["message"] or ""
    assert kind in KINDS, f"{path.name}: Expect names {kind!r}, not one of {sorted(KINDS)}"
    return shlex.split(caught[0]), kind, message, REFUSED.findall(doc)


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("RUN_", "MUTEXLAB_", "AMQP_"))}
    out["PYTHONPATH"] = str(ROOT / "shared")  # this checkout's mutexlab, nothing of the tests
    return out


def mutexlab(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mutexlab", *args],
        cwd=cwd,
        env=env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def said(done: subprocess.CompletedProcess) -> str:
    return f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def test_there_are_enough_mutants_each_with_a_note():
    assert len(FILES) >= 19, [p.name for p in FILES]
    for path in FILES:
        note(path)


# What a mutant may import of mutexlab: the modules the file API's docs name (your-algorithm.md and
# problems-and-solutions.md: the kit; your-bees.md: protocol and setups; elves.md: the elves
# package, the only way to a variant of them); and the correct file it mutates.
PUBLIC = {"mutexlab.protocols.kit", "mutexlab.protocol", "mutexlab.setups", "mutexlab.protocols"}
EXAMPLES = {p.stem for d in ("solutions", "protocols") for p in (ROOT / "examples" / d).glob("*.py")}
EXAMPLES |= {p.stem for p in BASES}


@pytest.mark.parametrize("path", FILES + BASES, ids=[p.stem for p in FILES + BASES])
def test_the_mutant_imports_only_the_public_api(path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] == "mutexlab":
                assert name in PUBLIC, f"{path.name} imports {name}"
                if name == "mutexlab.protocols":
                    assert [a.name for a in node.names] == ["elves"], f"{path.name}: {ast.dump(node)}"
            else:
                assert name in sys.stdlib_module_names | EXAMPLES | {"__future__"}, (
                    f"{path.name} imports {name}"
                )


@pytest.mark.slow  # two subprocesses per mutant, some 3 s of CPU each: 1–3 minutes in all
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_the_mutant_is_caught_and_its_counterexample_replays(path, tmp_path):
    flags, kind, message, refused = note(path)
    done = mutexlab(tmp_path, "check", str(path), *flags, "--counterexample", "ce.json", "--json", "--quiet")
    assert done.returncode == 1, said(done)
    out = json.loads(done.stdout)
    assert out["verdict"] == "violation", said(done)
    found = out["findings"][0]
    assert found["kind"] == kind, said(done)
    assert message in found["message"], said(done)
    assert out["reproduced"][0] is True, said(done)
    notes = {n["reduction"]: n for n in out["reduction_notes"]}
    for reduction in refused:  # declared by the file, unsound for its code: refused, not applied
        assert not notes[reduction]["applied"], notes[reduction]
        assert notes[reduction]["why"].startswith("refused: "), notes[reduction]
    replayed = mutexlab(tmp_path, "replay", "ce.json", "--algorithm", str(path))
    assert replayed.returncode == 1, said(replayed)


# where its mutants are caught: two nodes asking twice, three with two-digit stamps to come
BASE_CHECKS = [
    ["--nodes", "2", "--requests", "2"],
    ["--nodes", "3", "-o", 'initial_clocks={"1": 8, "2": 8, "3": 8}'],
]


@pytest.mark.slow  # a subprocess per configuration, about a second each
@pytest.mark.parametrize("path", BASES, ids=[p.stem for p in BASES])
def test_the_correct_base_of_mutants_is_safe(path, tmp_path):
    for flags in BASE_CHECKS:
        done = mutexlab(tmp_path, "check", str(path), *flags, "--json", "--quiet")
        assert done.returncode == 0, said(done)
        out = json.loads(done.stdout)
        assert out["verdict"] == "pass" and out["complete"] and not out["findings"], said(done)
