"""A problem's own flag and option: ``simulate``, ``check`` and ``run`` take ``-k 2``; ``test``
and ``compare`` (one set of flags for every problem) take ``-o k=2``. Each spelling given to the
other command is refused naming the right one, and an option miswritten in case (``-o K=2``)
names the one meant (docs/problems-and-solutions.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KMUTEX = str(ROOT / "examples" / "solutions" / "kmutex_ricart_agrawala.py")
IDLE = f"{sys.executable} -c pass"  # never started: every case is refused before a node runs


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        # before: "unrecognized arguments: -k 2", nothing about -o
        (["test", "kmutex", "--node", IDLE, "-k", "2"], "-k is kmutex's option k here: -o k=2"),
        (["test", "kmutex", "--node", IDLE, "--k=2"], "--k is kmutex's option k here: -o k=2"),
        (
            ["test", "philosophers", "--node", IDLE, "--meals", "2"],
            "--meals is philosophers' workload here: --requests 2",
        ),
        (["compare", "-N", "4", "--algorithms", KMUTEX, "-k", "3"], "-k is kmutex's option k here: -o k=3"),
        # before: "unrecognized arguments: --requests 2", nothing about --meals
        (
            ["run", "philosophers", "--node", IDLE, "--requests", "2"],
            "--requests is philosophers' workload here: --meals 2",
        ),
        (["run", "philosophers", "--node", IDLE, "-R", "3"], "-R is philosophers' workload here: --meals 3"),
        # before: "(options: requests, initial_clocks, k)", requests itself refused as an option
        (
            ["test", "kmutex", "--node", IDLE, "-o", "K=2"],
            "takes no option K (options: k); 'K': did you mean 'k'?",
        ),
        # before: accepted (and passed to the program), undocumented
        (
            ["test", "mutex", "--node", IDLE, "-o", 'initial_clocks={"1": 5}'],
            "mutex takes no option initial_clocks for a program: it sets the Lamport clocks of",
        ),
        # before: "unrecognized arguments: -a x.py", nothing about --node
        (
            ["test", "mutex", "-a", "x.py"],
            "-a is no flag of test: it tests a program, not an algorithm — write "
            "`mutexlab test mutex --node 'python3 x.py'`",
        ),
        (["test", "-a", "x.py"], "`mutexlab test PROBLEM --node 'python3 x.py'` (docs/test-any-program.md)"),
        (["test", "mutex", "--algorithm=./ra"], "write `mutexlab test mutex --node './ra'`"),
        # before: "does not take option(s) K (it takes: initial_clocks, k, requests)", no k meant
        (
            ["simulate", "kmutex", "-a", KMUTEX, "-N", "3", "-o", "K=2"],
            "give the number of k with --k, not as an option",
        ),
        (
            ["simulate", "kmutex", "-a", KMUTEX, "-N", "3", "-o", "k=2"],
            "give the number of k with --k, not as an option",
        ),
    ],
)
def test_the_other_commands_spelling_is_refused_naming_the_right_one(cli, argv, words):
    ran = cli(*argv)
    assert ran.returncode == 2 and words in ran.stderr, ran.stderr


def test_a_misspelt_option_of_any_case_names_the_closest():
    from mutexlab.words import closest

    assert (
        closest(["K", "Meal", "zz"], ["k", "meals"])
        == "; 'K': did you mean 'k'?; 'Meal': did you mean 'meals'?"
    )


def test_an_unknown_algorithm_of_a_problem_with_none_built_in_names_no_empty_list(cli):
    """The philosophers (and kmutex) have no built-in algorithm: the error said "(choose from , or …)"."""
    ran = cli("simulate", "philosophers", "--algorithm", "nosuch")
    words = "invalid choice: 'nosuch' (no algorithm is built in: a dotted module or .py file declaring SPEC)"
    assert ran.returncode == 2 and words in ran.stderr, ran.stderr
    ran = cli("simulate", "mutex", "--algorithm", "nosuch")
    assert ran.returncode == 2 and "(choose from " in ran.stderr and "from ," not in ran.stderr, ran.stderr
