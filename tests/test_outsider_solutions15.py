"""Solutions written in other people's styles (tests/outsiders/o15_*.py), each with a planted bug
caught with its witness, and the defect session 14 left: a stop never hides a violation. A run
that a handler leaving a state of no name (a plain ``Enum``'s) stopped was REFUSED, exit 2, over
RabbitMQ, in ``simulate``, ``replay`` and ``compare``, even when the trace up to the stop already
broke safety; a handler that raised after a violation was said alone. Now the violation is
reported, exit 1, the stop said beside it. Small bounds: seconds each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from outsider_edits import OUTSIDERS, edited, said

KMUTEX = OUTSIDERS / "o15_kmutex_permit_tree.py"
PHIL = OUTSIDERS / "o15_phil_dispatch_forks.py"
BEES = OUTSIDERS / "o15_bees_reed_heap.py"
ELVES = OUTSIDERS / "o15_elves_functional.py"
BEES_SMALL = ("-P", "2", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1")
ELVES_SMALL = ("--elves", "2", "--pins", "1", "--poison", "4", "--hamsters", "1-2")


# -- outsiders of session 15 -----------------------------------------------------------------------
def test_a_kmutex_of_permits_on_a_tree_in_slots_is_safe(cli):
    done = cli("simulate", "kmutex", "-a", KMUTEX, "-N", "5", "-k", "2", "--requests", "3", "--seed", "1")
    assert done.returncode == 0 and "entries:            15 of 15 requests" in done.stdout, said(done)
    assert "messages:           ASK 13, BACK 13, PERMIT 13 (total 39)" in done.stdout, said(done)
    done = cli("check", "kmutex", "-a", KMUTEX, "-N", "3", "-k", "2", "--requests", "1", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)


def test_a_permit_handed_down_but_not_counted_out_is_caught_and_replayed(cli, tmp_path):
    forget = edited(tmp_path, "o15_kmutex_permit_tree.py", "o15-kmutex-permit-tree", "o15", "forget",
                    ("FORGET = False", "FORGET = True"))  # fmt: skip
    ce = tmp_path / "forget.json"
    done = cli(
        "check", "kmutex", "-a", forget, "-N", "3", "-k", "2", "--requests", "1", "--counterexample", ce
    )
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: cs (capacity 2) held by node-1×1, node-2×1, node-3×1" in done.stdout
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", forget)
    assert done.returncode == 1 and "[capacity] cs (capacity 2) held by node-1" in done.stdout, said(done)
    done = cli("simulate", "kmutex", "-a", forget, "-N", "5", "-k", "2", "--requests", "3", "--seed", "1")
    assert done.returncode == 1 and "[capacity] cs (capacity 2) held by node-3" in done.stdout, said(done)


def test_philosophers_with_an_enum_of_forks_and_singledispatch_pass(cli):
    done = cli("simulate", "philosophers", "-a", PHIL, "--seed", "1")
    assert done.returncode == 0 and "meals eaten: 10 of 10" in done.stdout, said(done)
    done = cli("check", "philosophers", "-a", PHIL, "-N", "3")
    assert done.returncode == 0 and "verdict:      PASS" in done.stdout, said(done)


def test_a_philosopher_giving_a_fork_away_mid_meal_is_caught_and_replayed(cli, tmp_path):
    give = edited(tmp_path, "o15_phil_dispatch_forks.py", "o15-phil-dispatch-forks", "o15", "give",
                  ("GIVE_WHILE_EATING = False", "GIVE_WHILE_EATING = True"))  # fmt: skip
    ce = tmp_path / "give.json"
    done = cli("check", "philosophers", "-a", give, "-N", "3", "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: fork:3 (capacity 1) held by philosopher-2×1, philosopher-3×1" in done.stdout
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", give)
    assert done.returncode == 1 and "[capacity] fork:3 (capacity 1) held by philosopher-2" in done.stdout
    done = cli("simulate", "philosophers", "-a", give, "--seed", "1")
    assert done.returncode == 1 and "[capacity] fork:1 (capacity 1) held by philosopher-1" in done.stdout


def test_bees_planned_by_a_heap_of_total_ordered_reeds_pass(cli):
    done = cli("simulate", "bees", "-a", BEES, "-P", "5", "-T", "2", "--seed", "1")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    assert "eggs per reed: reed:1 15, reed:2 10 (total 25, expected 25)" in done.stdout, said(done)
    done = cli("check", "bees", "-a", BEES, "-P", "3", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1",
               "--cross-check")  # fmt: skip
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("check", "bees", "-a", BEES, "-P", "3", "-T", "1", "-K", "1", "--eggs", "1", "--cocoons", "2")
    assert done.returncode == 0 and "verdict:      PASS" in done.stdout, said(done)


def _me_too(where: Path, name: str = "metoo", *edits: tuple[str, str]) -> Path:
    return edited(where, "o15_bees_reed_heap.py", "o15-bees-reed-heap", "o15", name,
                  ("ME_TOO = False", "ME_TOO = True"), *edits)  # fmt: skip


def test_a_bee_counting_its_own_request_as_an_ack_is_caught_and_replayed(cli, tmp_path):
    metoo = _me_too(tmp_path)
    ce = tmp_path / "metoo.json"
    done = cli("check", "bees", "-a", metoo, *BEES_SMALL, "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: flower (capacity 1) held by bee-1×1, bee-2×1" in done.stdout, said(done)
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", metoo)
    assert done.returncode == 1 and "[capacity] flower (capacity 1) held by bee-1" in done.stdout, said(done)
    done = cli("simulate", "bees", "-a", metoo, "-P", "3", "-T", "2", "-K", "1", "--seed", "1")
    assert done.returncode == 1 and "[capacity] flower (capacity 1) held by bee-2" in done.stdout, said(done)


def test_elves_as_module_level_functions_over_a_dict_pass(cli):
    done = cli("simulate", "elves", "-a", ELVES, "--seed", "3")
    assert done.returncode == 0 and "contracts done: 12 of 12" in done.stdout, said(done)
    done = cli("check", "elves", "-a", ELVES, *ELVES_SMALL, "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)


def test_a_mayor_handing_out_one_contract_twice_is_caught_and_replayed(cli, tmp_path):
    keep = edited(tmp_path, "o15_elves_functional.py", "o15-elves-functional", "o15", "keep",
                  ("KEEP_CONTRACT = False", "KEEP_CONTRACT = True"))  # fmt: skip
    ce = tmp_path / "keep.json"
    wide = ("--elves", "2", "--pins", "2", "--poison", "4", "--hamsters", "1-2")
    done = cli("check", "elves", "-a", keep, *wide, "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: contract:1.1 (capacity 1) held by elf-1×1, elf-2×1" in done.stdout
    done = cli("replay", ce, "-a", keep)
    assert done.returncode == 1 and "[contract-twice] contract:1.1 was taken 2 times" in done.stdout, said(
        done
    )
    done = cli("simulate", "elves", "-a", keep, "--seed", "3")
    assert done.returncode == 1 and "[capacity] contract:1.1 (capacity 1) held by elf-3" in done.stdout


@pytest.mark.parametrize(
    ("path", "processes", "options"),
    [
        (KMUTEX, 3, {"requests": 1, "k": 2}),
        (PHIL, 3, {"meals": 1}),
        (BEES, 3, {"flowers": 1, "reeds": 2, "eggs": 1, "cocoons": 1}),
        (ELVES, 2, {"pins": 1, "poison": 4, "hamsters": "1-2", "contracts": 2, "rounds": 1}),
    ],
    ids=["kmutex", "philosophers", "bees", "elves"],
)
def test_explore_steps_each_to_its_end_with_no_finding(path, processes, options):
    from mutexlab.explore.session import Config, Session

    session = Session(Config(str(path), processes, options))
    for _ in range(200):
        steps = session.state()["steps"]
        if not steps:
            break
        session.step(steps[-1]["id"])
    findings = session.state()["findings"]
    assert findings["status"] == "end" and not findings["violations"], findings
    assert findings["summary"].endswith("every process finished; no violation"), findings


def test_compare_takes_each_file_beside_a_solution_of_its_problem(cli):
    other = OUTSIDERS / "o14_kmutex_namespace.py"
    done = cli("compare", "--nodes", "4", "--algorithms", f"{KMUTEX},{other}", "-o", "k=2")
    assert done.returncode == 0 and "o15-kmutex-permit-tree  12/12" in done.stdout, said(done)
    done = cli("compare", "--nodes", "4", "--algorithms", f"elves,{ELVES}")
    assert done.returncode == 0 and "o15-elves-functional" in done.stdout, said(done)
    assert done.stdout.count("    ok") >= 2, said(done)


# -- a stop never hides a violation --------------------------------------------------------------------
GONE = ('NAME = "o15-', '_Gone = Enum("_Gone", ["DEAD"])\nNAME = "o15-')
DIES_PLAIN = ("        self.state = Phase.DEAD\n", "        self.state = _Gone.DEAD\n")
DIES_RAISING = ("        self.state = Phase.DEAD\n", '        raise RuntimeError("no more eggs")\n')


def _both(where: Path) -> Path:
    """The bee one ACK early that leaves a plain Enum's state when it dies: the flower is shared
    long before anyone dies (5 eggs each)."""
    return _me_too(where, "both", GONE, DIES_PLAIN)


def test_simulate_reports_the_violation_a_plain_enum_refusal_came_after(cli, tmp_path):
    """Before: `mutexlab: error: bee-… left it in state _Gone.DEAD …`, exit 2, and nothing of the
    flower two bees had shared long before. Now the violations, exit 1, the refusal beside them."""
    both = _both(tmp_path)
    done = cli("simulate", "bees", "-a", both, "-P", "3", "-T", "2", "-K", "1", "--seed", "1")
    assert done.returncode == 1, said(done)
    assert done.stdout.startswith(
        "VIOLATION (exit 1), seen before the run stopped (a handler left a state of no name: refused):\n"
        "  [capacity] flower (capacity 1) held by bee-2"
    ), said(done)
    assert "mutexlab: refused as well: bee-" in done.stderr, said(done)
    assert "left it in state _Gone.DEAD, a member of _Gone" in done.stderr, said(done)
    done = cli("simulate", "bees", "-a", both, "-P", "3", "-T", "2", "-K", "1", "--seed", "1", "--json")
    summary = json.loads(done.stdout)  # one JSON object, the stop in it
    assert done.returncode == 1 and summary["verdict"] == "violation", said(done)
    assert summary["seen"][0].startswith("[capacity] flower") and "_Gone.DEAD" in summary["error"], summary
    # the control: the same refusal with no violation before it stays exit 2, as before
    plain = edited(tmp_path, "o15_bees_reed_heap.py", "o15-bees-reed-heap", "o15", "plain", GONE, DIES_PLAIN)
    done = cli("simulate", "bees", "-a", plain, "-P", "3", "-T", "2", "-K", "1", "--seed", "1")
    assert done.returncode == 2 and "VIOLATION" not in done.stdout, said(done)
    assert "mutexlab: error: bee-" in done.stderr and "left it in state _Gone.DEAD" in done.stderr


def test_simulate_reports_the_violation_a_handler_raised_after(cli, tmp_path):
    """Before: `mutexlab: finding: bee-1 raised RuntimeError …` alone (exit 1 all the same); the
    shared flower was never said. Now said first, and in --json as ``seen``."""
    raising = _me_too(tmp_path, "raising", DIES_RAISING)
    command = ("simulate", "bees", "-a", raising, "-P", "3", "-T", "2", "-K", "1", "--seed", "1")
    done = cli(*command)
    assert done.returncode == 1, said(done)
    assert done.stdout.startswith("VIOLATION (exit 1), seen before the run stopped (a handler raised):\n")
    assert "[capacity] flower (capacity 1) held by bee-2" in done.stdout, said(done)
    assert "mutexlab: finding: bee-" in done.stderr and "raised RuntimeError: no more eggs" in done.stderr
    done = cli(*command, "--json")
    summary = json.loads(done.stdout)
    assert done.returncode == 1 and summary["finding"] == "handler-raised", said(done)
    assert summary["seen"] and summary["seen"][0].startswith("[capacity] flower (capacity 1)"), summary


def _gone_after_three_exits(where: Path, name: str) -> Path:
    """examples/protocols/``name``.py whose node leaves a plain Enum's state at its third exit."""
    text = (OUTSIDERS.parent.parent / "examples" / "protocols" / f"{name}.py").read_text()
    for old, new in (
        (
            "from typing import Literal",
            'from enum import Enum\nfrom typing import Literal\n_Gone = Enum("_Gone", ["DONE"])',
        ),
        (
            "        self.my_request = None\n        deferred,",
            "        self.my_request = None\n        self.exits = getattr(self, 'exits', 0) + 1\n"
            "        if self.exits >= 3:\n            self.state = _Gone.DONE\n        deferred,",
        ),
        (f'"{name.replace("_", "-")}"', f'"{name.replace("_", "-")}-gone"'),
    ):
        assert old in text, old
        text = text.replace(old, new)
    path = where / f"{name}_gone.py"
    path.write_text(text)
    return path


