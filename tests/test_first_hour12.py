"""What a newcomer meets in the first hour (the twelfth look): a counterexample's file named as one
types it and moved with it, a finding said once, values in the project's words (no Python repr),
a stall naming the resource and its holder, and the README's and the tour's commands as shown."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "examples" / "solutions"


def _counterexample(cli, where: Path) -> Path:
    """``check`` of the broken k-mutex solution, copied to ``where``, writing ``where/cx.json``."""
    for name in ("kmutex_ricart_agrawala.py", "kmutex_ricart_agrawala_broken.py"):
        shutil.copy(SOLUTIONS / name, where / name)
    out = cli(
        "check", "kmutex_ricart_agrawala_broken.py", "-N", "3", "--counterexample", "cx.json", cwd=where
    )
    assert out.returncode == 1, out.stdout + out.stderr
    return where / "cx.json"


def _fresh(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    """``mutexlab ARGV`` in a fresh process: this one may have loaded the file already."""
    command = [sys.executable, "-m", "mutexlab", *argv]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_replay_names_the_scenarios_file_as_one_types_it(cli, tmp_path):
    """The refusal named the file by its absolute path (``pass --algorithm /tmp/…/x.py``); now as
    one types it in the working directory, and the command it suggests runs."""
    _counterexample(cli, tmp_path)
    out = _fresh(tmp_path, "replay", "cx.json")
    assert out.returncode == 2, out.stdout + out.stderr
    assert str(tmp_path) not in out.stderr, out.stderr
    assert out.stderr.rstrip().endswith("pass --algorithm kmutex_ricart_agrawala_broken.py"), out.stderr
    again = cli("replay", "cx.json", "--algorithm", "kmutex_ricart_agrawala_broken.py", cwd=tmp_path)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "VIOLATION (1)" in again.stdout


def test_a_counterexample_moved_with_its_file_still_replays(cli, tmp_path):
    """The scenario names a file beside it relative to itself: moved together, the pair replays."""
    made = tmp_path / "made"
    made.mkdir()
    _counterexample(cli, made)
    assert json.loads((made / "cx.json").read_text())["algorithm"] == "kmutex_ricart_agrawala_broken.py"
    moved = tmp_path / "moved"
    made.rename(moved)
    out = _fresh(tmp_path, "replay", "moved/cx.json", "--algorithm", "moved/kmutex_ricart_agrawala_broken.py")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "k-ricart-agrawala-broken: VIOLATION (1)" in out.stdout


def test_the_explorers_violation_headline_states_a_capacity_breach_once():
    """Three nodes in a capacity-2 section: the headline said the breach twice, once as the exact
    occupancy (``held by node-1×1, …``) and again as the audit's (``held by node-1 (1 unit, line 3),
    …``); the list below keeps both, each under its rule."""
    from mutexlab.explore.session import Config, Session

    broken = str(SOLUTIONS / "kmutex_ricart_agrawala_broken.py")
    session = Session(Config(broken, 3, {"requests": 1, "k": 2}))
    for pid in (1, 2, 3):
        session.step(f"request:{pid}")
    found = session.state()["findings"]
    assert found["summary"] == (
        "VIOLATION after 3 steps: cs (capacity 2) held by node-1×1, node-2×1, node-3×1 at once (step 3)"
    ), found["summary"]
    assert [v["rule"] for v in found["violations"]] == ["capacity-now", "capacity"]


def test_a_card_shows_values_in_the_projects_words_never_a_python_repr():
    """A card's rows (explorer; show.fmt): an enum by its name, a dict's keys as a set, a
    dataclass by its fields — never ``Role.BOSS``, ``dict_keys([…])``, ``<Role.BOSS: 2>``."""
    import dataclasses
    import enum
    from collections import deque

    from mutexlab.show import fmt

    class Role(enum.Enum):
        PLAIN = 1
        BOSS = 2

    @dataclasses.dataclass
    class Box:
        members: set
        role: Role

    assert fmt(Role.BOSS) == "BOSS"
    assert fmt({3: 1, 1: 2}.keys()) == "{1, 3}"
    assert fmt({3: 1, 1: 2}.values()) == "[1, 2]"
    assert fmt(Box({3, 2}, Role.PLAIN)) == "Box(members={2, 3}, role=PLAIN)"
    assert fmt({Role.PLAIN: frozenset({10, 2})}) == "{PLAIN: {2, 10}}"
    assert fmt(deque([3, 1])) == "[3, 1]"
    assert fmt({(10, 1), (2, 3)}) == "{2@3, 10@1}"  # requests by value, not by their text


def test_a_snapshot_in_words_says_a_set_by_its_members():
    """check's figures name a process's snapshot: ``frozenset({2, 1})`` leaked as Python."""
    from mutexlab.check.sampling import words

    assert words(("WANTED", frozenset({10, 2}))) == "('WANTED', {2, 10})"


def _held_forever():
    """Ricart–Agrawala, node-3 never leaving the section: the others stall waiting for it."""
    from mutexlab.protocols.registry import make_setup
    from mutexlab.protocols.ricart_agrawala import RicartAgrawalaNode
    from mutexlab.sim import SimConfig, Simulation

    class Stays(RicartAgrawalaNode):
        def on_local(self, action):
            return [] if action == "exit" else super().on_local(action)

    setup = make_setup("ricart-agrawala", 3, {"requests": 1})
    setup.protocols = {1: RicartAgrawalaNode(1, 3, requests=1), 2: RicartAgrawalaNode(2, 3, requests=1)}
    setup.protocols[3] = Stays(3, 3, requests=1)
    return Simulation(setup, SimConfig(seed=0)).run()


def test_a_stall_names_the_resource_waited_for_and_its_holder():
    """simulate's STALLED (and the report's, the monitor's) said only ``node-1 (WANTED) waits for
    REPLY from node-2, node-3``; now, as check's deadlock does, the resource and who holds it."""
    from mutexlab.audit.stall import explain_stall

    result = _held_forever()
    lines = explain_stall(result.stalled, result.states).splitlines()
    assert "  node-1 (WANTED) waits for cs (held by node-3): REPLY from node-2, node-3" in lines, lines
    assert "  node-3 (HELD, holding cs) has not finished but waits for nothing from anyone" in lines, lines
    assert json.loads(json.dumps(result.stalled)) == dict(result.stalled)  # JSON: the same shape as ever


