"""The algorithms: one ``AlgorithmSpec`` per protocol module (``SPEC``), collected here; and the
one resolver of what a user names with ``--algorithm``.

Adding an algorithm = one new module ending with ``SPEC = AlgorithmSpec(...)``, named in
``MODULES``, plus its tests. Everything that looks an algorithm up reads ``SPECS`` (or ``spec``),
or ``resolve`` for what a user names: a registered name, a dotted module, or a ``.py`` file.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from .. import declared, problems
from ..beside import FILE_MODULE_PREFIX, importing_beside
from ..problem import Problem
from ..protocol import Protocol, raised_at
from ..reduction import Reductions
from ..setups import ConfigError, Setup, missing_parts, module_random, shared_state
from ..spec import AlgorithmSpec, Flags

# The registered algorithms, in the order tables list them: name → (its protocol module, the
# built-in problem it solves, the commands it is the default solution of: its ``SPEC``'s ``name``,
# ``problem`` and ``default_for``). What the commands present is known from this alone, so a module
# is imported when its spec is first asked for (``SPECS[name]``): a run of one algorithm imports
# and compiles that one, not all eight (tests/test_declared.py holds the table to the SPECs).
REGISTERED: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "bees": ("bees", "bees", ()),
    "elves": ("elves", "elves", ()),
    "lamport": ("lamport", "mutex", ()),
    "ricart-agrawala": ("ricart_agrawala", "mutex", ("run", "explore")),
    "maekawa": ("maekawa", "mutex", ()),
    "sanders": ("sanders", "mutex", ()),
    "suzuki-kasami": ("suzuki_kasami", "mutex", ()),
    "raymond": ("raymond", "mutex", ()),
}
# The protocol modules (an explicit list: discovery would import every module under protocols/
# anyway, helpers included).
MODULES = tuple(module for module, _problem, _default in REGISTERED.values())


def collect(modules: tuple[str, ...], package: str = __package__) -> dict[str, AlgorithmSpec]:
    """name → spec of each module's ``SPEC``; a module without one, or a name twice, is a bug."""
    return declared.collect(modules, package, "SPEC", AlgorithmSpec, "algorithm")


class _Specs(Mapping[str, AlgorithmSpec]):
    """name → spec of the registered algorithms (``REGISTERED``), each module imported when its
    spec is first asked for (``in`` and iterating the names import nothing; ``values()`` imports
    them all)."""

    def __init__(self) -> None:
        self._loaded: dict[str, AlgorithmSpec] = {}

    def __getitem__(self, name: str) -> AlgorithmSpec:
        found = self._loaded.get(name)
        if found is None:
            module = REGISTERED[name][0]  # KeyError: not registered
            found = collect((module,)).get(name)
            if found is None:
                raise TypeError(f"{__package__}.{module} declares no algorithm {name!r}")
            self._loaded[name] = found
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(REGISTERED)

    def __len__(self) -> int:
        return len(REGISTERED)

    def __contains__(self, name: object) -> bool:
        return name in REGISTERED


SPECS: Mapping[str, AlgorithmSpec] = _Specs()
# The classic single-resource algorithms (resource ``cs``), in the order tables list them.
CLASSIC = [name for name, (_module, problem, _default) in REGISTERED.items() if problem == "mutex"]


def spec(name: str) -> AlgorithmSpec:
    if name not in SPECS:
        raise ConfigError(f"unknown algorithm {name!r}; choose one of: {', '.join(SPECS)}")
    return SPECS[name]


def largest_checked(name: str) -> tuple[dict[str, int], ...]:
    """The largest configurations ``check`` has completed for ``name`` (``checked.py``; none
    for an algorithm by file or module)."""
    from .checked import LARGEST

    return LARGEST.get(name, ())


def make_setup(
    name: str | AlgorithmSpec, processes: int, options: dict[str, Any] | None = None, seed: int = 0
) -> Setup:
    """The setup of a registered algorithm (its name, or its spec found already)."""
    _check_processes(processes)
    found = name if isinstance(name, AlgorithmSpec) else spec(name)
    return found.make_setup(processes, dict(options or {}), seed)


def _check_processes(processes: int) -> None:
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise ConfigError(f"the number of processes must be a whole number ≥ 1, got {processes!r}")


