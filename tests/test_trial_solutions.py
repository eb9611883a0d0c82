"""Solutions written from the docs alone, in styles of their own, through the commands — and
what their authors got wrong on the way.

``tests/trials/`` holds one solution per problem, none a copy of ``examples/solutions/``: the bees
with one Suzuki–Kasami token carrying the hive's ledger, the hamster killers with the mayor as
the only clerk, k-mutual exclusion with Lamport's queue, the philosophers by resource hierarchy,
each with a twin broken as a student would break it (one flower too many, the tools put back on
the wrong piles, ties of timestamps left unbroken, a fork given away but still counted: ``BUGS``,
planted in a copy, so a twin is its solution and one bug). They are copied outside the checkout
and named by path. Beside them, the mistakes a user makes: a handler
that returns None, a bare ``Send``, a ``(to, msg)`` pair or a generator instead of a list of
effects, a hook (``_request``) that returns None, and code of the solution's own that raises while
its setup is built — each a clear finding or error naming the user's line, never exit 4.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mutexlab.explore.session import Config, Session

TRIALS = Path(__file__).resolve().parent / "trials"
ROOT = TRIALS.parent.parent


@pytest.fixture(scope="module")
def trials(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("their-solutions")
    assert not where.resolve().is_relative_to(ROOT)
    for path in TRIALS.glob("*.py"):
        shutil.copy(path, where / path.name)
    for stem, (name, bugs) in BUGS.items():  # each broken twin: its solution with one bug planted
        text = (TRIALS / f"{stem}.py").read_text()
        for was, bug in ((f'"{name}"', f'"{name}-broken"'), *bugs):
            assert was in text, (stem, was)
            text = text.replace(was, bug)
        (where / f"{stem}_broken.py").write_text(text)
    return where


# The bug each broken twin plants, as its author made it, and the name it runs under.
BUGS = {
    "bees_one_token": (
        "bees-one-token",
        [("if led.busy < flowers:", "if led.busy <= flowers:  # BUG: one bee too many on the flowers")],
    ),
    "elves_mayor_desk": (
        "elves-mayor-desk",
        [
            (
                "self.free[PINS] += msg.pins\n        self.free[POISON] += msg.poison",
                "self.free[PINS] += msg.poison  # BUG: the tools back on the wrong piles\n"
                "        self.free[POISON] += msg.pins",
            )
        ],
    ),
    "k_lamport": (
        "k-lamport-queue",
        [
            (
                "sorted(queue.values())[:k]}",
                "sorted(queue.values(), key=lambda stamp: stamp[0])[:k]}  # BUG: ties",
            )
        ],
    ),
    "phil_hierarchy": (
        "phil-hierarchy",
        [
            (
                "v.mine = v.claimed = v.wanted = False",
                "v.claimed = v.wanted = False  # BUG: forgets that the fork is no longer mine",
            )
        ],
    ),
}


def said(done) -> str:
    return f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"


# Each solution: its problem, a small configuration check explores completely, what its broken
# twin breaks there (the first words of check's verdict).
SMALL = {
    "bees_one_token": ("bees", ["-P", "3", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1"]),
    "elves_mayor_desk": ("elves", []),
    "k_lamport": ("kmutex", ["-N", "2", "-k", "1"]),
    "phil_hierarchy": ("philosophers", []),
}
BROKEN = {
    "bees_one_token": ([], "VIOLATION — capacity: flower (capacity 1)"),
    "elves_mayor_desk": ([], "VIOLATION — deadlock"),
    "k_lamport": (["-N", "3", "-k", "2"], "VIOLATION — capacity: cs (capacity 2)"),
    "phil_hierarchy": ([], "VIOLATION — capacity: fork:"),
}


@pytest.mark.parametrize("stem", sorted(SMALL))
def test_each_solution_passes_check_and_its_broken_twin_is_caught_and_replayed(cli, trials, tmp_path, stem):
    problem, small = SMALL[stem]
    done = cli("check", problem, "-a", trials / f"{stem}.py", *small, "--cross-check")
    assert done.returncode == 0, said(done)
    assert "verdict:      PASS" in done.stdout and "agrees" in done.stdout, done.stdout
    extra, verdict = BROKEN[stem]
    broken, scenario = trials / f"{stem}_broken.py", tmp_path / "ce.json"
    done = cli("check", problem, "-a", broken, *small, *extra, "--counterexample", scenario)
    assert done.returncode == 1, said(done)
    assert f"verdict:      {verdict}" in done.stdout and "replay reproduces it: yes" in done.stdout, (
        done.stdout
    )
    again = cli("replay", scenario, "-a", broken)
    assert again.returncode == 1, said(again)


@pytest.mark.parametrize("stem", sorted(SMALL))
def test_each_solution_simulates_safe_and_its_trace_verifies_and_draws(cli, trials, tmp_path, stem):
    problem = SMALL[stem][0]
    sizes = ["-N", "4", "-k", "2"] if problem == "kmutex" else []
    path = trials / f"{stem}.py"
    done = cli("simulate", problem, "-a", path, *sizes, "--seed", "2", "--trace", "t.jsonl", cwd=tmp_path)
    assert done.returncode == 0, said(done)
    done = cli("verify", "-a", path, "t.jsonl", cwd=tmp_path)
    assert done.returncode == 0 and ": SAFE" in done.stdout, said(done)
    done = cli("report", "-a", path, "t.jsonl", "-o", "t.html", cwd=tmp_path)
    assert done.returncode == 0 and (tmp_path / "t.html").stat().st_size > 0, said(done)


def test_compare_feeds_the_philosophers_the_meals_simulate_does(cli, trials):
    """Before: compare gave every philosopher 0 meals (the problem's option default, not
    simulate's 2): no entry, no message, and a broken solution "ok", exit 0."""
    files = ",".join(str(trials / f"phil_hierarchy{s}.py") for s in ("", "_broken"))
    done = cli("compare", "-N", "3", "--algorithms", files, "--json")
    assert done.returncode == 1, said(done)
    runs = {r["algorithm"]: r for r in json.loads(done.stdout)["runs"]}
    assert runs["phil-hierarchy"]["entries"] == 3 * 2 * 3  # 2 meals each: meal and two forks
    assert runs["phil-hierarchy"]["verdict"] == "ok"
    assert runs["phil-hierarchy-broken"]["verdict"] == "UNSAFE"
    done = cli("compare", "-N", "3", "--algorithms", files.split(",")[0], "-o", "meals=1")
    assert done.returncode == 0 and "meals=1" in done.stdout.splitlines()[0], said(done)


def test_simulate_bees_does_not_split_another_solutions_messages_as_if_they_were_mutexlabs(cli, trials):
    """Before: its TOKEN and REQUEST counted for neither reed nor flower: "messages per reed entry
    0.0, per flower entry 0.0" for a run of 677 messages."""
    done = cli("simulate", "bees", "-a", trials / "bees_one_token.py", "--seed", "1", "--json")
    assert done.returncode == 0, said(done)
    summary = json.loads(done.stdout)
    assert summary["messages_per_reed_entry"] is None and summary["messages_per_flower_entry"] is None
    entries = sum(summary["entries"].values())
    assert summary["messages_per_entry"] == round(summary["messages_total"] / entries, 2) > 0
    text = cli("simulate", "bees", "-a", trials / "bees_one_token.py", "--seed", "1").stdout
    assert "not split by resource" in text and "per flower entry" not in text, text
    own = json.loads(cli("simulate", "bees", "--seed", "1", "--json").stdout)  # mutexlab's: split
    assert own["messages_per_reed_entry"] > 0 and own["messages_per_flower_entry"] > 0


# -- what a user gets wrong ------------------------------------------------------------------------
def variant(trials: Path, name: str, old: str, new: str) -> Path:
    """``k_lamport.py`` with ``old`` replaced by ``new``, saved as ``name``.py under its own name."""
    text = (trials / "k_lamport.py").read_text()
    assert old in text, old
    path = trials / f"{name}.py"
    path.write_text(text.replace(old, new).replace('"k-lamport-queue"', f'"k-{name}"'))
    return path


ACK = """    def handle_ack(self, msg: Ack) -> list:
        self.hear(msg)
        return self.maybe_enter()"""
REPLY = "        return [Send(msg.sender, Ack(sender=self.pid, ts=self.clock.tick()))] + self.maybe_enter()"
REQUEST = "        return sends + self.maybe_enter()"
WRONG_RETURNS = {
    "returns_none": (ACK, ACK.replace("return self.maybe_enter()", "self.maybe_enter()"), "returned None"),
    "returns_generator": (
        ACK,
        ACK.replace("return self.maybe_enter()", "yield from self.maybe_enter()"),
        "returned <generator object LamportK.handle_ack>,",
    ),
    "returns_send": (
        REPLY,
        "        return Send(msg.sender, Ack(sender=self.pid, ts=self.clock.tick()))",
        "returned Send(to=",
    ),
    "request_returns_none": (REQUEST, "        sends + self.maybe_enter()", "returned None"),
}


@pytest.mark.parametrize("name", sorted(WRONG_RETURNS))
def test_a_handler_returning_no_list_of_effects_is_a_finding_naming_it(cli, trials, tmp_path, name):
    """Before: exit 4, "internal error (a bug in mutexlab ...)" and mutexlab's traceback (None, a
    Send: "not iterable"), or, for a generator, a run simulate called SAFE."""
    old, new, words = WRONG_RETURNS[name]
    path = variant(trials, name, old, new)
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "def handle_ack" in text)
    if name == "returns_send":
        line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "def handle_req" in text)
    if name == "request_returns_none":
        line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "def _request" in text)
    where = f"{path}:{line}"
    done = cli("simulate", "kmutex", "-a", path, "-N", "3", "-k", "2")
    assert done.returncode == 1, said(done)
    assert "mutexlab: finding: node-" in done.stderr and words in done.stderr, done.stderr
    assert "not a list of effects" in done.stderr and where in done.stderr, done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    scenario = tmp_path / "ce.json"
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "2", "--counterexample", scenario)
    assert done.returncode == 1 and "not a list of effects" in done.stdout, said(done)
    assert "replay reproduces it: yes" in done.stdout, done.stdout
    again = cli("replay", scenario, "-a", path)
    assert again.returncode == 1 and "RAISED: step" in again.stdout, said(again)
    walk = Session(Config(str(path), 3, {"requests": 1, "k": 2})).random(60, 1)
    assert walk["stopped"] == "raised", walk


