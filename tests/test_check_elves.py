"""The elves' reductions in ``mutexlab check`` (``protocols/elves/reductions.py``): dead variables in
the key, the clock shift with dead messages, retired clocks in the last round, and the send
rule of partial-order reduction. Each is shown sound by a differential test (with it and
without it: the same verdict, never more worlds, the same reachable holdings and process
phases), and each differential test is shown failing on a deliberately broken version of the
reduction."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from mutexlab_broken import elves_variants as variants
from mutexlab_broken import recast
from test_check import only_finding

from mutexlab.check import sampling
from mutexlab.check.engine import CheckConfig, run_check
from mutexlab.problems import PROBLEMS
from mutexlab.protocols import elves as E
from mutexlab.protocols.elves import reductions as elves_reductions
from mutexlab.protocols.registry import make_setup
from mutexlab.reduction import Canonical, SendBound

SCARCE_PINS = dict(pins=1, poison=2, contracts=2, hamsters=[1, 2], rounds=1)
CORRECT = [
    (2, SCARCE_PINS, 0),
    (2, dict(SCARCE_PINS, rounds=2), 0),
    (2, dict(pins=2, poison=3, contracts=2, hamsters=[2, 3], rounds=1), 0),  # scarce poison
    (2, dict(pins=1, poison=2, contracts=3, hamsters=[1, 2], rounds=1), 2),  # second contracts
    (2, dict(pins=4, poison=3, contracts=2, hamsters=[1, 3], rounds=1, pins_per_elf=2), 3),
]
IDS = ["scarce-pins", "two-rounds", "scarce-poison", "second-contracts", "multi-unit"]
# The two larger configurations (0.2-0.5 CPU-s per reduction) are swept in the full run only:
# the quick subset checks every reduction on the three small ones.
SWEPT = [
    pytest.param(
        *case, id=name, marks=[pytest.mark.slow] if name in ("two-rounds", "second-contracts") else []
    )
    for case, name in zip(CORRECT, IDS)
]


def declare(monkeypatch, **changes):
    """The elves' declaration (as it stands: perhaps already broken) with ``changes``. The spec
    reads ``elves_reductions.REDUCTIONS`` when asked, so this is what ``check`` applies."""
    monkeypatch.setattr(elves_reductions, "REDUCTIONS", replace(elves_reductions.REDUCTIONS, **changes))


def _no_canonical(monkeypatch):
    declare(monkeypatch, canonical=None)


def _no_clock_shift(monkeypatch):
    declare(monkeypatch, clocks=None, retired=None)


def _no_retired_clocks(monkeypatch):
    declare(monkeypatch, retired=None)


def _no_dead_messages(monkeypatch):
    declare(monkeypatch, clocks=replace(elves_reductions.REDUCTIONS.clocks, dead=None))


def _no_send_rule(monkeypatch):
    declare(monkeypatch, sends=None)


# (name, switch it off, partial-order reduction on in both runs)
REDUCTIONS = [
    ("canonical", _no_canonical, False),
    ("clock-shift", _no_clock_shift, False),
    ("retired-clocks", _no_retired_clocks, False),
    ("dead-messages", _no_dead_messages, False),
    ("send-rule", _no_send_rule, True),
]


def observed(elves, options, seed, monkeypatch, partial_order=True, setup=None):
    """Check the configuration and record what the reductions must keep: every reachable
    holding (who holds what), and — without partial-order reduction, which skips invisible
    intermediate worlds — every reachable combination of the processes' phases."""
    holdings, phases = set(), set()
    problem = PROBLEMS["elves"]  # the invariant is the problem's rules
    declared = problem.invariant
    assert declared is not None
    check_world = declared.holds

    def recording(model, world):
        holdings.add(tuple((model.resources[r], i, u) for r, i, u in model.holdings(world)))
        phases.add(tuple(_phase(model.objects[world[i]]) for i in range(model.n)))
        return check_world(model, world)

    with monkeypatch.context() as m:
        m.setitem(PROBLEMS, "elves", replace(problem, invariant=replace(declared, holds=recording)))
        result, model = run_check(
            CheckConfig("elves", elves, dict(options), seed=seed, partial_order=partial_order),
            setup=setup or make_setup("elves", elves, dict(options), seed),
        )
    return result, model, holdings, phases if not partial_order else None


