"""The problems a program can be tested on: mutexlab's registered families, read from the registry.

A problem gives what the run header says (process names, capacities, params, and the algorithm
whose invariants the audit applies) and how the workload goes: ``driven`` problems (a declared
problem whose workload asks for one resource at a time — its ``requested`` one, or its only one —
asked for by ``request`` lines and left on ``release`` lines; the header names the problem, so
the audit applies its own checks and rules beside the capacities) or nodes that act on their own
(a family with a registered algorithm; its audit then judges the whole run, by its own rules).
A declared problem with a ``role`` beside its N processes and a workload it draws itself (``draw``)
(a coordinator and its plan) is played whole by the program: the role is node 0, the
processes nodes 1..N, every node's ``init`` carries the drawn parameters, and the header names
the problem and no algorithm, so the problem's own audit and rules judge the run (not a
solution's message checks). With the option ``drawn_by_program`` (``test --mpi``: an MPI program
never sees ``init``) the role draws what the problem lets it (``reported``: its plan, say)
itself: left out of the header and of ``init``, read by the audit from what the role reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..protocols import registry
from ..setups import ConfigError
from ..words import closest

MAX_NODES = 100  # processes one test starts at once
# The option saying that the program's role draws its workload itself (``Problem.reported``):
# set by ``test --mpi`` (an MPI program never sees ``init``), kept in a scenario's options.
DRAWN_BY_PROGRAM = "drawn_by_program"
CLOCKS = "initial_clocks"  # the built-in algorithms' option no program takes (refused: make_problem)


@dataclass(frozen=True)
class Problem:
    name: str  # the family's command name
    nodes: int
    requests: int  # per node (driven problems)
    driven: bool
    algorithm: str | None  # the header's algorithm: None = the generic audit (requests served)
    names: dict[int, str]
    capacities: dict[str, int]
    params: dict[str, Any]
    options: dict[str, Any]  # what a node's init carries
    given: dict[str, Any]  # the options as the user gave them (what a scenario records)
    resource: str = ""  # what a driven problem's nodes ask for (its workload's resource)
    states: tuple[str, str, str] = ("RELEASED", "WANTED", "HELD")  # a driven node's: idle, waiting, holding
    first: int = 1  # the lowest node id: 0 when the problem's role (node 0) is a program too
    messages: Mapping[str, Mapping[str, type]] = field(default_factory=dict)  # what the audit reads of them

    def header(self, program: list[str], duplicates: bool = False) -> dict[str, Any]:
        """The run header; ``duplicates``: the run may deliver a message twice (``--duplicate``)."""
        run: dict[str, Any] = {"event": "run", "pid": "run"}
        if self.algorithm is not None:
            run["algorithm"] = self.algorithm
        return run | {
            "problem": self.name,
            "program": program,
            "processes": {str(p): n for p, n in sorted(self.names.items())},
            "capacities": self.capacities,
            "params": self.params,
            **({"duplicates": True} if duplicates else {}),
        }


def choices() -> list[str]:
    return [flags.command for flags in registry.families() if _offered(flags)]


def requested(declared: Any) -> str | None:
    """The resource the workload of ``declared`` (a declared problem, or None) asks for, when the
    director can drive it: a workload option (its ``endless`` one: ``requests``, ``meals``) counts
    the requests, each of one resource (its ``requested`` one, or the only one declared)."""
    if declared is None or declared.endless is None or declared.endless not in declared.options:
        return None
    if declared.requested is not None:
        return str(declared.requested)
    try:
        capacities = declared.capacities(2, {}) or {}
    except ConfigError:
        return None
    return next(iter(capacities)) if len(capacities) == 1 else None


def driven(declared: Any) -> bool:
    """``declared`` (a declared problem, or None) is driven: its workload is requests of one
    resource, which the director asks for and releases."""
    return requested(declared) is not None


def is_driven(name: str) -> bool:
    """The problem called ``name`` is driven (``driven``)."""
    flags = next((f for f in registry.families() if f.command == name), None)
    return flags is not None and driven(registry.presented(flags))


def played_whole(declared: Any) -> bool:
    """``declared`` (a declared problem, or None) has a role beside its processes and draws its
    own workload: a program plays every process, the role as node 0 (``role``, ``draw``)."""
    return declared is not None and declared.role is not None and declared.draw is not None


def _offered(flags) -> bool:
    """A problem whose processes are all nodes: a driven one, one played whole (its role a node
    too), or one with a registered solution and no fixed role (its nodes act on their own, and
    that solution's audit judges them)."""
    declared = registry.presented(flags)
    if driven(declared) or played_whole(declared):
        return True
    first = registry.first_member(flags)
    return first is not None and not first.fixed_roles


def has_role(name: str) -> bool:
    """The problem called ``name`` has a role beside its processes that a program plays too
    (node 0, ``played_whole``): an MPI program's rank 0."""
    flags = next((f for f in registry.families() if f.command == name), None)
    return flags is not None and played_whole(registry.presented(flags))


def make_problem(name: str, nodes: int, requests: int, options: dict[str, Any], seed: int) -> Problem:
    """The problem ``name`` for ``nodes`` nodes; ConfigError naming what is wrong."""
    flags = next((f for f in registry.families() if f.command == name), None)
    if flags is None or not _offered(flags):
        raise ConfigError(f"unknown problem {name!r}; test takes {', '.join(choices())}")
    if not 1 <= nodes <= MAX_NODES or requests < 0:
        raise ConfigError(f"--nodes must be 1 to {MAX_NODES} and --requests at least 0")
    if CLOCKS in options:  # the built-in algorithms' option: a program keeps its own clocks
        raise ConfigError(
            f"{name} takes no option {CLOCKS} for a program: it sets the Lamport clocks of mutexlab's "
            "own algorithms; "
            "a program keeps its own clock (start it where you like)"
        )
    declared = registry.presented(flags)
    resource = requested(declared)
    if declared is not None and resource is not None:  # asked to request and to release its resource
        workload, size = str(declared.endless), declared.flags.flags[0].key  # requests, nodes (or its own)
        if workload in options or size in options:
            raise ConfigError(
                f"give the {workload} per node with --requests and the {size} with --nodes, not as options"
            )
        # Nodes that ask on their own (no requests) may be told how often each must enter.
        unknown = sorted(set(options) - set(declared.options) - ({"entries"} if requests == 0 else set()))
        if unknown:  # requests, nodes and initial_clocks are refused above: not listed as options
            takes = [o for o in declared.options if o not in (workload, size, CLOCKS)]
            raise ConfigError(
                f"{name} takes no option {', '.join(unknown)} (options: {', '.join(takes)})"
                + closest(unknown, takes)
            )
        given = {**declared.defaults, **options}
        capacities = declared.capacities(nodes, given) or {}
        params: dict[str, Any] = {size: nodes, workload: requests, **given}
        node_options: dict[str, Any] = {workload: requests, "resource": resource, **given}
        names = {pid: f"{declared.process}-{pid}" for pid in range(1, nodes + 1)}
        # No requests: the nodes ask on their own (MPI ranks, docs/mpi.md), nothing is sent them.
        return Problem(
            name,
            nodes,
            requests,
            requests > 0,
            None,
            names,
            capacities,
            params,
            node_options,
            dict(options),
            resource,
            declared.states,
        )
    if played_whole(declared):
        return _whole(name, declared, nodes, options, seed)
    spec = registry.first_member(flags)
    assert spec is not None  # _offered: a problem with a registered solution
    setup = registry.make_setup(spec, nodes, dict(options), seed)
    params = dict(setup.params)
    node_options = {k: v for k, v in params.items() if k != "initial_clocks"}
    return Problem(
        name,
        nodes,
        0,
        False,
        spec.name,
        dict(setup.names),
        dict(setup.capacities),
        params,
        node_options,
        dict(options),
    )


def _whole(name: str, declared: Any, nodes: int, options: dict[str, Any], seed: int) -> Problem:
    """``declared`` played whole: its role node 0, its processes 1..``nodes`` (``played_whole``)."""
    size = declared.flags.flags[0].key
    if size in options:
        raise ConfigError(f"give the {size} with --nodes, not as an option")
    own = options.get(DRAWN_BY_PROGRAM, False)
    if not isinstance(own, bool) or (own and not declared.reported):
        raise ConfigError(
            f"option {DRAWN_BY_PROGRAM} is true or false"
            + (f" ({name}'s {declared.role} draws nothing of its own)" if not declared.reported else "")
        )
    town = {k: v for k, v in options.items() if k != DRAWN_BY_PROGRAM}
    unknown = sorted(set(town) - set(declared.options))
    if unknown:
        raise ConfigError(
            f"{name} takes no option {', '.join(unknown)} (options: {', '.join(declared.options)})"
        )
    params = dict(declared.draw(nodes, town, seed))  # ConfigError: what could never finish
    if own:  # the role draws these itself and reports them: the audit reads them from the trace
        params = {k: v for k, v in params.items() if k not in declared.reported}
    capacities = declared.capacities(nodes, town) or {}
    names = {0: str(declared.role)} | {pid: f"{declared.process}-{pid}" for pid in range(1, nodes + 1)}
    node_options = {k: v for k, v in params.items() if k != "seed"}  # init carries the seed itself
    return Problem(
        name, nodes, 0, False, None, names, capacities, params, node_options, dict(options), first=0,
        messages=declared.messages,
    )  # fmt: skip
