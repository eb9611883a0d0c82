"""``check --metrics``' augmented steps remembered (check/edges.py): the same figures, runs
reaching them, worlds and transitions as asking the ``Tracker`` at every step; a key that leaves
out what a step depends on caught."""

from __future__ import annotations

import pytest

from mutexlab.check.edges import Edges
from mutexlab.check.engine import CheckConfig, build_model
from mutexlab.check.metrics import search_metrics

ELVES = {"pins": 1, "poison": 2, "contracts": 2, "hamsters": [1, 2], "rounds": 1}
CASES = {
    "ricart-agrawala-3x1": ("ricart-agrawala", 3, {"requests": 1}),
    "suzuki-kasami-3x1": ("suzuki-kasami", 3, {"requests": 1}),
    "raymond-3x2": ("raymond", 3, {"requests": 2}),
    "maekawa-3x1": ("maekawa", 3, {"requests": 1}),
    "lamport-2x2": ("lamport", 2, {"requests": 2}),
    "bees-2": ("bees", 2, {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 2}),
    "elves-2": ("elves", 2, ELVES),
}


def model_of(case: str):
    algorithm, n, options = CASES[case]
    return build_model(CheckConfig(algorithm, n, dict(options), partial_order=False))


def everything(result) -> dict:
    """Every figure with the run and process reaching it, and the counts."""
    out: dict = {"counts": (result.states, result.transitions, result.runs, result.complete)}
    for kind, f in result.figures.items():
        for name in ("messages_min", "messages_max", "sync_max", "sync_short_max", "bypass_max"):
            e = getattr(f, name)
            out[kind, name] = None if e is None else (e.value, e.who, list(e.path))
        out[kind, "rest"] = (f.entries, f.unlinked, f.average_min, f.average_max)
    return out


@pytest.mark.parametrize("case", CASES)
def test_remembered_steps_are_the_trackers(case):
    model = model_of(case)
    remembered, asked = search_metrics(model), search_metrics(model, remember=False)
    assert remembered.complete and remembered.defined
    assert everything(remembered) == everything(asked)


def test_a_key_without_the_stepping_process_is_caught(monkeypatch):
    # a broken signature: the label's process or link left out, so a step by one elf shares
    # the augmented successor remembered for the same kind of step by the other
    model = model_of("elves-2")
    asked = everything(search_metrics(model, remember=False))
    assert everything(search_metrics(model)) == asked
    shown = Edges.shown
    monkeypatch.setattr(
        Edges,
        "shown",
        lambda self, label, sid, t: shown(self, label, sid, t)[:1] + shown(self, label, sid, t)[2:],
    )
    assert everything(search_metrics(model)) != asked
