"""Solutions written in other people's styles (tests/outsiders/o12_*.py), and the defects their runs
showed. Small bounds: seconds each."""

from __future__ import annotations

import json
from pathlib import Path

from outsider_edits import OUTSIDERS, edited, said

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
RAISES = (
    "    def _grant(self, to: int) -> list:",
    "    def waiting_for(self):\n        raise ValueError('who knows')\n\n    def _grant(self, to: int) -> list:",
)


def central(where: Path, name: str, *edits: tuple[str, str]) -> Path:
    """examples/protocols/central.py named ``central-<name>``, with ``edits`` made."""
    text = (EXAMPLES / "protocols" / "central.py").read_text()
    for old, new in (('"central"', f'"central-{name}"'), *edits):
        assert old in text, old
        text = text.replace(old, new)
    path = where / f"{name}.py"
    path.write_text(text)
    return path


FORGETS = ("return self._grant(self.queue.pop(0)) if self.queue else []", "return []")


def test_simulate_shows_the_run_whose_stall_a_raising_waiting_for_cannot_explain(cli, tmp_path):
    """A coordinator that forgets its queue stalls node-2 and node-3; its waiting_for() raises.
    Before, `simulate` printed the one error line and nothing of the run: not who stalled, in
    which state, after what. Now it shows the run as `run` does — its figures, who has not
    finished, the audit — and ends NOT JUDGED (exit 2, as check and run), naming the process, its
    state, its last event and the seed that reaches it again; --json carries it as well."""
    stuck = central(tmp_path, "wf-forgets", FORGETS, RAISES)
    done = cli("simulate", "mutex", "-a", stuck, "-N", "3", "--requests", "1", "--seed", "0")
    assert done.returncode == 2, said(done)
    out = done.stdout
    assert "entries:            1 of 3 requests" in out, said(done)
    assert "STALLED — stalled: 2 processes cannot finish" in out, said(done)
    for node in ("node-2", "node-3"):
        assert (
            f"  {node} (WANTED) has not finished; what it waits for is unknown: its waiting_for() raised"
            in out
        )
    assert "audit: INCOMPLETE" in out, said(done)
    assert "NOT JUDGED (exit 2, as check and run say it): the stall cannot be explained: asking node-2" in out
    assert f"its waiting_for() raised ValueError: who knows at {stuck}:" in out, said(done)
    assert "node-2 was WANTED when asked, its last event line " in out, said(done)
    assert "seed 0, at event " in out, said(done)
    done = cli("simulate", "mutex", "-a", stuck, "-N", "3", "--requests", "1", "--json")
    summary = json.loads(done.stdout)
    assert done.returncode == 2 and summary["unexplained"]["process"] == "node-2", said(done)
    assert summary["unexplained"]["unknown"] == ["node-2", "node-3"], summary["unexplained"]
    assert summary["unexplained"]["last_event"].startswith("line "), summary["unexplained"]
    page = tmp_path / "stuck.html"
    done = cli("simulate", "mutex", "-a", stuck, "-N", "3", "--requests", "1", "--report", page)
    assert (
        done.returncode == 2 and "what it waits for is unknown: its waiting_for() raised" in page.read_text()
    )
    assert "waits for nothing from anyone" not in page.read_text(), said(done)


def test_simulate_a_violation_is_not_hidden_by_a_raising_waiting_for(cli, tmp_path):
    """node-3 barges past the coordinator's holder (two inside) and the queue is forgotten (a
    stall); waiting_for() raises. Before: exit 2, the error alone, the violation never shown.
    Now the violation stands, exit 1, and the stall is still said unexplained (not NOT JUDGED)."""
    barge = (
        "        if self.holder is None:\n            return self._grant(msg.sender)",
        "        if self.holder is None or msg.sender == 3:\n            return self._grant(msg.sender)",
    )
    both = central(tmp_path, "wf-barge", FORGETS, barge, RAISES)
    done = cli("simulate", "mutex", "-a", both, "-N", "3", "--requests", "1", "--seed", "0")
    assert done.returncode == 1, said(done)
    assert "audit: VIOLATION" in done.stdout and "[capacity]" in done.stdout, said(done)
    assert "the stall cannot be explained: asking node-2" in done.stdout, said(done)
    assert "NOT JUDGED" not in done.stdout, said(done)


