"""director/answers.py: which answers to one input count as the same."""

from mutexlab.director import answers


def send(data: str, to: int = 1) -> dict:
    return {"type": "send", "to": to, "body": {"type": "tag 0", "tag": 0, "ctx": 0, "data": data}}


def test_a_rank_message_counts_by_its_length_not_its_bytes():
    left_overs = answers.digests([send("01000000e05cf7ff")], b"a", memory_bodies=True)
    zeros = answers.digests([send("0100000000000000")], b"b", memory_bodies=True)
    assert left_overs[0] == zeros[0]
    assert left_overs[1] != zeros[1]  # every byte: what records before it hold


def test_what_a_rank_does_still_tells_answers_apart():
    one = answers.digests([send("00"), {"type": "event", "event": "enter"}], b"", memory_bodies=True)[0]
    other_size = answers.digests(
        [send("0000"), {"type": "event", "event": "enter"}], b"", memory_bodies=True
    )[0]
    other_to = answers.digests(
        [send("00", to=2), {"type": "event", "event": "enter"}], b"", memory_bodies=True
    )[0]
    no_enter = answers.digests([send("00")], b"", memory_bodies=True)[0]
    assert len({one, other_size, other_to, no_enter}) == 4


def test_a_node_program_message_counts_by_every_byte():
    # A node of any language chooses its bodies: a "data" of its own is what it says.
    assert (
        answers.digests([send("aa")], b"", memory_bodies=False)[0]
        != answers.digests([send("bb")], b"", False)[0]
    )
    assert (
        answers.digests([{"b": 1, "a": 2}], b"x", False)[0]
        == answers.digests([{"a": 2, "b": 1}], b"y", False)[0]
    )
