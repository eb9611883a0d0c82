"""The problems a program can be tested on: mutexlab's registered families, read from the registry.

A problem gives what the run header says (process names, capacities, params, and the algorithm
whose invariants the audit applies) and how the workload goes: ``driven`` problems (a declared
problem with one resource, asked for by ``request`` lines and left on ``release`` lines; the
trace names no algorithm, so the audit's generic checks apply beside the capacity) or nodes that
act on their own (a family with a registered algorithm; its audit then judges the whole run:
eggs, deaths ...). Problems with several resources, or a fixed role beside the nodes (a
coordinator outside 1..N), are not offered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..protocols import registry
from ..setups import ConfigError

MAX_NODES = 100  # processes one test starts at once


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

    @property
    def resource(self) -> str:
        """The resource a driven problem's nodes ask for (its one declared resource)."""
        return next(iter(self.capacities))

    def header(self, program: list[str]) -> dict[str, Any]:
        run: dict[str, Any] = {"event": "run", "pid": "run"}
        if self.algorithm is not None:
            run["algorithm"] = self.algorithm
        return run | {
            "problem": self.name,
            "program": program,
            "processes": {str(p): n for p, n in sorted(self.names.items())},
            "capacities": self.capacities,
            "params": self.params,
        }


def choices() -> list[str]:
    return [flags.command for flags in registry.families() if _offered(flags)]


def driven(declared: Any) -> bool:
    """``declared`` (a declared problem, or None) is driven: its workload is ``requests`` of its
    one resource, which the director asks for and releases."""
    if declared is None or "requests" not in declared.options:
        return False
    try:
        return len(declared.capacities(2, {}) or {}) == 1
    except ConfigError:
        return False


def is_driven(name: str) -> bool:
    """The problem called ``name`` is driven (``driven``)."""
    flags = next((f for f in registry.families() if f.command == name), None)
    return flags is not None and driven(registry.presented(flags))


def _offered(flags) -> bool:
    """A problem whose processes are all nodes: a driven one, or one with a registered solution
    and no fixed role (its nodes act on their own, and that solution's audit judges them)."""
    if driven(registry.presented(flags)):
        return True
    members = registry.members(flags)
    return bool(members) and not registry.spec(members[0]).fixed_roles


def make_problem(name: str, nodes: int, requests: int, options: dict[str, Any], seed: int) -> Problem:
    """The problem ``name`` for ``nodes`` nodes; ConfigError naming what is wrong."""
    flags = next((f for f in registry.families() if f.command == name), None)
    if flags is None or not _offered(flags):
        raise ConfigError(f"unknown problem {name!r}; test takes {', '.join(choices())}")
    if not 1 <= nodes <= MAX_NODES or requests < 0:
        raise ConfigError(f"--nodes must be 1 to {MAX_NODES} and --requests at least 0")
    declared = registry.presented(flags)
    if declared is not None and driven(declared):  # asked to request and to release its one resource
        if "requests" in options:
            raise ConfigError("give the requests per node with --requests, not as an option")
        # Nodes that ask on their own (no requests) may be told how often each must enter.
        unknown = sorted(set(options) - set(declared.options) - ({"entries"} if requests == 0 else set()))
        if unknown:
            raise ConfigError(
                f"{name} takes no option {', '.join(unknown)} (options: {', '.join(declared.options)})"
            )
        given = {**declared.defaults, **options}
        capacities = declared.capacities(nodes, given) or {}
        resource = next(iter(capacities))
        params = {"nodes": nodes, "requests": requests, **given}
        node_options = {"requests": requests, "resource": resource, **given}
        # No requests: the nodes ask on their own (MPI ranks, docs/mpi.md), nothing is sent them.
        return Problem(
            name,
            nodes,
            requests,
            requests > 0,
            None,
            _names(nodes),
            capacities,
            params,
            node_options,
            dict(options),
        )
    spec = registry.spec(registry.members(flags)[0])
    setup = registry.make_setup(spec.name, nodes, dict(options), seed)
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


def _names(nodes: int) -> dict[int, str]:
    return {pid: f"node-{pid}" for pid in range(1, nodes + 1)}
