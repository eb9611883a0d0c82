"""A handler that raises is a finding, in every command: exit 1, naming the process, the input,
the state, the exception and the line of the user's file, with the scenario that reaches it —
never a traceback. An exception raised in mutexlab's own code, outside a handler, stays a bug of
mutexlab: exit 4, "internal error".

The user's file lives outside the checkout (a temporary directory), written as a user writes one
on ``mutexlab.protocols.kit``: a central coordinator whose node 1 raises ``KeyError`` when it
takes its second message (the coordinator gets them all).
"""

from __future__ import annotations

import json
import textwrap

import pytest

from mutexlab.explore.session import Config, Session, session_from_scenario
from mutexlab.explore.state import _accepts
from mutexlab.protocol import HandlerError

NAME = "central-raises"
USER_FILE = textwrap.dedent(
    '''
    """A central coordinator whose node 1 fails on the second message it takes."""

    from typing import Literal

    from mutexlab.protocols.kit import HELD, RELEASED, WANTED, ClassicNode, Message, Send
    from mutexlab.protocols.kit import classic_algorithm, classic_table, on


    class Request(Message):
        type: Literal["REQUEST"] = "REQUEST"


    class Grant(Message):
        type: Literal["GRANT"] = "GRANT"


    class Release(Message):
        type: Literal["RELEASE"] = "RELEASE"


    COORDINATE = {
        "REQUEST": on("grant if free, else queue", "_on_request"),
        "RELEASE": on("grant the next", "_on_release"),
    }


    class Node(ClassicNode):
        TABLE = classic_table(
            request="REQUEST → WANTED",
            exit="RELEASE → RELEASED",
            rows={
                RELEASED: COORDINATE,
                WANTED: {**COORDINATE, "GRANT": on("enter", "_on_grant", to=[HELD])},
                HELD: COORDINATE,
            },
        )

        def __init__(self, pid, n, requests=0, clock=0):
            super().__init__(pid, n, requests, clock)
            self.holder = None
            self.queue = []
            self.taken = 0

        def _took(self):
            self.taken += 1
            return {"first": 1}[("first", "second")[self.taken - 1]]  # RAISES on the second

        def _request(self):
            self.state = WANTED
            return [Send(1, Request(sender=self.pid, ts=self.clock.tick()))]

        def _on_grant(self, msg):
            self.clock.receive(msg.ts)
            return self._enter()

        def _release(self):
            return [Send(1, Release(sender=self.pid, ts=self.clock.tick()))]

        def _on_request(self, msg):
            self._took()
            self.clock.receive(msg.ts)
            if self.holder is None:
                return self._grant(msg.sender)
            self.queue.append(msg.sender)
            return []

        def _on_release(self, msg):
            self._took()
            self.clock.receive(msg.ts)
            self.holder = None
            return self._grant(self.queue.pop(0)) if self.queue else []

        def _grant(self, to):
            self.holder = to
            return [Send(to, Grant(sender=self.pid, ts=self.clock.tick()))]


    SPEC = classic_algorithm("central-raises", "a coordinator that raises", Node, Request, Grant, Release)
    '''
)
LINE = next(n for n, text in enumerate(USER_FILE.splitlines(), 1) if "# RAISES" in text)


@pytest.fixture(scope="module")
def user_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("user") / "central_raises.py"
    path.write_text(USER_FILE, encoding="utf-8")
    return str(path)


def names_the_finding(text: str, user_file: str) -> None:
    """The finding as every command gives it: process, input, state, exception, the user's line."""
    assert "node-1 raised KeyError: 'second'" in text, text
    assert f"{user_file}:{LINE} (in _took)" in text, text
    assert "taking REQUEST from process" in text or "taking RELEASE from process" in text, text
    assert " in state " in text, text
    assert "Traceback" not in text, text