def test_an_effect_that_is_no_effect_is_a_finding(cli, trials):
    """A ``(to, message)`` pair among the effects: before, exit 4 "unknown effect" with a traceback."""
    path = variant(trials, "pairs", REPLY, REPLY.replace("[Send(msg.sender, ", "[(msg.sender, "))
    done = cli("simulate", "kmutex", "-a", path, "-N", "3", "-k", "2")
    assert done.returncode == 1, said(done)
    assert "among its effects, which is not an effect (Send, Enter, Exit, Note, Schedule)" in done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "2")
    assert done.returncode == 1 and "is not an effect" in done.stdout, said(done)


def test_the_solutions_own_code_failing_while_its_setup_is_built_is_named_with_its_line(cli, trials):
    """The desk once kept ``self.finished = set()``, which ``Protocol.finished`` (a property) does
    not allow. Before: exit 4, "internal error (a bug in mutexlab, not in your algorithm)"."""
    text = (trials / "elves_mayor_desk.py").read_text()
    path = trials / "desk_finished.py"
    path.write_text(text.replace("self.completed", "self.finished").replace('"elves-mayor-desk"', '"desk-f"'))
    line = next(n for n, t in enumerate(path.read_text().splitlines(), 1) if "self.finished: set" in t)
    for command in ("simulate", "check"):
        done = cli(command, "elves", "-a", path)
        assert done.returncode == 2, said(done)
        assert "building its setup raised AttributeError: property 'finished'" in done.stderr, done.stderr
        assert f"{path}:{line} (in __init__)" in done.stderr, done.stderr
        assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    returns = trials / "desk_returns_dict.py"
    returns.write_text(
        text.replace('"elves-mayor-desk"', '"desk-d"')
        + "\n\nimport dataclasses\n\n_made = make_setup\n\n\n"
        + "def _in_a_dict(processes, options, seed=0):\n    return {'setup': _made(processes, options, seed)}\n\n\n"
        + "SPEC = dataclasses.replace(SPEC, make_setup=_in_a_dict)\n"
    )
    done = cli("simulate", "elves", "-a", returns)
    assert done.returncode == 2 and "make_setup returned dict, not a Setup" in done.stderr, said(done)


