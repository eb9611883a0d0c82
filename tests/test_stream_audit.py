"""The audit fed as the run goes (audit/stream.py) decides exactly as the audit of the whole trace:
same verdict, same findings, same lines — on correct runs and on the broken variants of
tests/mutexlab_broken/ and test_bees_broken.py, with full vector clocks (a written trace, a trace
file read as a stream) and with the local-event clocks of a run that writes no trace."""

from __future__ import annotations

import importlib

import pytest
from test_bees_broken import VARIANTS, Bee

from mutexlab.audit import verify_events, verify_file
from mutexlab.audit.stream import StreamAudit
from mutexlab.protocols import bees
from mutexlab.protocols.registry import make_setup
from mutexlab.sim import SimConfig, Simulation
from mutexlab.trace import TraceWriter


def three_verdicts(build, seed, tmp_path, **sim):
    """The verdict of the whole trace held in memory, of the trace file read as a stream, and of a
    run audited as it goes with local-event clocks, its events built and fed one by one and (last)
    with the sends and receives only counted (``tally``: the simulator's inline path) —
    ``build()`` makes a fresh setup each time."""
    held = TraceWriter(None, keep=True)
    Simulation(build(), SimConfig(seed=seed, **sim), held).run()
    whole = verify_events([dict(e, _line=n) for n, e in enumerate(held.events, 1)])
    path = tmp_path / f"trace-{seed}.jsonl"
    fed = StreamAudit()
    with TraceWriter(path, sink=fed.feed) as written:
        Simulation(build(), SimConfig(seed=seed, **sim), written).run()
    assert not written.events  # nothing held: written and fed as it comes
    setup = build()
    local = StreamAudit()
    names = [setup.names[p] for p in sorted(setup.names)]
    trace = TraceWriter(sink=local.feed, local_clocks=names)
    local.index = trace.clocks.index
    # the elves' audit reads message bodies; the others do not, so their runs make none
    bodies = setup.algorithm == "elves"
    Simulation(setup, SimConfig(seed=seed, **sim), trace, trace_bodies=bodies).run()
    setup = build()
    tallied = StreamAudit()
    trace = TraceWriter(sink=tallied.feed, local_clocks=names, tally=tallied)
    tallied.index = trace.clocks.index
    Simulation(setup, SimConfig(seed=seed, **sim), trace, trace_bodies=bodies).run()
    return whole, fed.verdict(), verify_file(path), local.verdict(), tallied.verdict()


def assert_same(verdicts):
    first = verdicts[0]
    for other in verdicts[1:]:
        assert other.render() == first.render()
        assert other.as_dict() == first.as_dict()


def broken_bees(cls, processes, options, equal_clocks, seed):
    def build():
        opts = dict(options)
        if equal_clocks:
            opts["initial_clocks"] = {pid: 0 for pid in range(1, processes + 1)}
        setup = bees.make_setup(processes, opts, seed)
        for bee in setup.protocols.values():
            bee.__class__ = cls
            bee.__init__(bee.pid, bee.n, bee.flowers, bee.reeds, bee.eggs, bee.cocoons, bee.clock.time)
        return setup

    return build


@pytest.mark.parametrize("cls, processes, options, equal_clocks, rule", VARIANTS, ids=lambda v: str(v))
def test_broken_bees_are_caught_alike(cls, processes, options, equal_clocks, rule, tmp_path):
    caught = 0
    for seed in range(4):
        verdicts = three_verdicts(broken_bees(cls, processes, options, equal_clocks, seed), seed, tmp_path)
        assert_same(verdicts)
        caught += rule in {v.rule for v in verdicts[-1].violations}
        control = three_verdicts(broken_bees(Bee, processes, options, equal_clocks, seed), seed, tmp_path)
        assert_same(control)
        assert control[-1].ok
    assert caught, f"{cls.__name__}: rule {rule} never fired on the local-event clocks"


@pytest.mark.parametrize("module", ["ricart_agrawala_greedy_quiet", "ricart_agrawala_proud"])
def test_broken_classic_nodes_are_caught_alike(module, tmp_path):
    broken = importlib.import_module(f"mutexlab_broken.{module}")
    findings = set()
    for seed in range(3):
        verdicts = three_verdicts(lambda s=seed: broken.make_setup(4, {"requests": 3}, s), seed, tmp_path)
        assert_same(verdicts)
        findings |= {v.rule for v in verdicts[-1].violations}
    assert findings, f"{module}: no finding on any seed"


RUNS = [
    ("bees", 20, {"flowers": 4, "reeds": 3}),
    ("bees", 9, {"reeds": 3}),
    ("elves", 4, {}),
    ("ricart-agrawala", 5, {"requests": 3}),
    ("maekawa", 9, {"requests": 2}),
    ("suzuki-kasami", 5, {"requests": 3}),
]
FAULTS: list[dict] = [{}, {"duplicate": 0.2}, {"reorder": True}, {"spike": 0.1}]
# Twenty bees under each fault (0.3-0.5 CPU-s each) for the full run only: nine bees meet every
# fault, and twenty bees the fault-free run, in the quick subset.
QUICK_LEAVES_OUT = {f"test_correct_runs_alike_under_faults[bees-20-options{i}-sim{i}]" for i in (1, 2, 3)}


# Reordering leaves the elves' model: their protocol refuses a round's message that overtook another.
@pytest.mark.parametrize(
    "algorithm, n, options, sim",
    [(*run, sim) for run in RUNS for sim in FAULTS if not (run[0] == "elves" and sim.get("reorder"))],
)
def test_correct_runs_alike_under_faults(algorithm, n, options, sim, tmp_path):
    for seed in (0, 1):
        assert_same(
            three_verdicts(lambda s=seed: make_setup(algorithm, n, options, s), seed, tmp_path, **sim)
        )


def test_local_event_clocks_decide_happened_before_like_full_ones():
    """Every local event a and every event b: a → b by the local-event clocks iff by the full ones."""

    def events(local):
        setup = make_setup("bees", 5, {"flowers": 2, "reeds": 2}, 5)
        audit = StreamAudit()
        if local:
            names = [setup.names[p] for p in sorted(setup.names)]
            trace = TraceWriter(sink=audit.feed, local_clocks=names)
            audit.index = trace.clocks.index
        else:
            trace = TraceWriter(None, keep=True)
        out = []
        trace.sink = (lambda e: out.append(e)) if local else None
        Simulation(setup, SimConfig(seed=5), trace).run()
        return out if local else trace.events[1:]

    full, local = events(False), [e for e in events(True) if e["event"] != "run"]
    assert [(e["event"], e["pid"]) for e in full] == [(e["event"], e["pid"]) for e in local]
    views = StreamAudit()
    index = {
        name: i for i, name in enumerate(sorted({e["pid"] for e in full}, key=lambda n: int(n.split("-")[1])))
    }
    from mutexlab.clock import ClockView

    own = [int(e["vc"][1][e["vc"][2]]) for e in local]
    checked = 0
    for i, (a_full, a_local) in enumerate(zip(full, local, strict=True)):
        if a_full["event"] in ("send", "recv"):
            continue
        for b_full, b_local in zip(full[i:], local[i:], strict=True):
            by_full = b_full["vc"].get(a_full["pid"], 0) >= a_full["vc"][a_full["pid"]]
            by_local = ClockView(index, b_local["vc"][1]).get(a_local["pid"], 0) >= own[i]
            assert by_full == by_local, (a_full, b_full)
            checked += 1
    assert checked > 5_000 and views.run is None
