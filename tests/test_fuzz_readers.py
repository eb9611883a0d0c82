"""Fuzzing the readers of outside input: the trace reader and audit, the scenario
reader and replay, the message decoder of the transport, the explorer's API. Whatever the input, each either reads it
or refuses it with its own error (TraceError, ScenarioError, EnvelopeError or MessageError; a 4xx
from the explorer) — never another exception (a 500). Bounded: a fixed number of examples each, no deadline per example.
"""

from __future__ import annotations

import contextlib
import json
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mutexlab.audit import verify_events
from mutexlab.bus.wire import EnvelopeError, parse_frame
from mutexlab.messages import MessageError
from mutexlab.protocols.registry import SPECS, make_setup
from mutexlab.sim.scripted import ScenarioError, load_scenario, replay_scenario
from mutexlab.trace import TraceError, parse_events
from mutexlab.transport.tracing import unpack_batch

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = ["run", "node-1", "node-2", "node-3", "bee-1", "elf-1", "mayor", "x"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.sampled_from(NAMES),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)
blobs = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.sampled_from([b"[" * 5000, b'{"a":' * 3000, b"9" * 5000, b"NaN", b"1e999", b"\xff\xfe"]),
)


# -- the trace reader and the audit -------------------------------------------------------------
def _header(algorithm: str) -> dict:
    return make_setup(algorithm, 3, {}).run_event()


clock = st.dictionaries(st.sampled_from(NAMES[1:]), st.integers(min_value=0, max_value=6), max_size=4)
events = st.fixed_dictionaries(
    {
        "event": st.sampled_from(
            [
                "send",
                "recv",
                "enter",
                "exit",
                "state",
                "request",
                "egg",
                "death",
                "round",
                "contract_done",
                "odd",
            ]
        ),
        "pid": st.sampled_from(NAMES[1:]),
        "vc": clock,
    },
    optional={
        "t": st.floats(min_value=0, max_value=100),
        "lamport": st.integers(min_value=0, max_value=50),
        "type": st.sampled_from(["REQUEST", "REPLY", "TOKEN", "X"]),
        "to": st.sampled_from(NAMES[1:]),
        "from": st.sampled_from(NAMES[1:]),
        "id": st.sampled_from(["node-1#1", "node-2#1", "bee-1#1", "x"]),
        "resource": st.sampled_from(["cs", "reed:1", "flower:1", "pins", "x"]),
        "units": st.integers(min_value=-1, max_value=3),
        "state": st.sampled_from(["RELEASED", "WANTED", "HELD", "DEAD", "x"]),
        "reed": st.integers(min_value=0, max_value=3),
        "round": st.integers(min_value=0, max_value=3),
        "contract": st.integers(min_value=0, max_value=3),
        "msg": st.none() | st.dictionaries(st.text(max_size=4), scalars, max_size=3),
    },
).map(lambda e: {**e, "vc": {**e["vc"], e["pid"]: max(1, e["vc"].get(e["pid"], 1))}})


@FUZZ
@given(lines=st.lists(blobs, max_size=6))
def test_the_trace_reader_reads_or_refuses_any_bytes(lines):
    with contextlib.suppress(TraceError):
        list(parse_events(lines, "fuzz"))


@FUZZ
@given(
    algorithm=st.sampled_from(sorted(SPECS)),
    body=st.lists(events, max_size=12),
)
def test_the_audit_decides_or_refuses_any_well_formed_trace(algorithm, body):
    lines = [json.dumps(_header(algorithm))] + [json.dumps(e) for e in body]
    try:
        verdict = verify_events(list(parse_events(lines, "fuzz")))
    except TraceError:
        return
    assert verdict.exit_code in (0, 1, 3)


@settings(max_examples=30, deadline=None)
@given(lines=st.lists(blobs, min_size=1, max_size=4))
def test_verify_reads_or_refuses_any_file(lines, tmp_path_factory):
    from mutexlab.audit import verify_file

    path = tmp_path_factory.mktemp("fuzz") / "t.jsonl"
    path.write_bytes(b"\n".join(lines))
    with contextlib.suppress(TraceError):
        verify_file(path)


# -- the scenario reader and replay ------------------------------------------------------------
pids = st.integers(min_value=-1, max_value=4)
steps = st.one_of(
    st.fixed_dictionaries({"op": st.sampled_from(["request", "exit"]), "pid": pids}),
    st.fixed_dictionaries({"op": st.just("deliver"), "from": pids, "to": pids}),
    st.fixed_dictionaries(
        {
            "op": st.sampled_from(["overtake", "duplicate"]),
            "from": pids,
            "to": pids,
            "index": st.integers(0, 2),
        }
    ),
    st.just({"op": "drain"}),
    json_values,
)


@FUZZ
@given(
    source=json_values
    | st.dictionaries(
        st.sampled_from(["algorithm", "processes", "steps", "options", "seed", "loop"]), json_values
    )
)
def test_the_scenario_reader_reads_or_refuses_any_json(source):
    with contextlib.suppress(ScenarioError):
        load_scenario(source) if isinstance(source, dict) else load_scenario({"steps": source})


