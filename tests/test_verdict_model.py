"""The verdict model: 0 SAFE, 1 VIOLATION (a safety property broken in what the trace shows),
2 unreadable, 3 INCOMPLETE (no safety violation, but the trace ends unfinished: cut short or
stalled, a trace alone cannot tell). Every audit rule is classified as safety, progress or
undecided; a trace cut short is never called a violation, a broken algorithm still is.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from conftest import audited

from mutexlab.audit import verify_events
from mutexlab.audit.rules import problem_checks
from mutexlab.audit.verdict import Verdict
from mutexlab.cli import main
from mutexlab.commands.simulating import exit_code
from mutexlab.findings import PROGRESS, SAFETY, UNDECIDED, Violation, rules_of
from mutexlab.problems import PROBLEMS
from mutexlab.protocols.registry import SPECS, make_setup
from mutexlab.sim import workload

ROOT = Path(__file__).resolve().parent.parent
AUDIT = ROOT / "shared" / "mutexlab" / "audit"
PROTOCOLS = ROOT / "shared" / "mutexlab" / "protocols"  # a protocol package's own audit.py
SK_NOTES = ROOT / "examples" / "scenarios" / "suzuki-kasami-notes.json"


def simulated(setup, seed=0, path=None, **config) -> list[dict]:
    return audited(setup, seed, path, **config).events


def write(path: Path, events: list[dict]) -> Path:
    path.write_text("".join(json.dumps({k: v for k, v in e.items() if k != "_line"}) + "\n" for e in events))
    return path


def verify(capsys, path: Path, *flags: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", str(path), *flags])
    return code, capsys.readouterr().out


# -- classification ------------------------------------------------------------------------------
def reported_rules() -> set[str]:
    """Every rule the audit modules can report: the rule argument (the first, or ``rule=``) of
    each call of ``Violation`` or of a helper that makes one from its first parameter ``rule``;
    both branches of a conditional expression. A rule that is not written out as a string fails the test: the
    classification must see every rule."""
    found: set[str] = set()

    def strings(node, where: str) -> set[str]:
        if where.startswith("rules.py:") and ast.unparse(node) == "rule.name":
            # a problem's holding rule, named where the problem declares it (below)
            return {r.name for p in PROBLEMS.values() for r in p.rules}
        if isinstance(node, ast.IfExp):
            return strings(node.body, where) | strings(node.orelse, where)
        assert isinstance(node, ast.Constant) and isinstance(node.value, str), (
            f"{where}: the rule must be a string literal (or a conditional between two), "
            f"not {ast.unparse(node)}"
        )
        return {node.value}

    # the audit's own modules, the protocols' audits, and the problems' rules (a ``Broken`` each)
    rules = [*(ROOT / "shared" / "mutexlab" / "problems").glob("*.py"), *PROTOCOLS.rglob("rules.py")]
    for source in sorted([*AUDIT.glob("*.py"), *PROTOCOLS.rglob("audit.py"), *rules]):
        tree = ast.parse(source.read_text())
        helpers = [
            f
            for f in ast.walk(tree)
            if isinstance(f, ast.FunctionDef)
            and [a.arg for a in f.args.args[:1]] == ["rule"]
            and any(isinstance(c, ast.Call) and ast.unparse(c.func) == "Violation" for c in ast.walk(f))
        ]
        reporters = {"Violation", "Broken"} | {f.name for f in helpers}
        passed_on = {id(c) for f in helpers for c in ast.walk(f) if isinstance(c, ast.Call)}  # their `rule`
        for call in ast.walk(tree):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)) or id(call) in passed_on:
                continue
            if call.func.id in reporters:
                rule = call.args[0] if call.args else next(k.value for k in call.keywords if k.arg == "rule")
                found |= strings(rule, f"{source.name}:{call.lineno}")
    return found


def test_every_rule_the_audit_reports_is_classified_exactly_once():
    for spec in SPECS.values():  # a family's Invariants declare its own rules' classes when loaded
        if spec.audit is not None:
            spec.audit()
    for problem in PROBLEMS.values():  # and a problem's, with its holding rules
        problem_checks(problem)
    SAFETY_RULES, PROGRESS_RULES, UNDECIDED_RULES = rules_of(SAFETY), rules_of(PROGRESS), rules_of(UNDECIDED)
    sets = {"safety": SAFETY_RULES, "progress": PROGRESS_RULES, "undecided": UNDECIDED_RULES}
    for a, b in [("safety", "progress"), ("safety", "undecided"), ("progress", "undecided")]:
        assert not sets[a] & sets[b], f"{sorted(sets[a] & sets[b])} are both {a} and {b}"
    reported = reported_rules()
    assert len(reported) > 30, "the scan must find the audit's rules"
    unclassified = reported - SAFETY_RULES - PROGRESS_RULES - UNDECIDED_RULES
    assert not unclassified, (
        f"classify these rules (findings.py, or the Invariants' rules): {sorted(unclassified)}"
    )
    assert {"capacity", "egg-off-reed", "contract-twice"} <= SAFETY_RULES
    assert {"request-unserved", "held-at-end", "left-waiting", "not-finished"} <= PROGRESS_RULES


def test_the_status_and_exit_code_follow_the_worst_kind_of_finding():
    safety, progress, undecided = (
        Violation("capacity", "x"),
        Violation("held-at-end", "y"),
        Violation("audit-incomplete", "z"),
    )
    cases = [
        ([], "SAFE", 0),
        ([progress], "INCOMPLETE", 3),
        ([undecided], "INCOMPLETE", 3),
        ([progress, safety], "VIOLATION", 1),
        ([safety, undecided], "VIOLATION", 1),
    ]
    for found, status, code in cases:
        verdict = Verdict("lamport", found, ["capacity by happened-before"])
        assert (verdict.status, verdict.exit_code) == (status, code)
        assert verdict.safe == (status != "VIOLATION") and verdict.ok == (status == "SAFE")
    # A simulation: the run's own outcome joins the audit's.
    clean = Verdict("lamport", [], [])
    assert exit_code(clean, finished=True) == 0
    assert exit_code(clean, finished=False) == 3  # stalled or event limit
    assert exit_code(clean, finished=True, failed=True) == 1  # a participant rejected an input
    assert exit_code(None, finished=False) == 3  # --no-audit, stalled
    assert exit_code(Verdict("lamport", [safety], []), finished=False) == 1


# -- a trace cut short is INCOMPLETE, never a VIOLATION --------------------------------------------
@pytest.mark.parametrize("algorithm", list(SPECS))
def test_no_prefix_of_a_correct_run_is_called_a_violation(algorithm):
    """A simulated trace is written in causal order, so every prefix is a trace cut short: the
    audit may find it unfinished, never unsafe."""
    n, options = {"bees": (4, {"flowers": 2, "reeds": 2}), "elves": (3, {"rounds": 2})}.get(
        algorithm, (4, {"requests": 2})
    )
    events = simulated(make_setup(algorithm, n, options, 1), seed=1)
    assert verify_events(events).status == "SAFE"
    statuses = {verify_events(events[:k]).status for k in range(1, len(events))}
    assert statuses == {"INCOMPLETE", "SAFE"} or statuses == {"INCOMPLETE"}, statuses


def test_a_real_trace_truncated_after_an_enter_is_incomplete_exit_3(tmp_path, capsys):
    events = simulated(make_setup("ricart-agrawala", 3, {"requests": 2}, 0))
    cut = next(n for n, e in enumerate(events) if e["event"] == "enter") + 1
    code, out = verify(capsys, write(tmp_path / "cut.jsonl", events[:cut]))
    assert code == 3, out
    head = out.splitlines()[0]
    assert head.startswith("ricart-agrawala: INCOMPLETE (") and "no safety violation" in head
    assert "unfinished (" in out and "cut short or stalled" in out and "[held-at-end]" in out
    assert "VIOLATION" not in out
    code, out = verify(capsys, tmp_path / "cut.jsonl", "--json")
    data = json.loads(out)
    assert code == 3 and data["verdict"] == "INCOMPLETE" and data["exit_code"] == 3 and data["safe"] is False
    assert {v["kind"] for v in data["violations"]} == {"progress"}


def test_the_tours_tampered_example_is_refused_for_its_clocks_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["replay", str(SK_NOTES), "--trace", "sk.jsonl"]) == 0
    # grep -v '"event":"exit","pid":"node-1"' sk.jsonl > tampered.jsonl
    lines = Path("sk.jsonl").read_text().splitlines(keepends=True)
    Path("tampered.jsonl").write_text("".join(s for s in lines if '"event":"exit","pid":"node-1"' not in s))
    # the missing exit leaves node-1's own clock skipping an event: refused before any verdict
    assert main(["verify", "tampered.jsonl"]) == 2
    err = capsys.readouterr().err
    assert "tampered.jsonl:17: the vector clocks contradict each other" in err, err
    assert "node-1's own entry skips events" in err


def test_a_broken_algorithm_is_a_violation_and_a_deadlocking_one_is_incomplete(tmp_path, capsys):
    from mutexlab_broken import ricart_agrawala_greedy_quiet as greedy
    from mutexlab_broken.maekawa_variants import NoInquire
    from test_maekawa import _variant

    events = simulated(greedy.make_setup(3, {"requests": 2}), seed=0, dwell={"cs": 3.0})
    code, out = verify(capsys, write(tmp_path / "greedy.jsonl", events))
    assert code == 1 and ": VIOLATION (" in out and "[capacity]" in out

    stalled = []
    for seed in range(20):
        result_events = simulated(_variant(NoInquire, 7, 2), seed=seed)
        verdict = verify_events(result_events)
        if not verdict.ok:
            stalled.append(seed)
            code, out = verify(capsys, write(tmp_path / f"deadlock{seed}.jsonl", result_events))
            assert code == 3 and ": INCOMPLETE (" in out and "[request-unserved]" in out, out
    assert stalled, "Maekawa without INQUIRE must deadlock on some seed for this test to mean anything"


def test_simulate_says_incomplete_3_for_a_deadlock_and_violation_1_for_a_broken_run(monkeypatch, capsys):
    from mutexlab_broken import ricart_agrawala_greedy_quiet as greedy
    from mutexlab_broken.maekawa_variants import NoInquire
    from test_maekawa import _variant

    monkeypatch.setattr(workload, "build_setup", lambda name, n, options, seed: _variant(NoInquire, n, 2))
    codes = {
        seed: main(["simulate", "mutex", "-a", "maekawa", "-N", "7", "-M", "2", "--seed", str(seed)])
        for seed in range(20)
    }
    out = capsys.readouterr().out
    assert 3 in codes.values() and set(codes.values()) <= {0, 3}
    assert "STALLED" in out and "audit: INCOMPLETE (" in out and "audit: VIOLATION" not in out

    monkeypatch.setattr(workload, "build_setup", lambda name, n, options, seed: greedy.make_setup(n, options))
    assert main(["simulate", "mutex", "-a", "ricart-agrawala", "-N", "3", "-M", "2", "--cs", "3"]) == 1
    assert "audit: VIOLATION (" in capsys.readouterr().out


def test_replay_of_a_scenario_that_stops_inside_is_incomplete_exit_3(tmp_path, capsys):
    scenario = tmp_path / "inside.json"
    scenario.write_text(
        json.dumps(
            {"algorithm": "lamport", "processes": 2, "steps": [{"op": "request", "pid": 1}, {"op": "drain"}]}
        )
    )
    assert main(["replay", str(scenario)]) == 3
    out = capsys.readouterr().out
    assert "lamport: INCOMPLETE (" in out and "[held-at-end] node-1 still holds cs" in out
    scenario.write_text(
        json.dumps(
            {
                "algorithm": "lamport",
                "processes": 2,
                "steps": [
                    {"op": "request", "pid": 1},
                    {"op": "drain"},
                    {"op": "exit", "pid": 1},
                    {"op": "drain"},
                ],
            }
        )
    )
    assert main(["replay", str(scenario), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "SAFE"


def test_compare_exits_3_when_a_run_stalls_without_a_violation(monkeypatch, capsys):
    from mutexlab_broken.maekawa_variants import NoInquire
    from test_maekawa import _variant

    real = workload.build_setup

    def some_broken(solution, n, options, seed):  # a name, or the Solution a command resolved
        name = getattr(solution, "name", solution)
        return (
            _variant(NoInquire, n, options["requests"])
            if name == "maekawa"
            else real(solution, n, options, seed)
        )

    monkeypatch.setattr(workload, "build_setup", some_broken)
    codes = {
        seed: main(["compare", "-N", "7", "-M", "2", "--seed", str(seed), "--algorithms", "lamport,maekawa"])
        for seed in range(20)
    }
    out = capsys.readouterr().out
    assert 3 in codes.values() and set(codes.values()) <= {0, 3}, codes
    assert "STALLED" in out and "UNSAFE" not in out
    # each stalled run says who waits, whichever row it is (not only the last, and without a violation)
    assert "maekawa: STALLED node-" in out, out
