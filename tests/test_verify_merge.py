"""Per-host ShiViz logs put end to end (GoVector's layout) are read as a k-way merge of their
hosts' runs by happened-before (``audit/merge.py``): bounded, as a single writer's log, and with
the verdict, witnesses and refusals of the old reading (every interval kept) unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from foreign_logs import verify

from mutexlab.audit import foreign

OUTLOGS = Path(__file__).parent / "outlogs"


def _records(text: str) -> tuple[list[str], list[str]]:
    lines = text.splitlines(keepends=True)
    head, body = lines[:2], [line for line in lines[2:] if line.strip()]
    return head, ["".join(body[i : i + 2]) for i in range(0, len(body), 2)]


def _causal(records: list[str]) -> list[str]:
    """The records of a per-host log in a causal order (sorted by the sum of their clocks)."""
    keyed = [
        (sum(json.loads(r.split(" ", 1)[1].split("\n")[0]).values()), i, r) for i, r in enumerate(records)
    ]
    return [r for _, _, r in sorted(keyed)]


def _per_host(records: list[str]) -> list[str]:
    """The records host after host, each host's in its order (``cat *-Log.txt``)."""
    hosts = list(dict.fromkeys(r.split(" ", 1)[0] for r in records))
    return [r for host in hosts for r in records if r.split(" ", 1)[0] == host]


def _old_way(monkeypatch, capsys, log: Path, *flags: str) -> tuple[int, str, str]:
    with monkeypatch.context() as patched:
        patched.setattr(foreign, "_merged", lambda *args: None)
        return verify(capsys, log, *flags)


@pytest.fixture
def unbounded(monkeypatch) -> list[bool]:
    """Each audit built while verifying: whether it was bounded."""
    made: list[bool] = []
    real = foreign.StreamAudit

    def audit(*args, bounded: bool = False, **kwargs):
        made.append(bounded)
        return real(*args, bounded=bounded, **kwargs)

    monkeypatch.setattr(foreign, "StreamAudit", audit)
    return made


def test_a_per_host_log_is_decided_bounded_with_the_verdict_of_the_old_way(
    tmp_path, capsys, monkeypatch, unbounded
):
    # Before the merge, the per-host log was read a second time by an audit keeping every
    # interval and every record waiting for a source further on (461 MB at 10^6 events).
    log = OUTLOGS / "govector-ra.log"
    code, out, err = verify(capsys, log)
    assert (code, err) == (0, ""), err
    assert unbounded and all(unbounded), unbounded  # no audit keeping every interval
    unbounded.clear()
    assert _old_way(monkeypatch, capsys, log) == (code, out, err)
    head, records = _records(log.read_text())
    causal = tmp_path / "causal.log"
    causal.write_text("".join(head + _causal(records)))
    assert verify(capsys, causal) == (code, out, err)


@pytest.mark.parametrize("flags", [(), ("--expect-entries", "3")])
def test_a_cut_per_host_log_is_incomplete_as_before(tmp_path, capsys, monkeypatch, unbounded, flags):
    head, records = _records((OUTLOGS / "govector-ra.log").read_text())
    ordered = _causal(records)  # everyone's logs cut when proc1 has just entered
    holding = next(i for i, r in enumerate(ordered) if r.startswith("proc1 ") and r.endswith("enter cs\n"))
    cut = tmp_path / "cut.log"
    cut.write_text("".join(head + _per_host(ordered[: holding + 1])))
    code, out, err = verify(capsys, cut, *flags)
    assert code == 3 and "held-at-end" in out, (out, err)
    assert all(unbounded), unbounded
    assert _old_way(monkeypatch, capsys, cut, *flags) == (code, out, err)


def test_a_broken_per_host_log_names_the_witnesses_of_the_old_way(capsys, monkeypatch):
    log = OUTLOGS / "govector-ra-broken.log"
    found = verify(capsys, log)
    assert found[0] == 1 and "[capacity]" in found[1], found
    assert _old_way(monkeypatch, capsys, log) == found


@pytest.mark.parametrize(
    "edit, said",
    [
        (("proc0", '"proc1": 3', '"proc1": 99'), "goes back"),  # proc1 never had event 99
        (("proc2", '"proc2": 3}', '"proc2": 3, "proc9": 1}'), "proc9"),  # a host not in the log
    ],
)
def test_contradicting_clocks_are_refused_naming_the_line_of_the_old_way(
    tmp_path, capsys, monkeypatch, edit, said
):
    host, old, new = edit
    head, records = _records((OUTLOGS / "govector-ra.log").read_text())
    at = next(i for i, r in enumerate(records) if r.startswith(host + " ") and old in r)
    records[at] = records[at].replace(old, new)
    log = tmp_path / "bad.log"
    log.write_text("".join(head + records))
    found = verify(capsys, log)
    assert found[0] == 2 and said in found[2], found
    assert _old_way(monkeypatch, capsys, log) == found


def test_a_stamped_per_host_log_with_spaces_in_host_names_merges_under_its_regex(
    capsys, monkeypatch, unbounded
):
    # Go-style per-host logs, an RFC3339 stamp before each clock line and host names with spaces
    # ("node one"): the merge reads each host's run with the log's --regex.
    log = OUTLOGS / "go-stamped-perhost.log"
    regex = ("--regex", r"(?<ts>\S+) (?<host>.*?) (?<clock>{.*})\n(?<event>.*)")
    found = verify(capsys, log, *regex)
    assert found[0] == 0 and "events: enter 9, exit 9" in found[1], found
    assert unbounded and all(unbounded), unbounded
    assert _old_way(monkeypatch, capsys, log, *regex) == found