@pytest.mark.parametrize(
    ("problem", "stem", "given", "said_"),
    [
        ("kmutex", "k_lamport", "kk=3", "(it takes: initial_clocks, k, requests); 'kk': did you mean 'k'?"),
        (
            "philosophers",
            "phil_hierarchy",
            "meal=3",
            "(it takes: initial_clocks, meals); 'meal': did you mean 'meals'?",
        ),
    ],
)
def test_a_misspelt_option_names_what_the_solution_takes_and_the_closest(
    cli, trials, problem, stem, given, said_
):
    """Before: "k-lamport-queue does not take option(s) kk", and nothing about what it does take."""
    sizes = ["-N", "3"] if problem == "kmutex" else []
    for command in ("simulate", "check"):
        done = cli(command, problem, "-a", trials / f"{stem}.py", *sizes, "-o", given)
        assert done.returncode == 2, said(done)
        assert f"does not take option(s) {given.split('=')[0]} {said_}" in done.stderr, done.stderr


def test_processes_holding_one_mutable_object_are_refused_by_every_command(cli, trials):
    """A mutable default argument (``queue: dict = {}``) made every node share one queue. Before:
    simulate found violations in most seeds while check said PASS — "every reachable world
    checked" — since check keeps each process's state apart."""
    path = variant(
        trials,
        "mutable_default",
        "k: int = 2) -> None:",
        "k: int = 2, queue: dict = {}) -> None:",  # noqa: B006 - the user's mistake, on purpose
    )
    text = path.read_text().replace(
        "self.queue: dict[int, Stamp] = {}", "self.queue: dict[int, Stamp] = queue"
    )
    path.write_text(text)
    for command in ("simulate", "check"):
        done = cli(command, "kmutex", "-a", path, "-N", "2", "-k", "1")
        assert done.returncode == 2, said(done)
        assert "node-1.queue and node-2.queue are one dict: processes share no state" in done.stderr, (
            done.stderr
        )
    with pytest.raises(Exception, match="are one dict"):
        Session(Config(str(path), 2, {"requests": 1, "k": 1}))


