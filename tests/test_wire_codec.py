"""The wire's JSON codec (``wire.compact``, ``wire.loads``: msgspec's) against the standard
library's ``json``, the plain twin it replaced: every value the wire can carry comes back the same
both ways, and whatever ``json`` refuses, ``loads`` refuses too; a broken codec (integers beyond 64
bits turned into floats, as some fast decoders do) is caught. (The wire's clock comparisons are
speed shortcuts of ``mutexlab/fastpath.py``: tests/test_fastpath.py.)"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mutexlab.bus.wire import compact, loads

RECORDED = Path(__file__).resolve().parent / "data" / "wire" / "bus-3a6c154.jsonl.gz"

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=30,
)


def same_both_ways(value: Any, decode: Callable[[bytes], Any] = loads) -> bool:
    """``value`` survives compact → json.loads and json.dumps → ``decode``, with its types."""
    plain = json.dumps(value, separators=(",", ":")).encode()
    back = decode(plain)
    return (
        json.loads(compact(value)) == value
        and back == value
        and repr(back) == repr(json.loads(plain))  # 1 stays an int, 1.0 a float
    )


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_every_json_value_comes_back_the_same_both_ways(value):
    assert same_both_ways(value)


def test_every_recorded_message_decodes_as_json_decodes_it():
    with gzip.open(RECORDED, "rt") as f:
        bodies = [json.loads(line)["body"].encode() for line in f]
    assert len(bodies) > 50
    for body in bodies:
        for part in body.split(b"\n"):
            assert loads(part) == json.loads(part)


@pytest.mark.parametrize(
    "body",
    [b"", b"{", b"[1,]", b'{"a":1} x', b'"\xff"', b"[" * 5000, b"9" * 5000, b"1e400", b"NaN", b"-Infinity"],
)
def test_what_json_refuses_or_json_cannot_hold_is_refused_with_a_value_error(body):
    with pytest.raises(ValueError, match=r"\S"):
        loads(body)


def test_text_goes_as_utf8_and_comes_back():
    value = {"who": "pszczoła 🐝", "newline": "a\nb"}
    body = compact(value)
    assert b"\n" not in body and "pszczoła".encode() in body
    assert loads(body) == value == json.loads(body)


def test_a_decoder_that_rounds_big_integers_is_caught():
    def rounding(body: bytes) -> Any:  # a big integer becomes the nearest double
        value = loads(body)
        return float(value) if isinstance(value, int) and abs(value) > 2**63 else value

    assert same_both_ways(2**70)
    assert not same_both_ways(2**70, rounding)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(max_size=8), json_values, max_size=6))
def test_a_trace_line_is_the_text_json_dumps_gives(fields):
    """``TraceWriter`` writes each event with one encoder made once (``TraceWriter._line``), not
    ``json.dumps`` with options, which makes an encoder per call: the same text, byte for byte
    (non-ASCII escaped, floats as ``repr``), so every trace file stays as it was."""
    import tempfile

    from mutexlab.trace import TraceWriter

    event = {"event": "state", "pid": "node-1", "t": 0.1 + 1e-17, "vc": {"node-1": 3}, "é": "ü", **fields}
    with tempfile.TemporaryDirectory() as tmp:
        with TraceWriter(Path(tmp) / "trace") as writer:
            writer.write(event)
        written = (Path(tmp) / "trace").read_text(encoding="utf-8")
    assert written == json.dumps(event, separators=(",", ":")) + "\n"
