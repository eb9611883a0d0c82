"""The wire format is unchanged: messages recorded from the transport before the split (one module,
commit 3a6c154) decode the same with ``bus/wire.py``, and encoding what they carry gives the
same bytes again. tests/data/wire/record.py says how they were recorded."""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path

import pytest

from mutexlab.bus.wire import compact, frame, parse_frame, split_step
from mutexlab.transport.tracing import pack_batch, unpack_batch

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "tests" / "data" / "wire" / "bus-3a6c154.jsonl.gz"


def recorded() -> list[dict]:
    with gzip.open(RECORDED, "rt") as f:
        return [json.loads(line) for line in f]


def roster_of(lines: list[dict], run_id: str) -> dict[str, int]:
    return {
        name: 1
        for line in lines
        if '"welcome"' in line["body"] and run_id in line["body"]
        for name in json.loads(line["body"])["roster"]
    }


def steps() -> list[dict]:
    return [line for line in recorded() if line["decoded"] is not None]


def test_the_recording_has_every_shape_of_message():
    lines = steps()
    bodies = [line["body"] for line in lines]
    assert len({line["decoded"]["run_id"] for line in lines}) == 2, "a Ricart–Agrawala run and a bees run"
    assert any('"msgs":' in b for b in bodies), "a step frame (several messages in one publish)"
    assert any('"tick":' in b for b in bodies), "a broadcast's clocks as ticks"
    assert any('"vc":"delta"' in b for b in bodies), "a trace batch with delta-packed clocks"
    assert any(line["headers"].get("CC") for line in lines), "messages sent on by the CC header"
    assert any(line["decoded"]["protocol_is_trace"] for line in lines), "a trace batch alone"


@pytest.mark.parametrize("line", steps(), ids=lambda line: line["routing_key"])
def test_a_recorded_step_decodes_as_it_did(line):
    decoded = line["decoded"]
    run_id = decoded["run_id"]
    body = line["body"].encode("latin-1")
    roster = roster_of(recorded(), run_id)
    protocol, trace = split_step(body)
    assert (protocol == trace) == decoded["protocol_is_trace"]
    for dest, envelopes in decoded["frames"].items():
        assert parse_frame(body, run_id, dest, roster)[1] == envelopes, dest
    if decoded["batch"] is not None:
        batch = json.loads(trace)
        assert unpack_batch(batch) is None
        assert batch == decoded["batch"]


@pytest.mark.parametrize("line", steps(), ids=lambda line: line["routing_key"])
def test_encoding_what_a_recorded_step_carries_gives_its_bytes(line):
    decoded = line["decoded"]
    body = line["body"].encode("latin-1")
    protocol, trace = split_step(body)
    if decoded["batch"] is not None:
        assert compact(pack_batch(decoded["batch"])) == trace
    if not decoded["frames"]:
        return
    data = json.loads(protocol)
    sent = {(e["to"], e["id"]): e for envelopes in decoded["frames"].values() for e in envelopes}
    order = data.get("msgs", [data])
    sends = [
        (e["to"], e["seq"], e["id"], sent[e["to"], e["id"]]["vc"], sent[e["to"], e["id"]]["msg"])
        for e in order
    ]
    assert compact(frame(decoded["run_id"], data["from"], sends)) == protocol


def test_the_wire_format_imports_no_client():
    tree = ast.parse((ROOT / "shared" / "mutexlab" / "bus" / "wire.py").read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }
    # msgspec: a codec; fastpath: the core's speed shortcuts (pydantic and the standard library)
    assert imported <= {"__future__", "msgspec", "typing", "fastpath"}, imported
    shortcuts = (ROOT / "shared" / "mutexlab" / "fastpath.py").read_text()
    assert not any(client in shortcuts for client in ("pika", "aio_pika", "aiormq", "pamqp"))
