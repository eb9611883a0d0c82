"""A step a checker refuses (a handler leaving a state of no name, a plain ``Enum``'s) met before a
violation. Before: ``check`` stopped at the refusal, REFUSED (exit 2), and the violation reachable
past other steps was never found; ``check --swarm`` lost a worker's finding to another worker's
refusal. Now the refused step is a dead end, the search goes on, and a violation it finds is
reported (exit 1) with the refusal beside it; with none found the verdict stays REFUSED (exit 2),
never a pass. The same on the compiled core, its Python twin and the model's own search. And
one JSON shape for a run a stop ended (simulate, compare: docs/exit-codes.md#stopped-json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import missing
from outsider_edits import said

from mutexlab.check import core
from mutexlab.check.engine import CheckConfig, run_check
from mutexlab.check.search import Search
from mutexlab.check.swarm import SwarmResult, _take

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "protocols"


def _gone(where: Path, name: str) -> Path:
    """examples/protocols/``name``.py whose node, leaving with nobody deferred, is left in a state
    of a plain Enum (a refusal): the broken one's violation needs an exit with someone deferred."""
    text = (EXAMPLES / f"{name}.py").read_text()
    for old, new in (
        ("from typing import Literal", 'from enum import Enum\nfrom typing import Literal\n_Gone = Enum("_Gone", ["DONE"])'),
        (
            "        self.my_request = None\n        deferred,",
            "        self.my_request = None\n        if not self.deferred:\n            self.state = _Gone.DONE\n"
            "            return []\n        deferred,",
        ),
        (f'"{name.replace("_", "-")}"', f'"{name.replace("_", "-")}-gone"'),
    ):  # fmt: skip
        assert old in text, old
        text = text.replace(old, new)
    path = where / f"{name}_gone.py"
    path.write_text(text)
    return path


def test_check_reports_the_violation_past_a_refused_step(cli, tmp_path):
    """Before: `mutexlab: error: node-1 … left it in state _Gone.DONE`, exit 2."""
    broken = _gone(tmp_path, "carvalho_roucairol_broken")
    done = cli(
        "check", "mutex", "-a", broken, "-N", "2", "--requests", "4", "--counterexample", tmp_path / "ce.json"
    )
    assert done.returncode == 1, said(done)
    assert "verdict:      VIOLATION — capacity: cs (capacity 1) held by node-1×1, node-2×1" in done.stdout
    assert "refused:      node-1 (BrokenCarvalhoRoucairolNode" in done.stdout and "_Gone.DONE" in done.stdout
    assert "1 refused step: each a dead end" in done.stdout and "replay reproduces it: yes" in done.stdout
    for flags in ((), ("--search", "bfs"), ("--no-reduction",), ("--exact",)):
        done = cli("check", "mutex", "-a", broken, "-N", "2", "--requests", "4", "--json", *flags)
        s = json.loads(done.stdout)
        assert done.returncode == 1 and s["verdict"] == "violation", (flags, said(done))
        assert s["findings"][0]["kind"] == "capacity" and "_Gone.DONE" in s["refused"], s
        assert "every world past a refused step" in s["not_checked"], s
    done = cli(
        "check",
        "mutex",
        "-a",
        broken,
        "-N",
        "2",
        "--requests",
        "4",
        "--swarm",
        "--time",
        "5",
        "--workers",
        "1",
    )
    assert done.returncode == 1 and "verdict:      VIOLATION — capacity" in done.stdout, said(done)
    assert "refused:      node-" in done.stdout, said(done)


