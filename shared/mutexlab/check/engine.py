"""One call that checks one configuration: the setup, the model, the reductions, the search."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..problem import Problem
from ..protocol import Protocol
from ..protocols import registry
from ..protocols.registry import Solution, build_setup, declarations
from ..reduction import CANONICAL, CLOCKS, RETIRED, SENDS, Reductions
from ..setups import ConfigError, Setup
from ..sim import hung
from . import SEARCHES
from .budget import Budget, LimitReached
from .endless import unbounded
from .model import Model
from .por import NAME as POR
from .por import PartialOrder
from .properties import invariant_for, world_invariant
from .reductions import ClockShift, Note, choose, por_note
from .result import peak_mb
from .sampling import Refused, Sampler
from .search import Result, Search


@dataclass
class CheckConfig:
    algorithm: str  # what the user named (shown, and written into scenarios): a name, module or file
    processes: int
    options: dict = field(default_factory=dict)
    seed: int = 0
    search: str = "dfs"
    max_states: int | None = None
    max_memory_mb: float | None = None
    reductions: bool = True
    reorder: bool = False
    duplicate: int = 0
    exact: bool = False  # store whole worlds instead of fingerprints (cross-checks)
    partial_order: bool = True  # with reductions: partial-order reduction too (off: to compare)
    endless: bool = False  # every process requests forever (model.py); the options ask for none
    # the solution, resolved at the command's edge (``registry.solution``); else, for a caller
    # that names it only (tests, bench), resolved once, when first asked (``resolved``)
    solution: Solution | None = None

    def resolved(self) -> Solution:
        if self.solution is None:
            self.solution = registry.solution(self.algorithm)
        return self.solution

    def setup(self) -> Setup:
        return build_setup(self.resolved(), self.processes, dict(self.options), self.seed)


def declared_for(solution: Solution | None) -> list[Reductions]:
    """The declarations that may cover a setup of ``solution`` (``registry.declarations``)."""
    return declarations(solution)


def solution_of(config: CheckConfig, setup: Setup | None) -> Solution | None:
    """The solution of ``config``; with a ready setup (a caller's own), None when what the config
    names resolves to nothing (a module the caller imported itself): its setup is checked alone."""
    if setup is None or config.solution is not None:
        return config.resolved()
    try:
        return config.resolved()
    except ConfigError:
        return None


def problem_of_setup(solution: Solution | None, setup: Setup) -> Problem | None:
    """The problem ``setup`` is checked against: the solution's; a ready setup the caller built
    under another algorithm's name (a variant of a built-in) is checked as that one, which this
    process knows by that name (None: it knows none)."""
    if solution is not None and setup.algorithm == solution.name:
        return solution.problem
    found = registry.lookup(setup.algorithm)
    return registry.problem_of(found) if found is not None else None


def build_model(
    config: CheckConfig, setup: Setup | None = None, refused: dict[str, str] | None = None
) -> Model:
    """The model of ``config`` with the reductions that apply to it, but those ``refused``
    (name → why: a sample disagreed), each sampled as the search goes (``sampling.py``)."""
    model = _build_model(config, setup, refused)
    declared = model.declared
    in_use = [n.name for n in model.notes if n.applied and n.name in (CANONICAL, CLOCKS, RETIRED, SENDS)]
    if declared is None or not in_use:
        return model
    shift = model.normalise if isinstance(model.normalise, ClockShift) else None
    model.sampler = sampler = Sampler(model, declared.parts, shift, in_use)
    if shift is not None or (SENDS in in_use and model.por is not None):
        model.normalise = sampler.normaliser(model.normalise)
    return model


def _build_model(config: CheckConfig, setup: Setup | None, refused: dict[str, str] | None) -> Model:
    if config.search not in SEARCHES:
        raise ConfigError(f"search must be one of {', '.join(SEARCHES)}, got {config.search!r}")
    if config.duplicate < 0:
        raise ConfigError(f"duplicate must be ≥ 0, got {config.duplicate}")
    solution = solution_of(config, setup)
    setup = setup if setup is not None else config.setup()
    faults = "--reorder" if config.reorder else "--duplicate" if config.duplicate else None
    choice = choose(
        setup.protocols,
        declared_for(solution),
        config.reductions,
        faults,
        config.endless,
        refused,
        setup.names,
    )
    no_snapshot = [pid for pid, p in setup.protocols.items() if type(p).snapshot is Protocol.snapshot]
    if no_snapshot and choice.canonical is None:  # a world is keyed by its processes' snapshots
        proto = setup.protocols[no_snapshot[0]]
        raise ConfigError(
            f"{setup.names[no_snapshot[0]]}: {type(proto).__name__} defines no snapshot(), which check keys "
            "a process's state by: return a hashable value of every attribute its future reads"
        )
    problem = problem_of_setup(solution, setup)
    declared = world_invariant(problem)
    model = Model(
        setup,
        reorder=config.reorder,
        duplicate=config.duplicate,
        canonical=choice.canonical,
        endless=config.endless,
        rules=declared.rules if declared is not None else None,
    )
    model.problem = problem
    model.reductions = [CANONICAL] if choice.canonical is not None else []
    model.notes = choice.notes
    model.declared = choice.declared
    if choice.clocks is not None:
        model.normalise = ClockShift(model, choice.clocks, choice.retired)
        model.reductions += [CLOCKS, RETIRED] if choice.retired is not None else [CLOCKS]
    invariant = declared.holds if declared is not None else None
    if not config.reductions:
        return model
    if not config.partial_order:
        off = "--no-partial-order"
    elif config.endless:
        off = "off with --endless: its graph has cycles, and liveness needs the full graph's"
    elif PartialOrder.applies(model, invariant, declared is not None):
        sends = choice.sends
        model.por = PartialOrder(
            model,
            declared.reads if declared is not None else None,
            sends.may_send if sends is not None else None,
            reads_receiver=sends is not None and sends.reads_receiver,
        )
        model.reductions.append(POR)
        model.notes.append(por_note(True))
        return model
    elif faults:
        off = f"off with {faults} (a message sent on such a link adds a step to the receiver's set)"
    elif model.n < 2:
        off = "one process: nothing to interleave"
    else:
        off = "the scenario's invariant does not say what it reads of a process"
    model.notes = [
        Note(SENDS, False, "partial-order reduction is off") if n.name == SENDS and n.applied else n
        for n in model.notes
    ]
    model.notes.append(por_note(False, off))
    return model


def run_check(
    config: CheckConfig,
    progress: Callable | None = None,
    setup: Setup | None = None,
    refused: dict[str, str] | None = None,
) -> tuple[Result, Model | None]:
    """Check ``config`` (``setup``: a ready setup, e.g. of a deliberately broken variant; ``refused``:
    reductions refused already, name → why, by a search of the figures on the same code).
    Raises ConfigError for an endless workload whose worlds are infinite (``endless.py``).
    The limits hold from the first step (``budget.py``): a limit reached while the model is
    built gives an incomplete result and no model."""
    budget = Budget(config.max_states, config.max_memory_mb, progress)
    model = None
    refused = dict(refused or {})  # reductions a sample refused: searched again without them
    try:
        built = setup
        if built is None:
            try:
                built = config.setup()  # (only for the files of its code; the search builds its own)
            except ConfigError:
                built = None  # the search says why
        with budget.watch(), hung.watching(built):
            while True:
                try:
                    model, result = _search(config, setup, refused, budget, progress)
                    break
                except Refused as no:
                    refused.update(no.refusals)
    except LimitReached as stop:  # outside the search (the model), or just as it ended
        result = budget.result
        result.stopped, result.complete, result.search = stop.why, False, config.search
        result.seconds = budget.report_time()
        result.peak_mb = peak_mb()
        if progress is not None:
            progress(result, True)
    return result, model


def _search(
    config: CheckConfig,
    setup: Setup | None,
    refused: dict[str, str],
    budget: Budget,
    progress: Callable | None,
) -> tuple[Model, Result]:
    model = build_model(config, setup, refused)
    if config.endless:
        budget.phase = "probing the endless workload"
        # its own tables (the search's stay), unsampled: a sample's raised twins are no run's clocks
        growing = unbounded(_build_model(config, setup, refused))
        if growing is not None:
            raise ConfigError(growing)
    invariant, _ = invariant_for(model)
    search = Search(model, invariant, config.max_states, config.max_memory_mb, config.exact, progress, budget)
    return model, search.dfs() if config.search == "dfs" else search.bfs()
