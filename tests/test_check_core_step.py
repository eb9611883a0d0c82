"""The search core's single steps for ``check --metrics`` (check/_core_step.h, ``PyCore.successor``
and ``PyCore.steps`` its twins, ``core.stepper``): every step of the model's worlds gives the
model's own successor on both cores, normalised as the model's, and every world the model's own
steps in its order; the figures' search on the compiled core gives the same figures, runs,
worlds and samples as its own inlined step; a build that leaves the normalisation out, or a
world's last step, is caught."""

from __future__ import annotations

import pytest
from test_check_core import broken_build, compiled_or_missing
from test_check_metrics_edges import everything

from mutexlab.check import core, metrics
from mutexlab.check.engine import CheckConfig, build_model
from mutexlab.check.metrics import search_metrics

ELVES = {"pins": 1, "poison": 2, "contracts": 2, "hamsters": [1, 2], "rounds": 1}
CASES = {  # the clock shift with retired clocks, with dead messages, alone; no normalisation
    "ricart-agrawala-3x1": ("ricart-agrawala", 3, {"requests": 1}),
    "elves-2": ("elves", 2, ELVES),
    "lamport-2x2": ("lamport", 2, {"requests": 2}),
    "raymond-3x1": ("raymond", 3, {"requests": 1}),
}


def model_of(case: str):
    algorithm, n, options = CASES[case]
    return build_model(CheckConfig(algorithm, n, dict(options)))


def mismatches(model, step, limit: int = 3000) -> list:
    """The steps (world, label, the model's successor, ``step``'s) where ``step`` parts from
    the model's own, over the first ``limit`` worlds reached breadth-first."""
    out, seen, todo = [], set(), [model.initial()[0]]
    while todo and len(seen) < limit:
        world = todo.pop(0)
        for label in model.steps(world):
            want = model.step(world, label)[0]
            got = step(world, label)
            if got != want:
                out.append((world, label, want, got))
            if want is not None and want not in seen:
                seen.add(want)
                todo.append(want)
    return out


def steps_parting(model, steps, limit: int = 3000) -> list:
    """The worlds (world, the model's steps, ``steps``') where ``steps`` lists other labels, or
    the same in another order, than the model's own, over the first ``limit`` worlds reached."""
    out, seen, todo = [], set(), [model.initial()[0]]
    while todo and len(seen) < limit:
        world = todo.pop(0)
        want = model.steps(world)
        got = steps(world)
        if got != want:
            out.append((world, want, got))
        for label in want:
            nxt = model.step(world, label)[0]
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return out


@pytest.mark.parametrize("which", ["python", "compiled"])
@pytest.mark.parametrize("case", CASES)
def test_a_cores_steps_are_the_models_in_its_order(case, which):
    if which == "compiled":
        compiled_or_missing()
    model = model_of(case)
    stepping = core.stepper(model, which)
    assert stepping is not None
    assert steps_parting(model, stepping[0].steps) == []


@pytest.mark.parametrize("which", ["python", "compiled"])
@pytest.mark.parametrize("case", CASES)
def test_a_cores_step_is_the_models(case, which):
    if which == "compiled":
        compiled_or_missing()
    model = model_of(case)
    stepping = core.stepper(model, which)
    assert stepping is not None
    assert mismatches(model, stepping[0].successor) == []


@pytest.mark.parametrize("case", CASES)
def test_the_figures_alike_on_the_compiled_step(case, monkeypatch):
    compiled_or_missing()
    seen = []
    for which in ("python", "compiled"):  # python: the search's own inlined step
        monkeypatch.setattr(core, "core_name", lambda which=which: which)
        model = model_of(case)
        assert (metrics.stepper(model) is None) == (which == "python")
        result = search_metrics(model)
        sampler = model.sampler
        seen.append((everything(result), sampler and (sampler.calls, sampler.samples), len(model.objects)))
    assert seen[0] == seen[1]


def test_a_step_without_the_normalisation_is_caught(tmp_path, monkeypatch):
    """The compiled core built without the normalisation in its step
    (``MUTEXLAB_CORE_BROKEN_STEP``) parts from the model's successors where the clock shift
    applies, and nowhere else."""
    broken = broken_build(tmp_path, "MUTEXLAB_CORE_BROKEN_STEP")
    monkeypatch.setattr(core, "CCore", broken.Core)
    shifted = model_of("ricart-agrawala-3x1")
    assert mismatches(shifted, core.stepper(shifted, "compiled")[0].successor)
    plain = model_of("raymond-3x1")
    assert mismatches(plain, core.stepper(plain, "compiled")[0].successor) == []


def test_a_world_listed_without_its_last_step_is_caught(tmp_path, monkeypatch):
    """The compiled core built to leave a world's last step out of ``steps``
    (``MUTEXLAB_CORE_BROKEN_STEPS``) parts from the model's steps, and the figures' search on it
    from the figures on the model's own steps."""
    broken = broken_build(tmp_path, "MUTEXLAB_CORE_BROKEN_STEPS")
    monkeypatch.setattr(core, "CCore", broken.Core)
    model = model_of("raymond-3x1")
    assert steps_parting(model, core.stepper(model, "compiled")[0].steps)
    monkeypatch.setattr(core, "core_name", lambda: "compiled")
    got = everything(search_metrics(model_of("raymond-3x1")))
    monkeypatch.setattr(core, "core_name", lambda: "python")
    assert got != everything(search_metrics(model_of("raymond-3x1")))