@pytest.mark.parametrize(
    ("name", "reads", "differs"),
    [
        ("uses_random", "        if random.random() < 0.5:\n            return []\n", "effects"),
        ("uses_time", "        self.seen_at = time.time()\n", "state"),
    ],
)
def test_check_names_a_handler_that_is_not_deterministic(cli, trials, name, reads, differs):
    """Before: random gave "VIOLATION — deadlock" whose counterexample did not replay ("replay
    reproduces it: NO"), the time an INCOMPLETE search that never ends, neither saying why."""
    path = variant(
        trials, name, ACK, ACK.replace("        self.hear(msg)\n", "        self.hear(msg)\n" + reads)
    )
    # seeded: the draws differ from call to call as unseeded ones do, but the same in every run,
    # so whether two takes of one input part is not left to chance (unseeded, a run passed)
    path.write_text(
        "import random\nimport time\n\nrandom.seed(1)\n"
        + path.read_text().replace("from typing", "from typing", 1)
    )
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "2", "--max-states", "50000")
    assert done.returncode == 1, said(done)
    assert (
        f"is not deterministic: one input, taken twice from one state (WANTED), gave different {differs}"
        in (done.stdout)
    ), done.stdout


def test_a_message_its_codec_lacks_is_a_finding_where_it_is_sent(cli, trials):
    """NUDGE, sent but left out of the SPEC's messages. Before: simulate and check blamed the
    receiver ("cannot take NUDGE in state WANTED"), and over RabbitMQ every receiver dead-lettered
    it and the run stalled for 15 s, the cause only in the process logs."""
    path = variant(
        trials,
        "nudge",
        "class Rel(Message):",
        'class Nudge(Message):\n    type: Literal["NUDGE"] = "NUDGE"\n\n\nclass Rel(Message):',
    )
    path.write_text(
        path.read_text().replace(
            "        return self.broadcast(Rel)", "        return self.broadcast(Rel) + self.broadcast(Nudge)"
        )
    )
    said_ = "sent NUDGE, which is not one of the algorithm's message types (REQ, ACK, REL)"
    done = cli("simulate", "kmutex", "-a", path, "-N", "3", "-k", "2")
    assert done.returncode == 1 and said_ in done.stderr, said(done)
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "2")
    assert done.returncode == 1 and said_ in done.stdout, said(done)