def test_simulate_of_a_mutex_file_reports_the_violation_a_plain_enum_refusal_came_after(cli, tmp_path):
    """The mutex family's runs are measured (runs.run_measured), whose refusal simulate turned
    into `mutexlab: error: …`, exit 2, hiding the two nodes in cs at once before it."""
    broken = _gone_after_three_exits(tmp_path, "carvalho_roucairol_broken")
    done = cli("simulate", "mutex", "-a", broken, "-N", "3", "-M", "4", "--seed", "0")
    assert done.returncode == 1, said(done)
    assert done.stdout.startswith(
        "VIOLATION (exit 1), seen before the run stopped (a handler left a state of no name: refused):\n"
        "  [capacity] cs (capacity 1) held by node-"
    ), said(done)
    assert "mutexlab: refused as well: node-" in done.stderr and "_Gone.DONE" in done.stderr, said(done)
    # the control: the correct algorithm's same refusal, nothing broken before it, stays exit 2
    fine = _gone_after_three_exits(tmp_path, "carvalho_roucairol")
    done = cli("simulate", "mutex", "-a", fine, "-N", "3", "-M", "4", "--seed", "0")
    assert done.returncode == 2 and "VIOLATION" not in done.stdout, said(done)
    assert "mutexlab: error: node-" in done.stderr and "_Gone.DONE" in done.stderr, said(done)


