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


def own_module(module: ModuleType, root: str) -> bool:
    """Whether ``module`` is a file of the user's beside the solution's (in ``root`` or below it),
    neither mutexlab's nor an installed package's."""
    file = getattr(module, "__file__", None)
    if not isinstance(file, str) or module.__name__.split(".")[0] == "mutexlab":
        return False
    path = os.path.abspath(file)
    installed = f"{os.sep}site-packages{os.sep}" in path or f"{os.sep}dist-packages{os.sep}" in path
    return not installed and _under(path, root)


def beside(module: ModuleType) -> list[ModuleType]:
    """The user's own modules that ``module`` (a solution's file) reaches through its globals — a
    module imported by name, or the module of a function, class or object it imported from one —
    and theirs in turn: each a file in the directory of ``module``'s file or below it."""
    file = getattr(module, "__file__", None)
    if not isinstance(file, str):
        return []
    root = os.path.dirname(os.path.abspath(file))
    seen, todo, found = {module.__name__}, [module], []
    while todo:
        for value in list(vars(todo.pop()).values()):
            held = value if isinstance(value, ModuleType) else sys.modules.get(_module_of(value))
            if held is None or held.__name__ in seen or not own_module(held, root):
                continue
            seen.add(held.__name__)
            found.append(held)
            todo.append(held)
    return found


def _module_of(value: object) -> str:
    """The name of the module that defines ``value`` (a function, a class; an object: its class's)."""
    name = getattr(value, "__module__", None) if isinstance(value, type) or callable(value) else None
    if not isinstance(name, str):
        name = getattr(type(value), "__module__", None)
    return name if isinstance(name, str) else ""


# The modules each loaded file imported from beside it: name → the directory they came from.
_BESIDE: dict[str, str] = {}


@contextmanager
def importing_beside(folder: str) -> Iterator[None]:
    """The modules beside a file import as in a script: its ``folder`` first on the path while it
    loads, and another file's modules of the same names (``common.py`` beside each of two files
    ``compare`` runs) out of the way, so each file gets its own (the first loaded keeps the name)."""
    hidden = {n: sys.modules.pop(n) for n, d in list(_BESIDE.items()) if d != folder and n in sys.modules}
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
                _BESIDE.setdefault(new, folder)
        sys.modules.update(hidden)
