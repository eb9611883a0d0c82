"""Solutions written in other people's styles (tests/outsiders/o18_*.py), each with a planted bug
caught with its witness, and the defects session 18 found: an elves solution whose STOP lacks the
``round`` the problem's audit reads (or whose ``round`` is no int) passed ``check`` and crashed
``simulate`` (`internal error … STOP body lacks round`, exit 4) — now refused as its setup is
built, exit 2, naming the message type and the field; and a message model typed ``type:
Literal["LOCK", "GRANT", "UNLOCK"]`` (several types, or one without a default) was keyed by
pydantic's "undefined" — `simulate` crashed (exit 4) — now the codec takes the types from the
Literal's values, and refuses a model it cannot key naming the model and its field. Small bounds:
seconds each."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Literal, NamedTuple

import pytest
from outsider_edits import OUTSIDERS, SHARED, Explorer, edited, said

from mutexlab.messages import Codec, Message, MessageError

TREE = OUTSIDERS / "o18_mutex_tree_quorum.py"
TICKETS = OUTSIDERS / "o18_kmutex_tickets.py"
PHIL = OUTSIDERS / "o18_phil_fork_book.py"
BEES = OUTSIDERS / "o18_bees_keeper_factory.py"
ELVES = OUTSIDERS / "o18_elves_quartermaster.py"
BEES_SMALL = ("-P", "2", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1")
ELVES_SMALL = ("--elves", "2", "--pins", "1", "--poison", "4", "--hamsters", "1-2")


def _variant(tmp_path: Path, fixture: Path, algorithm: str, name: str, *edits: tuple[str, str]) -> Path:
    return edited(tmp_path, fixture.name, algorithm, "o18", name, *edits)


# -- outsiders of session 18 -----------------------------------------------------------------------
def test_tree_quorums_of_one_model_of_three_types_are_safe(cli):
    """Before: `internal error … PydanticUndefinedType found`, exit 4 — ``Vote`` is one model of
    the three types LOCK, GRANT and UNLOCK (``type: Literal[...]``, no default)."""
    done = cli("simulate", "mutex", "-a", TREE, "-N", "5", "--seed", "1")
    assert done.returncode == 0 and "entries:            15 of 15 requests" in done.stdout, said(done)
    assert "messages:           GRANT 27, LOCK 27, UNLOCK 27 (total 81)" in done.stdout, said(done)
    done = cli("check", "mutex", "-a", TREE, "-N", "3", "--requests", "1", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)


def test_quorums_leaving_out_the_root_are_caught_and_replayed(cli, tmp_path):
    skip = _variant(tmp_path, TREE, "o18-tree-quorum", "skip", ("SKIP_ROOT = False", "SKIP_ROOT = True"))
    ce = tmp_path / "skip.json"
    done = cli("check", "mutex", "-a", skip, "-N", "3", "--requests", "1", "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: cs (capacity 1) held by node-2×1, node-3×1" in done.stdout, said(done)
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", skip)
    assert done.returncode == 1 and "[capacity] cs (capacity 1) held by node-2" in done.stdout, said(done)
    done = cli("simulate", "mutex", "-a", skip, "-N", "5", "--seed", "1")
    assert done.returncode == 1 and "[capacity] cs (capacity 1) held by node-3" in done.stdout, said(done)


def test_a_deli_counter_of_tickets_is_safe(cli):
    done = cli("simulate", "kmutex", "-a", TICKETS, "-N", "5", "-k", "2", "--seed", "1")
    assert done.returncode == 0 and "entries:            15 of 15 requests" in done.stdout, said(done)
    assert "messages:           CALL 12, DONE 12, NUMBER 12, TAKE 12 (total 48)" in done.stdout, said(done)
    done = cli("check", "kmutex", "-a", TICKETS, "-N", "3", "-k", "2", "--requests", "1", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)


def test_a_counter_calling_one_ticket_too_many_is_caught_and_replayed(cli, tmp_path):
    loose = _variant(
        tmp_path, TICKETS, "o18-kmutex-tickets", "loose", ("LOOSE_COUNT = False", "LOOSE_COUNT = True")
    )
    ce = tmp_path / "loose.json"
    done = cli(
        "check", "kmutex", "-a", loose, "-N", "3", "-k", "2", "--requests", "1", "--counterexample", ce
    )
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: cs (capacity 2) held by node-1×1, node-2×1, node-3×1" in done.stdout
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", loose)
    assert done.returncode == 1 and "[capacity] cs (capacity 2) held by node-1" in done.stdout, said(done)
    done = cli("simulate", "kmutex", "-a", loose, "-N", "5", "-k", "2", "--seed", "1")
    assert done.returncode == 1 and "[capacity] cs (capacity 2) held by node-3" in done.stdout, said(done)


def test_philosophers_with_a_waiters_book_and_namedtuple_payloads_pass(cli):
    done = cli("simulate", "philosophers", "-a", PHIL, "--seed", "1")
    assert done.returncode == 0 and "meals eaten: 10 of 10" in done.stdout, said(done)
    assert "messages:    ASK 8, BACK 8, GIVE 8 (total 24)" in done.stdout, said(done)
    done = cli("check", "philosophers", "-a", PHIL, "-N", "3", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)


def test_a_book_read_for_the_left_fork_alone_is_caught_and_replayed(cli, tmp_path):
    left = _variant(
        tmp_path, PHIL, "o18-phil-fork-book", "left", ("BOOK_LEFT_ONLY = False", "BOOK_LEFT_ONLY = True")
    )
    ce = tmp_path / "left.json"
    done = cli("check", "philosophers", "-a", left, "-N", "3", "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: fork:3 (capacity 1) held by philosopher-2×1, philosopher-3×1" in done.stdout
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", left)
    assert done.returncode == 1 and "[capacity] fork:3 (capacity 1) held by philosopher-3" in done.stdout
    done = cli("simulate", "philosophers", "-a", left, "--seed", "1")
    assert done.returncode == 1 and "[capacity] fork:4 (capacity 1) held by philosopher-3" in done.stdout


def test_bees_whose_keeper_class_a_factory_makes_pass(cli):
    done = cli("simulate", "bees", "-a", BEES, "-P", "5", "-T", "2", "--seed", "1")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    assert "eggs per reed: reed:1 15, reed:2 10 (total 25, expected 25)" in done.stdout, said(done)
    done = cli("check", "bees", "-a", BEES, "-P", "3", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1",
               "--cross-check")  # fmt: skip
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)


def test_a_keeper_not_counting_the_bees_out_is_caught_and_replayed(cli, tmp_path):
    forget = _variant(
        tmp_path, BEES, "o18-bees-keeper-factory", "forget", ("FORGET_OUT = False", "FORGET_OUT = True")
    )
    ce = tmp_path / "forget.json"
    done = cli("check", "bees", "-a", forget, *BEES_SMALL, "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: flower (capacity 1) held by bee-1×1, bee-2×1" in done.stdout, said(done)
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", forget)
    assert done.returncode == 1 and "[capacity] flower (capacity 1) held by bee-1" in done.stdout, said(done)
    done = cli("simulate", "bees", "-a", forget, "-P", "5", "-T", "2", "-K", "1", "--seed", "1")
    assert done.returncode == 1 and "[capacity] flower (capacity 1) held by bee-1" in done.stdout, said(done)


def test_elves_with_a_quartermaster_dispatching_by_a_dict_pass(cli):
    done = cli("simulate", "elves", "-a", ELVES, "--seed", "3")
    assert done.returncode == 0 and "contracts done: 12 of 12" in done.stdout, said(done)
    assert (
        "messages: CONTRACT 12, ISSUE 12, KIT 12, RETURN 12, ROUND 8, STOP 8, WANT 20 (total 84)"
        in done.stdout
    )
    done = cli("check", "elves", "-a", ELVES, *ELVES_SMALL, "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)


def test_a_store_one_poison_short_is_caught_and_replayed(cli, tmp_path):
    extra = _variant(tmp_path, ELVES, "o18-elves-quartermaster", "extra",
                     ("ONE_EXTRA_POISON = False", "ONE_EXTRA_POISON = True"))  # fmt: skip
    ce = tmp_path / "extra.json"
    wide = ("--elves", "2", "--pins", "2", "--poison", "3", "--hamsters", "1-2")
    done = cli("check", "elves", "-a", extra, *wide, "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: poison (capacity 3) held by elf-1×2, elf-2×2" in done.stdout, said(done)
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", extra)
    assert done.returncode == 1 and "[capacity] poison (capacity 3) held by elf-1" in done.stdout, said(done)
    done = cli("simulate", "elves", "-a", extra, "--seed", "3")
    assert done.returncode == 1 and "[capacity] poison (capacity 10) held by elf-2" in done.stdout, said(done)


@pytest.mark.parametrize(
    ("ours", "other", "options"),
    [
        (TREE, "o16_mutex_dataclass.py", ()),
        (TICKETS, "o15_kmutex_permit_tree.py", ("-o", "k=2")),
        (PHIL, "o16_phil_polski.py", ()),
        (BEES, "o16_bees_frozen_memory.py", ("-o", "flowers=1", "-o", "reeds=2")),
        (ELVES, "o16_elves_registry.py", ()),
    ],
    ids=["mutex", "kmutex", "philosophers", "bees", "elves"],
)
def test_compare_runs_each_beside_another_of_its_problem(cli, ours, other, options):
    done = cli("compare", "--nodes", "3", "--algorithms", f"{ours},{OUTSIDERS / other}", *options)
    assert done.returncode == 0 and done.stdout.count("    ok") == 2, said(done)


@pytest.mark.parametrize(
    ("problem", "path", "flags"),
    [
        ("mutex", TREE, ("-N", "3", "--requests", "1")),
        ("kmutex", TICKETS, ("-N", "3", "-k", "2", "--requests", "1")),
        ("philosophers", PHIL, ("-N", "3", "--meals", "1")),
        ("bees", BEES, BEES_SMALL),
        ("elves", ELVES, ELVES_SMALL),
    ],
    ids=["mutex", "kmutex", "philosophers", "bees", "elves"],
)
def test_explore_steps_through_each_and_its_path_replays(cli, tmp_path, problem, path, flags):
    mine = tmp_path / "mine" / path.name
    mine.parent.mkdir()
    shutil.copy(path, mine)
    explorer = Explorer(tmp_path, problem, "-a", str(mine), *flags)
    try:
        assert explorer.banner.startswith("mutexlab explore: o18-"), explorer.banner
        first = explorer.call("GET", "/api/state")["steps"][0]["id"]
        stepped = explorer.call("POST", "/api/step", {"id": first})
        assert stepped["position"] == 1 and stepped["outcome"]["taken"]["op"] == first.split(":")[0], stepped
        findings = explorer.call("POST", "/api/run", {"seed": 1})["findings"]
        assert findings["status"] == "end" and not findings.get("violations"), findings
        scenario = explorer.call("GET", "/api/scenario")
    finally:
        assert explorer.stop() == 0
    (tmp_path / "path.json").write_text(json.dumps(scenario), encoding="utf-8")
    done = cli("replay", "path.json", "-a", mine, cwd=tmp_path)
    assert done.returncode == 0 and ": SAFE" in done.stdout, said(done)


# -- what an elves problem reads of a solution's messages -------------------------------------------
NO_ROUND = (
    ('class Stop(Message):\n    type: Literal["STOP"] = "STOP"\n    round: int\n',
     'class Stop(Message):\n    type: Literal["STOP"] = "STOP"\n'),
    ("Stop, round=self.round, final=final)", "Stop, final=final)"),
    ("        if msg.round == self.round:\n            self.state = Post.ELF_DONE",
     "        if self.state == Post.ASKING:\n            self.state = Post.ELF_DONE"),
)  # fmt: skip


@pytest.mark.parametrize("command", ["simulate", "check", "compare"])
def test_a_stop_without_its_round_is_refused_at_setup(cli, tmp_path, command):
    """Before: `check` said PASS, and `simulate` `internal error (a bug in mutexlab, not in your
    algorithm): TraceError: line 112: STOP body lacks round`, exit 4."""
    bare = _variant(tmp_path, ELVES, "o18-elves-quartermaster", "bare", *NO_ROUND)
    args = {
        "simulate": ("simulate", "elves", "-a", bare, "--seed", "3"),
        "check": ("check", "elves", "-a", bare, *ELVES_SMALL),
        "compare": ("compare", "--nodes", "2", "--algorithms", f"{bare},{ELVES}"),
    }[command]
    done = cli(*args)
    assert done.returncode == 2, said(done)
    assert (
        "its message type STOP (Stop) has no field `round`: the problem elves reads the round of every STOP; "
        "declare it, `round: int`" in done.stdout + done.stderr
    ), said(done)


def test_a_round_of_another_type_is_refused_at_setup(cli, tmp_path):
    """Before: `internal error … WANT body's 'round' must be a whole number`, exit 4: the audit
    reads the ``round`` of every message that has one."""
    text = ('class Want(Message):\n    type: Literal["WANT"] = "WANT"\n    round: int\n',
            'class Want(Message):\n    type: Literal["WANT"] = "WANT"\n    round: str\n')  # fmt: skip
    worded = _variant(tmp_path, ELVES, "o18-elves-quartermaster", "worded", text,
                      ("Want, round=msg.round)", "Want, round=str(msg.round))"),
                      ("Want, round=self.round)", "Want, round=str(self.round))"))  # fmt: skip
    done = cli("simulate", "elves", "-a", worded, "--seed", "3")
    assert done.returncode == 2, said(done)
    assert (
        "its message type WANT (Want) has the field `round` typed str: the problem elves reads it as int"
        in (done.stdout + done.stderr)
    ), said(done)


STORE = OUTSIDERS / "o10_elves_store.py"
STORE_STOP = 'body={"type": "STOP", "sender": 0, "ts": self.ts, "round": self.round}'


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ('body={"type": "STOP", "sender": 0, "ts": self.ts}', "node 0 sent a STOP without `round`: the problem "
         "elves reads the round of every STOP: {\"type\": \"STOP\", \"sender\": 0, \"ts\": "),
        ('body={"type": "STOP", "sender": 0, "ts": self.ts, "round": str(self.round)}',
         'node 0 sent a STOP whose `round` is "1", not a whole number: the problem elves reads it as one'),
    ],
    ids=["no-round", "round-a-string"],
)  # fmt: skip
def test_a_programs_stop_without_its_round_is_its_finding(cli, tmp_path, body, says):
    """A program under ``mutexlab test`` (a mayor in Python here) whose STOP lacks the round: before,
    `internal error (a bug in mutexlab, not in your algorithm): TraceError: line …: STOP body lacks
    round`, exit 4. Now the program's protocol slip, named with the line it wrote (exit 1)."""
    text = STORE.read_text()
    assert STORE_STOP in text
    mayor = tmp_path / "store.py"
    mayor.write_text(text.replace(STORE_STOP, body))
    done = cli("test", "elves", "--node", f"{sys.executable} {mayor}", "-N", "1", "-o", "contracts=2",
               "-o", "rounds=2", "--runs", "2")  # fmt: skip
    assert done.returncode == 1 and "FINDING [protocol]" in done.stdout and says in done.stdout, said(done)


