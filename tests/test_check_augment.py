"""The augmented steps computed without the Tracker (check/augment.py, and its compiled twin
``_core_augment.h`` run by ``Core.advance``): each is the step ``Edges.step`` gives from the
``Tracker`` (the same augmented successor, interned alike, moved, figures reached and bypass
plan) — deliveries carrying hop counts, entries and exits included —, and the figures' search
computing them — in the compiled climb or metrics.py's own loop, on either core's ``advance`` —
gives the same figures, runs, worlds, transitions, aux ids and remembered steps as one asking
the Tracker for every step; a build charging a message its receiver awaits to the step's cause
(``MUTEXLAB_CORE_BROKEN_CHARGE``), or not counting a message's hop
(``MUTEXLAB_CORE_BROKEN_HOPS``), is caught."""

from __future__ import annotations

import pytest
from test_check_core import broken_build, compiled_or_missing
from test_check_core_step import CASES, model_of
from test_check_metrics_edges import everything

from mutexlab.check import augment as augmenting
from mutexlab.check import core, edges, metrics, metrics_loop
from mutexlab.check.augment import augment
from mutexlab.check.metrics import search_metrics

MORE = {  # requests given up (sanders), awaited replies (maekawa), a token (suzuki-kasami)
    "maekawa-3x1": ("maekawa", 3, {"requests": 1}),
    "sanders-3x1": ("sanders", 3, {"requests": 1}),
    "suzuki-kasami-3x1": ("suzuki-kasami", 3, {"requests": 1}),
}
ALL = {**CASES, **MORE}


def model(case: str):
    if case in CASES:
        return model_of(case)
    from mutexlab.check.engine import CheckConfig, build_model

    algorithm, n, options = MORE[case]
    return build_model(CheckConfig(algorithm, n, dict(options)))


@pytest.mark.parametrize("case", ALL)
def test_each_step_augmented_is_the_trackers(case, monkeypatch):
    """Every step the search asks the Tracker for: augment.py's is the same, entries and exits
    (and the figures they reach) and deliveries carrying hop counts included."""
    counted = {"asked": 0, "augmented": 0, "moves": 0, "reached": 0, "hops": 0}
    step = edges.Edges.step

    def both(self, key, world, label, nxt, t, i, entered):
        m = self.tracker.model
        got = augment(self.auxes, self.ids, key[0], self.shown_of[key[1]], t.sends, key[2], i, m.n, m.link_to)
        want = step(self, key, world, label, nxt, t, i, entered)
        counted["asked"] += 1
        if got is not None:
            counted["augmented"] += 1
            assert got == want, (label, key)
            counted["moves"] += bool(self.shown_of[key[1]][6])
            counted["reached"] += bool(got[2])
            counted["hops"] += label[0] != 1 and bool(self.auxes[key[0]][0][label[1]][0][1])
        return want

    monkeypatch.setattr(augmenting, "AUGMENT", False)
    monkeypatch.setattr(edges.Edges, "step", both)
    assert search_metrics(model(case)).complete
    assert counted["augmented"] == counted["asked"] > 0  # none left to the Tracker
    assert counted["moves"] > 0 and counted["reached"] > 0  # entries and exits, figures reached
    if case.startswith("raymond"):  # a token passed on while a handover is measured
        assert counted["hops"] > 0


def searched(case: str, monkeypatch, which: str, augmented: bool, climbed: bool = True) -> tuple:
    """Everything the figures' search gives on core ``which``'s steps, with the remembered steps
    and interned augmented parts it ends with."""
    kept = []
    real = edges.Edges.__init__

    def init(self, *a, **kw):
        real(self, *a, **kw)
        kept.append(self)

    monkeypatch.setattr(edges.Edges, "__init__", init)
    monkeypatch.setattr(metrics, "stepper", lambda m: core.stepper(m, which))
    monkeypatch.setattr(metrics_loop, "CLIMB", climbed)
    monkeypatch.setattr(augmenting, "AUGMENT", augmented)
    m = model(case)
    result = search_metrics(m)
    sampler = m.sampler
    e = kept[-1]
    return everything(result), sampler and (sampler.calls, sampler.samples), e.auxes, e._edges  # noqa: SLF001


@pytest.mark.parametrize("case", ALL)
def test_the_search_alike_with_steps_augmented(case, monkeypatch):
    compiled_or_missing()
    reference = searched(case, monkeypatch, "compiled", False)
    assert searched(case, monkeypatch, "compiled", True) == reference  # C, in the climb
    assert searched(case, monkeypatch, "compiled", True, climbed=False) == reference  # C, metrics.py's loop
    assert searched(case, monkeypatch, "python", True, climbed=False) == reference  # the twin's advance


@pytest.mark.parametrize(
    "flag, case",
    [("MUTEXLAB_CORE_BROKEN_CHARGE", "maekawa-3x1"), ("MUTEXLAB_CORE_BROKEN_HOPS", "raymond-3x1")],
)
def test_a_build_augmenting_wrongly_is_caught(flag, case, tmp_path, monkeypatch):
    """Charging a message its receiver awaits to the step's cause, or merging a message's hop
    counts without its hop: the figures move, or the run reaching one (rebuilt by the Tracker)
    leaves the worlds searched."""
    broken = broken_build(tmp_path, flag)
    reference = searched(case, monkeypatch, "compiled", False)
    monkeypatch.setattr(core, "CCore", broken.Core)
    assert searched(case, monkeypatch, "compiled", False) == reference  # unused: the same
    try:
        got = searched(case, monkeypatch, "compiled", True)
    except KeyError:  # the runs reaching a figure, walked by the Tracker, leave the worlds searched
        return
    assert got[0] != reference[0]


class Forget(dict):
    """A model's record of the requests its runs noted that keeps nothing: the Tracker runs each
    handler again (the reference)."""

    def __setitem__(self, key, value) -> None:
        pass


def noted_by(case: str, record: type[dict]) -> tuple:
    m = model(case)
    m.requested = record()
    result = search_metrics(m)
    return everything(result), result.complete


@pytest.mark.parametrize("case", ALL)
def test_requests_noted_from_the_models_own_runs_are_the_handlers(case):
    """Tracker.noted reads the requests the model's runs noted (check/model.py): the same figures,
    runs and counts as running each handler again."""
    got = noted_by(case, dict)
    assert got[1] and len(got[0]) > 1  # complete, with figures
    assert got == noted_by(case, Forget)


def test_a_record_losing_the_requests_noted_is_caught(monkeypatch):
    from mutexlab.check import model as model_module

    reference = noted_by("ricart-agrawala-3x1", Forget)
    monkeypatch.setattr(model_module, "requested", lambda effects: ())
    assert noted_by("ricart-agrawala-3x1", dict) != reference
