"""What a package's modules declare, collected by name: ``PROBLEM = Problem(...)`` (problems/),
``SPEC = AlgorithmSpec(...)`` (protocols/). One loop for both registries."""

from __future__ import annotations

import importlib
from typing import TypeVar

T = TypeVar("T")


def collect(modules: tuple[str, ...], package: str, attribute: str, kind: type[T], what: str) -> dict[str, T]:
    """name → the ``attribute`` of each of ``package``'s ``modules``, an instance of ``kind``
    (``what`` it is, in errors) with a ``name``; a module without one, or a name twice, is a bug
    (TypeError)."""
    found: dict[str, T] = {}
    for module in modules:
        declared = getattr(importlib.import_module(f"{package}.{module}"), attribute, None)
        if not isinstance(declared, kind):
            raise TypeError(f"{package}.{module} declares no {attribute} = {kind.__name__}(...)")
        name: str = getattr(declared, "name")  # noqa: B009 - T is any class with a name
        if name in found:
            raise TypeError(f"{what} {name!r} is declared twice")
        found[name] = declared
    return found
