"""The figures' search loop climbed in C (check/_core_loop.h, ``Core.climb``, driven by
check/metrics_loop.py): the same figures, runs reaching them, worlds, transitions, complete
runs and samples as metrics.py's own loop (its pure-Python twin) on the same compiled steps,
with fingerprints or whole worlds as keys, and the same stop at a limit; builds that fold a
closed world's figures wrongly (``MUTEXLAB_CORE_BROKEN_FOLD``: a step's messages left out of
the messages ahead; ``MUTEXLAB_CORE_BROKEN_WIDEN``: the fewest never lowered) are caught."""

from __future__ import annotations

import pytest
from test_check_core import broken_build, compiled_or_missing
from test_check_core_step import CASES, model_of
from test_check_metrics_edges import everything

from mutexlab.check import core, metrics, metrics_loop
from mutexlab.check.metrics import search_metrics


def figures_on(climb: bool, case: str, monkeypatch, **kw) -> tuple:
    """Everything the figures' search gives on the compiled core's steps, its loop climbed in C
    (``climb``) or metrics.py's own, with the sampler's counts and the model's interned states."""
    monkeypatch.setattr(metrics, "stepper", lambda model: core.stepper(model, "compiled"))
    monkeypatch.setattr(metrics_loop, "CLIMB", climb)
    climbed = []
    monkeypatch.setattr(metrics_loop, "climb", lambda *a: climbed.append(a[0]) or _climb(*a))
    monkeypatch.setattr(metrics, "climb", metrics_loop.climb)
    model = model_of(case)
    result = search_metrics(model, **kw)
    assert bool(climbed) == climb  # the loop ran where it was asked to
    sampler = model.sampler
    return (
        everything(result),
        result.stopped,
        sampler and (sampler.calls, sampler.samples),
        len(model.objects),
    )


_climb = metrics_loop.climb


@pytest.mark.parametrize("case", CASES)
def test_the_figures_alike_through_the_climbed_loop(case, monkeypatch):
    compiled_or_missing()
    reference = figures_on(False, case, monkeypatch)
    assert reference[0]["counts"][3] and reference[0]["counts"][2] > 0  # complete, with runs
    assert figures_on(True, case, monkeypatch) == reference


def test_whole_worlds_as_keys_and_a_stop_alike_through_the_climbed_loop(monkeypatch):
    compiled_or_missing()
    case = "ricart-agrawala-3x1"
    assert figures_on(True, case, monkeypatch, exact=True) == figures_on(False, case, monkeypatch, exact=True)
    stopped = figures_on(False, case, monkeypatch, max_states=2000)
    assert stopped[1] == "state limit 2,000 reached"
    assert figures_on(True, case, monkeypatch, max_states=2000) == stopped


@pytest.mark.parametrize(
    ("flag", "case"),
    [("MUTEXLAB_CORE_BROKEN_FOLD", "raymond-3x1"), ("MUTEXLAB_CORE_BROKEN_WIDEN", "lamport-2x2")],
)
def test_a_climb_folding_wrongly_is_caught(flag, case, tmp_path, monkeypatch):
    """A build whose close folds the figures ahead wrongly moves a figure the twin gives."""
    broken = broken_build(tmp_path, flag)
    reference = figures_on(False, case, monkeypatch)
    monkeypatch.setattr(core, "CCore", broken.Core)
    got = figures_on(True, case, monkeypatch)
    assert got[0]["counts"] == reference[0]["counts"]  # the same worlds: only the figures moved
    assert got[0] != reference[0]