def test_simulate_bees_names_the_bee_and_its_last_event_from_the_written_trace(cli, tmp_path):
    """The bees' run is streamed (no trace held): a dying bee that never hands its reed's token on
    leaves the next bee of the reed in WAIT_REED, whose waiting_for() raises. The bee, its state,
    and, with --trace, its last event by line; without, where to find it."""
    text = (EXAMPLES / "solutions" / "bees_reed_tokens.py").read_text()
    for old, new in (
        ("if j == heir:", "if j == heir and False:"),
        (
            "    def waiting_for(self) -> dict[str, list[int]]:\n",
            "    def waiting_for(self) -> dict[str, list[int]]:\n"
            "        if self.state == S.WAIT_REED:\n            raise KeyError(self.pid)\n",
        ),
    ):
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "bees_wf.py"
    path.write_text(text.replace('NAME = "', 'NAME = "wf-'))
    common = ("simulate", "bees", "-a", path, "-P", "3", "-T", "2")
    done = cli(*common)
    assert done.returncode == 2, said(done)
    assert (
        "  bee-3 (WAIT_REED) has not finished; what it waits for is unknown: its waiting_for() raised"
        in done.stdout
    )
    assert "bee-3 was WAIT_REED when asked, its last event unknown (--trace FILE shows it)" in done.stdout
    trace = tmp_path / "bees.trace"
    done = cli(*common, "--trace", trace)
    assert done.returncode == 2, said(done)
    assert "bee-3 was WAIT_REED when asked, its last event line " in done.stdout, said(done)
    line = int(done.stdout.split("its last event line ")[1].split(":")[0])
    event = json.loads(trace.read_text().splitlines()[line - 1])
    assert event["pid"] == "bee-3" and event["event"] != "state", event


def test_bees_whose_states_are_a_str_enum_are_counted_by_name(cli):
    """``class Phase(str, Enum)``: since Python 3.11 ``str()`` of a member is ``Phase.DEAD``. Before,
    the summary read `bees: 3 dead, 0 retired (no room left), 3 _Phase.DEAD` — six bees of three."""
    path = OUTSIDERS / "o12_bees_phases.py"
    done = cli("simulate", "bees", "-a", path, "-P", "3", "-T", "2")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    assert "bees: 3 dead, 0 retired (no room left)\n" in done.stdout, said(done)
    done = cli("check", "bees", "-a", path, "-P", "2", "-T", "2", "--eggs", "1", "--cocoons", "1")
    assert done.returncode == 0 and "verdict:      PASS" in done.stdout, said(done)


def test_bees_whose_states_are_a_plain_enum_are_refused_by_every_command_saying_why(cli, tmp_path):
    """A plain ``Enum`` state has no name a trace holds (``S.DEAD``, or ``6`` for an IntEnum). Before:
    `check` said VIOLATION (`bee-1 ended in S.DEAD, not DEAD or RETIRED`) of a correct solution, and
    `simulate` INCOMPLETE; now both refuse it, exit 2, saying what to write instead."""
    plain = edited(
        tmp_path,
        "o12_bees_phases.py",
        "o12-bees-phases",
        "o12",
        "plain",
        ('STATES = "str"', 'STATES = "plain"'),
    )
    for command in (
        ("simulate", "bees", "-P", "3", "-T", "2"),
        ("check", "bees", "-P", "2", "-T", "2", "--eggs", "1", "--cocoons", "1"),
    ):
        done = cli(*command, "-a", plain)
        assert done.returncode == 2, said(done)
        assert "bee-1, a ReedTokenBee" in done.stderr and "starts in state S.REST" in done.stderr, said(done)
        assert "make it `class S(StrEnum)` (or `class S(str, Enum)`)" in done.stderr, said(done)


