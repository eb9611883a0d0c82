"""One call that checks one configuration: the setup, the model, the reductions, the search."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..protocols.registry import build_setup
from ..setup import ConfigError, Setup
from . import SEARCHES
from .elves_reductions import applies as elves_applies
from .model import Model
from .por import NAME as POR
from .por import PartialOrder
from .properties import INVARIANT_READS, invariant_for
from .reductions import ClockShift, ElvesClockShift, RetiredClocks, canonical_for, sends_to_for
from .search import Result, Search


@dataclass
class CheckConfig:
    algorithm: str  # a registered name, or a dotted module offering make_setup
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

    def setup(self) -> Setup:
        return build_setup(self.algorithm, self.processes, dict(self.options), self.seed)


def build_model(config: CheckConfig, setup: Setup | None = None) -> Model:
    if config.search not in SEARCHES:
        raise ConfigError(f"search must be one of {', '.join(SEARCHES)}, got {config.search!r}")
    if config.duplicate < 0:
        raise ConfigError(f"duplicate must be ≥ 0, got {config.duplicate}")
    setup = setup if setup is not None else config.setup()
    canonical = canonical_for(setup.protocols.values()) if config.reductions else None
    model = Model(setup, reorder=config.reorder, duplicate=config.duplicate, canonical=canonical)
    model.reductions = ["canonical snapshots"] if canonical is not None else []
    if config.reductions and not config.reorder and not config.duplicate and ClockShift.applies(setup):
        model.normalise = (ElvesClockShift if elves_applies(setup.protocols.values()) else ClockShift)(model)
        model.reductions.append("clock-offset normalisation")
        if isinstance(model.normalise, ElvesClockShift):
            model.reductions.append("retired clocks")  # theirs, inside the shift
        elif RetiredClocks.applies(setup):
            model.normalise = RetiredClocks(model, model.normalise)
            model.reductions.append("retired clocks")
    invariant, _ = invariant_for(model.setup.algorithm)
    family = model.setup.algorithm
    if (
        config.reductions
        and config.partial_order
        and PartialOrder.applies(model, invariant, family in INVARIANT_READS)
    ):
        protocols = model.setup.protocols.values()
        model.por = PartialOrder(
            model,
            INVARIANT_READS.get(family),
            sends_to_for(protocols),
            reads_receiver=elves_applies(protocols),
        )
        model.reductions.append(POR)
    return model


def run_check(
    config: CheckConfig, progress: Callable | None = None, setup: Setup | None = None
) -> tuple[Result, Model]:
    """Check ``config`` (``setup``: a ready setup, e.g. of a deliberately broken variant)."""
    model = build_model(config, setup)
    invariant, _ = invariant_for(model.setup.algorithm)
    search = Search(model, invariant, config.max_states, config.max_memory_mb, config.exact, progress)
    result = search.dfs() if config.search == "dfs" else search.bfs()
    return result, model