# -- the problem a solution solves, and how the commands present it ------------------------------
def problem_of(found: AlgorithmSpec) -> Problem:
    """The problem ``found`` solves: the one it names (a Problem, or a built-in problem's name),
    else the built-in problem its ``family`` names (``classic`` is ``mutex``), else, for a family
    that declares no problem yet, the one its spec describes (its flags, audit and invariant).
    The same path for a built-in solution as for a user's file. Raises ConfigError."""
    named = found.problem
    if isinstance(named, Problem):
        return named
    if named is not None:
        return problems.named(named)
    builtin = problems.find(found.family)
    if builtin is not None:
        return builtin
    return _family_problem(found)


def _family_problem(found: AlgorithmSpec) -> Problem:
    flags = found.flags or next(
        (s.flags for s in SPECS.values() if s.family == found.family and s.flags is not None), None
    )
    if flags is None:
        raise ConfigError(
            f"algorithm {found.name!r} solves no problem the commands present (family {found.family!r}): "
            f"name one of {', '.join(problems.PROBLEMS)} with problem=..."
        )
    return Problem(
        found.family, found.summary, flags, found.options, None, found.audit, invariant=found.world_invariant
    )


def families() -> list[Flags]:
    """The commands' subcommands: the flags of the registered algorithms' problems, once each, in
    the order of ``SPECS``, then those of the built-in problems no registered algorithm solves."""
    out: list[Flags] = []
    found = [problems.named(problem).flags for _module, problem, _default in REGISTERED.values()]
    found += [p.flags for p in problems.PROBLEMS.values()]
    for flags in found:
        if all(flags is not f for f in out):
            out.append(flags)
    return out


def flags_of(found: AlgorithmSpec) -> Flags:
    """How the commands present ``found``: its own flags, else its problem's."""
    return found.flags if found.flags is not None else problem_of(found).flags


def presented(flags: Flags) -> Problem | None:
    """The built-in problem the commands present with ``flags`` (None: a family without one)."""
    return next((p for p in problems.PROBLEMS.values() if p.flags is flags), None)


def endless_key(algorithm: str) -> str | None:
    """The workload option an endless workload of ``algorithm`` replaces (None: it has none).
    Raises ConfigError."""
    return problem_of(resolve(algorithm)).endless


def default_solution(flags: Flags, command: str) -> str | None:
    """The registered solution presented with ``flags`` that declares itself ``command``'s default
    (``AlgorithmSpec.default_for``), None when none does."""
    return next((n for n in members(flags) if command in REGISTERED[n][2]), None)


def members(flags: Flags) -> list[str]:
    """The registered algorithms the commands present with ``flags``."""
    return [
        name
        for name, (_module, problem, _default) in REGISTERED.items()
        if problems.named(problem).flags is flags
    ]


def first_member(flags: Flags) -> AlgorithmSpec | None:
    """The first registered algorithm the commands present with ``flags`` (None: none is)."""
    return next((SPECS[name] for name in members(flags)), None)


# -- what a user names: a registered name, a dotted module, or a .py file -------------------------
# The algorithms the modules and files loaded so far declare (SPEC), by name → (what named it: a
# dotted name, a file's resolved path; its spec): what ``lookup`` finds. (Each module is loaded once:
# sys.modules holds it; its SPEC is read again at every ``resolve``.)
_declared: dict[str, tuple[str, AlgorithmSpec, str]] = {}  # name → (source, spec, as typed)


def is_file(algorithm: str) -> bool:
    """``algorithm`` names a file (``my_algo.py``, ``./algo``), not a name or a dotted module."""
    return algorithm.endswith(".py") or "/" in algorithm or "\\" in algorithm


def is_module(algorithm: str) -> bool:
    return "." in algorithm and all(part.isidentifier() for part in algorithm.split("."))


def canonical(algorithm: str) -> str:
    """What to pass on for ``algorithm`` (to another process, a scenario, a trace's reader): a
    file as its absolute path (``..`` taken out: one file, one name), anything else as given."""
    return os.path.abspath(os.path.expanduser(algorithm)) if is_file(algorithm) else algorithm


