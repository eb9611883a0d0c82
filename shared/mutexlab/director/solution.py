"""A program as a solution of a problem: ``program_solution(problem, command)`` is an
``AlgorithmSpec`` whose every node is a ``ProgramNode`` (node.py), so ``mutexlab run PROBLEM
--node CMD`` runs the program's processes as participants over RabbitMQ, audited as usual.

The solutions are named by the dotted modules of ``solutions/`` (``mutexlab.director.solutions.
mutex``), which every service of a run resolves alike (registry.resolve); the command comes from
``NODE_COMMAND`` in the environment when the spec names none (a compose service, a participant
``mutexlab run`` starts), read when a node starts, never when a setup is built (the monitor
builds one too and runs no program). The trace names the problem's own algorithm for a problem
whose nodes act on their own (its audit judges the run) and ``program-<problem>`` for a
driven one and for one played whole (its role, pid 0, a program too; the problem's own audit
and rules judge it).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from typing import Any

from ..problems import find, named
from ..protocols import registry
from ..setups import ConfigError, Setup
from ..spec import AlgorithmSpec
from .ending import SCRIPT
from .node import CODEC, COMMAND_ENV, DWELLS, ProgramNode, start_timeout
from .problem import choices, is_driven, make_problem, played_whole

# An interpreter whose first argument is the script it runs (``python3 node.py``): a script that
# is not there is refused before the run, as a missing executable is.
INTERPRETER = re.compile(r"(?:python|pypy|node|perl|ruby|lua|tclsh|escript|bash|sh|php)[\d.]*")
MODULE = "mutexlab.director.solutions."  # + a problem's name: the solution ``run --node`` runs


def module_of(problem: str) -> str:
    """The dotted module naming ``problem``'s program solution; ConfigError when none is offered."""
    if problem not in choices():
        raise ConfigError(f"run --node takes {', '.join(choices())}, not {problem}")
    return MODULE + problem


def program_algorithm(problem: str, command: str) -> str:
    """The algorithm ``run PROBLEM --node command`` runs, with ``$NODE_COMMAND`` set in this
    process's environment (the run's services inherit it); ConfigError naming what is wrong."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise ConfigError(f"--node {command!r}: {exc}") from None
    if not argv:
        raise ConfigError("--node names no program")
    if shutil.which(argv[0]) is None:
        raise ConfigError(f"--node: {argv[0]!r} is not an executable program (nor one on PATH)")
    script = argv[1] if len(argv) > 1 and INTERPRETER.fullmatch(os.path.basename(argv[0])) else ""
    if SCRIPT.fullmatch(script) and not os.path.exists(script):  # as test says when one ends naming it
        raise ConfigError(f"--node: {argv[0]!r} is to run {argv[1]!r}: no such file (from {os.getcwd()})")
    start_timeout()  # a malformed $NODE_START_TIMEOUT: refused here, not each node's "finding"
    algorithm = module_of(problem)
    os.environ[COMMAND_ENV] = command
    return algorithm


def program_solution(problem: str, command: str | None = None) -> AlgorithmSpec:
    """The solution of ``problem`` whose nodes run ``command`` (None: ``$NODE_COMMAND`` at start)."""

    def make_setup(processes: int, options: dict[str, Any], seed: int) -> Setup:
        declared = find(problem)
        workload = (declared.endless if declared is not None else None) or "requests"
        given = {k: v for k, v in options.items() if k not in (workload, "initial_clocks")}
        requests = int(options.get(workload) or 0)
        found = make_problem(problem, processes, requests, given, seed)
        algorithm = found.algorithm or name
        init = {"seed": seed, "problem": found.name, "options": found.options}
        resource = found.resource if found.driven else ""
        kinds = tuple(d.kind for d in declared.flags.dwell) if declared is not None else ()
        dwells = (kinds[0], kinds[1]) if len(kinds) >= 2 else DWELLS
        nodes = {
            pid: ProgramNode(
                pid,
                processes,
                command,
                init,
                found.requests,
                resource,
                dwells,
                found.states,
                found.names[pid] if found.driven or found.first == 0 else None,
                frozenset(found.names) - {pid},
                frozenset(declared.finals) if declared is not None and declared.finals else None,
            )
            for pid in found.names
        }
        return Setup(
            algorithm, nodes, dict(found.names), CODEC, dict(found.capacities), dict(found.params), found.name
        )

    declared = find(problem)
    if played_whole(declared):  # its role a program too (node 0): the problem's audit judges it
        assert declared is not None
        name = f"program-{problem}"
        members = registry.members(declared.flags)
        return AlgorithmSpec(
            name,
            registry.spec(members[0]).family if members else declared.name,
            f"{problem}, every {declared.process} and the {declared.role} a program",
            make_setup,
            CODEC,
            declared.audit,
            role=declared.process,
            fixed_roles=(str(declared.role),),
            options=dict(declared.options),
            flags=declared.flags,
            problem=problem,
        )
    if not is_driven(problem):  # nodes acting on their own: a variant of the problem's registered
        # solution under its name, so its audit judges the run (``_offered`` saw one)
        flags = next(f for f in registry.families() if f.command == problem)
        template = registry.first_member(flags)
        assert template is not None  # _offered: a problem with a registered solution
        name = template.name
        return AlgorithmSpec(
            name,
            template.family,
            f"{template.summary}; every {template.role} a program",
            make_setup,
            CODEC,
            template.audit,
            role=template.role,
            options=template.options,
            flags=template.flags,
        )
    solved = named(problem)
    name = f"program-{problem}"
    first = registry.first_member(solved.flags)  # the family of its registered solutions, if any
    family = first.family if first is not None else solved.name
    return AlgorithmSpec(
        name,
        family,
        f"{problem}, every {solved.process} a program",
        make_setup,
        CODEC,
        solved.audit,
        role=solved.process,  # its processes are <role>-<pid>
        options=dict(solved.options),
        flags=solved.flags,
        problem=problem,
    )