def test_check_refuses_to_pass_a_queue_kept_as_a_class_attribute(cli, trials):
    """``queue: dict = {}`` at class level, no ``self.queue`` in ``__init__``: one dict for every
    node, and for every world check keeps. Before: check said PASS ("every reachable world
    checked") while simulate found violations in most seeds."""
    path = variant(
        trials,
        "class_queue",
        "class LamportK(ClassicNode):",
        "class LamportK(ClassicNode):\n    queue: dict = {}",
    )
    path.write_text(path.read_text().replace("        self.queue: dict[int, Stamp] = {}\n", ""))
    done = cli("check", "kmutex", "-a", path, "-N", "2", "-k", "1")
    assert done.returncode == 1, said(done)
    said_ = (
        "LamportK.queue is an attribute of the class, and a handler changed it: it is every process's at once"
    )
    assert said_ in done.stdout + done.stderr, said(done)
    assert "PASS" not in done.stdout


def test_check_names_a_process_without_snapshot(cli, trials):
    """A ``Protocol`` written without ``snapshot()``. Before: check ended in exit 4, "internal
    error (a bug in mutexlab ...)", NotImplementedError and mutexlab's traceback."""
    text = (trials / "bees_one_token.py").read_text()
    start, end = text.index("    def snapshot(self) -> Any:"), text.index("def make_setup")
    path = trials / "bees_no_snapshot.py"
    path.write_text(
        (text[:start] + "\n\n" + text[end:]).replace('ALGO = "bees-one-token"', 'ALGO = "bees-no-snap"')
    )
    done = cli("check", "bees", "-a", path, "-P", "2", "-T", "1", "-K", "1", "--eggs", "1", "--cocoons", "1")
    assert done.returncode == 2, said(done)
    assert "bee-1: TokenBee defines no snapshot(), which check keys a process's state by" in done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def test_a_hook_left_unwritten_is_named(cli, trials):
    """``_release`` misspelt. Before: "raised NotImplementedError at …/classic.py" — no word of what
    was missing."""
    path = variant(
        trials, "no_release", "    def _release(self) -> list:", "    def _release_all(self) -> list:"
    )
    done = cli("simulate", "kmutex", "-a", path, "-N", "3", "-k", "2")
    assert done.returncode == 1, said(done)
    assert "NotImplementedError: LamportK does not define _release(), which a solution writes" in done.stderr


