"""``mutexlab simulate elves``: the summary, --json, --trace, refused configurations (exit 2),
and exit 1 when a run stalls or the audit finds a violation."""

import json

import pytest
from mutexlab_broken.elves_variants import IgnoresUnitsAhead, MuteToPins

from mutexlab.cli import main
from mutexlab.commands import simulate


def run(capsys, *args):
    code = main(["simulate", "elves", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_summary_reports_contracts_per_elf_and_round_waits_messages_and_verdict(capsys):
    code, out, _ = run(
        capsys,
        "--elves",
        "3",
        "--pins",
        "2",
        "--poison",
        "6",
        "--contracts",
        "4",
        "--hamsters",
        "2-6",
        "--rounds",
        "2",
        "--seed",
        "7",
    )
    assert code == 0
    assert "hamster killers: 3 elves, 2 rounds × 4 contracts (hamsters 2-6)" in out
    assert "elf    round 1" in out and "pin waits" in out and "time waiting" in out
    assert "contracts done: 8 of 8" in out
    assert "messages per acquisition" in out and "CONTRACT_REQUEST" in out
    assert "audit: SAFE" in out


def test_json_is_one_object_with_consistent_counts(capsys):
    code, out, _ = run(capsys, "--elves", "4", "--contracts", "5", "--rounds", "3", "--seed", "11", "--json")
    assert code == 0
    s = json.loads(out)
    assert s["contracts_done_total"] == 15
    per_round = {
        r: sorted(i for elf in s["contracts_done"].values() for i in elf[r]) for r in ("1", "2", "3")
    }
    assert per_round == {r: [1, 2, 3, 4, 5] for r in ("1", "2", "3")}
    assert s["acquisitions"] == {"contract": 15, "pins": 15, "poison": 15}
    assert s["messages_per_acquisition"] == round(s["messages_total"] / 45, 2)
    assert s["messages"]["INIT_CONTRACTS"] == s["messages"]["STOP"] == 12
    assert len(s["plan"]) == 3 and all(1 <= h <= 5 for r in s["plan"] for h in r)
    assert s["audit"]["safe"] and s["stalled"] == {} and s["error"] is None
    assert set(s["final_states"].values()) == {"ELF_DONE", "MAYOR_DONE"}


def test_same_seed_same_run_other_seed_other_run(capsys):
    one = run(capsys, "--seed", "5", "--json")[1]
    assert one == run(capsys, "--seed", "5", "--json")[1]
    assert one != run(capsys, "--seed", "6", "--json")[1]


def test_trace_is_written_and_verifies(capsys, tmp_path):
    trace = tmp_path / "elves.jsonl"
    code, out, _ = run(capsys, "--elves", "3", "--rounds", "2", "--trace", str(trace))
    assert code == 0 and f"trace written to {trace}" in out
    lines = trace.read_text().splitlines()
    assert json.loads(lines[0])["algorithm"] == "elves"
    assert main(["verify", str(trace)]) == 0
    assert "elves: all rounds begun and stopped" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args, words",
    [
        (["--elves", "0"], "--elves/-N: must be at least 1"),
        (["--hamsters", "1-20", "--poison", "10"], "needs 20 poison portions"),
        (["--hamsters", "3", "--poison-per-hamster", "4", "--poison", "10"], "needs 12 poison portions"),
        (["--pins", "2", "--pins-per-elf", "3"], "needs 3 pins but only 2 exist"),
        (["--pins", "0"], "--pins: must be at least 1"),
        (["--contracts", "0"], "--contracts: must be at least 1"),
        (["--rounds", "0"], "--rounds: must be at least 1"),
        (["--hamsters", "5-2"], "min 5 is above max 2"),
        (["--hamsters", "0-2"], "at least 1 hamster"),
        (["--hamsters", "lots"], "MIN-MAX"),
    ],
)
def test_configurations_that_could_never_finish_are_refused_with_exit_2(capsys, args, words):
    try:
        code, out, err = run(capsys, *args)
    except SystemExit as exc:  # a flag's own type refuses it (see test_flags.py)
        (out, err), code = capsys.readouterr(), exc.code
    assert code == 2
    assert words in err and out == ""


def test_malformed_numbers_are_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "elves", "--elves", "many"])
    assert exc.value.code == 2
    assert "not a whole number" in capsys.readouterr().err


def _swap_elves(monkeypatch, cls):
    real = simulate.build_setup

    def build_setup(algorithm, processes, options, seed):
        setup = real(algorithm, processes, options, seed)
        p = setup.params
        for pid in range(1, processes + 1):
            setup.protocols[pid] = cls(
                pid, processes, p["pins"], p["poison"], p["pins_per_elf"], p["poison_per_hamster"]
            )
        return setup

    monkeypatch.setattr(simulate, "build_setup", build_setup)


def test_a_violation_exits_1(capsys, monkeypatch):
    _swap_elves(monkeypatch, IgnoresUnitsAhead)
    code, out, _ = run(capsys, "--elves", "4", "--pins", "1", "--work", "3", "--rounds", "1")
    assert code == 1
    assert "audit: VIOLATION" in out and "[capacity] pins (capacity 1)" in out


def test_a_stall_exits_3_and_names_who_waits_for_whom(capsys, monkeypatch):
    _swap_elves(monkeypatch, MuteToPins)
    code, out, _ = run(capsys, "--elves", "3", "--rounds", "1")
    assert code == 3
    assert "STALLED" in out and "audit: INCOMPLETE" in out and "PINS_REPLY" in out and "elf-2" in out