def test_a_bee_laying_on_a_reed_it_let_go_is_found_and_replays(cli, tmp_path):
    early = edited(
        tmp_path,
        "o12_bees_phases.py",
        "o12-bees-phases",
        "o12",
        "early",
        ("LEAVE_EARLY = False", "LEAVE_EARLY = True"),
    )
    ce = tmp_path / "early.json"
    done = cli(
        "check",
        "bees",
        "-a",
        early,
        "-P",
        "2",
        "-T",
        "2",
        "--eggs",
        "1",
        "--cocoons",
        "1",
        "--counterexample",
        ce,
    )
    assert done.returncode == 1, said(done)
    assert "[egg-off-reed] bee-1 laid an egg in reed:1 while holding no reed" in done.stdout, said(done)
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("simulate", "bees", "-a", early, "-P", "3", "-T", "2")
    assert done.returncode == 1 and "[egg-off-reed]" in done.stdout, said(done)


def test_a_desk_drawing_by_lottery_from_module_random_runs_the_same_under_one_seed(cli, tmp_path):
    """The desk draws who gets a freed pass with ``random.choice``, unseeded. Before, two `simulate
    --seed 0` runs gave two different traces (whatever state the module ``random`` was in), so the
    seed a finding names did not reach it again; now the run seeds it. check still says it is not
    deterministic (N=4, K=1: two waiting when a pass comes back)."""
    import random

    path = OUTSIDERS / "o12_kmutex_lottery_desk.py"
    traces = []
    for outside in (1, 2):
        random.seed(outside)  # whatever the module's state before the run
        trace = tmp_path / f"lottery{outside}.trace"
        done = cli(
            "simulate", "kmutex", "-a", path, "-N", "4", "-k", "2", "--requests", "3", "--trace", trace
        )
        assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
        traces.append(trace.read_text())
    assert traces[0] == traces[1]
    done = cli("check", "kmutex", "-a", path, "-N", "4", "-k", "1", "--requests", "1")
    assert done.returncode == 1 and "is not deterministic" in done.stdout, said(done)


def test_a_desk_handing_out_one_pass_too_many_is_a_capacity_violation(cli, tmp_path):
    slack = edited(
        tmp_path, "o12_kmutex_lottery_desk.py", "o12-kmutex-lottery", "o12", "slack",
        ('DRAW = "lottery"', 'DRAW = "first"'), ("SLACK = 0", "SLACK = 1"),
    )  # fmt: skip
    first = edited(
        tmp_path,
        "o12_kmutex_lottery_desk.py",
        "o12-kmutex-lottery",
        "o12",
        "first",
        ('DRAW = "lottery"', 'DRAW = "first"'),
    )
    done = cli("check", "kmutex", "-a", first, "-N", "3", "-k", "2", "--requests", "1")
    assert done.returncode == 0 and "verdict:      PASS" in done.stdout, said(done)
    done = cli("check", "kmutex", "-a", slack, "-N", "4", "-k", "2", "--requests", "1")
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: cs (capacity 2) held by node-2×1, node-3×1, node-4×1" in done.stdout, said(
        done
    )


def test_philosophers_asking_in_one_fixed_order_deadlock_and_the_hierarchy_passes(cli, tmp_path):
    path = OUTSIDERS / "o12_phil_fork_owner.py"
    done = cli("check", "philosophers", "-a", path, "-N", "3")
    assert done.returncode == 0 and "verdict:      PASS" in done.stdout, said(done)
    done = cli("simulate", "philosophers", "-a", path, "--seed", "1")
    assert done.returncode == 0 and "meals eaten: 10 of 10" in done.stdout, said(done)
    left = edited(
        tmp_path,
        "o12_phil_fork_owner.py",
        "o12-phil-fork-owner",
        "o12",
        "left",
        ('ORDER = "lowest-first"', 'ORDER = "left-first"'),
    )
    done = cli("check", "philosophers", "-a", left, "-N", "3")
    assert done.returncode == 1, said(done)
    assert (
        "VIOLATION — deadlock: nothing can move; waiting: philosopher-1 for fork:2: HAND_FORK from philosopher-2"
        in done.stdout
    )