# -- the codec's message types ----------------------------------------------------------------------
class Vote(Message):
    type: Literal["ASK", "GIVE"]
    kind: Literal["req", "rel"] = "req"


class Solo(Message):
    type: Literal["SOLO"]  # no default: made with its type, Solo(type="SOLO", ...)


def test_a_codec_takes_every_type_of_a_literal():
    codec = Codec(Vote, Solo)
    assert codec.types == ["ASK", "GIVE", "SOLO"]
    msg = codec.decode(b'{"type": "GIVE", "sender": 1, "ts": 2, "kind": "rel"}')
    assert type(msg) is Vote and msg.type == "GIVE" and msg.kind == "rel"
    assert codec.decode(codec.encode(Solo(type="SOLO", sender=1, ts=1))) == Solo(type="SOLO", sender=1, ts=1)
    with pytest.raises(
        MessageError, match=r"^invalid ASK: kind: Input should be 'req' or 'rel' \(got 'x'\)$"
    ):
        codec.decode({"type": "ASK", "sender": 1, "ts": 1, "kind": "x"})


class Kindly(Message):
    kind: Literal["req", "rel"]


class Typed(Message):
    type: str = "TYPED"


class Again(Message):
    type: Literal["SOLO"] = "SOLO"


class Plain(NamedTuple):  # a message written as a NamedTuple, not a model
    type: str
    sender: int
    ts: int


