"""The layering that docs/architecture.md#layering states: imports go only downward.

core ← problems ← protocols ← sim, audit, metrics, bus ← transport, report, runs ← explore ← commands ← services. A module may
import its own package and anything in a lower layer; never a higher layer, nor a sibling
package of its own layer (sim and audit are independent of each other, so are transport and report).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "shared" / "mutexlab"

LAYERS = [
    {
        "__init__",
        "beside",
        "clock",
        "declared",
        "fastclock",
        "fastpath",
        "interrupts",
        "findings",
        "keywords",
        "limits",
        "machine",
        "messages",
        "problem",
        "protocol",
        "reduction",
        "rules",
        "setups",
        "show",
        "slots",
        "spec",
        "trace",
        "waiting",
        "watcher",
        "words",
    },
    {"problems"},
    {"protocols"},
    {"sim", "audit", "metrics", "bus"},
    {"transport", "report", "runs", "memory", "director", "mpi"},
    {"explore", "check"},
    {"commands", "cli", "__main__"},
    {"services"},
]
# Layers whose members form one unit and may import each other (the core modules; the CLI and
# its subcommands). The members of the other layers are independent packages.
ONE_UNIT = {0, 6}


def layer_of(part: str) -> int:
    for number, names in enumerate(LAYERS):
        if part in names:
            return number
    raise AssertionError(f"mutexlab.{part} is in no layer of docs/architecture.md#layering")


def top_part(path: Path, package: Path = PACKAGE) -> str:
    rel = path.relative_to(package)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _root_name(name: str, package: Path) -> str:
    return name if (package / f"{name}.py").exists() or (package / name).is_dir() else "__init__"


def imported_parts(path: Path, package: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, first component under mutexlab) of every import of a mutexlab module in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    rel = path.relative_to(package)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel.parts[:-1])[: len(rel.parts) - node.level]
                module = base + (node.module.split(".") if node.module else [])
                if module:
                    found.append((node.lineno, module[0]))
                else:  # ``from . import x`` at the package root: a module, or a name of __init__
                    found += [(node.lineno, _root_name(alias.name, package)) for alias in node.names]
            elif node.module and node.module.split(".")[0] == "mutexlab":
                parts = node.module.split(".")
                found += (
                    [(node.lineno, parts[1])]
                    if len(parts) > 1
                    else [(node.lineno, _root_name(alias.name, package)) for alias in node.names]
                )
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "mutexlab" and len(parts) > 1:
                    found.append((node.lineno, parts[1]))
    return found


def upward_imports(package: Path = PACKAGE) -> list[str]:
    problems = []
    for path in sorted(package.rglob("*.py")):
        source = top_part(path, package)
        for line, target in imported_parts(path, package):
            if target == source or (layer_of(target) == layer_of(source) in ONE_UNIT):
                continue
            if layer_of(target) >= layer_of(source):
                problems.append(
                    f"{path.relative_to(package.parent)}:{line}: mutexlab.{source} "
                    f"(layer {layer_of(source)}) imports mutexlab.{target} (layer {layer_of(target)})"
                )
    return problems


def test_every_package_is_in_a_layer():
    for path in PACKAGE.rglob("*.py"):
        layer_of(top_part(path))


def test_imports_go_only_downward():
    assert upward_imports() == []


# The bus (docs/wire.md#the-bus): what a process needs to send and receive, in one small room that
# takes nothing from the run's services (transport/) nor from anything above the core.
BUS = PACKAGE / "bus"
BUS_LINES = 2000  # non-blank lines (code, docstrings and comments) over every module of the bus


def bus_reaches_out(bus: Path = BUS, package: Path = PACKAGE) -> list[str]:
    """Each import by the bus of a mutexlab module that is neither the bus's own nor the core's."""
    return [
        f"{path.relative_to(package.parent)}:{line}: the bus imports mutexlab.{target}"
        for path in sorted(bus.rglob("*.py"))
        for line, target in imported_parts(path, package)
        if target != "bus" and (target not in LAYERS[0] or target == "__init__")
    ]


def bus_lines(bus: Path = BUS) -> int:
    """Non-blank lines of every module of the bus."""
    return sum(
        sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
        for path in bus.rglob("*.py")
    )


def test_the_bus_imports_only_itself_and_the_core():
    assert bus_reaches_out() == []


def test_the_bus_is_at_most_2000_lines():
    assert bus_lines() <= BUS_LINES, f"the bus has {bus_lines()} lines"


def test_the_bus_checks_catch_a_reach_into_the_services_and_a_long_bus(tmp_path):
    fake = tmp_path / "mutexlab"
    (fake / "bus").mkdir(parents=True)
    (fake / "transport").mkdir()
    (fake / "bus" / "a.py").write_text("from ..transport.membership import role_of\nfrom ..clock import x\n")
    (fake / "bus" / "b.py").write_text(
        "import mutexlab.services\n\nfrom . import a\n" + "x = 1\n" * BUS_LINES
    )
    (fake / "clock.py").write_text("")
    found = bus_reaches_out(fake / "bus", fake)
    assert [f.split(": ", 1)[1] for f in found] == [
        "the bus imports mutexlab.transport",
        "the bus imports mutexlab.services",
    ], found
    assert bus_lines(fake / "bus") == BUS_LINES + 4


def test_the_check_catches_an_upward_import(tmp_path):
    fake = tmp_path / "mutexlab"
    (fake / "protocols").mkdir(parents=True)
    (fake / "protocols" / "bad.py").write_text("from ..transport.rabbit import Bus\n")
    (fake / "sim").mkdir()
    (fake / "sim" / "bad.py").write_text("from ..audit import verify_events\n")
    (fake / "clock.py").write_text("import mutexlab.protocols.registry\n")
    found = upward_imports(fake)
    assert any("protocols/bad.py:1" in p and "mutexlab.transport" in p for p in found), found
    assert any("sim/bad.py:1" in p and "mutexlab.audit" in p for p in found), found
    assert any("clock.py:1" in p and "mutexlab.protocols" in p for p in found), found
    with pytest.raises(AssertionError, match="no layer"):
        layer_of("gadgets")


LONGEST_MODULE = 500  # lines: a library module longer than this holds more than one concern


def long_modules(package: Path) -> list[str]:
    """Each module under ``package`` over LONGEST_MODULE lines, with its length."""
    out = []
    for path in sorted(package.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > LONGEST_MODULE:
            out.append(f"{path.relative_to(package).as_posix()}: {lines} lines")
    return out


def test_no_library_module_is_over_500_lines():
    assert long_modules(PACKAGE) == [], "split these modules by concern"


def test_the_length_check_catches_a_long_module(tmp_path):
    (tmp_path / "long.py").write_text("x = 1\n" * (LONGEST_MODULE + 1))
    (tmp_path / "short.py").write_text("x = 1\n" * LONGEST_MODULE)
    assert long_modules(tmp_path) == [f"long.py: {LONGEST_MODULE + 1} lines"]
