"""What a large search keeps once (issue 41): the partial-order reduction's answers live in the
search core's tables alone, and the remembered transitions share their equal parts."""

from __future__ import annotations

import pytest

from mutexlab.check.core import CORE_ENV
from mutexlab.check.engine import CheckConfig, run_check


@pytest.fixture(params=["compiled", "python"])
def core(request, monkeypatch):
    if request.param == "python":
        monkeypatch.setenv(CORE_ENV, "python")
    return request.param


def _checked():
    result, model = run_check(CheckConfig("ricart-agrawala", 3, {"requests": 1}))
    assert result.complete and result.states == 1690
    return model


def test_the_cores_ask_the_partial_order_without_it_keeping_a_copy(core):
    model = _checked()
    assert model.por is not None and model.por.reduced > 0
    # before: one (state, input) → bool entry per answer the core asked (hundreds here); its
    # ``_may`` keeps the sampler's own questions (sampling.py), a bounded few
    assert model.por._visible == {}  # noqa: SLF001


def test_equal_parts_of_remembered_transitions_are_one_object(core):
    model = _checked()
    kept = [t for table in model.trans for t in table.values()]
    sends = [t.sends for t in kept if t.sends]
    assert len(sends) > 100
    # before: each transition its own tuples, as many objects as transitions that send
    assert len({id(s) for s in sends}) == len(set(sends)) < len(sends)
    pairs = [pair for s in sends for pair in s]
    assert len({id(p) for p in pairs}) == len(set(pairs))
