"""A solution's own modules beside its file: ``import parts`` in ``my_algo.py`` finds the
``parts.py`` next to it, as in a script (``protocols.registry`` loads each file with its
directory first on the path). They are the solution's code as much as its file is: what a handler
changes in one of their globals is every process's at once (``setups.class_state`` watches them).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
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
    before = set(sys.modules)
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        del sys.path[sys.path.index(folder)]
        if folder not in sys.path:  # a module it imports when a handler runs finds them too
            sys.path.append(folder)
        for new in set(sys.modules) - before:
            if own_module(sys.modules[new], folder):
                _BESIDE.setdefault(folder, {}).setdefault(new, sys.modules[new])
        sys.modules.update(hidden)