def shown(algorithm: str) -> str:
    """``algorithm`` as output says it to the user who typed it here: a file relative to the
    working directory when below it (``examples/solutions/x.py``), absolute elsewhere (never with
    ``..``); a name or module as it is. ``canonical`` is what is passed on, this what is read."""
    if not is_file(algorithm):
        return algorithm
    path = os.path.abspath(os.path.expanduser(algorithm))
    try:
        here = os.path.relpath(path)
    except (OSError, ValueError):  # no working directory (removed), another drive
        return path
    return path if here.startswith("..") else here


def beside(algorithm: str, scenario: str | Path) -> str:
    """How a scenario file at ``scenario`` names the algorithm ``algorithm``: a file in the
    scenario's directory or below it relative to that directory (``algo.py``), so that the two
    move together; any other file by its absolute path; a name or module as it is."""
    if not is_file(algorithm):
        return algorithm
    path = canonical(algorithm)
    try:
        here = os.path.relpath(path, os.path.dirname(os.path.abspath(scenario)))
    except ValueError:  # another drive
        return path
    return path if here.startswith("..") else Path(here).as_posix()


def from_beside(algorithm: str, scenario: str | Path) -> str:
    """The algorithm a scenario file at ``scenario`` names (``beside``'s inverse): a relative file
    path is relative to the scenario's directory, taken to its absolute path (``canonical``)."""
    if not is_file(algorithm) or os.path.isabs(os.path.expanduser(algorithm)):
        return algorithm
    return canonical(os.path.join(os.path.dirname(os.path.abspath(scenario)), algorithm))


def resolve(algorithm: str) -> AlgorithmSpec:
    """The spec ``algorithm`` names: a registered name; a dotted module; or a ``.py`` file, loaded
    once under a stable module name (``module_name``). A module or file declares
    ``SPEC = AlgorithmSpec(...)``; one that only offers ``make_setup`` is a variant of its
    ``FAMILY``'s (default: classic) algorithms, under its own name (the tests' broken variants).
    ConfigError names what is wrong: no such file, no SPEC, the line of the file that failed, a
    name another algorithm has."""
    if algorithm in SPECS:
        return SPECS[algorithm]
    if algorithm in _declared:  # a name a module or file loaded before declares
        return _declared[algorithm][1]
    if is_file(algorithm):
        path = Path(algorithm).expanduser().resolve()
        module = _load_file(algorithm, path)
        try:
            # named in errors as typed here (``shown``), not by the absolute path passed on
            return _declare(str(path), module, f"algorithm file {shown(algorithm)}", is_file=True)
        except ConfigError:
            sys.modules.pop(module.__name__, None)  # refused: loaded again once it is fixed
            raise
    if is_module(algorithm):
        return _declare(algorithm, _import(algorithm), f"algorithm module {algorithm}")
    raise ConfigError(
        f"unknown algorithm {algorithm!r}; choose one of: {', '.join(SPECS)}, "
        "or name a dotted module or a .py file that declares SPEC"
    )


@dataclass(frozen=True)
class Solution:
    """A solution resolved once, with the problem it solves: what a command resolves at its edge
    (``solution``) and passes down. ``named`` is what the user named, as it is passed on
    (``canonical``: a file as its absolute path): what configs show and traces, scenario files and
    the processes a command starts carry, and what such a process resolves again."""

    named: str
    spec: AlgorithmSpec
    problem: Problem

    @property
    def name(self) -> str:
        """The algorithm's own name (its SPEC's): what its setups and traces are verified as."""
        return self.spec.name


def solution(algorithm: str | Solution) -> Solution:
    """The one resolver of what a user, a scenario file or a parent process names (``resolve``),
    with its problem (``problem_of``): called at a command's edge, and by a process started anew
    from a name; a ``Solution`` already resolved is returned as it is. Raises ConfigError."""
    if isinstance(algorithm, Solution):
        return algorithm
    found = resolve(algorithm)  # as given: its errors name what the user wrote
    return Solution(canonical(algorithm), found, problem_of(found))


def lookup(name: str | None) -> AlgorithmSpec | None:
    """The algorithm called ``name`` (a trace's header names it): registered, or declared by a
    module or file this process has loaded (``resolve``); None when neither."""
    if not name:
        return None
    if name in SPECS:
        return SPECS[name]
    found = _declared.get(name)
    return found[1] if found is not None else None


def module_name(path: Path) -> str:
    """The stable module name of the file at ``path`` (resolved): the same in every process."""
    stem = re.sub(r"\W", "_", path.stem)
    return f"{FILE_MODULE_PREFIX}{stem}_{hashlib.sha256(str(path).encode()).hexdigest()[:10]}"


