"""The ``kmutex`` problem (k-mutual exclusion): N nodes share a critical section ``cs`` of
capacity K (option ``k``, flag ``-k``/``--k``, default 2): at most K nodes inside at once.

The workload and its audit are ``mutex``'s (each node asks ``requests`` times; every request
served, no entry without a request, every node ends ``RELEASED``); the capacity K of ``cs`` by
happened-before is every trace's audit, and ``check``'s in every world.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..problem import Problem
from ..setups import ConfigError, positive_int
from ..spec import Flag
from . import mutex
from .mutex_flags import FLAGS as MUTEX_FLAGS

DEFAULT_K = 2

FLAGS = replace(
    MUTEX_FLAGS,
    command="kmutex",
    title="a k-mutual-exclusion algorithm",
    sizes="N nodes, K inside at once, M requests each",
    description="""Simulate one k-mutual-exclusion algorithm (a critical section of capacity K), audit the
    trace and measure messages per entry and response time. Exit 0 when every request is served and the trace
    is safe, 1 on a safety violation, 2 on bad arguments, 3 when the run stalls without a safety violation.""",
    flags=(
        *MUTEX_FLAGS.flags,
        Flag("k", "how many nodes may be in the critical section at once", "K", ("-k",)),
    ),
    defaults={"requests": 3, "k": DEFAULT_K},
    per_command={
        "run": {"nodes": 5},
        "explore": {"nodes": 3, "algorithm": None},  # None: --scenario names it, else --algorithm
        "compare": {"nodes": 5},
        "check": {"requests": 1},
    },
)

OPTIONS = {
    **mutex.OPTIONS,
    "k": f"how many nodes may be in the critical section at once (default {DEFAULT_K})",
}


def resources(processes: int, options: Mapping[str, Any]) -> dict[str, int]:
    k = positive_int(dict(options), "k", default=DEFAULT_K)
    if k > processes:
        raise ConfigError(f"k ({k}) must not exceed the number of nodes ({processes})")
    return {mutex.CS: k}


PROBLEM = Problem(
    "kmutex",
    "k-mutual exclusion: a critical section cs of capacity K, every request served",
    FLAGS,
    OPTIONS,
    resources,
    mutex.audit,
    defaults={"k": DEFAULT_K},
    endless="requests",
)
