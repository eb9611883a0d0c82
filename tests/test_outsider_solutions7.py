"""Solutions written from the docs alone (tests/outsiders/o7_*.py), each with the bugs it plants
(module constants): every command judges both right. Small bounds: the whole file runs in seconds."""

from __future__ import annotations

import shutil

import pytest
from outsider_edits import OUTSIDERS, edited, said


def _copy(tmp_path, name):
    path = tmp_path / name
    shutil.copy(OUTSIDERS / name, path)
    return path


def test_a_frozen_dataclass_book_and_an_enum_field_pass_and_one_reply_too_few_is_caught(cli, tmp_path):
    """o7_kmutex_frozen.py keeps its bookkeeping in one frozen dataclass replaced by
    ``dataclasses.replace`` and sends an Enum in its OK. SLACK = 1 enters one reply early."""
    path = _copy(tmp_path, "o7_kmutex_frozen.py")
    done = cli("check", "kmutex", "-a", path, "-N", "2", "-k", "1", "--requests", "2", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("simulate", "kmutex", "-a", path, "-N", "4", "-k", "2", "--requests", "2", "--seed", "3")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    broken = edited(tmp_path, "o7_kmutex_frozen.py", "o7-frozen-k", "o7", "slack", ("SLACK = 0", "SLACK = 1"))
    ce = tmp_path / "slack.json"
    done = cli("check", "kmutex", "-a", broken, "-N", "3", "-k", "2", "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: cs (capacity 2) held by node-1×1, node-2×1, node-3×1" in done.stdout
    done = cli("replay", ce, "-a", broken)
    assert done.returncode == 1 and "[capacity] cs (capacity 2)" in done.stdout, said(done)


@pytest.mark.parametrize(
    ("edit", "named", "step"),
    [
        (
            ("STATS = False", "STATS = True"),
            "the variable sent that _counter.<locals>.bump() closes over",
            "node-1 request",
        ),
        (
            ("HISTORY = False", "HISTORY = True"),
            "the default argument history of FrozenK._on_ask()",
            "deliver ASK node-1→node-2",
        ),
    ],
    ids=["closure", "method-default"],
)
def test_state_every_node_shares_through_a_closure_or_a_default_is_a_finding(
    cli, tmp_path, edit, named, step
):
    """A statistics counter kept in a closure of a module function, or who asked kept in a
    method's mutable default argument, is one object for every node of an interpreter, as a
    module's global list is (which was named). Before: neither was watched — check PASS, simulate
    SAFE (exit 0), though over RabbitMQ each process has its own."""
    path = edited(tmp_path, "o7_kmutex_frozen.py", "o7-frozen-k", "o7", edit[0].split()[0].lower(), edit)
    ce = tmp_path / "shared.json"
    done = cli("check", "kmutex", "-a", path, "-N", "3", "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert f"verdict:      VIOLATION — error: {step}: {named}, in {path}" in done.stdout or (
        f"verdict:      VIOLATION — error: {step}: {named} in {path}" in done.stdout
    ), said(done)
    assert "is one object for every call, and a handler changed it" in done.stdout, said(done)
    done = cli("replay", ce, "-a", path)
    assert done.returncode == 1 and named in done.stdout, said(done)
    done = cli("simulate", "kmutex", "-a", path, "-N", "3", "--seed", "1")
    assert done.returncode == 1 and named in done.stderr, said(done)


@pytest.mark.parametrize(
    ("share", "named"),
    [
        ("closure", "the variable state that _mk.<locals>.get() closes over, in {path},"),
        ("object", "the global _B's attribute d of {path} is a mutable global of the module"),
        ("default", "the default argument _d of _default() in {path} is one object for every call"),
        ("registry", "Registry.d is an attribute of the class"),
    ],
)
def test_a_board_shared_through_the_interpreter_is_named_wherever_it_hides(cli, tmp_path, share, named):
    """o7_mutex_board.py enters when a board every node of the interpreter reads says nobody is
    inside. Kept in a module's global dict it was named; kept in a closure, an object of the file's
    own class, a function's default argument or another class's attribute, it was not: check then
    searched worlds that share it and called it a deadlock after two requests ("replay reproduces
    it: yes"), which a fresh replay does not reproduce (node-1 enters there, exit 3)."""
    path = edited(
        tmp_path, "o7_mutex_board.py", "o7-board", "o7", share, ('SHARE = "global"', f'SHARE = "{share}"')
    )
    done = cli("check", "mutex", "-a", path, "-N", "2")
    assert done.returncode == 1, said(done)
    assert "verdict:      VIOLATION — error: node-1 request: " + named.format(path=path) in done.stdout, said(
        done
    )
    assert "VIOLATION — deadlock" not in done.stdout, said(done)


def test_namedtuple_forks_pass_a_forgotten_fork_deadlocks_and_a_rare_raise_is_found(cli, tmp_path):
    """o7_phil_namedtuple.py: forks as NamedTuple records, a hierarchy of forks, a deque for the
    card. FORGET never hands over a fork asked for during a meal; RAISE_RARE raises in one
    interleaving only (philosopher-2 asked for a fork while eating)."""
    path = _copy(tmp_path, "o7_phil_namedtuple.py")
    done = cli("check", "philosophers", "-a", path, "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    forget = edited(
        tmp_path, "o7_phil_namedtuple.py", "o7-phil-hier", "o7", "forget", ("FORGET = False", "FORGET = True")
    )
    ce = tmp_path / "forget.json"
    done = cli("check", "philosophers", "-a", forget, "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert (
        "VIOLATION — deadlock: nothing can move; waiting: philosopher-3 for fork:3, fork:1: "
        "GIVE from philosopher-2" in done.stdout
    )
    done = cli("replay", ce, "-a", forget)
    assert done.returncode == 1 and "DEADLOCK: nothing can move" in done.stdout, said(done)
    done = cli("simulate", "philosophers", "-a", forget, "--seed", "1")
    assert (
        done.returncode == 3
        and "philosopher-4 (HUNGRY) waits for fork:4, fork:5: GIVE from philosopher-3" in done.stdout
    )
    rare = edited(
        tmp_path,
        "o7_phil_namedtuple.py",
        "o7-phil-hier",
        "o7",
        "rare",
        ("RAISE_RARE = False", "RAISE_RARE = True"),
    )
    ce = tmp_path / "rare.json"
    done = cli("check", "philosophers", "-a", rare, "--counterexample", ce)
    assert done.returncode == 1, said(done)
    raised = "philosopher-2 raised KeyError: ('rare', 3) at "
    assert raised in done.stdout and "taking WANT from process 3 in state EATING" in done.stdout, said(done)
    done = cli("replay", ce, "-a", rare)
    assert done.returncode == 1 and "RAISED: step 9 (deliver): " + raised in done.stdout, said(done)
    done = cli("simulate", "philosophers", "-a", rare, "--seed", "0")
    assert done.returncode == 1 and raised in done.stderr, said(done)


def test_a_token_changed_after_it_was_sent_reaches_simulate_s_receiver_as_sent(cli, tmp_path):
    """o7_token_list.py is Suzuki–Kasami with lists in its TOKEN; MUTATE keeps the TOKEN it sent and
    marks in it, later, an ASK as served. Over the wire (and in check) the receiver gets the token
    as sent: PASS. Before: simulate handed the object itself, the change reached the receiver, and
    a request was never served — STALLED, exit 3, every seed, where check said PASS."""
    path = _copy(tmp_path, "o7_token_list.py")
    done = cli("check", "mutex", "-a", path, "-N", "2", "--requests", "2", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    mutate = edited(
        tmp_path, "o7_token_list.py", "o7-token-list", "o7", "mutate", ("MUTATE = False", "MUTATE = True")
    )
    done = cli("check", "mutex", "-a", mutate, "-N", "2", "--requests", "2")
    assert done.returncode == 0 and "verdict:      PASS" in done.stdout, said(done)
    # the fast loop, the traced one, and the plain loop (duplicates)
    for flags in ((), ("--trace", str(tmp_path / "run.trace")), ("--duplicate", "0.2")):
        done = cli("simulate", "mutex", "-a", mutate, "-N", "3", "--seed", "1", *flags)
        assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)


def test_only_messages_whose_fields_may_hold_a_list_are_copied():
    """``Codec.changeable``: what ``simulate`` copies for each receiver, by the fields' annotations."""
    from typing import Literal

    from mutexlab.messages import Codec, Message

    class Plain(Message):
        type: Literal["PLAIN"] = "PLAIN"
        pair: tuple[int, ...] = ()
        names: frozenset[str] = frozenset()
        maybe: int | None = None

    class Nested(Message):
        type: Literal["NESTED"] = "NESTED"
        inner: Plain | None = None

    class Listed(Message):
        type: Literal["LISTED"] = "LISTED"
        queue: list[int]

    class Deep(Message):
        type: Literal["DEEP"] = "DEEP"
        rows: tuple[dict[int, int], ...]

    assert Codec(Plain, Nested, Listed, Deep).changeable == {"LISTED", "DEEP"}


@pytest.mark.parametrize(
    ("family", "fixture", "right"),
    [("mutex", "o7_kmutex_frozen.py", "kmutex"), ("kmutex", "o7_phil_namedtuple.py", "philosophers")],
)
def test_check_of_another_problem_names_the_problem_the_file_solves(cli, tmp_path, family, fixture, right):
    """``check mutex -a`` a kmutex solution: before, it checked the file as kmutex with K = 2 under
    a header without k and said PASS (exit 0) — two nodes inside at once passing ``check mutex``;
    a philosophers file under ``check kmutex`` said "does not take option(s) k, requests".
    simulate, explore and run named the right command; so does check now (exit 2)."""
    path = _copy(tmp_path, fixture)
    done = cli("check", family, "-a", path, "-N", "3")
    assert done.returncode == 2, said(done)
    assert f"run it with `mutexlab check {right} --algorithm {path}`" in done.stderr, said(done)


def test_a_handler_that_never_returns_is_a_finding_of_simulate_check_and_replay(cli, tmp_path, monkeypatch):
    """o7_central_enum.py (StrEnum tags, a recursive walk of its queue) passes; SPIN busy-waits in
    the coordinator's handler once two nodes wait. Before: simulate never returned (an allocating
    loop grew until the machine refused it), nor did check and replay. Now it is interrupted after
    ``hung.SECONDS`` and named with the line it was running, exit 1, as a handler that raises."""
    from mutexlab.sim import hung

    path = _copy(tmp_path, "o7_central_enum.py")
    done = cli("check", "mutex", "-a", path, "-N", "3", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("simulate", "mutex", "-a", path, "-N", "3", "--seed", "1")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    spin = edited(
        tmp_path, "o7_central_enum.py", "o7-central-enum", "o7", "spin", ("SPIN = False", "SPIN = True")
    )
    monkeypatch.setattr(hung, "SECONDS", 1.0)
    done = cli("simulate", "mutex", "-a", spin, "-N", "3", "--seed", "1")
    assert done.returncode == 1, said(done)
    spinning = "node-1 raised HandlerHung: the handler ran for 1 s without returning (an endless loop?)"
    assert spinning in done.stderr and f"at {spin}:" in done.stderr, said(done)  # the while or its pass
    assert "(in _on_req), taking REQ from process 2 in state WANTED; reached with seed 1" in done.stderr
    ce = tmp_path / "spin.json"
    done = cli("check", "mutex", "-a", spin, "-N", "3", "--counterexample", ce)
    assert done.returncode == 1 and spinning in done.stdout, said(done)
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", spin)
    assert done.returncode == 1 and "RAISED: step " in done.stdout and spinning in done.stdout, said(done)


def _spin(flag: list) -> None:
    while flag[0]:
        pass


def test_a_handler_spinning_in_another_thread_is_interrupted_there(monkeypatch):
    """The explorer runs steps in its server's threads, where no signal reaches: there the
    exception is set in that thread (before: ``POST /api/run`` on a busy-waiting handler never
    answered, its thread spinning, every later walk refused 503)."""
    import threading

    from mutexlab.sim import hung

    monkeypatch.setattr(hung, "SECONDS", 0.5)
    got: list = []

    def body() -> None:
        with hung.watch_handlers({__file__}):
            try:
                _spin([True])
            except hung.HandlerHung as exc:
                got.append(str(exc))

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    thread.join(20)
    assert not thread.is_alive() and got == ["the handler ran for 0.5 s without returning (an endless loop?)"]
