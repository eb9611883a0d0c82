"""``mutexlab test --duplicate K``: the director delivers an already delivered message once more,
and records that second ``recv`` as the network's copy (``"copy": true``, docs/trace-format.md).
The audit then pairs the send with the first delivery only: a correct program passes, and one
that counts a duplicated REPLY twice is caught by what it does (two nodes inside at once), not
by a ``recv-without-send`` of the director's own making.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "nodes" / "ricart_agrawala.py"


def test_a_correct_program_passes_when_messages_are_duplicated(cli):
    node = f"{sys.executable} {EXAMPLE}"
    done = cli("test", "mutex", "--node", node, "-N", "2", "--duplicate", "1", "--runs", "60")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS" in done.stdout and "recv-without-send" not in done.stdout


def test_a_program_counting_a_copy_twice_is_caught_by_capacity_and_its_trace_says_copy(cli, tmp_path):
    source = EXAMPLE.read_text()
    broken = (
        source.replace("self.replies, self.deferred = set(), []", "self.replies, self.deferred = [], []")
        .replace(
            "self.requesting, self.replies = self.clock, True, set()",
            "self.requesting, self.replies = self.clock, True, []",
        )
        .replace("self.replies.add(sender)", "self.replies.append(sender)")
        .replace("self.replies >= set(self.peers)", "len(self.replies) >= len(self.peers)")
    )
    assert broken.count("self.replies") == source.count("self.replies") and "append" in broken
    program = tmp_path / "counts_replies.py"
    program.write_text(broken)
    trace = tmp_path / "found.jsonl"
    done = cli(
        "test", "mutex", "--node", f"{sys.executable} {program}", "-N", "3", "--duplicate", "1",
        "--runs", "300", "--trace", str(trace),
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "[capacity]" in done.stdout and "recv-without-send" not in done.stdout, done.stdout
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    copies = [e for e in events if e.get("event") == "recv" and e.get("copy") is True]
    assert len(copies) == 1, copies
    firsts = [
        e for e in events if e.get("event") == "recv" and e["id"] == copies[0]["id"] and "copy" not in e
    ]
    assert len(firsts) == 1 and events.index(firsts[0]) < events.index(copies[0])
    verified = cli("verify", str(trace), "--json")
    rules = {v["rule"] for v in json.loads(verified.stdout)["violations"]}
    assert "capacity" in rules and "recv-without-send" not in rules, rules