@pytest.mark.broker
def test_over_rabbitmq_a_message_its_codec_lacks_stops_the_run_with_the_finding(
    cli, trials, amqp_url, tmp_path
):
    """Before: every receiver dead-lettered NUDGE ("unknown message type" in its log only) and the
    run stalled for 15 s, INCOMPLETE."""
    path = variant(
        trials,
        "nudge_run",
        "class Rel(Message):",
        'class Nudge(Message):\n    type: Literal["NUDGE"] = "NUDGE"\n\n\nclass Rel(Message):',
    )
    path.write_text(
        path.read_text().replace(
            "        return self.broadcast(Rel)", "        return self.broadcast(Rel) + self.broadcast(Nudge)"
        )
    )
    done = cli(
        "run", "kmutex", "-a", path, "-N", "3", "-k", "2", "--requests", "1", "--amqp-url", amqp_url,
        "--json", "--logs", tmp_path / "logs",
    )  # fmt: skip
    assert done.returncode == 1, said(done)
    summary = json.loads(done.stdout)
    assert not summary["safe"]
    reasons = [r for rejected in summary["rejected"] for r in rejected["reasons"]]
    assert any("sent NUDGE, which is not one of the algorithm's message types" in r for r in reasons), reasons
    assert "STOPPED: a handler raised" in (tmp_path / "logs" / "monitor.out").read_text()


@pytest.mark.parametrize(
    ("name", "field", "value", "why"),
    [
        ("nan_ack", "load: float = 0.0", 'float("nan")', "load: Input should be a valid number"),
        ("inf_ack", "load: float = 0.0", 'float("inf")', "load: Input should be a valid number"),
        # model_construct skips validation on the way out; the receiver's decode does not
        ("unchecked_ack", "load: int = Field(default=0, ge=0)", "-1", "load: Input should be greater than"),
    ],
)
def test_a_message_that_does_not_decode_from_its_json_is_a_finding_on_its_sender(
    cli, trials, tmp_path, name, field, value, why
):
    """An ACK whose JSON a receiver over the wire refuses (NaN and infinity are written as null;
    a value its model refuses on the way in). Before: check said "PASS — every reachable world
    checked", replay SAFE, since the receiver was handed the sender's object itself."""
    path = variant(
        trials, name, 'type: Literal["ACK"] = "ACK"\n', f'type: Literal["ACK"] = "ACK"\n    {field}\n'
    )
    made = f"Ack(sender=self.pid, ts=self.clock.tick(), load={value})"
    if name == "unchecked_ack":
        made = f"Ack.model_construct(sender=self.pid, ts=self.clock.tick(), load={value})"
    text = path.read_text().replace("Ack(sender=self.pid, ts=self.clock.tick())", made)
    path.write_text("from pydantic import Field\n" + text)
    said_ = "node-2 sent ACK, which does not decode from its own JSON ("
    scenario = tmp_path / "ce.json"
    done = cli("check", "kmutex", "-a", path, "-N", "2", "-k", "1", "--counterexample", scenario)
    assert done.returncode == 1 and "VIOLATION" in done.stdout and "PASS" not in done.stdout, said(done)
    assert said_ in done.stdout and why in done.stdout, done.stdout
    assert "a receiver over the wire would refuse it" in done.stdout, done.stdout
    assert "replay reproduces it: yes" in done.stdout, done.stdout
    again = cli("replay", scenario, "-a", path)
    assert again.returncode == 1 and "RAISED: step" in again.stdout and said_ in again.stdout, said(again)
    walk = Session(Config(str(path), 2, {"requests": 1, "k": 1})).random(60, 1)
    assert walk["stopped"] == "raised", walk