def test_the_finding_names_the_users_line_not_mutexlabs():
    """The frame named is the innermost one in the user's file, below the kit's and the dispatch's."""
    from mutexlab.protocols.kit import ClassicNode

    class Broken(ClassicNode):  # defined here, in the tests: outside mutexlab, the "user's" file
        TABLE = None

    node = Broken(1, 2)
    node.state = "RELEASED"  # type: ignore[assignment]

    def boom(self, action):
        return [][0]

    Broken._transitions = {("RELEASED", "request"): boom}  # noqa: SLF001 - a table of one handler, by hand
    with pytest.raises(HandlerError) as raised:
        node.on_local("request")
    err = raised.value
    assert err.process == "node-1" and err.state == "RELEASED" and err.taking == "the local action 'request'"
    assert err.error == "IndexError: list index out of range"
    assert err.where.startswith(f"{__file__}:") and err.where.endswith("(in boom)")
    # the explorer offers such a step (taken, it is the finding); one the table refuses, not
    assert _accepts(node, "request") and not _accepts(node, "exit")


@pytest.mark.parametrize("extra", [[], ["--metrics"], ["--swarm", "--time", "5"]])
def test_check_gives_a_finding_and_a_scenario_replay_plays_to_it(cli, user_file, tmp_path, extra):
    scenario = tmp_path / "raised.json"
    done = cli("check", "mutex", "--algorithm", user_file, "-N", "3", "--counterexample", scenario, *extra)
    assert done.returncode == 1, done
    names_the_finding(done.stdout + done.stderr, user_file)
    assert "verdict:      VIOLATION — error: " in done.stdout
    assert "replay reproduces it: yes" in done.stdout, done.stdout
    written = json.loads(scenario.read_text())
    assert written["finding"]["kind"] == "error" and "KeyError" in written["finding"]["message"]
    again = cli("replay", scenario)
    assert again.returncode == 1, again
    assert "RAISED: step " in again.stdout
    names_the_finding(again.stdout + again.stderr, user_file)
    as_json = cli("replay", scenario, "--json")
    assert json.loads(as_json.stdout)["raised"] is True


def test_check_endless_gives_the_finding(cli, user_file):
    done = cli("check", "mutex", "--algorithm", user_file, "-N", "2", "--endless")
    assert done.returncode == 1, done
    names_the_finding(done.stdout + done.stderr, user_file)


def test_simulate_gives_the_finding_and_the_seed_that_reaches_it(cli, user_file):
    done = cli("simulate", "mutex", "--algorithm", user_file, "-N", "3", "--seed", "7")
    assert done.returncode == 1, done
    names_the_finding(done.stderr, user_file)
    assert "reached with seed 7, at event " in done.stderr
    assert f"'mutexlab simulate mutex --algorithm {user_file} -N 3 --seed 7' reaches it again" in done.stderr
    again = cli("simulate", "mutex", "--algorithm", user_file, "-N", "3", "--seed", "7")
    assert again.stderr == done.stderr, "the same seed reaches the same finding"


def test_simulate_json_and_compare_carry_the_finding(cli, user_file):
    done = cli("simulate", "mutex", "--algorithm", user_file, "-N", "3", "--json")
    assert done.returncode == 1, done
    finding = json.loads(done.stdout)
    assert finding["finding"] == "handler-raised" and finding["process"] == "node-1"
    assert (
        finding["exception"] == "KeyError: 'second'" and finding["where"] == f"{user_file}:{LINE} (in _took)"
    )
    assert finding["scenario"].startswith("seed 0, at event ")
    done = cli("compare", "--algorithms", f"{user_file},ricart-agrawala", "-N", "3")
    assert done.returncode == 1, done
    row = next(line for line in done.stdout.splitlines() if line.startswith(NAME))
    names_the_finding(row, user_file)
    assert any(
        line.startswith("ricart-agrawala ") and line.endswith(" ok") for line in done.stdout.splitlines()
    )