def test_replay_reports_the_violation_a_plain_enum_refusal_came_after(cli, tmp_path):
    """Before: exit 2, the refusal alone. Now the violation of the steps before it, exit 1; a
    scenario refused before any violation stays exit 2."""
    both = _both(tmp_path)
    steps = [
        {"op": "request", "pid": 1}, {"op": "request", "pid": 1},
        {"op": "deliver", "from": 1, "to": 2}, {"op": "deliver", "from": 2, "to": 1},
        {"op": "request", "pid": 2}, {"op": "request", "pid": 2},
        {"op": "exit", "pid": 1},
    ]  # fmt: skip
    options = {"flowers": 1, "reeds": 2, "eggs": 1, "cocoons": 1}
    scenario = {"algorithm": str(both), "processes": 2, "options": options, "seed": 0, "steps": steps}
    path = tmp_path / "both.json"
    path.write_text(json.dumps(scenario))
    done = cli("replay", path, "-a", both)
    assert done.returncode == 1, said(done)
    assert "[capacity] flower (capacity 1) held by bee-1 (1 unit, line 5), bee-2 (1 unit, line 13)" in (
        done.stdout
    ), said(done)
    assert "mutexlab: the replay stopped there: step 7 (exit): bee-1 (HeapBee, " in done.stderr, said(done)
    done = cli("replay", path, "-a", both, "--json")
    assert done.returncode == 1 and json.loads(done.stdout)["verdict"] == "violation", said(done)
    # over RabbitMQ it stops at the simulator's replay, before the broker (none answers at port 1)
    done = cli("replay", path, "-a", both, "--over-rabbitmq", "--amqp-url", "amqp://guest:guest@127.0.0.1:1/")
    assert done.returncode == 1 and "[capacity] flower (capacity 1) held by bee-1" in done.stdout, said(done)
    assert "not run over RabbitMQ: the simulator's replay stops there" in done.stderr, said(done)
    scenario["steps"] = [*steps[:2], steps[-1]]
    path.write_text(json.dumps(scenario))
    done = cli("replay", path, "-a", both)
    assert done.returncode == 2 and "VIOLATION" not in done.stdout, said(done)
    assert "step 3 (exit): bee-1 (HeapBee, " in done.stderr, said(done)