def test_explore_draws_a_solution_whose_waiting_for_raises_and_its_deadlock(tmp_path):
    """The explorer draws every process's card at every step, asking waiting_for() of each, stalled
    or not. Before, one that raises made every view fail (over HTTP: `500 internal error:
    WaitsRaised`, the explorer unusable from step 0); now the card says its wait is unknown and
    why, and the deadlock it reaches is said as `simulate` and `run` say it."""
    from mutexlab.explore.session import Config, Session

    stuck = central(tmp_path, "wf-explore", FORGETS, RAISES)
    session = Session(Config(str(stuck), 3, {"requests": 1}))
    line = stuck.read_text().splitlines().index("        raise ValueError('who knows')") + 1
    card = session.state()["procs"][1]
    assert list(card["waiting"]) == [
        f"unknown: its waiting_for() raised ValueError: who knows at {stuck}:{line} (in waiting_for), in state RELEASED"
    ]
    for step in ("request:2", "request:3", "request:1"):
        session.step(step)
    while session.state()["steps"]:  # the coordinator grants node-1 first, then forgets the queue
        session.step(session.state()["steps"][-1]["id"])
    findings = session.state()["findings"]
    assert findings["status"] == "deadlock", findings
    assert "node-2 (WANTED) has not finished; what it waits for is unknown" in findings["deadlock"], findings
    assert "node-3 (WANTED) has not finished" in findings["deadlock"], findings
    assert f"its waiting_for() raised ValueError: who knows at {stuck}:" in findings["deadlock"], findings
    assert findings["summary"].startswith("DEADLOCK after 6 steps"), findings


def test_check_names_the_state_in_which_waiting_for_raised(cli, tmp_path):
    """`check` stops at a waiting_for() that raises, exit 2, naming the process and the line; before,
    not the state it was asked in (which a handler's finding names): now it does."""
    stuck = central(tmp_path, "wf-check", FORGETS, RAISES)
    done = cli("check", "mutex", "-a", stuck, "-N", "2", "--requests", "1")
    assert done.returncode == 2, said(done)  # the whole finding: tests/test_outsider_solutions13.py
    assert "the stall cannot be explained: asking node-2 (CentralNode, " in done.stdout, said(done)
    assert "(in waiting_for), in state WANTED. It must return" in done.stdout, said(done)


def test_a_node_drawing_from_module_random_as_it_is_made_runs_the_same_under_one_seed(cli, tmp_path):
    """The module ``random`` was seeded for a run's steps, not while its processes were made: a
    coordinator drawing in its ``__init__`` which end of its queue to serve ran one way or the other
    under one ``--seed``, whatever state the module was in before the run."""
    import random

    path = central(
        tmp_path,
        "drawn",
        ("from typing import Literal", "import random\nfrom typing import Literal"),
        (
            "self.queue: list[int] = []",
            "self.queue: list[int] = []\n        self.lifo = random.random() < 0.5",
        ),
        ("self.queue.pop(0)", "self.queue.pop(-1 if self.lifo else 0)"),
    )
    traces = []
    for outside in (1, 2):  # two states of the module before the run: two draws at __init__ before
        random.seed(outside)
        trace = tmp_path / f"drawn{outside}.trace"
        done = cli("simulate", "mutex", "-a", path, "-N", "5", "--requests", "4", "--trace", trace)
        assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
        traces.append(trace.read_text())
    assert traces[0] == traces[1]