def test_a_stall_never_says_held_by_nobody():
    """Nobody holds what node-1 waits for: the resource is named, no holder made up."""
    from mutexlab.audit.stall import explain_stall

    text = explain_stall({"node-1": {"REPLY": ["node-2"]}}, {"node-1": "WANTED"}, {}, {"node-1": ["cs"]})
    assert "  node-1 (WANTED) waits for cs: REPLY from node-2" in text.splitlines()
    assert "nobody" not in text.split("\n", 2)[1]


def test_the_monitors_stall_names_the_resource_and_its_holder():
    """The monitor's outcome (``mutexlab run``) explains a stall from what its feed saw entered."""
    from mutexlab.protocols.registry import make_setup
    from mutexlab.transport.monitor import waiting_to_enter
    from mutexlab.transport.outcome import Outcome, render

    setup = make_setup("ricart-agrawala", 3, {"requests": 1})
    stalled = {"node-1": {"state": "WANTED", "waiting": {"REPLY": ["node-3"]}, "silent_for": 1.0}}
    holding = {"cs": ["node-3"]}
    states = {"node-1": "WANTED", "node-2": "RELEASED", "node-3": "HELD"}
    o = Outcome(
        "run-x", "ricart-agrawala", 3, False, stalled, holding, waiting_to_enter(setup, stalled, holding)
    )
    o.states = states
    assert "  node-1 (WANTED) waits for cs (held by node-3): REPLY from node-3" in render(o).splitlines()


def test_a_str_enum_state_is_said_by_its_value_in_every_summary(cli):
    """An outsider's bees keep ``class Phase(str, Enum)`` states: simulate said ``3 dead, 0 retired
    (no room left), 3 Phase.DEAD``, counting the dead twice, once in Python's words."""
    bees = str(ROOT / "tests" / "outsiders" / "o10_bees_keeper_slots.py")
    out = cli("simulate", "bees", "-a", bees, "-P", "3", "-T", "1", "-K", "1")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "bees: 3 dead, 0 retired (no room left)\n" in out.stdout, out.stdout
    assert "Phase." not in out.stdout
    done = cli("simulate", "bees", "-a", bees, "-P", "3", "-T", "1", "-K", "1", "--json")
    assert set(json.loads(done.stdout)["states"].values()) == {"DEAD"}


def test_state_text_says_a_state_as_the_trace_records_it():
    import enum

    from mutexlab.show import state_text

    class Phase(str, enum.Enum):  # noqa: UP042 - written as the outsider's bees write it
        DEAD = "DEAD"

    class St(enum.Enum):
        WANTED = 2

    assert state_text(Phase.DEAD) == "DEAD"
    assert state_text(St.WANTED) == "St.WANTED"  # not a string: not the kit's WANTED, said so
    assert state_text("HELD") == "HELD"


def test_a_send_astray_names_a_str_enum_state_by_its_value(cli, tmp_path):
    """A bee of ``class Phase(str, Enum)`` states sending to a process the setup does not have: the
    finding said ``its step leaving it in state Phase.WAIT_REED``, where the trace says WAIT_REED."""
    text = (ROOT / "tests" / "outsiders" / "o10_bees_keeper_slots.py").read_text()
    old = "return Send(KEEPER, cls("
    assert text.count(old) == 1
    astray = tmp_path / "astray.py"
    astray.write_text(text.replace(old, "return Send(KEEPER + 99, cls("))
    for argv in (("simulate", "bees", "-P", "3", "-T", "1", "-K", "1"), ("check", "bees", "-P", "2")):
        out = cli(*argv, "-a", astray)
        said = out.stdout + out.stderr
        assert "which is not one of this setup's" in said, said
        assert "its step leaving it in state WAIT_REED" in said and "Phase." not in said, said


def test_a_stall_of_a_solution_whose_wants_raises_is_still_explained(cli, tmp_path):
    """The stall's explanation asks each waiter what it waits to enter (``wants()``, the solution's
    own code): one raising made ``simulate`` say "internal error (a bug in mutexlab, not in your
    algorithm)" where it had said STALLED, exit 3. Without ``wants()`` the explanation names no
    resource, as for a solution that declares none; the stall and its audit stand."""
    text = (ROOT / "examples" / "protocols" / "central.py").read_text()
    edits = (
        ("return self._grant(self.queue.pop(0)) if self.queue else []", "return []"),  # forgets the queue
        (
            "    def _grant(self, to: int) -> list:",
            "    def wants(self):\n        raise ValueError('oops')\n\n    def _grant(self, to: int) -> list:",
        ),
        ('"central",', '"central-wants",'),
    )
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = tmp_path / "wants.py"
    path.write_text(text)
    done = cli("simulate", "mutex", "-a", path, "-N", "3")
    said = done.stdout + done.stderr
    assert done.returncode == 3, said
    assert "STALLED — stalled:" in done.stdout and "internal error" not in said, said
    assert "node-3 (WANTED) has not finished but waits for nothing from anyone" in done.stdout, said