def test_compare_rows_say_unsafe_then_the_stop(cli, tmp_path):
    """Before: a raising row said the raise alone, and a plain Enum's state stopped the whole
    compare (exit 2). Now each row: UNSAFE, then stopped, with its violations listed; exit 1."""
    both, raising = _both(tmp_path), _me_too(tmp_path, "raising", DIES_RAISING)
    done = cli("compare", "--nodes", "3", "--algorithms", f"{raising},{both}", "-o", "flowers=1", "-o",
               "reeds=2", "--seed", "1")  # fmt: skip
    assert done.returncode == 1, said(done)
    rows = [line for line in done.stdout.splitlines() if line.startswith(("o15-raising ", "o15-both "))]
    assert len(rows) == 2 and all("UNSAFE, then stopped: " in row for row in rows), said(done)
    assert "o15-both: [capacity] flower (capacity 1)" in done.stdout, said(done)
    assert "o15-raising: [capacity] flower (capacity 1)" in done.stdout, said(done)


def test_the_monitors_refusal_never_hides_a_violation_it_saw(tmp_path):
    """The monitor's decision (``outcome.decide``) on a trace with a violation and a participant's
    report of a state of no name: before, REFUSED, exit 2; now VIOLATION, exit 1, the refusal said
    beside it. With no violation in the trace it stays REFUSED, exit 2."""
    from mutexlab import cli as main
    from mutexlab.audit import numbered
    from mutexlab.setups import LEFT_UNNAMED
    from mutexlab.trace import read_trace
    from mutexlab.transport.outcome import Outcome, decide

    trace = tmp_path / "t.jsonl"
    assert (
        main.main(["simulate", "bees", "-a", str(_me_too(tmp_path)), *BEES_SMALL, "--trace", str(trace)]) == 1
    )
    events = numbered(read_trace(str(trace)))
    reason = f"a local input: handler raised: bee-1 (HeapBee, x.py): its handler … {LEFT_UNNAMED} …"
    rejected = [{"process": "bee-1", "count": 1, "reasons": [reason]}]
    outcome = Outcome("r", "o15-metoo", 2, complete=False, rejected=rejected)
    assert decide(outcome, events) == 1
    assert outcome.verdict.startswith("VIOLATION (exit 1), then REFUSED (the run was stopped there): a local")
    assert "  [capacity] flower (capacity 1) held by bee-" in outcome.verdict, outcome.verdict
    assert not outcome.safe
    fine = tmp_path / "fine.jsonl"  # the correct solution's trace: nothing to hide
    assert main.main(["simulate", "bees", "-a", str(BEES), *BEES_SMALL, "--trace", str(fine)]) == 0
    clean = numbered(read_trace(str(fine)))
    outcome = Outcome("r", "o15-bees-reed-heap", 2, complete=False, rejected=rejected)
    assert decide(outcome, clean) == 2 and outcome.verdict.startswith("REFUSED (exit 2, as check"), outcome


