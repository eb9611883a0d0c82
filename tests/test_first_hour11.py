"""What a newcomer meets in the first hour (the eleventh look): the tour's commands, followed one by
one, print what they mean in words a reader types back — no Python dict in a banner."""

from __future__ import annotations

from pathlib import Path

from test_explore_server import _explorer, _stop

ROOT = Path(__file__).resolve().parents[1]


def test_settings_are_written_as_one_types_them():
    """``--option KEY=JSON``: the value as JSON (double quotes), a string as it is."""
    from mutexlab.words import settings

    assert settings({"requests": 1, "parents": {"2": 1, "3": 1}}) == 'requests=1, parents={"2": 1, "3": 1}'
    assert settings({"hamsters": [1, 2], "mode": "fair", "on": True}) == "hamsters=[1, 2], mode=fair, on=true"
    assert settings({}) == ""


def test_the_explore_banner_prints_no_python_dict():
    """The tour's Maekawa scenario: the banner said ``options {'quorums': {'1': [1, 4, 5], ...}}``,
    a Python repr nobody can pass back to ``--option``; now ``quorums={"1": [1, 4, 5], ...}``."""
    scenario = ROOT / "examples" / "scenarios" / "maekawa-inquire-yield.json"
    proc, _, _, first = _explorer("mutex", "--scenario", str(scenario))
    _stop(proc)
    assert "{'" not in first and "options {" not in first, first
    assert first.startswith(
        'mutexlab explore: maekawa, 6 processes, quorums={"1": [1, 4, 5], "2": [2, 5, 6], '
    ), first


def test_the_explore_banner_of_the_quick_start_says_its_settings_as_check_does():
    proc, _, _, first = _explorer("bees", "--bees", "3", "--flowers", "1", "--reeds", "2", "--eggs", "1")
    _stop(proc)
    assert (
        first.rstrip("\n") == "mutexlab explore: bees, 3 processes, flowers=1, reeds=2, eggs=1, cocoons=15"
    ), first


def test_the_check_banner_prints_no_python_dict(cli):
    out = cli("check", "mutex", "-a", "raymond", "-N", "3", "--option", 'parents={"2": 1, "3": 1}').stdout
    assert out.startswith('raymond: 3 processes, requests=1, parents={"2": 1, "3": 1}, seed 0 — '), out
