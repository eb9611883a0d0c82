"""``mutexlab check``: the same state space as ``explore()``, every property catching a broken
variant, counterexamples that ``mutexlab replay`` reproduces, and the command's exit codes."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from conftest import broken
from mutexlab_broken import recast
from test_bees_exhaustive import SMALL, Colony

from mutexlab.check.counterexample import reproduces, scenario_of
from mutexlab.check.engine import CheckConfig, run_check
from mutexlab.cli import main
from mutexlab.protocol import Schedule
from mutexlab.protocols import ricart_agrawala as ra
from mutexlab.protocols.registry import make_setup
from mutexlab.sim.explore import explore
from mutexlab.sim.scripted import replay_scenario

FORGETFUL = broken("ricart_agrawala_forgetful")  # never answers the requests it deferred


def check(algorithm, processes, options=None, **kw):
    return run_check(CheckConfig(algorithm, processes, dict(options or {}), **kw))


def only_finding(result, kind):
    assert result.verdict == "violation", (result.verdict, result.stopped)
    finding = result.findings[0]
    assert finding.kind == kind, (finding.kind, finding.message)
    return finding


# -- the same worlds as explore() ------------------------------------------------------------
@pytest.mark.parametrize("search", ["dfs", "bfs"])
@pytest.mark.parametrize("exact", [False, True])
def test_ricart_agrawala_three_nodes_one_request_has_the_cross_checked_counts(search, exact):
    """13,474 states and 25,492 transitions: what explore() and a Promela model under SPIN count."""
    result, _ = check("ricart-agrawala", 3, {"requests": 1}, search=search, exact=exact, reductions=False)
    assert (result.states, result.transitions) == (13_474, 25_492)
    assert result.complete and result.verdict == "pass" and not result.cycles


@pytest.mark.slow
def test_ricart_agrawala_three_nodes_two_requests_has_the_cross_checked_counts():
    """3,579,050 states and 8,548,496 transitions: SPIN's count of the same worlds."""
    result, _ = check("ricart-agrawala", 3, {"requests": 2}, reductions=False)
    assert (result.states, result.transitions) == (3_579_050, 8_548_496)
    assert result.complete and result.verdict == "pass"


@pytest.mark.parametrize("algorithm", ["maekawa", "suzuki-kasami", "raymond"])
def test_classic_counts_equal_explore(algorithm):
    explored = explore(lambda: make_setup(algorithm, 3, {"requests": 1}), max_states=1_000_000)
    result, _ = check(algorithm, 3, {"requests": 1}, reductions=False)
    assert (result.states, result.transitions) == (explored.states, explored.transitions)
    assert result.verdict == "pass" and explored.ok


@pytest.mark.parametrize("processes, options", SMALL[:2])
def test_bee_counts_equal_explore(processes, options):
    explored = explore(Colony(processes, options))
    clocks = {pid: 0 for pid in range(1, processes + 1)}
    result, _ = check("bees", processes, dict(options, initial_clocks=clocks), reductions=False)
    assert (result.states, result.transitions) == (explored.states, explored.transitions)
    assert result.verdict == "pass"


def test_elf_counts_equal_explore():
    options = dict(pins=1, poison=2, contracts=2, hamsters=[1, 2], rounds=1)
    explored = explore(lambda: make_setup("elves", 2, options, 0))
    result, _ = check("elves", 2, options, reductions=False)
    assert (result.states, result.transitions) == (explored.states, explored.transitions)
    assert result.verdict == "pass"


# -- every property catches a broken variant ---------------------------------------------------
def test_capacity_catches_the_greedy_node_and_the_replay_reproduces_it():
    result, model = check("mutexlab_broken.ricart_agrawala_greedy_quiet", 2, {"requests": 1})
    finding = only_finding(result, "capacity")
    assert finding.resource == "cs" and finding.processes == ["node-1", "node-2"]
    scenario = scenario_of(
        model, finding, "mutexlab_broken.ricart_agrawala_greedy_quiet", 2, {"requests": 1}, 0
    )
    assert reproduces(scenario, finding)[0]


