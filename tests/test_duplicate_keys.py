"""A JSON object that names one key twice, in every reader of a user's JSON (limits.unique_keys).

Python's ``json`` keeps the last value silently: ``{"pid": "node-1", "pid": "node-2"}`` was read as
node-2's event, a scenario step ``{"op": "request", "pid": 3, "pid": 1}`` as process 1's. Each
reader now refuses it with its own error, naming the key. Before, each case here was read without
a word (verify said SAFE, replay played it, the explorer took the step).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_explore_server import Client, serve

from mutexlab.commands.flags import parse_options
from mutexlab.director.lines import NodeFault, parse
from mutexlab.explore.session import Config, Session
from mutexlab.setups import ConfigError
from mutexlab.transport.settings import json_object

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("dup-trace")
    from mutexlab.cli import main

    assert (
        main(["simulate", "mutex", "-a", "ricart-agrawala", "-N", "2", "--trace", str(where / "t.jsonl")])
        == 0
    )
    for kind, name in (("jsonl", "t.cf.jsonl"), ("shiviz", "t.shiviz")):
        assert main(["export", str(where / "t.jsonl"), "--format", kind, "-o", str(where / name)]) == 0
    return where


@pytest.mark.parametrize(("name", "was", "doubled", "key"), [
    ("t.jsonl", '{"event":"request","pid":"node-2"', '{"event":"request","pid":"node-1","pid":"node-2"', '"pid"'),
    ("t.cf.jsonl", '{"event":"request","pid":"node-2"', '{"event":"request","pid":"node-1","pid":"node-2"', '"pid"'),
    ("t.shiviz", 'node-2 {"node-2":1}', 'node-2 {"node-2":7,"node-2":1}', '"node-2"'),
])  # fmt: skip
def test_verify_refuses_a_log_with_a_key_twice(cli, trace, tmp_path, name, was, doubled, key):
    text = (trace / name).read_text()
    assert was in text, text[:300]
    path = tmp_path / name
    path.write_text(text.replace(was, doubled, 1))
    done = cli("verify", path)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert f"the key {key} appears twice in one JSON object" in done.stderr, done.stderr


def test_a_scenario_and_an_options_file_with_a_key_twice_are_refused(cli, tmp_path):
    scenario = json.loads((ROOT / "examples" / "scenarios" / "lamport-timestamps.json").read_text())
    text = json.dumps(scenario).replace(
        '{"op": "request", "pid": 1}', '{"op": "request", "pid": 3, "pid": 1}', 1
    )
    assert '"pid": 3, "pid": 1' in text
    path = tmp_path / "twice.json"
    path.write_text(text)
    done = cli("replay", path)
    assert done.returncode == 2 and 'the key "pid" appears twice in one JSON object' in done.stderr, done
    options = tmp_path / "options.json"
    options.write_text('{"initial_clocks": {"1": 5, "1": 6}}')
    done = cli("simulate", "mutex", "-a", "lamport", "-N", "3", "--options", options)
    assert done.returncode == 2 and 'the key "1" appears twice in one JSON object' in done.stderr, done
    done = cli("simulate", "mutex", "-a", "lamport", "-N", "3", "-o", 'initial_clocks={"1": 5, "1": 6}')
    assert done.returncode == 2 and 'the key "1" appears twice in one JSON object' in done.stderr, done


def test_a_program_line_test_option_and_setting_with_a_key_twice_are_refused():
    with pytest.raises(NodeFault, match='the key "to" appears twice'):
        parse(b'{"type":"send","to":3,"to":2,"body":{}}', 1, frozenset({2, 3}))
    assert parse(b'{"type":"send","to":2,"body":{"a":1}}', 1, frozenset({2, 3}))["to"] == 2
    with pytest.raises(ConfigError, match='--option reeds: the key "a" appears twice'):
        parse_options(['reeds={"a": 1, "a": 2}'])
    assert parse_options(["reeds=2", "name=plain text"]) == {"reeds": 2, "name": "plain text"}
    with pytest.raises(ValueError, match='the key "pins" appears twice'):
        json_object('{"pins": 1.0, "pins": 2.0}')


def test_the_explorer_refuses_a_request_with_a_key_twice():
    server, thread = serve(Session(Config("ricart-agrawala", 3, {"requests": 1})))
    try:
        client = Client(server)
        status, said, _ = client.call("POST", "/api/step", raw=b'{"id": "request:2", "id": "request:1"}')
        assert status == 400 and 'the key \\"id\\" appears twice' in json.dumps(said), (status, said)
        assert client.state()["position"] == 0
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
