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


def test_a_bypass_plan_naming_a_process_out_of_range_is_refused(monkeypatch):
    """A remembered bypass plan handed in from Python whose process index is past the last
    process raises an IndexError naming it, never a write past the loop's figures (the old
    core wrote one slot past them, silently)."""
    compiled_or_missing()
    from mutexlab.check import augment, edges

    monkeypatch.setattr(augment, "AUGMENT", False)  # every step from the Tracker: Edges.step, bent
    step = edges.Edges.step

    def bent(self, *a):
        got = step(self, *a)
        if got[3] is None:
            return got
        i, plan, opens = got[3]
        return (*got[:3], (i, ((3, -1, 0), *plan), opens))  # Raymond N=3: processes 0-2

    monkeypatch.setattr(edges.Edges, "step", bent)
    with pytest.raises(IndexError, match=r"bypass plan's process 3 out of range \(3 processes\)"):
        figures_on(True, "raymond-3x1", monkeypatch)


class FinalAsList:
    """A compiled core whose ``climb`` hands its ``final`` hook's answer on as a list."""

    def __init__(self, core) -> None:
        self.core = core

    def __getattr__(self, name: str):
        return getattr(self.core, name)

    def climb(self, *args):
        *head, hooks = args
        final = hooks[5]

        def listed(world, aux):
            got = final(world, aux)
            return None if got is None else list(got)

        return self.core.climb(*head, (*hooks[:5], listed))


def test_a_final_hook_answering_no_tuple_is_an_error(monkeypatch):
    """The loop's ``final`` hook answers the live requests' keys as a tuple, or None: anything
    else is a TypeError naming the hook and what it returned (the old core took a list for
    "no live request" and left their charges out of the figures)."""
    compiled_or_missing()
    stepper = core.stepper

    def wrapped(model, which):
        got, tables = stepper(model, which)
        return FinalAsList(got), tables

    monkeypatch.setattr(core, "stepper", wrapped)
    with pytest.raises(TypeError, match=r"final hook returned \[.*\] \(list\)"):
        figures_on(True, "lamport-2x2", monkeypatch)