class Crossed(Message):
    type: Literal["A"] = "B"  # type: ignore[assignment]  # the mistake under test


@pytest.mark.parametrize(
    ("models", "said_"),
    [
        ((Kindly,), "message model Kindly has no field `type`: declare it, `type: Literal[\"KINDLY\"] = \"KINDLY\"` "
                    "(`kind: Literal['req', 'rel']` is a field of its own, not the message type)"),
        ((Typed,), "message model Typed: its field `type` is typed str; a message type is a string named by a Literal"),
        ((Solo, Again), "message models Solo and Again both have the type 'SOLO'"),
        ((Crossed,), "message model Crossed: its field `type` defaults to 'B', none of Literal['A']"),
        ((Plain,), "a codec takes message models (subclasses of Message), not <class "),
    ],
    ids=["no-type", "type-str", "twice", "default-outside", "namedtuple"],
)  # fmt: skip
def test_a_model_the_codec_cannot_key_is_refused_naming_it(models, said_):
    """Before: `KeyError: 'type'`, pydantic's `needs field 'type' to be of type Literal`, `Value
    'SOLO' for discriminator 'type' mapped to multiple choices`, or a codec keyed by nothing."""
    with pytest.raises(TypeError) as refused:
        Codec(*models)
    assert said_ in str(refused.value)