def test_invariant_catches_the_bee_that_lays_an_extra_egg():
    result, model = check(
        "mutexlab_broken.bees_extra_egg", 2, {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 1}
    )
    finding = only_finding(result, "invariant")
    assert finding.message == "[eggs-per-bee] bee-1 laid a 2nd egg (at most 1)"  # the audit's own words
    scenario = scenario_of(
        model,
        finding,
        "mutexlab_broken.bees_extra_egg",
        2,
        {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 1},
        0,
    )
    ok, shown = reproduces(scenario, finding)
    assert ok and "2nd egg" in shown


@pytest.mark.parametrize("search", ["dfs", "bfs"])
def test_deadlock_catches_the_silent_node(search):
    result, model = run_check(
        CheckConfig("ricart-agrawala", 2, {"requests": 1}, search=search),
        setup=FORGETFUL.make_setup(2, {"requests": 1}),
    )
    finding = only_finding(result, "deadlock")
    assert "REPLY" in finding.message and finding.processes
    world = _walk(model, finding.path)
    assert not model.steps(world) and not model.all_finished(world)


def test_liveness_catches_the_starving_node_as_a_lasso_and_the_replay_closes_its_loop():
    result, model = check("mutexlab_broken.starving", 2, {"requests": 1})
    finding = only_finding(result, "liveness")  # not a deadlock: someone can always move
    assert finding.processes == ["node-2"] and finding.cycle
    start = _walk(model, finding.path)
    assert _walk(model, finding.cycle, start) == start  # the cycle is a cycle
    scenario = scenario_of(model, finding, "mutexlab_broken.starving", 2, {"requests": 1}, 0)
    assert scenario["loop"] == len(finding.path)
    replayed = replay_scenario(scenario)
    assert replayed.loop == {"steps": len(finding.cycle), "closes": True, "waiting": ["node-2"], "unfair": []}


def test_breadth_first_search_finds_the_lasso_too_and_a_correct_protocol_passes():
    """With breadth-first search the liveness pass runs after the search."""
    result, _ = check("mutexlab_broken.starving", 2, {"requests": 1}, search="bfs")
    assert only_finding(result, "liveness").processes == ["node-2"]
    fine, _ = check("ricart-agrawala", 2, {"requests": 2})
    assert fine.verdict == "pass" and not fine.cycles


class SpinningNode(ra.RicartAgrawalaNode):
    """Correct, but node 1 also has a local decision that changes nothing and is always pending:
    every world has a self-loop. Staying on it forever is unfair (deliveries are left enabled
    and never taken), so it is no starvation."""

    def start(self):
        return super().start() + ([Schedule("spin", "x")] if self.pid == 1 else [])

    def on_local(self, action):
        if action == "spin":
            return [Schedule("spin", "x")]
        return super().on_local(action)


def test_an_unfair_cycle_is_not_starvation():
    setup = recast(make_setup("ricart-agrawala", 2, {"requests": 1}), SpinningNode)
    result, _ = run_check(CheckConfig("ricart-agrawala", 2, {"requests": 1}, reductions=False), setup=setup)
    assert result.cycles and result.verdict == "pass", result.findings[:1]


def test_a_rejected_input_is_a_finding():
    setup = broken("ricart_agrawala_rejecting").make_setup(2, {"requests": 1})
    result, _ = run_check(CheckConfig("ricart-agrawala", 2, {"requests": 1}), setup=setup)
    assert "REPLY refused" in only_finding(result, "error").message


def _walk(model, labels, world=None):
    if world is None:
        world, _ = model.initial()
    for label in labels:
        world, _, _ = model.step(world, label)
    return world


# -- faults --------------------------------------------------------------------------------------
BEES = ["bees", "-P", "2", "-K", "1", "-T", "1", "--eggs", "1", "--cocoons", "1"]


