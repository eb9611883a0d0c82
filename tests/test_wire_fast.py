"""The typed decoding of step frames (``wire._step_fast``) answers exactly as the general parser
(``wire._parse``) on every frame it takes, and takes none the general parser refuses: valid
frames, and frames with any key of any entry (or of the frame) removed or replaced."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from mutexlab.bus.wire import EnvelopeError, _parse, _step_fast, compact, frame, parse_frame

NAMES = [f"bee-{i}" for i in range(1, 8)]
ROSTER = {name: i for i, name in enumerate(NAMES, 1)}
ODD = [None, True, False, 0, -1, 3, 2.5, "x", "bee-2", [], [1], {}, {"bee-1": True}, {"bee-1": 2}]


def broadcast(sender: str = "bee-1", acks: dict | None = None) -> dict:
    """A step frame as a participant builds it: one message to each other member, its clock ticking."""
    vc = dict.fromkeys(NAMES, 4)
    sends = []
    for i, dest in enumerate(n for n in NAMES if n != sender):
        sends.append((dest, 2 + i % 2, f"{sender}:{i}", {**vc, sender: 5 + i}, {"type": "REQ", "sender": 1}))
    return frame("run-a", sender, sends, acks)


def both(data: dict, me: str) -> tuple[object, object]:
    """``(what _parse answers or the EnvelopeError it raises, what _step_fast answers)``, with the acks each sets."""
    part = compact(data)
    slow_acks: dict = {}
    fast_acks: dict = {}
    try:
        slow: object = (_parse(part, "run-a", me, ROSTER, slow_acks), slow_acks)
    except EnvelopeError as exc:
        slow = exc
    fast = _step_fast(part, "run-a", me, ROSTER, fast_acks)
    return slow, None if fast is None else (fast, fast_acks)


def test_a_broadcast_is_decoded_typed_and_as_the_general_parser_does():
    data = broadcast(acks={"bee-3": 7})
    for me in NAMES[1:]:
        slow, fast = both(data, me)
        assert fast is not None and fast == slow
    assert both(data, "bee-1")[1] is None  # nothing addressed to the sender: the general parser says why
    body = compact(data) + b"\n" + compact({"events": []})
    assert parse_frame(body, "run-a", "bee-3", ROSTER, {}) == both(data, "bee-3")[0][0]


@settings(max_examples=400, deadline=None)
@given(
    where=st.integers(min_value=-1, max_value=len(NAMES) - 2),
    key=st.sampled_from(["to", "seq", "id", "vc", "tick", "msg", "run", "from", "msgs", "acks"]),
    value=st.sampled_from([*ODD, "DROP"]),
    me=st.sampled_from(NAMES),
)
def test_a_damaged_frame_is_answered_as_the_general_parser_answers_it(where, key, value, me):
    data = copy.deepcopy(broadcast(acks={"bee-3": 7}))
    target = data if where < 0 else data["msgs"][where]
    if value == "DROP":
        target.pop(key, None)
    else:
        target[key] = value
    slow, fast = both(data, me)
    if isinstance(slow, EnvelopeError):
        assert fast is None
    else:
        assert fast is None or fast == slow
