"""``mutexlab check``'s look before any search: a solution that builds its processes in another
interpreter (``sim/sameness.py``) is a finding of its own, exit 1, nothing searched."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..protocols import registry
from ..words import settings
from .common import print_json

if TYPE_CHECKING:
    from ..check.engine import CheckConfig

EXIT_FINDING = 1


def interpreter_bound(config: CheckConfig) -> str | None:
    """Why a solution file or module builds other processes in another interpreter
    (sim/sameness.py), or None; a built-in algorithm is not asked."""
    from ..sim import sameness

    solution = config.solution
    if solution is None or registry.SPECS.get(solution.spec.name) is solution.spec:
        return None
    setup = registry.build_setup(solution, config.processes, config.options, config.seed)
    return sameness.differs(solution.named, config.processes, config.options, config.seed, setup)


def report(args, config: CheckConfig, why: str) -> int:
    """The finding ``interpreter_bound`` made, before any search: exit 1."""
    finding = {"kind": "interpreter", "message": why, "processes": [], "steps": []}
    s = {"algorithm": config.algorithm, "processes": config.processes, "options": config.options}
    s |= {"seed": config.seed, "complete": False, "verdict": "violation", "findings": [finding]}
    if args.json:
        print_json(s)
    else:
        print(
            f"{registry.shown(config.algorithm)}: {config.processes} processes, "
            + settings(config.options)
            + f", seed {config.seed}\n"
            + f"verdict:      VIOLATION — interpreter: {why}\n"
            + "nothing searched: the worlds of one interpreter are not those of a run"
        )
    return EXIT_FINDING
