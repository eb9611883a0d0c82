"""Solutions written in other people's styles (tests/outsiders/o13_*.py), each with a planted bug
caught with its witness, and the defects they and the leftovers of session 12 showed: a raising
``waiting_for()`` given by ``check`` as a whole finding (not one error line), one owner of an
unexplained stall's map and text (``waiting.WaitsRaised``), a state of a plain ``Enum`` refused
wherever a handler leaves one. Small bounds: seconds each."""

from __future__ import annotations

import json
from pathlib import Path

from outsider_edits import OUTSIDERS, edited, said

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
KMUTEX = OUTSIDERS / "o13_kmutex_ledger_match.py"
PHIL = OUTSIDERS / "o13_phil_bitmask.py"
BEES = OUTSIDERS / "o13_bees_lamport_heap.py"
BEES_SMALL = ("-P", "2", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1")


def test_a_kmutex_kept_in_one_frozen_dataclass_and_dispatched_by_match_is_safe(cli):
    done = cli("simulate", "kmutex", "-a", KMUTEX, "-N", "4", "-k", "2", "--requests", "2", "--seed", "1")
    assert done.returncode == 0 and "entries:            8 of 8 requests" in done.stdout, said(done)
    done = cli("check", "kmutex", "-a", KMUTEX, "-N", "3", "-k", "2", "--requests", "1", "--metrics")
    assert done.returncode == 0 and "verdict:      PASS" in done.stdout, said(done)
    assert "cs: messages per entry min 3, max 6" in done.stdout, said(done)


def test_a_kmutex_one_answer_short_is_caught_and_its_counterexample_replays(cli, tmp_path):
    slack = edited(tmp_path, "o13_kmutex_ledger_match.py", "o13-kmutex-ledger", "o13", "slack",
                   ("SLACK = 0", "SLACK = 1"))  # fmt: skip
    ce = tmp_path / "slack.json"
    done = cli(
        "check", "kmutex", "-a", slack, "-N", "4", "-k", "2", "--requests", "1", "--counterexample", ce
    )
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: cs (capacity 2) held by node-2×1, node-3×1, node-4×1" in done.stdout
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", slack)
    assert done.returncode == 1 and "[capacity] cs (capacity 2) held by node-2" in done.stdout, said(done)


def test_a_kmutex_forgetting_its_deferred_answers_deadlocks_in_check_and_stalls_in_simulate(cli, tmp_path):
    forget = edited(tmp_path, "o13_kmutex_ledger_match.py", "o13-kmutex-ledger", "o13", "forget",
                    ("FORGET_DEFERRED = False", "FORGET_DEFERRED = True"))  # fmt: skip
    done = cli("check", "kmutex", "-a", forget, "-N", "3", "-k", "2", "--requests", "1")
    assert done.returncode == 1, said(done)
    assert "VIOLATION — deadlock: nothing can move; waiting: node-3 for cs: YES from" in done.stdout
    done = cli("simulate", "kmutex", "-a", forget, "-N", "4", "-k", "2", "--requests", "2")
    assert done.returncode == 3 and "STALLED — stalled: 4 processes cannot finish" in done.stdout, said(done)
    assert "node-1 (WANTED) waits for cs: YES from" in done.stdout, said(done)


def test_explore_steps_the_frozen_ledger_to_its_end(tmp_path):
    from mutexlab.explore.session import Config, Session

    session = Session(Config(str(KMUTEX), 3, {"requests": 1, "k": 2}))
    steps = 0
    while session.state()["steps"] and steps < 200:
        session.step(session.state()["steps"][0]["id"])
        steps += 1
    findings = session.state()["findings"]
    assert findings["status"] != "deadlock" and not findings.get("violations"), findings
    assert all(p["state"] == "RELEASED" for p in session.state()["procs"]), session.state()["procs"]


def test_philosophers_as_bits_in_slots_pass_and_hoarding_deadlocks_with_a_cycle(cli, tmp_path):
    done = cli("simulate", "philosophers", "-a", PHIL, "--seed", "1")
    assert done.returncode == 0 and "meals eaten: 10 of 10" in done.stdout, said(done)
    done = cli("check", "philosophers", "-a", PHIL, "-N", "3", "--cross-check")
    assert (
        done.returncode == 0 and "cross-check:  without reductions: 3,354 states, PASS: agrees" in done.stdout
    )
    hoard = edited(tmp_path, "o13_phil_bitmask.py", "o13-phil-bitmask", "o13", "hoard",
                   ("HOARD = False", "HOARD = True"))  # fmt: skip
    ce = tmp_path / "hoard.json"
    done = cli("check", "philosophers", "-a", hoard, "-N", "3", "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION — deadlock: nothing can move" in done.stdout, said(done)
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", hoard)
    assert done.returncode == 1 and "DEADLOCK: nothing can move" in done.stdout, said(done)
    done = cli("simulate", "philosophers", "-a", hoard, "-N", "5", "--meals", "3", "--seed", "0")
    assert done.returncode == 3 and "meals eaten: 0 of 15" in done.stdout, said(done)
    assert "deadlock: wait-for cycle philosopher-1 → philosopher-5 → philosopher-4" in done.stdout, said(done)


def test_bees_flowers_by_lamports_heap_pass_and_an_impatient_bee_shares_a_flower(cli, tmp_path):
    done = cli("simulate", "bees", "-a", BEES, "-P", "4", "-T", "2", "-K", "1", "--seed", "1")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    done = cli("check", "bees", "-a", BEES, "-P", "3", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1",
               "--cross-check")  # fmt: skip
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("simulate", "bees", "-a", BEES, "-P", "3", "-T", "2", "--eggs", "2", "--cocoons", "3")
    assert done.returncode == 2 and "must be a multiple of" in done.stderr, said(done)  # the problem's rule
    impatient = edited(tmp_path, "o13_bees_lamport_heap.py", "o13-bees-lamport-heap", "o13", "impatient",
                       ("IMPATIENT = False", "IMPATIENT = True"))  # fmt: skip
    ce = tmp_path / "imp.json"
    done = cli("check", "bees", "-a", impatient, *BEES_SMALL, "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION — capacity: flower (capacity 1) held by bee-1×1, bee-2×1" in (
        done.stdout
    )
    done = cli("replay", ce, "-a", impatient)
    assert done.returncode == 1 and "[capacity] flower (capacity 1)" in done.stdout, said(done)
    done = cli("simulate", "bees", "-a", impatient, "-P", "4", "-T", "2", "-K", "1")
    assert done.returncode == 1 and "[capacity] flower (capacity 1)" in done.stdout, said(done)


# -- a waiting_for() that raises: check gives the whole finding --------------------------------------
RAISES = (
    "    def _grant(self, to: int) -> list:",
    "    def waiting_for(self):\n        raise ValueError('who knows')\n\n    def _grant(self, to: int) -> list:",
)
FORGETS = ("return self._grant(self.queue.pop(0)) if self.queue else []", "return []")


def central(where: Path, name: str, *edits: tuple[str, str]) -> Path:
    text = (EXAMPLES / "protocols" / "central.py").read_text()
    for old, new in (('"central"', f'"central-{name}"'), *edits):
        assert old in text, old
        text = text.replace(old, new)
    path = where / f"{name}.py"
    path.write_text(text)
    return path


def test_check_shows_the_stall_a_raising_waiting_for_cannot_explain_with_its_path(cli, tmp_path):
    """Before: `mutexlab: error: asking node-3 … what it waits for: …` and nothing else — no path,
    no one else stuck. Now the search's figures, the stall as a deadlock finding (who is stuck,
    their waits unknown), the path to it, the error with its line, NOT JUDGED, exit 2 as ever;
    --counterexample writes the path, which replay plays to the same NOT JUDGED; --json says
    `not-judged`; --swarm the same."""
    stuck = central(tmp_path, "wf13", FORGETS, RAISES)
    ce = tmp_path / "wf.json"
    done = cli(
        "check", "mutex", "-a", stuck, "-N", "3", "--requests", "1", "--search", "bfs", "--counterexample", ce
    )
    assert done.returncode == 2, said(done)
    out = done.stdout
    assert (
        "verdict:      NOT JUDGED (exit 2) — deadlock: nothing can move; waiting: node-2 for cs: what it"
        in out
    )
    assert "node-3 for cs: what it waits for is unknown" in out, said(done)
    assert "path (" in out and "deliver REQUEST node-2→node-1" in out, said(done)
    assert (
        f"the stall cannot be explained: asking node-2 (CentralNode, {stuck}) what it waits for: its " in out
    )
    assert f"waiting_for() raised ValueError: who knows at {stuck}:" in out, said(done)
    assert "(in waiting_for), in state WANTED. It must return a dict" in out, said(done)
    assert "VIOLATION" not in out and "internal error" not in done.stderr, said(done)
    done = cli("replay", ce, "-a", stuck)
    assert done.returncode == 2, said(done)
    assert "NOT JUDGED (exit 2, as check says it): the stall cannot be explained: asking node-" in done.stdout
    done = cli("check", "mutex", "-a", stuck, "-N", "2", "--requests", "1", "--json")
    summary = json.loads(done.stdout)
    assert done.returncode == 2 and summary["verdict"] == "not-judged", said(done)
    assert summary["findings"][0]["unexplained"].startswith("asking node-2 (CentralNode, "), summary
    done = cli("check", "mutex", "-a", stuck, "-N", "2", "--requests", "1", "--swarm", "--time", "2",
               "--workers", "1")  # fmt: skip
    assert done.returncode == 2 and "verdict:      NOT JUDGED (exit 2) — deadlock" in done.stdout, said(done)


def test_one_owner_of_an_unexplained_stalls_map_and_its_text(tmp_path):
    """``WaitsRaised.waiting``: one precedence — a process whose waiting_for() raised is unknown
    even where another map holds it (the engine put the other first, the explorer this one) —
    and ``short``, the text without the advice: the explorer cut the message at `. It must
    return`, so an exception saying those words itself was cut short."""
    from mutexlab.explore.session import Config, Session
    from mutexlab.waiting import UNKNOWN, WaitsRaised

    exc = WaitsRaised(
        "node-2 (X, f.py)", "its waiting_for() raised KeyError: 1 at f.py:3, in state W", "node-2"
    )
    exc.stalled = {"node-1": {"REPLY": ["node-3"]}, "node-2": {"REPLY": ["node-1"]}}
    assert exc.waiting(["node-2", "node-1"]) == {"node-2": {UNKNOWN: []}, "node-1": {"REPLY": ["node-3"]}}
    assert exc.waiting() == {"node-1": {"REPLY": ["node-3"]}, "node-2": {UNKNOWN: []}}
    assert exc.short == f"asking node-2 (X, f.py) what it waits for: {exc.why}"
    assert str(exc) == f"{exc.short}. {WaitsRaised.ADVICE}"
    said_so = central(tmp_path, "wf-words", FORGETS, (RAISES[0], RAISES[1].replace(
        "'who knows'", "'ask me later. It must return soon'")))  # fmt: skip
    session = Session(Config(str(said_so), 3, {"requests": 1}))
    card = session.state()["procs"][1]
    assert list(card["waiting"])[0].startswith(
        "unknown: its waiting_for() raised ValueError: ask me later. It must return soon at "
    ), card["waiting"]
    for step in ("request:2", "request:3", "request:1"):
        session.step(step)
    while session.state()["steps"]:
        session.step(session.state()["steps"][-1]["id"])
    deadlock = session.state()["findings"]["deadlock"]
    assert "raised ValueError: ask me later. It must return soon at" in deadlock, deadlock


# -- a state of a plain Enum, left by a handler -------------------------------------------------------
def _late_plain(tmp_path: Path) -> Path:
    """o12's bees whose dying handler sets a member of a plain Enum: they start in a (str, Enum)."""
    return edited(
        tmp_path, "o12_bees_phases.py", "o12-bees-phases", "o13", "late-plain",
        ("S = _Phase if", '_Gone = Enum("_Gone", ["DEAD"])\nS = _Phase if'),
        ("        self.state = S.DEAD\n", "        self.state = _Gone.DEAD\n"),
    )  # fmt: skip


def test_a_handler_leaving_a_state_of_a_plain_enum_is_refused_by_every_command_naming_it(cli, tmp_path):
    """Before: refused only as a starting state; a handler leaving one got `simulate` SAFE-looking
    runs or a refusal deep in the table (`protocol error: bee-2 cannot take ACKflower in state
    _Gone.DEAD`, exit 1) and `check` a counterexample of it. Now exit 2 everywhere, naming the
    process, the handler and its line, the input and the state it was taken in."""
    plain = _late_plain(tmp_path)
    line = plain.read_text().splitlines().index("    def _leave_flower(self, _action: str) -> list:") + 1
    for command in (("simulate", "bees", "-P", "3", "-T", "2"), ("check", "bees", *BEES_SMALL)):
        done = cli(*command, "-a", plain)
        assert done.returncode == 2, said(done)
        assert (
            f"its handler ReedTokenBee._leave_flower ({plain}:{line}), taking the local action 'exit' in "
            in (done.stderr)
        )
        assert (
            "state ON_FLOWER, left it in state _Gone.DEAD, a member of _Gone, an enum.Enum whose"
            in done.stderr
        )
        assert "make it `class _Gone(StrEnum)`" in done.stderr and "internal error" not in done.stderr
    from mutexlab.explore.session import Config, Session
    from mutexlab.explore.state import ExploreError

    session = Session(Config(str(plain), 2, {"flowers": 1, "reeds": 2, "eggs": 1, "cocoons": 1}))
    try:
        for _ in range(20):
            session.step(session.state()["steps"][0]["id"])
        raise AssertionError("no step left a state of a plain Enum")
    except ExploreError as exc:
        assert "left it in state _Gone.DEAD" in str(exc) and exc.status == 409, exc
    scenario = session.scenario()
    scenario["steps"].append({"op": "exit", "pid": 1})
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(scenario))
    done = cli("replay", path, "-a", plain)
    assert done.returncode == 2 and "(exit): bee-1 (ReedTokenBee, " in done.stderr, said(done)
    assert "left it in state _Gone.DEAD" in done.stderr, said(done)


ELVES = OUTSIDERS / "o13_elves_townsfolk.py"
TIGHT = ("--elves", "2", "--pins", "2", "--poison", "3", "--hamsters", "2-2")


def test_elves_as_a_townsfolk_hierarchy_pass_and_a_mayor_not_counting_poison_is_caught(cli, tmp_path):
    from mutexlab.explore.session import Config, Session

    done = cli("simulate", "elves", "-a", ELVES, "--seed", "3")
    assert done.returncode == 0 and "contracts done: 12 of 12" in done.stdout, said(done)
    done = cli("check", "elves", "-a", ELVES, *TIGHT, "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    session = Session(Config(str(ELVES), 2, {"pins": 2, "poison": 3, "hamsters": [2, 2]}))
    while session.state()["steps"]:
        session.step(session.state()["steps"][-1]["id"])
    assert session.state()["findings"]["status"] not in ("deadlock", "violation"), session.state()["findings"]
    loose = edited(tmp_path, "o13_elves_townsfolk.py", "o13-elves-townsfolk", "o13", "loose",
                   ("COUNT_POISON = True", "COUNT_POISON = False"))  # fmt: skip
    ce = tmp_path / "loose.json"
    done = cli("check", "elves", "-a", loose, *TIGHT, "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: poison (capacity 3) held by elf-1×2, elf-2×2" in done.stdout, said(done)
    done = cli("replay", ce, "-a", loose)
    assert done.returncode == 1 and "[capacity] poison (capacity 3) held by elf-1 (2 units" in done.stdout
    done = cli("simulate", "elves", "-a", loose, "--seed", "3")
    assert done.returncode == 1 and "[capacity] poison (capacity 10) held by" in done.stdout, said(done)
