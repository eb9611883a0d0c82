"""Whether a solution builds the same processes in every interpreter.

Over RabbitMQ, in compose or on a cluster every process loads the solution file anew, each in an
interpreter of its own, with a string hash seed of its own (``PYTHONHASHSEED``). A file whose
nodes read that interpreter while they are built — the order of a set or of the keys of a dict
built from one (``next(iter({"ada", "grace"}))``), random numbers drawn without a seed, the
time, the process id — builds different nodes in each: they no longer agree on what the file
says (one coordinator each, say). ``check`` and ``simulate`` run every node in one interpreter,
where they agree, and so does ``run``, whose processes are forked from one.

``differs`` builds the setup again in two fresh interpreters, each with another hash seed, and
compares every node's attributes, what its first steps do (its start and the first action that
schedules, on a copy) and the file's plain module-level values by value (a set by its
sorted members: only an order is the interpreter's): the first that differs is named. A child
that cannot tell (it fails, times out, or the options are no JSON) tells nothing: no finding.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import subprocess
import sys
from enum import Enum
from typing import Any

from ..beside import FILE_MODULE_PREFIX
from ..protocol import Schedule
from ..slots import attributes, slot_names
from .determinism import seeded

# Two hash seeds of the fresh interpreters: a set of strings ordered alike by both is ordered
# alike by nearly every seed; each also differs from a parent run with PYTHONHASHSEED=0.
SEEDS = ("1", "2")
TIMEOUT = 60.0  # seconds a child may take: one import of mutexlab and one setup
MAX_DEPTH = 6  # how deep a value is spelled out (a node holding a graph of objects stops there)
SHOWN = 80  # characters of a value a finding shows
PLAIN = (str, int, float, bool, type(None), tuple, list, dict, set, frozenset, bytes, Enum)


def _spelled(value: Any, depth: int = 0) -> str:
    """``value`` as text that does not depend on the interpreter: a set by its sorted members, an
    object by its class and attributes, no address."""
    if depth > MAX_DEPTH:
        return "…"
    if isinstance(value, Enum):  # its class and name, never ``<Role.BOSS: 2>``
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, (str, int, float, bool, bytes, type(None))):
        return repr(value)
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(_spelled(v, depth + 1) for v in value)) + "}"
    if isinstance(value, dict):  # in its order: iterating it follows that order
        return (
            "{"
            + ", ".join(f"{_spelled(k, depth + 1)}: {_spelled(v, depth + 1)}" for k, v in value.items())
            + "}"
        )
    if isinstance(value, (list, tuple)):
        return type(value).__name__ + "[" + ", ".join(_spelled(v, depth + 1) for v in value) + "]"
    if (
        (hasattr(value, "__dict__") or slot_names(type(value)))
        and not callable(value)
        and _spelled_out(type(value))
    ):
        return f"{type(value).__qualname__}({_spelled(attributes(value), depth + 1)})"  # its slots too
    return type(value).__qualname__  # a logger, a lock, a module's object: its class says enough


def _spelled_out(cls: type) -> bool:
    """Whether an object of ``cls`` is data to compare attribute by attribute: a class of the
    solution's own (its file, its modules), a dataclass, a message model, a clock — not a logger
    or a lock of the standard library, whose attributes are the interpreter's (its handlers)."""
    module = cls.__module__ or ""
    if dataclasses.is_dataclass(cls) or module.startswith(FILE_MODULE_PREFIX):
        return True
    top = module.split(".")[0]
    if top in sys.stdlib_module_names or top == "builtins":
        return False
    if top == "mutexlab":
        return any(base.__name__ in ("BaseModel", "LamportClock") for base in cls.__mro__)
    return True  # a module of the solution's own


def portrait(setup: Any) -> dict[str, str]:
    """What a setup's building decided, by name: ``<process>.<attribute>`` of every process and
    ``<module>.<NAME>`` for each plain value at the top of the solution's module."""
    shown: dict[str, str] = {}
    for pid in sorted(setup.protocols):
        proto = setup.protocols[pid]
        name = setup.names.get(pid, f"process {pid}")
        for attribute, value in sorted(attributes(proto).items()):
            shown[f"{name}'s attribute {attribute}"] = _spelled(value)
    for pid in sorted(setup.protocols):  # what each process's first steps do, on a copy
        name = setup.names.get(pid, f"process {pid}")
        shown[f"what {name}'s first steps (its start and the action it schedules) do"] = _first_steps(
            setup.protocols[pid]
        )
    module = (
        sys.modules.get(type(setup.protocols[min(setup.protocols)]).__module__) if setup.protocols else None
    )
    for key, value in sorted(vars(module).items()) if module is not None else ():
        if not key.startswith("_") and isinstance(value, PLAIN):
            shown[f"the module's {key}"] = _spelled(value)
    return shown