def _phase(p):
    if isinstance(p, E.Mayor):
        return (p.state, p.round, frozenset(p.completed) if p.state is E.MAYOR_WAITING else None)
    return (p.state, p.round, p.active, p.phase, p.holding)


# The check with every reduction as declared, by configuration: the same for each reduction the
# sweep below switches off (kept only while the declaration and the sampling are the shipped ones).
DECLARED, SAMPLING = elves_reductions.REDUCTIONS, (sampling.FULL, sampling.STRIDE, sampling.MAX_TWINS)
WITH_EVERY_REDUCTION: dict = {}


def with_every_reduction(elves, options, seed, monkeypatch, partial_order):
    shipped = elves_reductions.REDUCTIONS is DECLARED
    shipped = shipped and (sampling.FULL, sampling.STRIDE, sampling.MAX_TWINS) == SAMPLING
    if not shipped:
        return observed(elves, options, seed, monkeypatch, partial_order)
    key = (elves, repr(sorted(options.items())), seed, partial_order)
    if key not in WITH_EVERY_REDUCTION:
        WITH_EVERY_REDUCTION[key] = observed(elves, options, seed, monkeypatch, partial_order)
    return WITH_EVERY_REDUCTION[key]


def differences(elves, options, seed, monkeypatch, switch_off, partial_order) -> list[str]:
    """What differs between checking with every reduction and with one switched off (the
    differential test): verdicts, worlds (never more with it), reachable holdings and phases."""
    with_it, model, held, phases = with_every_reduction(elves, options, seed, monkeypatch, partial_order)
    with monkeypatch.context() as m:
        switch_off(m)
        without, plain, held_plain, phases_plain = observed(elves, options, seed, monkeypatch, partial_order)
    found = []
    if with_it.verdict != without.verdict:
        found.append(f"verdict {with_it.verdict} with it, {without.verdict} without")
    if with_it.states > without.states:
        found.append(f"{with_it.states} worlds with it, {without.states} without")
    if held != held_plain:
        found.append(f"reachable holdings differ: {len(held)} with it, {len(held_plain)} without")
    if phases != phases_plain:
        found.append(
            f"reachable phases differ: {len(phases or ())} with it, {len(phases_plain or ())} without"
        )
    if with_it.finals < 1:
        found.append("no final world with it")
    return found


def test_every_elves_reduction_applies_and_is_off_under_no_reduction():
    _, model = run_check(CheckConfig("elves", 2, dict(SCARCE_PINS)))
    assert model.reductions == [
        "canonical snapshots",
        "clock-offset normalisation",
        "retired clocks",
        "partial-order reduction",
    ]
    assert model.por.sends_to is elves_reductions.sends_to
    _, plain = run_check(CheckConfig("elves", 2, dict(SCARCE_PINS), reductions=False))
    assert plain.reductions == [] and plain.normalise is None and plain.canonical is None