def test_two_setups_of_one_class_name_their_own_processes(trials):
    """The names a setup gives its processes belong to that setup. Before: one global table keyed
    by (class, pid), so in one long-lived process (the explorer's server) the setup built last
    renamed every earlier setup's processes: process 1 of the 2-node setup said ``n3-1``."""
    import copy
    import pickle

    from mutexlab.protocols.registry import build_setup

    path = variant(
        trials, "renamed", "from typing import Literal", "import dataclasses\nfrom typing import Literal"
    )
    text = path.read_text().replace(  # the kit's own name (node-<pid>) left out: its setup names it
        "class LamportK(ClassicNode):\n", "class LamportK(ClassicNode):\n    name = Protocol.name\n"
    )
    path.write_text(
        "from mutexlab.protocol import Protocol\n"
        + text
        + "\n\n_made = SPEC.make_setup\n\n\n"
        + "def _renamed(processes, options, seed=0):\n"
        + "    setup = _made(processes, options, seed)\n"
        + "    return dataclasses.replace(setup, names={p: f'n{processes}-{p}' for p in setup.names})\n\n\n"
        + "SPEC = dataclasses.replace(SPEC, make_setup=_renamed)\n"
    )
    two = build_setup(str(path), 2, {"requests": 1, "k": 1}, 0)
    three = build_setup(str(path), 3, {"requests": 1, "k": 1}, 0)
    assert type(two.protocols[1]) is type(three.protocols[1])  # one class, two setups
    assert [two.protocols[p].name for p in (1, 2)] == ["n2-1", "n2-2"]
    assert [three.protocols[p].name for p in (1, 2, 3)] == ["n3-1", "n3-2", "n3-3"]
    kept = copy.deepcopy(two.protocols[1])
    assert kept.name == "n2-1" and pickle.loads(pickle.dumps(kept)).name == "n2-1"
    assert "_named" not in vars(kept)  # no part of its state: snapshots and cards do not see it
    assert kept.snapshot() == two.protocols[1].snapshot()


FIRST_K = '''def first_k(queue: dict[int, Stamp], k: int) -> set[int]:
    """The pids of the K earliest requests."""
    return {pid for _, pid in sorted(queue.values())[:k]}'''


@pytest.mark.parametrize(
    ("name", "memo", "code"),
    [
        (
            "memo_dict",
            "MEMO: dict = {}\n\n\n"
            "def first_k(queue: dict[int, Stamp], k: int) -> set[int]:\n"
            "    key = (tuple(sorted(queue.values())), k)\n"
            "    if key not in MEMO:\n"
            "        MEMO[key] = {pid for _, pid in sorted(queue.values())[:k]}\n"
            "    return MEMO[key]",
            1,
        ),
        (
            "memo_cache",
            "import functools\n\n\n"
            "@functools.cache\n"
            "def _first_k(stamps: tuple, k: int) -> frozenset:\n"
            "    return frozenset(pid for _, pid in stamps[:k])\n\n\n"
            "def first_k(queue: dict[int, Stamp], k: int) -> set[int]:\n"
            "    return set(_first_k(tuple(sorted(queue.values())), k))",
            0,
        ),
    ],
)
def test_a_memo_kept_as_a_global_is_a_finding_that_says_how_to_keep_one(cli, trials, name, memo, code):
    """A memo a handler fills is every process's at once, like any shared dict, and whether it is
    only a memo cannot be told from its changes (keyed by pid, it is shared state). Before: the
    finding said only "keep it in an attribute", which a memo's author took for a false alarm; it
    now says that functools.cache keeps a memo of a function, which check does not watch."""
    path = variant(trials, name, FIRST_K, memo)
    done = cli("check", "kmutex", "-a", path, "-N", "2", "-k", "1")
    assert done.returncode == code, said(done)
    if code:
        assert "the global MEMO of" in done.stdout and "a mutable global of the module" in done.stdout
        assert "Decorate that function with functools.cache, which is not watched" in done.stdout, said(done)
    else:
        assert "PASS" in done.stdout, said(done)
