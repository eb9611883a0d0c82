"""``mutexlab verify`` on more logs other programs write (tests/outlogs/o14b-*, beside the program
that wrote them): a lock server logging as a Java service does with logback, whose MDC holds
strings only, so its vector clock is a string holding JSON; and files that are no log at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from outsider_edits import said

OUTLOGS = Path(__file__).resolve().parent / "outlogs"
HEADER = '{"event": "run", "pid": "run", "capacities": {"cs": 1}}\n'


def test_a_logback_lock_with_string_clocks_is_safe_and_an_early_grant_is_found(cli):
    """Before: refused at line 2, `'vc' is "{\\"c1\\":1}": a vector clock is a JSON object …: a
    list's positions name no process`: no log of logback's or log4j2's JSON layouts could be read."""
    done = cli("verify", OUTLOGS / "o14b-logback-lock.log")
    assert done.returncode == 0 and done.stdout.startswith("unknown algorithm: SAFE"), said(done)
    assert "events: enter 2, exit 2, recv 6, request 2, send 6" in done.stdout, said(done)
    done = cli("verify", OUTLOGS / "o14b-logback-lock-early.log")
    assert done.returncode == 1 and "VIOLATION (1)" in done.stdout, said(done)
    assert "cs (capacity 1) held by c1 (1 unit, line 10), c2 (1 unit, line 13) at once" in done.stdout, said(
        done
    )


def test_logbacks_own_encoder_nests_the_mdc_and_is_told_how_to_lift_it(cli, tmp_path):
    """Before: `event lacks event, pid: not mutexlab's event shape …; read with --format shiviz
    --regex`, a layout it is not. Lifted as the error says, the log is SAFE."""
    nested = OUTLOGS / "o14b-logback-lock-nested.log"
    done = cli("verify", nested)
    assert done.returncode == 2, said(done)
    assert done.stderr.strip().endswith(
        "o14b-logback-lock-nested.log:2: event lacks event, pid at the top level ('event' is in 'mdc', "
        "'pid' is in 'mdc'): verify reads an event's fields at the top level of its line; lift them, "
        "jq -c '. + .mdc' FILE"
    ), said(done)
    events = [json.loads(line) for line in nested.read_text().splitlines()]
    lifted = tmp_path / "lifted.log"
    lifted.write_text("".join(json.dumps({**e, **e.get("mdc", {})}) + "\n" for e in events))
    done = cli("verify", lifted)
    assert done.returncode == 0 and "SAFE" in done.stdout, said(done)


@pytest.mark.parametrize(
    ("vc", "error"),
    [
        ('"{p1: 1}"', "'vc' is the string \"{p1: 1}\", which holds no JSON (Expecting property name"),
        ('"{\\"p1\\": 1, \\"p1\\": 2}"', "in the string 'vc': the key \"p1\" appears twice"),
        ('"[1, 0]"', "'vc' is [1, 0]: a vector clock is a JSON object of process names to counts"),
        ('"{\\"p1\\": -1}"', "vector clock 'vc' must map process names to whole numbers ≥ 0"),
        ('"{\\"p2\\": 1}"', "vector clock 'vc' lacks p1's own entry"),
    ],
)
def test_a_string_clock_is_judged_as_a_clock_written_as_json_is(cli, tmp_path, vc, error):
    path = tmp_path / "t.log"
    path.write_text(HEADER + '{"event": "request", "resource": "cs", "pid": "p1", "vc": ' + vc + "}\n")
    done = cli("verify", path)
    assert done.returncode == 2 and f"t.log:2: {error}" in done.stderr, said(done)
    assert "Traceback" not in done.stderr, said(done)