def _load_file(algorithm: str, path: Path) -> ModuleType:
    given = shown(algorithm)
    if not path.exists():
        raise ConfigError(f"algorithm file {given} does not exist")
    if not path.is_file() or path.suffix != ".py":
        raise ConfigError(f"algorithm file {given} is not a Python file (.py)")
    name = module_name(path)
    if name in sys.modules:  # loaded before (a forked service inherits it)
        return sys.modules[name]
    loader = importlib.util.spec_from_file_location(name, path)
    if loader is None or loader.loader is None:
        raise ConfigError(f"algorithm file {given} cannot be loaded")
    module = importlib.util.module_from_spec(loader)
    sys.modules[name] = module  # before running it: its dataclasses and models look it up
    try:
        with importing_beside(str(path.parent)):  # the modules beside it import as in a script
            loader.loader.exec_module(module)
    except BaseException as exc:
        del sys.modules[name]
        if not isinstance(exc, Exception):
            raise
        raise ConfigError(f"cannot load algorithm file {given}: {_failure(exc, str(path))}") from None
    return module


def _import(algorithm: str) -> ModuleType:
    try:
        return importlib.import_module(algorithm)
    except ImportError as exc:
        if exc.name is not None and algorithm.startswith(exc.name):  # the module itself is missing
            raise ConfigError(f"algorithm module {algorithm!r} cannot be imported: {exc}") from None
        raise ConfigError(f"cannot load algorithm module {algorithm}: {_failure(exc, None)}") from None
    except Exception as exc:  # noqa: BLE001 - the module's own error, reported with its line
        raise ConfigError(f"cannot load algorithm module {algorithm}: {_failure(exc, None)}") from None


def _failure(exc: Exception, path: str | None) -> str:
    """``line N: <code>: Type: message`` at the line of the user's file (``path``; else the last
    frame outside importlib) where ``exc`` came from."""
    if isinstance(exc, SyntaxError) and exc.lineno is not None and (path is None or exc.filename == path):
        code = (exc.text or "").strip()
        return f"line {exc.lineno}{f' `{code}`' if code else ''}: SyntaxError: {exc.msg}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "importlib" not in f.filename]
    mine = [f for f in frames if path is None or f.filename == path]
    where = ""
    if mine:
        frame, code = mine[-1], (mine[-1].line or "").strip()
        where = ("line " if path is not None else f"{frame.filename}:") + f"{frame.lineno}"
        where += f" `{code}`: " if code else ": "
    return f"{where}{type(exc).__name__}: {exc}"


def _declare(source: str, module: ModuleType, what: str, is_file: bool = False) -> AlgorithmSpec:
    """The spec of a loaded module: its ``SPEC``, checked, or (``make_setup`` only) a variant's.
    A file is an algorithm of its own: a built-in's name is refused. A dotted module may be a
    variant of a built-in under its name (the tests' broken variants), keeping its family and
    audit: its traces are verified as the built-in's, and ``lookup`` finds the built-in."""
    found = getattr(module, "SPEC", None)
    if found is None:
        make = getattr(module, "make_setup", None)
        if not callable(make):
            raise ConfigError(f"{what} declares no SPEC = AlgorithmSpec(...)")
        return _variant(source, module, make)
    if not isinstance(found, AlgorithmSpec):
        raise ConfigError(f"{what}: SPEC must be an AlgorithmSpec, got {type(found).__name__}")
    if SPECS.get(found.name) is found:  # a registered module named by its path
        return found
    builtin = SPECS.get(found.name)
    if builtin is not None:
        if is_file or (found.family, found.audit) != (builtin.family, builtin.audit):
            raise ConfigError(
                f"{what} declares the algorithm {found.name!r}, the name of a built-in algorithm: "
                "give it another name"
            )
        return found
    if (earlier := _declared.get(found.name)) is not None and earlier[0] != source:
        raise ConfigError(f"{what} declares the algorithm {found.name!r}, as {earlier[2]} does: rename one")
    flags_of(found)  # a problem the commands present
    _declared[found.name] = (source, found, what.removeprefix("algorithm file "))
    return found