@FUZZ
@given(blob=blobs)
def test_the_scenario_reader_reads_or_refuses_any_file(blob, tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "s.json"
    path.write_bytes(blob)
    with contextlib.suppress(ScenarioError):
        load_scenario(path)


@FUZZ
@given(
    algorithm=st.sampled_from(sorted(SPECS)),
    processes=st.integers(min_value=1, max_value=3),
    body=st.lists(steps, max_size=12),
    loop=st.none() | st.integers(min_value=0, max_value=12),
)
def test_a_replay_plays_or_refuses_any_scenario(algorithm, processes, body, loop):
    scenario = {"algorithm": algorithm, "processes": processes, "steps": body}
    if loop is not None:
        scenario["loop"] = loop
    with contextlib.suppress(ScenarioError):
        replay_scenario(scenario)


# -- the message decoder -------------------------------------------------------------------------
ROSTER = {"node-1": 1, "node-2": 2, "node-3": 3}
entries = st.fixed_dictionaries(
    {"to": st.sampled_from(["node-2", "node-3", "x"]) | json_values, "seq": scalars, "id": scalars},
    optional={"vc": json_values, "tick": scalars, "msg": json_values},
)
frames = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {
            "run": st.sampled_from(["run-f", "other"]) | json_values,
            "from": st.sampled_from(list(ROSTER)) | json_values,
            "msgs": st.lists(entries, max_size=4) | json_values,
        }
    ),
    st.fixed_dictionaries(
        {
            "run": st.just("run-f"),
            "id": scalars,
            "from": st.sampled_from(list(ROSTER)) | json_values,
            "to": st.sampled_from(["node-2", "x"]) | json_values,
            "seq": scalars,
            "vc": json_values,
            "msg": json_values,
        }
    ),
)


@FUZZ
@given(body=blobs | frames.map(lambda f: json.dumps(f).encode()), trace=st.none() | blobs)
def test_the_envelope_decoder_reads_or_refuses_any_body(body, trace):
    data = body if trace is None else body + b"\n" + trace
    try:
        sender, envs = parse_frame(data, "run-f", "node-2", ROSTER)
    except EnvelopeError:
        return
    assert sender in ROSTER and envs and all(e["to"] == "node-2" for e in envs)
    for env in envs:  # what the participant and its trace take as given
        assert isinstance(env["id"], str) and isinstance(env["seq"], int) and env["seq"] >= 1
        assert isinstance(env["vc"], dict) and isinstance(env["msg"], dict)


@FUZZ
@given(
    algorithm=st.sampled_from(sorted(SPECS)),
    msg=json_values
    | st.fixed_dictionaries(
        {
            "type": st.sampled_from(["REQUEST", "REPLY", "TOKEN", "RELEASE", "YIELD", "GRANT"]),
            "sender": scalars,
        },
        optional={"ts": scalars, "req": scalars, "queue": json_values, "ln": json_values},
    ),
)
def test_the_message_decoder_reads_or_refuses_any_message(algorithm, msg):
    codec = make_setup(algorithm, 3, {}).codec
    for form in (msg, json.dumps(msg), json.dumps(msg).encode()):
        if not isinstance(form, (dict, str, bytes)):
            continue
        with contextlib.suppress(MessageError):
            codec.decode(form)


@FUZZ
@given(batch=st.dictionaries(st.sampled_from(["vc", "events", "status"]), json_values | st.just("delta")))
def test_a_trace_batch_unpacks_or_says_why(batch):
    assert unpack_batch(batch) is None or isinstance(unpack_batch(batch), str)


def test_the_fuzzers_reach_the_readers_inner_paths():
    """Not only refusals: a well-formed input of each kind reads (the strategies can reach it)."""
    header = json.dumps(_header("ricart-agrawala"))
    event = json.dumps({"event": "state", "pid": "node-1", "vc": {"node-1": 1}, "state": "RELEASED"})
    assert len(list(parse_events([header, event]))) == 2
    assert replay_scenario(
        {"algorithm": "ricart-agrawala", "processes": 2, "steps": [{"op": "request", "pid": 1}]}
    )
    frame = {
        "run": "run-f",
        "id": "node-1#1",
        "from": "node-1",
        "to": "node-2",
        "seq": 1,
        "vc": {},
        "msg": {},
    }
    assert parse_frame(json.dumps(frame).encode(), "run-f", "node-2", ROSTER)[0] == "node-1"
    assert string.ascii_letters  # (the module's helpers import cleanly)


# -- the explorer's API --------------------------------------------------------------------------
ENDPOINTS = [
    "/api/step",
    "/api/undo",
    "/api/redo",
    "/api/reset",
    "/api/jump",
    "/api/random",
    "/api/run",
    "/api/scenario",
]
api_bodies = st.one_of(
    json_values,
    st.dictionaries(
        st.sampled_from(["id", "to", "n", "seed", "algorithm", "processes", "steps"]), json_values
    ),
    st.fixed_dictionaries(
        {
            "algorithm": st.sampled_from(sorted(SPECS)),
            "processes": st.integers(-1, 4),
            "steps": st.lists(steps, max_size=6),
        }
    ),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(ENDPOINTS), body=api_bodies)
def test_the_explorer_api_answers_any_body_without_a_server_error(explorer, path, body):
    status, value, _ = explorer.call("POST", path, raw=json.dumps(body).encode())
    assert status < 500, (path, body, value)
    state = explorer.state()  # and still answers
    assert "procs" in state


@pytest.fixture(scope="module")
def explorer():
    from test_explore_server import Client, serve

    from mutexlab.explore.session import Config, Session

    server, thread = serve(Session(Config("ricart-agrawala", 3, {"requests": 1})))
    yield Client(server)
    server.shutdown()
    server.server_close()
    thread.join(10)