def _first_steps(proto: Any) -> str:
    """A copy of ``proto`` started, then taking the first local action its start schedules: its
    effects (a message by its fields) and its attributes after, spelled; what it raised, by type. A
    handler reading the order of a set of strings at its first request differs here."""
    try:
        twin = copy.deepcopy(proto)
        # the module `random` seeded, as check's probes seed it: a handler drawing from it is the
        # determinism probe's finding, with a path, not this one
        effects = list(seeded(0, twin.start))
        action = next((e.action for e in effects if type(e) is Schedule), None)
        if action is not None:
            effects += list(seeded(0, twin.on_local, action))
        return _spelled([_effect(e) for e in effects]) + " → " + _spelled(attributes(twin))
    except Exception as exc:  # noqa: BLE001 - the algorithm's error: the same in every interpreter
        return f"raised {type(exc).__name__}"


def _effect(effect: Any) -> str:
    """An effect spelled as ``_spelled`` spells a value: a message's set (and a note's) by its
    sorted members — its JSON lists them in the interpreter's order, though the value is one."""
    if not dataclasses.is_dataclass(effect) or isinstance(effect, type):
        return _spelled(effect)
    fields = (f"{f.name}={_spelled(getattr(effect, f.name))}" for f in dataclasses.fields(effect))
    return f"{type(effect).__qualname__}({', '.join(fields)})"


def _start(named: str, processes: int, options: dict[str, Any], seed: int, seed_env: str) -> Any:
    """A fresh interpreter building the setup with ``PYTHONHASHSEED=seed_env``; None if it cannot start."""
    # this interpreter's path: the child imports the same mutexlab and whatever the file imports
    path = os.pathsep.join(p for p in sys.path if p)
    env = {**os.environ, "PYTHONHASHSEED": seed_env, "PYTHONPATH": path}
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", "from mutexlab.sim.sameness import child; child()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
    except OSError:
        return None
    return child


def _portrait_of(child: Any, given: str) -> dict | None:
    """What the child printed: its portrait, or None when it failed or took too long."""
    if child is None:
        return None
    try:
        out, _ = child.communicate(given, timeout=TIMEOUT)
    except (OSError, subprocess.SubprocessError):
        child.kill()
        child.wait()
        return None
    try:
        got = json.loads(out) if child.returncode == 0 else None
    except ValueError:
        return None
    return got if isinstance(got, dict) else None


def child() -> None:
    """In a fresh interpreter: build the setup stdin describes, print its portrait as JSON."""
    given = json.loads(sys.stdin.read())
    from ..protocols import registry  # noqa: PLC0415 - only the child builds

    setup = registry.build_setup(given["named"], given["processes"], given["options"], given["seed"])
    print(json.dumps(portrait(setup)))


def _clip(text: str) -> str:
    return text if len(text) <= SHOWN else text[:SHOWN] + "…"


def _from_difference(one: str, other: str) -> tuple[str, str]:
    """Both texts from a little before where they first differ, each clipped: the difference shown."""
    at = next((i for i, (a, b) in enumerate(zip(one, other)) if a != b), min(len(one), len(other)))
    start = max(0, at - 20)
    lead = "…" if start else ""
    return lead + _clip(one[start:]), lead + _clip(other[start:])


def differs(named: str, processes: int, options: dict[str, Any], seed: int, setup: Any) -> str | None:
    """Why the solution ``named`` (a file or module: not a built-in) builds processes that depend
    on the interpreter — the first node attribute or module value that differs between this one
    and fresh ones with other hash seeds — or None."""
    try:
        given = json.dumps({"named": named, "processes": processes, "options": options, "seed": seed})
    except (TypeError, ValueError):
        return None
    children = [(seed_env, _start(named, processes, options, seed, seed_env)) for seed_env in SEEDS]
    here = portrait(setup)
    for seed_env, child in children:
        there = _portrait_of(child, given)
        if there is None:
            continue
        for key, value in here.items():
            if key in there and there[key] != value:
                for _, other in children:  # the other child's answer is not needed
                    if other is not None and other.poll() is None:
                        other.kill()
                        other.wait()
                mine, theirs = _from_difference(value, there[key])
                return (
                    f"{key} is {mine} in this interpreter and {theirs} in a fresh one "
                    f"(PYTHONHASHSEED={seed_env}): the file builds other processes in each interpreter, and "
                    "over RabbitMQ every process loads it in its own — the order of a set of strings (or of a "
                    "dict built from one), random numbers or the time read while it loads or builds its nodes"
                    + (" or takes their first steps" if "first steps" in key else "")
                )
    return None
