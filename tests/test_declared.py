"""One loop collects what modules declare, for the problems and the algorithms alike."""

from __future__ import annotations

import pytest

from mutexlab import declared, problems
from mutexlab.problem import Problem
from mutexlab.protocols import registry


def test_both_registries_are_the_shared_collection():
    assert problems.collect(problems.MODULES) == declared.collect(
        problems.MODULES, "mutexlab.problems", "PROBLEM", Problem, "problem"
    )
    assert registry.collect(registry.MODULES).keys() == registry.SPECS.keys()


def test_a_problem_module_without_a_problem_or_declared_twice_is_refused():
    with pytest.raises(TypeError, match=r"mutexlab.problems.mutex declares no SPEC = Problem\(...\)"):
        declared.collect(("mutex",), "mutexlab.problems", "SPEC", Problem, "problem")
    with pytest.raises(TypeError, match="problem 'mutex' is declared twice"):
        problems.collect(("mutex", "mutex"))
    with pytest.raises(TypeError, match="algorithm 'lamport' is declared twice"):
        registry.collect(("lamport", "lamport"))