def test_explore_reports_the_step_that_raised_and_stays_usable(user_file):
    session = Session(Config(user_file, 3, {"requests": 1}))
    for step in ("request:2", "deliver:2-1", "request:3"):
        session.step(step)
    session.step("deliver:3-1")  # node-1's second message: its handler raises
    state = session.state()
    raised = state["findings"]["raised"]
    assert state["position"] == 3 and state["findings"]["status"] == "violation"
    assert raised["step"] == {"op": "deliver", "from": 3, "to": 1}
    names_the_finding(raised["message"], user_file)
    assert state["findings"]["summary"].startswith("VIOLATION at step 4: step 4 (deliver): node-1 raised")
    # the scenario it gives reaches the same step; loaded, the session goes there and says so
    assert raised["scenario"]["steps"][-1] == raised["step"]
    again = session_from_scenario(raised["scenario"])
    again.jump(4)
    assert again.state()["findings"]["raised"]["message"] == raised["message"]
    assert again.state()["position"] == 3 and again.state()["redo"] == ["deliver:3-1"], "kept ahead"
    again.step("deliver:3-1")
    assert again.state()["findings"]["raised"] and again.state()["redo"] == ["deliver:3-1"]
    # still usable: undo, another step
    session.undo()
    assert "raised" not in session.state()["findings"] and session.state()["position"] == 2
    session.step("request:3")
    assert session.state()["position"] == 3
    walk = Session(Config(user_file, 3, {"requests": 1})).random(50, 1)
    assert walk["stopped"] == "raised"


def test_a_bug_in_mutexlab_itself_stays_an_internal_error(cli, user_file, monkeypatch):
    from mutexlab.sim import world
    from mutexlab.sim.driver import Driver

    def planted(*args, **kwargs):
        raise KeyError("planted in mutexlab")

    with monkeypatch.context() as m:
        m.setattr(world._Effects, "run", planted)  # noqa: SLF001 - the check's world model, outside any handler
        done = cli("check", "mutex", "--algorithm", user_file, "-N", "3")
    assert done.returncode == 4, done
    assert (
        "internal error (a bug in mutexlab, not in your algorithm): KeyError: 'planted in mutexlab'"
        in done.stderr
    )
    with monkeypatch.context() as m:
        m.setattr(Driver, "apply", planted)  # how every driver carries out effects
        done = cli("simulate", "mutex", "-a", "ricart-agrawala", "-N", "2")
    assert done.returncode == 4 and "internal error" in done.stderr, done


@pytest.mark.broker
@pytest.mark.slow
def test_run_stops_at_the_finding_and_its_summary_agrees_with_its_audit(cli, user_file, amqp_url, tmp_path):
    import psutil

    done = cli(
        "run", "mutex", "--algorithm", user_file, "-N", "3", "--amqp-url", amqp_url,
        "--dwell", "0.05", "--json", "--trace", tmp_path / "trace.jsonl", "--logs", tmp_path / "logs",
    )  # fmt: skip
    assert done.returncode == 1, done
    summary = json.loads(done.stdout)
    assert not summary["safe"] and not summary["complete"]
    [rejected] = summary["rejected"]
    assert rejected["process"] == "node-1"
    names_the_finding(rejected["reasons"][0], user_file)
    assert "handler raised: " in rejected["reasons"][0]
    monitor = (tmp_path / "logs" / "monitor.out").read_text()
    assert "STOPPED: a handler raised" in monitor and "HANDLER RAISED: a handler of node-1 raised" in monitor
    assert "Traceback" not in done.stdout + done.stderr + monitor
    # the summary says what the audited trace shows: its entries and its final states
    events = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    entered = sum(e.get("event") == "enter" for e in events)
    assert summary["entries"].get("cs", 0) == entered, (summary, entered)
    last = {e["pid"]: e["state"] for e in events if e.get("event") == "state"}
    assert all(summary["states"][name] == state for name, state in last.items()), (summary["states"], last)
    assert psutil.Process().children(recursive=True) == [], "nothing left running"