def _variant(
    source: str, module: ModuleType, make: Callable[[int, dict[str, Any], int], Setup]
) -> AlgorithmSpec:
    """A module offering ``make_setup`` without SPEC: its ``FAMILY``'s (default classic) spec,
    building with its ``make_setup``, under the name ``source``; it quotes no literature."""
    family = getattr(module, "FAMILY", "classic")
    template = SPECS.get(family) or next((s for s in SPECS.values() if s.family == family), None)
    if template is None:
        raise ConfigError(f"algorithm module {source}: FAMILY {family!r} is not a family of algorithms")
    summary = ((module.__doc__ or "").strip().splitlines() or [template.summary])[0]
    return replace(template, name=source, summary=summary, make_setup=make, literature={})


def build_setup(algorithm: str | Solution, processes: int, options: dict[str, Any], seed: int) -> Setup:
    """The setup of the solution ``algorithm`` (resolved at a command's edge; a name or a path is
    resolved here, by ``solution``). A module declaring SPEC builds the setup its spec names: what
    its traces are verified as."""
    resolved = solution(algorithm)
    if isinstance(algorithm, Solution):
        algorithm = algorithm.named
    found, problem = resolved.spec, resolved.problem
    _check_processes(processes)
    options = {**problem.defaults, **options}
    with module_random(seed):  # a process drawing from `random` as it is made: the same under one seed
        setup = _make_setup(algorithm, found, processes, options, seed)
    if lookup(found.name) is found and setup.algorithm != found.name:
        raise ConfigError(
            f"{algorithm}: make_setup names its setup {setup.algorithm!r}, but SPEC names the algorithm "
            f"{found.name!r}: they must agree (a trace is verified by the name its setup gives)"
        )
    wrong = problem.wrong_setup(setup, processes, options)  # its resources, its messages
    if wrong is not None:
        raise ConfigError(f"{algorithm}: {wrong}")
    return setup


def _make_setup(
    algorithm: str, found: AlgorithmSpec, processes: int, options: dict[str, Any], seed: int
) -> Setup:
    """``found.make_setup(...)``: what a solution's own code raises while building its setup (its
    ``make_setup``, its processes' ``__init__``), or a result that is no ``Setup``, is an error of
    that solution (ConfigError naming the line of its file), not of mutexlab; a built-in's stays
    mutexlab's bug."""
    if SPECS.get(found.name) is found:
        return found.make_setup(processes, dict(options), seed)
    try:
        setup = found.make_setup(processes, dict(options), seed)
    except ConfigError:
        raise
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the solution's own code (a sys.exit() too)
        raise ConfigError(
            f"{algorithm}: building its setup raised {type(exc).__name__}: {exc} at {raised_at(exc)}"
        ) from None
    if not isinstance(setup, Setup):
        raise ConfigError(
            f"{algorithm}: make_setup returned {type(setup).__name__}, not a Setup (mutexlab.setups.Setup)"
        )
    wrong = shared_state(setup) or missing_parts(setup)
    if wrong is not None:
        raise ConfigError(f"{algorithm}: {wrong}")
    for pid, proto in setup.protocols.items():
        if type(proto).name is Protocol.name and pid in setup.names:  # no name of its own
            proto.give_name(setup.names[pid])
    return setup


def spec_of(algorithm: str) -> AlgorithmSpec:
    """``resolve``, for the callers that read a spec's roles (membership)."""
    return resolve(algorithm)


def family_of(algorithm: str) -> str:
    """The family of what ``algorithm`` names (``classic``, ``bees``, ``elves``)."""
    return resolve(algorithm).family


def declarations(algorithm: str | Solution | None) -> list[Reductions]:
    """Every reduction declaration that may cover a setup of ``algorithm`` (``mutexlab.reduction``):
    its spec's (a module's or file's own ``SPEC``, or its ``FAMILY``'s) first, then every registered
    one. Which applies is decided by the processes' exact classes alone (``Reductions.covers``), so
    a name nothing here resolves, or None (a setup built by the caller), gets the registered ones only."""
    if algorithm is None:
        return [d for d in (s.declared_reductions() for s in SPECS.values()) if d is not None]
    try:
        found = [solution(algorithm).spec, *SPECS.values()]
    except ConfigError:
        found = list(SPECS.values())
    return [d for d in (s.declared_reductions() for s in found) if d is not None]
