"""Solutions written in other people's styles (tests/outsiders/o14_*.py), each with a planted bug
caught with its witness, and the defects session 13's leftovers showed: a ``waiting_for()`` that
raises in ``check``'s liveness phase given as the whole NOT JUDGED finding (figures, path, cycle,
the error), as the deadlock phase gives it; ``check --swarm``'s exits named. Small bounds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from outsider_edits import OUTSIDERS, edited, said
from test_kit_endless import TEMPLATE

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


# -- a waiting_for() that raises in the liveness phase ------------------------------------------------
def endless_raising(where: Path) -> Path:
    """test_kit_endless's coordinator (endless worlds, finite; no deadlock, no starvation) whose
    waiting_for() raises while its node is WANTED: only the liveness phase asks it."""
    text = (
        TEMPLATE.replace("NAME", "o14-endless-wf")
        .replace("NEXT", "0")
        .replace("COUNT", "pass")
        .replace("BOOKKEEPING_HERE", "ClassicNode.BOOKKEEPING")
    )
    old = "    def _grant(self, to):"
    assert old in text
    text = text.replace(
        old,
        "    def waiting_for(self):\n        if self.state == WANTED:\n            raise ValueError('who knows')\n"
        f"        return {{}}\n\n{old}",
    )
    path = where / "endless_wf.py"
    path.write_text(text)
    return path


def test_a_waiting_for_raising_in_the_liveness_phase_is_the_whole_not_judged_finding(cli, tmp_path):
    """Before: `mutexlab: error: asking node-1 … what it waits for: …`, one line, nothing else (no
    figures, no path; --json nothing on stdout); replay of a loop through it a traceback-free but
    bare error. Now the search's figures, the path to a world of the cycle where it raised, the
    cycle, the error with process, state and line; NOT JUDGED, exit 2; --json `not-judged`; its
    counterexample replays to the same NOT JUDGED."""
    stuck = endless_raising(tmp_path)
    ce = tmp_path / "wf.json"
    done = cli("check", "mutex", "-a", stuck, "-N", "2", "--endless", "--counterexample", ce)
    assert done.returncode == 2, said(done)
    out = done.stdout
    assert "states:       13" in out and "transitions:  23" in out, said(done)
    assert (
        "verdict:      NOT JUDGED (exit 2) — liveness: node-1 cannot say what it waits for in a cycle of "
        "the state graph (13 worlds): 3 steps, then 7 repeated" in out
    ), said(done)
    assert "path (3 steps):" in out and "then forever (7 steps):" in out, said(done)
    line = stuck.read_text().splitlines().index("            raise ValueError('who knows')") + 1
    assert (
        f"the cycle cannot be judged: asking node-1 (Node, {stuck}) what it waits for: its waiting_for() "
        f"raised ValueError: who knows at {stuck}:{line} (in waiting_for), in state WANTED. It must return"
        in out
    ), said(done)
    assert "VIOLATION" not in out and "error" not in done.stderr, said(done)
    assert "replay reproduces it: yes — the cycle returns to its start; the cycle cannot be judged" in out
    done = cli("replay", ce, "-a", stuck)
    assert done.returncode == 2, said(done)
    assert "NOT JUDGED (exit 2, as check says it): the cycle cannot be judged: asking node-1 (Node, " in (
        done.stdout
    )
    assert "loop: the last 7 steps return to the world where they began; who waits throughout is unknown" in (
        done.stdout
    )
    for search in ("dfs", "bfs"):
        done = cli("check", "mutex", "-a", stuck, "-N", "2", "--endless", "--json", "--search", search)
        summary = json.loads(done.stdout)
        assert done.returncode == 2 and summary["verdict"] == "not-judged", said(done)
        finding = summary["findings"][0]
        assert finding["kind"] == "liveness" and finding["cycle"], finding
        assert finding["unexplained"].startswith("asking node-1 (Node, "), finding


def test_the_same_coordinator_answering_is_judged_pass(cli, tmp_path):
    """The control: without the raise the same endless workload passes (so the raise alone made it
    not judged)."""
    text = (
        endless_raising(tmp_path)
        .read_text()
        .replace("raise ValueError('who knows')", "return {'GRANT': [1]}")
    )
    fine = tmp_path / "endless_fine.py"
    fine.write_text(text)
    done = cli("check", "mutex", "-a", fine, "-N", "2", "--endless")
    assert done.returncode == 0 and "verdict:      PASS" in done.stdout, said(done)


def test_check_swarm_names_its_exits():
    """Its NOT JUDGED exit was a literal 2 beside named ones: named, with the value the plain
    check gives (the swarm's NOT JUDGED run itself: test_outsider_solutions13)."""
    import inspect

    from mutexlab.commands import check, checkswarm

    assert checkswarm.EXIT_NOT_JUDGED == check.EXIT_BAD == 2
    assert checkswarm.EXIT_FINDING == check.EXIT_FINDING == 1
    source = inspect.getsource(checkswarm.run)
    assert "return 2" not in source and "return 1 " not in source, source


# -- a philosopher's stall names the forks it awaits, not one it holds ------------------------------------
MUTANTS = Path(__file__).resolve().parent / "mutants"


def test_a_philosopher_holding_its_left_fork_is_said_to_wait_for_its_right_only(cli, tmp_path):
    """The classic: everyone holds its left fork and waits for its right. Before: `philosopher-1
    for fork:1, fork:2: FORK from philosopher-2` — fork:1 is its own, held (its protocol holds it;
    only eating enters a fork). Now only the fork whose other philosopher it awaits."""
    left = MUTANTS / "philosophers_left_first.py"
    done = cli("check", "philosophers", "-a", left, "-N", "3")
    assert done.returncode == 1, said(done)
    assert (
        "VIOLATION — deadlock: nothing can move; waiting: philosopher-1 for fork:2: FORK from philosopher-2; "
        "philosopher-2 for fork:3: FORK from philosopher-3; philosopher-3 for fork:1: FORK from philosopher-1"
        in done.stdout
    ), said(done)
    hoard = OUTSIDERS / "o13_phil_bitmask.py"
    text = (
        hoard.read_text()
        .replace('"o13-phil-bitmask"', '"o14-hoard"')
        .replace("HOARD = False", "HOARD = True")
    )
    (tmp_path / "hoard.py").write_text(text)
    done = cli("check", "philosophers", "-a", tmp_path / "hoard.py", "-N", "3")
    assert "waiting: philosopher-1 for fork:1: FORKMSG from philosopher-3; philosopher-2 for fork:2:" in (
        done.stdout
    ), said(done)


# -- a state left a plain int ---------------------------------------------------------------------------
def test_a_handler_leaving_a_plain_int_state_is_refused_by_every_command_naming_it(cli, tmp_path):
    """Before: a state `5` (a module constant ``ST_DEAD = 5``) read by no name: `simulate` a
    protocol error (exit 1), `check` a false deadlock (`bee-1 ended in 5, not DEAD or RETIRED`)
    whose counterexample `replay` reproduced. Now refused as a plain Enum's is: exit 2, the
    process, the handler and its line, the input, and to use strings or a StrEnum."""
    text = (OUTSIDERS / "o12_bees_phases.py").read_text()
    for old, new in (
        ('"o12-bees-phases"', '"o14-int-state"'),
        ("        self.state = S.DEAD\n", "        self.state = 5\n"),
    ):
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "int_state.py"
    path.write_text(text)
    line = text.splitlines().index("    def _leave_flower(self, _action: str) -> list:") + 1
    small = ("-P", "2", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1")
    for command in (("simulate", "bees", "-P", "3", "-T", "2"), ("check", "bees", *small)):
        done = cli(*command, "-a", path)
        assert done.returncode == 2, said(done)
        assert (
            f"its handler ReedTokenBee._leave_flower ({path}:{line}), taking the local action 'exit' in "
            in (done.stderr)
        )
        assert "state ON_FLOWER, left it in state 5, a plain int:" in done.stderr, said(done)
        assert 'make the states strings (`ST_DEAD = "DEAD"`) or a `StrEnum`' in done.stderr, said(done)
        assert "VIOLATION" not in done.stdout and "internal error" not in done.stderr, said(done)
    from mutexlab.explore.session import Config, Session

    session = Session(Config(str(path), 2, {"flowers": 1, "reeds": 2, "eggs": 1, "cocoons": 1}))
    for _ in range(30):
        steps = session.state()["steps"]
        if not steps or any(s["id"] == "exit:1" for s in steps):
            break
        session.step(steps[0]["id"])
    scenario = session.scenario()
    scenario["steps"].append({"op": "exit", "pid": 1})
    ce = tmp_path / "int.json"
    ce.write_text(json.dumps(scenario))
    done = cli("replay", ce, "-a", path)
    assert done.returncode == 2 and "left it in state 5, a plain int" in done.stderr, said(done)


@pytest.mark.parametrize(
    ("state", "said_as"), [("True", "True, a plain bool"), ("5.0", "5.0, a plain float")]
)
def test_a_handler_leaving_a_bool_or_float_state_is_refused_as_an_int_is(cli, tmp_path, state, said_as):
    """A bool or a float names no state any more than an int: before, `simulate` a protocol error
    (`bee-2 cannot take ACKflower in state yes`), `check` a false deadlock (`bee-1 (unfinished;
    its waiting_for() names nothing)`); now refused alike, exit 2, naming the state."""
    text = (OUTSIDERS / "o12_bees_phases.py").read_text()
    for old, new in (
        ('"o12-bees-phases"', '"o14-number-state"'),
        ("        self.state = S.DEAD\n", f"        self.state = {state}\n"),
    ):
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "number_state.py"
    path.write_text(text)
    small = ("-P", "2", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1")
    for command in (("simulate", "bees", "-P", "3", "-T", "2"), ("check", "bees", *small)):
        done = cli(*command, "-a", path)
        assert done.returncode == 2, said(done)
        assert f"state ON_FLOWER, left it in state {said_as}: the traces" in done.stderr, said(done)
        assert "VIOLATION" not in done.stdout, said(done)


@pytest.mark.broker
@pytest.mark.slow
def test_run_over_rabbitmq_stops_at_a_state_of_a_plain_enum_refused_exit_2(cli, tmp_path, amqp_url):
    """Before: the participant whose timer's handler left a plain Enum's state crashed (a
    traceback in its log), the run ended INCOMPLETE (`participants that failed: bee-2, bee-1`, exit
    3) after its stall timeout. Now the participant reports the refusal, the monitor stops the run
    and it ends REFUSED, exit 2, as check, simulate and replay refuse it."""
    text = (OUTSIDERS / "o12_bees_phases.py").read_text()
    for old, new in (
        ('"o12-bees-phases"', '"o14-plain-run"'),
        ("S = _Phase if", '_Gone = Enum("_Gone", ["DEAD"])\nS = _Phase if'),
        ("        self.state = S.DEAD\n", "        self.state = _Gone.DEAD\n"),
    ):
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "plain_run.py"
    path.write_text(text)
    done = cli("run", "bees", "-a", path, "-P", "3", "-T", "2", "--amqp-url", amqp_url, cwd=tmp_path)
    assert done.returncode == 2, said(done)
    logs = Path(done.stderr.split("process logs: ", 1)[1].split()[0])
    summary = json.loads((logs / "summary.json").read_text())
    assert summary["verdict"].startswith("REFUSED (exit 2, as check, simulate and replay refuse it): "), (
        summary
    )
    assert "left it in state _Gone.DEAD, a member of _Gone" in summary["verdict"], summary
    assert not summary.get("participants_failed"), summary


# -- outsiders of session 14 ------------------------------------------------------------------------------
KMUTEX = OUTSIDERS / "o14_kmutex_namespace.py"


def test_a_kmutex_kept_in_a_simplenamespace_and_routed_by_a_dict_is_safe(cli):
    done = cli("simulate", "kmutex", "-a", KMUTEX, "-N", "4", "-k", "2", "--requests", "2", "--seed", "1")
    assert done.returncode == 0 and "entries:            8 of 8 requests" in done.stdout, said(done)
    done = cli("check", "kmutex", "-a", KMUTEX, "-N", "3", "-k", "2", "--requests", "1", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)


def test_a_kmutex_counting_itself_as_an_answer_is_caught_and_replayed(cli, tmp_path):
    greedy = edited(tmp_path, "o14_kmutex_namespace.py", "o14-kmutex-namespace", "o14", "greedy",
                    ("GREEDY = False", "GREEDY = True"))  # fmt: skip
    ce = tmp_path / "greedy.json"
    done = cli(
        "check", "kmutex", "-a", greedy, "-N", "3", "-k", "2", "--requests", "1", "--counterexample", ce
    )
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: cs (capacity 2) held by node-1×1, node-2×1, node-3×1" in done.stdout
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", greedy)
    assert done.returncode == 1 and "[capacity] cs (capacity 2) held by node-1" in done.stdout, said(done)
    done = cli("simulate", "kmutex", "-a", greedy, "-N", "4", "-k", "2", "--requests", "2", "--seed", "1")
    assert done.returncode == 1 and "[capacity] cs (capacity 2) held by" in done.stdout, said(done)


PHIL = OUTSIDERS / "o14_phil_strenum.py"


def test_philosophers_in_a_strenum_of_auto_pass_and_hoarding_deadlocks(cli, tmp_path):
    done = cli("simulate", "philosophers", "-a", PHIL, "--seed", "1")
    assert done.returncode == 0 and "meals eaten: 10 of 10" in done.stdout, said(done)
    done = cli("check", "philosophers", "-a", PHIL, "-N", "3")
    assert done.returncode == 0 and "verdict:      PASS" in done.stdout, said(done)
    hoard = edited(tmp_path, "o14_phil_strenum.py", "o14-phil-strenum", "o14", "hoard",
                   ("HOARD = False", "HOARD = True"))  # fmt: skip
    ce = tmp_path / "hoard.json"
    done = cli("check", "philosophers", "-a", hoard, "-N", "3", "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION — deadlock: nothing can move" in done.stdout, said(done)
    assert "philosopher-1 for fork:1: FORKMSG from philosopher-3" in done.stdout, said(done)
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", hoard)
    assert done.returncode == 1 and "DEADLOCK: nothing can move" in done.stdout, said(done)
    done = cli("simulate", "philosophers", "-a", hoard, "-N", "5", "--meals", "3", "--seed", "0")
    assert done.returncode == 3 and "meals eaten: 0 of 15" in done.stdout, said(done)


def test_a_strenums_lowercase_auto_states_are_refused_at_load_naming_the_rows(cli, tmp_path):
    """Before: philosopher_table dropped the rows keyed 'thinking', … without a word, and every
    message was refused: `simulate` a protocol error, `check` a VIOLATION (`philosopher-1 cannot
    take FORKMSG in state THINKING`), a false verdict. Now the file is refused at load, exit 2."""
    lower = edited(tmp_path, "o14_phil_strenum.py", "o14-phil-strenum", "o14", "lower",
                   ("LOWER = False", "LOWER = True"))  # fmt: skip
    for command in (("simulate", "philosophers"), ("check", "philosophers", "-N", "3")):
        done = cli(*command, "-a", lower)
        assert done.returncode == 2 and "VIOLATION" not in done.stdout, said(done)
        assert (
            "philosopher_table: rows for 'thinking', 'hungry', 'eating', no state of a philosopher "
            "(THINKING, HUNGRY, EATING)" in done.stderr
        ), said(done)
        assert "a StrEnum's auto() makes it lowercase" in done.stderr, said(done)


ELVES = OUTSIDERS / "o14_elves_ifelif.py"
ONE_PIN = ("--elves", "2", "--pins", "1", "--poison", "4", "--hamsters", "1-2")


def test_elves_written_as_if_elif_chains_on_string_states_without_a_table_pass(cli):
    done = cli("simulate", "elves", "-a", ELVES, "--seed", "3")
    assert done.returncode == 0 and "contracts done: 12 of 12" in done.stdout, said(done)
    assert "audit: SAFE" in done.stdout, said(done)
    done = cli("check", "elves", "-a", ELVES, *ONE_PIN, "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)


def test_a_mayor_letting_one_job_more_out_than_it_has_pins_for_is_caught_and_replayed(cli, tmp_path):
    more = edited(tmp_path, "o14_elves_ifelif.py", "o14-elves-ifelif", "o14", "more",
                  ("ONE_MORE = False", "ONE_MORE = True"))  # fmt: skip
    ce = tmp_path / "more.json"
    done = cli("check", "elves", "-a", more, *ONE_PIN, "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: pins (capacity 1) held by elf-1×1, elf-2×1" in done.stdout, said(done)
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", more)
    assert done.returncode == 1 and "[capacity] pins (capacity 1) held by elf-1 (1 unit" in done.stdout, said(
        done
    )
    done = cli("simulate", "elves", "-a", more, "--seed", "3")
    assert done.returncode == 1 and "[capacity] pins (capacity 3) held by" in done.stdout, said(done)


BEES = OUTSIDERS / "o14_bees_namespace.py"
SMALL = ("-P", "3", "-T", "2", "-K", "1", "--eggs", "1")


def test_bees_kept_in_a_simplenamespace_with_free_function_choices_pass(cli):
    done = cli("simulate", "bees", "-a", BEES, "-P", "5", "-T", "2", "--seed", "1")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    assert "bees: 5 dead, 0 retired (no room left)\n" in done.stdout, said(done)
    done = cli("check", "bees", "-a", BEES, *SMALL, "--cocoons", "1", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)


def test_a_dying_bee_that_never_leaves_its_reed_is_caught_and_replayed(cli, tmp_path):
    keep = edited(tmp_path, "o14_bees_namespace.py", "o14-bees-namespace", "o14", "keep",
                  ("KEEP_REED = False", "KEEP_REED = True"))  # fmt: skip
    ce = tmp_path / "keep.json"
    done = cli("check", "bees", "-a", keep, *SMALL, "--cocoons", "2", "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: reed:1 (capacity 1) held by bee-1×1, bee-3×1" in done.stdout, said(done)
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", keep)
    assert done.returncode == 1 and "[capacity] reed:1 (capacity 1) held by bee-1 (1 unit" in done.stdout
    done = cli("simulate", "bees", "-a", keep, "-P", "5", "-T", "2", "--seed", "1")
    assert done.returncode == 1 and "[capacity] reed:2 (capacity 1) held by bee-2" in done.stdout, said(done)


def test_a_simplenamespace_on_the_explorers_card_reads_by_its_fields_not_its_repr():
    """Before: the card's row `s` was the namespace's repr, `namespace(phase=<Phase.REST: 'REST'>,
    …, alive={2, 3}, asked_at=None, yes=set(), later=[])`, though fmt promises never a Python repr.
    Now each field as fmt renders it, in the order the bee set them."""
    from types import SimpleNamespace

    from mutexlab.explore.session import Config, Session
    from mutexlab.show import fmt

    session = Session(Config(str(BEES), 3, {"flowers": 1, "reeds": 2, "eggs": 1, "cocoons": 1}))
    card = dict(session.state()["procs"][0]["fields"])
    assert card["s"] == (
        "namespace(phase=REST, reed=1, baton=yes, placed=yes, in_reed=0, laid=0, alive={2}, "
        "asked_at=—, yes={}, later=[])"
    ), card
    assert fmt(SimpleNamespace(b=(3, 1), a=SimpleNamespace())) == "namespace(b=3@1, a=namespace())"
