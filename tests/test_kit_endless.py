"""A solution written on ``mutexlab.protocols.kit`` runs ``check --endless`` with the kit's default
``snapshot()``: the count of entries a ``ClassicNode`` keeps is workload bookkeeping, left out
of it, so an endless workload's worlds come back. A counter of the protocol's own that the
snapshot holds is still refused up front, named; and liveness, which the endless workload is
for, still finds a starving node.

The files live outside the checkout (a temporary directory), as a user writes them: a central
coordinator that never reads its clock (its messages carry ``ts=0``), serving its queue oldest
first, or newest first (two nodes can then pass the grant between them forever), or counting
the grants it gives.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from mutexlab.check.engine import CheckConfig, run_check
from mutexlab.cli import main
from mutexlab.protocols.kit import ClassicNode
from mutexlab.protocols.registry import build_setup
from mutexlab.setups import ConfigError

TEMPLATE = textwrap.dedent(
    '''
    """A central coordinator that never reads its clock."""

    from typing import Literal

    from mutexlab.protocols.kit import HELD, RELEASED, WANTED, ClassicNode, Message, Send
    from mutexlab.protocols.kit import classic_algorithm, classic_table, on


    class Request(Message):
        type: Literal["REQUEST"] = "REQUEST"


    class Grant(Message):
        type: Literal["GRANT"] = "GRANT"


    class Release(Message):
        type: Literal["RELEASE"] = "RELEASE"


    COORDINATE = {
        "REQUEST": on("grant if free, else queue", "_on_request"),
        "RELEASE": on("grant the next", "_on_release"),
    }


    class Node(ClassicNode):
        TABLE = classic_table(
            request="REQUEST → WANTED",
            exit="RELEASE → RELEASED",
            rows={
                RELEASED: COORDINATE,
                WANTED: {**COORDINATE, "GRANT": on("enter", "_on_grant", to=[HELD])},
                HELD: COORDINATE,
            },
        )
        BOOKKEEPING = BOOKKEEPING_HERE

        def __init__(self, pid, n, requests=0, clock=0):
            super().__init__(pid, n, requests, clock)
            self.holder = None
            self.queue = []
            self.grants = 0

        def _request(self):
            self.state = WANTED
            return [Send(1, Request(sender=self.pid, ts=0))]

        def _on_grant(self, msg):
            return self._enter()

        def _release(self):
            return [Send(1, Release(sender=self.pid, ts=0))]

        def _on_request(self, msg):
            if self.holder is None:
                return self._grant(msg.sender)
            self.queue.append(msg.sender)
            return []

        def _on_release(self, msg):
            self.holder = None
            return self._grant(self.queue.pop(NEXT)) if self.queue else []

        def _grant(self, to):
            self.holder = to
            COUNT
            return [Send(to, Grant(sender=self.pid, ts=0))]


    SPEC = classic_algorithm("NAME", "a coordinator that never reads its clock", Node, Request, Grant, Release)
    '''
)


def kit_file(
    tmp_path, name: str, newest_first=False, counts=False, bookkeeping="ClassicNode.BOOKKEEPING"
) -> str:
    text = (
        TEMPLATE.replace("NAME", name)
        .replace("NEXT", "-1" if newest_first else "0")
        .replace("COUNT", "self.grants += 1" if counts else "pass")
        .replace("BOOKKEEPING_HERE", bookkeeping)
    )
    path = tmp_path / f"{name.replace('-', '_')}.py"
    path.write_text(text, encoding="utf-8")
    return str(path)


def check_json(argv, capsys) -> tuple[int, dict | str]:
    code = main(["check", "mutex", *argv, "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else err)


def test_the_kits_snapshot_leaves_the_entries_out_and_keeps_the_rest(tmp_path):
    assert {"entries"} == set(ClassicNode.BOOKKEEPING)
    setup = build_setup(kit_file(tmp_path, "central-snapshot"), 2, {"requests": 1}, 0)
    node = setup.protocols[1]
    before = node.snapshot()
    assert "entries" not in dict(before)
    assert {"state", "requests_left", "clock", "holder", "queue", "grants"} <= set(dict(before))
    node.entries += 1
    assert node.snapshot() == before  # bookkeeping: the same state
    node.queue.append(2)
    assert node.snapshot() != before  # the protocol's own: another state


@pytest.mark.parametrize("nodes", [2, 3])
def test_a_kit_file_passes_check_endless(nodes, tmp_path, capsys):
    path = kit_file(tmp_path, "central-fifo")
    code, out = check_json(["-a", path, "-N", str(nodes), "--endless"], capsys)
    assert code == 0, out
    assert isinstance(out, dict) and out["verdict"] == "pass" and out["complete"], out
    result, _ = run_check(CheckConfig(path, nodes, {"requests": 0}, endless=True))
    assert result.verdict == "pass" and result.cycles and result.finals == 0  # nobody ever finishes


def test_the_entries_in_the_snapshot_are_refused_as_before(tmp_path, capsys):
    """The broken variant: a node that puts its entries back into the snapshot is refused,
    the entries named — what every kit file met before."""
    path = kit_file(tmp_path, "central-keeps-entries", bookkeeping="frozenset()")
    code, err = check_json(["-a", path, "-N", "2", "--endless"], capsys)
    assert code == 2 and isinstance(err, str), err
    assert "--endless: the worlds of this workload are infinite" in err, err
    assert "node-1's entries" in err and "node-2's entries" in err and "grants" not in err, err


def test_a_growing_protocol_counter_is_still_refused_and_named(tmp_path, capsys):
    path = kit_file(tmp_path, "central-counts", counts=True)
    code, err = check_json(["-a", path, "-N", "2", "--endless"], capsys)
    assert code == 2 and isinstance(err, str), err
    assert "--endless: the worlds of this workload are infinite" in err, err
    assert "node-1's grants" in err and "entries" not in err, err  # the coordinator's counter, only
    with pytest.raises(ConfigError, match="node-1's grants"):
        run_check(CheckConfig(path, 2, {"requests": 0}, endless=True))
    bounded, out = check_json(["-a", path, "-N", "2", "--requests", "2"], capsys)
    assert bounded == 0 and isinstance(out, dict) and out["verdict"] == "pass", out


def test_a_kit_file_that_starves_a_node_is_a_liveness_finding_under_endless(tmp_path, capsys):
    """Newest first: two nodes pass the grant between them while the third waits forever."""
    path = kit_file(tmp_path, "central-lifo", newest_first=True)
    code, out = check_json(["-a", path, "-N", "3", "--endless"], capsys)
    assert code == 1 and isinstance(out, dict), out
    finding = out["findings"][0]
    assert finding["kind"] == "liveness" and finding["cycle"], finding
    fair, _ = check_json(["-a", kit_file(tmp_path, "central-fifo3"), "-N", "3", "--endless"], capsys)
    assert fair == 0  # oldest first, the same file otherwise: nobody starves
