"""A solution's own modules beside its file: ``import parts`` in ``my_algo.py`` finds the
``parts.py`` next to it, as in a script (``protocols.registry`` loads each file with its
directory first on the path). They are the solution's code as much as its file is: what a handler
changes in one of their globals is every process's at once (``setups.class_state`` watches them).
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType


def _under(path: str, root: str) -> bool:
    """Whether the file ``path`` lies in directory ``root`` or below it."""
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # another drive
        return False


# Where Python's own modules and the installed packages live: never a user's, even when a file's
# folder holds them (a solution in /root, the interpreter in /root/.pyenv).
_PYTHON = {os.path.abspath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}


def own_module(module: ModuleType, root: str) -> bool:
    """Whether ``module`` is a file of the user's beside the solution's (in ``root`` or below it):
    neither mutexlab's, nor the standard library's, nor an installed package's."""
    file = getattr(module, "__file__", None)
    top = module.__name__.split(".")[0]
    if not isinstance(file, str) or top == "mutexlab" or top in sys.stdlib_module_names:
        return False
    path = os.path.abspath(file)
    installed = f"{os.sep}site-packages{os.sep}" in path or f"{os.sep}dist-packages{os.sep}" in path
    python = any(_under(path, prefix) and not _under(root, prefix) for prefix in _PYTHON)
    return not installed and not python and _under(path, root)


# The name of a module loaded from a solution's file (``protocols.registry``): + stem and digest
FILE_MODULE_PREFIX = "mutexlab_algorithm_"


def beside(module: ModuleType) -> list[ModuleType]:
    """The user's own modules that ``module`` (a solution's file) reaches through its globals — a
    module imported by name, or the module of a function, class or object it imported from one —
    and theirs in turn: each a file in the directory of ``module``'s file or below it. Only for a
    file mutexlab loaded as a solution: a module Python imported itself (a test module beside its
    conftest.py, whose globals the harness changes between runs) keeps its helpers to itself."""
    file = getattr(module, "__file__", None)
    if not isinstance(file, str) or not module.__name__.startswith(FILE_MODULE_PREFIX):
        return []
    root = os.path.dirname(os.path.abspath(file))
    seen, todo, found = {id(module)}, [module], []
    while todo:
        for value in list(vars(todo.pop()).values()):
            held = value if isinstance(value, ModuleType) else defining_module(value)
            if held is None or id(held) in seen or not own_module(held, root):
                continue
            seen.add(id(held))
            found.append(held)
            todo.append(held)
    return found


def defining_module(value: object) -> ModuleType | None:
    """The module that defines ``value`` (a function, a class; an object: its class): by its
    ``__module__``, among the modules of that name each file loaded beside it (two files' own
    ``common``) the one that holds it."""
    if not (isinstance(value, type) or callable(value)):
        value = type(value)
    name = getattr(value, "__module__", None)
    if not isinstance(name, str):
        return None
    top = getattr(value, "__qualname__", "").split(".")[0]
    held = [sys.modules.get(name), *(mods[name] for mods in _BESIDE.values() if name in mods)]
    for candidate in held:
        if candidate is not None and getattr(candidate, top, None) is value:
            return candidate
    return held[0]


# The modules each loaded file imported from beside it: its folder → {name: module}.
_BESIDE: dict[str, dict[str, ModuleType]] = {}


