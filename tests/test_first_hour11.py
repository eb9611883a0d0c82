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


def test_check_names_a_file_as_the_user_gave_it(cli):
    """``check -a examples/solutions/x.py`` began its output with the file's absolute path
    (``/home/…/examples/solutions/x.py: 3 processes, …``): now relative to where it was typed."""
    given = "examples/solutions/kmutex_ricart_agrawala_broken.py"
    out = cli("check", "kmutex", "-a", given, "-N", "3", cwd=ROOT)
    assert out.returncode == 1, out.stderr
    assert out.stdout.startswith(f"{given}: 3 processes, requests=1, k=2, seed 0 — "), out.stdout
    assert str(ROOT) not in out.stdout


def test_a_file_of_another_problem_is_refused_naming_it_as_given(cli):
    """The refusal's command, copied, runs: it names the file as typed, not by its absolute path."""
    given = "examples/solutions/kmutex_ricart_agrawala.py"
    out = cli("check", "mutex", "-a", given, "-N", "3", cwd=ROOT)
    assert out.returncode == 2 and str(ROOT) not in out.stderr, out.stderr
    assert f"run it with `mutexlab check kmutex --algorithm {given}`" in out.stderr, out.stderr
    out = cli("check", "mutex", "-a", "examples/solutions/nosuch.py", "-N", "3", cwd=ROOT)
    assert out.stderr.strip().endswith("algorithm file examples/solutions/nosuch.py does not exist"), (
        out.stderr
    )


def test_a_file_outside_the_working_directory_is_named_absolute(cli, tmp_path):
    """Never ``../../x.py``: outside the working directory the path is absolute."""
    given = str(ROOT / "examples" / "solutions" / "kmutex_ricart_agrawala_broken.py")
    out = cli("check", "kmutex", "-a", given, "-N", "3", cwd=tmp_path)
    assert out.stdout.startswith(f"{given}: 3 processes"), out.stdout
