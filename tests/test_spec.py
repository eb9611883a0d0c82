"""Every algorithm is declared once, by its module's ``SPEC``; the registry and everything that
looks an algorithm up read it from there."""

from __future__ import annotations

import sys
import textwrap

import pytest

from mutexlab.audit import verdict
from mutexlab.metrics import literature
from mutexlab.protocols import registry
from mutexlab.services import roles as service_roles
from mutexlab.setups import ConfigError
from mutexlab.sim.engine import simulate
from mutexlab.spec import AlgorithmSpec
from mutexlab.transport import membership

SMALL = {
    "bees": {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 1},
    "elves": {"contracts": 2, "rounds": 1, "hamsters": "1-2"},
}


@pytest.mark.parametrize("name", list(registry.SPECS))
def test_each_spec_matches_the_setup_it_builds(name):
    spec = registry.spec(name)
    assert spec.name == name and spec.family in ("classic", "bees", "elves") and spec.summary
    setup = spec.make_setup(3, dict(SMALL.get(name, {"requests": 1})), 0)
    assert setup.algorithm == name and setup.codec is spec.codec
    # Names are <role>-<pid> for pids 1..P, plus one process per fixed role.
    roles = sorted(membership.role_of(n) for n in setup.names.values())
    assert roles == sorted([spec.role] * 3 + list(spec.fixed_roles))
    assert {pid for pid, n in setup.names.items() if membership.role_of(n) == spec.role} == {1, 2, 3}
    assert membership.scalable_role(name) == spec.role and membership.fixed_roles(name) == list(
        spec.fixed_roles
    )
    assert set(spec.roles) <= set(membership.ROLES) and set(spec.roles) < set(service_roles())


@pytest.mark.parametrize("name", list(registry.SPECS))
def test_each_spec_codec_decodes_what_its_protocols_send(name):
    spec = registry.spec(name)
    setup = spec.make_setup(3, dict(SMALL.get(name, {"requests": 2})), 1)
    seen: list[str] = []
    for protocol in setup.protocols.values():
        original = protocol.on_message

        def round_trip(msg, original=original):
            decoded = spec.codec.decode(spec.codec.encode(msg))
            assert decoded == msg
            seen.append(decoded.type)
            return original(decoded)

        protocol.on_message = round_trip
    result = simulate(setup, seed=1)
    assert result.ok
    assert seen and set(seen) <= set(spec.codec.types)


@pytest.mark.parametrize("name", list(registry.SPECS))
def test_each_spec_audit_module_resolves_and_its_figures_render(name):
    spec = registry.spec(name)
    audit = spec.audit or registry.problem_of(spec).audit  # a solution's, else its problem's
    assert audit is not None
    invariants = audit()
    assert callable(invariants.check) and invariants.checks
    found, problem = verdict.family_checks(name), registry.problem_of(spec)
    if spec.audit is None or spec.audit is problem.audit:
        assert found is invariants
    else:  # a solution's own checks of its messages come after its problem's: both judge a trace
        assert found is not None and problem.audit is not None
        own, first = list(invariants.checks), list(problem.audit().checks)
        assert list(found.checks) == first + own, found.checks
    setup = spec.make_setup(4, dict(SMALL.get(name, {})), 0)
    for key, figure in spec.literature.items():
        assert key in ("messages", "sync")
        assert figure.render(4, setup.params).startswith(figure.text)
    assert literature(name) == spec.literature
    assert (spec.family == "classic") == (name in registry.CLASSIC) == bool(spec.literature)


@pytest.mark.parametrize("name", list(registry.SPECS))
def test_each_spec_lists_exactly_the_options_its_setup_accepts(name):
    spec = registry.spec(name)
    assert spec.options and all(isinstance(h, str) and h for h in spec.options.values())
    with pytest.raises(ConfigError, match="not take option"):
        spec.make_setup(3, {"no_such_option": 1}, 0)
    for key in spec.options:  # a known key never draws "does not take", whatever its value
        try:
            spec.make_setup(3, {key: "?"}, 0)
        except ConfigError as exc:
            assert "not take" not in str(exc), f"{name} refuses its own option {key}"


def test_unknown_names_get_one_clear_error():
    with pytest.raises(ConfigError, match="unknown algorithm 'nope'; choose one of: bees, elves, lamport"):
        registry.spec("nope")
    with pytest.raises(ConfigError, match="unknown algorithm 'nope'"):
        registry.make_setup("nope", 3)


NEW_ALGORITHM = '''
"""A ninth algorithm for the test: Ricart–Agrawala under another name, with workers and a boss."""
from mutexlab.protocols import ricart_agrawala
from mutexlab.spec import AlgorithmSpec, Figure


def make_setup(processes, options, seed=0):
    setup = ricart_agrawala.make_setup(processes, options, seed)
    setup.algorithm = "ninth"
    setup.names = {{pid: f"worker-{{pid}}" for pid in setup.names}}
    return setup


SPEC = AlgorithmSpec("ninth", "classic", "a test's algorithm", make_setup, ricart_agrawala.CODEC,
                     ricart_agrawala.SPEC.audit, role="worker", fixed_roles={fixed!r},
                     options={{"requests": "critical sections per node"}},
                     literature={{"messages": Figure("2(N−1)", lambda n, p: (2 * (n - 1),) * 2)}})
'''


@pytest.fixture
def ninth(tmp_path, monkeypatch):
    """A package ``ninthpkg`` holding one new protocol module, ``ninth``."""
    package = tmp_path / "ninthpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "ninth.py").write_text(textwrap.dedent(NEW_ALGORITHM.format(fixed=())))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "ninthpkg"
    for mod in [m for m in sys.modules if m.startswith("ninthpkg")]:
        del sys.modules[mod]


def test_a_new_module_with_a_spec_is_picked_up_by_the_registry_alone(ninth, monkeypatch):
    specs = {**registry.SPECS, **registry.collect(("ninth",), package=ninth)}
    monkeypatch.setattr(registry, "SPECS", specs)
    assert registry.spec("ninth").role == "worker"
    assert registry.make_setup("ninth", 2, {"requests": 1}).names == {1: "worker-1", 2: "worker-2"}
    assert membership.scalable_role("ninth") == "worker" and membership.fixed_roles("ninth") == []
    assert verdict.family_checks("ninth") is verdict.family_checks("ricart-agrawala") is not None
    assert literature("ninth")["messages"].render(3) == "2(N−1) = 4"
    roster = membership.Roster("ninth", 1, 0.0)
    assert roster.join("w", "worker", 0.0) is None and roster.join("n", "node", 0.0) is not None


def test_a_plugin_module_with_a_spec_gets_its_roles(ninth):
    assert membership.scalable_role(f"{ninth}.ninth") == "worker"
    assert registry.family_of("mutexlab_broken.bees") == "bees"  # FAMILY still works
    assert membership.scalable_role("mutexlab_broken.bees") == "bee"


def test_a_module_without_a_spec_or_declared_twice_is_refused(tmp_path, monkeypatch):
    (tmp_path / "plainpkg").mkdir()
    (tmp_path / "plainpkg" / "__init__.py").write_text("")
    (tmp_path / "plainpkg" / "plain.py").write_text("def make_setup(p, o, s=0):\n    return None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TypeError, match="declares no SPEC"):
        registry.collect(("plain",), package="plainpkg")
    with pytest.raises(TypeError, match="declared twice"):
        registry.collect(("lamport", "lamport"))
    assert isinstance(registry.SPECS["lamport"], AlgorithmSpec)