# -- closures a process holds one level down -----------------------------------------------------------
DISPENSER = (
    ("class DeliNode(ClassicNode):",
     "def dispenser():\n    numbers = [0]\n\n    def take():\n        numbers[0] += 1\n        return numbers[0]\n\n"
     "    return {\"take\": take}\n\n\nclass DeliNode(ClassicNode):"),
    ("        self.next_ticket = 1\n", "        self.numbers = dispenser()\n"),
    ("        ticket, self.next_ticket = self.next_ticket, self.next_ticket + 1\n",
     "        ticket = self.numbers[\"take\"]()\n"),
)  # fmt: skip


def test_a_closure_an_attributes_dict_holds_is_named_in_the_finding(cli, tmp_path):
    """A ticket dispenser a factory of closures makes (what my first bees' keeper was): every copy
    of the counter shares its numbers, so ``check`` finds it not deterministic. Before, the finding
    named no closure (only one held by an attribute itself was); now the one its dict holds."""
    dispensed = _variant(tmp_path, TICKETS, "o18-kmutex-tickets", "dispensed", *DISPENSER)
    done = cli("check", "kmutex", "-a", dispensed, "-N", "3", "-k", "2", "--requests", "1")
    assert done.returncode == 1 and "node-1 is not deterministic" in done.stdout, said(done)
    assert (
        "(its attribute numbers['take'] holds a function keeping variables of its own, a closure every copy"
        in (done.stdout)
    ), said(done)


