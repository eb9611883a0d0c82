"""The built-in problems: one module each, ending with ``PROBLEM = Problem(...)`` (problem.py).

``PROBLEMS`` holds them by name, in the order the commands list them; ``find(name)`` is how a
solution's ``problem="kmutex"`` is read. (``protocols.registry.problem_of(spec)`` is the one
way a command finds the problem a solution solves.)

Adding a problem = one module here ending with ``PROBLEM = Problem(...)``, named in ``MODULES``.
"""

from __future__ import annotations

from .. import declared
from ..problem import Problem
from ..setups import ConfigError

MODULES = ("mutex", "kmutex", "philosophers", "bees", "elves")
# What a solution may name a problem besides its name: the family the classic algorithms had.
ALIASES = {"classic": "mutex"}


def collect(modules: tuple[str, ...], package: str = __package__) -> dict[str, Problem]:
    """name → problem of each module's ``PROBLEM``; a module without one, or a name twice, is a bug."""
    return declared.collect(modules, package, "PROBLEM", Problem, "problem")


PROBLEMS: dict[str, Problem] = collect(MODULES)


def find(name: str) -> Problem | None:
    """The built-in problem ``name`` (or an alias of it), else None."""
    return PROBLEMS.get(ALIASES.get(name, name))


def named(name: str) -> Problem:
    """``find``, or a ConfigError listing the problems."""
    found = find(name)
    if found is None:
        raise ConfigError(f"unknown problem {name!r}; choose one of: {', '.join(PROBLEMS)}")
    return found
