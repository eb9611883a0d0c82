"""A handler that returns ``Send`` to a process the setup does not have is the algorithm's bug:
a finding (exit 1) in every command, naming the process, the message and the pid — never
mutexlab's "internal error" (exit 4), which it used to be (the driver raised RuntimeError).

The user's file lives outside the checkout, written on ``mutexlab.protocols.kit``: node 1 of a
central coordinator sends its first REQUEST to node N + 1.
"""

from __future__ import annotations

import json
import pickle
import textwrap

import pytest

from mutexlab.explore.session import Config, Session
from mutexlab.protocol import HandlerError, UnknownPeer

USER_FILE = textwrap.dedent(
    '''
    """A central coordinator whose node 2 asks a coordinator that does not exist."""

    from typing import Literal

    from mutexlab.protocols.kit import HELD, RELEASED, WANTED, ClassicNode, Message, Send
    from mutexlab.protocols.kit import classic_algorithm, classic_table, on


    class Request(Message):
        type: Literal["REQUEST"] = "REQUEST"


    class Grant(Message):
        type: Literal["GRANT"] = "GRANT"


    class Release(Message):
        type: Literal["RELEASE"] = "RELEASE"


    COORDINATE = {"REQUEST": on("grant", "_on_request"), "RELEASE": on("free", "_on_release")}


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

        def _request(self):
            self.state = WANTED
            to = self.n + 1 if self.pid == 2 else 1  # node 2 asks a node that does not exist
            return [Send(to, Request(sender=self.pid, ts=self.clock.tick()))]

        def _on_grant(self, msg):
            return self._enter()

        def _release(self):
            return [Send(1, Release(sender=self.pid, ts=self.clock.tick()))]

        def _on_request(self, msg):
            self.holder = msg.sender
            return [Send(msg.sender, Grant(sender=self.pid, ts=self.clock.tick()))]

        def _on_release(self, msg):
            self.holder = None
            return []


    SPEC = classic_algorithm("central-unknown-peer", "a node asking pid N+1", Node, Request, Grant, Release)
    '''
)
SAID = "node-2 sent REQUEST to process 3, which is not one of this setup's (1, 2)"


@pytest.fixture(scope="module")
def user_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("user") / "unknown_peer.py"
    path.write_text(USER_FILE, encoding="utf-8")
    return str(path)


def test_the_finding_is_a_handler_error_and_survives_pickling():
    err = UnknownPeer("node-2", "WANTED", "REQUEST", 3, "1, 2")
    assert isinstance(err, HandlerError)  # every driver reports it where it reports a raising handler
    assert str(err) == f"{SAID}, its step leaving it in state WANTED"
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is UnknownPeer and str(again) == str(err) and again.process == "node-2"


def test_check_gives_a_finding_and_a_scenario_replay_plays_to_it(cli, user_file, tmp_path):
    scenario = tmp_path / "peer.json"
    done = cli("check", "mutex", "--algorithm", user_file, "-N", "2", "--counterexample", scenario)
    assert done.returncode == 1, done
    assert f"verdict:      VIOLATION — error: node-2 request: {SAID}" in done.stdout, done.stdout
    assert "replay reproduces it: yes" in done.stdout, done.stdout
    assert "internal error" not in done.stderr
    again = cli("replay", scenario)
    assert again.returncode == 1, again
    assert "RAISED: step " in again.stdout and f"(request): {SAID}" in again.stdout, again.stdout
    assert json.loads(cli("replay", scenario, "--json").stdout)["raised"] is True


def test_simulate_gives_the_finding(cli, user_file):
    done = cli("simulate", "mutex", "--algorithm", user_file, "-N", "2", "--seed", "3")
    assert done.returncode == 1, done
    assert SAID in done.stderr and "reached with seed 3" in done.stderr, done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def test_explore_reports_the_step_and_stays_usable(user_file):
    session = Session(Config(user_file, 2, {"requests": 1}))
    session.step("request:2")
    state = session.state()
    assert state["findings"]["status"] == "violation", state["findings"]
    assert SAID in state["findings"]["raised"]["message"]
    assert state["position"] == 0  # the step was not taken
    session.step("request:1")
    assert session.state()["position"] == 1


@pytest.mark.parametrize("command", ["check", "simulate"])
def test_a_send_to_no_id_at_all_is_the_same_finding(cli, tmp_path, command):
    """A ``Send`` to something that is not an id (a list, unhashable) is the algorithm's bug as
    well, in the simulator's fast loop (simulate) and in the driver (check): never exit 4."""
    path = tmp_path / "list_peer.py"
    path.write_text(USER_FILE.replace("to = self.n + 1 if", "to = [3] if"), encoding="utf-8")
    argv = [command, "mutex", "--algorithm", str(path), "-N", "2"]
    done = cli(*argv, "--seed", "3") if command == "simulate" else cli(*argv)
    assert done.returncode == 1, done
    said = "node-2 sent REQUEST to process [3], which is not one of this setup's (1, 2)"
    assert said in done.stdout + done.stderr, done
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
