"""No command or library module names a problem, a family or an algorithm: each is reached only
through its own module (``problems/``, ``protocols/``) and the registries, so a user's solution
takes the same path as a built-in one (no ``if family == "mutex"`` anywhere else).

The scan reads every string literal of the library outside ``problems/`` and ``protocols/`` (not
comments, not docstrings) and refuses one that is exactly such a name. Two words are other things
too and allowed where they are: ``lamport``, a trace field (a clock, not the algorithm), and
``classic``, a RabbitMQ queue type.
"""

from __future__ import annotations

import ast
from pathlib import Path

from mutexlab.problems import ALIASES, PROBLEMS
from mutexlab.protocols.registry import SPECS

LIBRARY = Path(__file__).resolve().parent.parent / "shared" / "mutexlab"
OWN = {"problems", "protocols"}  # where the problems and the algorithms are declared
OTHER_MEANINGS = {"lamport": "a trace field", "classic": "a RabbitMQ queue type"}


def names() -> set[str]:
    found = set(PROBLEMS) | set(ALIASES) | set(SPECS) | {s.family for s in SPECS.values()}
    found |= {role for s in SPECS.values() for role in s.roles if role != "node"}
    return found - set(OTHER_MEANINGS)


def docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def named_in(path: Path, forbidden: set[str]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = docstrings(tree)
    return [
        f"{path}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skip
        and node.value.strip().lower() in forbidden
    ]


def test_no_library_module_names_a_problem_family_or_algorithm():
    forbidden = names()
    assert {"mutex", "kmutex", "philosophers", "ricart-agrawala", "bees", "elves"} <= forbidden
    found = [
        hit
        for path in sorted(LIBRARY.rglob("*.py"))
        if path.relative_to(LIBRARY).parts[0] not in OWN
        for hit in named_in(path, forbidden)
    ]
    assert not found, "\n".join(found)


def test_the_scan_finds_a_planted_name(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text('"""A docstring naming mutex is fine."""\n\nif family == "mutex":\n    pass\n')
    hits = named_in(planted, names())
    assert hits == [f"{planted}:3: 'mutex'"], hits
