"""The registered algorithms: one ``AlgorithmSpec`` per protocol module (``SPEC``), collected here.

Adding an algorithm = one new module ending with ``SPEC = AlgorithmSpec(...)``, named in
``MODULES``, plus its tests. Everything that looks an algorithm up reads ``SPECS`` (or ``spec``).
"""

from __future__ import annotations

import importlib

from ..reduction import Reductions
from ..setup import ConfigError, Setup
from ..spec import AlgorithmSpec

# The protocol modules, in the order tables list their algorithms (an explicit list: discovery
# would import every module under protocols/ anyway, helpers included).
MODULES = ("bees", "elves", "lamport", "ricart_agrawala", "maekawa", "sanders", "suzuki_kasami", "raymond")


def collect(modules: tuple[str, ...], package: str = __package__) -> dict[str, AlgorithmSpec]:
    """name → spec of each module's ``SPEC``; a module without one, or a name twice, is a bug."""
    specs: dict[str, AlgorithmSpec] = {}
    for name in modules:
        found = getattr(importlib.import_module(f"{package}.{name}"), "SPEC", None)
        if not isinstance(found, AlgorithmSpec):
            raise TypeError(f"{package}.{name} declares no SPEC = AlgorithmSpec(...)")
        if found.name in specs:
            raise TypeError(f"algorithm {found.name!r} is declared twice")
        specs[found.name] = found
    return specs


SPECS: dict[str, AlgorithmSpec] = collect(MODULES)
# The classic single-resource algorithms (resource ``cs``), in the order tables list them.
CLASSIC = [name for name, s in SPECS.items() if s.family == "classic"]


def spec(name: str) -> AlgorithmSpec:
    if name not in SPECS:
        raise ConfigError(f"unknown algorithm {name!r}; choose one of: {', '.join(SPECS)}")
    return SPECS[name]


def make_setup(name: str, processes: int, options: dict | None = None, seed: int = 0) -> Setup:
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise ConfigError(f"the number of processes must be a whole number ≥ 1, got {processes!r}")
    return spec(name).make_setup(processes, dict(options or {}), seed)


# -- registered names, or plugin modules (dotted paths: experiments, the tests' broken variants) --
def spec_of(algorithm: str) -> AlgorithmSpec | None:
    """The spec of a registered name, or of a plugin module (dotted path) that declares ``SPEC``
    or names a registered ``FAMILY``; None when neither says (the plugin is then a classic node)."""
    if algorithm in SPECS:
        return SPECS[algorithm]
    if "." not in algorithm:
        return None
    module = _plugin(algorithm)
    found = getattr(module, "SPEC", None)
    return found if isinstance(found, AlgorithmSpec) else SPECS.get(getattr(module, "FAMILY", ""))


def _plugin(algorithm: str):
    try:
        return importlib.import_module(algorithm)
    except ImportError as exc:
        raise ConfigError(f"algorithm module {algorithm!r} cannot be imported: {exc}") from None


def build_setup(algorithm: str, processes: int, options: dict, seed: int) -> Setup:
    """``make_setup`` by registered name, or by a dotted module path offering ``make_setup``
    (for experiments and for the tests' deliberately broken variants)."""
    if algorithm in SPECS:
        return make_setup(algorithm, processes, options, seed)
    if "." in algorithm and all(part.isidentifier() for part in algorithm.split(".")):
        module = _plugin(algorithm)
        if not hasattr(module, "make_setup"):
            raise ConfigError(f"module {algorithm!r} offers no make_setup")
        return module.make_setup(processes, dict(options), seed)
    return make_setup(algorithm, processes, options, seed)  # raises the clear "unknown algorithm"


def family_of(algorithm: str) -> str:
    """The family that decides the roles: the name itself, or a plugin module's ``FAMILY``
    (a deliberately broken bee module says ``FAMILY = "bees"``)."""
    if algorithm in SPECS or "." not in algorithm:
        return algorithm
    return getattr(_plugin(algorithm), "FAMILY", algorithm)


def declarations(algorithm: str) -> list[Reductions]:
    """Every reduction declaration that may cover a setup of ``algorithm`` (``mutexlab.reduction``):
    its spec's (a plugin module's own ``SPEC``, or its ``FAMILY``'s) first, then every registered
    one. Which applies is decided by the processes' exact classes alone (``Reductions.covers``)."""
    found = [spec_of(algorithm), *SPECS.values()]
    return [d for d in (s.declared_reductions() for s in found if s is not None) if d is not None]
