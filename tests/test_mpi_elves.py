"""The hamster killers as an MPI program, tested unchanged (docs/mpi.md#elves): rank 0 the mayor,
ranks 1..np-1 the elves; the town from the options (the program gets the same as arguments), the
mayor's plan from what it prints (its ``round`` line's contracts), its STOP from its ``stop`` line.

``examples/mpi/elves.cpp`` is built once per module with ``mutexlab mpicxx`` into a temporary
directory, the library into a temporary cache (a skip without g++, a failure under CI). The
audit's reading of a reported plan is also tested on hand-made traces, without a build."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import missing
from test_mpi import mpicc, shared_cache

ROOT = Path(__file__).resolve().parent.parent
ELVES = ROOT / "examples" / "mpi" / "elves.cpp"
REGEX = (ROOT / "examples" / "mpi" / "elves.regex").read_text().strip()
NO_CONTRACTS = REGEX.replace(" (?P<f_contracts>[\\d ]+)", "")  # the round line read, its list not
NO_MAYOR = "(?P<enter>takes)" + REGEX.split("|(?P<enter>takes)", 1)[1]  # none of the mayor's lines read
SMALL = ["-o", "contracts=2", "-o", "rounds=1"]  # two contracts, one round: quick to search
SMALL_ARGS = ["3", "10", "2", "1"]  # the same town as the program's arguments (pins poison contracts rounds)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, str]:
    if shutil.which("g++") is None:
        missing("g++ is not installed: the C++ example cannot be built")
    out = tmp_path_factory.mktemp("mpi-elves")
    found = {}
    for name, flags in (("elves", []), ("ties", ["-DBROKEN_TIES"]), ("stop", ["-DBROKEN_MAYOR_STOP"])):
        made = mpicc(
            shared_cache(tmp_path_factory),
            "-O2",
            "-Wall",
            "-Werror",
            *flags,
            "-o",
            str(out / name),
            str(ELVES),
            command="mpicxx",
        )
        assert made.returncode == 0, made.stderr
        found[name] = str(out / name)
    return found


def elves(cli, program: str, *flags: str, np: int = 3, regex: str = REGEX, args=SMALL_ARGS):
    return cli("test", "elves", "--np", str(np), *SMALL, *flags, "--regex", regex, "--mpi", program, *args)


@pytest.mark.parametrize("strategy", ("random", "pct"))
def test_the_correct_elves_pass_judged_on_the_plan_their_mayor_printed(cli, built, tmp_path, strategy):
    trace = tmp_path / "t.jsonl"
    ran = elves(cli, built["elves"], "--strategy", strategy, "--runs", "30", "--trace", trace, "--json")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert json.loads(ran.stdout)["verdict"] == "PASS"
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    run = events[0]
    assert run["processes"] == {"0": "mayor", "1": "elf-1", "2": "elf-2"}  # rank 0 is node 0
    assert "plan" not in run["params"] and run["params"]["contracts"] == 2  # the mayor drew its own
    rounds = [e for e in events if e["event"] == "round"]
    assert [(e["pid"], len(e["contracts"])) for e in rounds] == [("mayor", 2)]  # read as a list
    done = sorted((e["round"], e["contract"]) for e in events if e["event"] == "contract_done")
    assert done == [(1, 1), (1, 2)]
    assert [e["pid"] for e in events if e["event"] == "stop"] == ["mayor"]


def test_the_correct_elves_pass_a_systematic_search(cli, built):
    ran = elves(cli, built["elves"], "--strategy", "systematic", "--runs", "5000")
    assert ran.returncode == 0 and "PASS — searched exhaustively" in ran.stdout, ran.stdout + ran.stderr


def test_elves_ordering_requests_by_timestamp_alone_are_caught_shrunk_and_replayed(cli, built, tmp_path):
    scenario = tmp_path / "ties.json"
    ran = elves(cli, built["ties"], "--counterexample", scenario)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "[contract-twice] contract:1.1 was taken 2 times" in ran.stdout, ran.stdout
    data = json.loads(scenario.read_text())
    assert data["nodes"] == 2 and len(data["steps"]) <= 6 and data["options"]["drawn_by_program"] is True
    again = cli("replay", scenario, "--mpi", built["ties"], *SMALL_ARGS)
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    fixed = cli("replay", scenario, "--mpi", built["elves"], *SMALL_ARGS)
    assert fixed.returncode != 1 and "did NOT reproduce" in fixed.stdout, fixed.stdout


def test_a_mayor_stopping_a_round_early_is_caught_by_its_printed_stop_and_plan(cli, built):
    # Its STOP is MPI bytes the audit cannot read: the mayor's "round 1 is over" line stands for
    # it, and the plan it printed says which contract was never done.
    ran = elves(cli, built["stop"], "--no-shrink")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "[stop-before-done] mayor stopped round 1" in ran.stdout, ran.stdout


def test_a_mayor_whose_contracts_are_not_read_is_never_passed(cli, built):
    ran = elves(cli, built["elves"], "--runs", "5", regex=NO_CONTRACTS)
    assert ran.returncode == 3 and "PASS" not in ran.stdout, ran.stdout + ran.stderr
    assert "INCOMPLETE — no finding in random: 5 runs" in ran.stdout, ran.stdout
    assert "[plan-unreported] the mayor's round 1 note names no contracts" in ran.stdout, ran.stdout
    # The broken mayor is still caught without the plan: its stop came before a contract_done.
    stop = elves(cli, built["stop"], "--no-shrink", regex=NO_CONTRACTS)
    assert stop.returncode == 1 and "[stop-before-done]" in stop.stdout, stop.stdout


def test_a_mayor_whose_lines_are_not_read_is_named_so_not_a_deadlock(cli, built):
    """No line of rank 0 matches the regex: the run comes to rest unfinished (no round begun, no
    MAYOR_DONE), which was called a deadlock; it is what it is: the mayor's output unread."""
    ran = elves(cli, built["elves"], "--runs", "2", "--no-shrink", regex=NO_MAYOR)
    assert ran.returncode == 1, ran.stdout
    assert "FINDING [no-progress-seen]" in ran.stdout, ran.stdout
    assert "nothing of mayor (node 0) was read but its messages" in ran.stdout, ran.stdout
    assert "FINDING [deadlock]" not in ran.stdout, ran.stdout