@pytest.mark.parametrize("name, switch_off, partial_order", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
@pytest.mark.parametrize("elves, options, seed", SWEPT)
def test_each_elves_reduction_keeps_the_verdict_the_holdings_and_the_phases(
    monkeypatch, name, switch_off, partial_order, elves, options, seed
):
    assert differences(elves, options, seed, monkeypatch, switch_off, partial_order) == []


@pytest.mark.slow  # two searches of three elves
def test_the_elves_reductions_together_cut_three_elves_one_contract():
    """87,843 worlds without reductions (explore()'s count) and far fewer with them."""
    plain, _ = run_check(CheckConfig("elves", 3, dict(SCARCE_PINS, contracts=1), reductions=False))
    reduced, _ = run_check(CheckConfig("elves", 3, dict(SCARCE_PINS, contracts=1)))
    assert plain.states == 87_843 and plain.verdict == reduced.verdict == "pass"
    assert reduced.states < plain.states // 3


# -- each differential test catches a deliberately broken reduction --------------------------
def _contract_requests_dead_while_asking(monkeypatch):
    """Canonical key without the contract requests seen even while asking for a contract."""
    right = elves_reductions.canonical

    def wrong(p):
        key = right(p)
        if isinstance(p, E.Elf) and p.state is E.ELF_REQUESTING:
            return key[:5] + (None,) + key[6:]
        return key

    declare(monkeypatch, canonical=Canonical(wrong, "broken on purpose"))


def _contract_requests_not_shifted(monkeypatch):
    """A clock shift that forgets the contract requests an elf has seen."""
    right = elves_reductions.shift

    def wrong(p, d, clock=None):
        twin = right(p, d, clock)
        if isinstance(p, E.Elf):
            twin.contract_requests = set(p.contract_requests)
        return twin

    declare(monkeypatch, clocks=replace(elves_reductions.REDUCTIONS.clocks, shift=wrong))


def _retired_too_early(monkeypatch):
    """Retired clocks for an elf that may still ask for a contract (the count of known contract
    requests left out)."""

    def wrong(p, pending, setup):
        final = max(len(q.plan) for q in setup.protocols.values() if isinstance(q, E.Mayor))
        if isinstance(p, E.Mayor):
            return p.round == final
        return p.state is E.ELF_DONE or (
            p.round == final
            and p.active
            and (p.state is E.INITIAL or p.phase == E.POISON or p.state is E.ELF_FINISHED)
        )

    declare(monkeypatch, retired=replace(elves_reductions.REDUCTIONS.retired, done=wrong))


def _live_messages_dead(monkeypatch):
    """Every elf message to an elf of the same round taken as dead (its timestamp zeroed)."""

    def wrong(msg, receiver):
        return (
            isinstance(receiver, E.Elf)
            and isinstance(msg, (E.XRequest, E.XReply, E.XRelease))
            and msg.round <= receiver.round
        )

    declare(monkeypatch, clocks=replace(elves_reductions.REDUCTIONS.clocks, dead=wrong))


def _initial_elf_silent(monkeypatch):
    """A send rule that forgets that an elf in INITIAL asks for a contract on INIT_CONTRACTS."""
    right = elves_reductions.sends_to

    def wrong(q, pending, inflight, x):
        return False if isinstance(q, E.Elf) and q.state is E.INITIAL else right(q, pending, inflight, x)

    declare(monkeypatch, sends=SendBound(wrong, "broken on purpose", reads_receiver=True))


def no_sampling(monkeypatch) -> None:
    """Switch check's sampling of the declared reductions off (check/sampling.py)."""
    monkeypatch.setattr(sampling, "FULL", 0)
    monkeypatch.setattr(sampling, "STRIDE", 10**18)
    monkeypatch.setattr(sampling, "MAX_TWINS", 0)


MUTATIONS = [
    ("canonical", _contract_requests_dead_while_asking, _no_canonical, False),
    ("clock-shift", _contract_requests_not_shifted, _no_clock_shift, False),
    ("retired-clocks", _retired_too_early, _no_retired_clocks, False),
    ("dead-messages", _live_messages_dead, _no_dead_messages, False),
    ("send-rule", _initial_elf_silent, _no_send_rule, True),
]


@pytest.mark.parametrize(
    "name, break_it, switch_off, partial_order", MUTATIONS, ids=[m[0] for m in MUTATIONS]
)
def test_each_differential_test_catches_a_broken_version_of_its_reduction(
    monkeypatch, name, break_it, switch_off, partial_order
):
    caught = []
    for elves, options, seed in CORRECT:
        with monkeypatch.context() as m:
            break_it(m)
            no_sampling(m)  # the differential test alone: the sampling would refuse the broken one
            caught = differences(elves, options, seed, m, switch_off, partial_order)
        if caught:
            break
    assert caught, f"the broken {name} passed every differential test"


# -- broken elves: the same findings with and without reductions -------------------------------
# (variant, which processes, elves, options, finding)
BROKEN = [
    (variants.IgnoresUnitsAhead, "elves", 2, SCARCE_PINS, "capacity"),
    (variants.ReusesContracts, "elves", 2, SCARCE_PINS, "capacity"),
    (variants.MuteToPins, "elves", 3, dict(SCARCE_PINS, contracts=1), "deadlock"),
    (variants.RoundBlind, "elves", 2, dict(SCARCE_PINS, rounds=2), "capacity"),
    (variants.StopsOneEarly, "mayor", 2, dict(SCARCE_PINS, rounds=2), "error"),
]
# Variants the reductions' arguments still cover: they override only how an elf counts what is
# ahead of it (IgnoresUnitsAhead), which contract requests count (ReusesContracts, inside the
# contract check, which no reduction's argument reads), or leave requests unanswered
# (MuteToPins) — none reads a timestamp other than by comparing it, a field the key drops, or
# sends where the send rule says it cannot. RoundBlind handles messages after ELF_DONE and
# StopsOneEarly stops while a contract is held: the exact-class rule keeps them unreduced.
COVERED = (variants.IgnoresUnitsAhead, variants.ReusesContracts, variants.MuteToPins)


def _broken_setup(cls, who, elves, options):
    setup = make_setup("elves", elves, dict(options), 0)
    return recast(setup, cls, [0] if who == "mayor" else list(range(1, elves + 1)))


@pytest.mark.parametrize("cls, who, elves, options, kind", BROKEN, ids=[b[0].__name__ for b in BROKEN])
@pytest.mark.parametrize("search", ["dfs", "bfs"])
def test_every_broken_elf_gives_the_same_finding_with_and_without_reductions(
    monkeypatch, cls, who, elves, options, kind, search
):
    def check(**kw):
        return run_check(
            CheckConfig("elves", elves, dict(options), search=search, **kw),
            setup=_broken_setup(cls, who, elves, options),
        )

    plain, _ = check(reductions=False)
    reduced, model = check()
    assert "canonical snapshots" not in model.reductions  # exact classes only
    if cls in COVERED:  # declared for the variant too, as its author would
        monkeypatch.setattr(
            elves_reductions, "REDUCTIONS", elves_reductions.REDUCTIONS.only(E.Mayor, E.Elf, cls)
        )
        reduced, model = check()
        assert "retired clocks" in model.reductions and model.por.sends_to is elves_reductions.sends_to
    a, b = only_finding(plain, kind), only_finding(reduced, kind)
    assert sorted(a.processes) == sorted(b.processes) and a.resource == b.resource


def test_check_says_the_plan_its_seed_drew(cli, tmp_path):
    # a verdict is of the contracts --seed drew: seed 0 draws [2, 2], seed 2 [1, 2] (before, only
    # the hamsters' range was shown, and a PASS at one seed read as a PASS of every plan)
    for seed, drawn in (("0", "2 2"), ("2", "1 2")):
        done = cli("check", "elves", "--pins", "2", "--poison", "2", "--seed", seed, "--json", cwd=tmp_path)
        assert done.returncode == 0 and json.loads(done.stdout)["plan"] == [[int(h) for h in drawn.split()]]
        done = cli("check", "elves", "--pins", "2", "--poison", "2", "--seed", seed, cwd=tmp_path)
        assert done.stdout.splitlines()[1] == f"round 1 contracts (hamsters): {drawn}", done.stdout
