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


def test_the_registered_table_is_what_the_modules_declare():
    """``REGISTERED`` says, without importing a module, what its SPEC says: the name, the problem it
    solves (how the commands present it) and the commands it is the default of, in table order."""
    specs = registry.collect(registry.MODULES)
    assert list(specs) == list(registry.REGISTERED)
    for name, (module, problem, default_for) in registry.REGISTERED.items():
        found = specs[name]
        assert found.make_setup.__module__.startswith(f"mutexlab.protocols.{module}"), name
        assert registry.problem_of(found) is problems.named(problem), name
        assert registry.flags_of(found) is problems.named(problem).flags, name
        assert found.default_for == default_for, name
        assert registry.SPECS[name] is found, name
    assert [n for n, s in specs.items() if s.family == "classic"] == registry.CLASSIC


def test_a_run_of_one_algorithm_imports_no_other():
    """``mutexlab run mutex`` (parsed, planned, its services' modules preloaded) imports the mutex
    solutions alone: no bees or elves protocol, no program director, no simulator or replayer, each
    compiled anew at every start where bytecode is not cached (PYTHONDONTWRITEBYTECODE)."""
    import subprocess
    import sys

    code = """
import sys
from mutexlab.cli import main
code = main(["run", "mutex", "-N", "3", "--amqp-url", "amqp://127.0.0.1:1/%2F"])  # no broker there: exit 3
print(code, " ".join(sorted(m for m in sys.modules if m.startswith("mutexlab."))))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    code, *names = out.split()
    loaded = set(names)
    assert code == "3", out  # refused at the broker's check: every module a run needs is loaded by then
    assert {"mutexlab.protocols.ricart_agrawala", "mutexlab.transport.monitor", "mutexlab.audit"} <= loaded
    unwanted = (
        "mutexlab.protocols.bees",
        "mutexlab.protocols.elves",
        "mutexlab.director",
        "mutexlab.sim.engine",
    )
    assert not [m for m in loaded if m.startswith(unwanted)]
