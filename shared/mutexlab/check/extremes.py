"""The figures ``check --metrics`` gives (metrics.py): per resource, each extreme with a run
reaching it, and the search's result."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Extreme:
    value: int
    path: list[tuple]  # the step labels of a run reaching it
    who: str = ""  # the process concerned


@dataclass
class Figures:
    """The figures of one resource."""

    messages_min: Extreme | None = None
    messages_max: Extreme | None = None
    sync_max: Extreme | None = None
    sync_short_max: Extreme | None = None  # the shortest causal chain's hops, at its worst
    bypass_max: Extreme | None = None
    average_min: float | None = None  # every message of a complete run ÷ its entries, fewest
    average_max: float | None = None
    entries: int = 0  # charges taken (once per edge of the augmented graph that closes one)
    unlinked: int = 0  # entries after a waited-on exit that no causal chain leads to

    def as_dict(self) -> dict:
        def val(e: Extreme | None):
            return None if e is None else e.value

        return {
            "messages_per_entry": {"min": val(self.messages_min), "max": val(self.messages_max)},
            "messages_per_entry_run_average": {"min": _r(self.average_min), "max": _r(self.average_max)},
            "sync_delay": {"max": val(self.sync_max), "max_shortest_chain": val(self.sync_short_max)},
            "bypass": {"max": val(self.bypass_max)},
        }


@dataclass
class MetricsResult:
    figures: dict[str, Figures] = field(default_factory=dict)  # resource → figures
    states: int = 0
    transitions: int = 0
    seconds: float = 0.0
    complete: bool = False
    stopped: str | None = None
    defined: bool = True  # False: the protocol states no requests
    runs: int = 0  # complete runs (final worlds reached, counted once per augmented world)
    reductions: list[str] = field(default_factory=list)  # those the search ran with
    exact: bool = False  # whole augmented worlds stored, else 64-bit fingerprints

    def collision_bound(self) -> float:
        """A bound on the probability that two of the stored worlds' fingerprints collided."""
        return 0.0 if self.exact else self.states**2 / 2**65

    def as_dict(self) -> dict:
        out: dict = {
            "complete": self.complete,
            "stopped": self.stopped,
            "states": self.states,
            "transitions": self.transitions,
            "seconds": round(self.seconds, 3),
            "reductions": self.reductions,
            "fingerprints": not self.exact,
            "collision_bound": float(f"{self.collision_bound():.1g}"),
        }
        if not self.complete:
            return out  # no figure is proven
        if not self.defined:
            out["why"] = (
                "the protocol states no requests (neither Note 'request' nor wants()): no figures are defined"
            )
            return out
        out["resources"] = {r: f.as_dict() for r, f in sorted(self.figures.items())}
        if len(self.figures) == 1:
            out |= next(iter(self.figures.values())).as_dict()
        return out


def flat(acc: dict) -> tuple:
    """``acc`` (key → [fewest, most]) as ((key, fewest, most), ...) in key order."""
    if len(acc) == 1:
        for k, (lo, hi) in acc.items():
            return ((k, lo, hi),)
    return tuple(sorted((k, lo, hi) for k, (lo, hi) in acc.items()))


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)