def test_bees_with_reordering_links_share_a_reed_and_the_replay_reproduces_it(tmp_path, capsys):
    scenario = tmp_path / "reed.json"
    assert (
        main(["check", *BEES, "--reorder", "--search", "bfs", "--json", "--counterexample", str(scenario)])
        == 1
    )
    out = json.loads(capsys.readouterr().out)
    finding = out["findings"][0]
    assert finding["kind"] == "capacity" and finding["resource"] == "reed:1"
    assert finding["processes"] == ["bee-1", "bee-2"]
    steps = json.loads(scenario.read_text())["steps"]
    assert any(s["op"] == "overtake" for s in steps)  # the reordering is in the scenario
    assert main(["check", *BEES, "--json"]) == 0  # with FIFO links: safe
    capsys.readouterr()
    assert main(["replay", str(scenario), "--json"]) == 1
    replayed = json.loads(capsys.readouterr().out)
    assert any("reed:1 (capacity 1) held by bee-1" in v and "bee-2" in v for v in replayed["violations"])


def test_duplicates_reach_the_protocol_and_replay_as_duplicate_steps(tmp_path, capsys):
    scenario = tmp_path / "dup.json"
    code = main(
        [
            "check",
            "mutex",
            "-a",
            "ricart-agrawala",
            "-N",
            "2",
            "--duplicate",
            "1",
            "--json",
            "--counterexample",
            str(scenario),
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert out["transitions"] > 0 and out["duplicate"] == 1
    plain, _ = check("ricart-agrawala", 2, {"requests": 1})
    if code == 1:
        # Ricart–Agrawala assumes each message arrives once: its table refuses a second REPLY.
        assert any(s["op"] == "duplicate" for s in json.loads(scenario.read_text())["steps"])
        assert out["reproduced"][0]
        assert "cannot take REPLY" in out["findings"][0]["message"]
    else:
        assert code == 0 and out["verdict"] == "pass"
        assert out["states"] > plain.states  # duplicates add worlds


# -- the command -----------------------------------------------------------------------------
def test_the_command_prints_its_figures_and_exits_0(capsys):
    assert main(["check", "mutex", "-a", "ricart-agrawala", "-N", "3", "--no-reduction", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("states", "transitions", "depth", "seconds", "peak_mb", "complete", "verdict", "findings"):
        assert key in out
    assert (out["states"], out["transitions"], out["complete"], out["verdict"]) == (
        13_474,
        25_492,
        True,
        "pass",
    )
    assert main(["check", "mutex", "-a", "ricart-agrawala", "-N", "2"]) == 0
    text = capsys.readouterr().out
    assert "states:" in text and "verdict:      PASS" in text


def test_a_limit_makes_the_search_incomplete_exit_3_never_a_pass(capsys):
    assert main(["check", "mutex", "-a", "ricart-agrawala", "-N", "3", "--max-states", "100", "--json"]) == 3
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "incomplete" and out["complete"] is False and "state limit" in out["stopped"]
    assert main(["check", "mutex", "-a", "ricart-agrawala", "-N", "3", "--max-states", "100"]) == 3
    assert "INCOMPLETE" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["check", "bees", "--eggs", "2", "--cocoons", "3"], "multiple of eggs"),
        (["check", "mutex", "-a", "ricart-agrawala", "-N", "2", "-o", "requests=2"], "--requests"),
    ],
)
def test_bad_configurations_exit_2_naming_the_problem(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["check", "mutex", "-a", "ricart-agrawala", "-N", "0"], "--nodes/-N"),
        (["check", "mutex", "-a", "ricart-agrawala", "-N", "2", "--search", "sideways"], "--search"),
        (["check", "bees", "--max-memory", "-5"], "--max-memory"),
        (["check", "mutex", "-a", "nosuch", "-N", "2"], "invalid choice: 'nosuch'"),
        (["check", "elves", "--hamsters", "5-2"], "min 5 is above max 2"),
    ],
)
def test_bad_arguments_exit_2(argv, message, capsys):
    """The flags are simulate's own (commands/flags.py): argparse refuses them, naming the flag."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


# -- reductions: never more worlds, the same verdict on every broken variant ----------------------
@pytest.mark.parametrize(
    "algorithm, processes, requests",
    [("ricart-agrawala", 3, 1), ("ricart-agrawala", 2, 3), ("lamport", 2, 2)],
)
def test_reductions_never_add_worlds_and_keep_the_verdict(algorithm, processes, requests):
    plain, _ = check(algorithm, processes, {"requests": requests}, reductions=False)
    reduced, model = check(algorithm, processes, {"requests": requests}, reductions=True)
    assert "clock-offset normalisation" in model.reductions
    assert plain.verdict == reduced.verdict == "pass"
    assert reduced.states < plain.states and reduced.transitions < plain.transitions


BROKEN = [
    ("mutexlab_broken.ricart_agrawala_greedy_quiet", 2, {"requests": 1}, "capacity"),
    ("mutexlab_broken.ricart_agrawala_greedy_quiet", 3, {"requests": 2}, "capacity"),
    ("mutexlab_broken.starving", 2, {"requests": 1}, "liveness"),
    ("mutexlab_broken.bees", 3, {"flowers": 1, "reeds": 3, "eggs": 1, "cocoons": 1}, "capacity"),
    ("mutexlab_broken.bees_extra_egg", 2, {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 1}, "invariant"),
]


# What a variant must not redeclare: the starving node requests again with none left, so
# "no request left and none pending" does not mean it will not request (retired clocks).
NOT_FOR = {"mutexlab_broken.starving": {"retired": None}}
# The costliest cases of the sweep below (0.5 CPU-s each), for the full run only: the same variant
# stays in the quick subset with the depth-first search, and breadth-first with the others.
QUICK_LEAVES_OUT = {
    "test_reductions_keep_the_finding_of_every_broken_variant[undeclared-bfs-bees-3]",
    "test_reductions_keep_the_finding_of_every_broken_variant[redeclared-bfs-bees-3]",
}


def redeclare(monkeypatch, algorithm, processes, options):
    """The variant's base class's reductions, declared for the variant's own classes (as its author
    would, having checked that it reads their fields as the base class does)."""
    from mutexlab.check import engine
    from mutexlab.protocols.registry import SPECS, build_setup

    setup = build_setup(algorithm, processes, dict(options), 0)
    classes = {type(p) for p in setup.protocols.values()}
    base = next(
        d
        for d in (s.declared_reductions() for s in SPECS.values())
        if d is not None and all(any(issubclass(c, k) for k in d.classes) for c in classes)
    )
    own = {  # the variant's own parts (a frozen clock), declared as its author would
        name: type(value)
        for p in setup.protocols.values()
        for name, value in vars(p).items()
        if base.parts is not None and type(value) not in base.parts.get(name, ())
    }
    mine = replace(base.only(*classes).with_parts(**own), **NOT_FOR.get(algorithm, {}))
    monkeypatch.setattr(engine, "declared_for", lambda algorithm: [mine])


@pytest.mark.parametrize(
    "algorithm, processes, options, kind", BROKEN, ids=[f"{b[0].split('.')[1]}-{b[1]}" for b in BROKEN]
)
@pytest.mark.parametrize("search", ["dfs", "bfs"])
@pytest.mark.parametrize("declared", [False, True], ids=["undeclared", "redeclared"])
def test_reductions_keep_the_finding_of_every_broken_variant(
    monkeypatch, algorithm, processes, options, kind, search, declared
):
    """A variant gets no declared reduction unless it declares one (then it gets them all)."""
    plain, _ = check(algorithm, processes, options, reductions=False, search=search)
    if declared:
        redeclare(monkeypatch, algorithm, processes, options)
    reduced, model = check(algorithm, processes, options, reductions=True, search=search)
    assert ("clock-offset normalisation" in model.reductions) == declared
    assert only_finding(plain, kind).processes and only_finding(reduced, kind).processes


def test_reductions_keep_the_deadlock_of_the_silent_node(monkeypatch):
    for reductions, declared in ((True, False), (False, True), (True, True)):
        if declared:
            redeclare(monkeypatch, "mutexlab_broken.ricart_agrawala_forgetful", 3, {"requests": 1})
        result, model = run_check(
            CheckConfig("ricart-agrawala", 3, {"requests": 1}, reductions=reductions),
            setup=FORGETFUL.make_setup(3, {"requests": 1}),
        )
        assert only_finding(result, "deadlock")
        assert ("clock-offset normalisation" in model.reductions) == (reductions and declared)


@pytest.mark.parametrize("processes, options", SMALL)
def test_clock_shifts_of_bees_never_add_worlds_and_keep_the_pass(processes, options):
    clocks = {pid: 0 for pid in range(1, processes + 1)}
    plain, _ = check("bees", processes, dict(options, initial_clocks=clocks), reductions=False)
    reduced, model = check("bees", processes, dict(options, initial_clocks=clocks), reductions=True)
    assert model.reductions == ["clock-offset normalisation", "partial-order reduction"]
    assert plain.verdict == reduced.verdict == "pass"
    assert reduced.states <= plain.states and reduced.finals <= plain.finals


def test_a_duplicated_token_is_rejected_and_the_replay_stops_at_the_same_step(tmp_path, capsys):
    scenario = tmp_path / "token.json"
    assert (
        main(
            [
                "check",
                "mutex",
                "-a",
                "suzuki-kasami",
                "-N",
                "2",
                "--duplicate",
                "1",
                "--search",
                "bfs",
                "--json",
                "--counterexample",
                str(scenario),
            ]
        )
        == 1
    )
    out = json.loads(capsys.readouterr().out)
    assert (
        out["findings"][0]["kind"] == "error" and "holds the token already" in out["findings"][0]["message"]
    )
    assert out["reproduced"][0]
    assert [s["op"] for s in json.loads(scenario.read_text())["steps"]].count("duplicate") == 1
    assert main(["replay", str(scenario)]) == 1  # a finding, as check reports it
    assert "REFUSED: step" in (out := capsys.readouterr().out) and "holds the token already" in out


def test_the_memory_limit_counts_what_the_search_adds_not_what_the_process_held(monkeypatch):
    """A long test session (or any caller) may already hold gigabytes: only the search's own
    growth counts against --max-memory. Growth past the limit still stops it, incomplete."""
    from mutexlab.check import budget as budget_module

    monkeypatch.setattr(budget_module, "rss_mb", lambda: 9_000.0)  # the process held 9 GB before
    held, _ = check("ricart-agrawala", 3, {"requests": 1}, max_memory_mb=4096)
    assert held.complete and held.verdict == "pass"
    readings = iter(range(9_000, 10**9, 500))  # then grows 500 MB per look
    monkeypatch.setattr(budget_module, "rss_mb", lambda: float(next(readings)))
    # without reductions: enough worlds (13,474) for several looks at the memory
    grown, _ = check("ricart-agrawala", 3, {"requests": 1}, max_memory_mb=1000, reductions=False)
    assert not grown.complete and grown.verdict == "incomplete" and "memory limit 1000 MB" in grown.stopped


def test_a_deadlock_counterexample_replays_as_a_deadlock_and_a_cut_one_as_incomplete(tmp_path, capsys):
    """check and replay agree: exit 1 for the deadlock, naming the same processes; the same
    scenario cut one step short is only unfinished (something could still move): exit 3."""
    scenario = tmp_path / "proud.json"
    args = ["check", "mutex", "-a", "mutexlab_broken.ricart_agrawala_proud", "-N", "2", "--requests", "1"]
    assert main([*args, "--json", "--counterexample", str(scenario)]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["findings"][0]["kind"] == "deadlock" and out["reproduced"][0]
    assert main(["replay", "--json", str(scenario)]) == 1
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["deadlock"] == ["node-1", "node-2"] and replayed["refused"] is None
    cut = json.loads(scenario.read_text())
    cut["steps"] = cut["steps"][:-1]
    (tmp_path / "cut.json").write_text(json.dumps(cut))
    assert main(["replay", "--json", str(tmp_path / "cut.json")]) == 3
    assert json.loads(capsys.readouterr().out)["deadlock"] == []