def test_a_refusal_with_no_violation_stays_refused_and_invents_no_deadlock(cli, tmp_path):
    """The correct algorithm with the same refusal: REFUSED (exit 2), never PASS. With one request
    each, node-1 holding the resource when node-2 is done can only exit, which is refused: a world
    no step leads on from, which is no deadlock (a pruned step is no stall). Figures and the
    cross-check are not computed on a pruned graph; a swarm says REFUSED, never "not found"."""
    fine = _gone(tmp_path, "carvalho_roucairol")
    for requests in ("1", "4"):
        done = cli("check", "mutex", "-a", fine, "-N", "2", "--requests", requests, "--json", "--metrics")
        s = json.loads(done.stdout)
        assert done.returncode == 2 and s["verdict"] == "refused" and not s["findings"], said(done)
        assert s["metrics"]["stopped"].startswith("not computed: the check met a refused step"), s
    done = cli("check", "mutex", "-a", fine, "-N", "2", "--requests", "1", "--cross-check")
    assert done.returncode == 2 and "verdict:      REFUSED (exit 2)" in done.stdout, said(done)
    assert "PASS" not in done.stdout and "cross-check:  INCONCLUSIVE — not run" in done.stdout, said(done)
    done = cli(
        "check", "mutex", "-a", fine, "-N", "2", "--requests", "1", "--swarm", "--time", "2", "--workers", "1"
    )
    assert done.returncode == 2 and "verdict:      REFUSED (exit 2)" in done.stdout, said(done)


def _outcome(which: str | None, path: Path, reductions: bool, monkeypatch) -> tuple:
    if which is None:
        monkeypatch.setattr(core, "eligible", lambda search: False)
    else:
        monkeypatch.setattr(core, "core_name", lambda: which)
    result, _ = run_check(
        CheckConfig(str(path), 2, {"requests": 4}, reductions=reductions, partial_order=reductions)
    )
    monkeypatch.undo()
    findings = [(f.kind, f.message, f.path) for f in result.findings]
    counts = (result.states, result.transitions, result.depth, result.finals, result.cycles)
    return counts, result.verdict, result.refusal, result.refusals, result.liveness_unjudged, findings


@pytest.mark.parametrize("reductions", [False, True], ids=["plain", "reduced"])
@pytest.mark.parametrize("name", ["carvalho_roucairol_broken", "carvalho_roucairol"])
def test_the_cores_take_a_refused_step_alike(name, reductions, tmp_path, monkeypatch):
    """The compiled core, its twin and the model's own search: the same worlds, counts, refusal
    and finding (a core that stopped at the refusal, or took it as a finding, differs)."""
    if core.CCore is None:  # under CI a failure: a build older than INTERFACE 9 is not used either
        missing("the compiled search core (pip install -e . builds check/_core.c with gcc)")
    path = _gone(tmp_path, name)
    base = _outcome(None, path, reductions, monkeypatch)
    assert _outcome("python", path, reductions, monkeypatch) == base
    assert _outcome("compiled", path, reductions, monkeypatch) == base
    assert base[2] is not None and "_Gone.DONE" in base[2] and base[3] >= 1, base
    assert base[1] == ("violation" if name.endswith("broken") else "refused"), base


def test_a_cycle_closed_after_a_refusal_is_not_judged(monkeypatch):
    """A component of the starving variant, judged as it closes: a liveness finding. Once a step
    was refused anywhere before, a step out of the component may have been pruned: not judged,
    never a finding and never a pass (``liveness_unjudged``)."""
    seen: list = []
    judge = Search.component

    def spy(self, worlds, prefix):
        seen.append((list(worlds), list(prefix)))
        return judge(self, worlds, prefix)

    monkeypatch.setattr(Search, "component", spy)
    result, model = run_check(CheckConfig("mutexlab_broken.starving", 2, {"requests": 1}))
    monkeypatch.undo()
    assert result.findings and result.findings[0].kind == "liveness", result.findings
    worlds, prefix = seen[-1]
    fresh = Search(model)
    assert fresh.component(worlds, prefix) is True  # judged: the finding
    pruned = Search(model)
    pruned.result.refusal = "node-1 … left it in state _Gone.DONE"
    assert pruned.component(worlds, prefix) is False
    assert (
        pruned.result.liveness_unjudged and not pruned.result.findings and pruned.result.verdict == "refused"
    )


def test_a_swarm_finding_wins_over_a_refusal_reported_before_it():
    """Before: the first worker's refusal raised ConfigError and the swarm was REFUSED (exit 2),
    the other worker's finding lost."""
    result, reported = SwarmResult(2), {}
    stats = {"states": 1, "transitions": 0, "searches": 1, "finished": 0}
    assert (
        _take(
            ("config", stats | {"slot": 0}, "node-1 … left it in state _Gone.DONE", None, None),
            reported,
            result,
        )
        is False
    )
    finding = {"kind": "capacity", "message": "cs (capacity 1) held by node-1×1, node-2×1"}
    assert _take(("found", stats | {"slot": 1}, finding, None, {}), reported, result) is True
    assert result.verdict == "violation" and "_Gone.DONE" in (result.refusal or ""), result
    assert result.as_dict()["refused"] == result.refusal
    alone = SwarmResult(1)
    _take(("config", stats | {"slot": 0}, "left it in state _Gone.DONE", None, None), {}, alone)
    assert alone.verdict == "refused"  # never "not-found" (exit 5) nor a pass


