"""Each family's configuration flags are declared once (``mutexlab.commands.flags``): ``simulate``
and ``run`` (and ``compare`` for the classic workload's size) declare them alike, turn them into
the same configuration, and refuse a bad value alike — exit 2, naming the flag — before any
simulation starts or the broker is touched."""

from __future__ import annotations

import argparse

import pika
import pytest

from mutexlab.cli import build_parser, main
from mutexlab.commands import flags
from mutexlab.protocols.elves import make_setup as elves_setup

NOWHERE = "amqp://127.0.0.1:1/%2F"  # nothing answers: reaching for a broker would be exit 3, not 2

FAMILY_FLAGS = {
    "bees": ["bees", "flowers", "reeds", "eggs", "cocoons"],
    "elves": [
        "elves",
        "pins",
        "poison",
        "contracts",
        "hamsters",
        "rounds",
        "pins_per_elf",
        "poison_per_hamster",
    ],
    "mutex": ["algorithm", "nodes", "requests", "option", "options"],
}
# Arguments each command needs before the case's own (a later flag overrides an earlier one).
BASE = {
    ("simulate", "mutex"): ["-a", "lamport", "-N", "3"],
    ("run", "bees"): ["--amqp-url", NOWHERE],
    ("run", "elves"): ["--amqp-url", NOWHERE],
    ("run", "mutex"): ["--amqp-url", NOWHERE],
}


def _parser(*path: str) -> argparse.ArgumentParser:
    parser = build_parser()
    for name in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser


def _declared(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {a.dest: a for a in parser._actions if a.option_strings}


def _shape(action: argparse.Action) -> tuple:
    kind = getattr(action.type, "__name__", action.type)  # algorithm_name() builds a fresh parser each time
    return type(action), tuple(action.option_strings), kind, action.metavar, action.choices, action.nargs


@pytest.mark.parametrize("family", FAMILY_FLAGS)
def test_simulate_and_run_declare_each_family_flag_alike(family):
    simulate, run = _declared(_parser("simulate", family)), _declared(_parser("run", family))
    for dest in FAMILY_FLAGS[family]:
        assert _shape(simulate[dest]) == _shape(run[dest]), dest


def test_compare_sizes_the_classic_workload_with_the_same_flags():
    simulate, compare = _declared(_parser("simulate", "mutex")), _declared(_parser("compare"))
    for dest in ("nodes", "requests"):
        assert _shape(simulate[dest]) == _shape(compare[dest]), dest


@pytest.mark.parametrize(
    "family, argv, expected",
    [
        (
            "bees",
            ["-P", "4", "-K", "2", "--reeds", "2", "--eggs", "2", "--cocoons", "4"],
            flags.SetupArgs("bees", 4, {"flowers": 2, "reeds": 2, "eggs": 2, "cocoons": 4}),
        ),
        ("elves", [], flags.SetupArgs("elves", 4, {})),
        (
            "elves",
            ["--elves", "3", "--pins", "2", "--hamsters", "2-4", "--poison-per-hamster", "2"],
            flags.SetupArgs("elves", 3, {"pins": 2, "hamsters": [2, 4], "poison_per_hamster": 2}),
        ),
        (
            "mutex",
            ["-a", "raymond", "-N", "4", "-M", "2", "-o", "token_holder=2", "-o", ' parents ={"2": 1}'],
            flags.SetupArgs("raymond", 4, {"requests": 2, "token_holder": 2, "parents": {"2": 1}}),
        ),
    ],
)
def test_simulate_and_run_turn_the_flags_into_the_same_configuration(family, argv, expected):
    for command in ("simulate", "run"):
        assert flags.scenario_config(build_parser().parse_args([command, family, *argv])) == expected, command


def test_an_elves_flag_left_out_takes_make_setups_default():
    """``simulate elves`` used to pass its own copies of the defaults; now make_setup's apply."""
    scenario = flags.scenario_config(build_parser().parse_args(["simulate", "elves"]))
    assert scenario.options == {}
    old = {
        "pins": 3,
        "poison": 10,
        "contracts": 6,
        "hamsters": "1-5",
        "rounds": 2,
        "pins_per_elf": 1,
        "poison_per_hamster": 1,
    }
    assert elves_setup(4, scenario.options, 5).params == elves_setup(4, old, 5).params


BAD = [
    ("bees", ["--bees", "0"], "argument --bees/-P: must be at least 1"),
    ("bees", ["--flowers", "two"], "argument --flowers/-K: 'two' is not a whole number"),
    ("bees", ["--cocoons", "0"], "argument --cocoons: must be at least 1"),
    ("elves", ["--elves", "0"], "argument --elves/-N: must be at least 1"),
    ("elves", ["--pins", "0"], "argument --pins: must be at least 1"),
    ("elves", ["--poison", "0"], "argument --poison: must be at least 1"),
    ("elves", ["--contracts", "0"], "argument --contracts: must be at least 1"),
    ("elves", ["--rounds", "0"], "argument --rounds: must be at least 1"),
    ("elves", ["--pins-per-elf", "0"], "argument --pins-per-elf: must be at least 1"),
    ("elves", ["--poison-per-hamster", "0"], "argument --poison-per-hamster: must be at least 1"),
    ("elves", ["--hamsters", "a-b"], "argument --hamsters: hamsters must be MIN-MAX (e.g. 1-5), got 'a-b'"),
    ("elves", ["--hamsters", "5-1"], "argument --hamsters: hamsters: min 5 is above max 1"),
    ("elves", ["--hamsters", "0-2"], "argument --hamsters: a contract must have at least 1 hamster"),
    ("mutex", ["--algorithm", "nope"], "argument --algorithm/-a: invalid choice: 'nope'"),
    ("mutex", ["--nodes", "0"], "argument --nodes/-N: must be at least 1"),
    ("mutex", ["-r", "0"], "argument --requests/-M/-r: must be at least 1"),
    ("mutex", ["--option", "=3"], "argument --option/-o: expected key=JSON, got '=3'"),
    ("mutex", ["--option", "requests=4"], "give the number of requests with --requests, not as an option"),
    ("mutex", ["--option", "nodes=4"], "give the number of nodes with --nodes, not as an option"),
]


@pytest.fixture
def no_broker(monkeypatch):
    def tripwire(*_args, **_kwargs):
        raise AssertionError("the command touched the broker before refusing its settings")

    monkeypatch.setattr(pika, "BlockingConnection", tripwire)


@pytest.mark.parametrize("command", ["simulate", "run"])
@pytest.mark.parametrize("family, argv, words", BAD, ids=[f"{f} {' '.join(a)}" for f, a, _ in BAD])
def test_a_bad_value_exits_2_naming_the_flag_in_both_commands(
    command, family, argv, words, no_broker, capsys
):
    try:
        code = main([command, family, *BASE.get((command, family), []), *argv])
    except SystemExit as exc:  # argparse's own refusals
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2, err
    assert words in err and out == ""


def test_every_command_takes_a_module_path_or_a_file_for_every_family(tmp_path, monkeypatch):
    """``--algorithm`` names a registered algorithm of the family, a dotted module or a .py file
    (passed on by its absolute path), in simulate, run, explore and check alike."""
    monkeypatch.chdir(tmp_path)
    for command in ("simulate", "run", "explore", "check"):
        for family, size in (("bees", []), ("elves", []), ("mutex", ["-N", "3"])):
            for given, passed in (
                ("mutexlab_broken.ricart_agrawala", "mutexlab_broken.ricart_agrawala"),
                ("mine.py", str(tmp_path / "mine.py")),
                ("sub/mine.py", str(tmp_path / "sub" / "mine.py")),
            ):
                args = build_parser().parse_args([command, family, *size, "-a", given])
                assert flags.scenario_config(args).algorithm == passed, (command, family, given)
        with pytest.raises(SystemExit) as exc:  # another family's registered name is no choice
            build_parser().parse_args([command, "mutex", "-N", "3", "-a", "bees"])
        assert exc.value.code == 2
