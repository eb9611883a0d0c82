"""Solutions written in other people's styles (tests/outsiders/o11_*.py), each with the bug a
module constant plants, and the defects their runs showed. Small bounds: seconds, but for the
RabbitMQ runs (marked ``broker``)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from outsider_edits import said

CENTRAL = Path(__file__).resolve().parent.parent / "examples" / "protocols" / "central.py"


def central(where: Path, name: str, *edits: tuple[str, str]) -> Path:
    """examples/protocols/central.py named ``central-<name>``, with ``edits`` made."""
    text = CENTRAL.read_text()
    for old, new in (('"central"', f'"central-{name}"'), *edits):
        assert old in text, old
        text = text.replace(old, new)
    path = where / f"{name}.py"
    path.write_text(text)
    return path


def test_the_monitor_prints_a_state_once_however_many_inputs_it_ends(tmp_path):
    """central.py's coordinator requests: its REQUEST to itself and the GRANT it gives itself are
    inputs inside that one, each ending HELD, so its trace holds three state events. Before, the
    monitor printed `node-1 HELD` three times; now one line per change of state."""
    from mutexlab.transport.view import LiveView

    out = io.StringIO()
    view = LiveView(out)
    view.begin(["node-1"])
    for n, state in enumerate(("HELD", "HELD", "HELD", "RELEASED", "HELD"), 1):
        view.event("node-1", {"event": "state", "state": state, "lamport": n, "t": 0.1 * n})
    view.end()
    lines = out.getvalue().splitlines()
    assert [line.split()[2] for line in lines] == ["HELD", "RELEASED", "HELD"], lines


@pytest.mark.broker
def test_over_rabbitmq_a_stall_a_raising_waiting_for_cannot_explain_exits_2_as_check(cli, tmp_path, amqp_url):
    """A coordinator that forgets its queue stalls; its waiting_for() raises. check and simulate
    stop at it, exit 2 naming the line (setups.waits). Before, `run` exited 3 and said each node
    "waits for nothing from anyone"; now it exits 2, NOT JUDGED, the process's wait unknown."""
    stuck = central(tmp_path, "wfr-stall", (
        "return self._grant(self.queue.pop(0)) if self.queue else []", "return []"), (
        "    def _grant(self, to: int) -> list:",
        "    def waiting_for(self):\n        raise ValueError('who knows')\n\n    def _grant(self, to: int) -> list:",
    ))  # fmt: skip
    done = cli("check", "mutex", "-a", stuck, "-N", "3", "--requests", "2")
    assert done.returncode == 2 and "its waiting_for() raised ValueError: who knows" in done.stderr, said(
        done
    )
    common = ("--amqp-url", amqp_url, "--dwell", "0", "--stall-timeout", "2", "--json")
    done = cli("run", "mutex", "-a", stuck, "-N", "3", "--requests", "2", *common)
    summary = json.loads(done.stdout)
    assert done.returncode == 2 and summary["exit_code"] == 2 and not summary["complete"], said(done)
    assert (
        "NOT JUDGED (exit 2, as check and simulate say it): the stall cannot be explained"
        in summary["verdict"]
    )
    assert f"its waiting_for() raised ValueError: who knows at {stuck}:" in summary["verdict"], said(done)
    assert "what it waits for is unknown: its waiting_for() raised" in render_of(summary), render_of(summary)
    assert "waits for nothing from anyone" not in render_of(summary), render_of(summary)


def render_of(summary: dict) -> str:
    """The monitor's printed summary of the run ``summary`` (``--json``) says."""
    from mutexlab.transport.outcome import Outcome, render

    fields = {k: v for k, v in summary.items() if k in Outcome.__dataclass_fields__}
    return render(Outcome(**fields))