def _stop_shape(summary: dict) -> None:
    assert {"verdict", "stopped", "seen", "error"} <= set(summary), summary
    assert isinstance(summary["seen"], list), summary


def test_a_stopped_run_has_one_json_shape(cli, tmp_path):
    """Before: a raise gave {"finding": …, "seen"?}, a refusal {"verdict": "violation", …} only when
    a violation came before it, and nothing at all on stdout without one."""
    fine = _gone(tmp_path, "carvalho_roucairol")
    done = cli("simulate", "mutex", "-a", fine, "-N", "2", "-M", "1", "--seed", "0", "--json")
    assert done.returncode == 2, said(done)
    summary = json.loads(done.stdout)  # before: stdout empty
    _stop_shape(summary)
    assert summary["verdict"] == "refused" and summary["seen"] == [] and "_Gone.DONE" in summary["error"]
    broken = _gone(tmp_path, "carvalho_roucairol_broken")
    done = cli("simulate", "mutex", "-a", broken, "-N", "3", "-M", "4", "--seed", "0", "--json")
    summary = json.loads(done.stdout)
    _stop_shape(summary)
    assert done.returncode == 1 and summary["verdict"] == "violation" and summary["seen"], said(done)
    done = cli("compare", "--nodes", "2", "--algorithms", f"{fine},ricart-agrawala", "--json")
    stopped = [r for r in json.loads(done.stdout)["runs"] if r.get("stopped")]
    assert len(stopped) == 1, said(done)
    _stop_shape(stopped[0])
    assert stopped[0]["verdict"] == "refused", stopped[0]


def test_a_compare_row_of_bad_arguments_is_no_refused_stop(cli):
    """Before: `"verdict": "refused", "stopped": "a handler left a state of no name: refused"` for
    an option the algorithm does not take — no handler ran, nothing was refused. Now its row is the
    error alone, exit 2, as before the one stopped shape."""
    done = cli("compare", "--algorithms", "maekawa", "-N", "3", "-M", "1", "--option", 'k="x"', "--json")
    row = json.loads(done.stdout)["runs"][0]
    assert done.returncode == 2 and row == {
        "algorithm": "maekawa",
        "error": "maekawa does not take option(s) k (it takes: initial_clocks, quorums, requests)",
    }, said(done)


def test_the_monitors_summary_carries_the_stop_and_what_it_saw(cli, tmp_path):
    """``run --json``'s summary (the monitor's ``Outcome``): before, neither ``stopped`` nor
    ``seen``; now both, as ``simulate --json`` gives them ([] when nothing was broken)."""
    from mutexlab.audit import numbered
    from mutexlab.setups import LEFT_UNNAMED
    from mutexlab.trace import read_trace
    from mutexlab.transport.outcome import Outcome, decide

    trace = tmp_path / "t.jsonl"
    broken = _gone(tmp_path, "carvalho_roucairol_broken")
    done = cli("simulate", "mutex", "-a", broken, "-N", "3", "-M", "4", "--seed", "0", "--trace", trace)
    assert done.returncode == 1, said(done)
    reason = f"a local input: node-1 (…): its handler …{LEFT_UNNAMED}_Gone.DONE …"
    rejected = [{"process": "node-1", "count": 1, "reasons": [reason]}]
    outcome = Outcome("r", "carvalho-roucairol-broken-gone", 3, complete=False, rejected=rejected)
    assert decide(outcome, numbered(read_trace(str(trace)))) == 1
    summary = outcome.as_dict()
    assert summary["stopped"] == "a handler left a state of no name: refused", summary
    assert summary["seen"] and summary["seen"][0].startswith("[capacity] cs (capacity 1)"), summary