def test_a_program_given_another_town_than_the_options_is_never_passed(cli, built):
    ran = elves(cli, built["elves"], "--runs", "5", args=["3", "10", "1", "1"])  # 1 contract, not 2
    assert ran.returncode != 0 and "PASS" not in ran.stdout, ran.stdout + ran.stderr
    assert "[plan-unlike-town] the mayor's round 1 hands out 1 contract" in ran.stdout, ran.stdout


def test_elves_need_a_rank_for_the_mayor_and_one_for_an_elf(cli, built):
    ran = elves(cli, built["elves"], np=1)
    assert ran.returncode == 2 and "--np 1: elves needs rank 0 for its node 0" in ran.stderr, ran.stderr


# -- the audit's reading of a reported plan, on hand-made traces ------------------------------


def trace(*body: dict, plan: list | None = None) -> list[dict]:
    params = {"contracts": 2, "hamsters": [1, 5], "rounds": 1, "pins_per_elf": 1, "poison_per_hamster": 1}
    run = {
        "event": "run",
        "pid": "run",
        "problem": "elves",
        "processes": {"0": "mayor", "1": "elf-1"},
        "capacities": {"contract:*": 1, "pins": 3, "poison": 10},
        "params": {**params, **({"plan": plan} if plan is not None else {})},
    }
    return [run, *({"t": float(n), **e} for n, e in enumerate(body, 1))]


def elf(event: str, clock: int, **fields) -> dict:
    return {"event": event, "pid": "elf-1", "vc": {"mayor": 1, "elf-1": clock}, **fields}


def one_contract(hamsters: int, poison: int) -> list[dict]:
    """Elf 1 does contract 1.1 (``hamsters``), taking ``poison`` portions."""
    return [
        elf("enter", 1, resource="contract:1.1", units=1),
        elf("enter", 2, resource="pins", units=1),
        elf("enter", 3, resource="poison", units=poison),
        elf("contract_done", 4, round=1, contract=1, hamsters=hamsters),
        elf("exit", 5, resource="poison", units=poison),
        elf("exit", 6, resource="pins", units=1),
        elf("exit", 7, resource="contract:1.1", units=1),
        elf("state", 8, state="ELF_DONE"),
    ]