@contextmanager
def importing_beside(folder: str) -> Iterator[None]:
    """The modules beside a file import as in a script: its ``folder`` first on the path while it
    loads, and another file's modules of the same names (``common.py`` beside each of two files
    ``compare`` runs) out of the way, so each file gets its own (the first loaded keeps the name)."""
    hidden = {
        name: sys.modules.pop(name)
        for other, mods in _BESIDE.items()
        for name, mod in mods.items()
        if other != folder and sys.modules.get(name) is mod
    }
    global _loading
    before = set(sys.modules)
    _FOLDERS.add(folder)
    _loading += 1
    if not any(isinstance(f, _LateFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _LateFinder())
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        _loading -= 1
        del sys.path[sys.path.index(folder)]
        if folder not in sys.path:  # a module it imports when a handler runs finds them too
            sys.path.append(folder)
        for new in set(sys.modules) - before:
            if own_module(sys.modules[new], folder):
                _BESIDE.setdefault(folder, {}).setdefault(new, sys.modules[new])
        sys.modules.update(hidden)


# The folders of the solution files mutexlab loaded, and the modules of theirs a handler imported
# later (``import parts`` inside a handler): in the order they came, each as it was imported.
_FOLDERS: set[str] = set()
IMPORTED: list[ModuleType] = []
_loading = 0  # files being loaded (``importing_beside``): what they import is no handler's
# Called with each such module once it has run, before the handler goes on: ``setups`` keeps a
# copy of its globals then, so that what the handler changes in them is seen (a finding).
on_late_import: Callable[[ModuleType], None] | None = None


def _test_module(name: str) -> bool:
    """A test harness's module (``test_x``, ``x_test``, ``conftest``): never the solution's."""
    top = name.split(".")[0]
    return top.startswith("test_") or top.endswith("_test") or top == "conftest"


class _LateFinder(importlib.abc.MetaPathFinder):
    """Finds nothing of its own: the module Python's path finds, when it is a file of a solution's
    folder (``own_module``'s rule), has its loader tell ``on_late_import`` once it has run."""

    def find_spec(self, name, path, target=None):  # noqa: ANN001, ANN201 - importlib's signature
        if not _FOLDERS or name.split(".")[0] in sys.stdlib_module_names or _test_module(name):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        origin = getattr(spec, "origin", None)
        loader = getattr(spec, "loader", None)
        if spec is None or not isinstance(origin, str) or not hasattr(loader, "exec_module"):
            return None
        root = next((f for f in _FOLDERS if _under(os.path.abspath(origin), f)), None)
        if root is None or name.startswith(FILE_MODULE_PREFIX):
            return None
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            if not _loading and own_module(module, root):
                IMPORTED.append(module)
                if on_late_import is not None:
                    # watching never fails an import: at worst the module goes unwatched
                    with contextlib.suppress(Exception):
                        on_late_import(module)

        loader.exec_module = exec_module  # this spec's loader alone, made for this import
        return spec


LATE = ""  # class_state's key of its Late: no global's name


@dataclass
class Late:
    """Where the modules a handler imports later are watched (``setups.class_state`` keeps one under
    ``LATE``, a name no global has): the folders of a setup's solution files (``add``), and how many
    modules handlers had imported (``IMPORTED``) when last asked."""

    folders: set[str] = field(default_factory=set)
    seen: int = field(default_factory=lambda: len(IMPORTED))

    def add(self, module: ModuleType) -> None:
        """The folder of ``module``, when it is a solution's file mutexlab loaded."""
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and module.__name__.startswith(FILE_MODULE_PREFIX):
            self.folders.add(os.path.dirname(os.path.abspath(file)))

    def since(self) -> list[ModuleType]:
        """The modules handlers imported from ``folders`` since last asked: while a run went on (a
        module a test harness imports between runs is not the solution's), kept in ``RAN``."""
        new = [m for m in IMPORTED[self.seen :] if self._mine(m)]
        self.seen = len(IMPORTED)
        RAN.extend(m for m in new if m not in RAN)
        return new

    def ran(self) -> list[ModuleType]:
        """The modules a handler of a run before imported from ``folders``: watched from the start."""
        return [m for m in RAN if self._mine(m)]

    def _mine(self, module: ModuleType) -> bool:
        return any(_under(os.path.abspath(module.__file__ or ""), root) for root in self.folders)


RAN: list[ModuleType] = []  # the modules of IMPORTED a handler imported during a run (Late.since)
