"""The wire's fast paths against their plain twins. The JSON codec (``wire.compact``,
``wire.loads``: msgspec's) against the standard library's ``json``: every value the wire can carry
comes back the same both ways, and whatever ``json`` refuses, ``loads`` refuses too; a broken
codec (integers beyond 64 bits turned into floats, as some fast decoders do) is caught. The clock
comparisons of a step frame and a trace batch (``_same_but``, ``_changed``: item sets, in C)
against the entry-by-entry comparisons they replaced; a broken one (order lost) is caught."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mutexlab.transport.wire import _changed, _same_but, compact, loads

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


def same_but_plain(vc: dict, other: dict, own: str) -> bool:
    """Entry by entry, both ways. (The one-way version the transport had accepted ``{a, b, own}``
    beside ``{a, b, x}``, so an addressee would have rebuilt a clock with ``x`` and no ``own``;
    a process's clock always holds its own entry, so no run sent one.)"""
    return len(vc) == len(other) and all(
        k == own or (k in b and b[k] == v) for a, b in ((vc, other), (other, vc)) for k, v in a.items()
    )


def changed_plain(vc: dict, prev: dict) -> dict:
    return {k: v for k, v in vc.items() if prev.get(k) != v}


clocks = st.dictionaries(st.sampled_from("abcdef"), st.integers(0, 3), max_size=6)


@settings(max_examples=2000, deadline=None)
@given(clocks, clocks, st.sampled_from("abcdef"))
def test_the_clock_comparisons_match_their_plain_twins(vc, other, own):
    assert _same_but(vc, other, own) == same_but_plain(vc, other, own)
    assert list(_changed(vc, other).items()) == list(changed_plain(vc, other).items())  # order too
    unhashable = {**vc, "z": [1]}
    assert _same_but(unhashable, {**other, "z": [1]}, own) == same_but_plain(
        unhashable, {**other, "z": [1]}, own
    )
    assert _changed(unhashable, other) == changed_plain(unhashable, other)


def test_a_comparison_that_loses_the_order_is_caught():
    def unordered(vc: dict, prev: dict) -> dict:
        return dict(sorted(vc.items() - prev.items(), reverse=True))

    vc, prev = {"a": 2, "b": 3, "c": 1}, {"a": 1, "b": 1, "c": 1}
    assert list(_changed(vc, prev)) == list(changed_plain(vc, prev)) == ["a", "b"]
    assert list(unordered(vc, prev)) != list(changed_plain(vc, prev))


def test_a_clock_without_its_own_entry_is_not_a_tick_of_one_with_another():
    assert not _same_but({"a": 1, "own": 2}, {"a": 1, "x": 2}, "own")
    assert _same_but({"a": 1, "own": 3}, {"a": 1, "own": 2}, "own")