def test_closures_are_looked_for_one_level_down():
    from types import SimpleNamespace

    from mutexlab.sim.determinism import closures

    box: list[int] = []

    def keeps() -> None:
        box.append(1)

    class Proc:
        def __init__(self) -> None:
            self.keeper = SimpleNamespace(add=keeps, size=3)
            self.orders = {"WANT": keeps, "PLAIN": len}
            self.line = [keeps]
            self.kind = Proc  # a class: not looked into

    assert closures(Proc()) == ["keeper.add", "line[0]", "orders['WANT']"]


# -- over RabbitMQ -------------------------------------------------------------------------------------------
@pytest.mark.broker
@pytest.mark.slow
@pytest.mark.parametrize(
    ("problem", "path", "flags", "spawn"),
    [
        ("mutex", TREE, ("-N", "3", "--requests", "2"), "fork"),
        ("kmutex", TICKETS, ("-N", "4", "-k", "2", "--requests", "2"), "exec"),
        ("philosophers", PHIL, ("-N", "3", "--meals", "1"), "fork"),
        ("bees", BEES, ("-P", "3", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1"), "exec"),
        ("elves", ELVES, ("--elves", "2", "--contracts", "2", "--rounds", "1"), "fork"),
    ],
    ids=["mutex", "kmutex-exec", "philosophers", "bees-exec", "elves"],
)
def test_each_runs_safe_over_rabbitmq(cli, tmp_path, amqp_url, monkeypatch, problem, path, flags, spawn):
    if spawn == "exec":  # fresh interpreters, each loading the file anew (the keeper's class made anew)
        monkeypatch.setenv("MUTEXLAB_SPAWN", "exec")
        monkeypatch.setenv("PYTHONPATH", SHARED)
    done = cli(
        "run", problem, "-a", path, *flags, "--amqp-url", amqp_url, "--dwell", "0", "--json", cwd=tmp_path
    )
    summary = json.loads(done.stdout)
    assert done.returncode == 0 and summary["safe"] and summary["complete"], said(done)
    assert summary["algorithm"].startswith("o18-"), summary