# -- over RabbitMQ -------------------------------------------------------------------------------------------
@pytest.mark.broker
@pytest.mark.slow
def test_run_over_rabbitmq_reports_the_violation_before_a_plain_enum_refusal(cli, tmp_path, amqp_url):
    """Before: REFUSED (exit 2), the flower two bees had shared unsaid; the final states their
    Enum's values (`bee-1=1`). Now VIOLATION, exit 1, the refusal beside it; the states by name."""
    both = _both(tmp_path)
    common = ("--amqp-url", amqp_url, "--json")
    done = cli("run", "bees", "-a", both, "-P", "2", "-T", "2", "-K", "1", *common, cwd=tmp_path)
    summary = json.loads(done.stdout)
    assert done.returncode == 1 and summary["status"] == "violation", said(done)
    assert summary["verdict"].startswith("VIOLATION (exit 1), then REFUSED (the run was stopped there): "), (
        summary["verdict"]
    )
    assert "left it in state _Gone.DEAD, a member of _Gone" in summary["verdict"], summary["verdict"]
    assert "[capacity] flower (capacity 1) held by bee-" in summary["verdict"], summary["verdict"]
    assert set(summary["states"].values()) <= {"_Gone.DEAD", "ON_FLOWER", "ON_REED", "WAIT_FLOWER"}, summary


@pytest.mark.broker
@pytest.mark.slow
@pytest.mark.parametrize(
    ("problem", "path", "flags"),
    [
        ("kmutex", KMUTEX, ("-N", "4", "-k", "2", "--requests", "2")),
        ("philosophers", PHIL, ("-N", "3", "--meals", "1")),
        ("bees", BEES, ("-P", "3", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1")),
        ("elves", ELVES, ("--elves", "2", "--contracts", "2", "--rounds", "1")),
    ],
    ids=["kmutex", "philosophers", "bees", "elves"],
)
def test_each_outsider_runs_safe_over_rabbitmq(cli, tmp_path, amqp_url, problem, path, flags):
    common = ("--amqp-url", amqp_url, "--dwell", "0", "--json")
    done = cli("run", problem, "-a", path, *flags, *common, cwd=tmp_path)
    summary = json.loads(done.stdout)
    assert done.returncode == 0 and summary["safe"] and summary["complete"], said(done)
    assert summary["algorithm"] == path.stem.replace("_", "-"), summary