def mayor(event: str, **fields) -> dict:
    return {"event": event, "pid": "mayor", "vc": {"mayor": 2, "elf-1": 8}, **fields}


def rules_of(events: list[dict]) -> list[str]:
    from mutexlab.audit import verify_events

    return sorted(v.rule for v in verify_events(events).violations)


def test_the_plan_the_mayor_reports_is_the_one_judged():
    begin = {"event": "round", "pid": "mayor", "vc": {"mayor": 1}, "round": 1, "contracts": [3, 2]}
    end = [mayor("stop", round=1), mayor("state", state="MAYOR_DONE")]
    # Contract 1.2 of the reported plan is never done (yet stopped), and 1.1 takes 2 portions for
    # 3 hamsters.
    assert rules_of(trace(begin, *one_contract(3, 2), *end)) == [
        "contract-not-done",
        "poison-units",
        "stop-before-done",
    ]
    # A header's plan is the one judged, whatever the round note says.
    assert rules_of(trace(begin, *one_contract(2, 2), *end, plan=[[2]])) == []
    # A round note with no contracts: undecided, never safe.
    bare = {**begin, "contracts": None}
    assert rules_of(trace(bare, *one_contract(3, 3), *end)) == ["plan-unreported"]
    from mutexlab.audit import verify_events

    assert verify_events(trace(bare, *one_contract(3, 3), *end)).status == "INCOMPLETE"
    # One number is one contract; a round unlike the header's town is undecided too.
    single = {**begin, "contracts": 3}
    assert rules_of(trace(single, *one_contract(3, 3), *end)) == ["plan-unlike-town"]


def test_the_mayors_stop_note_is_its_stop_to_every_elf():
    begin = {"event": "round", "pid": "mayor", "vc": {"mayor": 1}, "round": 1, "contracts": [3, 2]}
    second = [
        {**e, "resource": e["resource"].replace("1.1", "1.2")} if "resource" in e else e
        for e in one_contract(2, 2)
    ]
    second = [dict(e, contract=2) if e["event"] == "contract_done" else e for e in second]
    for e in second:
        e["vc"] = {"mayor": 1, "elf-1": e["vc"]["elf-1"] + 8}
    body = [begin, *one_contract(3, 3)[:-1], *second]
    done = {"event": "state", "pid": "mayor", "vc": {"mayor": 3, "elf-1": 16}, "state": "MAYOR_DONE"}
    stop = {"event": "stop", "pid": "mayor", "vc": {"mayor": 2, "elf-1": 16}, "round": 1}
    assert rules_of(trace(*body, stop, done)) == []
    # Without it the round was never stopped; with it before the last contract_done, too early.
    assert rules_of(trace(*body, done)) == ["rounds-unfinished"]
    early = {"event": "stop", "pid": "mayor", "vc": {"mayor": 2, "elf-1": 8}, "round": 1}
    assert rules_of(trace(*body, early, done)) == ["stop-before-done"]


def test_a_printed_list_of_numbers_is_a_list():
    from mutexlab.mpi.rank import field, meaning

    assert field("3 1 4") == [3, 1, 4] and field("3, 1, 4") == [3, 1, 4] and field("7") == 7
    assert field("a 1") == "a 1" and field("²") == "²"  # a digit int() refuses stays text
    said = meaning({"event_round": "round 1", "f_round": "1", "f_contracts": "2 5 "}, "")
    assert said == [{"type": "event", "event": "round", "round": 1, "contracts": [2, 5]}]


def test_replay_reads_the_ranks_resource_the_scenario_was_found_with():
    from mutexlab.mpi import rank_argv, resource_of

    assert resource_of(rank_argv(["./elves"], "r", ""), "cs") == ""  # several: the ranks name them
    assert resource_of(rank_argv(["./ra"], "r", "cs"), "") == "cs"
    assert resource_of(["./node"], "cs") == "cs"  # no rank adapter: what replay gives
