"""``mutexlab tables [ALGORITHM]``: an algorithm's state tables as Markdown, rendered from the
``TABLE`` its protocol classes declare (machine.py) — the data their dispatch runs on.

Without ALGORITHM it prints every registered algorithm's; ``--write FILE`` writes that document
to FILE instead (docs/protocols.md is ``mutexlab tables --write docs/protocols.md``, and
tests/test_state_tables.py checks it is current).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

from ..machine import Table
from ..protocols import registry
from ..protocols.registry import SPECS
from ..setups import ConfigError
from ..spec import AlgorithmSpec
from .common import fail
from .registry import Command

HEAD = """# The protocols' state tables

Generated from each protocol's `TABLE` (`shared/mutexlab/machine.py`), the table its dispatch runs
on, by `mutexlab tables --write docs/protocols.md`: do not edit by hand
(`tests/test_state_tables.py` checks that this file is current, and holds the code to every
table).

A row is the process's state, a column an input: a local action (`request`, `exit`) or a message
type. A cell says what the input does, and `→ X` the states it may move to (none: it stays). A
local action a state does not take reads "error", a message that cannot come in that state
"(never)", with why when the table says: either raises `ProtocolError` naming the process, its
state and the input, before anything changes (docs/architecture.md#protocol-interface).
"""


def tabled(module: ModuleType) -> list[tuple[str, Table]]:
    """(class name, table) of each class ``module`` defines (a package: or one of its modules) that
    has a ``TABLE`` (its own or inherited), in the order it defines (or imports) them."""
    found = []
    for value in vars(module).values():
        table = getattr(value, "TABLE", None)
        home = getattr(value, "__module__", "")
        if isinstance(value, type) and isinstance(table, Table) and _within(home, module):
            found.append((value.__name__, table))
    return found


def _within(home: str, module: ModuleType) -> bool:
    return home == module.__name__ or (hasattr(module, "__path__") and home.startswith(f"{module.__name__}."))


def render(title: str, summary: str, module: ModuleType, where: str | None = None) -> str | None:
    """One section: ``module``'s tables in Markdown, or None when it has none; ``where`` names the
    module (default: its name; a file loaded by path: the path given)."""
    classes = tabled(module)
    if not classes:
        return None
    lines = [f"## {title}", "", f"{summary} (`{where or module.__name__}`)."]
    for name, table in classes:
        lines += ["", f"`{name}`:", "", table.markdown()]
        if table.legend:
            lines += ["", f"{table.legend}."]
        if table.never:
            lines += ["", f"(never): {table.never}."]
    return "\n".join(lines) + "\n"


def document() -> str:
    """docs/protocols.md: every registered algorithm that declares a table."""
    sections = [render_spec(spec) for spec in SPECS.values()]
    return "\n".join([HEAD, *(text for text in sections if text is not None)])


def render_spec(spec: AlgorithmSpec) -> str | None:
    return render(spec.name, spec.summary, importlib.import_module(spec.make_setup.__module__))


def render_named(algorithm: str) -> str | None:
    """The tables of a registered algorithm, or of a plugin module given by its dotted path."""
    if algorithm in SPECS:
        return render_spec(SPECS[algorithm])
    if registry.is_file(algorithm):  # a solution by path, as every other command takes it
        spec = registry.resolve(algorithm)
        path = Path(algorithm).expanduser().resolve()
        return render(spec.name, spec.summary, sys.modules[registry.module_name(path)], algorithm)
    if "." not in algorithm:
        raise ConfigError(f"unknown algorithm {algorithm!r}; choose one of: {', '.join(SPECS)}")
    try:
        module = importlib.import_module(algorithm)
    except ImportError as exc:
        raise ConfigError(f"algorithm module {algorithm!r} cannot be imported: {exc}") from None
    return render(algorithm, f"plugin module {algorithm}", module)


def run(args) -> int:
    if args.write is not None and args.algorithm is not None:
        return fail("tables: --write writes every algorithm's tables; name no ALGORITHM with it")
    if args.algorithm is None:
        text = document()
        if args.write is not None:
            try:
                args.write.write_text(text, encoding="utf-8")
            except OSError as exc:
                return fail(f"cannot write {args.write}: {exc.strerror or exc}")
            return 0
        print(text, end="")
        return 0
    try:
        section = render_named(args.algorithm)
    except ConfigError as exc:
        return fail(str(exc))
    if section is None:
        return fail(f"{args.algorithm} declares no TABLE", 1)
    print(section, end="")
    return 0


def arguments(p) -> None:
    p.add_argument(
        "algorithm", nargs="?", help="a registered algorithm, a plugin module or a .py file (default: all)"
    )
    p.add_argument("--write", type=Path, metavar="FILE", help="write every algorithm's tables to FILE")


COMMAND = Command(
    "tables",
    "print an algorithm's state tables (Markdown)",
    """Print the state tables of ALGORITHM (a registered name, a plugin module or a .py file), or of
    every registered algorithm, as Markdown rendered from the tables their protocols run on. --write
    FILE writes every algorithm's to FILE (docs/protocols.md). Exit 0 printed or written, 1 when
    ALGORITHM declares no table, 2 an unknown algorithm or a file that cannot be written.""",
    run,
    arguments,
)
