"""The figures' remembered steps looked up in C (check/_core_figures.h, ``PyCore.advance`` its
twin): the figures' search gives the same figures, runs reaching them, worlds, transitions and
samples through either core's ``advance`` as through its own step and lookups in Python, with
fingerprints or whole worlds as keys; a build whose ``advance`` keys a world without its history
(``MUTEXLAB_CORE_BROKEN_KEY``) is caught. (A lookup that misses is always safe: the search
computes what was missed; only a wrong hit can move a figure.)"""

from __future__ import annotations

import pytest
from test_check_core import broken_build, compiled_or_missing
from test_check_core_step import CASES, model_of
from test_check_metrics_edges import everything

from mutexlab.check import augment as augmenting
from mutexlab.check import core, metrics
from mutexlab.check.metrics import search_metrics


def figures_on(which: str | None, case: str, monkeypatch, **kw) -> tuple:
    """Everything the figures' search gives on ``which`` core's ``advance`` (None: no core, the
    search's own step and lookups), with the model's sampler's counts and interned states."""
    monkeypatch.setattr(
        metrics, "stepper", lambda model: None if which is None else core.stepper(model, which)
    )
    model = model_of(case)
    result = search_metrics(model, **kw)
    sampler = model.sampler
    return everything(result), sampler and (sampler.calls, sampler.samples), len(model.objects)


@pytest.mark.parametrize("case", CASES)
def test_the_figures_alike_through_either_cores_advance(case, monkeypatch):
    compiled_or_missing()
    reference = figures_on(None, case, monkeypatch)
    assert reference[0]["counts"][3]  # complete
    assert figures_on("python", case, monkeypatch) == reference
    assert figures_on("compiled", case, monkeypatch) == reference


def test_whole_worlds_as_keys_alike_through_advance(monkeypatch):
    # --exact: the key is the pair itself, not its hash (advance calls the search's keyof)
    compiled_or_missing()
    case = "ricart-agrawala-3x1"
    reference = figures_on(None, case, monkeypatch, exact=True)
    assert figures_on("compiled", case, monkeypatch, exact=True) == reference
    assert figures_on("python", case, monkeypatch, exact=True) == reference


def test_advance_whose_key_forgets_the_histories_is_caught(tmp_path, monkeypatch):
    """An ``advance`` that keys the augmented world by the model's world alone
    (``MUTEXLAB_CORE_BROKEN_KEY``) merges worlds whose histories differ, and keys them apart
    from the search's own lookups after a miss: the worlds counted part (Raymond N=3 × 1: 316,
    not 235, with every miss computed in Python). With the steps entering nothing computed in C
    too (check/augment.py), the runs reaching a figure, walked by the Tracker, leave the worlds
    the search keyed."""
    broken = broken_build(tmp_path, "MUTEXLAB_CORE_BROKEN_KEY")
    case = "raymond-3x1"
    reference = figures_on(None, case, monkeypatch)
    monkeypatch.setattr(core, "CCore", broken.Core)
    with pytest.raises(KeyError):
        figures_on("compiled", case, monkeypatch)
    monkeypatch.setattr(augmenting, "AUGMENT", False)
    got = figures_on("compiled", case, monkeypatch)
    assert got[0]["counts"] != reference[0]["counts"]
