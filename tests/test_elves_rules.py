"""The elves' rules that one process's events decide are one definition
(problems/elves_rules.py): for every such rule, an elf planted to break it is caught by
``check``, ``simulate`` and ``verify``, and ``check`` says it checked those rules and no others
(the rules only the audit checks, elves_audit.py, are not on its "checked:" line)."""

from __future__ import annotations

import json

import pytest
from conftest import audited
from mutexlab_broken import elves_rules as planted

from mutexlab.check.engine import CheckConfig, run_check
from mutexlab.commands.check import properties_checked
from mutexlab.findings import SAFETY
from mutexlab.problems.elves_audit import AUDIT_ONLY
from mutexlab.problems.elves_rules import CHECKS, RULES
from mutexlab.protocols.elves.audit import INVARIANTS as OWN_AUDIT
from mutexlab.protocols.registry import make_setup

TOWN = {"pins": 2, "poison": 4, "contracts": 2, "hamsters": [1, 1], "rounds": 1}

# rule planted, the elf that breaks it (the mayor too, for the last)
PLANTED = [
    ("pins-units", planted.TooManyPins),
    ("poison-units", planted.TooMuchPoison),
    ("pins-without-contract", planted.NoContract),
    ("poison-without-pins", planted.NoPins),
    ("two-contracts", planted.KeepsItsContract),
    ("contract-abandoned", planted.NeverDone),
    ("went-home-holding", planted.KeepsItsPins),
    ("done-by-non-holder", planted.DoesTheOtherContract),
    ("done-without-tools", planted.DoneWithoutPoison),
    ("contract-unknown", planted.DoesAContractOfNoRound),
    ("not-finished", planted.IdleElf),
]


def town(cls, seed=0):
    setup = make_setup("elves", 1, dict(TOWN), seed)
    for pid, process in setup.protocols.items():
        if pid:
            process.__class__ = cls
        elif cls is planted.IdleElf:
            process.__class__ = planted.IdleMayor
    return setup


def test_every_rule_is_planted():
    assert {rule for rule, _ in PLANTED} == set(RULES.kinds)


def test_check_says_it_checked_the_rules_and_not_the_audits_own():
    result, model = run_check(CheckConfig("elves", 1, dict(TOWN)))
    assert result.complete and not result.findings
    shown = properties_checked(model)
    assert shown[1] == ", ".join(CHECKS)
    audit_only = (*AUDIT_ONLY.checks, *OWN_AUDIT.checks)  # the problem's and mutexlab's solution's
    assert not any(check in line for check in audit_only for line in shown)


@pytest.mark.parametrize("rule, cls", PLANTED, ids=[r for r, _ in PLANTED])
def test_check_catches_the_planted_elf(rule, cls):
    result, _ = run_check(CheckConfig("elves", 1, dict(TOWN)), setup=town(cls))
    assert result.findings, f"check passed {cls.__name__}"
    assert result.findings[0].message.startswith(f"[{rule}]"), result.findings[0].message


@pytest.mark.parametrize("rule, cls", PLANTED, ids=[r for r, _ in PLANTED])
def test_simulate_and_verify_catch_the_planted_elf(rule, cls, tmp_path, cli):
    path = tmp_path / "t.jsonl"
    run = audited(town(cls), 0, path=path)
    assert rule in {v.rule for v in run.verdict.violations}
    ran = cli("verify", str(path))
    assert ran.returncode == (1 if RULES.kinds[rule] == SAFETY else 3), ran.stdout
    assert f"[{rule}]" in ran.stdout, ran.stdout
    assert audited(town(planted.Elf), 0).verdict.ok


def test_the_checked_line_names_going_home_holding_which_verify_checks(tmp_path, cli):
    """The verdict lists the checks that ran: ``went-home-holding`` runs, so its line is named."""
    path = tmp_path / "t.jsonl"
    audited(town(planted.KeepsItsPins), 0, path=path)
    ran = cli("verify", str(path))
    checked = next(line for line in ran.stdout.splitlines() if line.startswith("checked: "))
    assert "[went-home-holding]" in ran.stdout and "went-home-holding" in checked, ran.stdout


@pytest.mark.parametrize("plan", [True, False], ids=["with-plan", "plan-reported"])
@pytest.mark.parametrize(
    "hamsters", [3, "1-2", {"min": 1}, [1, "5"], [1, 2, 3], ["x" * 500], [5, 1], [0, 3], [-2, 4]]
)
def test_a_header_whose_hamsters_is_no_list_of_numbers_is_refused_naming_the_field(
    hamsters, plan, tmp_path, cli
):
    """The header's ``hamsters`` ([min, max]) read by the audit of a reported plan: anything else
    is an unreadable trace (exit 2, one short line naming the field), never a TypeError."""
    path = tmp_path / "t.jsonl"
    audited(make_setup("elves", 2, dict(TOWN), 0), 0, path=path)
    header, *rest = path.read_text().splitlines()
    run = json.loads(header)
    run["params"]["hamsters"] = hamsters
    if not plan:
        del run["params"]["plan"]  # the mayor's round notes say it
    path.write_text("\n".join([json.dumps(run), *rest]) + "\n")
    ran = cli("verify", str(path))
    message = ran.stderr.strip()
    assert ran.returncode == 2 and "line 1: the run header's params.hamsters must be" in message, ran
    assert len(message.splitlines()) == 1 and len(message) < 300, message


@pytest.mark.parametrize("plan", [[[2, 0]], [[1, -3]], [["2"]], "1,2", [[1], 3]])
def test_a_header_whose_plan_is_no_list_of_rounds_of_hamsters_is_refused(plan, tmp_path, cli):
    """A plan contract of 0 or fewer hamsters, or not a number, makes an unreadable trace (exit 2),
    never a judged one."""
    path = tmp_path / "t.jsonl"
    audited(make_setup("elves", 2, dict(TOWN), 0), 0, path=path)
    header, *rest = path.read_text().splitlines()
    run = json.loads(header)
    run["params"]["plan"] = plan
    path.write_text("\n".join([json.dumps(run), *rest]) + "\n")
    ran = cli("verify", str(path))
    message = ran.stderr.strip()
    assert ran.returncode == 2 and "line 1: the run header's params.plan must be" in message, ran
