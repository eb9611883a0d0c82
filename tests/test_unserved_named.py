"""request-unserved's hint names each resource:N entered once, however often it was entered."""

from mutexlab.audit.generic import Stream


def _unserved(enters: list[str]) -> str:
    stream = Stream({})
    for _ in range(3):
        stream.feed({"event": "request", "pid": "1", "resource": "reed"})
    for name in enters:
        stream.feed({"event": "enter", "pid": "1", "resource": name})
        stream.feed({"event": "exit", "pid": "1", "resource": name})
    (found,) = stream.finish()
    return found.message


def test_one_resource_entered_three_times_is_named_once_with_no_others():
    message = _unserved(["reed:3"] * 3)
    assert "(it entered reed:3: a request is served only" in message, message
    assert "more" not in message and "other" not in message, message


def test_the_others_counted_are_other_resources():
    message = _unserved(["reed:1", "reed:2", "reed:1", "reed:4", "reed:5", "reed:4"])
    assert "(it entered reed:1, reed:2 and 2 others:" in message, message


def test_another_pids_enters_are_not_named():
    stream = Stream({})
    stream.feed({"event": "request", "pid": "1", "resource": "reed"})
    stream.feed({"event": "enter", "pid": "2", "resource": "reed:1"})
    stream.feed({"event": "exit", "pid": "2", "resource": "reed:1"})
    (found,) = [v for v in stream.finish() if v.rule == "request-unserved"]
    assert "it entered" not in found.message, found.message
