"""One protocol, one unit: no module outside ``protocols/`` names an algorithm, a family or a
protocol class. What the rest of mutexlab knows of an algorithm (its flags, its summary, its
memory estimate, its roles, its audit ...) it reads from the algorithm's spec, through
``protocols/registry.py`` — so a user's algorithm, by file, gets everything the built-in ones get.

What counts as naming, in the code (docstrings and comments are prose, not read):

* importing ``mutexlab.protocols.<module>`` other than ``registry``;
* an identifier (a variable, function, class, argument or attribute) one of whose words
  (``snake_case`` and ``CamelCase`` split) is an algorithm's or a family's name, or that is a
  protocol class's name (``Bee``, ``RicartAgrawalaNode``);
* a string holding such a word (``"bees"``, ``"ricart-agrawala"``, ``"the mason bees"``) or a
  role only an algorithm has (``"mayor"``; ``node`` is everyone's default);
* in a docstring, a command line in inline code (````mutexlab check bees````): usage, not prose.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from mutexlab.protocol import Protocol
from mutexlab.protocols import registry
from mutexlab.spec import AlgorithmSpec
from mutexlab.words import count

PACKAGE = Path(registry.__file__).resolve().parents[1]
DEFAULT_ROLE = AlgorithmSpec.__dataclass_fields__["role"].default

# A word of the vocabulary that means something else everywhere: word → what. (The algorithm
# named so is still caught by its classes and its module.)
SHARED = {"lamport": "the Lamport clock: the logical clock of every trace event (field 'lamport')"}


def protocol_classes() -> set[str]:
    """Every Protocol subclass a module under protocols/ defines."""
    import importlib

    found = set()
    for path in (PACKAGE / "protocols").rglob("*.py"):
        module = importlib.import_module(
            "mutexlab." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")
        )
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, Protocol) and value.__module__ == module.__name__:
                found.add(name)
    return found


def vocabulary() -> tuple[set[str], set[str]]:
    """(words, class names): the algorithms' names (both spellings) and the roles only some have;
    the protocol classes."""
    words: set[str] = set()
    for spec in registry.SPECS.values():
        words |= {spec.name.lower(), spec.name.lower().replace("-", "_")}
        words |= {role for role in spec.roles if role != DEFAULT_ROLE}
    return words - set(SHARED), protocol_classes()


def split(identifier: str) -> list[str]:
    """``bees_messages`` → bees, messages; ``RicartAgrawalaNode`` → ricart, agrawala, node; with the
    whole identifier's lower case and its hyphenated and snake-case pairs of parts."""
    parts = [p.lower() for p in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", identifier)]
    pairs = [f"{a}{sep}{b}" for a, b in zip(parts, parts[1:]) for sep in ("-", "_")]
    return [identifier.lower(), *parts, *pairs]


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _identifiers(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.alias):
        return [node.asname or node.name.split(".")[-1]]
    if isinstance(node, ast.keyword) and node.arg:
        return [node.arg]
    return []


def offenders(package: Path = PACKAGE) -> list[str]:
    """Each place outside protocols/ and problems/ (a problem's own modules name what its
    statement names: the bees, their reeds) that names an algorithm or a protocol class."""
    words, classes = vocabulary()
    found: list[str] = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package)
        if rel.parts[0] not in ("protocols", "problems"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            found += [f"{rel.as_posix()}:{line}: {what}" for line, what in _names(tree, words, classes)]
    return found


def _names(tree: ast.AST, words: set[str], classes: set[str]) -> list[tuple[int, str]]:
    """(line, what) of every naming in ``tree``, once each."""
    prose = _docstrings(tree)
    found: dict[tuple[int, str], None] = {}
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.ImportFrom | ast.Import):
            modules = (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            )
            names = [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else []
            for module in modules:
                parts = module.split(".")
                if "protocols" in parts:
                    below = parts[parts.index("protocols") + 1 :] or [n for n in names if n != "registry"]
                    if below and below[0] != "registry":
                        found[line, f"imports protocols.{below[0]}"] = None
        for name in _identifiers(node):
            if name in classes:
                found[line, f"names the protocol class {name}"] = None
            elif any(w in words for w in split(name)):
                found[line, f"identifier {name}"] = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            if id(node) in prose:  # prose, but for the command lines it shows
                text = " ".join(re.findall(r"``(mutexlab [^`]+)``", text))
            tokens = re.findall(r"[A-Za-z]+(?:[-_][A-Za-z]+)*", text)
            named = sorted(
                {t for t in tokens if t in classes}
                | {w.replace("_", "-") for t in tokens for w in split(t) if w in words}
            )
            if named:
                found[line, f"string {text[:60]!r} names {', '.join(named)}"] = None
    return list(found)


def test_no_module_outside_protocols_names_an_algorithm():
    found = offenders()
    files: dict[str, list[str]] = {}
    for o in found:
        files.setdefault(o.split(":")[0], []).append(o)
    summary = [f"{f}: {count(len(places), 'place')}, e.g. {places[0]}" for f, places in sorted(files.items())]
    assert not found, "name algorithms only in protocols/ (read the spec instead):\n" + "\n".join(summary)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("from ..protocols.bees import Bee\n", ["imports protocols.bees", "names the protocol class Bee"]),
        ("from ..protocols import elves\n", ["imports protocols.elves", "identifier elves"]),
        ("def bees_messages(n):\n    return n\n", ["identifier bees_messages"]),
        ("WHO = 'the mason bees'\n", ["string 'the mason bees' names bees"]),
        ("X = {'ricart-agrawala': 1}\n", ["string 'ricart-agrawala' names ricart-agrawala"]),
        ("if role == 'mayor':\n    pass\n", ["string 'mayor' names mayor"]),
        (
            'def f():\n    """Run ``mutexlab check elves``."""\n',
            ["string 'mutexlab check elves' names elves"],
        ),
        ("x = node.RicartAgrawalaNode\n", ["names the protocol class RicartAgrawalaNode"]),
        ("def f(suzuki_kasami_holder):\n    pass\n", ["identifier suzuki_kasami_holder"]),
        (
            "from mutexlab.protocols.registry import SPECS\nx = SPECS['suzuki-kasami']\n",
            ["string 'suzuki-kasami' names suzuki-kasami"],
        ),
    ],
)
def test_the_check_catches_a_planted_offender(tmp_path, text, expected):
    fake = tmp_path / "mutexlab"
    (fake / "commands").mkdir(parents=True)
    (fake / "commands" / "planted.py").write_text('"""The bees, in prose: not counted."""\n' + text)
    found = offenders(fake)
    for what in expected:
        assert any(o.startswith("commands/planted.py:") and o.endswith(f": {what}") for o in found), (
            what,
            found,
        )
    assert not any("registry" in o for o in found)  # the registry is how the others look algorithms up
    (fake / "commands" / "planted.py").write_text(
        '"""The mason bees and Lamport, in prose."""\nnode = 1  # bees\n'
    )
    assert offenders(fake) == []
